//! In-process The Gang evaluation, no server: a whole team of one policy (every seat), many
//! games per mode, the heist success rate printed per mode.
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-crew cargo run --release -p gangs-policies \
//!     --example the_gang_crew_arena -- --team crew --heists 500 --modes basic,advanced,pro,gangster
//! ```
//! Games are played until at least `--heists` heists are counted for a mode (a game has 3 to 5).
//! `--max-moves N` sets the move cap (how much room the team has to talk with its chips).

use std::time::Instant;

use clap::{Parser, ValueEnum};
use gangs_policies::the_gang::arena::{options, play_game, GameReport};
use gangs_policies::the_gang::crew::CrewPolicy;
use gangs_policies::{Policy, RandomPolicy};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Kind {
    Random,
    Crew,
}

/// Plays many in-process The Gang games and prints heist success rates per mode.
#[derive(Parser)]
struct Cli {
    /// The policy in every seat.
    #[arg(long, value_enum, default_value_t = Kind::Crew)]
    team: Kind,
    /// Heists to count per mode.
    #[arg(long, default_value_t = 500)]
    heists: u32,
    /// Comma-separated modes.
    #[arg(long, default_value = "basic,advanced,pro,gangster")]
    modes: String,
    /// 3 to 6 players.
    #[arg(long, default_value_t = 4)]
    players: u32,
    /// Seed of the first game (game i uses seed + i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The `max_moves_per_phase` option (0: the rules' default, 6 x players).
    #[arg(long, default_value_t = 0)]
    max_moves: u32,
}

fn main() {
    let cli = Cli::parse();
    for mode in cli.modes.split(',') {
        let started = Instant::now();
        let mut opts = options(cli.players, mode);
        if let Some(gangs_proto::v1::game_options::Game::TheGang(o)) = &mut opts.game {
            o.max_moves_per_phase = Some(cli.max_moves);
        }
        let mut total = GameReport::default();
        let mut games = 0u64;
        let mut wins = 0u64;
        while total.heists < cli.heists {
            let seed = cli.seed + games;
            let mut policies: Vec<Box<dyn Policy>> = (0..cli.players as u64)
                .map(|s| {
                    let rng = ChaCha8Rng::seed_from_u64(seed * 31 + s);
                    match cli.team {
                        Kind::Crew => Box::new(CrewPolicy::new(rng)) as Box<dyn Policy>,
                        Kind::Random => Box::new(RandomPolicy::new(rng)),
                    }
                })
                .collect();
            let report = match play_game(&opts, seed, &mut policies, 1_000_000) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("game seed {seed}: {e}");
                    std::process::exit(1);
                }
            };
            games += 1;
            wins += report.won as u64;
            total.heists += report.heists;
            total.successes += report.successes;
            total.stalls += report.stalls;
            total.actions += report.actions;
        }
        println!(
            "{mode:>9} {}p {:?}: {}/{} heists opened ({:.1}%), {wins}/{games} games won, {} stalls, {:.1}s",
            cli.players,
            cli.team,
            total.successes,
            total.heists,
            100.0 * total.successes as f64 / total.heists.max(1) as f64,
            total.stalls,
            started.elapsed().as_secs_f64()
        );
    }
}
