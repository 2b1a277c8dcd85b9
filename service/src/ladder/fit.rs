//! `Standings` with `fit` (`gangs ladder standings NAME --fit`): an order-independent model of
//! every result beside the Weng-Lin ratings. Weng-Lin updates game after game, so the order of
//! the results moves the ratings a little; a Plackett–Luce model fitted by maximum likelihood
//! over all rated games at once does not. In it each bot has a strength γ, and a game's
//! ranking is drawn best first: the winner chosen among the whole table with probability
//! proportional to strength, the next among the rest, and so on (bots tied for a rank are each
//! chosen among the same rest: Breslow's approximation).
//!
//! The fit is Hunter's MM algorithm (2004) with a weak prior, one virtual win and one virtual
//! loss against a bot of strength 1, so that a bot that never won still gets a finite
//! strength. The figure given is the log-strength `ln γ`, centred so that the bots' mean is 0
//! (a difference of 1 means e ≈ 2.7 times as likely to finish ahead in a duel). Its 95%
//! interval comes from a bootstrap over the games (resampled with replacement, refitted; the
//! 2.5th and 97.5th percentiles). Tiers group the bots whose intervals overlap the tier's best,
//! best first. Pure; bounded by `MAX_GAMES` and `BOOTSTRAP_WORK`.
//!
//! A team ladder (The Gang: the crew wins or loses together against the game) has no ranking
//! between its bots, only crews' results. There each bot has a strength θ, a crew's log-odds of
//! winning are the sum of its members' θ against the house's (a logistic model over the crews'
//! compositions, fitted at once over every game: order-free), with a weak normal prior (σ 2)
//! so that a bot always seen with the same partners gets a finite share. Since the matchmaker
//! rotates partners, a strong bot's wins follow it to every crew and its θ separates from its
//! partners' luck. Same centring, bootstrap and tiers as above.

use super::rating::GameRanks;
use super::records::LadderState;
use rand::{Rng, SeedableRng};

/// The newest rated games the fit reads at most.
pub const MAX_GAMES: usize = 5000;
/// Bootstrap samples at most, and at most this many games refitted in all.
const MAX_SAMPLES: usize = 200;
const BOOTSTRAP_WORK: usize = 400_000;
const MAX_ITERATIONS: usize = 500;
const TOLERANCE: f64 = 1e-7;

/// One rated game: (entry, rank) per seat, rank 1 best.
pub type Ranking = Vec<(usize, u32)>;

/// One entry's fitted log-strength with its bootstrap interval and tier.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub strength: f64,
    pub low: f64,
    pub high: f64,
    /// 1 for the best tier.
    pub tier: u32,
}

/// Every rated game of season `season` of a ladder whose seats each play for themselves, in
/// match order (the newest `MAX_GAMES`): each game's ranks as the rating reads them (`match_ranks`).
pub fn rankings(state: &LadderState, season: u32) -> Vec<Ranking> {
    let mut games: Vec<Ranking> = state
        .matches
        .values()
        .filter(|m| m.season == season)
        .flat_map(|m| {
            state
                .match_ranks(m)
                .into_iter()
                .filter_map(|ranks| match ranks {
                    GameRanks::Solo(ranks) => Some(m.entries.iter().copied().zip(ranks).collect()),
                    GameRanks::Crew { .. } => None,
                })
        })
        .collect();
    let skip = games.len().saturating_sub(MAX_GAMES);
    games.drain(..skip);
    games
}

/// The fitted log-strengths of `entries` entries over `games` (entries that played no game get
/// none), with intervals and tiers.
pub fn fit(entries: usize, games: &[Ranking]) -> Vec<Option<Fitted>> {
    let played: Vec<bool> = (0..entries)
        .map(|e| games.iter().any(|g| g.iter().any(|&(x, _)| x == e)))
        .collect();
    let strengths = log_strengths(entries, games, None);
    let samples = if games.is_empty() {
        0
    } else {
        MAX_SAMPLES.min(BOOTSTRAP_WORK / games.len()).max(20)
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(games.len() as u64);
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(samples); entries];
    for _ in 0..samples {
        let resampled: Vec<Ranking> = (0..games.len())
            .map(|_| games[rng.random_range(0..games.len())].clone())
            .collect();
        let sample = log_strengths(entries, &resampled, Some(&strengths));
        for (e, s) in sample.into_iter().enumerate() {
            draws[e].push(s);
        }
    }
    let mut fitted: Vec<Option<Fitted>> = (0..entries)
        .map(|e| {
            played[e].then(|| {
                let (low, high) = percentiles(&mut draws[e]);
                Fitted {
                    strength: strengths[e],
                    low: low.min(strengths[e]),
                    high: high.max(strengths[e]),
                    tier: 0,
                }
            })
        })
        .collect();
    assign_tiers(&mut fitted);
    fitted
}

