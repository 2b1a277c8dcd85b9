//! Bounds on what a client sends: every id, string and count of every request of `Games` and
//! `Ladders` has a limit, here and nowhere else, refused with INVALID_ARGUMENT naming the field
//! and its limit, and no message quotes more than [`gangs_proto::MAX_QUOTED_BYTES`] of input.
//! The front checks each request once ([`Bounded`], `Front::accept`), before it is forwarded or
//! reaches a game or a ladder, so the actors, the registry, the directory and the ladders work
//! on bounded input. A careless or hostile client thus gets a clear status (a 60 KB game id
//! echoed whole would overflow gRPC's metadata limit and arrive as an unrelated
//! RESOURCE_EXHAUSTED) and costs little.

use crate::error::{HostError, HostResult};
use gangs_proto::quoted;
use gangs_proto::v1 as pb;
use prost::Message;

/// Game ids the server makes are 16 hex characters; anything much longer is no id of ours.
pub const MAX_GAME_ID_BYTES: usize = 64;
/// Seat tokens the server makes are 32 hex characters.
pub const MAX_TOKEN_BYTES: usize = 128;
/// Game kinds are a few short words (`KindInfo::name`).
pub const MAX_KIND_BYTES: usize = 32;
/// An action, encoded: a handful of card ids or words. Bounds the card lists and words inside.
pub const MAX_ACTION_BYTES: usize = 4096;
/// Most records of a game loaded by `ImportGame`: the most a game file may hold.
pub const MAX_IMPORT_RECORDS: usize = gangs_games::game_file::MAX_RECORDS;
/// Most bytes of a game loaded by `ImportGame`, over all its messages (each message is also
/// bounded by `--max-request-bytes`): far more than the longest game's log.
pub const MAX_IMPORT_BYTES: usize = 32 << 20;
/// A hosted budget's bounds (CreateLadder): fuel units per decision, memory and module bytes.
pub const FUEL_RANGE: std::ops::RangeInclusive<u64> = 1_000_000..=20_000_000_000;
pub const MEMORY_RANGE: std::ops::RangeInclusive<u64> = (1 << 20)..=(1 << 30);
pub const MODULE_RANGE: std::ops::RangeInclusive<u64> = (1 << 10)..=(256 << 20);
/// Longest display name, in characters (bytes are bounded first, at 4 per character).
pub const MAX_NAME_CHARS: usize = 64;
/// Longest client-chosen id: `action_id`, `join_id`, `create_id`.
pub const MAX_REQUEST_ID_BYTES: usize = 128;
/// Longest reason given for cancelling a game, in characters.
pub const MAX_REASON_CHARS: usize = 200;
/// Longest `WatchGames` cursor (a u64 in decimal is 20 digits).
pub const MAX_CURSOR_BYTES: usize = 24;
/// Most `statuses` in one `WatchGames` request (there are five).
pub const MAX_STATUSES: usize = 8;
/// Longest `ListGames` page token (a time and a game id).
pub const MAX_PAGE_TOKEN_BYTES: usize = 64;

/// Longest ladder and bot names, and versions (a seat's name "bot@version" fits the games'
/// 64-character names). The proto's comments and docs/ladder.md say the same figures.
pub const MAX_LADDER_NAME: usize = 64;
pub const MAX_BOT_NAME: usize = 40;
pub const MAX_VERSION: usize = 16;
/// Games a bot may play at once on one key (`QueueRequest.max_concurrent`; a duplicate ladder
/// counts matches): more is refused, naming this cap.
pub const MAX_CONCURRENT_GAMES: u32 = 8;
/// Most games in one `LadderGames` page (`page_size`): more is refused, naming this cap.
pub const MAX_LADDER_PAGE: u32 = 500;
/// Options of a ladder, and the length of each key and value.
pub const MAX_LADDER_OPTIONS: usize = 32;
pub const MAX_OPTION_BYTES: usize = 64;
/// Bot keys are 64 hex characters; anything much longer is no key of ours.
pub const MAX_BOT_KEY_BYTES: usize = 128;
/// Games acknowledged in one Queue call.
pub const MAX_ACKNOWLEDGED: usize = 256;
/// House bots on one ladder at most.
pub const MAX_HOUSE_BOTS: usize = 6;
/// Longest `LadderGames` page token (a match number and a game number).
pub const MAX_LADDER_PAGE_TOKEN_BYTES: usize = 32;

