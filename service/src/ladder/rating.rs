//! Rating a ladder's results: Weng-Lin (a Bayesian rating for several teams with ranks, the
//! `skillratings` crate) and the leaderboard's statistics (the Wilson interval of a win share).
//! Pure functions: the live ladder and a rebuild or rerate feed them the same results in the
//! same order and get the same numbers.
//!
//! Gang of Four: each seat is its own team, ranked by the game's outcome. The Gang is
//! cooperative: the crew is one team against the *house* (the game itself, one entry per
//! ladder, so per player count and options), which plays as `players` copies of its own rating
//! so that its μ reads like a player's; every crew member is updated by the crew's result.
//! A duplicate match (one deal per seat rotation) is rated once, on the sum of each team's
//! ranks over its games, so the luck of the deal cancels.

use gangs_proto::v1 as pb;
use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::MultiTeamOutcome;

/// A new entry's rating: μ 25, σ 25/3.
pub fn initial() -> pb::Rating {
    let r = WengLinRating::new();
    pb::Rating {
        mu: r.rating,
        sigma: r.uncertainty,
    }
}

/// The leaderboard's sort key: μ − 3σ (a bot must play to climb).
pub fn conservative(rating: &pb::Rating) -> f64 {
    rating.mu - 3.0 * rating.sigma
}

/// One game of a match as the rating sees it: the rank of each entry's seat (1 best; ties
/// share), in entry order, or for a team game whether the crew won.
#[derive(Debug, Clone, PartialEq)]
pub enum GameRanks {
    /// Each entry its own team: ranks in entry order.
    Solo(Vec<u32>),
    /// The crew (every entry) against the house.
    Crew { won: bool },
}

/// The ratings after a match: one per entry (entry order), and the house's for a crew match.
#[derive(Debug, Clone, PartialEq)]
pub struct Rated {
    pub entries: Vec<pb::Rating>,
    pub house: Option<pb::Rating>,
}

fn weng_lin(r: &pb::Rating) -> WengLinRating {
    WengLinRating {
        rating: r.mu,
        uncertainty: r.sigma,
    }
}

fn wire(r: &WengLinRating) -> pb::Rating {
    pb::Rating {
        mu: r.rating,
        sigma: r.uncertainty,
    }
}

/// Dense ordinal ranks (1 best, ties share) of totals where lower is better.
fn ordinal(totals: &[u64]) -> Vec<usize> {
    totals
        .iter()
        .map(|t| 1 + totals.iter().filter(|o| *o < t).count())
        .collect()
}

/// Rates one match: `before` the entries' ratings (entry order), `house` the house's rating
/// (crew matches), `games` each game's ranks. None when there is nothing to rate (no game, or
/// games of both shapes mixed).
pub fn rate_match(
    before: &[pb::Rating],
    house: Option<&pb::Rating>,
    games: &[GameRanks],
) -> Option<Rated> {
    let config = WengLinConfig::new();
    if games.is_empty() || before.is_empty() {
        return None;
    }
    if games.iter().all(|g| matches!(g, GameRanks::Crew { .. })) {
        let house = house.cloned().unwrap_or_else(initial);
        // Sum of ranks over the match: crew 1 and house 2 for a crew win, else the reverse.
        let wins = games
            .iter()
            .filter(|g| matches!(g, GameRanks::Crew { won: true }))
            .count() as u64;
        let losses = games.len() as u64 - wins;
        let totals = [wins + 2 * losses, 2 * wins + losses];
        let ranks = ordinal(&totals);
        let crew: Vec<WengLinRating> = before.iter().map(weng_lin).collect();
        let house_team = vec![weng_lin(&house); before.len()];
        let after = weng_lin_multi_team(
            &[
                (&crew[..], MultiTeamOutcome::new(ranks[0])),
                (&house_team[..], MultiTeamOutcome::new(ranks[1])),
            ],
            &config,
        );
        return Some(Rated {
            entries: after[0].iter().map(wire).collect(),
            // Every copy of the house moved the same way: the first is the house.
            house: Some(wire(&after[1][0])),
        });
    }
    let mut totals = vec![0u64; before.len()];
    for game in games {
        let GameRanks::Solo(ranks) = game else {
            return None;
        };
        if ranks.len() != before.len() {
            return None;
        }
        for (total, rank) in totals.iter_mut().zip(ranks) {
            *total += u64::from(*rank);
        }
    }
    let ranks = ordinal(&totals);
    let teams: Vec<[WengLinRating; 1]> = before.iter().map(|r| [weng_lin(r)]).collect();
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(&ranks)
        .map(|(team, rank)| (&team[..], MultiTeamOutcome::new(*rank)))
        .collect();
    let after = weng_lin_multi_team(&input, &config);
    Some(Rated {
        entries: after.iter().map(|team| wire(&team[0])).collect(),
        house: None,
    })
}

