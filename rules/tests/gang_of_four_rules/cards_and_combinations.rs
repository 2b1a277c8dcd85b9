//! §1 cards, §2 the combination table (one test per row), §3 comparison.

use super::*;

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
            assert_eq!(per_word[format!("{c}{v}").as_str()], 2, "{c}{v}");
        }
    }
    for special in ["m1", "gp", "yp", "dr"] {
        assert_eq!(per_word[special], 1);
    }
    // A number card's word is its color's letter and its value.
    for id in 0..cards::GREEN_PHOENIX {
        let spelled = format!("{}{}", cards::color(id).letter(), cards::value(id));
        assert_eq!(cards::word(id), spelled, "card {id}");
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
