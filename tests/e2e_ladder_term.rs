//! End to end: a ladder run for a term on the real binaries, driven with the `gangs` CLI on a
//! server with keys. A name of only dots is refused. Four random bots play season 1; `gangs
//! ladder season --end` freezes its table, season 2 starts every bot from the initial rating,
//! and season 2's games leave season 1's table as it was, also after a SIGKILL and restart
//! (`standings --season 1`, `games --season N`). `gangs ladder rekey` prints a new key: the old
//! one is refused on Queue and as a Bearer credential of the Games service, the new one plays
//! and the rating stays. `gangs ladder retire` without a terminal refuses unless `--yes`.
//! `gangs ladder delete` refuses while a game is in play, `--force` cancels it, the ladder
//! leaves the list and its name is free again, also after a restart; `gangs ladder rename`
//! moves everything to the new name. `gangs ladder season --ends AT` refuses a past time, and
//! the server ends the season by itself at a planned one. Headless Chromium then shows season
//! 1's frozen table on the leaderboard page, picked with its season picker.

use crate::common;
use crate::e2e_ladder::{json, until};
use crate::web;

use common::*;
use gangs_proto::auth::ApiKey;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use pb::ladders_client::LaddersClient;
use std::process::{Command, Stdio};
use std::time::Duration;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::Code;

const ADMIN: &str = "admin-secret-term-1";
const PLAYER: &str = "player-secret-term-2";
const TERM: &str = "term";

type LaddersKeyed = LaddersClient<InterceptedService<Channel, ApiKey>>;
type GamesKeyed = GamesClient<InterceptedService<Channel, ApiKey>>;

fn channel(server: &Server) -> Channel {
    gangs_proto::connect::endpoint(&server.url(), None)
        .expect("endpoint")
        .connect_lazy()
}

fn ladders(server: &Server, key: &str) -> LaddersKeyed {
    LaddersClient::with_interceptor(channel(server), ApiKey::new(Some(key)).expect("key"))
}

fn games(server: &Server, key: &str) -> GamesKeyed {
    GamesClient::with_interceptor(channel(server), ApiKey::new(Some(key)).expect("key"))
}

/// `gangs --api-key ADMIN ARGS…` with no terminal on stdin: the exit code and output.
fn admin(server: &Server, args: &[&str]) -> (i32, String) {
    let output = Command::new(bin("gangs"))
        .args(["--server", &server.url(), "--api-key", ADMIN])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run gangs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

/// As [`admin`], expecting success and JSON.
fn admin_json(server: &Server, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out) = admin(server, &all);
    assert_eq!(code, 0, "gangs {args:?}: {out}");
    json(&out)
}

/// Runs four random bots, one game each, on `ladder` with `keys`, to their end.
fn play_one_match(server: &Server, ladder: &str, keys: &[String]) {
    let bots: Vec<Bot> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let child = Command::new(bin("gangs-bot-random"))
                .args([
                    "--server",
                    &server.url(),
                    "--ladder",
                    ladder,
                    "--bot-key",
                    key,
                ])
                .args(["--games", "1", "--seed", &(i + 1).to_string()])
                .env_remove("GANGS_API_KEY")
                .env("RUST_LOG", "warn")
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("start a ladder bot");
            Bot(child)
        })
        .collect();
    for mut bot in bots {
        let status = wait_with_timeout(&mut bot.0, Duration::from_secs(120));
        assert!(status.success(), "a bot failed: {status:?}");
    }
}

