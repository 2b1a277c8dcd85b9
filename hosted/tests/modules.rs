//! The runner against real modules: the example bots (built from source here: the C one with
//! clang and wasi-libc, which CI installs; the Rust one where the `wasm32-wasip1` target is
//! installed) play whole games of both kinds with legal actions, and every hostile module of
//! `tests/hosted/` is refused when submitted or contained with its cause. Reruns of a decision
//! are identical.

use gangs_hosted::seat::{self, SeatDecision};
use gangs_hosted::{Budget, Fault, Runner, DEFAULT_MODULE_BYTES, MAX_STDERR_BYTES};
use gangs_proto::v1 as pb;
use std::sync::OnceLock;

mod examples;

use examples::{hostile, Unbuilt};

/// The C example, built from source with its Makefile (once per test run). Fails, not skips,
/// without clang: CI installs it (.ci/run).
fn c_bot() -> &'static [u8] {
    static MODULE: OnceLock<Vec<u8>> = OnceLock::new();
    MODULE.get_or_init(|| examples::c_example().unwrap_or_else(|why| panic!("{why}")))
}

/// A Rust example (`rust`, `monte-carlo`), built for wasm32-wasip1, or None when that target
/// is not installed (CI adds it where rustup is: .ci/run); a failed build fails the test.
/// Set: the `wasm32-wasip1` target must be installed, and the Rust examples must play.
const REQUIRE_TARGET: &str = "GANGS_REQUIRE_WASM32_WASIP1";

fn rust_bot(folder: &str, module: &str) -> Option<Vec<u8>> {
    match examples::rust_example(folder, module) {
        Ok(bytes) => Some(bytes),
        // Where the target is a requirement (CI sets it where rustup is: .ci/run), its
        // absence fails the test rather than passing it unplayed.
        Err(Unbuilt::NoTarget(why)) if std::env::var_os(REQUIRE_TARGET).is_some() => {
            panic!("{why} ({REQUIRE_TARGET} is set)")
        }
        Err(Unbuilt::NoTarget(why)) => {
            eprintln!("{why}");
            None
        }
        Err(Unbuilt::Failed(why)) => panic!("{why}"),
    }
}

fn runner() -> &'static Runner {
    static RUNNER: OnceLock<Runner> = OnceLock::new();
    RUNNER.get_or_init(Runner::new)
}

/// Plays a whole game of `kind` with `module` deciding for every seat (examples::play_game).
fn play(
    module: &[u8],
    bot: &str,
    kind: &str,
    options: &[(&str, &str)],
    seed: u64,
) -> Vec<pb::Update> {
    let compiled = runner()
        .compile(module, DEFAULT_MODULE_BYTES, &Budget::default())
        .unwrap_or_else(|r| panic!("{bot}: refused: {r}"));
    examples::play_game(runner(), &compiled, bot, kind, options, seed)
}

#[test]
fn the_c_example_plays_whole_games_of_both_kinds_with_legal_actions() {
    let bot = c_bot();
    assert!(bot.starts_with(b"\0asm"));
    let gang_of_four = play(
        bot,
        "c-bot@1",
        "gang-of-four",
        &[("target_score", "30")],
        11,
    );
    // It chose among several legal actions, not only answered forced moves.
    let choices = gang_of_four
        .iter()
        .filter(|u| u.legal_actions.len() > 1)
        .count();
    assert!(
        choices > 0,
        "{} decisions, none a choice",
        gang_of_four.len()
    );
    play(bot, "c-bot@1", "the-gang", &[], 12);
    // Advanced mode: specialists (proposals, votes, chosen cards) and challenges (guesses).
    for seed in [13, 14, 15] {
        play(bot, "c-bot@1", "the-gang", &[("mode", "advanced")], seed);
    }
}

