//! `gangs-bot-random --game GAME [--seat N] [--seed S]`: plays a uniformly random legal action
//! every time its seat may act, knowing no rules. Exits 0 when the game ends.

use clap::Parser;
use gangs_bots::{run_bot_with, BotArgs, RandomPolicy};
use std::process::ExitCode;

/// Plays one seat of a gangs game with uniformly random legal actions.
#[derive(Parser)]
#[command(name = "gangs-bot-random", version)]
struct Cli {
    #[command(flatten)]
    bot: BotArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    run_bot_with(cli.bot, RandomPolicy::new)
}
