//! End to end: `WatchGames`, the directory's events. A game played to its end by bot processes
//! and a cancelled one give, in order, created, every seat taken, started, finished (with the
//! outcome), created, cancelled, each with a growing cursor; reading from "0" gives the same
//! events; after a SIGKILL and a restart, resuming from a cursor in the middle gives exactly the
//! rest (no gap, no duplicate) and then the next new event; the filters by kind and status;
//! bad requests get clear statuses; `gangs games --follow --json` prints the same events.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use std::io::BufRead;
use std::time::Duration;
use tonic::transport::Channel;

const WAIT: Duration = Duration::from_secs(120);

pub(crate) type Events = tonic::Streaming<pb::WatchGamesResponse>;

pub(crate) async fn watch_games(
    client: &mut GamesClient<Channel>,
    from_cursor: &str,
    kind: &str,
    statuses: &[pb::GameStatus],
) -> Events {
    client
        .watch_games(pb::WatchGamesRequest {
            from_cursor: from_cursor.to_string(),
            kind: kind.to_string(),
            statuses: statuses.iter().map(|s| *s as i32).collect(),
        })
        .await
        .expect("WatchGames")
        .into_inner()
}

pub(crate) async fn next(events: &mut Events) -> pb::WatchGamesResponse {
    tokio::time::timeout(WAIT, events.message())
        .await
        .expect("an event in time")
        .expect("the stream")
        .expect("not the end of the stream")
}

/// Reads events until `done` says the last one read completes what is awaited.
pub(crate) async fn read_until(
    events: &mut Events,
    done: impl Fn(&pb::WatchGamesResponse) -> bool,
) -> Vec<pb::WatchGamesResponse> {
    let mut read = Vec::new();
    loop {
        let event = next(events).await;
        let last = done(&event);
        read.push(event);
        if last {
            return read;
        }
    }
}

