//! End to end: what an instructor sees of a ladder's bots, over HTTP, gRPC and in Chromium. A
//! keyed server (`--http-public`, `--ladder-games-per-hour 1`) runs a ladder of three bots that
//! play one game each and are then capped; one is paused by the admin. Then:
//! - every viewer path takes `authorization: Bearer KEY` with that key's gRPC rights: the admin
//!   and player keys read, a ladder bot key may not list ladders (403), a wrong or malformed
//!   key gets 401 saying why;
//! - `/api/ladders/NAME/bots/BOT@V` (and `BotReport`) tells a bot's state and its reason, its
//!   rating, its games (result, seat, score, timeouts, how each ended), its pauses and caps;
//! - `LadderGames` and `/api/ladders/NAME/games?bot=` filter by bot, results name the bots;
//!   `JoinGame` on a ladder game says a ladder bot never joins;
//! - `/api/ladders/NAME/standings.csv` has a header row and a row per bot;
//! - `/api/ladders/NAME/live` sends the standings again when they change;
//! - in Chromium: the per-bot page with the paused bot's reason, the cap mark, the CSV link,
//!   and the leaderboard redrawn (without a reload) once a new game is rated.

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

const ADMIN: &str = "admin-secret-bot-page-1";
const PLAYER: &str = "player-secret-bot-page-2";
const LADDER: &str = "term-1";

type Ladders = LaddersClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, ApiKey>,
>;

/// A ladder bot playing `games` games with `key`.
fn spawn_ladder_bot(server: &common::Server, key: &str, games: u32, seed: usize) -> Bot {
    let child = Command::new(bin("gangs-bot-random"))
        .args(["--server", &server.url()])
        .args(["--ladder", LADDER, "--bot-key", key])
        .args(["--games", &games.to_string()])
        .args(["--seed", &seed.to_string()])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start a bot");
    Bot(child)
}

async fn register(ladders: &mut Ladders, bot: &str) -> String {
    ladders
        .register_bot(pb::RegisterBotRequest {
            ladder: LADDER.into(),
            bot: bot.into(),
            version: String::new(),
        })
        .await
        .expect("register")
        .into_inner()
        .bot_key
}

async fn get_with(http: &str, path: &str, key: &str) -> (u16, hyper::HeaderMap, String) {
    let bearer = format!("Bearer {key}");
    request(http, "GET", path, &[("authorization", &bearer)], "").await
}