/// Tiers, best first: a bot joins the current tier while its interval reaches the tier's best
/// bot's interval; otherwise it opens the next tier.
fn assign_tiers(fitted: &mut [Option<Fitted>]) {
    let mut order: Vec<usize> = (0..fitted.len()).filter(|&e| fitted[e].is_some()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (fitted[a].as_ref().unwrap(), fitted[b].as_ref().unwrap());
        b.strength.total_cmp(&a.strength)
    });
    let mut tier = 0;
    let mut tier_low = f64::INFINITY;
    for e in order {
        let f = fitted[e].as_mut().expect("fitted");
        if tier == 0 || f.high < tier_low {
            tier += 1;
            tier_low = f.low;
        }
        f.tier = tier;
    }
}

/// One rated crew game: the crew's entries and whether it beat the house.
#[derive(Debug, Clone, PartialEq)]
pub struct CrewGame {
    pub crew: Vec<usize>,
    pub won: bool,
}

/// Every rated game of season `season` of a team ladder, in match order (the newest
/// `MAX_GAMES`).
pub fn crew_games(state: &LadderState, season: u32) -> Vec<CrewGame> {
    let mut games: Vec<CrewGame> = state
        .matches
        .values()
        .filter(|m| m.season == season)
        .flat_map(|m| {
            state
                .match_ranks(m)
                .into_iter()
                .filter_map(|ranks| match ranks {
                    GameRanks::Crew { won } => Some(CrewGame {
                        crew: m.entries.clone(),
                        won,
                    }),
                    GameRanks::Solo(_) => None,
                })
        })
        .collect();
    let skip = games.len().saturating_sub(MAX_GAMES);
    games.drain(..skip);
    games
}

/// The prior's precision on each θ (a normal prior of σ 2).
const CREW_PRIOR: f64 = 0.25;
/// The prior's precision on the house's intercept (σ 10).
const HOUSE_PRIOR: f64 = 0.01;

