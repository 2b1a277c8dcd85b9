//! Combinations (§2 of the rules): which sets of cards form a play, of which kind, and the
//! strength key that orders plays of the same kind (§3). Comparison itself is in `compare.rs`.

use super::cards::{self, Mask, MULTICOLOR_ONE, PHOENIX_PAIR, PHOENIX_VALUE, VALUES};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Single,
    Pair,
    Triple,
    Straight,
    Flush,
    FullHouse,
    StraightFlush,
    Gang,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Single => "single",
            Kind::Pair => "pair",
            Kind::Triple => "triple",
            Kind::Straight => "straight",
            Kind::Flush => "flush",
            Kind::FullHouse => "full house",
            Kind::StraightFlush => "straight flush",
            Kind::Gang => "gang",
        }
    }

    /// Order of the five-card kinds: straight < flush < full house < straight flush.
    pub fn five_card_rank(self) -> u8 {
        match self {
            Kind::Straight => 0,
            Kind::Flush => 1,
            Kind::FullHouse => 2,
            Kind::StraightFlush => 3,
            _ => 0,
        }
    }
}

/// A valid play. `key` orders plays of the same kind (and, for gangs, of any size): a higher
/// key is strictly stronger, an equal key is equal strength.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Combination {
    pub kind: Kind,
    pub cards: Mask,
    /// Strength within the kind; see [`Combination::classify`] for its layout.
    pub key: u32,
    /// Sum of the five values, used by flushes under the `flush_by_sum` option.
    pub sum: u8,
}

/// Packs color codes, strongest first, into a number whose order is the lexicographic order
/// of the color lists (2 bits per color).
fn pack_colors_descending(cards: Mask) -> u32 {
    let mut codes = [0u8; 8];
    let mut n = 0;
    for id in cards::iter(cards) {
        codes[n] = cards::COLOR_CODES[id as usize];
        n += 1;
    }
    codes[..n].sort_unstable_by(|a, b| b.cmp(a));
    codes[..n].iter().fold(0, |acc, &c| acc * 4 + c as u32)
}

impl Combination {
    pub fn size(&self) -> u32 {
        self.cards.count_ones()
    }

    /// The combination these cards form, or `None` if they form none.
    ///
    /// Key layouts (higher is stronger):
    /// - single: value*8 + color;
    /// - pair, triple, gang: size<<24 | value<<16 | colors strongest first (Phoenix pair: value 11);
    /// - straight, straight flush: top value<<16 | colors from the top card down;
    /// - flush: the five values from the highest down (4 bits each) <<2 | flush color;
    /// - full house: triple value<<24 | triple colors<<16 | pair value<<8 | pair colors.
    pub fn classify(cards: Mask) -> Option<Combination> {
        let size = cards.count_ones();
        match size {
            1 => {
                let id = cards.trailing_zeros() as u8;
                Some(Combination {
                    kind: Kind::Single,
                    cards,
                    key: cards::single_strength(id),
                    sum: 0,
                })
            }
            2 if cards == PHOENIX_PAIR => Some(Self::same_value(Kind::Pair, cards, PHOENIX_VALUE)),
            2 | 3 | 4 | 6 | 7 => {
                let v = Self::common_number_value(cards)?;
                let kind = match size {
                    2 => Kind::Pair,
                    3 => Kind::Triple,
                    _ => Kind::Gang,
                };
                Some(Self::same_value(kind, cards, v))
            }
            5 => Self::classify_five(cards),
            _ => None,
        }
    }

    fn same_value(kind: Kind, cards: Mask, value: u8) -> Combination {
        let size = cards.count_ones();
        Combination {
            kind,
            cards,
            key: (size << 24) | ((value as u32) << 16) | pack_colors_descending(cards),
            sum: 0,
        }
    }

