//! Time: the engine's phase deadline (armed when a timed phase opens, fired as an `expired`
//! record), the seats' clocks (a seat whose clock ran out gets its default action played, a
//! `timed_out` record), and the wall clock the log and the views use. Every deadline is a
//! wall-clock time computed from the log's record times. The host's own gaps are not the
//! players': a game rebuilt from its log (a restart, a game changing hands on a cluster) gives
//! every deadline the time it had left at the log's last record, counted from the rebuild plus
//! a reconnect grace (`Resumed`), so the log's deadlines are the earliest the host may use and
//! `gangs replay --verify` still holds.

use super::{durability::PendingReply, GameActor};
use gangs_games::clock::Clocks;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use tokio::time::Instant;

pub(super) struct Timer {
    pub(super) phase_id: u64,
    pub(super) at: Instant,
    pub(super) unix_ms: i64,
}

/// Now, in unix ms: the time the log's records and the views carry, and every deadline is
/// computed from. Read from tokio's clock, anchored to the system's wall clock the first time
/// it is read, so that a deadline and the timer that sleeps until it keep one clock: the
/// monotonic one (a wall clock stepped back or forth while the server runs moves no deadline),
/// and in tests tokio's paused time, which moves both at once.
pub fn unix_ms() -> i64 {
    static ANCHOR: std::sync::OnceLock<(i64, std::time::Instant)> = std::sync::OnceLock::new();
    let (wall, at) = ANCHOR.get_or_init(|| {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        (wall, std::time::Instant::now())
    });
    // Whole milliseconds since the anchor, rounded down on both sides of it: tokio's clock may
    // read a little before the anchor (a paused clock stands still while the instant that made
    // the anchor was read). Rounding a time before it up to the anchor would make a deadline
    // computed from it (`instant_of`) fall up to a millisecond before the time it is due.
    let now = Instant::now().into_std();
    let since_ms = match now.checked_duration_since(*at) {
        Some(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        None => -i64::try_from(at.duration_since(now).as_nanos().div_ceil(1_000_000))
            .unwrap_or(i64::MAX),
    };
    wall.saturating_add(since_ms)
}

pub(super) async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The least reconnect grace after the host resumes a game, ms (a game with seat clocks gets
/// at least its `turn_ms`).
pub const RECONNECT_GRACE_MS: u64 = 10_000;

/// When the host resumed a game from its log, and the grace it gives the players to come back.
#[derive(Clone, Copy, Debug)]
pub(super) struct Resumed {
    /// The time of the log's last record when it was rebuilt (the last durable record).
    pub(super) last_unix_ms: i64,
    /// The seq of that record: deadlines set by later records are the game's own again.
    pub(super) through_seq: u64,
    /// When the game was rebuilt.
    pub(super) at_unix_ms: i64,
    pub(super) grace_ms: u64,
}

impl Resumed {
    /// A deadline the log set at `at`: the time it had left at the last record, counted from
    /// the rebuild plus the grace. Never earlier than `at`.
    pub(super) fn moved(&self, at: i64) -> i64 {
        let left = at.saturating_sub(self.last_unix_ms).max(0);
        let grace = i64::try_from(self.grace_ms).unwrap_or(i64::MAX);
        self.at_unix_ms
            .saturating_add(grace)
            .saturating_add(left)
            .max(at)
    }
}

/// The timers' part of a game's state: the engine's phase deadline and the seats' clocks.
#[derive(Default)]
pub(super) struct Timers {
    /// The engine's phase deadline, when one is open.
    pub(super) phase: Option<Timer>,
    /// The seats' clocks (games with `turn_ms`), fed with every record as replay feeds them.
    pub(super) clocks: Option<Clocks>,
    /// Set when the game was rebuilt from its log while running or waiting for seats.
    pub(super) resumed: Option<Resumed>,
}

impl GameActor {
    pub(super) fn on_deadline(&mut self) {
        self.timers.phase = None;
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

    /// When the next seat's clock runs out (unix ms), if a clock runs.
    pub(super) fn next_clock_deadline(&self) -> Option<i64> {
        if self.is_over() || self.durability.broken.is_some() {
            return None;
        }
        self.timers
            .clocks
            .as_ref()?
            .next_deadline()
            .map(|d| d.at_unix_ms)
    }

    /// A seat's clock ran out: its default action is played for it and logged as `timed_out`.
    pub(super) fn on_clock_deadline(&mut self) {
        let Some(due) = self.timers.clocks.as_ref().and_then(|c| c.next_deadline()) else {
            return;
        };
        let now = unix_ms();
        if now < due.at_unix_ms || self.is_over() || self.durability.broken.is_some() {
            // Woken early (the wall clock moved): the loop arms the timer again.
            return;
        }
        if let Err(e) = self.time_out(due.seat, now, String::new()) {
            tracing::error!(game = %self.id, seat = due.seat, "{e}: clocks stopped");
            self.timers.clocks = None;
        }
    }

    /// Plays `seat`'s default action for it, logged as `timed_out` with `cause` (empty: its
    /// clock ran out; else why a hosted bot's decision failed). An error when the engine
    /// gives the seat no default action or refuses it (the engine contract gives every
    /// awaited seat one, tested in the rules crate).
    pub(super) fn time_out(&mut self, seat: usize, now: i64, cause: String) -> Result<(), String> {
        let (Some(action), Some(decision)) =
            (self.game.default_action(seat), self.game.decision(seat))
        else {
            return Err(format!("no default action for seat {seat}"));
        };
        let (used_ms, absent) = match self.timers.clocks.as_ref() {
            Some(clocks) => (clocks.open_ms(seat, now), clocks.is_absent(seat)),
            None => (0, false),
        };
        let events = self
            .game
            .act(seat, &action)
            .map_err(|e| format!("the engine refused seat {seat}'s default action: {e}"))?;
        tracing::info!(game = %self.id, seat, decision, used_ms, absent, cause, "seat timed out: default action played");
        let record = self.push_record(Record::TimedOut(pb::TimedOut {
            seat: seat as u32,
            decision: decision.to_string(),
            action: Some(action),
            events,
            used_ms,
            absent,
            cause,
        }));
        self.submit(vec![record], PendingReply::None);
        Ok(())
    }

    /// After a rebuild: a phase deadline counts from when its phase opened (the log's time),
    /// with the time the host was away given back (`Resumed`).
    pub(super) fn rearm_phase_timer(&mut self, phase_id: u64, opened_unix_ms: i64) {
        let Some(ms) = self.game.phase_deadline_ms() else {
            return;
        };
        let resumed = self.timers.resumed;
        if let Some(timer) = &mut self.timers.phase {
            if timer.phase_id == phase_id {
                let at = opened_unix_ms.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX));
                let at = resumed.map_or(at, |r| r.moved(at));
                timer.unix_ms = at;
                timer.at = GameActor::instant_of(at);
            }
        }
    }

    /// The game was rebuilt from its log at `now`: if it waits for seats or players, the host's
    /// gap (down, or the game on another node) is given back to every deadline, plus a reconnect
    /// grace of max(`turn_ms`, 10 s) before anyone can time out.
    pub(super) fn resume_after_gap(&mut self, now: i64) {
        if self.is_over() {
            return;
        }
        let Some(last_unix_ms) = self.records.last_unix_ms() else {
            return;
        };
        let turn_ms = self
            .timers
            .clocks
            .as_ref()
            .map_or(0, |c| c.settings().turn_ms);
        let resumed = Resumed {
            last_unix_ms,
            through_seq: self.records.len(),
            at_unix_ms: now,
            grace_ms: turn_ms.max(RECONNECT_GRACE_MS),
        };
        if let Some(clocks) = &mut self.timers.clocks {
            clocks.resume(|at| resumed.moved(at));
        }
        self.timers.resumed = Some(resumed);
    }

    /// Starts the phase timer when the engine opened a new timed phase.
    pub(super) fn arm_timer(&mut self) {
        if self.is_over() || self.seating.start_seq.is_none() {
            self.timers.phase = None;
            return;
        }
        match self.game.phase_deadline_ms() {
            None => self.timers.phase = None,
            Some(ms) => {
                let phase_id = self.game.phase_id();
                if self.timers.phase.as_ref().map(|t| t.phase_id) != Some(phase_id) {
                    // Saturating: the options bound `ms`, but a deadline must never wrap
                    // (`instant_of` caps the wait the same way).
                    let at = unix_ms().saturating_add(i64::try_from(ms).unwrap_or(i64::MAX));
                    self.timers.phase = Some(Timer {
                        phase_id,
                        at: GameActor::instant_of(at),
                        unix_ms: at,
                    });
                }
            }
        }
    }
}
