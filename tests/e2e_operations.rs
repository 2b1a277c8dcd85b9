//! What an operator relies on, end to end with the real `gangs-server`: Prometheus metrics at
//! `--metrics ADDR` that move while a game is played, JSON logs, no colour codes in a log file,
//! "listening" said only once the server can serve, one clear line when the port or the data
//! dir is taken, and `gangs health`.

use crate::common;

use common::observe::{free_port, scrape};
use common::*;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tonic::transport::Endpoint;

/// The value of the series `name` whose labels include every `labels` pair; 0 when absent.
fn value(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .filter(|(series, _)| {
            let (metric, rest) = series.split_once('{').unwrap_or((series, ""));
            metric == name
                && labels
                    .iter()
                    .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")))
        })
        .map(|(_, v)| v.parse::<f64>().unwrap())
        .sum()
}

/// Scrapes until `check` holds (sampled gauges refresh every second), or panics.
fn scrape_until(port: u16, what: &str, check: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let text = scrape(port);
        if check(&text) {
            return text;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "metrics never showed {what}:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_move_while_a_game_is_played() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let metrics = format!("127.0.0.1:{port}");
    let server = Server::start_with(
        dir.path(),
        0,
        &["--metrics", &metrics, "--watch-buffer", "4"],
    );
    let kind = [("kind", "gang-of-four")];

    let idle = scrape(port);
    for series in [
        "gangs_live_games",
        "gangs_watchers",
        "gangs_actions_total",
        "gangs_watchers_cut_off_total",
    ] {
        assert!(
            idle.contains(series),
            "{series} missing before any game:\n{idle}"
        );
    }
    assert_eq!(value(&idle, "gangs_live_games", &[]), 0.0);
    assert_eq!(value(&idle, "gangs_actions_total", &kind), 0.0);

    let mut client = server.client().await;
    // A long game: it must not end before the stuck spectator is cut off.
    let pairs = vec![("target_score".to_string(), "100000".to_string())];
    let options = gangs_games::parse_options("gang-of-four", Some(4), &pairs).unwrap();
    let game_id = create(&mut client, "gang-of-four", Some(options), 5).await;
    let mut tokens = Vec::new();
    for seat in 0..4 {
        let join = pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(seat),
            name: String::new(),
            join_id: String::new(),
            ..Default::default()
        };
        tokens.push(client.join_game(join).await.unwrap().into_inner().token);
    }
    // A spectator that stops reading, on its own connection with a small window: it will be
    // cut off once it is more than --watch-buffer updates behind.
    let channel = Endpoint::from_shared(server.url())
        .unwrap()
        .initial_stream_window_size(Some(4096))
        .connect()
        .await
        .unwrap();
    let stuck = GamesClient::new(channel)
        .watch(pb::WatchRequest {
            game_id: game_id.clone(),
            token: String::new(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    scrape_until(port, "a live game and a watcher", |t| {
        value(t, "gangs_live_games", &[]) == 1.0 && value(t, "gangs_watchers", &[]) == 1.0
    });

    // Refusals, counted by status code.
    let refused = client
        .act(pb::ActRequest {
            game_id: game_id.clone(),
            token: "not-a-token".into(),
            action: None,
            expected_seq: None,
            action_id: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    let missing = client
        .watch(pb::WatchRequest {
            game_id: "no-such-game".into(),
            token: String::new(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .expect_err("an unknown game is refused");
    assert_eq!(missing.code(), tonic::Code::NotFound);

    // Play random legal actions, scraping as the game goes.
    let mut replica = gangs_games::new_game("gang-of-four", Some(&options), 5, None).unwrap();
    replica.start();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut played = 0u32;
    let mut seen_actions = Vec::new();
    while played < 2500 && !replica.is_over() {
        let (seat, actions) = (0..4)
            .map(|s| (s, replica.legal_actions(s)))
            .find(|(_, a)| !a.is_empty())
            .unwrap();
        let action = actions[rng.random_range(0..actions.len())].clone();
        replica.act(seat, &action).unwrap();
        client
            .act(pb::ActRequest {
                game_id: game_id.clone(),
                token: tokens[seat].clone(),
                action: Some(action),
                expected_seq: None,
                action_id: String::new(),
            })
            .await
            .unwrap();
        played += 1;
        if played.is_multiple_of(500) {
            let text = scrape(port);
            seen_actions.push(value(&text, "gangs_actions_total", &kind));
        }
    }
    assert!(
        seen_actions.windows(2).all(|w| w[1] > w[0]),
        "actions_total grows while the game is played: {seen_actions:?}"
    );

    let text = scrape(port);
    assert_eq!(value(&text, "gangs_actions_total", &kind), played as f64);
    assert_eq!(
        value(&text, "gangs_actions_total", &[("kind", "the-gang")]),
        0.0
    );
    // Every Act is timed, the refused one too.
    assert_eq!(
        value(&text, "gangs_act_duration_seconds_count", &[]),
        played as f64 + 1.0
    );
    assert!(
        value(
            &text,
            "gangs_act_duration_seconds_bucket",
            &[("le", "+Inf")]
        ) > 0.0
    );
    // Every record went through a group commit: create, 4 joins, start, each action.
    let batches = value(&text, "gangs_log_batch_records_count", &[]);
    let records = value(&text, "gangs_log_batch_records_sum", &[]);
    assert!(
        batches >= 1.0 && records >= played as f64 + 6.0,
        "{batches} batches, {records} records"
    );
    assert_eq!(
        value(&text, "gangs_log_flush_duration_seconds_count", &[]),
        batches
    );
    assert_eq!(
        value(&text, "gangs_log_append_duration_seconds_count", &[]),
        batches
    );
    assert_eq!(
        value(
            &text,
            "gangs_rpc_errors_total",
            &[("method", "Act"), ("code", "PERMISSION_DENIED")]
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            "gangs_rpc_errors_total",
            &[("method", "Watch"), ("code", "NOT_FOUND")]
        ),
        1.0
    );
    assert_eq!(
        value(&text, "gangs_watchers_cut_off_total", &[]),
        1.0,
        "{text}"
    );

    // The stuck spectator goes away: the watcher gauge comes back down.
    drop(stuck);
    scrape_until(port, "no watcher left", |t| {
        value(t, "gangs_watchers", &[]) == 0.0
    });

    // The metrics hold nothing that keeps the server from stopping on SIGTERM.
    let mut server = server;
    let term = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let exit = wait_with_timeout(&mut server.child, Duration::from_secs(20));
    assert!(exit.success(), "{exit}");
}

/// Starts `gangs-server ARGS` with stderr into `log` (a file, not a terminal) and waits for
/// its "listening" line.
fn server_logging_to(dir: &Path, log: &Path, args: &[&str]) -> std::process::Child {
    let mut child = Command::new(bin("gangs-server"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .args(args)
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("gangs-server listening on "), "{line:?}");
    child
}

#[test]
fn a_log_file_holds_no_colour_codes_and_json_logs_are_json() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("text.log");
    let mut server = server_logging_to(&dir.path().join("a"), &log, &[]);
    server.kill().unwrap();
    server.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("gangs-server ready"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "ANSI escape codes in a log file:\n{text:?}"
    );

    let log = dir.path().join("json.log");
    let mut server = server_logging_to(&dir.path().join("b"), &log, &["--log-format", "json"]);
    server.kill().unwrap();
    server.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines.len() >= 2, "{text}");
    let ready = lines
        .iter()
        .find(|l| l["fields"]["message"] == "gangs-server ready")
        .unwrap_or_else(|| panic!("no ready line in {text}"));
    assert_eq!(ready["level"], "INFO");
    assert!(ready["fields"]["listen"]
        .as_str()
        .unwrap()
        .starts_with("127.0.0.1:"));
    assert!(ready["timestamp"].is_string());
}

/// Runs a second `gangs-server ARGS` expected to refuse to start: (stdout, stderr lines).
fn refused_start(args: &[&str], data_dir: &Path) -> (String, Vec<String>) {
    let mut child = Command::new(bin("gangs-server"))
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_with_timeout(&mut child, Duration::from_secs(20));
    let output = child.wait_with_output().unwrap();
    assert!(!status.success(), "the second server started");
    let stderr = String::from_utf8_lossy(&output.stderr);
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr.lines().map(str::to_string).collect(),
    )
}

#[test]
fn a_second_server_on_the_same_port_or_data_dir_exits_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let first = Server::start(&dir.path().join("first"));

    let listen = first.addr.clone();
    let (stdout, stderr) = refused_start(&["--listen", &listen], &dir.path().join("second"));
    assert!(!stdout.contains("listening"), "{stdout}");
    assert_eq!(stderr.len(), 1, "{stderr:?}");
    assert!(
        stderr[0].contains(&format!("cannot listen on {listen}")) && stderr[0].contains("in use"),
        "{stderr:?}"
    );

    let (stdout, stderr) = refused_start(&["--listen", "127.0.0.1:0"], &first.data_dir);
    assert!(
        !stdout.contains("listening"),
        "said listening before failing: {stdout}"
    );
    assert_eq!(stderr.len(), 1, "{stderr:?}");
    assert!(
        stderr[0].contains("is in use by another gangs-server"),
        "{stderr:?}"
    );

    // The metrics address too.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let metrics = taken.local_addr().unwrap().to_string();
    let (stdout, stderr) = refused_start(
        &["--listen", "127.0.0.1:0", "--metrics", &metrics],
        &dir.path().join("third"),
    );
    assert!(!stdout.contains("listening"), "{stdout}");
    assert_eq!(stderr.len(), 1, "{stderr:?}");
    assert!(
        stderr[0].contains(&format!("cannot serve metrics on {metrics}")),
        "{stderr:?}"
    );
}

#[test]
fn gangs_health_says_serving_and_fails_without_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (code, out) = gangs_cli(&server, &["health"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("SERVING"), "{out}");
    let (code, out) = gangs_cli(&server, &["health", "--service", "", "--json"]);
    assert_eq!(code, 0, "{out}");
    let answer: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(answer["status"], "SERVING");
    let (code, out) = gangs_cli(&server, &["health", "--service", "no.such.Service"]);
    assert_ne!(code, 0, "{out}");
    drop(server);
    let output = Command::new(bin("gangs"))
        .args([
            "--server",
            &format!("http://127.0.0.1:{}", free_port()),
            "health",
        ])
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0));
}

#[test]
fn gangs_rules_prints_the_engine_schema_and_new_help_points_to_it() {
    for kind in gangs_games::kinds() {
        let output = Command::new(bin("gangs"))
            .args(["rules", kind.name, "--json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let rows = printed["options"].as_array().unwrap();
        assert_eq!(rows.len(), kind.options().len());
        for (row, spec) in rows.iter().zip(kind.options()) {
            assert_eq!(row["key"], spec.key);
            assert_eq!(row["type"], spec.kind.name());
            assert_eq!(row["default"], spec.default);
            assert_eq!(row["range"], spec.accepts());
            assert_eq!(row["meaning"], spec.meaning);
        }
        let human = Command::new(bin("gangs"))
            .args(["rules", kind.name])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&human.stdout);
        for spec in kind.options() {
            assert!(text.contains(spec.key), "{text}");
        }
    }
    let unknown = Command::new(bin("gangs"))
        .args(["rules", "chess"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    let help = Command::new(bin("gangs"))
        .args(["new", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("gangs rules KIND"));
}
