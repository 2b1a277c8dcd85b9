//! End-to-end tests of game files: `gangs export` → `gangs replay --file --verify` with no
//! server → `gangs import` on a second server (new id, marked imported, verified there);
//! tampered files are refused and store nothing; `gangs replay --at` gives exactly the update a
//! seat and a spectator received live (checked against recorded Watch streams); summaries add
//! up to the final scores. Both games.

use crate::common;

use common::{bin, create, gangs_cli, log, spawn_bot, wait_with_timeout, Server};
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use tonic::transport::Channel;

fn options(kind: &str, players: u32) -> pb::GameOptions {
    let pairs: Vec<(String, String)> = if kind == "gang-of-four" {
        vec![("target_score".into(), "20".into())]
    } else {
        Vec::new()
    };
    gangs_games::parse_options(kind, Some(players), &pairs).unwrap()
}

/// A finished game of `kind` on `server`, played by random bots; returns its id.
async fn play_with_bots(server: &Server, kind: &str, players: u32, seed: u64) -> String {
    let mut client = server.client().await;
    let game = create(&mut client, kind, Some(options(kind, players)), seed).await;
    let mut bots: Vec<_> = (0..players)
        .map(|seat| {
            spawn_bot(
                "gangs-bot-random",
                server,
                &game,
                Some(seat),
                seed + seat as u64,
            )
        })
        .collect();
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(120)).success());
    }
    game
}

fn games(client_json: &str) -> Vec<Value> {
    client_json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `ImportGame` straight over gRPC: `header` and all `records` in one message.
async fn import_raw(
    client: &mut GamesClient<Channel>,
    header: &str,
    records: Vec<pb::LogRecord>,
) -> Result<pb::ImportGameResponse, tonic::Status> {
    let part = pb::ImportGameRequest {
        header: header.to_string(),
        records,
    };
    import_parts(client, vec![part]).await
}

async fn import_parts(
    client: &mut GamesClient<Channel>,
    parts: Vec<pb::ImportGameRequest>,
) -> Result<pb::ImportGameResponse, tonic::Status> {
    client
        .import_game(keyed(tokio_stream::iter(parts)))
        .await
        .map(|r| r.into_inner())
}

/// `message` with server b's key: with --api-key every call needs one.
fn keyed<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", "Bearer k3y".parse().unwrap());
    request
}