    /// The value shared by every card, if all are number cards (1..=10) of one value.
    fn common_number_value(cards: Mask) -> Option<u8> {
        let v = VALUES[cards.trailing_zeros() as usize];
        (v <= 10 && cards & !cards::VALUE_MASKS[v as usize] == 0).then_some(v)
    }

    fn classify_five(cards: Mask) -> Option<Combination> {
        if let Some(v) = Self::common_number_value(cards) {
            return Some(Self::same_value(Kind::Gang, cards, v));
        }
        let specials = cards & !cards::NUMBER_CARDS;
        if specials != 0 {
            // Only the Phoenix pair may join a five-card play, as the pair of a full house.
            if specials != PHOENIX_PAIR {
                return None;
            }
            let triple = cards & !PHOENIX_PAIR;
            let tv = Self::common_number_value(triple)?;
            return Some(Self::full_house(triple, tv, PHOENIX_PAIR, PHOENIX_VALUE));
        }
        // Per-value counts of the five number cards.
        let mut counts = [0u8; 11];
        let mut sum = 0u8;
        for id in cards::iter(cards) {
            let v = VALUES[id as usize];
            counts[v as usize] += 1;
            sum += v;
        }
        // The flush color: the color of the cards other than the multicolor 1, if only one.
        let others = cards & !(1u64 << MULTICOLOR_ONE);
        let suit = (0..3).find(|&s| others & !cards::SUIT_MASKS[s] == 0);
        let distinct = counts.iter().filter(|&&c| c > 0).count();
        let low = counts.iter().position(|&c| c > 0).unwrap_or(0) as u32;
        if distinct == 5
            && counts[low as usize + 4] == 1
            && counts[low as usize..=low as usize + 4]
                .iter()
                .all(|&c| c == 1)
        {
            let top = low + 4;
            // Colors from the top card down; in a straight flush the multicolor 1 takes the
            // color of the others, in a plain straight it counts as the strongest color.
            let mut colors = 0u32;
            for v in (low..=top).rev() {
                let id = (cards & cards::VALUE_MASKS[v as usize]).trailing_zeros() as usize;
                let code = match suit {
                    Some(s) => s as u32,
                    None => cards::COLOR_CODES[id] as u32,
                };
                colors = colors * 4 + code;
            }
            let kind = if suit.is_some() {
                Kind::StraightFlush
            } else {
                Kind::Straight
            };
            return Some(Combination {
                kind,
                cards,
                key: (top << 16) | colors,
                sum,
            });
        }
        let triple_value = counts.iter().position(|&c| c == 3);
        let pair_value = counts.iter().position(|&c| c == 2);
        if let (Some(tv), Some(pv)) = (triple_value, pair_value) {
            // A set that is both a full house and a flush (r1 r1 m1 r5 r5) is the full house,
            // the stronger reading.
            let triple = cards & cards::VALUE_MASKS[tv];
            let pair = cards & cards::VALUE_MASKS[pv];
            return Some(Self::full_house(triple, tv as u8, pair, pv as u8));
        }
        let suit = suit?;
        let mut values_desc = 0u32;
        for v in (1..=10).rev() {
            for _ in 0..counts[v] {
                values_desc = values_desc * 16 + v as u32;
            }
        }
        Some(Combination {
            kind: Kind::Flush,
            cards,
            key: (values_desc << 2) | suit as u32,
            sum,
        })
    }

    fn full_house(triple: Mask, tv: u8, pair: Mask, pv: u8) -> Combination {
        Combination {
            kind: Kind::FullHouse,
            cards: triple | pair,
            key: ((tv as u32) << 24)
                | (pack_colors_descending(triple) << 16)
                | ((pv as u32) << 8)
                | pack_colors_descending(pair),
            sum: 0,
        }
    }

    /// "the red 7 pair", "the straight r3 g4 y5 g6 g7": how error messages name a play.
    pub fn describe(&self) -> String {
        format!("{} {}", self.kind.name(), cards::words(self.cards))
    }
}
