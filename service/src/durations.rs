//! Durations as operators write them in flags and environment variables: a number and a unit.

use std::time::Duration;

/// A duration as a number and a unit: `500ms`, `90s`, `30m`, `1h`, `30d`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: use e.g. 500ms, 90s, 30m, 1h, 30d"))?;
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => {
            return Err(format!(
                "{text:?} has no known unit: use ms, s, m, h or d (e.g. 30d)"
            ))
        }
    };
    number
        .checked_mul(unit_ms)
        .filter(|&ms| ms <= 100 * 365 * 86_400_000)
        .map(Duration::from_millis)
        .ok_or_else(|| format!("{text:?} is longer than 100 years"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_with_units() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert!(parse_duration("30").is_err());
        assert!(parse_duration("d").is_err());
        assert!(parse_duration("5w").is_err());
        assert!(parse_duration("99999999999999999d").is_err());
    }
}
