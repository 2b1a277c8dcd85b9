//! Shared bot plumbing. Every bot is its own binary that plays one seat over gRPC, exactly like
//! an external client would. A bot only supplies a [`Policy`] (pick one of the legal actions of
//! an update); [`run_bot`] does the rest: flags, joining, watching, acting idempotently,
//! surviving server restarts and exiting when the game ends.
//!
//! ```no_run
//! use clap::Parser;
//! use gangs_bots::{run_bot, BotArgs, RandomPolicy};
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     bot: BotArgs,
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     let mut cli = Cli::parse();
//!     let policy = RandomPolicy::new(cli.bot.rng());
//!     run_bot(cli.bot, policy)
//! }
//! ```
//!
//! The modules:
//! - [`args`]: the flags every bot accepts;
//! - [`Policy`]: the one trait a bot implements, and [`policies`]: the shipped ones, pure, in a
//!   crate of their own (`gangs-policies`);
//! - [`runner`]: the join / watch / act loop;
//! - [`ladder`]: `--ladder`: queue on a server's ladder and play its games, several at once;
//! - [`decision`]: which update of a batch to act on (pure, tested);
//! - [`action_id`]: idempotency keys for `Act`;
//! - [`reconnect`]: backoff and the 60 s outage budget;
//! - [`error`]: what can stop a bot, and which gRPC failures are only transient;
//! - [`logging`]: tracing to stderr, filtered by `RUST_LOG`;
//! - [`load`]: the load driver of `gangs bench` and the host benchmark (many games at once,
//!   random legal actions, and a baseline of plain unary calls).

pub mod action_id;
pub mod args;
pub mod decision;
pub mod error;
pub mod hosted;
pub mod ladder;
pub mod logging;
pub mod reconnect;
pub mod runner;

pub use args::BotArgs;
pub use error::BotError;
/// The shipped policies, a crate of their own (`gangs-policies`) that the server's house bots
/// share without linking this crate's gRPC client.
pub use gangs_policies as policies;
pub use gangs_policies::{Policy, RandomPolicy};
pub use runner::{play, run_bot, run_bot_with, GameOver};

/// The shipped policy `name` (`gangs_bots::policies::by_name`), for a bot binary that plays
/// exactly that policy: its name is its binary's, so an unknown one is a bug here.
pub fn shipped_policy(
    name: &str,
    rng: rand_chacha::ChaCha8Rng,
    budget: std::time::Duration,
) -> Box<dyn Policy + Send> {
    policies::by_name(name, rng, budget).unwrap_or_else(|| panic!("no shipped policy named {name}"))
}
