//! End to end on NATS JetStream (`gangs-server --store nats://…`): real `nats-server` processes
//! (a 3-node cluster with replicas 3, or one node), the real `gangs-server`, bots and CLI.
//! - Bots play unchanged; one NATS node and then the gangs-server are SIGKILLed mid-game; the
//!   game finishes, every record a watcher was told about is kept, the watcher resumes by seq
//!   with no gap or duplicate, and `gangs replay --verify` passes.
//! - `gangs-server migrate --from DIR --to nats://…` moves a sled data dir into JetStream: the
//!   games read the same afterwards, an unfinished one goes on, and a second run copies nothing.

mod common;

use common::nats;
use common::*;
use gangs_proto::v1 as pb;
use rand::{Rng, SeedableRng};
use std::process::Command;
use std::time::Duration;

type Client = pb::games_client::GamesClient<tonic::transport::Channel>;

async fn watch(url: String, game_id: String, from_seq: u64) -> tonic::Streaming<pb::Update> {
    let mut client = Client::connect(url).await.expect("connect");
    client
        .watch(pb::WatchRequest {
            game_id,
            token: String::new(),
            from_seq,
        })
        .await
        .expect("watch")
        .into_inner()
}

/// Updates until the stream ends (a crash or the end of the game).
async fn drain(mut stream: tonic::Streaming<pb::Update>) -> Vec<pb::Update> {
    let mut updates = Vec::new();
    while let Ok(Some(update)) = stream.message().await {
        updates.push(update);
    }
    updates
}

fn assert_contiguous(updates: &[pb::Update], from_seq: u64) {
    for (i, update) in updates.iter().enumerate() {
        assert_eq!(update.seq, from_seq + 1 + i as u64, "gap or duplicate");
    }
}

async fn wait_for_seq(client: &mut Client, game_id: &str, seq: u64) {
    for _ in 0..1200 {
        let summary = status(client, game_id).await;
        if summary.last_seq >= seq || summary.status == pb::GameStatus::Finished as i32 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("game {game_id} did not reach seq {seq}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_finish_a_game_on_a_jetstream_cluster_through_a_nats_kill_and_a_server_kill() {
    let mut cluster = tokio::task::spawn_blocking(nats::cluster).await.unwrap();
    let store = nats::store_url(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let mut server =
        Server::start_with(dir.path(), 0, &["--store", &store, "--nats-replicas", "3"]);
    let mut client = server.client().await;
    let options = gangs_games::parse_options("gang-of-four", Some(4), &[]).unwrap();
    let game_id = create(&mut client, "gang-of-four", Some(options), 7).await;
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
    let spectator = watch(server.url(), game_id.clone(), 0).await;
    let before = tokio::spawn(drain(spectator));

    // One NATS node dies mid-game: a quorum of two goes on.
    wait_for_seq(&mut client, &game_id, 10).await;
    cluster[1].kill9();
    let at_nats_kill = status(&mut client, &game_id).await.last_seq;
    wait_for_seq(&mut client, &game_id, at_nats_kill + 10).await;

    // Then the gangs-server dies without warning, and a new process rebuilds from the stream.
    server.kill9();
    let seen = before.await.unwrap();
    assert!(seen.len() >= 20, "the spectator saw {} updates", seen.len());
    assert_contiguous(&seen, 0);
    let last_seen = seen.last().unwrap().seq;
    server.restart();
    let mut client = server.client().await;
    let resumed = tokio::spawn(drain(watch(server.url(), game_id.clone(), last_seen).await));

    for bot in &mut bots {
        let status = wait_with_timeout(bot, Duration::from_secs(240));
        assert!(status.success(), "a bot failed: {status}");
    }
    let resumed = resumed.await.unwrap();
    assert_contiguous(&resumed, last_seen);
    assert_eq!(
        resumed.last().expect("updates after the restart").status,
        pb::GameStatus::Finished as i32
    );
    // Every record a watcher was told about is in the log, unchanged.
    let records = log(&mut client, &game_id).await;
    for update in &seen {
        let record = &records[update.seq as usize - 1];
        assert_eq!(record.seq, update.seq);
    }
    let (code, out) = gangs_cli(&server, &["replay", &game_id, "--verify", "--json"]);
    assert_eq!(code, 0, "gangs replay --verify failed: {out}");
    gangs_games::replay::replay(&records).expect("the log replays");
}

fn migrate(from: &std::path::Path, to: &str) -> (bool, String) {
    let output = Command::new(bin("gangs-server"))
        .arg("migrate")
        .arg("--from")
        .arg(from)
        .args(["--to", to])
        .output()
        .expect("run gangs-server migrate");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_moves_a_sled_data_dir_into_jetstream() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (finished, waiting, finished_log, waiting_log) = {
        let server = Server::start(dir.path());
        let mut client = server.client().await;
        let options = gangs_games::parse_options("the-gang", Some(3), &[]).unwrap();
        let finished = create(&mut client, "the-gang", Some(options), 11).await;
        let mut bots: Vec<_> = (0..3)
            .map(|s| spawn_bot("gangs-bot-random", &server, &finished, Some(s), s as u64))
            .collect();
        for bot in &mut bots {
            assert!(wait_with_timeout(bot, Duration::from_secs(120)).success());
        }
        let waiting = create(&mut client, "gang-of-four", None, 12).await;
        let finished_log = log(&mut client, &finished).await;
        let waiting_log = log(&mut client, &waiting).await;
        (finished, waiting, finished_log, waiting_log)
    };
    // The sled server is stopped (dropped) before its data dir is read.

    let (ok, out) = migrate(dir.path(), &node.url());
    assert!(ok, "migrate failed: {out}");
    assert!(out.contains("migrated 2 game(s)"), "{out}");
    let (ok, out) = migrate(dir.path(), &node.url());
    assert!(ok, "a second migrate failed: {out}");
    assert!(
        out.contains("migrated 0 game(s)") && out.contains("2 game(s) were already there"),
        "{out}"
    );
    let (ok, out) = migrate(&dir.path().join("nope"), &node.url());
    assert!(!ok && out.contains("not a gangs data dir"), "{out}");

    let empty = tempfile::tempdir().unwrap();
    let server = Server::start_with(empty.path(), 0, &["--store", &node.url()]);
    let mut client = server.client().await;
    assert_eq!(log(&mut client, &finished).await, finished_log);
    assert_eq!(log(&mut client, &waiting).await, waiting_log);
    let (code, out) = gangs_cli(&server, &["replay", &finished, "--verify", "--json"]);
    assert_eq!(code, 0, "gangs replay --verify failed: {out}");
    // The unfinished game goes on in JetStream.
    let mut bots: Vec<_> = (0..4)
        .map(|s| spawn_bot("gangs-bot-random", &server, &waiting, Some(s), s as u64))
        .collect();
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(240)).success());
    }
    assert_eq!(
        status(&mut client, &waiting).await.status,
        pb::GameStatus::Finished as i32
    );
}

