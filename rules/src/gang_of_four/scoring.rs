//! Scoring a deal (§7), choosing its loser, and the end and ranking of the game (§8).

use super::cards::{self, Mask};
use super::Options;

/// Penalty points for the cards left in a hand (§7 table).
pub fn penalty(cards_left: u32) -> u32 {
    let per_card = match cards_left {
        0 => 0,
        1..=7 => 1,
        8..=10 => 2,
        11..=13 => 3,
        14..=15 => 4,
        _ => 5,
    };
    cards_left * per_card
}

/// The loser of a deal: the seat with the most cards left. Ties: the highest cumulative score
/// after this deal, then the tied seat closest to `winner` going counter-clockwise; with
/// `loser_tie_strongest_card`, the tied seat holding the strongest single card first (then
/// the default order if even that is equal, as two twin cards are).
///
/// `winner` is the seat that went out, or the stand-in when the deal ended without one.
pub fn choose_loser(
    hands: &[Mask; 4],
    totals_after: &[u32; 4],
    winner: u8,
    options: &Options,
) -> u8 {
    let n = options.players;
    let most = (0..n)
        .map(|s| hands[s as usize].count_ones())
        .max()
        .unwrap_or(0);
    // Counter-clockwise distance from the winner (seat w-1 is 1); the winner itself comes last.
    let distance = |s: u8| {
        let d = (winner + n - s) % n;
        if d == 0 {
            n
        } else {
            d
        }
    };
    let strongest = |s: u8| {
        cards::strongest(hands[s as usize])
            .map(cards::single_strength)
            .unwrap_or(0)
    };
    (0..n)
        .filter(|&s| hands[s as usize].count_ones() == most)
        .max_by_key(|&s| {
            let by_card = if options.loser_tie_strongest_card {
                strongest(s)
            } else {
                0
            };
            (
                by_card,
                totals_after[s as usize],
                std::cmp::Reverse(distance(s)),
            )
        })
        .expect("at least one seat")
}

/// The game ends after a deal when some total reached the target and the lowest total is
/// held by one seat alone.
pub fn game_is_over(totals: &[u32; 4], options: &Options) -> bool {
    let seats = &totals[..options.players as usize];
    let reached = seats.iter().any(|&t| t >= options.target_score);
    let lowest = *seats.iter().min().unwrap_or(&0);
    reached && seats.iter().filter(|&&t| t == lowest).count() == 1
}

/// A seat's place in the final ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ranked {
    pub seat: u8,
    /// 1 is best; equal totals share a rank.
    pub rank: u8,
    pub total: u32,
}

/// Every seat by total, lowest first (seat order among equals), equal totals sharing a rank.
pub fn ranking(totals: &[u32; 4], players: u8) -> Vec<Ranked> {
    let mut seats: Vec<u8> = (0..players).collect();
    seats.sort_by_key(|&s| (totals[s as usize], s));
    seats
        .iter()
        .map(|&s| Ranked {
            seat: s,
            rank: 1
                + (0..players)
                    .filter(|&o| totals[o as usize] < totals[s as usize])
                    .count() as u8,
            total: totals[s as usize],
        })
        .collect()
}
