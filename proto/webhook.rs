//! The webhooks' wire: how a POST is signed and checked, and the small HTTP client that sends
//! it. Shared by the server (`--webhook URL`) and `gangs webhook test`, so both sign the same
//! way.
//!
//! Signing is Stripe's scheme: header [`SIGNATURE_HEADER`] reads `t=UNIX_SECONDS,v1=HEX`, where
//! HEX is the HMAC-SHA256, keyed with the shared secret, of `UNIX_SECONDS` `.` and the raw body.
//! A receiver recomputes it, compares in constant time and refuses a timestamp far from its
//! clock (a replayed old request). [`EVENT_ID_HEADER`] (also `id` in the body) is the same on
//! every retry of one event: a receiver that saw it already answers 2xx and does nothing.

use std::time::Duration;

/// The signature header.
pub const SIGNATURE_HEADER: &str = "gangs-signature";
/// The event's id, stable across retries (idempotency).
pub const EVENT_ID_HEADER: &str = "gangs-event-id";
/// Longest wait for a receiver's answer.
pub const POST_TIMEOUT: Duration = Duration::from_secs(10);

/// The signature header's value for `body` sent at `unix_seconds`.
pub fn signature(secret: &[u8], unix_seconds: u64, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let mut context = ring::hmac::Context::with_key(&key);
    context.update(unix_seconds.to_string().as_bytes());
    context.update(b".");
    context.update(body);
    let tag = context.sign();
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("t={unix_seconds},v1={hex}")
}

/// Whether `header` is a valid signature of `body` with `secret`, made within `tolerance` of
/// `now_seconds` (what a receiver checks; in Rust, for receivers written with this crate).
pub fn verify(
    secret: &[u8],
    header: &str,
    body: &[u8],
    now_seconds: u64,
    tolerance: Duration,
) -> bool {
    let mut timestamp = None;
    let mut tags = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<u64>().ok(),
            Some(("v1", hex)) => tags.push(hex),
            _ => {}
        }
    }
    let Some(timestamp) = timestamp else {
        return false;
    };
    if timestamp.abs_diff(now_seconds) > tolerance.as_secs() {
        return false;
    }
    let expected = signature(secret, timestamp, body);
    let expected = expected.rsplit_once("v1=").map_or("", |(_, hex)| hex);
    tags.iter().any(|tag| {
        tag.len() == expected.len()
            && tag
                .bytes()
                .zip(expected.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    })
}

/// The JSON body of a webhook event (`kind`: `game.finished`, `game.cancelled`,
/// `game.abandoned`, or `test`) and its id (`GAME-SEQ`: the same on every retry).
pub fn event_body(event: &crate::v1::WatchGamesResponse, kind: &str) -> (String, Vec<u8>) {
    let id = format!("{}-{}", event.game_id, event.seq);
    let mut value = crate::json::to_json(event, "gangs.v1.WatchGamesResponse");
    value["id"] = serde_json::json!(id);
    value["type"] = serde_json::json!(kind);
    (id, value.to_string().into_bytes())
}

/// The headers of a POST of `body` with event `id`, signed now with `secret`.
pub fn signed_headers(secret: &str, id: &str, body: &[u8]) -> Vec<(&'static str, String)> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    vec![
        (SIGNATURE_HEADER, signature(secret.as_bytes(), now, body)),
        (EVENT_ID_HEADER, id.to_string()),
    ]
}

/// Why a POST did not get a 2xx answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostError(pub String);

impl std::fmt::Display for PostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PostError {}

/// Checks a webhook URL: `http://` or `https://`, with a host.
pub fn check_url(url: &str) -> Result<http::Uri, PostError> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| PostError(format!("{} is not a URL: {e}", crate::quoted(url))))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http" | "https"), Some(_)) => Ok(uri),
        _ => Err(PostError(format!(
            "{}: a webhook URL is http://HOST[:PORT]/PATH or https://...",
            crate::quoted(url)
        ))),
    }
}

/// POSTs `body` (JSON) to `url` with `headers`, HTTP/1.1 (TLS with the system's roots for
/// `https://`); Ok with the status when it is 2xx, else why not. At most [`POST_TIMEOUT`].
pub async fn post(url: &str, headers: &[(&str, String)], body: Vec<u8>) -> Result<u16, PostError> {
    tokio::time::timeout(POST_TIMEOUT, post_now(url, headers, body))
        .await
        .map_err(|_| PostError(format!("no answer within {} s", POST_TIMEOUT.as_secs())))?
}

