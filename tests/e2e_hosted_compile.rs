//! End to end: compiling hosted modules is bounded and kept. Compile bombs (tens of thousands
//! of functions; one huge straight-line function) are refused at submit at once, naming the
//! bound, while a hosted ladder plays on; a bot's submissions per hour are capped
//! (`--max-submits-per-hour`); and after a restart the modules entered before decide without
//! being compiled again (`gangs_hosted_compile_cache_total`: hits, no miss).

use crate::common;

use common::hosted::first_action_bot;
use common::ladder::ladder_games;
use common::observe::{free_port, proc_status, scrape};
use common::*;
use gangs_proto::auth::{ApiKey, KeyedLaddersClient};
use gangs_proto::v1 as pb;
use std::time::{Duration, Instant};
use tonic::Code;

const ADMIN: &str = "admin-secret-compile-1";
const LADDER: &str = "compiled";

fn ladders(server: &Server) -> KeyedLaddersClient {
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .expect("endpoint")
        .connect_lazy();
    ApiKey::new(Some(ADMIN))
        .unwrap()
        .ladders(channel)
        .max_encoding_message_size(usize::MAX)
}

fn submit(bot: &str, module: Vec<u8>) -> pb::SubmitBotRequest {
    pb::SubmitBotRequest {
        ladder: LADDER.into(),
        bot: bot.into(),
        version: String::new(),
        module,
    }
}

/// The value of `gangs_hosted_compile_cache_total{result="RESULT"}` (0 when absent).
fn compiles(port: u16, result: &str) -> f64 {
    let series = format!("gangs_hosted_compile_cache_total{{result=\"{result}\"}}");
    scrape(port)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(name, _)| *name == series)
        .map_or(0.0, |(_, v)| v.trim().parse().expect("a number"))
}

/// Games of the ladder rated with `bot` at the table.
async fn rated_with(server: &Server, bot: &str) -> usize {
    ladder_games(&mut ladders(server), LADDER, 100)
        .await
        .iter()
        .filter(|g| g.outcome.is_some() && g.names.iter().any(|n| n == bot))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compile_bombs_are_refused_at_once_and_a_restart_loads_modules_without_compiling() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let metrics = format!("127.0.0.1:{port}");
    let mut server = Server::start_with(
        dir.path(),
        0,
        &[
            "--api-key",
            ADMIN,
            "--hosted-bot-threads",
            "1",
            "--metrics",
            &metrics,
            "--max-submits-per-hour",
            "3",
        ],
    );
    ladders(&server)
        .create_ladder(pb::CreateLadderRequest {
            name: LADDER.into(),
            kind: "gang-of-four".into(),
            players: Some(3),
            options: [("target_score".to_string(), "1".to_string())].into(),
            turn_ms: Some(3000),
            house_bots: vec!["random".into(), "greedy".into()],
            ..Default::default()
        })
        .await
        .expect("create");
    ladders(&server)
        .submit_bot(submit("first", first_action_bot(100)))
        .await
        .expect("submit");
    assert_eq!(compiles(port, "miss"), 1.0);

    // Compile bombs: refused by their structure, before the compiler runs.
    let many = format!("(module{})", " (func)".repeat(60_000));
    let long = format!(
        "(module (func {}))",
        "(drop (i32.const 1)) ".repeat(400_000)
    );
    for (bot, text, bound) in [
        ("many", many, "functions: --max-module-functions"),
        ("long", long, "function's size: --max-function-bytes"),
    ] {
        let module = wat::parse_str(&text).expect("valid text");
        let asked = Instant::now();
        let refused = ladders(&server)
            .submit_bot(submit(bot, module))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
        assert!(refused.message().contains(bound), "{refused:?}");
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "{bot}: refused after {:?}",
            asked.elapsed()
        );
    }
    assert_eq!(compiles(port, "miss"), 1.0, "a bomb reached the compiler");
    // The server's peak resident memory, the bombs read and refused: bounded.
    let peak_kb = proc_status(server.child.id(), "VmHWM");
    assert!(
        peak_kb < 200 * 1024,
        "the server's peak RSS reached {peak_kb} kB beside the bombs"
    );

    // A bot's submissions per hour are capped (the refused ones above were other bots').
    for _ in 0..2 {
        ladders(&server)
            .submit_bot(submit("first", first_action_bot(100)))
            .await
            .expect("a new version");
    }
    let capped = ladders(&server)
        .submit_bot(submit("first", first_action_bot(100)))
        .await
        .unwrap_err();
    assert_eq!(capped.code(), Code::ResourceExhausted, "{capped:?}");
    assert!(
        capped.message().contains("--max-submits-per-hour"),
        "{capped:?}"
    );

    // The hosted bot plays; after a restart it plays on without a compile.
    let start = Instant::now();
    while rated_with(&server, "first@1").await == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "first@1 never played"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    server.restart();
    let before = rated_with(&server, "first@1").await;
    let start = Instant::now();
    while rated_with(&server, "first@1").await <= before {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "first@1 did not play after the restart"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(compiles(port, "hit") >= 1.0, "{}", scrape(port));
    assert_eq!(
        compiles(port, "miss"),
        0.0,
        "compiled again after the restart"
    );
    assert!(
        dir.path().join("hosted-cache").is_dir(),
        "the cache lives in the data dir by default"
    );
    let void: Vec<pb::LadderGame> = ladder_games(&mut ladders(&server), LADDER, 100)
        .await
        .into_iter()
        .filter(|g| g.void)
        .collect();
    assert!(void.is_empty(), "games void beside the bombs: {void:?}");
}

