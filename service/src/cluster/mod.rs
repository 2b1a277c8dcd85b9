//! Several gangs nodes on one JetStream log: which node runs which game, and forwarding a call
//! to it. Only with `--store nats://…`; a sled server is a cluster of one and never gets here.
//!
//! - **Shards.** Every game belongs to one of S shards (a stable hash of its id); the node
//!   holding a shard's lease runs its games (`shards.rs`: leases, fair share, handover).
//! - **Forwarding.** A call for a game of a shard held by another node is sent to that node over gRPC,
//!   unchanged (Watch and GetLog streams are piped through, so the owner's seq guarantees hold).
//!   If the owner is gone, the call answers `UNAVAILABLE`; clients retry, and once the lease has
//!   expired a node takes the shard, rebuilds its games from the stream (timers re-armed from
//!   the log) and serves them. A watcher whose stream broke resumes by seq the same way. A
//!   forwarded call is never forwarded again (two nodes with different views of a shard would
//!   send it back and forth): it answers `UNAVAILABLE`, and the client retries.
//! - **Directory.** Each node writes the summaries of the games it runs to the KV bucket
//!   `GANGS_GAMES` (a new game's at once, before CreateGame answers; then at most once a
//!   second, only what changed) and follows the bucket, so `ListGames` on any node lists every
//!   game (another node's changes up to a second late). A node reads the whole bucket before
//!   it starts serving: its first answer is complete.
//! - **Turns.** Work that one node of the cluster does for everyone (sending to a webhook
//!   receiver, running a ladder) is a *turn*: a lease in `GANGS_SENDERS` under the work's name,
//!   holding the holder's URL (`turn`, `turn_holder`).
//! - **Ladders' names.** `GANGS_LADDERS` maps each ladder's name to its log and its creation
//!   (taken with `create`: a name is unique in the cluster); every node follows it, so a
//!   ladder created through one node is known to all within a second (`ladder/nodes.rs`).
//! - **Safety does not rest on the lease**: a node that lost its lease without noticing yet
//!   (paused, partitioned) can still try to append, and the stream refuses it: a node that
//!   takes a game over fences its log first (`LogStore::load_to_write`), so the old owner's
//!   appends expect a sequence the stream moved past. The log never forks and the old owner
//!   never acknowledges what the new one does not serve. The lease keeps such races rare, and
//!   a node confirms it still holds a game's lease before it rebuilds the game (after a
//!   refused append, the usual sign of a lease lost unnoticed).

mod shards;

use shards::Shards;
pub use shards::{shard_of, Holder, DEFAULT_SHARDS, MAX_SHARDS};

use crate::registry::Registry;
use crate::store::jetstream::while_jetstream_starts;
use async_nats::jetstream::{self, kv};
use gangs_proto::v1 as pb;
use gangs_proto::v1::games_client::GamesClient;
use prost::Message;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::Status;

pub use shards::{CLUSTER_BUCKET, MEMBERS_BUCKET, OWNERS_BUCKET};
pub const GAMES_BUCKET: &str = "GANGS_GAMES";
/// Turns: which node delivers to each webhook receiver, which runs each ladder (`turn`).
pub const SENDERS_BUCKET: &str = "GANGS_SENDERS";
/// Every ladder of the cluster: name -> its log and creation (`LadderName`).
pub const LADDERS_BUCKET: &str = "GANGS_LADDERS";
/// How long a dead node's games wait before another node may take them.
pub const LEASE_TTL: Duration = Duration::from_secs(5);
/// Metadata on a call one node forwards to another: it is never forwarded again, and a
/// forwarded `Watch` is not counted against the forwarding node's connection (it carries many
/// clients' streams). Its value is the cluster's forwarding mark ([`Cluster::was_forwarded`]):
/// a client that sets the header without it is any client.
pub const FORWARDED: &str = "gangs-forwarded";
/// The key of the forwarding mark in the cluster's settings bucket.
const FORWARDING_MARK_KEY: &str = "forwarding-mark";
const RENEW_EVERY: Duration = Duration::from_secs(1);
/// Summaries written to the directory at once.
const PUBLISH_AT_ONCE: usize = 32;
/// HTTP/2 windows of the connections between nodes (see `Cluster::channel`): a stream's, and
/// the whole connection's (room for 16,384 unread streams).
const PEER_STREAM_WINDOW: u32 = 64 * 1024;
const PEER_CONNECTION_WINDOW: u32 = 1 << 30;
/// How long a call forwarded to the owner node may wait for its answer (its headers, for a
/// stream) before it answers UNAVAILABLE.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(5);

