//! The viewer behind the server's keys. On a server started with `--api-key` (and maybe
//! `--player-key`) the viewer asks for a key once, on a small login page (`/login`), and
//! remembers it in a session: a random id in an `HttpOnly`, `SameSite=Strict` cookie, mapped
//! here to which of the server's keys was given (never the key itself: the cookie is worthless
//! once the session ends or the server restarts). Without a session, pages answer 401 with the
//! login page and the JSON API answers 401 with a JSON error.
//!
//! Every read the viewer then makes goes through the same `Games` service with the session's
//! own key ([`read_key`]), so a key sees in the viewer exactly what it may read over gRPC.
//! `--http-public` (or a server without keys) keeps the viewer open: it reads with the player
//! key, else the admin key.
//!
//! A script needs no session: every path, pages and `/api/` alike, also takes
//! `authorization: Bearer KEY` (the admin key, the player key or a ladder bot's key, as gRPC
//! takes them) and then reads with that key, its rights exactly those it has over gRPC. A key
//! the server does not know gets 401 with a JSON error (throttled per address like the login).

use super::Viewer;
use crate::secret::constant_time_eq;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rand::RngCore;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed logins one address may make in a burst; then one more per [`FAILURE_REFILL`].
pub const MAX_FAILURES: u32 = 5;
/// How long an address waits for one more try once its failures are spent.
pub const FAILURE_REFILL: Duration = Duration::from_secs(12);
/// Addresses whose failures are remembered at once (about 40 bytes each).
pub const MAX_THROTTLED: usize = 10_000;

/// Sessions held at once; a new login past it ends the session closest to its expiry.
pub const MAX_SESSIONS: usize = 1024;
/// How long a login lasts.
pub const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);
/// The cookie's name.
const COOKIE: &str = "gangs_session";
/// Largest login form accepted (a key and the page to go back to).
const MAX_FORM_BYTES: usize = 4096;

const LOGIN_HTML: &str = include_str!("../../web/login.html");

/// The login page may post its form to this server (and nothing else); no script at all.
const LOGIN_CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

tokio::task_local! {
    /// The key the current request reads with (set by [`guard`] around each handler).
    static READ_KEY: Option<String>;
}

/// The key the viewer sends with the request being served: the session's key on a keyed
/// viewer, the server's own read key on an open one. None outside a request (the games service
/// then refuses a keyed server's call: closed by default).
pub(super) fn read_key() -> Option<String> {
    READ_KEY.try_with(Clone::clone).ok().flatten()
}

/// Who may read through the viewer.
pub enum Access {
    /// Everyone, reading with this key (a server without keys: none).
    Open(Option<String>),
    /// Whoever logs in with one of the server's keys.
    Keyed(Sessions),
}

impl Access {
    /// `--http-public`, or a server without keys: open, reading with the player key (least
    /// privilege) or else the admin key. Otherwise a login with either key.
    pub fn new(admin: Option<String>, player: Option<String>, public: bool) -> Access {
        match admin {
            Some(admin) if !public => Access::Keyed(Sessions::new(admin, player)),
            admin => Access::Open(player.or(admin)),
        }
    }
}

/// Which of the server's keys a session logged in with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Admin,
    Player,
}

struct Session {
    role: Role,
    expires: Instant,
}

/// The sessions of a keyed viewer: random ids mapped to a role, bounded, each expiring.
pub struct Sessions {
    admin: String,
    player: Option<String>,
    table: Mutex<HashMap<String, Session>>,
    throttle: Throttle,
}

/// An address's failed logins: a bucket of [`MAX_FAILURES`] tries, one back per
/// [`FAILURE_REFILL`].
#[derive(Debug, Clone, Copy)]
struct Tries {
    left: f64,
    at: Instant,
}

/// Failed logins per client address, so that a client guessing keys gets 429 after a few:
/// at most [`MAX_THROTTLED`] addresses (the one whose tries are nearest full leaves first).
/// IPv6 addresses count by their /64, which one client usually holds whole.
pub(super) struct Throttle {
    table: Mutex<HashMap<std::net::IpAddr, Tries>>,
}

