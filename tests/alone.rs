//! The end-to-end test that measures a server's resources (memory, threads, tasks) over
//! minutes: a binary of its own, so that cargo runs it after `e2e`, with the machine to itself
//! (run beside other tests, the server's timing and thus its peaks are theirs, not its own).
//! `cargo test --test alone -- --nocapture`.

mod common;
mod e2e_soak;
