//! Gang of Four: one test per [D] decision of docs/rules/gang-of-four.md and per row of its
//! combination, comparison and scoring tables.

use gangs_rules::gang_of_four::cards::{self, Mask};
use gangs_rules::gang_of_four::scoring::{choose_loser, game_is_over, penalty, ranking};
use gangs_rules::gang_of_four::{
    beats, Action, Combination, DealState, Direction, Event, GangOfFour, Kind, Move, Options,
    Phase, PlayList, Refusal,
};

/// The cards named by `words`, a repeated word taking the next copy.
fn set(words: &str) -> Mask {
    let mut mask = 0;
    for w in words.split_whitespace() {
        let ids = cards::ids_of_word(w).unwrap_or_else(|| panic!("bad word {w}")) & !mask;
        assert!(ids != 0, "no copy of {w} left");
        mask |= 1 << ids.trailing_zeros();
    }
    mask
}

fn combo(words: &str) -> Combination {
    Combination::classify(set(words)).unwrap_or_else(|| panic!("{words} is no combination"))
}

fn kind_of(words: &str) -> Option<Kind> {
    Combination::classify(set(words)).map(|c| c.kind)
}

fn opts() -> Options {
    Options::default()
}

fn wins(a: &str, b: &str) -> bool {
    beats(&combo(a), &combo(b), &opts())
}

// ---- §1 cards -----------------------------------------------------------------------------

#[test]
fn deck_has_64_cards_with_unique_ids_and_the_listed_counts() {
    let mut per_word = std::collections::BTreeMap::new();
    for id in 0..64u8 {
        *per_word.entry(cards::word(id)).or_insert(0) += 1;
    }
    assert_eq!(per_word.values().sum::<i32>(), 64);
    for v in 1..=10 {
        for c in ["g", "y", "r"] {
            assert_eq!(per_word[&format!("{c}{v}")], 2, "{c}{v}");
        }
    }
    for special in ["m1", "gp", "yp", "dr"] {
        assert_eq!(per_word[special], 1);
    }
}

#[test]
fn single_order_value_then_color_then_phoenixes_then_dragon() {
    assert!(wins("g2", "r1"));
    assert!(wins("y5", "g5") && wins("r5", "y5"));
    assert!(wins("gp", "r10") && wins("yp", "gp") && wins("dr", "yp"));
    // Two cards of the same value and color are equal: neither beats the other.
    let both = set("r5 r5");
    let (a, b) = (both.trailing_zeros() as u8, 63 - both.leading_zeros() as u8);
    let (ca, cb) = (
        Combination::classify(1 << a).unwrap(),
        Combination::classify(1 << b).unwrap(),
    );
    assert!(!beats(&ca, &cb, &opts()) && !beats(&cb, &ca, &opts()));
}

#[test]
fn multicolor_one_ranks_above_the_red_one_in_singles_pairs_triples_and_gangs() {
    assert!(wins("m1", "r1") && !wins("m1", "g2"));
    assert!(wins("m1 g1", "r1 g1"));
    assert!(wins("m1 g1 g1", "r1 r1 g1"));
    assert!(wins("m1 g1 g1 y1", "r1 r1 y1 y1"));
}

// ---- §2 combination table, one test per row ---------------------------------------------

#[test]
fn combination_row_single_is_any_card() {
    for w in ["g1", "m1", "r10", "gp", "yp", "dr"] {
        assert_eq!(kind_of(w), Some(Kind::Single), "{w}");
    }
}

#[test]
fn combination_row_pair_same_value_or_the_two_phoenixes() {
    assert_eq!(kind_of("r7 y7"), Some(Kind::Pair));
    assert_eq!(kind_of("g7 g7"), Some(Kind::Pair));
    assert_eq!(kind_of("gp yp"), Some(Kind::Pair));
    assert_eq!(kind_of("r7 y8"), None);
    assert_eq!(kind_of("gp r10"), None);
    assert_eq!(kind_of("dr r10"), None);
}

