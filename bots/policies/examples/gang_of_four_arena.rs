//! In-process Gang of Four evaluation, no server: one policy in one seat against three
//! others, many games, the win rate (rank 1 = lowest total) printed at the end.
//!
//! ```text
//! cargo run --release -p gangs-policies --example gang_of_four_arena -- \
//!     --hero greedy --field random --games 200
//! cargo run --release -p gangs-policies --example gang_of_four_arena -- \
//!     --hero search --field greedy --games 100 --budget-ms 50 --duplicate
//! ```
//! With `--duplicate` every seed is played four times, the hero in each seat in turn, so
//! that every hero seat sees the same cards (`--games` counts all of them).

use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use gangs_policies::gang_of_four::arena::{options, play_game, rank_of};
use gangs_policies::gang_of_four::greedy::GreedyPolicy;
use gangs_policies::gang_of_four::search::SearchPolicy;
use gangs_policies::{Policy, RandomPolicy};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Kind {
    Random,
    Greedy,
    Search,
}

/// Plays many in-process Gang of Four games and prints the hero's win rate.
#[derive(Parser)]
struct Cli {
    /// The policy whose win rate is measured.
    #[arg(long, value_enum)]
    hero: Kind,
    /// The policy of the other seats.
    #[arg(long, value_enum)]
    field: Kind,
    /// Games to play.
    #[arg(long, default_value_t = 100)]
    games: u64,
    /// Per-move budget of search policies, in milliseconds.
    #[arg(long, default_value_t = 50)]
    budget_ms: u64,
    /// The game's target score.
    #[arg(long, default_value_t = 100)]
    target_score: u32,
    /// 3 or 4 players.
    #[arg(long, default_value_t = 4)]
    players: u32,
    /// Seed of the first game (game i uses seed + i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Play every deal seed with the hero in each seat.
    #[arg(long)]
    duplicate: bool,
}

fn make(kind: Kind, seed: u64, budget: Duration) -> Box<dyn Policy> {
    let rng = ChaCha8Rng::seed_from_u64(seed);
    match kind {
        Kind::Random => Box::new(RandomPolicy::new(rng)),
        Kind::Greedy => Box::new(GreedyPolicy::new(rng)),
        Kind::Search => Box::new(SearchPolicy::new(rng, budget)),
    }
}

fn main() {
    let cli = Cli::parse();
    let players = cli.players as usize;
    let budget = Duration::from_millis(cli.budget_ms);
    let opts = options(cli.players, cli.target_score);
    let started = Instant::now();
    let (mut wins, mut played, mut rank_sum) = (0u64, 0u64, 0u64);
    for i in 0..cli.games {
        let (seed, hero_seat) = if cli.duplicate {
            (cli.seed + i / players as u64, (i % players as u64) as usize)
        } else {
            (cli.seed + i, (i % players as u64) as usize)
        };
        let mut seats: Vec<Box<dyn Policy>> = (0..players)
            .map(|s| {
                let kind = if s == hero_seat { cli.hero } else { cli.field };
                make(kind, seed * 16 + s as u64, budget)
            })
            .collect();
        let outcome =
            play_game(&opts, seed, &mut seats).unwrap_or_else(|e| panic!("game {i}: {e}"));
        let rank = rank_of(&outcome, hero_seat);
        played += 1;
        rank_sum += rank as u64;
        if rank == 1 {
            wins += 1;
        }
        eprintln!(
            "game {i} seed {seed} hero seat {hero_seat}: rank {rank} ({}); {wins}/{played} won",
            outcome.summary
        );
    }
    println!(
        "{:?} vs {}x {:?}: won {wins}/{played} = {:.1}% (mean rank {:.2}) in {:.0?}",
        cli.hero,
        players - 1,
        cli.field,
        100.0 * wins as f64 / played.max(1) as f64,
        rank_sum as f64 / played.max(1) as f64,
        started.elapsed()
    );
}
