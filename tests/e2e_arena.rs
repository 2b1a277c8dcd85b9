//! End-to-end test of `gangs arena`: the real CLI starts its own `gangs-server` and the real
//! random bot processes, plays short matches of both games and prints its JSON report; with
//! `--out` it keeps every game's file (which verifies with no server) and the results.

use crate::common;

use common::bin;
use serde_json::Value;
use std::process::Command;

/// Runs `gangs arena ARGS --json` (its own server: no --server, no GANGS_SERVER) and returns
/// the exit code and the parsed report.
fn arena(args: &[&str]) -> (i32, Value) {
    let output = Command::new(bin("gangs"))
        .arg("arena")
        .args(args)
        .arg("--json")
        .env_remove("GANGS_SERVER")
        .env_remove("GANGS_API_KEY")
        .output()
        .expect("run gangs arena");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stdout.lines().count(),
        1,
        "--json prints one object; stdout: {stdout}\nstderr: {stderr}"
    );
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr: {stderr}"));
    (output.status.code().unwrap_or(-1), report)
}

fn number(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {value}"))
}

/// Gang of Four's per-bot rows: shares within their intervals, Elo inside its interval.
fn check_rows(report: &Value) -> Vec<Value> {
    let bots = report["bots"].as_array().expect("bots array").clone();
    for bot in &bots {
        let games = number(bot, "seat_games");
        let wins = number(bot, "seat_game_wins");
        assert!(wins <= games, "{bot}");
        let (share, low, high) = (
            number(bot, "win_share"),
            number(bot, "win_share_low"),
            number(bot, "win_share_high"),
        );
        assert!(
            0.0 <= low && low <= share && share <= high && high <= 1.0,
            "{bot}"
        );
        assert!((share - wins / games).abs() < 1e-9, "{bot}");
        let (elo, low, high) = (
            number(bot, "elo"),
            number(bot, "elo_low"),
            number(bot, "elo_high"),
        );
        assert!(low <= elo && elo <= high, "{bot}");
        assert!(number(bot, "mean_penalty").is_finite(), "{bot}");
        assert!(bot["name"].as_str().unwrap().contains("gangs-bot-random"));
    }
    bots
}

