//! A cluster under faults and membership changes, end to end: three real `nats-server` nodes
//! (replicas 3) and real `gangs-server` nodes, with clients that retry as the docs say (the
//! same `create_id`, `join_id` and `action_id`, through any node, on UNAVAILABLE or a broken
//! call).
//! - **Faults.** Games are played through both nodes while faults come one at a time: a gangs
//!   node SIGKILLed and restarted, a NATS node SIGKILLed and restarted, a gangs node paused
//!   (SIGSTOP, 6–8 s) with calls in flight. At the end every acknowledged action is in the log at
//!   its seq, every log is contiguous and the same through every node and replays, no game
//!   waited longer than the lease TTL and a few seconds, and every `create_id` made one game,
//!   listed by every node. `GANGS_FAULTS=N` sets the number of faults (6 here; the long run in
//!   docs/deployment.md uses 100).
//! - **Membership.** A third node joins while games are played and takes about a third of the
//!   shards; a node stopped with SIGTERM hands its shards over; a node SIGKILLed has its shards
//!   taken after the TTL; every game finishes, its spectator resumed by seq across the changes,
//!   and every log replays.
//! - **No answer from a stale memory.** A node paused until another took its shard and moved a
//!   game on answers a call it got meanwhile by forwarding it or with UNAVAILABLE, never with a
//!   refusal judged on its old state.
//! - **Timers follow the shard.** A waiting game whose node died is abandoned after the fill
//!   timeout by the node that took its shard, with nobody calling the game.

use crate::common;
use crate::e2e_nats_cluster::{
    assert_acknowledged_kept, assert_whole_log, follow, next_action, signal, wait_for_health,
    Client, PATIENCE,
};

use common::nats;
use common::observe::{connections_to, free_port, scrape};
use common::*;
use gangs_proto::v1 as pb;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tonic_health::pb::health_check_response::ServingStatus;

/// The longest a game may wait for its next acknowledged action under a fault: the lease TTL
/// (5 s) after a node dies or pauses, a NATS election, the rebuild from the stream, and a
/// loaded 2-core machine.
const STUCK_LIMIT: Duration = Duration::from_secs(30);
/// A client gives up on a call after this and retries (a paused node never answers).
const CALL_TIMEOUT: Duration = Duration::from_secs(8);
/// Between two actions of one player: a steady load that leaves the machine to the faults.
const PACE: Duration = Duration::from_millis(15);

/// Clients of the nodes a player may call (the test changes the list as nodes join and
/// leave), one connection per node, made lazily (a dead node refuses the call, which is
/// retried elsewhere).
#[derive(Clone, Default)]
struct Nodes(Arc<Mutex<Vec<(String, Client)>>>);

impl Nodes {
    fn of(servers: &[&Server]) -> Nodes {
        let nodes = Nodes::default();
        for server in servers {
            nodes.add(server);
        }
        nodes
    }

    fn add(&self, server: &Server) {
        let channel = tonic::transport::Endpoint::from_shared(server.url())
            .unwrap()
            .connect_timeout(Duration::from_secs(1))
            .timeout(CALL_TIMEOUT)
            .connect_lazy();
        self.0
            .lock()
            .unwrap()
            .push((server.url(), Client::new(channel)));
    }

    fn remove(&self, server: &Server) {
        self.0
            .lock()
            .unwrap()
            .retain(|(url, _)| *url != server.url());
    }

    fn any(&self) -> Client {
        self.any_named().1
    }

    /// A random node's URL and client.
    fn any_named(&self) -> (String, Client) {
        let nodes = self.0.lock().unwrap();
        nodes[rand::rng().random_range(0..nodes.len())].clone()
    }
}

/// A call through any node, retried (through any node) while the answer is UNAVAILABLE or the
/// call broke; any other refusal fails the test.
async fn retrying<T, F, Fut>(nodes: &Nodes, what: &str, call: F) -> T
where
    F: FnMut(Client) -> Fut,
    Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
{
    match retrying_until_refused(nodes, what, call).await {
        Ok(answer) => answer,
        Err((node, status)) => panic!("{what} refused by {node}: {status}"),
    }
}

