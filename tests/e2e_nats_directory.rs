//! End to end: the directory feed and the webhooks on a JetStream cluster. Two
//! real `gangs-server` nodes on one real `nats-server` (the feed's guarantees come from the
//! stream's sequence, not from replication, which `e2e_nats_cluster.rs` covers), both sending
//! to the same webhook receiver on loopback:
//! - games created on either node and cancelled through the other give every event on both
//!   nodes, the same cursors in the same order (the summary of another node's game included);
//! - resuming from a cursor handed out by the other node gives exactly the rest;
//! - the receiver gets each game's end once, from one node (the holder of the receiver's
//!   lease); SIGKILLed, that node's turn passes to the other, which delivers the next event;
//! - restarted, the killed node gives from cursor "0" exactly what the survivor gave, and the
//!   survivor's stream opened before it all went on without a gap.

use crate::common;
use crate::e2e_nats_cluster::wait_for_health;
use crate::e2e_watch_games::{keys, next, watch_games, Events};
use crate::e2e_webhooks::{json, signed, Receiver, SECRET};

use common::observe::{free_port, read_metric};
use common::*;
use gangs_proto::v1 as pb;
use std::time::{Duration, Instant};
use tonic_health::pb::health_check_response::ServingStatus;

type Client = pb::games_client::GamesClient<tonic::transport::Channel>;

const PATIENCE: Duration = Duration::from_secs(60);

