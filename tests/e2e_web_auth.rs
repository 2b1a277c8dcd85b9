//! End to end, over plain HTTP: the web viewer behind the server's keys. Without a session
//! every page answers 401 with the login form and the JSON API 401 with a JSON error; a wrong
//! key, a forged cookie and a form posted from another site get nothing; a key logs in once
//! (an `HttpOnly`, `SameSite=Strict` cookie that does not hold the key) and then reads exactly
//! what `ListGames`/`Watch` give that key over gRPC; logging out ends the session. A client
//! guessing keys gets 429 after a few wrong ones (even with the right key), another address
//! still logs in, and the metrics count it.

use crate::web;

use gangs_proto::auth::ApiKey;
use gangs_proto::v1 as pb;
use serde_json::Value;
use web::*;

const ADMIN: &str = "admin-secret-1234";
const PLAYER: &str = "player-secret-5678";

/// Logs in with `key`: the session cookie (`name=value`), after checking the answer.
async fn log_in(http: &str, key: &str, next: &str) -> String {
    let body = format!("key={key}&next={}", next.replace('/', "%2F"));
    let (code, headers, text) = request(
        http,
        "POST",
        "/login",
        &[("content-type", "application/x-www-form-urlencoded")],
        &body,
    )
    .await;
    assert_eq!(code, 303, "log in: {text}");
    assert_eq!(headers["location"], next);
    let cookie = headers["set-cookie"].to_str().unwrap().to_string();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    assert!(!cookie.contains(key), "the cookie holds the key: {cookie}");
    cookie.split(';').next().unwrap().to_string()
}

