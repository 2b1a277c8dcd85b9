//! End to end: every hostile hosted module of the product's list against one real server, while
//! connected clients play ordinary games flat out beside them. Each module is refused at
//! submit with its cause (an import outside WASI, a module without `_start`, a sample decision
//! that loops, spins on the clock, grows its memory, floods stdout, traps, prints no line or an
//! illegal action, a 100 MB upload refused by size), or contained at run time: file and socket
//! calls and a sleep are answered without effect and the bot plays on; modules that pass the
//! sample decision and then loop, grow, flood, trap or print an illegal action in a real game
//! get their seat's default logged as a `timed_out` with the cause, their game aborted and the
//! bot paused; 50 hosted bots deciding at once each decide. Throughout, every ordinary `Act`
//! is accepted and the server answers health checks. The ordinary games' Act latencies before
//! and during are printed (p50, p99), never asserted: docs/hosted-bots.md records them.

use crate::common;

use common::hosted::{first_action_bot, hostile, keyed_server, sample_only};
use common::ladder::{ladder_games, standings};
use common::*;
use gangs_proto::auth::{ApiKey, KeyedClient, KeyedLaddersClient};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::Code;

const ADMIN: &str = "admin-secret-hostile-1";
const PLAYER: &str = "player-secret-hostile-2";
const LADDER: &str = "hostile";
const KIND: &str = "gang-of-four";
/// Ordinary games the test plays at once, and the least number of actions each plays per phase.
const ORDINARY_GAMES: usize = 4;
const ORDINARY_ACTIONS: usize = 250;
/// Hosted bots of the well-behaved, compute-heavy module entered at once.
const HEAVY_BOTS: usize = 50;
/// Its loop turns per decision: about 56 million units of fuel, over half the ladder's budget.
const HEAVY_SPIN: u32 = 7_000_000;
/// Decisions each heavy bot must be seen to make: the load lasts beyond the first matches.
const HEAVY_DECISIONS: usize = 5;
/// The ladder's budget per decision: a third of the default fuel and a quarter of its memory,
/// so that a loop or a bomb costs little wall time.
const FUEL: u64 = 100_000_000;
const MEMORY_BYTES: u64 = 16 << 20;
/// How long the hostile bots get to be matched, fail and be paused, and the heavy ones to decide.
const WITHIN: Duration = Duration::from_secs(240);

/// A valid module of over 100 MB (a custom section carries the bulk) that would trap if run.
fn hundred_megabytes() -> Vec<u8> {
    fn leb128(out: &mut Vec<u8>, mut value: u64) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let mut module = hostile("trap");
    let payload = 100 * 1000 * 1000;
    let mut section = Vec::new();
    leb128(&mut section, 4);
    section.extend_from_slice(b"bulk");
    module.push(0);
    leb128(&mut module, (section.len() + payload) as u64);
    module.extend_from_slice(&section);
    module.resize(module.len() + payload, 0);
    module
}

/// The modules that pass the sample decision and misbehave in play: (bot, what it does in
/// play, the start of the cause its seat's timeout must be logged with, a word of the cause).
fn misbehaving_in_play() -> Vec<(&'static str, Vec<u8>, &'static str, &'static str)> {
    vec![
        (
            "loops",
            sample_only("(loop $forever (br $forever))"),
            "fuel",
            "fuel",
        ),
        (
            "grows",
            sample_only(
                "(loop $more (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1)))) unreachable",
            ),
            "memory",
            "memory",
        ),
        (
            "floods",
            sample_only(
                "(i32.store (i32.const 0) (i32.const 4096)) (i32.store (i32.const 4) (i32.const 4096))
                 (loop $again (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))) (br $again))",
            ),
            "bad output",
            "newline",
        ),
        ("traps", sample_only("unreachable"), "trap", "unreachable"),
        (
            "illegal",
            sample_only("(call $say (i32.const 80) (i32.const 8))"),
            "bad output",
            "1000000",
        ),
    ]
}

/// Modules answered without effect: they act in play, and are never charged a failure.
const CONTAINED: [&str; 4] = ["file_open", "socket", "clock_sleep", "stderr_flood"];

fn channel(server: &Server) -> tonic::transport::Channel {
    gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect_lazy()
}

fn ladders(server: &Server) -> KeyedLaddersClient {
    ApiKey::new(Some(ADMIN))
        .unwrap()
        .ladders(channel(server))
        // The 100 MB module goes out whole: the server must refuse it by its size.
        .max_encoding_message_size(usize::MAX)
}

