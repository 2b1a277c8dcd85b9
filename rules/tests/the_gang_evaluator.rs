//! The hand evaluator: known hands of every category, the wheel, kickers, perfect ties, 8 cards,
//! the suitless Jack (never in a flush), and agreement with an independent brute-force evaluator
//! (every 5-card subset classified naively) on a million random hands, through both the card-slice
//! and the prepared-hand (`EvalHand`) paths.

use gangs_rules::the_gang::{cards, evaluate, Card, Category, EvalHand, Evaluator, HandValue};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;

fn value(text: &str) -> HandValue {
    evaluate(&cards(text))
}

fn category(text: &str) -> Category {
    value(text).category()
}

#[test]
fn every_category_is_recognised() {
    assert_eq!(category("2c 5d 9h Js Kc 3d 7h"), Category::HighCard);
    assert_eq!(category("2c 2d 9h Js Kc 3d 7h"), Category::Pair);
    assert_eq!(category("2c 2d 9h 9s Kc 3d 7h"), Category::TwoPair);
    assert_eq!(category("2c 2d 2h 9s Kc 3d 7h"), Category::ThreeOfAKind);
    assert_eq!(category("5c 6d 7h 8s 9c Kd 2h"), Category::Straight);
    assert_eq!(category("2h 5h 9h Jh Kh 3d 7c"), Category::Flush);
    assert_eq!(category("2c 2d 2h 9s 9c 3d 7h"), Category::FullHouse);
    assert_eq!(category("2c 2d 2h 2s 9c 3d 7h"), Category::FourOfAKind);
    assert_eq!(category("5h 6h 7h 8h 9h Kd 2c"), Category::StraightFlush);
    assert_eq!(category("Th Jh Qh Kh Ah"), Category::StraightFlush);
}

#[test]
fn categories_are_ordered() {
    let ladder = [
        "2c 5d 9h Js Kc 3d 7h",
        "2c 2d 9h Js Kc 3d 7h",
        "2c 2d 9h 9s Kc 3d 7h",
        "2c 2d 2h 9s Kc 3d 7h",
        "5c 6d 7h 8s 9c Kd 2h",
        "2h 5h 9h Jh Kh 3d 7c",
        "2c 2d 2h 9s 9c 3d 7h",
        "2c 2d 2h 2s 9c 3d 7h",
        "5h 6h 7h 8h 9h Kd 2c",
    ];
    for pair in ladder.windows(2) {
        assert!(value(pair[0]) < value(pair[1]), "{} < {}", pair[0], pair[1]);
    }
}

#[test]
fn the_wheel_is_the_lowest_straight_and_ace_is_never_in_the_middle() {
    assert_eq!(category("Ac 2d 3h 4s 5c"), Category::Straight);
    assert!(value("Ac 2d 3h 4s 5c") < value("2c 3d 4h 5s 6c"));
    assert!(value("Tc Jd Qh Ks Ac") > value("9c Td Jh Qs Kc"));
    assert_eq!(category("Kc Ad 2h 3s 4c"), Category::HighCard);
    assert_eq!(category("Ah 2h 3h 4h 5h"), Category::StraightFlush);
    assert!(value("Ah 2h 3h 4h 5h") < value("2d 3d 4d 5d 6d"));
    // A wheel plus a 6 is a 6-high straight.
    assert_eq!(value("Ac 2d 3h 4s 5c 6d"), value("2c 3d 4h 5s 6c"));
}

#[test]
fn kickers_break_ties_in_order() {
    assert!(value("Ac Ad Kh 9s 4c") > value("Ac Ad Qh Js Tc"));
    assert!(value("Ac Ad Kh 9s 5c") > value("As Ah Kd 9c 4d"));
    assert!(value("9c 9d 4h 4s Kc") > value("9h 9s 4c 4d Qc"));
    assert!(value("9c 9d 4h 4s 2c") < value("9h 9s 5c 5d 2d"));
    assert!(value("7c 7d 7h As 2c") > value("7c 7d 7h Ks Qc"));
    assert!(value("Ah Kh 9h 5h 3h") > value("Ac Kc 9c 5c 2c"));
    assert!(value("Ac Kd 9h 5s 3c") > value("As Kh 9c 5d 2h"));
    assert!(value("8c 8d 8h 8s Ac") > value("8c 8d 8h 8s Kc"));
    assert!(value("8c 8d 8h Ks Kc") > value("8c 8d 8h Qs Qc"));
    assert!(value("9c 9d 9h 2s 2c") > value("8c 8d 8h As Ac"));
    // Only the best five count: a sixth and seventh card do not break ties.
    assert_eq!(value("Ac Ad Kh Qs Jc 3d 2h"), value("As Ah Kd Qc Jd 4c 3h"));
    // Three pairs: the best two pairs and the best remaining kicker.
    assert_eq!(value("Ac Ad Kh Ks 2c 2d Qh"), value("As Ah Kd Kc Qs 5c 4h"));
}