/// A forwarded call's failure as the caller gets it. A failure this node's own transport
/// raised (the status has a `source`): the owner not answering within [`FORWARD_TIMEOUT`], not
/// reachable ("tcp connect error"), or breaking off the call (tonic gives a dropped connection
/// as CANCELLED) is UNAVAILABLE with what to do: clients retry it (with the same action_id or
/// create_id, so nothing applies twice), and the node may be paused or dead: its shards move
/// after the lease's life. The owner's own answers (decoded from its reply: no `source`) pass
/// through unchanged.
pub fn forward_failed(status: Status) -> Status {
    if !gangs_proto::retry::raised_here(&status) {
        return status;
    }
    let timed_out = std::iter::successors(std::error::Error::source(&status), |e| e.source())
        .any(|e| e.is::<tonic::TimeoutExpired>());
    let what = if timed_out {
        format!("did not answer within {FORWARD_TIMEOUT:?}")
    } else {
        "could not be reached or broke off the call".to_string()
    };
    Status::unavailable(format!(
        "the node running this call's game or ladder {what} ({}): retry; if that node died, another takes its work over within {LEASE_TTL:?}",
        status.message()
    ))
}

/// How long a forwarded call may wait for its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Patience {
    /// At most [`FORWARD_TIMEOUT`]: a game's calls.
    Brief,
    /// As long as the peer lives: a ladder's calls (a rerate reads every game).
    Long,
}

/// Where a game's calls go.
pub enum Route {
    /// This node runs the game.
    Local,
    /// Another node does: send the call there.
    Owner(GamesClient<Channel>),
}

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
    /// The value of [`FORWARDED`] on calls between this cluster's nodes: random, made by the
    /// first node of the cluster and kept in its settings bucket, so only a holder of the
    /// cluster's NATS credentials knows it.
    forwarding_mark: tonic::metadata::AsciiMetadataValue,
}

/// A ladder as the cluster knows it by name: its log, and its creation.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderName {
    pub log_id: String,
    pub info: pb::Ladder,
}

impl LadderName {
    /// The bucket's value: the log id (its fixed length), then the encoded creation.
    fn encode(&self) -> Vec<u8> {
        let mut value = self.log_id.clone().into_bytes();
        self.info.encode(&mut value).expect("a Vec grows");
        value
    }

    fn decode(value: &[u8]) -> Option<LadderName> {
        let (log_id, info) = value.split_at_checked(crate::store::GAME_ID_LEN)?;
        Some(LadderName {
            log_id: String::from_utf8(log_id.to_vec()).ok()?,
            info: pb::Ladder::decode(info).ok()?,
        })
    }
}

/// A ladder's key in the ladders' bucket: its name in hex (a name may hold dots where KV keys
/// may not).
fn ladder_key(name: &str) -> String {
    name.bytes().map(|b| format!("{b:02x}")).collect()
}

/// A turn's key: the SHA-256 of its name in hex (a webhook URL is no valid KV key).
fn turn_key(name: &str) -> String {
    crate::secret::sha256_hex(name)
}

