//! End to end: a careless or hostile client opening many `Watch` streams from seq 0 on a
//! finished game and never reading them. The catch-up is replayed from the log as each client
//! reads, so the unread streams hold a few updates each: the server's memory stays bounded,
//! and the game's log and other games keep answering.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use std::time::Duration;

/// Streams opened, over this many connections (each within --max-watchers-per-connection).
const STREAMS: usize = 500;
const CONNECTIONS: usize = 5;
/// The memory the unread streams may cost the server above what it held before them.
const BUDGET_MB: u64 = 100;

/// The server's resident memory (Linux), MB.
fn rss_mb(pid: u32) -> u64 {
    common::observe::rss_kb(pid) / 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_catch_up_streams_cost_little_and_block_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    // A whole game of Gang of Four: hundreds of records.
    let game = create(&mut client, "gang-of-four", None, 7).await;
    let mut bots: Vec<_> = (0..4)
        .map(|seat| spawn_bot("gangs-bot-random", &server, &game, Some(seat), seat as u64))
        .collect();
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(120)).success());
    }
    let records = log(&mut client, &game).await.len();
    assert!(records > 200, "a long game: {records} records");

    let before = rss_mb(server.child.id());
    let mut clients = Vec::new();
    for _ in 0..CONNECTIONS {
        clients.push(server.client().await);
    }
    let mut streams = Vec::new();
    for i in 0..STREAMS {
        let stream = clients[i % CONNECTIONS]
            .watch(pb::WatchRequest {
                game_id: game.clone(),
                ..Default::default()
            })
            .await
            .expect("watch")
            .into_inner();
        streams.push(stream);
    }
    // The server fills whatever it fills for clients that do not read: wait until its memory
    // stops rising (five samples 200 ms apart within 1 MB of each other, 20 s at most), and
    // judge the highest figure seen.
    let during = settled_rss_mb(server.child.id()).await;
    eprintln!(
        "{STREAMS} unread catch-ups of a {records}-record game: {before} MB before, {during} MB with them"
    );
    assert!(
        during.saturating_sub(before) <= BUDGET_MB,
        "{STREAMS} unread catch-ups of a {records}-record game cost {} MB (from {before} to {during} MB)",
        during - before
    );

    // Meanwhile the log reads whole and another game plays.
    assert_eq!(log(&mut client, &game).await.len(), records);
    let other = create(&mut client, "the-gang", None, 3).await;
    let mut bots: Vec<_> = (0..4)
        .map(|seat| spawn_bot("gangs-bot-random", &server, &other, Some(seat), seat as u64))
        .collect();
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(120)).success());
    }
    assert_eq!(
        status(&mut client, &other).await.status,
        pb::GameStatus::Finished as i32
    );

    // A stream read to its end is the whole game, in order. (On a connection of its own: the
    // unread streams hold their connection's HTTP/2 window, on the client's side.)
    let mut reader = server.client().await;
    let mut stream = reader
        .watch(pb::WatchRequest {
            game_id: game.clone(),
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    let mut seq = 0;
    while let Some(update) = stream.message().await.unwrap() {
        assert_eq!(update.seq, seq + 1);
        seq = update.seq;
    }
    assert_eq!(seq as usize, records);
    drop(streams);
}

/// The server's resident memory once it has stopped rising: sampled every 200 ms until five
/// samples in a row lie within 1 MB, or 20 s passed; the highest sample.
async fn settled_rss_mb(pid: u32) -> u64 {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut samples: Vec<u64> = Vec::new();
    loop {
        samples.push(rss_mb(pid));
        let recent = &samples[samples.len().saturating_sub(5)..];
        let settled =
            recent.len() == 5 && recent.iter().max().unwrap() - recent.iter().min().unwrap() <= 1;
        if settled || std::time::Instant::now() > deadline {
            return *samples.iter().max().unwrap();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
