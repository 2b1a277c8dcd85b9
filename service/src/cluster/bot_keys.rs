//! Ladder bots' keys on a cluster. A bot may call any node, but only the node running its
//! ladder (the ladder's turn) keeps the ladder's table of keys and games (`front/bots.rs`). So
//! that node publishes each key, by its SHA-256 (ladder, bot, retired), to `GANGS_BOT_KEYS`,
//! which every node follows, and each game it seats (which bot sits where, with which token)
//! to `GANGS_BOT_GAMES`, before the bots hear of the game. Another node admits a bot key from
//! the first and checks the game against the second (read once per game, then kept: a game's
//! seating never changes). Both buckets are on disk and belong to no node: a node that takes a
//! ladder over (its runner killed) finds them as they were, and publishes its keys again.
//! Games are matched to bots by the bot's name (`bot@version`), not its key: a rekeyed bot's
//! new key plays its games.

use super::{kv_error, names_bucket, open_bucket, Cluster};
use crate::error::HostResult;
use async_nats::jetstream::{self, kv};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Every ladder bot's key by SHA-256: its ladder, its bot, whether it is retired.
pub const BOT_KEYS_BUCKET: &str = "GANGS_BOT_KEYS";
/// Every ladder game's seating by game id: its ladder, each seat's bot and token.
pub const BOT_GAMES_BUCKET: &str = "GANGS_BOT_GAMES";
/// How long a ladder game's seating is kept: its bots may read its log this long after it
/// started (a ladder game has clocks: it is over long before).
const GAMES_KEPT: Duration = Duration::from_secs(7 * 24 * 3600);
/// Seatings kept in memory per node (the games bot keys asked about lately).
const GAMES_CACHED: usize = 16 * 1024;

/// A bot key as the cluster knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedKey {
    pub ladder: String,
    /// `bot@version`.
    pub bot: String,
    pub retired: bool,
}

impl PublishedKey {
    fn encode(&self) -> Vec<u8> {
        json!({ "ladder": self.ladder, "bot": self.bot, "retired": self.retired })
            .to_string()
            .into_bytes()
    }

    fn decode(value: &[u8]) -> Option<PublishedKey> {
        let value: Value = serde_json::from_slice(value).ok()?;
        Some(PublishedKey {
            ladder: value.get("ladder")?.as_str()?.to_string(),
            bot: value.get("bot")?.as_str()?.to_string(),
            retired: value.get("retired")?.as_bool()?,
        })
    }
}

/// A ladder game's seating as the cluster knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedGame {
    pub ladder: String,
    /// Each seat's bot (`bot@version`) and token.
    pub seats: Vec<(String, String)>,
}

impl PublishedGame {
    fn encode(&self) -> Vec<u8> {
        let seats: Vec<Value> = self
            .seats
            .iter()
            .map(|(bot, token)| json!({ "bot": bot, "token": token }))
            .collect();
        json!({ "ladder": self.ladder, "seats": seats })
            .to_string()
            .into_bytes()
    }

