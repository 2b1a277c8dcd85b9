//! Arbitrary messages to every RPC of the real server: every answer is OK or a clear status with
//! a short message, a refused call changes nothing, and the server neither panics nor stops.
//!
//! The requests are built by reflection over the compiled descriptors (`prost-reflect`), so
//! every field of every request message of every method of `gangs.v1.Games` and
//! `gangs.v1.Ladders` is exercised, a new RPC or field included: random strings, huge strings, unknown
//! enum numbers, out-of-range integers, nested messages, long repeated fields, mixed with the
//! real ids and tokens of the games set up first (values near the valid ones reach deeper
//! checks), under every kind of key, and raw random bytes as a body (malformed protobuf).
//!
//! `GANGS_FUZZ_SEED` replays a run (the seed is printed); `GANGS_FUZZ_CASES` sets its length.

use crate::common;

use common::*;
use gangs_proto::auth::ApiKey;
use gangs_proto::v1 as pb;
use prost::bytes::{Buf, BufMut, Bytes};
use prost::Message;
use prost_reflect::{
    DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, MethodDescriptor,
    Value,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Duration;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

const ADMIN: &str = "fuzz-admin-key";
const PLAYER: &str = "fuzz-player-key";
/// Longest message a refusal may carry: it quotes at most a few dozen bytes of input.
const MAX_MESSAGE_LEN: usize = 400;

/// Bodies as raw bytes both ways: the fuzzer writes the protobuf itself (or garbage).
#[derive(Clone, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }
    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// What the fuzzer knows of the server: values near the valid ones.
struct Known {
    game_ids: Vec<String>,
    tokens: Vec<String>,
    /// A ladder, a bot registered on it, and that bot's key.
    ladder: String,
    bot: String,
    bot_key: String,
}

/// A string for a field: usually plausible for its name, sometimes hostile.
fn random_string(rng: &mut ChaCha8Rng, field: &str, known: &Known) -> String {
    match rng.random_range(0..10) {
        0 => String::new(),
        1 => "x".repeat(rng.random_range(1..200_000)),
        2 => "é\u{0}\u{202e}\n\"🃏".repeat(rng.random_range(1..50)),
        3 => [
            "gang-of-four",
            "the-gang",
            "players",
            "2h 2d",
            "play 3",
            "pass",
        ][rng.random_range(0..6)]
        .to_string(),
        4 | 5 if field.contains("game_id") || field == "page_token" => {
            known.game_ids[rng.random_range(0..known.game_ids.len())].clone()
        }
        4..=6 if field == "ladder" => known.ladder.clone(),
        4..=6 if field == "bot" => known.bot.clone(),
        4 | 5 if field == "bot_key" => known.bot_key.clone(),
        4..=6 if field.contains("token") || field.contains("invitation") => {
            known.tokens[rng.random_range(0..known.tokens.len())].clone()
        }
        _ => (0..rng.random_range(1..40))
            .map(|_| rng.random_range(b' '..=b'~') as char)
            .collect(),
    }
}

fn random_u64(rng: &mut ChaCha8Rng) -> u64 {
    match rng.random_range(0..5) {
        0 => 0,
        1 => u64::MAX - rng.random_range(0..3),
        2 => rng.random_range(1..10),
        3 => rng.random_range(0..200),
        _ => rng.random(),
    }
}

fn random_value(rng: &mut ChaCha8Rng, field: &FieldDescriptor, depth: u32, known: &Known) -> Value {
    let n = random_u64(rng);
    match field.kind() {
        Kind::Double => Value::F64(f64::from_bits(n)),
        Kind::Float => Value::F32(f32::from_bits(n as u32)),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(n as i32),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(n as i64),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(n as u32),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(n),
        Kind::Bool => Value::Bool(rng.random()),
        Kind::String => Value::String(random_string(rng, field.name(), known)),
        Kind::Bytes => Value::Bytes(Bytes::from(
            (0..rng.random_range(0..64))
                .map(|_| rng.random())
                .collect::<Vec<u8>>(),
        )),
        // Unknown numbers too: a client built from a newer proto sends them.
        Kind::Enum(e) => Value::EnumNumber(match rng.random_range(0..4) {
            0 => rng.random_range(-3..100),
            _ => {
                let values: Vec<i32> = e.values().map(|v| v.number()).collect();
                values[rng.random_range(0..values.len())]
            }
        }),
        Kind::Message(m) => Value::Message(random_message(rng, &m, depth + 1, known)),
    }
}

/// A message with a random subset of its fields set, nested messages to a small depth.
fn random_message(
    rng: &mut ChaCha8Rng,
    descriptor: &MessageDescriptor,
    depth: u32,
    known: &Known,
) -> DynamicMessage {
    let mut message = DynamicMessage::new(descriptor.clone());
    if depth > 4 {
        return message;
    }
    for field in descriptor.fields() {
        if field.is_map() || !rng.random_bool(0.6) {
            continue;
        }
        let value = if field.is_list() {
            let len = match rng.random_range(0..6) {
                0 => rng.random_range(20..300),
                _ => rng.random_range(0..5),
            };
            Value::List(
                (0..len)
                    .map(|_| random_value(rng, &field, depth, known))
                    .collect(),
            )
        } else {
            random_value(rng, &field, depth, known)
        };
        message.set_field(&field, value);
    }
    message
}

/// A body for `method`: its request message, or (now and then) bytes that are not one.
fn random_body(rng: &mut ChaCha8Rng, method: &MethodDescriptor, known: &Known) -> Bytes {
    if rng.random_bool(0.15) {
        let len = rng.random_range(0..300);
        return Bytes::from((0..len).map(|_| rng.random()).collect::<Vec<u8>>());
    }
    Bytes::from(random_message(rng, &method.input(), 0, known).encode_to_vec())
}

/// A call's credentials: none, the server's keys, the ladder bot's key (its games only), or
/// wrong ones.
fn random_key(rng: &mut ChaCha8Rng, bot_key: &str) -> Option<String> {
    match rng.random_range(0..7) {
        0 => None,
        6 => Some(format!("Bearer {bot_key}")),
        1 => Some(format!("Bearer {ADMIN}")),
        2 => Some(format!("Bearer {PLAYER}")),
        3 => Some(format!("Bearer {}x", &ADMIN[..ADMIN.len() - 1])),
        4 => Some("Basic abc".into()),
        _ => Some(format!("Bearer {}", "k".repeat(rng.random_range(1..3000)))),
    }
}

/// Calls one method with raw bodies; returns the answer's status (OK when it succeeded, with
/// a server stream read for a moment).
async fn call(
    channel: &Channel,
    method: &MethodDescriptor,
    bodies: Vec<Bytes>,
    key: Option<&str>,
) -> Status {
    let path = format!("/{}/{}", method.parent_service().full_name(), method.name());
    let path = PathAndQuery::try_from(path).expect("a method path");
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.expect("the channel is ready");
    let answer = if method.is_client_streaming() {
        let request = keyed(Request::new(tokio_stream::iter(bodies)), key);
        if method.is_server_streaming() {
            match grpc.streaming(request, path, RawCodec).await {
                Ok(response) => drain(response.into_inner()).await,
                Err(status) => Err(status),
            }
        } else {
            grpc.client_streaming(request, path, RawCodec)
                .await
                .map(drop)
        }
    } else {
        let body = bodies.into_iter().next().unwrap_or_default();
        let request = keyed(Request::new(body), key);
        if method.is_server_streaming() {
            match grpc.server_streaming(request, path, RawCodec).await {
                Ok(response) => drain(response.into_inner()).await,
                Err(status) => Err(status),
            }
        } else {
            grpc.unary(request, path, RawCodec).await.map(drop)
        }
    };
    match answer {
        Ok(()) => Status::ok(""),
        Err(status) => status,
    }
}

/// `message` as a call with the admin key.
fn as_admin<T>(message: T) -> Request<T> {
    keyed(Request::new(message), Some(&format!("Bearer {ADMIN}")))
}

/// `request` with `key` as its `authorization` metadata.
fn keyed<T>(mut request: Request<T>, key: Option<&str>) -> Request<T> {
    if let Some(value) = key.and_then(|k| k.parse().ok()) {
        request.metadata_mut().insert("authorization", value);
    }
    request
}

/// Reads a server stream for a moment: a refusal may come as the stream's first message.
async fn drain(mut stream: tonic::Streaming<Bytes>) -> Result<(), Status> {
    let until = tokio::time::Instant::now() + Duration::from_millis(50);
    loop {
        match tokio::time::timeout_at(until, stream.message()).await {
            Err(_) | Ok(Ok(None)) => return Ok(()),
            Ok(Ok(Some(_))) => continue,
            Ok(Err(status)) => return Err(status),
        }
    }
}

/// A new game of `kind` with `seats` seats taken (all of them: it runs); its id and tokens.
async fn running_game(
    admin: &mut gangs_proto::auth::KeyedClient,
    kind: &str,
    seats: u32,
) -> (String, Vec<String>) {
    let game_id = admin
        .create_game(pb::CreateGameRequest {
            kind: kind.into(),
            seed: Some(9),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .game_id;
    let mut tokens = Vec::new();
    for seat in 0..seats {
        let join = pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(seat),
            ..Default::default()
        };
        tokens.push(admin.join_game(join).await.unwrap().into_inner().token);
    }
    (game_id, tokens)
}

/// Everything a call could change: the directory, each game's log, and each ladder's
/// leaderboard and games.
async fn snapshot(
    client: &mut gangs_proto::auth::KeyedClient,
    channel: &Channel,
) -> (
    Vec<pb::GameSummary>,
    Vec<Vec<pb::LogRecord>>,
    Vec<(pb::StandingsResponse, pb::LadderGamesResponse)>,
) {
    let mut games = client
        .list_games(pb::ListGamesRequest {
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("list games")
        .into_inner()
        .games;
    games.sort_by(|a, b| a.game_id.cmp(&b.game_id));
    let mut logs = Vec::new();
    for game in &games {
        let mut stream = client
            .get_log(pb::GetLogRequest {
                game_id: game.game_id.clone(),
                from_seq: 0,
            })
            .await
            .expect("get log")
            .into_inner();
        let mut records = Vec::new();
        while let Some(record) = stream.message().await.expect("log record") {
            records.push(record);
        }
        logs.push(records);
    }
    let mut ladders = pb::ladders_client::LaddersClient::new(channel.clone());
    let list = ladders
        .list_ladders(as_admin(pb::ListLaddersRequest {}))
        .await
        .expect("list ladders")
        .into_inner()
        .ladders;
    let mut tables = Vec::new();
    for ladder in list {
        let standings = ladders
            .standings(as_admin(pb::StandingsRequest {
                ladder: ladder.name.clone(),
                fit: false,
                season: 0,
            }))
            .await
            .expect("standings")
            .into_inner();
        let games = ladders
            .ladder_games(as_admin(pb::LadderGamesRequest {
                ladder: ladder.name,
                page_size: 500,
                page_token: String::new(),
                ..Default::default()
            }))
            .await
            .expect("ladder games")
            .into_inner();
        tables.push((standings, games));
    }
    (games, logs, tables)
}

/// The statuses a careless or hostile client may get: never UNKNOWN, INTERNAL, UNIMPLEMENTED
/// (every method called exists), nor a transport error.
fn clear(code: Code) -> bool {
    matches!(
        code,
        Code::InvalidArgument
            | Code::PermissionDenied
            | Code::Unauthenticated
            | Code::FailedPrecondition
            | Code::NotFound
            | Code::Aborted
            | Code::ResourceExhausted
            | Code::OutOfRange
            | Code::AlreadyExists
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbitrary_messages_to_every_rpc_get_clear_statuses_and_change_nothing() {
    let seed: u64 = std::env::var("GANGS_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    let cases: usize = std::env::var("GANGS_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(250);
    println!("GANGS_FUZZ_SEED={seed} GANGS_FUZZ_CASES={cases}");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("server.log");
    let server = Server::start_logged(
        &dir.path().join("data"),
        &["--api-key", ADMIN, "--player-key", PLAYER],
        &log_path,
    );
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut admin = ApiKey::new(Some(ADMIN)).unwrap().client(channel.clone());

    // A running Gang of Four game (every seat taken) and a The Gang game waiting for seats.
    let mut ladders = pb::ladders_client::LaddersClient::new(channel.clone());
    ladders
        .create_ladder(as_admin(pb::CreateLadderRequest {
            name: "fuzz".into(),
            kind: "gang-of-four".into(),
            ..Default::default()
        }))
        .await
        .expect("create a ladder");
    let bot_key = ladders
        .register_bot(as_admin(pb::RegisterBotRequest {
            ladder: "fuzz".into(),
            bot: "bot".into(),
            version: String::new(),
        }))
        .await
        .expect("register a bot")
        .into_inner()
        .bot_key;
    let mut known = Known {
        game_ids: Vec::new(),
        tokens: Vec::new(),
        ladder: "fuzz".into(),
        bot: "bot".into(),
        bot_key,
    };
    for (kind, seats) in [("gang-of-four", 4), ("the-gang", 1)] {
        let (game_id, tokens) = running_game(&mut admin, kind, seats).await;
        known.game_ids.push(game_id);
        known.tokens.extend(tokens);
    }

    let pool = DescriptorPool::decode(gangs_proto::FILE_DESCRIPTOR_SET).expect("descriptors");
    let methods: Vec<MethodDescriptor> = ["gangs.v1.Games", "gangs.v1.Ladders"]
        .iter()
        .flat_map(|name| {
            pool.get_service_by_name(name)
                .unwrap_or_else(|| panic!("the service {name}"))
                .methods()
                .collect::<Vec<_>>()
        })
        .collect();
    let mut refused = 0;
    let mut accepted = 0;
    let mut before = snapshot(&mut admin, &channel).await;
    for case in 0..cases {
        let method = &methods[rng.random_range(0..methods.len())];
        let bodies: Vec<Bytes> = if method.is_client_streaming() {
            (0..rng.random_range(0..6))
                .map(|_| random_body(&mut rng, method, &known))
                .collect()
        } else {
            vec![random_body(&mut rng, method, &known)]
        };
        let key = random_key(&mut rng, &known.bot_key);
        let status = call(&channel, method, bodies, key.as_deref()).await;
        let what = format!("case {case} (seed {seed}): {}", method.name());
        let after = snapshot(&mut admin, &channel).await;
        if status.code() == Code::Ok {
            accepted += 1;
            // An accepted call may add a game (and tokens arrive only in its answer): the
            // games it made join the pool of ids.
            for game in &after.0 {
                if !known.game_ids.contains(&game.game_id) {
                    known.game_ids.push(game.game_id.clone());
                }
            }
        } else {
            refused += 1;
            assert!(
                clear(status.code()),
                "{what}: unclear status {:?}: {}",
                status.code(),
                status.message()
            );
            assert!(!status.message().is_empty(), "{what}: an empty message");
            assert!(
                status.message().len() <= MAX_MESSAGE_LEN,
                "{what}: a {}-byte message: {:.200}",
                status.message().len(),
                status.message()
            );
            assert!(
                before == after,
                "{what}: a refused call changed the server's state"
            );
        }
        before = after;
    }
    println!("{accepted} calls accepted, {refused} refused");
    assert!(refused > cases / 2, "most arbitrary calls are refused");

    // The server is alive, did not panic, and the prepared game still plays.
    let stderr = server.stderr_text();
    assert!(
        !stderr.contains("panicked"),
        "the server panicked:\n{stderr}"
    );
    let mut player = ApiKey::new(Some(PLAYER)).unwrap().client(channel.clone());
    let mut game_id = known.game_ids[0].clone();
    let mut tokens = known.tokens[..4].to_vec();
    let games = snapshot(&mut admin, &channel).await.0;
    let mut summary = games.iter().find(|g| g.game_id == game_id).unwrap().clone();
    if summary.status != pb::GameStatus::Running as i32 {
        // An accepted CancelGame (admin key, real id) may have ended it: a new game then.
        println!("the prepared game was ended by an accepted call: playing a new one");
        (game_id, tokens) = running_game(&mut admin, "gang-of-four", 4).await;
        let games = snapshot(&mut admin, &channel).await.0;
        summary = games.iter().find(|g| g.game_id == game_id).unwrap().clone();
    }
    assert_eq!(summary.status, pb::GameStatus::Running as i32);
    let mut played = false;
    for token in &tokens {
        let update = player
            .watch(pb::WatchRequest {
                game_id: game_id.clone(),
                token: token.clone(),
                from_seq: summary.last_seq - 1,
                ..Default::default()
            })
            .await
            .expect("the seat still watches")
            .into_inner()
            .message()
            .await
            .expect("an update")
            .expect("the latest update");
        assert_eq!(update.seq, summary.last_seq);
        if let Some(action) = update.legal_actions.first() {
            player
                .act(pb::ActRequest {
                    game_id: game_id.clone(),
                    token: token.clone(),
                    action: Some(action.clone()),
                    expected_seq: Some(update.seq),
                    action_id: String::new(),
                })
                .await
                .expect("a legal action is still accepted");
            played = true;
            break;
        }
    }
    assert!(played, "a seat of the running game could act");
    let health = tonic_health::pb::health_client::HealthClient::new(channel)
        .check(tonic_health::pb::HealthCheckRequest::default())
        .await
        .expect("health check")
        .into_inner();
    assert_eq!(
        health.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
}

/// Regression (found by the test above): a body that is not a protobuf message answered
/// INTERNAL, tonic's default for a decode error; it is the client's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_is_not_a_message_is_an_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let status = grpc
        .unary(
            Request::new(Bytes::from_static(&[0xff, 0xff, 0xff])),
            PathAndQuery::from_static("/gangs.v1.Games/CreateGame"),
            RawCodec,
        )
        .await
        .expect_err("garbage is refused");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(
        status.message().contains("not a valid protobuf message"),
        "{status:?}"
    );
    // Watch has its own route (its updates pass through encoded): the same answer.
    grpc.ready().await.unwrap();
    let status = match grpc
        .server_streaming(
            Request::new(Bytes::from_static(&[0xff, 0xff, 0xff])),
            PathAndQuery::from_static("/gangs.v1.Games/Watch"),
            RawCodec,
        )
        .await
    {
        Ok(response) => drain(response.into_inner())
            .await
            .expect_err("garbage is refused"),
        Err(status) => status,
    };
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(
        status.message().contains("not a valid protobuf message"),
        "{status:?}"
    );
}
