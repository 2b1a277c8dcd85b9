//! Builds the example hosted bots of examples/hosted-bots/ from source, for the tests
//! (hosted/tests/modules.rs) and the decisions bench (hosted/benches/decisions.rs): one
//! recipe, so the bench measures exactly the modules the tests play. A module that cannot be
//! built says why; each caller decides whether that fails it.

#![allow(dead_code)] // Each includer uses the part it needs.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
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
