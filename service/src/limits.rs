//! What one client may hold of the server, beyond the size of a request: live games (per
//! server and per client), open `Watch` streams (per game and per connection), and the pace of
//! `CreateGame` (per client). Each limit is a `gangs-server` flag; a call past one is refused
//! with RESOURCE_EXHAUSTED naming the flag, and changes nothing.
//!
//! A *client* is its key (`authorization` metadata) when it sends one, else its IP address: a
//! server without keys still keeps one address from taking everything.
//!
//! Why counters here rather than tower layers: tower's `RateLimit` and `ConcurrencyLimit`
//! count per service (or per connection), not per key, per game or per stream, and a `Watch`
//! stream outlives the request future those layers see. Request size is tonic's own limit
//! (`--max-request-bytes`). Every map here is bounded: entries go when their count is back to
//! zero, the games counted per client go once over (`forget_over`, run every few seconds), and
//! the rate buckets are capped in number. After a restart the live games each client created
//! are counted again from the log (`restore_games`: the `created` record names its creator).

use crate::error::HostError;
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The limits' flags (`gangs-server --help`).
#[derive(Debug, Clone, clap::Args)]
pub struct LimitFlags {
    /// Live (waiting or running) games on this server; a CreateGame past it is refused.
    #[arg(long, env = "GANGS_MAX_LIVE_GAMES", default_value_t = 10_000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_live_games: u32,
    /// Live games created by one client (its key, else its IP address).
    #[arg(long, env = "GANGS_MAX_LIVE_GAMES_PER_KEY", default_value_t = 1_000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_live_games_per_key: u32,
    /// Open Watch streams on one game (seats and spectators together).
    #[arg(long, env = "GANGS_MAX_WATCHERS_PER_GAME", default_value_t = 1_000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_watchers_per_game: u32,
    /// Open Watch streams on one connection.
    #[arg(long, env = "GANGS_MAX_WATCHERS_PER_CONNECTION", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_watchers_per_connection: u32,
    /// CreateGame calls per minute from one client (key, else IP address); a burst of this
    /// many is allowed, then one more every 60/N seconds.
    #[arg(long, env = "GANGS_CREATE_RATE", default_value_t = 600,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub create_rate: u32,
}

impl Default for LimitFlags {
    fn default() -> Self {
        LimitFlags {
            max_live_games: 10_000,
            max_live_games_per_key: 1_000,
            max_watchers_per_game: 1_000,
            max_watchers_per_connection: 256,
            create_rate: 600,
        }
    }
}

/// Rate buckets kept at most; past it the full ones (idle clients) are forgotten.
const MAX_BUCKETS: usize = 100_000;

/// Who is asking: a key or an address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Client {
    /// A key, by its digest ([`Client::of_key`]): the key itself is never kept here nor logged.
    Key(String),
    Address(std::net::IpAddr),
    Unknown,
}

impl Client {
    /// The client of a key: the first 16 bytes of its SHA-256, in hex.
    pub fn of_key(key: &str) -> Client {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(key.as_bytes());
        Client::Key(digest[..16].iter().map(|b| format!("{b:02x}")).collect())
    }

    /// How a game's `created` record names its creator: `key:DIGEST`, `ip:ADDRESS`, or empty.
    pub fn log_id(&self) -> String {
        match self {
            Client::Key(digest) => format!("key:{digest}"),
            Client::Address(ip) => format!("ip:{ip}"),
            Client::Unknown => String::new(),
        }
    }

    /// The client a `created` record names ([`Client::log_id`]); None when it names none.
    pub fn from_log_id(id: &str) -> Option<Client> {
        if let Some(digest) = id.strip_prefix("key:") {
            return Some(Client::Key(digest.to_string()));
        }
        id.strip_prefix("ip:")?.parse().ok().map(Client::Address)
    }
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // Never the key itself in a message or a log line.
            Client::Key(_) => write!(f, "this key"),
            Client::Address(ip) => write!(f, "address {ip}"),
            Client::Unknown => write!(f, "this client"),
        }
    }
}

