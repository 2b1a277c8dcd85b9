//! Which node runs which game: every game belongs to one of S *shards* (a stable hash of its
//! id), and each shard is run by the one node holding its lease. The cost of ownership grows
//! with the shards a node holds, not with its games (a lease per game, renewed one round trip
//! at a time, lost 29,540 of 30,000 leases on one node).
//!
//! - **The shard count** S is fixed when the cluster is first created (`--shards`, default
//!   256) and kept in the bucket `GANGS_CLUSTER`: every node, whatever its flag, uses the
//!   cluster's.
//! - **Leases.** A shard's lease is the key `shard-N` in `GANGS_OWNERS` (a memory bucket whose
//!   entries live [`LEASE_TTL`]); its value is the holder's advertised URL. Taken with `create`
//!   (refused while held), renewed every second with `update` on its revision (a node that lost
//!   it cannot renew it by mistake), all of a node's shards at once, concurrently.
//! - **Members and fair share.** Each node renews its own key in `GANGS_MEMBERS` every second;
//!   a node is a member while its key was renewed within the TTL. A node's fair share is
//!   ⌈S / members⌉: below it, it takes free shards (a dead node's, after the TTL; those another
//!   node released); above it (a node joined), it hands the excess over.
//! - **Handover.** A shard is let go cleanly (a node joined, or this node stops on SIGTERM):
//!   the node stops routing the shard's calls here, lets its games' actors finish what they
//!   have in flight, then purges the lease; the taker rebuilds the games from the stream.
//! - **Taking a shard** evicts whatever this node had of its games (stale) and loads its
//!   unfinished games from the stream (their timers run on exactly one node: the holder's).
//! - **Following.** Every node follows `GANGS_OWNERS` and `GANGS_MEMBERS` with a KV watch, and
//!   notes when it last saw each key renewed: an entry that expired (NATS sends no delete for
//!   an entry that aged out) is known by not being renewed for the TTL.
//! - **Safety does not rest on the lease** (see `cluster/mod.rs`): the stream's expected
//!   sequence refuses a stale holder's append, and a node confirms the lease before it
//!   rebuilds a game.

use super::{follow_bucket, kv_error, leases_bucket, open_bucket, setting, LEASE_TTL, RENEW_EVERY};
use crate::error::HostError;
use crate::registry::Registry;
use async_nats::jetstream::{self, kv};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const OWNERS_BUCKET: &str = "GANGS_OWNERS";
pub const MEMBERS_BUCKET: &str = "GANGS_MEMBERS";
/// The cluster's settings fixed at its creation: the shard count.
pub const CLUSTER_BUCKET: &str = "GANGS_CLUSTER";
/// Shards of a new cluster unless `--shards` says otherwise.
pub const DEFAULT_SHARDS: u32 = 256;
/// The most shards a cluster may have (each is a lease every holder renews every second).
pub const MAX_SHARDS: u32 = 4096;
/// Games of a shard just taken that are loaded at once (each reads its log from the stream).
const LOADS_AT_ONCE: usize = 16;
/// How long a handed-over shard's actors may take to finish what they have in flight.
const DRAIN_FOR: Duration = Duration::from_secs(3);

/// The shard of a game: FNV-1a (64 bits, a fixed algorithm every node and version computes
/// alike) of its id, modulo the cluster's shard count.
pub fn shard_of(game_id: &str, shards: u32) -> u32 {
    let hash = crate::registry::fnv1a_64(game_id);
    u32::try_from(hash % u64::from(shards.max(1))).expect("below a u32")
}

fn shard_key(shard: u32) -> String {
    format!("shard-{shard}")
}

/// A lease this node holds: the revision of its last renewal, and when that renewal was
/// *sent* (the entry was written after that, so it lives at least [`LEASE_TTL`] from then).
#[derive(Debug, Clone, Copy)]
struct Lease {
    revision: u64,
    renewed: Instant,
}

impl Lease {
    /// Whether no other node can have taken the shard yet: the last renewal was sent less than
    /// [`FRESH_FOR`] ago. Only then may this node answer from its memory of the shard's games.
    fn fresh(&self) -> bool {
        self.renewed.elapsed() < FRESH_FOR
    }
}

/// How long after a renewal was sent this node trusts it still holds the lease: the lease's
/// life less a margin for clocks that run at slightly different rates.
const FRESH_FOR: Duration = LEASE_TTL.saturating_sub(Duration::from_millis(1500));

