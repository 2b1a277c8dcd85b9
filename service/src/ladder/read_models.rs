//! The ladder's read models: the standings table (and a season's frozen one), a bot's report
//! page, a page of the ladder's games, each built from the ladder's state as the gRPC adapter
//! (`api.rs`) and the web viewer answer them.

use super::records::{entry_name, named_summary, seat_outcome, version_of, LadderState};
use super::{fit, rating};
use crate::error::HostError;
use gangs_proto::v1 as pb;

/// The index of `bot@version` (empty version: "1") in `state`, or NOT_FOUND naming the ladder.
pub(super) fn entry_of(
    state: &LadderState,
    ladder: &str,
    bot: &str,
    version: &str,
) -> Result<usize, HostError> {
    let name = entry_name(bot, &version_of(version));
    state.by_name.get(&name).copied().ok_or_else(|| {
        HostError::not_found(format!(
            "no bot {name} on ladder {ladder}: `gangs ladder standings {ladder}` lists its bots"
        ))
    })
}

/// Recent games on a bot's page, and rating points in its history, at most.
pub const REPORT_GAMES: usize = 50;
pub const REPORT_HISTORY: usize = 200;

/// "1st", "2nd", "3rd", "4th"...
pub(super) fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Entry `index`'s page: its row of `rows` (the leaderboard, live states included), its recent
/// games from its seat, its rating history, its pauses and caps.
pub fn bot_report(
    state: &LadderState,
    index: usize,
    rows: &[pb::Standing],
) -> pb::BotReportResponse {
    let entry = &state.entries[index];
    let (rank, row) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| !r.house && r.bot == entry.bot && r.version == entry.version)
        .map(|(i, r)| (i as u32 + 1, r.clone()))
        .unwrap_or_default();
    let team = state.team_game();
    let players = state.info.players;
    let mut recent_games = Vec::new();
    let mut history = std::collections::VecDeque::new();
    for m in state.matches.values() {
        let Some(position) = m.entries.iter().position(|&e| e == index) else {
            continue;
        };
        for game in &m.games {
            let Some(result) = &game.result else { continue };
            if let Some(rating) = result.ratings_after.get(position) {
                if history.len() == REPORT_HISTORY {
                    history.pop_front();
                }
                history.push_back(pb::RatingPoint {
                    game_id: result.game_id.clone(),
                    unix_ms: game.finished_unix_ms.unwrap_or(m.matched_unix_ms),
                    rating: Some(*rating),
                    conservative: rating::conservative(rating),
                });
            }
        }
    }
    'newest: for m in state.matches.values().rev() {
        if !m.entries.contains(&index) {
            continue;
        }
        for (g, game) in m.games.iter().enumerate().rev() {
            if recent_games.len() == REPORT_GAMES {
                break 'newest;
            }
            let seats = super::matchmaker::seating(&m.entries, m.no, g);
            let Some(seat) = seats.iter().position(|&e| e == index) else {
                continue;
            };
            let names: Vec<String> = seats.iter().map(|&e| state.entries[e].name()).collect();
            let mut row = pb::BotGame {
                game_id: game.game_id.clone().unwrap_or_default(),
                r#match: m.no,
                seat: seat as u32,
                matched_unix_ms: m.matched_unix_ms,
                finished_unix_ms: game.finished_unix_ms,
                ended: "playing".into(),
                result: "playing".into(),
                ..Default::default()
            };
            if let Some(result) = &game.result {
                row.timeouts = result.timeouts.get(seat).copied().unwrap_or(0);
                if result.void {
                    row.ended = "aborted".into();
                    row.result = "void (not rated)".into();
                    row.void_reason.clone_from(&result.void_reason);
                } else {
                    row.ended = "finished".into();
                    let outcome = result.outcome.as_ref();
                    if let Some(o) = outcome.and_then(|o| seat_outcome(o, seat)) {
                        row.rank = o.rank;
                        row.score = o.score;
                        row.won = o.won;
                        row.result = match (team, o.won) {
                            (_, true) => "won".into(),
                            (true, false) => "lost".into(),
                            (false, false) => format!("{} of {players}", ordinal(o.rank)),
                        };
                    }
                    if let Some(o) = outcome {
                        row.summary = named_summary(&o.summary, &names);
                    }
                }
            }
            row.names = names;
            recent_games.push(row);
        }
    }
    pb::BotReportResponse {
        bot: entry.bot.clone(),
        version: entry.version.clone(),
        state: row.state,
        state_reason: row.state_reason.clone(),
        rating: Some(entry.rating),
        games: entry.games,
        recent_games,
        standing: Some(row),
        rank,
        history: history.into(),
        pauses: entry.pauses.iter().cloned().collect(),
        caps: entry.caps.iter().cloned().collect(),
        ladder: Some(state.info.clone()),
    }
}

