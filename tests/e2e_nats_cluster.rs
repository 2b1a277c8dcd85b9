//! End to end on a JetStream cluster: three real `nats-server` nodes (stream replicas 3) and two
//! real `gangs-server` nodes on them, driven over gRPC, by the bots and by the CLI.
//! - The node that owns a running game is SIGKILLed: the game finishes through the other node,
//!   every acknowledged action is in the log at its seq, spectators on either node resume by
//!   seq without a gap or a duplicate, and `gangs replay --verify` passes.
//! - One NATS node is SIGKILLed mid-game (and the gangs-server after it): a quorum of two goes
//!   on, no acknowledged action is lost, the game finishes.
//! - A race, made deterministic by a test-only fail point: the owner holds an append and is
//!   paused (SIGSTOP); the other node takes the game over (the lease expired) without appending;
//!   resumed, the old owner's append is refused every time and never acknowledged; the client's
//!   retry applies it once through either node, both read the same contiguous log, and the game
//!   goes on to its end through both nodes (its log replays).
//! - A create_id retried through any node, or after a restart, answers the same game, and a
//!   node just started lists every game in its first answer.
//! - The bots, the arena and the CLI work unchanged against either node.
//! - A node started just after a NATS node died retries what times out and comes up (it exited
//!   when watching a bucket timed out).

use crate::common;

use common::nats;
use common::*;
use gangs_proto::v1 as pb;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

pub(crate) type Client = pb::games_client::GamesClient<tonic::transport::Channel>;

/// How long any one condition may take before the test says what did not happen. A lease
/// expires after 5 s; a takeover rebuilds the game from the stream.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

