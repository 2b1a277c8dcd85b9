//! gRPC-Web for browsers (`--grpc-web`, `--cors-origin ORIGIN`): the `Games` service answered
//! in the gRPC-Web protocol (tonic-web: binary and text, HTTP/1.1 too, unary calls and server
//! streams; client streams, here `ImportGame`, are not in the protocol), behind a CORS policy
//! that names each allowed origin. Keys travel as for gRPC: `authorization: Bearer KEY`.

use http::header::{HeaderName, HeaderValue};
use http::Method;
use std::time::Duration;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// How long a browser may cache a preflight answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(600);

/// The CORS and gRPC-Web layers for these flags: both None without `--grpc-web`; CORS None
/// without `--cors-origin` (same-origin pages only). An origin that is not `scheme://host[:port]`
/// is refused, naming it.
pub fn layers(
    enabled: bool,
    origins: &[String],
) -> Result<(Option<CorsLayer>, Option<tonic_web::GrpcWebLayer>), String> {
    if !enabled {
        return Ok((None, None));
    }
    let cors = if origins.is_empty() {
        None
    } else {
        let origins = origins
            .iter()
            .map(|origin| check_origin(origin))
            .collect::<Result<Vec<_>, _>>()?;
        Some(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods([Method::POST, Method::OPTIONS])
                .allow_headers(
                    [
                        "content-type",
                        "x-grpc-web",
                        "x-user-agent",
                        "grpc-timeout",
                        "authorization",
                    ]
                    .map(HeaderName::from_static),
                )
                .expose_headers(
                    ["grpc-status", "grpc-message", "grpc-status-details-bin"]
                        .map(HeaderName::from_static),
                )
                .max_age(PREFLIGHT_MAX_AGE),
        )
    };
    Ok((cors, Some(tonic_web::GrpcWebLayer::new())))
}

/// An origin as browsers send it: `http://` or `https://`, a host, maybe a port, nothing more.
fn check_origin(origin: &str) -> Result<HeaderValue, String> {
    let refuse = || {
        format!(
            "--cors-origin {}: expected an origin such as https://play.example.org or http://127.0.0.1:8080 (scheme, host, port; no path)",
            gangs_proto::quoted(origin)
        )
    };
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or_else(refuse)?;
    if rest.is_empty()
        || !rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
    {
        return Err(refuse());
    }
    HeaderValue::from_str(origin).map_err(|_| refuse())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_checked() {
        assert!(check_origin("https://play.example.org").is_ok());
        assert!(check_origin("http://127.0.0.1:8080").is_ok());
        assert!(check_origin("http://127.0.0.1:8080/").is_err());
        assert!(check_origin("127.0.0.1:8080").is_err());
        assert!(check_origin("https://").is_err());
        assert!(layers(false, &["x".into()]).unwrap().0.is_none());
        assert!(layers(true, &["x".into()]).is_err());
        let (cors, web) = layers(true, &[]).unwrap();
        assert!(cors.is_none() && web.is_some());
    }
}