/// Longest status message sent: a last guard so that no message can grow past gRPC's metadata
/// limit, whatever a lower layer put in it.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// `value` of `field` is at most `max` bytes.
pub fn check_len(field: &str, value: &str, max: usize) -> HostResult<()> {
    if value.len() > max {
        return Err(HostError::invalid_argument(format!(
            "{field} is {} bytes, longer than its limit of {max}: {}",
            value.len(),
            quoted(value)
        )));
    }
    Ok(())
}

/// A required, bounded game id.
pub fn check_game_id(game_id: &str) -> HostResult<()> {
    if game_id.is_empty() {
        return Err(HostError::invalid_argument(
            "game_id is required: `gangs games` lists the games",
        ));
    }
    check_len("game_id", game_id, MAX_GAME_ID_BYTES)
}

/// `value` of `field` is at most `max` characters (and at most 4 bytes each, checked first so
/// that counting costs little).
pub fn check_chars(field: &str, value: &str, max: usize) -> HostResult<()> {
    check_len(field, value, 4 * max)?;
    let chars = value.chars().count();
    if chars > max {
        return Err(HostError::invalid_argument(format!(
            "{field} is {chars} characters, longer than its limit of {max}: {}",
            quoted(value)
        )));
    }
    Ok(())
}

/// A name of letters, digits, '-', '_' and '.', 1 to `max` characters (ladders, bots,
/// versions).
pub fn check_name(field: &str, value: &str, max: usize) -> HostResult<()> {
    let ok = !value.is_empty()
        && value.len() <= max
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        return Ok(());
    }
    Err(HostError::invalid_argument(format!(
        "{field} {} must be 1 to {max} characters: letters, digits, '-', '_' and '.'",
        quoted(value)
    )))
}

/// A ladder's name: a name ([`check_name`]) that is also one segment of a URL path (the
/// viewer's `/ladders/NAME`): not made only of dots (`.`, `..` would open another page).
pub fn check_ladder_name(field: &str, value: &str) -> HostResult<()> {
    check_name(field, value, MAX_LADDER_NAME)?;
    if value.chars().all(|c| c == '.') {
        return Err(HostError::invalid_argument(format!(
            "{field} {} is only dots, which a link cannot name (`/ladders/..` opens another page): choose a name with a letter or a digit",
            quoted(value)
        )));
    }
    Ok(())
}

/// A bot's version as given: empty (it means "1") or a name.
pub fn check_version(version: &str) -> HostResult<()> {
    if version.is_empty() {
        return Ok(());
    }
    check_name("version", version, MAX_VERSION)
}

/// The `ladder` a request names: at most a ladder name's length (an empty one is refused by
/// the ladders, with what to do).
fn check_ladder(ladder: &str) -> HostResult<()> {
    check_len("ladder", ladder, MAX_LADDER_NAME)
}

/// The bot `bot@version` of `ladder` a request names (RegisterBot, PauseBot, RetireBot); its
/// version as given: empty (it means "1") or a name.
fn check_entry(ladder: &str, bot: &str, version: &str) -> HostResult<()> {
    check_ladder(ladder)?;
    check_name("bot", bot, MAX_BOT_NAME)?;
    check_version(version)
}

/// A request whose every field is within its bounds, checked once in front of the handlers.
pub trait Bounded {
    /// INVALID_ARGUMENT naming the first field over its limit.
    fn check_bounds(&self) -> HostResult<()>;
}

