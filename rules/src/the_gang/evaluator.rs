//! The poker hand evaluator: the best 5-card hand among 0 to 8 cards (5 to 8 in play; fewer for
//! the Driver's pre-flop announcement), with the suitless Jack counted for pairs and straights but
//! never for a flush.
//!
//! Design: the cards become four 13-bit suit masks (an [`EvalHand`]), from which bit-sliced
//! "rank seen at least 1/2/3/4 times" masks follow by ANDs and ORs (the suitless Jack adds one
//! Jack; no branches, no tables); every category then falls out of a few mask operations. Ace-low straights come from rotating the ace into
//! bit 0. The result packs the category in the top byte and the ranks that order hands of that
//! category below it, so comparing two [`HandValue`]s as integers orders the hands; identical
//! 5-card rank sets give equal values (suits never break ties).
//!
//! Fast path for the common case, exactly 7 suited cards (the bench and the bots' Monte Carlo):
//! each card has a precomputed 64-bit key whose low half is a rank key chosen so that the sums
//! of any 7 rank keys (each rank at most 4 times) are all distinct, and whose high half counts
//! suits in nibbles. One addition per card; a nibble test finds the flush (then a 8192-entry
//! table on the suit's rank mask); otherwise the rank-key sum goes through a hash-and-displace
//! perfect hash into a table of the 49,205 rank multisets. The tables (a few hundred KB) are
//! built once at first use (`OnceLock`), from the general evaluator above, so both paths agree
//! by construction and the brute-force test checks both.
//!
//! [`EvalHand`] is the same key kept as a value: a set of cards that carries its running key
//! and its suit masks, so cards shared by many hands (the board in a Monte Carlo sample) are
//! summed once and each player's private cards are added to them (`board.union(private)`).

use super::cards::Card;
use std::fmt;
use std::sync::OnceLock;

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
///
/// The fast path's tables are used only once something built them ([`Evaluator::new`]: the
/// bots' and benches' hot loops): the rules engine evaluates a handful of hands per game, and
/// building the tables (most of a second) on the first showdown put that second on the path of
/// every start whose log holds a finished The Gang game. Both paths give the same values.
#[inline]
pub fn evaluate(cards: &[Card]) -> HandValue {
    if let (Ok(seven), Some(tables)) = (<&[Card; 7]>::try_from(cards), FAST_TABLES.get()) {
        return evaluate7_with(tables, seven);
    }
    evaluate_general(cards)
}

/// Whether the fast path's tables were built in this process (they are built by the first
/// [`Evaluator`] or [`evaluate7`], never by [`evaluate`]).
pub fn fast_tables_built() -> bool {
    FAST_TABLES.get().is_some()
}

/// The general evaluator (any number of cards, the suitless Jack allowed).
pub fn evaluate_general(cards: &[Card]) -> HandValue {
    evaluate_set(EvalHand::of(cards))
}