async fn get_with_cookie(http: &str, path: &str, cookie: &str) -> (u16, String) {
    let (code, _, body) = request(http, "GET", path, &[("cookie", cookie)], "").await;
    (code, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewer_asks_for_a_key_and_shows_what_the_key_may_read() {
    let dir = tempfile::tempdir().unwrap();
    let (server, http) =
        start_viewer_with(dir.path(), &["--api-key", ADMIN, "--player-key", PLAYER]);
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect()
        .await
        .expect("connect");
    let mut admin = ApiKey::new(Some(ADMIN)).unwrap().client(channel.clone());
    let mut player = ApiKey::new(Some(PLAYER)).unwrap().client(channel);
    let game = admin
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            seed: Some(3),
            ..Default::default()
        })
        .await
        .expect("create a game")
        .into_inner()
        .game_id;

    // Without a session: 401 everywhere but the login page and its style.
    for path in [
        "/api/games".to_string(),
        format!("/api/games/{game}"),
        format!("/api/games/{game}/live"),
        format!("/api/games/{game}/file"),
        format!("/api/games/{game}/replay"),
    ] {
        let (code, body) = get(&http, &path).await;
        assert_eq!(code, 401, "GET {path}: {body}");
        let body: Value = serde_json::from_str(&body).expect("a JSON error");
        assert_eq!(body["code"], "UNAUTHENTICATED", "GET {path}");
        assert!(!body.to_string().contains(&game), "GET {path} told: {body}");
    }
    for path in [
        "/".to_string(),
        format!("/games/{game}"),
        "/assets/app.js".into(),
    ] {
        let (code, body) = get(&http, &path).await;
        assert_eq!(code, 401, "GET {path}");
        assert!(body.contains("action=\"/login\""), "GET {path}: {body}");
        assert!(!body.contains("<script"), "GET {path}: {body}");
    }
    let (code, body) = get(&http, &format!("/games/{game}")).await;
    assert_eq!(code, 401);
    assert!(
        body.contains(&format!("value=\"/games/{game}\"")),
        "the form comes back to the page asked for: {body}"
    );
    assert_eq!(get(&http, "/assets/style.css").await.0, 200);
    assert_eq!(get(&http, "/login").await.0, 200);

    // A wrong key, a forged cookie, a form from another site: nothing.
    let (code, headers, body) = request(
        &http,
        "POST",
        "/login",
        &[("content-type", "application/x-www-form-urlencoded")],
        "key=not-the-key&next=%2F",
    )
    .await;
    assert_eq!(code, 401, "{body}");
    assert!(headers.get("set-cookie").is_none());
    assert!(body.contains("wrong key"), "{body}");
    let forged = format!("gangs_session={}", "ab".repeat(32));
    assert_eq!(get_with_cookie(&http, "/api/games", &forged).await.0, 401);
    let (code, headers, _) = request(
        &http,
        "POST",
        "/login",
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("origin", "http://evil.example"),
        ],
        &format!("key={PLAYER}"),
    )
    .await;
    assert_eq!(code, 403);
    assert!(headers.get("set-cookie").is_none());

    // The player key logs in once and reads what ListGames gives it over gRPC.
    let cookie = log_in(&http, PLAYER, &format!("/games/{game}")).await;
    let (code, body) = get_with_cookie(&http, "/api/games", &cookie).await;
    assert_eq!(code, 200, "{body}");
    let page: Value = serde_json::from_str(&body).unwrap();
    let over_grpc = player
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect("list games")
        .into_inner()
        .games;
    let viewer_ids: Vec<&str> = page["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["game_id"].as_str().unwrap())
        .collect();
    let grpc_ids: Vec<&str> = over_grpc.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(viewer_ids, grpc_ids);
    assert_eq!(viewer_ids, [game.as_str()]);
    let (code, body) = get_with_cookie(&http, &format!("/api/games/{game}"), &cookie).await;
    assert_eq!(code, 200, "{body}");
    let shown: Value = serde_json::from_str(&body).unwrap();
    let mut watch = player
        .watch(pb::WatchRequest {
            game_id: game.clone(),
            token: String::new(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    let first = watch.message().await.expect("an update").expect("one");
    assert_eq!(
        shown["latest"]["update"],
        gangs_proto::json::to_json(&first, "gangs.v1.Update"),
        "the viewer shows the spectator's update the key gets over gRPC"
    );
    let (code, page) = get_with_cookie(&http, "/", &cookie).await;
    assert_eq!(code, 200);
    assert!(page.contains("<script"), "the viewer's page: {page}");

    // The admin key logs in too; logging out ends the player's session.
    let admin_cookie = log_in(&http, ADMIN, "/").await;
    assert_eq!(
        get_with_cookie(&http, "/api/games", &admin_cookie).await.0,
        200
    );
    let (code, headers, _) =
        request(&http, "POST", "/logout", &[("cookie", cookie.as_str())], "").await;
    assert_eq!(code, 303);
    assert!(headers["set-cookie"]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    assert_eq!(get_with_cookie(&http, "/api/games", &cookie).await.0, 401);
    assert_eq!(
        get_with_cookie(&http, "/api/games", &admin_cookie).await.0,
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_guessing_keys_is_throttled_and_others_are_not() {
    use crate::common::observe::{free_port, metric, scrape};
    let dir = tempfile::tempdir().unwrap();
    let metrics_port = free_port();
    let metrics = format!("127.0.0.1:{metrics_port}");
    let (_server, http) =
        start_viewer_with(dir.path(), &["--api-key", ADMIN, "--metrics", &metrics]);
    let form = [("content-type", "application/x-www-form-urlencoded")];
    let guesser = std::net::Ipv4Addr::new(127, 0, 0, 1);
    let mut codes = Vec::new();
    for guess in 0..8 {
        let body = format!("key=guess-{guess}&next=%2F");
        let (code, headers, text) =
            request_from(Some(guesser), &http, "POST", "/login", &form, &body).await;
        if code == 429 {
            let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
            assert!((1..=13).contains(&retry), "Retry-After {retry}");
            assert!(text.contains("too many wrong keys"), "{text}");
        }
        codes.push(code);
    }
    assert_eq!(codes, [401, 401, 401, 401, 401, 429, 429, 429]);
    // Throttled, the right key is not even compared: nothing to learn from the answer.
    let right = format!("key={ADMIN}&next=%2F");
    let (code, _, _) = request_from(Some(guesser), &http, "POST", "/login", &form, &right).await;
    assert_eq!(code, 429);
    // Another address logs in.
    let other = std::net::Ipv4Addr::new(127, 0, 0, 2);
    let (code, headers, _) =
        request_from(Some(other), &http, "POST", "/login", &form, &right).await;
    assert_eq!(code, 303);
    assert!(headers.contains_key("set-cookie"));
    let text = tokio::task::spawn_blocking(move || scrape(metrics_port))
        .await
        .unwrap();
    assert_eq!(
        metric(&text, "gangs_viewer_logins_throttled_total"),
        Some(4.0)
    );
    assert_eq!(metric(&text, "gangs_viewer_login_addresses"), Some(1.0));
}
