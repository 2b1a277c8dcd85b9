//! Hosted bots' modules for the end-to-end tests: the C example built from source (as a user
//! builds it), and the smallest bot there is, written in WebAssembly's text format.

use super::Server;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The C example bot (examples/hosted-bots/c) built with its Makefile into `dir`. Fails, not
/// skips, without clang, lld and wasi-libc: CI installs them (.ci/run).
pub fn c_example(dir: &Path) -> PathBuf {
    let out = dir.join("c-example.wasm");
    let build = Command::new("make")
        .arg("-B")
        .arg("-C")
        .arg(super::repo_root().join("examples/hosted-bots/c"))
        .arg(format!("OUT={}", out.display()))
        .output()
        .expect("run make (the C example bot's build)");
    assert!(
        build.status.success(),
        "the C example bot does not build: it needs clang, lld and wasi-libc \
         (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32; .ci/run installs them):\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    out
}

/// A module printing `0` (the first legal action) after `spin` loop turns.
pub fn first_action_bot(spin: u32) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(module
          (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (data (i32.const 64) "0\n")
          (func (export "_start") (local $i i32)
            (loop $spin
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (br_if $spin (i32.lt_u (local.get $i) (i32.const {spin}))))
            (i32.store (i32.const 0) (i32.const 64))
            (i32.store (i32.const 4) (i32.const 2))
            (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#
    ))
    .expect("valid module")
}

/// A module that answers `0` to SubmitBot's sample decision (its virtual clock reads the
/// sample's record time, 0: before 1970-01-12) and runs `real` (WebAssembly text in `_start`)
/// on a real game's decision, whose record time is now. So it passes the check at submit and
/// misbehaves only in play, as a bot that fails on positions the sample does not show would.
pub fn sample_only(real: &str) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(module
          (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
          (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (data (i32.const 64) "0\n")
          (data (i32.const 80) "1000000\n")
          (func $say (param $at i32) (param $len i32)
            (i32.store (i32.const 0) (local.get $at))
            (i32.store (i32.const 4) (local.get $len))
            (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
          (func (export "_start")
            (drop (call $clock (i32.const 0) (i64.const 1) (i32.const 16)))
            (if (i64.lt_u (i64.load (i32.const 16)) (i64.const 1000000000000000))
              (then (call $say (i32.const 64) (i32.const 2)) (return)))
            {real}))"#
    ))
    .expect("valid module")
}

/// A server in `dir` with an admin and a player key and one hosted-bot thread (the default on
/// two cores, whatever cores run the test).
pub fn keyed_server(dir: &Path, admin: &str, player: &str) -> Server {
    Server::start_with(
        dir,
        0,
        &[
            "--api-key",
            admin,
            "--player-key",
            player,
            "--hosted-bot-threads",
            "1",
        ],
    )
}

#[path = "../../hosted/tests/examples/mod.rs"]
mod examples;

/// A hostile module or component of `tests/hosted/`, from its text.
pub fn hostile(name: &str) -> Vec<u8> {
    examples::hostile(name)
}

/// The Python example bot (examples/hosted-bots/python) built into a component with its
/// Makefile into `dir`, componentize-py installed on first use when missing (as the runner's
/// tests do). Fails, never skips, when it cannot be built.
pub fn python_example(dir: &Path) -> PathBuf {
    let out = dir.join("python-example.wasm");
    examples::python_example(&out).unwrap_or_else(|why| panic!("{why}"));
    out
}
