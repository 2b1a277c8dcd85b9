//! Every game the server knows, by id: creation (idempotent by `create_id`, with invitations
//! for reserved seats), lookup, listing a page at a time, the rebuild from the log at startup,
//! and deleting the logs of games over for longer than `--retain-finished`. Each game's state
//! lives in its actor (`actor/`); this is only the directory. A finished game's actor ends
//! after a quiet spell; the game is then reloaded from the log when someone asks for it again
//! (`revive`), so memory holds the live games, not the history.
//!
//! A game whose log reads but does not replay (a record the engine refuses, an undecodable
//! record) is *damaged*: the server starts without it, lists it with the reason, shows its log
//! (`damaged_log`) and refuses to play it (`get`). A store that cannot be read at all still
//! stops the start: that is no one game's fault.

mod create;
mod damaged;

use create::CreateSlot;
pub use create::{fnv1a_64, game_id_of_create_id};
use damaged::{bounded_reason, damaged_error};

use crate::actor::{is_live, unix_ms, GameActor, GameHandle, Settings, Summaries};
use crate::error::{HostError, HostResult};
use crate::store::{ScannedGame, Store, StoreErrorKind, StoredLog, GAME_ID_LEN};
use gangs_games::game_file::{GameFile, GameFileError, Header};
use gangs_proto::quoted;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::OnceCell;

/// Games per ListGames page when the request does not say, and the most it may ask for.
pub const DEFAULT_PAGE_SIZE: usize = 100;
pub const MAX_PAGE_SIZE: usize = 1000;

/// The sizes of the directory's tables, every one of which lives as long as the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectorySizes {
    /// Games waiting or running.
    pub live: usize,
    /// Summaries: every game in the log (bounded by `--retain-finished`).
    pub known: usize,
    /// Handles: games in memory (live, and finished ones within their quiet spell), plus
    /// actors ended since the last `forget_unloaded`.
    pub handles: usize,
    /// create_ids remembered: one per game in the log created with one.
    pub create_ids: usize,
    /// Damaged games.
    pub damaged: usize,
}

#[derive(Clone)]
pub struct Registry {
    store: Store,
    games: Arc<RwLock<HashMap<String, GameHandle>>>,
    summaries: Summaries,
    settings: Settings,
    /// Games are loaded on demand only (a node of a cluster): an unknown id is looked up in
    /// the log.
    lazy: bool,
    /// create_id -> its creation.
    create_ids: Arc<Mutex<HashMap<String, Arc<CreateSlot>>>>,
    /// Damaged games (see the module doc): id -> why.
    damaged: Arc<RwLock<HashMap<String, String>>>,
    /// (creator, game id) of the live games rebuilt at startup, until the server hands them to
    /// its limits (`take_restored_creators`).
    restored_creators: Arc<Mutex<Vec<(String, String)>>>,
    /// Which new random ids this node may create games under (a node of a cluster: ids of the
    /// shards it holds); unset, any.
    placement: Arc<std::sync::OnceLock<Placement>>,
    /// Revivals of one game run one at a time (a stripe of ids per lock): on a shared log each
    /// fences the game's log, and a second actor rebuilt beside the first would leave the
    /// first with a stale sequence (its next append refused).
    revivals: Arc<Vec<tokio::sync::Mutex<()>>>,
    /// Set when the server begins to stop (`close`): no game is loaded, created or run here
    /// from then on, so no clock fires while the server goes down.
    stopping: Arc<std::sync::atomic::AtomicBool>,
}

/// Locks striping the revivals (see `Registry::revivals`).
const REVIVAL_STRIPES: usize = 64;

fn revival_locks() -> Arc<Vec<tokio::sync::Mutex<()>>> {
    Arc::new((0..REVIVAL_STRIPES).map(|_| Default::default()).collect())
}

/// Whether a new game may take an id here (see `Registry::place_new_games`).
type Placement = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// What ListGames asks for.
#[derive(Debug, Default, Clone)]
pub struct ListQuery {
    pub page_size: u32,
    pub page_token: String,
    pub kind: String,
    pub status: Option<pb::GameStatus>,
    pub created_after_unix_ms: Option<i64>,
    pub created_before_unix_ms: Option<i64>,
    pub damaged_only: bool,
}

