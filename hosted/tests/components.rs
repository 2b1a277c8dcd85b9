//! The runner against components: the Python example (built from source with componentize-py,
//! installed on first use when missing) plays whole games of both kinds with legal actions, a
//! rerun of a decision is identical to the fuel, and hostile Python (an endless loop, a memory
//! bomb, a socket, a file, a long sleep) is contained with the cause in the bot's log.
//! Components for another world, or importing more than WASI 0.2, are refused naming why.

use gangs_hosted::compile::{ArtefactCache, CacheUse};
use gangs_hosted::{Bot, Budget, Decision, Fault, Runner, DEFAULT_MODULE_BYTES};
use std::path::PathBuf;
use std::sync::OnceLock;

mod examples;

fn runner() -> &'static Runner {
    static RUNNER: OnceLock<Runner> = OnceLock::new();
    RUNNER.get_or_init(Runner::new)
}

/// Compiled components are kept here across tests and runs (the server's cache, by SHA-256):
/// an interpreter takes the compiler seconds.
fn cache() -> ArtefactCache {
    ArtefactCache::new(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("components-cache"))
}

fn compile(bytes: &[u8]) -> Bot {
    let sha = gangs_hosted::compile::sha256_hex(bytes);
    runner()
        .compile_cached(
            bytes,
            DEFAULT_MODULE_BYTES,
            &Budget::default(),
            Some((&cache(), &sha)),
        )
        .unwrap_or_else(|r| panic!("refused: {r}"))
        .0
}

/// The Python example (once per test run), built and compiled. Fails, never skips, without
/// componentize-py and no way to install it.
fn python_bot() -> &'static (Vec<u8>, Bot) {
    static BOT: OnceLock<(Vec<u8>, Bot)> = OnceLock::new();
    BOT.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hosted-python-bot.wasm");
        let bytes = examples::python_example(&out).unwrap_or_else(|why| panic!("{why}"));
        let bot = compile(&bytes);
        (bytes, bot)
    })
}

