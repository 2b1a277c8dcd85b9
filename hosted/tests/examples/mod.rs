//! Builds the example hosted bots of examples/hosted-bots/ from source, for the tests
//! (hosted/tests/modules.rs) and the decisions bench (hosted/benches/decisions.rs): one
//! recipe, so the bench measures exactly the modules the tests play. A module that cannot be
//! built says why; each caller decides whether that fails it.

#![allow(dead_code)] // Each includer uses the part it needs.

use gangs_hosted::seat::{self, SeatDecision};
use gangs_hosted::{Bot, Budget, Runner};
use gangs_proto::v1 as pb;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// A hostile module or component of `tests/hosted/`, from its text.
pub fn hostile(name: &str) -> Vec<u8> {
    let path = repository()
        .join("tests/hosted")
        .join(format!("{name}.wat"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    wat::parse_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Why a module was not built.
#[derive(Debug)]
pub enum Unbuilt {
    /// The toolchain it needs is not installed here (the `wasm32-wasip1` target).
    NoTarget(String),
    /// The build ran and failed, or warned.
    Failed(String),
}

impl std::fmt::Display for Unbuilt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unbuilt::NoTarget(why) | Unbuilt::Failed(why) => f.write_str(why),
        }
    }
}

/// The C example, built with its Makefile (clang, lld and wasi-libc).
pub fn c_example() -> Result<Vec<u8>, Unbuilt> {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hosted-c-bot.wasm");
    let build = Command::new("make")
        .arg("-B")
        .arg("-C")
        .arg(repository().join("examples/hosted-bots/c"))
        .arg(format!("OUT={}", out.display()))
        .output()
        .map_err(|e| Unbuilt::Failed(format!("make does not run: {e}")))?;
    let log = String::from_utf8_lossy(&build.stderr);
    if !build.status.success() {
        return Err(Unbuilt::Failed(format!(
            "the C example bot does not build: it needs clang, lld and wasi-libc \
             (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32; .ci/run installs them):\n{log}"
        )));
    }
    if log.contains("warning") {
        return Err(Unbuilt::Failed(format!(
            "the C example bot builds with warnings:\n{log}"
        )));
    }
    std::fs::read(&out).map_err(|e| Unbuilt::Failed(format!("{}: {e}", out.display())))
}

/// The Rust example (`rust`, module `gangs-hosted-bot`) or the Monte Carlo one
/// (`monte-carlo`, module `gangs-monte-carlo-bot`): `examples/hosted-bots/FOLDER`, built in
/// release for wasm32-wasip1 from its own Cargo.lock.
pub fn rust_example(folder: &str, module: &str) -> Result<Vec<u8>, Unbuilt> {
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| Unbuilt::NoTarget(format!("rustc does not run: {e}")))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if !sysroot.join("lib/rustlib/wasm32-wasip1").is_dir() {
        return Err(Unbuilt::NoTarget(format!(
            "the wasm32-wasip1 target is not installed (rustup target add wasm32-wasip1): \
             examples/hosted-bots/{folder} is not built"
        )));
    }
    let target_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("hosted-{folder}"));
    let build = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--locked",
            "--target",
            "wasm32-wasip1",
        ])
        .arg("--manifest-path")
        .arg(repository().join(format!("examples/hosted-bots/{folder}/Cargo.toml")))
        .env("CARGO_TARGET_DIR", &target_dir)
        .output()
        .map_err(|e| Unbuilt::Failed(format!("cargo does not run: {e}")))?;
    if !build.status.success() {
        return Err(Unbuilt::Failed(format!(
            "examples/hosted-bots/{folder} does not build:\n{}",
            String::from_utf8_lossy(&build.stderr)
        )));
    }
    let path = target_dir.join(format!("wasm32-wasip1/release/{module}.wasm"));
    std::fs::read(&path).map_err(|e| Unbuilt::Failed(format!("{}: {e}", path.display())))
}

/// The componentize-py that `examples/hosted-bots/python/requirements.txt` pins.
pub const COMPONENTIZE_PY_VERSION: &str = "0.25.1";

