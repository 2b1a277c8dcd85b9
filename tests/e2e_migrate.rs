//! `gangs-server migrate --from DIR --to nats://...` end to end: a sled data dir with a finished
//! game and a game still waiting for players is copied into JetStream; a server on the NATS
//! store then serves both, byte for byte, and the waiting game goes on (its seat token still
//! works). Run twice, the migration copies nothing more.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use std::process::Command;
use std::time::Duration;

/// Runs `gangs-server migrate` and returns (exit code, stdout + stderr).
fn migrate(from: &std::path::Path, to: &str) -> (i32, String) {
    let output = Command::new(bin("gangs-server"))
        .args(["migrate", "--from"])
        .arg(from)
        .args(["--to", to])
        .env("RUST_LOG", "warn")
        .output()
        .expect("run gangs-server migrate");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sled_data_dir_moves_into_jetstream_and_plays_on() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sled");

    // On sled: one game played to its end by bots, one waiting with one seat taken.
    let mut sled = Server::start(&data);
    let mut client = sled.client().await;
    let finished = create(&mut client, "gang-of-four", None, 41).await;
    let mut bots: Vec<_> = (0..4)
        .map(|seat| {
            spawn_bot(
                "gangs-bot-random",
                &sled,
                &finished,
                Some(seat),
                7 + seat as u64,
            )
        })
        .collect();
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(120)).success());
    }
    assert_eq!(
        status(&mut client, &finished).await.status,
        pb::GameStatus::Finished as i32
    );
    let waiting = create(&mut client, "the-gang", None, 42).await;
    let join = |seat: u32| pb::JoinGameRequest {
        game_id: waiting.clone(),
        seat: Some(seat),
        name: format!("crew {seat}"),
        ..Default::default()
    };
    let token = client.join_game(join(0)).await.unwrap().into_inner().token;
    let finished_log = log(&mut client, &finished).await;
    let waiting_log = log(&mut client, &waiting).await;
    drop(client);
    sled.kill9();

    // A directory that is not a data dir is refused with one clear line.
    let nats = nats::single();
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, out) = migrate(&empty, &nats.url());
    assert_ne!(code, 0, "an empty dir is not a data dir: {out}");
    assert!(out.contains("not a gangs data dir"), "{out}");

    let (code, out) = migrate(&data, &nats.url());
    assert_eq!(code, 0, "migrate failed: {out}");
    assert!(out.contains("migrated 2 game(s)"), "{out}");
    let records = finished_log.len() + waiting_log.len();
    assert!(out.contains(&format!("{records} record(s)")), "{out}");
    // Again: nothing more is copied.
    let (code, out) = migrate(&data, &nats.url());
    assert_eq!(code, 0, "a second migrate failed: {out}");
    assert!(out.contains("2 game(s) were already there"), "{out}");

    // A server on JetStream (and an empty data dir) serves both games from the copied log.
    let store_dir = dir.path().join("unused");
    let server = Server::start_with(&store_dir, 0, &["--store", &nats.url()]);
    let mut client = server.client().await;
    assert_eq!(log(&mut client, &finished).await, finished_log);
    assert_eq!(log(&mut client, &waiting).await, waiting_log);
    assert_eq!(
        status(&mut client, &finished).await.status,
        pb::GameStatus::Finished as i32
    );
    let (code, out) = gangs_cli(&server, &["replay", &finished, "--verify"]);
    assert_eq!(code, 0, "replay --verify after the migration: {out}");

    // The waiting game fills and starts; the seat taken on sled keeps its token.
    for seat in 1..4 {
        client.join_game(join(seat)).await.unwrap();
    }
    let mut updates = client
        .watch(pb::WatchRequest {
            game_id: waiting.clone(),
            token: token.clone(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .expect("the migrated token watches its seat")
        .into_inner();
    let mut running = false;
    while let Some(update) = tokio::time::timeout(Duration::from_secs(10), updates.message())
        .await
        .expect("an update within 10 s")
        .expect("the stream stays up")
    {
        assert_eq!(update.seat, Some(0));
        if update.status == pb::GameStatus::Running as i32 {
            running = true;
            break;
        }
    }
    assert!(running, "the migrated game starts once every seat is taken");
}