/// Any number of cards, the suitless Jack allowed: the rank-count masks are derived from the
/// four suit masks (a rank is seen twice when two suits hold it, ...), then the Jack adds one.
fn evaluate_set(hand: EvalHand) -> HandValue {
    let suits = hand.suit_masks();
    let [a, b, c, d] = suits;
    let mut seen1 = a | b | c | d;
    let mut seen2 = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d);
    let mut seen3 = (a & b & c) | (a & b & d) | (a & c & d) | (b & c & d);
    let mut seen4 = a & b & c & d;
    if hand.key & SUITLESS_MARK != 0 {
        let jack = 1u32 << super::cards::JACK;
        if seen4 & jack != 0 {
            // Five Jacks (rules §5, a decision): four Jacks with a Jack as the fifth card, unless
            // a higher card beside them makes the better kicker. No straight flush can exist
            // then (at most 8 cards, five of them Jacks of five suits), so nothing beats this.
            let others = seen1 & !jack;
            let kicker = if others > jack {
                top_bit(others)
            } else {
                super::cards::JACK as u32
            };
            return pack(
                Category::FourOfAKind,
                (super::cards::JACK as u32) << 4 | kicker,
            );
        }
        seen4 |= seen3 & jack;
        seen3 |= seen2 & jack;
        seen2 |= seen1 & jack;
        seen1 |= jack;
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

// ---- the 7-card fast path -----------------------------------------------------------------------

/// Rank keys whose 7-card sums (each rank at most 4 times) are all distinct (SKPokerEval's
/// set; checked when the table is built).
const RANK_KEYS: [u32; 13] = [
    0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181,
];
/// Marks the suitless Jack's key so the fast path hands such hands to the general evaluator.
const SUITLESS_MARK: u64 = 1 << 63;
const BUCKET_SHIFT: u32 = 9;
/// Suit counts live in four nibbles from bit 32; starting each at 3 puts bit 3 of a nibble on
/// at the fifth card of that suit.
const SUIT_BIAS: u64 = 0x3333 << 32;
const FLUSH_BITS: u64 = 0x8888 << 32;
/// Every key also counts its cards here (the prepared path's size test); 6 bits, far more
/// than a hand holds.
const CARD_COUNT_SHIFT: u32 = 56;
const CARD_COUNT_BITS: u64 = 0x3f << CARD_COUNT_SHIFT;

/// Power-of-two sizes so that masked indices need no bounds checks in the hot path.
const OFFSETS_LEN: usize = 1 << 14;
const VALUES_LEN: usize = 1 << 17;

/// Each card's key (rank key + one in its suit's nibble; the suitless Jack's is the mark),
/// indexed by card id; ids past the suitless Jack are never built.
const CARD_KEYS: [u64; 256] = {
    let mut keys = [0u64; 256];
    let mut id = 0;
    while id < 52 {
        keys[id] =
            (1 << CARD_COUNT_SHIFT) | (1u64 << (32 + 4 * (id & 3))) | RANK_KEYS[id >> 2] as u64;
        id += 1;
    }
    keys[52] = (1 << CARD_COUNT_SHIFT) | SUITLESS_MARK;
    keys
};

struct FastTables {
    offsets: Box<[u32; OFFSETS_LEN]>,
    values: Box<[u32; VALUES_LEN]>,
    flush: Box<[u32; 8192]>,
}

fn enumerate_multisets(rank: usize, left: u32, counts: &mut [u32; 13], out: &mut Vec<[u32; 13]>) {
    if rank == 13 {
        if left == 0 {
            out.push(*counts);
        }
        return;
    }
    for c in 0..=left.min(4) {
        counts[rank] = c;
        enumerate_multisets(rank + 1, left - c, counts, out);
    }
    counts[rank] = 0;
}

fn build_fast_tables() -> FastTables {
    // Every multiset of 7 ranks, its key and its value (from a flush-free representative).
    let mut multisets = Vec::new();
    enumerate_multisets(0, 7, &mut [0; 13], &mut multisets);
    let mut entries: Vec<(u32, u32)> = multisets
        .iter()
        .map(|counts| {
            let mut hand = Vec::with_capacity(7);
            for (rank, &c) in counts.iter().enumerate() {
                for _ in 0..c {
                    // Round-robin suits: at most 2 per suit, never a flush, never a duplicate.
                    let suit = super::cards::Suit::ALL[hand.len() % 4];
                    hand.push(Card::new(rank as u8, suit));
                }
            }
            let key: u32 = counts.iter().zip(RANK_KEYS).map(|(&c, k)| c * k).sum();
            (key, evaluate_general(&hand).0)
        })
        .collect();
    entries.sort_unstable();
    assert!(
        entries.windows(2).all(|w| w[0].0 != w[1].0),
        "rank keys must give distinct sums"
    );

    // Hash and displace: keys grouped by `key >> BUCKET_SHIFT`; each bucket gets the first offset
    // where all its members land on free slots. Fullest buckets first.
    let max_key = entries.last().expect("entries").0;
    let bucket_count = (max_key >> BUCKET_SHIFT) as usize + 1;
    let mut buckets: Vec<Vec<(u32, u32)>> = vec![Vec::new(); bucket_count];
    for &(key, value) in &entries {
        buckets[(key >> BUCKET_SHIFT) as usize].push((key, value));
    }
    let mut order: Vec<usize> = (0..bucket_count).collect();
    order.sort_by_key(|&b| std::cmp::Reverse(buckets[b].len()));
    let mut offsets = vec![0u32; bucket_count];
    let mut used: Vec<bool> = Vec::new();
    let mut values: Vec<u32> = Vec::new();
    let low_mask = (1u32 << BUCKET_SHIFT) - 1;
    for b in order {
        let members = &buckets[b];
        if members.is_empty() {
            continue;
        }
        let mut offset = 0usize;
        loop {
            let fits = members.iter().all(|&(key, _)| {
                let slot = offset + (key & low_mask) as usize;
                slot >= used.len() || !used[slot]
            });
            if fits {
                break;
            }
            offset += 1;
        }
        for &(key, value) in members {
            let slot = offset + (key & low_mask) as usize;
            if slot >= used.len() {
                used.resize(slot + 1, false);
                values.resize(slot + 1, 0);
            }
            used[slot] = true;
            values[slot] = value;
        }
        offsets[b] = offset as u32;
    }

    let mut flush = Box::new([0u32; 8192]);
    for (mask, value) in flush.iter_mut().enumerate() {
        let mask = mask as u32;
        if mask.count_ones() >= 5 {
            *value = evaluate_masks([mask, 0, 0, 0], mask, 0, 0, 0).0;
        }
    }
    assert!(offsets.len() <= OFFSETS_LEN && values.len() <= VALUES_LEN);
    let mut offsets_table = Box::new([0u32; OFFSETS_LEN]);
    offsets_table[..offsets.len()].copy_from_slice(&offsets);
    let mut values_table = Box::new([0u32; VALUES_LEN]);
    values_table[..values.len()].copy_from_slice(&values);
    FastTables {
        offsets: offsets_table,
        values: values_table,
        flush,
    }
}

static FAST_TABLES: OnceLock<FastTables> = OnceLock::new();

fn fast_tables() -> &'static FastTables {
    FAST_TABLES.get_or_init(build_fast_tables)
}

