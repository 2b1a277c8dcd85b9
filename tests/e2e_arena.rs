//! End-to-end test of `gangs arena`: the real CLI starts its own `gangs-server` and the real
//! random bot processes, plays short matches of both games and prints its JSON report.

mod common;

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

/// The per-bot rows: shares within their intervals, ratings finite.
fn check_rows(report: &Value) -> Vec<Value> {
    let bots = report["bots"].as_array().expect("bots array").clone();
    for bot in &bots {
        let games = number(bot, "games");
        let wins = number(bot, "wins");
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
        assert!(number(bot, "rating").is_finite(), "{bot}");
        assert!(number(bot, "mean_score").is_finite(), "{bot}");
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
    // One command in every seat: one row, counted per seat-game.
    let bots = check_rows(&report);
    assert_eq!(bots.len(), 1, "{report}");
    assert_eq!(bots[0]["games"], 3 * 4);
    // Each game has at least one seat at rank 1; ties may add more.
    let wins = number(&bots[0], "wins");
    assert!((3.0..=12.0).contains(&wins), "{report}");
    // A bot only ever compared with itself keeps the starting rating.
    assert_eq!(number(&bots[0], "rating"), 1500.0);
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
    let bots = check_rows(&report);
    assert_eq!(bots.len(), 1);
    assert_eq!(bots[0]["games"], 2 * 3);
    // A game ends at 3 vaults or 3 alarms: at least 3 heists, at most 5.
    let heists = number(&report, "heists");
    let successes = number(&report, "heist_successes");
    let games_won = number(&report, "games_won");
    assert!((6.0..=10.0).contains(&heists), "{report}");
    assert!(successes <= heists, "{report}");
    assert!(games_won <= 2.0, "{report}");
    // Every seat shares the team's result.
    assert_eq!(number(&bots[0], "wins"), games_won * 3.0, "{report}");
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
