//! How a game ends other than by its rules: cancelled by an organizer (`CancelGame`), or
//! abandoned when its seats are not all taken within `--fill-timeout` or (without an engine
//! clock) nothing happens for `--idle-timeout`. Either way one `ended` record closes the log,
//! every watcher gets it as a final update, and nothing is accepted after it. The deadlines
//! come from the log's wall-clock times, with the time the host was away given back (a game
//! rebuilt from its log keeps the time it had left, plus a reconnect grace: `timers.rs`).

use super::durability::PendingReply;
use super::timers::unix_ms;
use super::{GameActor, Reply};
use crate::error::HostError;
use gangs_proto::v1 as pb;
use pb::ended::Reason;
use pb::log_record::Record;
use std::time::Duration;
use tokio::time::Instant;

/// Why a game would be abandoned, with the timeout that applies.
pub(super) enum Abandon {
    /// Seats still free after `--fill-timeout`.
    Unfilled(Duration),
    /// No record for `--idle-timeout`.
    Idle(Duration),
}

impl Abandon {
    /// The `ended` record's detail.
    fn detail(&self) -> String {
        match self {
            Abandon::Unfilled(after) => format!(
                "not every seat was taken within the fill timeout ({} ms)",
                after.as_millis()
            ),
            Abandon::Idle(after) => format!(
                "no action within the idle timeout ({} ms)",
                after.as_millis()
            ),
        }
    }
}

impl GameActor {
    /// Over by its rules, cancelled or abandoned.
    pub(super) fn is_over(&self) -> bool {
        self.game.is_over() || self.ended.is_some()
    }

    /// "finished", "cancelled" or "abandoned", for messages.
    pub(super) fn over_word(&self) -> &'static str {
        match self.ended {
            Some(Reason::Cancelled) => "cancelled",
            Some(Reason::Abandoned) => "abandoned",
            _ => "finished",
        }
    }

    pub(super) fn cancel(&mut self, detail: String, reply: Reply<pb::CancelGameResponse>) {
        if self.ended == Some(Reason::Cancelled) {
            // A retry: the first answer again.
            let seq = self.last_seq();
            return self.answer_when_durable(seq, reply, |_| pb::CancelGameResponse { seq });
        }
        if self.is_over() {
            let error = HostError::NotNow(format!(
                "game {} is already over ({}): only a waiting or running game can be cancelled",
                self.id,
                self.over_word()
            ));
            return drop(reply.send(Err(error)));
        }
        let detail = if detail.is_empty() {
            "cancelled by an organizer".to_string()
        } else {
            detail
        };
        let record = self.end(Reason::Cancelled, detail);
        let response = pb::CancelGameResponse { seq: record.seq };
        self.submit(vec![record], PendingReply::Cancel(vec![reply], response));
    }

    /// Closes the log with an `ended` record.
    fn end(&mut self, reason: Reason, detail: String) -> pb::LogRecord {
        tracing::info!(game = %self.id, ?reason, %detail, "game ended");
        self.ended = Some(reason);
        self.timers.phase = None;
        self.push_record(Record::Ended(pb::Ended {
            reason: reason as i32,
            detail,
        }))
    }

    /// When the game is abandoned if nothing changes, and why: seats still free after
    /// `fill_timeout` from creation, or (no engine clock running) no record for `idle_timeout`.
    /// Asked on every turn of the actor's loop, so the reason's text is written only when the
    /// deadline fires (`Abandon::detail`).
    pub(super) fn abandon_at(&self) -> Option<(i64, Abandon)> {
        if self.is_over() || self.durability.broken.is_some() {
            return None;
        }
        let since = |unix: i64, after: Duration| {
            unix.saturating_add(i64::try_from(after.as_millis()).unwrap_or(i64::MAX))
        };
        // A deadline set by records from before a rebuild gets the host's gap back.
        let resumed = |at: i64| match self.timers.resumed {
            Some(r) if self.records.len() <= r.through_seq => r.moved(at),
            Some(r) if self.seating.start_seq.is_none() => r.moved(at),
            _ => at,
        };
        if self.seating.start_seq.is_none() {
            let created = self.records.first_unix_ms()?;
            let after = self.settings.fill_timeout;
            return Some((resumed(since(created, after)), Abandon::Unfilled(after)));
        }
        // A game with a running clock (phase deadline or seat clocks) cannot stall: no idle
        // timeout.
        if self.timers.phase.is_some() || self.timers.clocks.is_some() {
            return None;
        }
        let last = self.records.last_unix_ms()?;
        let after = self.settings.idle_timeout;
        Some((resumed(since(last, after)), Abandon::Idle(after)))
    }

    /// The tokio instant of a wall-clock time (now if it is past).
    pub(super) fn instant_of(unix: i64) -> Instant {
        // Capped (about 35 years) so that the instant cannot overflow.
        let wait = u64::try_from(unix.saturating_sub(unix_ms()))
            .unwrap_or(0)
            .min(1 << 40);
        Instant::now() + Duration::from_millis(wait)
    }

    pub(super) fn on_abandon_deadline(&mut self) {
        let Some((at, why)) = self.abandon_at() else {
            return;
        };
        if at > unix_ms() {
            return;
        }
        let record = self.end(Reason::Abandoned, why.detail());
        self.submit(vec![record], PendingReply::None);
    }
}