/// Size of the fast path's tables in bytes (for the docs and the bench).
pub fn fast_table_bytes() -> usize {
    let t = fast_tables();
    CARD_KEYS.len() * 8 + (t.offsets.len() + t.values.len() + t.flush.len()) * 4
}

/// Exactly 7 cards: the table-driven fast path (the suitless Jack falls back to the general
/// evaluator).
#[inline]
pub fn evaluate7(cards: &[Card; 7]) -> HandValue {
    evaluate7_with(fast_tables(), cards)
}

/// A handle on the fast path's tables, for hot loops (Monte Carlo, benches): it skips the
/// one-time-initialisation check that [`evaluate`] makes on every call.
#[derive(Clone, Copy)]
pub struct Evaluator {
    tables: &'static FastTables,
}

impl Default for Evaluator {
    fn default() -> Self {
        Evaluator::new()
    }
}

impl Evaluator {
    pub fn new() -> Evaluator {
        Evaluator {
            tables: fast_tables(),
        }
    }
    /// Same result as [`evaluate`].
    #[inline]
    pub fn evaluate(&self, cards: &[Card]) -> HandValue {
        match <&[Card; 7]>::try_from(cards) {
            Ok(seven) => evaluate7_with(self.tables, seven),
            Err(_) => evaluate_general(cards),
        }
    }
    #[inline]
    pub fn evaluate7(&self, cards: &[Card; 7]) -> HandValue {
        evaluate7_with(self.tables, cards)
    }
}

#[inline(always)]
fn evaluate7_with(t: &FastTables, cards: &[Card; 7]) -> HandValue {
    // Each suit's nibble starts at 3, so it reaches 8 (bit 3 set) exactly at 5 cards of the suit.
    let mut sum = SUIT_BIAS;
    for card in cards {
        sum += CARD_KEYS[card.byte() as usize];
    }
    // One rare branch for both exceptions: a flush (about 3% of hands) or the suitless Jack.
    if sum & (FLUSH_BITS | SUITLESS_MARK) != 0 {
        return off_fast_path(t, EvalHand::of(cards));
    }
    rank_multiset_value(t, sum as u32)
}

