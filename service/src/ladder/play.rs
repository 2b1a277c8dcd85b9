//! One game of a ladder match, from creation to rating, through the host's own typed API
//! (`GamesService::create_game_as` and the others, as "the ladder NAME"), which admits,
//! bounds and routes it like any client's call: create the game (clocks on, seats reserved so nobody else can take
//! them), join every seat for its bot with the seat's invitation, tell each bot (`matched`),
//! watch the game as a spectator until it is over (pausing at once a bot that is not there:
//! its first decision timed out, which aborts the game, or its seat turned absent), read its
//! log for the seats' timeouts, and log the result with the rating changes, or void with the
//! reason when the game was not played (`void_reason`), then `finished` to each bot.
//!
//! Every step can be retried: the game's `create_id` and each seat's `join_id` are derived from
//! the ladder, the match and the game, so a retry or a restart finds the same game and seats.

use super::records::{seat_outcome, LadderState, Match};
use super::referee::{
    first_timeout_cause, last_timeout_cause, no_first_action, too_many_timeouts, Referee,
};
use super::{rating, Ladder};
use crate::error::HostError;
use crate::ladder::matchmaker::seating;
use gangs_proto::v1 as pb;
use pb::ladder_event::{paused::Reason, Event};
use pb::ladder_record::Record as Lr;
use pb::log_record::Record;
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::StreamExt;

/// Waits between retries of a call the games service could not answer now.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MOST: Duration = Duration::from_secs(5);

/// An error worth retrying (the server restarts, a limit frees up, a game is reloaded).
fn transient(error: &HostError) -> bool {
    error.is_transient()
}

/// Calls `call` until it answers or fails for good; None when the server stops meanwhile.
async fn retried<T, F, Fut>(
    ladder: &Ladder,
    what: &str,
    mut call: F,
) -> Option<Result<T, HostError>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, HostError>>,
{
    let mut pause = RETRY_FIRST;
    loop {
        if ladder.stopping() {
            return None;
        }
        match call().await {
            Err(status) if transient(&status) => {
                tracing::debug!(ladder = %ladder.name, "{what}: {} (retrying)", status.message());
                if !ladder.pause(pause).await {
                    return None;
                }
                pause = (pause * 2).min(RETRY_MOST);
            }
            answer => return Some(answer),
        }
    }
}

/// The `matched` event of game `game` of match `m` for entry `entry`, once its seat is known.
pub fn matched_event(state: &LadderState, m: &Match, game: usize, entry: usize) -> Option<Event> {
    let slot = m.games.get(game)?;
    let seats = seating(&m.entries, m.no, game);
    let seat = seats.iter().position(|&e| e == entry)?;
    Some(Event::Matched(pb::ladder_event::Matched {
        game_id: slot.game_id.clone()?,
        seat: seat as u32,
        token: slot.tokens.get(seat)?.clone(),
        kind: state.info.kind.clone(),
        options: state.info.options,
        players: state.info.players,
        names: seats.iter().map(|&e| state.entries[e].name()).collect(),
    }))
}

/// The `create_id` of game `game` of match `no` of the ladder logged as `log_id`: a retry or a
/// restart finds the same game (its id derives from it).
pub fn create_id(log_id: &str, no: u64, game: u32) -> String {
    format!("ladder:{log_id}:{no}:{game}")
}

