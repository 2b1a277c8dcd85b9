//! Gang of Four through the `Game` trait: no view or redacted event ever shows a seat a card it
//! may not know, replaying the logged actions reproduces the encoded events byte for byte, and
//! the action words round-trip.

use gangs_games::gang_of_four::{parse_action, parse_options, GangOfFourGame};
use gangs_games::{describe_action, Game};
use gangs_proto::v1 as pb;
use pb::gang_of_four_event::Kind as EventKind;
use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

type Mask = u64;

fn ids(cards: &[pb::GangOfFourCard]) -> Mask {
    cards.iter().fold(0, |m, c| m | (1u64 << c.id))
}

fn event_of(e: &pb::GameEvent) -> &pb::GangOfFourEvent {
    match &e.game {
        Some(pb::game_event::Game::GangOfFour(e)) => e,
        _ => panic!("not a gang-of-four event"),
    }
}

/// Every card id the event shows.
fn event_cards(e: &pb::GangOfFourEvent) -> Mask {
    match &e.kind {
        Some(EventKind::Dealt(d)) => d.hands.iter().fold(0, |m, h| m | ids(&h.cards)),
        Some(EventKind::Exchanged(x)) => x.card.as_ref().map_or(0, |c| 1 << c.id),
        Some(EventKind::Played(p)) => ids(&p.cards),
        _ => 0,
    }
}

/// Every card id the view shows, and the hand alone.
fn view_cards(v: &pb::GameView) -> (Mask, Mask) {
    let Some(pb::game_view::Game::GangOfFour(v)) = &v.game else {
        panic!("not a gang-of-four view")
    };
    let mut all = ids(&v.hand);
    if let Some(t) = &v.table {
        all |= ids(&t.cards);
    }
    for p in &v.trick {
        all |= ids(&p.cards);
    }
    for x in &v.exchange {
        all |= x.card.as_ref().map_or(0, |c| 1 << c.id);
    }
    (all, ids(&v.hand))
}

fn options(players: u32, bits: u8) -> pb::GangOfFourOptions {
    pb::GangOfFourOptions {
        players: Some(players),
        target_score: Some(40),
        flush_by_sum: Some(bits & 1 != 0),
        loser_tie_strongest_card: Some(bits & 2 != 0),
        manual_last_card: Some(bits & 4 != 0),
        ..Default::default()
    }
}

