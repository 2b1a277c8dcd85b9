//! End to end: clocks for untrusted bots (options `turn_ms`, `bank_ms`, `absent_after`).
//! A seat that joins and never acts, and a bot killed mid-game, cost the table only their
//! clocks: their defaults are played (`timed_out` records), they turn absent, and the game
//! finishes — across a SIGKILL and restart of the server — with `gangs replay --verify`
//! passing. A deadline is a wall-clock time from the log, and the host's downtime is given
//! back: a restarted server adds the time it was down and a reconnect grace.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use std::time::Duration;

async fn join(client: &mut Client, game_id: &str, seat: u32) -> String {
    client
        .join_game(pb::JoinGameRequest {
            game_id: game_id.into(),
            seat: Some(seat),
            name: format!("silent {seat}"),
            ..Default::default()
        })
        .await
        .expect("join")
        .into_inner()
        .token
}

type Client = pb::games_client::GamesClient<tonic::transport::Channel>;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64
}

async fn wait_status(client: &mut Client, game_id: &str, wanted: pb::GameStatus, secs: u64) {
    for _ in 0..secs * 10 {
        if status(client, game_id).await.status == wanted as i32 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("game {game_id} did not reach {wanted:?} within {secs} s");
}

async fn wait_seq(client: &mut Client, game_id: &str, seq: u64) {
    for _ in 0..600 {
        if status(client, game_id).await.last_seq >= seq {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("game {game_id} did not reach seq {seq}");
}

fn timeouts(records: &[pb::LogRecord]) -> Vec<&pb::TimedOut> {
    records
        .iter()
        .filter_map(|r| match &r.record {
            Some(Record::TimedOut(t)) => Some(t),
            _ => None,
        })
        .collect()
}

/// A table where seat 0 joins and never acts and the bot of `killed` is killed mid-game; the
/// server is SIGKILLed and restarted mid-game. The game must still finish.
async fn silent_and_killed_seats_do_not_stall(kind: &str, players: u32, options: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let mut client = server.client().await;
    let pairs: Vec<(String, String)> = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain([
            ("turn_ms".to_string(), "200".to_string()),
            ("absent_after".to_string(), "2".to_string()),
        ])
        .collect();
    let options = gangs_games::parse_options(kind, Some(players), &pairs).unwrap();
    let game_id = create(&mut client, kind, Some(options), 41).await;
    join(&mut client, &game_id, 0).await;
    let killed = players - 1;
    let mut bots: Vec<_> = (1..players)
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
    wait_seq(&mut client, &game_id, 12).await;
    let mut victim = bots.pop().expect("the killed seat's bot");
    let _ = victim.kill();
    let _ = victim.wait();

    // The killed seat times out; the server is killed while the game runs (in The Gang the
    // random bots may finish first: there only the timeouts are checked).
    let timed_out_once = async {
        loop {
            let records = log(&mut client, &game_id).await;
            let killed_timed_out = timeouts(&records).iter().any(|t| t.seat == killed);
            if killed_timed_out
                || status(&mut client, &game_id).await.status != pb::GameStatus::Running as i32
            {
                return killed_timed_out;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let timed_out_once = tokio::time::timeout(Duration::from_secs(60), timed_out_once)
        .await
        .expect("the killed seat's clock never ran out");
    assert!(
        timed_out_once,
        "{kind}: the game ended before the killed seat timed out"
    );
    let running_at_restart =
        status(&mut client, &game_id).await.status == pb::GameStatus::Running as i32;
    server.restart();
    let mut client = server.client().await;
    wait_status(&mut client, &game_id, pb::GameStatus::Finished, 240).await;
    for mut bot in bots {
        wait_with_timeout(&mut bot, Duration::from_secs(30));
    }

    let records = log(&mut client, &game_id).await;
    let timed_out = timeouts(&records);
    if kind == "gang-of-four" {
        // The restart came mid-game and the game went on after it.
        assert!(running_at_restart, "{kind}: over before the restart");
    }
    let killed_timeouts = timed_out.iter().filter(|t| t.seat == killed).count();
    assert!(
        killed_timeouts >= 1,
        "{kind}: the killed seat never timed out"
    );
    let absent_seats: &[u32] = if kind == "gang-of-four" {
        &[0, killed]
    } else {
        &[0]
    };
    for &seat in absent_seats {
        let mine: Vec<_> = timed_out.iter().filter(|t| t.seat == seat).collect();
        assert!(
            mine.len() >= 2,
            "{kind}: seat {seat} should have timed out again and again, {} timeouts",
            mine.len()
        );
        assert!(
            mine.iter().any(|t| t.absent),
            "{kind}: after 2 timeouts in a row seat {seat} is absent"
        );
        assert!(mine
            .iter()
            .all(|t| t.action.is_some() && !t.decision.is_empty()));
    }
    for t in &timed_out {
        if !t.absent {
            assert!(t.used_ms >= 200, "{kind}: a timeout before turn_ms: {t:?}");
        }
    }
    let (code, out) = gangs_cli(&server, &["replay", &game_id, "--verify"]);
    assert_eq!(code, 0, "{kind}: replay --verify failed: {out}");
    let (code, out) = gangs_cli(&server, &["log", &game_id]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("timeout seat 0"),
        "{kind}: the log shows timeouts: {out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gang_of_four_finishes_with_a_silent_seat_and_a_killed_bot() {
    // 400 points: several deals, though the silent seat takes about 80 a deal.
    silent_and_killed_seats_do_not_stall("gang-of-four", 4, &[("target_score", "400")]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gang_finishes_with_a_silent_seat_and_a_killed_bot() {
    // No move cap: a chip phase closes only once every seat holds a chip and is ready, so the
    // killed seat's clock must run out.
    silent_and_killed_seats_do_not_stall("the-gang", 3, &[("max_moves_per_phase", "1000")]).await;
}

/// The host's downtime is not the players': a restarted server gives the seat to act the time
/// it had at the last durable record, counted from the restart plus a reconnect grace of
/// max(turn_ms, 10 s); watchers see that deadline, it fires then, and the log still verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_gives_the_seat_to_act_its_time_back_plus_a_grace() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let mut client = server.client().await;
    let pairs = vec![
        ("turn_ms".to_string(), "6000".to_string()),
        ("bank_ms".to_string(), "0".to_string()),
    ];
    let options = gangs_games::parse_options("gang-of-four", Some(3), &pairs).unwrap();
    let game_id = create(&mut client, "gang-of-four", Some(options), 9).await;
    for seat in 0..3 {
        join(&mut client, &game_id, seat).await;
    }
    let latest = |client: &mut Client| {
        let client = client.clone();
        let game_id = game_id.clone();
        async move { latest(client, &game_id).await.expect("watch") }
    };
    let before = latest(&mut client).await;
    assert_eq!(before.clocks.len(), 3, "every seat's clock is in the view");
    let (seat, deadline) = clock_of(&before).expect("the seat to act has a deadline");
    let started_at = records_time(&mut client, &game_id).await;
    assert!(
        (deadline - started_at - 6000).abs() <= 5,
        "the deadline is turn_ms after the decision opened"
    );

    // Down 3 s into the decision, for 4 s: past the logged deadline.
    tokio::time::sleep(Duration::from_secs(3)).await;
    server.kill9();
    let down_at = now_ms();
    std::thread::sleep(Duration::from_secs(4));
    server.restart();
    let mut client = server.client().await;
    let up_at = now_ms();
    let after = latest(&mut client).await;
    let (after_seat, after_deadline) = clock_of(&after).expect("a deadline after the restart");
    assert_eq!(after_seat, seat);
    // The last durable record is `started`: the seat had all of its 6 s then; grace 10 s.
    let left = deadline - started_at;
    assert!(
        after_deadline >= down_at + 4000 + 10_000 + left && after_deadline <= up_at + 10_000 + left,
        "the deadline is the time left plus the grace from the restart \
         ({after_deadline}, down at {down_at}, up at {up_at})"
    );

    wait_seq(&mut client, &game_id, before.seq + 1).await;
    let records = log(&mut client, &game_id).await;
    let fired = records
        .iter()
        .find(|r| matches!(r.record, Some(Record::TimedOut(_))))
        .expect("the seat timed out");
    assert!(fired.unix_ms >= after_deadline, "never before the deadline");
    assert!(
        fired.unix_ms < after_deadline + 2000,
        "fired at the moved deadline ({} vs {after_deadline})",
        fired.unix_ms
    );
}

/// The seat whose clock runs in `update`, and its deadline.
fn clock_of(update: &pb::Update) -> Option<(u32, i64)> {
    update
        .clocks
        .iter()
        .find_map(|c| c.deadline_unix_ms.map(|d| (c.seat, d)))
}

/// The spectator's latest update of `game_id` (the last one a watch from the start sends
/// before half a second of silence).
async fn latest(mut client: Client, game_id: &str) -> Result<pb::Update, tonic::Status> {
    let mut stream = client
        .watch(pb::WatchRequest {
            game_id: game_id.into(),
            token: String::new(),
            from_seq: 0,
            ..Default::default()
        })
        .await?
        .into_inner();
    let mut last = None;
    while let Ok(update) = tokio::time::timeout(Duration::from_millis(500), stream.message()).await
    {
        match update? {
            Some(update) => last = Some(update),
            None => break,
        }
    }
    last.ok_or_else(|| tonic::Status::unavailable("no update"))
}

/// Plays one action at random for the seat to act (asking each seat's view at the game's
/// last seq), through `client`.
async fn act_once(client: &mut Client, game_id: &str, tokens: &[String], rng: &mut impl rand::Rng) {
    let seq = log(client, game_id).await.last().expect("records").seq;
    for token in tokens {
        let mut stream = client
            .watch(pb::WatchRequest {
                game_id: game_id.into(),
                token: token.clone(),
                from_seq: seq - 1,
                ..Default::default()
            })
            .await
            .expect("watch a seat")
            .into_inner();
        // Each record is an update for every audience; a seat's silence is no decision of it.
        let update = tokio::time::timeout(Duration::from_secs(2), stream.message()).await;
        let Ok(update) = update else { continue };
        let update = update.expect("a seat's update").expect("an update");
        if act_at_random(client, game_id, token, &update, rng).await {
            return;
        }
    }
    panic!("no seat of game {game_id} may act at seq {seq}");
}

/// On a cluster, a game changing hands is the host's gap too: its node SIGKILLed mid-game,
/// the node that takes its shard over gives the seat to act the time it had at the last
/// durable record plus the reconnect grace of max(turn_ms, 10 s), counted from the takeover.
/// No seat times out for the handover, and the game finishes there, its log verifying.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_changing_hands_gives_the_seat_to_act_its_time_back_plus_a_grace() {
    use crate::e2e_nats_cluster::wait_for_health;
    use rand::SeedableRng;
    use tonic_health::pb::health_check_response::ServingStatus;

    let nats = tokio::task::spawn_blocking(common::nats::single)
        .await
        .unwrap();
    let store = common::nats::store_url(std::slice::from_ref(&nats));
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut a = Server::start_with(dirs[0].path(), 0, &["--store", &store]);
    let b = Server::start_with(dirs[1].path(), 0, &["--store", &store]);
    wait_for_health(&a, ServingStatus::Serving).await;
    wait_for_health(&b, ServingStatus::Serving).await;
    let mut on_a = a.client().await;
    let mut on_b = b.client().await;
    const TURN_MS: i64 = 3000;
    let pairs = vec![
        ("turn_ms".to_string(), TURN_MS.to_string()),
        ("bank_ms".to_string(), "0".to_string()),
        ("target_score".to_string(), "1".to_string()),
    ];
    let options = gangs_games::parse_options("gang-of-four", Some(4), &pairs).unwrap();
    // Created through A, which holds shards: the game is A's.
    let game_id = create(&mut on_a, "gang-of-four", Some(options), 17).await;
    let mut tokens = Vec::new();
    for seat in 0..4 {
        tokens.push(join(&mut on_a, &game_id, seat).await);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for _ in 0..6 {
        act_once(&mut on_a, &game_id, &tokens, &mut rng).await;
    }
    // Mid-game, a seat's decision open: read through B (forwarded to A).
    let before = latest(on_b.clone(), &game_id).await.expect("watch via B");
    assert_eq!(before.status, pb::GameStatus::Running as i32, "{before:?}");
    let (seat, deadline) = clock_of(&before).expect("the seat to act has a deadline");
    let records = log(&mut on_a, &game_id).await;
    let last_at = records.last().expect("records").unix_ms;
    let timed_out_before = timeouts(&records).len();
    let left = deadline - last_at;
    assert!(
        (left - TURN_MS).abs() <= 5,
        "the deadline is turn_ms after the last record ({left} ms)"
    );

    // A dies 1 s into the decision; B takes its shards once A's lease is over (5 s), past the
    // logged deadline.
    tokio::time::sleep(Duration::from_secs(1)).await;
    a.kill9();
    let down_at = now_ms();
    let started = std::time::Instant::now();
    let after = loop {
        if let Ok(update) = latest(on_b.clone(), &game_id).await {
            if clock_of(&update).is_some_and(|(_, d)| d != deadline) {
                break update;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "B did not take the game over"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let up_at = now_ms();
    let (after_seat, after_deadline) = clock_of(&after).expect("a deadline after the takeover");
    assert_eq!(after_seat, seat, "the same seat still to act");
    assert_eq!(
        after.seq, before.seq,
        "nothing happened meanwhile: {after:?}"
    );
    // Taken over at least 5 s after A died: the seat's 3 s left plus the 10 s grace from then.
    assert!(
        after_deadline >= down_at + 10_000 + left && after_deadline <= up_at + 10_000 + left,
        "the deadline is the time left plus the grace from the takeover \
         ({after_deadline}, down at {down_at}, up at {up_at}, {left} ms left)"
    );

    // The seats' bots resume through B (their tokens) and finish the game.
    let mut bots: Vec<Bot> = tokens
        .iter()
        .enumerate()
        .map(|(i, token)| {
            let mut command = std::process::Command::new(bin("gangs-bot-random"));
            command
                .args(["--server", &b.url(), "--game", &game_id, "--token", token])
                .args(["--seed", &i.to_string()])
                .env("RUST_LOG", "warn")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::inherit());
            Bot(command.spawn().expect("start a bot"))
        })
        .collect();
    wait_status(&mut on_b, &game_id, pb::GameStatus::Finished, 240).await;
    for bot in &mut bots {
        wait_with_timeout(bot, Duration::from_secs(30));
    }
    let records = log(&mut on_b, &game_id).await;
    assert_eq!(
        timeouts(&records).len(),
        timed_out_before,
        "a seat timed out for the handover: {:?}",
        timeouts(&records)
    );
    let (code, out) = gangs_cli(&b, &["replay", &game_id, "--verify"]);
    assert_eq!(code, 0, "replay --verify failed: {out}");
}

/// When the last record (the `started` one here) was written.
async fn records_time(client: &mut Client, game_id: &str) -> i64 {
    log(client, game_id).await.last().expect("records").unix_ms
}

/// `gangs arena` with a bot that takes its seat and crashes at once: the game finishes on
/// clocks, the report notes the crash and counts the crashed bot's timeouts.
#[test]
fn an_arena_with_a_crashing_bot_finishes_and_reports_its_timeouts() {
    let gangs = bin("gangs");
    // The arena appends `--server URL --game GAME --seat S --seed X`: $2, $4 and $6.
    let crasher = format!(
        "sh -c '\"{}\" --server \"$2\" join \"$4\" --seat \"$6\" >/dev/null; exit 3' crasher",
        gangs.display()
    );
    let output = std::process::Command::new(&gangs)
        .args([
            "arena",
            "--game",
            "gang-of-four",
            "--games",
            "1",
            "--turn-ms",
            "200",
            "--option",
            "target_score=20",
            "--seed",
            "5",
            "--json",
            "--bot",
            &crasher,
            "--bot",
            "gangs-bot-random",
        ])
        .env_remove("GANGS_SERVER")
        .env_remove("GANGS_API_KEY")
        .output()
        .expect("run gangs arena");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the arena must finish: {stdout}\n{stderr}"
    );
    let report: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\n{stderr}"));
    assert_eq!(report["games"], 1, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    let notes = report["notes"].as_array().expect("notes");
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("played default actions")),
        "the crash is noted: {report}"
    );
    let bots = report["bots"].as_array().unwrap();
    let crashed = bots
        .iter()
        .find(|b| b["name"].as_str().unwrap().contains("crasher"))
        .expect("the crashing bot's row");
    assert!(
        crashed["timeouts"].as_u64().unwrap() >= 3,
        "the crashed seat timed out: {report}"
    );
    let random = bots
        .iter()
        .find(|b| b["name"].as_str().unwrap() == "gangs-bot-random")
        .expect("the random bot's row");
    assert!(random["timeouts"].as_u64().is_some(), "{report}");
}
