//! What a ladder bot's key may do in the Games service: `Watch`, `Act` and `GetLog` of the
//! games its ladder matched it to (with its own seats' tokens, or as a spectator), nothing else.
//! The ladders keep this table (by the keys' SHA-256, as their logs do): a key is entered when
//! its bot registers or its ladder starts here, a game when the ladder seats it, and a retired
//! bot's key is refused from then on, in its running games too. On a cluster, a bot may call a
//! node that does not run its ladder: that node reads the key and the game's seating that the
//! ladder's node published (`cluster/bot_keys.rs`), and judges them by the same rules.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, RwLock};
use tonic::Status;

/// Games remembered per bot key (its latest): a bot reads the log of a game it just finished,
/// not of its thousandth game back.
pub const MAX_GAMES_PER_KEY: usize = 1024;

/// A ladder bot, as its key makes it (made on each of its calls: the names are shared, not
/// copied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotKey {
    /// SHA-256 of the key, hex.
    pub hash: String,
    pub ladder: Arc<str>,
    /// `bot@version`.
    pub bot: Arc<str>,
    pub retired: bool,
}

/// The refusal of a bot key on a game its ladder did not match it to.
fn not_matched(ladder: &str, bot: &str, game_id: &str) -> Status {
    Status::permission_denied(format!(
        "a bot key plays only its ladder games: ladder {ladder} did not match {bot} to game {}",
        gangs_proto::quoted(game_id)
    ))
}

/// The refusal of a bot key with a seat token that is not its bot's.
fn not_its_seat(bot: &str, game_id: &str) -> Status {
    Status::permission_denied(format!(
        "a bot key plays only its own seats: this token is not a seat of {bot} in game {game_id}"
    ))
}

/// Whether `bot` (admitted by a key another node's ladder published) may touch game
/// `game_id` with `token` (empty: as a spectator), by the game's published seating: the
/// refusals of [`BotGrants::may_play`].
pub fn may_play_published(
    bot: &BotKey,
    game_id: &str,
    token: &str,
    seating: Option<&crate::cluster::PublishedGame>,
) -> Result<(), Status> {
    if bot.retired {
        return Err(retired(&bot.bot, &bot.ladder));
    }
    let seats: Vec<&str> = match seating {
        Some(game) if game.ladder == *bot.ladder => game
            .seats
            .iter()
            .filter(|(name, _)| *name == *bot.bot)
            .map(|(_, token)| token.as_str())
            .collect(),
        _ => Vec::new(),
    };
    if seats.is_empty() {
        return Err(not_matched(&bot.ladder, &bot.bot, game_id));
    }
    if token.is_empty()
        || seats
            .iter()
            .any(|t| crate::secret::constant_time_eq(t.as_bytes(), token.as_bytes()))
    {
        Ok(())
    } else {
        Err(not_its_seat(&bot.bot, game_id))
    }
}

/// The refusal of a retired bot's key.
pub fn retired(bot: &str, ladder: &str) -> Status {
    Status::permission_denied(format!(
        "bot {bot} is retired from ladder {ladder}: its key no longer plays (register a new version)"
    ))
}

#[derive(Debug)]
struct Grant {
    ladder: Arc<str>,
    bot: Arc<str>,
    retired: bool,
    /// Game id -> the bot's seats' tokens there (None: not known yet: its ladder seats the
    /// game again after a restart).
    games: HashMap<String, Option<Vec<String>>>,
    /// The games in the order they were granted, oldest first.
    order: VecDeque<String>,
}

/// Every ladder bot key this node knows, by SHA-256. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct BotGrants(Arc<RwLock<HashMap<String, Grant>>>);

impl BotGrants {
    /// Enters (or updates) the key of `bot` on `ladder`.
    pub fn enter(&self, hash: &str, ladder: &str, bot: &str, retired: bool) {
        let mut grants = self.0.write().expect("bot grants lock");
        let grant = grants.entry(hash.to_string()).or_insert_with(|| Grant {
            ladder: ladder.into(),
            bot: bot.into(),
            retired,
            games: HashMap::new(),
            order: VecDeque::new(),
        });
        grant.retired = retired;
    }

    /// Grants game `game_id` to the key `hash` (entered before), with its seats' `tokens` there
    /// (None: not known yet); tokens add to those granted before.
    pub fn grant_game(&self, hash: &str, game_id: &str, tokens: Option<Vec<String>>) {
        let mut grants = self.0.write().expect("bot grants lock");
        let Some(grant) = grants.get_mut(hash) else {
            return;
        };
        match grant.games.get_mut(game_id) {
            Some(known) => {
                if let Some(tokens) = tokens {
                    let seats = known.get_or_insert_with(Vec::new);
                    for token in tokens {
                        if !seats.contains(&token) {
                            seats.push(token);
                        }
                    }
                }
            }
            None => {
                grant.games.insert(game_id.to_string(), tokens);
                grant.order.push_back(game_id.to_string());
                while grant.order.len() > MAX_GAMES_PER_KEY {
                    if let Some(oldest) = grant.order.pop_front() {
                        grant.games.remove(&oldest);
                    }
                }
            }
        }
    }