fn games(server: &Server, key: &str) -> KeyedClient {
    ApiKey::new(Some(key)).unwrap().client(channel(server))
}

fn submit(bot: &str, module: Vec<u8>) -> pb::SubmitBotRequest {
    pb::SubmitBotRequest {
        ladder: LADDER.into(),
        bot: bot.into(),
        version: String::new(),
        module,
    }
}

/// What the ordinary games' players measured.
#[derive(Default)]
struct Played {
    latencies: Vec<Duration>,
    game_ids: Vec<String>,
}

/// Plays ordinary games of `KIND`, each created by `creator` (the admin key: the player key
/// may not create games) with every seat taken by `client` (the player key), one random legal
/// action after another (a local replica knows them), each new game dealt from the next seed,
/// until it has played `at_least` actions and `stop` is set. Every call must be accepted: an
/// error ends it with the error.
async fn play_ordinary(
    mut creator: KeyedClient,
    mut client: KeyedClient,
    mut seed: u64,
    at_least: usize,
    stop: Arc<AtomicBool>,
) -> Result<Played, String> {
    let options = gangs_games::parse_options(KIND, None, &[]).map_err(|e| e.to_string())?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut played = Played::default();
    loop {
        let id = creator
            .create_game(pb::CreateGameRequest {
                kind: KIND.into(),
                options: Some(options),
                seed: Some(seed),
                ..Default::default()
            })
            .await
            .map_err(|s| format!("create: {s:?}"))?
            .into_inner()
            .game_id;
        let mut replica =
            gangs_games::new_game(KIND, Some(&options), seed, None).map_err(|e| e.to_string())?;
        let mut tokens = Vec::new();
        for seat in 0..replica.players() {
            let joined = client
                .join_game(pb::JoinGameRequest {
                    game_id: id.clone(),
                    seat: Some(seat as u32),
                    name: format!("ordinary{seat}"),
                    ..Default::default()
                })
                .await
                .map_err(|s| format!("join {id}: {s:?}"))?;
            tokens.push(joined.into_inner().token);
        }
        replica.start();
        played.game_ids.push(id.clone());
        while !replica.is_over() {
            if played.latencies.len() >= at_least && stop.load(Ordering::Relaxed) {
                return Ok(played);
            }
            let Some((seat, actions)) = replica
                .actors()
                .into_iter()
                .map(|seat| (seat, replica.legal_actions(seat)))
                .find(|(_, actions)| !actions.is_empty())
            else {
                return Err(format!("game {id} waits for no seat with a legal action"));
            };
            let action = actions[rng.random_range(0..actions.len())].clone();
            let started = Instant::now();
            client
                .act(pb::ActRequest {
                    game_id: id.clone(),
                    token: tokens[seat].clone(),
                    action: Some(action.clone()),
                    expected_seq: None,
                    action_id: String::new(),
                })
                .await
                .map_err(|s| format!("act in {id}: {s:?}"))?;
            played.latencies.push(started.elapsed());
            replica
                .act(seat, &action)
                .map_err(|e| format!("the replica of {id}: {e}"))?;
        }
        seed += 1;
    }
}

/// Starts `ORDINARY_GAMES` players (seeds from `first_seed`), each playing at least
/// `ORDINARY_ACTIONS` actions and on until `stop` is set.
fn start_ordinary(
    server: &Server,
    first_seed: u64,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<Result<Played, String>>> {
    (0..ORDINARY_GAMES)
        .map(|i| {
            tokio::spawn(play_ordinary(
                games(server, ADMIN),
                games(server, PLAYER),
                first_seed + 1000 * i as u64,
                ORDINARY_ACTIONS,
                stop.clone(),
            ))
        })
        .collect()
}

/// The players' results merged; fails the test on any refused call.
async fn finish_ordinary(
    players: Vec<tokio::task::JoinHandle<Result<Played, String>>>,
    phase: &str,
) -> Played {
    let mut all = Played::default();
    for player in players {
        let played = player
            .await
            .expect("an ordinary player panicked")
            .unwrap_or_else(|e| panic!("an ordinary game was refused a call {phase}: {e}"));
        all.latencies.extend(played.latencies);
        all.game_ids.extend(played.game_ids);
    }
    all
}

/// Nearest-rank quantile `p` of `latencies`.
fn quantile(latencies: &[Duration], p: f64) -> Duration {
    let mut sorted = latencies.to_vec();
    sorted.sort();
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank]
}