#[test]
fn combination_row_triple_same_value_1_to_10() {
    assert_eq!(kind_of("r3 y3 g3"), Some(Kind::Triple));
    assert_eq!(kind_of("m1 r1 r1"), Some(Kind::Triple));
    assert_eq!(kind_of("r3 y3 g4"), None);
    assert_eq!(kind_of("gp yp r10"), None);
}

#[test]
fn combination_row_straight_five_consecutive_values_not_one_color() {
    assert_eq!(kind_of("g1 y2 r3 g4 g5"), Some(Kind::Straight));
    assert_eq!(kind_of("g6 y7 r8 g9 g10"), Some(Kind::Straight));
    assert_eq!(kind_of("m1 y2 r3 g4 g5"), Some(Kind::Straight));
}

// [D] Straights do not wrap (no 9-10-1-2-3).
#[test]
fn d_straights_do_not_wrap() {
    assert_eq!(kind_of("g9 y10 r1 g2 y3"), None);
    assert_eq!(kind_of("g8 y9 r10 g1 y2"), None);
}

#[test]
fn combination_row_flush_five_number_cards_of_one_color_not_consecutive() {
    assert_eq!(kind_of("r1 r3 r5 r7 r9"), Some(Kind::Flush));
    assert_eq!(kind_of("g2 g2 g5 g7 g9"), Some(Kind::Flush));
    assert_eq!(kind_of("r1 r3 r5 r7 y9"), None);
}

// [D] The multicolor 1 is a 1 in every combination; in a flush or straight flush it takes the
// color of the other four cards.
#[test]
fn d_multicolor_one_takes_the_color_of_a_flush_or_straight_flush() {
    let flush = combo("m1 r3 r5 r7 r9");
    assert_eq!(flush.kind, Kind::Flush);
    // Inside a red flush it is a red 1: equal to the same flush with a red 1 (neither beats).
    let with_red_one = combo("r1 r3 r5 r7 r9");
    assert!(!beats(&flush, &with_red_one, &opts()) && !beats(&with_red_one, &flush, &opts()));
    assert_eq!(kind_of("m1 y2 y3 y4 y5"), Some(Kind::StraightFlush));
    assert_eq!(kind_of("m1 y2 g3 y4 y5"), Some(Kind::Straight));
    assert_eq!(kind_of("m1 g3 r5 r7 r9"), None);
}

#[test]
fn combination_row_full_house_triple_plus_pair_which_may_be_the_phoenixes() {
    assert_eq!(kind_of("r3 y3 g3 r9 g9"), Some(Kind::FullHouse));
    assert_eq!(kind_of("r3 y3 g3 gp yp"), Some(Kind::FullHouse));
    assert_eq!(kind_of("r3 y3 g3 gp r9"), None);
    assert_eq!(kind_of("r3 y3 g3 dr r9"), None);
}

#[test]
fn combination_row_straight_flush_five_consecutive_values_one_color() {
    assert_eq!(kind_of("g1 g2 g3 g4 g5"), Some(Kind::StraightFlush));
    assert_eq!(kind_of("r6 r7 r8 r9 r10"), Some(Kind::StraightFlush));
}

#[test]
fn combination_row_gang_four_to_seven_cards_of_one_value() {
    assert_eq!(kind_of("r4 r4 y4 g4"), Some(Kind::Gang));
    assert_eq!(
        kind_of("r4 r4 y4 g4 g4"),
        Some(Kind::Gang),
        "five equal values are a gang, never a full house"
    );
    assert_eq!(kind_of("r4 r4 y4 y4 g4 g4"), Some(Kind::Gang));
    assert_eq!(kind_of("r1 r1 y1 y1 g1 g1 m1"), Some(Kind::Gang));
    assert_eq!(kind_of("r4 r4 y5 y5"), None, "there is no two-pair");
}