/// [`retrying`], answering a refusal with the node that gave it.
async fn retrying_until_refused<T, F, Fut>(
    nodes: &Nodes,
    what: &str,
    mut call: F,
) -> Result<T, (String, tonic::Status)>
where
    F: FnMut(Client) -> Fut,
    Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
{
    let start = Instant::now();
    loop {
        let (node, client) = nodes.any_named();
        match call(client).await {
            Ok(answer) => return Ok(answer.into_inner()),
            Err(status)
                if matches!(
                    status.code(),
                    tonic::Code::Unavailable
                        | tonic::Code::Unknown
                        | tonic::Code::Cancelled
                        | tonic::Code::DeadlineExceeded
                ) =>
            {
                assert!(
                    start.elapsed() < 3 * PATIENCE,
                    "{what}: the cluster stayed unavailable: {status}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(status) => return Err((node, status)),
        }
    }
}

/// One game as a client played it.
struct Played {
    game_id: String,
    acknowledged: Vec<(u64, u32, pb::GameAction)>,
    /// The longest wait for an acknowledgement (one call, retries included).
    longest_wait: Duration,
}

/// Creates game `n` (by create_id, asked twice through any nodes: the same game), seats four
/// players (by join_id) and plays it to its end with random legal actions, every call
/// through any node.
async fn play_one(nodes: &Nodes, n: usize, acks: &AtomicUsize) -> Played {
    let seed = 1000 + n as u64;
    let options = gangs_games::parse_options("gang-of-four", Some(4), &[]).unwrap();
    let create = pb::CreateGameRequest {
        kind: "gang-of-four".into(),
        options: Some(options),
        seed: Some(seed),
        create_id: format!("faults-{n}"),
        ..Default::default()
    };
    let mut created = Vec::new();
    for _ in 0..2 {
        let request = create.clone();
        let answer = retrying(nodes, "create", |mut node| {
            let request = request.clone();
            async move { node.create_game(request).await }
        })
        .await;
        created.push(answer.game_id);
    }
    assert_eq!(
        created[0], created[1],
        "a create_id retried made another game"
    );
    let game_id = created.swap_remove(0);
    let mut tokens = Vec::new();
    for seat in 0..4u32 {
        let request = pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(seat),
            name: format!("p{seat}"),
            join_id: format!("join-{n}-{seat}"),
            ..Default::default()
        };
        let joined = retrying(nodes, "join", |mut node| {
            let request = request.clone();
            async move { node.join_game(request).await }
        })
        .await;
        tokens.push(joined.token);
    }
    let mut replica = gangs_games::new_game("gang-of-four", Some(&options), seed, None).unwrap();
    replica.start();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut played = Played {
        game_id: game_id.clone(),
        acknowledged: Vec::new(),
        longest_wait: Duration::ZERO,
    };
    while !replica.is_over() {
        let (seat, action) = next_action(&*replica, &mut rng);
        replica.act(seat, &action).unwrap();
        let request = pb::ActRequest {
            game_id: game_id.clone(),
            token: tokens[seat].clone(),
            action: Some(action.clone()),
            expected_seq: None,
            action_id: format!("{n}-{}", played.acknowledged.len()),
        };
        let asked = Instant::now();
        let answered = retrying_until_refused(nodes, "act", |mut node| {
            let request = request.clone();
            async move { node.act(request).await }
        })
        .await;
        let answer = match answered {
            Ok(answer) => answer,
            // What the cluster's log says then: whether an acknowledged action is missing
            // (a lost ack) or this one is there already (a retry not recognised), or the
            // answer came from a node's stale memory.
            Err((node, status)) => {
                let log = whole_log(nodes, &game_id).await;
                let tail: Vec<String> = log
                    .iter()
                    .rev()
                    .take(4)
                    .map(|r| match &r.record {
                        Some(pb::log_record::Record::Acted(a)) => {
                            format!("seq {} seat {} action_id {}", r.seq, a.seat, a.action_id)
                        }
                        other => format!("seq {} {other:?}", r.seq),
                    })
                    .collect();
                panic!(
                    "act {} of game {game_id} (seat {seat}) refused by {node}: {status}; acknowledged: {:?}; the log ends (newest first): {tail:?}",
                    request.action_id,
                    played.acknowledged.iter().rev().take(3).map(|a| a.0).collect::<Vec<_>>(),
                )
            }
        };
        played.longest_wait = played.longest_wait.max(asked.elapsed());
        played.acknowledged.push((answer.seq, seat as u32, action));
        acks.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(PACE).await;
    }
    played
}

/// `players` clients, each playing games one after another until `stop`, then finishing the
/// one it is in. Game numbers are unique across players.
fn start_players(
    nodes: &Nodes,
    players: usize,
    stop: &Arc<AtomicBool>,
    acks: &Arc<AtomicUsize>,
) -> Vec<tokio::task::JoinHandle<Vec<Played>>> {
    let numbers = Arc::new(AtomicUsize::new(0));
    (0..players)
        .map(|_| {
            let (nodes, stop, acks, numbers) =
                (nodes.clone(), stop.clone(), acks.clone(), numbers.clone());
            tokio::spawn(async move {
                let mut games = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let n = numbers.fetch_add(1, Ordering::Relaxed);
                    games.push(play_one(&nodes, n, &acks).await);
                }
                games
            })
        })
        .collect()
}