/// Plays game `game` of match `no` to its rating (or until the server stops).
pub async fn run_game(ladder: Arc<Ladder>, no: u64, game: u32) {
    let Some(answer) = seat_game(&ladder, no, game).await else {
        return;
    };
    let (game_id, from_seq) = match answer {
        Ok(seated) => seated,
        Err(status) => {
            // The game cannot be made (its options are refused now): the match is void.
            tracing::error!(ladder = %ladder.name, r#match = no, game, "a ladder game could not be set up: {}", status.message());
            return record_result(&ladder, no, game, String::new(), None, Vec::new(), &[]).await;
        }
    };
    let hosted = {
        let state = ladder.state.lock().await;
        match state.matches.get(&no) {
            Some(m) => hosted_seats(&state, m, game),
            None => vec![false; state.info.players as usize],
        }
    };
    let mut referee = Referee::new(no, game, hosted);
    let Some(over) = watch_to_end(&ladder, &game_id, from_seq, &mut referee).await else {
        return;
    };
    let log = match retried(&ladder, "reading a ladder game's log", || {
        let request = pb::GetLogRequest {
            game_id: game_id.clone(),
            from_seq: 0,
        };
        ladder.ctx.games.get_log_as(ladder.principal(), request)
    })
    .await
    {
        None => return,
        Some(Ok(log)) => log,
        Some(Err(status)) => {
            tracing::error!(ladder = %ladder.name, game = %game_id, "reading the log of a ladder game: {}", status.message());
            Vec::new()
        }
    };
    let outcome = (over.status == pb::GameStatus::Finished as i32)
        .then_some(over.outcome)
        .flatten();
    record_result(&ladder, no, game, game_id, outcome, log, &referee.paused).await;
}

/// Creates the game and takes every seat; the game's id and the seq to watch from.
async fn seat_game(
    ladder: &Arc<Ladder>,
    no: u64,
    game: u32,
) -> Option<Result<(String, u64), HostError>> {
    let (log_id, info, m) = {
        let state = ladder.state.lock().await;
        let m = state.matches.get(&no)?.clone();
        (state.log_id.clone(), state.info.clone(), m)
    };
    let seats = seating(&m.entries, no, game as usize);
    let create_id = create_id(&log_id, no, game);
    let created = retried(ladder, "creating a ladder game", || {
        let request = pb::CreateGameRequest {
            kind: info.kind.clone(),
            options: info.options,
            seed: Some(m.seed),
            preset: None,
            reserve_seats: true,
            create_id: create_id.clone(),
        };
        ladder.ctx.games.create_game_as(ladder.principal(), request)
    })
    .await?;
    let created = match created {
        Ok(created) => created,
        Err(error) => return Some(Err(error)),
    };
    let names: Vec<String> = {
        let state = ladder.state.lock().await;
        seats.iter().map(|&e| state.entries[e].name()).collect()
    };
    let mut tokens = Vec::with_capacity(seats.len());
    let mut last_seq = 0;
    for (seat, name) in names.iter().enumerate() {
        let joined = retried(ladder, "taking a ladder game's seat", || {
            let request = pb::JoinGameRequest {
                game_id: created.game_id.clone(),
                seat: Some(seat as u32),
                name: name.clone(),
                join_id: format!("{create_id}:{seat}"),
                invitation: created.invitations.get(seat).cloned().unwrap_or_default(),
            };
            ladder.ctx.games.join_game_as(ladder.principal(), request)
        })
        .await?;
        match joined {
            Ok(joined) => {
                last_seq = last_seq.max(joined.seq);
                tokens.push(joined.token);
            }
            Err(error) => return Some(Err(error)),
        }
    }
    // On a cluster, a bot may call any node: the seating is published before the bots hear
    // of it (`cluster/bot_keys.rs`).
    if let Some(cluster) = ladder.cluster() {
        let seating = crate::cluster::PublishedGame {
            ladder: ladder.name.clone(),
            seats: names.iter().cloned().zip(tokens.iter().cloned()).collect(),
        };
        let published = retried(ladder, "publishing a ladder game's seating", || {
            cluster.publish_bot_game(&created.game_id, seating.clone())
        })
        .await?;
        if let Err(status) = published {
            return Some(Err(status));
        }
    }
    // Known now: the bots hear of their seats.
    {
        let mut state = ladder.state.lock().await;
        let slot = state
            .matches
            .get_mut(&no)
            .and_then(|m| m.games.get_mut(game as usize))?;
        slot.game_id = Some(created.game_id.clone());
        // Each bot's key plays its seat (`front/bots.rs`).
        for (&entry, token) in seats.iter().zip(&tokens) {
            let entry = &state.entries[entry];
            // A key replaced by a rekey plays the games matched before it to their end.
            let replaced = entry
                .replaced_keys
                .iter()
                .filter(|(_, last)| no <= *last)
                .map(|(hash, _)| hash);
            for hash in std::iter::once(&entry.key_sha256).chain(replaced) {
                ladder.ctx.games.front().bots().grant_game(
                    hash,
                    &created.game_id,
                    Some(vec![token.clone()]),
                );
            }
        }
        let slot = state
            .matches
            .get_mut(&no)
            .and_then(|m| m.games.get_mut(game as usize))?;
        slot.tokens = tokens;
        if slot.result.is_none() {
            let m = state.matches.get(&no).expect("found above").clone();
            for &entry in &seats {
                if let Some(event) = matched_event(&state, &m, game as usize, entry) {
                    ladder.send(entry, event);
                }
            }
        }
    }
    Some(Ok((created.game_id, last_seq)))
}

/// Watches the game as a spectator until an update says it is over (resuming after a
/// dropped stream); that update. None when the server stops.
async fn watch_to_end(
    ladder: &Arc<Ladder>,
    game_id: &str,
    mut from_seq: u64,
    referee: &mut Referee,
) -> Option<pb::Update> {
    let mut pause = RETRY_FIRST;
    let mut stop = ladder.stop.clone();
    loop {
        if ladder.stopping() {
            return None;
        }
        let request = pb::WatchRequest {
            game_id: game_id.to_string(),
            token: String::new(),
            from_seq,
            ..Default::default()
        };
        match ladder.ctx.games.watch_as(ladder.principal(), request).await {
            Ok(mut stream) => loop {
                let next = tokio::select! {
                    _ = stop.wait_for(|s| *s) => return None,
                    next = stream.next() => next,
                };
                match next {
                    Some(Ok(update)) => {
                        from_seq = from_seq.max(update.seq);
                        referee.saw(ladder, game_id, &update).await;
                        if pb::GameStatus::is_over_code(update.status) {
                            return Some(update);
                        }
                        pause = RETRY_FIRST;
                    }
                    Some(Err(status)) => {
                        tracing::debug!(game = %game_id, "ladder watch: {}", status.message());
                        break;
                    }
                    None => break,
                }
            },
            Err(status) if !transient(&status) => {
                tracing::error!(ladder = %ladder.name, game = %game_id, "a ladder game cannot be watched: {}", status.message());
                return None;
            }
            Err(_) => {}
        }
        if !ladder.pause(pause).await {
            return None;
        }
        pause = (pause * 2).min(RETRY_MOST);
    }
}

/// One seat's timeouts in a game, from its log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeatTimeouts {
    pub total: u32,
    /// Before the seat's first own action (all of them if it never acted).
    pub leading: u32,
    /// Since its last own action.
    pub trailing: u32,
    /// The longest run after its first own action.
    pub longest_after_acting: u32,
    pub acted: bool,
    /// A hosted seat's timeouts by the clock: the host did not run its decision in time. Not
    /// the bot's (counted in none of the above), and the game is void.
    pub host_overload: u32,
}

