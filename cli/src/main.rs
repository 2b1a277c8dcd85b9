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
mod tui;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser};
use client::Context;
use output::Output;
use std::process::ExitCode;

// The one-line description names the games from the registry (no doc comment: clap would show
// it as the long description instead).
#[derive(Parser)]
#[command(
    name = "gangs",
    version,
    about = format!("Play {} against people and bots on a gangs server.", gangs_games::kind_titles())
)]
struct Cli {
    /// The gangs server to talk to. `gangs arena` starts its own server unless this is given
    /// (here or as GANGS_SERVER).
    #[arg(
        long,
        global = true,
        env = "GANGS_SERVER",
        default_value = "http://127.0.0.1:50051"
    )]
    server: String,

    /// For an `https://` server: a PEM file of the certificate(s) to trust (its self-signed
    /// certificate or a private CA); without it the system's roots. Passed on to arena bots.
    #[arg(long, global = true, env = "GANGS_CA")]
    ca: Option<std::path::PathBuf>,

    /// Print JSON only: one object, or one object per line for streams.
    #[arg(long, global = true)]
    json: bool,

    /// The key of a server started with --api-key/--player-key, sent with every call.
    #[arg(long, global = true, env = "GANGS_API_KEY", hide_env_values = true)]
    api_key: Option<String>,

    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    // `gangs arena` needs to know a server was asked for, not just defaulted to.
    let server_given = matches!(
        matches.value_source("server"),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    );
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let out = Output::new(cli.json);
    let mut builder = if cli.command.wants_all_cores() {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            out.error(&error::CliError::local(format!(
                "cannot start the async runtime: {e}"
            )));
            return ExitCode::FAILURE;
        }
    };
    let mut context = Context::new(cli.server, out);
    context.ca = cli.ca;
    context.server_given = server_given;
    if let Some(key) = &cli.api_key {
        // The bots `gangs arena` starts on --server read their key from the environment.
        std::env::set_var("GANGS_API_KEY", key);
    }
    context.api_key = match gangs_proto::auth::ApiKey::new(cli.api_key.as_deref()) {
        Ok(key) => key,
        Err(e) => {
            out.error(&error::CliError::invalid(e));
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(commands::run(cli.command, &context)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            out.error(&e);
            ExitCode::FAILURE
        }
    }
}
