//! The Gang through the `Game` trait: what each seat sees (own cards, the Informant's card,
//! blackout hiding earlier streets, redacted events), options and presets on the wire, the
//! deadline, and the CLI words (every legal action round-trips through describe/parse).

use gangs_games::the_gang::{
    card_to_pb, describe_action, parse_action, parse_options, ACTION_HELP,
};
use gangs_games::{new_game, Game};
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::{cards, Card};
use pb::the_gang_action::Kind as A;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn preset(heists: &[(&[&str], &str)], challenges: &[u32], specialists: &[u32]) -> pb::PresetDeals {
    let pb_cards = |t: &str| cards(t).into_iter().map(card_to_pb).collect::<Vec<_>>();
    pb::PresetDeals {
        game: Some(pb::preset_deals::Game::TheGang(pb::TheGangPreset {
            heists: heists
                .iter()
                .map(|(private, board)| pb::the_gang_preset::Heist {
                    private_cards: private
                        .iter()
                        .map(|p| pb::the_gang_preset::Hand { cards: pb_cards(p) })
                        .collect(),
                    community: pb_cards(board),
                    deck: vec![],
                })
                .collect(),
            challenge_order: challenges.to_vec(),
            specialist_order: specialists.to_vec(),
        })),
    }
}

fn options(players: u32, mode: pb::TheGangMode, deadline: Option<u64>) -> pb::GameOptions {
    pb::GameOptions {
        game: Some(pb::game_options::Game::TheGang(pb::TheGangOptions {
            players: Some(players),
            mode: mode as i32,
            max_moves_per_phase: None,
            phase_deadline_ms: deadline,
            ..Default::default()
        })),
    }
}

