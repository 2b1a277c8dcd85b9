//! The web viewer (`gangs-server --http ADDR`): a read-only page and a small JSON API served
//! beside gRPC. Map:
//! - `mod.rs`: the accept loop (`connections.rs`' limits, header timeout), the router, errors,
//!   queries;
//! - `api.rs`: the JSON endpoints (game list, a game's current public state, the game file);
//! - `ladders.rs`: the endpoints of the ladders (the list, a leaderboard as JSON, CSV and
//!   server-sent events, a ladder's games, a bot's page);
//! - `sse.rs`: the live spectator view as server-sent events;
//! - `replay.rs`: a finished game step by step, every seat's hand shown;
//! - `assets.rs`: the page (`service/web/*`), embedded in the binary;
//! - `auth.rs`: on a server with keys, the login page, the sessions, and the key each request
//!   reads with.
//!
//! Every request goes through the same `gangs.v1.Games` service the gRPC clients use, so the
//! viewer sees exactly what a spectator's `Watch` (no token) and `GetLog` see: it never decides
//! what is visible. Only a finished game's replay shows hands, through the games' own `view`.
//! On a server with keys each request reads with the key its session logged in with
//! (`auth.rs`), so the viewer shows a key no more than gRPC does, but for one page: a ladder
//! bot's key reads its own bot's page there (its `BotReport`, its `LadderGames` and the
//! summaries of the games its ladder matched it to: `Front::principal_of_bot_page` and
//! `Front::principal_of_game`), and no other bot's.

mod api;
mod assets;
mod auth;
mod ladders;
mod replay;
mod sse;

use crate::api::GamesService;
use crate::ladder::api::LaddersService;
pub use auth::Access;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use gangs_proto::quoted;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// Live spectator streams open at once (each holds a `Watch`). Shared fairly: while more than
/// half are open, one address may hold at most a quarter of them.
pub const MAX_LIVE_STREAMS: usize = 64;
/// Replays computed at once (each re-runs the engine over a whole log on a blocking thread).
pub const MAX_REPLAYS_AT_ONCE: usize = 2;
/// A client must send its request head within this time.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request head buffered (hyper's minimum is 8 KiB).
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Longest query string accepted.
const MAX_QUERY_BYTES: usize = 512;
/// Longest game id accepted in a path.
const MAX_GAME_ID_LEN: usize = 64;

/// What every handler shares: the games service (the same one gRPC serves) and the limits.
#[derive(Clone)]
pub(crate) struct Viewer {
    games: Arc<GamesService>,
    /// The ladders, read like the games: through the service gRPC clients call.
    ladders: Arc<LaddersService>,
    /// Who may read, and with which key (`auth.rs`).
    access: Arc<Access>,
    /// Wrong `authorization: Bearer` keys per address (`auth.rs`).
    bearer_throttle: Arc<auth::Throttle>,
    /// The live streams, counted per address (`connections::Gate`'s rule).
    live_streams: Arc<crate::connections::Gate>,
    replays: Arc<Semaphore>,
}

