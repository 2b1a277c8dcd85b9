//! A finished game, step by step, for the replay page:
//! - `GET /api/games/{id}/replay`: the outline (seats, outcome, where each deal or heist starts,
//!   and the chart's figures: each deal's row or each heist's row of `gangs_games::summary`);
//! - `GET /api/games/{id}/steps?from=SEQ&limit=N`: the state after each of N records: the
//!   spectator's view, every seat's own cards, and what happened, in words.
//!
//! Only a game that is over (finished, cancelled or abandoned) has a replay: its log is complete
//! (`GetLog` hides nothing any more) and every hand may be shown. The state at a step is the engine's, rebuilt from the log
//! (`gangs_games::replay`), and each seat's cards are what that seat's own `Game::view` holds:
//! the viewer picks what to draw, the games decide what each seat saw.

use super::api::summary_json;
use super::{check_game_id, json_response, ApiError, Query, Viewer, MAX_REPLAYS_AT_ONCE};
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use gangs_games::replay::Replayer;
use gangs_games::summary::summarize;
use gangs_games::update::record_events;
use gangs_proto::json::to_json;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use serde_json::{json, Value};
use std::time::Duration;

/// Steps per `steps` request at most, and by default.
const MAX_STEPS: u64 = 100;
const DEFAULT_STEPS: u64 = 50;
/// How long a request waits for one of the replay slots before it is told to come back.
const REPLAY_QUEUE_WAIT: Duration = Duration::from_secs(5);

impl Viewer {
    /// The complete log of a game that is over, refused with a clear word while it runs.
    async fn finished_log(
        &self,
        id: &str,
    ) -> Result<(pb::GameSummary, Vec<pb::LogRecord>), ApiError> {
        let summary = self.summary(id).await?;
        if !pb::GameStatus::is_over_code(summary.status) {
            return Err(ApiError::conflict(format!(
                "game {id} is not over: its replay (every hand shown) opens when it ends; \
                 watch it live meanwhile"
            )));
        }
        let records = self.log(id).await?;
        Ok((summary, records))
    }

    /// Runs `work` on a blocking thread, at most `MAX_REPLAYS_AT_ONCE` at a time.
    async fn replay_slot<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let permit = tokio::time::timeout(REPLAY_QUEUE_WAIT, self.replays.clone().acquire_owned())
            .await
            .map_err(|_| {
                ApiError::busy(format!(
                    "the server is replaying {MAX_REPLAYS_AT_ONCE} games already: try again in a moment"
                ))
            })?
            .expect("never closed");
        let result = tokio::task::spawn_blocking(move || {
            let result = work();
            drop(permit);
            result
        })
        .await
        .map_err(|e| ApiError::internal(format!("replay failed: {e}")))?;
        result
    }
}

fn replay_error(id: &str, e: gangs_games::replay::ReplayError) -> ApiError {
    ApiError::internal(format!("game {id} does not replay: {e}"))
}

/// `GET /api/games/{id}/replay`.
pub(super) async fn index(
    State(viewer): State<Viewer>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(query.as_deref(), &[])?;
    let id = check_game_id(&id)?.to_string();
    let (summary, records) = viewer.finished_log(&id).await?;
    let outline = viewer
        .replay_slot(move || outline(&id, &summary, &records))
        .await?;
    Ok(json_response(&outline))
}

/// `GET /api/games/{id}/steps?from=SEQ&limit=N`.
pub(super) async fn steps(
    State(viewer): State<Viewer>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let query = Query::parse(query.as_deref(), &["from", "limit"])?;
    let id = check_game_id(&id)?.to_string();
    let from = query.number("from", 1, u64::MAX)?.max(1);
    let limit = query.number("limit", DEFAULT_STEPS, MAX_STEPS)?.max(1);
    let (_, records) = viewer.finished_log(&id).await?;
    let last = records.last().map(|r| r.seq).unwrap_or(0);
    if from > last {
        return Err(ApiError::bad_request(format!(
            "from {from} is beyond the game's last seq {last}"
        )));
    }
    let frames = viewer
        .replay_slot(move || frames(&id, &records, from, from.saturating_add(limit - 1)))
        .await?;
    Ok(json_response(&json!({ "steps": frames, "last_seq": last })))
}

