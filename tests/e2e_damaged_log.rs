//! End to end: a game whose log does not replay does not stop the server. Games are played,
//! the server is stopped, three logs are damaged through the sled store itself (a record the
//! engine refuses, a record that does not decode, a legal action logged with another action's
//! events), and the server restarts: the other games
//! play on; the damaged ones are listed with their reason (gRPC and `gangs games`), their log
//! reads (GetLog, redacted as a running game's) where it can, and every call to play them
//! answers FAILED_PRECONDITION naming the game and the reason.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use pb::log_record::Record;
use prost::Message;
use std::path::Path;
use tonic::transport::Channel;
use tonic::Code;

/// Joins every seat of a new Gang of Four game; answers its id and the seat tokens.
async fn started_game(client: &mut GamesClient<Channel>, seed: u64) -> (String, Vec<String>) {
    let game_id = create(client, "gang-of-four", None, seed).await;
    let mut tokens = Vec::new();
    for seat in 0..4 {
        let joined = client
            .join_game(pb::JoinGameRequest {
                game_id: game_id.clone(),
                seat: Some(seat),
                name: format!("p{seat}"),
                ..Default::default()
            })
            .await
            .expect("join")
            .into_inner();
        tokens.push(joined.token);
    }
    (game_id, tokens)
}

/// Plays one legal action: the first seat whose newest update lists one plays its first.
/// Answers the seq of the record it made.
async fn play_one(client: &mut GamesClient<Channel>, game_id: &str, tokens: &[String]) -> u64 {
    let last_seq = status(client, game_id).await.last_seq;
    for token in tokens {
        let mut stream = client
            .watch(pb::WatchRequest {
                game_id: game_id.into(),
                token: token.clone(),
                from_seq: last_seq - 1,
                ..Default::default()
            })
            .await
            .expect("watch")
            .into_inner();
        let update = stream.message().await.expect("update").expect("an update");
        if let Some(action) = update.legal_actions.first() {
            return client
                .act(pb::ActRequest {
                    game_id: game_id.into(),
                    token: token.clone(),
                    action: Some(action.clone()),
                    ..Default::default()
                })
                .await
                .expect("a legal action is accepted")
                .into_inner()
                .seq;
        }
    }
    panic!("no seat of {game_id} may act at seq {last_seq}");
}

/// Writes a raw value as record `seq` of `game_id` in the stopped server's sled log (a value
/// of one record: the store still reads that format beside its chunks of records).
fn append_raw(data_dir: &Path, game_id: &str, seq: u64, value: Vec<u8>) {
    let db = sled::open(data_dir).expect("open the stopped server's data dir");
    let tree = db.open_tree("log").expect("the log tree");
    let mut key = game_id.as_bytes().to_vec();
    key.extend_from_slice(&seq.to_be_bytes());
    tree.insert(key, value).expect("insert");
    db.flush().expect("flush");
}

const FORGED_SEED: u64 = 5;

/// The first action of the game dealt by `FORGED_SEED` (the server's defaults), logged with the
/// events of another of that seat's legal actions.
fn forged_first_action() -> pb::Acted {
    let replica = || {
        let mut game = gangs_games::new_game("gang-of-four", None, FORGED_SEED, None).unwrap();
        game.start();
        game
    };
    let mut game = replica();
    let seat = (0..game.players())
        .find(|&s| game.legal_actions(s).len() >= 2)
        .expect("a seat with two legal actions");
    let legal = game.legal_actions(seat);
    let other_events = replica().act(seat, &legal[1]).unwrap();
    assert_ne!(game.act(seat, &legal[0]).unwrap(), other_events);
    pb::Acted {
        seat: seat as u32,
        action: Some(legal[0].clone()),
        action_id: String::new(),
        events: other_events,
    }
}

