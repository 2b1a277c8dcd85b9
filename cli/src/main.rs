//! `gangs`: the command line of the gangs game service. Create and list games, take seats, play
//! in the terminal, watch, act, read and replay logs. Every command prints JSON only with
//! `--json` (one object, or one object per line for streams).
//!
//! Layout: `commands/` holds one file per subcommand, `client.rs` the connection and the
//! requests several commands share, `output.rs` the JSON shapes and human lines, `error.rs`
//! the errors and how they are printed.

mod client;
mod commands;
mod error;
mod output;

use clap::Parser;
use client::Context;
use output::Output;
use std::process::ExitCode;

/// Play Gang of Four and The Gang against people and bots on a gangs server.
#[derive(Parser)]
#[command(name = "gangs", version)]
struct Cli {
    /// The gangs server to talk to.
    #[arg(
        long,
        global = true,
        env = "GANGS_SERVER",
        default_value = "http://127.0.0.1:50051"
    )]
    server: String,

    /// Print JSON only: one object, or one object per line for streams.
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let out = Output::new(cli.json);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            out.error(&error::CliError::local(format!(
                "cannot start the async runtime: {e}"
            )));
            return ExitCode::FAILURE;
        }
    };
    let context = Context::new(cli.server, out);
    match runtime.block_on(commands::run(cli.command, &context)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            out.error(&e);
            ExitCode::FAILURE
        }
    }
}
