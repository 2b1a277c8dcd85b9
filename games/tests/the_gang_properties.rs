//! Property tests through the `Game` trait over thousands of seeded random games in every mode
//! and with 3 to 6 players: every game ends; the cards are conserved; no seat's view or redacted
//! event ever holds a card §9 does not entitle it to (its own cards, cards it held earlier this
//! heist, the Informant's card shown to it, the Coordinator's card passed to it); spectators see
//! no private card; replaying the actions reproduces byte-equal encoded events.

use gangs_games::the_gang::{card_from_pb, TheGangGame};
use gangs_games::Game;
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::Card;
use pb::the_gang_event::Kind;
use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

#[derive(Clone)]
enum Step {
    Act(usize, pb::GameAction),
    Expire,
}

fn the_gang_event(e: &pb::GameEvent) -> &pb::TheGangEvent {
    match &e.game {
        Some(pb::game_event::Game::TheGang(e)) => e,
        _ => panic!("not a the-gang event"),
    }
}

fn the_gang_view(v: &pb::GameView) -> &pb::TheGangView {
    match &v.game {
        Some(pb::game_view::Game::TheGang(v)) => v,
        _ => panic!("not a the-gang view"),
    }
}

fn ids(cards: &[pb::TheGangCard]) -> Vec<Card> {
    cards.iter().map(|c| card_from_pb(c).unwrap()).collect()
}

/// Per seat, the cards §9 lets it know this heist, built from the complete events.
struct Knowledge {
    known: Vec<HashSet<Card>>,
    public: HashSet<Card>,
}

impl Knowledge {
    fn new(players: usize) -> Self {
        Knowledge {
            known: vec![HashSet::new(); players],
            public: HashSet::new(),
        }
    }
    fn learn(&mut self, e: &pb::TheGangEvent) {
        let mut add = |seat: u32, cards: Vec<Card>| self.known[seat as usize].extend(cards);
        match &e.kind {
            Some(Kind::HeistStarted(_)) => {
                self.known.iter_mut().for_each(|k| k.clear());
                self.public.clear();
            }
            Some(Kind::Dealt(d)) => add(d.seat, ids(&d.cards)),
            Some(Kind::Swindled(s)) => {
                add(s.seat, ids(&s.old_cards));
                add(s.seat, ids(&s.new_cards));
            }
            Some(Kind::CardPassed(p)) => {
                let c = ids(p.card.as_slice());
                add(p.from_seat, c.clone());
                add(p.to_seat, c);
            }
            Some(Kind::HandReplaced(r)) => {
                add(r.seat, ids(&r.discarded));
                add(r.seat, ids(&r.drawn));
            }
            Some(Kind::CardShown(s)) => add(s.to_seat, ids(s.card.as_slice())),
            Some(Kind::CardDrawn(d)) => add(d.seat, ids(d.card.as_slice())),
            Some(Kind::SuitlessJackTaken(_)) => {
                // The suitless Jack is public knowledge (there is only one).
                self.public.insert(Card::SUITLESS_JACK);
            }
            Some(Kind::CommunityRevealed(c)) => self.public.extend(ids(&c.cards)),
            _ => {}
        }
    }
    fn check(&self, seat: Option<usize>, cards: &[Card], what: &str) {
        for c in cards {
            let ok = self.public.contains(c) || seat.is_some_and(|s| self.known[s].contains(c));
            assert!(ok, "{what}: seat {seat:?} sees {c} it is not entitled to");
        }
    }
}

/// The non-public cards an event carries (community and showdown cards are public).
fn event_private_cards(e: &pb::TheGangEvent) -> Vec<Card> {
    match &e.kind {
        Some(Kind::Dealt(d)) => ids(&d.cards),
        Some(Kind::Swindled(s)) => [ids(&s.old_cards), ids(&s.new_cards)].concat(),
        Some(Kind::CardPassed(p)) => ids(p.card.as_slice()),
        Some(Kind::HandReplaced(r)) => [ids(&r.discarded), ids(&r.drawn)].concat(),
        Some(Kind::CardShown(s)) => ids(s.card.as_slice()),
        Some(Kind::CardDrawn(d)) => ids(d.card.as_slice()),
        Some(Kind::CardDiscarded(d)) => ids(d.card.as_slice()),
        _ => Vec::new(),
    }
}

