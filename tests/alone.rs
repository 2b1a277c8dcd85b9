//! The end-to-end test that measures a server's resources (memory, threads, tasks) over
//! minutes: a binary of its own, so that cargo runs it by itself (before `e2e`: cargo runs a
//! crate's test binaries one after the other, by name), with the machine to itself (run beside
//! other tests, the server's timing and thus its figures would be theirs, not its own).
//! `cargo test --test alone -- --nocapture`.

mod common;
mod e2e_soak;