#[test]
fn dragon_only_single_and_phoenixes_never_in_triple_straight_flush_or_gang() {
    assert_eq!(kind_of("dr gp"), None);
    assert_eq!(kind_of("gp r9 r9"), None);
    assert_eq!(kind_of("gp r7 r8 r9 r10"), None);
    assert_eq!(kind_of("gp r1 r3 r5 r7"), None);
    assert_eq!(kind_of("dr r1 r3 r5 r7"), None);
    assert_eq!(kind_of("gp r9 r9 y9"), None);
}

// ---- §3 comparison -----------------------------------------------------------------------

#[test]
fn a_play_needs_the_same_number_of_cards() {
    assert!(!wins("r9 r9", "g2"));
    assert!(!wins("dr", "g2 g2"));
    assert!(!wins("r9 r9 y9", "g2 g2"));
}

#[test]
fn identical_combination_never_beats() {
    assert!(!wins("g2 y2", "g2 y2"));
    assert!(!wins("r5", "r5"));
    assert!(!wins("g1 y2 r3 g4 g5", "g1 y2 r3 g4 g5"));
    assert!(!wins("r3 r5 r7 r9 r10", "r3 r5 r7 r9 r10"));
}

#[test]
fn pairs_higher_value_then_colors_strongest_first() {
    assert!(wins("g8 g8", "r7 r7"));
    assert!(wins("r7 y7", "r7 g7"));
    assert!(wins("r7 g7", "y7 y7"));
    assert!(wins("y7 y7", "y7 g7"));
    assert!(wins("y7 g7", "g7 g7"));
    // The multicolor 1 counts as the strongest color.
    assert!(wins("m1 g1", "r1 r1"));
}

#[test]
fn triples_higher_value_then_colors() {
    assert!(wins("g8 g8 y8", "r7 r7 y7"));
    assert!(wins("r7 y7 g7", "r7 g7 g7"));
    assert!(wins("r7 r7 g7", "r7 y7 y7"));
}

#[test]
fn phoenix_pair_beats_every_other_pair_including_tens() {
    assert!(wins("gp yp", "r10 r10"));
    assert!(!wins("r10 r10", "gp yp"));
}

#[test]
fn five_card_kind_order_straight_flush_fullhouse_straightflush() {
    let straight = "g6 y7 r8 g9 g10";
    let flush = "g1 g2 g3 g4 g6";
    let full = "g2 y2 r2 g3 y3";
    let straight_flush = "g1 g2 g3 g4 g5";
    assert!(wins(flush, straight) && !wins(straight, flush));
    assert!(wins(full, flush) && !wins(flush, full));
    assert!(wins(straight_flush, full) && !wins(full, straight_flush));
}

// [D] Straight, straight flush: higher top value wins; at equal top value, compare the colors
// card by card from the top card down.
#[test]
fn d_straights_compare_top_value_then_colors_from_the_top_down() {
    assert!(wins("g2 g3 y4 g5 g6", "r1 r2 r3 r4 y5"));
    assert!(wins("g2 g3 y4 g5 r6", "r2 r3 r4 r5 y6"));
    assert!(wins("g2 g3 g4 r5 y6", "r2 r3 r4 g5 y6"));
    assert!(wins("r2 r3 r4 r5 r6", "y2 y3 y4 y5 y6"));
    assert!(wins("y3 y4 y5 y6 y7", "r2 r3 r4 r5 r6"));
    // The multicolor 1 counts as the strongest color in a plain straight.
    assert!(wins("m1 g2 g3 y4 g5", "r1 g2 g3 y4 g5"));
}

// [D] Flush: compare values from the highest down, first difference decides; if all five values
// are equal, the color of the flush decides (green < yellow < red).
#[test]
fn d_flushes_compare_values_lexicographically_then_color() {
    assert!(wins("g1 g2 g3 g5 g10", "r2 r4 r6 r8 r9"));
    assert!(wins("g2 g3 g4 g6 g9", "r1 r3 r4 r6 r9"));
    assert!(wins("r1 r3 r5 r7 r9", "y1 y3 y5 y7 y9"));
    assert!(wins("y1 y3 y5 y7 y9", "g1 g3 g5 g7 g9"));
    assert!(wins("m1 r3 r5 r7 r9", "y1 y3 y5 y7 y9"));
}

