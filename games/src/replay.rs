//! Rebuilding a game from its log: the server does it at restart, `gangs replay --verify` does
//! it from `GetLog`. Replaying the `started`, `acted`, `timed_out` and `expired` records
//! through the engine must reproduce every logged event byte for byte; a mismatch names the
//! game and the seq. A `timed_out` record must also be allowed by the seat's clock, fed with
//! the records' own times (so a restarted server re-arms the same wall-clock deadlines).

use crate::clock::{self, Clocks};
use crate::skim::LoggedRecord;
use crate::{new_game, EncodedEvents, Game, Refusal, Step};
use bytes::Bytes;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use prost::Message;

/// A log that does not replay: which record, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    pub seq: u64,
    pub message: String,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seq {}: {}", self.seq, self.message)
    }
}

impl std::error::Error for ReplayError {}

/// Applies records one by one, checking each against the engine.
pub struct Replayer {
    game: Option<Box<dyn Game>>,
    /// Per seat: joined. A seat joins once; every seat joins before `started`.
    seats: Vec<bool>,
    /// The engine's events encoded, to compare with stored ones (reused: no allocation per
    /// event).
    encoded: EncodedEvents,
    started: bool,
    last_seq: u64,
    /// Set by an `ended` record (cancelled, abandoned): nothing may follow it.
    ended: Option<pb::ended::Reason>,
    /// The seats' clocks (games with `turn_ms`), fed with every record.
    clocks: Option<Clocks>,
    /// The engine's current phase id and when it opened (unix ms of the record that opened
    /// it): a phase deadline is counted from there, also after a restart.
    phase: (u64, i64),
}

impl Default for Replayer {
    fn default() -> Self {
        Self::new()
    }
}

impl Replayer {
    pub fn new() -> Self {
        Replayer {
            game: None,
            seats: Vec::new(),
            encoded: EncodedEvents::default(),
            started: false,
            last_seq: 0,
            ended: None,
            clocks: None,
            phase: (0, 0),
        }
    }

    /// The seats' clocks after the last record (`None` without `turn_ms`).
    pub fn clocks(&self) -> Option<&Clocks> {
        self.clocks.as_ref()
    }

    /// When the current timed phase opened (unix ms), with its phase id.
    pub fn phase_opened(&self) -> (u64, i64) {
        self.phase
    }

    /// The game as rebuilt so far (`None` before the `created` record).
    pub fn game(&self) -> Option<&dyn Game> {
        self.game.as_deref()
    }

    pub fn into_game(self) -> Option<Box<dyn Game>> {
        self.game
    }

    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Why the game ended other than by its rules, if an `ended` record closed the log.
    pub fn ended(&self) -> Option<pb::ended::Reason> {
        self.ended
    }

    /// Applies one record. Seqs must follow each other from 1.
    pub fn apply(&mut self, record: &pb::LogRecord) -> Result<(), ReplayError> {
        self.apply_with(record, None)
    }

    /// Applies one record, whole or skimmed: a skimmed record's events are checked as their
    /// stored bytes against the engine's events encoded (decoded only when the bytes differ,
    /// to tell an equal event written differently from a different one).
    pub fn apply_logged(&mut self, logged: &LoggedRecord) -> Result<(), ReplayError> {
        self.apply_with(&logged.record, logged.stored_events.as_deref())
    }