/// A followed lease or member key: its value, and when this node last saw it written (an
/// entry not renewed for the TTL has expired).
#[derive(Debug, Clone)]
pub(super) struct Seen {
    value: String,
    at: Instant,
}

impl Seen {
    fn decode(entry: &kv::Entry) -> Option<Seen> {
        Some(Seen {
            value: String::from_utf8(entry.value.to_vec()).ok()?,
            at: Instant::now(),
        })
    }

    fn alive(&self) -> bool {
        self.at.elapsed() < LEASE_TTL
    }
}

/// Who holds a shard, as this node sees it.
pub enum Holder {
    /// This node.
    Me,
    /// Another node, at this URL.
    Other(String),
    /// Nobody (or a holder that stopped renewing).
    Free,
}

pub struct Shards {
    owners: kv::Store,
    members: kv::Store,
    me: String,
    member_key: String,
    count: u32,
    held: Mutex<HashMap<u32, Lease>>,
    /// Every shard lease as the owners' bucket has it, by key.
    holders: Arc<Mutex<HashMap<String, Seen>>>,
    /// Every member key as the members' bucket has it.
    known_members: Arc<Mutex<HashMap<String, Seen>>>,
    /// Holds its fair share (or all it can take): health answers SERVING.
    ready: AtomicBool,
    /// Stopping: takes nothing more.
    leaving: AtomicBool,
    /// Shards being handed over: not taken back until their leases are purged (a call for one
    /// of their games meanwhile would otherwise take the lease back by revision, as this
    /// node's own, and serve from a memory the next holder moves past).
    handing_over: Mutex<std::collections::HashSet<u32>>,
}

