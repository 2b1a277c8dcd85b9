//! Gang of Four engine speed: random playout steps per second (legal-play generation plus
//! apply) and legal-play generations per second, on one core.
//! Run: `cargo bench -p gangs-rules --bench gang_of_four`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use gangs_rules::gang_of_four::{cards, DealState, Direction, Options, PlayList};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn shuffled_deal(rng: &mut ChaCha8Rng, options: Options) -> DealState {
    let mut deck: Vec<u8> = (0..64).collect();
    deck.shuffle(rng);
    let hands: [u64; 4] = std::array::from_fn(|h| {
        deck[h * 16..h * 16 + 16]
            .iter()
            .fold(0, |m, &id| m | (1u64 << id))
    });
    let leader = (0..options.players)
        .find(|&s| hands[s as usize] & (1 << cards::MULTICOLOR_ONE) != 0)
        .unwrap_or(0);
    DealState::new(options, hands, Direction::CounterClockwise, leader, 0)
}

fn main() {
    let budget = Duration::from_secs(3);
    let mut buffer = PlayList::new();
    for players in [4u8, 3] {
        let options = Options {
            players,
            ..Options::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(7);

        // Random playouts: every step generates the legal plays and applies one.
        let start = Instant::now();
        let (mut steps, mut deals) = (0u64, 0u64);
        while start.elapsed() < budget {
            for _ in 0..100 {
                let mut deal = shuffled_deal(&mut rng, options);
                steps += deal.random_playout(&mut rng, &mut buffer) as u64;
                deals += 1;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{players} players: {:.0} playout steps/s ({deals} deals, {:.1} steps/deal, deal shuffling included)",
            steps as f64 / secs,
            steps as f64 / deals as f64
        );

        // Legal-play generation alone, on positions sampled from random playouts.
        let mut positions = Vec::new();
        while positions.len() < 10_000 {
            let mut deal = shuffled_deal(&mut rng, options);
            while !deal.over {
                positions.push(deal.clone());
                deal.random_step(&mut rng, &mut buffer);
            }
        }
        let start = Instant::now();
        let (mut generations, mut plays) = (0u64, 0u64);
        while start.elapsed() < budget {
            for position in &positions {
                position.legal_plays(&mut buffer);
                plays += black_box(buffer.len()) as u64;
                generations += 1;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{players} players: {:.0} legal-play generations/s ({:.1} plays per position)",
            generations as f64 / secs,
            plays as f64 / generations as f64
        );
    }
}
