//! `RerateLadder` (`gangs ladder rerate NAME`): the leaderboard recomputed from the games' own
//! logs, as an auditor would. The ladder's log is folded again from its creation; each result
//! record is replaced by one made from its game's log (replayed by the engine: the outcome, and
//! the seats' timeouts) with the ratings recomputed by the same step the live path uses
//! ([`rate_game`]). The result is compared with the leaderboard the same ladder log folds into
//! (what `Standings` answers and a restart rebuilds), so a ladder that rated a game from a wrong
//! outcome, twice, or not at all shows up as a difference. Nothing is written.

use super::fit;
use super::play::{hosted_seats, rate_game, seat_timeouts};
use super::read_models::{apply_fit, standings};
use super::records::{self, LadderState};
use super::Ladder;
use crate::error::HostError;
use gangs_proto::v1 as pb;
use pb::ladder_record::Record as Lr;
use std::collections::HashMap;

/// Difference lines returned at most.
const MAX_DIFFERENCES: usize = 50;

/// Recomputes `ladder`'s leaderboard of season `season` (0: the current one) from its games'
/// logs and compares it with the kept one. Every season is refolded (each starts from the
/// initial rating), so a season that is over is compared by its frozen table.
pub async fn rerate(ladder: &Ladder, season: u32) -> Result<pb::RerateLadderResponse, HostError> {
    let log_id = ladder.state.lock().await.log_id.clone();
    let store = &ladder.ctx.ladder_logs;
    let records = store.load_game(&log_id).await.map_err(|e| {
        HostError::unavailable(format!(
            "the log of ladder {} could not be read: {e}; try again",
            ladder.name
        ))
    })?;
    let broken = |e: String| HostError::internal(format!("ladder {}: {e}", ladder.name));
    // What the ladder keeps, as of the same records.
    let kept = LadderState::rebuild(&log_id, &records).map_err(broken)?;
    let mut fresh =
        LadderState::rebuild(&log_id, &records[..1.min(records.len())]).map_err(broken)?;
    let season = if season == 0 {
        kept.info.season
    } else {
        season
    };
    let mut games = 0;
    for record in records.iter().skip(1) {
        let mut ladder_record = records::from_log(record).map_err(broken)?;
        if let Lr::Rated(kept_result) = &ladder_record {
            let m = fresh
                .matches
                .get(&kept_result.r#match)
                .cloned()
                .ok_or_else(|| broken(format!("record {} rates an unknown match", record.seq)))?;
            let (outcome, log) = if kept_result.game_id.is_empty() {
                // The game could not be set up: void, with no log.
                (None, Vec::new())
            } else {
                game_outcome(ladder, &kept_result.game_id).await?
            };
            let timeouts = seat_timeouts(&log, &hosted_seats(&fresh, &m, kept_result.game));
            let game_id = kept_result.game_id.clone();
            let result = rate_game(&fresh, &m, kept_result.game, game_id, outcome, &timeouts);
            games += u32::from(!result.void && m.season == season);
            ladder_record = Lr::Rated(result);
        }
        fresh
            .apply(record.seq, record.unix_ms, ladder_record)
            .map_err(broken)?;
    }
    let (fresh, kept) = if season == kept.info.season {
        (fresh, kept)
    } else {
        let not_found = || {
            HostError::not_found(format!(
                "ladder {} has no season {season} that is over (its current season is {})",
                ladder.name, kept.info.season
            ))
        };
        (
            fresh.as_of_season(season).ok_or_else(not_found)?,
            kept.as_of_season(season).ok_or_else(not_found)?,
        )
    };
    let mut recomputed = standings(&fresh);
    let mut kept_rows = standings(&kept);
    if fresh.team_game() {
        // A team ladder's rating is its crews' fit: recomputed the same way on both sides.
        for (state, rows) in [(&fresh, &mut recomputed), (&kept, &mut kept_rows)] {
            let (entries, games) = (state.entries.len(), fit::crew_games(state, season));
            let fitted = tokio::task::spawn_blocking(move || fit::fit_crews(entries, &games))
                .await
                .map_err(|e| HostError::internal(format!("the fit failed: {e}")))?;
            apply_fit(&state.by_name, &fitted, rows, true);
        }
    }
    let differences = compare(&kept_rows, &recomputed);
    Ok(pb::RerateLadderResponse {
        standings: recomputed,
        games,
        same: differences.is_empty(),
        differences: differences.into_iter().take(MAX_DIFFERENCES).collect(),
    })
}

/// A finished game's outcome by its rules (None when it was cancelled or abandoned), and its log.
async fn game_outcome(
    ladder: &Ladder,
    game_id: &str,
) -> Result<(Option<pb::Outcome>, Vec<pb::LogRecord>), HostError> {
    let log = ladder.ctx.store.load_game(game_id).await.map_err(|e| {
        HostError::unavailable(format!(
            "the log of ladder game {game_id} could not be read: {e}; try again"
        ))
    })?;
    if log.is_empty() {
        return Err(HostError::failed_precondition(format!(
            "ladder game {game_id} has no log (deleted by --retain-finished?): the ladder cannot be rerated from its games"
        )));
    }
    let replayed = gangs_games::replay::replay(&log)
        .map_err(|e| HostError::internal(format!("ladder game {game_id} does not replay: {e}")))?;
    let outcome = if replayed.ended().is_some() {
        None
    } else {
        replayed.game().and_then(|g| g.outcome())
    };
    Ok((outcome, log))
}

/// A line per entry whose row differs between the kept leaderboard and the recomputed one.
fn compare(kept: &[pb::Standing], recomputed: &[pb::Standing]) -> Vec<String> {
    let key = |s: &pb::Standing| records::entry_name(&s.bot, &s.version);
    let fresh: HashMap<String, &pb::Standing> = recomputed.iter().map(|s| (key(s), s)).collect();
    let mut lines = Vec::new();
    for row in kept {
        match fresh.get(&key(row)) {
            None => lines.push(format!(
                "{}: missing from the recomputed leaderboard",
                key(row)
            )),
            Some(other) if *other != row => lines.push(format!(
                "{}: kept {}; from the games' logs {}",
                key(row),
                summary(row),
                summary(other)
            )),
            Some(_) => {}
        }
    }
    for row in recomputed {
        if !kept.iter().any(|k| key(k) == key(row)) {
            lines.push(format!("{}: only in the recomputed leaderboard", key(row)));
        }
    }
    lines
}

fn summary(s: &pb::Standing) -> String {
    let rating = s.rating.unwrap_or_default();
    format!(
        "mu {:.4} sigma {:.4}, {} games, {} wins, mean score {:.2}, {} timeouts",
        rating.mu, rating.sigma, s.games, s.wins, s.mean_score, s.timeouts
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(bot: &str, mu: f64, games: u32) -> pb::Standing {
        pb::Standing {
            bot: bot.into(),
            version: "1".into(),
            rating: Some(pb::Rating { mu, sigma: 3.0 }),
            games,
            ..Default::default()
        }
    }

    #[test]
    fn equal_leaderboards_have_no_differences() {
        let table = vec![row("a", 30.0, 4), row("b", 20.0, 4)];
        assert!(compare(&table, &table.clone()).is_empty());
    }

    #[test]
    fn every_differing_missing_or_extra_entry_is_named() {
        let kept = vec![row("a", 30.0, 4), row("b", 20.0, 4)];
        let fresh = vec![row("a", 31.0, 4), row("c", 20.0, 4)];
        let lines = compare(&kept, &fresh);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("a@1: kept mu 30.0000"), "{lines:?}");
        assert!(lines[1].starts_with("b@1: missing"), "{lines:?}");
        assert!(lines[2].starts_with("c@1: only in"), "{lines:?}");
    }
}
