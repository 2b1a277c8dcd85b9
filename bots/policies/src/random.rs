//! The random policy: a uniformly random legal action, knowing no rules at all.

use crate::Policy;
use gangs_proto::v1 as pb;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

pub struct RandomPolicy {
    rng: ChaCha8Rng,
}

impl RandomPolicy {
    pub fn new(rng: ChaCha8Rng) -> Self {
        RandomPolicy { rng }
    }
}

impl Policy for RandomPolicy {
    fn name(&self) -> &str {
        "random"
    }

    fn choose(&mut self, update: &pb::Update) -> Option<pb::GameAction> {
        update.legal_actions.choose(&mut self.rng).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    use pb::game_action::Game;

    /// Three distinct actions, whatever the per-game messages hold.
    fn three_actions() -> Vec<pb::GameAction> {
        vec![
            pb::GameAction { game: None },
            pb::GameAction {
                game: Some(Game::GangOfFour(Default::default())),
            },
            pb::GameAction {
                game: Some(Game::TheGang(Default::default())),
            },
        ]
    }

    #[test]
    fn nothing_to_pick_gives_none() {
        let mut policy = RandomPolicy::new(ChaCha8Rng::seed_from_u64(1));
        assert!(policy.choose(&pb::Update::default()).is_none());
    }

    #[test]
    fn picks_every_legal_action_sometimes_and_nothing_else() {
        let update = pb::Update {
            seq: 9,
            legal_actions: three_actions(),
            ..Default::default()
        };
        let mut policy = RandomPolicy::new(ChaCha8Rng::seed_from_u64(1));
        let mut seen = [0; 3];
        for _ in 0..300 {
            let chosen = policy.choose(&update).unwrap();
            let index = update
                .legal_actions
                .iter()
                .position(|a| *a == chosen)
                .unwrap();
            seen[index] += 1;
        }
        assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
    }

    #[test]
    fn same_seed_same_choices() {
        let update = pb::Update {
            legal_actions: three_actions(),
            ..Default::default()
        };
        let mut a = RandomPolicy::new(ChaCha8Rng::seed_from_u64(5));
        let mut b = RandomPolicy::new(ChaCha8Rng::seed_from_u64(5));
        for _ in 0..20 {
            assert_eq!(a.choose(&update), b.choose(&update));
        }
    }
}
