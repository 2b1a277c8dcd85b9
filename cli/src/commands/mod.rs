//! The subcommands, one file each. A new command is a new file, a variant here and its arm in
//! [`run`].

mod act;
mod arena;
mod bench;
mod bench_hosted;
mod bench_ladder;
mod cancel;
mod cert;
mod check_decisions;
mod export;
mod follow;
mod games;
mod health;
mod import;
mod join;
mod ladder;
mod log;
mod new;
mod play;
mod replay;
mod rules;
mod watch;
mod webhook;

use crate::client::Context;
use crate::error::CliError;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum Command {
    /// Create a game; prints its id.
    New(new::NewArgs),
    /// Take a seat in a game; prints the seat and its secret token.
    Join(join::JoinArgs),
    /// Follow a game's updates (as a seat with --token, else as a spectator) until it ends.
    Watch(watch::WatchArgs),
    /// Play one action for a seat.
    #[command(after_help = format!("Action words:\n{}", gangs_games::action_help()))]
    Act(act::ActArgs),
    /// List the server's games (a page at a time, filtered).
    Games(games::GamesArgs),
    /// End a waiting or running game as cancelled (needs the admin key).
    Cancel(cancel::CancelArgs),
    /// Print a game's log records (everything once the game is over).
    Log(log::LogArgs),
    /// Write a game as a portable game file (JSON Lines: a header, then every log record).
    Export(export::ExportArgs),
    /// Load a finished game from its game file into the server (a new id, marked imported),
    /// after checking it with the rules engine.
    Import(import::ImportArgs),
    /// Rebuild a finished game (from the server or a game file) with the rules engine: verify
    /// it, show the state at any seq, or summarize it deal by deal.
    Replay(replay::ReplayArgs),
    /// Play a seat yourself, in the terminal.
    #[command(after_help = format!("Action words:\n{}", gangs_games::action_help()))]
    Play(play::PlayArgs),
    /// A game's options: key, type, default, range, meaning (from the engine's own schema).
    Rules(rules::RulesArgs),
    /// Ask the server's gRPC health service whether it serves; exit code 0 if it does (for
    /// container health checks and scripts).
    Health(health::HealthArgs),
    /// Play bots against each other for many games; prints wins, shares and ratings.
    #[command(after_help = arena::AFTER_HELP)]
    Arena(arena::ArenaArgs),
    /// Write a private key and a self-signed certificate for a server's TLS (`--tls-cert`,
    /// `--tls-key`; clients then trust it with `--ca DIR/cert.pem`).
    Cert(cert::CertArgs),
    /// Webhooks: `gangs webhook test --url URL --secret S` sends a receiver a signed sample.
    Webhook(webhook::WebhookArgs),
    /// Ladders on the server: create, register bots (prints their keys), standings, games.
    Ladder(ladder::LadderArgs),
    /// Load-test a server: play many games at once flat out and compare the durable actions/s
    /// with plain unary calls (the health Check) at the same concurrency, in the same run.
    Bench(bench::BenchArgs),
}

impl Command {
    /// Whether the command wants every core of this machine (the load tool), rather than the
    /// single thread every other command is content with.
    pub fn wants_all_cores(&self) -> bool {
        matches!(self, Command::Bench(_))
    }
}

pub async fn run(command: Command, context: &Context) -> Result<(), CliError> {
    match command {
        Command::New(args) => new::run(args, context).await,
        Command::Join(args) => join::run(args, context).await,
        Command::Watch(args) => watch::run(args, context).await,
        Command::Act(args) => act::run(args, context).await,
        Command::Games(args) => games::run(args, context).await,
        Command::Cancel(args) => cancel::run(args, context).await,
        Command::Log(args) => log::run(args, context).await,
        Command::Export(args) => export::run(args, context).await,
        Command::Import(args) => import::run(args, context).await,
        Command::Replay(args) => replay::run(args, context).await,
        Command::Play(args) => play::run(args, context).await,
        Command::Arena(args) => arena::run(args, context).await,
        Command::Bench(args) => bench::run(args, context).await,
        Command::Ladder(args) => ladder::run(args, context).await,
        Command::Health(args) => health::run(args, context).await,
        Command::Rules(args) => rules::run(args, context).await,
        Command::Cert(args) => cert::run(args, context).await,
        Command::Webhook(args) => webhook::run(args, context).await,
    }
}