/// Serves the viewer on `listener` until `shutdown` resolves.
pub async fn serve(
    games: GamesService,
    ladders: LaddersService,
    access: Access,
    mut acceptor: crate::connections::Acceptor,
    idle_connection_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let viewer = Viewer {
        games: Arc::new(games),
        ladders: Arc::new(ladders),
        access: Arc::new(access),
        bearer_throttle: Arc::new(auth::Throttle::new()),
        live_streams: crate::connections::Gate::new(
            crate::connections::Sizing {
                max_connections: MAX_LIVE_STREAMS,
                per_client: MAX_LIVE_STREAMS / 4,
            },
            None,
        ),
        replays: Arc::new(Semaphore::new(MAX_REPLAYS_AT_ONCE)),
    };
    let app = router(viewer);
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        // Admitted against --max-connections and the per-client share; never spinning when
        // out of open files (`connections.rs`).
        let (stream, peer, ticket) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = acceptor.next() => accepted,
        };
        let _ = stream.set_nodelay(true);
        let state = crate::connections::Admitted::<TcpStream>::state();
        let stream = crate::connections::Admitted::new(
            stream,
            ticket,
            state.clone(),
            idle_connection_timeout,
            false,
            None,
            peer,
        );
        // Each request knows its peer's address (the login's throttle counts by it), and
        // keeps its connection from counting as idle from its head until its response (a live
        // stream's included) is done.
        let app = app.clone();
        let service = hyper_util::service::TowerToHyperService::new(tower::service_fn(
            move |mut request: axum::extract::Request<hyper::body::Incoming>| {
                let busy = state.busy();
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                let app = app.clone();
                async move {
                    use tower::ServiceExt;
                    let response = app.oneshot(request).await?;
                    Ok::<_, std::convert::Infallible>(response.map(move |body| {
                        axum::body::Body::new(crate::connections::Counted::new(body, busy))
                    }))
                }
            },
        ));
        tasks.spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .max_buf_size(MAX_HEAD_BYTES)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "http connection ended");
            }
        });
        // Reap finished connections so the set does not grow with the server's age.
        while tasks.try_join_next().is_some() {}
    }
    // Read-only: nothing is lost by cutting open connections (live streams end anyway when
    // the games stop).
    tasks.abort_all();
}

fn router(viewer: Viewer) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/games/{id}", get(assets::index))
        .route("/ladders", get(assets::index))
        .route("/ladders/{name}", get(assets::index))
        .route("/ladders/{name}/bots/{bot}", get(assets::index))
        .route("/assets/{name}", get(assets::asset))
        .route("/api/games", get(api::list))
        .route("/api/games/{id}", get(api::game))
        .route("/api/games/{id}/live", get(sse::live))
        .route("/api/games/{id}/replay", get(replay::index))
        .route("/api/games/{id}/steps", get(replay::steps))
        .route("/api/games/{id}/file", get(api::file))
        .route("/api/ladders", get(ladders::list))
        .route("/api/ladders/{name}", get(ladders::standings))
        .route("/api/ladders/{name}/games", get(ladders::games))
        .route(
            "/api/ladders/{name}/standings.csv",
            get(ladders::standings_csv),
        )
        .route("/api/ladders/{name}/live", get(ladders::live))
        .route("/api/ladders/{name}/bots/{bot}", get(ladders::bot))
        .route("/login", get(auth::login_form).post(auth::login))
        .route("/logout", post(auth::logout))
        .fallback(|| async { ApiError::not_found("no such page: the viewer starts at /") })
        .layer(axum::middleware::from_fn_with_state(
            viewer.clone(),
            auth::guard,
        ))
        .with_state(viewer)
}

/// An answer other than success: an HTTP status and a message meant for the person reading it,
/// as JSON `{"error": "...", "code": "NOT_FOUND"}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", message)
    }
    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
    }
    pub(crate) fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "FAILED_PRECONDITION", message)
    }
    pub(crate) fn busy(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "RESOURCE_EXHAUSTED",
            message,
        )
    }
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", message)
    }
}

impl From<tonic::Status> for ApiError {
    fn from(status: tonic::Status) -> Self {
        ApiError::coded(status.code(), status.message().to_string())
    }
}

/// The host's own error, as the games service would answer it, in HTTP terms.
impl From<crate::error::HostError> for ApiError {
    fn from(error: crate::error::HostError) -> Self {
        ApiError::coded(error.code(), error.message().to_string())
    }
}

impl ApiError {
    fn coded(code: tonic::Code, message: String) -> Self {
        use tonic::Code;
        let http = match code {
            Code::InvalidArgument | Code::OutOfRange => StatusCode::BAD_REQUEST,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::PermissionDenied => StatusCode::FORBIDDEN,
            Code::Unauthenticated => StatusCode::UNAUTHORIZED,
            Code::FailedPrecondition | Code::Aborted => StatusCode::CONFLICT,
            Code::ResourceExhausted | Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(http, gangs_proto::code_name(code), message)
    }
}

impl ApiError {
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "error": self.message, "code": self.code })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = json_response(&self.to_json());
        *response.status_mut() = self.status;
        response
    }
}