impl Bounded for pb::CreateGameRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_len("kind", &self.kind, MAX_KIND_BYTES)?;
        check_len("create_id", &self.create_id, MAX_REQUEST_ID_BYTES)
    }
}

impl Bounded for pb::CancelGameRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_game_id(&self.game_id)?;
        check_chars("reason", &self.reason, MAX_REASON_CHARS)
    }
}

impl Bounded for pb::JoinGameRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_game_id(&self.game_id)?;
        check_chars("name", &self.name, MAX_NAME_CHARS)?;
        check_len("join_id", &self.join_id, MAX_REQUEST_ID_BYTES)
    }
}

impl Bounded for pb::WatchRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_game_id(&self.game_id)?;
        check_len("token", &self.token, MAX_TOKEN_BYTES)?;
        if pb::WatchViews::try_from(self.views).is_err() {
            return Err(HostError::invalid_argument(format!(
                "views {} is not a WatchViews value: leave it unset (every update carries the view), or use WATCH_VIEWS_EVERY_UPDATE (1) or WATCH_VIEWS_WHEN_NEEDED (2)",
                self.views
            )));
        }
        Ok(())
    }
}

impl Bounded for pb::ActRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_game_id(&self.game_id)?;
        check_len("token", &self.token, MAX_TOKEN_BYTES)?;
        check_len("action_id", &self.action_id, MAX_REQUEST_ID_BYTES)?;
        let action_bytes = self.action.as_ref().map_or(0, |a| a.encoded_len());
        if action_bytes > MAX_ACTION_BYTES {
            return Err(HostError::invalid_argument(format!(
                "action is {action_bytes} bytes encoded, longer than its limit of {MAX_ACTION_BYTES}"
            )));
        }
        Ok(())
    }
}

impl Bounded for pb::GetLogRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_game_id(&self.game_id)
    }
}

impl Bounded for pb::ListGamesRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_len("kind", &self.kind, MAX_KIND_BYTES)?;
        check_len("page_token", &self.page_token, MAX_PAGE_TOKEN_BYTES)
    }
}

impl Bounded for pb::WatchGamesRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_len("kind", &self.kind, MAX_KIND_BYTES)?;
        check_len("from_cursor", &self.from_cursor, MAX_CURSOR_BYTES)?;
        if self.statuses.len() > MAX_STATUSES {
            return Err(HostError::invalid_argument(format!(
                "statuses has {} entries, more than its limit of {MAX_STATUSES} (there are five statuses)",
                self.statuses.len()
            )));
        }
        Ok(())
    }
}

impl Bounded for pb::CreateLadderRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder_name("name", &self.name)?;
        check_len("kind", &self.kind, MAX_KIND_BYTES)?;
        if self.options.len() > MAX_LADDER_OPTIONS {
            return Err(HostError::invalid_argument(format!(
                "{} options, more than the limit of {MAX_LADDER_OPTIONS}",
                self.options.len()
            )));
        }
        for (key, value) in &self.options {
            if key.len() > MAX_OPTION_BYTES || value.len() > MAX_OPTION_BYTES {
                return Err(HostError::invalid_argument(format!(
                    "option {} is longer than {MAX_OPTION_BYTES} bytes",
                    quoted(key)
                )));
            }
        }
        if self.house_bots.len() > MAX_HOUSE_BOTS {
            return Err(HostError::invalid_argument(format!(
                "{} house bots, more than the limit of {MAX_HOUSE_BOTS}",
                self.house_bots.len()
            )));
        }
        for house in &self.house_bots {
            check_len("house_bots", house, MAX_BOT_NAME)?;
        }
        check_range(
            "hosted_fuel",
            self.hosted_fuel,
            FUEL_RANGE,
            "fuel units per decision",
        )?;
        check_range(
            "hosted_memory_bytes",
            self.hosted_memory_bytes,
            MEMORY_RANGE,
            "bytes",
        )?;
        check_range(
            "hosted_module_bytes",
            self.hosted_module_bytes,
            MODULE_RANGE,
            "bytes",
        )?;
        Ok(())
    }
}