fn kv_error(e: impl std::fmt::Display) -> Status {
    Status::unavailable(format!("the game directory (NATS KV) is unreachable: {e}"))
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

/// The cluster's forwarding mark: the settings bucket's, or a new random one for a new cluster.
async fn forwarding_mark(
    settings: &kv::Store,
) -> Result<tonic::metadata::AsciiMetadataValue, String> {
    let proposed = format!(
        "{:032x}{:032x}",
        rand::random::<u128>(),
        rand::random::<u128>()
    );
    let mark = setting(
        settings,
        FORWARDING_MARK_KEY,
        &proposed,
        "the cluster's forwarding mark",
    )
    .await?;
    Some(mark)
        .filter(|mark| mark.len() == 64 && mark.bytes().all(|b| b.is_ascii_hexdigit()))
        .and_then(|mark| mark.parse().ok())
        .ok_or_else(|| {
            format!("NATS: the cluster's forwarding mark in {CLUSTER_BUCKET} is not 64 hex digits")
        })
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
        .await?;
        let ladder_names =
            follow_bucket(&ladders, |entry| LadderName::decode(entry.value.as_ref())).await?;
        let forwarding_mark = forwarding_mark(&settings).await?;
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
            forwarding_mark,
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

    /// The games of `shards` the directory lists as waiting or running.
    fn unfinished_games_of(&self, shards: &[u32]) -> Vec<String> {
        let count = self.shards.count();
        let shards: std::collections::HashSet<u32> = shards.iter().copied().collect();
        self.directory
            .lock()
            .expect("directory lock")
            .values()
            .filter(|s| {
                crate::registry::is_live(s) && shards.contains(&shard_of(&s.game_id, count))
            })
            .map(|s| s.game_id.clone())
            .collect()
    }

    /// A game's summary as the cluster's directory has it (another node's game).
    pub fn summary(&self, game_id: &str) -> Option<pb::GameSummary> {
        self.directory
            .lock()
            .expect("directory lock")
            .get(game_id)
            .cloned()
    }

    /// Waits until this node is the one that sends to the webhook receiver `name` (the
    /// receiver's lease in `GANGS_SENDERS`: taken with `create`, renewed every second by
    /// revision, gone [`LEASE_TTL`] after its holder stops), or until `closing`. The answer
    /// turns true when the lease is lost (another node sends from then on); dropping it lets
    /// the lease go at once.
    pub async fn turn(
        &self,
        name: &str,
        closing: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Option<tokio::sync::watch::Receiver<bool>> {
        let key = turn_key(name);
        let revision = loop {
            if *closing.borrow() {
                return None;
            }
            if let Ok(revision) = self
                .senders
                .create(key.as_str(), self.me.clone().into())
                .await
            {
                break revision;
            }
            // Held by another node (or NATS unreachable): try again once it may have expired.
            tokio::select! {
                _ = tokio::time::sleep(RENEW_EVERY) => {}
                _ = closing.wait_for(|&closed| closed) => return None,
            }
        };
        tracing::info!(turn = name, "this node took the turn");
        let (lost, turn) = tokio::sync::watch::channel(false);
        let (senders, me) = (self.senders.clone(), self.me.clone());
        tokio::spawn(async move {
            let mut revision = revision;
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(RENEW_EVERY) => {}
                    () = lost.closed() => {
                        let _ = senders.purge_expect_revision(&key, Some(revision)).await;
                        return;
                    }
                }
                match senders.update(&key, me.clone().into(), revision).await {
                    Ok(next) => revision = next,
                    Err(e) => {
                        tracing::warn!(key = %key, "lost a turn ({e}): another node takes it");
                        lost.send_replace(true);
                        return;
                    }
                }
            }
        });
        Some(turn)
    }

    /// The URL of the node holding the turn `name` now, if any node does.
    pub async fn turn_holder(&self, name: &str) -> Result<Option<String>, Status> {
        let entry = self.senders.entry(turn_key(name)).await.map_err(kv_error)?;
        Ok(entry
            .filter(|e| e.operation == kv::Operation::Put)
            .map(|e| String::from_utf8_lossy(&e.value).into_owned()))
    }

    /// This node's gRPC URL as the others reach it.
    pub fn me(&self) -> &str {
        &self.me
    }

    /// `request` marked as a call forwarded by a node of this cluster.
    pub fn mark_forwarded<T>(&self, request: &mut tonic::Request<T>) {
        request
            .metadata_mut()
            .insert(FORWARDED, self.forwarding_mark.clone());
    }

    /// Whether a call came from another node of this cluster: it carries the cluster's
    /// forwarding mark (compared in constant time: a client may not learn it by guessing).
    pub fn was_forwarded(&self, metadata: &tonic::metadata::MetadataMap) -> bool {
        metadata.get(FORWARDED).is_some_and(|value| {
            crate::secret::constant_time_eq(value.as_bytes(), self.forwarding_mark.as_bytes())
        })
    }

    /// Every ladder of the cluster by name, as the ladders' bucket has it (a second late at
    /// most).
    pub fn ladder_names(&self) -> HashMap<String, LadderName> {
        let names = self.ladder_names.lock().expect("ladder names lock");
        names
            .values()
            .map(|l| (l.info.name.clone(), l.clone()))
            .collect()
    }

    /// The ladder `name`, asking the bucket itself when this node has not heard of it yet.
    pub async fn ladder_name(&self, name: &str) -> Result<Option<LadderName>, Status> {
        let key = ladder_key(name);
        if let Some(known) = self
            .ladder_names
            .lock()
            .expect("ladder names lock")
            .get(&key)
        {
            return Ok(Some(known.clone()));
        }
        let entry = self.ladders.entry(key).await.map_err(kv_error)?;
        Ok(entry
            .filter(|e| e.operation == kv::Operation::Put)
            .and_then(|e| LadderName::decode(&e.value)))
    }

    /// Enters a new ladder's name: false if the name is taken already (by any node).
    pub async fn add_ladder_name(&self, ladder: &LadderName) -> Result<bool, Status> {
        let key = ladder_key(&ladder.info.name);
        match self
            .ladders
            .create(key.as_str(), ladder.encode().into())
            .await
        {
            Ok(_) => {
                self.ladder_names
                    .lock()
                    .expect("ladder names lock")
                    .insert(key, ladder.clone());
                Ok(true)
            }
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(kv_error(e)),
        }
    }

    /// Where `game_id`'s calls go: here if this node holds the game's shard (the registry
    /// rebuilds the game from the stream if it is not in memory), else to the shard's holder.
    /// A shard nobody holds is taken here if this node is below its share; otherwise the call
    /// answers UNAVAILABLE until a node takes it. `forwarded`: the call came from another
    /// node, and is never sent on again.
    pub async fn route(
        &self,
        game_id: &str,
        registry: &Registry,
        forwarded: bool,
    ) -> Result<Route, Status> {
        let shard = self.shards.of(game_id);
        match self.shards.holder(shard) {
            // Held, but not renewed lately (NATS slow or unreachable, or this node was
            // paused): another node may run the game by now.
            Holder::Me if !self.shards.holds_fresh(game_id) => {}
            Holder::Me => {
                // Not running here (never loaded, unloaded, or its actor ended after a refused
                // append): before rebuilding it, check that the lease is still this node's. A
                // node refused by the stream has usually lost the lease without noticing yet;
                // rebuilding would fence the new owner's log.
                if registry.is_loaded(game_id) || self.shards.confirm(shard, registry).await? {
                    return Ok(Route::Local);
                }
            }
            Holder::Other(owner) if !forwarded => {
                let channel = self.channel(&owner, Patience::Brief)?;
                return Ok(Route::Owner(GamesClient::new(channel)));
            }
            Holder::Other(_) => {}
            Holder::Free => {
                if self.shards.take(shard, registry).await? {
                    return Ok(Route::Local);
                }
            }
        }
        Err(Status::unavailable(format!(
            "game {game_id} is changing hands between nodes (its shard {shard} is being taken over): retry"
        )))
    }

    /// Where a new game is created: here when this node holds a shard (the game gets an id of
    /// one of them), else at a node that does.
    pub fn place_new(&self) -> Result<Route, Status> {
        match self.shards.any_holder() {
            Some(Holder::Me) => Ok(Route::Local),
            Some(Holder::Other(owner)) => Ok(Route::Owner(GamesClient::new(
                self.channel(&owner, Patience::Brief)?,
            ))),
            _ => Err(Status::unavailable(
                "the cluster's nodes are still sharing out its shards: retry in a second",
            )),
        }
    }

    /// Lists a game this node just created at once (before CreateGame answers, so that every
    /// node lists it from then on).
    pub async fn list_new(&self, summary: Option<pb::GameSummary>) -> Result<(), Status> {
        if let Some(summary) = summary {
            self.write_summary(summary).await.map_err(kv_error)?;
        }
        Ok(())
    }

    /// Takes a game deleted by retention out of the cluster's directory: every node following
    /// the bucket drops it, and this node forgets what it wrote of it. A failed purge (NATS
    /// unreachable) leaves the summary listed, as the log's deletion is already done.
    pub async fn forget(&self, game_id: &str) {
        self.written.lock().expect("written lock").remove(game_id);
        self.unpublished
            .lock()
            .expect("unpublished lock")
            .retain(|s| s.game_id != game_id);
        if let Err(e) = self.games.purge(game_id).await {
            tracing::warn!(game = %game_id, "could not take a deleted game out of the cluster's directory: {e}");
        }
    }

    async fn write_summary(&self, summary: pb::GameSummary) -> Result<(), kv::PutError> {
        let value = summary.encode_to_vec();
        self.games
            .put(summary.game_id.as_str(), value.into())
            .await?;
        self.written
            .lock()
            .expect("written lock")
            .insert(summary.game_id.clone(), summary);
        Ok(())
    }

    /// The connection to the node at `url` (made once, kept) for calls answered within
    /// [`FORWARD_TIMEOUT`] (`Patience::Brief`), or for calls that may take longer (a ladder's
    /// rerate or fit) and streams (`Patience::Long`: a silent peer is still dropped by the
    /// keepalive).
    pub fn channel(&self, url: &str, patience: Patience) -> Result<Channel, Status> {
        let mut peers = self.peers.lock().expect("peers lock");
        let key = (url.to_string(), patience);
        if let Some(channel) = peers.get(&key) {
            return Ok(channel.clone());
        }
        let mut endpoint = Channel::from_shared(url.to_string())
            .map_err(|e| Status::internal(format!("bad owner address {url:?} in the lease: {e}")))?
            .connect_timeout(Duration::from_secs(2))
            // An owner that is paused or cut off still accepts TCP (the kernel answers): without
            // these, a forwarded call would wait on it forever. A silent connection is dropped,
            // breaking its streams so that watchers resume by seq.
            .http2_keep_alive_interval(Duration::from_secs(2))
            .keep_alive_timeout(Duration::from_secs(3))
            .keep_alive_while_idle(true)
            // This one connection carries every client's forwarded calls, and what a stream
            // holds unread counts against the connection's window until it is read. A client
            // that stops reading its forwarded Watch streams stops this node reading them from
            // the owner: with hyper's defaults (2 MB a stream, 5 MB the connection) a few of
            // them stalled every call between the two nodes. A small stream window and a
            // large connection window: an unread stream holds at most 64 KB, never the link.
            .initial_stream_window_size(PEER_STREAM_WINDOW)
            .initial_connection_window_size(PEER_CONNECTION_WINDOW);
        if patience == Patience::Brief {
            // A call unanswered within FORWARD_TIMEOUT (its headers, for a stream) answers
            // UNAVAILABLE (clients retry with the same action id; the lease expires meanwhile).
            endpoint = endpoint.timeout(FORWARD_TIMEOUT);
        }
        let channel = endpoint.connect_lazy();
        peers.insert(key, channel.clone());
        Ok(channel)
    }

    /// Every game: the directory's summaries, with this node's own (fresher) for the games it
    /// runs, in id order.
    pub fn list(&self, local: Vec<pb::GameSummary>) -> Vec<pb::GameSummary> {
        let mut games = self.directory.lock().expect("directory lock").clone();
        for summary in local {
            if self.shards.holds_game(&summary.game_id) || !games.contains_key(&summary.game_id) {
                games.insert(summary.game_id.clone(), summary);
            }
        }
        let mut games: Vec<_> = games.into_values().collect();
        games.sort_by(|a, b| a.game_id.cmp(&b.game_id));
        games
    }

    /// Writes the summaries that changed since the last time (the registry notes which: no
    /// scan of every game), of the games this node runs or ran last (a game finished and let
    /// go keeps its final summary here). A summary older than the directory's (another node ran
    /// the game since) is not written back.
    async fn publish(&self, registry: &Registry) {
        let changed: Vec<pb::GameSummary> = {
            let directory = self.directory.lock().expect("directory lock");
            let written = self.written.lock().expect("written lock");
            let mut changed: HashMap<String, pb::GameSummary> =
                std::mem::take(&mut *self.unpublished.lock().expect("unpublished lock"))
                    .into_iter()
                    .map(|s| (s.game_id.clone(), s))
                    .collect();
            // The registry's newer summary of a game wins over one left from a failed write.
            for summary in registry.take_changed_summaries() {
                changed.insert(summary.game_id.clone(), summary);
            }
            changed
                .into_values()
                .filter(|s| {
                    written.get(&s.game_id) != Some(s)
                        && (self.shards.holds_game(&s.game_id)
                            || directory
                                .get(&s.game_id)
                                .is_none_or(|listed| s.last_seq > listed.last_seq))
                })
                .collect()
        };
        // Many at once (a node that just created thousands of games has as many to write),
        // each a KV round trip.
        let mut writes = tokio::task::JoinSet::new();
        // A summary not written (NATS unreachable) is tried again next time.
        let note =
            |written: Option<Result<Result<pb::GameSummary, pb::GameSummary>, _>>| match written {
                Some(Ok(Ok(summary))) => {
                    self.written
                        .lock()
                        .expect("written lock")
                        .insert(summary.game_id.clone(), summary);
                }
                Some(Ok(Err(summary))) => {
                    self.unpublished
                        .lock()
                        .expect("unpublished lock")
                        .push(summary);
                }
                _ => {}
            };
        for summary in changed {
            while writes.len() >= PUBLISH_AT_ONCE {
                note(writes.join_next().await);
            }
            let games = self.games.clone();
            writes.spawn(async move {
                let value = summary.encode_to_vec();
                let put = games.put(summary.game_id.as_str(), value.into()).await;
                match put {
                    Ok(_) => Ok(summary),
                    Err(_) => Err(summary),
                }
            });
        }
        while !writes.is_empty() {
            note(writes.join_next().await);
        }
    }
}

