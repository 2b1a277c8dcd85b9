//! What the crew computes about hands with the rules library: Monte Carlo strength before the
//! river, the exact public scale on the river, the choice of a card to keep or drop, and the
//! inference of the guessed player's hand.

use gangs_rules::the_gang::{
    estimate_strength, evaluate, Card, Category, Evaluator, HandValue, StrengthQuery,
};
use rand::seq::SliceRandom;
use rand::Rng;

/// Resolution of the pre-river scale: strengths in `[0, 1]` become `0..STREET_SCALE`.
pub const STREET_SCALE: u64 = 1024;

/// The share of other hands ours beats (ties half), by Monte Carlo over the unseen cards.
pub fn strength(
    own: &[Card],
    community: &[Card],
    known_elsewhere: &[Card],
    others: usize,
    per_player: usize,
    samples: u32,
    rng: &mut impl Rng,
) -> f64 {
    let query = StrengthQuery {
        own,
        community,
        known_elsewhere,
        others,
        private_per_player: per_player,
    };
    let e = estimate_strength(&query, samples, rng);
    e.beats + e.ties / 2.0
}

/// A pre-river strength on the street scale.
pub fn street_number(strength: f64) -> u64 {
    ((strength * STREET_SCALE as f64) as u64).min(STREET_SCALE - 1)
}

/// The values of every `per_player`-card holding the board allows, sorted. It depends on public
/// cards only, so every seat builds the same table: a hand's place in it is a public scale on
/// which the river order is exactly the order of the hands.
pub fn river_table(community: &[Card], per_player: usize) -> Vec<HandValue> {
    let eval = Evaluator::new();
    let pool: Vec<Card> = Card::deck()
        .into_iter()
        .filter(|c| !community.contains(c))
        .collect();
    let mut values = Vec::new();
    let mut hand: Vec<Card> = Vec::with_capacity(8);
    let mut push = |cards: &[Card]| {
        hand.clear();
        hand.extend_from_slice(cards);
        hand.extend_from_slice(community);
        values.push(eval.evaluate(&hand));
    };
    let k = pool.len();
    if per_player >= 3 {
        for a in 0..k {
            for b in a + 1..k {
                for c in b + 1..k {
                    push(&[pool[a], pool[b], pool[c]]);
                }
            }
        }
    } else {
        for a in 0..k {
            for b in a + 1..k {
                push(&[pool[a], pool[b]]);
            }
        }
    }
    values.sort_unstable();
    values
}

/// Size of the river scale for a table: numbers are in `0..river_scale`.
pub fn river_scale(table: &[HandValue]) -> u64 {
    2 * table.len() as u64 + 1
}

/// Our place on the river scale: twice the number of holdings weaker than our hand, so equal
/// hands get equal numbers. The Muscle's holder beats every hand of its category and loses to
/// every higher one: it sits just below the first hand of the next category (an odd number, so
/// it never ties anyone).
pub fn river_number(table: &[HandValue], value: HandValue, muscle: bool) -> u64 {
    if muscle {
        let category = value.category();
        let up_to = table.partition_point(|v| v.category() <= category) as u64;
        (2 * up_to).saturating_sub(1)
    } else {
        2 * table.partition_point(|v| *v < value) as u64
    }
}

/// Which of `hand` to give away (Coordinator pass, Hacker or Valet discard): the one whose
/// absence leaves the best hand with the board (Monte Carlo once the flop is out, the raw
/// private cards before). `allowed` lists the cards that may go.
pub fn card_to_drop(
    hand: &[Card],
    allowed: &[Card],
    community: &[Card],
    known_elsewhere: &[Card],
    others: usize,
    rng: &mut impl Rng,
) -> Option<Card> {
    let mut best: Option<(f64, Card)> = None;
    for &card in allowed {
        let rest: Vec<Card> = hand.iter().copied().filter(|&c| c != card).collect();
        let mut elsewhere = known_elsewhere.to_vec();
        if card != Card::SUITLESS_JACK {
            elsewhere.push(card);
        }
        let score = if community.len() >= 3 {
            strength(&rest, community, &elsewhere, others, rest.len(), 300, rng)
        } else {
            // Pairs first, then high cards: the raw value of the cards kept.
            evaluate(&rest).0 as f64 / u32::MAX as f64
        };
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, card));
        }
    }
    best.map(|(_, c)| c)
}

