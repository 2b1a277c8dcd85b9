//! The Python example bot (`examples/python/`) plays full games of both kinds against the Rust
//! bots on a real server, and in the arena, which must pass it nothing but the bot contract's
//! arguments (its argument parser is strict).
//!
//! The bot needs Python 3 with `grpcio-tools`: the test makes a virtual environment from
//! `examples/python/requirements.txt` when none is there (`GANGS_PYTHON_VENV`, default
//! `target/tmp/python-venv`, which `.ci/run` prepares) and generates the stubs from `proto/`
//! itself. A machine without `python3` fails the test with the reason; it never skips.

use crate::common;

use common::{bin, create, log, status, wait_with_timeout, Server};
use gangs_proto::v1 as pb;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

const GAME_TIMEOUT: Duration = Duration::from_secs(180);

fn repo() -> PathBuf {
    crate::common::repo_root()
}

pub(crate) fn bot_script() -> PathBuf {
    repo().join("examples/python/bot.py")
}

/// Runs a set-up command and panics with its output if it fails.
fn run(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// (the venv's python, the folder holding the generated stubs), made once per test process.
pub(crate) fn python() -> &'static (PathBuf, PathBuf) {
    static PYTHON: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let venv = std::env::var_os("GANGS_PYTHON_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| tmp.join("python-venv"));
        let python = venv.join("bin/python");
        let ready = python.exists()
            && Command::new(&python)
                .args(["-c", "import grpc, grpc_tools"])
                .status()
                .is_ok_and(|s| s.success());
        if !ready {
            run(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                "creating a Python virtual environment (is python3 with venv installed?)",
            );
            run(
                Command::new(&python)
                    .args(["-m", "pip", "install", "--quiet", "-r"])
                    .arg(repo().join("examples/python/requirements.txt")),
                "installing the Python bot's requirements",
            );
        }
        // The README's generate command, into a folder of this run (PYTHONPATH points there).
        let stubs = tmp.join(format!("python-stubs-{}", std::process::id()));
        std::fs::create_dir_all(&stubs).unwrap();
        let proto = repo().join("proto");
        let mut generate = Command::new(&python);
        generate
            .args(["-m", "grpc_tools.protoc", "-I"])
            .arg(&proto)
            .arg(format!("--python_out={}", stubs.display()))
            .arg(format!("--grpc_python_out={}", stubs.display()));
        for file in [
            "gangs.proto",
            "gang_of_four.proto",
            "the_gang.proto",
            "ladder.proto",
        ] {
            generate.arg(proto.join(file));
        }
        run(&mut generate, "generating the Python stubs");
        (python, stubs)
    })
}

