//! The viewer's ladder endpoints, read through the same `gangs.v1.Ladders` service gRPC clients
//! call (so the keys decide exactly as they do there, but that a ladder bot's key reads its own
//! bot's page and games here, which gRPC does not give it): the ladders, one ladder's leaderboard
//! (JSON, and CSV), its games, newest first, a page at a time (all, or one bot's), one bot's
//! page (`BotReport`), and the leaderboard as server-sent events, sent again each time it
//! changes. Messages are in the proto3 JSON mapping with the proto's field names, like the rest
//! of the viewer's API.

use super::{json_response, ApiError, Query, Viewer};
use crate::error::HostError;
use crate::front::{access, Principal};
use axum::extract::{ConnectInfo, Path, RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use gangs_proto::v1 as pb;
use std::time::Duration;

/// Ladder games per page at most (`limit`), and by default.
const MAX_PAGE: u64 = 100;
const DEFAULT_PAGE: u64 = 20;
/// The longest ladder name (the Ladders service's own limit).
const MAX_NAME_LEN: usize = crate::ladder::api::MAX_LADDER_NAME;

/// A ladder name from a path: short, and made of the characters names are made of.
fn check_name(name: &str) -> Result<&str, ApiError> {
    if name.is_empty()
        || name.len() > MAX_NAME_LEN
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Err(ApiError::bad_request(format!(
            "{} is not a ladder name (letters, digits, '-', '_' and '.', at most {MAX_NAME_LEN})",
            gangs_proto::quoted(name)
        )));
    }
    Ok(name)
}

