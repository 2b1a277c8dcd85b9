//! Idempotency keys for `Act`. The key depends only on (game, seat, seq), so a bot that acts,
//! loses the connection and acts again at the same seq after reconnecting sends the same key,
//! with the same action (the runner resends it: `SentAction` in `runner.rs`): the server
//! answers the first result and applies nothing twice.

/// The `action_id` for the action of `seat` in `game_id` decided on the update at `seq`.
pub fn action_id(game_id: &str, seat: u32, seq: u64) -> String {
    format!("bot:{game_id}:seat{seat}:seq{seq}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_distinct() {
        assert_eq!(action_id("g1", 2, 17), action_id("g1", 2, 17));
        assert_eq!(action_id("g1", 2, 17), "bot:g1:seat2:seq17");
        assert_ne!(action_id("g1", 2, 17), action_id("g1", 2, 18));
        assert_ne!(action_id("g1", 2, 17), action_id("g1", 3, 17));
        assert_ne!(action_id("g1", 2, 17), action_id("g2", 2, 17));
    }
}