fn view_private_cards(v: &pb::TheGangView) -> Vec<Card> {
    let mut cards = ids(&v.private_cards);
    cards.extend(ids(&v.remembered));
    for s in v.shown_to_me.iter().chain(v.received.iter()) {
        cards.extend(ids(s.card.as_slice()));
    }
    cards
}

fn check_conservation(game: &TheGangGame) {
    let mut all = game.engine().all_cards();
    all.sort();
    let before = all.len();
    all.dedup();
    assert_eq!(before, all.len(), "a card is in two places");
    let suited = all.iter().filter(|c| **c != Card::SUITLESS_JACK).count();
    assert_eq!(suited, 52, "every suited card is somewhere");
}

struct Played {
    options: pb::TheGangOptions,
    seed: u64,
    steps: Vec<Step>,
    encoded_events: Vec<Vec<u8>>,
}

fn options(players: u32, mode: i32, deadline: bool) -> pb::TheGangOptions {
    pb::TheGangOptions {
        players: Some(players),
        mode,
        max_moves_per_phase: None,
        phase_deadline_ms: deadline.then_some(1000),
        ..Default::default()
    }
}

/// Plays one random game, checking the properties at every step (views of every seat at a
/// random sample of steps, always the actor's and the spectator's redacted events).
fn play(options: pb::TheGangOptions, seed: u64, check_views: bool) -> Played {
    let mut game = TheGangGame::new(Some(&options), seed, None).unwrap();
    let players = game.players();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut knowledge = Knowledge::new(players);
    let mut steps = Vec::new();
    let mut encoded_events = Vec::new();
    let record = |events: &[pb::GameEvent],
                  game: &TheGangGame,
                  knowledge: &mut Knowledge,
                  encoded: &mut Vec<Vec<u8>>| {
        for e in events {
            knowledge.learn(the_gang_event(e));
            encoded.push(e.encode_to_vec());
            for seat in (0..players).map(Some).chain([None]) {
                let redacted = game.redact(e, seat).expect("every event is shown redacted");
                let cards = event_private_cards(the_gang_event(&redacted));
                knowledge.check(seat, &cards, "redacted event");
            }
        }
    };
    let events = game.start();
    record(&events, &game, &mut knowledge, &mut encoded_events);
    let mut count = 0;
    while !game.is_over() {
        count += 1;
        assert!(count < 200_000, "the game does not end");
        let expire = game.phase_deadline_ms().is_some() && rng.random_ratio(1, 40);
        let (step, events) = if expire {
            (Step::Expire, game.expire().expect("deadline applies"))
        } else {
            let actors: Vec<usize> = (0..players)
                .filter(|&s| !game.legal_actions(s).is_empty())
                .collect();
            assert!(!actors.is_empty(), "nobody may act in a running game");
            let seat = actors[rng.random_range(0..actors.len())];
            let legal = game.legal_actions(seat);
            let action = legal[rng.random_range(0..legal.len())].clone();
            let events = game
                .act(seat, &action)
                .unwrap_or_else(|e| panic!("a legal action is refused: {e}"));
            (Step::Act(seat, action), events)
        };
        steps.push(step);
        record(&events, &game, &mut knowledge, &mut encoded_events);
        check_conservation(&game);
        if check_views || rng.random_ratio(1, 20) {
            for seat in (0..players).map(Some).chain([None]) {
                let view = game.view(seat);
                let v = the_gang_view(&view);
                knowledge.check(seat, &view_private_cards(v), "view");
                if let Some(s) = seat {
                    let own: Vec<Card> = game.engine().heist().private[s].clone();
                    assert_eq!(ids(&v.private_cards), own);
                } else {
                    assert!(v.private_cards.is_empty() && v.remembered.is_empty());
                }
            }
        }
    }
    let outcome = game.outcome().expect("an outcome once over");
    assert_eq!(outcome.seats.len(), players);
    Played {
        options,
        seed,
        steps,
        encoded_events,
    }
}