/// A JSON body; never cached (a game changes under it).
pub(crate) fn json_response(value: &serde_json::Value) -> Response {
    let mut response = serde_json::to_vec(value)
        .unwrap_or_else(|_| b"null".to_vec())
        .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A game id from a path: short, and made of the characters ids are made of.
pub(crate) fn check_game_id(id: &str) -> Result<&str, ApiError> {
    if id.is_empty()
        || id.len() > MAX_GAME_ID_LEN
        || !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(ApiError::bad_request(format!(
            "{} is not a game id (letters, digits, '-' and '_', at most {MAX_GAME_ID_LEN})",
            quoted(id)
        )));
    }
    Ok(id)
}

/// A query string checked against the parameters an endpoint knows: unknown names, repeated
/// names, over-long strings and values outside `[A-Za-z0-9_.@-]` are refused with a message
/// naming them (no value here needs escaping but '@', which a browser sends as `%40`: nothing
/// else is percent-decoded).
pub(crate) struct Query<'a> {
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Query<'a> {
    pub(crate) fn parse(raw: Option<&'a str>, known: &[&str]) -> Result<Query<'a>, ApiError> {
        let raw = raw.unwrap_or("");
        if raw.len() > MAX_QUERY_BYTES {
            return Err(ApiError::bad_request(format!(
                "the query string is {} bytes; at most {MAX_QUERY_BYTES}",
                raw.len()
            )));
        }
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for pair in raw.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !known.contains(&name) {
                return Err(ApiError::bad_request(format!(
                    "unknown query parameter {}: this endpoint takes {}",
                    quoted(name),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
            if pairs.iter().any(|(n, _)| *n == name) {
                return Err(ApiError::bad_request(format!(
                    "query parameter {name} is given twice"
                )));
            }
            // '@' (`bot=alice@2`), as given or as a browser escapes it.
            if !value
                .replace("%40", "@")
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'@'))
            {
                return Err(ApiError::bad_request(format!(
                    "query parameter {name}: {} is not a valid value",
                    quoted(value)
                )));
            }
            pairs.push((name, value));
        }
        Ok(Query { pairs })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&'a str> {
        self.pairs
            .iter()
            .find(|(n, v)| *n == name && !v.is_empty())
            .map(|(_, v)| *v)
    }

    /// An unsigned number in `0..=max`, or `default` when absent.
    pub(crate) fn number(&self, name: &str, default: u64, max: u64) -> Result<u64, ApiError> {
        let Some(value) = self.get(name) else {
            return Ok(default);
        };
        match value.parse::<u64>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(ApiError::bad_request(format!(
                "query parameter {name}: {} is not a number from 0 to {max}",
                quoted(value)
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_names_what_it_refuses() {
        let known = ["limit", "kind"];
        let q = Query::parse(Some("limit=5&kind=the-gang"), &known).unwrap();
        assert_eq!(q.number("limit", 50, 100).unwrap(), 5);
        assert_eq!(q.get("kind"), Some("the-gang"));
        let e = Query::parse(Some("limt=5"), &known).err().unwrap();
        assert!(e.message.contains("limt") && e.message.contains("limit, kind"));
        let e = Query::parse(Some("limit=1&limit=2"), &known).err().unwrap();
        assert!(e.message.contains("twice"));
        let e = Query::parse(Some("kind=%3Cscript%3E"), &known)
            .err()
            .unwrap();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        let q = Query::parse(Some("limit=1000"), &known).unwrap();
        assert!(q.number("limit", 50, 100).is_err());
        let long = "kind=".to_string() + &"a".repeat(600);
        assert!(Query::parse(Some(&long), &known).is_err());
    }

    #[test]
    fn game_ids_are_checked_and_quoted_short() {
        assert!(check_game_id("0123abcd").is_ok());
        assert!(check_game_id("").is_err());
        assert!(check_game_id("../etc").is_err());
        let e = check_game_id(&"x".repeat(500)).err().unwrap();
        assert!(e.message.len() < 200);
    }
}