#[test]
fn perfect_ties_ignore_suits() {
    assert_eq!(value("Ac Kd 9h 5s 3c"), value("As Kh 9c 5d 3h"));
    assert_eq!(value("2c 3d 5h 9s Kc Qd Jh"), value("2d 3h 5s 9c Kd Qh Jc"));
    // Board plays: both players hold low cards under a board straight.
    assert_eq!(value("2c 3d 8h 9s Tc Jd Qh"), value("2h 4d 8h 9s Tc Jd Qh"));
}

#[test]
fn eight_cards_pick_the_best_five() {
    assert_eq!(category("Ac Ad Ah As Kc Kd Kh 2s"), Category::FourOfAKind);
    assert_eq!(value("Ac Ad Ah As Kc Kd Kh 2s"), value("Ac Ad Ah As Kc"));
    // 8 cards can hold a flush and a full house: the full house wins.
    assert_eq!(category("2h 5h 9h Jh Kh 9c 9d 2d"), Category::FullHouse);
    assert_eq!(category("2h 3h 4h 5h 6h 7c 8d 9s"), Category::StraightFlush);
}

#[test]
fn the_suitless_jack_counts_as_a_jack_but_never_for_a_flush() {
    let j = Card::SUITLESS_JACK;
    assert_eq!(j.rank(), 9);
    assert_eq!(j.suit(), None);
    // Four hearts and the suitless Jack: no flush, only high card.
    assert_eq!(category("2h 5h 9h Kh J*"), Category::HighCard);
    // It makes pairs and straights.
    assert_eq!(category("Jh 5h 9c Kd J*"), Category::Pair);
    assert_eq!(category("8c 9d Th Qs J*"), Category::Straight);
    // Four hearts 8 9 T Q + J*: a straight, not a straight flush.
    assert_eq!(category("8h 9h Th Qh J* 2c 3d"), Category::Straight);
    // Five Jacks among 8 cards: four of a kind with a kicker.
    assert_eq!(category("Jc Jd Jh Js J* 2c 3d 4h"), Category::FourOfAKind);
    assert_eq!(value("Jc Jd Jh J* 4h"), value("Jc Jd Jh Js 4d"));
}

#[test]
fn d_five_jacks_rank_as_four_of_a_kind_with_a_jack_kicker() {
    // Five Jacks and two low cards: four Jacks, and the fifth Jack is the kicker.
    let five = value("Jc Jd Jh Js J* 2c 3d");
    assert_eq!(five.category(), Category::FourOfAKind);
    assert_eq!(value("Jc Jd Jh Js J*"), five, "the five Jacks alone");
    assert!(
        five > value("Jc Jd Jh Js Tc 2c 3d"),
        "a Jack kicker beats a Ten kicker"
    );
    assert!(
        five < value("Jc Jd Jh Js Qc 2c 3d"),
        "and loses to a Queen kicker"
    );
    assert!(
        five > value("Tc Td Th Ts Ac 2c 3d"),
        "four Jacks beat four Tens"
    );
    assert!(
        five < value("Qc Qd Qh Qs 2c 3d 4h"),
        "and lose to four Queens"
    );
    assert!(
        five > value("Ac Ad Ah Kc Kd Ks 2h"),
        "above every full house"
    );
    assert!(
        five < value("2h 3h 4h 5h 6h Jc Jd"),
        "below every straight flush"
    );
    // Beside a higher card, the best five cards take it as the kicker.
    assert_eq!(value("Jc Jd Jh Js J* Ac 2d"), value("Jc Jd Jh Js Ad 2d 3h"));
    // With 8 cards (challenge 10) the same holds.
    assert_eq!(value("Jc Jd Jh Js J* 2c 3d 4h"), five);
}

// ---- the independent brute-force evaluator ----------------------------------------------------

/// (category, tie-break ranks), compared lexicographically.
type NaiveValue = (u8, Vec<u8>);

