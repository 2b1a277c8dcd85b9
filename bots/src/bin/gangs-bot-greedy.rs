//! `gangs-bot-greedy --game GAME [--seat N] [--seed S]`: plays Gang of Four by planning its
//! hand into combinations and taking the action that leaves the best plan (the policy
//! `greedy`, listed with its game's policies). Exits 0 when the game ends.

use clap::Parser;
use gangs_bots::{run_bot_with, shipped_policy, BotArgs};
use std::process::ExitCode;
use std::time::Duration;

/// Plays one seat of a Gang of Four game with the greedy hand-planning policy.
#[derive(Parser)]
#[command(name = "gangs-bot-greedy", version)]
struct Cli {
    #[command(flatten)]
    bot: BotArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    run_bot_with(cli.bot, |rng| shipped_policy("greedy", rng, Duration::ZERO))
}