/// The address a client is counted under.
fn client_of(ip: std::net::IpAddr) -> std::net::IpAddr {
    match ip {
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => std::net::IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                std::net::IpAddr::V6(segments.into())
            }
        },
        v4 => v4,
    }
}

impl Tries {
    /// The tries left at `now`, refilled since `at`.
    fn left_at(&self, now: Instant) -> f64 {
        let refilled = now.duration_since(self.at).as_secs_f64() / FAILURE_REFILL.as_secs_f64();
        (self.left + refilled).min(f64::from(MAX_FAILURES))
    }
}

impl Throttle {
    pub(super) fn new() -> Throttle {
        Throttle {
            table: Mutex::new(HashMap::new()),
        }
    }

    /// How long `ip` must wait before it may try a key, if it spent its tries.
    fn wait(&self, ip: std::net::IpAddr, now: Instant) -> Option<Duration> {
        let table = self.table.lock().expect("throttle lock");
        let left = table.get(&client_of(ip))?.left_at(now);
        (left < 1.0).then(|| FAILURE_REFILL.mul_f64(1.0 - left))
    }

    /// One failed try of `ip`.
    fn failed(&self, ip: std::net::IpAddr, now: Instant) {
        let mut table = self.table.lock().expect("throttle lock");
        let client = client_of(ip);
        if !table.contains_key(&client) && table.len() >= MAX_THROTTLED {
            // Those that have all their tries back are the same as forgotten.
            table.retain(|_, tries| tries.left_at(now) < f64::from(MAX_FAILURES));
            if table.len() >= MAX_THROTTLED {
                let fullest = table
                    .iter()
                    .max_by(|a, b| a.1.left_at(now).total_cmp(&b.1.left_at(now)))
                    .map(|(ip, _)| *ip);
                if let Some(fullest) = fullest {
                    table.remove(&fullest);
                }
            }
        }
        let tries = table.entry(client).or_insert(Tries {
            left: f64::from(MAX_FAILURES),
            at: now,
        });
        *tries = Tries {
            left: (tries.left_at(now) - 1.0).max(0.0),
            at: now,
        };
        crate::metrics::login_throttle_addresses(table.len());
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.table.lock().unwrap().len()
    }
}

impl Sessions {
    fn new(admin: String, player: Option<String>) -> Sessions {
        Sessions {
            admin,
            player,
            table: Mutex::new(HashMap::new()),
            throttle: Throttle {
                table: Mutex::new(HashMap::new()),
            },
        }
    }

    /// The role of `key`, compared in constant time; None for a key the server does not know.
    fn role_of(&self, key: &str) -> Option<Role> {
        if constant_time_eq(key.as_bytes(), self.admin.as_bytes()) {
            return Some(Role::Admin);
        }
        let player = self.player.as_ref()?;
        constant_time_eq(key.as_bytes(), player.as_bytes()).then_some(Role::Player)
    }

    fn key(&self, role: Role) -> Option<String> {
        match role {
            Role::Admin => Some(self.admin.clone()),
            Role::Player => self.player.clone(),
        }
    }

    /// A new session for `role`: its id (64 hex digits from the OS-seeded CSPRNG).
    fn open(&self, role: Role, now: Instant) -> String {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut table = self.table.lock().expect("sessions lock");
        table.retain(|_, session| session.expires > now);
        if table.len() >= MAX_SESSIONS {
            let soonest = table
                .iter()
                .min_by_key(|(_, session)| session.expires)
                .map(|(id, _)| id.clone());
            if let Some(soonest) = soonest {
                table.remove(&soonest);
            }
        }
        table.insert(
            id.clone(),
            Session {
                role,
                expires: now + SESSION_TTL,
            },
        );
        id
    }

    /// The key of the live session `id`, if any.
    fn key_of(&self, id: &str, now: Instant) -> Option<String> {
        let mut table = self.table.lock().expect("sessions lock");
        match table.get(id) {
            Some(session) if session.expires > now => {
                let role = session.role;
                drop(table);
                self.key(role)
            }
            Some(_) => {
                table.remove(id);
                None
            }
            None => None,
        }
    }

    fn close(&self, id: &str) {
        self.table.lock().expect("sessions lock").remove(id);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.table.lock().unwrap().len()
    }
}

