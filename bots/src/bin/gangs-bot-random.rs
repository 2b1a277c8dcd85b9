//! `gangs-bot-random --game GAME [--seat N] [--seed S]`: plays a uniformly random legal action
//! every time its seat may act, knowing no rules. Exits 0 when the game ends.

use clap::Parser;
use gangs_bots::{run_bot, BotArgs, RandomPolicy};
use std::process::ExitCode;

/// Plays one seat of a gangs game with uniformly random legal actions.
#[derive(Parser)]
#[command(name = "gangs-bot-random", version)]
struct Cli {
    #[command(flatten)]
    bot: BotArgs,
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    let policy = RandomPolicy::new(cli.bot.rng());
    run_bot(cli.bot, policy)
}