#[derive(Default)]
struct State {
    /// Games each client created that may still be live (pruned with `is_live`).
    games_of: HashMap<Client, HashSet<String>>,
    /// CreateGame calls admitted whose game is not created yet.
    creating: HashMap<Client, u32>,
    watchers_of_game: HashMap<String, u32>,
    watchers_of_connection: HashMap<SocketAddr, u32>,
    buckets: HashMap<Client, Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The server's limits and what is counted against them.
#[derive(Clone)]
pub struct Limits {
    flags: LimitFlags,
    state: Arc<Mutex<State>>,
}

impl Limits {
    pub fn new(flags: LimitFlags) -> Limits {
        Limits {
            flags,
            state: Arc::default(),
        }
    }

    /// Admits one CreateGame of `client`: its rate, the live games of the server (`live_now`)
    /// and of the client (`is_live` tells which of its games still are). The answer must be
    /// kept until the game exists ([`CreateAdmission::created`]) or the creation failed (drop).
    pub fn admit_create(
        &self,
        client: Client,
        live_now: usize,
        is_live: impl Fn(&str) -> bool,
    ) -> Result<CreateAdmission, HostError> {
        let flags = &self.flags;
        let mut state = self.state.lock().expect("limits lock");
        let in_flight: u32 = state.creating.values().sum();
        if live_now + in_flight as usize >= flags.max_live_games as usize {
            return Err(HostError::Exhausted(format!(
                "this server holds its limit of {} live games (--max-live-games): wait for games to finish, or cancel some",
                flags.max_live_games
            )));
        }
        let creating = state.creating.get(&client).copied().unwrap_or(0);
        // The client's games that ended are forgotten only when they would make the count
        // reach the limit (and by the housekeeping): checking every game of a client with
        // 50,000 per creation made creating them quadratic.
        let mine = match state.games_of.get_mut(&client) {
            Some(games) => {
                if games.len() + creating as usize >= flags.max_live_games_per_key as usize {
                    games.retain(|id| is_live(id));
                }
                games.len()
            }
            None => 0,
        };
        if mine + creating as usize >= flags.max_live_games_per_key as usize {
            return Err(HostError::Exhausted(format!(
                "{client} has its limit of {} live games (--max-live-games-per-key): wait for its games to finish, or cancel some",
                flags.max_live_games_per_key
            )));
        }
        take_token(
            &mut state.buckets,
            &client,
            flags.create_rate,
            Instant::now(),
        )?;
        *state.creating.entry(client.clone()).or_default() += 1;
        Ok(CreateAdmission {
            limits: self.clone(),
            client: Some(client),
        })
    }

    /// Counts live games the log says each client created (at startup, before any call: the
    /// limits count what exists, not from zero).
    pub fn restore_games(&self, games: impl IntoIterator<Item = (Client, String)>) {
        let mut state = self.state.lock().expect("limits lock");
        for (client, game_id) in games {
            state.games_of.entry(client).or_default().insert(game_id);
        }
    }

    /// Forgets the games no longer live (`is_live`), and the clients left with none: the
    /// counts follow the games' real state, and a client that never creates again is not
    /// remembered for ever.
    pub fn forget_over(&self, is_live: impl Fn(&str) -> bool) {
        let mut state = self.state.lock().expect("limits lock");
        state.games_of.retain(|_, games| {
            games.retain(|id| is_live(id));
            !games.is_empty()
        });
    }

    /// Entries held in every table here (games counted per client, calls being admitted, watch
    /// counts, rate buckets): `gangs_limit_entries`.
    pub fn entries(&self) -> usize {
        let state = self.state.lock().expect("limits lock");
        state.games_of.values().map(HashSet::len).sum::<usize>()
            + state.games_of.len()
            + state.creating.len()
            + state.watchers_of_game.len()
            + state.watchers_of_connection.len()
            + state.buckets.len()
    }