    fn apply_with(
        &mut self,
        record: &pb::LogRecord,
        stored_events: Option<&[Bytes]>,
    ) -> Result<(), ReplayError> {
        let seq = record.seq;
        let fail = |message: String| ReplayError { seq, message };
        if seq != self.last_seq + 1 {
            return Err(fail(format!(
                "expected seq {}, found {seq}",
                self.last_seq + 1
            )));
        }
        if self.ended.is_some() {
            return Err(fail("a record after the `ended` record".into()));
        }
        match &record.record {
            None => return Err(fail("empty record".into())),
            Some(Record::Ladder(_)) => {
                return Err(fail("a ladder's record in a game's log".into()))
            }
            Some(Record::Created(created)) => {
                if self.game.is_some() {
                    return Err(fail("a second `created` record".into()));
                }
                let seed = created.seed.ok_or_else(|| {
                    fail("the seed is hidden (the game is still running): only a finished game's log replays".into())
                })?;
                let game = new_game(
                    &created.kind,
                    created.options.as_ref(),
                    seed,
                    created.preset.as_ref(),
                )
                .map_err(|e| fail(format!("cannot create the game: {e}")))?;
                self.seats = vec![false; game.players()];
                self.game = Some(game);
            }
            Some(Record::Joined(joined)) => self.join(joined).map_err(fail)?,
            Some(Record::Started(started)) => {
                if self.game.is_none() {
                    return Err(fail("start before `created`".into()));
                }
                if self.started {
                    return Err(fail("a second `started` record".into()));
                }
                let taken = self.seats.iter().filter(|&&t| t).count();
                if taken != self.seats.len() {
                    return Err(fail(format!(
                        "`started` with {taken} of {} seats taken",
                        self.seats.len()
                    )));
                }
                self.started = true;
                self.replay_step(Step::Start, &started.events, stored_events, |e| {
                    format!("the engine refuses to start: {e}")
                })
                .map_err(fail)?;
            }
            Some(Record::Acted(acted)) => {
                if self.game.is_none() {
                    return Err(fail("action before `created`".into()));
                }
                let action = acted
                    .action
                    .as_ref()
                    .ok_or_else(|| fail("action record without action".into()))?;
                let seat = acted.seat as usize;
                self.replay_step(
                    Step::Act { seat, action },
                    &acted.events,
                    stored_events,
                    |e| format!("the engine refuses the logged action of seat {seat}: {e}"),
                )
                .map_err(fail)?;
            }
            Some(Record::Expired(expired)) => {
                if self.game.is_none() {
                    return Err(fail("deadline before `created`".into()));
                }
                self.replay_step(Step::Expire, &expired.events, stored_events, |e| {
                    format!("the engine refuses the logged deadline: {e}")
                })
                .map_err(fail)?;
            }
            Some(Record::TimedOut(timed_out)) => {
                let (unix_ms, stored) = (record.unix_ms, stored_events);
                self.replay_timeout(timed_out, unix_ms, stored)
                    .map_err(fail)?;
            }
            Some(Record::Ended(ended)) => {
                let game = self
                    .game
                    .as_ref()
                    .ok_or_else(|| fail("end before `created`".into()))?;
                if game.is_over() {
                    return Err(fail("an `ended` record after the game finished".into()));
                }
                self.ended = Some(ended.reason());
            }
        }
        self.last_seq = seq;
        self.follow_time(record);
        Ok(())
    }

    /// A seat joins: once, in range, before the start.
    fn join(&mut self, joined: &pb::Joined) -> Result<(), String> {
        let game = self.game.as_ref().ok_or("join before `created`")?;
        if joined.seat as usize >= game.players() {
            return Err(format!(
                "join of seat {} in a {}-seat game",
                joined.seat,
                game.players()
            ));
        }
        let seat = joined.seat as usize;
        if self.seats[seat] {
            return Err(format!("seat {seat} joins twice"));
        }
        if self.started {
            return Err(format!("seat {seat} joins after `started`"));
        }
        self.seats[seat] = true;
        Ok(())
    }

    /// A seat's default action played for it: due by its clock, or early with a cause (a
    /// hosted bot's failed decision), and exactly its default.
    fn replay_timeout(
        &mut self,
        timed_out: &pb::TimedOut,
        unix_ms: i64,
        stored_events: Option<&[Bytes]>,
    ) -> Result<(), String> {
        let game = self.game.as_mut().ok_or("timeout before `created`")?;
        let seat = timed_out.seat as usize;
        let clocks = self
            .clocks
            .as_ref()
            .ok_or("a timeout in a game without clocks (turn_ms)")?;
        // A hosted bot's failed decision (its `cause`: fuel, memory, trap, bad output)
        // plays the seat's default as soon as the module fails, before the deadline;
        // only a timeout without a cause is the clock's and must be due.
        let early_by_failure = !timed_out.cause.is_empty();
        if !early_by_failure && !clocks.is_due(seat, unix_ms) {
            return Err(format!(
                "seat {seat} timed out before its clock ran out (deadline {:?}, logged at {})",
                clocks.deadline_of(seat),
                unix_ms
            ));
        }
        let default = game.default_action(seat);
        if timed_out.action.is_none() || timed_out.action != default {
            return Err(format!(
                "the action played for seat {seat} is not its default action"
            ));
        }
        let action = timed_out.action.as_ref().expect("checked above");
        let logged = &timed_out.events;
        self.replay_step(Step::Act { seat, action }, logged, stored_events, |e| {
            format!("the engine refuses the default action of seat {seat}: {e}")
        })
    }