impl Registry {
    /// An empty directory: games are loaded from the log when asked for (a node of a cluster,
    /// where running every game of the shared log on every node would make them race).
    pub fn lazy(store: Store, settings: Settings) -> Registry {
        Registry {
            store,
            games: Arc::default(),
            summaries: Arc::default(),
            settings,
            lazy: true,
            create_ids: Arc::default(),
            damaged: Arc::default(),
            restored_creators: Arc::default(),
            placement: Arc::default(),
            revivals: revival_locks(),
            stopping: Arc::default(),
        }
    }

    /// Games created here with a new random id get one that `here` accepts (a node of a
    /// cluster: an id of a shard it holds, so that it runs the game). Set once.
    pub fn place_new_games(&self, here: impl Fn(&str) -> bool + Send + Sync + 'static) {
        let _ = self.placement.set(Box::new(here));
    }

    /// A new random game id, one this node may run (see [`Registry::place_new_games`]). After
    /// many misses (the node lost its shards meanwhile) any id: the game's actor then runs
    /// here until the shard's holder takes the game over, and the stream keeps its log whole.
    fn new_id(&self) -> String {
        let Some(here) = self.placement.get() else {
            return create::new_game_id();
        };
        (0..4096)
            .map(|_| create::new_game_id())
            .find(|id| here(id))
            .unwrap_or_else(create::new_game_id)
    }

    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// Forgets a game's actor (it ends after answering what it has pending): another node runs
    /// the game now, or is about to, and this node's state of it may be stale.
    pub fn evict(&self, id: &str) {
        self.games.write().expect("games lock").remove(id);
    }

    /// Forgets the actors of every game whose id passes `which` (a shard another node runs
    /// now), and answers their handles: each actor ends once it has answered what it has in
    /// flight (`commands.closed()` tells when).
    pub fn evict_where(&self, which: impl Fn(&str) -> bool) -> Vec<GameHandle> {
        let mut games = self.games.write().expect("games lock");
        let ids: Vec<String> = games.keys().filter(|id| which(id)).cloned().collect();
        ids.iter().filter_map(|id| games.remove(id)).collect()
    }

    /// Whether the game's actor runs here now.
    pub fn is_loaded(&self, id: &str) -> bool {
        self.live(id).is_some()
    }

    /// Rebuilds every game of the log before the server takes calls.
    pub async fn restore(store: Store, settings: Settings) -> HostResult<Registry> {
        let registry = Registry {
            store: store.clone(),
            games: Arc::default(),
            summaries: Arc::default(),
            settings,
            lazy: false,
            create_ids: Arc::default(),
            damaged: Arc::default(),
            restored_creators: Arc::default(),
            placement: Arc::default(),
            revivals: revival_locks(),
            stopping: Arc::default(),
        };
        // Game by game as the store reads them (a few read ahead): memory holds a few logs at
        // a time, not the whole log.
        let mut scan = crate::store::scan(&store);
        let (mut count, mut running, mut records_read) = (0, 0, 0);
        let rebuilding = std::time::Instant::now();
        let mut unspawned = Vec::new();
        while let Some(batch) = scan.recv().await {
            for scanned in batch.map_err(|e| HostError::Storage(e.message))? {
                let ScannedGame { id, log, damaged } = scanned;
                count += 1;
                if let Some(reason) = damaged {
                    // The store said so once, for every game its damage cost (one ERROR).
                    let records = log.map(|log| log.decoded(&id)).unwrap_or_default();
                    registry.list_damaged(&id, &records, &reason);
                    continue;
                }
                let log = match log {
                    Ok(log) => log,
                    Err(e) if e.kind == StoreErrorKind::Corrupt => {
                        registry.mark_damaged(&id, &[], &e.message);
                        continue;
                    }
                    Err(e) => return Err(HostError::Storage(e.message)),
                };
                records_read += log.len();
                let actor = match registry.rebuild(&id, log) {
                    Ok(actor) => actor,
                    Err(e) => {
                        registry.damage(&id, e.message()).await?;
                        continue;
                    }
                };
                registry.remember_create_id(&id, actor.created());
                // A finished game is listed (its summary), and loaded only when asked for: no
                // handle in the directory until then.
                if actor.is_settled() {
                    continue;
                }
                running += 1;
                // Not settled after a rebuild: not over, so live; its creator counts it again.
                let creator = &actor.created().creator;
                if !creator.is_empty() {
                    let mut restored = registry.restored_creators.lock().expect("creators lock");
                    restored.push((creator.clone(), id.clone()));
                }
                unspawned.push((id, actor));
            }
        }
        // Spawned once every game is rebuilt: spawned as each was, every actor's first run
        // woke a parked runtime worker that parked again (a wake-up per game).
        {
            let mut games = registry.games.write().expect("games lock");
            for (id, actor) in unspawned {
                games.insert(id, actor.spawn());
            }
        }
        let damaged = registry.damaged.read().expect("damaged lock").len();
        tracing::info!(
            games = count,
            running,
            damaged,
            records = records_read,
            ms = rebuilding.elapsed().as_millis() as u64,
            "rebuilt the games from the log"
        );
        Ok(registry)
    }

