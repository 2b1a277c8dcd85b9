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

/// A bot whose process hangs after it stopped playing (here: a shell script that takes its
/// seat with `gangs join`, then sleeps and plays nothing): the server's clocks play its seat,
/// the game finishes, and the arena takes the result from the server as soon as the game is
/// over, kills the hung process after the grace period and names it, instead of waiting out
/// --game-timeout-secs and losing the game.
#[cfg(unix)]
#[test]
fn arena_keeps_the_result_and_kills_a_hung_bot() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("hung.pid");
    let script = dir.path().join("hung-bot");
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
# The arena's bot contract: --server URL --game GAME --seat S --seed X.
while [ $# -gt 0 ]; do
  case "$1" in
    --server) server="$2"; shift ;;
    --game) game="$2"; shift ;;
    --seat) seat="$2"; shift ;;
  esac
  shift
done
'{gangs}' --server "$server" join "$game" --seat "$seat" > /dev/null || exit 1
echo $$ > '{pid}'
exec sleep 600
"#,
            gangs = bin("gangs").display(),
            pid = pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (greedy, random) = (bin("gangs-bot-greedy"), bin("gangs-bot-random"));
    let (code, report) = arena(&[
        "--game",
        "gang-of-four",
        "--players",
        "3",
        "--bot",
        greedy.to_str().unwrap(),
        "--bot",
        random.to_str().unwrap(),
        "--bot",
        script.to_str().unwrap(),
        "--games",
        "1",
        "--option",
        "target_score=10",
        "--turn-ms",
        "100",
        "--exit-grace-ms",
        "300",
        // Far beyond the game's own length, far below the time a wait for the hung process
        // would take: reaching it fails the game and this test.
        "--game-timeout-secs",
        "60",
    ]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["games"], 1, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    let game_id = report["game_ids"][0].as_str().unwrap();
    // Game 0 seats the third bot at seat 2.
    let killed = report["killed"].as_array().expect("killed list");
    assert_eq!(killed.len(), 1, "{report}");
    assert_eq!(killed[0]["game_id"], game_id, "{report}");
    assert_eq!(killed[0]["seat"], 2, "{report}");
    assert_eq!(killed[0]["bot"], script.to_str().unwrap(), "{report}");
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("at seat 2 was still running") && n.contains("killed")),
        "{report}"
    );
    // Its seat was played by the clock; the two bots that played exited on their own.
    let rows = report["bots"].as_array().unwrap();
    let hung = rows
        .iter()
        .find(|r| r["name"] == script.to_str().unwrap())
        .unwrap();
    assert!(hung["timeouts"].as_u64().unwrap() >= 1, "{report}");
    for row in rows
        .iter()
        .filter(|r| r["name"] != script.to_str().unwrap())
    {
        assert_eq!(row["games"], 1, "{report}");
    }
    // The hung process is gone, not left running behind the arena.
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Signal 0 only checks that the process exists.
    let alive = Command::new("sh")
        .arg("-c")
        .arg(format!("kill -0 {pid} 2>/dev/null"))
        .status()
        .unwrap()
        .success();
    assert!(!alive, "the hung bot (pid {pid}) still runs");
}

/// A hosted bot's module plays in the arena as `--bot FILE.wasm` (through `gangs-bot-wasm`,
/// the server's runner), beside a connected bot.
#[test]
fn arena_plays_a_hosted_bots_module() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("first.wasm");
    // Prints 0: the first legal action.
    let bytes = crate::common::hosted::first_action_bot(1);
    std::fs::write(&module, bytes).unwrap();
    let random = bin("gangs-bot-random");
    let (code, report) = arena(&[
        "--game",
        "gang-of-four",
        "--bot",
        module.to_str().unwrap(),
        "--bot",
        random.to_str().unwrap(),
        "--games",
        "2",
        "--players",
        "3",
        "--option",
        "target_score=1",
    ]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    let bots = report["bots"].as_array().expect("bots array").clone();
    let hosted = bots
        .iter()
        .find(|b| {
            b["name"]
                .as_str()
                .is_some_and(|n| n.ends_with("first.wasm"))
        })
        .unwrap_or_else(|| panic!("the module's row in {report}"));
    assert_eq!(hosted["games"], 2, "{report}");
    assert_eq!(number(hosted, "timeouts"), 0.0, "{report}");
}