async fn assert_healthy(server: &Server) {
    let answer = tonic_health::pb::health_client::HealthClient::new(channel(server))
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .expect("the server answers its health check")
        .into_inner();
    assert_eq!(
        answer.status(),
        tonic_health::pb::health_check_response::ServingStatus::Serving
    );
}

/// A game's log, as far as it is now.
async fn game_log(client: &mut KeyedClient, game_id: &str) -> Vec<pb::LogRecord> {
    let mut stream = client
        .get_log(pb::GetLogRequest {
            game_id: game_id.into(),
            from_seq: 0,
        })
        .await
        .expect("a ladder game's log")
        .into_inner();
    let mut records = Vec::new();
    while let Some(record) = stream.message().await.expect("a log record") {
        records.push(record);
    }
    records
}

/// What the ladder's games' logs say of each entry ("bot@version") so far: its actions by
/// game, and the causes of its seats' timeouts (empty for a clock's), with the game of each.
#[derive(Default, Debug)]
struct Seen {
    acted: HashMap<String, HashMap<String, usize>>,
    causes: HashMap<String, Vec<(String, String)>>,
}

impl Seen {
    /// The actions of `name` in every game read.
    fn actions(&self, name: &str) -> usize {
        self.acted.get(name).map_or(0, |games| games.values().sum())
    }
}