/// The Python bot for `seat`, started as the arena would (the contract's four arguments).
fn spawn_python_bot(server: &Server, game: &str, seat: u32, seed: u64) -> common::Bot {
    let (python, stubs) = python();
    Command::new(python)
        .arg(bot_script())
        .args(["--server", &server.url(), "--game", game])
        .args(["--seat", &seat.to_string(), "--seed", &seed.to_string()])
        .env("PYTHONPATH", stubs)
        .env("GANGS_BOT_QUIET", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map(common::Bot)
        .expect("start the Python bot")
}

fn spawn_rust_bot(bot: &str, server: &Server, game: &str, seat: u32, seed: u64) -> common::Bot {
    common::spawn_bot(bot, server, game, Some(seat), seed)
}

/// Plays one game with the given bots (`None`: the Python bot) and checks it finished with
/// every bot exiting 0 and every Python seat having acted.
async fn play(kind: &str, options: pb::GameOptions, seats: &[Option<&str>], seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let game = create(&mut client, kind, Some(options), seed).await;
    let mut bots: Vec<(String, common::Bot)> = seats
        .iter()
        .enumerate()
        .map(|(seat, bot)| {
            let seat = seat as u32;
            match bot {
                None => (
                    "python".to_string(),
                    spawn_python_bot(&server, &game, seat, seed + seat as u64),
                ),
                Some(bot) => (
                    bot.to_string(),
                    spawn_rust_bot(bot, &server, &game, seat, seed + seat as u64),
                ),
            }
        })
        .collect();
    for (name, child) in &mut bots {
        let exit = wait_with_timeout(child, GAME_TIMEOUT);
        assert!(exit.success(), "{name} exited with {exit}");
    }
    let summary = status(&mut client, &game).await;
    assert_eq!(
        summary.status,
        pb::GameStatus::Finished as i32,
        "{summary:?}"
    );
    let records = log(&mut client, &game).await;
    for (seat, bot) in seats.iter().enumerate() {
        if bot.is_none() {
            let acted = records
                .iter()
                .filter(|r| {
                    matches!(&r.record, Some(pb::log_record::Record::Acted(a)) if a.seat as usize == seat)
                })
                .count();
            assert!(acted > 0, "the Python bot at seat {seat} never acted");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_bot_plays_gang_of_four_against_the_rust_bots() {
    let options = pb::GameOptions {
        game: Some(pb::game_options::Game::GangOfFour(pb::GangOfFourOptions {
            players: Some(4),
            target_score: Some(40),
            ..Default::default()
        })),
    };
    let seats = [
        None,
        Some("gangs-bot-greedy"),
        None,
        Some("gangs-bot-random"),
    ];
    play("gang-of-four", options, &seats, 11).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_bot_plays_the_gang_against_the_rust_bots() {
    for (mode, seed) in [
        (pb::TheGangMode::Advanced, 21),
        (pb::TheGangMode::Gangster, 22),
    ] {
        let options = pb::GameOptions {
            game: Some(pb::game_options::Game::TheGang(pb::TheGangOptions {
                players: Some(4),
                mode: mode as i32,
                // The crew bot follows its own chip convention and may wait for partners
                // who do not know it; the deadline keeps such a table moving.
                phase_deadline_ms: Some(1500),
                ..Default::default()
            })),
        };
        let seats = [None, Some("gangs-bot-crew"), None, Some("gangs-bot-random")];
        play("the-gang", options, &seats, seed).await;
    }
}

/// The Python bot over TLS with the self-signed certificate most guides make (`openssl req
/// -x509`, `CA:TRUE`) as its `GANGS_CA`: grpc's `ssl_channel_credentials(root_certificates)`
/// trusts it, so the example's TLS works with that certificate as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_bot_plays_over_tls_with_the_openssl_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let tls = common::TlsFiles::openssl(dir.path());
    let server = Server::start_tls(&dir.path().join("data"), &tls, &[]);
    let mut client = server.client().await;
    let options = pb::GameOptions {
        game: Some(pb::game_options::Game::GangOfFour(pb::GangOfFourOptions {
            players: Some(3),
            target_score: Some(20),
            ..Default::default()
        })),
    };
    let game = create(&mut client, "gang-of-four", Some(options), 5).await;
    let (python, stubs) = python();
    let mut bots = vec![Command::new(python)
        .arg(bot_script())
        .args(["--server", &server.url(), "--game", &game])
        .args(["--seat", "0", "--seed", "5"])
        .env("PYTHONPATH", stubs)
        .env("GANGS_CA", &tls.cert)
        .env("GANGS_BOT_QUIET", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map(common::Bot)
        .expect("start the Python bot")];
    for seat in 1..3 {
        bots.push(spawn_rust_bot(
            "gangs-bot-greedy",
            &server,
            &game,
            seat,
            seat as u64,
        ));
    }
    for bot in &mut bots {
        let exit = wait_with_timeout(bot, GAME_TIMEOUT);
        assert!(exit.success(), "a bot exited with {exit}");
    }
    let acted = log(&mut client, &game)
        .await
        .iter()
        .filter(|r| matches!(&r.record, Some(pb::log_record::Record::Acted(a)) if a.seat == 0))
        .count();
    assert!(acted > 0, "the Python bot never acted over TLS");
}

/// `gangs arena ... --json` with the Python bot as `--bot`; returns (exit code, report).
fn arena(kind: &str, other_bot: &Path, games: &str, options: &[&str]) -> (i32, Value) {
    let (python, stubs) = python();
    let python_bot = format!("{} {}", python.display(), bot_script().display());
    let output = Command::new(bin("gangs"))
        .args(["arena", "--game", kind, "--bot", &python_bot, "--bot"])
        .arg(other_bot)
        .args(["--games", games, "--json"])
        .args(options)
        .env("PYTHONPATH", stubs)
        .env_remove("GANGS_SERVER")
        .env_remove("GANGS_API_KEY")
        .output()
        .expect("run gangs arena");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), report)
}

#[test]
fn the_python_bot_refuses_flags_outside_the_contract() {
    // The control for the arena tests below: the bot's parser is strict.
    let (python, stubs) = python();
    let output = Command::new(python)
        .arg(bot_script())
        .args(["--server", "http://127.0.0.1:1", "--game", "g", "--quiet"])
        .env("PYTHONPATH", stubs)
        .output()
        .expect("run the Python bot");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unrecognized arguments: --quiet"),
        "{stderr}"
    );
}

#[test]
fn the_arena_passes_a_strict_bot_only_the_contract_arguments() {
    let (code, report) = arena(
        "gang-of-four",
        &bin("gangs-bot-random"),
        "2",
        &["--option", "target_score=30"],
    );
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    assert_eq!(report["games"], 2, "{report}");
    let (code, report) = arena(
        "the-gang",
        &bin("gangs-bot-random"),
        "1",
        &["--option", "mode=advanced"],
    );
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
}