fn assert_damaged<T: std::fmt::Debug>(result: Result<T, tonic::Status>, game_id: &str, why: &str) {
    let status = result.expect_err("a damaged game is not playable");
    assert_eq!(
        status.code(),
        Code::FailedPrecondition,
        "{}",
        status.message()
    );
    assert!(
        status.message().contains(game_id) && status.message().contains("damaged"),
        "the message names the game: {:?}",
        status.message()
    );
    assert!(
        status.message().contains(why),
        "the message gives the reason ({why:?}): {:?}",
        status.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_that_does_not_replay_damages_its_game_only() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let stderr_log = dir.path().join("server.log");
    let mut server = Server::start_logged(&data, &[], &stderr_log);
    let mut client = server.client().await;

    let (refused, refused_tokens) = started_game(&mut client, 1).await;
    let (healthy, healthy_tokens) = started_game(&mut client, 2).await;
    let (undecodable, _) = started_game(&mut client, 3).await;
    let (forged, _) = started_game(&mut client, FORGED_SEED).await;
    for _ in 0..3 {
        play_one(&mut client, &refused, &refused_tokens).await;
        play_one(&mut client, &healthy, &healthy_tokens).await;
    }
    let refused_seq = status(&mut client, &refused).await.last_seq;
    let undecodable_seq = status(&mut client, &undecodable).await.last_seq;
    let forged_seq = status(&mut client, &forged).await.last_seq;
    let healthy_before = log(&mut client, &healthy).await;
    drop(client);
    // Stopped cleanly: its journal is then in sled's own files, which the test edits (after a
    // SIGKILL the last batches are in the journal alone, and the next start writes them back).
    server.terminate();

    // A record the engine refuses (seat 9 of 4, no action), and one that does not decode.
    let bad = pb::LogRecord {
        seq: refused_seq + 1,
        unix_ms: 1,
        record: Some(Record::Acted(pb::Acted {
            seat: 9,
            ..Default::default()
        })),
    };
    append_raw(&data, &refused, refused_seq + 1, bad.encode_to_vec());
    append_raw(&data, &undecodable, undecodable_seq + 1, vec![0xff; 7]);
    // A legal first action logged with the events of another legal action (the replay checks
    // a restart's events as their stored bytes: these differ, and decode to other events).
    let forged_record = pb::LogRecord {
        seq: forged_seq + 1,
        unix_ms: 1,
        record: Some(Record::Acted(forged_first_action())),
    };
    append_raw(
        &data,
        &forged,
        forged_seq + 1,
        forged_record.encode_to_vec(),
    );

    server.restart();
    let mut client = server.client().await;

    // The healthy game is untouched and plays on.
    assert_eq!(log(&mut client, &healthy).await, healthy_before);
    let seq = play_one(&mut client, &healthy, &healthy_tokens).await;
    assert_eq!(seq, healthy_before.len() as u64 + 1);
    // New games are created and played.
    let (fresh, fresh_tokens) = started_game(&mut client, 4).await;
    play_one(&mut client, &fresh, &fresh_tokens).await;

    // Both damaged games are listed with their reason, as far as their records tell.
    let listed = status(&mut client, &refused).await;
    assert!(listed.damaged, "{listed:?}");
    assert!(!listed.damage_reason.is_empty());
    assert_eq!(listed.kind, "gang-of-four");
    assert_eq!(listed.players, 4);
    assert_eq!(listed.seats_taken, 4);
    assert_eq!(listed.names, ["p0", "p1", "p2", "p3"]);
    assert_eq!(listed.last_seq, refused_seq + 1);
    assert_eq!(listed.status, pb::GameStatus::Unspecified as i32);
    let listed_undecodable = status(&mut client, &undecodable).await;
    assert!(listed_undecodable.damaged);
    assert!(
        listed_undecodable.damage_reason.contains("undecodable"),
        "{listed_undecodable:?}"
    );
    assert!(!status(&mut client, &healthy).await.damaged);
    let listed_forged = status(&mut client, &forged).await;
    assert!(listed_forged.damaged, "{listed_forged:?}");
    assert!(
        listed_forged.damage_reason.contains("differs"),
        "{listed_forged:?}"
    );
    assert_damaged(
        client
            .act(pb::ActRequest {
                game_id: forged.clone(),
                token: String::new(),
                ..Default::default()
            })
            .await,
        &forged,
        "differs",
    );

    // One clear log line per damaged game, with its id and reason.
    let logged = server.stderr_text();
    for (game, reason) in [
        (&refused, &listed.damage_reason),
        (&undecodable, &listed_undecodable.damage_reason),
    ] {
        let line = logged
            .lines()
            .find(|l| l.contains(game.as_str()) && l.contains("damaged"))
            .unwrap_or_else(|| panic!("no log line for {game} in {logged}"));
        let reason_start: String = reason.chars().take(20).collect();
        assert!(line.contains(&reason_start), "{line}");
    }

    // The refused log reads whole, redacted as a running game's: no seed, no tokens.
    let records = log(&mut client, &refused).await;
    assert_eq!(records.len() as u64, refused_seq + 1);
    assert_eq!(records.last().unwrap().seq, refused_seq + 1);
    for record in &records {
        match &record.record {
            Some(Record::Created(created)) => assert_eq!(created.seed, None),
            Some(Record::Joined(joined)) => assert!(joined.token.is_empty()),
            _ => {}
        }
    }
    // The undecodable one cannot be shown: a clear refusal.
    let unreadable = client
        .get_log(pb::GetLogRequest {
            game_id: undecodable.clone(),
            from_seq: 0,
        })
        .await;
    assert_damaged(unreadable, &undecodable, "undecodable");

    // Not playable: join, act, watch and cancel are refused, naming the game and the reason.
    let why: String = listed.damage_reason.chars().take(20).collect();
    assert_damaged(
        client
            .join_game(pb::JoinGameRequest {
                game_id: refused.clone(),
                name: "late".into(),
                ..Default::default()
            })
            .await,
        &refused,
        &why,
    );
    assert_damaged(
        client
            .act(pb::ActRequest {
                game_id: refused.clone(),
                token: refused_tokens[0].clone(),
                action: Some(pb::GameAction::default()),
                ..Default::default()
            })
            .await,
        &refused,
        &why,
    );
    assert_damaged(
        client
            .watch(pb::WatchRequest {
                game_id: refused.clone(),
                token: refused_tokens[0].clone(),
                from_seq: 0,
                ..Default::default()
            })
            .await,
        &refused,
        &why,
    );
    assert_damaged(
        client
            .cancel_game(pb::CancelGameRequest {
                game_id: refused.clone(),
                reason: String::new(),
            })
            .await,
        &refused,
        &why,
    );
    // Nothing was written to it.
    assert_eq!(log(&mut client, &refused).await, records);

    // `gangs games` shows it, in text and JSON.
    let (code, text) = gangs_cli(&server, &["games"]);
    assert_eq!(code, 0, "{text}");
    let line = text
        .lines()
        .find(|l| l.contains(refused.as_str()))
        .unwrap_or_else(|| panic!("{refused} not listed: {text}"));
    assert!(line.contains("damaged") && line.contains(&why), "{line}");
    let (code, out) = gangs_cli(&server, &["--json", "games"]);
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    let games = json["games"].as_array().expect("games");
    let game = games
        .iter()
        .find(|g| g["game_id"] == refused.as_str())
        .expect("listed in JSON");
    assert_eq!(game["damaged"], true);
    assert_eq!(game["damage_reason"], listed.damage_reason.as_str());
    let game = games
        .iter()
        .find(|g| g["game_id"] == healthy.as_str())
        .expect("listed in JSON");
    assert_eq!(game["damaged"], false);

    // Still so after another restart (the log is read again, the game stays out of play).
    server.restart();
    let mut client = server.client().await;
    assert!(status(&mut client, &refused).await.damaged);
    play_one(&mut client, &healthy, &healthy_tokens).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_store_still_stops_the_start() {
    // A data dir that is a file: the store cannot be opened at all. That is no one game's
    // fault: the server refuses to start, with a clear error.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::write(&data, b"not a directory").unwrap();
    let output = std::process::Command::new(bin("gangs-server"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .output()
        .expect("run gangs-server");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("data dir"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
