//! Gang of Four's policies: [`greedy`] (plans its hand into combinations) and [`search`]
//! (determinized Monte Carlo), listed in [`POLICIES`] for the ladder's house bots and the bot
//! binaries; and what they share: reading the view into engine terms ([`view`]), planning a
//! hand into combinations ([`plan`]), dealing the unseen cards consistently with what is public
//! ([`sample`]), the fast default policy that finishes simulated deals ([`rollout`]), and an
//! in-process table to evaluate policies on ([`arena`]).

pub mod arena;
pub mod greedy;
pub mod plan;
pub mod rollout;
pub mod sample;
pub mod search;
pub mod view;

use super::GamePolicies;
use crate::Policy;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// The policies that play Gang of Four, beside the random one every game has.
pub const POLICIES: GamePolicies = GamePolicies {
    kind: gangs_games::gang_of_four::KIND.name,
    policies: &[("greedy", make_greedy), ("search", make_search)],
};

fn make_greedy(rng: ChaCha8Rng, _budget: Duration) -> Box<dyn Policy + Send> {
    Box::new(greedy::GreedyPolicy::new(rng))
}

fn make_search(rng: ChaCha8Rng, budget: Duration) -> Box<dyn Policy + Send> {
    Box::new(search::SearchPolicy::new(rng, budget))
}