    fn decode(value: &[u8]) -> Option<PublishedGame> {
        let value: Value = serde_json::from_slice(value).ok()?;
        let seats = value
            .get("seats")?
            .as_array()?
            .iter()
            .map(|seat| {
                Some((
                    seat.get("bot")?.as_str()?.to_string(),
                    seat.get("token")?.as_str()?.to_string(),
                ))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(PublishedGame {
            ladder: value.get("ladder")?.as_str()?.to_string(),
            seats,
        })
    }
}

/// The bot keys' buckets of one node: the keys followed, the seatings read so far.
pub(super) struct BotKeys {
    keys: kv::Store,
    games: kv::Store,
    known: Arc<Mutex<HashMap<String, PublishedKey>>>,
    seatings: Mutex<Seatings>,
}

/// Seatings read from the bucket, the oldest forgotten first.
#[derive(Default)]
struct Seatings {
    games: HashMap<String, PublishedGame>,
    order: VecDeque<String>,
}

impl Seatings {
    fn keep(&mut self, game_id: &str, game: PublishedGame) {
        if self.games.insert(game_id.to_string(), game).is_none() {
            self.order.push_back(game_id.to_string());
            while self.order.len() > GAMES_CACHED {
                if let Some(oldest) = self.order.pop_front() {
                    self.games.remove(&oldest);
                }
            }
        }
    }
}

impl BotKeys {
    pub(super) async fn open(js: &jetstream::Context, replicas: usize) -> Result<BotKeys, String> {
        let keys = open_bucket(js, names_bucket(BOT_KEYS_BUCKET, replicas)).await?;
        let games = open_bucket(
            js,
            kv::Config {
                max_age: GAMES_KEPT,
                ..names_bucket(BOT_GAMES_BUCKET, replicas)
            },
        )
        .await?;
        let known = super::follow_bucket(&keys, |entry| PublishedKey::decode(&entry.value))
            .await?
            .values;
        Ok(BotKeys {
            keys,
            games,
            known,
            seatings: Mutex::default(),
        })
    }
}

impl Cluster {
    /// The ladder bot key whose SHA-256 is `hash`, as its ladder's node published it (a moment
    /// late at most).
    pub fn bot_key(&self, hash: &str) -> Option<PublishedKey> {
        let known = self.bot_keys.known.lock().expect("bot keys lock");
        known.get(hash).cloned()
    }

    /// Publishes the bot key `hash` (its ladder's node does, whenever it changes).
    pub async fn publish_bot_key(&self, hash: &str, key: &PublishedKey) -> HostResult<()> {
        self.bot_keys
            .keys
            .put(hash, key.encode().into())
            .await
            .map_err(kv_error)?;
        // Known here at once, not only when the bucket's watch brings it back.
        let mut known = self.bot_keys.known.lock().expect("bot keys lock");
        known.insert(hash.to_string(), key.clone());
        Ok(())
    }

    /// Withdraws the bot key `hash` (replaced by a new one): no node admits it any more.
    pub async fn withdraw_bot_key(&self, hash: &str) -> HostResult<()> {
        self.bot_keys.keys.purge(hash).await.map_err(kv_error)?;
        let mut known = self.bot_keys.known.lock().expect("bot keys lock");
        known.remove(hash);
        Ok(())
    }

    /// Publishes a ladder game's seating (before its bots hear of the game).
    pub async fn publish_bot_game(&self, game_id: &str, game: PublishedGame) -> HostResult<()> {
        self.bot_keys
            .games
            .put(game_id, game.encode().into())
            .await
            .map_err(kv_error)?;
        let mut seatings = self.bot_keys.seatings.lock().expect("seatings lock");
        seatings.keep(game_id, game);
        Ok(())
    }

    /// The seating of the ladder game `game_id`, None if no ladder published one.
    pub async fn bot_game(&self, game_id: &str) -> HostResult<Option<PublishedGame>> {
        if let Some(game) = self
            .bot_keys
            .seatings
            .lock()
            .expect("seatings lock")
            .games
            .get(game_id)
        {
            return Ok(Some(game.clone()));
        }
        // Game ids are hex, valid KV keys; anything else was never published.
        if game_id.is_empty() || !game_id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Ok(None);
        }
        let entry = self.bot_keys.games.entry(game_id).await.map_err(kv_error)?;
        let Some(game) = entry
            .filter(|e| e.operation == kv::Operation::Put)
            .and_then(|e| PublishedGame::decode(&e.value))
        else {
            return Ok(None);
        };
        let mut seatings = self.bot_keys.seatings.lock().expect("seatings lock");
        seatings.keep(game_id, game.clone());
        Ok(Some(game))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_seatings_survive_the_bucket_and_bad_values_are_none() {
        let key = PublishedKey {
            ladder: "class \"2026\"".into(),
            bot: "greedy@1".into(),
            retired: true,
        };
        assert_eq!(PublishedKey::decode(&key.encode()), Some(key));
        let game = PublishedGame {
            ladder: "class".into(),
            seats: vec![("a@1".into(), "t0".into()), ("b@2".into(), "t1".into())],
        };
        assert_eq!(PublishedGame::decode(&game.encode()), Some(game));
        assert_eq!(PublishedKey::decode(b"{\"ladder\":\"x\"}"), None);
        assert_eq!(PublishedGame::decode(b"not json"), None);
    }

    #[test]
    fn seatings_forget_the_oldest_past_their_bound() {
        let mut seatings = Seatings::default();
        let game = PublishedGame {
            ladder: "class".into(),
            seats: Vec::new(),
        };
        for n in 0..GAMES_CACHED + 2 {
            seatings.keep(&format!("{n:016x}"), game.clone());
        }
        assert_eq!(seatings.games.len(), GAMES_CACHED);
        assert!(!seatings.games.contains_key(&format!("{:016x}", 0)));
        assert!(seatings
            .games
            .contains_key(&format!("{:016x}", GAMES_CACHED + 1)));
    }
}