/// Rows of a season that is over: its frozen figures, without what a bot is doing now (only
/// the retired mark stays).
pub(super) fn frozen_rows(rows: &mut [pb::Standing]) {
    for row in rows.iter_mut() {
        row.playing = 0;
        row.paused = false;
        row.state = if row.retired {
            pb::BotState::Retired as i32
        } else {
            pb::BotState::Unspecified as i32
        };
        row.state_reason.clear();
        row.paused_since_unix_ms = 0;
        row.pause_reason = 0;
        row.capped_until_unix_ms = 0;
    }
}

/// Season `season` (0: the current one) of a ladder's state, NOT_FOUND for one not begun.
pub(super) fn season_of(state: &LadderState, name: &str, season: u32) -> Result<u32, HostError> {
    let current = state.info.season;
    match season {
        0 => Ok(current),
        n if n <= current => Ok(n),
        n => Err(HostError::not_found(format!(
            "ladder {name} has no season {n}: its current season is {current}"
        ))),
    }
}

/// The leaderboard of a ladder's state, best conservative rating first.
pub fn standings(state: &LadderState) -> Vec<pb::Standing> {
    let mut rows: Vec<pb::Standing> = state
        .entries
        .iter()
        .map(|e| {
            let (low, high) = rating::wilson(e.wins, e.games);
            pb::Standing {
                bot: e.bot.clone(),
                version: e.version.clone(),
                rating: Some(e.rating),
                conservative: rating::conservative(&e.rating),
                games: e.games,
                wins: e.wins,
                win_share: share(e.wins, e.games),
                win_share_low: low,
                win_share_high: high,
                mean_score: if e.games == 0 {
                    0.0
                } else {
                    e.score_sum as f64 / f64::from(e.games)
                },
                timeouts: e.timeouts,
                playing: e.playing,
                paused: e.paused.is_some() && !e.retired,
                retired: e.retired,
                house: false,
                trend: e.trend.iter().copied().collect(),
                state: logged_state(e) as i32,
                state_reason: e
                    .paused
                    .as_ref()
                    .map(|(_, detail)| detail.clone())
                    .unwrap_or_default(),
                paused_since_unix_ms: if e.retired { 0 } else { e.paused_unix_ms },
                pause_reason: match (&e.paused, e.retired) {
                    (Some((reason, _)), false) => *reason as i32,
                    _ => 0,
                },
                ..Default::default()
            }
        })
        .collect();
    if state.team_game() {
        let (low, high) = rating::wilson(state.house_wins, state.house_games);
        rows.push(pb::Standing {
            bot: "house".into(),
            version: format!("{}p", state.info.players),
            rating: Some(state.house),
            conservative: rating::conservative(&state.house),
            games: state.house_games,
            wins: state.house_wins,
            win_share: share(state.house_wins, state.house_games),
            win_share_low: low,
            win_share_high: high,
            house: true,
            trend: state.house_trend.iter().copied().collect(),
            ..Default::default()
        });
    }
    rows.sort_by(|a, b| {
        b.conservative
            .total_cmp(&a.conservative)
            .then_with(|| (&a.bot, &a.version).cmp(&(&b.bot, &b.version)))
    });
    rows
}