impl Bounded for pb::ListLaddersRequest {
    fn check_bounds(&self) -> HostResult<()> {
        Ok(())
    }
}

/// An optional budget within `range` (absent: the default).
fn check_range(
    field: &str,
    value: Option<u64>,
    range: std::ops::RangeInclusive<u64>,
    unit: &str,
) -> HostResult<()> {
    match value {
        Some(v) if !range.contains(&v) => Err(HostError::invalid_argument(format!(
            "{field} {v} is out of range: {} to {} {unit} (absent: the default)",
            range.start(),
            range.end()
        ))),
        _ => Ok(()),
    }
}

impl Bounded for pb::RegisterBotRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_entry(&self.ladder, &self.bot, &self.version)
    }
}

impl Bounded for pb::SubmitBotRequest {
    /// The module's size is the ladder's to bound (its module budget, within
    /// --max-module-bytes): the Ladders service decodes a SubmitBot up to that flag alone.
    fn check_bounds(&self) -> HostResult<()> {
        check_entry(&self.ladder, &self.bot, &self.version)
    }
}

impl Bounded for pb::GetBotLogRequest {
    /// `bot` is `BOT` or `BOT@VERSION`; `game_id` may be empty (every game kept).
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)?;
        match self.bot.split_once('@') {
            Some((bot, version)) => {
                check_name("bot", bot, MAX_BOT_NAME)?;
                check_name("version", version, MAX_VERSION)?;
            }
            None => check_name("bot", &self.bot, MAX_BOT_NAME)?,
        }
        check_len("game_id", &self.game_id, MAX_GAME_ID_BYTES)
    }
}

impl Bounded for pb::QueueRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)?;
        check_len("bot_key", &self.bot_key, MAX_BOT_KEY_BYTES)?;
        if self.max_concurrent > MAX_CONCURRENT_GAMES {
            return Err(HostError::invalid_argument(format!(
                "max_concurrent {} is over this server's cap of {MAX_CONCURRENT_GAMES} games at once per bot key: ask for {MAX_CONCURRENT_GAMES} or fewer (0 means 1)",
                self.max_concurrent
            )));
        }
        if self.acknowledged_game_ids.len() > MAX_ACKNOWLEDGED {
            return Err(HostError::invalid_argument(format!(
                "{} acknowledged games, more than the limit of {MAX_ACKNOWLEDGED}",
                self.acknowledged_game_ids.len()
            )));
        }
        for id in &self.acknowledged_game_ids {
            check_game_id(id)?;
        }
        Ok(())
    }
}

impl Bounded for pb::StandingsRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)
    }
}

impl Bounded for pb::LadderGamesRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)?;
        if self.page_size > MAX_LADDER_PAGE {
            return Err(HostError::invalid_argument(format!(
                "page_size {} is over the limit of {MAX_LADDER_PAGE} games a page: ask for {MAX_LADDER_PAGE} or fewer and page on with next_page_token",
                self.page_size
            )));
        }
        check_len("page_token", &self.page_token, MAX_LADDER_PAGE_TOKEN_BYTES)?;
        if self.bot.is_empty() {
            if !self.version.is_empty() {
                return Err(HostError::invalid_argument(
                    "version names a version of `bot`: give bot too (or neither, for every game)",
                ));
            }
            return Ok(());
        }
        check_name("bot", &self.bot, MAX_BOT_NAME)?;
        check_version(&self.version)
    }
}

impl Bounded for pb::BotReportRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)?;
        check_name("bot", &self.bot, MAX_BOT_NAME)?;
        check_version(&self.version)
    }
}

impl Bounded for pb::PauseBotRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_entry(&self.ladder, &self.bot, &self.version)
    }
}

impl Bounded for pb::RetireBotRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_entry(&self.ladder, &self.bot, &self.version)
    }
}

