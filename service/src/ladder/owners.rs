//! Who may act on a hosted bot: the owner rule of SubmitBot and GetBotLog (the admin, or a key
//! of one of the bot's versions), and GetBotLog itself, reading the bot's kept stderr.

use super::{bot_log, Ladder};
use crate::error::{HostError, HostResult};
use crate::front::Principal;
use gangs_proto::v1 as pb;

/// The owner rule of a hosted bot (SubmitBot, GetBotLog): whether bot `key` is a key of one
/// of `bot`'s versions on `ladder`.
pub(super) fn owns(key: &crate::front::bots::BotKey, ladder: &str, bot: &str) -> bool {
    let (owner, _) = key.bot.rsplit_once('@').unwrap_or((&key.bot, ""));
    &*key.ladder == ladder && owner == bot
}

/// Whether `principal` may submit a version of `bot` to `ladder` (the front admitted it for
/// SubmitBot): the admin; a key of one of that bot's versions; anyone for a new bot where
/// registration is open (or on a server without keys, for any bot).
pub(super) fn may_submit(
    principal: &Principal,
    keyed: bool,
    ladder: &str,
    bot: &str,
    exists: bool,
) -> HostResult<()> {
    match principal {
        Principal::Admin | Principal::Ladder(_) | Principal::Forwarded => Ok(()),
        Principal::Bot(key) if owns(key, ladder, bot) => Ok(()),
        Principal::Bot(key) => Err(HostError::Permission(format!(
            "a bot key submits only its own bot's versions: this key is {}'s on ladder {}",
            key.bot, key.ladder
        ))),
        Principal::Anyone if keyed && exists => Err(HostError::Permission(format!(
            "bot {bot} is registered on ladder {ladder}: submit its next version with one of its keys (--bot-key) or the admin key"
        ))),
        Principal::Anyone => Ok(()),
        Principal::Player => Err(HostError::Permission(
            "the player key may not submit bots: use the bot's key or the admin key".into(),
        )),
    }
}

/// Whether `principal` may read `bot`'s log on `ladder` (the front admitted it for GetBotLog
/// by the owner rule, as for SubmitBot): the admin, or a key of one of that bot's versions; on
/// a server without keys, anyone.
pub(super) fn may_read_log(
    principal: &Principal,
    keyed: bool,
    ladder: &str,
    bot: &str,
) -> HostResult<()> {
    match principal {
        Principal::Admin | Principal::Ladder(_) | Principal::Forwarded => Ok(()),
        Principal::Bot(key) if owns(key, ladder, bot) => Ok(()),
        Principal::Bot(key) => Err(HostError::Permission(format!(
            "a bot key reads only its own bot's log: this key is {}'s on ladder {}",
            key.bot, key.ladder
        ))),
        Principal::Anyone if !keyed => Ok(()),
        Principal::Anyone | Principal::Player => Err(HostError::Permission(format!(
            "only the owner of bot {bot} reads its log: send a key of one of its versions (--bot-key) or the admin key"
        ))),
    }
}

/// `GetBotLog` on the ladder that runs here: the kept stderr of `request.bot`'s hosted
/// versions (`BOT@VERSION`: that one), for its owner.
pub async fn read_log(
    ladder: &Ladder,
    principal: &Principal,
    keyed: bool,
    request: pb::GetBotLogRequest,
) -> HostResult<pb::GetBotLogResponse> {
    let (bot, version) = match request.bot.split_once('@') {
        Some((bot, version)) => (bot, Some(version)),
        None => (request.bot.as_str(), None),
    };
    may_read_log(principal, keyed, &ladder.name, bot)?;
    let entries: Vec<(usize, String)> = {
        let state = ladder.state.lock().await;
        let versions: Vec<(usize, &super::records::Entry)> = state
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.bot == bot && version.is_none_or(|v| e.version == v))
            .collect();
        if versions.is_empty() {
            return Err(HostError::not_found(format!(
                "no bot {} on ladder {}: `gangs ladder standings {}` lists its bots",
                request.bot, ladder.name, ladder.name
            )));
        }
        versions
            .iter()
            .filter(|(_, e)| e.hosted.is_some())
            .map(|(index, e)| (*index, e.name()))
            .collect()
    };
    if entries.is_empty() {
        return Err(HostError::failed_precondition(format!(
            "{} is not a hosted bot on ladder {}: only hosted bots (`gangs ladder submit`) have a log on the server; a connected bot keeps its own",
            request.bot, ladder.name
        )));
    }
    let game_id = Some(request.game_id.as_str()).filter(|id| !id.is_empty());
    let games = ladder.bot_logs.read(&entries, game_id);
    if let (Some(id), true) = (game_id, games.is_empty()) {
        return Err(HostError::not_found(format!(
            "no log of {} in game {id}: the server keeps the newest {} games of each hosted version, since it started (`gangs ladder bot-log {} {}` lists them)",
            request.bot,
            bot_log::MAX_GAMES,
            ladder.name,
            request.bot
        )));
    }
    Ok(pb::GetBotLogResponse {
        bot: request.bot,
        games,
        max_games: bot_log::MAX_GAMES as u32,
        max_game_bytes: bot_log::MAX_GAME_BYTES as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::bots::BotKey;

    fn key(ladder: &str, bot: &str) -> Principal {
        Principal::Bot(BotKey {
            hash: "h".into(),
            ladder: ladder.into(),
            bot: bot.into(),
            retired: false,
        })
    }

    #[test]
    fn a_bots_log_is_read_by_its_owner_and_the_admin_alone() {
        let reads = |principal: Principal, keyed: bool| {
            may_read_log(&principal, keyed, "class", "talker").map_err(|e| e.message().to_string())
        };
        assert!(reads(Principal::Admin, true).is_ok());
        // A key of any of its versions.
        assert!(reads(key("class", "talker@1"), true).is_ok());
        assert!(reads(key("class", "talker@7"), true).is_ok());
        let other = reads(key("class", "talker2@1"), true).unwrap_err();
        assert!(other.contains("own bot's log"), "{other}");
        // The same bot name on another ladder is another bot.
        assert!(reads(key("other", "talker@1"), true).is_err());
        assert!(reads(Principal::Player, true).is_err());
        // A keyed server with --open-registration admits a caller without a key: not here.
        assert!(reads(Principal::Anyone, true).is_err());
        assert!(reads(Principal::Anyone, false).is_ok());
    }
}