    /// The creators of the live games rebuilt at startup, as (creator, game id), once: the
    /// server counts them against the per-client limits (`Limits::restore_games`).
    pub fn take_restored_creators(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *self.restored_creators.lock().expect("creators lock"))
    }

    pub fn get(&self, id: &str) -> HostResult<GameHandle> {
        if id.is_empty() {
            return Err(HostError::Invalid("game_id is required".into()));
        }
        self.refuse_when_stopping()?;
        if let Some(reason) = self.damage_reason(id) {
            return Err(damaged_error(id, &reason));
        }
        if let Some(handle) = self.games.read().expect("games lock").get(id) {
            return Ok(handle.clone());
        }
        // Listed but not loaded (a game over, on disk only): a closed handle, which makes the
        // caller reload it from the log (`revive`).
        if self
            .summaries
            .lock()
            .expect("summaries lock")
            .contains_key(id)
        {
            return Ok(GameHandle::unloaded());
        }
        Err(not_found(id))
    }

    /// Forgets the handles of actors that ended (finished games unloaded after their quiet
    /// spell, actors stopped by a storage failure): the directory holds the games in memory,
    /// the summaries every game. Run every few seconds; a game asked for again is reloaded.
    pub fn forget_unloaded(&self) {
        (self.unloaded_forgetter())()
    }

    /// [`Registry::forget_unloaded`] for a periodic task: holds the directory, not the store
    /// (the store must close at shutdown).
    pub fn unloaded_forgetter(&self) -> impl Fn() + Send + Sync + 'static {
        let games = self.games.clone();
        move || {
            games
                .write()
                .expect("games lock")
                .retain(|_, handle| !handle.commands.is_closed())
        }
    }

    /// What the metrics sampler reads of the directory, holding no store (the store must close
    /// at shutdown): see [`DirectorySizes`].
    pub fn sizes_reader(&self) -> impl Fn() -> DirectorySizes + Send + Sync + 'static {
        let (games, summaries) = (self.games.clone(), self.summaries.clone());
        let (create_ids, damaged) = (self.create_ids.clone(), self.damaged.clone());
        move || {
            let summaries = summaries.lock().expect("summaries lock");
            DirectorySizes {
                live: summaries.live(),
                known: summaries.len(),
                handles: games.read().expect("games lock").len(),
                create_ids: create_ids.lock().expect("create ids lock").len(),
                damaged: damaged.read().expect("damaged lock").len(),
            }
        }
    }

    /// Whether a game is live, from the summaries only (for tasks that must not hold the store).
    pub fn liveness(&self) -> impl Fn(&str) -> bool + Send + Sync + 'static {
        let summaries = self.summaries.clone();
        move |id| {
            summaries
                .lock()
                .expect("summaries lock")
                .get(id)
                .is_some_and(is_live)
        }
    }

    /// The game's actor again after the one in the directory ended (a finished game unloaded
    /// after a quiet spell), or first loaded (a node of a cluster): rebuilt from the log.
    /// Concurrent revivals of one game wait for the first, and get its actor.
    pub async fn revive(&self, id: &str) -> HostResult<GameHandle> {
        self.refuse_when_stopping()?;
        if let Some(handle) = self.live(id) {
            return Ok(handle);
        }
        let stripe = id
            .bytes()
            .fold(0_usize, |h, b| h.wrapping_mul(31) + usize::from(b));
        let _one_at_a_time = self.revivals[stripe % REVIVAL_STRIPES].lock().await;
        if let Some(handle) = self.live(id) {
            return Ok(handle);
        }
        if let Some(reason) = self.damage_reason(id) {
            return Err(damaged_error(id, &reason));
        }
        // Loaded to run: on a shared log, appends prepared by an earlier owner of the game (a
        // paused node, this node's previous actor) are refused from now on.
        let records = match self.store.load_to_write(id).await {
            Ok(records) => records,
            Err(e) if e.kind == StoreErrorKind::Corrupt => {
                self.mark_damaged(id, &[], &e.message);
                return Err(damaged_error(id, &bounded_reason(&e.message)));
            }
            // The store cannot be read now (an outage, another node writing the game): the
            // caller may retry.
            Err(e) => return Err(HostError::Storage(format!("reloading game {id}: {e}"))),
        };
        if records.is_empty() {
            return Err(not_found(id));
        }
        let handle = match self.rebuild(id, StoredLog::Decoded(records)) {
            Ok(actor) => actor.spawn(),
            Err(e) => {
                self.damage(id, e.message()).await?;
                return Err(damaged_error(id, &bounded_reason(e.message())));
            }
        };
        let mut games = self.games.write().expect("games lock");
        match games.get(id) {
            Some(other) if !other.commands.is_closed() => Ok(other.clone()),
            _ => {
                games.insert(id.to_string(), handle.clone());
                Ok(handle)
            }
        }
    }

    /// A game's actor rebuilt from its log (listed, not yet running).
    fn rebuild(&self, id: &str, log: StoredLog) -> HostResult<GameActor> {
        GameActor::rebuild(
            id.to_string(),
            self.store.clone(),
            self.summaries.clone(),
            self.settings,
            log,
        )
    }

    fn live(&self, id: &str) -> Option<GameHandle> {
        self.games
            .read()
            .expect("games lock")
            .get(id)
            .filter(|h| !h.commands.is_closed())
            .cloned()
    }

    /// Games whose actor is in memory now (finished games unloaded are not counted).
    pub fn loaded_games(&self) -> usize {
        self.games
            .read()
            .expect("games lock")
            .values()
            .filter(|h| !h.commands.is_closed())
            .count()
    }

    /// One page of this node's games that pass the query's filters: see [`page`].
    pub fn list(&self, query: &ListQuery) -> HostResult<(Vec<pb::GameSummary>, String)> {
        page(self.summaries(), query)
    }

    /// One game's summary, if this node knows the game.
    pub fn summary(&self, id: &str) -> Option<pb::GameSummary> {
        self.summaries
            .lock()
            .expect("summaries lock")
            .get(id)
            .cloned()
    }

    /// The log (the directory feed's reader needs it).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// From now on the registry notes which summaries change, for `take_changed_summaries`
    /// (a node of a cluster publishes only those).
    pub fn track_summary_changes(&self) {
        self.summaries
            .lock()
            .expect("summaries lock")
            .track_changes();
    }

    /// The summaries that changed since the last call (after `track_summary_changes`).
    pub fn take_changed_summaries(&self) -> Vec<pb::GameSummary> {
        self.summaries
            .lock()
            .expect("summaries lock")
            .take_changed()
    }

    /// The summary of every game this node knows, in no order.
    pub fn summaries(&self) -> Vec<pb::GameSummary> {
        let summaries = self.summaries.lock().expect("summaries lock");
        summaries.values().cloned().collect()
    }

    /// Deletes the logs of the games over (finished, cancelled, abandoned) for longer than
    /// `retain`, and forgets them; answers which it forgot (a cluster node takes them out of
    /// the cluster's directory too). A log the store fails to delete is logged and left on
    /// disk; the game is forgotten all the same, as before the failure.
    pub async fn delete_over_before(&self, retain: Duration) -> Vec<String> {
        let cutoff =
            unix_ms().saturating_sub(i64::try_from(retain.as_millis()).unwrap_or(i64::MAX));
        let old: Vec<String> = self
            .summaries
            .lock()
            .expect("summaries lock")
            .values()
            .filter(|g| g.finished_unix_ms.is_some_and(|t| t < cutoff))
            .map(|g| g.game_id.clone())
            .collect();
        for batch in old.chunks(DELETE_BATCH) {
            // Out of the directory first: a request from now on answers NOT_FOUND. One lock
            // at a time, as everywhere else (never one taken while holding another).
            {
                let mut games = self.games.write().expect("games lock");
                for id in batch {
                    games.remove(id);
                }
            }
            {
                let mut summaries = self.summaries.lock().expect("summaries lock");
                for id in batch {
                    summaries.remove(id);
                }
            }
            let ids: std::collections::HashSet<&String> = batch.iter().collect();
            self.create_ids
                .lock()
                .expect("create ids lock")
                .retain(|_, slot| !ids.contains(&slot.game_id));
            for (id, result) in batch.iter().zip(self.store.delete_games(batch).await) {
                match result {
                    Ok(()) => {
                        tracing::info!(game = %id, "deleted the log of a game over for longer than --retain-finished")
                    }
                    Err(e) => {
                        tracing::error!(game = %id, "could not delete the log of a game over for longer than --retain-finished: {e}")
                    }
                }
            }
        }
        old
    }

    /// Whether `game_id` is waiting or running here.
    pub fn is_live(&self, game_id: &str) -> bool {
        let summaries = self.summaries.lock().expect("summaries lock");
        summaries.get(game_id).is_some_and(is_live)
    }

    /// How many games are waiting or running here.
    pub fn live_games(&self) -> usize {
        (self.live_games_counter())()
    }

    /// Counts the games not finished (waiting for seats or running), for the metrics sampler.
    /// It holds only the summaries, never the store: the store must close at shutdown.
    pub fn live_games_counter(&self) -> impl Fn() -> usize + Send + 'static {
        let summaries = self.summaries.clone();
        move || summaries.lock().expect("summaries lock").live()
    }

    /// Stops every actor (they finish their pending flushes first).
    ///
    /// Every actor stops at once (`Command::Stop`): its clocks fire no more, its streams end
    /// with UNAVAILABLE, and it ends once its flushes in flight are durable and answered. The
    /// time the server is down is the host's: the next start resumes every clock with the
    /// reconnect grace. Calls from here on are refused with UNAVAILABLE (never a game loaded
    /// again from the log, whose clocks would run while the server goes down).
    pub fn close(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let handles: Vec<GameHandle> = {
            let mut games = self.games.write().expect("games lock");
            games.drain().map(|(_, handle)| handle).collect()
        };
        for handle in handles {
            handle.stop();
        }
    }

    /// Whether the server is stopping (`close` was called).
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn refuse_when_stopping(&self) -> HostResult<()> {
        match self.is_stopping() {
            true => Err(crate::actor::stopping_error()),
            false => Ok(()),
        }
    }
}