// Variant flush_by_sum: compare the sum of the five values first, then as above.
#[test]
fn option_flush_by_sum_compares_sums_first() {
    let by_sum = Options {
        flush_by_sum: true,
        ..opts()
    };
    let high_top = combo("g1 g2 g3 g5 g10"); // sum 21
    let high_sum = combo("r4 r6 r7 r8 r9"); // sum 34
    assert!(
        beats(&high_top, &high_sum, &opts()),
        "default: the 10 decides"
    );
    assert!(beats(&high_sum, &high_top, &by_sum) && !beats(&high_top, &high_sum, &by_sum));
    // Equal sums fall back to the default comparison.
    let a = combo("g1 g2 g3 g5 g10"); // 21
    let b = combo("r2 r3 r4 r5 r7"); // 21
    assert!(beats(&a, &b, &by_sum));
}

#[test]
fn full_house_triple_decides_then_pair_with_phoenix_pair_highest() {
    assert!(wins("g3 y3 r3 g2 y2", "g2 y2 r2 g10 y10"));
    assert!(wins("g3 y3 r3 gp yp", "g2 y2 r2 g10 y10"));
    assert!(
        wins("r3 r3 y3 g2 g2", "g3 g3 y3 g10 r10"),
        "triple colors decide at equal value"
    );
    // At equal triple the pair decides, the Phoenix pair highest.
    let base = "g4 y4 r4";
    assert!(wins(&format!("{base} gp yp"), &format!("{base} r10 r10")));
    assert!(wins(&format!("{base} r9 r9"), &format!("{base} r8 r8")));
}

#[test]
fn gang_beats_any_non_gang_whatever_its_size() {
    for table in [
        "dr",
        "gp yp",
        "r10 r10 y10",
        "r6 r7 r8 r9 r10",
        "g3 y3 r3 gp yp",
    ] {
        assert!(wins("g2 g2 y2 r2", table), "{table}");
        assert!(!wins(table, "g2 g2 y2 r2"), "{table}");
    }
}

#[test]
fn gang_of_five_beats_gang_of_four_of_higher_value() {
    assert!(wins("g2 g2 y2 r2 r2", "g10 g10 y10 r10"));
    assert!(!wins("g10 g10 y10 r10", "g2 g2 y2 r2 r2"));
}

#[test]
fn gangs_of_equal_size_higher_value_then_colors() {
    assert!(wins("g5 g5 y5 y5", "r4 r4 y4 y4"));
    assert!(wins("r5 r5 y5 g5", "r5 y5 y5 g5"));
    assert!(wins("r1 r1 y1 y1 g1 g1 m1", "g10 g10 y10 y10 r10 r10"));
}

// ---- legal plays ----------------------------------------------------------------------------

fn four_seat_deal(hands: [&str; 4], leader: u8) -> DealState {
    let masks: [Mask; 4] = std::array::from_fn(|i| set(hands[i]));
    DealState::new(opts(), masks, Direction::CounterClockwise, leader, 0)
}

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

// ---- §6 last card ---------------------------------------------------------------------------

// [D] A seat left with exactly one card must announce it; by default the service announces it
// automatically.
#[test]
fn d_last_card_announced_automatically_by_default() {
    let mut d = four_seat_deal(["g3 g9 g9", "g4 g10", "g5 r10", "g6 y10"], 0);
    d.apply(
        0,
        Move::Play {
            cards: set("g3"),
            announce: false,
        },
    )
    .unwrap();
    let out = d
        .apply(
            3,
            Move::Play {
                cards: set("g6"),
                announce: false,
            },
        )
        .unwrap();
    assert!(out.announced);
    assert_eq!(d.announced, 1 << 3);
    // The automatic announcement is not the seat's to make.
    assert!(d
        .check(
            2,
            Move::Play {
                cards: set("r10"),
                announce: true
            }
        )
        .is_err());
}