impl SeatTimeouts {
    /// The longest run of timeouts in a row, counting `before` from the bot's previous games.
    pub fn longest_run(&self, before: u32) -> u32 {
        (before + self.leading).max(self.longest_after_acting)
    }
}

/// Per seat of game `game` of match `m`: whether its entry is a hosted bot.
pub fn hosted_seats(state: &LadderState, m: &Match, game: u32) -> Vec<bool> {
    seating(&m.entries, m.no, game as usize)
        .iter()
        .map(|&e| state.entries[e].hosted.is_some())
        .collect()
}

/// Every seat's timeouts, from a game's log (`hosted`: per seat, whether its bot is hosted).
pub fn seat_timeouts(log: &[pb::LogRecord], hosted: &[bool]) -> Vec<SeatTimeouts> {
    let mut seats = vec![SeatTimeouts::default(); hosted.len()];
    for record in log {
        match &record.record {
            Some(Record::Acted(acted)) => {
                if let Some(s) = seats.get_mut(acted.seat as usize) {
                    s.acted = true;
                    s.trailing = 0;
                }
            }
            Some(Record::TimedOut(t)) => {
                let seat = t.seat as usize;
                if hosted.get(seat) == Some(&true) && t.cause.is_empty() {
                    if let Some(s) = seats.get_mut(seat) {
                        s.host_overload += 1;
                    }
                    continue;
                }
                if let Some(s) = seats.get_mut(seat) {
                    s.total += 1;
                    s.trailing += 1;
                    if s.acted {
                        s.longest_after_acting = s.longest_after_acting.max(s.trailing);
                    } else {
                        s.leading += 1;
                    }
                }
            }
            _ => {}
        }
    }
    seats
}

