//! One conformance suite run over every kind of game, through the one bridge API (the host's
//! `Game` trait on `Bridge<W>`), in the spirit of OpenSpiel's API tests:
//! - every legal action is accepted, and a sample of other actions is refused without
//!   changing anything;
//! - the engine contract holds: defaults exactly for the seats waited for, each legal;
//! - a log written as the host writes it replays byte for byte (`replay.rs`), whole and
//!   skimmed; a twin of each game takes the same steps through `Game::step_encoded`, whose
//!   bytes must be each event's encoding;
//! - **no leak**: every card-bearing field of every update (for every seat and the spectator)
//!   and of every public log record is found by reflection over the generated messages
//!   (`prost-reflect` on the compiled descriptors), not from a list of known events, and
//!   checked against the rules of "may see" written in the visibility modules. A card field
//!   that no rule covers fails the test: a new one needs a visibility decision. The check
//!   lives in `leak/mod.rs`, shared with the end-to-end test over gRPC.
//!
//! `CONFORMANCE_GAMES` sets the number of seeded games per kind (default 12; every game checks every seat and the spectator at every step).

mod leak;

use gangs_games::bridge::{Bridge, Visibility};
use gangs_games::gang_of_four::GangOfFourWire;
use gangs_games::replay::Replayer;
use gangs_games::skim::LoggedRecord;
use gangs_games::the_gang::TheGangWire;
use gangs_games::{kinds, EncodedEvents, Game, OptionType, Step};
use gangs_proto::v1 as pb;
use leak::{check_rules, check_update, dynamic, rule, walk, Hidden};
use pb::log_record::Record;
use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---- the suite ------------------------------------------------------------------------------

/// The host's update for `seat` after `record` (the same fields `service` fills).
fn update(game: &dyn Game, seq: u64, events: &[pb::GameEvent], seat: Option<usize>) -> pb::Update {
    let over = game.is_over();
    pb::Update {
        seq,
        events: events.iter().filter_map(|e| game.redact(e, seat)).collect(),
        view: Some(game.view(seat)),
        legal_actions: match seat {
            Some(s) if !over => game.legal_actions(s),
            _ => Vec::new(),
        },
        outcome: if over { game.outcome() } else { None },
        seat: seat.map(|s| s as u32),
        ..Default::default()
    }
}

struct Stats {
    games: usize,
    steps: usize,
    accepted_all: usize,
    refused: usize,
    cards_checked: usize,
}

/// Every check after one record: updates for every seat and the spectator, the public log.
fn check_record<W: Hidden>(
    game: &Bridge<W>,
    record: &pb::LogRecord,
    events: &[pb::GameEvent],
    stats: &mut Stats,
) {
    let players = game.players();
    let audiences: Vec<Option<usize>> = (0..players).map(Some).chain([None]).collect();
    for &viewer in &audiences {
        let u = update(game, record.seq, events, viewer);
        stats.cards_checked += check_update::<W>(game.engine(), &u, viewer);
    }
    // The views the watchers get, made together, are the bytes of each view (a seat that does
    // not exist sees what a spectator sees; each audience may come more than once).
    let mut asked = audiences.clone();
    asked.extend([Some(players), Some(0), None]);
    assert!(game.encoded_views(&[]).is_empty(), "no audience, no view");
    let encoded = game.encoded_views(&asked);
    assert_eq!(encoded.len(), asked.len());
    for (viewer, bytes) in asked.iter().zip(&encoded) {
        assert_eq!(
            *bytes,
            game.view(*viewer).encode_to_vec(),
            "the encoded view of {viewer:?} at seq {}",
            record.seq
        );
    }
    let public = game.public_record(record, false);
    let mut found = Vec::new();
    walk(
        &dynamic("gangs.v1.LogRecord", &public),
        "record",
        &mut found,
    );
    check_rules(&found, None, "public log record");
    match &public.record {
        Some(Record::Created(c)) => assert!(
            c.seed.is_none()
                && c.preset.is_none()
                && c.invitations.is_empty()
                && c.create_id.is_empty()
        ),
        Some(Record::Joined(j)) => assert!(j.token.is_empty() && j.join_id.is_empty()),
        Some(Record::Acted(a)) => assert!(a.action.is_none() && a.action_id.is_empty()),
        Some(Record::TimedOut(t)) => assert!(t.action.is_none()),
        Some(Record::Started(_))
        | Some(Record::Expired(_))
        | Some(Record::Ended(_))
        | Some(Record::Ladder(_))
        | None => {}
    }
    // Once over, the log is complete except secrets (tokens, join ids, invitations, create id).
    let finished = game.public_record(record, true);
    match (&finished.record, &record.record) {
        (Some(Record::Joined(j)), _) => assert!(j.token.is_empty() && j.join_id.is_empty()),
        (Some(Record::Created(c)), _) => {
            assert!(c.invitations.is_empty() && c.create_id.is_empty())
        }
        (a, b) => assert_eq!(a, b),
    }
}

