//! The greedy Gang of Four policy: plans its hand into combinations (see
//! [`plan`](super::plan)) and takes the legal action that leaves
//! the cheapest plan, with a few rules of thumb on top:
//! - lead the weakest combination of the plan (low cards go early, gangs and five-card hands
//!   stay together because breaking them makes the plan dearer);
//! - when at most one weak combination is left, lead the strong ones first to keep control
//!   and go out with the last;
//! - follow when it sheds cards cheaply, keep top cards and gangs while the opponents still
//!   hold many cards;
//! - block a seat about to go out (one card: no singles led, the strongest single played on
//!   a single; two cards: likewise with pairs);
//! - in the exchange, give back the weakest card that breaks no combination.
//!
//! For another game than Gang of Four it plays a random legal action.

use gangs_proto::v1 as pb;
use gangs_rules::gang_of_four::{cards, Combination, Kind, Mask};
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::plan::{strength, Planner};
use super::view::{candidates, Candidate, CandidateKind, Situation};
use crate::Policy;

/// Score bonus per card shed: shedding is what wins a deal.
const SHED_BONUS: f32 = 0.08;

pub struct GreedyPolicy {
    planner: Planner,
    rng: ChaCha8Rng,
}

impl GreedyPolicy {
    pub fn new(rng: ChaCha8Rng) -> Self {
        GreedyPolicy {
            planner: Planner::new(),
            rng,
        }
    }
}

impl Policy for GreedyPolicy {
    fn name(&self) -> &str {
        "greedy"
    }

    fn choose(&mut self, update: &pb::Update) -> Option<pb::GameAction> {
        let list = candidates(update);
        let Some(situation) = Situation::from_update(update).filter(|_| !list.is_empty()) else {
            return update.legal_actions.choose(&mut self.rng).cloned();
        };
        let scores = score_candidates(&situation, &list, &mut self.planner);
        let best = best_index(&scores);
        Some(list[best].action.clone())
    }
}

/// The index of the lowest score (the first among equals).
pub fn best_index(scores: &[f32]) -> usize {
    let mut best = 0;
    for (i, &s) in scores.iter().enumerate() {
        if s < scores[best] {
            best = i;
        }
    }
    best
}

/// The greedy judgement of every candidate: lower is better.
pub fn score_candidates(
    situation: &Situation,
    list: &[Candidate],
    planner: &mut Planner,
) -> Vec<f32> {
    let hand = situation.hand;
    let base = planner.cost(hand);
    let danger = situation.fewest_opponent_cards();
    let table = situation.table_combination();
    let parts = planner.partition(hand);
    let weak_parts = parts.iter().filter(|c| strength(c) < 0.7).count();
    let strongest_single = cards::strongest(cards::distinct_faces(hand)).map(|id| 1u64 << id);
    list.iter()
        .map(|candidate| match candidate.kind {
            CandidateKind::GiveBack(card) => {
                let bit = 1u64 << card;
                let single = Combination::classify(bit).expect("a single");
                planner.cost(hand & !bit) + 0.5 * strength(&single)
            }
            CandidateKind::Pass => base + pass_adjustment(situation, table.as_ref(), danger),
            CandidateKind::Play(play) => {
                let after = hand & !play;
                if after == 0 {
                    return -1000.0;
                }
                let Some(c) = Combination::classify(play) else {
                    return f32::INFINITY;
                };
                let mut score = planner.cost(after) - SHED_BONUS * play.count_ones() as f32;
                match table {
                    None => {
                        if weak_parts <= 1 && parts.len() <= 4 {
                            // Endgame: take the tricks with the strong combinations first, go
                            // out with the weak one.
                            score -= 3.0 * strength(&c);
                        }
                        if danger == 1 && c.kind == Kind::Single {
                            score += if Some(play) == strongest_single {
                                0.6
                            } else {
                                3.0
                            };
                        }
                        if danger == 2 && c.kind == Kind::Pair {
                            score += 1.0;
                        }
                    }
                    Some(t) => {
                        score += follow_adjustment(&c, &t, danger, hand, play, strongest_single);
                    }
                }
                score
            }
        })
        .collect()
}

/// Passing while someone is about to go out lets them go out.
fn pass_adjustment(_situation: &Situation, table: Option<&Combination>, danger: u8) -> f32 {
    match table {
        Some(_) if danger <= 2 => 1.5,
        _ => 0.0,
    }
}

/// Following: spending strength is a loss while the opponents hold many cards (the top cards
/// are worth more later), a gain when one of them is close to going out.
fn follow_adjustment(
    c: &Combination,
    table: &Combination,
    danger: u8,
    hand: Mask,
    play: Mask,
    strongest_single: Option<Mask>,
) -> f32 {
    let s = strength(c);
    let mut adj = 0.0;
    let hand_size = hand.count_ones();
    if danger > 4 && hand_size > 5 {
        adj += 0.35 * s;
    } else if danger > 2 {
        adj += 0.15 * s;
    }
    if c.kind == Kind::Gang && table.kind != Kind::Gang && danger > 3 && hand_size > 8 {
        // A bomb is worth most when it saves a deal; keep it.
        adj += 0.6;
    }
    if danger == 1 && table.kind == Kind::Single {
        // Only the strongest single stops a one-card seat.
        if Some(play) == strongest_single {
            adj -= 1.0;
        }
    }
    adj
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_index_takes_the_first_lowest() {
        assert_eq!(best_index(&[3.0, 1.0, 1.0, 2.0]), 1);
        assert_eq!(best_index(&[0.5]), 0);
    }
}