/// The standings of `season` (0: the current one), by "bot@version": (games, mu, sigma).
fn table(server: &Server, ladder: &str, season: u32) -> Vec<(String, u64, f64, f64)> {
    let season = season.to_string();
    let mut args = vec!["ladder", "standings", ladder];
    if season != "0" {
        args.extend(["--season", &season]);
    }
    let answer = admin_json(server, &args);
    let mut rows: Vec<(String, u64, f64, f64)> = answer["standings"]
        .as_array()
        .expect("standings")
        .iter()
        .map(|r| {
            (
                format!(
                    "{}@{}",
                    r["bot"].as_str().unwrap(),
                    r["version"].as_str().unwrap()
                ),
                r["games"].as_u64().unwrap_or(0),
                r["rating"]["mu"].as_f64().unwrap_or(0.0),
                r["rating"]["sigma"].as_f64().unwrap_or(0.0),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

fn games_of_season(server: &Server, ladder: &str, season: u32) -> Vec<serde_json::Value> {
    let season = season.to_string();
    let answer = admin_json(server, &["ladder", "games", ladder, "--season", &season]);
    answer["games"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_term_ends_with_a_frozen_table_and_the_housekeeping_works() {
    let dir = tempfile::tempdir().unwrap();
    let keyed = ["--api-key", ADMIN, "--player-key", PLAYER];
    let mut server = Server::start_with(dir.path(), 0, &keyed);

    // Names that break a link are refused.
    let (code, out) = admin(
        &server,
        &["ladder", "create", "..", "--kind", "gang-of-four"],
    );
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("only dots"), "{out}");

    let created = admin_json(
        &server,
        &[
            "ladder",
            "create",
            TERM,
            "--kind",
            "gang-of-four",
            "--option",
            "target_score=1",
            "--turn-ms",
            "1000",
            "--season-ends",
            "2099-01-01T00:00:00Z",
        ],
    );
    assert_eq!(created["season"], 1);
    assert_eq!(created["season_ends_unix_ms"], 4_070_908_800_000_i64);
    let names = ["r1", "r2", "r3", "r4"];
    let mut keys: Vec<String> = names
        .iter()
        .map(|n| {
            admin_json(&server, &["ladder", "register", TERM, n])["bot_key"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();

    // Season 1: one game.
    play_one_match(&server, TERM, &keys);
    let season_one = table(&server, TERM, 0);
    assert!(season_one.iter().all(|r| r.1 == 1), "{season_one:?}");
    let ended = admin_json(&server, &["ladder", "season", TERM, "--end"]);
    assert_eq!(ended["ended_season"], 1);
    assert_eq!(ended["ladder"]["season"], 2);
    assert!(
        ended["ladder"].get("season_ends_unix_ms").is_none(),
        "{ended}"
    );
    assert_eq!(table(&server, TERM, 1), season_one);
    let fresh = table(&server, TERM, 0);
    assert!(
        fresh.iter().all(|r| r.1 == 0 && r.2 == 25.0),
        "season 2 starts from the initial rating: {fresh:?}"
    );

    // Season 2: one game; season 1's table stays as it was.
    play_one_match(&server, TERM, &keys);
    let season_two = table(&server, TERM, 0);
    assert!(season_two.iter().all(|r| r.1 == 1), "{season_two:?}");
    assert_eq!(table(&server, TERM, 1), season_one);
    assert_eq!(games_of_season(&server, TERM, 1).len(), 1);
    let played = games_of_season(&server, TERM, 2);
    assert_eq!(played.len(), 1);
    let game_id = played[0]["game_id"].as_str().unwrap().to_string();
    let (code, out) = admin(&server, &["ladder", "standings", TERM, "--season", "3"]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("no season 3"), "{out}");

    // A restart keeps both tables.
    server.restart();
    assert_eq!(table(&server, TERM, 1), season_one);
    assert_eq!(table(&server, TERM, 0), season_two);

    // A new key for r1: the old one stops (Queue, Games), the new one reads, the rating stays.
    let old_key = keys[0].clone();
    let rekeyed = admin_json(&server, &["ladder", "rekey", TERM, "r1@1"]);
    let new_key = rekeyed["bot_key"].as_str().unwrap().to_string();
    assert_ne!(new_key, old_key);
    keys[0] = new_key.clone();
    assert_eq!(table(&server, TERM, 0), season_two);
    let status = ladders(&server, PLAYER)
        .queue(pb::QueueRequest {
            ladder: TERM.into(),
            bot_key: old_key.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    let read = |key: String| {
        let server = &server;
        let game_id = game_id.clone();
        async move {
            let mut client = games(server, &key);
            match client
                .get_log(pb::GetLogRequest {
                    game_id,
                    from_seq: 0,
                })
                .await
            {
                Ok(stream) => {
                    let mut stream = stream.into_inner();
                    stream.message().await.map(|_| ())
                }
                Err(status) => Err(status),
            }
        }
    };
    let refused = read(old_key).await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    read(new_key).await.expect("the new key reads its game");

    // Retiring asks; without a terminal it refuses unless --yes.
    let (code, out) = admin(&server, &["ladder", "retire", TERM, "r4"]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("--yes"), "{out}");
    let standings = admin_json(&server, &["ladder", "standings", TERM]);
    let r4 = |s: &serde_json::Value| {
        s["standings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["bot"] == "r4")
            .cloned()
            .unwrap()
    };
    assert_ne!(r4(&standings)["retired"], true, "not retired yet");
    let (code, out) = admin(&server, &["ladder", "retire", TERM, "r4", "--yes"]);
    assert_eq!(code, 0, "{out}");
    let standings = admin_json(&server, &["ladder", "standings", TERM]);
    assert_eq!(r4(&standings)["retired"], true);

    // Delete: refused while a game is in play, --force cancels it.
    let scratch = "scratch";
    admin_json(
        &server,
        &[
            "ladder",
            "create",
            scratch,
            "--kind",
            "gang-of-four",
            "--turn-ms",
            "600000",
        ],
    );
    let mut admin_rpc = ladders(&server, ADMIN);
    let mut streams = Vec::new();
    for bot in names {
        let key = admin_rpc
            .register_bot(pb::RegisterBotRequest {
                ladder: scratch.into(),
                bot: bot.into(),
                version: String::new(),
            })
            .await
            .expect("register")
            .into_inner()
            .bot_key;
        let stream = admin_rpc
            .queue(pb::QueueRequest {
                ladder: scratch.into(),
                bot_key: key,
                max_concurrent: 1,
                ..Default::default()
            })
            .await
            .expect("queue")
            .into_inner();
        streams.push(stream);
    }
    let mut scratch_game = String::new();
    while scratch_game.is_empty() {
        let event = streams[0].message().await.expect("event").expect("open");
        if let Some(pb::ladder_event::Event::Matched(m)) = event.event {
            scratch_game = m.game_id;
        }
    }
    let (code, out) = admin(&server, &["ladder", "delete", scratch]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("1 games in play") && out.contains("--force"),
        "{out}"
    );
    let deleted = admin_json(&server, &["ladder", "delete", scratch, "--force"]);
    assert_eq!(deleted["cancelled_games"], 1);
    let admin_games = games(&server, ADMIN);
    until("the deleted ladder's game cancelled", 30, || {
        let mut client = admin_games.clone();
        let game_id = scratch_game.clone();
        async move { status_of(&mut client, &game_id).await == pb::GameStatus::Cancelled }
    })
    .await;
    let listed = |server: &Server| -> Vec<String> {
        admin_json(server, &["ladder", "list"])["ladders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(listed(&server), [TERM]);
    let status = admin_rpc
        .standings(pb::StandingsRequest {
            ladder: scratch.into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    server.restart();
    assert_eq!(listed(&server), [TERM]);
    admin_json(
        &server,
        &["ladder", "create", scratch, "--kind", "the-gang"],
    );
    assert_eq!(listed(&server), [scratch, TERM]);

    // Rename: everything follows the new name; the old one is NOT_FOUND.
    let renamed = admin_json(&server, &["ladder", "rename", TERM, "term-2027"]);
    assert_eq!(renamed["name"], "term-2027");
    let (code, out) = admin(&server, &["ladder", "standings", TERM]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("NOT_FOUND") || out.contains("no ladder"),
        "{out}"
    );
    assert_eq!(table(&server, "term-2027", 1), season_one);
    server.restart();
    assert_eq!(table(&server, "term-2027", 0), season_two);
    // r1's new key queues on the new name.
    let stream = ladders(&server, PLAYER)
        .queue(pb::QueueRequest {
            ladder: "term-2027".into(),
            bot_key: keys[0].clone(),
            max_concurrent: 1,
            ..Default::default()
        })
        .await
        .expect("the new key queues on the new name")
        .into_inner();
    drop(stream);

    // A planned end: the server ends season 2 by itself at that time; its table is frozen.
    let (code, out) = admin(
        &server,
        &[
            "ladder",
            "season",
            "term-2027",
            "--ends",
            "2000-01-01T00:00:00Z",
        ],
    );
    assert_ne!(code, 0, "a past time is refused: {out}");
    let soon = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + 2;
    let planned = admin_json(
        &server,
        &[
            "ladder",
            "season",
            "term-2027",
            "--ends",
            &gangs_proto::time::utc_text(soon * 1000),
        ],
    );
    assert_eq!(planned["ended_season"], 0);
    assert_eq!(planned["ladder"]["season_ends_unix_ms"], soon * 1000);
    until("season 2 ended at its planned time", 30, || async {
        admin_json(&server, &["ladder", "standings", "term-2027"])["season"]["number"] == 3
    })
    .await;
    assert_eq!(table(&server, "term-2027", 2), season_two);

    // The leaderboard page shows season 1's frozen table, picked in its season picker.
    server.terminate();
    let mut flags = keyed.to_vec();
    flags.push("--http-public");
    let (server, http) = web::start_viewer_with(dir.path(), &flags);
    let browser = web::Browser::start().await;
    browser.open(&format!("{http}/ladders/term-2027")).await;
    browser
        .wait_until("document.getElementById('season')", "the season picker")
        .await;
    let options = browser
        .eval("[...document.querySelectorAll('#season option')].map(o => o.textContent)")
        .await;
    assert_eq!(
        options,
        serde_json::json!(["season 3 (current)", "season 2 (over)", "season 1 (over)"])
    );
    browser
        .eval("(() => { const s = document.getElementById('season'); s.value = '1'; s.dispatchEvent(new Event('change')); return true; })()")
        .await;
    browser
        .wait_until(
            "location.search === '?season=1' && document.getElementById('app').dataset.state === 'ready' && document.getElementById('season-note')",
            "season 1's page",
        )
        .await;
    let note = browser
        .eval("document.getElementById('season-note').textContent")
        .await;
    assert!(
        note.as_str().unwrap().contains("is over") && note.as_str().unwrap().contains("frozen"),
        "{note}"
    );
    let shown = browser
        .eval("[...document.querySelectorAll('#standings tr[data-bot]')].map(r => [r.dataset.bot, Number(r.querySelector('.games').textContent)])")
        .await;
    let mut shown: Vec<(String, u64)> = serde_json::from_value(shown).unwrap();
    shown.sort();
    let frozen: Vec<(String, u64)> = season_one.iter().map(|r| (r.0.clone(), r.1)).collect();
    assert_eq!(shown, frozen);
    browser.screenshot("ladder-season-frozen").await;
    // Its CSV download is season 1's frozen table too.
    let href = browser
        .eval("document.getElementById('standings-csv').getAttribute('href')")
        .await;
    assert_eq!(
        href.as_str(),
        Some("/api/ladders/term-2027/standings.csv?season=1")
    );
    browser.close().await;
    let bearer = format!("Bearer {ADMIN}");
    let (code, headers, csv) = web::request(
        &http,
        "GET",
        "/api/ladders/term-2027/standings.csv?season=1",
        &[("authorization", &bearer)],
        "",
    )
    .await;
    assert_eq!(code, 200, "{csv}");
    let disposition = headers["content-disposition"].to_str().unwrap();
    assert!(
        disposition.contains("term-2027-season-1-standings.csv"),
        "{disposition}"
    );
    let column = |name: &str| {
        gangs_proto::csv::STANDINGS_COLUMNS
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no CSV column {name}"))
    };
    let (bot, version, games) = (column("bot"), column("version"), column("games"));
    let mut from_csv: Vec<(String, u64)> = csv
        .trim_end()
        .split("\r\n")
        .skip(1)
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            (
                format!("{}@{}", fields[bot], fields[version]),
                fields[games].parse().unwrap(),
            )
        })
        .collect();
    from_csv.sort();
    assert_eq!(from_csv, frozen, "{csv}");
    drop(server);
}

async fn status_of(client: &mut GamesKeyed, game_id: &str) -> pb::GameStatus {
    let listed = client
        .list_games(pb::ListGamesRequest {
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("list games")
        .into_inner();
    listed
        .games
        .iter()
        .find(|g| g.game_id == game_id)
        .map_or(pb::GameStatus::Unspecified, |g| g.status())
}