/// The value of a flush-free 7-card hand from its rank-key sum (the perfect hash).
#[inline(always)]
fn rank_multiset_value(t: &FastTables, key: u32) -> HandValue {
    let bucket = (key >> BUCKET_SHIFT) as usize & (OFFSETS_LEN - 1);
    let slot = t.offsets[bucket] + (key & ((1 << BUCKET_SHIFT) - 1));
    HandValue(t.values[slot as usize & (VALUES_LEN - 1)])
}

// ---- prepared hands -----------------------------------------------------------------------------

/// A set of cards prepared for evaluation: its fast-path key and its cards by suit. Build the
/// cards several hands share once, then add each hand's own cards; [`Evaluator::evaluate_hand`]
/// gives the same value as [`evaluate`] on the same cards. The sets joined must be disjoint
/// (one deck, as in play): a card counted twice is not a hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvalHand {
    /// Sum of the cards' keys (rank keys low, suit counts from bit 32, the card count from bit
    /// 56, the suitless mark on top).
    key: u64,
    /// Bit `16 * suit + rank` per suited card.
    suited: u64,
}

impl EvalHand {
    pub const EMPTY: EvalHand = EvalHand { key: 0, suited: 0 };

    pub fn of(cards: &[Card]) -> EvalHand {
        cards
            .iter()
            .fold(EvalHand::EMPTY, |hand, &card| hand.with(card))
    }
    #[inline(always)]
    pub fn with(self, card: Card) -> EvalHand {
        let id = card.byte();
        let suited = if id < 52 {
            1u64 << (16 * (id & 3) + (id >> 2))
        } else {
            0
        };
        debug_assert!(self.suited & suited == 0, "a card added twice");
        EvalHand {
            key: self.key + CARD_KEYS[id as usize],
            suited: self.suited | suited,
        }
    }
    /// The cards of both (disjoint) sets.
    #[inline(always)]
    pub fn union(self, other: EvalHand) -> EvalHand {
        debug_assert!(self.suited & other.suited == 0, "overlapping hands");
        debug_assert!(
            self.key & other.key & SUITLESS_MARK == 0,
            "two suitless Jacks"
        );
        EvalHand {
            key: self.key + other.key,
            suited: self.suited | other.suited,
        }
    }
    pub fn len(self) -> usize {
        ((self.key & CARD_COUNT_BITS) >> CARD_COUNT_SHIFT) as usize
    }
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }
    fn suit_masks(self) -> [u32; 4] {
        [0, 1, 2, 3].map(|suit| (self.suited >> (16 * suit)) as u32 & ALL_RANKS)
    }
}

impl Evaluator {
    /// Same result as [`evaluate`] on the hand's cards.
    #[inline]
    pub fn evaluate_hand(&self, hand: EvalHand) -> HandValue {
        // One test for the common case: exactly 7 cards, no flush, no suitless Jack.
        let sum = hand.key + SUIT_BIAS;
        if sum & (CARD_COUNT_BITS | FLUSH_BITS | SUITLESS_MARK) == 7 << CARD_COUNT_SHIFT {
            return rank_multiset_value(self.tables, sum as u32);
        }
        off_fast_path(self.tables, hand)
    }
}

/// Off the fast path, for slices and prepared hands alike: a 7-card flush from the flush table,
/// anything else (another size, the suitless Jack) by the general evaluator.
#[cold]
#[inline(never)]
fn off_fast_path(t: &FastTables, hand: EvalHand) -> HandValue {
    let sum = hand.key + SUIT_BIAS;
    if hand.len() == 7 && sum & SUITLESS_MARK == 0 {
        // A 7-card flush: no full house or four of a kind is possible beside it.
        let suit = ((sum & FLUSH_BITS) >> 32).trailing_zeros() / 4;
        return HandValue(t.flush[hand.suit_masks()[suit as usize] as usize & 8191]);
    }
    evaluate_set(hand)
}