    /// The key `hash` is retired: refused from now on.
    pub fn retire(&self, hash: &str) {
        if let Some(grant) = self.0.write().expect("bot grants lock").get_mut(hash) {
            grant.retired = true;
        }
    }

    /// The key `old` was replaced by `new` (its bot's games go with it); `old` is refused from
    /// now on.
    pub fn rekey(&self, old: &str, new: &str) {
        let mut grants = self.0.write().expect("bot grants lock");
        if let Some(grant) = grants.remove(old) {
            grants.insert(new.to_string(), grant);
        }
    }

    /// Forgets the key `hash`: refused from now on (a replaced key cut off by `rekey --now`).
    pub fn forget(&self, hash: &str) {
        self.0.write().expect("bot grants lock").remove(hash);
    }

    /// Forgets every key of `ladder` (this node no longer runs it).
    pub fn forget_ladder(&self, ladder: &str) {
        self.0
            .write()
            .expect("bot grants lock")
            .retain(|_, grant| &*grant.ladder != ladder);
    }

    /// The bot whose key is `key`, if any ladder here has it.
    pub fn bot_of(&self, key: &str) -> Option<BotKey> {
        let hash = crate::secret::sha256_hex(key);
        let grants = self.0.read().expect("bot grants lock");
        let grant = grants.get(&hash)?;
        Some(BotKey {
            ladder: grant.ladder.clone(),
            bot: grant.bot.clone(),
            retired: grant.retired,
            hash,
        })
    }

    /// Whether a ladder on this node keeps the key whose SHA-256 is `hash`.
    pub fn keeps(&self, hash: &str) -> bool {
        self.0.read().expect("bot grants lock").contains_key(hash)
    }

    /// Whether `bot` may touch game `game_id` with `token` (empty: as a spectator):
    /// PERMISSION_DENIED naming why not; UNAVAILABLE while its ladder seats the game again
    /// after a restart (the bot's retry gets in).
    pub fn may_play(&self, bot: &BotKey, game_id: &str, token: &str) -> Result<(), Status> {
        let grants = self.0.read().expect("bot grants lock");
        let Some(grant) = grants.get(&bot.hash) else {
            return Err(Status::permission_denied(format!(
                "bot {} is no longer on ladder {}: its key no longer plays",
                bot.bot, bot.ladder
            )));
        };
        if grant.retired {
            return Err(retired(&grant.bot, &grant.ladder));
        }
        match grant.games.get(game_id) {
            None => Err(not_matched(&grant.ladder, &grant.bot, game_id)),
            Some(_) if token.is_empty() => Ok(()),
            Some(None) => Err(Status::unavailable(format!(
                "ladder {} is seating game {game_id} again after a restart: retry in a moment",
                grant.ladder
            ))),
            Some(Some(tokens)) => {
                if tokens
                    .iter()
                    .any(|t| crate::secret::constant_time_eq(t.as_bytes(), token.as_bytes()))
                {
                    Ok(())
                } else {
                    Err(not_its_seat(&grant.bot, game_id))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_takes_the_games_and_the_old_one_plays_no_more() {
        let grants = BotGrants::default();
        let (old, new) = ("old-key", "new-key");
        let old_hash = crate::secret::sha256_hex(old);
        let new_hash = crate::secret::sha256_hex(new);
        grants.enter(&old_hash, "class", "a@1", false);
        grants.grant_game(&old_hash, "00000000000000aa", Some(vec!["token".into()]));
        grants.rekey(&old_hash, &new_hash);
        assert!(grants.bot_of(old).is_none());
        let bot = grants.bot_of(new).expect("the new key");
        assert_eq!((&*bot.ladder, &*bot.bot), ("class", "a@1"));
        assert!(grants.may_play(&bot, "00000000000000aa", "token").is_ok());
    }

    #[test]
    fn a_published_seating_admits_its_bots_seats_and_nothing_else() {
        let bot = BotKey {
            hash: crate::secret::sha256_hex("key"),
            ladder: "class".into(),
            bot: "a@1".into(),
            retired: false,
        };
        let game = crate::cluster::PublishedGame {
            ladder: "class".into(),
            seats: vec![("a@1".into(), "t0".into()), ("b@1".into(), "t1".into())],
        };
        let code = |r: Result<(), Status>| r.err().map(|s| s.code());
        assert_eq!(code(may_play_published(&bot, "g", "t0", Some(&game))), None);
        assert_eq!(code(may_play_published(&bot, "g", "", Some(&game))), None);
        let denied = Some(tonic::Code::PermissionDenied);
        assert_eq!(
            code(may_play_published(&bot, "g", "t1", Some(&game))),
            denied
        );
        let other = may_play_published(&bot, "h", "", None).unwrap_err();
        assert!(
            other.message().contains("plays only its ladder games"),
            "{other:?}"
        );
        // Another ladder's game with a bot of the same name.
        let elsewhere = crate::cluster::PublishedGame {
            ladder: "other".into(),
            ..game.clone()
        };
        assert_eq!(
            code(may_play_published(&bot, "g", "", Some(&elsewhere))),
            denied
        );
        let retired = BotKey {
            retired: true,
            ..bot
        };
        let refused = may_play_published(&retired, "g", "t0", Some(&game)).unwrap_err();
        assert!(refused.message().contains("retired"), "{refused:?}");
    }
}
