//! Legal plays, §4 a deal, §5 tricks.

use super::*;

// ---- legal plays ----------------------------------------------------------------------------

#[test]
fn legal_plays_list_twin_cards_once() {
    let deal = four_seat_deal(["r7 r7 y7", "g2", "g3", "g4"], 0);
    let mut list = PlayList::new();
    deal.legal_plays(&mut list);
    let words: Vec<String> = list.as_slice().iter().map(|&m| cards::words(m)).collect();
    // Singles r7 y7; pairs r7r7, y7r7; triple r7 r7 y7.
    assert_eq!(list.len(), 5, "{words:?}");
    assert!(!list.can_pass, "a leader may not pass");
}

#[test]
fn engine_refusals_say_why() {
    let mut deal = four_seat_deal(["r7 y7 g9 r5", "g2 g8", "g3 g8", "g4 g8"], 0);
    let msg = |r: Result<_, Refusal>| r.map(|_| ()).unwrap_err().message().to_string();
    assert!(msg(deal.check(1, Move::Pass)).contains("not your turn: seat 0 plays"));
    assert!(msg(deal.check(
        0,
        Move::Play {
            cards: set("g2"),
            announce: false
        }
    ))
    .contains("is not in your hand"));
    assert!(msg(deal.check(
        0,
        Move::Play {
            cards: set("r7 g9"),
            announce: false
        }
    ))
    .contains("pair"));
    deal.apply(
        0,
        Move::Play {
            cards: set("r7 y7"),
            announce: false,
        },
    )
    .unwrap();
    let d = four_seat_deal(["r7 y7 g9", "g2 g2 g8", "g3", "g4"], 0);
    let mut d = d;
    d.apply(
        0,
        Move::Play {
            cards: set("r7 y7"),
            announce: false,
        },
    )
    .unwrap();
    assert!(msg(d.check(
        3,
        Move::Play {
            cards: set("g4"),
            announce: false
        }
    ))
    .contains("1 cards on a pair"));
    let mut e = four_seat_deal(["r7 y7 g9", "g2 g2 g8", "g3", "g4 g4 g5"], 0);
    e.apply(
        0,
        Move::Play {
            cards: set("r7 y7"),
            announce: false,
        },
    )
    .unwrap();
    assert!(msg(e.check(
        3,
        Move::Play {
            cards: set("g4 g4"),
            announce: false
        }
    ))
    .contains("does not beat the pair y7 r7"));
}

// ---- §4 a deal --------------------------------------------------------------------------------

fn game(options: Options, seed: u64) -> GangOfFour {
    GangOfFour::new(options, seed, Vec::new()).unwrap()
}

fn preset_with_m1_in(hand_index: usize) -> [Mask; 4] {
    let mut ids: Vec<u8> = (0..64).filter(|&id| id != cards::MULTICOLOR_ONE).collect();
    ids.insert(hand_index * 16, cards::MULTICOLOR_ONE);
    std::array::from_fn(|h| {
        ids[h * 16..h * 16 + 16]
            .iter()
            .fold(0, |m, &id| m | (1u64 << id))
    })
}

#[test]
fn deals_sixteen_cards_each_from_the_seed_deterministically() {
    let mut a = game(opts(), 42);
    let mut b = game(opts(), 42);
    let (ea, eb) = (a.start(), b.start());
    assert_eq!(ea, eb);
    let Event::Dealt { hands, .. } = &ea[0] else {
        panic!()
    };
    assert!(hands.iter().all(|h| h.count_ones() == 16));
    assert_eq!(hands.iter().fold(0, |m, h| m | h), u64::MAX);
    let mut c = game(opts(), 43);
    assert_ne!(c.start(), ea);
}

