//! Several gangs nodes on one JetStream log: which node runs which game, and forwarding a call
//! to it. Only with `--store nats://…`; a sled server is a cluster of one and never gets here.
//! Here: the cluster's buckets opened at start and followed; each role has its file:
//!
//! - **Shards.** Every game belongs to one of S shards (a stable hash of its id); the node
//!   holding a shard's lease runs its games (`shards.rs`: leases, fair share, handover).
//! - **Forwarding** (`forwarding.rs`). A call for a game of a shard held by another node is sent to that node over gRPC,
//!   unchanged (Watch and GetLog streams are piped through, so the owner's seq guarantees hold).
//!   If the owner is gone, the call answers `UNAVAILABLE`; clients retry, and once the lease has
//!   expired a node takes the shard, rebuilds its games from the stream (timers re-armed from
//!   the log) and serves them. A watcher whose stream broke resumes by seq the same way. A
//!   forwarded call is never forwarded again (two nodes with different views of a shard would
//!   send it back and forth): it answers `UNAVAILABLE`, and the client retries.
//! - **Directory** (`directory.rs`). Each node writes the summaries of the games it runs to the KV bucket
//!   `GANGS_GAMES` (a new game's at once, before CreateGame answers; then at most once a
//!   second, only what changed) and follows the bucket, so `ListGames` on any node lists every
//!   game (another node's changes up to a second late). A node reads the whole bucket before
//!   it starts serving: its first answer is complete.
//! - **Turns** (`turns.rs`). Work that one node of the cluster does for everyone (sending to a webhook
//!   receiver, running a ladder) is a *turn*: a lease in `GANGS_SENDERS` under the work's name,
//!   holding the holder's URL (`turn`, `turn_holder`).
//! - **Ladders' names** (`turns.rs`). `GANGS_LADDERS` maps each ladder's name to its log and its creation
//!   (taken with `create`: a name is unique in the cluster); every node follows it, so a
//!   ladder created through one node is known to all within a second (`ladder/nodes.rs`).
//! - **Bot keys** (`bot_keys.rs`). The node running a ladder publishes its bots' keys (hashed)
//!   and each game's seating, so that a ladder bot calling any node plays its games with its key.
//! - **Safety does not rest on the lease**: a node that lost its lease without noticing yet
//!   (paused, partitioned) can still try to append, and the stream refuses it: a node that
//!   takes a game over fences its log first (`LogStore::load_to_write`), so the old owner's
//!   appends expect a sequence the stream moved past. The log never forks and the old owner
//!   never acknowledges what the new one does not serve. The lease keeps such races rare, and
//!   a node confirms it still holds a game's lease before it rebuilds the game (after a
//!   refused append, the usual sign of a lease lost unnoticed).

mod bot_keys;
mod directory;
mod forwarding;
mod shards;
mod turns;

pub use bot_keys::{PublishedGame, PublishedKey, BOT_GAMES_BUCKET, BOT_KEYS_BUCKET};
pub use forwarding::{forward_failed, Patience, Route, FORWARDED};
use shards::Shards;
pub use shards::{shard_of, Holder, DEFAULT_SHARDS, MAX_SHARDS};
pub use turns::LadderName;

use crate::error::HostError;
use crate::registry::Registry;
use crate::store::jetstream::while_jetstream_starts;
use async_nats::jetstream::{self, kv};
use gangs_proto::v1 as pb;
use prost::Message;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_stream::StreamExt;
use tonic::transport::Channel;

pub use shards::{CLUSTER_BUCKET, MEMBERS_BUCKET, OWNERS_BUCKET};
pub const GAMES_BUCKET: &str = "GANGS_GAMES";
/// Turns: which node delivers to each webhook receiver, which runs each ladder (`turn`).
pub const SENDERS_BUCKET: &str = "GANGS_SENDERS";
/// Every ladder of the cluster: name -> its log and creation (`LadderName`).
pub const LADDERS_BUCKET: &str = "GANGS_LADDERS";
/// How long a dead node's games wait before another node may take them.
pub const LEASE_TTL: Duration = Duration::from_secs(5);
const RENEW_EVERY: Duration = Duration::from_secs(1);
/// Summaries written to the directory at once.
const PUBLISH_AT_ONCE: usize = 32;

