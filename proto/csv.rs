//! A ladder's standings as CSV (RFC 4180: a header row, CRLF line ends, a field quoted when it
//! holds a comma, a quote or a line end, its quotes doubled): the same columns for
//! `gangs ladder standings NAME --csv` and the viewer's `GET /api/ladders/NAME/standings.csv`.

use crate::v1 as pb;

/// The columns, in order (the header row).
pub const STANDINGS_COLUMNS: [&str; 17] = [
    "rank",
    "bot",
    "version",
    "state",
    "state_reason",
    "conservative",
    "mu",
    "sigma",
    "games",
    "wins",
    "win_share",
    "win_share_low",
    "win_share_high",
    "mean_score",
    "timeouts",
    "playing",
    "house",
];

/// One field as RFC 4180 writes it.
pub fn field(text: &str) -> String {
    if text.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A bot's state in one word ("paused"); "house" for the house entry of a team game.
pub fn state_word(row: &pb::Standing) -> &'static str {
    if row.house {
        return "house";
    }
    match pb::BotState::try_from(row.state).unwrap_or(pb::BotState::Unspecified) {
        pb::BotState::Unspecified | pb::BotState::Idle => "idle",
        pb::BotState::Playing => "playing",
        pb::BotState::Queued => "queued",
        pb::BotState::Paused => "paused",
        pb::BotState::Capped => "capped",
        pb::BotState::Retired => "retired",
    }
}

/// The standings, best first as given, with a header row.
pub fn standings_csv(rows: &[pb::Standing]) -> String {
    let mut out = STANDINGS_COLUMNS.join(",");
    out.push_str("\r\n");
    for (i, row) in rows.iter().enumerate() {
        let rating = row.rating.unwrap_or_default();
        let fields = [
            (i + 1).to_string(),
            field(&row.bot),
            field(&row.version),
            state_word(row).to_string(),
            field(&row.state_reason),
            format!("{:.4}", row.conservative),
            format!("{:.4}", rating.mu),
            format!("{:.4}", rating.sigma),
            row.games.to_string(),
            row.wins.to_string(),
            format!("{:.4}", row.win_share),
            format!("{:.4}", row.win_share_low),
            format!("{:.4}", row.win_share_high),
            format!("{:.4}", row.mean_score),
            row.timeouts.to_string(),
            row.playing.to_string(),
            row.house.to_string(),
        ];
        out.push_str(&fields.join(","));
        out.push_str("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_as_rfc_4180_says() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a, b"), "\"a, b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn a_table_has_its_header_and_a_row_per_standing() {
        let rows = [pb::Standing {
            bot: "alice".into(),
            version: "2".into(),
            games: 3,
            state: pb::BotState::Paused as i32,
            state_reason: "paused by an organizer, for now".into(),
            ..Default::default()
        }];
        let csv = standings_csv(&rows);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[0], STANDINGS_COLUMNS.join(","));
        assert!(
            lines[1].starts_with("1,alice,2,paused,\"paused by an organizer, for now\","),
            "{}",
            lines[1]
        );
        assert_eq!(lines.len(), 3, "two lines and the last CRLF: {csv:?}");
    }
}