// [D] The first deal is played counter-clockwise (seat i is followed by seat i-1); the
// direction reverses at each new deal.
#[test]
fn d_first_deal_counter_clockwise_then_alternating() {
    assert_eq!(Direction::of_deal(1), Direction::CounterClockwise);
    assert_eq!(Direction::of_deal(2), Direction::Clockwise);
    assert_eq!(Direction::of_deal(3), Direction::CounterClockwise);
    let deal = DealState::new(opts(), [0; 4], Direction::CounterClockwise, 0, 0);
    assert_eq!(deal.next_seat(0), 3);
    assert_eq!(deal.next_seat(2), 1);
    let deal = DealState::new(opts(), [0; 4], Direction::Clockwise, 0, 0);
    assert_eq!(deal.next_seat(3), 0);
}

#[test]
fn first_lead_by_the_multicolor_one_holder_and_must_contain_it() {
    let mut g = GangOfFour::new(opts(), 1, vec![preset_with_m1_in(2)]).unwrap();
    g.start();
    assert_eq!(g.to_act(), Some(2));
    let hand = g.deal().hands[2];
    let other = cards::strongest(hand).unwrap();
    let err = g
        .act(
            2,
            Action::Play {
                cards: 1 << other,
                announce: false,
            },
        )
        .unwrap_err();
    assert!(err.message().contains("multicolor 1"));
    for a in g.legal_actions(2) {
        if let Action::Play { cards, .. } = a {
            assert!(cards & (1 << cards::MULTICOLOR_ONE) != 0);
        }
    }
    g.act(
        2,
        Action::Play {
            cards: 1 << cards::MULTICOLOR_ONE,
            announce: false,
        },
    )
    .unwrap();
}

// [D] Seat 0 deals the first deal: with 3 players and the multicolor 1 in the dead hand, the
// seat that follows the dealer (seat 2, counter-clockwise) leads freely.
#[test]
fn d_three_players_multicolor_one_in_the_dead_hand() {
    let options = Options {
        players: 3,
        ..opts()
    };
    let mut g = GangOfFour::new(options, 1, vec![preset_with_m1_in(3)]).unwrap();
    g.start();
    assert_eq!(g.to_act(), Some(2));
    assert_eq!(g.deal().must_include, 0);
    let singles = g
        .legal_actions(2)
        .iter()
        .filter(|a| matches!(a, Action::Play { cards, .. } if cards.count_ones() == 1))
        .count();
    assert_eq!(
        singles as u32,
        cards::distinct_faces(g.deal().hands[2]).count_ones()
    );
}

#[test]
fn exchange_loser_strongest_card_then_winner_gives_back_and_leads() {
    // Play a seeded game until deal 2 starts.
    let mut g = game(
        Options {
            target_score: 1000,
            ..opts()
        },
        5,
    );
    g.start();
    let mut rng_pick = 0usize;
    let (winner, loser) = loop {
        let seat = g.to_act().unwrap();
        let actions = g.legal_actions(seat);
        rng_pick = (rng_pick * 7 + 3) % actions.len().max(1);
        let events = g.act(seat, actions[rng_pick]).unwrap();
        if let Some(Event::DealScored(s)) =
            events.iter().find(|e| matches!(e, Event::DealScored(_)))
        {
            let Some(Event::Dealt { hands, .. }) =
                events.iter().find(|e| matches!(e, Event::Dealt { .. }))
            else {
                panic!()
            };
            let x = events
                .iter()
                .find_map(|e| {
                    if let Event::Exchanged(x) = e {
                        Some(*x)
                    } else {
                        None
                    }
                })
                .unwrap();
            let w = s.winner.unwrap();
            assert_eq!((x.from, x.to, x.automatic), (s.loser, w, true));
            assert_eq!(
                Some(x.card),
                cards::strongest(hands[s.loser as usize]),
                "the loser's strongest card"
            );
            break (w, s.loser);
        }
    };
    assert_eq!(g.phase(), Phase::GiveBack { winner, loser });
    assert!(g.act(loser, Action::Pass).is_err());
    let card = cards::iter(g.deal().hands[winner as usize]).next().unwrap();
    let events = g.act(winner, Action::GiveBack { card }).unwrap();
    assert!(
        matches!(events[0], Event::Exchanged(x) if x.from == winner && x.to == loser && !x.automatic && x.card == card)
    );
    assert_eq!(g.exchange().len(), 2);
    assert_eq!(g.to_act(), Some(winner));
    assert!(g.deal().hands.iter().take(4).all(|h| h.count_ones() == 16));
}