/// Hosted decisions that back up on the server's one hosted thread (fifteen bots whose every
/// decision burns about a third of a second of fuel or more, five games at once): the matchmaker holds
/// back new games with hosted seats, and a connected bot left waiting is told why on its Queue
/// stream: a `capped` event naming the backlog and the flag, which the shipped bots log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_waiting_behind_a_backlog_of_hosted_decisions_is_told_why() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        0,
        &["--api-key", ADMIN, "--hosted-bot-threads", "1"],
    );
    ladders(&server)
        .create_ladder(pb::CreateLadderRequest {
            name: LADDER.into(),
            kind: "gang-of-four".into(),
            players: Some(3),
            options: [("target_score".to_string(), "1".to_string())].into(),
            // Room for the fuel on a loaded host: the ladder refuses a budget that takes more
            // than half the turn at the fuel rate it measures.
            turn_ms: Some(4000),
            hosted_fuel: Some(1_600_000_000),
            ..Default::default()
        })
        .await
        .expect("create");
    for i in 0..15 {
        ladders(&server)
            .submit_bot(submit(&format!("heavy-{i}"), first_action_bot(160_000_000)))
            .await
            .expect("submit a heavy bot");
    }
    let mut bots = Vec::new();
    for name in ["c0", "c1"] {
        let key = ladders(&server)
            .register_bot(pb::RegisterBotRequest {
                ladder: LADDER.into(),
                bot: name.into(),
                version: String::new(),
            })
            .await
            .expect("register")
            .into_inner()
            .bot_key;
        let log = dir.path().join(format!("{name}.log"));
        let child = common::ladder::rust_ladder_bot("gangs-bot-random", &server, LADDER, &key)
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start a connected bot");
        bots.push((child, log));
    }
    let deadline = Instant::now() + Duration::from_secs(150);
    let told = loop {
        let logs: String = bots
            .iter()
            .map(|(_, log)| std::fs::read_to_string(log).unwrap_or_default())
            .collect();
        if let Some(line) = logs
            .lines()
            .find(|l| l.contains("hosted decisions backlog"))
        {
            break line.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no backlog told within 150 s: {logs}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    for (mut child, _) in bots {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(told.contains("--hosted-bot-threads"), "{told}");
    assert!(
        told.contains("limit=1000"),
        "a quarter of the 4000 ms turn: {told}"
    );
    assert!(told.contains("no new game of ladder"), "{told}");
}