// [D] The seat immediately before a one-card seat, following a trick of singles, must play its
// strongest single if that beats the table (or a beating gang); otherwise it may pass.
#[test]
fn d_last_card_constraint_when_following_singles() {
    // Counter-clockwise: 0 -> 3 -> 2 -> 1 -> 0. Seat 1 goes down to one announced card;
    // seat 2 plays immediately before it.
    let mut d = four_seat_deal(["g3 g9 g9", "g4 g10", "g5 g8 r10", "g6 y10 y9"], 0);
    d.apply(
        0,
        Move::Play {
            cards: set("g3"),
            announce: false,
        },
    )
    .unwrap();
    d.apply(3, Move::Pass).unwrap();
    d.apply(2, Move::Pass).unwrap();
    d.apply(
        1,
        Move::Play {
            cards: set("g4"),
            announce: false,
        },
    )
    .unwrap();
    assert_eq!(d.announced, 1 << 1);
    d.apply(0, Move::Pass).unwrap();
    // Seat 3 is not before seat 1: unconstrained, it may pass.
    assert!(d.check(3, Move::Pass).is_ok());
    d.apply(3, Move::Pass).unwrap();
    // Seat 2 must play r10, its strongest single; g5/g8 and passing are refused.
    let mut list = PlayList::new();
    d.legal_plays(&mut list);
    assert_eq!(list.as_slice(), &[set("r10")]);
    assert!(!list.can_pass);
    assert!(d
        .check(2, Move::Pass)
        .unwrap_err()
        .message()
        .contains("strongest single r10"));
    assert!(d
        .check(
            2,
            Move::Play {
                cards: set("g8"),
                announce: false
            }
        )
        .is_err());
    d.apply(
        2,
        Move::Play {
            cards: set("r10"),
            announce: false,
        },
    )
    .unwrap();
    // When the strongest single does not beat the table, the constrained seat may pass.
    let mut f = four_seat_deal(["g3 g9 g9", "g4 g10", "g5 g8 g6", "g6 dr y9"], 0);
    f.apply(
        0,
        Move::Play {
            cards: set("g3"),
            announce: false,
        },
    )
    .unwrap();
    f.apply(3, Move::Pass).unwrap();
    f.apply(2, Move::Pass).unwrap();
    f.apply(
        1,
        Move::Play {
            cards: set("g4"),
            announce: false,
        },
    )
    .unwrap();
    f.apply(0, Move::Pass).unwrap();
    f.apply(
        3,
        Move::Play {
            cards: set("dr"),
            announce: false,
        },
    )
    .unwrap();
    f.legal_plays(&mut list);
    assert!(list.is_empty() && list.can_pass);
    f.apply(2, Move::Pass).unwrap();
}

#[test]
fn last_card_constraint_allows_a_beating_gang_instead() {
    let mut d = four_seat_deal(["g3 g9 g9", "g4 g10", "g5 r10 y2 y2 g2 g2", "g6 y10"], 0);
    d.apply(
        0,
        Move::Play {
            cards: set("g3"),
            announce: false,
        },
    )
    .unwrap();
    d.apply(3, Move::Pass).unwrap();
    d.apply(2, Move::Pass).unwrap();
    d.apply(
        1,
        Move::Play {
            cards: set("g4"),
            announce: false,
        },
    )
    .unwrap();
    d.apply(0, Move::Pass).unwrap();
    d.apply(3, Move::Pass).unwrap();
    let mut list = PlayList::new();
    d.legal_plays(&mut list);
    assert!(list.contains(set("r10")) && list.contains(set("y2 y2 g2 g2")));
    assert_eq!(list.len(), 2);
}

