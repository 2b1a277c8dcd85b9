//! A ladder game's seats watched as it runs (`Referee`): what the ladder does about a seat that
//! is not there happens at once, not after the game. And the words of a pause: what the bot did
//! (a hosted module's cause, a connected seat's refused call) and how it comes back.

use super::Ladder;
use crate::ladder::matchmaker::seating;
use gangs_proto::v1 as pb;
use pb::ladder_event::paused::Reason;
use pb::log_record::Record;
use std::sync::Arc;

/// A pause's detail: the seat's first decision in `game_id` timed out; `cause` is the failure
/// of a hosted bot's module (the timeout's logged cause), empty for a clock's timeout. A hosted
/// bot's author reads what its module did and how to come back, not advice on watching a
/// seat and queueing, which the server does for it.
pub(super) fn no_first_action(game_id: &str, cause: &str, refused: Option<&str>) -> String {
    if let (true, Some(refused)) = (cause.is_empty(), refused) {
        format!(
            "its first decision in game {game_id} timed out before it acted, so the game was aborted and not rated: its seat's calls were refused ({refused}); fix its credentials (its bot key, or the seat's token from `matched`), then call Queue again to play on"
        )
    } else if cause.is_empty() {
        format!(
            "its first decision in game {game_id} timed out before it acted, so the game was aborted and not rated: check that the bot watches and acts with the seat's token, then call Queue again to play on"
        )
    } else {
        format!(
            "its module failed its first decision in game {game_id} ({cause}), so its seat played the default and the game was aborted and not rated: submit a fixed version, or an admin resumes this one (gangs ladder pause --resume)"
        )
    }
}

/// The cause logged with seat `seat`'s first timeout in `log` (empty: a clock's, or none).
pub(super) fn first_timeout_cause(log: &[pb::LogRecord], seat: usize) -> String {
    timeout_causes(log.iter(), seat)
}

/// The cause logged with seat `seat`'s last timeout in `log` (empty: a clock's, or none).
pub(super) fn last_timeout_cause(log: &[pb::LogRecord], seat: usize) -> String {
    timeout_causes(log.iter().rev(), seat)
}

