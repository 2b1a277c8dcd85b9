//! How games end other than by their rules, end to end against the real server: CancelGame
//! (watchers told, logged, replay verifies), abandonment after --fill-timeout and
//! --idle-timeout (also across a restart), --retain-finished deleting old logs, and
//! ListGames' pages and filters.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use pb::log_record::Record;
use std::time::Duration;
use tonic::transport::Channel;
use tonic::Code;

async fn join_all(client: &mut GamesClient<Channel>, game: &str, seats: u32) -> Vec<String> {
    let mut tokens = Vec::new();
    for seat in 0..seats {
        let joined = client
            .join_game(pb::JoinGameRequest {
                game_id: game.into(),
                seat: Some(seat),
                ..Default::default()
            })
            .await
            .expect("join")
            .into_inner();
        tokens.push(joined.token);
    }
    tokens
}

/// Reads a stream to its end (within `limit`); returns every update.
async fn drain(mut stream: tonic::Streaming<pb::Update>, limit: Duration) -> Vec<pb::Update> {
    let mut updates = Vec::new();
    let read = async {
        while let Some(update) = stream.message().await.expect("stream") {
            updates.push(update);
        }
    };
    tokio::time::timeout(limit, read)
        .await
        .expect("the stream ended");
    updates
}

/// Polls the game's summary until its status is `want`.
async fn wait_status(
    client: &mut GamesClient<Channel>,
    game: &str,
    want: pb::GameStatus,
) -> pb::GameSummary {
    // 20 s: a fill timeout across a restart also waits out the reconnect grace (10 s).
    for _ in 0..400 {
        let summary = status(client, game).await;
        if summary.status == want as i32 {
            return summary;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("game {game} never became {want:?}");
}

fn ended(records: &[pb::LogRecord]) -> &pb::Ended {
    match &records.last().expect("records").record {
        Some(Record::Ended(e)) => e,
        other => panic!("the last record is not `ended`: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_game_tells_its_watchers_logs_why_and_still_replays() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let game = create(&mut client, "gang-of-four", None, 21).await;
    let tokens = join_all(&mut client, &game, 3).await;
    let watch = |token: &str| pb::WatchRequest {
        game_id: game.clone(),
        token: token.into(),
        from_seq: 0,
        ..Default::default()
    };
    let seat = client.watch(watch(&tokens[0])).await.unwrap().into_inner();
    let spectator = client.watch(watch("")).await.unwrap().into_inner();

    let cancelled = client
        .cancel_game(pb::CancelGameRequest {
            game_id: game.clone(),
            reason: "the tournament was called off".into(),
        })
        .await
        .expect("cancel")
        .into_inner();
    for stream in [seat, spectator] {
        let updates = drain(stream, Duration::from_secs(10)).await;
        let last = updates.last().expect("updates");
        assert_eq!(last.seq, cancelled.seq);
        assert_eq!(last.status, pb::GameStatus::Cancelled as i32);
        assert!(last.legal_actions.is_empty());
    }
    // Again: the same answer, nothing new.
    let again = client
        .cancel_game(pb::CancelGameRequest {
            game_id: game.clone(),
            reason: String::new(),
        })
        .await
        .expect("cancel again")
        .into_inner();
    assert_eq!(again, cancelled);

    let records = log(&mut client, &game).await;
    assert_eq!(records.len() as u64, cancelled.seq);
    let end = ended(&records);
    assert_eq!(end.reason(), pb::ended::Reason::Cancelled);
    assert_eq!(end.detail, "the tournament was called off");
    let summary = status(&mut client, &game).await;
    assert_eq!(summary.status, pb::GameStatus::Cancelled as i32);
    assert!(summary.finished_unix_ms.is_some());
    let joined = client
        .join_game(pb::JoinGameRequest {
            game_id: game.clone(),
            ..Default::default()
        })
        .await
        .expect_err("joining a cancelled game");
    assert_eq!(joined.code(), Code::FailedPrecondition);

    let (code, out) = gangs_cli(&server, &["replay", &game, "--verify"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("verified"), "{out}");
    let (code, out) = gangs_cli(&server, &["cancel", &game]);
    assert_eq!(code, 0, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfilled_game_keeps_its_fill_time_across_a_restart_plus_a_grace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let flags = ["--fill-timeout", "3s"];
    let mut server = Server::start_with(dir.path(), 0, &flags);
    let mut client = server.client().await;
    let game = create(&mut client, "gang-of-four", None, 3).await;
    client
        .join_game(pb::JoinGameRequest {
            game_id: game.clone(),
            ..Default::default()
        })
        .await
        .expect("join");
    let joined_at = log(&mut client, &game)
        .await
        .last()
        .expect("records")
        .unix_ms;
    // Down before the deadline, up again after it: the downtime is the host's, so the game
    // keeps the fill time it had left at its last record, plus a reconnect grace of 10 s.
    server.kill9();
    std::thread::sleep(Duration::from_millis(3300));
    let mut server = Server::start_with(dir.path(), 0, &flags);
    let mut client = server.client().await;
    let up_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64;
    assert_eq!(
        status(&mut client, &game).await.status,
        pb::GameStatus::Waiting as i32,
        "not abandoned for the time the server was down"
    );
    let summary = wait_status(&mut client, &game, pb::GameStatus::Abandoned).await;
    assert_eq!(summary.seats_taken, 1);
    let records = log(&mut client, &game).await;
    let created_at = records.first().expect("records").unix_ms;
    let left = 3000 - (joined_at - created_at);
    let end_at = records.last().expect("records").unix_ms;
    assert!(
        end_at >= joined_at + 3300 + 10_000 + left && end_at <= up_at + 10_000 + left + 2000,
        "abandoned after the time left plus the grace from the restart \
         (ended {end_at}, joined {joined_at}, up {up_at}, left {left})"
    );
    let end = ended(&records);
    assert_eq!(end.reason(), pb::ended::Reason::Abandoned);
    assert!(end.detail.contains("fill"), "{}", end.detail);
    let (code, out) = gangs_cli(&server, &["replay", &game, "--verify"]);
    assert_eq!(code, 0, "{out}");
    server.kill9();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_nobody_plays_is_abandoned_after_the_idle_timeout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_with(dir.path(), 0, &["--idle-timeout", "700ms"]);
    let mut client = server.client().await;
    let game = create(&mut client, "gang-of-four", None, 5).await;
    // Every seat taken (the fill timeout is over), then nobody acts.
    let tokens = join_all(&mut client, &game, 4).await;
    let stream = client
        .watch(pb::WatchRequest {
            game_id: game.clone(),
            token: tokens[1].clone(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let updates = drain(stream, Duration::from_secs(10)).await;
    assert_eq!(
        updates.last().unwrap().status,
        pb::GameStatus::Abandoned as i32
    );
    let records = log(&mut client, &game).await;
    assert!(ended(&records).detail.contains("idle"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_of_games_over_longer_than_the_retention_are_deleted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics_port = common::observe::free_port();
    let metrics = format!("127.0.0.1:{metrics_port}");
    let flags = ["--retain-finished", "1s", "--metrics", &metrics];
    let mut server = Server::start_with(dir.path(), 0, &flags);
    let checkpoints = "gangs_log_checkpoint_duration_seconds_count";
    assert_eq!(common::observe::read_metric(metrics_port, checkpoints), 0.0);
    let mut client = server.client().await;
    let old = create(&mut client, "gang-of-four", None, 1).await;
    let kept = create(&mut client, "gang-of-four", None, 2).await;
    client
        .cancel_game(pb::CancelGameRequest {
            game_id: old.clone(),
            reason: String::new(),
        })
        .await
        .expect("cancel");
    let mut gone = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let games = listed_games(&mut client).await;
        if games.iter().all(|g| g.game_id != old) {
            gone = true;
            break;
        }
    }
    assert!(
        gone,
        "the cancelled game is still listed after its retention"
    );
    let missing = client
        .get_log(pb::GetLogRequest {
            game_id: old.clone(),
            from_seq: 0,
        })
        .await
        .expect_err("its log is gone");
    assert_eq!(missing.code(), Code::NotFound);
    // The embedded store checkpoints before deleting (so that its journal, replayed after a
    // crash, cannot write the game back), and says so: once, after the game left the directory.
    common::observe::await_metric(metrics_port, checkpoints, 1.0, Duration::from_secs(10)).await;
    // Gone from the disk too, and the waiting game is kept.
    server.restart();
    let mut client = server.client().await;
    let games = client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .games;
    let ids: Vec<_> = games.iter().map(|g| g.game_id.clone()).collect();
    assert_eq!(ids, vec![kept]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_games_pages_and_filters() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let mut made = Vec::new();
    for seed in 0..5 {
        let kind = if seed % 2 == 0 {
            "gang-of-four"
        } else {
            "the-gang"
        };
        made.push(create(&mut client, kind, None, seed).await);
        // Distinct creation times, so the order is the order of creation.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    client
        .cancel_game(pb::CancelGameRequest {
            game_id: made[1].clone(),
            reason: String::new(),
        })
        .await
        .expect("cancel");

    // Pages of 2: every game once, oldest first.
    let mut seen = Vec::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let page = client
            .list_games(pb::ListGamesRequest {
                page_size: 2,
                page_token: token,
                ..Default::default()
            })
            .await
            .expect("page")
            .into_inner();
        assert!(page.games.len() <= 2);
        pages += 1;
        seen.extend(page.games.iter().map(|g| g.game_id.clone()));
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, made);

    let lister = client.clone();
    let list = |request: pb::ListGamesRequest| {
        let mut client = lister.clone();
        async move {
            client
                .list_games(request)
                .await
                .expect("list")
                .into_inner()
                .games
                .into_iter()
                .map(|g| g.game_id)
                .collect::<Vec<_>>()
        }
    };
    let the_gang = list(pb::ListGamesRequest {
        kind: "the-gang".into(),
        ..Default::default()
    })
    .await;
    assert_eq!(the_gang, vec![made[1].clone(), made[3].clone()]);
    let cancelled = list(pb::ListGamesRequest {
        status: pb::GameStatus::Cancelled as i32,
        ..Default::default()
    })
    .await;
    assert_eq!(cancelled, vec![made[1].clone()]);
    let third = status(&mut client, &made[2]).await.created_unix_ms;
    let since_third = list(pb::ListGamesRequest {
        created_after_unix_ms: Some(third),
        ..Default::default()
    })
    .await;
    assert_eq!(since_third, made[2..].to_vec());
    let before_third = list(pb::ListGamesRequest {
        created_before_unix_ms: Some(third),
        ..Default::default()
    })
    .await;
    assert_eq!(before_third, made[..2].to_vec());

    let bad = client
        .list_games(pb::ListGamesRequest {
            page_token: "not a token".into(),
            ..Default::default()
        })
        .await
        .expect_err("a made-up page token");
    assert_eq!(bad.code(), Code::InvalidArgument);

    // The CLI: filters, a limit, and the JSON keys.
    let (code, out) = gangs_cli(
        &server,
        &["--json", "games", "--status", "cancelled", "--limit", "10"],
    );
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    let games = json["games"].as_array().expect("games");
    assert_eq!(games.len(), 1);
    assert_eq!(games[0]["game_id"], made[1].as_str());
    assert!(games[0]["created_unix_ms"].as_i64().unwrap() > 0);
    assert!(games[0]["finished_unix_ms"].as_i64().unwrap() > 0);
    assert!(games[0].get("outcome").is_some());
}
