//! The 64 cards: ids, values, colors, words (`g5`, `m1`, `gp`, `dr`) and the bit masks the
//! engine computes with.
//!
//! Id scheme (also documented in `proto/gang_of_four.proto`): ids follow the single-card
//! order, so a higher id is never a weaker single and the strongest card of a hand is its
//! highest set bit.
//! - 0..=5: the colored 1s, `g1 g1 y1 y1 r1 r1`; 6: the multicolor 1 `m1`;
//! - 7 + (value-2)*6 + color*2 + copy for values 2..=10 (color green 0, yellow 1, red 2;
//!   copy 0 or 1): 7..=60;
//! - 61: green Phoenix `gp`, 62: yellow Phoenix `yp`, 63: Dragon `dr`.
//!
//! The two copies of a colored card always sit at adjacent ids (lower copy first); the legal
//! play generator relies on it to list each distinct play once.

/// A set of cards: bit `id` is set when card `id` is in the set.
pub type Mask = u64;

/// A card id, 0..=63.
pub type CardId = u8;

pub const CARD_COUNT: usize = 64;
pub const ALL_CARDS: Mask = u64::MAX;
pub const MULTICOLOR_ONE: CardId = 6;
pub const GREEN_PHOENIX: CardId = 61;
pub const YELLOW_PHOENIX: CardId = 62;
pub const DRAGON: CardId = 63;
/// Value given to the Phoenixes (above 10) so that one number orders singles and pairs.
pub const PHOENIX_VALUE: u8 = 11;
pub const DRAGON_VALUE: u8 = 12;
pub const PHOENIX_PAIR: Mask = (1 << GREEN_PHOENIX) | (1 << YELLOW_PHOENIX);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Color {
    Green = 0,
    Yellow = 1,
    Red = 2,
    /// Only the multicolor 1.
    Multicolor = 3,
    /// Only the Dragon.
    Colorless = 4,
}

impl Color {
    /// The three colors of number cards (and of flushes).
    pub const SUITS: [Color; 3] = [Color::Green, Color::Yellow, Color::Red];

    pub fn letter(self) -> char {
        match self {
            Color::Green => 'g',
            Color::Yellow => 'y',
            Color::Red => 'r',
            Color::Multicolor => 'm',
            Color::Colorless => 'd',
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Color::Green => "green",
            Color::Yellow => "yellow",
            Color::Red => "red",
            Color::Multicolor => "multicolor",
            Color::Colorless => "colorless",
        }
    }
}

const fn value_of(id: u8) -> u8 {
    match id {
        0..=6 => 1,
        7..=60 => 2 + (id - 7) / 6,
        61 | 62 => PHOENIX_VALUE,
        _ => DRAGON_VALUE,
    }
}

const fn color_code_of(id: u8) -> u8 {
    match id {
        0..=5 => id / 2,
        6 => 3,
        7..=60 => ((id - 7) % 6) / 2,
        61 => 0,
        62 => 1,
        _ => 4,
    }
}

const fn build_values() -> [u8; 64] {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = value_of(i as u8);
        i += 1;
    }
    t
}

const fn build_color_codes() -> [u8; 64] {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = color_code_of(i as u8);
        i += 1;
    }
    t
}

const fn build_value_masks() -> [Mask; 13] {
    let mut t = [0u64; 13];
    let mut i = 0;
    while i < 64 {
        t[value_of(i as u8) as usize] |= 1u64 << i;
        i += 1;
    }
    t
}

const fn build_suit_masks() -> [Mask; 3] {
    let mut t = [0u64; 3];
    let mut i = 0;
    while i < 64 {
        let v = value_of(i as u8);
        let c = color_code_of(i as u8);
        if v <= 10 && c < 3 {
            t[c as usize] |= 1u64 << i;
        }
        i += 1;
    }
    t
}

const fn build_second_copies() -> Mask {
    let mut m = 0u64;
    let mut i = 0u8;
    while i < 61 {
        if i != MULTICOLOR_ONE && (i < 6 && i % 2 == 1 || i >= 7 && (i - 7) % 2 == 1) {
            m |= 1u64 << i;
        }
        i += 1;
    }
    m
}