// [D] Leading while the next seat holds one announced card: lead a combination of two or more
// cards if it has any, otherwise its strongest single.
#[test]
fn d_last_card_constraint_when_leading() {
    // Seat 1 holds one announced card; seat 2 leads (counter-clockwise seat 2 is followed by 1).
    let hands = [set("g3"), set("g4"), set("g5 g5 r9 y10"), set("g6")];
    let mut d = DealState::from_parts(
        opts(),
        hands,
        Direction::CounterClockwise,
        2,
        None,
        0,
        1 << 1,
        0,
    )
    .unwrap();
    let mut list = PlayList::new();
    d.legal_plays(&mut list);
    assert_eq!(list.as_slice(), &[set("g5 g5")]);
    assert!(d
        .check(
            2,
            Move::Play {
                cards: set("y10"),
                announce: false
            }
        )
        .unwrap_err()
        .message()
        .contains("two or more"));
    // Without a multi-card combination: only the strongest single.
    let hands = [set("g3"), set("g4"), set("g5 r9 y10"), set("g6")];
    d = DealState::from_parts(
        opts(),
        hands,
        Direction::CounterClockwise,
        2,
        None,
        0,
        1 << 1,
        0,
    )
    .unwrap();
    d.legal_plays(&mut list);
    assert_eq!(list.as_slice(), &[set("y10")]);
    assert!(d
        .check(
            2,
            Move::Play {
                cards: set("g5"),
                announce: false
            }
        )
        .unwrap_err()
        .message()
        .contains("strongest single y10"));
    // A seat not before the one-card seat leads freely.
    let hands = [set("g3"), set("g4"), set("g5"), set("g6 y5 r9 y10")];
    d = DealState::from_parts(
        opts(),
        hands,
        Direction::CounterClockwise,
        3,
        None,
        0,
        1 << 1,
        0,
    )
    .unwrap();
    d.legal_plays(&mut list);
    assert_eq!(list.len(), 4);
}

// Variant manual_last_card: a seat that forgets the announcement may not play again this deal.
#[test]
fn option_manual_last_card_forgotten_announcement_bars_the_seat() {
    let manual = Options {
        manual_last_card: true,
        ..opts()
    };
    let hands = [
        set("g3 g9 g9"),
        set("g4 g10"),
        set("g5 r10 y8"),
        set("g6 y10 y9"),
    ];
    let mut d = DealState::new(manual, hands, Direction::CounterClockwise, 0, 0);
    d.apply(
        0,
        Move::Play {
            cards: set("g3"),
            announce: false,
        },
    )
    .unwrap();
    d.apply(3, Move::Pass).unwrap();
    d.apply(2, Move::Pass).unwrap();
    // Both the announced and the silent play are legal for seat 1 (it keeps one card).
    assert!(d
        .check(
            1,
            Move::Play {
                cards: set("g4"),
                announce: true
            }
        )
        .is_ok());
    // Seat 1 plays down to one card without announcing: barred.
    let out = d
        .apply(
            1,
            Move::Play {
                cards: set("g4"),
                announce: false,
            },
        )
        .unwrap();
    assert!(out.forgot && !out.announced);
    assert!(d.is_barred(1));
    d.apply(0, Move::Pass).unwrap();
    d.apply(3, Move::Pass).unwrap();
    // Seat 2 is not constrained: seat 1 did not announce.
    assert!(d.check(2, Move::Pass).is_ok());
    d.apply(2, Move::Pass).unwrap();
    // The trick goes back to seat 1, barred: it may only pass, even as leader.
    assert_eq!(d.turn, 1);
    let mut list = PlayList::new();
    d.legal_plays(&mut list);
    assert!(list.is_empty() && list.can_pass);
    assert!(d
        .check(
            1,
            Move::Play {
                cards: set("g10"),
                announce: false
            }
        )
        .unwrap_err()
        .message()
        .contains("did not announce"));
    d.apply(1, Move::Pass).unwrap();
    assert_eq!(d.turn, 0);
    assert!(d.table.is_none());
    // It ends the deal with at least its one card.
    assert_eq!(d.hands[1].count_ones(), 1);
}