/// The 95% Wilson score interval of `wins` in `games` (0..1 each way with no game).
pub fn wilson(wins: u32, games: u32) -> (f64, f64) {
    if games == 0 {
        return (0.0, 1.0);
    }
    const Z: f64 = 1.959_963_984_540_054;
    let n = f64::from(games);
    let p = f64::from(wins) / n;
    let z2 = Z * Z;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    ((center - half).max(0.0), (center + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(mu: f64, sigma: f64) -> pb::Rating {
        pb::Rating { mu, sigma }
    }

    #[test]
    fn the_winner_gains_the_loser_loses_and_everyone_is_surer() {
        let before = vec![initial(); 4];
        let rated = rate_match(&before, None, &[GameRanks::Solo(vec![3, 1, 4, 2])]).unwrap();
        let mu: Vec<f64> = rated.entries.iter().map(|r| r.mu).collect();
        assert!(mu[1] > mu[3] && mu[3] > 25.0, "{mu:?}");
        assert!(mu[0] < 25.0 && mu[2] < mu[0], "{mu:?}");
        assert!(rated.entries.iter().all(|r| r.sigma < initial().sigma));
        assert!(rated.house.is_none());
    }

    #[test]
    fn an_upset_moves_ratings_more_than_the_expected_result() {
        let before = vec![r(35.0, 2.0), r(15.0, 2.0)];
        let expected = rate_match(&before, None, &[GameRanks::Solo(vec![1, 2])]).unwrap();
        let upset = rate_match(&before, None, &[GameRanks::Solo(vec![2, 1])]).unwrap();
        let gain = |rated: &Rated| (rated.entries[1].mu - 15.0).abs();
        assert!(
            gain(&upset) > 3.0 * gain(&expected),
            "{upset:?} {expected:?}"
        );
    }

    #[test]
    fn a_duplicate_match_is_rated_once_on_the_sum_of_ranks() {
        let before = vec![initial(); 4];
        // Entry 0 wins two rotations, entry 1 the other two: a tie on the sum for them.
        let games = [
            GameRanks::Solo(vec![1, 2, 3, 4]),
            GameRanks::Solo(vec![1, 2, 4, 3]),
            GameRanks::Solo(vec![2, 1, 3, 4]),
            GameRanks::Solo(vec![2, 1, 4, 3]),
        ];
        let rated = rate_match(&before, None, &games).unwrap();
        assert!((rated.entries[0].mu - rated.entries[1].mu).abs() < 1e-9);
        assert!((rated.entries[2].mu - rated.entries[3].mu).abs() < 1e-9);
        assert!(rated.entries[0].mu > rated.entries[2].mu);
        // One update, not four: sigma shrinks as after a single game.
        let single = rate_match(&before, None, &games[..1]).unwrap();
        assert!((rated.entries[0].sigma - single.entries[0].sigma).abs() < 1e-9);
    }

    #[test]
    fn a_crew_win_lifts_every_member_and_lowers_the_house() {
        let before = vec![r(20.0, 8.0), r(30.0, 3.0), initial()];
        let rated = rate_match(&before, None, &[GameRanks::Crew { won: true }]).unwrap();
        for (b, a) in before.iter().zip(&rated.entries) {
            assert!(a.mu > b.mu, "{before:?} -> {rated:?}");
        }
        // The surest member moves least.
        assert!(rated.entries[1].mu - 30.0 < rated.entries[0].mu - 20.0);
        let house = rated.house.unwrap();
        assert!(house.mu < 25.0);
        let lost = rate_match(&before, Some(&house), &[GameRanks::Crew { won: false }]).unwrap();
        assert!(lost.entries.iter().zip(&before).all(|(a, b)| a.mu < b.mu));
        assert!(lost.house.unwrap().mu > house.mu);
    }

    #[test]
    fn mismatched_shapes_are_not_rated() {
        let before = vec![initial(); 2];
        assert!(rate_match(&before, None, &[]).is_none());
        assert!(rate_match(&before, None, &[GameRanks::Solo(vec![1])]).is_none());
        let mixed = [GameRanks::Solo(vec![1, 2]), GameRanks::Crew { won: true }];
        assert!(rate_match(&before, None, &mixed).is_none());
    }

    #[test]
    fn wilson_intervals() {
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        let (low, high) = wilson(5, 10);
        assert!(
            (low - 0.2366).abs() < 1e-3 && (high - 0.7634).abs() < 1e-3,
            "{low} {high}"
        );
        let (low, high) = wilson(0, 20);
        assert_eq!(low, 0.0);
        assert!((high - 0.1611).abs() < 1e-3, "{high}");
        let (low, high) = wilson(20, 20);
        assert!((low - 0.8389).abs() < 1e-3 && high == 1.0, "{low}");
    }
}
