//! The arena's arithmetic, free of processes and I/O: the seat plan (rotation, duplicate
//! seeds), 95% Wilson intervals, Elo from pairwise rank comparisons with a bootstrap interval,
//! and the tally of finished games into the per-bot table and The Gang's team numbers.

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// Every bot starts here.
pub const ELO_START: f64 = 1500.0;

/// The Elo step per pairwise comparison.
pub const ELO_K: f64 = 16.0;

/// Resamples of the games behind each rating's interval.
pub const ELO_RESAMPLES: usize = 200;

/// The seat of bot slot `slot` in game `game`: the bots move one seat on per game, so over
/// `players` consecutive games every slot sits once in every seat.
pub fn seat_of(slot: usize, game: u64, players: usize) -> usize {
    ((slot as u64 + game) % players as u64) as usize
}

/// The bot slot sitting at `seat` in game `game` (the inverse of [`seat_of`]).
pub fn slot_at(seat: usize, game: u64, players: usize) -> usize {
    let p = players as u64;
    ((seat as u64 + p - game % p) % p) as usize
}

/// How many games are played for `requested`: with `duplicate`, whole groups of `players`
/// rotations (N/P groups, rounded up); else exactly `requested`.
pub fn planned_games(requested: u64, players: usize, duplicate: bool) -> u64 {
    if duplicate {
        requested.div_ceil(players as u64) * players as u64
    } else {
        requested
    }
}

/// The deal seed of game `game`. With `duplicate` the `players` rotations of a group share
/// one seed, so every bot plays every hand of the group's deals once and luck cancels.
pub fn game_seed(base: u64, game: u64, players: usize, duplicate: bool) -> u64 {
    let key = if duplicate {
        game / players as u64
    } else {
        game
    };
    splitmix64(base ^ splitmix64(key))
}

/// The policy seed passed to the bot of `slot` in game `game`: reproducible from the arena's
/// seed, different for every bot and game.
pub fn bot_seed(base: u64, game: u64, slot: usize) -> u64 {
    splitmix64(splitmix64(base.wrapping_add(game)) ^ (slot as u64 + 1))
}

/// A well-mixed 64-bit hash (SplitMix64's finalizer), so neighbouring indices give unrelated
/// seeds.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The 95% Wilson score interval of `successes` out of `n` (`(0, 1)` when `n` is 0: nothing
/// is known). Unlike the normal approximation it stays inside [0, 1] and is sound for small
/// `n` and shares near 0 or 1.
pub fn wilson(successes: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n_f = n as f64;
    let p = successes as f64 / n_f;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n_f;
    let center = (p + z2 / (2.0 * n_f)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denominator;
    // At 0 or n successes the bound is exactly 0 or 1 (no rounding residue).
    let low = if successes == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let high = if successes >= n {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (low, high)
}

/// The mean of `values` with a 95% normal-approximation interval (`(mean, mean)` with fewer
/// than two values). Used for counts per game, where no binomial interval applies.
pub fn mean_interval(values: &[f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, mean, mean);
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = Z95 * (variance / n).sqrt();
    (mean, mean - half, mean + half)
}

/// One game's Elo update. `seats` holds (entry, rank) per seat, rank 1 best. Every pair of
/// seats held by different entries is one comparison (better rank: 1, tie: ½, worse: 0); the
/// changes are computed from the ratings before the game and applied together, so the seat
/// order does not matter.
pub fn elo_update(ratings: &mut [f64], seats: &[(usize, u32)]) {
    let mut delta = vec![0.0; ratings.len()];
    for (i, &(a, rank_a)) in seats.iter().enumerate() {
        for &(b, rank_b) in &seats[i + 1..] {
            if a == b {
                continue;
            }
            let expected_a = 1.0 / (1.0 + 10f64.powf((ratings[b] - ratings[a]) / 400.0));
            let score_a = match rank_a.cmp(&rank_b) {
                std::cmp::Ordering::Less => 1.0,
                std::cmp::Ordering::Equal => 0.5,
                std::cmp::Ordering::Greater => 0.0,
            };
            delta[a] += ELO_K * (score_a - expected_a);
            delta[b] -= ELO_K * (score_a - expected_a);
        }
    }
    for (rating, d) in ratings.iter_mut().zip(delta) {
        *rating += d;
    }
}

/// One seat of a finished game.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatResult {
    /// The bot slot (index into the expanded `--bot` list) that sat there.
    pub slot: usize,
    pub rank: u32,
    pub score: i64,
    pub won: bool,
}

/// The Gang's team result, from the final spectator view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamResult {
    pub vaults: u32,
    pub alarms: u32,
    pub won: bool,
}