/// Sets each row's fit from `fitted` (by entry); a team ladder's rows are then ordered by it
/// (the fit is a team ladder's rating: bots with games first, strongest first).
pub fn apply_fit(
    by_name: &std::collections::HashMap<String, usize>,
    fitted: &[Option<fit::Fitted>],
    rows: &mut [pb::Standing],
    order_by_fit: bool,
) {
    for row in rows.iter_mut() {
        let entry = by_name.get(&entry_name(&row.bot, &row.version));
        let Some(Some(f)) = entry.and_then(|&e| fitted.get(e)) else {
            continue;
        };
        row.fit = Some(f.strength);
        row.fit_low = f.low;
        row.fit_high = f.high;
        row.tier = f.tier;
    }
    if order_by_fit {
        // Stable: rows without a fit keep the conservative rating's order, after the others.
        rows.sort_by(|a, b| match (a.fit, b.fit) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
    }
}

/// An entry's state as its ladder's log has it (retired, paused, playing; idle otherwise); the
/// Standings call adds what only the running ladder knows (queued, capped).
pub(super) fn logged_state(e: &super::records::Entry) -> pb::BotState {
    if e.retired {
        pb::BotState::Retired
    } else if e.paused.is_some() {
        pb::BotState::Paused
    } else if e.playing > 0 {
        pb::BotState::Playing
    } else {
        pb::BotState::Idle
    }
}

pub(super) fn share(wins: u32, games: u32) -> f64 {
    if games == 0 {
        0.0
    } else {
        f64::from(wins) / f64::from(games)
    }
}

/// The ladder's games, newest first; `after` the previous page's last (match, game); `only`:
/// the games of that entry alone. Each outcome's summary names the bots.
pub(super) fn games_page(
    state: &LadderState,
    after: Option<(u64, u32)>,
    size: usize,
    season: u32,
    only: Option<usize>,
) -> (Vec<pb::LadderGame>, String) {
    let mut games = Vec::new();
    let mut last = None;
    let chosen = state
        .matches
        .values()
        .rev()
        .filter(|m| season == 0 || m.season == season)
        .filter(|m| only.is_none_or(|entry| m.entries.contains(&entry)));
    for m in chosen {
        for (g, game) in m.games.iter().enumerate().rev() {
            let key = (m.no, g as u32);
            if after.is_some_and(|a| key >= a) {
                continue;
            }
            if games.len() == size {
                let (no, g): (u64, u32) = last.expect("a full page");
                return (games, format!("{no}.{g}"));
            }
            let seats = super::matchmaker::seating(&m.entries, m.no, g);
            let result = game.result.as_ref();
            let names: Vec<String> = seats.iter().map(|&e| state.entries[e].name()).collect();
            let outcome = result.and_then(|r| r.outcome.clone()).map(|mut o| {
                o.summary = named_summary(&o.summary, &names);
                o
            });
            games.push(pb::LadderGame {
                game_id: game.game_id.clone().unwrap_or_default(),
                r#match: m.no,
                matched_unix_ms: m.matched_unix_ms,
                finished_unix_ms: game.finished_unix_ms,
                names,
                outcome,
                void: result.is_some_and(|r| r.void),
                void_reason: result.map(|r| r.void_reason.clone()).unwrap_or_default(),
            });
            last = Some(key);
        }
    }
    (games, String::new())
}

pub(super) fn parse_page_token(token: &str) -> Result<Option<(u64, u32)>, HostError> {
    if token.is_empty() {
        return Ok(None);
    }
    token
        .split_once('.')
        .and_then(|(m, g)| Some((m.parse().ok()?, g.parse().ok()?)))
        .map(Some)
        .ok_or_else(|| {
            HostError::invalid_argument(format!(
                "page_token {} is not one LadderGames returned",
                gangs_proto::quoted(token)
            ))
        })
}
