//! What the arena prints at the end: the standings (ratings, ranks, shares with their
//! intervals; a team game's rounds), the failures and notes, as JSON or as a table.

use super::*;

/// Everything the arena prints, as JSON or as a table.
pub(super) struct Report<'a> {
    pub(super) kind: &'a str,
    pub(super) players: usize,
    pub(super) planned: u64,
    pub(super) completed: u64,
    pub(super) seed: u64,
    pub(super) duplicate: bool,
    /// The external server used, if any.
    pub(super) server: Option<&'a str>,
    pub(super) rows: &'a [BotRow],
    pub(super) team: Option<&'a TeamTally>,
    pub(super) failures: &'a [Failure],
    /// Bots that exited early while clocks kept their games going.
    pub(super) notes: &'a [String],
    /// Bots killed because they were still running after their game was over.
    pub(super) killed: &'a [Killed],
    /// The finished games' ids, in game order.
    pub(super) game_ids: Vec<String>,
    /// `--out`, where the files and results are.
    pub(super) out: Option<&'a std::path::Path>,
}

impl Report<'_> {
    pub(super) fn json(&self) -> Value {
        let mut value = json!({
            "kind": self.kind,
            "players": self.players,
            "games": self.completed,
            "games_planned": self.planned,
            "errors": self.failures.len(),
            "failed_games": self.failures.iter().map(|f| json!({
                "game": f.game,
                "seed": f.seed,
                "error": f.error,
            })).collect::<Vec<_>>(),
            "seed": self.seed,
            "duplicate": self.duplicate,
            "server": self.server,
            "game_ids": self.game_ids,
            "out": self.out.map(|o| o.display().to_string()),
            "bots": self.rows.iter().map(|r| self.bot_json(r)).collect::<Vec<_>>(),
            "notes": self.notes,
            "killed": self.killed.iter().map(|k| json!({
                "game_id": k.game_id,
                "seat": k.seat,
                "bot": k.bot,
            })).collect::<Vec<_>>(),
        });
        if let Some(team) = self.team {
            let (success_low, success_high) = stats::wilson(team.heist_successes, team.heists);
            let (won_low, won_high) = stats::wilson(team.games_won, team.games);
            let (per_game, per_game_low, per_game_high) = team.heists_per_game;
            value["heists"] = json!(team.heists);
            value["heists_per_game"] = json!(per_game);
            value["heists_per_game_low"] = json!(per_game_low);
            value["heists_per_game_high"] = json!(per_game_high);
            value["heist_successes"] = json!(team.heist_successes);
            value["heist_success_share"] = json!(stats::share(team.heist_successes, team.heists));
            value["heist_success_low"] = json!(success_low);
            value["heist_success_high"] = json!(success_high);
            value["games_won"] = json!(team.games_won);
            value["games_lost"] = json!(team.games_lost);
            value["games_won_share"] = json!(stats::share(team.games_won, team.games));
            value["games_won_low"] = json!(won_low);
            value["games_won_high"] = json!(won_high);
        }
        value
    }

    /// A bot's row: Gang of Four with wins, penalty and Elo; The Gang only how much it played
    /// (the team's numbers say how it went: every seat shares them).
    fn bot_json(&self, r: &BotRow) -> Value {
        let mut row = json!({
            "name": r.name,
            "games": r.games,
            "seat_games": r.seat_games,
            "timeouts": r.timeouts,
        });
        if self.team.is_none() {
            row["seat_game_wins"] = json!(r.seat_game_wins);
            row["win_share"] = json!(r.win_share);
            row["win_share_low"] = json!(r.win_share_low);
            row["win_share_high"] = json!(r.win_share_high);
            row["mean_penalty"] = json!(r.mean_score);
            row["elo"] = json!(r.rating);
            row["elo_low"] = json!(r.rating_low);
            row["elo_high"] = json!(r.rating_high);
        }
        row
    }

    pub(super) fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{} arena: {} of {} games finished, {} players, seed {}{}{}",
            self.kind,
            self.completed,
            self.planned,
            self.players,
            self.seed,
            if self.duplicate { ", duplicate" } else { "" },
            self.server
                .map(|s| format!(", server {s}"))
                .unwrap_or_default()
        )];
        let width = self
            .rows
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(3);
        if self.team.is_some() {
            lines.push(format!(
                "{:<width$}  {:>6}  {:>10}  {:>8}",
                "bot", "games", "seat-games", "timeouts"
            ));
            for row in self.rows {
                lines.push(format!(
                    "{:<width$}  {:>6}  {:>10}  {:>8}",
                    row.name, row.games, row.seat_games, row.timeouts
                ));
            }
        } else {
            lines.push(format!(
                "{:<width$}  {:>6}  {:>10}  {:>9}  {:>21}  {:>12}  {:>16}  {:>8}",
                "bot",
                "games",
                "seat-games",
                "wins",
                "win share (95%)",
                "mean penalty",
                "Elo (95%)",
                "timeouts"
            ));
            for row in self.rows {
                lines.push(format!(
                    "{:<width$}  {:>6}  {:>10}  {:>9}  {:>21}  {:>12.1}  {:>16}  {:>8}",
                    row.name,
                    row.games,
                    row.seat_games,
                    row.seat_game_wins,
                    share_text(row.win_share, row.win_share_low, row.win_share_high),
                    row.mean_score,
                    format!(
                        "{:.0} ({:.0}–{:.0})",
                        row.rating, row.rating_low, row.rating_high
                    ),
                    row.timeouts
                ));
            }
            lines.push("(wins, win share and mean penalty are per seat-game)".into());
        }
        if let Some(team) = self.team {
            let (mean, low, high) = team.heists_per_game;
            let (s_low, s_high) = stats::wilson(team.heist_successes, team.heists);
            let (w_low, w_high) = stats::wilson(team.games_won, team.games);
            lines.push(format!(
                "team: {} heists ({mean:.1} per game, 95% {low:.1}–{high:.1})",
                team.heists
            ));
            lines.push(format!(
                "      {} successful heists (vaults): {}",
                team.heist_successes,
                share_text(
                    stats::share(team.heist_successes, team.heists),
                    s_low,
                    s_high
                )
            ));
            lines.push(format!(
                "      {} games won, {} lost: {} won",
                team.games_won,
                team.games_lost,
                share_text(stats::share(team.games_won, team.games), w_low, w_high)
            ));
        }
        if !self.notes.is_empty() {
            lines.push(format!("{} note(s):", self.notes.len()));
            for note in self.notes {
                lines.push(format!("  {note}"));
            }
        }
        if !self.killed.is_empty() {
            lines.push(format!(
                "{} bot(s) killed, still running after their game ended:",
                self.killed.len()
            ));
            for k in self.killed {
                lines.push(format!("  game {} seat {}: {}", k.game_id, k.seat, k.bot));
            }
        }
        lines.push(self.where_games_are());
        if !self.failures.is_empty() {
            lines.push(format!("{} error(s):", self.failures.len()));
            for f in self.failures {
                lines.push(format!("  game {} (seed {}): {}", f.game, f.seed, f.error));
            }
        }
        lines
    }
}

impl Report<'_> {
    /// Where the finished games can be found afterwards.
    fn where_games_are(&self) -> String {
        let ids = if self.game_ids.is_empty() {
            "none finished".to_string()
        } else {
            self.game_ids.join(" ")
        };
        match (self.out, self.server) {
            (Some(out), _) => format!(
                "games: {} (files and results.csv, results.jsonl in {})",
                ids,
                out.display()
            ),
            (None, Some(server)) => format!("games on {server}: {ids}"),
            (None, None) => format!(
                "games: {ids}, on the arena's own server, gone with it (--out DIR keeps them)"
            ),
        }
    }
}

/// "25.0% (8.9–53.2%)".
pub(super) fn share_text(share: f64, low: f64, high: f64) -> String {
    format!(
        "{:.1}% ({:.1}–{:.1}%)",
        share * 100.0,
        low * 100.0,
        high * 100.0
    )
}
