//! The viewer's page: hand-written HTML, JavaScript and CSS from `service/web/`, compiled into
//! the binary (no build step, no CDN: it works offline). Every page path serves `index.html`;
//! the script reads the path (`/`: the list, `/games/ID`: that game, live or replayed). Each
//! game's renderer and style come from the kind registry (`KindInfo::web_renderer`,
//! `KindInfo::web_style`): `/assets/games.js` and `/assets/games.css` are all of them, in
//! registry order.

use super::{ApiError, Query};
use axum::extract::{Path, RawQuery};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use std::sync::OnceLock;

const INDEX_HTML: &str = include_str!("../../web/index.html");
const APP_JS: &str = include_str!("../../web/app.js");
const STYLE_CSS: &str = include_str!("../../web/style.css");

/// Scripts and styles only from this server; data only from its API.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Every kind's part of one asset (its renderer, its style), one after the other in registry
/// order, each under a comment naming the kind; made once.
fn every_kind(
    cell: &'static OnceLock<String>,
    part: fn(&gangs_games::KindInfo) -> &'static str,
    comment: fn(&str) -> String,
) -> &'static str {
    cell.get_or_init(|| {
        gangs_games::kinds()
            .iter()
            .map(|kind| format!("{}\n{}\n", comment(kind.name), part(kind)))
            .collect()
    })
}

fn games_js() -> &'static str {
    static GAMES_JS: OnceLock<String> = OnceLock::new();
    every_kind(
        &GAMES_JS,
        |k| k.web_renderer,
        |name| format!("// ---- {name}"),
    )
}

fn games_css() -> &'static str {
    static GAMES_CSS: OnceLock<String> = OnceLock::new();
    every_kind(
        &GAMES_CSS,
        |k| k.web_style,
        |name| format!("/* ---- {name} */"),
    )
}

fn page(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `/` and `/games/{id}`: the page (the script reads the query itself: `?seq=`, `?kind=`, ...).
pub(super) async fn index() -> Response {
    page(INDEX_HTML, "text/html; charset=utf-8")
}

/// `/assets/app.js`, `/assets/games.js`, `/assets/style.css`, `/assets/games.css`.
pub(super) async fn asset(
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(query.as_deref(), &[])?;
    match name.as_str() {
        "app.js" => Ok(page(APP_JS, "text/javascript; charset=utf-8")),
        "games.js" => Ok(page(games_js(), "text/javascript; charset=utf-8")),
        "style.css" => Ok(page(STYLE_CSS, "text/css; charset=utf-8")),
        "games.css" => Ok(page(games_css(), "text/css; charset=utf-8")),
        _ => Err(ApiError::not_found(format!(
            "no asset {}",
            gangs_proto::quoted(&name)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn served(name: &str) -> String {
        let Ok(response) = asset(Path(name.to_string()), RawQuery(None)).await else {
            panic!("/assets/{name} is not served");
        };
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the asset's body");
        String::from_utf8(body.to_vec()).expect("a text asset")
    }

    #[tokio::test]
    async fn every_games_renderer_and_style_is_served_and_the_page_loads_them() {
        let (scripts, styles) = (served("games.js").await, served("games.css").await);
        for kind in gangs_games::kinds() {
            assert!(
                !kind.web_style.trim().is_empty() && styles.contains(kind.web_style),
                "{}'s style is not in /assets/games.css",
                kind.name
            );
            assert!(
                scripts.contains(kind.web_renderer),
                "{}'s renderer is not in /assets/games.js",
                kind.name
            );
        }
        for link in ["/assets/style.css", "/assets/games.css", "/assets/games.js"] {
            assert!(INDEX_HTML.contains(link), "the page does not load {link}");
        }
    }
}
