//! Several gangs nodes on one JetStream log: which node runs which game, and forwarding a call
//! to it. Only with `--store nats://…`; a sled server is a cluster of one and never gets here.
//!
//! - **Leases.** The node that runs a game's actor holds the game's key in the KV bucket
//!   `GANGS_OWNERS`; the value is its advertised gRPC URL (`--advertise`). It is taken with
//!   `create` (refused while someone holds it), renewed every second with `update` on its
//!   revision (compare-and-set: a node that lost it cannot renew it by mistake), and vanishes
//!   [`LEASE_TTL`] after its holder stopped renewing (the bucket's max age).
//! - **Forwarding.** A call for a game leased by another node is sent to that node over gRPC,
//!   unchanged (Watch and GetLog streams are piped through, so the owner's seq guarantees hold).
//!   If the owner is gone, the call answers `UNAVAILABLE`; clients retry, and once the lease has
//!   expired the node they reach takes it, rebuilds the game from the stream (timers re-armed
//!   from the log) and serves it. A watcher whose stream broke resumes by seq the same way.
//! - **Directory.** Each node writes the summaries of the games it runs to the KV bucket
//!   `GANGS_GAMES` (at most once a second, only what changed) and follows the bucket, so
//!   `ListGames` on any node lists every game (another node's games up to a second late).
//! - **Safety does not rest on the lease**: a node that lost its lease without noticing yet
//!   (paused, partitioned) can still try to append, and the stream's expected-sequence check
//!   refuses it; the log never forks. The lease only keeps such races rare.

use crate::registry::Registry;
use async_nats::jetstream::{self, kv};
use gangs_proto::v1 as pb;
use gangs_proto::v1::games_client::GamesClient;
use prost::Message;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::Status;

pub const OWNERS_BUCKET: &str = "GANGS_OWNERS";
pub const GAMES_BUCKET: &str = "GANGS_GAMES";
/// How long a dead node's games wait before another node may take them.
pub const LEASE_TTL: Duration = Duration::from_secs(5);
const RENEW_EVERY: Duration = Duration::from_secs(1);
/// How long a call forwarded to the owner node may wait for its answer (its headers, for a
/// stream) before it answers UNAVAILABLE.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a game's calls go.
pub enum Route {
    /// This node runs the game.
    Local,
    /// Another node does: send the call there.
    Owner(GamesClient<Channel>),
}

#[derive(Clone, Copy)]
struct Lease {
    revision: u64,
    taken: Instant,
}

pub struct Cluster {
    owners: kv::Store,
    /// This node's gRPC URL as other nodes reach it.
    me: String,
    /// Games this node holds the lease of: the lease's revision, and when this node took it.
    owned: Mutex<HashMap<String, Lease>>,
    peers: Mutex<HashMap<String, GamesClient<Channel>>>,
    games: kv::Store,
    /// Every game's summary as the directory bucket has it (followed by a KV watch).
    directory: Arc<Mutex<HashMap<String, pb::GameSummary>>>,
    /// What this node last wrote to the directory, to write only changes.
    written: Mutex<HashMap<String, pb::GameSummary>>,
}

fn kv_error(e: impl std::fmt::Display) -> Status {
    Status::unavailable(format!("the game directory (NATS KV) is unreachable: {e}"))
}

/// Opens (or creates) a KV bucket, retrying while JetStream starts.
async fn open_bucket(js: &jetstream::Context, config: kv::Config) -> Result<kv::Store, String> {
    crate::store::jetstream::while_jetstream_starts(&config.bucket, || {
        js.create_or_update_key_value(config.clone())
    })
    .await
    .map_err(|e| format!("NATS: cannot open the bucket {}: {e}", config.bucket))
}

