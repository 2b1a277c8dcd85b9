//! The poker hand evaluator: the best 5-card hand among 0 to 8 cards (5 to 8 in play; fewer for
//! the Driver's pre-flop announcement), with the suitless Jack counted for pairs and straights but
//! never for a flush.
//!
//! Design: one pass over the cards builds four 13-bit suit masks and bit-sliced "rank seen at
//! least 1/2/3/4 times" masks (four ORs/ANDs per card, no branches, no tables); every category
//! then falls out of a few mask operations. Ace-low straights come from rotating the ace into
//! bit 0. The result packs the category in the top byte and the ranks that order hands of that
//! category below it, so comparing two [`HandValue`]s as integers orders the hands; identical
//! 5-card rank sets give equal values (suits never break ties).

use super::cards::Card;
use std::fmt;

/// Hand categories, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    HighCard = 0,
    Pair = 1,
    TwoPair = 2,
    ThreeOfAKind = 3,
    Straight = 4,
    Flush = 5,
    FullHouse = 6,
    FourOfAKind = 7,
    StraightFlush = 8,
}

impl Category {
    pub const ALL: [Category; 9] = [
        Category::HighCard,
        Category::Pair,
        Category::TwoPair,
        Category::ThreeOfAKind,
        Category::Straight,
        Category::Flush,
        Category::FullHouse,
        Category::FourOfAKind,
        Category::StraightFlush,
    ];
    pub fn from_index(i: u32) -> Option<Category> {
        Category::ALL.get(i as usize).copied()
    }
    /// The word used on the wire and the CLI (`guess flush`).
    pub fn word(self) -> &'static str {
        [
            "high-card",
            "pair",
            "two-pair",
            "three-of-a-kind",
            "straight",
            "flush",
            "full-house",
            "four-of-a-kind",
            "straight-flush",
        ][self as usize]
    }
    pub fn parse(word: &str) -> Option<Category> {
        let w = word.trim().to_ascii_lowercase().replace('_', "-");
        let alias = match w.as_str() {
            "high" | "highcard" => "high-card",
            "twopair" => "two-pair",
            "trips" | "three" | "set" => "three-of-a-kind",
            "full" | "fullhouse" => "full-house",
            "quads" | "four" => "four-of-a-kind",
            "straightflush" => "straight-flush",
            other => other,
        };
        Category::ALL.into_iter().find(|c| c.word() == alias)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// A hand's strength: larger is stronger, equal is a perfect tie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HandValue(pub u32);

impl HandValue {
    pub fn category(self) -> Category {
        Category::from_index(self.0 >> 24).expect("a valid category byte")
    }
}

const ALL_RANKS: u32 = 0x1fff;

#[inline(always)]
fn top_bit(mask: u32) -> u32 {
    31 - mask.leading_zeros()
}

/// The `n` highest set bits of `mask` (all of them if fewer).
#[inline(always)]
fn keep_top(mut mask: u32, n: u32) -> u32 {
    let mut kept = 0;
    for _ in 0..n {
        if mask == 0 {
            break;
        }
        let bit = 1 << top_bit(mask);
        kept |= bit;
        mask ^= bit;
    }
    kept
}

/// Rank index of the top card of the highest straight in `ranks`, if any (wheel: 3, the five).
#[inline(always)]
fn straight_top(ranks: u32) -> Option<u32> {
    // Shift ranks up by one and put the ace in bit 0 as well, so A-2-3-4-5 is five bits in a row.
    let m = (ranks << 1) | (ranks >> 12 & 1);
    let runs = m & (m >> 1) & (m >> 2) & (m >> 3) & (m >> 4);
    (runs != 0).then(|| top_bit(runs) + 3)
}

#[inline(always)]
fn pack(category: Category, low: u32) -> HandValue {
    HandValue(((category as u32) << 24) | low)
}

/// Evaluates the best 5-card hand among `cards` (up to 8; the suitless Jack allowed).
#[inline]
pub fn evaluate(cards: &[Card]) -> HandValue {
    let mut suits = [0u32; 4];
    let (mut seen1, mut seen2, mut seen3, mut seen4) = (0u32, 0u32, 0u32, 0u32);
    for &card in cards {
        let id = card.id();
        let bit = 1u32 << card.rank();
        seen4 |= seen3 & bit;
        seen3 |= seen2 & bit;
        seen2 |= seen1 & bit;
        seen1 |= bit;
        if id < 52 {
            suits[(id & 3) as usize] |= bit;
        }
    }
    evaluate_masks(suits, seen1, seen2, seen3, seen4)
}

#[inline(always)]
fn evaluate_masks(suits: [u32; 4], ranks: u32, pairs: u32, trips: u32, quads: u32) -> HandValue {
    let flush_suit = suits.into_iter().find(|m| m.count_ones() >= 5);
    if let Some(flush) = flush_suit {
        if let Some(top) = straight_top(flush) {
            return pack(Category::StraightFlush, top);
        }
    }
    if quads != 0 {
        let quad = top_bit(quads);
        let kicker = top_bit(ranks & !(1 << quad));
        return pack(Category::FourOfAKind, quad << 4 | kicker);
    }
    if trips != 0 {
        let trip = top_bit(trips);
        let rest = pairs & !(1 << trip);
        if rest != 0 {
            return pack(Category::FullHouse, trip << 4 | top_bit(rest));
        }
    }
    if let Some(flush) = flush_suit {
        return pack(Category::Flush, keep_top(flush, 5));
    }
    if let Some(top) = straight_top(ranks) {
        return pack(Category::Straight, top);
    }
    if trips != 0 {
        let trip = top_bit(trips);
        return pack(
            Category::ThreeOfAKind,
            trip << 16 | keep_top(ranks & !(1 << trip), 2),
        );
    }
    if pairs != 0 {
        let high = top_bit(pairs);
        let rest = pairs & !(1 << high);
        if rest != 0 {
            let low = top_bit(rest);
            let kicker_mask = ranks & !(1 << high) & !(1 << low);
            let kicker = if kicker_mask == 0 {
                0
            } else {
                top_bit(kicker_mask) + 1
            };
            return pack(Category::TwoPair, high << 8 | low << 4 | kicker);
        }
        return pack(
            Category::Pair,
            high << 16 | keep_top(ranks & !(1 << high), 3),
        );
    }
    pack(Category::HighCard, keep_top(ranks & ALL_RANKS, 5))
}