// ---- §5 tricks ----------------------------------------------------------------------------

#[test]
fn a_pass_does_not_exclude_and_the_trick_ends_after_every_other_seat_passes() {
    let mut d = four_seat_deal(
        ["g3 g9 g9", "g4 g10 r2 r2", "g5 r10 y2 y2", "g6 y10 y3 y3"],
        0,
    );
    d.apply(
        0,
        Move::Play {
            cards: set("g3"),
            announce: false,
        },
    )
    .unwrap();
    d.apply(3, Move::Pass).unwrap();
    d.apply(
        2,
        Move::Play {
            cards: set("g5"),
            announce: false,
        },
    )
    .unwrap();
    d.apply(1, Move::Pass).unwrap();
    d.apply(0, Move::Pass).unwrap();
    // Seat 3 passed before but may play now.
    d.apply(
        3,
        Move::Play {
            cards: set("g6"),
            announce: false,
        },
    )
    .unwrap();
    d.apply(2, Move::Pass).unwrap();
    d.apply(1, Move::Pass).unwrap();
    let out = d.apply(0, Move::Pass).unwrap();
    assert_eq!(out.trick_won_by, Some(3));
    assert_eq!(d.turn, 3);
    assert!(d.table.is_none());
}

// [D] Gangs are played in turn like any combination, on any combination.
#[test]
fn d_gangs_are_played_in_turn_on_any_combination() {
    let mut d = four_seat_deal(["g3 g9", "g4 g4 y4 r4 g10", "g5 r10", "g6 y10"], 0);
    d.apply(
        0,
        Move::Play {
            cards: set("g3"),
            announce: false,
        },
    )
    .unwrap();
    let gang = Move::Play {
        cards: set("g4 g4 y4 r4"),
        announce: false,
    };
    assert!(d
        .check(1, gang)
        .unwrap_err()
        .message()
        .contains("not your turn"));
    d.apply(3, Move::Pass).unwrap();
    d.apply(2, Move::Pass).unwrap();
    d.apply(1, gang).unwrap();
    assert_eq!(d.table.unwrap().kind, Kind::Gang);
}

#[test]
fn gang_beats_a_straight_flush_on_the_table() {
    let mut d = four_seat_deal(["g1 g2 g3 g4 g5 r9", "g7 g7 y7 r7 g10", "g8", "g6"], 0);
    d.apply(
        0,
        Move::Play {
            cards: set("g1 g2 g3 g4 g5"),
            announce: false,
        },
    )
    .unwrap();
    d.apply(3, Move::Pass).unwrap();
    d.apply(2, Move::Pass).unwrap();
    let mut list = PlayList::new();
    d.legal_plays(&mut list);
    assert_eq!(list.as_slice(), &[set("g7 g7 y7 r7")]);
    d.apply(
        1,
        Move::Play {
            cards: set("g7 g7 y7 r7"),
            announce: false,
        },
    )
    .unwrap();
}

#[test]
fn the_deal_ends_immediately_when_a_hand_empties() {
    let mut d = four_seat_deal(["g3 g3", "g4", "g5", "g6"], 0);
    let out = d
        .apply(
            0,
            Move::Play {
                cards: set("g3 g3"),
                announce: false,
            },
        )
        .unwrap();
    assert!(out.deal_over && d.over);
    assert_eq!(d.winner, Some(0));
    assert!(d.check(3, Move::Pass).is_err());
}
