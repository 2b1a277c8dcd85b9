//! The crew policy in in-process The Gang games (no server): it only ever plays legal actions,
//! never stalls a phase, and opens clearly more vaults than random play.

use gangs_policies::the_gang::arena::{options, play_game, GameReport};
use gangs_policies::the_gang::crew::CrewPolicy;
use gangs_policies::{Policy, RandomPolicy};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn team(crew: bool, players: u64, seed: u64) -> Vec<Box<dyn Policy>> {
    (0..players)
        .map(|s| {
            let rng = ChaCha8Rng::seed_from_u64(seed * 31 + s);
            if crew {
                Box::new(CrewPolicy::new(rng)) as Box<dyn Policy>
            } else {
                Box::new(RandomPolicy::new(rng))
            }
        })
        .collect()
}

fn play(crew: bool, players: u32, mode: &str, games: u64) -> GameReport {
    play_capped(crew, players, mode, games, 0)
}

/// `max_moves` is the `max_moves_per_phase` option (0: the default, 6 x players).
fn play_capped(crew: bool, players: u32, mode: &str, games: u64, max_moves: u32) -> GameReport {
    let mut opts = options(players, mode);
    if let Some(gangs_proto::v1::game_options::Game::TheGang(o)) = &mut opts.game {
        o.max_moves_per_phase = Some(max_moves);
    }
    let mut total = GameReport::default();
    for seed in 0..games {
        // play_game fails on any action outside legal_actions.
        let r = play_game(&opts, seed, &mut team(crew, players as u64, seed), 200_000)
            .unwrap_or_else(|e| panic!("{mode} seed {seed}: {e}"));
        total.heists += r.heists;
        total.successes += r.successes;
        total.stalls += r.stalls;
    }
    total
}

#[test]
fn crew_opens_far_more_vaults_than_random_play() {
    let crew = play(true, 4, "basic", 20);
    let random = play(false, 4, "basic", 20);
    let rate = |r: &GameReport| r.successes as f64 / r.heists as f64;
    assert_eq!(crew.stalls, 0, "the crew never leaves a phase hanging");
    assert!(
        rate(&crew) > rate(&random) + 0.3,
        "crew {crew:?} vs random {random:?}"
    );
    assert!(rate(&crew) >= 0.6, "crew {crew:?}");
}

#[test]
fn with_one_move_per_player_the_crew_claims_in_seat_order_and_still_beats_random_play() {
    // No room for the chip digits: every seat takes one chip, in seat order, from its own
    // estimate and the claims before it. (Before claims, the seat-order placement opened 3%.)
    let crew = play_capped(true, 4, "basic", 30, 4);
    let random = play_capped(false, 4, "basic", 30, 4);
    let rate = |r: &GameReport| r.successes as f64 / r.heists as f64;
    assert_eq!(crew.stalls, 0, "the crew never leaves a phase hanging");
    assert!(
        rate(&crew) > rate(&random) + 0.15,
        "crew {crew:?} vs random {random:?}"
    );
}

#[test]
fn every_mode_and_table_size_plays_legally_to_the_end() {
    for (players, mode) in [
        (4, "advanced"),
        (4, "pro"),
        (4, "gangster"),
        (3, "advanced"),
        (6, "pro"),
    ] {
        let r = play(true, players, mode, 4);
        assert!(r.heists >= 4 * 3, "{players} {mode}: {r:?}");
        assert_eq!(r.stalls, 0, "{players} {mode}: {r:?}");
    }
}

#[test]
fn crew_seats_mixed_with_random_ones_still_finish() {
    let opts = options(4, "advanced");
    for seed in 0..4 {
        let mut policies = team(true, 4, seed);
        policies[1] = Box::new(RandomPolicy::new(ChaCha8Rng::seed_from_u64(seed)));
        play_game(&opts, seed, &mut policies, 200_000).expect("legal actions only");
    }
}