impl Shards {
    /// Opens the buckets, reads (or, for a new cluster, fixes) the shard count in the
    /// cluster's `settings` bucket, and follows the leases and the members.
    pub async fn open(
        js: &jetstream::Context,
        settings: &kv::Store,
        me: String,
        replicas: usize,
        wanted: u32,
    ) -> Result<Shards, String> {
        let owners = open_bucket(js, leases_bucket(OWNERS_BUCKET, replicas)).await?;
        let members = open_bucket(js, leases_bucket(MEMBERS_BUCKET, replicas)).await?;
        let count = shard_count(settings, wanted).await?;
        let holders = follow_bucket(&owners, Seen::decode).await?.values;
        let known_members = follow_bucket(&members, Seen::decode).await?.values;
        Ok(Shards {
            owners,
            members,
            member_key: crate::secret::sha256_hex(&me),
            me,
            count,
            held: Mutex::default(),
            holders,
            known_members,
            ready: AtomicBool::new(false),
            leaving: AtomicBool::new(false),
            handing_over: Mutex::default(),
        })
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    pub fn of(&self, game_id: &str) -> u32 {
        shard_of(game_id, self.count)
    }

    /// Whether this node holds the lease of `game_id`'s shard (as of its last renewal).
    pub fn holds_game(&self, game_id: &str) -> bool {
        self.holds(self.of(game_id))
    }

    fn holds(&self, shard: u32) -> bool {
        self.held.lock().expect("held lock").contains_key(&shard)
    }

    /// How many shards this node holds.
    pub fn held(&self) -> usize {
        self.held.lock().expect("held lock").len()
    }

    /// Whether this node holds its fair share, or every shard it could take.
    pub fn ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// Who holds `shard`, as of the last renewals this node saw.
    pub fn holder(&self, shard: u32) -> Holder {
        if self.holds(shard) {
            return Holder::Me;
        }
        let holders = self.holders.lock().expect("holders lock");
        match holders.get(&shard_key(shard)) {
            Some(seen) if seen.alive() && seen.value != self.me => {
                Holder::Other(seen.value.clone())
            }
            _ => Holder::Free,
        }
    }

    /// Any node holding a shard, preferring this one (where a game with a new random id may be
    /// created).
    pub fn any_holder(&self) -> Option<Holder> {
        if self.held() > 0 {
            return Some(Holder::Me);
        }
        let holders = self.holders.lock().expect("holders lock");
        let urls: Vec<&String> = holders
            .values()
            .filter(|seen| seen.alive() && seen.value != self.me)
            .map(|seen| &seen.value)
            .collect();
        (!urls.is_empty()).then(|| Holder::Other(urls[rand::random_range(0..urls.len())].clone()))
    }

    /// Live members, this node included.
    fn member_count(&self) -> usize {
        let members = self.known_members.lock().expect("members lock");
        let others = members
            .iter()
            .filter(|(key, seen)| **key != self.member_key && seen.alive())
            .count();
        others + 1
    }

    fn fair_share(&self) -> usize {
        (self.count as usize).div_ceil(self.member_count())
    }

    /// Shards nobody holds (or whose holder stopped renewing), in random order.
    fn free_shards(&self) -> Vec<u32> {
        let held = self.held.lock().expect("held lock").clone();
        let holders = self.holders.lock().expect("holders lock");
        let mut free: Vec<u32> = (0..self.count)
            .filter(|shard| !held.contains_key(shard))
            .filter(|&shard| {
                holders
                    .get(&shard_key(shard))
                    .is_none_or(|seen| !seen.alive() || seen.value == self.me)
            })
            .collect();
        // Random order: two nodes taking at once mostly try different shards.
        for i in (1..free.len()).rev() {
            free.swap(i, rand::random_range(0..=i));
        }
        free
    }

    /// Takes `shard`'s lease if nobody holds it (or this node's previous process did, under
    /// the same URL): then this node runs its games. False if another node has it.
    pub async fn take(&self, shard: u32, registry: &Registry) -> Result<bool, HostError> {
        if self.leaving.load(Ordering::Relaxed)
            || self
                .handing_over
                .lock()
                .expect("handing over lock")
                .contains(&shard)
        {
            return Ok(false);
        }
        let key = shard_key(shard);
        let sent = Instant::now();
        let taken = match self
            .owners
            .create(key.as_str(), self.me.clone().into())
            .await
        {
            Ok(revision) => Some(revision),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
                // Held: by another node, or by this node's previous process under the same URL
                // (taken over by revision).
                match self.owners.entry(key.as_str()).await.map_err(kv_error)? {
                    Some(e)
                        if e.operation == kv::Operation::Put
                            && e.value.as_ref() == self.me.as_bytes() =>
                    {
                        self.owners
                            .update(key.as_str(), self.me.clone().into(), e.revision)
                            .await
                            .ok()
                    }
                    _ => None,
                }
            }
            Err(e) => return Err(kv_error(e)),
        };
        let Some(revision) = taken else {
            return Ok(false);
        };
        let lease = Lease {
            revision,
            renewed: sent,
        };
        if self
            .held
            .lock()
            .expect("held lock")
            .insert(shard, lease)
            .is_some()
        {
            return Ok(true);
        }
        // Whatever this node had of the shard's games is stale: rebuilt from the stream.
        let count = self.count;
        registry.evict_where(|id| shard_of(id, count) == shard);
        tracing::info!(shard, "took the shard's lease");
        Ok(true)
    }

    /// Whether the lease of `shard` is still this node's, asking the bucket (before rebuilding
    /// one of its games: a node refused by the stream may have lost the lease unnoticed).
    /// Forgets the shard if not.
    pub async fn confirm(&self, shard: u32, registry: &Registry) -> Result<bool, HostError> {
        let Some(lease) = self.held.lock().expect("held lock").get(&shard).copied() else {
            return Ok(false);
        };
        let entry = self
            .owners
            .entry(shard_key(shard))
            .await
            .map_err(kv_error)?;
        let mine = entry.is_some_and(|e| {
            e.operation == kv::Operation::Put
                && e.value.as_ref() == self.me.as_bytes()
                && e.revision >= lease.revision
        });
        if !mine {
            tracing::warn!(
                shard,
                "the shard's lease is no longer this node's: not rebuilding its games here"
            );
            self.lose(shard, lease.revision, registry);
        }
        Ok(mine)
    }

    /// Forgets a shard whose lease is gone, and stops its games here (another node runs them).
    fn lose(&self, shard: u32, revision: u64, registry: &Registry) {
        let mut held = self.held.lock().expect("held lock");
        if held.get(&shard).is_some_and(|l| l.revision == revision) {
            held.remove(&shard);
            drop(held);
            let count = self.count;
            registry.evict_where(|id| shard_of(id, count) == shard);
        }
    }

