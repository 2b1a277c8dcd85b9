//! §6 the last card, §7 scoring, §8 the end.

use super::*;

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
