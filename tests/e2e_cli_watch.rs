//! `gangs watch` and `gangs play` survive a server crash: they reconnect by themselves and
//! resume after the last seq they printed, so the output holds every update exactly once, in
//! order, and the human's seat plays on to the end.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A server on `dir` and a short Gang of Four game (to 30 points) waiting for its players.
async fn short_game(dir: &std::path::Path, seed: u64) -> (Server, String) {
    let server = Server::start(dir);
    let mut client = server.client().await;
    let options = gangs_games::parse_options(
        "gang-of-four",
        Some(4),
        &[("target_score".to_string(), "30".to_string())],
    )
    .expect("options");
    let game_id = create(&mut client, "gang-of-four", Some(options), seed).await;
    (server, game_id)
}

/// `gangs-bot-random` in each of `seats`.
fn random_bots(server: &Server, game_id: &str, seats: std::ops::Range<u32>) -> Vec<Bot> {
    seats
        .map(|seat| spawn_bot("gangs-bot-random", server, game_id, Some(seat), seat as u64))
        .collect()
}

/// Waits for the capture threads of an ended child; returns its stderr.
fn finish(reader: std::thread::JoinHandle<()>, notes: std::thread::JoinHandle<String>) -> String {
    reader.join().expect("stdout reader");
    notes.join().expect("stderr reader")
}

/// A child's stdout lines as they come, and its whole stderr once it ends.
struct Captured {
    lines: Arc<Mutex<Vec<String>>>,
    reader: std::thread::JoinHandle<()>,
    notes: std::thread::JoinHandle<String>,
}

fn capture(child: &mut std::process::Child) -> Captured {
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let stdout = child.stdout.take().expect("stdout");
    let reader = {
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                lines.lock().unwrap().push(line.expect("a line"));
            }
        })
    };
    let mut stderr = child.stderr.take().expect("stderr");
    let notes = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    Captured {
        lines,
        reader,
        notes,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_watch_reconnects_after_a_server_kill_and_prints_every_update_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, game_id) = short_game(dir.path(), 7).await;

    let mut watch = Command::new(bin("gangs"))
        .args(["--server", &server.url(), "--json", "watch", &game_id])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gangs watch");
    let Captured {
        lines,
        reader,
        notes,
    } = capture(&mut watch);

    // The watcher has printed the game's first record: now the server dies without warning.
    let start = Instant::now();
    while lines.lock().unwrap().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "watch printed nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill9();
    std::thread::sleep(Duration::from_millis(500));
    server.restart();

    // The game is played after the restart; the watcher must follow it to the end by itself.
    let mut bots = random_bots(&server, &game_id, 0..4);
    let exit = wait_with_timeout(&mut watch, Duration::from_secs(180));
    for bot in &mut bots {
        wait_with_timeout(bot, Duration::from_secs(60));
    }
    let notes = finish(reader, notes);
    assert!(exit.success(), "gangs watch failed: {notes}");
    assert!(
        notes.contains("reconnected; resuming after seq 1"),
        "no reconnection note: {notes}"
    );

    let updates: Vec<serde_json::Value> = lines
        .lock()
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str(l).expect("JSON lines only on stdout"))
        .collect();
    let seqs: Vec<u64> = updates.iter().map(|u| u["seq"].as_u64().unwrap()).collect();
    let expected: Vec<u64> = (1..=seqs.len() as u64).collect();
    assert_eq!(seqs, expected, "a gap or a duplicate across the reconnect");
    assert_eq!(updates.last().unwrap()["status"], "finished");
    let summary = status(&mut server.client().await, &game_id).await;
    assert_eq!(summary.status, pb::GameStatus::Finished as i32);
    assert_eq!(*seqs.last().unwrap(), summary.last_seq);
}

/// The update lines of a `--json` stream (refusals and "you played" lines are skipped).
fn update_seqs(lines: &[String]) -> (Vec<u64>, Option<serde_json::Value>) {
    let updates: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON lines only on stdout"))
        .filter(|v| v.get("status").is_some())
        .collect();
    (
        updates.iter().map(|u| u["seq"].as_u64().unwrap()).collect(),
        updates.last().cloned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_play_reconnects_after_a_server_kill_and_plays_to_the_end() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, game_id) = short_game(dir.path(), 11).await;

    // A "human" in seat 0 who always answers 1 (the first legal action), a line every 20 ms.
    let mut play = Command::new(bin("gangs"))
        .args([
            "--server",
            &server.url(),
            "--json",
            "play",
            &game_id,
            "--seat",
            "0",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gangs play");
    let mut stdin = play.stdin.take().expect("stdin");
    let typing = Arc::new(AtomicBool::new(true));
    let typist = {
        let typing = typing.clone();
        std::thread::spawn(move || loop {
            if typing.load(Ordering::SeqCst)
                && stdin.write_all(b"1\n").and_then(|_| stdin.flush()).is_err()
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        })
    };
    let Captured {
        lines,
        reader,
        notes,
    } = capture(&mut play);
    let mut bots = random_bots(&server, &game_id, 1..4);

    // Once the game is under way, the human stops typing; when the game waits for the human,
    // the server dies without warning and comes back. The prompt shown before the crash must
    // still be answerable (no new update comes while the game waits for this seat).
    let start = Instant::now();
    let newest = || update_seqs(&lines.lock().unwrap());
    while newest().0.last().copied().unwrap_or(0) < 10 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the game did not start"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    typing.store(false, Ordering::SeqCst);
    let our_turn =
        |u: &serde_json::Value| u["legal_actions"].as_array().is_some_and(|a| !a.is_empty());
    while !newest().1.as_ref().is_some_and(our_turn) {
        assert!(start.elapsed() < Duration::from_secs(60), "never our turn");
        std::thread::sleep(Duration::from_millis(10));
    }
    server.kill9();
    std::thread::sleep(Duration::from_millis(300));
    server.restart();
    typing.store(true, Ordering::SeqCst);

    let exit = wait_with_timeout(&mut play, Duration::from_secs(180));
    for bot in &mut bots {
        wait_with_timeout(bot, Duration::from_secs(60));
    }
    typist.join().expect("typist");
    let notes = finish(reader, notes);
    assert!(exit.success(), "gangs play failed: {notes}");
    assert!(
        notes.contains("reconnected"),
        "no reconnection note: {notes}"
    );

    let (seqs, last) = update_seqs(&lines.lock().unwrap());
    let first = seqs[0];
    let expected: Vec<u64> = (first..first + seqs.len() as u64).collect();
    assert_eq!(seqs, expected, "a gap or a duplicate across the reconnect");
    assert_eq!(last.unwrap()["status"], "finished");
    let summary = status(&mut server.client().await, &game_id).await;
    assert_eq!(summary.status, pb::GameStatus::Finished as i32);
    assert_eq!(*seqs.last().unwrap(), summary.last_seq);
}
