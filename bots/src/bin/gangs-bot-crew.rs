//! `gangs-bot-crew --game GAME [--seat N] [--seed S]`: plays one seat of The Gang with the
//! cooperative crew strategy (Monte Carlo strength, a chip-sorting convention shared by every
//! crew seat, team guesses and specialists; the policy `crew`, listed with its game's
//! policies). Run one process per seat. Exits 0 when the game ends.

use clap::Parser;
use gangs_bots::{run_bot_with, shipped_policy, BotArgs};
use std::process::ExitCode;
use std::time::Duration;

/// Plays one seat of a The Gang game as a member of the crew.
#[derive(Parser)]
#[command(name = "gangs-bot-crew", version)]
struct Cli {
    #[command(flatten)]
    bot: BotArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    run_bot_with(cli.bot, |rng| shipped_policy("crew", rng, Duration::ZERO))
}