/// The session id in the request's cookies.
fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
}

/// Runs every request of the viewer with its read key; on a keyed viewer, a request without a
/// live session gets 401 (the login page, or a JSON error under `/api/`), except the login
/// page itself and its style.
pub(super) async fn guard(State(viewer): State<Viewer>, request: Request, next: Next) -> Response {
    if let Some(header) = request.headers().get(header::AUTHORIZATION) {
        let key = match header.to_str().ok().and_then(|v| v.strip_prefix("Bearer ")) {
            Some(key) => key.to_string(),
            None => {
                return unauthorized_json(
                    "the authorization header must read `Bearer KEY` (the server's --api-key, --player-key or a ladder bot's key)",
                )
            }
        };
        return match bearer_key(&viewer, &request, key) {
            Ok(key) => READ_KEY.scope(key, next.run(request)).await,
            Err(refusal) => *refusal,
        };
    }
    let key = match viewer.access.as_ref() {
        Access::Open(key) => key.clone(),
        Access::Keyed(sessions) => {
            let path = request.uri().path();
            if matches!(path, "/login" | "/logout" | "/assets/style.css") {
                return next.run(request).await;
            }
            let key = session_cookie(request.headers())
                .and_then(|id| sessions.key_of(id, Instant::now()));
            match key {
                Some(key) => Some(key),
                None => return unauthorized(path),
            }
        }
    };
    READ_KEY.scope(key, next.run(request)).await
}

/// The key a request with `authorization: Bearer KEY` reads with: the key itself when the
/// server knows it (its rights are the front's to check, call by call, as over gRPC); on a
/// server without keys, the viewer's own read key (every key is as good as none there). A key
/// the server does not know: 401, and one more failure for the address (429 once its tries
/// are spent).
fn bearer_key(
    viewer: &Viewer,
    request: &Request,
    key: String,
) -> Result<Option<String>, Box<Response>> {
    let front = viewer.games.front();
    if !front.keyed() {
        return Ok(match viewer.access.as_ref() {
            Access::Open(key) => key.clone(),
            Access::Keyed(_) => None,
        });
    }
    let ip = request
        .extensions()
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |c| c.0.ip());
    let now = Instant::now();
    if let Some(wait) = viewer.bearer_throttle.wait(ip, now) {
        crate::metrics::login_throttled();
        let mut response = super::json_response(&serde_json::json!({
            "error": "too many wrong keys from this address: wait a few seconds and try again",
            "code": "RESOURCE_EXHAUSTED",
        }));
        *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        if let Ok(value) = HeaderValue::from_str(&(wait.as_secs() + 1).to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return Err(Box::new(response));
    }
    if front.knows(&key) {
        return Ok(Some(key));
    }
    viewer.bearer_throttle.failed(ip, now);
    Err(Box::new(unauthorized_json(
        "wrong key: this server does not know the key sent in `authorization: Bearer KEY` (give the server's --api-key, --player-key or a ladder bot's key)",
    )))
}

/// 401 with a JSON error saying why.
fn unauthorized_json(message: &str) -> Response {
    let mut response = super::json_response(&serde_json::json!({
        "error": message,
        "code": "UNAUTHENTICATED",
    }));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response
}

/// 401 for a request without a session: JSON under `/api/`, else the login page (coming back
/// to `path` once logged in).
fn unauthorized(path: &str) -> Response {
    if path.starts_with("/api/") {
        return unauthorized_json(
            "this viewer needs a key: log in at /login (the server's --api-key or --player-key), or send `authorization: Bearer KEY`",
        );
    }
    login_page(StatusCode::UNAUTHORIZED, path, None)
}

/// The page to go back to after logging in: a path of the viewer's own (letters, digits,
/// `/-_.`), else `/` (never another site: `//host` is refused).
fn safe_next(path: &str) -> &str {
    let ok = path.starts_with('/')
        && !path.starts_with("//")
        && path.len() <= 128
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.'));
    if ok && path != "/login" && path != "/logout" {
        path
    } else {
        "/"
    }
}

