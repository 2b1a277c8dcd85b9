//! The search Gang of Four policy: determinized Monte Carlo (PIMC) within a time budget.
//!
//! Each iteration deals the unseen cards to the other hands consistently with everything
//! public ([`Constraints`]: card counts, exchanged cards, the loser's strongest card), then
//! plays every candidate move in that same world and finishes the deal with the fast default
//! policy ([`rollout`]) for every seat. A world is shared by all candidates so that they are
//! compared on equal cards. The candidate with the best mean utility wins; utility is the
//! deal's penalty of the other seats minus this seat's (ranking is by total), plus a bonus or
//! malus when the deal would end the game with this seat first or not.
//!
//! Candidates are the legal actions, at most [`MAX_CANDIDATES`] of them, ranked by the greedy
//! judgement when there are more; the greedy policy also decides the exchange give-back and
//! any move when the budget allows no playout at all.

use std::time::{Duration, Instant};

use gangs_proto::v1 as pb;
use gangs_rules::gang_of_four::{DealState, PlayList};
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::greedy::{best_index, score_candidates};
use super::plan::Planner;
use super::rollout;
use super::sample::Constraints;
use super::view::{candidates, CandidateKind, DealMemory, Situation};
use crate::Policy;

/// Candidates searched at most (the greedy ranking picks them when there are more).
pub const MAX_CANDIDATES: usize = 12;

/// The default per-move budget.
pub use crate::DEFAULT_BUDGET_MS;

pub struct SearchPolicy {
    planner: Planner,
    memory: DealMemory,
    rng: ChaCha8Rng,
    budget: Duration,
    plays: PlayList,
}

impl SearchPolicy {
    pub fn new(rng: ChaCha8Rng, budget: Duration) -> Self {
        SearchPolicy {
            planner: Planner::new(),
            memory: DealMemory::default(),
            rng,
            budget,
            plays: PlayList::new(),
        }
    }
}

/// What the end of a simulated deal is worth to `seat` (higher is better).
pub fn utility(state: &DealState, seat: u8, scores: &[u32; 4]) -> f32 {
    let n = state.players() as usize;
    let penalties = state.penalties();
    let mine = penalties[seat as usize] as f32;
    let others: f32 = (0..n)
        .filter(|&s| s != seat as usize)
        .map(|s| penalties[s] as f32)
        .sum::<f32>()
        / (n - 1) as f32;
    let mut u = (others - mine) / 20.0;
    let totals: Vec<u32> = (0..n).map(|s| scores[s] + penalties[s]).collect();
    if totals.iter().any(|&t| t >= state.options.target_score) {
        let me = totals[seat as usize];
        let best_other = (0..n)
            .filter(|&s| s != seat as usize)
            .map(|s| totals[s])
            .min()
            .unwrap_or(u32::MAX);
        if me < best_other {
            u += 2.0;
        } else if me > best_other {
            u -= 2.0;
        }
    }
    u
}

impl Policy for SearchPolicy {
    fn name(&self) -> &str {
        "search"
    }

    fn choose(&mut self, update: &pb::Update) -> Option<pb::GameAction> {
        let deadline = Instant::now() + self.budget.mul_f32(0.9);
        let list = candidates(update);
        let Some(situation) = Situation::from_update(update).filter(|_| !list.is_empty()) else {
            return update.legal_actions.choose(&mut self.rng).cloned();
        };
        self.memory.observe(update, &situation);
        if list.len() == 1 {
            return Some(list[0].action.clone());
        }
        let greedy = score_candidates(&situation, &list, &mut self.planner);
        let greedy_best = best_index(&greedy);
        if situation.give_back || greedy[greedy_best] <= -1000.0 {
            // The give-back, or a play that goes out: nothing to search.
            return Some(list[greedy_best].action.clone());
        }
        let mut order: Vec<usize> = (0..list.len()).collect();
        order.sort_by(|&a, &b| greedy[a].total_cmp(&greedy[b]));
        order.truncate(MAX_CANDIDATES);
        if let Some(pass) = list.iter().position(|c| c.kind == CandidateKind::Pass) {
            if !order.contains(&pass) {
                order.push(pass);
            }
        }
        let moves: Vec<_> = order
            .iter()
            .filter_map(|&i| list[i].engine_move().map(|m| (i, m)))
            .collect();
        let constraints = Constraints::new(&situation, self.memory.played());
        let mut sums = vec![0.0f32; moves.len()];
        let mut runs = 0u32;
        while Instant::now() < deadline {
            let mut hands = constraints.sample(&mut self.rng);
            hands[situation.seat as usize] = situation.hand;
            let Ok(world) = situation.deal_state(hands) else {
                break;
            };
            for (k, &(_, mv)) in moves.iter().enumerate() {
                let mut state = world.clone();
                state.apply_unchecked(mv);
                rollout::playout(&mut state, &mut self.rng, &mut self.plays);
                sums[k] += utility(&state, situation.seat, &situation.scores);
            }
            runs += 1;
        }
        if runs == 0 {
            return Some(list[greedy_best].action.clone());
        }
        // The best mean; among equals the greedy favourite (moves are in greedy order).
        let mut best = 0;
        for k in 1..moves.len() {
            if sums[k] > sums[best] + 1e-4 {
                best = k;
            }
        }
        tracing::debug!(runs, candidates = moves.len(), "search done");
        Some(list[moves[best].0].action.clone())
    }
}