    /// Renews every held lease and this node's membership every second, in a task of its own:
    /// nothing else the node does (publishing summaries, draining a handover) may delay a
    /// renewal past the lease's life. Ends when `shards` is dropped.
    pub fn keep_renewing(shards: &Arc<Shards>, registry: Registry) {
        let shards = Arc::downgrade(shards);
        tokio::spawn(async move {
            loop {
                let started = tokio::time::Instant::now();
                let Some(held) = shards.upgrade() else { return };
                held.renew(&registry).await;
                if !held.leaving.load(Ordering::Relaxed) {
                    let _ = held
                        .members
                        .put(held.member_key.as_str(), held.me.clone().into())
                        .await;
                }
                drop(held);
                tokio::time::sleep_until(started + RENEW_EVERY).await;
            }
        });
    }

    /// One round of balancing (every second): takes free shards up to the fair share, hands
    /// over any excess.
    pub async fn balance(
        &self,
        registry: &Registry,
        unfinished: &(dyn Fn(&[u32]) -> Vec<String> + Sync),
    ) {
        if self.leaving.load(Ordering::Relaxed) {
            return;
        }
        let fair = self.fair_share();
        let mut free = self.free_shards();
        let mut taken = Vec::new();
        while self.held() < fair {
            let Some(shard) = free.pop() else { break };
            match self.take(shard, registry).await {
                Ok(true) => taken.push(shard),
                Ok(false) => {}
                Err(_) => break,
            }
        }
        if !taken.is_empty() {
            self.load_games(unfinished(&taken), registry);
        }
        let held = self.held();
        if held > fair {
            let excess: Vec<u32> = {
                let held = self.held.lock().expect("held lock");
                let mut shards: Vec<u32> = held.keys().copied().collect();
                shards.sort_unstable();
                shards.into_iter().rev().take(held.len() - fair).collect()
            };
            tracing::info!(
                shards = excess.len(),
                fair,
                "handing shards over to a node that joined"
            );
            self.hand_over(&excess, registry).await;
        }
        let ready = self.holds_its_share(fair, free.is_empty());
        if self.ready.swap(ready, Ordering::Relaxed) != ready {
            tracing::info!(held = self.held(), fair, ready, "shard share");
        }
    }

    /// Whether this node holds its share (see [`holds_share`]).
    fn holds_its_share(&self, fair: usize, none_free: bool) -> bool {
        let others: Vec<usize> = {
            let holders = self.holders.lock().expect("holders lock");
            let mut by_node: HashMap<&str, usize> = HashMap::new();
            for seen in holders.values().filter(|s| s.alive() && s.value != self.me) {
                *by_node.entry(seen.value.as_str()).or_default() += 1;
            }
            by_node.into_values().collect()
        };
        holds_share(
            self.held(),
            self.count as usize / self.member_count(),
            fair,
            none_free,
            &others,
        )
    }