/// A bot version from a path or a query, `BOT@VERSION` (`BOT` alone: version 1): the bot and
/// the version (empty for 1), each made of the characters names are made of.
fn check_bot(text: &str) -> Result<(String, String), ApiError> {
    let text = text.replace("%40", "@");
    let (bot, version) = text.split_once('@').unwrap_or((&text, ""));
    let ok = |s: &str, max: usize| {
        s.len() <= max
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    if bot.is_empty()
        || !ok(bot, crate::bounds::MAX_BOT_NAME)
        || !ok(version, crate::bounds::MAX_VERSION)
    {
        return Err(ApiError::bad_request(format!(
            "{} is not a bot version: BOT@VERSION (letters, digits, '-', '_' and '.')",
            gangs_proto::quoted(&text)
        )));
    }
    Ok((bot.to_string(), version.to_string()))
}

impl Viewer {
    /// The caller the host serves for a read of bot `bot` (`(name, version)`; None: every bot)
    /// of ladder `ladder` by `method`: the reader's key's rights, and a ladder bot's key's on
    /// its own bot's page (`Front::principal_of_bot_page`).
    fn bot_page_principal(
        &self,
        method: &access::Method,
        ladder: &str,
        bot: Option<(&str, &str)>,
    ) -> Result<Principal, ApiError> {
        let key = super::auth::read_key();
        Ok(self
            .games
            .front()
            .principal_of_bot_page(key.as_deref(), method, ladder, bot)?)
    }
}

/// `GET /api/ladders`: `ListLadders`.
pub(super) async fn list(
    State(viewer): State<Viewer>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(query.as_deref(), &[])?;
    let principal = viewer.principal(&access::LIST_LADDERS)?;
    let answer = viewer.ladders.list_ladders_as(&principal).await?;
    Ok(json_response(&gangs_proto::json::to_json(
        &answer,
        "gangs.v1.ListLaddersResponse",
    )))
}

/// The `Standings` of ladder `name` for a request with `?season=N` (a season that is over:
/// its frozen table; none: the current season).
async fn read_standings(
    viewer: &Viewer,
    name: &str,
    query: Option<&str>,
) -> Result<pb::StandingsResponse, ApiError> {
    let query = Query::parse(query, &["season"])?;
    let name = check_name(name)?;
    let season = query.number("season", 0, u64::from(u32::MAX))? as u32;
    let principal = viewer.principal(&access::STANDINGS)?;
    let request = pb::StandingsRequest {
        ladder: name.to_string(),
        fit: false,
        season,
    };
    Ok(viewer.ladders.standings_as(&principal, request).await?)
}

/// `GET /api/ladders/{name}?season=N`: `Standings` (the ladder and its leaderboard, best
/// conservative rating first, each row with its trend; a season that is over: its frozen
/// table).
pub(super) async fn standings(
    State(viewer): State<Viewer>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let answer = read_standings(&viewer, &name, query.as_deref()).await?;
    Ok(json_response(&standings_json(&answer)))
}

/// A leaderboard as the viewer sends it: `StandingsResponse`, and `mean_score_means`, what a
/// mean score is in the ladder's game and which way is better ("penalty points, lower is
/// better").
fn standings_json(answer: &pb::StandingsResponse) -> serde_json::Value {
    let mut value = gangs_proto::json::to_json(answer, "gangs.v1.StandingsResponse");
    let kind = answer.ladder.as_ref().map_or("", |l| l.kind.as_str());
    if let Ok(kind) = gangs_games::kind(kind) {
        value["mean_score_means"] = serde_json::json!(kind.score_words);
    }
    value
}

/// `GET /api/ladders/{name}/games?limit=&page_token=`: `LadderGames`, newest first; the
/// answer's `next_page_token` is the next page's `page_token` (empty on the last page).
pub(super) async fn games(
    State(viewer): State<Viewer>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let query = Query::parse(query.as_deref(), &["limit", "page_token", "season", "bot"])?;
    let name = check_name(&name)?;
    let limit = query.number("limit", DEFAULT_PAGE, MAX_PAGE)?.max(1);
    let (bot, version) = match query.get("bot") {
        Some(bot) => check_bot(bot)?,
        None => Default::default(),
    };
    // A bot key reads the games of its own bot (`?bot=` its own), as its page lists them.
    let principal = viewer.bot_page_principal(
        &access::LADDER_GAMES,
        name,
        (!bot.is_empty()).then_some((bot.as_str(), version.as_str())),
    )?;
    let request = pb::LadderGamesRequest {
        ladder: name.to_string(),
        page_size: limit as u32,
        page_token: query.get("page_token").unwrap_or("").to_string(),
        season: query.number("season", 0, u64::from(u32::MAX))? as u32,
        bot,
        version,
    };
    let answer = viewer.ladders.ladder_games_as(&principal, request).await?;
    Ok(json_response(&gangs_proto::json::to_json(
        &answer,
        "gangs.v1.LadderGamesResponse",
    )))
}

/// `GET /api/ladders/{name}/bots/{bot}` (`BOT@VERSION`): `BotReport`, the bot's page.
pub(super) async fn bot(
    State(viewer): State<Viewer>,
    Path((name, bot)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(query.as_deref(), &[])?;
    let name = check_name(&name)?;
    let (bot, version) = check_bot(&bot)?;
    // A bot key reads its own bot's page (and no other).
    let principal = viewer.bot_page_principal(&access::BOT_REPORT, name, Some((&bot, &version)))?;
    let request = pb::BotReportRequest {
        ladder: name.to_string(),
        bot,
        version,
    };
    let answer = viewer.ladders.bot_report_as(&principal, request).await?;
    Ok(json_response(&gangs_proto::json::to_json(
        &answer,
        "gangs.v1.BotReportResponse",
    )))
}

/// `GET /api/ladders/{name}/standings.csv?season=N`: the leaderboard as CSV, the columns of
/// `gangs ladder standings NAME --csv` (`gangs_proto::csv`), as a download (a season that is
/// over: its frozen table).
pub(super) async fn standings_csv(
    State(viewer): State<Viewer>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let answer = read_standings(&viewer, &name, query.as_deref()).await?;
    // A season that is over is named in the file's name; the current one is not.
    let season = answer
        .season
        .as_ref()
        .filter(|s| s.ended_unix_ms.is_some())
        .map_or(0, |s| s.number);
    let mut response = gangs_proto::csv::standings_csv(&answer.standings).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    // The name holds only [A-Za-z0-9._-] (`check_name`): nothing to escape.
    let file = match season {
        0 => format!("{name}-standings.csv"),
        n => format!("{name}-season-{n}-standings.csv"),
    };
    if let Ok(disposition) = format!("attachment; filename=\"{file}\"").parse() {
        headers.insert(header::CONTENT_DISPOSITION, disposition);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// A ladder's live stream looks again this often even without a change this node saw (a ladder
/// run by another node of a cluster; the queued and capped states, which no record marks).
const LIVE_LOOK_AGAIN: Duration = Duration::from_secs(10);
/// Changes arriving this close together are sent once (a match's games rated together).
const LIVE_COALESCE: Duration = Duration::from_millis(200);
/// A ladder's live stream ends after this long (the browser's `EventSource` opens it again), so
/// no stream holds its place for ever.
const LIVE_LIFETIME: Duration = Duration::from_secs(3600);

/// `GET /api/ladders/{name}/live`: the leaderboard (`Standings`, as `/api/ladders/{name}`) as
/// server-sent events: a `standings` event at once, then one each time it changes (a game
/// rated, a bot paused, capped, queued...). Counted with the games' live streams
/// ([`super::MAX_LIVE_STREAMS`], per address); ends after an hour.
pub(super) async fn live(
    State(viewer): State<Viewer>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(query.as_deref(), &[])?;
    let name = check_name(&name)?.to_string();
    // The stream outlives the request: it reads as the request's caller, carried along.
    let caller = viewer.principal(&access::STANDINGS)?;
    let read = {
        let ladders = viewer.ladders.clone();
        move |name: String, principal: Principal| {
            let ladders = ladders.clone();
            async move {
                let request = pb::StandingsRequest {
                    ladder: name,
                    fit: false,
                    ..Default::default()
                };
                let answer = ladders.standings_as(&principal, request).await?;
                Ok::<_, HostError>(standings_json(&answer).to_string())
            }
        }
    };
    // Refused before the stream opens: no such ladder, a key that may not read it.
    let first = read(name.clone(), caller.clone()).await?;
    let permit = super::sse::admit_live(&viewer, peer)?;
    let mut changes = viewer.ladders.changes(&name);
    let (tx, rx) = tokio::sync::mpsc::channel::<Event>(4);
    tokio::spawn(async move {
        let _counted = permit;
        let ends = tokio::time::Instant::now() + LIVE_LIFETIME;
        let mut last = first;
        let mut sent: u64 = 0;
        if tx
            .send(Event::default().event("standings").id("0").data(&last))
            .await
            .is_err()
        {
            return;
        }
        loop {
            let changed = async {
                match &mut changes {
                    Some(rx) => {
                        if rx.changed().await.is_err() {
                            // This node stopped running the ladder: look now and then.
                            changes = None;
                        }
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = tx.closed() => return,
                _ = tokio::time::sleep_until(ends) => return,
                _ = changed => tokio::time::sleep(LIVE_COALESCE).await,
                _ = tokio::time::sleep(LIVE_LOOK_AGAIN) => {}
            }
            match read(name.clone(), caller.clone()).await {
                Ok(now) if now == last => {}
                Ok(now) => {
                    last = now;
                    sent += 1;
                    let event = Event::default()
                        .event("standings")
                        .id(sent.to_string())
                        .data(&last);
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
                Err(status) => {
                    let error = ApiError::from(status).to_json().to_string();
                    let _ = tx.send(Event::default().event("error").data(error)).await;
                    return;
                }
            }
        }
    });
    let events =
        tokio_stream::StreamExt::map(tokio_stream::wrappers::ReceiverStream::new(rx), |e| {
            Ok::<_, std::convert::Infallible>(e)
        });
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_names_are_checked() {
        assert!(check_name("class-2026.b_1").is_ok());
        for bad in ["", "a b", "../x", "<script>", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bot_versions_are_checked() {
        assert_eq!(check_bot("alice@2").unwrap(), ("alice".into(), "2".into()));
        assert_eq!(
            check_bot("alice%402").unwrap(),
            ("alice".into(), "2".into())
        );
        assert_eq!(check_bot("alice").unwrap(), ("alice".into(), String::new()));
        for bad in ["", "@2", "a b@1", "a@<1>", "a@1@2"] {
            assert!(check_bot(bad).is_err(), "{bad}");
        }
    }
}
