//! End to end: hosted bots (`gangs ladder submit`, `Ladders.SubmitBot`). Modules submitted
//! with the admin key, a bot's own key and through the CLI (the C example, built from source)
//! are checked, entered and played by the server on a keyed ladder beside a house bot and a
//! connected bot; fifty games are rated without a timeout of theirs, the games in play at a
//! SIGKILL of the server resume, and every decision a hosted bot made reruns identically
//! (`gangs replay --check-decisions`). Modules that cannot be bots
//! are refused naming why (an import outside WASI, a decision out of fuel, a module over
//! `--max-module-bytes`, the wrong key), and a module that answers the sample but not a real
//! game gets its seat's default logged with the cause, the game aborted, and the bot paused.
//! A hosted bot's stderr is its owner's to read (`gangs ladder bot-log`, `Ladders.GetBotLog`),
//! and rebuilt by rerunning its decisions (`gangs replay --check-decisions --stderr`).

use crate::common;

use common::hosted::{c_example, first_action_bot, keyed_server};
use common::ladder::{ladder_games, rust_ladder_bot, standings};
use common::*;
use gangs_proto::auth::ApiKey;
use gangs_proto::v1 as pb;
use pb::ladders_client::LaddersClient;
use std::time::Duration;
use tonic::Code;

const ADMIN: &str = "admin-secret-hosted-1";
const PLAYER: &str = "player-secret-hosted-2";

/// The line [`talking_bot`] writes on stderr in every decision.
const TALK: &str = "talker: I play the first legal action";