/// The fitted strengths of `entries` entries over crew games (entries that played none get
/// none), with bootstrap intervals and tiers.
pub fn fit_crews(entries: usize, games: &[CrewGame]) -> Vec<Option<Fitted>> {
    let played: Vec<bool> = (0..entries)
        .map(|e| games.iter().any(|g| g.crew.contains(&e)))
        .collect();
    let strengths = crew_strengths(entries, games, None);
    let samples = if games.is_empty() {
        0
    } else {
        MAX_SAMPLES.min(BOOTSTRAP_WORK / games.len()).max(20)
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(games.len() as u64);
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(samples); entries];
    for _ in 0..samples {
        let resampled: Vec<CrewGame> = (0..games.len())
            .map(|_| games[rng.random_range(0..games.len())].clone())
            .collect();
        let sample = crew_strengths(entries, &resampled, Some(&strengths));
        for (e, s) in sample.into_iter().enumerate() {
            draws[e].push(s);
        }
    }
    let mut fitted: Vec<Option<Fitted>> = (0..entries)
        .map(|e| {
            played[e].then(|| {
                let (low, high) = percentiles(&mut draws[e]);
                Fitted {
                    strength: strengths[e],
                    low: low.min(strengths[e]),
                    high: high.max(strengths[e]),
                    tier: 0,
                }
            })
        })
        .collect();
    assign_tiers(&mut fitted);
    fitted
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The crews' logistic model by cyclic coordinate Newton steps (the house's intercept with a
/// very weak prior, each θ the weak one), centred on the mean of the entries that played; `start` (a
/// previous fit, centred) speeds up a bootstrap sample.
fn crew_strengths(entries: usize, games: &[CrewGame], start: Option<&[f64]>) -> Vec<f64> {
    let mut theta: Vec<f64> = start.map_or_else(|| vec![0.0; entries], <[f64]>::to_vec);
    let mut games_of: Vec<Vec<usize>> = vec![Vec::new(); entries];
    for (g, game) in games.iter().enumerate() {
        for &e in &game.crew {
            if e < entries {
                games_of[e].push(g);
            }
        }
    }
    let wins = games.iter().filter(|g| g.won).count() as f64;
    let n = games.len() as f64;
    // The house's intercept starts at the crews' overall log-odds.
    let mut house = if games.is_empty() {
        0.0
    } else {
        let share = ((wins + 0.5) / (n + 1.0)).clamp(1e-6, 1.0 - 1e-6);
        (share / (1.0 - share)).ln()
            - games
                .iter()
                .map(|g| g.crew.iter().map(|&e| theta[e]).sum::<f64>())
                .sum::<f64>()
                / n
    };
    let mut eta: Vec<f64> = games
        .iter()
        .map(|g| house + g.crew.iter().map(|&e| theta[e]).sum::<f64>())
        .collect();
    for _ in 0..MAX_ITERATIONS {
        let mut change: f64 = 0.0;
        // The intercept: every game.
        if !games.is_empty() {
            // A very weak prior keeps it finite when every game was won (or lost).
            let (mut grad, mut hess) = (-HOUSE_PRIOR * house, HOUSE_PRIOR);
            for (g, game) in games.iter().enumerate() {
                let p = logistic(eta[g]);
                grad += f64::from(u8::from(game.won)) - p;
                hess += p * (1.0 - p);
            }
            let step = grad / hess.max(1e-12);
            house += step;
            eta.iter_mut().for_each(|x| *x += step);
            change = change.max(step.abs());
        }
        for e in 0..entries {
            if games_of[e].is_empty() {
                continue;
            }
            let (mut grad, mut hess) = (-CREW_PRIOR * theta[e], CREW_PRIOR);
            for &g in &games_of[e] {
                let p = logistic(eta[g]);
                grad += f64::from(u8::from(games[g].won)) - p;
                hess += p * (1.0 - p);
            }
            let step = grad / hess;
            theta[e] += step;
            for &g in &games_of[e] {
                eta[g] += step;
            }
            change = change.max(step.abs());
        }
        if change < TOLERANCE {
            break;
        }
    }
    let active: Vec<f64> = (0..entries)
        .filter(|&e| !games_of[e].is_empty())
        .map(|e| theta[e])
        .collect();
    let mean = if active.is_empty() {
        0.0
    } else {
        active.iter().sum::<f64>() / active.len() as f64
    };
    theta.into_iter().map(|t| t - mean).collect()
}

/// The 2.5th and 97.5th percentiles (0, 0 without draws).
fn percentiles(draws: &mut [f64]) -> (f64, f64) {
    if draws.is_empty() {
        return (0.0, 0.0);
    }
    draws.sort_by(f64::total_cmp);
    let at = |p: f64| draws[((draws.len() - 1) as f64 * p).round() as usize];
    (at(0.025), at(0.975))
}

/// Plackett–Luce log-strengths by Hunter's MM iterations, centred on the mean of the entries
/// that played; `start` (a previous fit) speeds up a bootstrap sample.
fn log_strengths(entries: usize, games: &[Ranking], start: Option<&[f64]>) -> Vec<f64> {
    let mut gamma: Vec<f64> = match start {
        Some(s) => s.iter().map(|x| x.exp()).collect(),
        None => vec![1.0; entries],
    };
    // Choices won: each entry's placings ahead of someone, plus the prior's virtual win.
    let mut wins = vec![1.0; entries];
    for game in games {
        for &(entry, rank) in game {
            if game.iter().any(|&(_, other)| other > rank) {
                wins[entry] += 1.0;
            }
        }
    }
    let mut played = vec![false; entries];
    for game in games {
        for &(entry, _) in game {
            played[entry] = true;
        }
    }
    for _ in 0..MAX_ITERATIONS {
        // Σ over the choices an entry was part of: 1 / (total strength of that choice's set).
        let mut denominators: Vec<f64> = gamma.iter().map(|g| 2.0 / (g + 1.0)).collect();
        for game in games {
            let mut ranks: Vec<u32> = game.iter().map(|&(_, r)| r).collect();
            ranks.sort_unstable();
            ranks.dedup();
            // Each rank but the last opens a choice among those ranked there or below.
            for &rank in ranks.iter().take(ranks.len().saturating_sub(1)) {
                let set: f64 = game
                    .iter()
                    .filter(|&&(_, r)| r >= rank)
                    .map(|&(e, _)| gamma[e])
                    .sum();
                let tied = game.iter().filter(|&&(_, r)| r == rank).count() as f64;
                for &(e, r) in game {
                    if r >= rank {
                        denominators[e] += tied / set;
                    }
                }
            }
        }
        let mut change: f64 = 0.0;
        for e in 0..entries {
            let next = wins[e] / denominators[e];
            change = change.max((next.ln() - gamma[e].ln()).abs());
            gamma[e] = next;
        }
        if change < TOLERANCE {
            break;
        }
    }
    let logs: Vec<f64> = gamma.iter().map(|g| g.ln()).collect();
    let active: Vec<f64> = (0..entries)
        .filter(|&e| played[e])
        .map(|e| logs[e])
        .collect();
    let mean = if active.is_empty() {
        0.0
    } else {
        active.iter().sum::<f64>() / active.len() as f64
    };
    logs.into_iter().map(|l| l - mean).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Games where entry 0 always finishes first, 1 second, 2 third (four bots, the fourth last).
    fn ordered(n: usize) -> Vec<Ranking> {
        (0..n)
            .map(|_| vec![(0, 1), (1, 2), (2, 3), (3, 4)])
            .collect()
    }

    #[test]
    fn a_consistent_order_is_recovered_with_separate_tiers() {
        let fitted = fit(4, &ordered(60));
        let f: Vec<&Fitted> = fitted.iter().map(|f| f.as_ref().unwrap()).collect();
        assert!(f[0].strength > f[1].strength && f[1].strength > f[2].strength);
        assert!(f[2].strength > f[3].strength);
        let mean: f64 = f.iter().map(|x| x.strength).sum::<f64>() / 4.0;
        assert!(mean.abs() < 1e-9, "centred: {mean}");
        for x in &f {
            assert!(x.low <= x.strength && x.strength <= x.high, "{x:?}");
        }
    }

    #[test]
    fn the_order_of_the_games_does_not_matter() {
        let mut games = ordered(10);
        games.extend((0..10).map(|_| vec![(1, 1), (0, 2), (3, 3), (2, 4)]));
        let forward = log_strengths(4, &games, None);
        games.reverse();
        let backward = log_strengths(4, &games, None);
        for (a, b) in forward.iter().zip(&backward) {
            assert!((a - b).abs() < 1e-6, "{forward:?} vs {backward:?}");
        }
        // Entries 0 and 1 each won half of their duels: equal strength.
        assert!((forward[0] - forward[1]).abs() < 1e-6, "{forward:?}");
    }

    #[test]
    fn equal_bots_share_one_tier_and_a_bot_without_games_gets_no_fit() {
        // Three bots that take turns winning; entry 3 never played.
        let games: Vec<Ranking> = (0..30)
            .map(|i| {
                let order = [(i % 3), (i + 1) % 3, (i + 2) % 3];
                order
                    .iter()
                    .enumerate()
                    .map(|(r, &e)| (e, r as u32 + 1))
                    .collect()
            })
            .collect();
        let fitted = fit(4, &games);
        assert!(fitted[3].is_none());
        let tiers: Vec<u32> = fitted[..3]
            .iter()
            .map(|f| f.as_ref().unwrap().tier)
            .collect();
        assert_eq!(tiers, vec![1, 1, 1]);
    }

    #[test]
    fn a_winless_bot_gets_a_finite_strength() {
        let fitted = fit(4, &ordered(5));
        let last = fitted[3].as_ref().unwrap();
        assert!(
            last.strength.is_finite() && last.low.is_finite(),
            "{last:?}"
        );
        assert!(last.tier > 1, "{fitted:?}");
    }

    /// Crews of three drawn from six entries, every pair together as often: entries 0-2 are
    /// strong (each adds 1 to the crew's log-odds), 3-5 weak; results drawn from that model.
    fn crews(n: usize, seed: u64) -> Vec<CrewGame> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let mut crew: Vec<usize> = (0..6).collect();
                for k in (1..6).rev() {
                    crew.swap(k, rng.random_range(0..=k));
                }
                crew.truncate(3);
                let strong = crew.iter().filter(|&&e| e < 3).count() as f64;
                let won = rng.random::<f64>() < logistic(-1.5 + strong);
                let _ = i;
                CrewGame { crew, won }
            })
            .collect()
    }

    #[test]
    fn crews_separate_their_members_whatever_the_order() {
        let games = crews(600, 7);
        let fitted = fit_crews(7, &games);
        assert!(fitted[6].is_none(), "entry 6 never played");
        let f: Vec<&Fitted> = fitted[..6].iter().map(|f| f.as_ref().unwrap()).collect();
        let weakest_strong = f[..3].iter().map(|x| x.strength).fold(f64::MAX, f64::min);
        let strongest_weak = f[3..].iter().map(|x| x.strength).fold(f64::MIN, f64::max);
        assert!(weakest_strong > strongest_weak, "{f:?}");
        // Equal bots: overlapping intervals.
        assert!(f[0].low <= f[1].high && f[1].low <= f[0].high, "{f:?}");
        let mut reversed = games.clone();
        reversed.reverse();
        let a = crew_strengths(7, &games, None);
        let b = crew_strengths(7, &reversed, None);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-6, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn a_crew_that_always_wins_or_loses_gets_finite_strengths() {
        let games: Vec<CrewGame> = (0..30)
            .map(|i| CrewGame {
                crew: if i % 2 == 0 { vec![0, 1] } else { vec![2, 3] },
                won: i % 2 == 0,
            })
            .collect();
        let s = crew_strengths(4, &games, None);
        assert!(s.iter().all(|x| x.is_finite()), "{s:?}");
        assert!(s[0] > s[2], "{s:?}");
    }

    #[test]
    fn tied_ranks_count_as_equal() {
        let games: Vec<Ranking> = (0..20).map(|_| vec![(0, 1), (1, 1), (2, 3)]).collect();
        let s = log_strengths(3, &games, None);
        assert!((s[0] - s[1]).abs() < 1e-6, "{s:?}");
        assert!(s[0] > s[2], "{s:?}");
    }
}
