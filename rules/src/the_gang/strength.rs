//! Monte Carlo hand strength for bots: sample the unseen cards (other players' private cards and
//! the community cards still to come), evaluate everyone, and measure how often our hand is
//! stronger than, or equal to, another player's. In The Gang the question is never "do I win"
//! but "which star should I take": `beats` times the number of other players is the expected
//! number of players below us.

use super::cards::Card;
use super::evaluator::{EvalHand, Evaluator};
use rand::seq::SliceRandom;
use rand::Rng;

/// Average over the samples of the share of other players' hands that ours beats or ties.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrengthEstimate {
    /// Share of other hands strictly weaker than ours (0..=1).
    pub beats: f64,
    /// Share of other hands exactly equal to ours (0..=1).
    pub ties: f64,
    pub samples: u32,
}

impl StrengthEstimate {
    /// Our expected position among all players, 0 = weakest, `others` = strongest, with ties
    /// counted as half.
    pub fn expected_position(&self, others: usize) -> f64 {
        (self.beats + self.ties / 2.0) * others as f64
    }
}

/// What a player knows when estimating: its own private cards, the community cards revealed so
/// far, and cards known to be out of play or held by a known other (e.g. shown by the
/// Informant, or discarded by us). `others` players each hold `private_per_player` cards.
#[derive(Debug, Clone)]
pub struct StrengthQuery<'a> {
    pub own: &'a [Card],
    pub community: &'a [Card],
    pub known_elsewhere: &'a [Card],
    pub others: usize,
    pub private_per_player: usize,
}

/// Samples `samples` completions of the unseen cards and evaluates every hand.
pub fn estimate_strength(
    query: &StrengthQuery<'_>,
    samples: u32,
    rng: &mut impl Rng,
) -> StrengthEstimate {
    let excluded: Vec<Card> = query
        .own
        .iter()
        .chain(query.community)
        .chain(query.known_elsewhere)
        .copied()
        .collect();
    let mut unseen: Vec<Card> = Card::deck()
        .into_iter()
        .filter(|c| !excluded.contains(c))
        .collect();
    let missing_board = 5usize.saturating_sub(query.community.len());
    let needed = missing_board + query.others * query.private_per_player;
    assert!(needed <= unseen.len(), "not enough unseen cards to sample");
    let (mut beats, mut ties) = (0u64, 0u64);
    // The known cards are summed once; each sample adds its board and each player's cards.
    let evaluator = Evaluator::new();
    let community = EvalHand::of(query.community);
    let own = EvalHand::of(query.own);
    for _ in 0..samples {
        let (drawn, _) = unseen.partial_shuffle(rng, needed);
        let (board_rest, others) = drawn.split_at(missing_board);
        let board = community.union(EvalHand::of(board_rest));
        let ours = evaluator.evaluate_hand(board.union(own));
        for other in others.chunks(query.private_per_player.max(1)) {
            let theirs = evaluator.evaluate_hand(board.union(EvalHand::of(other)));
            if ours > theirs {
                beats += 1;
            } else if ours == theirs {
                ties += 1;
            }
        }
    }
    let comparisons = (samples as u64 * query.others as u64).max(1) as f64;
    StrengthEstimate {
        beats: beats as f64 / comparisons,
        ties: ties as f64 / comparisons,
        samples,
    }
}
