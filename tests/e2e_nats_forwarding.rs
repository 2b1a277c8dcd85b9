//! End to end: watchers forwarded between two real `gangs-server` nodes on one real
//! `nats-server`. A `Watch` reaching the node that does not run its game is forwarded to the
//! one that does over a single HTTP/2 connection between the two nodes, which carries every
//! client's forwarded streams:
//! - the node that runs the game counts a forwarded stream against the game, not against that
//!   connection, so watchers through the other node are bounded by each client's own
//!   connection there (`--max-watchers-per-connection`) and by the game's limit, never by one
//!   shared connection's;
//! - the mark that says "forwarded" is the cluster's secret: a client that sends the header
//!   itself is still counted against its own connection;
//! - a client that opens hundreds of forwarded streams and never reads them holds a little of
//!   that shared connection each, never the connection: another client's stream through the
//!   same node still reads a whole game.

use crate::common;
use crate::e2e_nats_directory::{two_serving_nodes, two_serving_nodes_each};

use common::observe::{await_metric, free_port, read_metric};
use common::*;
use gangs_proto::v1 as pb;
use std::time::Duration;

type Client = pb::games_client::GamesClient<tonic::transport::Channel>;

/// Each client connection's limit in this test: small, so that a handful of connections make
/// more forwarded streams than one connection may hold.
const PER_CONNECTION: usize = 4;
/// Client connections to the node that forwards, each opening `PER_CONNECTION` streams.
const CONNECTIONS: usize = 5;

/// A spectator's watch of `game_id`, from its first record.
fn spectator_request(game_id: &str) -> pb::WatchRequest {
    pb::WatchRequest {
        game_id: game_id.to_string(),
        ..Default::default()
    }
}

/// A spectator's stream of `game_id`, from its first record.
async fn spectator_stream(
    client: &mut Client,
    game_id: &str,
) -> Result<tonic::Streaming<pb::Update>, tonic::Status> {
    Ok(client.watch(spectator_request(game_id)).await?.into_inner())
}

/// A spectator's first update; the stream is read on (and stays counted) in the background.
async fn spectate(client: &mut Client, game_id: &str) -> Result<pb::Update, tonic::Status> {
    let mut stream = spectator_stream(client, game_id).await?;
    let first = stream.message().await?.expect("a first update");
    // Read on in the background: it stays open (and counted) until the test ends.
    tokio::spawn(async move { while let Ok(Some(_)) = stream.message().await {} });
    Ok(first)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_through_one_node_are_bounded_by_their_own_connections_not_the_nodes_link() {
    let metrics = [free_port(), free_port()];
    let nodes = two_serving_nodes_each(|i| {
        vec![
            "--max-watchers-per-connection".to_string(),
            PER_CONNECTION.to_string(),
            "--metrics".to_string(),
            format!("127.0.0.1:{}", metrics[i]),
        ]
    })
    .await;
    let (a, b) = (&nodes.a, &nodes.b);

    // A game created through B (which holds shards) runs on B.
    let mut through_b = b.client().await;
    let game_id = create(&mut through_b, "gang-of-four", None, 7).await;

    // Twenty spectators through A, four on each of five connections: A forwards all twenty to
    // B over its one connection to B. Every one is served.
    let mut clients = Vec::new();
    for _ in 0..CONNECTIONS {
        clients.push(a.client().await);
    }
    for client in &mut clients {
        for _ in 0..PER_CONNECTION {
            let first = spectate(client, &game_id)
                .await
                .expect("a watcher through the other node");
            assert!(first.seq >= 1, "a first update with its seq: {first:?}");
        }
    }
    // B's actor feeds them all (the streams were forwarded, not served by A).
    let forwarded = (CONNECTIONS * PER_CONNECTION) as f64;
    await_metric(
        metrics[1],
        "gangs_game_watchers",
        forwarded,
        Duration::from_secs(30),
    )
    .await;
    assert_eq!(read_metric(metrics[0], "gangs_game_watchers"), 0.0);

    // Each client connection is still bounded, on the node it reached: one stream more on a
    // full connection to A is refused there, naming the flag.
    let refused = spectate(&mut clients[0], &game_id)
        .await
        .expect_err("a fifth stream on one connection");
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused}");
    assert!(
        refused.message().contains("--max-watchers-per-connection"),
        "{refused}"
    );

    // A client that marks its own calls as forwarded gains nothing: B counts its streams
    // against its connection all the same.
    let mut forger = b.client().await;
    let forged = |game_id: &str| {
        let mut request = tonic::Request::new(spectator_request(game_id));
        request
            .metadata_mut()
            .insert("gangs-forwarded", "1".parse().unwrap());
        request
    };
    let mut held = Vec::new();
    for _ in 0..PER_CONNECTION {
        held.push(
            forger
                .watch(forged(&game_id))
                .await
                .expect("within the connection's limit")
                .into_inner(),
        );
    }
    let refused = forger
        .watch(forged(&game_id))
        .await
        .expect_err("past the connection's limit, header or not");
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused}");
    drop(held);
}

/// Unread forwarded streams, over this many connections to the forwarding node (each within
/// the default `--max-watchers-per-connection`).
const UNREAD_CONNECTIONS: usize = 5;
const UNREAD_PER_CONNECTION: usize = 60;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_forwarded_streams_do_not_stall_the_nodes_link() {
    let nodes = two_serving_nodes(&[]).await;
    let (a, b) = (&nodes.a, &nodes.b);

    // A whole game of Gang of Four on B: hundreds of records, each update with its view.
    let mut through_b = b.client().await;
    let game = create(&mut through_b, "gang-of-four", None, 7).await;
    let mut bots: Vec<_> = (0..4)
        .map(|seat| spawn_bot("gangs-bot-random", b, &game, Some(seat), seat as u64))
        .collect();
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(120)).success());
    }
    let records = log(&mut through_b, &game).await.len();
    assert!(records > 200, "a long game: {records} records");

    // Hundreds of catch-ups of it through A, never read: A forwards each to B over its one
    // connection to B.
    let mut hogs = Vec::new();
    for _ in 0..UNREAD_CONNECTIONS {
        hogs.push(a.client().await);
    }
    let mut unread = Vec::new();
    for hog in &mut hogs {
        for _ in 0..UNREAD_PER_CONNECTION {
            let stream = spectator_stream(hog, &game).await.expect("watch through A");
            unread.push(stream);
        }
    }
    // Every one of them flows over the link: each has delivered its first update (B sent it,
    // A piped it through). From here B sends each stream's rest as far as the windows let it,
    // and nobody reads it: on a link whose windows unread streams can fill, the reader below
    // stalls whenever it starts.
    for stream in &mut unread {
        let first = stream
            .message()
            .await
            .expect("a first update")
            .expect("an update");
        assert_eq!(first.seq, 1);
    }

    // Another client reads the whole game through A, in order, in reasonable time.
    let mut reader = a.client().await;
    let read_all = async {
        let mut stream = spectator_stream(&mut reader, &game)
            .await
            .expect("watch through A");
        let mut seq = 0;
        while let Some(update) = stream.message().await.expect("an update") {
            assert_eq!(update.seq, seq + 1);
            seq = update.seq;
        }
        seq
    };
    let seq = tokio::time::timeout(Duration::from_secs(30), read_all)
        .await
        .expect("the game read through A within 30 s, beside the unread streams");
    assert_eq!(seq as usize, records);
    drop(unread);
}