/// A module writing [`TALK`] on stderr, then answering `0` (the first legal action).
fn talking_bot() -> Vec<u8> {
    wat::parse_str(format!(
        r#"(module
          (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (data (i32.const 64) "0\n")
          (data (i32.const 128) "{TALK}\n")
          (func (export "_start")
            (i32.store (i32.const 0) (i32.const 128))
            (i32.store (i32.const 4) (i32.const {len}))
            (drop (call $write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
            (i32.store (i32.const 0) (i32.const 64))
            (i32.store (i32.const 4) (i32.const 2))
            (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#,
        len = TALK.len() + 1
    ))
    .expect("valid module")
}

/// Answers `0` while its virtual clock reads before 1970-01-12 (the sample decision, whose
/// record time is 0), `99` after (a real game's decision): no such action.
fn sample_only_bot() -> Vec<u8> {
    wat::parse_str(
        r#"(module
          (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
          (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (data (i32.const 64) "0\n")
          (data (i32.const 80) "99\n")
          (func (export "_start")
            (drop (call $clock (i32.const 0) (i64.const 1) (i32.const 16)))
            (if (i64.lt_u (i64.load (i32.const 16)) (i64.const 1000000000000000))
              (then (i32.store (i32.const 0) (i32.const 64)) (i32.store (i32.const 4) (i32.const 2)))
              (else (i32.store (i32.const 0) (i32.const 80)) (i32.store (i32.const 4) (i32.const 3))))
            (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#,
    )
    .expect("valid module")
}

fn client(
    server: &Server,
    key: &str,
) -> LaddersClient<tonic::service::interceptor::InterceptedService<tonic::transport::Channel, ApiKey>>
{
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect_lazy();
    LaddersClient::with_interceptor(channel, ApiKey::new(Some(key)).unwrap())
}

fn submit(ladder: &str, bot: &str, module: Vec<u8>) -> pb::SubmitBotRequest {
    pb::SubmitBotRequest {
        ladder: ladder.into(),
        bot: bot.into(),
        version: String::new(),
        module,
    }
}

fn create(name: &str, house: &[&str]) -> pb::CreateLadderRequest {
    pb::CreateLadderRequest {
        name: name.into(),
        kind: "gang-of-four".into(),
        players: Some(3),
        options: [("target_score".to_string(), "1".to_string())].into(),
        turn_ms: Some(3000),
        house_bots: house.iter().map(|h| h.to_string()).collect(),
        ..Default::default()
    }
}

/// Waits until `ladder` has rated `count` games (not void), failing after `within`.
async fn rated<T>(
    admin: &mut LaddersClient<T>,
    ladder: &str,
    count: usize,
    within: Duration,
) -> Vec<pb::LadderGame>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: tonic::codegen::Body<Data = tonic::codegen::Bytes> + Send + 'static,
    <T::ResponseBody as tonic::codegen::Body>::Error: Into<tonic::codegen::StdError> + Send,
{
    let deadline = std::time::Instant::now() + within;
    loop {
        let games = ladder_games(admin, ladder, 200).await;
        let done: Vec<pb::LadderGame> = games
            .into_iter()
            .filter(|g| g.finished_unix_ms.is_some() && !g.void)
            .collect();
        if done.len() >= count {
            return done;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "only {} games of {ladder} rated within {within:?}",
            done.len()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Games of `ladder` rated so far (finished, not void).
async fn rated_now<T>(admin: &mut LaddersClient<T>, ladder: &str) -> Vec<pb::LadderGame>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: tonic::codegen::Body<Data = tonic::codegen::Bytes> + Send + 'static,
    <T::ResponseBody as tonic::codegen::Body>::Error: Into<tonic::codegen::StdError> + Send,
{
    rated(admin, ladder, 0, Duration::from_secs(1)).await
}

/// `gangs ladder submit LADDER BOT --wasm FILE` with the admin key, as a user submits: its
/// first version is entered.
fn submit_with_the_cli(server: &Server, ladder: &str, bot: &str, file: &std::path::Path) {
    let (code, out) = gangs_cli(
        server,
        &[
            "--api-key",
            ADMIN,
            "ladder",
            "submit",
            ladder,
            bot,
            "--wasm",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("{bot}@1 entered on ladder {ladder}")),
        "{out}"
    );
}

/// `gangs replay GAME --bot FILE --seat N --check-decisions --json`: (checked, identical), or
/// the exit code and output of a rerun that found a difference.
fn check_decisions(
    server: &Server,
    game_id: &str,
    module: &std::path::Path,
    seat: usize,
) -> (i32, String) {
    gangs_cli(
        server,
        &[
            "--api-key",
            ADMIN,
            "--json",
            "replay",
            game_id,
            "--bot",
            module.to_str().unwrap(),
            "--seat",
            &seat.to_string(),
            "--check-decisions",
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosted_bots_play_a_ladder_survive_a_restart_and_rerun_identically() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = keyed_server(dir.path(), ADMIN, PLAYER);
    let mut admin = client(&server, ADMIN);
    admin
        .create_ladder(create("wasm", &["greedy"]))
        .await
        .expect("create");

    // A module through the API with the admin key; the C example, built from source as a user
    // builds it, through the CLI: the server checks each and answers a new version with its key.
    let module = first_action_bot(10_000);
    let entered = admin
        .submit_bot(submit("wasm", "first", module.clone()))
        .await
        .expect("submit")
        .into_inner();
    assert_eq!(
        (entered.bot.as_str(), entered.version.as_str()),
        ("first", "1")
    );
    assert_eq!(entered.sample_answer, "0");
    assert!(entered.sample_fuel > 10_000, "{entered:?}");
    assert!(entered.engine.starts_with("wasmtime"), "{entered:?}");
    let first_file = dir.path().join("first.wasm");
    std::fs::write(&first_file, &module).unwrap();
    let c_file = c_example(dir.path());
    submit_with_the_cli(&server, "wasm", "cbot", &c_file);

    // A connected bot with its own key.
    let key = admin
        .register_bot(pb::RegisterBotRequest {
            ladder: "wasm".into(),
            bot: "rnd".into(),
            version: String::new(),
        })
        .await
        .expect("register")
        .into_inner()
        .bot_key;
    let mut random = rust_ladder_bot("gangs-bot-random", &server, "wasm", &key)
        .spawn()
        .expect("start the random bot");

    rated(&mut admin, "wasm", 25, Duration::from_secs(300)).await;
    // The server is SIGKILLed mid-play and comes back: the games it was playing resume and are
    // rated, the hosted bots play on.
    let in_play: Vec<String> = ladder_games(&mut admin, "wasm", 200)
        .await
        .into_iter()
        .filter(common::ladder::in_play)
        .map(|g| g.game_id)
        .collect();
    server.restart();
    let mut admin = client(&server, ADMIN);
    let games = rated(&mut admin, "wasm", 50, Duration::from_secs(300)).await;
    let _ = random.kill();
    let _ = random.wait();
    let resumed = rated_now(&mut admin, "wasm")
        .await
        .into_iter()
        .filter(|g| in_play.contains(&g.game_id))
        .count();
    assert!(
        !in_play.is_empty() && resumed > 0,
        "no game in play at the SIGKILL was rated after it ({} in play)",
        in_play.len()
    );

    let table = standings(&mut admin, "wasm").await;
    for hosted in ["first", "cbot"] {
        let row = table
            .standings
            .iter()
            .find(|r| r.bot == hosted)
            .unwrap_or_else(|| panic!("{hosted} in {:?}", table.standings));
        assert!(row.games > 0, "{row:?}");
        assert_eq!(
            row.timeouts, 0,
            "a hosted bot was charged a timeout: {row:?}"
        );
        assert!(!row.paused, "{row:?}");
    }

    // Every decision of either hosted bot in every rated game reruns identically.
    let mut checked = 0;
    for game in &games {
        for (name, file) in [("first@1", &first_file), ("cbot@1", &c_file)] {
            let Some(seat) = game.names.iter().position(|n| n == name) else {
                continue;
            };
            let (code, out) = check_decisions(&server, &game.game_id, file, seat);
            assert_eq!(code, 0, "{name} in {}: {out}", game.game_id);
            let verdict: serde_json::Value = serde_json::from_str(out.trim()).expect(&out);
            assert!(verdict["checked"].as_u64().unwrap() > 0, "{verdict}");
            assert_eq!(verdict["checked"], verdict["identical"], "{verdict}");
            checked += 1;
        }
    }
    assert!(
        checked >= games.len(),
        "{checked} hosted seats in {} games",
        games.len()
    );

    // A module that is not the one the seat played does not pass for it.
    let game = games
        .iter()
        .find(|g| g.names.iter().any(|n| n == "first@1"))
        .expect("a game of first@1");
    let seat = game.names.iter().position(|n| n == "first@1").unwrap();
    let other = dir.path().join("other.wasm");
    std::fs::write(&other, sample_only_bot()).unwrap();
    let (code, out) = check_decisions(&server, &game.game_id, &other, seat);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("differ"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modules_are_refused_naming_why_and_a_failing_bot_is_paused() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        0,
        &[
            "--api-key",
            ADMIN,
            "--player-key",
            PLAYER,
            "--max-module-bytes",
            "65536",
        ],
    );
    let mut admin = client(&server, ADMIN);
    admin
        .create_ladder(pb::CreateLadderRequest {
            hosted_fuel: Some(5_000_000),
            ..create("check", &["random", "greedy"])
        })
        .await
        .expect("create");

    let refused = |status: tonic::Status, code: Code, words: &str| {
        assert_eq!(status.code(), code, "{status:?}");
        assert!(
            status.message().contains(words),
            "{words:?} not in {status:?}"
        );
    };
    let foreign = wat::parse_str(
        r#"(module (import "env" "socket" (func)) (memory (export "memory") 1) (func (export "_start")))"#,
    )
    .unwrap();
    refused(
        admin
            .submit_bot(submit("check", "foreign", foreign))
            .await
            .unwrap_err(),
        Code::InvalidArgument,
        "env.socket",
    );
    refused(
        admin
            .submit_bot(submit("check", "spin", first_action_bot(u32::MAX)))
            .await
            .unwrap_err(),
        Code::InvalidArgument,
        "fuel",
    );
    let big = wat::parse_str(format!(
        r#"(module (memory (export "memory") 2) (data (i32.const 0) "{}") (func (export "_start")))"#,
        "x".repeat(70_000)
    ))
    .unwrap();
    refused(
        admin
            .submit_bot(submit("check", "big", big))
            .await
            .unwrap_err(),
        Code::ResourceExhausted,
        "--max-module-bytes",
    );
    refused(
        client(&server, PLAYER)
            .submit_bot(submit("check", "p", first_action_bot(1)))
            .await
            .unwrap_err(),
        Code::PermissionDenied,
        "player key",
    );
    // Nothing of the refused ones was entered.
    let names: Vec<String> = standings(&mut admin, "check")
        .await
        .standings
        .iter()
        .map(|r| r.bot.clone())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| ["foreign", "spin", "big", "p"].contains(&n.as_str())),
        "{names:?}"
    );

    // A module that answers the sample decision but not a real one.
    let entered = admin
        .submit_bot(submit("check", "flaky", sample_only_bot()))
        .await
        .expect("the sample decision passes")
        .into_inner();
    // Its own key submits its next version; another bot's key may not.
    let mut own = client(&server, &entered.bot_key);
    let next = own
        .submit_bot(submit("check", "flaky", first_action_bot(1)))
        .await
        .expect("the bot's key submits its next version")
        .into_inner();
    assert_eq!(next.version, "2");
    refused(
        own.submit_bot(submit("check", "someone", first_action_bot(1)))
            .await
            .unwrap_err(),
        Code::PermissionDenied,
        "own bot",
    );

    // flaky@1's first decision fails: the seat plays its default, logged with the cause, the
    // game is aborted and not rated, and the bot is paused with the reason.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let row = loop {
        let table = standings(&mut admin, "check").await;
        let row = table
            .standings
            .iter()
            .find(|r| r.bot == "flaky" && r.version == "1")
            .cloned()
            .expect("flaky@1 is entered");
        if row.paused {
            break row;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "flaky@1 never paused: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(row.games, 0, "{row:?}");
    let games = ladder_games(&mut admin, "check", 100).await;
    let aborted = games
        .iter()
        .find(|g| g.names.iter().any(|n| n == "flaky@1"))
        .expect("flaky@1 was matched");
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect_lazy();
    let mut games = ApiKey::new(Some(ADMIN)).unwrap().client(channel);
    // Aborted: the game ends (cancelled by the ladder), its log then public.
    let records = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let mut stream = games
                .get_log(pb::GetLogRequest {
                    game_id: aborted.game_id.clone(),
                    from_seq: 0,
                })
                .await
                .expect("the game's log")
                .into_inner();
            let mut records = Vec::new();
            while let Some(record) = stream.message().await.expect("a record") {
                records.push(record);
            }
            if records
                .iter()
                .any(|r| matches!(r.record, Some(pb::log_record::Record::Ended(_))))
            {
                return records;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("the aborted game ended");
    let seat = aborted.names.iter().position(|n| n == "flaky@1").unwrap() as u32;
    let cause = records.iter().find_map(|r| match &r.record {
        Some(pb::log_record::Record::TimedOut(t)) if t.seat == seat => Some(t.cause.clone()),
        _ => None,
    });
    let cause = cause.expect("flaky@1's seat timed out");
    assert!(cause.starts_with("bad output: printed 99"), "{cause}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_bots_owner_reads_its_stderr_and_nobody_else_does() {
    let dir = tempfile::tempdir().unwrap();
    let server = keyed_server(dir.path(), ADMIN, PLAYER);
    let mut admin = client(&server, ADMIN);
    admin
        .create_ladder(create("logs", &["greedy", "random"]))
        .await
        .expect("create");
    let module = talking_bot();
    let talker = admin
        .submit_bot(submit("logs", "talker", module.clone()))
        .await
        .expect("submit")
        .into_inner();
    // A connected bot: registered, never queued (the house bots fill the games).
    let connected = admin
        .register_bot(pb::RegisterBotRequest {
            ladder: "logs".into(),
            bot: "conn".into(),
            version: String::new(),
        })
        .await
        .expect("register")
        .into_inner();

    let games = rated(&mut admin, "logs", 2, Duration::from_secs(240)).await;
    let game = games
        .iter()
        .find(|g| g.names.iter().any(|n| n == "talker@1"))
        .expect("talker@1 played");
    let seat = game.names.iter().position(|n| n == "talker@1").unwrap() as u32;

    // Its owner, over gRPC: one game, every decision of its seat with its line.
    let mut own = client(&server, &talker.bot_key);
    let log = own
        .get_bot_log(pb::GetBotLogRequest {
            ladder: "logs".into(),
            bot: "talker@1".into(),
            game_id: game.game_id.clone(),
        })
        .await
        .expect("the owner reads its log")
        .into_inner();
    assert_eq!(log.games.len(), 1, "{log:?}");
    let played = &log.games[0];
    assert_eq!(played.game_id, game.game_id);
    assert_eq!(played.entry, "talker@1");
    assert!(!played.decisions.is_empty(), "{played:?}");
    assert_eq!(played.quiet_decisions, 0, "{played:?}");
    for decision in &played.decisions {
        assert_eq!(decision.stderr, format!("{TALK}\n"), "{decision:?}");
        assert_eq!(decision.seat, seat, "{decision:?}");
        assert!(decision.cause.is_empty(), "{decision:?}");
        assert!(decision.fuel > 0 && decision.seq > 0, "{decision:?}");
    }
    let seqs: Vec<u64> = played.decisions.iter().map(|d| d.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] <= w[1]), "{seqs:?}");

    // Through the CLI with the bot's key: every game kept, newest first, the lines indented.
    let (code, out) = gangs_cli(
        &server,
        &[
            "ladder",
            "bot-log",
            "logs",
            "talker",
            "--bot-key",
            &talker.bot_key,
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("game {}  talker@1", game.game_id)),
        "{out}"
    );
    assert!(out.contains(&format!("    {TALK}")), "{out}");
    let (code, out) = gangs_cli(
        &server,
        &[
            "--api-key",
            ADMIN,
            "--json",
            "ladder",
            "bot-log",
            "logs",
            "talker@1",
            "--game",
            &game.game_id,
        ],
    );
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(out.trim()).expect(&out);
    assert_eq!(json["games"][0]["game_id"], game.game_id.as_str(), "{json}");
    assert_eq!(
        json["games"][0]["decisions"][0]["stderr"],
        format!("{TALK}\n"),
        "{json}"
    );

    // The same lines, rebuilt from the durable log by rerunning the decisions.
    let file = dir.path().join("talker.wasm");
    std::fs::write(&file, &module).unwrap();
    let (code, out) = gangs_cli(
        &server,
        &[
            "--api-key",
            ADMIN,
            "--json",
            "replay",
            &game.game_id,
            "--bot",
            file.to_str().unwrap(),
            "--seat",
            &seat.to_string(),
            "--check-decisions",
            "--stderr",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let verdict: serde_json::Value = serde_json::from_str(out.trim()).expect(&out);
    let rerun = verdict["decisions"].as_array().expect("decisions");
    assert!(!rerun.is_empty(), "{verdict}");
    for decision in rerun {
        assert_eq!(decision["stderr"], format!("{TALK}\n"), "{verdict}");
    }

    // Another bot's key, the player key: refused. A connected bot has no log here.
    let ask = |bot: &str| pb::GetBotLogRequest {
        ladder: "logs".into(),
        bot: bot.into(),
        game_id: String::new(),
    };
    let refused = |status: tonic::Status, code: Code, words: &str| {
        assert_eq!(status.code(), code, "{status:?}");
        assert!(
            status.message().contains(words),
            "{words:?} not in {status:?}"
        );
    };
    refused(
        client(&server, &connected.bot_key)
            .get_bot_log(ask("talker"))
            .await
            .unwrap_err(),
        Code::PermissionDenied,
        "own bot's log",
    );
    refused(
        client(&server, PLAYER)
            .get_bot_log(ask("talker"))
            .await
            .unwrap_err(),
        Code::PermissionDenied,
        "player key",
    );
    refused(
        admin.get_bot_log(ask("conn")).await.unwrap_err(),
        Code::FailedPrecondition,
        "only hosted bots",
    );
    refused(
        admin.get_bot_log(ask("nobody")).await.unwrap_err(),
        Code::NotFound,
        "no bot nobody",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_bot_is_submitted_plays_rated_games_across_a_restart_and_reruns_identically() {
    let dir = tempfile::tempdir().unwrap();
    let python = common::hosted::python_example(dir.path());
    assert!(
        std::fs::metadata(&python).unwrap().len() > 8 << 20,
        "bigger than a module may be"
    );
    let mut server = keyed_server(dir.path(), ADMIN, PLAYER);
    let mut admin = client(&server, ADMIN);
    admin
        .create_ladder(create("py", &["greedy", "random"]))
        .await
        .expect("create");
    // A component for another world is refused, naming both worlds' exports.
    let refused = admin
        .submit_bot(submit("py", "cmd", common::hosted::hostile("wasi_command")))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(
        refused.message().contains("wasi:cli/run") && refused.message().contains("gangs:bot/bot"),
        "{refused:?}"
    );
    // The student's one command.
    submit_with_the_cli(&server, "py", "pybot", &python);

    let played = |games: &[pb::LadderGame]| {
        games
            .iter()
            .filter(|g| g.names.iter().any(|n| n == "pybot@1"))
            .count()
    };
    let before = rated(&mut admin, "py", 2, Duration::from_secs(300)).await;
    // SIGKILL and a restart: the component loads from the cache and plays on.
    server.restart();
    let mut admin = client(&server, ADMIN);
    let games = rated(&mut admin, "py", before.len() + 4, Duration::from_secs(300)).await;
    assert!(
        played(&games) >= 4,
        "pybot@1 in {} of {} games",
        played(&games),
        games.len()
    );
    let table = standings(&mut admin, "py").await;
    let row = table
        .standings
        .iter()
        .find(|r| r.bot == "pybot")
        .unwrap_or_else(|| panic!("pybot in {:?}", table.standings));
    assert_eq!(
        row.timeouts, 0,
        "the Python bot was charged a timeout: {row:?}"
    );
    assert!(!row.paused, "{row:?}");

    // Its log says what it chose, per decision.
    let game = games
        .iter()
        .find(|g| g.names.iter().any(|n| n == "pybot@1"))
        .expect("a game of pybot@1");
    let seat = game.names.iter().position(|n| n == "pybot@1").unwrap();
    let log = admin
        .get_bot_log(pb::GetBotLogRequest {
            ladder: "py".into(),
            bot: "pybot@1".into(),
            game_id: game.game_id.clone(),
        })
        .await
        .expect("its log")
        .into_inner();
    let text = format!("{log:?}");
    assert!(text.contains("python-bot: seq"), "{text}");
    // Every decision it made reruns identically.
    let (code, out) = check_decisions(&server, &game.game_id, &python, seat);
    assert_eq!(code, 0, "{out}");
    let verdict: serde_json::Value = serde_json::from_str(out.trim()).expect(&out);
    assert!(verdict["checked"].as_u64().unwrap() > 0, "{verdict}");
    assert_eq!(verdict["checked"], verdict["identical"], "{verdict}");
}
