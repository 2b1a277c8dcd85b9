//! Which update of a batch to act on. Updates arrive in bursts (the catch-up after watching,
//! several seats acting at once); only the newest one describes the present, so the runner
//! drains every update already received and decides on the last one alone. Acting on an older
//! one would only earn an ABORTED (stale `expected_seq`).

use gangs_proto::v1 as pb;

/// What to do after a batch of updates.
#[derive(Debug, PartialEq)]
pub enum Decision<'a> {
    /// The game is over (the update that says so).
    Finished(&'a pb::Update),
    /// Ask the policy about this update and act on it.
    Act(&'a pb::Update),
    /// Nothing to do: wait for the next update.
    Wait,
}

/// Decides on a batch of updates received back to back, oldest first. `acted_at` is the seq
/// of the last update this seat already acted on successfully: after a reconnect the same
/// update may come again, and acting twice on it is pointless.
pub fn decide(batch: &[pb::Update], acted_at: Option<u64>) -> Decision<'_> {
    // Over: finished by the rules, cancelled or abandoned.
    let over = |u: &&pb::Update| pb::GameStatus::is_over_code(u.status);
    if let Some(finished) = batch.iter().find(over) {
        return Decision::Finished(finished);
    }
    let Some(latest) = batch.iter().max_by_key(|u| u.seq) else {
        return Decision::Wait;
    };
    if latest.legal_actions.is_empty() || acted_at == Some(latest.seq) {
        return Decision::Wait;
    }
    Decision::Act(latest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(seq: u64, legal: usize, status: pb::GameStatus) -> pb::Update {
        pb::Update {
            seq,
            legal_actions: vec![pb::GameAction::default(); legal],
            status: status as i32,
            ..Default::default()
        }
    }

    const RUNNING: pb::GameStatus = pb::GameStatus::Running;

    #[test]
    fn acts_only_on_the_latest_update() {
        let batch = [
            update(3, 2, RUNNING),
            update(4, 0, RUNNING),
            update(5, 1, RUNNING),
        ];
        assert_eq!(decide(&batch, None), Decision::Act(&batch[2]));
    }

    #[test]
    fn skips_catch_up_updates_that_are_no_longer_current() {
        // Seq 3 offered actions, but seq 4 (someone else's move) came after it.
        let batch = [update(3, 2, RUNNING), update(4, 0, RUNNING)];
        assert_eq!(decide(&batch, None), Decision::Wait);
    }

    #[test]
    fn does_not_act_twice_on_the_same_seq() {
        let batch = [update(7, 2, RUNNING)];
        assert_eq!(decide(&batch, Some(7)), Decision::Wait);
        assert_eq!(decide(&batch, Some(6)), Decision::Act(&batch[0]));
    }

    #[test]
    fn finished_wins() {
        let batch = [
            update(8, 0, pb::GameStatus::Finished),
            update(9, 1, RUNNING),
        ];
        assert_eq!(decide(&batch, None), Decision::Finished(&batch[0]));
    }

    #[test]
    fn empty_batch_waits() {
        assert_eq!(decide(&[], None), Decision::Wait);
    }
}