pub struct Cluster {
    /// This node's gRPC URL as other nodes reach it.
    me: String,
    /// The shards this node runs, and who runs the others.
    shards: Arc<Shards>,
    /// Connections to the other nodes, by URL and patience (games and ladders are forwarded
    /// over them).
    peers: Mutex<HashMap<(String, Patience), Channel>>,
    games: kv::Store,
    /// Every game's summary as the directory bucket has it (followed by a KV watch).
    directory: Arc<Mutex<HashMap<String, pb::GameSummary>>>,
    /// What this node last wrote to the directory, to write only changes.
    written: Mutex<HashMap<String, pb::GameSummary>>,
    /// Summaries whose write failed, tried again at the next publish.
    unpublished: Mutex<Vec<pb::GameSummary>>,
    /// Turns (leases of work one node does for the cluster): webhook receivers, ladders.
    senders: kv::Store,
    ladders: kv::Store,
    /// Every ladder's name as the ladders' bucket has it (followed by a KV watch).
    ladder_names: Arc<Mutex<HashMap<String, LadderName>>>,
    /// Moves at each change of the ladders' bucket.
    ladder_name_changes: tokio::sync::watch::Receiver<u64>,
    /// The value of [`FORWARDED`] on calls between this cluster's nodes: random, made by the
    /// first node of the cluster and kept in its settings bucket, so only a holder of the
    /// cluster's NATS credentials knows it.
    forwarding_mark: tonic::metadata::AsciiMetadataValue,
    /// Every ladder bot's key and its ladder games, for a bot calling a node that does not run
    /// its ladder (`bot_keys.rs`).
    bot_keys: bot_keys::BotKeys,
}

fn kv_error(e: impl std::fmt::Display) -> HostError {
    HostError::unavailable(format!("the game directory (NATS KV) is unreachable: {e}"))
}

/// A bucket of leases: in memory, each entry gone [`LEASE_TTL`] after its last renewal (a dead
/// holder's lease expires by itself).
fn leases_bucket(bucket: &str, replicas: usize) -> kv::Config {
    kv::Config {
        bucket: bucket.to_string(),
        history: 1,
        max_age: LEASE_TTL,
        storage: jetstream::stream::StorageType::Memory,
        num_replicas: replicas.max(1),
        ..Default::default()
    }
}

/// A bucket of names: on disk, the last value of each key.
fn names_bucket(bucket: &str, replicas: usize) -> kv::Config {
    kv::Config {
        bucket: bucket.to_string(),
        history: 1,
        storage: jetstream::stream::StorageType::File,
        num_replicas: replicas.max(1),
        ..Default::default()
    }
}

/// A setting of the cluster (`key` in the bucket `GANGS_CLUSTER`, as text): the stored one, or
/// `proposed` if this node stores it first. Each is set once, by whichever node of a new
/// cluster gets there first; the others read that one.
async fn setting(
    settings: &kv::Store,
    key: &str,
    proposed: &str,
    what: &str,
) -> Result<String, String> {
    for _ in 0..10 {
        let stored = settings
            .get(key)
            .await
            .map_err(|e| format!("NATS: cannot read {what}: {e}"))?;
        if let Some(value) = stored {
            return Ok(String::from_utf8_lossy(&value).into_owned());
        }
        // Created only if absent: two nodes starting a cluster at once agree on the first.
        if settings
            .create(key, proposed.to_string().into())
            .await
            .is_ok()
        {
            return Ok(proposed.to_string());
        }
    }
    Err(format!("NATS: cannot read or set {what}"))
}

/// Opens (or creates) a KV bucket, retrying while JetStream starts.
async fn open_bucket(js: &jetstream::Context, config: kv::Config) -> Result<kv::Store, String> {
    while_jetstream_starts(&config.bucket, || {
        js.create_or_update_key_value(config.clone())
    })
    .await
    .map_err(|e| format!("NATS: cannot open the bucket {}: {e}", config.bucket))
}

impl Cluster {
    /// Opens (or creates) the cluster's buckets, loads the directory, and starts taking this
    /// node's share of the shards (`shards` is the count of a new cluster: an existing
    /// cluster keeps its own).
    pub async fn start(
        js: &jetstream::Context,
        me: String,
        replicas: usize,
        shards: u32,
        registry: Registry,
    ) -> Result<Arc<Cluster>, String> {
        let settings = open_bucket(js, names_bucket(CLUSTER_BUCKET, replicas)).await?;
        let shards = Arc::new(Shards::open(js, &settings, me.clone(), replicas, shards).await?);
        let games = open_bucket(js, names_bucket(GAMES_BUCKET, replicas)).await?;
        let senders = open_bucket(js, leases_bucket(SENDERS_BUCKET, replicas)).await?;
        let ladders = open_bucket(js, names_bucket(LADDERS_BUCKET, replicas)).await?;
        let directory = follow_bucket(&games, |entry| {
            pb::GameSummary::decode(entry.value.as_ref()).ok()
        })
        .await?
        .values;
        let Followed {
            values: ladder_names,
            changes: ladder_name_changes,
        } = follow_bucket(&ladders, |entry| LadderName::decode(entry.value.as_ref())).await?;
        let forwarding_mark = forwarding::forwarding_mark(&settings).await?;
        let bot_keys = bot_keys::BotKeys::open(js, replicas).await?;
        registry.track_summary_changes();
        // A game created here with a new random id goes to a shard this node holds.
        let placing = shards.clone();
        registry.place_new_games(move |id| placing.holds_game(id));
        let cluster = Arc::new(Cluster {
            me,
            shards,
            peers: Mutex::default(),
            games,
            directory,
            written: Mutex::default(),
            unpublished: Mutex::default(),
            senders,
            ladders,
            ladder_names,
            ladder_name_changes,
            forwarding_mark,
            bot_keys,
        });
        Shards::keep_renewing(&cluster.shards, registry.clone());
        let balancing = Arc::downgrade(&cluster);
        tokio::spawn(async move {
            loop {
                let Some(cluster) = balancing.upgrade() else {
                    return;
                };
                let unfinished = |shards: &[u32]| cluster.unfinished_games_of(shards);
                cluster.shards.balance(&registry, &unfinished).await;
                cluster.publish(&registry).await;
                drop(cluster);
                tokio::time::sleep(RENEW_EVERY).await;
            }
        });
        Ok(cluster)
    }