async fn json_with(http: &str, path: &str, key: &str) -> Value {
    let (code, _, body) = get_with(http, path, key).await;
    assert_eq!(code, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: not JSON ({e}): {body}"))
}

/// Polls the standings until `done` holds (the ladder works on its own time: games, caps).
async fn standings_until(
    ladders: &mut Ladders,
    what: &str,
    done: impl Fn(&pb::StandingsResponse) -> bool,
) -> pb::StandingsResponse {
    let start = Instant::now();
    loop {
        let answer = ladders
            .standings(pb::StandingsRequest {
                ladder: LADDER.into(),
                fit: false,
                ..Default::default()
            })
            .await
            .expect("standings")
            .into_inner();
        if done(&answer) {
            return answer;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "waiting for {what}: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn state_of(answer: &pb::StandingsResponse, bot: &str) -> pb::BotState {
    let row = answer.standings.iter().find(|s| s.bot == bot).expect(bot);
    pb::BotState::try_from(row.state).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_instructor_sees_each_bot_its_reasons_and_the_standings_as_csv_and_live() {
    let dir = tempfile::tempdir().unwrap();
    let (server, http) = start_viewer_with(
        dir.path(),
        &[
            "--api-key",
            ADMIN,
            "--player-key",
            PLAYER,
            "--http-public",
            "--ladder-games-per-hour",
            "1",
        ],
    );
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect()
        .await
        .expect("connect");
    let mut admin =
        LaddersClient::with_interceptor(channel.clone(), ApiKey::new(Some(ADMIN)).unwrap());
    let mut player =
        LaddersClient::with_interceptor(channel.clone(), ApiKey::new(Some(PLAYER)).unwrap());
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
        let key = register(&mut admin, name).await;
        // Two games wanted, one an hour allowed: each bot plays one, then waits, capped.
        bots.push(spawn_ladder_bot(&server, &key, 2, i + 1));
        keys.push(key);
    }
    standings_until(&mut player, "one game rated and every bot capped", |s| {
        s.ladder.as_ref().unwrap().games >= 1
            && ["alpha", "beta", "gamma"]
                .iter()
                .all(|b| state_of(s, b) == pb::BotState::Capped)
    })
    .await;

    // The leaderboard as server-sent events: now, and again once the admin pauses gamma.
    let bearer = format!("Bearer {PLAYER}");
    let mut live = SseStream::open(
        &http,
        &format!("/api/ladders/{LADDER}/live"),
        &[("authorization", &bearer)],
    )
    .await;
    let first = live.next().await.expect("the standings at once");
    assert_eq!(first.event, "standings");
    let first: Value = serde_json::from_str(&first.data).unwrap();
    assert_eq!(first["ladder"]["name"], LADDER);
    admin
        .pause_bot(pb::PauseBotRequest {
            ladder: LADDER.into(),
            bot: "gamma".into(),
            version: String::new(),
            resume: false,
        })
        .await
        .expect("pause gamma");
    let changed = live.next().await.expect("the standings again");
    assert_eq!(changed.event, "standings");
    let changed: Value = serde_json::from_str(&changed.data).unwrap();
    let gamma = changed["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["bot"] == "gamma")
        .expect("gamma's row")
        .clone();
    assert_eq!(gamma["state"], "BOT_STATE_PAUSED", "{changed}");
    assert_eq!(gamma["state_reason"], "paused by an organizer");
    drop(live);

    // Bearer keys: the admin's and the player's read; a bot key has its gRPC rights (its games
    // only: no ladder list); a wrong or malformed key gets 401 saying why.
    let board_path = format!("/api/ladders/{LADDER}");
    for key in [ADMIN, PLAYER] {
        let board = json_with(&http, &board_path, key).await;
        assert_eq!(board["standings"].as_array().unwrap().len(), 3, "{board}");
        assert_eq!(
            board["mean_score_means"], "penalty points, lower is better",
            "{board}"
        );
        let (code, _, page) = get_with(&http, &format!("/ladders/{LADDER}"), key).await;
        assert_eq!(code, 200);
        assert!(page.contains("/assets/app.js"), "{page}");
    }
    let (code, _, body) = get_with(&http, "/api/ladders", &keys[0]).await;
    assert_eq!(code, 403, "a bot key lists no ladders: {body}");
    assert!(body.contains("PERMISSION_DENIED"), "{body}");
    for path in [board_path.as_str(), "/", "/api/games"] {
        let (code, _, body) = get_with(&http, path, "not-a-key-of-this-server").await;
        assert_eq!(code, 401, "GET {path}: {body}");
        let error: Value = serde_json::from_str(&body).expect("a JSON error");
        assert_eq!(error["code"], "UNAUTHENTICATED");
        assert!(
            error["error"].as_str().unwrap().contains("wrong key"),
            "{body}"
        );
    }
    let (code, _, body) = request(
        &http,
        "GET",
        &board_path,
        &[("authorization", &format!("Basic {PLAYER}"))],
        "",
    )
    .await;
    assert_eq!(code, 401, "{body}");
    assert!(body.contains("Bearer KEY"), "{body}");

    // A bot's page: the capped one.
    let alpha = json_with(
        &http,
        &format!("/api/ladders/{LADDER}/bots/alpha@1"),
        PLAYER,
    )
    .await;
    for key in [
        "bot",
        "version",
        "state",
        "state_reason",
        "rating",
        "games",
        "recent_games",
        "history",
        "pauses",
        "caps",
        "standing",
    ] {
        assert!(alpha.get(key).is_some(), "{key} in {alpha}");
    }
    assert_eq!(alpha["bot"], "alpha");
    assert_eq!(alpha["version"], "1");
    assert_eq!(alpha["state"], "BOT_STATE_CAPPED", "{alpha}");
    assert!(
        alpha["state_reason"]
            .as_str()
            .unwrap()
            .contains("--ladder-games-per-hour"),
        "{alpha}"
    );
    assert_eq!(alpha["games"], 1, "{alpha}");
    let caps = alpha["caps"].as_array().unwrap();
    assert_eq!(caps.len(), 1, "told once, logged once: {alpha}");
    assert_eq!(caps[0]["flag"], "--ladder-games-per-hour");
    assert_eq!(caps[0]["limit"], 1);
    assert!(caps[0]["unix_ms"].as_i64().unwrap() > 0, "{alpha}");
    let game = &alpha["recent_games"][0];
    assert_eq!(game["ended"], "finished", "{alpha}");
    let result = game["result"].as_str().unwrap();
    assert!(
        result == "won" || result.ends_with(" of 3"),
        "a result in words: {game}"
    );
    let seat = game["seat"].as_u64().unwrap() as usize;
    assert_eq!(game["names"][seat], "alpha@1", "{game}");
    assert!(
        game.get("score").is_some() && game.get("timeouts").is_some(),
        "{game}"
    );
    assert!(
        !game["summary"].as_str().unwrap().contains("seat "),
        "{game}"
    );
    assert_eq!(alpha["history"].as_array().unwrap().len(), 1, "{alpha}");

    // The paused one: why and since when.
    let gamma = json_with(
        &http,
        &format!("/api/ladders/{LADDER}/bots/gamma%401"),
        ADMIN,
    )
    .await;
    assert_eq!(gamma["state"], "BOT_STATE_PAUSED", "{gamma}");
    assert_eq!(gamma["state_reason"], "paused by an organizer");
    let pause = gamma["pauses"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(pause["reason"], "REASON_ADMIN", "{gamma}");
    assert_eq!(pause["lifted"], false);
    assert!(pause["unix_ms"].as_i64().unwrap() > 0);
    let (code, _, body) = get_with(
        &http,
        &format!("/api/ladders/{LADDER}/bots/nobody@1"),
        PLAYER,
    )
    .await;
    assert_eq!(code, 404, "{body}");

    // The games of one bot, and results that name the bots.
    let games = json_with(
        &http,
        &format!("/api/ladders/{LADDER}/games?bot=beta%401"),
        PLAYER,
    )
    .await;
    let listed = games["games"].as_array().unwrap();
    assert!(!listed.is_empty(), "{games}");
    for g in listed {
        assert!(
            g["names"].as_array().unwrap().contains(&"beta@1".into()),
            "{g}"
        );
        let summary = g["outcome"]["summary"].as_str().unwrap();
        assert!(
            summary.contains("@1 wins") && !summary.contains("seat "),
            "{summary}"
        );
    }
    let (code, _, body) = get_with(
        &http,
        &format!("/api/ladders/{LADDER}/games?bot=nobody@1"),
        PLAYER,
    )
    .await;
    assert_eq!(code, 404, "{body}");

    // The same over gRPC: the bot filter, and BotReport with the player key (not a bot key).
    let page = player
        .ladder_games(pb::LadderGamesRequest {
            ladder: LADDER.into(),
            bot: "alpha".into(),
            ..Default::default()
        })
        .await
        .expect("alpha's games")
        .into_inner();
    assert_eq!(page.games.len(), 1, "{page:?}");
    assert!(page.games[0].names.contains(&"alpha@1".to_string()));
    for (bot, version, code) in [
        ("nobody", "", tonic::Code::NotFound),
        ("alpha", "9", tonic::Code::NotFound),
        ("", "1", tonic::Code::InvalidArgument),
    ] {
        let refused = player
            .ladder_games(pb::LadderGamesRequest {
                ladder: LADDER.into(),
                bot: bot.into(),
                version: version.into(),
                ..Default::default()
            })
            .await
            .expect_err("refused");
        assert_eq!(refused.code(), code, "{bot}@{version}: {refused:?}");
    }
    let report = player
        .bot_report(pb::BotReportRequest {
            ladder: LADDER.into(),
            bot: "gamma".into(),
            version: "1".into(),
        })
        .await
        .expect("gamma's report")
        .into_inner();
    assert_eq!(report.state, pb::BotState::Paused as i32);
    let mut as_bot = LaddersClient::with_interceptor(
        channel.clone(),
        ApiKey::new(Some(keys[2].as_str())).unwrap(),
    );
    let refused = as_bot
        .bot_report(pb::BotReportRequest {
            ladder: LADDER.into(),
            bot: "gamma".into(),
            version: "1".into(),
        })
        .await
        .expect_err("a bot key reads no report");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);

    // A ladder game is not joined: JoinGame says so and points at Queue.
    let mut games = gangs_proto::auth::ApiKey::new(Some(ADMIN))
        .unwrap()
        .client(channel.clone());
    let refused = games
        .join_game(pb::JoinGameRequest {
            game_id: page.games[0].game_id.clone(),
            ..Default::default()
        })
        .await
        .expect_err("a ladder game is not joined");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    assert!(
        refused.message().contains("a ladder bot never joins")
            && refused.message().contains("Queue"),
        "{refused:?}"
    );

    // The standings as CSV: a header row, a row per bot, the same columns as the CLI's.
    let (code, headers, csv) = get_with(
        &http,
        &format!("/api/ladders/{LADDER}/standings.csv"),
        PLAYER,
    )
    .await;
    assert_eq!(code, 200, "{csv}");
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/csv"));
    assert!(headers["content-disposition"]
        .to_str()
        .unwrap()
        .contains(&format!("{LADDER}-standings.csv")));
    let lines: Vec<&str> = csv.trim_end().split("\r\n").collect();
    assert_eq!(lines[0], gangs_proto::csv::STANDINGS_COLUMNS.join(","));
    assert_eq!(lines.len(), 4, "{csv}");
    let gamma_line = lines.iter().find(|l| l.contains(",gamma,")).expect("gamma");
    assert!(
        gamma_line.contains(",paused,paused by an organizer,"),
        "{gamma_line}"
    );
    let alpha_line = lines.iter().find(|l| l.contains(",alpha,")).expect("alpha");
    assert!(
        alpha_line.contains(",capped,\""),
        "a quoted reason: {alpha_line}"
    );
    let (code, cli_csv) = common::gangs_cli(
        &server,
        &["--api-key", PLAYER, "ladder", "standings", LADDER, "--csv"],
    );
    assert_eq!(code, 0, "{cli_csv}");
    assert_eq!(
        cli_csv.lines().next().unwrap().trim_end(),
        lines[0],
        "the CLI's columns are the page's"
    );

    // In Chromium (the viewer is public here: it reads with the player key).
    let browser = Browser::start().await;
    browser.open(&format!("{http}/ladders/{LADDER}")).await;
    assert_eq!(
        browser
            .eval("document.querySelector('#standings-csv').getAttribute('href')")
            .await,
        format!("/api/ladders/{LADDER}/standings.csv")
    );
    assert_eq!(
        browser
            .eval("!!document.querySelector('tr[data-bot=\"alpha@1\"] .cap-mark')")
            .await,
        true,
        "the cap mark"
    );
    let reason = browser
        .eval("document.querySelector('tr[data-bot=\"gamma@1\"]').innerText")
        .await;
    assert!(
        reason.as_str().unwrap().contains("paused by an organizer"),
        "{reason}"
    );
    browser.screenshot("ladder-capped-and-paused").await;
    browser
        .eval("document.querySelector('tr[data-bot=\"gamma@1\"] a.bot-link').click() || true")
        .await;
    browser
        .wait_until(
            "location.pathname.includes('/bots/') && document.getElementById('app').dataset.state === 'ready' && !!document.getElementById('bot-reason')",
            "gamma's page",
        )
        .await;
    let shown = browser
        .eval("document.getElementById('bot-reason').innerText")
        .await;
    assert!(
        shown.as_str().unwrap().contains("paused by an organizer"),
        "{shown}"
    );
    assert_eq!(
        browser
            .eval("!!document.getElementById('bot-pauses')")
            .await,
        true
    );
    assert_eq!(
        browser.eval("!!document.getElementById('bot-games')").await,
        true
    );
    browser.screenshot("bot-page-paused").await;
    browser
        .open(&format!("{http}/ladders/{LADDER}/bots/alpha@1"))
        .await;
    assert_eq!(
        browser.eval("!!document.getElementById('bot-caps')").await,
        true
    );

    // The leaderboard redraws itself once a new game is rated: three new bots play one game.
    browser.open(&format!("{http}/ladders/{LADDER}")).await;
    browser.eval("(window.stayed = true)").await;
    for (i, name) in ["delta", "epsilon", "zeta"].iter().enumerate() {
        let key = register(&mut admin, name).await;
        bots.push(spawn_ladder_bot(&server, &key, 1, 10 + i));
    }
    browser
        .wait_until(
            "window.stayed === true && [...document.querySelectorAll('tr[data-bot=\"delta@1\"] td.games')].some((td) => td.innerText.trim() === '1')",
            "the leaderboard redrawn with delta's rated game, without a reload",
        )
        .await;
    browser.screenshot("ladder-refreshed").await;
    browser.close().await;
    drop(bots);
}