/// A finished game.
#[derive(Debug, Clone, PartialEq)]
pub struct GameResult {
    pub game: u64,
    pub seats: Vec<SeatResult>,
    pub team: Option<TeamResult>,
}

/// One row of the table: a distinct `--bot` command, over every seat it held.
#[derive(Debug, Clone, PartialEq)]
pub struct BotRow {
    pub name: String,
    /// Games it played, in one seat or several.
    pub games: u64,
    /// Seat-games: a command in three seats of one game counts three.
    pub seat_games: u64,
    /// Seat-games at rank 1 (Gang of Four; tied firsts all count) or won (The Gang).
    pub seat_game_wins: u64,
    /// `seat_game_wins / seat_games`, with its 95% Wilson interval.
    pub win_share: f64,
    pub win_share_low: f64,
    pub win_share_high: f64,
    /// Per seat-game: penalty points (Gang of Four), vaults (The Gang).
    pub mean_score: f64,
    /// Elo over the games in the order played, with a 95% bootstrap interval.
    pub rating: f64,
    pub rating_low: f64,
    pub rating_high: f64,
}

/// The Gang's team numbers over every finished game.
#[derive(Debug, Clone, PartialEq)]
pub struct TeamTally {
    pub games: u64,
    pub heists: u64,
    pub heist_successes: u64,
    pub games_won: u64,
    pub games_lost: u64,
    /// Per game: mean, low, high.
    pub heists_per_game: (f64, f64, f64),
}

/// `slot_entry[slot]` is the row of the bot in that slot; `names` the rows' names. `results`
/// may come in any order: they are sorted by game so that the ratings are reproducible;
/// `seed` drives the resampling of the rating intervals.
pub fn tally(
    names: &[String],
    slot_entry: &[usize],
    results: &[GameResult],
    seed: u64,
) -> Vec<BotRow> {
    let mut sorted: Vec<&GameResult> = results.iter().collect();
    sorted.sort_by_key(|r| r.game);
    let mut games = vec![0u64; names.len()];
    let mut seat_games = vec![0u64; names.len()];
    let mut wins = vec![0u64; names.len()];
    let mut score_sum = vec![0i64; names.len()];
    for result in &sorted {
        let mut played = vec![false; names.len()];
        for seat in &result.seats {
            let entry = slot_entry[seat.slot];
            played[entry] = true;
            seat_games[entry] += 1;
            score_sum[entry] += seat.score;
            if is_win(seat, result.team.is_some()) {
                wins[entry] += 1;
            }
        }
        for (count, played) in games.iter_mut().zip(played) {
            *count += u64::from(played);
        }
    }
    let ratings = ratings(names.len(), slot_entry, &sorted);
    let intervals = rating_intervals(names.len(), slot_entry, &sorted, seed);
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (low, high) = wilson(wins[i], seat_games[i]);
            BotRow {
                name: name.clone(),
                games: games[i],
                seat_games: seat_games[i],
                seat_game_wins: wins[i],
                win_share: share(wins[i], seat_games[i]),
                win_share_low: low,
                win_share_high: high,
                mean_score: if seat_games[i] == 0 {
                    0.0
                } else {
                    score_sum[i] as f64 / seat_games[i] as f64
                },
                rating: ratings[i],
                rating_low: intervals[i].0,
                rating_high: intervals[i].1,
            }
        })
        .collect()
}

/// Every entry's Elo after `games`, in that order.
fn ratings(entries: usize, slot_entry: &[usize], games: &[&GameResult]) -> Vec<f64> {
    let mut ratings = vec![ELO_START; entries];
    for result in games {
        let seats: Vec<(usize, u32)> = result
            .seats
            .iter()
            .map(|seat| (slot_entry[seat.slot], seat.rank))
            .collect();
        elo_update(&mut ratings, &seats);
    }
    ratings
}

/// The 95% interval of every entry's rating, by bootstrap: the ratings over
/// [`ELO_RESAMPLES`] resamples of the games (as many as played, drawn with replacement, rated
/// in the order drawn), cut at the 2.5th and 97.5th percentiles. Deterministic from `seed`.
pub fn rating_intervals(
    entries: usize,
    slot_entry: &[usize],
    games: &[&GameResult],
    seed: u64,
) -> Vec<(f64, f64)> {
    if games.is_empty() {
        return vec![(ELO_START, ELO_START); entries];
    }
    let mut state = seed;
    let mut samples = vec![Vec::with_capacity(ELO_RESAMPLES); entries];
    for _ in 0..ELO_RESAMPLES {
        let drawn: Vec<&GameResult> = (0..games.len())
            .map(|_| {
                state = state.wrapping_add(1);
                games[(splitmix64(state) % games.len() as u64) as usize]
            })
            .collect();
        for (entry, rating) in ratings(entries, slot_entry, &drawn).into_iter().enumerate() {
            samples[entry].push(rating);
        }
    }
    samples
        .into_iter()
        .map(|mut values| {
            values.sort_by(f64::total_cmp);
            let last = (values.len() - 1) as f64;
            (
                values[(0.025 * last).floor() as usize],
                values[(0.975 * last).ceil() as usize],
            )
        })
        .collect()
}

