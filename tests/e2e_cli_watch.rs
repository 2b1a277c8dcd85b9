//! `gangs watch` survives a server crash: it reconnects by itself and resumes after the last seq
//! it printed, so its output is every update of the game exactly once, in order.

mod common;

use common::*;
use gangs_proto::v1 as pb;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn cli_watch_reconnects_after_a_server_kill_and_prints_every_update_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path());
    let mut client = server.client().await;
    let options = gangs_games::parse_options(
        "gang-of-four",
        Some(4),
        &[("target_score".to_string(), "30".to_string())],
    )
    .expect("options");
    let game_id = create(&mut client, "gang-of-four", Some(options), 7).await;

    let mut watch = Command::new(bin("gangs"))
        .args(["--server", &server.url(), "--json", "watch", &game_id])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gangs watch");
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let stdout = watch.stdout.take().expect("stdout");
    let reader = {
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                lines.lock().unwrap().push(line.expect("a line"));
            }
        })
    };
    let mut stderr = watch.stderr.take().expect("stderr");
    let notes = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });

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
    let mut bots: Vec<_> = (0..4)
        .map(|seat| {
            spawn_bot(
                "gangs-bot-random",
                &server,
                &game_id,
                Some(seat),
                seat as u64,
            )
        })
        .collect();
    let exit = wait_with_timeout(&mut watch, Duration::from_secs(180));
    for bot in &mut bots {
        wait_with_timeout(bot, Duration::from_secs(60));
    }
    reader.join().expect("stdout reader");
    let notes = notes.join().expect("stderr reader");
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