#[test]
fn the_rust_example_plays_whole_games_of_both_kinds_with_legal_actions() {
    let Some(bot) = rust_bot("rust", "gangs-hosted-bot") else {
        return;
    };
    play(
        &bot,
        "rust-bot@1",
        "gang-of-four",
        &[("target_score", "30")],
        21,
    );
    play(&bot, "rust-bot@1", "the-gang", &[("mode", "advanced")], 22);
}

#[test]
fn the_monte_carlo_example_plays_whole_games_of_both_kinds_with_legal_actions() {
    let Some(bot) = rust_bot("monte-carlo", "gangs-monte-carlo-bot") else {
        return;
    };
    let budget = Budget::default();
    for (kind, options, seed) in [
        ("gang-of-four", &[("target_score", "30")][..], 31),
        (
            "gang-of-four",
            &[("players", "3"), ("target_score", "20")][..],
            32,
        ),
        ("the-gang", &[][..], 33),
        ("the-gang", &[("mode", "advanced")][..], 34),
    ] {
        let updates = play(&bot, "mc-bot@1", kind, options, seed);
        // It searched real choices within its fuel: a choice among several actions is
        // answered by its search, and a rerun of it is identical.
        let chosen = updates
            .iter()
            .filter(|u| {
                use pb::game_action::Game;
                u.legal_actions.len() > 1
                    && u.legal_actions.iter().any(|a| match &a.game {
                        Some(Game::GangOfFour(a)) => {
                            !matches!(a.kind, Some(pb::gang_of_four_action::Kind::GiveBack(_)))
                        }
                        Some(Game::TheGang(a)) => {
                            matches!(a.kind, Some(pb::the_gang_action::Kind::Take(_)))
                        }
                        None => false,
                    })
            })
            .nth(3)
            .unwrap_or_else(|| panic!("{kind}: fewer than four choices to search"));
        let compiled = runner()
            .compile(&bot, DEFAULT_MODULE_BYTES, &budget)
            .unwrap();
        let decide = || {
            seat::decide(
                runner(),
                &compiled,
                &budget,
                SeatDecision {
                    kind,
                    update: chosen,
                    record_unix_ms: 1_700_000_000_000,
                    seed,
                    bot: "mc-bot@1",
                },
            )
        };
        let once = decide();
        assert!(once.action.is_ok(), "{kind}: {once:?}");
        let log = stderr(&once);
        assert!(
            log.contains("playouts") || log.contains("sampled showdowns"),
            "{kind}: not a searched decision: {log}"
        );
        assert_eq!(decide(), once, "{kind}: a rerun differs");
    }
}

/// Runs `module` once on a real Gang of Four lead, where action 0 is legal.
fn run_once(module: &[u8], budget: &Budget, seq: u64) -> seat::Decided {
    let options = gangs_games::parse_options("gang-of-four", None, &[]).unwrap();
    let mut game = gangs_games::new_game("gang-of-four", Some(&options), 5, None).unwrap();
    game.start();
    let seat = game.actors()[0];
    let update = gangs_games::update::in_process_update(&*game, seat, seq, &[]);
    let compiled = runner()
        .compile(module, DEFAULT_MODULE_BYTES, budget)
        .unwrap_or_else(|r| panic!("refused: {r}"));
    seat::decide(
        runner(),
        &compiled,
        budget,
        SeatDecision {
            kind: "gang-of-four",
            update: &update,
            record_unix_ms: 1_700_000_000_000,
            seed: 5,
            bot: "probe@1",
        },
    )
}

fn first_legal() -> pb::GameAction {
    let options = gangs_games::parse_options("gang-of-four", None, &[]).unwrap();
    let mut game = gangs_games::new_game("gang-of-four", Some(&options), 5, None).unwrap();
    game.start();
    game.legal_actions(game.actors()[0])[0].clone()
}

fn stderr(decided: &seat::Decided) -> String {
    String::from_utf8_lossy(&decided.outcome.stderr).into_owned()
}