/// Follows a bucket into a map of its decoded values (a value that does not decode is left
/// out), and returns once the map holds the whole bucket as it was when the watch started (a
/// node's first `ListGames` answer is complete).
async fn follow_bucket<T: Send + 'static>(
    bucket: &kv::Store,
    decode: fn(&kv::Entry) -> Option<T>,
) -> Result<Arc<Mutex<HashMap<String, T>>>, String> {
    let map: Arc<Mutex<HashMap<String, T>>> = Arc::new(Mutex::new(HashMap::new()));
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
            if caught_up {
                loaded.send_if_modified(|done| !std::mem::replace(done, true));
            }
        }
    });
    tokio::time::timeout(DIRECTORY_LOAD, is_loaded.wait_for(|done| *done))
        .await
        .map_err(|_| format!("NATS: the bucket {name} did not load within {DIRECTORY_LOAD:?}"))?
        .map_err(|_| format!("NATS: the watch of the bucket {name} ended"))?;
    Ok(map)
}

/// How long a node may take to read the whole directory at start.
const DIRECTORY_LOAD: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ladder_name_survives_the_bucket_and_a_bad_value_is_none() {
        let ladder = LadderName {
            log_id: crate::ladder::records::new_log_id(),
            info: pb::Ladder {
                name: "class.2026".into(),
                kind: "gang-of-four".into(),
                players: 4,
                ..Default::default()
            },
        };
        assert_eq!(LadderName::decode(&ladder.encode()), Some(ladder.clone()));
        // Too short for a log id, or a creation that does not decode.
        assert_eq!(LadderName::decode(b"ladder"), None);
        let mut bad = ladder.log_id.clone().into_bytes();
        bad.extend_from_slice(&[0xff, 0xff, 0xff]);
        assert_eq!(LadderName::decode(&bad), None);
    }

    #[test]
    fn keys_are_valid_nats_keys_whatever_the_name() {
        // KV keys allow letters, digits, '-', '_', '/', '=' and inner dots only; ladder names
        // may start or end with a dot.
        for name in [".x", "a..b", "end.", "A-b_c"] {
            let key = ladder_key(name);
            assert!(key.chars().all(|c| c.is_ascii_hexdigit()), "{key}");
            assert_ne!(ladder_key(name), ladder_key("other"));
        }
        let turn = turn_key("ladder class");
        assert_eq!(turn.len(), 64);
        assert_ne!(turn, turn_key("http://127.0.0.1:9/hooks"));
    }

    /// A call forwarded to the "node" on `port` (with the forward's `timeout`, if any), as
    /// the forwarding node's transport fails it.
    async fn forwarded_to(port: u16, timeout: Option<Duration>) -> Status {
        let mut endpoint =
            tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}")).unwrap();
        if let Some(timeout) = timeout {
            endpoint = endpoint.timeout(timeout);
        }
        GamesClient::new(endpoint.connect_lazy())
            .cancel_game(pb::CancelGameRequest::default())
            .await
            .unwrap_err()
    }

    /// A node that accepts connections and, with `keep`, holds them without a word, else
    /// drops each at once.
    async fn peer(keep: bool) -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((connection, _)) = listener.accept().await {
                if keep {
                    held.push(connection);
                }
            }
        });
        port
    }

    #[tokio::test]
    async fn an_owner_unreachable_broken_off_or_silent_is_unavailable_and_its_own_answers_pass() {
        // A port nobody listens on: the forward fails in this node's own transport.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let answered = forward_failed(forwarded_to(port, None).await);
        assert_eq!(answered.code(), tonic::Code::Unavailable);
        assert!(
            answered.message().contains("could not be reached"),
            "{answered:?}"
        );
        assert!(answered.message().contains("retry"), "{answered:?}");
        // A node that accepts the connection and drops it (it died mid-call): whatever code
        // tonic gives the broken call, the caller gets UNAVAILABLE and retries.
        let answered = forward_failed(forwarded_to(peer(false).await, None).await);
        assert_eq!(answered.code(), tonic::Code::Unavailable, "{answered:?}");
        assert!(answered.message().contains("broke off"), "{answered:?}");
        // A node that accepts and never answers: the forward's timeout.
        let silent = forwarded_to(peer(true).await, Some(Duration::from_millis(200))).await;
        let answered = forward_failed(silent);
        assert_eq!(answered.code(), tonic::Code::Unavailable, "{answered:?}");
        assert!(
            answered.message().contains("did not answer within"),
            "{answered:?}"
        );
        // The owner's own refusal (decoded from its answer: no transport error behind it) is
        // the caller's answer as it is.
        let refusal = Status::unavailable("game g is changing hands: retry");
        assert_eq!(
            forward_failed(refusal).message(),
            "game g is changing hands: retry"
        );
        let refusal = Status::not_found("no game g");
        assert_eq!(forward_failed(refusal).code(), tonic::Code::NotFound);
    }
}
