//! End to end, over plain HTTP: the web viewer's ladder pages (`/ladders`, `/ladders/NAME`) and
//! the JSON behind them on a server with keys. Without a session the pages and the API answer
//! 401 like the rest of the viewer; logged in with the player key, `/api/ladders/NAME` is the
//! leaderboard `Standings` gives that key over gRPC (conservative rating, μ and σ, games, win
//! share with its interval, the trend of the last ratings), `/api/ladders/NAME/games` the
//! ladder's games newest first, paged, each with the id whose replay page the viewer serves.
//! Bad names and queries get their status.

use crate::common;
use crate::web;

use common::{bin, wait_with_timeout, Bot};
use gangs_proto::auth::ApiKey;
use gangs_proto::v1 as pb;
use pb::ladders_client::LaddersClient;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use web::*;

const ADMIN: &str = "admin-secret-ladders-1";
const PLAYER: &str = "player-secret-ladders-2";
const LADDER: &str = "web-class";
const GAMES_PER_BOT: u32 = 2;

async fn log_in(http: &str, key: &str) -> String {
    let (code, headers, text) = request(
        http,
        "POST",
        "/login",
        &[("content-type", "application/x-www-form-urlencoded")],
        &format!("key={key}&next=%2Fladders"),
    )
    .await;
    assert_eq!(code, 303, "log in: {text}");
    let cookie = headers["set-cookie"].to_str().unwrap();
    cookie.split(';').next().unwrap().to_string()
}

async fn get_as(http: &str, path: &str, cookie: &str) -> (u16, String) {
    let (code, _, body) = request(http, "GET", path, &[("cookie", cookie)], "").await;
    (code, body)
}

