//! End to end, over plain HTTP: the web viewer's JSON API (`gangs-server --http`) on games the
//! bots played. The list pages and filters as `ListGames` does; every bad parameter is a 400
//! naming it; the replay's chart figures (`gangs_games::summary`'s rows) add up to the final
//! scores; a cancelled game opens as a replay that ends with its `ended` record; the download is
//! a game file that verifies and, imported, replays the same game; and a server with keys still
//! serves an open viewer with `--http-public` (the viewer behind the keys: `e2e_web_auth.rs`).

use crate::common;
use crate::web;

use common::*;
use gangs_proto::v1 as pb;
use serde_json::Value;
use std::time::Duration;
use web::*;

fn options(kind: &str, players: u32, pairs: &[(&str, &str)]) -> pb::GameOptions {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    gangs_games::parse_options(kind, Some(players), &pairs).unwrap()
}

fn ids(page: &Value) -> Vec<String> {
    page["games"]
        .as_array()
        .expect("a games array")
        .iter()
        .map(|g| g["game_id"].as_str().unwrap().to_string())
        .collect()
}

/// A 400 whose message names `word`.
async fn refused(http: &str, path: &str, word: &str) {
    let (code, body) = get(http, path).await;
    assert_eq!(code, 400, "GET {path}: {body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["code"], "INVALID_ARGUMENT", "GET {path}");
    let message = body["error"].as_str().unwrap();
    assert!(
        message.contains(word),
        "GET {path}: {message:?} names {word:?}"
    );
    assert!(
        message.len() < 300,
        "GET {path}: a short message: {message:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_json_api_pages_filters_refuses_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let (server, http) = start_viewer(dir.path());
    let mut client = server.client().await;

    let four = create(
        &mut client,
        "gang-of-four",
        Some(options("gang-of-four", 4, &[("target_score", "40")])),
        11,
    )
    .await;
    let gang = create(
        &mut client,
        "the-gang",
        Some(options("the-gang", 3, &[("mode", "basic")])),
        12,
    )
    .await;
    let mut bots = Vec::new();
    for seat in 0..4 {
        bots.push(spawn_bot(
            "gangs-bot-greedy",
            &server,
            &four,
            Some(seat),
            110 + seat as u64,
        ));
    }
    for seat in 0..3 {
        bots.push(spawn_bot(
            "gangs-bot-random",
            &server,
            &gang,
            Some(seat),
            120 + seat as u64,
        ));
    }
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(300)).success());
    }
    // A third game, cancelled after one seat joined.
    let cancelled = create(
        &mut client,
        "gang-of-four",
        Some(options("gang-of-four", 4, &[])),
        13,
    )
    .await;
    client
        .join_game(pb::JoinGameRequest {
            game_id: cancelled.clone(),
            seat: Some(0),
            name: "early".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    client
        .cancel_game(pb::CancelGameRequest {
            game_id: cancelled.clone(),
            reason: "the table broke".into(),
        })
        .await
        .unwrap();

    // Pages of one, oldest first, as ListGames gives them.
    let mut listed = Vec::new();
    let mut path = "/api/games?limit=1".to_string();
    loop {
        let page = get_json(&http, &path).await;
        let page_ids = ids(&page);
        assert!(page_ids.len() <= 1, "limit=1: {page}");
        listed.extend(page_ids);
        let next = page["next_page_token"].as_str().unwrap();
        if next.is_empty() {
            break;
        }
        path = format!("/api/games?limit=1&page_token={next}");
    }
    assert_eq!(listed, [four.clone(), gang.clone(), cancelled.clone()]);
    // Filters.
    let page = get_json(&http, "/api/games?kind=the-gang").await;
    assert_eq!(ids(&page), [gang.as_str()]);
    assert_eq!(page["games"][0]["state"], "finished");
    assert_eq!(page["games"][0]["status"], "GAME_STATUS_FINISHED");
    let page = get_json(&http, "/api/games?status=finished").await;
    assert_eq!(ids(&page), [four.clone(), gang.clone()]);
    let page = get_json(&http, "/api/games?status=cancelled&kind=gang-of-four").await;
    assert_eq!(ids(&page), [cancelled.as_str()]);
    assert!(ids(&get_json(&http, "/api/games?status=running").await).is_empty());

    // Bad input: a 400 naming what is wrong, never a 500.
    refused(&http, "/api/games?limit=101", "limit").await;
    refused(&http, "/api/games?status=over", "status").await;
    refused(&http, "/api/games?kind=chess", "kind").await;
    refused(&http, "/api/games?sort=id", "sort").await;
    refused(&http, "/api/games?limit=1&limit=2", "twice").await;
    refused(&http, "/api/games?page_token=12", "page_token").await;
    refused(
        &http,
        &format!("/api/games?kind={}", "x".repeat(600)),
        "query",
    )
    .await;
    refused(&http, "/api/games/bad%20id", "game id").await;
    refused(
        &http,
        &format!("/api/games/{four}/steps?limit=101"),
        "limit",
    )
    .await;
    refused(
        &http,
        &format!("/api/games/{four}/steps?from=100000"),
        "from",
    )
    .await;
    refused(
        &http,
        &format!("/api/games/{four}/live?from_seq=x"),
        "from_seq",
    )
    .await;
    let (code, body) = get(&http, "/api/games/0000000000000000").await;
    assert_eq!(code, 404, "{body}");
    let (code, _) = get(&http, "/nowhere").await;
    assert_eq!(code, 404);

    // Gang of Four: the chart's figures are the summary's rows; they add up to the outcome.
    let outline = get_json(&http, &format!("/api/games/{four}/replay")).await;
    let outcome = &outline["outcome"];
    let rounds = outline["rounds"].as_array().unwrap();
    assert!(
        rounds.len() >= 2,
        "a game of several deals: {}",
        rounds.len()
    );
    let mut sums = [0u64; 4];
    for round in rounds {
        let summary = &round["summary"];
        for seat in 0..4 {
            sums[seat] += summary["seats"][seat]["penalty"].as_u64().unwrap();
            assert_eq!(
                summary["seats"][seat]["total"].as_u64().unwrap(),
                sums[seat]
            );
        }
        // Each deal starts where its `dealt` event is.
        let step = get_json(
            &http,
            &format!("/api/games/{four}/steps?from={}&limit=1", round["seq"]),
        )
        .await;
        assert!(
            step["steps"][0]["events_text"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("deal {} dealt", round["number"]))),
            "deal {} starts at seq {}: {step}",
            round["number"],
            round["seq"]
        );
    }
    for seat in outcome["seats"].as_array().unwrap() {
        let s = seat["seat"].as_u64().unwrap() as usize;
        assert_eq!(
            seat["score"].as_u64().unwrap(),
            sums[s],
            "seat {s}'s final score is the sum of its deals' penalties"
        );
    }

    // The Gang: one row per heist; the vaults and alarms count the successes and failures.
    let outline = get_json(&http, &format!("/api/games/{gang}/replay")).await;
    let rounds = outline["rounds"].as_array().unwrap();
    let (mut vaults, mut alarms) = (0, 0);
    for round in rounds {
        let summary = &round["summary"];
        if summary["success"].as_bool().unwrap() {
            vaults += 1;
        } else {
            alarms += 1;
        }
        assert_eq!(summary["vaults"], vaults, "heist {}", round["number"]);
        assert_eq!(summary["alarms"], alarms, "heist {}", round["number"]);
        assert_eq!(summary["mode"], "basic");
        assert_eq!(summary["hands"].as_array().unwrap().len(), 3);
    }
    assert!(
        vaults == 3 || alarms == 3,
        "the game ends on 3 vaults or 3 alarms"
    );
    let won = outline["outcome"]["seats"][0]["won"].as_bool().unwrap();
    assert_eq!(won, vaults == 3);

    // A cancelled game replays to its `ended` record (no deal: it never started).
    let game = get_json(&http, &format!("/api/games/{cancelled}")).await;
    assert_eq!(game["game"]["state"], "cancelled");
    let outline = get_json(&http, &format!("/api/games/{cancelled}/replay")).await;
    assert!(outline["outcome"].is_null());
    assert!(outline["rounds"].as_array().unwrap().is_empty());
    let last = outline["last_seq"].as_u64().unwrap();
    let steps = get_json(&http, &format!("/api/games/{cancelled}/steps?from={last}")).await;
    let end = &steps["steps"][0];
    assert_eq!(end["record"], "ended");
    assert!(
        end["ended"].as_str().unwrap().contains("the table broke"),
        "{end}"
    );

    // The download is the game file, and it verifies.
    let (code, text) = get(&http, &format!("/api/games/{four}/file")).await;
    assert_eq!(code, 200);
    let file = gangs_games::game_file::GameFile::read(text.as_bytes()).expect("a game file");
    file.verify().expect("the downloaded game file verifies");

    // Loaded back with `gangs import`, it is listed as imported and replays the same game.
    let path = dir.path().join("download.jsonl");
    std::fs::write(&path, &text).unwrap();
    let (code, out) = gangs_cli(&server, &["import", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{out}");
    let imported: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let imported = imported["game_id"].as_str().unwrap();
    let game = get_json(&http, &format!("/api/games/{imported}")).await;
    assert_eq!(game["game"]["imported"], true);
    assert_eq!(game["game"]["state"], "finished");
    let copy = get_json(&http, &format!("/api/games/{imported}/replay")).await;
    let original = get_json(&http, &format!("/api/games/{four}/replay")).await;
    assert_eq!(copy["rounds"], original["rounds"]);
    assert_eq!(copy["outcome"], original["outcome"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_keys_still_serves_a_public_viewer() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, http) = start_viewer_with(
        dir.path(),
        &[
            "--api-key",
            "admin-secret",
            "--player-key",
            "player-secret",
            "--http-public",
        ],
    );
    let page = get_json(&http, "/api/games").await;
    assert!(ids(&page).is_empty());
    let (code, page) = get(&http, "/").await;
    assert_eq!(code, 200);
    assert!(page.contains("<script"), "the page: {page}");
}