#[test]
fn views_and_redacted_events_never_leak_and_replays_are_byte_equal() {
    let mut games = 0;
    for players in [3u32, 4] {
        for bits in 0..8u8 {
            for k in 0..12u64 {
                let seed = k * 31 + bits as u64 + players as u64 * 1000;
                let o = options(players, bits);
                let mut game = GangOfFourGame::new(Some(&o), seed, None).unwrap();
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let n = players as usize;
                let mut log: Vec<(usize, pb::GameAction)> = Vec::new();
                let mut encoded: Vec<Vec<u8>> = Vec::new();
                let mut batch = game.start();
                // Public knowledge this deal: played and exchanged cards; per seat: its hand as dealt.
                let mut public: Mask = 0;
                let mut dealt_to = [0u64; 4];
                loop {
                    for e in &batch {
                        encoded.push(e.encode_to_vec());
                        let full = event_of(e);
                        match &full.kind {
                            Some(EventKind::Dealt(d)) => {
                                public = 0;
                                for h in &d.hands {
                                    dealt_to[h.seat as usize] = ids(&h.cards);
                                }
                            }
                            Some(EventKind::Exchanged(_)) | Some(EventKind::Played(_)) => {
                                public |= event_cards(full)
                            }
                            _ => {}
                        }
                        for seat in (0..n).map(Some).chain([None]) {
                            let red = game
                                .redact(e, seat)
                                .expect("every event is shown, redacted");
                            let may_know = public | seat.map_or(0, |s| dealt_to[s]);
                            let shown = event_cards(event_of(&red));
                            assert_eq!(shown & !may_know, 0, "event leaks {shown:x} to {seat:?}");
                            if let Some(EventKind::Dealt(d)) = &event_of(&red).kind {
                                for h in &d.hands {
                                    assert_eq!(h.card_count, 16);
                                    if Some(h.seat as usize) == seat && !h.dead {
                                        assert_eq!(ids(&h.cards), dealt_to[h.seat as usize]);
                                    } else {
                                        assert!(h.cards.is_empty());
                                    }
                                }
                            }
                        }
                    }
                    let truth = game.engine();
                    for seat in (0..n).map(Some).chain([None]) {
                        let own = seat.map_or(0, |s| truth.deal().hands[s]);
                        let (shown, hand) = view_cards(&game.view(seat));
                        assert_eq!(hand, own, "the view's hand is the seat's hand");
                        assert_eq!(shown & !(own | public), 0, "view leaks to {seat:?}");
                    }
                    if game.is_over() {
                        break;
                    }
                    let seat = (0..n)
                        .find(|&s| !game.legal_actions(s).is_empty())
                        .expect("someone acts");
                    let legal = game.legal_actions(seat);
                    let action = legal[rng.random_range(0..legal.len())].clone();
                    batch = game
                        .act(seat, &action)
                        .expect("a listed action is accepted");
                    log.push((seat, action));
                }
                assert!(game.outcome().is_some());
                let mut replay = GangOfFourGame::new(Some(&o), seed, None).unwrap();
                let mut again: Vec<Vec<u8>> =
                    replay.start().iter().map(|e| e.encode_to_vec()).collect();
                for (seat, a) in &log {
                    again.extend(
                        replay
                            .act(*seat, a)
                            .unwrap()
                            .iter()
                            .map(|e| e.encode_to_vec()),
                    );
                }
                assert_eq!(again, encoded, "replay of {seed} differs");
                games += 1;
            }
        }
    }
    assert_eq!(games, 192);
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

#[test]
fn action_words_round_trip_and_resolve_against_the_hand() {
    for line in [
        "play r7 y7",
        "play g1 g2 y3 r4 m1 card",
        "pass",
        "give y3",
        "play gp yp",
        "play dr",
    ] {
        let a = parse_action(&words(line)).unwrap();
        assert_eq!(describe_action(&a), line);
    }
    assert_eq!(
        describe_action(&parse_action(&words("PLAY R7 --card")).unwrap()),
        "play r7 card"
    );
    assert!(parse_action(&words("play x7"))
        .unwrap_err()
        .message()
        .contains("unknown card word"));
    assert!(parse_action(&words("play r11")).is_err());
    assert!(parse_action(&words("give")).is_err());

    let mut game = GangOfFourGame::new(None, 9, None).unwrap();
    game.start();
    let seat = game.engine().to_act().unwrap() as usize;
    let other = (seat + 1) % 4;
    let err = game
        .act(other, &parse_action(&words("pass")).unwrap())
        .unwrap_err();
    assert_eq!(err.message(), format!("not your turn: seat {seat} plays"));
    // The first play must contain m1: play it by word.
    let events = game
        .act(seat, &parse_action(&words("play m1")).unwrap())
        .unwrap();
    let Some(EventKind::Played(p)) = &event_of(&events[0]).kind else {
        panic!()
    };
    assert_eq!(p.cards[0].word, "m1");
    assert_eq!(p.cards[0].id, 6);
}

#[test]
fn options_parse_with_names_of_the_rules() {
    let pairs = [
        ("flush_by_sum".to_string(), "true".to_string()),
        ("target_score".to_string(), "50".to_string()),
    ];
    let o = parse_options(Some(3), &pairs).unwrap();
    assert_eq!(o.players, Some(3));
    assert_eq!(o.flush_by_sum, Some(true));
    assert_eq!(o.target_score, Some(50));
    assert_eq!(o.manual_last_card, Some(false));
    assert!(parse_options(Some(5), &[]).is_err());
    assert!(
        parse_options(None, &[("colour".to_string(), "1".to_string())])
            .unwrap_err()
            .message()
            .contains("unknown")
    );
}

#[test]
fn preset_deals_are_used_then_the_seed() {
    let hand = |h: u32| pb::gang_of_four_preset::Hand {
        card_ids: (h * 16..h * 16 + 16).collect(),
    };
    let preset = pb::GangOfFourPreset {
        deals: vec![pb::gang_of_four_preset::Deal {
            hands: (0..4).map(hand).collect(),
        }],
    };
    let mut game = GangOfFourGame::new(None, 1, Some(&preset)).unwrap();
    let events = game.start();
    let Some(EventKind::Dealt(d)) = &event_of(&events[0]).kind else {
        panic!()
    };
    assert_eq!(ids(&d.hands[0].cards), 0xffff);
    assert_eq!(d.leader, 0, "seat 0 holds m1 (id 6)");
    let bad = pb::GangOfFourPreset {
        deals: vec![pb::gang_of_four_preset::Deal {
            hands: (0..3).map(hand).collect(),
        }],
    };
    assert!(GangOfFourGame::new(None, 1, Some(&bad)).is_err());
}

/// §6 as each seat's view says it: `last_card_rule_applies` is set, during play only, for the
/// seat immediately before (in the current direction) a seat that announced its last card and
/// holds it; never for another seat, never for a spectator.
#[test]
fn the_last_card_flag_is_shown_to_the_seat_just_before_a_one_card_seat_only_section_6() {
    let mut flagged = 0;
    for players in [3u32, 4] {
        for seed in 0..40u64 {
            let o = options(players, (seed % 8) as u8);
            let mut game = GangOfFourGame::new(Some(&o), seed, None).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            game.start();
            let n = players as usize;
            while !game.is_over() {
                for seat in (0..n).map(Some).chain([None]) {
                    let Some(pb::game_view::Game::GangOfFour(v)) = game.view(seat).game else {
                        panic!("not a gang-of-four view")
                    };
                    let expected = match seat {
                        Some(s) if v.phase == pb::gang_of_four_view::Phase::Play as i32 => {
                            let next = if v.direction == pb::GangOfFourDirection::Clockwise as i32 {
                                (s + 1) % n
                            } else {
                                (s + n - 1) % n
                            };
                            let next = &v.seats[next];
                            if next.announced_last_card {
                                assert_eq!(next.card_count, 1, "an announced seat holds one card");
                            }
                            next.announced_last_card
                        }
                        _ => false,
                    };
                    assert_eq!(v.last_card_rule_applies, expected, "seat {seat:?}");
                    flagged += usize::from(expected);
                }
                let seat = (0..n)
                    .find(|&s| !game.legal_actions(s).is_empty())
                    .expect("someone acts");
                let legal = game.legal_actions(seat);
                let action = legal[rng.random_range(0..legal.len())].clone();
                game.act(seat, &action)
                    .expect("a listed action is accepted");
            }
        }
    }
    assert!(
        flagged > 0,
        "no game reached a last card: the test saw nothing"
    );
}