impl Bounded for pb::RerateLadderRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)
    }
}

impl Bounded for pb::DeleteLadderRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)
    }
}

impl Bounded for pb::RenameLadderRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)?;
        check_ladder_name("new_name", &self.new_name)
    }
}

impl Bounded for pb::RekeyBotRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)?;
        check_name("bot", &self.bot, MAX_BOT_NAME)?;
        check_version(&self.version)
    }
}

impl Bounded for pb::SetSeasonRequest {
    fn check_bounds(&self) -> HostResult<()> {
        check_ladder(&self.ladder)?;
        if self.clear_ends && self.ends_unix_ms.is_some() {
            return Err(HostError::invalid_argument(
                "clear_ends and ends_unix_ms contradict each other: give one",
            ));
        }
        if !self.end && !self.clear_ends && self.ends_unix_ms.is_none() {
            return Err(HostError::invalid_argument(
                "nothing to do: end the season now (end), or give when it ends (ends_unix_ms), or clear its end (clear_ends)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_fields_are_named_and_quoted_briefly() {
        let id = "x".repeat(60_000);
        let status = check_game_id(&id).unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert!(status.message().starts_with("game_id is 60000 bytes"));
        assert!(status.message().len() < 300, "{}", status.message());
        assert!(check_game_id("0123456789abcdef").is_ok());
        assert!(check_game_id("").is_err());
    }

    #[test]
    fn ladder_names_that_break_a_link_are_refused() {
        for bad in [".", "..", "...", "a/b", "/", "", "a b"] {
            let status = check_ladder_name("name", bad).unwrap_err();
            assert_eq!(status.code(), tonic::Code::InvalidArgument, "{bad}");
        }
        assert!(check_ladder_name("name", "..")
            .unwrap_err()
            .message()
            .contains("only dots"));
        for good in ["class", "class.2026", ".hidden", "a..b", "x"] {
            assert!(check_ladder_name("name", good).is_ok(), "{good}");
        }
    }

    #[test]
    fn caps_are_refused_naming_them() {
        let queue = pb::QueueRequest {
            ladder: "class".into(),
            bot_key: "k".into(),
            max_concurrent: MAX_CONCURRENT_GAMES + 1,
            ..Default::default()
        };
        let status = queue.check_bounds().unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert!(status.message().contains("cap of 8"), "{status:?}");
        let fine = pb::QueueRequest {
            max_concurrent: MAX_CONCURRENT_GAMES,
            ..queue
        };
        assert!(fine.check_bounds().is_ok());
        let page = pb::LadderGamesRequest {
            ladder: "class".into(),
            page_size: MAX_LADDER_PAGE + 1,
            ..Default::default()
        };
        let status = page.check_bounds().unwrap_err();
        assert!(status.message().contains("limit of 500"), "{status:?}");
    }

    #[test]
    fn a_bot_log_request_names_a_bot_or_a_version_and_maybe_a_game() {
        let ask = |bot: &str, game_id: String| pb::GetBotLogRequest {
            ladder: "class".into(),
            bot: bot.into(),
            game_id,
        };
        for fine in ["talker", "talker@2", "talker@v1.beta"] {
            assert!(ask(fine, String::new()).check_bounds().is_ok(), "{fine}");
        }
        assert!(ask("talker", "0123456789abcdef".into())
            .check_bounds()
            .is_ok());
        for (bad, field) in [("", "bot"), ("talker@", "version"), ("a@b@c", "version")] {
            let status = ask(bad, String::new()).check_bounds().unwrap_err();
            assert_eq!(status.code(), tonic::Code::InvalidArgument);
            assert!(status.message().starts_with(field), "{bad}: {status:?}");
        }
        let long = ask("talker", "x".repeat(MAX_GAME_ID_BYTES + 1));
        let status = long.check_bounds().unwrap_err();
        assert!(status.message().starts_with("game_id"), "{status:?}");
    }
}