fn replay(played: &Played) {
    let mut game = TheGangGame::new(Some(&played.options), played.seed, None).unwrap();
    let mut encoded: Vec<Vec<u8>> = game.start().iter().map(|e| e.encode_to_vec()).collect();
    for step in &played.steps {
        let events = match step {
            Step::Act(seat, action) => game.act(*seat, action).unwrap(),
            Step::Expire => game.expire().unwrap(),
        };
        encoded.extend(events.iter().map(|e| e.encode_to_vec()));
    }
    assert!(game.is_over());
    assert_eq!(encoded, played.encoded_events, "replay differs");
}

/// A name for each event kind, to check that the random games reach every rule.
fn kind_name(bytes: &[u8]) -> &'static str {
    let e = pb::GameEvent::decode(bytes).unwrap();
    match the_gang_event(&e).kind.as_ref().unwrap() {
        Kind::Swindled(_) => "swindled",
        Kind::CardPassed(_) => "passed",
        Kind::HandReplaced(_) => "replaced",
        Kind::CardShown(_) => "shown",
        Kind::CardDrawn(_) => "drawn",
        Kind::SuitlessJackTaken(_) => "valet",
        Kind::MuscleTaken(_) => "muscle",
        Kind::Announced(_) => "announced",
        Kind::GuessResolved(_) => "guess",
        Kind::ChipGiven(_) => "given",
        Kind::PhaseClosed(c) if c.expired => "expired",
        Kind::ProposalClosed(c) if !c.accepted && !c.expired => "refused",
        Kind::GameOver(g) if g.won => "won",
        Kind::GameOver(_) => "lost",
        _ => "other",
    }
}

fn run_mode(mode: i32, games: u64) -> HashSet<&'static str> {
    let mut kinds = HashSet::new();
    for i in 0..games {
        let players = 3 + (i % 4) as u32;
        let deadline = i % 3 == 0;
        let played = play(
            options(players, mode, deadline),
            1000 * mode as u64 + i,
            i < 40,
        );
        if i % 10 == 0 {
            replay(&played);
        }
        kinds.extend(played.encoded_events.iter().map(|b| kind_name(b)));
    }
    kinds
}

fn assert_reached(kinds: &HashSet<&'static str>, expected: &[&str]) {
    for k in expected {
        assert!(kinds.contains(k), "no random game reached {k:?}");
    }
}

#[test]
fn basic_games_end_conserve_cards_leak_nothing_and_replay() {
    let kinds = run_mode(pb::TheGangMode::Basic as i32, 2500);
    assert_reached(&kinds, &["given", "expired", "won", "lost"]);
    assert!(!kinds.contains("announced") && !kinds.contains("guess"));
}

#[test]
fn advanced_games_end_conserve_cards_leak_nothing_and_replay() {
    let kinds = run_mode(pb::TheGangMode::Advanced as i32, 2500);
    assert_reached(
        &kinds,
        &[
            "swindled",
            "passed",
            "replaced",
            "shown",
            "drawn",
            "valet",
            "muscle",
            "announced",
            "guess",
            "given",
            "expired",
            "refused",
            "lost",
        ],
    );
}

#[test]
fn pro_games_end_conserve_cards_leak_nothing_and_replay() {
    let kinds = run_mode(pb::TheGangMode::Pro as i32, 2500);
    assert_reached(
        &kinds,
        &["swindled", "replaced", "shown", "guess", "expired", "lost"],
    );
}

#[test]
fn gangster_games_end_conserve_cards_leak_nothing_and_replay() {
    let kinds = run_mode(pb::TheGangMode::Gangster as i32, 2500);
    assert_reached(&kinds, &["replaced", "guess", "expired", "lost"]);
    assert!(
        !kinds.contains("shown") && !kinds.contains("muscle"),
        "no specialists"
    );
}
