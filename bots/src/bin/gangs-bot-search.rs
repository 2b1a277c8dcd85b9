//! `gangs-bot-search --game GAME [--seat N] [--seed S] [--budget-ms MS]`: plays Gang of Four
//! with determinized Monte Carlo search, answering within `--budget-ms` per move (the policy
//! `search`, listed with its game's policies). Exits 0 when the game ends.

use clap::Parser;
use gangs_bots::policies::DEFAULT_BUDGET_MS;
use gangs_bots::{run_bot_with, shipped_policy, BotArgs};
use std::process::ExitCode;
use std::time::Duration;

/// Plays one seat of a Gang of Four game with determinized Monte Carlo search.
#[derive(Parser)]
#[command(name = "gangs-bot-search", version)]
struct Cli {
    #[command(flatten)]
    bot: BotArgs,

    /// Thinking time per move, in milliseconds.
    #[arg(long, default_value_t = DEFAULT_BUDGET_MS)]
    budget_ms: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let budget = Duration::from_millis(cli.budget_ms);
    run_bot_with(cli.bot, |rng| shipped_policy("search", rng, budget))
}
