//! The Gang benchmarks, printed as plain figures (`harness = false`):
//! - 7-card evaluations per second, ours and the `rs_poker` crate's, on the same random hands in
//!   the same run, like for like: card arrays against card arrays (`evaluate(&[Card; 7])` vs
//!   rs_poker's `[Card]::rank`), and each library's prepared hand type against the other's
//!   (`EvalHand`, which carries its running key, vs rs_poker's bit-set `Hand`), each built before
//!   timing; and, since rs_poker 5 has one, its own prepared key (`SevenCardAccum`), which is the
//!   same design as ours (a running sum of per-card keys, a flush test, a perfect hash into a
//!   table of rank multisets): the like-for-like figure of the evaluator's design;
//! - random-playout engine steps per second (every action a random legal action of a random
//!   seat that may act, in every mode).
//!
//! Run: `cargo bench -p gangs-rules --bench the_gang`.

use gangs_rules::the_gang::{evaluate, Card, Config, EvalHand, Evaluator, Mode, TheGang};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rs_poker::core::{
    Card as RsCard, Hand as RsHand, Rankable, SevenCardAccum, Suit as RsSuit, Value as RsValue,
};
use std::hint::black_box;
use std::time::Instant;

const HANDS: usize = 1 << 20;
const ROUNDS: usize = 5;

fn random_hands(rng: &mut ChaCha8Rng) -> Vec<[Card; 7]> {
    let mut deck = Card::deck();
    (0..HANDS)
        .map(|_| {
            let (hand, _) = deck.partial_shuffle(rng, 7);
            [
                hand[0], hand[1], hand[2], hand[3], hand[4], hand[5], hand[6],
            ]
        })
        .collect()
}

fn to_rs(card: Card) -> RsCard {
    RsCard {
        value: RsValue::from_u8(card.rank()),
        suit: RsSuit::from_u8(card.suit().expect("suited") as u8),
    }
}

/// Best of `ROUNDS` timings of `f` over all hands, in evaluations per second.
fn best_rate(mut f: impl FnMut() -> u64) -> (f64, u64) {
    let mut best = f64::MAX;
    let mut check = 0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        check = black_box(f());
        best = best.min(start.elapsed().as_secs_f64());
    }
    (HANDS as f64 / best, check)
}

fn playout_steps_per_second(mode: Mode, games: u64) -> f64 {
    let mut steps = 0u64;
    let start = Instant::now();
    for seed in 0..games {
        let players = 3 + (seed % 4) as usize;
        let mut game = TheGang::new(Config::new(players, mode), seed, None).expect("valid config");
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        game.start();
        while !game.is_over() {
            let actors: Vec<usize> = (0..players)
                .filter(|&s| !game.legal_actions(s).is_empty())
                .collect();
            let seat = actors[rng.random_range(0..actors.len())];
            let legal = game.legal_actions(seat);
            let action = legal[rng.random_range(0..legal.len())];
            game.act(seat, action).expect("legal action");
            steps += 1;
        }
    }
    steps as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let hands = random_hands(&mut rng);
    let rs_hands: Vec<RsHand> = hands
        .iter()
        .map(|h| RsHand::new_with_cards(h.iter().map(|&c| to_rs(c)).collect()))
        .collect();
    let rs_slices: Vec<[RsCard; 7]> = hands.iter().map(|h| h.map(to_rs)).collect();

    // Both sides sum their results over the same hands; the inputs are hidden from the
    // optimiser once per round (black_box), the sums are consumed.
    let (ours, ours_check) = best_rate(|| {
        let mut sum = 0u64;
        for h in black_box(&hands) {
            sum = sum.wrapping_add(evaluate(h).0 as u64);
        }
        sum
    });
    let evaluator = Evaluator::new();
    let (ours_handle, handle_check) = best_rate(|| {
        let mut sum = 0u64;
        for h in black_box(&hands) {
            sum = sum.wrapping_add(evaluator.evaluate7(h).0 as u64);
        }
        sum
    });
    assert_eq!(ours_check, handle_check);
    let (theirs_hand, _) = best_rate(|| {
        let mut sum = 0u64;
        for h in black_box(&rs_hands) {
            sum = sum.wrapping_add(h.rank().value_bits() as u64);
        }
        sum
    });
    let (theirs_slice, _) = best_rate(|| {
        let mut sum = 0u64;
        for h in black_box(&rs_slices) {
            sum = sum.wrapping_add(h[..].rank().value_bits() as u64);
        }
        sum
    });
    let prepared: Vec<EvalHand> = hands.iter().map(|h| EvalHand::of(h)).collect();
    let (ours_prepared, prepared_check) = best_rate(|| {
        let mut sum = 0u64;
        for &h in black_box(&prepared) {
            sum = sum.wrapping_add(evaluator.evaluate_hand(h).0 as u64);
        }
        sum
    });
    assert_eq!(ours_check, prepared_check);
    let rs_accums: Vec<SevenCardAccum> = rs_slices
        .iter()
        .map(|h| {
            let mut accum = SevenCardAccum::new();
            h.iter().for_each(|&c| accum.add(c));
            accum
        })
        .collect();
    let (theirs_accum, _) = best_rate(|| {
        let mut sum = 0u64;
        for &h in black_box(&rs_accums) {
            sum = sum.wrapping_add(h.rank().value_bits() as u64);
        }
        sum
    });
    println!("7-card evaluation, {HANDS} random hands, best of {ROUNDS} rounds");
    println!("  card arrays:");
    println!("    gangs evaluate(&[Card])      : {ours:>14.0} evals/s (checksum {ours_check})");
    println!("    gangs Evaluator::evaluate7   : {ours_handle:>14.0} evals/s");
    println!("    rs_poker [Card]::rank        : {theirs_slice:>14.0} evals/s");
    println!("  prepared hands:");
    println!("    gangs Evaluator::evaluate_hand (EvalHand) : {ours_prepared:>14.0} evals/s");
    println!("    rs_poker Hand::rank (bit set)             : {theirs_hand:>14.0} evals/s");
    println!("    rs_poker SevenCardAccum::rank (its key)   : {theirs_accum:>14.0} evals/s");
    println!(
        "  speed-up, like for like: {:.1}x on card arrays, {:.1}x on prepared hands; tables {} KB",
        ours.max(ours_handle) / theirs_slice,
        ours_prepared / theirs_hand,
        gangs_rules::the_gang::evaluator::fast_table_bytes() / 1024
    );
    println!(
        "  the same design on both sides (prepared keys): {:.2}x against SevenCardAccum",
        ours_prepared / theirs_accum
    );

    println!("random playouts (random legal action of a random seat, 3..6 players)");
    for mode in Mode::ALL {
        let rate = playout_steps_per_second(mode, 300);
        println!("  {:<9}: {:>12.0} steps/s", mode.word(), rate);
    }
}