/// Value of each card: 1..=10, 11 for a Phoenix, 12 for the Dragon.
pub const VALUES: [u8; 64] = build_values();
/// Color of each card as a small number: green 0, yellow 1, red 2, multicolor 3, Dragon 4.
/// Used as the color rank in comparisons (the multicolor 1 is the strongest color).
pub const COLOR_CODES: [u8; 64] = build_color_codes();
/// `VALUE_MASKS[v]`: every card of value `v` (index 11: the Phoenixes, 12: the Dragon).
pub const VALUE_MASKS: [Mask; 13] = build_value_masks();
/// The number cards (values 1..=10) of each of the three colors; the multicolor 1 is in none.
pub const SUIT_MASKS: [Mask; 3] = build_suit_masks();
/// The higher-id copy of every colored number card (its twin is at id - 1).
pub const SECOND_COPIES: Mask = build_second_copies();
/// Number cards only (values 1..=10, multicolor 1 included).
pub const NUMBER_CARDS: Mask = (1u64 << 61) - 1;

pub fn value(id: CardId) -> u8 {
    VALUES[id as usize]
}

pub fn color(id: CardId) -> Color {
    match COLOR_CODES[id as usize] {
        0 => Color::Green,
        1 => Color::Yellow,
        2 => Color::Red,
        3 => Color::Multicolor,
        _ => Color::Colorless,
    }
}

/// Strength of a single card; equal for the two copies of a card.
pub fn single_strength(id: CardId) -> u32 {
    VALUES[id as usize] as u32 * 8 + COLOR_CODES[id as usize] as u32
}

/// The word of a card: `g5 y10 r1 m1 gp yp dr`.
pub fn word(id: CardId) -> &'static str {
    WORDS[id as usize]
}

/// Every card's word by id: a view names every card of a hand, so words are looked up, never
/// formatted (a test checks the table against the colors and values).
const WORDS: [&str; CARD_COUNT] = [
    "g1", "g1", "y1", "y1", "r1", "r1", "m1", "g2", "g2", "y2", "y2", "r2", "r2", "g3", "g3", "y3",
    "y3", "r3", "r3", "g4", "g4", "y4", "y4", "r4", "r4", "g5", "g5", "y5", "y5", "r5", "r5", "g6",
    "g6", "y6", "y6", "r6", "r6", "g7", "g7", "y7", "y7", "r7", "r7", "g8", "g8", "y8", "y8", "r8",
    "r8", "g9", "g9", "y9", "y9", "r9", "r9", "g10", "g10", "y10", "y10", "r10", "r10", "gp", "yp",
    "dr",
];

/// Words of a set of cards, in id order, separated by spaces.
pub fn words(cards: Mask) -> String {
    let mut out = String::new();
    for id in iter(cards) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word(id));
    }
    out
}

/// The ids carrying `word` (case-insensitive): two for a colored number card, one otherwise.
pub fn ids_of_word(word: &str) -> Option<Mask> {
    let w = word.trim().to_ascii_lowercase();
    match w.as_str() {
        "gp" => return Some(1 << GREEN_PHOENIX),
        "yp" => return Some(1 << YELLOW_PHOENIX),
        "dr" => return Some(1 << DRAGON),
        "m1" => return Some(1 << MULTICOLOR_ONE),
        _ => {}
    }
    let mut chars = w.chars();
    let suit = match chars.next()? {
        'g' => 0,
        'y' => 1,
        'r' => 2,
        _ => return None,
    };
    let v: u8 = chars.as_str().parse().ok()?;
    if !(1..=10).contains(&v) {
        return None;
    }
    Some(VALUE_MASKS[v as usize] & SUIT_MASKS[suit])
}

/// Iterates the ids of a mask in increasing order.
pub fn iter(mut cards: Mask) -> impl Iterator<Item = CardId> {
    std::iter::from_fn(move || {
        if cards == 0 {
            None
        } else {
            let id = cards.trailing_zeros() as CardId;
            cards &= cards - 1;
            Some(id)
        }
    })
}

pub fn count(cards: Mask) -> u32 {
    cards.count_ones()
}

/// The strongest single card of a non-empty set (its highest id).
pub fn strongest(cards: Mask) -> Option<CardId> {
    if cards == 0 {
        None
    } else {
        Some(63 - cards.leading_zeros() as CardId)
    }
}

/// Keeps one card per distinct (value, color) among `cards`, the lower id of a held twin pair.
pub fn distinct_faces(cards: Mask) -> Mask {
    cards & !((cards << 1) & cards & SECOND_COPIES)
}

/// True when `subset` of `hand` takes, for every card it holds, the lower-id copy first: among
/// subsets with the same values and colors exactly one passes, so plays are listed once.
pub fn is_canonical(subset: Mask, hand: Mask) -> bool {
    let twins_held = hand & (hand << 1) & SECOND_COPIES;
    ((subset & twins_held) >> 1) & !subset == 0
}