/// Tries every legal action of `seat` on a copy (each accepted), and a sample of others
/// (each refused, nothing changed).
fn check_actions<W: Visibility>(game: &Bridge<W>, rng: &mut ChaCha8Rng, stats: &mut Stats)
where
    Bridge<W>: Clone,
{
    let players = game.players();
    let fingerprint = |g: &Bridge<W>| -> Vec<Vec<u8>> {
        (0..players)
            .map(Some)
            .chain([None])
            .map(|s| g.view(s).encode_to_vec())
            .collect()
    };
    let before = fingerprint(game);
    for seat in 0..players {
        let legal = game.legal_actions(seat);
        for action in &legal {
            let mut copy = game.clone();
            copy.act(seat, action)
                .unwrap_or_else(|e| panic!("seat {seat}: legal {action:?} refused: {e}"));
        }
        stats.accepted_all += legal.len();
        // Others: actions legal for another seat (or this seat's from another kind).
        let mut others: Vec<pb::GameAction> = (0..players)
            .filter(|&t| t != seat)
            .flat_map(|t| game.legal_actions(t))
            .filter(|a| !legal.contains(a))
            .collect();
        others.push(pb::GameAction::default());
        let mut copy = game.clone();
        for action in others.iter().filter(|_| rng.random_ratio(1, 3)).take(8) {
            assert!(
                copy.act(seat, action).is_err(),
                "seat {seat}: {action:?} is not legal but accepted"
            );
            stats.refused += 1;
        }
        assert!(copy
            .act(players, legal.first().unwrap_or(&pb::GameAction::default()))
            .is_err());
        assert_eq!(fingerprint(&copy), before, "a refusal changed nothing");
    }
}

