//! Time: the engine's phase deadline (armed when a timed phase opens, fired as an `expired`
//! record) and the wall clock the log and the views use.

use super::{durability::PendingReply, GameActor};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use tokio::time::Instant;

pub(super) struct Timer {
    pub(super) phase_id: u64,
    pub(super) at: Instant,
    pub(super) unix_ms: i64,
}

pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

pub(super) async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl GameActor {
    pub(super) fn on_deadline(&mut self) {
        self.timer = None;
        if self.is_over() {
            return;
        }
        match self.game.expire() {
            Ok(events) => {
                let record = self.push_record(Record::Expired(pb::Expired { events }));
                self.submit(vec![record], PendingReply::None);
            }
            Err(e) => tracing::warn!(game = %self.id, "deadline refused by the engine: {e}"),
        }
    }

    /// Starts the phase timer when the engine opened a new timed phase.
    pub(super) fn arm_timer(&mut self) {
        if self.is_over() || self.start_seq.is_none() {
            self.timer = None;
            return;
        }
        match self.game.phase_deadline_ms() {
            None => self.timer = None,
            Some(ms) => {
                let phase_id = self.game.phase_id();
                if self.timer.as_ref().map(|t| t.phase_id) != Some(phase_id) {
                    self.timer = Some(Timer {
                        phase_id,
                        at: Instant::now() + std::time::Duration::from_millis(ms),
                        unix_ms: unix_ms() + ms as i64,
                    });
                }
            }
        }
    }
}