    /// Opens a `Watch` stream on `game_id` over the connection from `peer`; the stream holds
    /// the answer while it is open.
    pub fn open_watch(
        &self,
        game_id: &str,
        peer: Option<SocketAddr>,
    ) -> Result<WatchSlot, HostError> {
        let flags = &self.flags;
        let mut state = self.state.lock().expect("limits lock");
        let on_game = state.watchers_of_game.get(game_id).copied().unwrap_or(0);
        if on_game >= flags.max_watchers_per_game {
            return Err(HostError::Exhausted(format!(
                "game {game_id} has its limit of {} open watch streams (--max-watchers-per-game): close one first",
                flags.max_watchers_per_game
            )));
        }
        if let Some(peer) = peer {
            let on_connection = state
                .watchers_of_connection
                .get(&peer)
                .copied()
                .unwrap_or(0);
            if on_connection >= flags.max_watchers_per_connection {
                return Err(HostError::Exhausted(format!(
                    "this connection has its limit of {} open watch streams (--max-watchers-per-connection): close one, or open another connection",
                    flags.max_watchers_per_connection
                )));
            }
            *state.watchers_of_connection.entry(peer).or_default() += 1;
        }
        *state
            .watchers_of_game
            .entry(game_id.to_string())
            .or_default() += 1;
        Ok(WatchSlot {
            limits: self.clone(),
            game_id: game_id.to_string(),
            peer,
        })
    }
}

/// One token of `client`'s CreateGame bucket: `rate` per minute, bursts of `rate`.
fn take_token(
    buckets: &mut HashMap<Client, Bucket>,
    client: &Client,
    rate: u32,
    now: Instant,
) -> Result<(), HostError> {
    let capacity = f64::from(rate);
    let per_second = capacity / 60.0;
    if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(client) {
        // Forget the clients whose bucket has refilled: they lose nothing.
        buckets.retain(|_, b| {
            b.tokens + now.duration_since(b.at).as_secs_f64() * per_second < capacity
        });
    }
    let bucket = buckets.entry(client.clone()).or_insert(Bucket {
        tokens: capacity,
        at: now,
    });
    let refilled = now.duration_since(bucket.at).as_secs_f64() * per_second;
    bucket.tokens = (bucket.tokens + refilled).min(capacity);
    bucket.at = now;
    if bucket.tokens < 1.0 {
        let wait = ((1.0 - bucket.tokens) / per_second).ceil();
        return Err(HostError::Exhausted(format!(
            "{client} creates games faster than its limit of {rate} per minute (--create-rate): try again in {wait:.0} s"
        )));
    }
    bucket.tokens -= 1.0;
    Ok(())
}

/// An admitted CreateGame, counted until the game exists or the call failed.
pub struct CreateAdmission {
    limits: Limits,
    client: Option<Client>,
}

impl CreateAdmission {
    /// The game exists: it counts as one of the client's live games from now on.
    pub fn created(mut self, game_id: &str) {
        let client = self.client.take().expect("admitted once");
        let mut state = self.limits.state.lock().expect("limits lock");
        release_creating(&mut state, &client);
        state
            .games_of
            .entry(client)
            .or_default()
            .insert(game_id.to_string());
    }
}

impl Drop for CreateAdmission {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let mut state = self.limits.state.lock().expect("limits lock");
            release_creating(&mut state, &client);
        }
    }
}

fn release_creating(state: &mut State, client: &Client) {
    if let Some(count) = state.creating.get_mut(client) {
        *count -= 1;
        if *count == 0 {
            state.creating.remove(client);
        }
    }
}

/// An open `Watch` stream, counted against its game and connection until dropped.
pub struct WatchSlot {
    limits: Limits,
    game_id: String,
    peer: Option<SocketAddr>,
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        let mut state = self.limits.state.lock().expect("limits lock");
        decrement(&mut state.watchers_of_game, &self.game_id);
        if let Some(peer) = &self.peer {
            decrement(&mut state.watchers_of_connection, peer);
        }
    }
}