    /// Renews every held lease at once; a lease refused is lost (another node has it now).
    async fn renew(&self, registry: &Registry) {
        let held: Vec<(u32, Lease)> = self
            .held
            .lock()
            .expect("held lock")
            .iter()
            .map(|(s, l)| (*s, *l))
            .collect();
        let mut renewals = tokio::task::JoinSet::new();
        for (shard, lease) in held {
            let (owners, me) = (self.owners.clone(), self.me.clone());
            renewals.spawn(async move {
                let sent = Instant::now();
                let renewed = owners
                    .update(shard_key(shard), me.into(), lease.revision)
                    .await;
                (shard, lease.revision, renewed.map(|next| (next, sent)))
            });
        }
        // Shards whose renewal failed for another reason than a lost lease: said in one line
        // per round (with every shard), not one per shard, so an outage of NATS does not
        // flood the log with hundreds of lines a second.
        let mut unrenewed: Vec<u32> = Vec::new();
        let mut last_error = None;
        while let Some(done) = renewals.join_next().await {
            let Ok((shard, revision, renewed)) = done else {
                continue;
            };
            match renewed {
                Ok((next, sent)) => {
                    if let Some(lease) = self
                        .held
                        .lock()
                        .expect("held lock")
                        .get_mut(&shard)
                        .filter(|l| l.revision == revision)
                    {
                        *lease = Lease {
                            revision: next,
                            renewed: sent,
                        };
                    }
                }
                Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                    tracing::warn!(
                        shard,
                        "lost the shard's lease ({e}): no longer serving its games here"
                    );
                    self.lose(shard, revision, registry);
                }
                // NATS unreachable or slow: the lease may still be ours, tried again in a
                // second. Meanwhile the lease goes stale: its games answer UNAVAILABLE rather
                // than from a memory another node may have moved past (appends stay safe
                // either way: the stream's expected sequence refuses a stale one).
                Err(e) => {
                    unrenewed.push(shard);
                    last_error = Some(e);
                }
            }
        }
        if let Some(e) = last_error {
            unrenewed.sort_unstable();
            tracing::warn!(
                shards = ?unrenewed,
                "could not renew the lease of {} shard(s) ({e}); tried again in a second",
                unrenewed.len()
            );
        }
        // A lease not renewed for its whole life may be another node's now: its games leave
        // memory; this node takes the shard again (and rebuilds them from the stream) if it
        // is still free or still its own.
        let expired: Vec<(u32, u64)> = self
            .held
            .lock()
            .expect("held lock")
            .iter()
            .filter(|(_, lease)| lease.renewed.elapsed() >= LEASE_TTL)
            .map(|(shard, lease)| (*shard, lease.revision))
            .collect();
        for (shard, revision) in expired {
            tracing::warn!(
                shard,
                "the shard's lease was not renewed for {LEASE_TTL:?}: its games leave memory"
            );
            self.lose(shard, revision, registry);
        }
    }

    /// Whether this node holds `game_id`'s shard by a lease renewed recently enough that no
    /// other node can have taken it ([`Lease::fresh`]): an answer from this node's memory of
    /// the game (a refusal, a state) is the truth only then.
    pub fn holds_fresh(&self, game_id: &str) -> bool {
        let shard = self.of(game_id);
        self.held
            .lock()
            .expect("held lock")
            .get(&shard)
            .is_some_and(Lease::fresh)
    }

    /// Loads the unfinished games of shards just taken, a few at a time, so that their timers
    /// (clocks, fill and idle expiry) run here.
    fn load_games(&self, games: Vec<String>, registry: &Registry) {
        if games.is_empty() {
            return;
        }
        let registry = registry.clone();
        tokio::spawn(async move {
            let loads = Arc::new(tokio::sync::Semaphore::new(LOADS_AT_ONCE));
            let mut running = tokio::task::JoinSet::new();
            let count = games.len();
            for game in games {
                let Ok(permit) = loads.clone().acquire_owned().await else {
                    return;
                };
                let registry = registry.clone();
                running.spawn(async move {
                    if let Err(e) = registry.revive(&game).await {
                        tracing::warn!(game = %game, "could not load a game of a shard taken over: {e}");
                    }
                    drop(permit);
                });
                while running.try_join_next().is_some() {}
            }
            while running.join_next().await.is_some() {}
            tracing::info!(
                games = count,
                "loaded the unfinished games of the shards taken"
            );
        });
    }

    /// Lets shards go cleanly: their calls stop being served here, their actors finish what
    /// they have in flight (bounded by [`DRAIN_FOR`]), then the leases are purged for another
    /// node to take.
    async fn hand_over(&self, shards: &[u32], registry: &Registry) {
        let leases: Vec<(u32, Lease)> = {
            let mut held = self.held.lock().expect("held lock");
            let mut handing_over = self.handing_over.lock().expect("handing over lock");
            shards
                .iter()
                .filter_map(|shard| Some((*shard, held.remove(shard)?)))
                .inspect(|(shard, _)| {
                    handing_over.insert(*shard);
                })
                .collect()
        };
        let count = self.count;
        // Weak handles: holding the channels open would keep the actors alive. Once no call
        // holds a handle (each holds one until its answer, which comes once durable), no
        // command is in flight and each actor ends after its last flush.
        let actors: Vec<_> = registry
            .evict_where(|id| shards.contains(&shard_of(id, count)))
            .iter()
            .map(|actor| actor.commands.downgrade())
            .collect();
        let drained = async {
            for actor in actors {
                while actor.strong_count() > 0 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        };
        if tokio::time::timeout(DRAIN_FOR, drained).await.is_err() {
            tracing::warn!(
                "the handed-over shards' games did not finish within {DRAIN_FOR:?}: handed over anyway (the stream refuses their late appends)"
            );
        }
        let mut purges = tokio::task::JoinSet::new();
        for (shard, _) in leases {
            let (owners, me) = (self.owners.clone(), self.me.clone());
            purges.spawn(async move {
                // By the entry's revision now: a renewal in flight when the shard was handed
                // over may have moved it past the one this node last knew.
                let key = shard_key(shard);
                if let Ok(Some(entry)) = owners.entry(key.as_str()).await {
                    if entry.operation == kv::Operation::Put
                        && entry.value.as_ref() == me.as_bytes()
                    {
                        let _ = owners
                            .purge_expect_revision(key, Some(entry.revision))
                            .await;
                    }
                }
            });
        }
        while purges.join_next().await.is_some() {}
        let mut handing_over = self.handing_over.lock().expect("handing over lock");
        for shard in shards {
            handing_over.remove(shard);
        }
        drop(handing_over);
        tracing::info!(shards = shards.len(), "handed shards over");
    }

    /// This node stops (SIGTERM): takes nothing more, leaves the members, hands every shard
    /// over.
    pub async fn leave(&self, registry: &Registry) {
        self.leaving.store(true, Ordering::Relaxed);
        self.ready.store(false, Ordering::Relaxed);
        let shards: Vec<u32> = self
            .held
            .lock()
            .expect("held lock")
            .keys()
            .copied()
            .collect();
        // Out of the members first: the others count their shares without this node, and
        // take its shards as soon as they are let go.
        let _ = self.members.purge(self.member_key.as_str()).await;
        self.hand_over(&shards, registry).await;
        tracing::info!(shards = shards.len(), "left the cluster");
    }
}

