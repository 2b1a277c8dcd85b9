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
) -> Result<(), CliError> {
    let (bot, version) = bot_and_version(&bot, version)?;
    let rekeyed = client
        .rekey_bot(pb::RekeyBotRequest {
            ladder: name.clone(),
            bot,
            version,
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let mut value = to_json(&rekeyed, "gangs.v1.RekeyBotResponse");
    value["ladder"] = serde_json::json!(name);
    context.out.emit(value, || {
        format!(
            "{}@{} on ladder {name} has a new key; the old one no longer plays, its rating stays\nbot key (shown once, keep it secret): {}",
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
        Some(at) => format!("ends {}", utc_text(at)),
        None => "no planned end (`gangs ladder season NAME --end` ends it)".to_string(),
    };
    format!(
        "season {} since {}, {ends}",
        l.season.max(1),
        utc_text(l.season_started_unix_ms)
    )
}

/// The line above a season's standings: which season, and whether its table is frozen.
pub fn season_header(s: &pb::Season) -> String {
    match (s.ended_unix_ms, s.ends_unix_ms) {
        (Some(ended), _) => format!(
            "season {}, {} to {} (over: its standings are frozen)",
            s.number,
            utc_text(s.started_unix_ms),
            utc_text(ended)
        ),
        (None, Some(ends)) => format!(
            "season {} since {}, ends {}",
            s.number,
            utc_text(s.started_unix_ms),
            utc_text(ends)
        ),
        (None, None) => format!("season {} since {}", s.number, utc_text(s.started_unix_ms)),
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
    parse_rfc3339(text).ok_or_else(|| {
        CliError::new(
            "INVALID_ARGUMENT",
            format!(
                "{text:?} is not an RFC 3339 time: write it as 2026-12-18T17:00:00Z (or with an offset, +01:00)"
            ),
        )
    })
}

fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let digits = |from: usize, len: usize| -> Option<i64> {
        let part = text.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let mut at = 19;
    let mut millis = 0;
    if b.get(at) == Some(&b'.') {
        let start = at + 1;
        at = start;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
        let fraction = &text[start..at.min(start + 3)];
        millis = format!("{fraction:0<3}").parse().ok()?;
    }
    let offset_minutes = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && b[at + 3] == b':' => {
            let minutes = digits(at + 1, 2)? * 60 + digits(at + 4, 2)?;
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `unix_ms` as an RFC 3339 UTC time (seconds).
pub fn utc_text(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_3339_times_read_as_unix_ms() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2023-11-14T22:13:20.5Z"),
            Some(1_700_000_000_500)
        );
        assert_eq!(
            parse_rfc3339("2023-11-14T23:13:20+01:00"),
            Some(1_700_000_000_000)
        );
        assert_eq!(parse_rfc3339("2000-02-29T12:00:00Z"), Some(951_825_600_000));
        for bad in [
            "",
            "tomorrow",
            "2026-13-01T00:00:00Z",
            "2026-12-01T00:00:00",
            "2026-12-01",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert_eq!(utc_text(951_825_600_000), "2000-02-29T12:00:00Z");
    }

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
