//! Legal-play generation without allocation: every distinct combination a hand can form
//! (two plays with the same values and colors are listed once, with the lower card ids),
//! optionally only those that beat the table. Results go into a caller-owned [`PlayList`].

use super::cards::{self, Mask, PHOENIX_PAIR, VALUE_MASKS};
use super::combination::{Combination, Kind};
use super::compare::beats;
use super::Options;

/// More than any hand of 17 cards can form (at most C(17,5) five-card sets plus the rest).
pub const MAX_PLAYS: usize = 6400;

/// A list of plays (card masks), reused between calls: once grown, no allocation.
///
/// Why a `Vec` and not a fixed array of `MAX_PLAYS`: a new list was 51 KB to zero, and the
/// server makes one for every legal-action query of an update (3% of its CPU under load, in
/// `memset`), while a hand forms a few dozen plays at most in practice.
#[derive(Default)]
pub struct PlayList {
    plays: Vec<Mask>,
    /// Whether passing is also allowed.
    pub can_pass: bool,
}

impl PlayList {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn clear(&mut self) {
        self.plays.clear();
        self.can_pass = false;
    }

    pub fn push(&mut self, play: Mask) {
        debug_assert!(
            self.plays.len() < MAX_PLAYS,
            "more plays than a hand can form"
        );
        self.plays.push(play);
    }

    pub fn len(&self) -> usize {
        self.plays.len()
    }

    pub fn is_empty(&self) -> bool {
        self.plays.is_empty()
    }

    pub fn as_slice(&self) -> &[Mask] {
        &self.plays
    }

    /// Keeps only the plays for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(Mask) -> bool) {
        self.plays.retain(|&play| keep(play));
    }

    pub fn contains(&self, play: Mask) -> bool {
        self.as_slice().contains(&play)
    }
}

/// Which plays to generate.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    /// Every combination (leading a trick).
    Any,
    /// Only combinations that beat this one.
    Beat(&'a Combination),
}

/// Appends to `out` every distinct combination of `hand` allowed by `target`.
pub fn generate(hand: Mask, target: Target, options: &Options, out: &mut PlayList) {
    // Which kinds can beat the target: its own size, plus gangs (which beat everything).
    let (want_single, want_pair, want_triple, want_five) = match target {
        Target::Any => (true, true, true, true),
        Target::Beat(t) if t.kind == Kind::Gang => (false, false, false, false),
        Target::Beat(t) => {
            let n = t.size();
            (n == 1, n == 2, n == 3, n == 5)
        }
    };
    let push = |play: Mask, out: &mut PlayList| {
        if let Target::Beat(t) = target {
            match Combination::classify(play) {
                Some(c) if beats(&c, t, options) => out.push(play),
                _ => {}
            }
        } else {
            out.push(play);
        }
    };
    let faces = cards::distinct_faces(hand);
    if want_single {
        for id in cards::iter(faces) {
            push(1 << id, out);
        }
    }
    // Pairs, triples and gangs: canonical subsets of each value's cards.
    for &value_cards in &VALUE_MASKS[1..=10] {
        let held = hand & value_cards;
        if held.count_ones() < 2 {
            continue;
        }
        let mut sub = held;
        while sub != 0 {
            let wanted = match sub.count_ones() {
                2 => want_pair,
                3 => want_triple,
                1 => false,
                _ => true,
            };
            if wanted && cards::is_canonical(sub, hand) {
                push(sub, out);
            }
            sub = (sub - 1) & held;
        }
    }
    if want_pair && hand & PHOENIX_PAIR == PHOENIX_PAIR {
        push(PHOENIX_PAIR, out);
    }
    if want_five {
        five_card_plays(hand, faces, &mut |m| push(m, out));
    }
}

/// Straights, straight flushes, flushes and full houses (gangs of five are listed with the
/// other gangs).
fn five_card_plays(hand: Mask, faces: Mask, emit: &mut impl FnMut(Mask)) {
    // Straights and straight flushes: one distinct face per value, tops 5..=10 (no wrap).
    let per_value: [Mask; 11] =
        std::array::from_fn(|v| if v == 0 { 0 } else { faces & VALUE_MASKS[v] });
    for top in 5..=10 {
        let vals = &per_value[top - 4..=top];
        if vals.contains(&0) {
            continue;
        }
        for a in cards::iter(vals[0]) {
            for b in cards::iter(vals[1]) {
                for c in cards::iter(vals[2]) {
                    for d in cards::iter(vals[3]) {
                        for e in cards::iter(vals[4]) {
                            emit((1 << a) | (1 << b) | (1 << c) | (1 << d) | (1 << e));
                        }
                    }
                }
            }
        }
    }
    // Flushes: five cards of one color (the multicolor 1 may join any color); the ones that
    // are straight flushes or full houses were listed above or below.
    for suit in cards::SUIT_MASKS {
        let pool = hand & (suit | (1 << cards::MULTICOLOR_ONE));
        if pool.count_ones() < 5 {
            continue;
        }
        let mut ids = [0u8; 24];
        let mut n = 0;
        for id in cards::iter(pool) {
            ids[n] = id;
            n += 1;
        }
        for i0 in 0..n {
            for i1 in i0 + 1..n {
                for i2 in i1 + 1..n {
                    for i3 in i2 + 1..n {
                        for i4 in i3 + 1..n {
                            let m = (1u64 << ids[i0])
                                | (1u64 << ids[i1])
                                | (1u64 << ids[i2])
                                | (1u64 << ids[i3])
                                | (1u64 << ids[i4]);
                            // Skip sets of another kind (straight flush, full house r1 r1 m1 r5 r5).
                            if cards::is_canonical(m, hand)
                                && matches!(Combination::classify(m), Some(c) if c.kind == Kind::Flush)
                            {
                                emit(m);
                            }
                        }
                    }
                }
            }
        }
    }
    // Full houses: a canonical triple and a canonical pair of another value (or the Phoenixes).
    let mut pairs = [0u64; 128];
    let mut pair_count = 0;
    for &value_cards in &VALUE_MASKS[1..=10] {
        let held = hand & value_cards;
        if held.count_ones() < 2 {
            continue;
        }
        let mut sub = held;
        while sub != 0 {
            if sub.count_ones() == 2 && cards::is_canonical(sub, hand) {
                pairs[pair_count] = sub;
                pair_count += 1;
            }
            sub = (sub - 1) & held;
        }
    }
    if hand & PHOENIX_PAIR == PHOENIX_PAIR {
        pairs[pair_count] = PHOENIX_PAIR;
        pair_count += 1;
    }
    for &value_cards in &VALUE_MASKS[1..=10] {
        let held = hand & value_cards;
        if held.count_ones() < 3 {
            continue;
        }
        let mut sub = held;
        while sub != 0 {
            if sub.count_ones() == 3 && cards::is_canonical(sub, hand) {
                for &pair in &pairs[..pair_count] {
                    if pair & value_cards == 0 {
                        emit(sub | pair);
                    }
                }
            }
            sub = (sub - 1) & held;
        }
    }
}
