//! The viewer's ladder endpoints, read through the same `gangs.v1.Ladders` service gRPC clients
//! call (so the keys decide exactly as they do there): the ladders, one ladder's leaderboard,
//! and its games, newest first, a page at a time. Messages are in the proto3 JSON mapping with
//! the proto's field names, like the rest of the viewer's API.

use super::{json_response, ApiError, Query, Viewer};
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use gangs_proto::v1 as pb;
use pb::ladders_server::Ladders;

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

/// `GET /api/ladders`: `ListLadders`.
pub(super) async fn list(
    State(viewer): State<Viewer>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(query.as_deref(), &[])?;
    let answer = viewer
        .ladders
        .list_ladders(viewer.request(pb::ListLaddersRequest {}))
        .await?
        .into_inner();
    Ok(json_response(&gangs_proto::json::to_json(
        &answer,
        "gangs.v1.ListLaddersResponse",
    )))
}

/// `GET /api/ladders/{name}?season=N`: `Standings` (the ladder and its leaderboard, best
/// conservative rating first, each row with its trend; a season that is over: its frozen
/// table).
pub(super) async fn standings(
    State(viewer): State<Viewer>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let query = Query::parse(query.as_deref(), &["season"])?;
    let name = check_name(&name)?;
    let season = query.number("season", 0, u64::from(u32::MAX))? as u32;
    let answer = viewer
        .ladders
        .standings(viewer.request(pb::StandingsRequest {
            ladder: name.to_string(),
            fit: false,
            season,
        }))
        .await?
        .into_inner();
    Ok(json_response(&gangs_proto::json::to_json(
        &answer,
        "gangs.v1.StandingsResponse",
    )))
}

/// `GET /api/ladders/{name}/games?limit=&page_token=`: `LadderGames`, newest first; the
/// answer's `next_page_token` is the next page's `page_token` (empty on the last page).
pub(super) async fn games(
    State(viewer): State<Viewer>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let query = Query::parse(query.as_deref(), &["limit", "page_token", "season"])?;
    let name = check_name(&name)?;
    let limit = query.number("limit", DEFAULT_PAGE, MAX_PAGE)?.max(1);
    let answer = viewer
        .ladders
        .ladder_games(viewer.request(pb::LadderGamesRequest {
            ladder: name.to_string(),
            page_size: limit as u32,
            page_token: query.get("page_token").unwrap_or("").to_string(),
            season: query.number("season", 0, u64::from(u32::MAX))? as u32,
        }))
        .await?
        .into_inner();
    Ok(json_response(&gangs_proto::json::to_json(
        &answer,
        "gangs.v1.LadderGamesResponse",
    )))
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
}