/// `componentize-py`: `$GANGS_COMPONENTIZE_PY` if set, else `target/componentize-venv`'s,
/// installed there from PyPI on first use (`.ci/run` does the same ahead of the tests). A
/// missing Python or an unreachable registry fails the caller: the Python tests never skip.
pub fn componentize_py() -> Result<PathBuf, Unbuilt> {
    if let Some(path) = std::env::var_os("GANGS_COMPONENTIZE_PY") {
        return Ok(PathBuf::from(path));
    }
    let target = repository().join("target");
    let venv = target.join("componentize-venv");
    let bin = venv.join("bin/componentize-py");
    // Written once the install finished (the script appears while pip still writes it).
    let installed = venv.join("installed");
    // Tests run in parallel (threads and processes): one installs, the others wait.
    let lock = target.join("componentize-venv.lock");
    let start = std::time::Instant::now();
    loop {
        if installed.exists() {
            return Ok(bin);
        }
        std::fs::create_dir_all(&target).map_err(|e| Unbuilt::Failed(e.to_string()))?;
        if std::fs::create_dir(&lock).is_ok() {
            break;
        }
        if start.elapsed() > std::time::Duration::from_secs(300) {
            return Err(Unbuilt::Failed(format!(
                "waited 5 minutes for another test to install componentize-py (stale {}?)",
                lock.display()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let result = if installed.exists() {
        Ok(())
    } else {
        install_componentize_py(&venv).and_then(|()| {
            std::fs::write(&installed, COMPONENTIZE_PY_VERSION)
                .map_err(|e| Unbuilt::Failed(format!("{}: {e}", installed.display())))
        })
    };
    let _ = std::fs::remove_dir(&lock);
    result.map(|()| bin)
}

fn install_componentize_py(venv: &Path) -> Result<(), Unbuilt> {
    eprintln!(
        "installing componentize-py {COMPONENTIZE_PY_VERSION} into {} (first use)",
        venv.display()
    );
    let run = |command: &mut Command| -> Result<(), Unbuilt> {
        let output = command
            .output()
            .map_err(|e| Unbuilt::Failed(format!("{command:?}: {e}")))?;
        if output.status.success() {
            return Ok(());
        }
        Err(Unbuilt::Failed(format!(
            "{command:?} failed ({}): installing componentize-py needs python3 with venv and \
             PyPI:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )))
    };
    run(Command::new("python3").arg("-m").arg("venv").arg(venv))?;
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
        .arg(repository().join("examples/hosted-bots/python/requirements.txt")))
}

/// The Python example, built into a component with its Makefile (componentize-py), as
/// `out` (a name of its own per caller: builds run in parallel).
pub fn python_example(out: &Path) -> Result<Vec<u8>, Unbuilt> {
    let componentize_py = componentize_py()?;
    let build = Command::new("make")
        .arg("-B")
        .arg("-C")
        .arg(repository().join("examples/hosted-bots/python"))
        .arg(format!("OUT={}", out.display()))
        .arg(format!("COMPONENTIZE_PY={}", componentize_py.display()))
        .output()
        .map_err(|e| Unbuilt::Failed(format!("make does not run: {e}")))?;
    if !build.status.success() {
        return Err(Unbuilt::Failed(format!(
            "the Python example bot does not build:\n{}{}",
            String::from_utf8_lossy(&build.stdout),
            String::from_utf8_lossy(&build.stderr)
        )));
    }
    std::fs::read(out).map_err(|e| Unbuilt::Failed(format!("{}: {e}", out.display())))
}

/// Plays a whole game of `kind` with `compiled` deciding for every seat; every decision must
/// name a legal action, and the bot's log must name the decision (`seq N seat S:`), and the
/// game must end. Returns the updates it decided on.
pub fn play_game(
    runner: &Runner,
    compiled: &Bot,
    bot: &str,
    kind: &str,
    options: &[(&str, &str)],
    seed: u64,
) -> Vec<pb::Update> {
    let budget = Budget::default();
    let pairs: Vec<(String, String)> = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let options = gangs_games::parse_options(kind, None, &pairs).unwrap();
    let mut game = gangs_games::new_game(kind, Some(&options), seed, None).unwrap();
    game.start();
    let mut updates = Vec::new();
    for seq in 1.. {
        if game.is_over() {
            break;
        }
        assert!(seq < 20_000, "{bot}: {kind} seed {seed} does not end");
        let actors = game.actors();
        assert!(
            !actors.is_empty(),
            "{kind}: a running game waits for nobody"
        );
        // The seats that may act take turns, so that none is always first.
        let seat = actors[seq as usize % actors.len()];
        let update = gangs_games::update::in_process_update(&*game, seat, seq, &[]);
        let decided = seat::decide(
            runner,
            compiled,
            &budget,
            SeatDecision {
                kind,
                update: &update,
                record_unix_ms: 1_700_000_000_000 + seq as i64,
                seed,
                bot,
            },
        );
        let action = decided.action.unwrap_or_else(|fault| {
            panic!(
                "{bot}: {kind} seq {seq}: {fault}; its log: {}",
                String::from_utf8_lossy(&decided.outcome.stderr)
            )
        });
        let log = String::from_utf8_lossy(&decided.outcome.stderr).into_owned();
        assert!(
            log.contains(&format!("seq {seq} seat {seat}:")),
            "{bot}: its log: {log:?}"
        );
        game.act(seat, &action)
            .unwrap_or_else(|r| panic!("{bot}: {kind} seq {seq}: an illegal action: {r:?}"));
        updates.push(update);
    }
    assert!(game.outcome().is_some());
    updates
}