/// How often each rank is among the target's private cards and each category is its hand,
/// over sampled deals where the target's hand is the strongest (it holds the top red chip).
#[derive(Debug, Clone, Default)]
pub struct TopInference {
    pub rank_counts: [u32; 13],
    pub category_counts: [u32; 9],
}

impl TopInference {
    pub fn best_rank(&self) -> u8 {
        (0..13u8)
            .max_by_key(|&r| (self.rank_counts[r as usize], r))
            .unwrap_or(12)
    }
    pub fn best_category(&self) -> Category {
        Category::ALL
            .into_iter()
            .max_by_key(|&c| (self.category_counts[c as usize], std::cmp::Reverse(c as u8)))
            .unwrap_or(Category::Pair)
    }
}

/// Samples the hidden hands (`hand_sizes` per seat; ours is known) and keeps the deals where
/// `target` is at least as strong as everyone.
#[allow(clippy::too_many_arguments)]
pub fn infer_top(
    me: usize,
    own: &[Card],
    target: usize,
    community: &[Card],
    known_elsewhere: &[Card],
    hand_sizes: &[usize],
    samples: u32,
    rng: &mut impl Rng,
) -> TopInference {
    let eval = Evaluator::new();
    let mut unseen: Vec<Card> = Card::deck()
        .into_iter()
        .filter(|c| !own.contains(c) && !community.contains(c) && !known_elsewhere.contains(c))
        .collect();
    let needed: usize = (0..hand_sizes.len())
        .filter(|&s| s != me)
        .map(|s| hand_sizes[s])
        .sum();
    let mut kept = TopInference::default();
    let mut any = TopInference::default();
    if needed > unseen.len() {
        return kept;
    }
    let mut hand = Vec::with_capacity(8);
    for _ in 0..samples {
        let (drawn, _) = unseen.partial_shuffle(rng, needed);
        let mut next = 0;
        let mut values = vec![HandValue(0); hand_sizes.len()];
        let mut target_cards: &[Card] = &[];
        for (seat, &size) in hand_sizes.iter().enumerate() {
            let cards: &[Card] = if seat == me {
                own
            } else {
                let c = &drawn[next..next + size];
                next += size;
                c
            };
            if seat == target {
                target_cards = cards;
            }
            hand.clear();
            hand.extend_from_slice(cards);
            hand.extend_from_slice(community);
            values[seat] = eval.evaluate(&hand);
        }
        let top = values.iter().all(|v| *v <= values[target]);
        for inference in [&mut any, &mut kept] {
            let mut seen = [false; 13];
            for c in target_cards {
                seen[c.rank() as usize] = true;
            }
            for (r, s) in seen.iter().enumerate() {
                inference.rank_counts[r] += *s as u32;
            }
            inference.category_counts[values[target].category() as usize] += 1;
            if !top {
                break;
            }
        }
    }
    if kept.category_counts.iter().sum::<u32>() == 0 {
        any
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gangs_rules::the_gang::cards;

    #[test]
    fn the_river_scale_orders_hands_like_the_evaluator() {
        let board = cards("2c 7d 9h Js Kc");
        let table = river_table(&board, 2);
        assert_eq!(table.len(), 47 * 46 / 2);
        let hands = [
            cards("3c 4d"),
            cards("2d 5h"),
            cards("Kd 3s"),
            cards("9c 9d"),
        ];
        let mut previous = None;
        for h in &hands {
            let mut all = h.clone();
            all.extend(&board);
            let n = river_number(&table, evaluate(&all), false);
            if let Some(p) = previous {
                assert!(n > p);
            }
            previous = Some(n);
        }
    }

    #[test]
    fn the_muscle_sits_between_its_category_and_the_next() {
        let board = cards("2c 7d 9h Js Kc");
        let table = river_table(&board, 2);
        let value = |h: &str| {
            let mut all = cards(h);
            all.extend(&board);
            evaluate(&all)
        };
        let weak_pair = river_number(&table, value("2d 3s"), true);
        let aces = river_number(&table, value("Ad As"), false);
        let two_pair = river_number(&table, value("2d 7s"), false);
        assert!(weak_pair > aces && weak_pair < two_pair);
    }

    #[test]
    fn drops_the_card_that_breaks_nothing() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        use rand::SeedableRng;
        let hand = cards("Ah Ad 4c");
        let dropped = card_to_drop(&hand, &hand, &[], &[], 3, &mut rng);
        assert_eq!(dropped, Some(cards("4c")[0]));
    }
}