    /// Whether an answer this node's memory gives for `game_id` is the truth: it holds the
    /// game's shard by a lease renewed lately (see `shards.rs`). A refusal from a game's actor
    /// on a node whose lease went stale answers UNAVAILABLE instead (`api.rs`).
    pub fn answers_for(&self, game_id: &str) -> bool {
        self.shards.holds_fresh(game_id)
    }

    /// Whether this node holds its share of the shards (health answers SERVING).
    pub fn ready(&self) -> bool {
        self.shards.ready()
    }

    /// How many shards the cluster has, and how many this node holds.
    pub fn shard_counts(&self) -> (u32, usize) {
        (self.shards.count(), self.shards.held())
    }

    /// This node stops: hands its shards over to the other nodes (see `shards.rs`).
    pub async fn leave(&self, registry: &Registry) {
        self.shards.leave(registry).await;
    }
    /// This node's gRPC URL as the others reach it.
    pub fn me(&self) -> &str {
        &self.me
    }
}

/// A bucket followed by a KV watch: its decoded values, and a count that moves at each change
/// (its sender dropped when the watch ends).
struct Followed<T> {
    values: Arc<Mutex<HashMap<String, T>>>,
    changes: tokio::sync::watch::Receiver<u64>,
}

/// Follows a bucket into a map of its decoded values (a value that does not decode is left
/// out), and returns once the map holds the whole bucket as it was when the watch started (a
/// node's first `ListGames` answer is complete).
async fn follow_bucket<T: Send + 'static>(
    bucket: &kv::Store,
    decode: fn(&kv::Entry) -> Option<T>,
) -> Result<Followed<T>, String> {
    let map: Arc<Mutex<HashMap<String, T>>> = Arc::new(Mutex::new(HashMap::new()));
    let (changed, changes) = tokio::sync::watch::channel(0u64);
    let name = bucket.name.clone();
    // `watch_all` delivers only changes made after it starts (DeliverPolicy::New): a node
    // started after the others listed none of their games. The last value of every key, then
    // the changes.
    // Retried like opening the bucket: watching makes a consumer, which JetStream's meta leader
    // may place, for a few seconds after a NATS node died, on that dead peer (the request
    // times out). A node started then (a supervisor restarting it) exited; it now retries.
    let what = format!("following the bucket {name}");
    let mut updates = while_jetstream_starts(&what, || bucket.watch_with_history(">"))
        .await
        .map_err(|e| format!("NATS: cannot follow the bucket {name}: {e}"))?;
    let empty = while_jetstream_starts(&what, || bucket.status())
        .await
        .map_err(|e| format!("NATS: cannot read the bucket {name}: {e}"))?
        .values()
        == 0;
    let (loaded, mut is_loaded) = tokio::sync::watch::channel(empty);
    let following = map.clone();
    tokio::spawn(async move {
        while let Some(entry) = updates.next().await {
            let Ok(entry) = entry else { continue };
            let caught_up = entry.delta == 0;
            {
                let mut map = following.lock().expect("followed bucket lock");
                match entry.operation {
                    kv::Operation::Put => {
                        if let Some(value) = decode(&entry) {
                            map.insert(entry.key, value);
                        }
                    }
                    _ => {
                        map.remove(&entry.key);
                    }
                }
            }
            changed.send_modify(|count| *count += 1);
            if caught_up {
                loaded.send_if_modified(|done| !std::mem::replace(done, true));
            }
        }
    });
    tokio::time::timeout(DIRECTORY_LOAD, is_loaded.wait_for(|done| *done))
        .await
        .map_err(|_| format!("NATS: the bucket {name} did not load within {DIRECTORY_LOAD:?}"))?
        .map_err(|_| format!("NATS: the watch of the bucket {name} ended"))?;
    Ok(Followed {
        values: map,
        changes,
    })
}

/// How long a node may take to read the whole directory at start.
const DIRECTORY_LOAD: Duration = Duration::from_secs(60);