/// (cursor, event, game, seq): what must match between two reads of the same events.
pub(crate) fn keys(events: &[pb::WatchGamesResponse]) -> Vec<(String, i32, String, u64)> {
    events
        .iter()
        .map(|e| (e.cursor.clone(), e.event, e.game_id.clone(), e.seq))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_directory_streams_every_event_and_resumes_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(&dir.path().join("data"));
    let mut client = server.client().await;
    let mut live = watch_games(&mut client, "", "", &[]).await;

    let options = gangs_games::parse_options(
        "gang-of-four",
        Some(3),
        &[("target_score".to_string(), "30".to_string())],
    )
    .unwrap();
    let played = create(&mut client, "gang-of-four", Some(options), 5).await;
    let bots: Vec<Bot> = (0..3u32)
        .map(|seat| {
            spawn_bot(
                "gangs-bot-greedy",
                &server,
                &played,
                Some(seat),
                seat as u64,
            )
        })
        .collect();
    let mut seen = read_until(&mut live, |e| {
        e.game_id == played && e.event() == pb::DirectoryEvent::Finished
    })
    .await;
    drop(bots);
    let cancelled = create(&mut client, "the-gang", None, 6).await;
    client
        .cancel_game(pb::CancelGameRequest {
            game_id: cancelled.clone(),
            reason: "no players tonight".into(),
        })
        .await
        .expect("cancel");
    seen.extend(read_until(&mut live, |e| e.event() == pb::DirectoryEvent::Cancelled).await);

    // The played game's life, in order, then the cancelled one's.
    use pb::DirectoryEvent::*;
    let of = |game: &str| -> Vec<pb::DirectoryEvent> {
        seen.iter()
            .filter(|e| e.game_id == game)
            .map(|e| e.event())
            .collect()
    };
    assert_eq!(
        of(&played),
        [Created, SeatTaken, SeatTaken, SeatTaken, Started, Finished]
    );
    assert_eq!(of(&cancelled), [Created, Cancelled]);
    let cursors: Vec<u64> = seen.iter().map(|e| e.cursor.parse().unwrap()).collect();
    assert!(
        cursors.windows(2).all(|w| w[0] < w[1]),
        "cursors grow: {cursors:?}"
    );
    let mut seats: Vec<u32> = seen.iter().filter_map(|e| e.seat).collect();
    seats.sort();
    assert_eq!(seats, [0, 1, 2]);
    let finished = seen.iter().find(|e| e.event() == Finished).unwrap();
    let outcome = finished.outcome.as_ref().expect("the outcome");
    assert_eq!(outcome.seats.len(), 3);
    assert_eq!(
        finished.summary.as_ref().unwrap().status,
        pb::GameStatus::Finished as i32
    );
    let ended = seen.last().unwrap();
    assert_eq!(ended.reason, "no players tonight");
    assert_eq!(ended.summary.as_ref().unwrap().kind, "the-gang");
    // Each event points at its own log record.
    for event in &seen {
        let records = log(&mut client, &event.game_id).await;
        let record = &records[event.seq as usize - 1];
        assert_eq!(record.seq, event.seq);
        assert_eq!(record.unix_ms, event.unix_ms);
    }

    // From "0": the same events (the server kept them all).
    let mut all = watch_games(&mut client, "0", "", &[]).await;
    let mut again = Vec::new();
    for _ in 0..seen.len() {
        again.push(next(&mut all).await);
    }
    assert_eq!(keys(&again), keys(&seen));

    // Filters: the finished events only; the-gang's only.
    let mut over = watch_games(&mut client, "0", "", &[pb::GameStatus::Finished]).await;
    assert_eq!(next(&mut over).await.cursor, finished.cursor);
    let mut gang = watch_games(&mut client, "0", "the-gang", &[]).await;
    assert_eq!(next(&mut gang).await.game_id, cancelled);

    // SIGKILL, restart: resuming from the middle gives exactly the rest, then what is new.
    drop((live, all, over, gang));
    server.restart();
    let mut client = server.client().await;
    let middle = seen.len() / 2;
    let mut resumed = watch_games(&mut client, &seen[middle].cursor, "", &[]).await;
    let mut rest = Vec::new();
    for _ in middle + 1..seen.len() {
        rest.push(next(&mut resumed).await);
    }
    assert_eq!(keys(&rest), keys(&seen[middle + 1..]));
    let newer = create(&mut client, "gang-of-four", None, 7).await;
    let first_new = next(&mut resumed).await;
    assert_eq!(
        (first_new.game_id.as_str(), first_new.event()),
        (newer.as_str(), Created),
        "no duplicate, nothing in between"
    );
    assert!(first_new.cursor.parse::<u64>().unwrap() > cursors[cursors.len() - 1]);

    // Bad requests: clear statuses.
    let refused = |from: &str, statuses: Vec<i32>, kind: &str| pb::WatchGamesRequest {
        from_cursor: from.to_string(),
        kind: kind.to_string(),
        statuses,
    };
    for (request, code) in [
        (refused("abc", vec![], ""), tonic::Code::InvalidArgument),
        (refused("99999999", vec![], ""), tonic::Code::OutOfRange),
        (refused("", vec![42], ""), tonic::Code::InvalidArgument),
        (refused("", vec![], "chess"), tonic::Code::InvalidArgument),
    ] {
        let status = client.watch_games(request.clone()).await.unwrap_err();
        assert_eq!(status.code(), code, "{request:?}: {status:?}");
        assert!(status.message().len() < 300);
    }

    // The CLI prints the same events, one JSON object per line.
    let mut follow = std::process::Command::new(bin("gangs"))
        .args(["--server", &server.url(), "games", "--follow", "--json"])
        .args(["--from-cursor", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("gangs games --follow");
    let stdout = follow.stdout.take().unwrap();
    let want = seen.len() + 1;
    let lines = tokio::task::spawn_blocking(move || {
        std::io::BufReader::new(stdout)
            .lines()
            .take(want)
            .map(|l| l.expect("a line"))
            .collect::<Vec<_>>()
    });
    let lines = tokio::time::timeout(WAIT, lines)
        .await
        .expect("the CLI's lines in time")
        .unwrap();
    let _ = follow.kill();
    let _ = follow.wait();
    let printed: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    for (line, event) in printed.iter().zip(seen.iter().chain([&first_new])) {
        assert_eq!(line["cursor"], event.cursor.as_str(), "{line}");
        assert_eq!(line["game_id"], event.game_id.as_str(), "{line}");
    }
    assert_eq!(printed[0]["event"], "DIRECTORY_EVENT_CREATED");
    assert_eq!(printed[0]["summary"]["kind"], "gang-of-four");
}
