//! `gangs-bot-greedy --game GAME [--seat N] [--seed S]`: plays Gang of Four by planning its
//! hand into combinations and taking the action that leaves the best plan (see
//! `gangs_bots::policies::greedy`). Exits 0 when the game ends.

use clap::Parser;
use gangs_bots::policies::greedy::GreedyPolicy;
use gangs_bots::{run_bot_with, BotArgs};
use std::process::ExitCode;

/// Plays one seat of a Gang of Four game with the greedy hand-planning policy.
#[derive(Parser)]
#[command(name = "gangs-bot-greedy", version)]
struct Cli {
    #[command(flatten)]
    bot: BotArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    run_bot_with(cli.bot, GreedyPolicy::new)
}