/// Plays `seat`'s action through `client`, retrying while the game changes hands (UNAVAILABLE)
/// with the same action id, so a retry of an applied action gets its first answer.
async fn act_retrying(
    client: &mut Client,
    game_id: &str,
    token: &str,
    action: &pb::Action,
    action_id: &str,
) -> pb::ActResponse {
    let start = std::time::Instant::now();
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
            Err(status) if status.code() == tonic::Code::Unavailable => {
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "the game stayed unavailable: {status}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(status) => panic!("act refused: {status}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gangs_nodes_serve_one_game_and_the_survivor_finishes_it_after_a_kill() {
    let cluster = tokio::task::spawn_blocking(nats::cluster).await.unwrap();
    let store = nats::store_url(&cluster);
    let flags = ["--store", store.as_str(), "--nats-replicas", "3"];
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut node_a = Server::start_with(dir_a.path(), 0, &flags);
    let node_b = Server::start_with(dir_b.path(), 0, &flags);
    let (mut a, mut b) = (node_a.client().await, node_b.client().await);

    // Created on A (A runs it); seats 0 and 1 join through A, seats 2 and 3 through B.
    let options = gangs_games::parse_options("gang-of-four", Some(4), &[]).unwrap();
    let seed = 21;
    let game_id = create(&mut a, "gang-of-four", Some(options), seed).await;
    let mut tokens = Vec::new();
    for seat in 0..4u32 {
        let client = if seat < 2 { &mut a } else { &mut b };
        let joined = client
            .join_game(pb::JoinGameRequest {
                game_id: game_id.clone(),
                seat: Some(seat),
                name: format!("p{seat}"),
                join_id: format!("join-{seat}"),
            })
            .await
            .expect("join through either node")
            .into_inner();
        tokens.push(joined.token);
    }
    // A spectator on B follows the game A runs.
    let spectator = tokio::spawn(drain(watch(node_b.url(), game_id.clone(), 0).await));

    let mut replica = gangs_games::new_game("gang-of-four", Some(&options), seed, None).unwrap();
    replica.start();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut acknowledged: Vec<(u64, u32, pb::Action)> = Vec::new();
    let mut killed = false;
    while !replica.is_over() {
        if acknowledged.len() == 20 && !killed {
            // The owner dies without warning; B takes the game over once A's lease expires.
            node_a.kill9();
            killed = true;
        }
        let (seat, actions) = (0..replica.players())
            .map(|s| (s, replica.legal_actions(s)))
            .find(|(_, a)| !a.is_empty())
            .expect("someone may act");
        let action = actions[rng.random_range(0..actions.len())].clone();
        replica.act(seat, &action).unwrap();
        let client = if seat < 2 && !killed { &mut a } else { &mut b };
        let action_id = format!("a{}", acknowledged.len());
        let answer = act_retrying(client, &game_id, &tokens[seat], &action, &action_id).await;
        acknowledged.push((answer.seq, seat as u32, action));
    }
    assert!(killed, "the game ended before the kill: pick a longer game");

    // Every acknowledged action is in the log at its seq, once.
    let records = log(&mut b, &game_id).await;
    for (seq, seat, action) in &acknowledged {
        let record = &records[*seq as usize - 1];
        match &record.record {
            Some(pb::log_record::Record::Acted(acted)) => {
                assert_eq!((acted.seat, acted.action.as_ref()), (*seat, Some(action)));
            }
            other => panic!("seq {seq} is not the acknowledged action: {other:?}"),
        }
    }
    gangs_games::replay::replay(&records).expect("the log replays");
    let (code, out) = gangs_cli(&node_b, &["replay", &game_id, "--verify", "--json"]);
    assert_eq!(code, 0, "gangs replay --verify failed: {out}");

    // The spectator's stream through B broke with A; resumed by seq on B, it has everything.
    let seen = spectator.await.unwrap();
    assert_contiguous(&seen, 0);
    let last_seen = seen.last().map_or(0, |u| u.seq);
    let rest = drain(watch(node_b.url(), game_id.clone(), last_seen).await).await;
    assert_contiguous(&rest, last_seen);
    assert_eq!(
        rest.last().map_or(last_seen, |u| u.seq),
        records.len() as u64
    );
}
