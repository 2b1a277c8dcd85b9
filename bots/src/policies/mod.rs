//! Ready-made policies. Each file is one policy; smarter bots add theirs here.

pub mod crew;
pub mod gang_of_four;
pub mod greedy;
pub mod random;
pub mod search;
pub mod the_gang;

use crate::Policy;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// The shipped policies that play `kind`, by name (what a server may enter on a ladder as its
/// own house bots); empty for a kind none plays.
pub fn playing(kind: &str) -> &'static [&'static str] {
    match kind {
        "gang-of-four" => &["random", "greedy", "search"],
        "the-gang" => &["random", "crew"],
        _ => &[],
    }
}

/// The shipped policy `name` (one of [`playing`]'s), seeded; the search policy thinks for
/// `search_budget` per move. None for an unknown name.
pub fn by_name(
    name: &str,
    rng: ChaCha8Rng,
    search_budget: Duration,
) -> Option<Box<dyn Policy + Send>> {
    Some(match name {
        "random" => Box::new(random::RandomPolicy::new(rng)),
        "greedy" => Box::new(greedy::GreedyPolicy::new(rng)),
        "search" => Box::new(search::SearchPolicy::new(rng, search_budget)),
        "crew" => Box::new(crew::CrewPolicy::new(rng)),
        _ => return None,
    })
}
