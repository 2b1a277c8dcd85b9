//! The card model shared by the engine, the evaluator, the wire bridge and the bots: 52 suited
//! cards plus the Valet's suitless Jack (specialist 7), which counts as a Jack but belongs to no
//! suit, so it can never complete a flush.

use std::fmt;

/// The four suits; none is stronger than another (they never break ties).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    Clubs = 0,
    Diamonds = 1,
    Hearts = 2,
    Spades = 3,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];
    pub fn letter(self) -> char {
        ['c', 'd', 'h', 's'][self as usize]
    }
}

/// Rank index 0 = deuce .. 12 = ace (ace is also low in the wheel A-2-3-4-5).
pub const RANK_LETTERS: [char; 13] = [
    '2', '3', '4', '5', '6', '7', '8', '9', 'T', 'J', 'Q', 'K', 'A',
];
/// Rank index of the Jack.
pub const JACK: u8 = 9;

/// Rank index (0..=12) of a rank word: `2`..`9`, `T`/`10`, `J`, `Q`, `K`, `A`.
pub fn parse_rank(word: &str) -> Option<u8> {
    let w = word.trim().to_ascii_uppercase();
    if w == "10" {
        return Some(8);
    }
    let mut chars = w.chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    RANK_LETTERS.iter().position(|&r| r == c).map(|i| i as u8)
}

/// The face value of a rank (2..=14, ace 14), as players say it.
pub fn rank_face(rank: u8) -> u8 {
    rank + 2
}

/// One card. Ids 0..52 are `rank * 4 + suit`; id 52 is the suitless Jack.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card(u8);

impl Card {
    /// The Valet's special Jack of no suit.
    pub const SUITLESS_JACK: Card = Card(52);
    /// Number of distinct card ids (52 suited + the suitless Jack).
    pub const COUNT: usize = 53;

    pub fn new(rank: u8, suit: Suit) -> Card {
        assert!(rank < 13, "rank index out of range");
        Card(rank * 4 + suit as u8)
    }
    pub fn from_id(id: u32) -> Option<Card> {
        (id < Card::COUNT as u32).then_some(Card(id as u8))
    }
    pub fn id(self) -> u32 {
        self.0 as u32
    }
    /// The id as a byte: indexes a 256-entry table without a bounds check.
    #[inline(always)]
    pub fn byte(self) -> u8 {
        self.0
    }
    /// Rank index 0 (deuce) ..= 12 (ace).
    pub fn rank(self) -> u8 {
        if self == Card::SUITLESS_JACK {
            JACK
        } else {
            self.0 / 4
        }
    }
    /// `None` for the suitless Jack.
    pub fn suit(self) -> Option<Suit> {
        if self == Card::SUITLESS_JACK {
            None
        } else {
            Some(Suit::ALL[(self.0 % 4) as usize])
        }
    }
    /// The 52 suited cards in id order.
    pub fn deck() -> Vec<Card> {
        (0..52).map(Card).collect()
    }
    /// Parses `Ah`, `Td`, `10d`, `7c`, `J*` (the suitless Jack).
    pub fn parse(word: &str) -> Option<Card> {
        let w = word.trim();
        if w.eq_ignore_ascii_case("j*") {
            return Some(Card::SUITLESS_JACK);
        }
        if w.len() < 2 {
            return None;
        }
        let (rank, suit) = w.split_at(w.len() - 1);
        let rank = parse_rank(rank)?;
        let suit = match suit.to_ascii_lowercase().as_str() {
            "c" => Suit::Clubs,
            "d" => Suit::Diamonds,
            "h" => Suit::Hearts,
            "s" => Suit::Spades,
            _ => return None,
        };
        Some(Card::new(rank, suit))
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.suit() {
            None => write!(f, "J*"),
            Some(s) => write!(f, "{}{}", RANK_LETTERS[self.rank() as usize], s.letter()),
        }
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Parses a space-separated list of cards (`"Ah Kd J*"`); panics on a bad word. For tests and
/// presets written by hand.
pub fn cards(text: &str) -> Vec<Card> {
    text.split_whitespace()
        .map(|w| Card::parse(w).unwrap_or_else(|| panic!("bad card {w:?}")))
        .collect()
}