/// A Python bot of its own source (`hosted/tests/python/NAME.py`), built like the example.
fn python_source(name: &str) -> Bot {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("python-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let source = examples::repository().join(format!("hosted/tests/python/{name}.py"));
    std::fs::copy(&source, dir.join("app.py")).unwrap();
    let out = dir.join("bot.wasm");
    let built =
        std::process::Command::new(examples::componentize_py().unwrap_or_else(|w| panic!("{w}")))
            .arg("-d")
            .arg(examples::repository().join("hosted/wit"))
            .args(["-w", "bot", "componentize", "app", "-o"])
            .arg(&out)
            .current_dir(&dir)
            .output()
            .unwrap();
    assert!(
        built.status.success(),
        "{name}.py does not build: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    compile(&std::fs::read(&out).unwrap())
}

fn decision(input: &[u8]) -> Decision<'_> {
    Decision {
        input,
        clock_ns: 1_700_000_000_000_000_000,
        seed: 11,
        bot: "py@1",
        seat: 0,
        seq: 4,
    }
}

#[test]
fn the_python_example_plays_whole_games_of_both_kinds_with_legal_actions() {
    let (bytes, bot) = python_bot();
    assert!(bot.is_component() && bytes.len() > 1 << 20);
    for seed in [1, 2] {
        let updates = examples::play_game(runner(), bot, "python-bot@1", "gang-of-four", &[], seed);
        assert!(updates.len() > 10);
        let updates = examples::play_game(
            runner(),
            bot,
            "python-bot@1",
            "the-gang",
            &[("players", "3")],
            seed,
        );
        assert!(updates.len() > 10);
    }
}

#[test]
fn a_python_decision_rerun_is_identical_to_the_fuel() {
    let (_, bot) = python_bot();
    for kind in ["gang-of-four", "the-gang"] {
        let options = gangs_games::parse_options(kind, None, &[]).unwrap();
        let mut game = gangs_games::new_game(kind, Some(&options), 9, None).unwrap();
        game.start();
        let update = gangs_games::update::in_process_update(&*game, game.actors()[0], 4, &[]);
        let decide = || {
            gangs_hosted::seat::decide(
                runner(),
                bot,
                &Budget::default(),
                gangs_hosted::seat::SeatDecision {
                    kind,
                    update: &update,
                    record_unix_ms: 1_700_000_000_000,
                    seed: 9,
                    bot: "python-bot@1",
                },
            )
        };
        let once = decide();
        assert!(once.action.is_ok(), "{kind}: {once:?}");
        assert!(once.outcome.fuel_used > 0);
        for _ in 0..2 {
            assert_eq!(decide(), once, "{kind}: a rerun differs");
        }
    }
}

#[test]
fn a_compiled_component_is_kept_and_loads_from_the_cache() {
    let (bytes, _) = python_bot();
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtefactCache::new(dir.path());
    let sha = gangs_hosted::compile::sha256_hex(bytes);
    let budget = Budget::default();
    let (_, first) = runner()
        .compile_cached(bytes, DEFAULT_MODULE_BYTES, &budget, Some((&cache, &sha)))
        .unwrap();
    assert_eq!(first, CacheUse::Miss);
    let (bot, again) = runner()
        .compile_cached(bytes, DEFAULT_MODULE_BYTES, &budget, Some((&cache, &sha)))
        .unwrap();
    assert_eq!(again, CacheUse::Hit);
    assert!(bot.is_component());
}

/// What `hosted/tests/python/hostile.py` does for `input` (its behaviour is named there).
fn hostile(input: &str) -> gangs_hosted::Outcome {
    static BOT: OnceLock<Bot> = OnceLock::new();
    let bot = BOT.get_or_init(|| python_source("hostile"));
    let budget = Budget {
        fuel: 200_000_000,
        memory_bytes: 96 << 20,
        ..Budget::default()
    };
    runner().decide(bot, &decision(input.as_bytes()), &budget)
}

fn log(outcome: &gangs_hosted::Outcome) -> String {
    String::from_utf8_lossy(&outcome.stderr).into_owned()
}

#[test]
fn hostile_python_is_contained_with_its_cause_in_its_log() {
    let looped = hostile("loop");
    assert_eq!(looped.answer, Err(Fault::Fuel), "{}", log(&looped));
    assert_eq!(looped.fuel_used, 200_000_000);
    let bomb = hostile("memory");
    assert_eq!(bomb.answer, Err(Fault::Memory), "{}", log(&bomb));
    // A TCP socket, a file and a UDP datagram fail inside the bot, with an error it prints.
    for (input, said) in [
        ("socket", "socket refused: PermissionError"),
        ("file", "file refused: FileNotFoundError"),
        ("udp", "udp refused: PermissionError"),
    ] {
        let outcome = hostile(input);
        assert_eq!(
            outcome.answer,
            Ok("0".to_string()),
            "{input}: {}",
            log(&outcome)
        );
        assert!(log(&outcome).contains(said), "{input}: {}", log(&outcome));
    }
    // A sleep of an hour returns at once; the virtual clock moved on by the hour.
    let started = std::time::Instant::now();
    let slept = hostile("sleep");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(slept.answer, Ok("0".to_string()), "{}", log(&slept));
    let elapsed: f64 = log(&slept)
        .lines()
        .find_map(|l| l.strip_prefix("slept: "))
        .unwrap_or_else(|| panic!("{}", log(&slept)))
        .parse()
        .unwrap();
    assert!((3600.0..3601.0).contains(&elapsed), "{}", log(&slept));
    // An exception is a trap; its traceback is in the log.
    let raised = hostile("raise");
    assert!(matches!(raised.answer, Err(Fault::Trap(_))), "{raised:?}");
    assert!(log(&raised).contains("ValueError"), "{}", log(&raised));
    // A chatty bot keeps the first 16 KiB of its log and still answers.
    let chatty = hostile("chatty");
    assert_eq!(chatty.answer, Ok("0".to_string()));
    assert_eq!(chatty.stderr.len(), gangs_hosted::MAX_STDERR_BYTES);
    // Every one of them again: the same outcome, to the fuel.
    for input in ["loop", "memory", "socket", "file", "sleep", "raise"] {
        assert_eq!(hostile(input), hostile(input), "{input}: a rerun differs");
    }
}

#[test]
fn components_for_another_world_or_importing_more_than_wasi_are_refused_naming_why() {
    let budget = Budget::default();
    let refuse_bytes = |bytes: &[u8]| {
        runner()
            .compile(bytes, DEFAULT_MODULE_BYTES, &budget)
            .err()
            .unwrap()
            .0
    };
    let refuse = |text: &str| refuse_bytes(&wat::parse_str(text).unwrap());
    let command = refuse_bytes(&examples::hostile("wasi_command"));
    assert!(
        command.contains("wasi:cli/run") && command.contains("gangs:bot/bot@1.0.0"),
        "{command}"
    );
    let wrong_type = refuse(
        r#"(component
             (core module $m (func (export "f")))
             (core instance $i (instantiate $m))
             (func $f (canon lift (core func $i "f")))
             (export "decide" (func $f)))"#,
    );
    assert!(
        wrong_type.contains("func(update: string) -> string"),
        "{wrong_type}"
    );
    let foreign = refuse(
        r#"(component
             (import "evil:net/socket" (func))
             (core module $m (func (export "f")))
             (core instance $i (instantiate $m))
             (func $f (canon lift (core func $i "f")))
             (export "decide" (func $f)))"#,
    );
    assert!(foreign.contains("evil:net/socket"), "{foreign}");
    // Over its own size limit (a module keeps its own).
    let small = Runner::new().with_component_bytes(100);
    let (bytes, _) = python_bot();
    let refused = small
        .compile(bytes, DEFAULT_MODULE_BYTES, &budget)
        .err()
        .unwrap()
        .0;
    assert!(refused.contains("--max-component-bytes"), "{refused}");
}

#[test]
fn a_component_decides_from_a_thread_that_drives_a_tokio_runtime() {
    let (_, bot) = python_bot();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let outcome = runtime.block_on(async {
        runner().decide(
            bot,
            &decision(b"{\"legal_actions\":[]}"),
            &Budget::default(),
        )
    });
    assert_eq!(outcome.answer, Ok("0".to_string()), "{outcome:?}");
}