async fn watch(url: String, game_id: String, from_seq: u64) -> tonic::Streaming<pb::Update> {
    let mut client = Client::connect(url).await.expect("connect");
    client
        .watch(pb::WatchRequest {
            game_id,
            token: String::new(),
            from_seq,
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner()
}

/// Updates until the stream ends (the node died, or the game ended).
async fn drain(mut stream: tonic::Streaming<pb::Update>) -> Vec<pb::Update> {
    let mut updates = Vec::new();
    while let Ok(Some(update)) = stream.message().await {
        updates.push(update);
    }
    updates
}

/// Follows a game as a spectator after `from_seq` to its end, resuming on `urls` in turn (by the
/// last seq received; the last URL once the others were tried) whenever a stream breaks or a
/// node cannot be reached; returns every update once, in order.
pub(crate) async fn follow(urls: Vec<String>, game_id: String, from_seq: u64) -> Vec<pb::Update> {
    let mut updates: Vec<pb::Update> = Vec::new();
    let start = Instant::now();
    for attempt in 0.. {
        let from = updates.last().map_or(from_seq, |u| u.seq);
        let url = urls[attempt.min(urls.len() - 1)].clone();
        if let Ok(mut client) = Client::connect(url).await {
            let request = pb::WatchRequest {
                game_id: game_id.clone(),
                token: String::new(),
                from_seq: from,
                ..Default::default()
            };
            if let Ok(stream) = client.watch(request).await {
                let part = drain(stream.into_inner()).await;
                assert_contiguous(&part, from);
                updates.extend(part);
            }
        }
        if updates
            .last()
            .is_some_and(|u| u.status == pb::GameStatus::Finished as i32)
        {
            break;
        }
        assert!(
            start.elapsed() < 4 * PATIENCE,
            "the spectator never saw the game finish (last seq {from})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    updates
}

fn assert_contiguous(updates: &[pb::Update], from_seq: u64) {
    for (i, update) in updates.iter().enumerate() {
        assert_eq!(
            update.seq,
            from_seq + 1 + i as u64,
            "a gap or a duplicate after seq {from_seq}"
        );
    }
}

async fn wait_for_seq(client: &mut Client, game_id: &str, seq: u64) {
    let start = Instant::now();
    loop {
        let summary = status(client, game_id).await;
        if summary.last_seq >= seq || summary.status == pb::GameStatus::Finished as i32 {
            return;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "game {game_id} did not reach seq {seq} (at {})",
            summary.last_seq
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Plays `action` for a seat through `client`, retrying with the same action id while the game
/// changes hands (UNAVAILABLE, or a transport error while the owner dies), so a retry of an
/// applied action gets its first answer.
async fn act_retrying(
    client: &mut Client,
    game_id: &str,
    token: &str,
    action: &pb::GameAction,
    action_id: &str,
) -> pb::ActResponse {
    let start = Instant::now();
    loop {
        let request = pb::ActRequest {
            game_id: game_id.into(),
            token: token.into(),
            action: Some(action.clone()),
            expected_seq: None,
            action_id: action_id.into(),
        };
        match client.act(request).await {
            Ok(answer) => return answer.into_inner(),
            Err(status)
                if matches!(
                    status.code(),
                    tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled
                ) =>
            {
                assert!(
                    start.elapsed() < PATIENCE,
                    "the game stayed unavailable: {status}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(status) => panic!("act {action_id} refused: {status}"),
        }
    }
}

/// Two gangs nodes on one 3-node JetStream cluster (replicas 3).
struct Deployment {
    // Dropped last: the gangs nodes first, then NATS.
    a: Server,
    b: Server,
    nats: Vec<nats::NatsNode>,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

async fn deployment() -> Deployment {
    deployment_with_a_env(&[]).await
}

/// As `deployment`, node A started with extra environment variables (a fail point).
async fn deployment_with_a_env(env: &[(&str, &str)]) -> Deployment {
    let nats = tokio::task::spawn_blocking(nats::cluster).await.unwrap();
    let store = nats::store_url(&nats);
    let flags = ["--store", store.as_str(), "--nats-replicas", "3"];
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Server::start_with_env(dirs.0.path(), &flags, env);
    let b = Server::start_with(dirs.1.path(), 0, &flags);
    // Each node holds its half of the shards (a game created through A runs on A).
    wait_for_health(&a, ServingStatus::Serving).await;
    wait_for_health(&b, ServingStatus::Serving).await;
    Deployment {
        a,
        b,
        nats,
        _dirs: dirs,
    }
}

/// A Gang of Four game created through `creator` (which then owns it), every seat joined
/// through `creator` for seats 0-1 and `other` for seats 2-3; its tokens and a local replica.
pub(crate) async fn seated_game(
    creator: &mut Client,
    other: &mut Client,
    seed: u64,
) -> (String, Vec<String>, Box<dyn gangs_games::Game>) {
    let options = gangs_games::parse_options("gang-of-four", Some(4), &[]).unwrap();
    let game_id = create(creator, "gang-of-four", Some(options), seed).await;
    let mut tokens = Vec::new();
    for seat in 0..4u32 {
        let client = if seat < 2 { &mut *creator } else { &mut *other };
        let joined = client
            .join_game(pb::JoinGameRequest {
                game_id: game_id.clone(),
                seat: Some(seat),
                name: format!("p{seat}"),
                join_id: format!("join-{seat}"),
                ..Default::default()
            })
            .await
            .expect("join through either node")
            .into_inner();
        tokens.push(joined.token);
    }
    let mut replica = gangs_games::new_game("gang-of-four", Some(&options), seed, None).unwrap();
    replica.start();
    (game_id, tokens, replica)
}

/// The next random legal action: (seat, action).
pub(crate) fn next_action(
    replica: &dyn gangs_games::Game,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> (usize, pb::GameAction) {
    let (seat, actions) = (0..replica.players())
        .map(|s| (s, replica.legal_actions(s)))
        .find(|(_, a)| !a.is_empty())
        .expect("someone may act");
    let action = actions[rng.random_range(0..actions.len())].clone();
    (seat, action)
}

/// Every acknowledged (seq, seat, action) is in the log at its seq, unchanged.
pub(crate) fn assert_acknowledged_kept(
    records: &[pb::LogRecord],
    acknowledged: &[(u64, u32, pb::GameAction)],
) {
    for (seq, seat, action) in acknowledged {
        let record = &records[*seq as usize - 1];
        assert_eq!(record.seq, *seq);
        match &record.record {
            Some(pb::log_record::Record::Acted(acted)) => {
                assert_eq!(
                    (acted.seat, acted.action.as_ref()),
                    (*seat, Some(action)),
                    "seq {seq} holds another action than the one acknowledged"
                );
            }
            other => panic!("seq {seq} is not the acknowledged action: {other:?}"),
        }
    }
}

/// Seqs 1, 2, 3… without a gap or a repeat.
fn assert_contiguous_from_one(records: &[pb::LogRecord]) {
    for (i, record) in records.iter().enumerate() {
        assert_eq!(
            record.seq,
            i as u64 + 1,
            "the log's seqs are not contiguous"
        );
    }
}

/// A finished game's whole log: contiguous, and it replays (the seed is public once over).
pub(crate) fn assert_whole_log(records: &[pb::LogRecord]) {
    assert_contiguous_from_one(records);
    gangs_games::replay::replay(records).expect("the log replays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_survivor_finishes_a_game_whose_owner_was_killed() {
    let mut d = deployment().await;
    let (mut a, mut b) = (d.a.client().await, d.b.client().await);
    // Created on A: A runs it. Spectators on both nodes follow it to its end across the kill.
    let seed = 21;
    let (game_id, tokens, mut replica) = seated_game(&mut a, &mut b, seed).await;
    let via_a = tokio::spawn(follow(vec![d.a.url(), d.b.url()], game_id.clone(), 0));
    let via_b = tokio::spawn(follow(vec![d.b.url()], game_id.clone(), 0));

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut acknowledged: Vec<(u64, u32, pb::GameAction)> = Vec::new();
    let mut killed = false;
    while !replica.is_over() {
        if acknowledged.len() == 20 && !killed {
            // The owner dies without warning; B takes the game over once A's lease expires.
            d.a.kill9();
            killed = true;
        }
        let (seat, action) = next_action(&*replica, &mut rng);
        replica.act(seat, &action).unwrap();
        // Seats 0-1 play through A while it lives, seats 2-3 through B (forwarded to A).
        let client = if seat < 2 && !killed { &mut a } else { &mut b };
        let action_id = format!("a{}", acknowledged.len());
        let answer = act_retrying(client, &game_id, &tokens[seat], &action, &action_id).await;
        acknowledged.push((answer.seq, seat as u32, action));
    }
    assert!(killed, "the game ended before the kill: pick a longer game");

    let records = log(&mut b, &game_id).await;
    assert_whole_log(&records);
    assert_acknowledged_kept(&records, &acknowledged);
    assert_eq!(
        status(&mut b, &game_id).await.status,
        pb::GameStatus::Finished as i32
    );
    let (code, out) = gangs_cli(&d.b, &["replay", &game_id, "--verify"]);
    assert_eq!(code, 0, "gangs replay --verify failed: {out}");

    // Both spectators saw every record once, in order, to the end.
    for spectator in [via_a, via_b] {
        let seen = spectator.await.unwrap();
        assert_eq!(seen.len(), records.len(), "a spectator missed records");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nats_node_and_then_the_gangs_server_die_mid_game_and_bots_finish_it() {
    let mut d = deployment().await;
    let mut client = d.a.client().await;
    let options = gangs_games::parse_options("gang-of-four", Some(4), &[]).unwrap();
    let game_id = create(&mut client, "gang-of-four", Some(options), 7).await;
    // The same bot binaries as on one node; two seats on each gangs node.
    let mut bots: Vec<_> = (0..4)
        .map(|seat| {
            let node = if seat < 2 { &d.a } else { &d.b };
            spawn_bot("gangs-bot-random", node, &game_id, Some(seat), seat as u64)
        })
        .collect();
    let spectator = tokio::spawn(drain(watch(d.a.url(), game_id.clone(), 0).await));

    // One NATS node dies mid-game: a quorum of two goes on.
    wait_for_seq(&mut client, &game_id, 10).await;
    d.nats[1].kill9();
    let at_nats_kill = status(&mut client, &game_id).await.last_seq;
    wait_for_seq(&mut client, &game_id, at_nats_kill + 10).await;

    // Then the owning gangs-server dies without warning, and a new process on its port serves
    // the game again (or B has taken it over by then: either way the bots go on).
    d.a.kill9();
    // What was in flight to the spectator dies with the connection: it has some prefix of the
    // game, in order; it resumes from wherever that prefix ends.
    let seen = spectator.await.unwrap();
    assert_contiguous(&seen, 0);
    let last_seen = seen.last().map_or(0, |u| u.seq);
    d.a.restart();
    d.nats[1].restart();
    let resumed = tokio::spawn(follow(vec![d.a.url()], game_id.clone(), last_seen));

    for bot in &mut bots {
        let status = wait_with_timeout(bot, Duration::from_secs(240));
        assert!(status.success(), "a bot failed: {status}");
    }
    let resumed = resumed.await.unwrap();
    assert_eq!(
        resumed.last().expect("updates after the restart").status,
        pb::GameStatus::Finished as i32
    );
    let mut b = d.b.client().await;
    let records = log(&mut b, &game_id).await;
    assert_whole_log(&records);
    // Every record the spectator was told about is in the log, unchanged in seq and kind.
    for update in seen.iter().chain(&resumed) {
        assert_eq!(records[update.seq as usize - 1].seq, update.seq);
    }
    assert_eq!(resumed.last().unwrap().seq, records.len() as u64);
    let (code, out) = gangs_cli(&d.a, &["replay", &game_id, "--verify"]);
    assert_eq!(code, 0, "gangs replay --verify failed: {out}");
}

/// A NATS node is SIGKILLed and a gangs-server starts at once (as a supervisor restarts a
/// node): for a few seconds JetStream's meta leader may still place a new consumer (a bucket's
/// watch) on the dead peer, and the request times out. The node retries within its start budget
/// and comes up serving; it used to exit with "cannot follow the bucket …: timed out" (seen in
/// `a_nats_node_and_then_the_gangs_server_die_mid_game_and_bots_finish_it`, where the test
/// helper's restart then retried a server that exited, which hid it). The node killed leads nothing (no stream, not the meta
/// group), so that opening the streams and buckets does not wait out the failure first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_started_just_after_a_nats_node_died_waits_and_serves() {
    let mut nats = tokio::task::spawn_blocking(nats::cluster).await.unwrap();
    let store = nats::store_url(&nats);
    let flags = [
        "--store".to_string(),
        store,
        "--nats-replicas".to_string(),
        "3".to_string(),
    ];
    let dir = tempfile::tempdir().unwrap();
    // A first node makes the stream and the buckets, and a game; then it dies.
    let mut first = {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        Server::start_with(dir.path(), 0, &flags)
    };
    wait_for_health(&first, ServingStatus::Serving).await;
    let mut client = first.client().await;
    let game_id = create(&mut client, "the-gang", None, 3).await;
    first.kill9();
    let victim = tokio::task::block_in_place(|| nats::a_node_leading_nothing(&nats));
    nats[victim].kill9();

    // Once, no retry: the process must not exit before it says it listens.
    let path = dir.path().to_path_buf();
    let second = tokio::task::spawn_blocking(move || {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        Server::start_with(&path, 0, &flags)
    })
    .await
    .expect("the node came up with a NATS node just gone");
    wait_for_health(&second, ServingStatus::Serving).await;
    let mut client = second.client().await;
    // It lists the game made before, and writes: a game made after the NATS node died.
    assert_eq!(status(&mut client, &game_id).await.game_id, game_id);
    create(&mut client, "the-gang", None, 4).await;
}

pub(crate) fn signal(server: &Server, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &server.child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill {signal} failed");
}

/// Waits until `path` exists.
async fn wait_for_file(path: &std::path::Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < PATIENCE,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A paused owner, made deterministic by a fail point instead of a sleep: A holds its
/// append of the next action (the test-only `GANGS_FAILPOINT_HOLD_APPEND`), is paused
/// (SIGSTOP), B takes the game over after A's lease expired (a read through B, no append), A
/// resumes and publishes the held record. The stream refuses it every time (B fenced the log
/// when it took the game): A answers UNAVAILABLE, never OK for a record B does not serve; the
/// client's retry through either node applies the action once, at that seq.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_owner_never_acknowledges_after_a_takeover() {
    let hold = tempfile::tempdir().unwrap();
    let hold_dir = hold.path().display().to_string();
    let d = deployment_with_a_env(&[("GANGS_FAILPOINT_HOLD_APPEND", &hold_dir)]).await;
    let (mut a, mut b) = (d.a.client().await, d.b.client().await);
    let seed = 33;
    let (game_id, tokens, mut replica) = seated_game(&mut a, &mut b, seed).await;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut acknowledged: Vec<(u64, u32, pb::GameAction)> = Vec::new();
    for i in 0..2 {
        let (seat, action) = next_action(&*replica, &mut rng);
        replica.act(seat, &action).unwrap();
        let answer = act_retrying(&mut a, &game_id, &tokens[seat], &action, &format!("a{i}")).await;
        acknowledged.push((answer.seq, seat as u32, action));
    }

    // A's next append is held just before it is published.
    std::fs::write(hold.path().join("arm"), "").unwrap();
    let (seat, action) = next_action(&*replica, &mut rng);
    let frozen_request = pb::ActRequest {
        game_id: game_id.clone(),
        token: tokens[seat].clone(),
        action: Some(action.clone()),
        expected_seq: None,
        action_id: "frozen".into(),
    };
    let in_flight = {
        let (mut a, request) = (a.clone(), frozen_request.clone());
        tokio::spawn(async move { tokio::time::timeout(PATIENCE, a.act(request)).await })
    };
    wait_for_file(&hold.path().join("held")).await;
    let held_seq: u64 = std::fs::read_to_string(hold.path().join("held"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(held_seq, acknowledged.last().unwrap().0 + 1);

    // A freezes with that append in flight; once its lease expired, B takes the game over on a
    // read (B appends nothing: only the fence stands between A's record and the log).
    signal(&d.a, "-STOP");
    let start = Instant::now();
    let taken_over = loop {
        let read = b
            .get_log(pb::GetLogRequest {
                game_id: game_id.clone(),
                from_seq: 0,
            })
            .await;
        if let Ok(stream) = read {
            if let Some(records) = drain_log(stream.into_inner()).await {
                break records;
            }
        }
        assert!(start.elapsed() < PATIENCE, "B never took the game over");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        taken_over.len() as u64,
        held_seq - 1,
        "B serves the log as it is"
    );

    // A resumes and publishes the held record: refused, so A does not acknowledge it.
    std::fs::write(hold.path().join("release"), "").unwrap();
    signal(&d.a, "-CONT");
    let frozen = in_flight
        .await
        .unwrap()
        .expect("the frozen Act got an answer once resumed");
    let refused = frozen.expect_err("A acknowledged a record after B took the game over");
    assert_eq!(refused.code(), tonic::Code::Unavailable, "{refused}");

    // The client retries as documented: applied once, at the seq A could not take, through
    // either node (A now forwards to B).
    replica.act(seat, &action).unwrap();
    let answer = act_retrying(&mut b, &game_id, &tokens[seat], &action, "frozen").await;
    assert_eq!(answer.seq, held_seq);
    let again = act_retrying(&mut a, &game_id, &tokens[seat], &action, "frozen").await;
    assert_eq!(again.seq, held_seq, "a retry through A answers the same");
    acknowledged.push((answer.seq, seat as u32, action));

    // Both nodes serve one and the same log.
    let start = Instant::now();
    loop {
        let via_b = log(&mut b, &game_id).await;
        let via_a = match a
            .get_log(pb::GetLogRequest {
                game_id: game_id.clone(),
                from_seq: 0,
            })
            .await
        {
            Ok(stream) => drain_log(stream.into_inner()).await,
            Err(_) => None,
        };
        if via_a.as_ref() == Some(&via_b) {
            assert_contiguous_from_one(&via_b);
            assert_eq!(via_b.len() as u64, held_seq);
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "A never served the same log as B again: a fork, or A stuck on its stale copy"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The game goes on to its end through both nodes, and its log replays.
    while !replica.is_over() {
        let (seat, action) = next_action(&*replica, &mut rng);
        replica.act(seat, &action).unwrap();
        let client = if seat < 2 { &mut a } else { &mut b };
        let action_id = format!("c{}", acknowledged.len());
        let answer = act_retrying(client, &game_id, &tokens[seat], &action, &action_id).await;
        acknowledged.push((answer.seq, seat as u32, action));
    }
    let records = log(&mut a, &game_id).await;
    assert_whole_log(&records);
    assert_acknowledged_kept(&records, &acknowledged);
}

/// A create_id retried through any node, or after the node restarted, answers the same
/// game (never another game, never "key already exists" forever); and a node that just started
/// lists every game in its first answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_ids_and_the_directory_are_the_same_on_every_node() {
    let mut d = deployment().await;
    let (mut a, mut b) = (d.a.client().await, d.b.client().await);
    let request = pb::CreateGameRequest {
        kind: "gang-of-four".into(),
        create_id: "one-game-only".into(),
        reserve_seats: true,
        ..Default::default()
    };
    let first = a.create_game(request.clone()).await.unwrap().into_inner();
    assert_eq!(first.invitations.len(), 4);
    for mut client in [a.clone(), b.clone(), a.clone(), b.clone()] {
        let again = client.create_game(request.clone()).await.expect("a retry");
        assert_eq!(again.into_inner(), first, "a retry answers the same game");
    }
    // The same create_id for another game is refused, through either node.
    for client in [&mut a, &mut b] {
        let other = pb::CreateGameRequest {
            reserve_seats: false,
            ..request.clone()
        };
        let refused = client.create_game(other).await.expect_err("another game");
        assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused}");
    }
    // Exactly one game, listed by both nodes (B's view of A's write: within a second).
    let listed = |games: &pb::ListGamesResponse| {
        games
            .games
            .iter()
            .map(|g| g.game_id.clone())
            .collect::<Vec<_>>()
    };
    let start = Instant::now();
    loop {
        let via_a = a.list_games(pb::ListGamesRequest::default()).await.unwrap();
        let via_b = b.list_games(pb::ListGamesRequest::default()).await.unwrap();
        assert_eq!(listed(via_a.get_ref()), vec![first.game_id.clone()]);
        if listed(via_b.get_ref()) == vec![first.game_id.clone()] {
            break;
        }
        assert!(start.elapsed() < PATIENCE, "B never listed the game");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A node started now lists it in its very first answer.
    let dir = tempfile::tempdir().unwrap();
    let flags: Vec<&str> = d.a.flags.iter().map(String::as_str).collect();
    let c = Server::start_with(dir.path(), 0, &flags);
    let mut c_client = c.client().await;
    let via_c = c_client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap();
    assert_eq!(listed(via_c.get_ref()), vec![first.game_id.clone()]);
    // After A restarts, the retry through it and through the new node still names that game.
    d.a.restart();
    let mut a = d.a.client().await;
    for client in [&mut a, &mut c_client] {
        let start = Instant::now();
        let again = loop {
            match client.create_game(request.clone()).await {
                Ok(again) => break again.into_inner(),
                Err(status) if status.code() == tonic::Code::Unavailable => {
                    assert!(start.elapsed() < PATIENCE, "{status}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(status) => panic!("a retry after the restart: {status}"),
            }
        };
        assert_eq!(again, first);
    }
    let via_c = c_client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap();
    assert_eq!(listed(via_c.get_ref()), vec![first.game_id.clone()]);

    // Cut off from NATS, a node says so on health (a load balancer sends calls elsewhere), and
    // serves again once NATS is back.
    for node in &mut d.nats {
        node.kill9();
    }
    wait_for_health(&c, ServingStatus::NotServing).await;
    for node in &mut d.nats {
        node.restart();
    }
    wait_for_health(&c, ServingStatus::Serving).await;
}

/// Waits until `server`'s health (the whole server, and `gangs.v1.Games`) answers `status`.
pub(crate) async fn wait_for_health(server: &Server, status: ServingStatus) {
    let channel = tonic::transport::Endpoint::from_shared(server.url())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = HealthClient::new(channel);
    let start = Instant::now();
    loop {
        let mut statuses = Vec::new();
        for service in ["", "gangs.v1.Games"] {
            let request = HealthCheckRequest {
                service: service.into(),
            };
            statuses.push(health.check(request).await.map(|r| r.into_inner().status));
        }
        if statuses
            .iter()
            .all(|s| s.as_ref().ok() == Some(&(status as i32)))
        {
            return;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "health never answered {status:?}: {statuses:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) async fn drain_log(
    mut stream: tonic::Streaming<pb::LogRecord>,
) -> Option<Vec<pb::LogRecord>> {
    let mut records = Vec::new();
    loop {
        match stream.message().await {
            Ok(Some(record)) => records.push(record),
            Ok(None) => return Some(records),
            Err(_) => return None,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_arena_and_cli_work_against_either_node() {
    let d = deployment().await;
    // A game created through B, bots on both nodes, listed by both.
    let (code, out) = gangs_cli(&d.b, &["new", "gang-of-four", "--json"]);
    assert_eq!(code, 0, "{out}");
    let created: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let game_id = created["game_id"].as_str().expect("game_id").to_string();
    let mut bots: Vec<_> = (0..4)
        .map(|seat| {
            let node = if seat % 2 == 0 { &d.a } else { &d.b };
            spawn_bot("gangs-bot-random", node, &game_id, Some(seat), seat as u64)
        })
        .collect();
    for bot in &mut bots {
        let status = wait_with_timeout(bot, Duration::from_secs(240));
        assert!(status.success(), "a bot failed: {status}");
    }
    for node in [&d.a, &d.b] {
        // The directory reaches the other node within a second or so.
        let start = Instant::now();
        loop {
            let (code, out) = gangs_cli(node, &["games", "--json"]);
            assert_eq!(code, 0, "{out}");
            if out.contains(&game_id) && out.contains("finished") {
                break;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "{} does not list {game_id} as finished: {out}",
                node.url()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let (code, out) = gangs_cli(node, &["replay", &game_id, "--verify"]);
        assert_eq!(code, 0, "replay --verify through {}: {out}", node.url());
    }
    let (code, out) = gangs_cli(
        &d.a,
        &[
            "arena",
            "--game",
            "gang-of-four",
            "--bot",
            "gangs-bot-random",
            "--games",
            "1",
            "--json",
        ],
    );
    assert_eq!(code, 0, "the arena on node A: {out}");
}
