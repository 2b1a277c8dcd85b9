//! The summary of every game this node knows (what `ListGames` and the directory show), and
//! the counts kept as they change: the live games (`--max-live-games`) and, on a cluster node,
//! which summaries changed since they were last published.

use gangs_proto::v1 as pb;
use std::collections::{HashMap, HashSet};

/// Every game's summary this node knows, by id, with the number of live ones (waiting or
/// running) kept as summaries change: CreateGame checks `--max-live-games` against it, and
/// counting every summary per call made creating 100,000 games quadratic.
#[derive(Default)]
pub struct SummaryTable {
    by_id: HashMap<String, pb::GameSummary>,
    live: usize,
    /// The ids whose summary changed since the last `take_changed`, when tracked (a node of a
    /// cluster publishes only those: no scan of every game each second).
    changed: Option<HashSet<String>>,
}

impl SummaryTable {
    pub fn insert(&mut self, id: String, summary: pb::GameSummary) -> Option<pb::GameSummary> {
        self.live += live_count(Some(&summary));
        if let Some(changed) = &mut self.changed {
            if self.by_id.get(&id) != Some(&summary) {
                changed.insert(id.clone());
            }
        }
        let old = self.by_id.insert(id, summary);
        self.live -= live_count(old.as_ref());
        old
    }

    /// Moves a game's summary to `last_seq` when that is all that changed: the caller vouches
    /// that its game is not over, and `status` and `seats_taken` tell whether anything else
    /// could have (names change only with a seat taken; the outcome and finish time only once
    /// over). False when the whole summary must be written (none yet, or something changed).
    pub fn advance(&mut self, id: &str, status: i32, seats_taken: u32, last_seq: u64) -> bool {
        let Some(summary) = self.by_id.get_mut(id) else {
            return false;
        };
        if summary.status != status || summary.seats_taken != seats_taken || summary.damaged {
            return false;
        }
        if summary.last_seq != last_seq {
            summary.last_seq = last_seq;
            if let Some(changed) = &mut self.changed {
                changed.insert(id.to_string());
            }
        }
        true
    }

    /// From now on, note which summaries change (see `take_changed`).
    pub fn track_changes(&mut self) {
        self.changed.get_or_insert_with(Default::default);
    }

    /// The summaries that changed since the last call (tracked only after `track_changes`).
    pub fn take_changed(&mut self) -> Vec<pb::GameSummary> {
        let Some(changed) = &mut self.changed else {
            return Vec::new();
        };
        std::mem::take(changed)
            .into_iter()
            .filter_map(|id| self.by_id.get(&id).cloned())
            .collect()
    }

    pub fn remove(&mut self, id: &str) -> Option<pb::GameSummary> {
        let old = self.by_id.remove(id);
        self.live -= live_count(old.as_ref());
        old
    }

    pub fn get(&self, id: &str) -> Option<&pb::GameSummary> {
        self.by_id.get(id)
    }

    pub fn contains_key(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    pub fn values(&self) -> impl Iterator<Item = &pb::GameSummary> {
        self.by_id.values()
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Games waiting or running.
    pub fn live(&self) -> usize {
        self.live
    }
}

/// 1 for a live summary (waiting or running), 0 for none or another.
fn live_count(summary: Option<&pb::GameSummary>) -> usize {
    usize::from(summary.is_some_and(is_live))
}

/// Waiting for seats or running: what the live-game limits count.
pub fn is_live(summary: &pb::GameSummary) -> bool {
    pb::GameStatus::try_from(summary.status).is_ok_and(pb::GameStatus::is_live)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_table_counts_live_games_and_notes_changes() {
        let summary = |id: &str, status: pb::GameStatus, last_seq: u64| pb::GameSummary {
            game_id: id.into(),
            status: status as i32,
            last_seq,
            ..Default::default()
        };
        let mut table = SummaryTable::default();
        table.insert("a".into(), summary("a", pb::GameStatus::Waiting, 1));
        assert_eq!(table.take_changed(), vec![], "untracked until asked");
        table.track_changes();
        table.insert("b".into(), summary("b", pb::GameStatus::Running, 6));
        table.insert("a".into(), summary("a", pb::GameStatus::Waiting, 1));
        assert_eq!(table.live(), 2);
        // Only what changed: b is new, a was written again unchanged.
        assert_eq!(
            table.take_changed(),
            vec![summary("b", pb::GameStatus::Running, 6)]
        );
        table.insert("b".into(), summary("b", pb::GameStatus::Finished, 9));
        assert_eq!(table.live(), 1);
        assert_eq!(
            table.take_changed(),
            vec![summary("b", pb::GameStatus::Finished, 9)]
        );
        assert_eq!(table.take_changed(), vec![]);
        table.remove("a");
        assert_eq!((table.live(), table.len()), (0, 1));
    }

    #[test]
    fn a_summary_advances_in_place_only_when_its_seq_is_all_that_changed() {
        let running = pb::GameStatus::Running as i32;
        let summary = pb::GameSummary {
            game_id: "g".into(),
            status: running,
            seats_taken: 4,
            last_seq: 6,
            names: vec!["a".into(), "b".into(), "c".into(), "d".into()],
            ..Default::default()
        };
        let mut table = SummaryTable::default();
        assert!(!table.advance("g", running, 4, 7), "no summary yet");
        table.insert("g".into(), summary.clone());
        table.track_changes();
        assert!(table.advance("g", running, 4, 7));
        let advanced = pb::GameSummary {
            last_seq: 7,
            ..summary.clone()
        };
        assert_eq!(table.take_changed(), vec![advanced.clone()]);
        assert!(table.advance("g", running, 4, 7), "the same seq again");
        assert_eq!(table.take_changed(), vec![], "nothing changed");
        // Another status or another seat count: the whole summary must be written.
        assert!(!table.advance("g", pb::GameStatus::Finished as i32, 4, 8));
        assert!(!table.advance("g", running, 3, 8));
        assert_eq!(table.take_changed(), vec![]);
        table.insert(
            "g".into(),
            pb::GameSummary {
                damaged: true,
                ..advanced
            },
        );
        assert!(
            !table.advance("g", running, 4, 9),
            "a damaged game's summary is rewritten"
        );
    }
}
