//! Hand planning: splits a hand into combinations and prices the result.
//!
//! A hand's cost is the smallest sum, over a partition of the hand into combinations, of each
//! combination's cost: about one for a weak combination (it must be led to get rid of it,
//! and leading needs the trick), near zero for a strong one (it wins a trick by itself) and
//! below zero for a gang (a bomb that wins control whenever needed). So the cost roughly
//! counts the tricks the hand still needs, and a play is good when it lowers it a lot.
//!
//! The search covers the lowest card first (exact cover): every combination holding it,
//! then the rest, memoized by mask. Only a few representatives of the many equivalent
//! straights, flushes and full houses are tried, which keeps it to a few thousand nodes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use gangs_rules::gang_of_four::cards::{
    self, Mask, MULTICOLOR_ONE, PHOENIX_PAIR, SUIT_MASKS, VALUE_MASKS,
};
use gangs_rules::gang_of_four::{Combination, Kind};

/// How much a combination is worth as a trick winner, 0 (anyone beats it) to 1 (nobody can).
pub fn strength(c: &Combination) -> f32 {
    let value = |m: Mask| cards::value(m.trailing_zeros() as u8) as f32;
    match c.kind {
        Kind::Single => {
            let id = c.cards.trailing_zeros() as u8;
            match id {
                cards::DRAGON => 1.0,
                cards::YELLOW_PHOENIX => 0.9,
                cards::GREEN_PHOENIX => 0.85,
                _ => {
                    let v = cards::value(id) as f32;
                    let color = cards::COLOR_CODES[id as usize] as f32;
                    0.7 * ((v - 1.0) + 0.25 * color) / 9.75
                }
            }
        }
        Kind::Pair if c.cards == PHOENIX_PAIR => 1.0,
        Kind::Pair => 0.15 + 0.75 * (value(c.cards) - 1.0) / 9.0,
        Kind::Triple => 0.4 + 0.55 * (value(c.cards) - 1.0) / 9.0,
        Kind::Straight => 0.45 + 0.2 * (((c.key >> 16) as f32) - 5.0) / 5.0,
        Kind::Flush => 0.65 + 0.15 * (((c.key >> 18) & 0xf) as f32 - 6.0).max(0.0) / 4.0,
        Kind::FullHouse => 0.75 + 0.2 * (((c.key >> 24) as f32) - 1.0) / 9.0,
        Kind::StraightFlush => 0.97,
        Kind::Gang => 1.0,
    }
}

/// The cost of one combination in a plan (see the module header).
pub fn combo_cost(c: &Combination) -> f32 {
    match c.kind {
        Kind::Gang => -0.5 - 0.2 * (c.size() as f32 - 4.0),
        _ => 1.0 - strength(c),
    }
}

/// A multiply-shift hasher for card masks: the memo is hot and SipHash would dominate.
#[derive(Default)]
pub struct MaskHasher(u64);

impl Hasher for MaskHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        self.0 ^= self.0 >> 32;
    }
}

type Memo = HashMap<Mask, (f32, Mask), BuildHasherDefault<MaskHasher>>;

/// Memoized hand costs. The cost of a mask never depends on anything else, so one planner can
/// serve a whole game; it clears itself when the memo grows large.
#[derive(Default)]
pub struct Planner {
    memo: Memo,
    scratch: Vec<Vec<Mask>>,
}

/// Memo entries kept before starting afresh (a few MB).
const MEMO_LIMIT: usize = 400_000;

impl Planner {
    pub fn new() -> Self {
        Self::default()
    }

    /// The cost of the best partition of `hand`.
    pub fn cost(&mut self, hand: Mask) -> f32 {
        if self.memo.len() > MEMO_LIMIT {
            self.memo.clear();
        }
        self.solve(hand, 0)
    }

    /// The best partition of `hand`, strongest combination last.
    pub fn partition(&mut self, hand: Mask) -> Vec<Combination> {
        self.cost(hand);
        let mut out = Vec::new();
        let mut rest = hand;
        while rest != 0 {
            let best = match self.memo.get(&rest) {
                Some(&(_, best)) => best,
                None => {
                    self.solve(rest, 0);
                    self.memo[&rest].1
                }
            };
            let combo = Combination::classify(best).expect("the planner stores combinations");
            out.push(combo);
            rest &= !best;
        }
        out.sort_by(|a, b| strength(a).total_cmp(&strength(b)));
        out
    }

    fn solve(&mut self, hand: Mask, depth: usize) -> f32 {
        if hand == 0 {
            return 0.0;
        }
        if let Some(&(cost, _)) = self.memo.get(&hand) {
            return cost;
        }
        if self.scratch.len() <= depth {
            self.scratch.push(Vec::with_capacity(64));
        }
        let mut combos = std::mem::take(&mut self.scratch[depth]);
        combos.clear();
        combos_with_lowest(hand, &mut combos);
        let mut best = (f32::INFINITY, 0);
        for &combo in &combos {
            let Some(c) = Combination::classify(combo) else {
                continue;
            };
            let cost = combo_cost(&c) + self.solve(hand & !combo, depth + 1);
            if cost < best.0 {
                best = (cost, combo);
            }
        }
        self.scratch[depth] = combos;
        self.memo.insert(hand, best);
        best.0
    }
}

/// The `n` lowest cards of `cards`.
fn lowest(mut cards: Mask, n: u32) -> Mask {
    let mut out = 0;
    for _ in 0..n {
        if cards == 0 {
            break;
        }
        let low = cards & cards.wrapping_neg();
        out |= low;
        cards &= !low;
    }
    out
}