/// Reads the logs of the ladder's games that seat an entry of `wanted` (finished games once).
async fn look(
    admin: &mut KeyedLaddersClient,
    logs: &mut KeyedClient,
    wanted: &HashSet<String>,
    read: &mut HashSet<String>,
    seen: &mut Seen,
) {
    for game in ladder_games(admin, LADDER, 500).await {
        // Matched, but not created yet: no game id, no log.
        if game.game_id.is_empty()
            || read.contains(&game.game_id)
            || !game.names.iter().any(|n| wanted.contains(n))
        {
            continue;
        }
        if game.finished_unix_ms.is_some() {
            read.insert(game.game_id.clone());
        }
        let mut acted: HashMap<&String, usize> = HashMap::new();
        for record in game_log(logs, &game.game_id).await {
            let (seat, cause) = match record.record {
                Some(Record::Acted(acted)) => (acted.seat, None),
                Some(Record::TimedOut(timed_out)) => (timed_out.seat, Some(timed_out.cause)),
                _ => continue,
            };
            let Some(name) = game.names.get(seat as usize) else {
                continue;
            };
            match cause {
                None => *acted.entry(name).or_default() += 1,
                Some(cause) => {
                    let causes = seen.causes.entry(name.clone()).or_default();
                    if !causes
                        .iter()
                        .any(|(g, c)| *g == game.game_id && *c == cause)
                    {
                        causes.push((game.game_id.clone(), cause));
                    }
                }
            }
        }
        // The log is read whole each time: the counts replace the last reading's.
        for (name, count) in acted {
            seen.acted
                .entry(name.clone())
                .or_default()
                .insert(game.game_id.clone(), count);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_modules_are_refused_or_contained_while_other_games_play_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = keyed_server(dir.path(), ADMIN, PLAYER);
    let mut admin = ladders(&server);
    admin
        .create_ladder(pb::CreateLadderRequest {
            name: LADDER.into(),
            kind: KIND.into(),
            players: Some(3),
            options: [("target_score".to_string(), "1".to_string())].into(),
            turn_ms: Some(5000),
            house_bots: vec!["random".into(), "greedy".into()],
            hosted_fuel: Some(FUEL),
            hosted_memory_bytes: Some(MEMORY_BYTES),
            ..Default::default()
        })
        .await
        .expect("create the ladder");

    // Before: the ordinary games alone.
    let stop = Arc::new(AtomicBool::new(true));
    let before = finish_ordinary(start_ordinary(&server, 1, &stop), "before").await;

    // During: the same play, from the first hostile upload to the last check.
    let stop = Arc::new(AtomicBool::new(false));
    let during_began = Instant::now();
    let during_players = start_ordinary(&server, 50_000, &stop);

    // Refused at submit, each naming its cause.
    let memory_budget = MEMORY_BYTES.to_string();
    let refusals: Vec<(&str, Vec<u8>, Code, Vec<&str>)> = vec![
        (
            "foreign_import",
            hostile("foreign_import"),
            Code::InvalidArgument,
            vec!["env.steal"],
        ),
        (
            "no_start",
            hostile("no_start"),
            Code::InvalidArgument,
            vec!["_start"],
        ),
        (
            "infinite_loop",
            hostile("infinite_loop"),
            Code::InvalidArgument,
            vec!["sample decision", "fuel"],
        ),
        (
            "clock_spin",
            hostile("clock_spin"),
            Code::InvalidArgument,
            vec!["sample decision", "fuel"],
        ),
        (
            "memory_grow",
            hostile("memory_grow"),
            Code::InvalidArgument,
            vec!["sample decision", "memory"],
        ),
        (
            "memory_initial",
            hostile("memory_initial"),
            Code::InvalidArgument,
            vec!["memory", &memory_budget],
        ),
        (
            "stdout_flood",
            hostile("stdout_flood"),
            Code::InvalidArgument,
            vec!["sample decision", "bad output"],
        ),
        (
            "trap",
            hostile("trap"),
            Code::InvalidArgument,
            vec!["sample decision", "trap"],
        ),
        (
            "illegal_index",
            hostile("illegal_index"),
            Code::InvalidArgument,
            vec!["sample decision", "bad output", "1000000"],
        ),
        (
            "illegal_words",
            hostile("illegal_words"),
            Code::InvalidArgument,
            vec!["sample decision", "bad output", "fly to the moon"],
        ),
        (
            "silent",
            hostile("silent"),
            Code::InvalidArgument,
            vec!["sample decision", "bad output"],
        ),
        (
            "huge",
            hundred_megabytes(),
            Code::ResourceExhausted,
            vec!["--max-module-bytes"],
        ),
    ];
    let refused_names: Vec<String> = refusals.iter().map(|r| r.0.to_string()).collect();
    for (bot, module, code, words) in refusals {
        let status = admin
            .submit_bot(submit(bot, module))
            .await
            .expect_err(&format!("{bot} is refused at submit"));
        eprintln!("{bot} refused: {:?}: {}", status.code(), status.message());
        assert_eq!(status.code(), code, "{bot}: {status:?}");
        for word in words {
            assert!(
                status.message().contains(word),
                "{bot}: {word:?} not in {:?}",
                status.message()
            );
        }
    }
    let entered: Vec<String> = standings(&mut admin, LADDER)
        .await
        .standings
        .into_iter()
        .map(|row| row.bot)
        .collect();
    assert!(
        !entered.iter().any(|bot| refused_names.contains(bot)),
        "a refused module was entered: {entered:?}"
    );

    // Entered: the contained ones, those that misbehave in play, and the heavy ones.
    for bot in CONTAINED {
        admin
            .submit_bot(submit(bot, hostile(bot)))
            .await
            .unwrap_or_else(|s| panic!("{bot} passes its sample decision: {s:?}"));
    }
    let misbehaving = misbehaving_in_play();
    for (bot, module, _, _) in &misbehaving {
        admin
            .submit_bot(submit(bot, module.clone()))
            .await
            .unwrap_or_else(|s| panic!("{bot} passes its sample decision: {s:?}"));
    }
    let heavy = first_action_bot(HEAVY_SPIN);
    let heavy_fuel = admin
        .submit_bot(submit("heavy0", heavy.clone()))
        .await
        .expect("the heavy bot passes its sample decision")
        .into_inner()
        .sample_fuel;
    let submits: Vec<_> = (1..HEAVY_BOTS)
        .map(|i| {
            let mut admin = admin.clone();
            let module = heavy.clone();
            tokio::spawn(async move {
                admin
                    .submit_bot(submit(&format!("heavy{i}"), module))
                    .await
                    .map(|_| ())
            })
        })
        .collect();
    for submitted in submits {
        submitted
            .await
            .expect("a submit")
            .unwrap_or_else(|s| panic!("a heavy bot passes its sample decision: {s:?}"));
    }

    // Until every hostile cause is logged and paused, every contained bot has acted and every
    // heavy bot has decided `HEAVY_DECISIONS` times.
    let mut logs = games(&server, ADMIN);
    let mut pending: HashSet<String> = misbehaving
        .iter()
        .map(|(bot, ..)| format!("{bot}@1"))
        .chain(CONTAINED.iter().map(|bot| format!("{bot}@1")))
        .chain((0..HEAVY_BOTS).map(|i| format!("heavy{i}@1")))
        .collect();
    let wanted = pending.clone();
    let mut read = HashSet::new();
    let mut seen = Seen::default();
    let deadline = Instant::now() + WITHIN;
    while !pending.is_empty() {
        assert!(
            Instant::now() < deadline,
            "within {WITHIN:?}, still not seen to behave as they must: {pending:?}; seen {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_healthy(&server).await;
        look(&mut admin, &mut logs, &wanted, &mut read, &mut seen).await;
        let table = standings(&mut admin, LADDER).await.standings;
        let row = |bot: &str| {
            table
                .iter()
                .find(|r| r.bot == bot)
                .unwrap_or_else(|| panic!("{bot} is entered: {table:?}"))
                .clone()
        };
        for (bot, _, cause, word) in &misbehaving {
            let name = format!("{bot}@1");
            let logged = seen.causes.get(&name).is_some_and(|c| {
                c.iter()
                    .any(|(_, c)| c.starts_with(cause) && c.contains(word))
            });
            // Paused, saying what its module did and how to come back.
            let row = row(bot);
            let paused = row.pause_reason() == pb::ladder_event::paused::Reason::NoFirstAction
                && row.state_reason.contains(&format!("({cause}"))
                && row.state_reason.contains("submit a fixed version");
            if logged && paused {
                pending.remove(&name);
            }
        }
        for bot in CONTAINED {
            let name = format!("{bot}@1");
            if seen.actions(&name) > 0 {
                pending.remove(&name);
            }
        }
        for i in 0..HEAVY_BOTS {
            let name = format!("heavy{i}@1");
            if seen.actions(&name) >= HEAVY_DECISIONS {
                pending.remove(&name);
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let during = finish_ordinary(during_players, "during").await;
    let during_took = during_began.elapsed();

    // What the logs hold: the misbehaving bots' only causes are their own; no cause was ever
    // logged for a contained or heavy bot (a clock's timeout, the host's, has none).
    for (bot, _, cause, _) in &misbehaving {
        for (game, logged) in &seen.causes[&format!("{bot}@1")] {
            assert!(
                logged.is_empty() || logged.starts_with(cause),
                "{bot} in {game}: {logged}"
            );
        }
    }
    for (name, causes) in &seen.causes {
        if !misbehaving
            .iter()
            .any(|(bot, ..)| format!("{bot}@1") == *name)
        {
            assert!(
                causes.iter().all(|(_, c)| c.is_empty()),
                "{name} was charged a failure: {causes:?}"
            );
        }
    }
    let table = standings(&mut admin, LADDER).await.standings;
    for row in table.iter().filter(|r| CONTAINED.contains(&r.bot.as_str())) {
        assert!(!row.paused, "{row:?}");
    }
    // A misbehaving bot's failed game is aborted, not rated.
    let rated = ladder_games(&mut admin, LADDER, 500).await;
    for (bot, ..) in &misbehaving {
        let name = format!("{bot}@1");
        let failed: HashSet<&String> = seen.causes[&name]
            .iter()
            .filter(|(_, c)| !c.is_empty())
            .map(|(g, _)| g)
            .collect();
        for game in rated.iter().filter(|g| failed.contains(&g.game_id)) {
            if game.finished_unix_ms.is_some() {
                assert!(game.void, "{name}'s failed game was rated: {game:?}");
            }
        }
    }

    // The ordinary games: none timed out (their Acts were all accepted above).
    let mut player = games(&server, PLAYER);
    for id in before.game_ids.iter().chain(&during.game_ids) {
        let timed_out = game_log(&mut player, id)
            .await
            .into_iter()
            .filter(|r| matches!(r.record, Some(Record::TimedOut(_))))
            .count();
        assert_eq!(timed_out, 0, "ordinary game {id} had a timeout");
    }
    assert_healthy(&server).await;

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    eprintln!(
        "ordinary Act latency before: {} acts, p50 {:.2} ms, p99 {:.2} ms",
        before.latencies.len(),
        ms(quantile(&before.latencies, 0.5)),
        ms(quantile(&before.latencies, 0.99))
    );
    eprintln!(
        "ordinary Act latency during (hostile modules, {HEAVY_BOTS} heavy hosted bots): {} acts, p50 {:.2} ms, p99 {:.2} ms",
        during.latencies.len(),
        ms(quantile(&during.latencies, 0.5)),
        ms(quantile(&during.latencies, 0.99))
    );
    let hosted_actions: usize = seen.acted.keys().map(|name| seen.actions(name)).sum();
    eprintln!(
        "during lasted {during_took:.1?}: {hosted_actions} hosted decisions played by the contained and heavy bots (heavy: {heavy_fuel} fuel each)"
    );
    for (bot, ..) in &misbehaving {
        let name = format!("{bot}@1");
        if let Some((game, cause)) = seen.causes[&name].iter().find(|(_, c)| !c.is_empty()) {
            eprintln!("{name} in {game}: {cause}");
        }
    }
}