/// `html` without its comments (`<!-- ... -->`): the template's notes for its readers, which
/// name its placeholders, are not served (filled in, they would read as nonsense).
fn without_comments(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => {
                rest = &rest[start + end + "-->".len()..];
                // The comment's own line goes with it.
                if out.ends_with('\n') {
                    rest = rest.strip_prefix('\n').unwrap_or(rest);
                }
            }
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// The login page's template, its comments stripped (made once).
fn login_template() -> &'static str {
    static TEMPLATE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEMPLATE.get_or_init(|| without_comments(LOGIN_HTML))
}

fn login_page(status: StatusCode, next: &str, error: Option<&str>) -> Response {
    // `next` holds only [A-Za-z0-9/_.-] and `error` is one of this file's constants: nothing
    // to escape.
    let html = login_template()
        .replace("{{next}}", safe_next(next))
        .replace(
            "{{error}}",
            &error.map_or(String::new(), |e| format!("<p class=\"error\">{e}</p>")),
        );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(LOGIN_CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A form posted from another site is refused (a browser always sends `Origin` with a POST).
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    host.is_some() && origin_host == host
}

fn redirect(to: &str, cookie: Option<String>) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(to) {
        headers.insert(header::LOCATION, location);
    }
    if let Some(cookie) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /login`: the form (on an open viewer: straight to the list).
pub(super) async fn login_form(State(viewer): State<Viewer>) -> Response {
    match viewer.access.as_ref() {
        Access::Open(_) => redirect("/", None),
        Access::Keyed(_) => login_page(StatusCode::OK, "/", None),
    }
}

/// `POST /login` (form `key`, `next`): a session for a known key, its cookie set, back to
/// `next`; a wrong key gets the form again with 401.
pub(super) async fn login(State(viewer): State<Viewer>, request: Request) -> Response {
    let Access::Keyed(sessions) = viewer.access.as_ref() else {
        return redirect("/", None);
    };
    // The peer's address (`serve` puts it on every request); without one, all count as one.
    let ip = request
        .extensions()
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |c| c.0.ip());
    // Refused before the key is even compared: a throttled guesser learns nothing.
    if let Some(wait) = sessions.throttle.wait(ip, Instant::now()) {
        crate::metrics::login_throttled();
        let secs = wait.as_secs() + 1;
        let mut response = login_page(
            StatusCode::TOO_MANY_REQUESTS,
            "/",
            Some("too many wrong keys from this address: wait a few seconds and try again"),
        );
        if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return response;
    }
    if !same_origin(request.headers()) {
        return login_page(
            StatusCode::FORBIDDEN,
            "/",
            Some("the login form was posted from another site"),
        );
    }
    let body = match axum::body::to_bytes(request.into_body(), MAX_FORM_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            return login_page(
                StatusCode::PAYLOAD_TOO_LARGE,
                "/",
                Some("the form is too large"),
            )
        }
    };
    let mut key = None;
    let mut next = String::from("/");
    for (name, value) in form_urlencoded::parse(&body) {
        match name.as_ref() {
            "key" => key = Some(value.into_owned()),
            "next" => next = value.into_owned(),
            _ => {}
        }
    }
    let next = safe_next(&next).to_string();
    match key.as_deref().and_then(|key| sessions.role_of(key)) {
        Some(role) => {
            let id = sessions.open(role, Instant::now());
            let cookie = format!(
                "{COOKIE}={id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}",
                SESSION_TTL.as_secs()
            );
            redirect(&next, Some(cookie))
        }
        None => {
            sessions.throttle.failed(ip, Instant::now());
            login_page(
                StatusCode::UNAUTHORIZED,
                &next,
                Some("wrong key: give the server's --api-key or --player-key"),
            )
        }
    }
}

/// `POST /logout`: ends the session and clears its cookie.
pub(super) async fn logout(State(viewer): State<Viewer>, headers: HeaderMap) -> Response {
    if let (Access::Keyed(sessions), Some(id)) = (viewer.access.as_ref(), session_cookie(&headers))
    {
        if same_origin(&headers) {
            sessions.close(id);
        }
    }
    redirect(
        "/login",
        Some(format!(
            "{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_map_ids_to_roles_expire_and_stay_bounded() {
        let sessions = Sessions::new("admin-key".into(), Some("player-key".into()));
        assert_eq!(sessions.role_of("admin-key"), Some(Role::Admin));
        assert_eq!(sessions.role_of("player-key"), Some(Role::Player));
        assert_eq!(sessions.role_of("player-ke"), None);
        let now = Instant::now();
        let id = sessions.open(Role::Player, now);
        assert_eq!(id.len(), 64);
        assert_eq!(sessions.key_of(&id, now).as_deref(), Some("player-key"));
        assert_eq!(sessions.key_of("nope", now), None);
        assert_eq!(sessions.key_of(&id, now + SESSION_TTL), None, "expired");
        assert_eq!(sessions.len(), 0, "an expired session is dropped");
        for _ in 0..MAX_SESSIONS + 10 {
            sessions.open(Role::Admin, now);
        }
        assert_eq!(sessions.len(), MAX_SESSIONS);
    }

    #[test]
    fn failed_logins_are_throttled_per_address_and_the_table_is_bounded() {
        let throttle = Throttle {
            table: Mutex::new(HashMap::new()),
        };
        let now = Instant::now();
        let guesser: std::net::IpAddr = "10.0.0.1".parse().unwrap();
        for _ in 0..MAX_FAILURES {
            assert_eq!(throttle.wait(guesser, now), None);
            throttle.failed(guesser, now);
        }
        let wait = throttle.wait(guesser, now).expect("throttled");
        assert!(wait <= FAILURE_REFILL, "{wait:?}");
        assert_eq!(throttle.wait("10.0.0.2".parse().unwrap(), now), None);
        assert_eq!(
            throttle.wait(guesser, now + FAILURE_REFILL),
            None,
            "one try back"
        );
        // One /64 is one client.
        let a: std::net::IpAddr = "2001:db8::1".parse().unwrap();
        let b: std::net::IpAddr = "2001:db8::ffff:2".parse().unwrap();
        assert_eq!(client_of(a), client_of(b));
        for i in 0..MAX_THROTTLED as u32 + 100 {
            throttle.failed(std::net::Ipv4Addr::from(i).into(), now);
        }
        assert_eq!(throttle.len(), MAX_THROTTLED);
    }

    #[test]
    fn the_cookie_and_the_way_back_are_read_strictly() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=b; gangs_session=abc123; c=d"),
        );
        assert_eq!(session_cookie(&headers), Some("abc123"));
        assert_eq!(safe_next("/games/abc-1"), "/games/abc-1");
        assert_eq!(safe_next("//evil.example"), "/");
        assert_eq!(safe_next("https://evil.example"), "/");
        assert_eq!(safe_next("/games/<script>"), "/");
        assert_eq!(safe_next("/login"), "/");
    }

    #[tokio::test]
    async fn the_login_page_serves_no_comment_of_its_template() {
        assert!(LOGIN_HTML.contains("<!--"), "the template has its comment");
        let response = login_page(
            StatusCode::UNAUTHORIZED,
            "/games/abc",
            Some("wrong key: give the server's --api-key or --player-key"),
        );
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let html = String::from_utf8(body.to_vec()).unwrap();
        assert!(!html.contains("<!--"), "{html}");
        assert!(!html.contains("{{"), "{html}");
        assert!(!html.contains("filled in by the server"), "{html}");
        assert!(html.starts_with("<!doctype html>\n<html"), "{html}");
        assert!(html.contains("value=\"/games/abc\""), "{html}");
        assert!(html.contains("<p class=\"error\">wrong key"), "{html}");
        assert_eq!(without_comments("a<!-- b -->c<!-- d"), "ac");
        assert_eq!(without_comments("x\n<!-- y\n z -->\nw"), "x\nw");
    }

    #[test]
    fn open_or_keyed() {
        assert!(matches!(Access::new(None, None, false), Access::Open(None)));
        assert!(matches!(
            Access::new(Some("a".into()), Some("p".into()), true),
            Access::Open(Some(k)) if k == "p"
        ));
        assert!(matches!(
            Access::new(Some("a".into()), None, false),
            Access::Keyed(_)
        ));
    }
}