async fn cancel(client: &mut Client, game_id: &str) {
    let start = Instant::now();
    loop {
        let request = pb::CancelGameRequest {
            game_id: game_id.to_string(),
            reason: "rained off".into(),
        };
        match client.cancel_game(request).await {
            Ok(_) => return,
            // The owner is changing (a node just died): clients retry.
            Err(status) if status.code() == tonic::Code::Unavailable => {
                assert!(start.elapsed() < PATIENCE, "cancel {game_id}: {status}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(status) => panic!("cancel {game_id}: {status}"),
        }
    }
}

/// Creates a game, retrying while the cluster answers UNAVAILABLE (a node just died) as
/// clients do.
async fn create_retrying(client: &mut Client, kind: &str, seed: u64) -> String {
    let start = Instant::now();
    loop {
        let request = pb::CreateGameRequest {
            kind: kind.into(),
            seed: Some(seed),
            ..Default::default()
        };
        match client.create_game(request).await {
            Ok(created) => return created.into_inner().game_id,
            Err(status) if status.code() == tonic::Code::Unavailable => {
                assert!(start.elapsed() < PATIENCE, "create {kind}: {status}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(status) => panic!("create {kind}: {status}"),
        }
    }
}

/// Reads `n` events.
async fn read(events: &mut Events, n: usize) -> Vec<pb::WatchGamesResponse> {
    let mut read = Vec::new();
    while read.len() < n {
        read.push(next(events).await);
    }
    read
}

/// (event, game) of each event, to compare with what was done.
fn what(events: &[pb::WatchGamesResponse]) -> Vec<(pb::DirectoryEvent, String)> {
    events
        .iter()
        .map(|e| (e.event(), e.game_id.clone()))
        .collect()
}

fn webhook_ids(receiver: &Receiver, game_id: &str) -> Vec<String> {
    receiver
        .got()
        .iter()
        .filter(|r| r.accepted && json(r)["game_id"] == game_id)
        .map(|r| r.event_id.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_streams_the_whole_directory_and_one_node_sends_each_webhook() {
    let nats = tokio::task::spawn_blocking(common::nats::single)
        .await
        .unwrap();
    let store = common::nats::store_url(std::slice::from_ref(&nats));
    let receiver = Receiver::start().await;
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ports = [free_port(), free_port()];
    let node = |dir: &std::path::Path, port: u16| {
        let metrics = format!("127.0.0.1:{port}");
        let flags = [
            "--store",
            store.as_str(),
            "--webhook",
            receiver.url.as_str(),
            "--webhook-secret",
            SECRET,
            "--metrics",
            metrics.as_str(),
        ];
        Server::start_with(dir, 0, &flags)
    };
    let mut servers = [node(dirs.0.path(), ports[0]), node(dirs.1.path(), ports[1])];
    // Both nodes hold their share of the shards before one of them is killed: a node that
    // holds none creates its games through another, which may be the dead one.
    for server in &servers {
        wait_for_health(server, ServingStatus::Serving).await;
    }
    let mut a = servers[0].client().await;
    let mut b = servers[1].client().await;
    let mut on_a = watch_games(&mut a, "0", "", &[]).await;
    let mut on_b = watch_games(&mut b, "0", "", &[]).await;

    // One game run by each node, each cancelled through the other node (forwarded).
    let g1 = create(&mut a, "gang-of-four", None, 1).await;
    let g2 = create(&mut b, "the-gang", None, 2).await;
    cancel(&mut b, &g1).await;
    cancel(&mut a, &g2).await;

    let seen_a = read(&mut on_a, 4).await;
    let seen_b = read(&mut on_b, 4).await;
    assert_eq!(
        keys(&seen_a),
        keys(&seen_b),
        "both nodes give the same feed"
    );
    let mut done = what(&seen_a);
    done.sort_by_key(|(event, game)| (*event as i32, game.clone()));
    let mut expected = vec![
        (pb::DirectoryEvent::Created, g1.clone()),
        (pb::DirectoryEvent::Created, g2.clone()),
        (pb::DirectoryEvent::Cancelled, g1.clone()),
        (pb::DirectoryEvent::Cancelled, g2.clone()),
    ];
    expected.sort_by_key(|(event, game)| (*event as i32, game.clone()));
    assert_eq!(done, expected, "every event of both nodes' games, once");
    let cursors: Vec<u64> = seen_a.iter().map(|e| e.cursor.parse().unwrap()).collect();
    assert!(cursors.windows(2).all(|w| w[0] < w[1]), "{cursors:?}");
    for event in seen_a.iter().chain(&seen_b) {
        let summary = event.summary.as_ref().expect("every event has its summary");
        assert_eq!(summary.game_id, event.game_id);
        if event.event() == pb::DirectoryEvent::Cancelled {
            assert_eq!(summary.status(), pb::GameStatus::Cancelled, "{event:?}");
        }
    }

    // A cursor from A resumes on B with exactly the rest.
    let mut resumed = watch_games(&mut b, &seen_a[1].cursor, "", &[]).await;
    assert_eq!(keys(&read(&mut resumed, 2).await), keys(&seen_a[2..]));

    // Each game's end reaches the receiver once, from one node.
    for game in [&g1, &g2] {
        receiver
            .wait_for("each cancelled game", |_| {
                !webhook_ids(&receiver, game).is_empty()
            })
            .await;
    }
    let got = receiver.got();
    assert!(got.iter().all(signed), "signed: {got:?}");
    assert_eq!(webhook_ids(&receiver, &g1).len(), 1, "{got:?}");
    assert_eq!(webhook_ids(&receiver, &g2).len(), 1, "{got:?}");
    let delivered = ports.map(|port| read_metric(port, "gangs_webhook_delivered_total"));
    let sender = if delivered[0] >= 2.0 && delivered[1] == 0.0 {
        0
    } else if delivered[1] >= 2.0 && delivered[0] == 0.0 {
        1
    } else {
        panic!("one node sends every event, not both: delivered {delivered:?}")
    };
    let survivor = 1 - sender;

    // The sender dies: the survivor takes its turn (once the lease expires) and sends the next.
    servers[sender].kill9();
    let mut client = servers[survivor].client().await;
    let g3 = create_retrying(&mut client, "gang-of-four", 3).await;
    cancel(&mut client, &g3).await;
    receiver
        .wait_for("the game cancelled after the sender died", |_| {
            !webhook_ids(&receiver, &g3).is_empty()
        })
        .await;
    assert_eq!(webhook_ids(&receiver, &g3).len(), 1);
    // At least once: only the event in flight when the sender died may come again.
    assert_eq!(webhook_ids(&receiver, &g1).len(), 1);
    assert!(webhook_ids(&receiver, &g2).len() <= 2);
    assert!(read_metric(ports[survivor], "gangs_webhook_delivered_total") >= 1.0);

    // The survivor's stream went on; the restarted node gives the same feed from "0".
    let live = if survivor == 0 { &mut on_a } else { &mut on_b };
    let more = read(live, 2).await;
    assert_eq!(
        what(&more),
        vec![
            (pb::DirectoryEvent::Created, g3.clone()),
            (pb::DirectoryEvent::Cancelled, g3.clone())
        ]
    );
    servers[sender].restart();
    let mut restarted = servers[sender].client().await;
    let mut again = watch_games(&mut restarted, "0", "", &[]).await;
    let all: Vec<_> = seen_a.iter().chain(&more).cloned().collect();
    assert_eq!(keys(&read(&mut again, 6).await), keys(&all));
}

/// Two nodes on one fresh `nats-server`, each serving (holding its share of the shards:
/// before, a create may answer UNAVAILABLE while the nodes share the shards out). Fields drop
/// in order: the servers before the data dirs and NATS.
pub(crate) struct TwoNodes {
    pub(crate) a: Server,
    pub(crate) b: Server,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    _nats: common::nats::NatsNode,
}

/// [`TwoNodes`], both started with `flags` beside `--store`.
pub(crate) async fn two_serving_nodes(flags: &[&str]) -> TwoNodes {
    two_serving_nodes_each(|_| flags.iter().map(|f| f.to_string()).collect()).await
}

/// [`TwoNodes`], node `i` (0 for A, 1 for B) started with `flags_of(i)` beside `--store`.
pub(crate) async fn two_serving_nodes_each(flags_of: impl Fn(usize) -> Vec<String>) -> TwoNodes {
    let nats = tokio::task::spawn_blocking(common::nats::single)
        .await
        .unwrap();
    let store = common::nats::store_url(std::slice::from_ref(&nats));
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let start = |dir: &std::path::Path, i: usize| {
        let flags = flags_of(i);
        let mut all = vec!["--store", store.as_str()];
        all.extend(flags.iter().map(String::as_str));
        Server::start_with(dir, 0, &all)
    };
    let a = start(dirs.0.path(), 0);
    let b = start(dirs.1.path(), 1);
    wait_for_health(&a, ServingStatus::Serving).await;
    wait_for_health(&b, ServingStatus::Serving).await;
    TwoNodes {
        a,
        b,
        _dirs: dirs,
        _nats: nats,
    }
}

/// A CreateGame retried with its create_id through another node of the cluster, where the
/// client is at `--max-live-games-per-key` already, is answered with its game: that
/// node never saw the creation, but the log has it under the id the create_id derives. (The
/// limit counts per node: the other node is the one that did not run the creation, which the
/// game's shard decides.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_retry_at_a_limit_on_another_node_is_answered_with_its_game() {
    let nodes = two_serving_nodes(&["--max-live-games-per-key", "1"]).await;
    let (mut a, mut b) = (nodes.a.client().await, nodes.b.client().await);
    let request = pb::CreateGameRequest {
        kind: "gang-of-four".into(),
        create_id: "made-through-a".into(),
        ..Default::default()
    };
    let first = a.create_game(request.clone()).await.unwrap().into_inner();
    // The node that holds the game's shard made it (A itself, or B when A forwarded it) and
    // counts it against the client's one live game; the other node never saw the creation.
    // The client fills its limit on that other node...
    let filler = pb::CreateGameRequest {
        kind: "the-gang".into(),
        ..Default::default()
    };
    let mut other = match b.create_game(filler.clone()).await {
        Ok(_) => b,
        Err(status) if status.code() == tonic::Code::ResourceExhausted => {
            a.create_game(filler)
                .await
                .expect("A did not count the game B made");
            a
        }
        Err(status) => panic!("create on B: {status}"),
    };
    let refused = other
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .expect_err("at the limit");
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused}");
    // ...and its retry through that node is answered with the game made, not refused.
    let again = other
        .create_game(request)
        .await
        .expect("a retry")
        .into_inner();
    assert_eq!(again, first);
}

/// The ids of the games a node lists.
async fn listed(client: &mut Client) -> Vec<String> {
    let games = listed_games(client).await;
    games.into_iter().map(|g| g.game_id).collect()
}

/// `--retain-finished` on a cluster: a game over for longer is deleted, its log and its entry
/// in the cluster's directory, so no node lists it any more (each node's list comes from the
/// directory bucket, which the deleting node purges).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_deleted_by_retention_leaves_every_nodes_list() {
    let nodes = two_serving_nodes(&["--retain-finished", "1s"]).await;
    let (mut a, mut b) = (nodes.a.client().await, nodes.b.client().await);
    let kept = create(&mut a, "the-gang", None, 7).await;
    let over = create(&mut a, "gang-of-four", None, 8).await;
    cancel(&mut b, &over).await;

    let start = Instant::now();
    loop {
        let (on_a, on_b) = (listed(&mut a).await, listed(&mut b).await);
        if !on_a.contains(&over) && !on_b.contains(&over) {
            assert!(
                on_a.contains(&kept) && on_b.contains(&kept),
                "{on_a:?} {on_b:?}"
            );
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the deleted game is still listed: A {on_a:?}, B {on_b:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Its log is gone too.
    let gone = b
        .get_log(pb::GetLogRequest {
            game_id: over.clone(),
            from_seq: 0,
        })
        .await;
    let code = match gone {
        Err(status) => status.code(),
        Ok(stream) => {
            let mut stream = stream.into_inner();
            stream
                .message()
                .await
                .map(|_| tonic::Code::Ok)
                .unwrap_or_else(|s| s.code())
        }
    };
    assert_eq!(code, tonic::Code::NotFound, "{over}");
}