    /// Runs `step` on the game (which the caller found) and checks its events against the
    /// logged ones: the stored bytes when the record was skimmed (the engine's events written
    /// as bytes, never built as messages), else the record's decoded events. `refused` words
    /// what the engine refused.
    fn replay_step(
        &mut self,
        step: Step<'_>,
        logged: &[pb::GameEvent],
        stored: Option<&[Bytes]>,
        refused: impl FnOnce(Refusal) -> String,
    ) -> Result<(), String> {
        let game = self
            .game
            .as_mut()
            .expect("the caller checked that the game exists");
        if let Some(stored) = stored {
            game.step_encoded(step, &mut self.encoded)
                .map_err(refused)?;
            return check_encoded(stored, &self.encoded);
        }
        let replayed = match step {
            Step::Start => Ok(game.start()),
            Step::Act { seat, action } => game.act(seat, action),
            Step::Expire => game.expire(),
        }
        .map_err(refused)?;
        compare(logged, &replayed)
    }

    /// Feeds the clocks and notes a newly opened phase, after `record` was applied.
    fn follow_time(&mut self, record: &pb::LogRecord) {
        let Some(game) = self.game.as_deref() else {
            return;
        };
        if matches!(record.record, Some(Record::Created(_))) {
            self.clocks = Clocks::of(game);
        }
        let running = self.started && self.ended.is_none();
        if let Some(clocks) = &mut self.clocks {
            clocks.feed(record, &clock::awaited(game, running));
        }
        let phase_id = game.phase_id();
        if phase_id != self.phase.0 {
            self.phase = (phase_id, record.unix_ms);
        }
    }
}

/// Checks the engine's encoded events against a record's stored ones, byte for byte.
fn check_encoded(stored: &[Bytes], replayed: &EncodedEvents) -> Result<(), String> {
    if stored.len() != replayed.len() {
        return Err(count_differs(stored.len(), replayed.len()));
    }
    for (i, (bytes, ours)) in stored.iter().zip(replayed.iter()).enumerate() {
        if bytes[..] != *ours {
            // Not the same bytes: maybe the same event written otherwise (fields in another
            // order, an older writer); compared as messages, as a whole record would be.
            let logged = pb::GameEvent::decode(bytes.clone())
                .map_err(|e| format!("event {i} is undecodable: {e}"))?;
            let replayed =
                pb::GameEvent::decode(ours).expect("the engine's events encode as `GameEvent`s");
            compare_one(i, &logged, &replayed)?;
        }
    }
    Ok(())
}

fn count_differs(logged: usize, replayed: usize) -> String {
    format!("the log holds {logged} events, the engine produced {replayed}")
}

fn compare(logged: &[pb::GameEvent], replayed: &[pb::GameEvent]) -> Result<(), String> {
    if logged.len() != replayed.len() {
        return Err(count_differs(logged.len(), replayed.len()));
    }
    for (i, (a, b)) in logged.iter().zip(replayed).enumerate() {
        compare_one(i, a, b)?;
    }
    Ok(())
}

fn compare_one(i: usize, logged: &pb::GameEvent, replayed: &pb::GameEvent) -> Result<(), String> {
    // Equal messages first (no allocation); else their encodings, which stay equal where the
    // messages' `==` is too strict (a NaN, a map's order).
    if logged != replayed && logged.encode_to_vec() != replayed.encode_to_vec() {
        return Err(format!(
            "event {i} differs: logged `{}`, engine `{}`",
            crate::describe_event(logged),
            crate::describe_event(replayed)
        ));
    }
    Ok(())
}

/// Replays a whole log; returns the rebuilt game.
pub fn replay<'a>(
    records: impl IntoIterator<Item = &'a pb::LogRecord>,
) -> Result<Replayer, ReplayError> {
    let mut replayer = Replayer::new();
    for record in records {
        replayer.apply(record)?;
    }
    Ok(replayer)
}