fn run_kind<W: Hidden>(
    make: impl Fn(&pb::GameOptions, u64) -> Bridge<W>,
    kind: &str,
    games: u64,
) -> Stats
where
    Bridge<W>: Clone,
{
    let info = gangs_games::kind(kind).unwrap();
    assert!(
        !info.short_games.is_empty(),
        "{kind} lists no option sets for short games"
    );
    let options = info.options();
    let players = options.iter().find(|o| o.key == "players").unwrap();
    let OptionType::Count { min, max } = players.kind else {
        panic!("players is a count")
    };
    let mut stats = Stats {
        games: 0,
        steps: 0,
        accepted_all: 0,
        refused: 0,
        cards_checked: 0,
    };
    for seed in 0..games {
        let n = min + seed % (max - min + 1);
        // Short games that still reach every rule: the kind's own option sets, in turn.
        let set = info.short_games[seed as usize % info.short_games.len()];
        let pairs: Vec<(String, String)> = set
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect();
        let options = gangs_games::parse_options(kind, Some(n as u32), &pairs).unwrap();
        let mut game = make(&options, seed);
        let mut twin = game.clone();
        let mut encoded = EncodedEvents::default();
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xc0f0);
        let mut log = vec![pb::LogRecord {
            seq: 1,
            unix_ms: 1,
            record: Some(Record::Created(pb::Created {
                kind: kind.to_string(),
                options: Some(game.options()),
                seed: Some(seed),
                preset: None,
                players: game.players() as u32,
                ..Default::default()
            })),
        }];
        for seat in 0..game.players() {
            log.push(pb::LogRecord {
                seq: log.len() as u64 + 1,
                unix_ms: 1,
                record: Some(Record::Joined(pb::Joined {
                    seat: seat as u32,
                    name: format!("bot{seat}"),
                    token: format!("secret-token-{seat}"),
                    join_id: format!("join-{seat}"),
                })),
            });
        }
        for record in &log {
            check_record(&game, record, &[], &mut stats);
        }
        let events = game.start();
        step_twin(&mut twin, Step::Start, &events, &mut encoded);
        log.push(pb::LogRecord {
            seq: log.len() as u64 + 1,
            unix_ms: 1,
            record: Some(Record::Started(pb::Started {
                events: events.clone(),
            })),
        });
        check_record(&game, log.last().unwrap(), &events, &mut stats);
        let mut steps = 0;
        while !game.is_over() {
            steps += 1;
            assert!(steps < 100_000, "{kind} seed {seed}: the game ends");
            if rng.random_ratio(1, 25) {
                check_actions(&game, &mut rng, &mut stats);
            }
            let record = if game.phase_deadline_ms().is_some() && rng.random_ratio(1, 60) {
                let events = game.expire().expect("a deadline applies");
                step_twin(&mut twin, Step::Expire, &events, &mut encoded);
                Record::Expired(pb::Expired { events })
            } else {
                let actors = game.actors();
                let movers: Vec<usize> = (0..game.players())
                    .filter(|&s| !game.legal_actions(s).is_empty())
                    .collect();
                assert!(!actors.is_empty(), "a running game waits for a seat");
                // Mostly the seats waited for, sometimes anyone who may move.
                let seat = if rng.random_ratio(3, 4) {
                    actors[rng.random_range(0..actors.len())]
                } else {
                    movers[rng.random_range(0..movers.len())]
                };
                let legal = game.legal_actions(seat);
                let action = if rng.random_ratio(1, 4) {
                    game.default_action(seat)
                        .unwrap_or_else(|| legal[0].clone())
                } else {
                    legal[rng.random_range(0..legal.len())].clone()
                };
                let events = game.act(seat, &action).expect("a legal action");
                let step = Step::Act {
                    seat,
                    action: &action,
                };
                step_twin(&mut twin, step, &events, &mut encoded);
                Record::Acted(pb::Acted {
                    seat: seat as u32,
                    action: Some(action),
                    action_id: format!("a{steps}"),
                    events,
                })
            };
            let events = match &record {
                Record::Acted(a) => a.events.clone(),
                Record::Expired(e) => e.events.clone(),
                _ => unreachable!(),
            };
            log.push(pb::LogRecord {
                seq: log.len() as u64 + 1,
                unix_ms: 1,
                record: Some(record),
            });
            check_record(&game, log.last().unwrap(), &events, &mut stats);
            // The contract: defaults exactly for the seats waited for, and legal.
            let actors = game.actors();
            for s in 0..game.players() {
                let d = game.default_action(s);
                assert_eq!(d.is_some(), actors.contains(&s));
                if let Some(d) = d {
                    assert!(game.legal_actions(s).contains(&d));
                }
            }
        }
        stats.steps += steps;
        assert!(game.outcome().is_some());
        // The log replays byte for byte, and to the same state.
        let replayed = gangs_games::replay::replay(&log)
            .unwrap_or_else(|e| panic!("{kind} seed {seed}: {e}"))
            .into_game()
            .unwrap();
        // Skimmed as the server's restart reads it: the events checked as stored bytes.
        let mut skimmed = Replayer::new();
        for record in &log {
            let stored = bytes::Bytes::from(record.encode_to_vec());
            skimmed
                .apply_logged(&LoggedRecord::skim(stored).unwrap())
                .unwrap_or_else(|e| panic!("{kind} seed {seed}, skimmed: {e}"));
        }
        let skimmed = skimmed.into_game().unwrap();
        for s in (0..game.players()).map(Some).chain([None]) {
            let view = game.view(s).encode_to_vec();
            assert_eq!(replayed.view(s).encode_to_vec(), view);
            assert_eq!(skimmed.view(s).encode_to_vec(), view);
        }
        stats.games += 1;
    }
    stats
}