/// Gang of Four: rank 1 (a tie for first is a win for each tied seat). The Gang: the team won.
fn is_win(seat: &SeatResult, cooperative: bool) -> bool {
    if cooperative {
        seat.won
    } else {
        seat.rank == 1
    }
}

/// The Gang's totals over the games that carry a team result.
pub fn team_tally(results: &[GameResult]) -> TeamTally {
    let teams: Vec<TeamResult> = results.iter().filter_map(|r| r.team).collect();
    let per_game: Vec<f64> = teams
        .iter()
        .map(|t| f64::from(t.vaults + t.alarms))
        .collect();
    TeamTally {
        games: teams.len() as u64,
        heists: teams.iter().map(|t| u64::from(t.vaults + t.alarms)).sum(),
        heist_successes: teams.iter().map(|t| u64::from(t.vaults)).sum(),
        games_won: teams.iter().filter(|t| t.won).count() as u64,
        games_lost: teams.iter().filter(|t| !t.won).count() as u64,
        heists_per_game: mean_interval(&per_game),
    }
}

/// `part / whole`, 0 when there is nothing.
pub fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-4
    }

    #[test]
    fn wilson_matches_known_values() {
        // 3 of 10: the textbook interval [0.1078, 0.6032].
        let (low, high) = wilson(3, 10);
        assert!(close(low, 0.1078) && close(high, 0.6032), "{low} {high}");
        // 0 of 10 and 10 of 10 stay inside [0, 1] and are not degenerate.
        let (low, high) = wilson(0, 10);
        assert!(low == 0.0 && close(high, 0.2775), "{low} {high}");
        let (low, high) = wilson(10, 10);
        assert!(close(low, 0.7225) && high == 1.0, "{low} {high}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        // Symmetric around one half.
        let (low, high) = wilson(50, 100);
        assert!(close(low + high, 1.0));
    }

    #[test]
    fn mean_interval_of_counts() {
        assert_eq!(mean_interval(&[]), (0.0, 0.0, 0.0));
        assert_eq!(mean_interval(&[4.0]), (4.0, 4.0, 4.0));
        let (mean, low, high) = mean_interval(&[3.0, 5.0]);
        // sd = sqrt(2), half = 1.96 * sqrt(2) / sqrt(2) = 1.96.
        assert!(close(mean, 4.0) && close(low, 4.0 - Z95) && close(high, 4.0 + Z95));
    }

    #[test]
    fn elo_update_from_pairwise_ranks() {
        let mut ratings = vec![ELO_START, ELO_START];
        elo_update(&mut ratings, &[(0, 1), (1, 2)]);
        assert!(close(ratings[0], 1508.0) && close(ratings[1], 1492.0));
        // A tie between equals changes nothing; the same entry is never compared to itself.
        let mut ratings = vec![ELO_START, ELO_START];
        elo_update(&mut ratings, &[(0, 1), (1, 1)]);
        assert_eq!(ratings, [ELO_START, ELO_START]);
        let mut ratings = vec![ELO_START];
        elo_update(&mut ratings, &[(0, 1), (0, 4), (0, 2)]);
        assert_eq!(ratings, [ELO_START]);
        // Four seats, one entry first: it gains 3 × 8; the total is conserved.
        let mut ratings = vec![ELO_START; 4];
        elo_update(&mut ratings, &[(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert!(close(ratings[0], 1524.0) && close(ratings[3], 1476.0));
        assert!(close(ratings.iter().sum::<f64>(), 4.0 * ELO_START));
        // An upset moves more than an expected win.
        let mut ratings = vec![1700.0, 1500.0];
        elo_update(&mut ratings, &[(0, 2), (1, 1)]);
        assert!(ratings[1] - 1500.0 > 8.0);
    }

    #[test]
    fn seats_rotate_through_every_seat() {
        let players = 4;
        for slot in 0..players {
            let mut seen: Vec<usize> = (0..players as u64)
                .map(|g| seat_of(slot, g, players))
                .collect();
            seen.sort();
            assert_eq!(seen, [0, 1, 2, 3]);
        }
        // Game g: bot i at seat (i + g) mod P, and slot_at inverts it.
        assert_eq!(seat_of(0, 1, 4), 1);
        assert_eq!(seat_of(3, 1, 4), 0);
        assert_eq!(seat_of(2, 7, 3), 0);
        for game in 0..10 {
            for slot in 0..3 {
                assert_eq!(slot_at(seat_of(slot, game, 3), game, 3), slot);
            }
        }
    }

    #[test]
    fn duplicate_shares_seeds_within_a_group() {
        let base = 42;
        let seeds: Vec<u64> = (0..8).map(|g| game_seed(base, g, 4, true)).collect();
        assert!(seeds[..4].iter().all(|&s| s == seeds[0]));
        assert!(seeds[4..].iter().all(|&s| s == seeds[4]));
        assert_ne!(seeds[0], seeds[4]);
        let seeds: Vec<u64> = (0..4).map(|g| game_seed(base, g, 4, false)).collect();
        for i in 0..4 {
            for j in i + 1..4 {
                assert_ne!(seeds[i], seeds[j]);
            }
        }
        assert_eq!(planned_games(5, 4, true), 8);
        assert_eq!(planned_games(8, 4, true), 8);
        assert_eq!(planned_games(1, 3, true), 3);
        assert_eq!(planned_games(5, 4, false), 5);
        assert_ne!(bot_seed(base, 0, 0), bot_seed(base, 0, 1));
        assert_ne!(bot_seed(base, 0, 0), bot_seed(base, 1, 0));
    }

    fn seat(slot: usize, rank: u32, score: i64) -> SeatResult {
        SeatResult {
            slot,
            rank,
            score,
            won: rank == 1,
        }
    }

    #[test]
    fn tally_aggregates_a_command_over_its_seats() {
        // Slots 1..3 are the same command: one row, games counted per seat-game.
        let names = vec!["greedy".to_string(), "random".to_string()];
        let slot_entry = [0, 1, 1, 1];
        let results = vec![
            GameResult {
                game: 1,
                seats: vec![seat(1, 1, 0), seat(2, 1, 0), seat(3, 3, 40), seat(0, 4, 60)],
                team: None,
            },
            GameResult {
                game: 0,
                seats: vec![
                    seat(0, 1, 0),
                    seat(1, 2, 10),
                    seat(2, 3, 20),
                    seat(3, 4, 30),
                ],
                team: None,
            },
        ];
        let rows = tally(&names, &slot_entry, &results, 5);
        assert_eq!((rows[0].games, rows[0].seat_games), (2, 2));
        assert_eq!(rows[0].seat_game_wins, 1);
        assert_eq!((rows[1].games, rows[1].seat_games), (2, 6));
        // The tie for first in game 1 is a win for both tied seats.
        assert_eq!(rows[1].seat_game_wins, 2);
        assert!(close(rows[0].mean_score, 30.0));
        assert!(close(rows[1].mean_score, 100.0 / 6.0));
        assert!(close(rows[0].win_share, 0.5));
        assert!(rows[0].win_share_low < 0.5 && rows[0].win_share_high > 0.5);
        // Game 0 (processed first): greedy beats three randoms, +24. Game 1: it loses to
        // three, at a rating advantage.
        assert!(rows[0].rating < ELO_START);
        assert!(close(rows[0].rating + rows[1].rating, 2.0 * ELO_START));
        // Resamples of two games: both orders, and one game twice; the interval holds them.
        assert!(rows[0].rating_low < rows[0].rating_high);
        assert!(rows[0].rating_low <= ELO_START - 20.0 && rows[0].rating_high >= ELO_START + 20.0);
        assert_eq!(
            tally(&names, &slot_entry, &results, 5),
            rows,
            "reproducible"
        );
        assert_eq!(team_tally(&results).games, 0);
    }

    #[test]
    fn team_tally_counts_heists() {
        let won = |won| SeatResult {
            slot: 0,
            rank: 1,
            score: 3,
            won,
        };
        let results = vec![
            GameResult {
                game: 0,
                seats: vec![won(true)],
                team: Some(TeamResult {
                    vaults: 3,
                    alarms: 1,
                    won: true,
                }),
            },
            GameResult {
                game: 1,
                seats: vec![won(false)],
                team: Some(TeamResult {
                    vaults: 1,
                    alarms: 3,
                    won: false,
                }),
            },
        ];
        let team = team_tally(&results);
        assert_eq!(team.games, 2);
        assert_eq!(team.heists, 8);
        assert_eq!(team.heist_successes, 4);
        assert_eq!(team.games_won, 1);
        assert_eq!(team.games_lost, 1);
        assert_eq!(team.heists_per_game, (4.0, 4.0, 4.0));
        let rows = tally(&["random".into()], &[0], &results, 1);
        assert_eq!((rows[0].games, rows[0].seat_game_wins), (2, 1));
    }
}
