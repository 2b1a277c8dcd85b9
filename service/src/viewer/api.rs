//! The viewer's JSON endpoints that read the games service as a spectator would: the game list
//! (paged, filtered), a game's summary with its latest public update, and the game file.
//! Messages are in the proto3 JSON mapping with the proto's field names (`gangs_proto::json`).

use super::{check_game_id, json_response, ApiError, Query, Viewer};
use crate::api::HostUpdateStream;
use crate::front::access::{self, Method};
use crate::front::Principal;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use gangs_proto::v1 as pb;
use serde_json::{json, Value};
use tokio_stream::StreamExt;

/// Games per page at most (`limit`), and by default.
const MAX_PAGE: u64 = 100;
const DEFAULT_PAGE: u64 = 50;
/// Games per ListGames page when the viewer looks one game up (ListGames' own maximum).
const LOOKUP_PAGE: u32 = 1000;

/// The status words of the list's `status` filter and of each game's `state`.
const STATUS_WORDS: [(&str, pb::GameStatus); 5] = [
    ("waiting", pb::GameStatus::Waiting),
    ("running", pb::GameStatus::Running),
    ("finished", pb::GameStatus::Finished),
    ("cancelled", pb::GameStatus::Cancelled),
    ("abandoned", pb::GameStatus::Abandoned),
];

impl Viewer {
    /// The caller the host serves for the request being served: the key it reads with (the
    /// session's on a keyed viewer, the server's read key on an open one: `auth.rs`), made a
    /// principal by the front for `method` (the key's own rights over gRPC).
    pub(super) fn principal(&self, method: &Method) -> Result<Principal, ApiError> {
        let key = super::auth::read_key();
        Ok(self.games.front().principal_of(key.as_deref(), method)?)
    }

    /// One page of `ListGames` (its filters and paging, as a gRPC client gets them).
    pub(super) async fn list_games(
        &self,
        request: pb::ListGamesRequest,
    ) -> Result<pb::ListGamesResponse, ApiError> {
        let principal = self.principal(&access::LIST_GAMES)?;
        Ok(self.games.list_games_as(&principal, request).await?)
    }

    /// One game's summary, looked up through `ListGames` page by page (a ladder bot's key
    /// may, for a game its ladder matched it to: `Front::principal_of_game`).
    pub(super) async fn summary(&self, id: &str) -> Result<pb::GameSummary, ApiError> {
        let key = super::auth::read_key();
        let principal = self
            .games
            .front()
            .principal_of_game(key.as_deref(), &access::LIST_GAMES, id)
            .await?;
        let mut request = pb::ListGamesRequest {
            page_size: LOOKUP_PAGE,
            ..Default::default()
        };
        loop {
            let page = self
                .games
                .list_games_as(&principal, request.clone())
                .await?;
            if let Some(game) = page.games.into_iter().find(|g| g.game_id == id) {
                return Ok(game);
            }
            if page.next_page_token.is_empty() {
                return Err(ApiError::not_found(format!(
                    "no game {id:?}: the list is at /"
                )));
            }
            request.page_token = page.next_page_token;
        }
    }

    /// The spectator's stream of a game from `from_seq` (exactly `Watch` without a token).
    pub(super) async fn watch(
        &self,
        id: &str,
        from_seq: u64,
    ) -> Result<HostUpdateStream, ApiError> {
        let principal = self.principal(&access::WATCH)?;
        let request = pb::WatchRequest {
            game_id: id.to_string(),
            token: String::new(),
            from_seq,
            ..Default::default()
        };
        Ok(self.games.watch_as(&principal, request).await?)
    }

    /// The game's log as `GetLog` gives it: public records while it runs, everything after.
    pub(super) async fn log(&self, id: &str) -> Result<Vec<pb::LogRecord>, ApiError> {
        let principal = self.principal(&access::GET_LOG)?;
        let request = pb::GetLogRequest {
            game_id: id.to_string(),
            from_seq: 0,
        };
        Ok(self.games.get_log_as(&principal, request).await?)
    }
}