/// Whether a node holding `held` shards holds its share: at least `floor` (⌊S ÷ members⌋), or
/// all it can get: no shard is free and no other node holds more than `fair` (⌈S ÷ members⌉),
/// so none will be handed over to it. Health answers SERVING only then.
fn holds_share(held: usize, floor: usize, fair: usize, none_free: bool, others: &[usize]) -> bool {
    held >= floor || (none_free && others.iter().all(|&n| n <= fair))
}

/// The cluster's shard count: the bucket's, or `wanted` for a new cluster (set once, by
/// whichever node creates the cluster first).
async fn shard_count(settings: &kv::Store, wanted: u32) -> Result<u32, String> {
    let wanted = wanted.clamp(1, MAX_SHARDS);
    let stored = setting(
        settings,
        "shards",
        &wanted.to_string(),
        "the cluster's shard count",
    )
    .await?;
    let count = stored
        .parse::<u32>()
        .ok()
        .filter(|c| (1..=MAX_SHARDS).contains(c))
        .ok_or_else(|| {
            format!(
                "NATS: the cluster's shard count in {CLUSTER_BUCKET} is not a number from 1 to {MAX_SHARDS}"
            )
        })?;
    if count != wanted {
        tracing::info!(
            shards = count,
            "the cluster has {count} shards (fixed when it was created; --shards {wanted} applies to a new cluster only)"
        );
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_keeps_its_shard_and_games_spread_over_all_shards() {
        // Fixed values: every node and version must agree on a game's shard.
        assert_eq!(shard_of("", 256), (0xcbf2_9ce4_8422_2325_u64 % 256) as u32);
        assert_eq!(shard_of("0123456789abcdef", 1), 0);
        let mut counts = vec![0_u32; 256];
        for n in 0..25_600_u64 {
            counts[shard_of(
                &format!("{:016x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                256,
            ) as usize] += 1;
        }
        // 100 per shard on average: none empty, none more than twice the mean.
        assert!(counts.iter().all(|&c| c > 40 && c < 200), "{counts:?}");
    }

    #[test]
    fn a_node_holds_its_share_at_the_floor_or_when_nothing_more_will_come() {
        // 256 shards, 3 nodes: floor 85, fair 86.
        assert!(holds_share(85, 85, 86, false, &[86, 85]));
        // A joiner with 84 while the others hold 86 each: nothing more will be handed over.
        assert!(holds_share(84, 85, 86, true, &[86, 86]));
        // A joiner while another still holds more than its share: not yet.
        assert!(!holds_share(0, 128, 128, true, &[256]));
        assert!(!holds_share(40, 85, 86, true, &[130, 86]));
        // Shards free to take: not until taken.
        assert!(!holds_share(10, 128, 128, false, &[128]));
        // Alone: every shard.
        assert!(holds_share(256, 256, 256, true, &[]));
        assert!(!holds_share(255, 256, 256, false, &[]));
    }
}