fn view(g: &dyn Game, seat: Option<usize>) -> pb::TheGangView {
    match g.view(seat).game {
        Some(pb::game_view::Game::TheGang(v)) => v,
        _ => panic!("a the-gang view"),
    }
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

fn act(g: &mut dyn Game, seat: usize, text: &str) -> Vec<pb::GameEvent> {
    let action = parse_action(&words(text)).unwrap();
    g.act(seat, &action)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn settle(g: &mut dyn Game, stars: &[u32]) {
    for (seat, s) in stars.iter().enumerate() {
        act(g, seat, &format!("take {s}"));
    }
    for seat in 0..stars.len() {
        act(g, seat, "ready");
    }
}

const HEIST: (&[&str], &str) = (&["2c 3d", "9h 9s", "Ah Ad"], "Kc 7d 5h Js 4c");
const LOSE: &[u32] = &[3, 2, 1];

fn ids(c: &[pb::TheGangCard]) -> Vec<u32> {
    c.iter().map(|c| c.id).collect()
}

#[test]
fn a_seat_sees_its_own_cards_spectators_none_and_events_are_redacted() {
    let p = preset(&[HEIST], &[], &[]);
    let mut g = new_game(
        "the-gang",
        Some(&options(3, pb::TheGangMode::Basic, None)),
        1,
        Some(&p),
    )
    .unwrap();
    let events = g.start();
    assert_eq!(
        ids(&view(&*g, Some(1)).private_cards),
        ids(&cards("9h 9s")
            .into_iter()
            .map(card_to_pb)
            .collect::<Vec<_>>())
    );
    assert!(view(&*g, None).private_cards.is_empty());
    assert_eq!(view(&*g, None).hand_sizes, vec![2, 2, 2]);
    let dealt_to_1 = &events[2];
    for seat in [Some(0), Some(2), None] {
        let r = g.redact(dealt_to_1, seat).unwrap();
        match r.game {
            Some(pb::game_event::Game::TheGang(pb::TheGangEvent {
                kind: Some(pb::the_gang_event::Kind::Dealt(d)),
            })) => {
                assert!(
                    d.cards.is_empty(),
                    "seat {seat:?} must not see seat 1's cards"
                );
                assert_eq!(d.card_count, 2);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(g.redact(dealt_to_1, Some(1)).unwrap(), dealt_to_1.clone());
}

#[test]
fn informant_card_is_in_the_receivers_view_only() {
    // Heist 1 fails (specialist 1 comes next).
    let p = preset(&[HEIST, HEIST], &[], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    let mut g = new_game(
        "the-gang",
        Some(&options(3, pb::TheGangMode::Advanced, None)),
        1,
        Some(&p),
    )
    .unwrap();
    g.start();
    for _ in 0..4 {
        settle(&mut *g, LOSE);
    }
    assert_eq!(view(&*g, Some(0)).active_specialist, Some(1));
    act(&mut *g, 0, "propose informant seat=2 to=1");
    assert_eq!(
        view(&*g, Some(2)).proposal.as_ref().unwrap().accepted_seats,
        vec![0]
    );
    act(&mut *g, 1, "accept");
    act(&mut *g, 2, "accept");
    let pending = view(&*g, Some(0)).pending_choice.unwrap();
    assert_eq!(
        (pending.choice_kind(), pending.seat, pending.to_seat),
        (pb::TheGangChoiceKind::Show, 2, Some(1))
    );
    // The deprecated string form, still filled for older clients.
    #[allow(deprecated)]
    let word = pending.kind.as_str();
    assert_eq!(word, "show");
    let events = act(&mut *g, 2, "choose Ad");
    let ad = Card::parse("Ad").unwrap().id();
    assert_eq!(
        view(&*g, Some(1)).shown_to_me[0].card.as_ref().unwrap().id,
        ad
    );
    assert!(view(&*g, Some(0)).shown_to_me.is_empty());
    assert!(view(&*g, None).shown_to_me.is_empty());
    let shown = &events[0];
    let card_of = |seat| match g.redact(shown, seat).unwrap().game {
        Some(pb::game_event::Game::TheGang(pb::TheGangEvent {
            kind: Some(pb::the_gang_event::Kind::CardShown(s)),
        })) => s.card.map(|c| c.id),
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(card_of(Some(1)), Some(ad));
    assert_eq!(card_of(Some(2)), Some(ad));
    assert_eq!(card_of(Some(0)), None);
    assert_eq!(card_of(None), None);
}

#[test]
fn views_keep_earlier_streets_chips_except_under_blackout() {
    for (challenge, expected_streets) in [(5u32, 2usize), (8, 1)] {
        let mut pile = vec![challenge];
        pile.extend((1..=10).filter(|&n| n != challenge));
        let p = preset(&[HEIST, HEIST], &pile, &[]);
        let mut g = new_game(
            "the-gang",
            Some(&options(3, pb::TheGangMode::Advanced, None)),
            1,
            Some(&p),
        )
        .unwrap();
        g.start();
        for _ in 0..4 {
            settle(&mut *g, &[1, 2, 3]);
        }
        assert_eq!(view(&*g, Some(0)).active_challenges, vec![challenge]);
        settle(&mut *g, &[1, 2, 3]);
        act(&mut *g, 0, "take 2");
        let v = view(&*g, Some(0));
        assert_eq!(v.chips.len(), expected_streets, "challenge {challenge}");
        assert_eq!(v.chips.last().unwrap().stars_by_seat, vec![2, 0, 0]);
        assert_eq!(v.moves.len(), 1);
        assert_eq!(v.moves[0].stars, 2);
    }
}

#[test]
fn deadline_through_the_trait() {
    let mut g = new_game(
        "the-gang",
        Some(&options(4, pb::TheGangMode::Basic, Some(1500))),
        3,
        None,
    )
    .unwrap();
    g.start();
    assert_eq!(g.phase_deadline_ms(), Some(1500));
    let id = g.phase_id();
    act(&mut *g, 2, "take 1");
    let events = g.expire().unwrap();
    assert!(events.len() >= 4, "three chips given and the phase closed");
    assert_ne!(g.phase_id(), id);
    assert_eq!(view(&*g, None).chips[0].stars_by_seat, vec![2, 3, 1, 4]);
}

#[test]
fn options_parse_and_defaults_are_filled() {
    let o = parse_options(
        Some(5),
        &[
            ("mode".into(), "gangster".into()),
            ("phase_deadline_ms".into(), "3000".into()),
        ],
    )
    .unwrap();
    assert_eq!(
        (o.players, o.mode, o.phase_deadline_ms),
        (Some(5), pb::TheGangMode::Gangster as i32, Some(3000))
    );
    assert!(parse_options(Some(7), &[]).is_err());
    assert!(parse_options(None, &[("colour".into(), "red".into())]).is_err());
    assert!(parse_options(None, &[("mode".into(), "expert".into())]).is_err());
    let g = new_game("the-gang", None, 1, None).unwrap();
    match g.options().game {
        Some(pb::game_options::Game::TheGang(o)) => {
            assert_eq!(
                (o.players, o.max_moves_per_phase, o.phase_deadline_ms),
                (Some(4), Some(24), None)
            );
        }
        _ => panic!(),
    }
    assert!(ACTION_HELP.contains("propose informant seat=S to=T"));
}

#[test]
fn every_legal_action_round_trips_through_the_cli_words() {
    for mode in [
        pb::TheGangMode::Advanced,
        pb::TheGangMode::Pro,
        pb::TheGangMode::Gangster,
    ] {
        for seed in 0..30 {
            let mut g = new_game("the-gang", Some(&options(4, mode, None)), seed, None).unwrap();
            g.start();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            while !g.is_over() {
                let seats: Vec<usize> =
                    (0..4).filter(|&s| !g.legal_actions(s).is_empty()).collect();
                let seat = seats[rng.random_range(0..seats.len())];
                let legal = g.legal_actions(seat);
                for action in &legal {
                    let pb::GameAction {
                        game: Some(pb::game_action::Game::TheGang(a)),
                    } = action
                    else {
                        panic!()
                    };
                    let text = describe_action(a);
                    assert_eq!(&parse_action(&words(&text)).unwrap(), action, "{text}");
                }
                let action = &legal[rng.random_range(0..legal.len())];
                for event in g.act(seat, action).unwrap() {
                    let line = gangs_games::describe_event(&event);
                    assert!(!line.is_empty() && !line.contains("(empty"), "{line}");
                }
                let picture = gangs_games::render_view(&g.view(Some(seat)));
                assert!(
                    picture.contains(&format!("you are seat {seat}")),
                    "{picture}"
                );
            }
            let outcome = g.outcome().unwrap();
            assert!(outcome
                .seats
                .iter()
                .all(|s| s.won == outcome.seats[0].won && s.rank == 1));
        }
    }
    assert!(parse_action(&words("take")).is_err());
    assert!(parse_action(&words("propose swindler seat=1")).is_err());
    let guess = parse_action(&words("guess flush")).unwrap();
    assert!(matches!(
        guess.game,
        Some(pb::game_action::Game::TheGang(pb::TheGangAction {
            kind: Some(A::Guess(_))
        }))
    ));
    assert!(parse_action(&words("choose J*")).is_ok());
}