/// A game's whole log through one node, read again while the node is between owners.
async fn whole_log(nodes: &Nodes, game_id: &str) -> Vec<pb::LogRecord> {
    let start = Instant::now();
    loop {
        let mut node = nodes.any();
        if let Ok(stream) = node
            .get_log(pb::GetLogRequest {
                game_id: game_id.into(),
                from_seq: 0,
            })
            .await
        {
            if let Some(records) = crate::e2e_nats_cluster::drain_log(stream.into_inner()).await {
                return records;
            }
        }
        assert!(
            start.elapsed() < PATIENCE,
            "could not read game {game_id}'s log"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every game played: its log the same through every node, contiguous, replaying, holding
/// every acknowledged action; no wait longer than [`STUCK_LIMIT`]; every node lists exactly
/// the games played (one per create_id).
async fn check_games(played: &[Played], servers: &[&Server]) {
    let mut longest = Duration::ZERO;
    for game in played {
        let mut logs = Vec::new();
        for server in servers {
            logs.push(whole_log(&Nodes::of(&[server]), &game.game_id).await);
        }
        for other in &logs[1..] {
            assert_eq!(
                other, &logs[0],
                "game {}: two nodes serve different logs",
                game.game_id
            );
        }
        assert_whole_log(&logs[0]);
        assert_acknowledged_kept(&logs[0], &game.acknowledged);
        longest = longest.max(game.longest_wait);
    }
    eprintln!(
        "{} games, {} acknowledged actions, longest wait for an answer {longest:?}",
        played.len(),
        played.iter().map(|g| g.acknowledged.len()).sum::<usize>()
    );
    assert!(
        longest <= STUCK_LIMIT,
        "a game waited {longest:?} for an answer (limit {STUCK_LIMIT:?})"
    );
    let expected: BTreeSet<&str> = played.iter().map(|g| g.game_id.as_str()).collect();
    for server in servers {
        let mut client = server.client().await;
        let listed = client
            .list_games(pb::ListGamesRequest {
                page_size: 1000,
                ..Default::default()
            })
            .await
            .expect("list games")
            .into_inner()
            .games;
        let listed: BTreeSet<&str> = listed.iter().map(|g| g.game_id.as_str()).collect();
        assert_eq!(
            listed,
            expected,
            "{} does not list exactly the games played",
            server.url()
        );
    }
}

fn cluster_flags(store: &str, metrics_port: Option<u16>) -> Vec<String> {
    let mut flags = vec![
        "--store".to_string(),
        store.to_string(),
        "--nats-replicas".into(),
        "3".into(),
    ];
    if let Some(port) = metrics_port {
        flags.extend(["--metrics".into(), format!("127.0.0.1:{port}")]);
    }
    flags
}

fn start_node(dir: &std::path::Path, flags: &[String]) -> Server {
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    Server::start_with(dir, 0, &flags)
}

async fn wait_for_acks(acks: &AtomicUsize, at_least: usize) {
    let start = Instant::now();
    while acks.load(Ordering::Relaxed) < at_least {
        assert!(
            start.elapsed() < 3 * PATIENCE,
            "the games made no progress ({} actions acknowledged)",
            acks.load(Ordering::Relaxed)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_neither_fork_nor_lose_nor_stall_a_game() {
    let faults: usize = std::env::var("GANGS_FAULTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(6);
    let mut nats = tokio::task::spawn_blocking(nats::cluster).await.unwrap();
    let flags = cluster_flags(&nats::store_url(&nats), None);
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut servers = [
        start_node(dirs[0].path(), &flags),
        start_node(dirs[1].path(), &flags),
    ];
    for server in &servers {
        wait_for_health(server, ServingStatus::Serving).await;
    }
    let nodes = Nodes::of(&[&servers[0], &servers[1]]);
    let (stop, acks) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let players = start_players(&nodes, 6, &stop, &acks);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(24);
    wait_for_acks(&acks, 50).await;
    for fault in 0..faults {
        let target = rng.random_range(0..servers.len());
        let before = acks.load(Ordering::Relaxed);
        match fault % 3 {
            0 => {
                eprintln!("fault {fault}: SIGKILL gangs node {target}, then restart it");
                servers[target].restart();
            }
            1 => {
                let node = rng.random_range(0..nats.len());
                eprintln!("fault {fault}: SIGKILL NATS node {node}, then restart it");
                nats[node].kill9();
                tokio::time::sleep(Duration::from_secs(2)).await;
                nats[node].restart();
            }
            _ => {
                let pause = Duration::from_millis(rng.random_range(6000..8000));
                eprintln!("fault {fault}: SIGSTOP gangs node {target} for {pause:?}");
                signal(&servers[target], "-STOP");
                tokio::time::sleep(pause).await;
                signal(&servers[target], "-CONT");
            }
        }
        for server in &servers {
            wait_for_health(server, ServingStatus::Serving).await;
        }
        // Play goes on after each fault before the next one.
        wait_for_acks(&acks, before + 30).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut played = Vec::new();
    for player in players {
        played.extend(player.await.expect("a player failed"));
    }
    check_games(&played, &[&servers[0], &servers[1]]).await;
}

/// The shards a node holds, as its metrics say (0 before the first sample).
fn shards_held(metrics_port: u16) -> usize {
    let text = scrape(metrics_port);
    text.lines()
        .find_map(|l| l.strip_prefix("gangs_cluster_shards_held "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(0, |v| v as usize)
}

/// Waits until the nodes' shard counts pass `check`; answers how long it took.
async fn wait_for_shards(ports: &[u16], what: &str, check: impl Fn(&[usize]) -> bool) -> Duration {
    let start = Instant::now();
    loop {
        let held: Vec<usize> = ports.iter().map(|&p| shards_held(p)).collect();
        if check(&held) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the shards never {what}: held {held:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_third_node_joins_under_load_then_one_leaves_and_one_dies() {
    let nats = tokio::task::spawn_blocking(nats::cluster).await.unwrap();
    let store = nats::store_url(&nats);
    let ports = [free_port(), free_port(), free_port()];
    let dirs = [
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    ];
    let a_log = tempfile::tempdir().unwrap();
    let mut a = {
        let flags = cluster_flags(&store, Some(ports[0]));
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let log = a_log.path().join("a.log");
        Server::start_logged_with_env(dirs[0].path(), &flags, &log, &[("RUST_LOG", "info")])
    };
    let mut b = start_node(dirs[1].path(), &cluster_flags(&store, Some(ports[1])));
    wait_for_health(&a, ServingStatus::Serving).await;
    wait_for_health(&b, ServingStatus::Serving).await;
    let all = 256;
    wait_for_shards(&ports[..2], "were shared by two nodes", |h| {
        h.iter().sum::<usize>() == all && h.iter().all(|&n| n == all / 2)
    })
    .await;

    let nodes = Nodes::of(&[&a, &b]);
    let (stop, acks) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let players = start_players(&nodes, 4, &stop, &acks);
    wait_for_acks(&acks, 100).await;

    // C joins under load: it takes about a third, the others hand over what it needs.
    let c = start_node(dirs[2].path(), &cluster_flags(&store, Some(ports[2])));
    wait_for_health(&c, ServingStatus::Serving).await;
    let joined = wait_for_shards(&ports, "were shared by three nodes", |h| {
        h.iter().sum::<usize>() == all && h.iter().all(|&n| n.abs_diff(all / 3) <= 2)
    })
    .await;
    eprintln!("a third node joined: shards shared out in {joined:?}");
    nodes.add(&c);
    // A spectator of a game in play follows it through A, then B, then C.
    let watched = {
        let games = retrying(&nodes, "list", |mut node| async move {
            node.list_games(pb::ListGamesRequest::default()).await
        })
        .await
        .games;
        games
            .into_iter()
            .find(|g| g.status == pb::GameStatus::Running as i32)
            .expect("a game in play")
            .game_id
    };
    let spectator = tokio::spawn(follow(vec![a.url(), b.url(), c.url()], watched.clone(), 0));
    let before = acks.load(Ordering::Relaxed);
    wait_for_acks(&acks, before + 100).await;

    // A stops (SIGTERM): it hands its shards over at once, not after the lease TTL.
    nodes.remove(&a);
    a.terminate();
    assert!(
        a.stderr_text().contains("left the cluster"),
        "A did not hand its shards over:\n{}",
        a.stderr_text()
    );
    let handover = wait_for_shards(&ports[1..], "were taken from the node that left", |h| {
        h.iter().sum::<usize>() == all
    })
    .await;
    eprintln!("A left: B and C hold every shard {handover:?} after it exited");
    let before = acks.load(Ordering::Relaxed);
    wait_for_acks(&acks, before + 100).await;

    // B dies (SIGKILL): C takes its shards once their leases expired.
    nodes.remove(&b);
    b.kill9();
    let takeover = wait_for_shards(&ports[2..], "were taken from the dead node", |h| {
        h[0] == all
    })
    .await;
    eprintln!("B died: C holds every shard {takeover:?} later");

    stop.store(true, Ordering::Relaxed);
    let mut played = Vec::new();
    for player in players {
        played.extend(player.await.expect("a player failed"));
    }
    check_games(&played, &[&c]).await;
    let records: HashMap<String, usize> = played
        .iter()
        .map(|g| (g.game_id.clone(), g.acknowledged.len()))
        .collect();
    let seen = spectator.await.unwrap();
    let log = whole_log(&Nodes::of(&[&c]), &watched).await;
    assert!(records.contains_key(&watched));
    assert_eq!(
        seen.len(),
        log.len(),
        "the spectator missed or repeated records across the changes"
    );
}

/// Timers run on the node holding a game's shard, also after the shard moves: a waiting game
/// whose node died is abandoned after `--fill-timeout` by the node that took its shard,
/// though nobody calls the game (the survivor loads a taken shard's unfinished games), and
/// its log ends once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_nodes_waiting_game_is_abandoned_by_the_node_that_took_its_shard() {
    let nats = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let store = nats.url();
    let flags = ["--store", store.as_str(), "--fill-timeout", "4s"];
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut a = Server::start_with(dirs[0].path(), 0, &flags);
    let b = Server::start_with(dirs[1].path(), 0, &flags);
    wait_for_health(&a, ServingStatus::Serving).await;
    wait_for_health(&b, ServingStatus::Serving).await;
    let mut through_a = a.client().await;
    let game = create(&mut through_a, "gang-of-four", None, 8).await;
    through_a
        .join_game(pb::JoinGameRequest {
            game_id: game.clone(),
            ..Default::default()
        })
        .await
        .expect("join");
    let mut through_b = b.client().await;
    let listed = |client: &mut Client| {
        let mut client = client.clone();
        let game = game.clone();
        async move {
            let games = client
                .list_games(pb::ListGamesRequest::default())
                .await
                .expect("list games")
                .into_inner()
                .games;
            games.into_iter().find(|g| g.game_id == game)
        }
    };
    let start = Instant::now();
    while listed(&mut through_b).await.is_none() {
        assert!(start.elapsed() < PATIENCE, "B never listed A's game");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A dies with the game waiting; from now on only ListGames is called (it loads nothing).
    a.kill9();
    let start = Instant::now();
    loop {
        let summary = listed(&mut through_b).await.expect("B lists the game");
        if summary.status == pb::GameStatus::Abandoned as i32 {
            assert_eq!(summary.seats_taken, 1);
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the game was never abandoned after its node died: {summary:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let records = log(&mut through_b, &game).await;
    let ends: Vec<&pb::Ended> = records
        .iter()
        .filter_map(|r| match &r.record {
            Some(pb::log_record::Record::Ended(ended)) => Some(ended),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 1, "the game ended more than once: {ends:?}");
    assert_eq!(ends[0].reason(), pb::ended::Reason::Abandoned);
    assert!(ends[0].detail.contains("fill"), "{}", ends[0].detail);
}

/// A node never refuses from a memory another node has moved past: A runs a game and is
/// paused (SIGSTOP) until B takes its shard and plays an action through it; a call that reached
/// A while it was paused, valid only after B's action, is answered once A resumes with OK
/// (forwarded to B) or UNAVAILABLE (retried), never "not your turn" from A's stale state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_node_never_refuses_from_a_state_another_node_moved_past() {
    let nats = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let store = nats.url();
    let flags = ["--store", store.as_str()];
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let a = Server::start_with(dirs[0].path(), 0, &flags);
    let b = Server::start_with(dirs[1].path(), 0, &flags);
    wait_for_health(&a, ServingStatus::Serving).await;
    wait_for_health(&b, ServingStatus::Serving).await;
    // Created through A (a random id on one of A's shards): A runs it.
    let (mut through_a, mut through_b) = (a.client().await, b.client().await);
    let (game_id, tokens, mut replica) =
        crate::e2e_nats_cluster::seated_game(&mut through_a, &mut through_b, 5).await;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let nodes_b = Nodes::of(&[&b]);
    let act = |seat: usize, action: &pb::GameAction, id: &str| pb::ActRequest {
        game_id: game_id.clone(),
        token: tokens[seat].clone(),
        action: Some(action.clone()),
        expected_seq: None,
        action_id: id.into(),
    };
    let (seat, action) = next_action(&*replica, &mut rng);
    replica.act(seat, &action).unwrap();
    through_a
        .act(act(seat, &action, "first"))
        .await
        .expect("A plays");

    signal(&a, "-STOP");
    // B takes A's shards once the leases expired, and plays the next action.
    let (seat, action) = next_action(&*replica, &mut rng);
    replica.act(seat, &action).unwrap();
    let request = act(seat, &action, "through-b");
    let moved = retrying(&nodes_b, "act through B", |mut node| {
        let request = request.clone();
        async move { node.act(request).await }
    })
    .await;
    // The action after it, sent to the paused A over a connection of its own: valid only
    // after B's action.
    let (seat, action) = next_action(&*replica, &mut rng);
    replica.act(seat, &action).unwrap();
    let late = act(seat, &action, "late");
    let known: Vec<u16> = connections_to(a.port())
        .iter()
        .map(|(client, _)| *client)
        .collect();
    let pending = {
        let channel = tonic::transport::Endpoint::from_shared(a.url())
            .unwrap()
            .connect_lazy();
        let mut to_a = pb::games_client::GamesClient::new(channel);
        let late = late.clone();
        tokio::spawn(async move { to_a.act(late).await })
    };
    // The request reached A: the kernel holds it, unread, in a new connection to A's port
    // (A is stopped, so nothing else connects to it anew, and nothing reads it yet).
    let start = Instant::now();
    while !connections_to(a.port())
        .iter()
        .any(|(client, unread)| !known.contains(client) && *unread > 0)
    {
        assert!(
            start.elapsed() < PATIENCE,
            "the late request never reached the paused A: {:?}",
            connections_to(a.port())
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    signal(&a, "-CONT");
    let answer = pending.await.unwrap();
    let applied = match answer {
        Ok(answer) => answer.into_inner(),
        Err(status) => {
            assert_eq!(
                status.code(),
                tonic::Code::Unavailable,
                "A answered from a stale state: {status}"
            );
            retrying(&nodes_b, "act retried", |mut node| {
                let late = late.clone();
                async move { node.act(late).await }
            })
            .await
        }
    };
    assert_eq!(applied.seq, moved.seq + 1);
}