/// `created_unix_ms.game_id` of the last game of the previous page.
fn parse_page_token(token: &str) -> HostResult<Option<(i64, String)>> {
    if token.is_empty() {
        return Ok(None);
    }
    token
        .split_once('.')
        .and_then(|(t, id)| Some((t.parse().ok()?, id.to_string())))
        .filter(|(_, id)| id.len() == GAME_ID_LEN)
        .map(Some)
        .ok_or_else(|| {
            HostError::Invalid(format!(
                "page_token {} is not one ListGames returned: send the previous answer's next_page_token, or none for the first page",
                quoted(token)
            ))
        })
}

/// Games whose logs retention deletes at once (`LogStore::delete_games`: one sled checkpoint
/// for them all). Bounded, so that a backlog of thousands (a server down past the retention)
/// holds the directory's locks and the store's flusher a short while at a time.
const DELETE_BATCH: usize = 256;

fn not_found(id: &str) -> HostError {
    HostError::NotFound(format!(
        "no game {}: `gangs games` lists the games",
        gangs_proto::quoted(id)
    ))
}

/// One page of `games` that pass the query's filters, oldest first (then by id), and the token
/// of the next page (empty after the last).
pub fn page(
    games: Vec<pb::GameSummary>,
    query: &ListQuery,
) -> HostResult<(Vec<pb::GameSummary>, String)> {
    let page_size = match query.page_size as usize {
        0 => DEFAULT_PAGE_SIZE,
        n => n.min(MAX_PAGE_SIZE),
    };
    let after = parse_page_token(&query.page_token)?;
    let mut games: Vec<_> = games
        .into_iter()
        .filter(|g| query.kind.is_empty() || g.kind == query.kind)
        .filter(|g| query.status.is_none_or(|s| g.status == s as i32))
        .filter(|g| !query.damaged_only || g.damaged)
        .filter(|g| {
            query
                .created_after_unix_ms
                .is_none_or(|t| g.created_unix_ms >= t)
        })
        .filter(|g| {
            query
                .created_before_unix_ms
                .is_none_or(|t| g.created_unix_ms < t)
        })
        .filter(|g| {
            after
                .as_ref()
                .is_none_or(|(t, id)| (g.created_unix_ms, &g.game_id) > (*t, id))
        })
        .collect();
    games.sort_by(|a, b| (a.created_unix_ms, &a.game_id).cmp(&(b.created_unix_ms, &b.game_id)));
    let next = if games.len() > page_size {
        games.truncate(page_size);
        let last = games.last().expect("a full page");
        format!("{}.{}", last.created_unix_ms, last.game_id)
    } else {
        String::new()
    };
    Ok((games, next))
}