/// Classifies exactly five cards the naive way.
fn naive_five(hand: &[Card]) -> NaiveValue {
    let mut ranks: Vec<u8> = hand.iter().map(|c| c.rank()).collect();
    ranks.sort_unstable_by(|a, b| b.cmp(a));
    let flush = hand
        .iter()
        .all(|c| c.suit().is_some() && c.suit() == hand[0].suit());
    let mut distinct = ranks.clone();
    distinct.dedup();
    let straight_top = if distinct.len() == 5 && distinct[0] - distinct[4] == 4 {
        Some(distinct[0])
    } else if distinct == [12, 3, 2, 1, 0] {
        Some(3)
    } else {
        None
    };
    // Groups by (count, rank), largest first.
    let mut groups: Vec<(usize, u8)> = distinct
        .iter()
        .map(|&r| (ranks.iter().filter(|&&x| x == r).count(), r))
        .collect();
    groups.sort_unstable_by(|a, b| b.cmp(a));
    let by_groups: Vec<u8> = groups.iter().map(|g| g.1).collect();
    let counts: Vec<usize> = groups.iter().map(|g| g.0).collect();
    match (straight_top, flush, counts.as_slice()) {
        (Some(top), true, _) => (8, vec![top]),
        (_, _, [4, ..]) => (7, by_groups),
        // Five Jacks (the suitless one with the four suited): four Jacks, a Jack kicker.
        (_, _, [5]) => (7, vec![by_groups[0], by_groups[0]]),
        (_, _, [3, 2]) => (6, by_groups),
        (_, true, _) => (5, ranks),
        (Some(top), false, _) => (4, vec![top]),
        (_, _, [3, ..]) => (3, by_groups),
        (_, _, [2, 2, ..]) => (2, by_groups),
        (_, _, [2, ..]) => (1, by_groups),
        _ => (0, ranks),
    }
}

fn naive_best(cards: &[Card]) -> NaiveValue {
    let n = cards.len();
    let mut best: Option<NaiveValue> = None;
    let mut five = Vec::with_capacity(5);
    for mask in 0u32..(1 << n) {
        if mask.count_ones() != 5 {
            continue;
        }
        five.clear();
        five.extend((0..n).filter(|i| mask >> i & 1 == 1).map(|i| cards[i]));
        let v = naive_five(&five);
        if best.as_ref().is_none_or(|b| v > *b) {
            best = Some(v);
        }
    }
    best.expect("at least five cards")
}

#[test]
fn agrees_with_brute_force_on_a_million_random_hands() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut deck = Card::deck();
    deck.push(Card::SUITLESS_JACK);
    let mut previous: Option<(Vec<Card>, HandValue, NaiveValue)> = None;
    let evaluator = Evaluator::new();
    for i in 0..1_000_000u32 {
        // Mostly 7 cards; some 5, 6 and 8; the suitless Jack in play one hand in four.
        let size = match i % 10 {
            0 => 5,
            1 => 6,
            2 => 8,
            _ => 7,
        };
        let pool = if i % 4 == 0 { 53 } else { 52 };
        let (hand, _) = deck[..pool].partial_shuffle(&mut rng, size);
        let hand = hand.to_vec();
        let ours = evaluate(&hand);
        // The prepared path, with the hand split as a board and private cards are.
        let split = i as usize % (size + 1);
        let prepared = EvalHand::of(&hand[..split]).union(EvalHand::of(&hand[split..]));
        assert_eq!(prepared.len(), size);
        assert_eq!(evaluator.evaluate_hand(prepared), ours, "prepared {hand:?}");
        let naive = naive_best(&hand);
        assert_eq!(ours.category() as u8, naive.0, "category of {hand:?}");
        // The ordering must agree with the naive one against the previous hand.
        if let Some((prev_hand, prev_ours, prev_naive)) = &previous {
            let expected: Ordering = naive.cmp(prev_naive);
            assert_eq!(ours.cmp(prev_ours), expected, "{hand:?} vs {prev_hand:?}");
        }
        previous = Some((hand, ours, naive));
        if rng.random_ratio(1, 2) {
            previous = None;
        }
    }
}

// ---- Monte Carlo strength (the crew bot's estimate) -------------------------------------------

#[test]
fn monte_carlo_strength_orders_strong_and_weak_starting_hands() {
    use gangs_rules::the_gang::{estimate_strength, StrengthQuery};
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let estimate = |own: &str, community: &str, rng: &mut ChaCha8Rng| {
        let own = cards(own);
        let community = cards(community);
        let query = StrengthQuery {
            own: &own,
            community: &community,
            known_elsewhere: &[],
            others: 3,
            private_per_player: 2,
        };
        estimate_strength(&query, 4000, rng)
    };
    let aces = estimate("Ah As", "", &mut rng);
    let junk = estimate("7c 2d", "", &mut rng);
    assert!(aces.beats > 0.75, "{aces:?}");
    assert!(junk.beats < 0.45, "{junk:?}");
    assert!(aces.expected_position(3) > junk.expected_position(3));
    // The nuts on a complete board: a royal flush beats everyone.
    let royal = estimate("Ah Kh", "Qh Jh Th 2c 3d", &mut rng);
    assert_eq!(royal.beats, 1.0);
    // Playing the board: ties are counted.
    let board = estimate("2c 3d", "Ah Kh Qh Jh Th", &mut rng);
    assert!(board.ties > 0.99, "{board:?}");
}