/// Why game `game` of match `m` is not rated, from the game's log (its outcome and its seats'
/// timeouts), so that `gangs ladder rerate` decides the same; None when it is rated. Only
/// played games are rated: a game in which some seat's first decision timed out before any
/// action of its own is aborted (nobody was there to play it), and so is one in which every
/// seat was absent.
pub fn void_reason(
    state: &LadderState,
    m: &Match,
    game: u32,
    set_up: bool,
    outcome: Option<&pb::Outcome>,
    timeouts: &[SeatTimeouts],
) -> Option<String> {
    if !set_up {
        return Some("the game could not be set up".into());
    }
    let seats = seating(&m.entries, m.no, game as usize);
    let name = |seat: usize| {
        seats
            .get(seat)
            .map_or_else(String::new, |&e| state.entries[e].name())
    };
    if let Some(seat) = timeouts.iter().position(|t| t.host_overload > 0) {
        return Some(format!(
            "void: the host was too loaded to run hosted bot {}'s decisions in time (not the bot's fault)",
            name(seat)
        ));
    }
    if let Some(seat) = timeouts.iter().position(|t| t.leading > 0) {
        return Some(format!(
            "aborted: seat {seat} ({}) timed out on its first decision, before any action of its own",
            name(seat)
        ));
    }
    let absent_after = state.info.absent_after;
    if absent_after > 0
        && !timeouts.is_empty()
        && timeouts.iter().all(|t| t.longest_run(0) >= absent_after)
    {
        return Some(format!(
            "aborted: every seat was absent (timed out {absent_after} times in a row)"
        ));
    }
    match outcome {
        Some(_) => None,
        None => Some("the game was cancelled or abandoned".into()),
    }
}

/// The record of game `game` of match `m` over with `outcome` (void without one, or when
/// [`void_reason`] says so) and the seats' `timeouts`; once it is the match's last result, with
/// the ratings after the whole match. Pure: the live result and `gangs ladder rerate` (from the
/// game's log) both come from here.
pub fn rate_game(
    state: &LadderState,
    m: &Match,
    game: u32,
    game_id: String,
    outcome: Option<pb::Outcome>,
    timeouts: &[SeatTimeouts],
) -> pb::ladder_record::GameRated {
    let reason = void_reason(
        state,
        m,
        game,
        !game_id.is_empty(),
        outcome.as_ref(),
        timeouts,
    );
    let mut rated = pb::ladder_record::GameRated {
        r#match: m.no,
        game,
        game_id,
        void: reason.is_some(),
        void_reason: reason.unwrap_or_default(),
        outcome,
        timeouts: timeouts.iter().map(|t| t.total).collect(),
        trailing_timeouts: timeouts
            .iter()
            .map(|t| if t.acted { t.trailing } else { t.total })
            .collect(),
        acted: timeouts.iter().map(|t| t.acted).collect(),
        ratings_after: Vec::new(),
        house_after: None,
    };
    // The match's last result rates the whole match.
    let mut with_this = m.clone();
    if let Some(slot) = with_this.games.get_mut(game as usize) {
        slot.result = Some(rated.clone());
    }
    if with_this.is_over() {
        // The ratings of the season the match was made in.
        let (before, house) = state.ratings_for(m);
        let ranks = state.match_ranks(&with_this);
        let house = state.team_game().then_some(house);
        if let Some(after) = rating::rate_match(&before, house.as_ref(), &ranks) {
            rated.ratings_after = after.entries;
            rated.house_after = after.house;
        }
    }
    rated
}

