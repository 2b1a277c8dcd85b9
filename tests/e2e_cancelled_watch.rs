//! End to end, cancelled streams on quiet games: one connection opens 200 spectator streams on one
//! game, reads one update from each and cancels them, 50 times over (10,000 streams), on a
//! game waiting for its seats and on a running game where nobody acts. A cancelled stream
//! leaves its game at once, whatever the game is doing: after every round the games' watcher
//! lists are empty again (`gangs_game_watchers`, read from `--metrics`), and the whole
//! reproduction grows the server's resident memory by less than 10 MB (it grew by 49 to 85 MB
//! when a game kept its cancelled watchers until its next record).

use crate::common;

use common::observe::{await_metric, free_port, rss_kb};
use common::*;
use gangs_proto::v1 as pb;
use std::time::Duration;

const ROUNDS: usize = 50;
const STREAMS: usize = 200;
/// What the whole reproduction may add to the server's resident memory.
const BUDGET_KB: u64 = 10 * 1024;
/// How long a round's cancelled streams may take to leave their game (they leave as soon as the
/// server has read the client's resets: milliseconds; the margin is for a loaded CI machine).
const RELEASE_DEADLINE: Duration = Duration::from_secs(10);

type Client = pb::games_client::GamesClient<tonic::transport::Channel>;

/// The rounds on `game`: each stream reads one update, then all are cancelled, and
/// every list is empty again before the next round.
async fn open_read_cancel(client: &mut Client, metrics: u16, game: &str) {
    for _ in 0..ROUNDS {
        let mut streams = Vec::with_capacity(STREAMS);
        for _ in 0..STREAMS {
            let stream = client
                .watch(pb::WatchRequest {
                    game_id: game.to_string(),
                    ..Default::default()
                })
                .await
                .expect("watch")
                .into_inner();
            streams.push(stream);
        }
        for stream in &mut streams {
            let update = stream.message().await.expect("an update").expect("open");
            assert!(update.seq >= 1);
        }
        drop(streams);
        await_metric(metrics, "gangs_game_watchers", 0.0, RELEASE_DEADLINE).await;
        await_metric(metrics, "gangs_watchers", 0.0, RELEASE_DEADLINE).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_spectators_leave_waiting_and_idle_games_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_port();
    let server = Server::start_with(
        dir.path(),
        0,
        &["--metrics", &format!("127.0.0.1:{metrics}")],
    );
    let pid = server.child.id();
    let mut client = server.client().await;

    // A game waiting for its seats, and a running game nobody acts in (no clock, no deadline).
    let waiting = create(&mut client, "gang-of-four", None, 1).await;
    let running = create(&mut client, "gang-of-four", None, 2).await;
    for seat in 0..4 {
        client
            .join_game(pb::JoinGameRequest {
                game_id: running.clone(),
                seat: Some(seat),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    assert_eq!(
        status(&mut client, &running).await.status,
        pb::GameStatus::Running as i32
    );

    let before = rss_kb(pid);
    open_read_cancel(&mut client, metrics, &waiting).await;
    let after_waiting = rss_kb(pid);
    open_read_cancel(&mut client, metrics, &running).await;
    let after_running = rss_kb(pid);
    eprintln!(
        "{ROUNDS} x {STREAMS} cancelled spectator streams: {before} KB before, {after_waiting} KB after the waiting game's, {after_running} KB after the running game's"
    );
    for (game, after) in [("waiting", after_waiting), ("running", after_running)] {
        assert!(
            after.saturating_sub(before) < BUDGET_KB,
            "the server grew by {} KB (from {before} KB) over the {game} game's rounds",
            after - before
        );
    }

    // Nothing is lost on the way: both games still answer, with nobody left watching.
    assert_eq!(
        status(&mut client, &waiting).await.status,
        pb::GameStatus::Waiting as i32
    );
    assert_eq!(log(&mut client, &running).await.len(), 6);
}