impl Cluster {
    /// Opens (or creates) the lease bucket and starts renewing this node's leases.
    pub async fn start(
        js: &jetstream::Context,
        me: String,
        replicas: usize,
        registry: Registry,
    ) -> Result<Arc<Cluster>, String> {
        let owners = open_bucket(
            js,
            kv::Config {
                bucket: OWNERS_BUCKET.to_string(),
                history: 1,
                max_age: LEASE_TTL,
                storage: jetstream::stream::StorageType::Memory,
                num_replicas: replicas.max(1),
                ..Default::default()
            },
        )
        .await?;
        let games = open_bucket(
            js,
            kv::Config {
                bucket: GAMES_BUCKET.to_string(),
                history: 1,
                storage: jetstream::stream::StorageType::File,
                num_replicas: replicas.max(1),
                ..Default::default()
            },
        )
        .await?;
        let directory: Arc<Mutex<HashMap<String, pb::GameSummary>>> = Arc::default();
        let mut updates = games
            .watch_all()
            .await
            .map_err(|e| format!("NATS: cannot follow the directory bucket: {e}"))?;
        let following = directory.clone();
        tokio::spawn(async move {
            while let Some(entry) = updates.next().await {
                let Ok(entry) = entry else { continue };
                let mut directory = following.lock().expect("directory lock");
                match entry.operation {
                    kv::Operation::Put => {
                        if let Ok(summary) = pb::GameSummary::decode(entry.value.as_ref()) {
                            directory.insert(entry.key, summary);
                        }
                    }
                    _ => {
                        directory.remove(&entry.key);
                    }
                }
            }
        });
        let cluster = Arc::new(Cluster {
            owners,
            me,
            owned: Mutex::default(),
            peers: Mutex::default(),
            games,
            directory,
            written: Mutex::default(),
        });
        let renewing = Arc::downgrade(&cluster);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RENEW_EVERY).await;
                let Some(cluster) = renewing.upgrade() else {
                    return;
                };
                cluster.renew(&registry).await;
                cluster.publish(&registry).await;
            }
        });
        Ok(cluster)
    }

    /// Where `game_id`'s calls go; takes the lease when nobody holds it (the caller then serves
    /// the game from the registry, which rebuilds it from the stream).
    pub async fn route(&self, game_id: &str, registry: &Registry) -> Result<Route, Status> {
        for _ in 0..3 {
            if self.owned.lock().expect("owned lock").contains_key(game_id) {
                return Ok(Route::Local);
            }
            let held = self.owners.entry(game_id).await.map_err(kv_error)?;
            let taken = match held {
                Some(entry) if entry.operation == kv::Operation::Put => {
                    let owner = String::from_utf8_lossy(&entry.value).into_owned();
                    if owner != self.me {
                        return Ok(Route::Owner(self.peer(&owner)?));
                    }
                    // Our own address from an earlier process on it: take it over by revision.
                    self.owners
                        .update(game_id, self.me.clone().into(), entry.revision)
                        .await
                        .ok()
                }
                _ => self
                    .owners
                    .create(game_id, self.me.clone().into())
                    .await
                    .ok(),
            };
            if let Some(revision) = taken {
                // Whatever this node held of the game before is stale: rebuild from the stream.
                registry.evict(game_id);
                self.hold(game_id, revision);
                tracing::info!(game = game_id, "took the game's lease");
                return Ok(Route::Local);
            }
        }
        Err(Status::unavailable(format!(
            "game {game_id} is changing hands between nodes: retry"
        )))
    }

    /// Takes the lease of a game this node just created (no one else knows its id yet).
    pub async fn claim_new(&self, game_id: &str) -> Result<(), Status> {
        let revision = self
            .owners
            .create(game_id, self.me.clone().into())
            .await
            .map_err(kv_error)?;
        self.hold(game_id, revision);
        Ok(())
    }

    fn hold(&self, game_id: &str, revision: u64) {
        let lease = Lease {
            revision,
            taken: Instant::now(),
        };
        self.owned
            .lock()
            .expect("owned lock")
            .insert(game_id.to_string(), lease);
    }

    fn peer(&self, url: &str) -> Result<GamesClient<Channel>, Status> {
        let mut peers = self.peers.lock().expect("peers lock");
        if let Some(client) = peers.get(url) {
            return Ok(client.clone());
        }
        let channel = Channel::from_shared(url.to_string())
            .map_err(|e| Status::internal(format!("bad owner address {url:?} in the lease: {e}")))?
            .connect_timeout(Duration::from_secs(2))
            // An owner that is paused or cut off still accepts TCP (the kernel answers): without
            // these, a forwarded call would wait on it forever. A call unanswered within
            // FORWARD_TIMEOUT answers UNAVAILABLE (clients retry with the same action id; the
            // lease expires meanwhile), and a silent connection is dropped, breaking its streams
            // so that watchers resume by seq.
            .timeout(FORWARD_TIMEOUT)
            .http2_keep_alive_interval(Duration::from_secs(2))
            .keep_alive_timeout(Duration::from_secs(3))
            .keep_alive_while_idle(true)
            .connect_lazy();
        let client = GamesClient::new(channel);
        peers.insert(url.to_string(), client.clone());
        Ok(client)
    }

    /// Every game: the directory's summaries, with this node's own (fresher) for the games it
    /// runs, in id order.
    pub fn list(&self, local: Vec<pb::GameSummary>) -> Vec<pb::GameSummary> {
        let mut games = self.directory.lock().expect("directory lock").clone();
        let owned = self.owned.lock().expect("owned lock");
        for summary in local {
            if owned.contains_key(&summary.game_id) || !games.contains_key(&summary.game_id) {
                games.insert(summary.game_id.clone(), summary);
            }
        }
        let mut games: Vec<_> = games.into_values().collect();
        games.sort_by(|a, b| a.game_id.cmp(&b.game_id));
        games
    }

    /// Writes the summaries of the games this node runs that changed since the last time.
    async fn publish(&self, registry: &Registry) {
        let owned: Vec<String> = self
            .owned
            .lock()
            .expect("owned lock")
            .keys()
            .cloned()
            .collect();
        let changed: Vec<pb::GameSummary> = {
            let written = self.written.lock().expect("written lock");
            registry
                .summaries()
                .into_iter()
                .filter(|s| owned.contains(&s.game_id) && written.get(&s.game_id) != Some(s))
                .collect()
        };
        for summary in changed {
            let value = summary.encode_to_vec();
            if self
                .games
                .put(summary.game_id.as_str(), value.into())
                .await
                .is_ok()
            {
                self.written
                    .lock()
                    .expect("written lock")
                    .insert(summary.game_id.clone(), summary);
            }
        }
    }

    /// Renews every lease this node holds; lets go of finished games that left memory, and
    /// stops serving a game whose lease was lost (another node has it now).
    async fn renew(&self, registry: &Registry) {
        let owned: Vec<(String, Lease)> = self
            .owned
            .lock()
            .expect("owned lock")
            .iter()
            .map(|(g, l)| (g.clone(), *l))
            .collect();
        for (game_id, lease) in owned {
            let revision = lease.revision;
            // A lease just taken may not have its game loaded yet: keep it a while regardless.
            if !registry.is_loaded(&game_id) && lease.taken.elapsed() > LEASE_TTL {
                // Unloaded (a finished game after its quiet spell): any node may load it again.
                let _ = self
                    .owners
                    .purge_expect_revision(&game_id, Some(revision))
                    .await;
                self.owned.lock().expect("owned lock").remove(&game_id);
                continue;
            }
            match self
                .owners
                .update(&game_id, self.me.clone().into(), revision)
                .await
            {
                Ok(next) => {
                    tracing::debug!(game = %game_id, revision, next, "renewed the game's lease");
                    if let Some(held) = self.owned.lock().expect("owned lock").get_mut(&game_id) {
                        held.revision = next;
                    }
                }
                Err(e) => {
                    tracing::warn!(game = %game_id, "lost the game's lease ({e}): no longer serving it here");
                    self.owned.lock().expect("owned lock").remove(&game_id);
                    registry.evict(&game_id);
                }
            }
        }
    }
}
