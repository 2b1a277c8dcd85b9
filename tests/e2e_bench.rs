//! End-to-end test of `gangs bench`, the load tool: run briefly, with its own server and against
//! a keyed server, it completes and reports sane, self-consistent figures (never a speed: these
//! machines are shared). The games it played are real: the server lists them and their logs
//! hold the actions it counted.

use crate::common;

use common::{bin, gangs_cli, Server};
use gangs_proto::v1 as pb;
use serde_json::Value;
use std::process::Command;

fn number(report: &Value, key: &str) -> f64 {
    report[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {report}"))
}

fn parse(stdout: &str) -> Value {
    assert_eq!(
        stdout.lines().count(),
        1,
        "--json prints one object; got: {stdout}"
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// The figures every report must get right, whatever the machine's speed.
fn assert_sane(report: &Value, games: u64, seconds: u64, kind: &str, watchers: &str) {
    assert_eq!(report["games"], games, "{report}");
    assert_eq!(report["seconds"], seconds, "{report}");
    // The phases alternate in slices of about two seconds.
    assert_eq!(report["rounds"], (seconds / 2).max(1), "{report}");
    assert_eq!(report["kind"], kind, "{report}");
    assert_eq!(report["watchers"], watchers, "{report}");
    let actions = number(report, "actions");
    let acts_per_s = number(report, "acts_per_s");
    let baseline = number(report, "baseline_calls_per_s");
    assert!(actions >= 1.0, "no action played: {report}");
    assert!(acts_per_s > 0.0 && baseline > 0.0, "{report}");
    // actions/s is the count over the phase's length, its slices summed (a little longer than
    // --seconds: the calls in flight at each slice's end finish).
    let implied_seconds = actions / acts_per_s;
    assert!(
        implied_seconds >= seconds as f64 && implied_seconds < seconds as f64 + 10.0,
        "{actions} actions at {acts_per_s}/s is not a {seconds} s phase: {report}"
    );
    let ratio = number(report, "ratio");
    assert!(
        (ratio - acts_per_s / baseline).abs() <= 1e-9 * ratio.max(1.0),
        "ratio {ratio} is not acts_per_s ÷ baseline_calls_per_s: {report}"
    );
    let p50 = number(report, "p50_ms");
    let p90 = number(report, "p90_ms");
    let p99 = number(report, "p99_ms");
    let p999 = number(report, "p999_ms");
    assert!(
        0.0 < p50 && p50 <= p90 && p90 <= p99 && p99 <= p999,
        "latency quantiles out of order: {report}"
    );
    assert!(
        number(report, "baseline_p50_ms") <= number(report, "baseline_p99_ms"),
        "{report}"
    );
    // Bytes of Watch updates per action: none without watchers, some with them.
    let bytes_per_action = number(report, "bytes_per_action");
    if watchers == "none" {
        assert_eq!(bytes_per_action, 0.0, "nobody watched: {report}");
    } else {
        assert!(
            bytes_per_action > 0.0,
            "the watchers received nothing: {report}"
        );
    }
    for key in ["errors", "setup_errors"] {
        assert_eq!(
            report[key],
            serde_json::json!({}),
            "a healthy server refused calls ({key}): {report}"
        );
    }
}

/// `gangs bench ARGS --json` with its own server (no GANGS_SERVER, no key): its report.
fn own_server_bench(args: &[&str]) -> Value {
    let output = Command::new(bin("gangs"))
        .arg("bench")
        .args(args)
        .arg("--json")
        .env_remove("GANGS_SERVER")
        .env_remove("GANGS_API_KEY")
        .output()
        .expect("run gangs bench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "gangs bench failed: {stdout}\n{stderr}"
    );
    parse(&stdout)
}

#[test]
fn bench_with_its_own_server_reports_sane_figures() {
    // Two rounds: the games cut by the first slice's end go on in the next; a game whose
    // replica fell out of step with the server's would have its actions refused (`errors`).
    let report = own_server_bench(&["--games", "4", "--seconds", "4"]);
    assert_sane(&report, 4, 4, "gang-of-four", "none");
    assert!(
        report["hosted_beside"].is_null(),
        "no hosted ladder asked: {report}"
    );
    let server = report["server"].as_str().expect("server");
    assert!(server.starts_with("http://127.0.0.1:"), "{report}");
    // Its own server's CPU per call: a durable action (a game's actor, the log) costs the
    // server more than a health check.
    let per_action = report["server_cpu_us_per_action"].as_f64();
    let per_call = report["baseline_server_cpu_us_per_call"].as_f64();
    if cfg!(target_os = "linux") {
        let (per_action, per_call) = (per_action.expect("measured"), per_call.expect("measured"));
        assert!(per_call > 0.0 && per_action > per_call, "{report}");
        // The bench's own share: every action and call is sent and answered by it.
        let own_action = report["client_cpu_us_per_action"]
            .as_f64()
            .expect("measured");
        let own_call = report["baseline_client_cpu_us_per_call"]
            .as_f64()
            .expect("measured");
        assert!(own_action > 0.0 && own_call > 0.0, "{report}");
        // How idle the machine's cores were in each phase: a share of all its cores' time.
        for key in ["idle_percent", "baseline_idle_percent"] {
            let idle = report[key].as_f64().expect("measured");
            assert!((0.0..=100.0).contains(&idle), "{key}: {report}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_plays_the_gang_with_watchers_against_a_keyed_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        0,
        &["--api-key", "admin-secret", "--create-rate", "100000"],
    );
    // Without the key the bench says so and plays nothing.
    let (code, text) = gangs_cli(&server, &["bench", "--games", "2", "--seconds", "1"]);
    assert_ne!(code, 0, "an unkeyed bench must fail: {text}");
    assert!(text.contains("UNAUTHENTICATED"), "{text}");

    let (code, stdout) = gangs_cli(
        &server,
        &[
            "--api-key",
            "admin-secret",
            "bench",
            "--games",
            "3",
            "--seconds",
            "2",
            "--kind",
            "the-gang",
            "--watchers",
            "all",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{stdout}");
    let report = parse(stdout.lines().next().unwrap_or_default());
    assert_sane(&report, 3, 2, "the-gang", "all");
    // Another process's server: its CPU is not the bench's to read.
    assert!(report["server_cpu_us_per_action"].is_null(), "{report}");
    assert!(
        report["baseline_server_cpu_us_per_call"].is_null(),
        "{report}"
    );

    // The games were real: listed by the server, and their logs hold the counted actions.
    let channel = tonic::transport::Channel::from_shared(server.url())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = gangs_proto::auth::ApiKey::new(Some("admin-secret"))
        .unwrap()
        .client(channel);
    let mut actions_logged = 0;
    let mut page_token = String::new();
    loop {
        let page = client
            .list_games(pb::ListGamesRequest {
                page_token: page_token.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        for game in &page.games {
            assert_eq!(game.kind, "the-gang");
            let mut log = client
                .get_log(pb::GetLogRequest {
                    game_id: game.game_id.clone(),
                    from_seq: 0,
                })
                .await
                .unwrap()
                .into_inner();
            while let Some(record) = log.message().await.unwrap() {
                if matches!(record.record, Some(pb::log_record::Record::Acted(_))) {
                    actions_logged += 1;
                }
            }
        }
        if page.next_page_token.is_empty() {
            break;
        }
        page_token = page.next_page_token;
    }
    assert_eq!(
        actions_logged as f64,
        number(&report, "actions"),
        "every action the bench counted is in a log, and no other"
    );
}

#[test]
fn bench_refuses_bad_flags_with_a_clear_message() {
    for (args, expected) in [
        (&["--games", "0"][..], "--games must be 1 to 10000"),
        (&["--seconds", "0"][..], "--seconds must be 1 to 3600"),
        (&["--kind", "poker"][..], "unknown --kind"),
        // A hosted ladder is created on the bench's own server only.
        (
            &[
                "--server",
                "http://127.0.0.1:1",
                "--hosted-beside",
                "bot.wasm",
            ][..],
            "--hosted-beside runs only against the bench's own server",
        ),
        (
            &["--hosted-beside", "/nonexistent/bot.wasm"][..],
            "--hosted-beside /nonexistent/bot.wasm",
        ),
        (&["--hosted-bots", "4"][..], "--hosted-beside"),
    ] {
        let output = Command::new(bin("gangs"))
            .arg("bench")
            .args(args)
            .env_remove("GANGS_SERVER")
            .output()
            .expect("run gangs bench");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// `gangs bench --ladder-bots N`: a ladder of N bots, each on its own connection, plays games
/// and the report says how many, how fast, and what its own server held (a descriptor per
/// bot's connection at least).
#[test]
fn bench_runs_a_ladder_of_connected_bots() {
    let report = own_server_bench(&["--ladder-bots", "8", "--seconds", "4"]);
    assert_eq!(report["mode"], "ladder", "{report}");
    assert_eq!(report["ladder_bots"], 8, "{report}");
    // Eight bots, four seats a game: at least the first two games start at once.
    let started = report["games_started"].as_u64().expect("games_started");
    assert!(started >= 2, "{report}");
    assert!(report["actions"].as_u64().expect("actions") > 0, "{report}");
    let (p50, p99) = (report["p50_ms"].as_f64(), report["p99_ms"].as_f64());
    assert!(
        p50.is_some_and(|p50| p99.is_some_and(|p99| 0.0 < p50 && p50 <= p99)),
        "{report}"
    );
    // A bot's key lets it play its games: nothing refused for want of a credential.
    for code in ["UNAUTHENTICATED", "PERMISSION_DENIED", "NOT_FOUND"] {
        assert!(report["errors"].get(code).is_none(), "{code}: {report}");
    }
    if cfg!(target_os = "linux") {
        let fds = report["server_fds_connected"].as_u64().expect("measured");
        assert!(fds >= 8, "a descriptor per bot's connection: {report}");
        assert!(report["server_rss_kb"].as_u64().expect("measured") > 0);
    }
}

/// A module printing `0` (the first legal action, legal in every game) at once.
fn first_action_module() -> Vec<u8> {
    wat::parse_str(
        r#"(module
          (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (data (i32.const 64) "0\n")
          (func (export "_start")
            (i32.store (i32.const 0) (i32.const 64))
            (i32.store (i32.const 4) (i32.const 2))
            (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#,
    )
    .expect("valid module")
}

/// `gangs bench --hosted-beside FILE`: a ladder of hosted copies of the module plays on the
/// bench's own server while it measures, and the report says what that ladder played.
#[test]
fn bench_with_a_hosted_ladder_beside_reports_its_games() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("first.wasm");
    std::fs::write(&module, first_action_module()).unwrap();
    let report = own_server_bench(&[
        "--games",
        "4",
        "--seconds",
        "2",
        "--hosted-beside",
        module.to_str().unwrap(),
    ]);
    assert_sane(&report, 4, 2, "gang-of-four", "none");
    let hosted = &report["hosted_beside"];
    assert_eq!(hosted["bots"], 4, "the default copies: {report}");
    assert_eq!(hosted["module"], module.to_str().unwrap(), "{report}");
    assert!(
        hosted["ladder"]
            .as_str()
            .is_some_and(|l| l.starts_with("bench-hosted-")),
        "{report}"
    );
    // The bench waited for the ladder's first game: hosted games were played while it measured.
    let played = number(hosted, "games_played");
    assert!(
        played >= 1.0,
        "no hosted game during the measurement: {report}"
    );
    let ended = number(hosted, "games_finished") + number(hosted, "games_void");
    assert!(ended <= played, "{report}");
    assert!(hosted["timeouts"].is_u64(), "{report}");
}
