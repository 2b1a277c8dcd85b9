//! `gangs ladder delete`, `rename`, `rekey`, `season`, and the confirmation `retire` asks for:
//! an organizer's housekeeping of a ladder (admin key).

use crate::client::Context;
use crate::error::CliError;
use gangs_proto::auth::KeyedLaddersClient;
use gangs_proto::json::to_json;
use gangs_proto::v1 as pb;
use std::io::{BufRead, IsTerminal, Write};

/// `gangs ladder delete NAME [--force]`.
pub async fn delete(
    client: &mut KeyedLaddersClient,
    context: &Context,
    name: String,
    force: bool,
) -> Result<(), CliError> {
    let deleted = client
        .delete_ladder(pb::DeleteLadderRequest {
            ladder: name.clone(),
            force,
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let mut value = to_json(&deleted, "gangs.v1.DeleteLadderResponse");
    value["ladder"] = serde_json::json!(name);
    context.out.emit(value, || match deleted.cancelled_games {
        0 => format!("ladder {name} deleted"),
        n => format!("ladder {name} deleted; {n} games in play cancelled"),
    });
    Ok(())
}

/// `gangs ladder rename NAME NEW`.
pub async fn rename(
    client: &mut KeyedLaddersClient,
    context: &Context,
    name: String,
    new_name: String,
) -> Result<(), CliError> {
    let renamed = client
        .rename_ladder(pb::RenameLadderRequest {
            ladder: name.clone(),
            new_name,
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let ladder = renamed.ladder.unwrap_or_default();
    context.out.emit(to_json(&ladder, "gangs.v1.Ladder"), || {
        format!(
            "ladder {name} is now {}: its bots queue with --ladder {}",
            ladder.name, ladder.name
        )
    });
    Ok(())
}

/// `BOT@V` (or `BOT` with `--version V`, or `BOT` alone: version 1) as (bot, version).
pub fn bot_and_version(bot: &str, version: Option<String>) -> Result<(String, String), CliError> {
    match (bot.split_once('@'), version) {
        (Some(_), Some(_)) => Err(CliError::new(
            "INVALID_ARGUMENT",
            format!("{bot} names its version already: leave --version out"),
        )),
        (Some((bot, version)), None) => Ok((bot.to_string(), version.to_string())),
        (None, version) => Ok((bot.to_string(), version.unwrap_or_default())),
    }
}

/// `gangs ladder rekey NAME BOT@V`.
pub async fn rekey(
    client: &mut KeyedLaddersClient,
    context: &Context,
    name: String,
    bot: String,
    version: Option<String>,
    now: bool,
) -> Result<(), CliError> {
    let (bot, version) = bot_and_version(&bot, version)?;
    let rekeyed = client
        .rekey_bot(pb::RekeyBotRequest {
            ladder: name.clone(),
            bot,
            version,
            now,
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let mut value = to_json(&rekeyed, "gangs.v1.RekeyBotResponse");
    value["ladder"] = serde_json::json!(name);
    let old_key = match now {
        true => "the old one stopped at once, in its games in play too",
        false => "the old one plays the games it is seated in to their end, then stops; queueing needs the new one",
    };
    context.out.emit(value, || {
        format!(
            "{}@{} on ladder {name} has a new key ({old_key}); its rating stays\nbot key (shown once, keep it secret): {}",
            rekeyed.bot, rekeyed.version, rekeyed.bot_key
        )
    });
    Ok(())
}

/// `gangs ladder season NAME (--end | --ends AT | --no-end)`.
pub async fn season(
    client: &mut KeyedLaddersClient,
    context: &Context,
    name: String,
    end: bool,
    ends: Option<String>,
    no_end: bool,
) -> Result<(), CliError> {
    let ends_unix_ms = ends.as_deref().map(parse_time).transpose()?;
    if !end && !no_end && ends_unix_ms.is_none() {
        return Err(CliError::new(
            "INVALID_ARGUMENT",
            "say what to do: --end (the season ends now), --ends AT (an RFC 3339 time, e.g. 2026-12-18T17:00:00Z) or --no-end",
        ));
    }
    let answer = client
        .set_season(pb::SetSeasonRequest {
            ladder: name.clone(),
            end,
            ends_unix_ms,
            clear_ends: no_end,
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let ladder = answer.ladder.clone().unwrap_or_default();
    context
        .out
        .emit(to_json(&answer, "gangs.v1.SetSeasonResponse"), || {
            let mut lines = Vec::new();
            if answer.ended_season > 0 {
                lines.push(format!(
                    "season {} of ladder {name} is over: its standings are frozen (`gangs ladder standings {name} --season {}`)",
                    answer.ended_season, answer.ended_season
                ));
            }
            lines.push(season_line(&ladder));
            lines.join("\n")
        });
    Ok(())
}

/// "season N since T, ends at U" of a ladder.
pub fn season_line(l: &pb::Ladder) -> String {
    let ends = match l.season_ends_unix_ms {
        Some(at) => format!("ends {}", gangs_proto::time::utc_text(at)),
        None => "no planned end (`gangs ladder season NAME --end` ends it)".to_string(),
    };
    format!(
        "season {} since {}, {ends}",
        l.season.max(1),
        gangs_proto::time::utc_text(l.season_started_unix_ms)
    )
}

/// The line above a season's standings: which season, and whether its table is frozen.
pub fn season_header(s: &pb::Season) -> String {
    match (s.ended_unix_ms, s.ends_unix_ms) {
        (Some(ended), _) => format!(
            "season {}, {} to {} (over: its standings are frozen)",
            s.number,
            gangs_proto::time::utc_text(s.started_unix_ms),
            gangs_proto::time::utc_text(ended)
        ),
        (None, Some(ends)) => format!(
            "season {} since {}, ends {}",
            s.number,
            gangs_proto::time::utc_text(s.started_unix_ms),
            gangs_proto::time::utc_text(ends)
        ),
        (None, None) => format!(
            "season {} since {}",
            s.number,
            gangs_proto::time::utc_text(s.started_unix_ms)
        ),
    }
}

/// Asks on the terminal before retiring `what` for good; refuses without a terminal unless
/// `yes`.
pub fn confirm_retire(what: &str, yes: bool) -> Result<(), CliError> {
    if yes {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(CliError::new(
            "FAILED_PRECONDITION",
            format!(
                "retiring {what} is for good (never matched again, its key refused) and there is no terminal to ask: pass --yes to confirm"
            ),
        ));
    }
    eprint!("retire {what} for good? It is never matched again and its key is refused. [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| CliError::new("FAILED_PRECONDITION", format!("reading the answer: {e}")))?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        Err(CliError::new("CANCELLED", format!("{what} not retired")))
    }
}

/// An RFC 3339 time (`2026-12-18T17:00:00Z`, `2026-12-18T18:00:00+01:00`, fractions of a
/// second allowed) as unix ms.
pub fn parse_time(text: &str) -> Result<i64, CliError> {
    gangs_proto::time::parse_rfc3339(text).ok_or_else(|| {
        CliError::new(
            "INVALID_ARGUMENT",
            format!(
                "{text:?} is not an RFC 3339 time: write it as 2026-12-18T17:00:00Z (or with an offset, +01:00)"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bot_is_named_with_or_without_its_version() {
        assert_eq!(
            bot_and_version("team-7@2", None).unwrap(),
            ("team-7".into(), "2".into())
        );
        assert_eq!(
            bot_and_version("team-7", Some("3".into())).unwrap(),
            ("team-7".into(), "3".into())
        );
        assert_eq!(
            bot_and_version("team-7", None).unwrap(),
            ("team-7".into(), String::new())
        );
        assert!(bot_and_version("team-7@2", Some("3".into())).is_err());
    }
}
