//! The end-to-end tests that need the machine to themselves: the one that measures a server's
//! resources (memory, threads, tasks) over minutes, and a ladder term's features where they
//! meet (restarts, a shutdown that must end within seconds, renames, rekeys, a season's end).
//! A binary of its own, so that cargo runs it by itself (before `e2e`: cargo runs a crate's
//! test binaries one after the other, by name): run beside other tests, the server's timing
//! and thus its figures would be theirs, not its own.
//! `cargo test --test alone -- --nocapture`.

mod common;
mod e2e_soak;
mod e2e_term_holds;