/// The replay's outline: seats, outcome, deal or heist starts, and the chart's figures.
fn outline(
    id: &str,
    summary: &pb::GameSummary,
    records: &[pb::LogRecord],
) -> Result<Value, ApiError> {
    let replayer = gangs_games::replay::replay(records).map_err(|e| replay_error(id, e))?;
    let game = replayer
        .game()
        .ok_or_else(|| ApiError::internal(format!("game {id} has no `created` record")))?;
    let kind = gangs_games::kind(game.kind()).map_err(|e| ApiError::internal(e.to_string()))?;
    let mut names = vec![String::new(); game.players()];
    // Where each round (deal, heist) starts: (its number, the seq of the record that opens it).
    let mut starts: Vec<(u32, u64)> = Vec::new();
    for record in records {
        if let Some(Record::Joined(joined)) = &record.record {
            if let Some(name) = names.get_mut(joined.seat as usize) {
                name.clone_from(&joined.name);
            }
        }
        for event in record_events(record) {
            if let Some(number) = kind.round_start(event) {
                starts.push((number, record.seq));
            }
        }
    }
    let rounds = rounds(&starts, records)
        .map_err(|e| ApiError::internal(format!("game {id} does not summarize: {e}")))?;
    Ok(json!({
        "game": summary_json(summary),
        "kind": game.kind(),
        "round": kind.round,
        "players": game.players(),
        "names": names,
        "options": to_json(&game.options(), "gangs.v1.GameOptions"),
        "first_seq": records.first().map(|r| r.seq).unwrap_or(0),
        "last_seq": records.last().map(|r| r.seq).unwrap_or(0),
        "outcome": game.outcome().map(|o| to_json(&o, "gangs.v1.Outcome")),
        "rounds": rounds,
    }))
}

/// One entry per round (deal, heist), in order: its number, where it starts, and its row of
/// the game's summary (`gangs replay --summary`'s figures, as the game's own summary module
/// writes them; `null` for one that never ended).
fn rounds(starts: &[(u32, u64)], records: &[pb::LogRecord]) -> Result<Vec<Value>, String> {
    let rows: Vec<(u32, Value)> = summarize(records)?
        .rows
        .into_iter()
        .map(|row| (row.number, row.json))
        .collect();
    Ok(starts
        .iter()
        .map(|&(number, seq)| {
            let row = rows
                .iter()
                .find(|(n, _)| *n == number)
                .map(|(_, row)| row.clone());
            json!({ "number": number, "seq": seq, "summary": row })
        })
        .collect())
}

/// The state after each record with a seq in `from..=to`.
fn frames(id: &str, records: &[pb::LogRecord], from: u64, to: u64) -> Result<Vec<Value>, ApiError> {
    let mut replayer = Replayer::new();
    let mut frames = Vec::new();
    for record in records {
        if record.seq > to {
            break;
        }
        replayer.apply(record).map_err(|e| replay_error(id, e))?;
        if record.seq < from {
            continue;
        }
        let game = replayer
            .game()
            .ok_or_else(|| ApiError::internal(format!("game {id} has no `created` record")))?;
        frames.push(frame(game, record));
    }
    Ok(frames)
}

fn frame(game: &dyn gangs_games::Game, record: &pb::LogRecord) -> Value {
    let (kind, actor, action): (&str, Option<u32>, Option<String>) = match &record.record {
        Some(Record::Created(_)) => ("created", None, None),
        Some(Record::Joined(joined)) => ("joined", Some(joined.seat), None),
        Some(Record::Started(_)) => ("started", None, None),
        Some(Record::Acted(acted)) => (
            "acted",
            Some(acted.seat),
            acted.action.as_ref().map(gangs_games::describe_action),
        ),
        Some(Record::Expired(_)) => ("expired", None, None),
        // A seat's clock ran out: its default action was played for it.
        Some(Record::TimedOut(timed_out)) => (
            "timed_out",
            Some(timed_out.seat),
            timed_out.action.as_ref().map(gangs_games::describe_action),
        ),
        Some(Record::Ended(_)) => ("ended", None, None),
        Some(Record::Ladder(_)) => ("ladder", None, None),
        None => ("empty", None, None),
    };
    let events = record_events(record);
    // Why a cancelled or abandoned game ended, in words.
    let ended = match &record.record {
        Some(Record::Ended(ended)) => Some(match ended.reason() {
            pb::ended::Reason::Abandoned => format!("abandoned: {}", ended.detail),
            _ => format!("cancelled: {}", ended.detail),
        }),
        _ => None,
    };
    // Every seat's private cards: the fields the kind registry names, from the seat's own view.
    let hands: Vec<Value> = match gangs_games::kind(game.kind()) {
        Ok(kind) => (0..game.players())
            .map(|seat| {
                let view = to_json(&game.view(Some(seat)), "gangs.v1.GameView");
                let mut cards = kind.private_cards(&view);
                cards.insert("seat".into(), json!(seat));
                Value::Object(cards)
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    json!({
        "seq": record.seq,
        "unix_ms": record.unix_ms,
        "record": kind,
        "actor": actor,
        "action": action,
        "ended": ended,
        "events_text": events.iter().map(gangs_games::describe_event).collect::<Vec<_>>(),
        "view": to_json(&game.view(None), "gangs.v1.GameView"),
        "hands": hands,
    })
}