/// An update as the viewer sends it: the `Update` message, and each event in words.
pub(super) fn update_json(update: &pb::Update) -> Value {
    json!({
        "update": gangs_proto::json::to_json(update, "gangs.v1.Update"),
        "events_text": update.events.iter().map(gangs_games::describe_event).collect::<Vec<_>>(),
    })
}

fn status_word(status: i32) -> &'static str {
    STATUS_WORDS
        .iter()
        .find(|(_, s)| *s as i32 == status)
        .map_or("unknown", |(word, _)| word)
}

pub(super) fn summary_json(summary: &pb::GameSummary) -> Value {
    let mut value = gangs_proto::json::to_json(summary, "gangs.v1.GameSummary");
    // The word the list's `status` filter takes, beside the proto's enum name.
    value["state"] = json!(status_word(summary.status));
    value
}

/// `GET /api/games?kind=&status=&limit=&page_token=`: `ListGames` (oldest first); the answer's
/// `next_page_token` is the next page's `page_token` (empty on the last page).
pub(super) async fn list(
    State(viewer): State<Viewer>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let query = Query::parse(query.as_deref(), &["kind", "status", "limit", "page_token"])?;
    let kind = query.get("kind").unwrap_or("");
    if !kind.is_empty() && gangs_games::kind(kind).is_err() {
        return Err(ApiError::bad_request(format!(
            "kind {} is not a game kind: one of {}",
            gangs_proto::quoted(kind),
            gangs_games::kind_names().join(", ")
        )));
    }
    let status = match query.get("status") {
        None => pb::GameStatus::Unspecified,
        Some(word) => STATUS_WORDS
            .iter()
            .find(|(w, _)| *w == word)
            .map(|(_, status)| *status)
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "status {} is not a game status: one of {}",
                    gangs_proto::quoted(word),
                    STATUS_WORDS.map(|(w, _)| w).join(", ")
                ))
            })?,
    };
    let limit = query.number("limit", DEFAULT_PAGE, MAX_PAGE)?.max(1);
    let page = viewer
        .list_games(pb::ListGamesRequest {
            page_size: limit as u32,
            page_token: query.get("page_token").unwrap_or("").to_string(),
            kind: kind.to_string(),
            status: status as i32,
            ..Default::default()
        })
        .await?;
    Ok(json_response(&json!({
        "games": page.games.iter().map(summary_json).collect::<Vec<_>>(),
        "next_page_token": page.next_page_token,
    })))
}

/// `GET /api/games/{id}`: the summary and the spectator's latest update (the current public
/// state: exactly what `Watch` without a token sends for the newest seq).
pub(super) async fn game(
    State(viewer): State<Viewer>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(query.as_deref(), &[])?;
    let id = check_game_id(&id)?;
    let summary = viewer.summary(id).await?;
    let mut stream = viewer.watch(id, summary.last_seq.saturating_sub(1)).await?;
    let latest = match stream.next().await {
        Some(update) => update_json(&update?),
        None => Value::Null,
    };
    Ok(json_response(&json!({
        "game": summary_json(&summary),
        "latest": latest,
    })))
}

/// `GET /api/games/{id}/file`: the portable game file (`gangs export`'s format), as a download.
/// A running game's file holds what a spectator may see so far; a finished game's, everything.
pub(super) async fn file(
    State(viewer): State<Viewer>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(query.as_deref(), &[])?;
    let id = check_game_id(&id)?;
    let records = viewer.log(id).await?;
    let file = gangs_games::game_file::GameFile::from_log(id, records)
        .map_err(|e| ApiError::internal(format!("game {id}: {e}")))?;
    let mut response = file.to_jsonl().into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    if let Ok(disposition) = format!("attachment; filename=\"gangs-{id}.jsonl\"").parse() {
        headers.insert(header::CONTENT_DISPOSITION, disposition);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
