//! The Gang's policy: [`crew`] (a cooperative strategy for every seat of a team), listed in
//! [`POLICIES`] for the ladder's house bots and the bot binaries; and what it builds on: the
//! chip convention ([`protocol`]), hand computations with the rules library ([`hand`]) and an
//! in-process evaluation harness that plays whole games without a server ([`arena`]).

pub mod arena;
pub mod crew;
pub mod hand;
pub mod protocol;

use super::GamePolicies;
use crate::Policy;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// The policies that play The Gang, beside the random one every game has.
pub const POLICIES: GamePolicies = GamePolicies {
    kind: gangs_games::the_gang::KIND.name,
    policies: &[("crew", make_crew)],
};

fn make_crew(rng: ChaCha8Rng, _budget: Duration) -> Box<dyn Policy + Send> {
    Box::new(crew::CrewPolicy::new(rng))
}
