//! The end-to-end tests that need the machine to themselves: the one that measures a server's
//! resources (memory, threads, tasks) over minutes, and a ladder term's features where they
//! meet (restarts, a shutdown that must end within seconds, renames, rekeys, a season's end).
//! A binary of its own, so that cargo runs it by itself (before `e2e`: cargo runs a crate's
//! test binaries one after the other, by name): run beside other tests, the server's timing
//! and thus its figures would be theirs, not its own.
//! Inside the binary too the tests take turns ([`the_machine`]): cargo's harness runs a binary's
//! tests on parallel threads, and two of them at once would measure each other.
//! `cargo test --test alone -- --nocapture`.

mod common;
mod e2e_soak;
mod e2e_term_holds;

/// Held for the whole of each test of this binary, so that they run one after the other
/// whatever `--test-threads` says. A tokio mutex: the guard is held across awaits, each test on
/// a runtime of its own, and a failed test's panic does not poison it for the next.
pub async fn the_machine() -> tokio::sync::MutexGuard<'static, ()> {
    static MACHINE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    MACHINE.lock().await
}