fn decrement<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, u32>, key: &K) {
    if let Some(count) = counts.get_mut(key) {
        *count -= 1;
        if *count == 0 {
            counts.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn limits(flags: LimitFlags) -> Limits {
        Limits::new(flags)
    }

    fn key(k: &str) -> Client {
        Client::of_key(k)
    }

    #[test]
    fn live_games_are_bounded_per_server_and_per_client() {
        let l = limits(LimitFlags {
            max_live_games: 3,
            max_live_games_per_key: 2,
            ..LimitFlags::default()
        });
        l.admit_create(key("a"), 0, |_| true).unwrap().created("g1");
        l.admit_create(key("a"), 1, |_| true).unwrap().created("g2");
        let err = l.admit_create(key("a"), 2, |_| true).err().unwrap();
        assert!(
            err.to_string().contains("--max-live-games-per-key"),
            "{err}"
        );
        // Once one of its games is over, the client may create again.
        l.admit_create(key("a"), 2, |id| id != "g1")
            .unwrap()
            .created("g3");
        let err = l.admit_create(key("b"), 3, |_| true).err().unwrap();
        assert!(err.to_string().contains("(--max-live-games)"), "{err}");
        // The key itself never appears in a message.
        let err = l.admit_create(key("a"), 0, |_| true).err().unwrap();
        assert!(err.to_string().contains("this key has its limit"), "{err}");
    }

    #[test]
    fn restored_games_count_and_games_over_are_forgotten() {
        let l = limits(LimitFlags {
            max_live_games_per_key: 2,
            ..LimitFlags::default()
        });
        let a = Client::of_key("secret-a");
        let ip = Client::Address("10.1.2.3".parse().unwrap());
        // The log's names come back as the same clients.
        for client in [&a, &ip] {
            assert_eq!(Client::from_log_id(&client.log_id()).as_ref(), Some(client));
        }
        assert!(!a.log_id().contains("secret"), "{}", a.log_id());
        assert_eq!(Client::from_log_id(""), None);
        assert_eq!(Client::from_log_id("ip:not-an-address"), None);
        l.restore_games([
            (a.clone(), "g1".into()),
            (a.clone(), "g2".into()),
            (ip, "g3".into()),
        ]);
        let err = l.admit_create(a.clone(), 3, |_| true).err().unwrap();
        assert!(
            err.to_string().contains("--max-live-games-per-key"),
            "{err}"
        );
        let before = l.entries();
        // g1 and g3 are over: a's count drops, the address is forgotten.
        l.forget_over(|id| id == "g2");
        assert_eq!(l.entries(), before - 3, "g1, g3 and the address's entry");
        l.admit_create(a, 1, |_| true).unwrap().created("g4");
        l.forget_over(|_| false);
        let state = l.state.lock().unwrap();
        assert!(state.games_of.is_empty() && state.creating.is_empty());
    }

    #[test]
    fn an_admission_dropped_without_a_game_counts_nothing() {
        let l = limits(LimitFlags {
            max_live_games: 1,
            ..LimitFlags::default()
        });
        let first = l.admit_create(key("a"), 0, |_| true).unwrap();
        // In flight: counted against the server's limit.
        assert!(l.admit_create(key("b"), 0, |_| true).is_err());
        drop(first);
        l.admit_create(key("b"), 0, |_| true).unwrap();
    }

    #[test]
    fn create_rate_is_a_bucket_per_client() {
        let mut buckets = HashMap::new();
        let t0 = Instant::now();
        for _ in 0..3 {
            take_token(&mut buckets, &key("a"), 3, t0).unwrap();
        }
        let err = take_token(&mut buckets, &key("a"), 3, t0).unwrap_err();
        assert!(err.to_string().contains("--create-rate"), "{err}");
        assert!(err.to_string().contains("try again in 20 s"), "{err}");
        // Another client has its own bucket; the first one's refills at 3 a minute.
        take_token(&mut buckets, &key("b"), 3, t0).unwrap();
        take_token(&mut buckets, &key("a"), 3, t0 + Duration::from_secs(20)).unwrap();
        assert!(take_token(&mut buckets, &key("a"), 3, t0 + Duration::from_secs(21)).is_err());
    }

    #[test]
    fn watch_slots_count_per_game_and_per_connection_and_come_back() {
        let l = limits(LimitFlags {
            max_watchers_per_game: 2,
            max_watchers_per_connection: 3,
            ..LimitFlags::default()
        });
        let peer: SocketAddr = "10.0.0.1:5000".parse().unwrap();
        let a = l.open_watch("g1", Some(peer)).unwrap();
        let _b = l.open_watch("g1", Some(peer)).unwrap();
        let err = l.open_watch("g1", Some(peer)).err().unwrap();
        assert!(err.to_string().contains("--max-watchers-per-game"), "{err}");
        let _c = l.open_watch("g2", Some(peer)).unwrap();
        let err = l.open_watch("g3", Some(peer)).err().unwrap();
        assert!(
            err.to_string().contains("--max-watchers-per-connection"),
            "{err}"
        );
        // Another connection is counted apart; a closed stream frees its slots.
        let _d = l
            .open_watch("g3", Some("10.0.0.1:5001".parse().unwrap()))
            .unwrap();
        drop(a);
        let _e = l.open_watch("g1", Some(peer)).unwrap();
        drop((_b, _c, _d, _e));
        let state = l.state.lock().unwrap();
        assert!(state.watchers_of_game.is_empty() && state.watchers_of_connection.is_empty());
    }
}
