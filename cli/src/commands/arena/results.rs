//! What `gangs arena --out DIR` keeps besides the game files: `results.jsonl` and
//! `results.csv`, one row per game (game id, seed, which bot sat at each seat, the outcome,
//! timeouts per seat), in the order the games were planned.

use super::stats::TeamResult;
use serde_json::{json, Value};
use std::path::Path;

/// One seat of a finished game, as the results show it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatRow {
    /// The `--bot` command that sat there.
    pub bot: String,
    pub rank: u32,
    pub score: i64,
    pub won: bool,
    /// Turns the server played for the seat because its clock ran out.
    pub timeouts: u64,
}

/// One finished game.
#[derive(Debug, Clone, PartialEq)]
pub struct GameRow {
    /// Its index in the arena (the seat rotation and the seeds derive from it).
    pub game: u64,
    pub game_id: String,
    pub seed: u64,
    /// By seat.
    pub seats: Vec<SeatRow>,
    /// The outcome's summary line.
    pub outcome: String,
    /// The Gang's team result.
    pub team: Option<TeamResult>,
    /// The game file, relative to the results.
    pub file: Option<String>,
}

impl GameRow {
    pub fn json(&self) -> Value {
        let mut value = json!({
            "game": self.game,
            "game_id": self.game_id,
            // A string, like the game file's: 64 bits are exact in every JSON reader.
            "seed": self.seed.to_string(),
            "seats": self.seats.iter().enumerate().map(|(seat, s)| json!({
                "seat": seat,
                "bot": s.bot,
                "rank": s.rank,
                "score": s.score,
                "won": s.won,
                "timeouts": s.timeouts,
            })).collect::<Vec<_>>(),
            "outcome": self.outcome,
            "file": self.file,
        });
        if let Some(team) = self.team {
            value["vaults"] = json!(team.vaults);
            value["alarms"] = json!(team.alarms);
            value["won"] = json!(team.won);
        }
        value
    }
}

/// The CSV's first line for games of `players` seats (`team`: The Gang's columns too).
pub fn csv_header(players: usize, team: bool) -> String {
    let mut columns = vec!["game".to_string(), "game_id".into(), "seed".into()];
    for seat in 0..players {
        for field in ["bot", "rank", "score", "won", "timeouts"] {
            columns.push(format!("seat_{seat}_{field}"));
        }
    }
    if team {
        columns.extend(["vaults".into(), "alarms".into(), "won".into()]);
    }
    columns.extend(["outcome".into(), "file".into()]);
    columns.join(",")
}

pub fn csv_row(row: &GameRow) -> String {
    let mut cells = vec![
        row.game.to_string(),
        row.game_id.clone(),
        row.seed.to_string(),
    ];
    for seat in &row.seats {
        cells.extend([
            csv_cell(&seat.bot),
            seat.rank.to_string(),
            seat.score.to_string(),
            seat.won.to_string(),
            seat.timeouts.to_string(),
        ]);
    }
    if let Some(team) = row.team {
        cells.extend([
            team.vaults.to_string(),
            team.alarms.to_string(),
            team.won.to_string(),
        ]);
    }
    cells.push(csv_cell(&row.outcome));
    cells.push(csv_cell(row.file.as_deref().unwrap_or_default()));
    cells.join(",")
}

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
fn csv_cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Writes `results.jsonl` and `results.csv` into `dir`, rows in game order.
pub fn write(dir: &Path, players: usize, team: bool, rows: &[GameRow]) -> Result<(), String> {
    let mut rows: Vec<&GameRow> = rows.iter().collect();
    rows.sort_by_key(|r| r.game);
    let jsonl: String = rows.iter().map(|r| format!("{}\n", r.json())).collect();
    let mut csv = csv_header(players, team) + "\n";
    for row in &rows {
        csv.push_str(&csv_row(row));
        csv.push('\n');
    }
    for (name, text) in [("results.jsonl", jsonl), ("results.csv", csv)] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> GameRow {
        GameRow {
            game: 1,
            game_id: "00ab".into(),
            seed: u64::MAX,
            seats: vec![
                SeatRow {
                    bot: "gangs-bot-search --budget-ms 50".into(),
                    rank: 1,
                    score: 3,
                    won: true,
                    timeouts: 0,
                },
                SeatRow {
                    bot: "say \"hi\", then".into(),
                    rank: 2,
                    score: 40,
                    won: false,
                    timeouts: 2,
                },
            ],
            outcome: "seat 0 wins, with 3 points".into(),
            team: None,
            file: Some("00ab.jsonl".into()),
        }
    }

    #[test]
    fn csv_rows_match_the_header_and_quote_what_needs_it() {
        let header = csv_header(2, false);
        assert_eq!(
            header,
            "game,game_id,seed,seat_0_bot,seat_0_rank,seat_0_score,seat_0_won,seat_0_timeouts,\
             seat_1_bot,seat_1_rank,seat_1_score,seat_1_won,seat_1_timeouts,outcome,file"
        );
        let line = csv_row(&row());
        assert_eq!(
            line,
            "1,00ab,18446744073709551615,gangs-bot-search --budget-ms 50,1,3,true,0,\
             \"say \"\"hi\"\", then\",2,40,false,2,\"seat 0 wins, with 3 points\",00ab.jsonl"
        );
        assert!(csv_header(3, true).ends_with(",vaults,alarms,won,outcome,file"));
    }

    #[test]
    fn json_rows_name_every_seat() {
        let value = row().json();
        assert_eq!(value["game_id"], "00ab");
        assert_eq!(value["seed"], "18446744073709551615");
        assert_eq!(value["seats"][1]["bot"], "say \"hi\", then");
        assert_eq!(value["seats"][1]["timeouts"], 2);
        assert!(value.get("vaults").is_none());
        let mut team = row();
        team.team = Some(TeamResult {
            vaults: 3,
            alarms: 1,
            won: true,
        });
        assert_eq!(team.json()["vaults"], 3);
    }
}