/// The cause of the first of `records` that is a timeout of `seat`.
pub(super) fn timeout_causes<'a>(
    mut records: impl Iterator<Item = &'a pb::LogRecord>,
    seat: usize,
) -> String {
    records
        .find_map(|record| match &record.record {
            Some(Record::TimedOut(t)) if t.seat as usize == seat => Some(t.cause.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// A pause's detail: `run` timeouts in a row; `cause` is the last one's when a hosted bot's
/// module failed (empty for a clock's timeout), whose author reads what the module did and how
/// to come back rather than advice on queueing, which the server does for it.
pub(super) fn too_many_timeouts(
    run: u32,
    absent_after: u32,
    game_id: &str,
    cause: &str,
    refused: Option<&str>,
) -> String {
    if let (true, Some(refused)) = (cause.is_empty(), refused) {
        format!(
            "timed out {run} times in a row (the ladder pauses a bot after {absent_after}; game {game_id}): its seat's calls were refused ({refused}); fix its credentials, then call Queue again to play on"
        )
    } else if cause.is_empty() {
        format!(
            "timed out {run} times in a row (the ladder pauses a bot after {absent_after}; game {game_id}): call Queue again to play on"
        )
    } else {
        format!(
            "its module failed {run} decisions in a row in game {game_id}, the last with {cause} (the ladder pauses a bot after {absent_after}): submit a fixed version, or an admin resumes this one (gangs ladder pause --resume)"
        )
    }
}

/// Watches a ladder game's seats as it runs, so that what the ladder does about a seat that is
/// not there happens at once, not after the game: a seat whose first decision timed out before
/// it acted aborts the game (cancelled; void from its log) and pauses its bot; a seat that
/// turns absent (`absent_after` timeouts in a row) pauses its bot, and plays on on its clock.
pub(super) struct Referee {
    no: u64,
    game: u32,
    /// Per seat: whether its first own record (acted or timed out) was seen.
    first_seen: Vec<bool>,
    /// Per seat: whether its bot was paused from this game already.
    pub(super) paused: Vec<bool>,
    /// Per seat: whether its bot is hosted (its timeouts by the clock are the host's).
    hosted: Vec<bool>,
    aborted: bool,
}

impl Referee {
    pub(super) fn new(no: u64, game: u32, hosted: Vec<bool>) -> Referee {
        let players = hosted.len();
        Referee {
            no,
            game,
            first_seen: vec![false; players],
            paused: vec![false; players],
            hosted,
            aborted: false,
        }
    }

    /// Looks at one update of the game `game_id`.
    pub(super) async fn saw(&mut self, ladder: &Arc<Ladder>, game_id: &str, update: &pb::Update) {
        if update.status != pb::GameStatus::Running as i32 {
            return;
        }
        if let Some(seat) = update.actor.map(|s| s as usize) {
            if self.first_seen.get(seat) == Some(&false) {
                self.first_seen[seat] = true;
                if let Some(timed_out) = self
                    .first_record_timed_out(ladder, game_id, update.seq)
                    .await
                {
                    // A hosted seat's clock ran out: the host did not run its decision in
                    // time, which voids the game without pausing the bot.
                    let overload =
                        self.hosted.get(seat) == Some(&true) && timed_out.cause.is_empty();
                    self.abort(ladder, game_id, seat, !overload, &timed_out.cause)
                        .await;
                }
            }
        }
        for clock in update.clocks.iter().filter(|c| c.absent) {
            let seat = clock.seat as usize;
            // A hosted seat's run of timeouts may be the host's (its clock ran out while the
            // decision waited): the game's result pauses it from its own timeouts alone.
            if self.hosted.get(seat) == Some(&true) {
                continue;
            }
            if self.paused.get(seat) == Some(&false) {
                self.paused[seat] = true;
                let absent_after = ladder.state.lock().await.info.absent_after;
                let refused = self.refusal(ladder, game_id, seat).await;
                let detail =
                    too_many_timeouts(absent_after, absent_after, game_id, "", refused.as_deref());
                self.pause(ladder, seat, Reason::Timeouts, detail).await;
            }
        }
    }

    /// The record at `seq` if it is a timeout (read from the log: an update does not say).
    async fn first_record_timed_out(
        &self,
        ladder: &Ladder,
        game_id: &str,
        seq: u64,
    ) -> Option<pb::TimedOut> {
        let request = pb::GetLogRequest {
            game_id: game_id.to_string(),
            from_seq: seq.saturating_sub(1),
        };
        let records = ladder
            .ctx
            .games
            .get_log_as(ladder.principal(), request)
            .await
            .ok()?;
        match records.into_iter().next() {
            Some(pb::LogRecord {
                seq: at,
                record: Some(Record::TimedOut(timed_out)),
                ..
            }) if at == seq => Some(timed_out),
            _ => None,
        }
    }

    /// Seat `seat` was not there for its first decision: the game is cancelled (the result
    /// record makes it void from its log) and, when the bot is to blame (`pause`), the seat's
    /// bot paused, with the timeout's `cause` (a hosted module's failure) in the detail.
    async fn abort(
        &mut self,
        ladder: &Arc<Ladder>,
        game_id: &str,
        seat: usize,
        pause: bool,
        cause: &str,
    ) {
        if !std::mem::replace(&mut self.aborted, true) {
            let request = pb::CancelGameRequest {
                game_id: game_id.to_string(),
                reason: format!(
                    "aborted by the ladder: seat {seat} timed out on its first decision"
                ),
            };
            let cancelled = ladder.ctx.games.cancel_game_as(ladder.principal(), request);
            if let Err(status) = cancelled.await {
                tracing::debug!(ladder = %ladder.name, game = %game_id, "aborting a ladder game: {}", status.message());
            }
        }
        if pause && self.paused.get(seat) == Some(&false) {
            self.paused[seat] = true;
            let refused = self.refusal(ladder, game_id, seat).await;
            let detail = no_first_action(game_id, cause, refused.as_deref());
            self.pause(ladder, seat, Reason::NoFirstAction, detail)
                .await;
        }
    }

    /// The last refusal of seat `seat`'s calls for its credentials, in words, if one is kept.
    async fn refusal(&self, ladder: &Ladder, game_id: &str, seat: usize) -> Option<String> {
        let token = {
            let state = ladder.state.lock().await;
            let m = state.matches.get(&self.no)?;
            m.games.get(self.game as usize)?.tokens.get(seat)?.clone()
        };
        ladder.ctx.games.front().refusals().of_seat(game_id, &token)
    }

    /// Pauses the bot at `seat` for `reason`, unless it is paused already.
    async fn pause(&self, ladder: &Arc<Ladder>, seat: usize, reason: Reason, detail: String) {
        let mut state = ladder.state.lock().await;
        let Some(m) = state.matches.get(&self.no) else {
            return;
        };
        let Some(&entry) = seating(&m.entries, self.no, self.game as usize).get(seat) else {
            return;
        };
        if state.entries[entry].paused.is_some() {
            return;
        }
        match ladder
            .set_paused(&mut state, entry, reason, detail.clone(), false)
            .await
        {
            Ok(()) => {
                tracing::info!(ladder = %ladder.name, bot = %state.entries[entry].name(), "paused: {detail}")
            }
            Err(status) => {
                tracing::warn!(ladder = %ladder.name, "pausing a bot: {}", status.message())
            }
        }
    }
}
