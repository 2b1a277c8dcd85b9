//! The live spectator view as server-sent events: `GET /api/games/{id}/live`.
//!
//! Each event is one update of `Watch` without a token (the spectator's redaction, nothing
//! more), `id` = its seq, so a browser's `EventSource` resumes after a drop with
//! `Last-Event-ID` and misses nothing. Without `from_seq` or `Last-Event-ID` the stream opens
//! with the newest update (the current state), then follows the game. A viewer too slow to
//! keep up is cut off like any watcher (an `error` event naming the limit) and resumes by seq.

use super::api::update_json;
use super::{check_game_id, ApiError, Query, Viewer, MAX_LIVE_STREAMS};
use crate::connections::Refusal;
use axum::extract::{ConnectInfo, Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use std::convert::Infallible;
use tokio_stream::StreamExt;

pub(super) async fn live(
    State(viewer): State<Viewer>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let query = Query::parse(query.as_deref(), &["from_seq"])?;
    let id = check_game_id(&id)?;
    let resume = match headers.get("last-event-id") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| ApiError::bad_request("Last-Event-ID must be a seq (a number)"))?,
        ),
    };
    let from_seq = match (resume, query.get("from_seq")) {
        (Some(seq), _) => seq,
        (None, Some(_)) => query.number("from_seq", 0, u64::MAX)?,
        (None, None) => viewer.summary(id).await?.last_seq.saturating_sub(1),
    };
    let permit = admit_live(&viewer, peer)?;
    let updates = viewer.watch(id, from_seq).await?;
    let events = updates.map(move |item| {
        // The stream owns the permit: a live viewer counts until it disconnects.
        let _counted = &permit;
        let event = match item {
            Ok(update) => Event::default()
                .event("update")
                .id(update.seq.to_string())
                .data(update_json(&update).to_string()),
            Err(status) => {
                let error = ApiError::from(status);
                Event::default()
                    .event("error")
                    .data(error.to_json().to_string())
            }
        };
        Ok::<_, Infallible>(event)
    });
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// A live stream's place (a game's, a ladder's), held as long as the stream is open. Shared
/// fairly: past half taken, one address holds at most its share, so a crowd from one address
/// leaves the others room.
pub(super) fn admit_live(
    viewer: &Viewer,
    peer: std::net::SocketAddr,
) -> Result<crate::connections::Ticket, ApiError> {
    let gate = &viewer.live_streams;
    gate.admit(peer.ip()).map_err(|refusal| {
        crate::metrics::live_stream_refused(refusal.limit());
        ApiError::busy(match refusal {
            Refusal::Full => {
                format!("too many live viewers at once (limit {MAX_LIVE_STREAMS}): try again later")
            }
            Refusal::PerClient => format!(
                "too many live viewers from {}: while more than half of the {MAX_LIVE_STREAMS} \
                 live streams are taken, one address may hold {}; close some and try again",
                peer.ip(),
                gate.per_client()
            ),
        })
    })
}