async fn json_as(http: &str, path: &str, cookie: &str) -> Value {
    let (code, body) = get_as(http, path, cookie).await;
    assert_eq!(code, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: not JSON ({e}): {body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ladder_pages_show_the_leaderboard_and_link_the_games() {
    let dir = tempfile::tempdir().unwrap();
    let (server, http) =
        start_viewer_with(dir.path(), &["--api-key", ADMIN, "--player-key", PLAYER]);
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect()
        .await
        .expect("connect");
    let admin = ApiKey::new(Some(ADMIN)).unwrap();
    let mut ladders = LaddersClient::with_interceptor(channel.clone(), admin.clone());
    ladders
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
    let mut bots = Vec::new();
    for (i, name) in ["alpha", "beta", "gamma"].iter().enumerate() {
        let key = ladders
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
            .args(["--server", &server.url(), "--api-key", PLAYER])
            .args(["--ladder", LADDER, "--bot-key", &key])
            .args(["--games", &GAMES_PER_BOT.to_string()])
            .args(["--seed", &(i + 1).to_string()])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start a bot");
        bots.push(Bot(child));
    }

    // Behind the keys like every page: no session, no ladder.
    for path in ["/api/ladders", &format!("/api/ladders/{LADDER}")] {
        let (code, body) = get(&http, path).await;
        assert_eq!(code, 401, "{path}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["code"], "UNAUTHENTICATED", "{body}");
    }
    for path in ["/ladders", &format!("/ladders/{LADDER}")] {
        let (code, body) = get(&http, path).await;
        assert_eq!(code, 401, "{path}");
        assert!(body.contains("<form"), "{path}: the login page: {body}");
    }
    let cookie = log_in(&http, PLAYER).await;

    for bot in &mut bots {
        let status = wait_with_timeout(bot, Duration::from_secs(120));
        assert!(status.success(), "a ladder bot failed: {status:?}");
    }
    // The bots are done once their games are over; the ladder rates each game right after.
    let mut player = LaddersClient::with_interceptor(channel, ApiKey::new(Some(PLAYER)).unwrap());
    let start = Instant::now();
    let grpc = loop {
        let answer = player
            .standings(pb::StandingsRequest {
                ladder: LADDER.into(),
                fit: false,
                season: 0,
            })
            .await
            .expect("standings")
            .into_inner();
        if answer.standings.iter().all(|s| s.playing == 0)
            && answer.ladder.as_ref().unwrap().games >= u64::from(GAMES_PER_BOT)
        {
            break answer;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{answer:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    // The list.
    let list = json_as(&http, "/api/ladders", &cookie).await;
    let ladder = &list["ladders"][0];
    assert_eq!(ladder["name"], LADDER, "{list}");
    assert_eq!(ladder["kind"], "gang-of-four");
    assert_eq!(ladder["players"], 3);
    assert_eq!(ladder["bots"], 3);
    let (code, page) = get_as(&http, "/ladders", &cookie).await;
    assert_eq!(code, 200);
    assert!(page.contains("/assets/app.js"), "{page}");

    // The leaderboard: what Standings says, row by row, with the trend of each bot's ratings.
    let board = json_as(&http, &format!("/api/ladders/{LADDER}"), &cookie).await;
    assert_eq!(board["ladder"]["name"], LADDER);
    assert_eq!(
        board["ladder"]["games"],
        grpc.ladder.as_ref().unwrap().games
    );
    let rows = board["standings"].as_array().expect("standings");
    assert_eq!(rows.len(), grpc.standings.len());
    assert_eq!(rows.len(), 3);
    for (row, want) in rows.iter().zip(&grpc.standings) {
        assert_eq!(row["bot"], want.bot.as_str(), "{board}");
        assert_eq!(row["version"], "1");
        assert_eq!(row["games"], want.games);
        assert!(want.games >= GAMES_PER_BOT, "{want:?}");
        let rating = want.rating.unwrap();
        let mu = row["rating"]["mu"].as_f64().unwrap();
        let sigma = row["rating"]["sigma"].as_f64().unwrap();
        assert!((mu - rating.mu).abs() < 1e-9 && (sigma - rating.sigma).abs() < 1e-9);
        let conservative = row["conservative"].as_f64().unwrap();
        assert!((conservative - (mu - 3.0 * sigma)).abs() < 1e-9, "{row}");
        let (share, low, high) = (
            row["win_share"].as_f64().unwrap(),
            row["win_share_low"].as_f64().unwrap(),
            row["win_share_high"].as_f64().unwrap(),
        );
        assert!(low <= share && share <= high, "{row}");
        // One rating after each rated game, the last one the current rating.
        let trend: Vec<f64> = row["trend"]
            .as_array()
            .expect("trend")
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(trend.len() as u32, want.games, "{row}");
        assert!((trend.last().unwrap() - conservative).abs() < 1e-9, "{row}");
    }
    let sorted: Vec<f64> = rows
        .iter()
        .map(|r| r["conservative"].as_f64().unwrap())
        .collect();
    assert!(sorted.windows(2).all(|w| w[0] >= w[1]), "{sorted:?}");

    // The games, newest first, a page at a time; each game's replay page and replay are there.
    let mut games = Vec::new();
    let mut token = String::new();
    loop {
        let path = if token.is_empty() {
            format!("/api/ladders/{LADDER}/games?limit=1")
        } else {
            format!("/api/ladders/{LADDER}/games?limit=1&page_token={token}")
        };
        let page = json_as(&http, &path, &cookie).await;
        let listed = page["games"].as_array().unwrap();
        assert!(listed.len() <= 1, "{page}");
        games.extend(listed.iter().cloned());
        token = page["next_page_token"].as_str().unwrap().to_string();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(
        games.len() as u64,
        grpc.ladder.as_ref().unwrap().games,
        "{games:?}"
    );
    let matches: Vec<u64> = games.iter().map(|g| g["match"].as_u64().unwrap()).collect();
    assert!(matches.windows(2).all(|w| w[0] > w[1]), "{matches:?}");
    for game in &games {
        let id = game["game_id"].as_str().unwrap();
        assert_eq!(game["names"].as_array().unwrap().len(), 3, "{game}");
        assert!(game["outcome"]["summary"].as_str().is_some(), "{game}");
        let (code, _) = get_as(&http, &format!("/games/{id}"), &cookie).await;
        assert_eq!(code, 200, "{id}");
        let replay = json_as(&http, &format!("/api/games/{id}/replay"), &cookie).await;
        assert_eq!(replay["kind"], "gang-of-four", "{replay}");
    }
    let (code, page) = get_as(&http, &format!("/ladders/{LADDER}"), &cookie).await;
    assert_eq!(code, 200);
    assert!(page.contains("/assets/app.js"));

    // Bad input: named, and nothing else answered.
    let refusals = [
        ("/api/ladders/no-such-ladder", 404, "NOT_FOUND"),
        ("/api/ladders/no-such-ladder/games", 404, "NOT_FOUND"),
        ("/api/ladders/bad%20name", 400, "INVALID_ARGUMENT"),
        (
            &format!("/api/ladders/{LADDER}/games?limit=1000") as &str,
            400,
            "INVALID_ARGUMENT",
        ),
        (
            &format!("/api/ladders/{LADDER}/games?page_token=x"),
            400,
            "INVALID_ARGUMENT",
        ),
        (
            &format!("/api/ladders/{LADDER}?sort=mu"),
            400,
            "INVALID_ARGUMENT",
        ),
    ];
    for (path, status, code) in refusals {
        let (got, body) = get_as(&http, path, &cookie).await;
        assert_eq!(got, status, "{path}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["code"], code, "{path}: {body}");
    }
}