#[test]
fn a_decision_rerun_is_identical_and_another_seq_draws_other_random_bytes() {
    let budget = Budget::default();
    let probe = hostile("nondeterminism");
    let first = run_once(&probe, &budget, 7);
    assert_eq!(first.action, Ok(first_legal()));
    assert_eq!(run_once(&probe, &budget, 7), first, "a rerun differs");
    let log = stderr(&first);
    // One argument ("bot\0": 4 bytes), no environment, clocks of 1 ns resolution that start
    // at the record's time and advance with the fuel, never with the wall clock.
    assert!(
        log.ends_with(" resolution=1 args=1 args_bytes=4 environ=0\n"),
        "{log}"
    );
    let field = |name: &str| -> u64 {
        let start = log.find(&format!(" {name}=")).unwrap() + name.len() + 2;
        log[start..]
            .split(' ')
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let record_ns = 1_700_000_000_000u64 * 1_000_000;
    let (realtime, later) = (field("realtime"), field("later"));
    assert!(
        realtime >= record_ns && realtime < record_ns + 1_000_000,
        "{log}"
    );
    assert!(
        later > realtime + 100_000,
        "the work between readings used fuel: {log}"
    );
    assert!(later <= record_ns + first.outcome.fuel_used, "{log}");
    let other = run_once(&probe, &budget, 8);
    assert_ne!(
        log.split(" realtime").next(),
        stderr(&other).split(" realtime").next(),
        "another decision draws other bytes"
    );
    // The C example too, on real updates of both games.
    let c = c_bot();
    for module in [c, &probe[..]] {
        let once = run_once(module, &budget, 3);
        assert_eq!(run_once(module, &budget, 3), once);
    }
    for kind in ["gang-of-four", "the-gang"] {
        let options = gangs_games::parse_options(kind, None, &[]).unwrap();
        let mut game = gangs_games::new_game(kind, Some(&options), 9, None).unwrap();
        game.start();
        let update = gangs_games::update::in_process_update(&*game, game.actors()[0], 4, &[]);
        let compiled = runner().compile(c, DEFAULT_MODULE_BYTES, &budget).unwrap();
        let decide = || {
            seat::decide(
                runner(),
                &compiled,
                &budget,
                SeatDecision {
                    kind,
                    update: &update,
                    record_unix_ms: 1_700_000_000_000,
                    seed: 9,
                    bot: "c-bot@1",
                },
            )
        };
        let once = decide();
        assert!(once.action.is_ok(), "{kind}: {once:?}");
        assert_eq!(decide(), once, "{kind}: a rerun differs");
    }
}

#[test]
fn runaway_modules_are_stopped_by_their_fuel() {
    let budget = Budget {
        fuel: 20_000_000,
        ..Budget::default()
    };
    for name in ["infinite_loop", "clock_spin"] {
        let decided = run_once(&hostile(name), &budget, 1);
        assert_eq!(decided.action, Err(Fault::Fuel), "{name}");
        assert_eq!(decided.outcome.fuel_used, budget.fuel, "{name}");
        assert_eq!(decided.action.unwrap_err().cause(), "fuel");
    }
}

#[test]
fn a_memory_bomb_is_stopped_at_the_budget_and_a_huge_memory_refused_at_submit() {
    let budget = Budget::default();
    let decided = run_once(&hostile("memory_grow"), &budget, 1);
    assert_eq!(decided.action, Err(Fault::Memory));
    assert_eq!(Fault::Memory.cause(), "memory");
    let refusal = runner()
        .compile(&hostile("memory_initial"), DEFAULT_MODULE_BYTES, &budget)
        .err()
        .expect("a 128 MiB initial memory is refused");
    assert!(refusal.0.contains("memory"), "{refusal}");
    assert!(
        refusal.0.contains(&budget.memory_bytes.to_string()),
        "{refusal}"
    );
    // With a budget that has room for it, the same module loads: the refusal was the budget's.
    let roomy = Budget {
        memory_bytes: 256 << 20,
        ..Budget::default()
    };
    assert!(runner()
        .compile(&hostile("memory_initial"), DEFAULT_MODULE_BYTES, &roomy)
        .is_ok());
}

#[test]
fn a_trap_is_the_trap_cause() {
    let decided = run_once(&hostile("trap"), &Budget::default(), 1);
    assert!(matches!(decided.action, Err(Fault::Trap(_))), "{decided:?}");
    assert_eq!(decided.action.unwrap_err().cause(), "trap");
}

#[test]
fn a_stdout_flood_is_bad_output_cut_short_and_a_stderr_flood_only_a_long_log() {
    let budget = Budget::default();
    let flood = run_once(&hostile("stdout_flood"), &budget, 1);
    assert!(
        matches!(&flood.action, Err(Fault::BadOutput(why)) if why.contains("without a newline")),
        "{:?}",
        flood.action
    );
    // Stopped as soon as it passed the limit, not when its fuel ran out.
    assert!(
        flood.outcome.fuel_used < 1_000_000,
        "{}",
        flood.outcome.fuel_used
    );
    let chatty = run_once(&hostile("stderr_flood"), &budget, 1);
    assert_eq!(chatty.action, Ok(first_legal()));
    assert_eq!(chatty.outcome.stderr.len(), MAX_STDERR_BYTES);
    assert!(chatty.outcome.stderr.iter().all(|&b| b == b'x'));
}

#[test]
fn file_and_socket_calls_are_answered_with_errors_and_reach_nothing() {
    let budget = Budget::default();
    let files = run_once(&hostile("file_open"), &budget, 1);
    assert_eq!(
        stderr(&files),
        "fd_prestat_get(3)=8 path_open(3, etc/passwd)=52 path_open(0, /etc/passwd)=52 fd_read(3)=8\n"
    );
    assert_eq!(files.action, Ok(first_legal()));
    let sockets = run_once(&hostile("socket"), &budget, 1);
    assert_eq!(
        stderr(&sockets),
        "sock_accept(3)=52 sock_recv(3)=52 sock_send(3)=52 sock_shutdown(3)=52\n"
    );
    assert_eq!(sockets.action, Ok(first_legal()));
}

#[test]
fn a_module_that_sleeps_is_answered_at_once_on_its_virtual_clock() {
    let decided = run_once(&hostile("clock_sleep"), &Budget::default(), 1);
    assert_eq!(decided.action, Ok(first_legal()));
    let log = stderr(&decided);
    assert!(
        log.starts_with("poll_oneoff=0 events=1 waited_ns="),
        "{log}"
    );
    let waited: u64 = log.trim_end().rsplit('=').next().unwrap().parse().unwrap();
    // An hour was asked for; the clock moved by the fuel of a few calls.
    assert!(waited < 10_000, "{log}");
}

#[test]
fn answers_that_are_not_a_legal_action_are_bad_output_quoting_them() {
    let budget = Budget::default();
    for (name, quoted) in [
        ("illegal_index", "1000000"),
        ("illegal_words", "fly to the moon"),
    ] {
        let decided = run_once(&hostile(name), &budget, 1);
        let Err(Fault::BadOutput(why)) = &decided.action else {
            panic!("{name}: {decided:?}")
        };
        assert!(why.contains(quoted), "{name}: {why}");
        assert_eq!(decided.outcome.answer.as_deref(), Ok(quoted));
    }
    let silent = run_once(&hostile("silent"), &budget, 1);
    assert!(
        matches!(silent.action, Err(Fault::BadOutput(_))),
        "{silent:?}"
    );
    assert_eq!(silent.action.unwrap_err().cause(), "bad output");
}

#[test]
fn modules_that_cannot_be_hosted_bots_are_refused_at_submit_naming_why() {
    let budget = Budget::default();
    let refused = |module: &[u8]| {
        runner()
            .compile(module, DEFAULT_MODULE_BYTES, &budget)
            .err()
            .expect("refused")
            .0
    };
    let foreign = refused(&hostile("foreign_import"));
    assert!(foreign.contains("env.steal"), "{foreign}");
    assert!(foreign.contains("wasi_snapshot_preview1"), "{foreign}");
    let library = refused(&hostile("no_start"));
    assert!(library.contains("_start"), "{library}");
    // 100 MB: a valid module (a custom section carries the bulk), refused by its size alone.
    let mut huge = hostile("trap");
    let payload = 100 * 1000 * 1000;
    let name = b"bulk";
    let mut section = Vec::new();
    leb128(&mut section, name.len() as u64);
    section.extend_from_slice(name);
    let size = section.len() + payload;
    huge.push(0);
    leb128(&mut huge, size as u64);
    huge.extend_from_slice(&section);
    huge.resize(huge.len() + payload, 0);
    assert!(compiles_with_room(&huge));
    let big = refused(&huge);
    assert!(big.contains("--max-module-bytes"), "{big}");
    assert!(big.contains(&huge.len().to_string()), "{big}");
}

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

/// The 100 MB module is well-formed: with room enough, the runner compiles it.
fn compiles_with_room(module: &[u8]) -> bool {
    runner()
        .compile(module, u64::MAX, &Budget::default())
        .is_ok()
}

#[test]
fn every_hostile_module_decides_the_same_twice() {
    let budget = Budget {
        fuel: 20_000_000,
        ..Budget::default()
    };
    for name in [
        "infinite_loop",
        "clock_spin",
        "clock_sleep",
        "memory_grow",
        "stdout_flood",
        "stderr_flood",
        "trap",
        "file_open",
        "socket",
        "illegal_index",
        "illegal_words",
        "silent",
        "nondeterminism",
    ] {
        let module = hostile(name);
        assert_eq!(
            run_once(&module, &budget, 2),
            run_once(&module, &budget, 2),
            "{name}"
        );
    }
}

#[test]
fn fifty_hosted_bots_deciding_at_once_each_get_their_own_answer() {
    use gangs_hosted::pool::Pool;
    use std::sync::mpsc::channel;
    let budget = Budget {
        fuel: 20_000_000,
        ..Budget::default()
    };
    let compiled = [
        runner()
            .compile(c_bot(), DEFAULT_MODULE_BYTES, &budget)
            .unwrap(),
        runner()
            .compile(&hostile("infinite_loop"), DEFAULT_MODULE_BYTES, &budget)
            .unwrap(),
        runner()
            .compile(&hostile("memory_grow"), DEFAULT_MODULE_BYTES, &budget)
            .unwrap(),
    ];
    let options = gangs_games::parse_options("gang-of-four", None, &[]).unwrap();
    let mut game = gangs_games::new_game("gang-of-four", Some(&options), 5, None).unwrap();
    game.start();
    let update = gangs_games::update::in_process_update(&*game, game.actors()[0], 1, &[]);
    let pool = Pool::new(2, 64, 64);
    let (done, results) = channel();
    for k in 0..50usize {
        let bot = compiled[k % 3].clone();
        let update = update.clone();
        let done = done.clone();
        pool.spawn(&format!("crowd-{}", k % 3), move || {
            let decided = seat::decide(
                runner(),
                &bot,
                &budget,
                SeatDecision {
                    kind: "gang-of-four",
                    update: &update,
                    record_unix_ms: 1_700_000_000_000,
                    seed: 5,
                    bot: "crowd@1",
                },
            );
            let fuel = decided.outcome.fuel_used;
            done.send((k, decided)).unwrap();
            fuel
        })
        .expect("the queue has room for 50");
    }
    drop(done);
    let mut seen = 0;
    for (k, decided) in results {
        seen += 1;
        match k % 3 {
            0 => assert!(decided.action.is_ok(), "{k}: {decided:?}"),
            1 => assert_eq!(decided.action, Err(Fault::Fuel), "{k}"),
            _ => assert_eq!(decided.action, Err(Fault::Memory), "{k}"),
        }
    }
    assert_eq!(seen, 50);
}
