//! The shipped policies: a [`Policy`] picks one of the legal actions of a seat's update, pure
//! (no I/O, no async; seeded), so that the bot binaries (`gangs-bots`, over gRPC) and the
//! server's house bots (in process) play the very same code, and the server links no gRPC
//! client. [`random`] plays any game; each game's own policies live in a module of its own,
//! which lists them in its `POLICIES`. [`playing`] and
//! [`by_name`] name no game: a game the registry knows and that ships no policy of its own
//! still gets the random one.

pub mod gang_of_four;
pub mod policy;
pub mod random;
pub mod the_gang;

pub use policy::Policy;
use rand_chacha::ChaCha8Rng;
pub use random::RandomPolicy;
use std::time::Duration;

/// Makes a shipped policy from a seeded RNG; a policy that thinks against the clock (search)
/// takes the given time per move, the others ignore it.
pub type MakePolicy = fn(ChaCha8Rng, Duration) -> Box<dyn Policy + Send>;

/// A game's own policies: the game's kind (from its registry entry) and each policy by name.
pub struct GamePolicies {
    pub kind: &'static str,
    pub policies: &'static [(&'static str, MakePolicy)],
}

/// Every game that ships policies of its own (one entry per game).
static GAMES: &[&GamePolicies] = &[&gang_of_four::POLICIES, &the_gang::POLICIES];

/// The default thinking time per move of a policy that thinks against the clock, in ms.
pub const DEFAULT_BUDGET_MS: u64 = 200;

/// The policy every game has: a uniformly random legal action, knowing no rules.
pub const RANDOM: &str = "random";

/// The shipped policies that play `kind`, by name (what a server may enter on a ladder as its
/// own house bots): the random one for every kind the registry knows, then the game's own;
/// empty for an unknown kind.
pub fn playing(kind: &str) -> Vec<&'static str> {
    if gangs_games::kind(kind).is_err() {
        return Vec::new();
    }
    let own = GAMES
        .iter()
        .filter(|game| game.kind == kind)
        .flat_map(|game| game.policies.iter().map(|(name, _)| *name));
    std::iter::once(RANDOM).chain(own).collect()
}

/// The shipped policy `name` (one of [`playing`]'s for some kind), seeded; a policy that
/// thinks against the clock takes `budget` per move. None for an unknown name.
pub fn by_name(name: &str, rng: ChaCha8Rng, budget: Duration) -> Option<Box<dyn Policy + Send>> {
    if name == RANDOM {
        return Some(Box::new(random::RandomPolicy::new(rng)));
    }
    GAMES
        .iter()
        .flat_map(|game| game.policies.iter())
        .find(|(known, _)| *known == name)
        .map(|(_, make)| make(rng, budget))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_kind_has_the_random_policy_and_each_name_makes_its_policy() {
        let mut names = Vec::new();
        for kind in gangs_games::kinds() {
            let offered = playing(kind.name);
            assert_eq!(offered.first(), Some(&RANDOM), "{}: {offered:?}", kind.name);
            for name in offered {
                let policy = by_name(name, ChaCha8Rng::seed_from_u64(1), Duration::ZERO);
                assert!(
                    policy.is_some(),
                    "{name} is offered for {} but not made",
                    kind.name
                );
                if name != RANDOM {
                    names.push(name);
                }
            }
        }
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(
            unique.len(),
            names.len(),
            "a policy name used twice: {names:?}"
        );
        for game in GAMES {
            assert!(
                gangs_games::kind(game.kind).is_ok(),
                "policies for {}, which the registry does not know",
                game.kind
            );
        }
        assert!(playing("no-such-game").is_empty());
        assert!(by_name(
            "no-such-policy",
            ChaCha8Rng::seed_from_u64(1),
            Duration::ZERO
        )
        .is_none());
    }
}
