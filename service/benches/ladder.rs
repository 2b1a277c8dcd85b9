//! Ladder benchmark: `cargo bench -p gangs-service --bench ladder`.
//!
//! What a ladder's matchmaker and rating cost, pure (no I/O), on this machine:
//! - matching: 1,000 bots queued (spread ratings, a few free slots each), one matchmaker round
//!   (`make_groups`, at most 256 groups a round) repeated; printed as groups made per second
//!   and time per round, for 4-seat Gang of Four tables and 3-seat crews;
//! - rating: one Gang of Four game (4 entries, ranks) and one The Gang crew game (crew of 4
//!   against the house) rated with Weng-Lin, per second;
//! - beside them, as the same run's baseline, sorting the 1,000 candidates by μ once: each
//!   figure is also given in such sorts, which stays comparable across machines.

use gangs_proto::v1 as pb;
use gangs_service::ladder::matchmaker::{make_groups, Candidate};
use gangs_service::ladder::rating::{rate_match, GameRanks};
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::time::{Duration, Instant};

const QUEUED: usize = 1000;
const MEASURE: Duration = Duration::from_secs(2);

fn candidates(seed: u64) -> Vec<Candidate> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..QUEUED)
        .map(|entry| Candidate {
            entry,
            mu: rng.random_range(5.0..45.0),
            sigma: rng.random_range(1.0..8.4),
            free_slots: rng.random_range(1..=4),
            waiting_since: rng.random_range(0..60_000),
        })
        .collect()
}

/// Runs `work` repeatedly for MEASURE; the mean time of one call.
fn time(mut work: impl FnMut() -> usize) -> (Duration, usize) {
    let start = Instant::now();
    let (mut calls, mut made) = (0u32, 0usize);
    while start.elapsed() < MEASURE {
        made += black_box(work());
        calls += 1;
    }
    (start.elapsed() / calls, made / calls as usize)
}

fn main() {
    let queued = candidates(7);
    let (sort, _) = time(|| {
        let mut by_mu = queued.clone();
        by_mu.sort_by(|a, b| a.mu.total_cmp(&b.mu));
        by_mu.len()
    });
    println!("baseline: sorting {QUEUED} candidates by mu: {sort:?}");

    for (what, players) in [("Gang of Four, 4 seats", 4), ("The Gang, crews of 3", 3)] {
        let (round, groups) = time(|| make_groups(queued.clone(), players).len());
        let per_second = groups as f64 / round.as_secs_f64();
        println!(
            "matching {QUEUED} queued bots ({what}): {groups} groups a round in {round:?} \
             = {per_second:.0} groups/s ({:.1} sorts a round)",
            round.as_secs_f64() / sort.as_secs_f64()
        );
    }

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let ratings: Vec<pb::Rating> = (0..4)
        .map(|_| pb::Rating {
            mu: rng.random_range(15.0..35.0),
            sigma: rng.random_range(1.0..8.0),
        })
        .collect();
    let house = pb::Rating {
        mu: 25.0,
        sigma: 3.0,
    };
    let solo = [GameRanks::Solo(vec![2, 1, 4, 3])];
    let crew = [GameRanks::Crew { won: true }];
    for (what, house, games) in [
        ("a Gang of Four game (4 entries)", None, &solo[..]),
        ("a crew game (4 against the house)", Some(&house), &crew[..]),
    ] {
        let (one, _) = time(|| rate_match(&ratings, house, games).map_or(0, |r| r.entries.len()));
        println!(
            "rating {what}: {one:?} = {:.0} updates/s ({:.3} sorts)",
            1.0 / one.as_secs_f64(),
            one.as_secs_f64() / sort.as_secs_f64()
        );
    }
}
