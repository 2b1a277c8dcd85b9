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