/// `twin` takes `step` through `Game::step_encoded`: its bytes are exactly the encodings of
/// `events`, which the game returned for the same step.
fn step_twin(
    twin: &mut dyn Game,
    step: Step<'_>,
    events: &[pb::GameEvent],
    out: &mut EncodedEvents,
) {
    twin.step_encoded(step, out)
        .unwrap_or_else(|e| panic!("the twin refuses {step:?}: {e}"));
    let expected: Vec<Vec<u8>> = events.iter().map(|e| e.encode_to_vec()).collect();
    let written: Vec<Vec<u8>> = out.iter().map(<[u8]>::to_vec).collect();
    assert_eq!(
        written, expected,
        "the events of {step:?}, written as bytes"
    );
}

fn games_per_kind() -> u64 {
    std::env::var("CONFORMANCE_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

/// Runs the suite over `kind` with its wire mapping: the one place a kind meets its leak rules
/// (`leak::Hidden`). A kind the registry lists without its arm here fails: it needs its rules.
fn conform(kind: &str, games: u64) -> Stats {
    use pb::game_options::Game as O;
    if kind == gangs_games::gang_of_four::KIND.name {
        run_kind::<GangOfFourWire>(
            |options, seed| {
                let Some(O::GangOfFour(o)) = &options.game else {
                    panic!("{kind}: options of another game: {options:?}")
                };
                Bridge::<GangOfFourWire>::new(Some(o), seed, None).unwrap()
            },
            kind,
            games,
        )
    } else if kind == gangs_games::the_gang::KIND.name {
        run_kind::<TheGangWire>(
            |options, seed| {
                let Some(O::TheGang(o)) = &options.game else {
                    panic!("{kind}: options of another game: {options:?}")
                };
                Bridge::<TheGangWire>::new(Some(o), seed, None).unwrap()
            },
            kind,
            games,
        )
    } else {
        panic!(
            "{kind} is registered but has no arm in conform(): add it with its leak::Hidden rules"
        )
    }
}

/// Every kind of the registry, with its own option sets (`KindInfo::short_games`).
#[test]
fn every_kind_conforms() {
    for info in kinds() {
        let stats = conform(info.name, games_per_kind());
        assert!(
            stats.accepted_all > 100 && stats.refused > 100 && stats.cards_checked > 10_000,
            "{}: too little checked",
            info.name
        );
        eprintln!(
            "{}: {} games, {} steps, {} legal actions accepted, {} refused, {} cards checked",
            info.name,
            stats.games,
            stats.steps,
            stats.accepted_all,
            stats.refused,
            stats.cards_checked
        );
    }
}

#[test]
fn an_unclassified_card_field_fails_the_walk() {
    // A card inside a message no rule covers (the preset's deal, as if it were an event).
    let update = pb::Update {
        view: Some(pb::GameView {
            game: Some(pb::game_view::Game::TheGang(pb::TheGangView {
                received: Some(pb::the_gang_view::ShownCard {
                    from_seat: 1,
                    card: Some(pb::TheGangCard {
                        id: 5,
                        ..Default::default()
                    }),
                }),
                ..Default::default()
            })),
        }),
        ..Default::default()
    };
    let mut found = Vec::new();
    walk(&dynamic("gangs.v1.Update", &update), "update", &mut found);
    assert_eq!(found.len(), 1);
    let result = std::panic::catch_unwind(|| check_rules(&found, None, "test"));
    assert!(
        result.is_err(),
        "a spectator may not see a card shown to a seat"
    );
    assert!(rule("gangs.v1.TheGangEvent.NewThing", "card").is_none());
}
