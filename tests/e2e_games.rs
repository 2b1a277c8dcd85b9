//! End to end: the real `gangs-server`, real `gangs-bot-random` processes in every seat, a
//! SIGKILL of the server mid-game, a restart on the same data dir, and the games finish with
//! every acknowledged record kept, `Watch(from_seq)` resuming with no gap or duplicate, and
//! `gangs replay --verify` passing.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use prost::Message;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

type Spectator = (
    pb::games_client::GamesClient<tonic::transport::Channel>,
    tonic::Streaming<pb::Update>,
);

/// A spectator's stream, open (its catch-up and live updates are then certain to come).
async fn open_spectator(server_url: String, game_id: String, from_seq: u64) -> Spectator {
    let mut client = pb::games_client::GamesClient::connect(server_url)
        .await
        .expect("connect");
    let stream = client
        .watch(pb::WatchRequest {
            game_id,
            token: String::new(),
            from_seq,
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    (client, stream)
}

/// Collects a spectator's updates until the stream ends or `stop_at_seq` is reached.
async fn collect_updates(spectator: Spectator, stop_at_seq: Option<u64>) -> Vec<pb::Update> {
    let (_client, mut stream) = spectator;
    let mut updates = Vec::new();
    while let Ok(Some(update)) = stream.message().await {
        let seq = update.seq;
        updates.push(update);
        if stop_at_seq.is_some_and(|stop| seq >= stop) {
            break;
        }
    }
    updates
}

async fn spectate(
    server_url: String,
    game_id: String,
    from_seq: u64,
    stop_at_seq: Option<u64>,
) -> Vec<pb::Update> {
    collect_updates(
        open_spectator(server_url, game_id, from_seq).await,
        stop_at_seq,
    )
    .await
}

fn assert_contiguous(updates: &[pb::Update], from_seq: u64) {
    for (i, update) in updates.iter().enumerate() {
        assert_eq!(
            update.seq,
            from_seq + 1 + i as u64,
            "gap or duplicate in the watch stream"
        );
    }
}

struct Table {
    game_id: String,
}

/// A game to play: kind, `key=value` options, players, seed, and the bot of each seat (the
/// last one fills the remaining seats).
struct TableSpec {
    kind: &'static str,
    options: Vec<(String, String)>,
    players: u32,
    seed: u64,
    bots: Vec<&'static str>,
}

fn table(
    kind: &'static str,
    options: &[(&str, &str)],
    players: u32,
    seed: u64,
    bots: &[&'static str],
) -> TableSpec {
    TableSpec {
        kind,
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        players,
        seed,
        bots: bots.to_vec(),
    }
}

async fn play_through_a_crash(tables: Vec<TableSpec>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path());
    let mut client = server.client().await;
    let mut games = Vec::new();
    let mut bots = Vec::new();
    for (g, spec) in tables.iter().enumerate() {
        let options = gangs_games::parse_options(spec.kind, Some(spec.players), &spec.options)
            .expect("options");
        let game_id = create(&mut client, spec.kind, Some(options), spec.seed).await;
        for seat in 0..spec.players {
            let bot = spec.bots[(seat as usize).min(spec.bots.len() - 1)];
            bots.push(spawn_bot(
                bot,
                &server,
                &game_id,
                Some(seat),
                g as u64 * 10 + seat as u64,
            ));
        }
        games.push(Table { game_id });
    }
    // A spectator follows the first game; everything it receives was acknowledged as durable.
    let watched = games[0].game_id.clone();
    // Its stream is open before the crash can come (the bots are already playing).
    let (_spectator_client, mut stream) = open_spectator(server.url(), watched.clone(), 0).await;
    let received = Arc::new(AtomicUsize::new(0));
    let before_crash = tokio::spawn({
        let received = received.clone();
        async move {
            let mut updates = Vec::new();
            while let Ok(Some(update)) = stream.message().await {
                updates.push(update);
                received.fetch_add(1, Ordering::SeqCst);
            }
            updates
        }
    });

    // Let the games run a little (and the spectator hear of it: updates still in flight when
    // the server dies are lost with the connection), then kill the server without warning.
    let mut progressed = false;
    for _ in 0..400 {
        let summary = status(&mut client, &watched).await;
        let over = summary.status == pb::GameStatus::Finished as i32;
        if (summary.last_seq >= 12 || over) && received.load(Ordering::SeqCst) > 0 {
            progressed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(progressed, "the game made no progress before the crash");
    server.kill9();
    let seen = before_crash.await.expect("spectator task");
    assert!(
        !seen.is_empty(),
        "the spectator saw nothing before the crash"
    );
    assert_contiguous(&seen, 0);
    let last_seen = seen.last().unwrap().seq;

    server.restart();
    let mut client = server.client().await;
    // Every record a watcher was told about survived the crash, unchanged.
    let after = spectate(server.url(), watched.clone(), 0, Some(last_seen)).await;
    assert_contiguous(&after, 0);
    assert!(
        after.len() as u64 >= last_seen,
        "records acknowledged before the crash were lost"
    );
    for (a, b) in seen.iter().zip(&after) {
        assert_eq!(
            a.events
                .iter()
                .map(|e| e.encode_to_vec())
                .collect::<Vec<_>>(),
            b.events
                .iter()
                .map(|e| e.encode_to_vec())
                .collect::<Vec<_>>(),
            "seq {} changed across the restart",
            a.seq
        );
    }
    // Resume from where the first spectator stopped: no gap, no duplicate, to the end.
    let resumed = tokio::spawn(spectate(server.url(), watched.clone(), last_seen, None));

    for bot in &mut bots {
        let status = wait_with_timeout(bot, Duration::from_secs(240));
        assert!(status.success(), "a bot failed: {status}");
    }
    let resumed = resumed.await.expect("resumed spectator");
    assert_contiguous(&resumed, last_seen);
    let last = resumed.last().expect("updates after the restart");
    assert_eq!(
        last.status,
        pb::GameStatus::Finished as i32,
        "the stream ends with the finished game"
    );
    assert!(last.outcome.is_some(), "a finished game has an outcome");

    for table in &games {
        let summary = status(&mut client, &table.game_id).await;
        assert_eq!(
            summary.status,
            pb::GameStatus::Finished as i32,
            "game {} did not finish",
            table.game_id
        );
        let (code, out) = gangs_cli(&server, &["replay", &table.game_id, "--verify", "--json"]);
        assert_eq!(
            code, 0,
            "gangs replay --verify failed for {}: {out}",
            table.game_id
        );
        // The finished game's log holds the seed, so anyone can replay it.
        let records = log(&mut client, &table.game_id).await;
        gangs_games::replay::replay(&records).expect("the log replays");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gang_of_four_random_bots_survive_a_server_kill() {
    play_through_a_crash(vec![
        table(
            "gang-of-four",
            &[("target_score", "30")],
            4,
            11,
            &["gangs-bot-random"],
        ),
        table(
            "gang-of-four",
            &[("target_score", "30"), ("manual_last_card", "true")],
            3,
            12,
            &["gangs-bot-random"],
        ),
    ])
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gang_random_bots_survive_a_server_kill() {
    play_through_a_crash(vec![
        table(
            "the-gang",
            &[("mode", "basic")],
            3,
            21,
            &["gangs-bot-random"],
        ),
        table(
            "the-gang",
            &[("mode", "advanced")],
            4,
            22,
            &["gangs-bot-random"],
        ),
        table("the-gang", &[("mode", "pro")], 5, 23, &["gangs-bot-random"]),
        table(
            "the-gang",
            &[("mode", "gangster")],
            6,
            24,
            &["gangs-bot-random"],
        ),
    ])
    .await;
}

/// The strong bots only ever send legal actions (the server would refuse anything else, and a
/// refused bot exits non-zero) and resume after a crash like the random one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strong_bots_play_legally_and_survive_a_server_kill() {
    play_through_a_crash(vec![
        table(
            "gang-of-four",
            &[("target_score", "30")],
            4,
            31,
            &[
                "gangs-bot-greedy",
                "gangs-bot-search --budget-ms 20",
                "gangs-bot-random",
            ],
        ),
        table(
            "gang-of-four",
            &[("target_score", "30"), ("manual_last_card", "true")],
            3,
            32,
            &["gangs-bot-search --budget-ms 20", "gangs-bot-greedy"],
        ),
        table(
            "the-gang",
            &[("mode", "advanced")],
            4,
            33,
            &["gangs-bot-crew"],
        ),
        table(
            "the-gang",
            &[("mode", "gangster")],
            3,
            34,
            &["gangs-bot-crew"],
        ),
    ])
    .await;
}