#[test]
fn arena_plays_gang_of_four_in_parallel() {
    let random = bin("gangs-bot-random");
    let random = random.to_str().unwrap();
    let (code, report) = arena(&[
        "--game",
        "gang-of-four",
        "--bot",
        random,
        "--games",
        "3",
        "--players",
        "4",
        "--option",
        "target_score=20",
        "--parallel",
        "2",
    ]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["games"], 3, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    assert_eq!(report["players"], 4);
    // One command in every seat: one row; games counted as games, seats as seat-games.
    let bots = check_rows(&report);
    assert_eq!(bots.len(), 1, "{report}");
    assert_eq!(bots[0]["games"], 3);
    assert_eq!(bots[0]["seat_games"], 3 * 4);
    // Each game has at least one seat at rank 1; ties may add more.
    let wins = number(&bots[0], "seat_game_wins");
    assert!((3.0..=12.0).contains(&wins), "{report}");
    // A bot only ever compared with itself keeps the starting rating.
    assert_eq!(number(&bots[0], "elo"), 1500.0);
    assert_eq!(report["game_ids"].as_array().unwrap().len(), 3, "{report}");
    assert!(report.get("heists").is_none(), "{report}");
}

#[test]
fn arena_plays_the_gang_and_counts_heists() {
    let random = bin("gangs-bot-random");
    let random = random.to_str().unwrap();
    let (code, report) = arena(&[
        "--game",
        "the-gang",
        "--bot",
        random,
        "--games",
        "2",
        "--players",
        "3",
        "--seed",
        "11",
    ]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["games"], 2, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    assert_eq!(report["seed"], 11);
    // Every seat is one team: rows say how much each bot played, no wins, no Elo.
    let bots = report["bots"].as_array().unwrap();
    assert_eq!(bots.len(), 1);
    assert_eq!(bots[0]["games"], 2);
    assert_eq!(bots[0]["seat_games"], 2 * 3);
    assert!(bots[0].get("elo").is_none(), "{report}");
    // A game ends at 3 vaults or 3 alarms: at least 3 heists, at most 5.
    let heists = number(&report, "heists");
    let successes = number(&report, "heist_successes");
    let games_won = number(&report, "games_won");
    assert!((6.0..=10.0).contains(&heists), "{report}");
    assert!(successes <= heists, "{report}");
    assert_eq!(games_won + number(&report, "games_lost"), 2.0, "{report}");
    for key in [
        "heist_success_low",
        "heist_success_high",
        "games_won_low",
        "games_won_high",
        "heists_per_game",
    ] {
        assert!(report[key].is_number(), "{key} in {report}");
    }
}

#[test]
fn arena_reports_a_failing_bot_as_an_error() {
    // `false` exits 1 at once: every game is an error, the exit code is 1, and the JSON stays
    // one object with the failures listed.
    let (code, report) = arena(&[
        "--game",
        "gang-of-four",
        "--bot",
        "false",
        "--games",
        "2",
        "--game-timeout-secs",
        "30",
    ]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["games"], 0, "{report}");
    assert_eq!(report["errors"], 2, "{report}");
    let failed = report["failed_games"].as_array().unwrap();
    assert!(failed[0]["error"].as_str().unwrap().contains("exited with"));
    assert_eq!(report["bots"][0]["games"], 0);
}

/// `--out DIR`: one game file per finished game (each verifies with no server and holds the
/// game the results describe), and `results.jsonl`/`results.csv` with one row per game.
#[test]
fn arena_out_keeps_the_games_and_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let random = bin("gangs-bot-random");
    let random = random.to_str().unwrap();
    let (code, report) = arena(&[
        "--game",
        "the-gang",
        "--bot",
        random,
        "--games",
        "2",
        "--players",
        "3",
        "--seed",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{report}");
    let ids: Vec<&str> = report["game_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{report}");
    assert_eq!(report["out"], out.to_str().unwrap());

    let rows: Vec<Value> = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let csv: Vec<&str> = csv.lines().collect();
    assert_eq!(csv.len(), 3, "{csv:?}");
    assert!(
        csv[0].starts_with("game,game_id,seed,seat_0_bot,"),
        "{csv:?}"
    );
    let mut won = 0;
    for (game, row) in rows.iter().enumerate() {
        assert_eq!(row["game"], game as u64);
        let id = row["game_id"].as_str().unwrap();
        assert_eq!(id, ids[game]);
        assert!(
            csv[game + 1].starts_with(&format!("{game},{id},")),
            "{csv:?}"
        );
        let seats = row["seats"].as_array().unwrap();
        assert_eq!(seats.len(), 3);
        for (seat, s) in seats.iter().enumerate() {
            assert_eq!(s["seat"], seat as u64);
            assert_eq!(s["bot"], random);
            assert_eq!(s["timeouts"], 0);
        }
        // The file is the game the row describes, and verifies with no server.
        let file = out.join(row["file"].as_str().unwrap());
        let header: Value = serde_json::from_str(
            std::fs::read_to_string(&file)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["game_id"], id);
        assert_eq!(header["seed"], row["seed"]);
        assert_eq!(header["outcome"]["summary"], row["outcome"]);
        let verified = Command::new(bin("gangs"))
            .args(["--server", "http://127.0.0.1:9", "replay", "--file"])
            .arg(&file)
            .arg("--verify")
            .output()
            .unwrap();
        assert!(verified.status.success(), "{verified:?}");
        won += u64::from(row["won"].as_bool().unwrap());
    }
    assert_eq!(report["games_won"], won, "{report}");
}