async fn list(client: &mut GamesClient<Channel>) -> Vec<pb::GameSummary> {
    client
        .list_games(keyed(pb::ListGamesRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .games
}

/// `gangs ARGS` with no server anywhere (a closed port): proves the command needs none.
fn gangs_offline(args: &[&str]) -> (i32, String) {
    let output = Command::new(bin("gangs"))
        .args(["--server", "http://127.0.0.1:9"])
        .args(args)
        .output()
        .expect("run gangs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write_lines(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

async fn export_import_verify(kind: &str, players: u32, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let a = Server::start(&dir.path().join("a"));
    // The second server needs its API key for imports, as for CreateGame.
    let b = Server::start_with(&dir.path().join("b"), 0, &["--api-key", "k3y"]);
    let game = play_with_bots(&a, kind, players, seed).await;
    let file = dir.path().join("game.jsonl");
    let file_arg = file.to_str().unwrap();

    let (code, out) = gangs_cli(&a, &["export", &game, "-o", file_arg]);
    assert_eq!(code, 0, "{out}");
    let lines = read_lines(&file);
    let header = &lines[0];
    assert_eq!(header["format"], "gangs-game");
    assert_eq!(header["kind"], kind);
    assert_eq!(header["game_id"], game.as_str());
    assert_eq!(header["status"], "GAME_STATUS_FINISHED");
    assert_eq!(header["seats"].as_array().unwrap().len(), players as usize);
    assert_eq!(
        header["records"].as_u64().unwrap() as usize,
        lines.len() - 1
    );

    // Verified with no server at all.
    let (code, out) = gangs_offline(&["replay", "--file", file_arg, "--verify", "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(games(&out)[0]["verified"], true, "{out}");

    // Summaries add up to the final scores.
    let (code, out) = gangs_offline(&["replay", "--file", file_arg, "--summary", "--json"]);
    assert_eq!(code, 0, "{out}");
    let rows = games(&out);
    assert!(!rows.is_empty(), "{out}");
    let outcome = &header["outcome"]["seats"];
    for seat_outcome in outcome.as_array().unwrap() {
        let seat = seat_outcome["seat"].as_u64().unwrap() as usize;
        let score: i64 = seat_outcome["score"].as_str().unwrap().parse().unwrap();
        let from_rows: i64 = if kind == "gang-of-four" {
            rows.iter()
                .map(|r| r["seats"][seat]["penalty"].as_i64().unwrap())
                .sum()
        } else {
            rows.iter().filter(|r| r["success"] == true).count() as i64
        };
        assert_eq!(from_rows, score, "seat {seat}: {out}");
    }
    let (code, csv) = gangs_offline(&["replay", "--file", file_arg, "--summary", "--csv"]);
    assert_eq!(code, 0, "{csv}");
    assert_eq!(csv.lines().count(), rows.len() + 1, "{csv}");

    // Imported on a second server: a new id, listed as imported and finished, verified there.
    let (code, out) = gangs_cli(&b, &["import", file_arg]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("requires a key to import games"), "{out}");
    let (code, out) = gangs_cli(&b, &["import", file_arg, "--api-key", "k3y", "--json"]);
    assert_eq!(code, 0, "{out}");
    let imported = games(&out)[0]["game_id"].as_str().unwrap().to_string();
    assert_ne!(imported, game);
    let mut client_b = b.client().await;
    let listed = list(&mut client_b).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].game_id, imported);
    assert!(listed[0].imported);
    assert_eq!(listed[0].status, pb::GameStatus::Finished as i32);
    let (code, out) = gangs_cli(&b, &["replay", &imported, "--verify", "--api-key", "k3y"]);
    assert_eq!(code, 0, "{out}");
    // The same records, on both servers.
    let mut client_a = a.client().await;
    let mut records_b = client_b
        .get_log(keyed(pb::GetLogRequest {
            game_id: imported.clone(),
            from_seq: 0,
        }))
        .await
        .unwrap()
        .into_inner();
    let mut imported_log = Vec::new();
    while let Some(record) = records_b.message().await.unwrap() {
        imported_log.push(record);
    }
    assert_eq!(log(&mut client_a, &game).await, imported_log);
    // It can be watched: the spectator's stream ends with the outcome.
    let (code, out) = gangs_cli(&b, &["watch", &imported, "--json", "--api-key", "k3y"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(games(&out).last().unwrap()["status"], "finished", "{out}");
    // Still imported after a restart (the mark comes from the log).
    let mut b = b;
    b.restart();
    let mut client_b = b.client().await;
    assert!(list(&mut client_b).await[0].imported);

    // Tampered: one logged event changed. Refused, nothing stored.
    let mut tampered = lines.clone();
    let target = tampered
        .iter_mut()
        .skip(1)
        .find(|r| r["acted"].is_object() && !r["acted"]["events"].as_array().unwrap().is_empty())
        .unwrap();
    let event = &mut target["acted"]["events"][0];
    let game_key = if kind == "gang-of-four" {
        "gang_of_four"
    } else {
        "the_gang"
    };
    let inner = event[game_key].as_object_mut().unwrap();
    let (_, body) = inner.iter_mut().next().unwrap();
    let body = body.as_object_mut().unwrap();
    let seat_key = ["seat", "from_seat", "proposer"]
        .into_iter()
        .find(|k| body.contains_key(*k))
        .unwrap_or_else(|| panic!("no seat in {body:?}"));
    let seat = body[seat_key].as_u64().unwrap();
    body[seat_key] = Value::from((seat + 1) % players as u64);
    let bad = dir.path().join("tampered.jsonl");
    write_lines(&bad, &tampered);
    let bad_arg = bad.to_str().unwrap();
    let (code, out) = gangs_offline(&["replay", "--file", bad_arg, "--verify"]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("does not replay"), "{out}");
    let (code, out) = gangs_cli(&b, &["import", bad_arg, "--api-key", "k3y"]);
    assert_ne!(code, 0, "{out}");
    assert_eq!(list(&mut client_b).await.len(), 1, "nothing stored");

    // The server checks by itself: the tampered records sent straight over gRPC, with the
    // file's header, then with none.
    let records: Vec<pb::LogRecord> = tampered[1..]
        .iter()
        .map(|r| gangs_proto::json::from_json(r.clone(), "gangs.v1.LogRecord").unwrap())
        .collect();
    for header in [tampered[0].to_string(), String::new()] {
        let status = import_raw(&mut client_b, &header, records.clone())
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains("do not replay"), "{status:?}");
    }
    // A log cut before the game ends is refused too.
    let mut unfinished = log(&mut client_a, &game).await;
    unfinished.truncate(unfinished.len() - 1);
    let status = import_raw(&mut client_b, "", unfinished).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(
        status.message().contains("before the game does"),
        "{status:?}"
    );
    // A header that lies about the records (another seed).
    let mut lying = lines[0].clone();
    lying["seed"] = Value::from("12345");
    let status = import_raw(
        &mut client_b,
        &lying.to_string(),
        log(&mut client_a, &game).await,
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("seed"), "{status:?}");
    // Past the record limit: RESOURCE_EXHAUSTED naming it, before anything is replayed.
    let parts: Vec<pb::ImportGameRequest> = (0..101u64)
        .map(|part| pb::ImportGameRequest {
            header: String::new(),
            records: (1..=1000u64)
                .map(|i| pb::LogRecord {
                    seq: part * 1000 + i,
                    ..Default::default()
                })
                .collect(),
        })
        .collect();
    let status = import_parts(&mut client_b, parts).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("100000 records"), "{status:?}");
    assert_eq!(list(&mut client_b).await.len(), 1, "nothing stored");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gang_of_four_export_import_verify_and_tampering() {
    export_import_verify("gang-of-four", 3, 7).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gang_export_import_verify_and_tampering() {
    export_import_verify("the-gang", 4, 8).await;
}

/// Seat 0 is played by the test itself (random legal actions) while its Watch stream and a
/// spectator's are recorded live; bots play the other seats. Then `gangs replay --at SEQ` must
/// print exactly what each stream received at SEQ.
async fn at_matches_the_recorded_watch(kind: &str, players: u32, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let game = create(&mut client, kind, Some(options(kind, players)), seed).await;
    let joined = client
        .join_game(pb::JoinGameRequest {
            game_id: game.clone(),
            seat: Some(0),
            name: "test".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut spectator_stream = client
        .watch(pb::WatchRequest {
            game_id: game.clone(),
            token: String::new(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut seat_stream = client
        .watch(pb::WatchRequest {
            game_id: game.clone(),
            token: joined.token.clone(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let spectator = tokio::spawn(async move {
        let mut updates = Vec::new();
        while let Some(update) = spectator_stream.message().await.unwrap() {
            updates.push(update);
        }
        updates
    });
    let mut bots: Vec<_> = (1..players)
        .map(|seat| {
            spawn_bot(
                "gangs-bot-random",
                &server,
                &game,
                Some(seat),
                seed + seat as u64,
            )
        })
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut seat_updates = Vec::new();
    while let Some(update) = seat_stream.message().await.unwrap() {
        if !update.legal_actions.is_empty() {
            let action =
                update.legal_actions[rng.random_range(0..update.legal_actions.len())].clone();
            // ABORTED (the game moved on) or a closed phase: the next update brings new actions.
            let _ = client
                .act(pb::ActRequest {
                    game_id: game.clone(),
                    token: joined.token.clone(),
                    action: Some(action),
                    expected_seq: Some(update.seq),
                    action_id: format!("a{}", update.seq),
                })
                .await;
        }
        seat_updates.push(update);
    }
    let spectator_updates = spectator.await.unwrap();
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(120)).success());
    }
    assert_eq!(seat_updates.len(), spectator_updates.len());
    let last = seat_updates.len();
    // A spread of seqs: the joins, the start, the middle, the end.
    let mut seqs: Vec<usize> = (1..=8).map(|i| i * last / 8).collect();
    seqs.extend([1, players as usize + 2]);
    seqs.sort_unstable();
    seqs.dedup();
    let view_json = |u: &pb::Update| {
        u.view
            .as_ref()
            .map(|v| gangs_proto::json::to_json(v, "gangs.v1.GameView"))
            .unwrap_or(Value::Null)
    };
    for seq in seqs {
        for (who, updates) in [
            ("--seat", &seat_updates),
            ("--spectator", &spectator_updates),
        ] {
            let live = &updates[seq - 1];
            assert_eq!(live.seq as usize, seq);
            let mut args = vec!["replay", &game, "--at"];
            let seq_text = seq.to_string();
            args.push(&seq_text);
            args.push(who);
            if who == "--seat" {
                args.push("0");
            }
            args.push("--json");
            let (code, out) = gangs_cli(&server, &args);
            assert_eq!(code, 0, "{out}");
            let replayed: Value = serde_json::from_str(out.trim()).unwrap();
            assert_eq!(replayed["seq"], seq, "{out}");
            assert_eq!(replayed["view"], view_json(live), "{who} at seq {seq}");
            let words = |u: &pb::Update| -> (Vec<String>, Vec<String>) {
                (
                    u.events.iter().map(gangs_games::describe_event).collect(),
                    u.legal_actions
                        .iter()
                        .map(gangs_games::describe_action)
                        .collect(),
                )
            };
            let (events, actions) = words(live);
            assert_eq!(
                replayed["events"],
                serde_json::json!(events),
                "{who} at {seq}"
            );
            assert_eq!(
                replayed["legal_actions"],
                serde_json::json!(actions),
                "{who} at {seq}"
            );
            assert_eq!(replayed["seats_taken"], live.seats_taken, "{who} at {seq}");
        }
    }
    // Omniscient: every seat's own view, seat 0's being the one it received.
    let mid = (last / 2).to_string();
    let (code, out) = gangs_cli(&server, &["replay", &game, "--at", &mid, "--json"]);
    assert_eq!(code, 0, "{out}");
    let all: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        all["seat_views"].as_array().unwrap().len(),
        players as usize
    );
    assert_eq!(all["seat_views"][0], view_json(&seat_updates[last / 2 - 1]));
    assert_eq!(all["view"], view_json(&spectator_updates[last / 2 - 1]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gang_of_four_at_matches_the_recorded_watch() {
    at_matches_the_recorded_watch("gang-of-four", 4, 17).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gang_at_matches_the_recorded_watch() {
    at_matches_the_recorded_watch("the-gang", 3, 18).await;
}

/// A `Games` server that serves one game's log, with the troubles of a cluster whose game
/// changes hands: its first GetLog calls answer UNAVAILABLE, the next breaks off halfway with
/// UNAVAILABLE, and only then is the rest served. It notes the `from_seq` of every call.
#[derive(Clone)]
struct HandOverServer {
    records: std::sync::Arc<Vec<pb::LogRecord>>,
    asked_from: std::sync::Arc<std::sync::Mutex<Vec<u64>>>,
}

type Stream<T> =
    std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<T, tonic::Status>> + Send>>;

fn not_here<T>() -> Result<tonic::Response<T>, tonic::Status> {
    Err(tonic::Status::unimplemented(
        "this test server serves GetLog only",
    ))
}

#[tonic::async_trait]
impl pb::games_server::Games for HandOverServer {
    async fn create_game(
        &self,
        _: tonic::Request<pb::CreateGameRequest>,
    ) -> Result<tonic::Response<pb::CreateGameResponse>, tonic::Status> {
        not_here()
    }
    async fn join_game(
        &self,
        _: tonic::Request<pb::JoinGameRequest>,
    ) -> Result<tonic::Response<pb::JoinGameResponse>, tonic::Status> {
        not_here()
    }
    type WatchStream = Stream<pb::Update>;
    async fn watch(
        &self,
        _: tonic::Request<pb::WatchRequest>,
    ) -> Result<tonic::Response<Self::WatchStream>, tonic::Status> {
        not_here()
    }
    async fn act(
        &self,
        _: tonic::Request<pb::ActRequest>,
    ) -> Result<tonic::Response<pb::ActResponse>, tonic::Status> {
        not_here()
    }
    type GetLogStream = Stream<pb::LogRecord>;
    async fn get_log(
        &self,
        request: tonic::Request<pb::GetLogRequest>,
    ) -> Result<tonic::Response<Self::GetLogStream>, tonic::Status> {
        let from = request.into_inner().from_seq;
        let calls = {
            let mut asked = self.asked_from.lock().unwrap();
            asked.push(from);
            asked.len()
        };
        let changing_hands =
            || tonic::Status::unavailable("game g is changing hands between nodes: retry");
        if calls <= 2 {
            return Err(changing_hands());
        }
        let rest: Vec<_> = self
            .records
            .iter()
            .filter(|r| r.seq > from)
            .cloned()
            .collect();
        let items: Vec<Result<pb::LogRecord, tonic::Status>> = if calls == 3 {
            let half = rest.len() / 2;
            rest.into_iter()
                .take(half)
                .map(Ok)
                .chain(std::iter::once(Err(changing_hands())))
                .collect()
        } else {
            rest.into_iter().map(Ok).collect()
        };
        Ok(tonic::Response::new(Box::pin(tokio_stream::iter(items))))
    }
    async fn list_games(
        &self,
        _: tonic::Request<pb::ListGamesRequest>,
    ) -> Result<tonic::Response<pb::ListGamesResponse>, tonic::Status> {
        not_here()
    }
    async fn import_game(
        &self,
        _: tonic::Request<tonic::Streaming<pb::ImportGameRequest>>,
    ) -> Result<tonic::Response<pb::ImportGameResponse>, tonic::Status> {
        not_here()
    }
    async fn cancel_game(
        &self,
        _: tonic::Request<pb::CancelGameRequest>,
    ) -> Result<tonic::Response<pb::CancelGameResponse>, tonic::Status> {
        not_here()
    }
    type WatchGamesStream = Stream<pb::WatchGamesResponse>;
    async fn watch_games(
        &self,
        _: tonic::Request<pb::WatchGamesRequest>,
    ) -> Result<tonic::Response<Self::WatchGamesStream>, tonic::Status> {
        not_here()
    }
}

/// `gangs replay`, `gangs export` and `gangs log` wait out a server's own UNAVAILABLE (a
/// cluster's game changing hands) and resume a log cut off halfway after its last record:
/// the replay verifies, the log prints every record once. No server at all is still reported
/// at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_reads_wait_out_a_game_changing_hands_and_resume_where_they_were_cut() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let game = play_with_bots(&server, "gang-of-four", 4, 31).await;
    let records = log(&mut server.client().await, &game).await;
    let last = records.last().unwrap().seq;

    for command in [
        vec!["replay", game.as_str(), "--verify"],
        vec!["log", game.as_str(), "--json"],
    ] {
        let fake = HandOverServer {
            records: std::sync::Arc::new(records.clone()),
            asked_from: Default::default(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let serving = tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(pb::games_server::GamesServer::new(fake.clone()))
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        let mut args = vec!["--server", url.as_str()];
        args.extend(&command);
        let output = tokio::task::spawn_blocking({
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            move || Command::new(bin("gangs")).args(&args).output().unwrap()
        })
        .await
        .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(
            output.status.success(),
            "{command:?}: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let asked = fake.asked_from.lock().unwrap().clone();
        assert_eq!(asked.len(), 4, "{command:?}: {asked:?}");
        assert_eq!(&asked[..3], &[0, 0, 0], "{command:?}");
        let resumed = asked[3];
        assert!(0 < resumed && resumed < last, "resumed after seq {resumed}");
        if command[0] == "log" {
            let seqs: Vec<u64> = stdout
                .lines()
                .map(|line| {
                    serde_json::from_str::<Value>(line).unwrap()["seq"]
                        .as_u64()
                        .unwrap()
                })
                .collect();
            assert_eq!(seqs, (1..=last).collect::<Vec<_>>(), "every record once");
        }
        serving.abort();
    }

    // No server: reported at once, with the hint.
    let started = std::time::Instant::now();
    let (code, out) = gangs_offline(&["log", &game]);
    assert_ne!(code, 0);
    assert!(out.contains("is `gangs-server` running?"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(10));
}
