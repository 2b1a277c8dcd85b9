//! End to end, over plain HTTP: a ladder bot's key in the web viewer of a keyed server (no
//! `--http-public`). With `authorization: Bearer BOTKEY` it reads its own bot's page, that
//! page's JSON (`BotReport`), its bot's games (`/api/ladders/NAME/games?bot=`) and each of
//! those games (the summary and the replay); another bot's page, the ladder's games of every
//! bot, the game list and a game its ladder did not match it to stay refused with 403 saying
//! why.

use crate::common;
use crate::web;

use common::{bin, Bot};
use gangs_proto::auth::ApiKey;
use gangs_proto::v1 as pb;
use pb::ladders_client::LaddersClient;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use web::*;

const ADMIN: &str = "admin-secret-bot-key-web-1";
const PLAYER: &str = "player-secret-bot-key-web-2";
const LADDER: &str = "own-page";

async fn get_with(http: &str, path: &str, key: &str) -> (u16, String) {
    let bearer = format!("Bearer {key}");
    let (code, _, body) = request(http, "GET", path, &[("authorization", &bearer)], "").await;
    (code, body)
}

async fn json_with(http: &str, path: &str, key: &str) -> Value {
    let (code, body) = get_with(http, path, key).await;
    assert_eq!(code, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: not JSON ({e}): {body}"))
}

/// GET `path` with `key` answers 403 with a JSON error holding `words`.
async fn forbidden(http: &str, path: &str, key: &str, words: &str) {
    let (code, body) = get_with(http, path, key).await;
    assert_eq!(code, 403, "GET {path}: {body}");
    let error: Value = serde_json::from_str(&body).expect("a JSON error");
    assert_eq!(error["code"], "PERMISSION_DENIED", "GET {path}: {body}");
    assert!(
        error["error"].as_str().unwrap().contains(words),
        "GET {path}: {words:?} in {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_key_reads_its_own_bots_page_and_games_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let (server, http) =
        start_viewer_with(dir.path(), &["--api-key", ADMIN, "--player-key", PLAYER]);
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect()
        .await
        .expect("connect");
    let mut admin =
        LaddersClient::with_interceptor(channel.clone(), ApiKey::new(Some(ADMIN)).unwrap());
    admin
        .create_ladder(pb::CreateLadderRequest {
            name: LADDER.into(),
            kind: "gang-of-four".into(),
            players: Some(3),
            options: [("target_score".to_string(), "1".to_string())].into(),
            turn_ms: Some(300),
            ..Default::default()
        })
        .await
        .expect("create the ladder");
    let mut keys = Vec::new();
    let mut bots = Vec::new();
    for (i, name) in ["alpha", "beta", "gamma"].iter().enumerate() {
        let key = admin
            .register_bot(pb::RegisterBotRequest {
                ladder: LADDER.into(),
                bot: name.to_string(),
                version: String::new(),
            })
            .await
            .expect("register")
            .into_inner()
            .bot_key;
        let child = Command::new(bin("gangs-bot-random"))
            .args(["--server", &server.url()])
            .args(["--ladder", LADDER, "--bot-key", &key])
            .args(["--games", "1", "--seed", &(i + 1).to_string()])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start a bot");
        bots.push(Bot(child));
        keys.push(key);
    }
    let alpha = keys[0].as_str();

    // alpha's page lists a finished game.
    let report_path = format!("/api/ladders/{LADDER}/bots/alpha@1");
    let start = Instant::now();
    let report = loop {
        let report = json_with(&http, &report_path, alpha).await;
        let finished = report["recent_games"]
            .as_array()
            .is_some_and(|games| games.iter().any(|g| g["ended"] == "finished"));
        if finished {
            break report;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "waiting for alpha's game: {report}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    drop(bots);
    assert_eq!(report["bot"], "alpha", "{report}");
    assert_eq!(report["version"], "1", "{report}");
    let game = report["recent_games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["ended"] == "finished")
        .unwrap()["game_id"]
        .as_str()
        .unwrap()
        .to_string();

    // Its page (the HTML), the same JSON as BOT@VERSION escaped, its games and each game.
    let (code, page) = get_with(&http, &format!("/ladders/{LADDER}/bots/alpha@1"), alpha).await;
    assert_eq!(code, 200, "{page}");
    assert!(page.contains("/assets/app.js"), "{page}");
    let escaped = json_with(
        &http,
        &format!("/api/ladders/{LADDER}/bots/alpha%401"),
        alpha,
    )
    .await;
    assert_eq!(escaped["bot"], "alpha", "{escaped}");
    let games = json_with(
        &http,
        &format!("/api/ladders/{LADDER}/games?bot=alpha%401"),
        alpha,
    )
    .await;
    let listed = games["games"].as_array().unwrap();
    assert!(
        listed.iter().any(|g| g["game_id"] == game.as_str()),
        "{game} in {games}"
    );
    let summary = json_with(&http, &format!("/api/games/{game}"), alpha).await;
    assert_eq!(summary["game"]["game_id"], game.as_str(), "{summary}");
    assert_eq!(summary["game"]["state"], "finished", "{summary}");
    let replay = json_with(&http, &format!("/api/games/{game}/replay"), alpha).await;
    assert!(replay.is_object(), "{replay}");

    // Another bot's page and games, the whole ladder's games, the game list: refused, saying
    // whose key this is.
    for path in [
        format!("/api/ladders/{LADDER}/bots/beta@1"),
        format!("/api/ladders/{LADDER}/games?bot=beta@1"),
        format!("/api/ladders/{LADDER}/games"),
    ] {
        forbidden(
            &http,
            &path,
            alpha,
            "a bot key reads only its own bot's page (this key is alpha@1 of ladder own-page)",
        )
        .await;
    }
    forbidden(&http, "/api/games", alpha, "plays only its ladder games").await;
    forbidden(&http, "/api/ladders", alpha, "plays only its ladder games").await;

    // A game its ladder did not match it to.
    let mut games_admin = ApiKey::new(Some(ADMIN)).unwrap().client(channel.clone());
    let outside = games_admin
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .expect("create a game")
        .into_inner()
        .game_id;
    forbidden(
        &http,
        &format!("/api/games/{outside}"),
        alpha,
        "did not match alpha@1",
    )
    .await;

    // beta's key reads beta's page, not alpha's.
    let beta = json_with(
        &http,
        &format!("/api/ladders/{LADDER}/bots/beta@1"),
        &keys[1],
    )
    .await;
    assert_eq!(beta["bot"], "beta", "{beta}");
    forbidden(&http, &report_path, &keys[1], "this key is beta@1").await;
}