/// Logs a game's result (void without an outcome) with the rating changes once its match is
/// over, then tells the bots and pauses those that timed out too often. A game rated already
/// (by a run before a restart) is left alone.
async fn record_result(
    ladder: &Arc<Ladder>,
    no: u64,
    game: u32,
    game_id: String,
    outcome: Option<pb::Outcome>,
    log: Vec<pb::LogRecord>,
    paused_live: &[bool],
) {
    let mut state = ladder.state.lock().await;
    let Some(m) = state.matches.get(&no).cloned() else {
        return;
    };
    if m.games
        .get(game as usize)
        .is_none_or(|g| g.result.is_some())
    {
        return;
    }
    let seats = seating(&m.entries, no, game as usize);
    let timeouts = seat_timeouts(&log, &hosted_seats(&state, &m, game));
    let rated = rate_game(
        &state,
        &m,
        game,
        game_id.clone(),
        outcome.clone(),
        &timeouts,
    );
    if timeouts.iter().any(|t| t.host_overload > 0) {
        crate::metrics::ladder_overload_void(&ladder.name);
    }
    let (before, _) = state.ratings_for(&m);
    let streaks: Vec<u32> = seats
        .iter()
        .map(|&e| state.entries[e].timeouts_in_a_row)
        .collect();
    loop {
        match ladder.append(&mut state, Lr::Rated(rated.clone())).await {
            Ok(()) => break,
            Err(status) => {
                tracing::warn!(ladder = %ladder.name, game = %game_id, "rating a game: {} (retrying)", status.message());
                drop(state);
                if !ladder.pause(RETRY_MOST).await {
                    return;
                }
                state = ladder.state.lock().await;
                // Rated meanwhile (another node, or the log reloaded): nothing to do.
                if state
                    .matches
                    .get(&no)
                    .and_then(|m| m.games.get(game as usize))
                    .is_none_or(|g| g.result.is_some())
                {
                    return;
                }
            }
        }
    }
    if !rated.void {
        crate::metrics::ladder_rated(&ladder.name);
    }
    let absent_after = state.info.absent_after;
    let (after, _) = state.ratings_for(&m);
    for (seat, &entry) in seats.iter().enumerate() {
        let index_in_match = m.entries.iter().position(|&e| e == entry).unwrap_or(0);
        let line = outcome.as_ref().and_then(|o| seat_outcome(o, seat));
        let rating_before = before[index_in_match];
        let rating_after = after[index_in_match];
        ladder.send(
            entry,
            Event::Finished(pb::ladder_event::Finished {
                game_id: game_id.clone(),
                seat: seat as u32,
                rank: line.map_or(0, |l| l.rank),
                score: line.map_or(0, |l| l.score),
                won: line.is_some_and(|l| l.won),
                void: rated.void,
                void_reason: rated.void_reason.clone(),
                rating_before: Some(rating_before),
                rating_after: Some(rating_after),
                timeouts: timeouts.get(seat).map_or(0, |t| t.total),
            }),
        );
        // Normally paused during the game already (`Referee`: then not again, the bot may
        // have queued again since); here when the watch missed it (a restart).
        if paused_live.get(seat) == Some(&true) {
            continue;
        }
        let seat_timeouts = timeouts.get(seat).copied().unwrap_or_default();
        let run = seat_timeouts.longest_run(streaks[seat]);
        let entry_state = &state.entries[entry];
        let refused = m
            .games
            .get(game as usize)
            .and_then(|g| g.tokens.get(seat))
            .and_then(|token| ladder.ctx.games.front().refusals().of_seat(&game_id, token));
        let pause = if seat_timeouts.leading > 0 {
            let cause = first_timeout_cause(&log, seat);
            let detail = no_first_action(&game_id, &cause, refused.as_deref());
            Some((Reason::NoFirstAction, detail))
        } else if absent_after > 0 && run >= absent_after {
            let cause = last_timeout_cause(&log, seat);
            let detail = too_many_timeouts(run, absent_after, &game_id, &cause, refused.as_deref());
            Some((Reason::Timeouts, detail))
        } else {
            None
        };
        if let (Some((reason, detail)), None) = (pause, &entry_state.paused) {
            let paused = ladder
                .set_paused(&mut state, entry, reason, detail.clone(), false)
                .await;
            match paused {
                Ok(()) => {
                    tracing::info!(ladder = %ladder.name, bot = %state.entries[entry].name(), "{detail}");
                }
                Err(status) => {
                    tracing::warn!(ladder = %ladder.name, "pausing a bot: {}", status.message())
                }
            }
        }
    }
    drop(state);
    // The streams that asked for a number of games end once those are over.
    {
        let mut sessions = ladder.sessions.lock().expect("sessions lock");
        let done: Vec<usize> = sessions
            .iter_mut()
            .filter_map(|(&entry, s)| {
                s.open.remove(&(no, game));
                (s.remaining == Some(0) && s.open.is_empty()).then_some(entry)
            })
            .collect();
        for entry in done {
            sessions.remove(&entry);
        }
    }
    ladder.wake.notify_one();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acted(seq: u64, seat: u32) -> pb::LogRecord {
        pb::LogRecord {
            seq,
            unix_ms: 0,
            record: Some(Record::Acted(pb::Acted {
                seat,
                ..Default::default()
            })),
        }
    }

    fn timed_out(seq: u64, seat: u32) -> pb::LogRecord {
        pb::LogRecord {
            seq,
            unix_ms: 0,
            record: Some(Record::TimedOut(pb::TimedOut {
                seat,
                ..Default::default()
            })),
        }
    }

    #[test]
    fn a_hosted_bots_pause_quotes_its_modules_cause_and_the_way_back() {
        let mut failed = timed_out(3, 1);
        if let Some(Record::TimedOut(t)) = &mut failed.record {
            t.cause = "fuel: out of fuel (the budget's fuel per decision)".into();
        }
        let log = vec![timed_out(1, 0), acted(2, 0), failed, timed_out(4, 1)];
        assert_eq!(first_timeout_cause(&log, 0), "");
        let cause = first_timeout_cause(&log, 1);
        assert!(cause.starts_with("fuel: "), "{cause}");
        assert_eq!(first_timeout_cause(&log, 2), "");
        let hosted = no_first_action("g1", &cause, None);
        assert!(hosted.contains("(fuel: out of fuel"), "{hosted}");
        assert!(hosted.contains("submit a fixed version"), "{hosted}");
        assert!(!hosted.contains("Queue"), "{hosted}");
        let connected = no_first_action("g1", "", None);
        assert!(connected.contains("call Queue again"), "{connected}");
        // A connected seat whose calls were refused is told which call and what it answered.
        let refused = "Watch answered UNAUTHENTICATED: no key";
        let connected = no_first_action("g1", "", Some(refused));
        assert!(connected.contains(refused), "{connected}");
        assert!(
            !connected.contains("check that the bot watches"),
            "{connected}"
        );
        let absent = too_many_timeouts(3, 3, "g1", "", Some(refused));
        assert!(
            absent.contains(refused) && absent.contains("Queue"),
            "{absent}"
        );
        assert_eq!(first_timeout_cause(&log, 1), cause);
        assert_eq!(
            last_timeout_cause(&log, 1),
            "",
            "the last of seat 1's is a clock's"
        );
        let hosted = too_many_timeouts(3, 3, "g1", &cause, None);
        assert!(
            hosted.contains("the last with fuel: out of fuel"),
            "{hosted}"
        );
        assert!(hosted.contains("submit a fixed version"), "{hosted}");
        assert!(!hosted.contains("Queue"), "{hosted}");
        assert!(too_many_timeouts(3, 3, "g1", "", None).contains("call Queue again"));
    }

    #[test]
    fn timeouts_are_counted_per_seat_with_their_runs() {
        let log = vec![
            timed_out(1, 0),
            timed_out(2, 0),
            acted(3, 0),
            timed_out(4, 0),
            timed_out(5, 0),
            timed_out(6, 0),
            acted(7, 0),
            timed_out(8, 0),
            timed_out(9, 1),
            timed_out(10, 1),
        ];
        let seats = seat_timeouts(&log, &[false; 3]);
        assert_eq!(
            seats[0],
            SeatTimeouts {
                total: 6,
                leading: 2,
                trailing: 1,
                longest_after_acting: 3,
                acted: true,
                host_overload: 0,
            }
        );
        assert_eq!(seats[0].longest_run(0), 3);
        // Two timeouts at the end of the last game and two at the start of this one: four.
        assert_eq!(seats[0].longest_run(2), 4);
        assert_eq!(
            (seats[1].total, seats[1].acted, seats[1].leading),
            (2, false, 2)
        );
        assert_eq!(seats[1].longest_run(1), 3);
        assert_eq!(seats[2], SeatTimeouts::default());
    }
}