#[test]
fn option_manual_last_card_announcement_only_on_a_play_leaving_one_card() {
    let manual = Options {
        manual_last_card: true,
        ..opts()
    };
    let hands = [
        set("g3 g9 g9"),
        set("g4 g10"),
        set("g5 r10"),
        set("g6 y10 y9"),
    ];
    let d = DealState::new(manual, hands, Direction::CounterClockwise, 0, 0);
    let err = d
        .check(
            0,
            Move::Play {
                cards: set("g3"),
                announce: true,
            },
        )
        .unwrap_err();
    assert!(err.message().contains("leaves 2"));
}

// ---- §7 scoring -----------------------------------------------------------------------------

#[test]
fn scoring_table_rows() {
    let rows: [(std::ops::RangeInclusive<u32>, u32); 5] = [
        (1..=7, 1),
        (8..=10, 2),
        (11..=13, 3),
        (14..=15, 4),
        (16..=16, 5),
    ];
    assert_eq!(penalty(0), 0, "the winner scores 0");
    for (range, per_card) in rows {
        for n in range {
            assert_eq!(penalty(n), n * per_card, "{n} cards");
        }
    }
    assert_eq!(penalty(16), 80);
    assert_eq!(penalty(8), 16);
    assert_eq!(penalty(13), 39);
}

fn hands_with_counts(counts: [u32; 4]) -> [Mask; 4] {
    let mut next = 0u32;
    std::array::from_fn(|s| {
        let mut m = 0u64;
        for _ in 0..counts[s] {
            m |= 1 << next;
            next += 1;
        }
        m
    })
}

#[test]
fn loser_is_the_seat_with_the_most_cards() {
    let hands = hands_with_counts([0, 3, 9, 5]);
    assert_eq!(choose_loser(&hands, &[0, 0, 0, 0], 0, &opts()), 2);
}

// [D] Loser ties: the highest cumulative score (after this deal); if still tied, the tied seat
// closest to the winner going counter-clockwise.
#[test]
fn d_loser_ties_highest_total_then_closest_counter_clockwise_from_winner() {
    let hands = hands_with_counts([0, 5, 5, 5]);
    assert_eq!(choose_loser(&hands, &[0, 10, 30, 20], 0, &opts()), 2);
    // Equal totals: counter-clockwise from winner 0 comes seat 3 first.
    assert_eq!(choose_loser(&hands, &[0, 10, 10, 10], 0, &opts()), 3);
    let hands = hands_with_counts([5, 5, 0, 5]);
    assert_eq!(choose_loser(&hands, &[10, 10, 0, 10], 2, &opts()), 1);
}

// Variant loser_tie_strongest_card: among the tied seats, the one holding the strongest single.
#[test]
fn option_loser_tie_strongest_card() {
    let variant = Options {
        loser_tie_strongest_card: true,
        ..opts()
    };
    let hands = [0, set("g2 g3"), set("g4 dr"), set("r10 y9")];
    assert_eq!(choose_loser(&hands, &[0, 50, 0, 0], 0, &variant), 2);
    assert_eq!(choose_loser(&hands, &[0, 50, 0, 0], 0, &opts()), 1);
}

// ---- §8 end ---------------------------------------------------------------------------------

// [D] After a deal, if a total reached target_score and the lowest total is shared, further
// deals are played until one seat alone has the lowest total.
#[test]
fn d_game_continues_while_the_lowest_total_is_shared() {
    let o = opts();
    assert!(!game_is_over(&[99, 10, 20, 30], &o));
    assert!(game_is_over(&[100, 10, 20, 30], &o));
    assert!(!game_is_over(&[100, 10, 10, 30], &o));
    let three = Options {
        players: 3,
        target_score: 50,
        ..o
    };
    assert!(
        game_is_over(&[50, 10, 20, 10], &three),
        "the dead hand is no seat"
    );
}

#[test]
fn final_ranking_by_total_with_shared_ranks() {
    let r = ranking(&[30, 10, 30, 120], 4);
    let summary: Vec<(u8, u8)> = r.iter().map(|r| (r.seat, r.rank)).collect();
    assert_eq!(summary, vec![(1, 1), (0, 2), (2, 2), (3, 4)]);
}