async fn post_now(url: &str, headers: &[(&str, String)], body: Vec<u8>) -> Result<u16, PostError> {
    use http_body_util::BodyExt;
    let uri = check_url(url)?;
    let host = uri
        .host()
        .expect("checked")
        .trim_matches(['[', ']'])
        .to_string();
    let tls = uri.scheme_str() == Some("https");
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let stream = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| PostError(format!("cannot connect to {host}:{port}: {e}")))?;
    let _ = stream.set_nodelay(true);
    let authority = uri
        .authority()
        .map_or(host.clone(), |a| a.as_str().to_string());
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
    let mut request = http::Request::post(path)
        .header(http::header::HOST, authority)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::USER_AGENT, "gangs-webhook");
    for (name, value) in headers {
        request = request.header(*name, value.as_str());
    }
    let request = request
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .map_err(|e| PostError(format!("cannot build the request: {e}")))?;
    let response = if tls {
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(client_config()?));
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| PostError(format!("{host} is not a TLS server name: {e}")))?;
        let stream = connector
            .connect(name, stream)
            .await
            .map_err(|e| PostError(format!("TLS with {host}:{port} failed: {e}")))?;
        send(hyper_util::rt::TokioIo::new(stream), request).await?
    } else {
        send(hyper_util::rt::TokioIo::new(stream), request).await?
    };
    let status = response.status();
    // Read (and drop) a short answer so the connection ends cleanly.
    let _ = response.into_body().collect().await;
    if status.is_success() {
        Ok(status.as_u16())
    } else {
        Err(PostError(format!("the receiver answered {status}")))
    }
}

async fn send<T>(
    io: T,
    request: http::Request<http_body_util::Full<bytes::Bytes>>,
) -> Result<http::Response<hyper::body::Incoming>, PostError>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| PostError(format!("HTTP handshake failed: {e}")))?;
    tokio::spawn(connection);
    sender
        .send_request(request)
        .await
        .map_err(|e| PostError(format!("the request failed: {e}")))
}

/// TLS to a receiver: the system's roots, as browsers and curl trust them.
fn client_config() -> Result<rustls::ClientConfig, PostError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| PostError(format!("TLS set-up: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_only_with_its_secret_body_and_time() {
        let header = signature(b"s3cret", 1_700_000_000, b"{\"a\":1}");
        assert!(header.starts_with("t=1700000000,v1="));
        assert_eq!(header.len(), "t=1700000000,v1=".len() + 64);
        let ok = |secret: &[u8], body: &[u8], now: u64| {
            verify(secret, &header, body, now, Duration::from_secs(300))
        };
        assert!(ok(b"s3cret", b"{\"a\":1}", 1_700_000_100));
        assert!(!ok(b"other", b"{\"a\":1}", 1_700_000_100));
        assert!(!ok(b"s3cret", b"{\"a\":2}", 1_700_000_100));
        assert!(!ok(b"s3cret", b"{\"a\":1}", 1_700_001_000), "too old");
        assert!(!verify(b"s3cret", "v1=00", b"", 0, Duration::from_secs(1)));
        // The documented recipe, by hand: HMAC-SHA256 over "t.body".
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, b"s3cret");
        let tag = ring::hmac::sign(&key, b"1700000000.{\"a\":1}");
        let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        assert!(header.ends_with(&hex));
    }

    #[test]
    fn a_body_carries_its_id_and_type_and_its_headers_sign_it() {
        let mut event = crate::v1::WatchGamesResponse {
            cursor: "7".into(),
            game_id: "0123456789abcdef".into(),
            seq: 12,
            reason: "no players".into(),
            ..Default::default()
        };
        event.set_event(crate::v1::DirectoryEvent::Cancelled);
        let (id, body) = event_body(&event, "game.cancelled");
        assert_eq!(id, "0123456789abcdef-12");
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["id"], "0123456789abcdef-12");
        assert_eq!(value["type"], "game.cancelled");
        assert_eq!(value["reason"], "no players");
        assert_eq!(value["event"], "DIRECTORY_EVENT_CANCELLED");
        let headers = signed_headers("s", &id, &body);
        assert_eq!(headers[1], (EVENT_ID_HEADER, id.clone()));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(verify(
            b"s",
            &headers[0].1,
            &body,
            now,
            Duration::from_secs(60)
        ));
    }

    #[test]
    fn urls_are_checked() {
        assert!(check_url("http://127.0.0.1:9/hook").is_ok());
        assert!(check_url("https://example.org/hook").is_ok());
        assert!(check_url("ftp://example.org/").is_err());
        assert!(check_url("/hook").is_err());
    }
}