/// Combinations of `hand` that hold its lowest card: all singles, pairs, triples and the gang
/// of its value, and representatives of the five-card plays (one straight per window and
/// color choice of the lowest faces, straight flushes, flushes among the lowest cards of its
/// color, full houses with the lowest pair or triple of each other value).
pub fn combos_with_lowest(hand: Mask, out: &mut Vec<Mask>) {
    let low_id = hand.trailing_zeros() as u8;
    let low = 1u64 << low_id;
    out.push(low);
    let v = cards::value(low_id) as usize;
    if v > 10 {
        if low_id == cards::GREEN_PHOENIX && hand & PHOENIX_PAIR == PHOENIX_PAIR {
            out.push(PHOENIX_PAIR);
        }
        return;
    }
    let same = hand & VALUE_MASKS[v];
    let others = same & !low;
    // Pairs and triples holding the lowest card.
    let mut sub = others;
    while sub != 0 {
        let n = sub.count_ones();
        if n <= 2 && cards::is_canonical(sub | low, hand) {
            out.push(sub | low);
        }
        sub = (sub - 1) & others;
    }
    if same.count_ones() >= 4 {
        out.push(same);
    }
    // Straights through v: the lowest face of every other value, and straight flushes.
    let faces = cards::distinct_faces(hand);
    for top in v.max(5)..=(v + 4).min(10) {
        let mut plain = low;
        let mut ok = true;
        for (w, &value_cards) in VALUE_MASKS.iter().enumerate().take(top + 1).skip(top - 4) {
            if w == v {
                continue;
            }
            let f = faces & value_cards;
            if f == 0 {
                ok = false;
                break;
            }
            plain |= f & f.wrapping_neg();
        }
        if !ok {
            continue;
        }
        out.push(plain);
        for suit in SUIT_MASKS {
            let suited = suit | (1 << MULTICOLOR_ONE);
            if low & suited == 0 {
                continue;
            }
            let mut flush = low;
            for (w, &value_cards) in VALUE_MASKS.iter().enumerate().take(top + 1).skip(top - 4) {
                if w == v {
                    continue;
                }
                let f = faces & value_cards & suit;
                if f == 0 {
                    flush = 0;
                    break;
                }
                flush |= f & f.wrapping_neg();
            }
            if flush != 0 && flush != plain {
                out.push(flush);
            }
        }
    }
    // Flushes: the lowest card with four of the six lowest other cards of its color.
    for suit in SUIT_MASKS {
        let suited = suit | (1 << MULTICOLOR_ONE);
        if low & suited == 0 {
            continue;
        }
        let pool = lowest(hand & suited & !low, 6);
        if pool.count_ones() < 4 {
            continue;
        }
        let ids: Vec<u8> = cards::iter(pool).collect();
        let n = ids.len();
        for a in 0..n {
            for b in a + 1..n {
                for c in b + 1..n {
                    for d in c + 1..n {
                        let m = low | 1 << ids[a] | 1 << ids[b] | 1 << ids[c] | 1 << ids[d];
                        if cards::is_canonical(m, hand)
                            && matches!(Combination::classify(m), Some(x) if x.kind == Kind::Flush)
                        {
                            out.push(m);
                        }
                    }
                }
            }
        }
    }
    // Full houses: the lowest card in the triple or in the pair.
    for (w, &value_cards) in VALUE_MASKS.iter().enumerate().take(11).skip(1) {
        if w == v {
            continue;
        }
        let held = hand & value_cards;
        if others.count_ones() >= 2 && held.count_ones() >= 2 {
            let triple = low | lowest(others, 2);
            out.push(triple | lowest(held, 2));
        }
        if others.count_ones() >= 1 && held.count_ones() >= 3 {
            let pair = low | lowest(others, 1);
            out.push(pair | lowest(held, 3));
        }
    }
    if others.count_ones() >= 2 && hand & PHOENIX_PAIR == PHOENIX_PAIR {
        out.push(low | lowest(others, 2) | PHOENIX_PAIR);
    }
    out.sort_unstable();
    out.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hand(words: &str) -> Mask {
        let mut m = 0u64;
        for w in words.split_whitespace() {
            let ids = cards::ids_of_word(w).unwrap();
            let free = ids & !m;
            m |= free & free.wrapping_neg();
        }
        m
    }

    #[test]
    fn keeps_a_gang_together() {
        let h = hand("g7 y7 r7 r7 g2 y9");
        let mut p = Planner::new();
        let parts = p.partition(h);
        assert!(parts
            .iter()
            .any(|c| c.kind == Kind::Gang && c.cards == hand("g7 y7 r7 r7")));
    }

    #[test]
    fn finds_a_straight() {
        let h = hand("g2 y3 r4 g5 y6 dr");
        let mut p = Planner::new();
        let parts = p.partition(h);
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert!(parts.iter().any(|c| c.kind == Kind::Straight));
    }

    #[test]
    fn full_hand_plans_quickly() {
        let h = hand("g1 y1 m1 g2 y3 r4 r4 g5 y6 g7 g8 g9 y9 r10 gp dr");
        let mut p = Planner::new();
        let parts = p.partition(h);
        let total: u32 = parts.iter().map(|c| c.size()).sum();
        assert_eq!(total, 16);
        assert!(parts.len() <= 8, "{parts:?}");
    }
}
