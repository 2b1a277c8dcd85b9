//! The embedded log (the default store): the one place that talks to sled.
//!
//! Layout: a tree per namespace (`store/mod.rs`), `log` for the games and `ladders` for the
//! ladders' logs, each keyed by `id (16 bytes) ++ seq (u64 big-endian)`, valued by a chunk of
//! the log's records from that seq, or by one encoded `LogRecord` (`chunks.rs`). A restart scans
//! the games' tree once and rebuilds every game. The directory feed (`store/mod.rs`) is the
//! tree `directory`, keyed by position (u64 big-endian), valued by `log name ++ seq`, indexed by
//! log in `directory_by_game` (`log name ++ position`). A *log name* ([`log_name`]) is what the
//! flusher, the journal, `pending`, the feed and the tree `damaged` know a log by: a game's id
//! as it is, a ladder's log id after `ladders/`. The feed's readers save their positions in the
//! tree `marks` (name -> u64 big-endian).
//!
//! Why trees and not a prefix in one tree: each namespace is listed, scanned and deleted from
//! on its own (the restart's scan reads no ladder's log), and the per-log checks below (the
//! sequence rule, a failed game refused until reloaded, the journal's damage) need nothing but
//! a distinct name per log, which the log name gives across namespaces.
//!
//! Data dirs written before namespaces kept the ladders' logs in `log` among the games (ids
//! starting with `ladder`) and named them by their bare ids in the journal and the other trees.
//! Opening such a data dir moves them, once ([`move_legacy_ladders`]); the key `layout` of
//! sled's default tree says it was done.
//!
//! Durability uses group commit: appends go over a channel to one dedicated OS thread (never a
//! tokio worker) that writes everything that arrived meanwhile to the journal (`journal.rs`)
//! with one `fdatasync`, hands the records to the readers (`pending`) and the feed entries to
//! sled, then tells each appender its records are durable. One sync thus serves every action
//! of every game that arrived during the previous one. sled gets the records, and is flushed,
//! at checkpoints (every 4 MB of journal, before a game is deleted, at shutdown); a store
//! opened after a crash reads the journal's batches back into `pending`.
//!
//! The flusher keeps the log's sequence rule itself (`Trees::check_sequence`): an append whose
//! first seq is not its game's last durable seq + 1 is refused and never written, and after a
//! failed write a game's appends are refused until it is reloaded (`Job::Reload`, sent by
//! `load_to_write` through the same channel, so it follows every append made before it). A
//! journal damaged in the middle costs the games that had records there, listed as damaged
//! (the tree `damaged`), and no other (`journal_damage.rs`).

use super::chunks::{self, Pending};
use super::journal::{Journal, JournaledAppend};
use super::journal_damage::{self, OnJournalDamage};
use super::{
    decode_record, Durable, EncodedRecord, FeedEntry, GameScan, LogStore, Logs, Namespace,
    RecordBytes, ScannedGame, StoreCloser, StoreError, StoredLog, GAME_ID_LEN, SCAN_AHEAD,
    SCAN_BATCH,
};
use gangs_proto::v1 as pb;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::oneshot;

mod flusher;
mod keys;
mod modules;
mod open;

use flusher::{flusher, last_stored_seq, Trees};
use keys::{game_id_of, log_key, read_error, seq_of, u64_of};

/// Most appends folded into one flush; bounds the latency of the first appender in a batch.
const MAX_BATCH: usize = 4096;

/// What the flusher thread is asked to do.
enum Job {
    Append(Append),
    /// Flush sled and start the journal over (before a deletion: a journal replayed after a
    /// crash must not write a deleted game's records back), and forget what the flusher
    /// knows of the games about to be deleted.
    Checkpoint {
        forget: Vec<String>,
        done: oneshot::Sender<Result<(), StoreError>>,
    },
    /// A game is loaded to be written (`load_to_write`): answered once every append queued
    /// before it is decided, after which a game refused since a failure is taken again.
    Reload(String, oneshot::Sender<()>),
}

struct Append {
    /// The log's name ([`log_name`]).
    game_id: String,
    /// `(seq, the record's stored bytes)`.
    records: Vec<(u64, RecordBytes)>,
    /// Seqs of the records that get a directory feed position.
    marked: Vec<u64>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// sled's default tree holds the journal's generation (u64 big-endian): the journal's entries
/// of this generation are not yet known to be in sled's files.
const JOURNAL_GENERATION: &[u8] = b"journal_generation";
/// sled's default tree holds the data dir's layout (u64 big-endian): [`LAYOUT_NAMESPACES`] once
/// the ladders' logs are in their own tree; absent in data dirs written before.
const LAYOUT: &[u8] = b"layout";
const LAYOUT_NAMESPACES: u64 = 2;
/// The tree of each namespace.
const GAMES_TREE: &str = "log";
const LADDERS_TREE: &str = "ladders";
/// A ladder's log name is its id after this ('/' is in no id).
const LADDERS_NAME: &str = "ladders/";

/// What the flusher, the journal, `pending`, the feed and the tree `damaged` call a log: a
/// game's id as it is (the names of data dirs written before namespaces), a ladder's log id
/// after [`LADDERS_NAME`].
fn log_name(namespace: Namespace, id: &str) -> String {
    match namespace {
        Namespace::Games => id.to_string(),
        Namespace::Ladders => format!("{LADDERS_NAME}{id}"),
    }
}

/// The namespace and id a log name stands for.
fn name_parts(name: &str) -> (Namespace, &str) {
    match name.strip_prefix(LADDERS_NAME) {
        Some(id) => (Namespace::Ladders, id),
        None => (Namespace::Games, name),
    }
}
/// A checkpoint is made after the batch that fills the journal past this much. It bounds
/// what waits in memory (`pending`: about this many bytes of records) and what a start after
/// a crash reads back; far below the journal's capacity, so that a batch rarely finds it full.
const CHECKPOINT_AT: u64 = 4 << 20;

/// Failures made on demand: the next `n` batches fail as a full disk fails them (tests of
/// what a storage failure leaves; nothing sets it in a server).
#[derive(Debug, Default)]
pub struct WriteFaults {
    failures: std::sync::atomic::AtomicUsize,
}

impl WriteFaults {
    /// The next `n` batches written fail (their journal write answers ENOSPC).
    pub fn fail_next(&self, n: usize) {
        self.failures.store(n, std::sync::atomic::Ordering::SeqCst);
    }

    fn take(&self) -> bool {
        use std::sync::atomic::Ordering;
        self.failures
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// sled's page cache.
const CACHE_BYTES: u64 = 32 * 1024 * 1024;

/// How a sled store is opened.
#[derive(Debug, Clone, Default)]
pub struct SledOptions {
    /// What a damaged journal does to the start (`--on-journal-damage`).
    pub on_journal_damage: OnJournalDamage,
    /// Failures on demand (tests).
    pub faults: Option<Arc<WriteFaults>>,
}

/// Games the store knows to be damaged (a damaged journal lost records of them), id -> why:
/// kept in the tree `damaged`, listed as damaged by every scan, never appended to.
type DamagedIds = Arc<RwLock<HashMap<String, String>>>;

/// The sled log, one namespace of it. Share it as a [`super::Store`].
#[derive(Clone)]
pub struct SledStore {
    /// This handle's namespace.
    tree: LogTree,
    /// The other namespace (a feed entry may be of either).
    other: LogTree,
    /// The `directory` tree (the feed), and its newest durable position.
    feed: sled::Tree,
    /// `directory_by_game`: game id ++ position -> (), so that deleting a game deletes its feed
    /// entries too. A feed that only grew kept sled from reusing its segments: under churn the
    /// data dir grew without bound although retention deleted the games.
    feed_index: sled::Tree,
    head: tokio::sync::watch::Receiver<u64>,
    marks: sled::Tree,
    /// Hosted bots' modules by SHA-256, deflated (`super::modules`).
    modules: sled::Tree,
    /// `std::sync::mpsc::Sender` is `Send` but not `Sync`; the mutex makes the store shareable
    /// and is held only for one `send` (never contended for long).
    appends: Arc<Mutex<std_mpsc::Sender<Job>>>,
}

impl SledStore {
    /// Opens (or creates) the data dir and starts the flusher thread; the games' namespace.
    /// The closer waits for the flusher to drain once every store handle is gone.
    pub fn open(dir: &Path) -> Result<(super::Store, StoreCloser), StoreError> {
        SledStore::open_with(dir, &SledOptions::default())
    }

    /// [`SledStore::open`] with options.
    pub fn open_with(
        dir: &Path,
        options: &SledOptions,
    ) -> Result<(super::Store, StoreCloser), StoreError> {
        let (logs, closer) = SledStore::open_logs(dir, options)?;
        Ok((logs.games, closer))
    }

    /// [`SledStore::open_with`], both namespaces.
    pub fn open_logs(dir: &Path, options: &SledOptions) -> Result<(Logs, StoreCloser), StoreError> {
        let db = open::open_db(dir)?;
        let tree = open::tree(&db, GAMES_TREE, "the log tree")?;
        let ladders_tree = open::tree(&db, LADDERS_TREE, "the ladders tree")?;
        let log_trees = LogTrees {
            games: tree.clone(),
            ladders: ladders_tree.clone(),
        };
        let feed = open::tree(&db, "directory", "the directory tree")?;
        let feed_index = open::tree(&db, "directory_by_game", "the directory index tree")?;
        let marks = open::tree(&db, "marks", "the marks tree")?;
        let modules = open::tree(&db, "modules", "the hosted modules tree")?;
        let damaged_tree = open::tree(&db, "damaged", "the damaged tree")?;
        let mut damaged = open::damage_notes(&damaged_tree)?;
        let (journal, recovered, newly_damaged) =
            open::recover_journal(dir, options, &db, &log_trees, &damaged_tree, &mut damaged)?;
        let damaged: DamagedIds = Arc::new(RwLock::new(damaged));
        let pending = Arc::new(Mutex::new(Pending::default()));
        let mut trees = Trees {
            db: db.clone(),
            pending: pending.clone(),
            logs: log_trees.clone(),
            feed: feed.clone(),
            feed_index: feed_index.clone(),
            next_position: 0,
            head: tokio::sync::watch::channel(0).0,
            journal,
            damaged: damaged.clone(),
            failed: std::collections::HashSet::new(),
            faults: options.faults.clone(),
        };
        let replayed_any = !recovered.is_empty();
        if replayed_any {
            // Batches acknowledged since the last checkpoint, which sled may not have: pending
            // again, as before the crash (reads and the restart's scan merge them; the next
            // checkpoint writes them). The journal goes on after them, in the same generation.
            let records: usize = recovered.iter().map(|a| a.records.len()).sum();
            let batches = recovered.len();
            trees.hand_to_readers(recovered);
            tracing::info!(batches, records, "read the journal's records back");
        }
        if newly_damaged {
            // The damaged games listed and every record kept in sled's files, the journal
            // starts over: its damage is never read (nor judged) again.
            trees.checkpoint().map_err(StoreError::unavailable)?;
        }
        open::upgrade_layout(
            &db,
            &mut trees,
            &log_trees,
            (&feed, &feed_index),
            &damaged_tree,
            replayed_any && !newly_damaged,
        )?;
        let last = match feed.last().map_err(read_error)? {
            None => 0,
            Some((key, _)) => u64_of(&key, "directory key")?,
        };
        let (head_tx, head) = tokio::sync::watch::channel(last);
        trees.next_position = last + 1;
        trees.head = head_tx;
        let (tx, rx) = std_mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("gangs-flusher".into())
            .spawn(move || flusher(trees, rx))
            .map_err(|e| {
                StoreError::unavailable(format!("cannot start the flusher thread: {e}"))
            })?;
        let games = LogTree {
            namespace: Namespace::Games,
            tree,
            pending,
            damaged,
            damaged_tree,
        };
        let ladders = LogTree {
            namespace: Namespace::Ladders,
            tree: ladders_tree,
            ..games.clone()
        };
        let games = SledStore {
            tree: games,
            other: ladders,
            feed,
            feed_index,
            head,
            marks,
            modules,
            appends: Arc::new(Mutex::new(tx)),
        };
        let ladders = SledStore {
            tree: games.other.clone(),
            other: games.tree.clone(),
            ..games.clone()
        };
        let closer = StoreCloser::new(move || {
            let _ = thread.join();
        });
        let logs = Logs {
            games: Arc::new(games),
            ladders: Arc::new(ladders),
        };
        Ok((logs, closer))
    }
}

/// The tree of each namespace.
#[derive(Clone)]
struct LogTrees {
    games: sled::Tree,
    ladders: sled::Tree,
}

impl LogTrees {
    fn of(&self, namespace: Namespace) -> &sled::Tree {
        match namespace {
            Namespace::Games => &self.games,
            Namespace::Ladders => &self.ladders,
        }
    }

    /// The last seq in sled's files of the log named `name` (0: none).
    fn last_stored_seq(&self, name: &str) -> Result<u64, StoreError> {
        let (namespace, id) = name_parts(name);
        last_stored_seq(self.of(namespace), id)
    }
}

/// The `log` tree and the records not yet in it (`chunks.rs`); its reads are blocking, so each
/// runs on a clone moved to a blocking thread.
///
/// Every read copies the game's pending records *before* it reads sled: a checkpoint writes
/// them into sled and only then takes them out of `pending` (both under its lock), so a read
/// sees each record in one place or the other, and never in neither.
#[derive(Clone)]
struct LogTree {
    namespace: Namespace,
    /// The namespace's tree (its keys are ids, not log names).
    tree: sled::Tree,
    /// Shared by both namespaces, by log name.
    pending: Arc<Mutex<Pending>>,
    /// Shared by both namespaces, by log name.
    damaged: DamagedIds,
    /// The tree `damaged` (log name -> why), which keeps [`LogTree::damaged`] across restarts.
    damaged_tree: sled::Tree,
}

impl LogTree {
    /// The log name of `id` in this namespace.
    fn name(&self, id: &str) -> String {
        log_name(self.namespace, id)
    }

    /// The id of a log name if it is of this namespace.
    fn own<'a>(&self, name: &'a str) -> Option<&'a str> {
        let (namespace, id) = name_parts(name);
        (namespace == self.namespace).then_some(id)
    }

    fn damage_reason(&self, game_id: &str) -> Option<String> {
        self.damaged
            .read()
            .expect("damaged lock")
            .get(&self.name(game_id))
            .cloned()
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().expect("pending lock")
    }

    /// Records of one game with `seq > after_seq`, at most `limit`, as stored (one seek: the
    /// chunk that holds `after_seq + 1` may start before it).
    fn read_range_bytes(
        &self,
        game_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<(u64, RecordBytes)>, StoreError> {
        let mut records = Vec::new();
        if after_seq == u64::MAX || limit == 0 {
            return Ok(records);
        }
        let pending = self.pending().after(&self.name(game_id), after_seq, limit);
        let wanted = log_key(game_id, after_seq + 1);
        let from = match self.tree.range(..=wanted.as_slice()).next_back() {
            Some(entry) => {
                let (key, _) = entry.map_err(read_error)?;
                if game_id_of(&key)? == game_id.as_bytes() {
                    key.to_vec()
                } else {
                    wanted
                }
            }
            None => wanted,
        };
        'keys: for entry in self.tree.range(from..=log_key(game_id, u64::MAX)) {
            let (key, value) = entry.map_err(read_error)?;
            let in_chunk = chunks::records_in(seq_of(&key)?, &value)
                .map_err(|e| StoreError::corrupt(format!("game {game_id}: {e}")))?;
            for (seq, bytes) in in_chunk {
                if seq > after_seq {
                    records.push((seq, bytes.into()));
                    if records.len() == limit {
                        break 'keys;
                    }
                }
            }
        }
        let last = records.last().map_or(after_seq, |(seq, _)| *seq);
        let room = limit - records.len();
        records.extend(
            pending
                .into_iter()
                .filter(|(seq, _)| *seq > last)
                .take(room),
        );
        Ok(records)
    }

    /// Records of one game with `seq > after_seq`, at most `limit`.
    fn read_range_now(
        &self,
        game_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<pb::LogRecord>, StoreError> {
        self.read_range_bytes(game_id, after_seq, limit)?
            .iter()
            .map(|(_, bytes)| decode_record(game_id, bytes))
            .collect()
    }

    /// One game's records, in seq order (empty if the game is unknown).
    fn load_game_now(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        self.read_range_now(game_id, 0, usize::MAX)
    }

    /// Every game's records, in id order, one pass over the tree (each game's pending records
    /// after its stored ones; a game with pending records only, in its place among them), sent
    /// in batches of [`SCAN_BATCH`] games (the last batch as it is). Stops when the reader goes
    /// away or the tree cannot be read (the error ends the scan: the batch not yet sent is
    /// dropped, the restart fails anyway).
    fn scan_now(&self, games: &tokio::sync::mpsc::Sender<Result<Vec<ScannedGame>, StoreError>>) {
        // This namespace's pending logs and damage notes, by id.
        let mut pending: HashMap<String, _> = self
            .pending()
            .snapshot()
            .into_iter()
            .filter_map(|(name, records)| Some((self.own(&name)?.to_string(), records)))
            .collect();
        let damaged: HashMap<String, String> = self
            .damaged
            .read()
            .expect("damaged lock")
            .iter()
            .filter_map(|(name, why)| Some((self.own(name)?.to_string(), why.clone())))
            .collect();
        // A damaged game may have no record left (all of them were in the damaged bytes): it
        // is listed all the same, with its reason.
        let mut pending_ids: Vec<String> = pending
            .keys()
            .chain(damaged.keys().filter(|id| !pending.contains_key(*id)))
            .cloned()
            .collect();
        pending_ids.sort_unstable_by(|a, b| b.cmp(a)); // popped smallest first
        let mut batch: Vec<ScannedGame> = Vec::with_capacity(SCAN_BATCH);
        // One game, its stored records then its pending ones; false once the reader is gone.
        let mut send = |id: String, mut records: StoredRecords| {
            let last = records.last().map_or(0, |(seq, _)| *seq);
            if let Some(more) = pending.remove(&id) {
                records.extend(more.into_iter().filter(|(seq, _)| *seq > last));
            }
            // Decoded by the reader, on its thread (`StoredLog`).
            let encoded = records.into_iter().map(|(_, bytes)| bytes).collect();
            batch.push(ScannedGame {
                damaged: damaged.get(&id).cloned(),
                id,
                log: Ok(StoredLog::Encoded(encoded)),
            });
            batch.len() < SCAN_BATCH
                || games
                    .blocking_send(Ok(std::mem::replace(
                        &mut batch,
                        Vec::with_capacity(SCAN_BATCH),
                    )))
                    .is_ok()
        };
        for stored in self.stored_games() {
            let (id, records) = match stored {
                Ok(game) => game,
                Err(e) => return drop(games.blocking_send(Err(e))),
            };
            // The games with pending records only that come before it, then it (with its own).
            while let Some(pending_id) = pending_ids.pop_if(|p| *p <= id) {
                if pending_id != id && !send(pending_id, Vec::new()) {
                    return;
                }
            }
            if !send(id, records) {
                return;
            }
        }
        while let Some(id) = pending_ids.pop() {
            if !send(id, Vec::new()) {
                return;
            }
        }
        if !batch.is_empty() {
            let _ = games.blocking_send(Ok(batch));
        }
    }

    /// The tree's games in key order, each with its stored records (chunks opened).
    fn stored_games(&self) -> impl Iterator<Item = Result<(String, StoredRecords), StoreError>> {
        let mut entries = self
            .tree
            .iter()
            .map(|entry| {
                let (key, value) = entry.map_err(read_error)?;
                let records = chunks::records_in(seq_of(&key)?, &value)
                    .map_err(StoreError::corrupt)?
                    .into_iter()
                    .map(|(seq, bytes)| (seq, RecordBytes::from(bytes)))
                    .collect::<Vec<_>>();
                Ok((game_id_of(&key)?.to_vec(), records))
            })
            .peekable();
        std::iter::from_fn(move || {
            let (id, mut records) = match entries.next()? {
                Ok(entry) => entry,
                Err(e) => return Some(Err(e)),
            };
            while let Some((_, more)) = entries
                .next_if(|next| matches!(next, Ok((i, _)) if *i == id))
                .and_then(Result::ok)
            {
                records.extend(more);
            }
            Some(Ok((String::from_utf8_lossy(&id).into_owned(), records)))
        })
    }

    /// Every game id in the log, in order: one key read per game (each read skips past the
    /// rest of that game's records).
    fn game_ids_now(&self) -> Result<Vec<String>, StoreError> {
        let mut ids: Vec<String> = self
            .pending()
            .ids()
            .filter_map(|name| self.own(name).map(str::to_string))
            .collect();
        let mut next = self.tree.first().map_err(read_error)?;
        while let Some((key, _)) = next {
            let id = game_id_of(&key)?;
            ids.push(String::from_utf8_lossy(id).into_owned());
            let mut last_of_game = id.to_vec();
            last_of_game.extend_from_slice(&[0xff; 8]);
            next = self
                .tree
                .range((Bound::Excluded(last_of_game), Bound::Unbounded))
                .next()
                .transpose()
                .map_err(read_error)?;
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    /// Removes a game's records from the tree (durable at the caller's flush).
    fn delete_game_entries(&self, game_id: &str) -> Result<(), StoreError> {
        let mut batch = sled::Batch::default();
        for key in self.tree.scan_prefix(game_id.as_bytes()).keys() {
            batch.remove(key.map_err(read_error)?);
        }
        self.tree
            .apply_batch(batch)
            .map_err(|e| StoreError::unavailable(format!("cannot delete game {game_id}: {e}")))?;
        // Nothing is pending for it after the checkpoint that came first, unless a record was
        // appended since: a deleted game takes it along.
        let name = self.name(game_id);
        self.pending().forget(&name);
        if self
            .damaged
            .write()
            .expect("damaged lock")
            .remove(&name)
            .is_some()
        {
            self.damaged_tree.remove(name.as_bytes()).map_err(|e| {
                StoreError::unavailable(format!("cannot delete game {game_id}: {e}"))
            })?;
        }
        Ok(())
    }
}

/// One game's records as the scan read them: seq and stored bytes.
type StoredRecords = Vec<(u64, RecordBytes)>;

/// sled reads are blocking (disk): run them off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::unavailable(format!("the store's reader stopped: {e}")))?
}

#[async_trait::async_trait]
impl LogStore for SledStore {
    /// Writes the caller's bytes: the decoded records are dropped here, on the caller's
    /// thread, which allocated them (glibc frees a block under its allocating thread's arena
    /// lock: freed on the flusher, they made the two threads wait on each other).
    fn append_encoded(
        &self,
        game_id: &str,
        records: Vec<EncodedRecord>,
        marked: Vec<u64>,
    ) -> Durable {
        let records = records
            .into_iter()
            .map(|encoded| (encoded.record.seq, encoded.bytes))
            .collect();
        let (done, rx) = oneshot::channel();
        let append = Append {
            game_id: self.tree.name(game_id),
            records,
            marked,
            done,
        };
        let sent = self
            .appends
            .lock()
            .expect("appends lock")
            .send(Job::Append(append));
        if let Err(std_mpsc::SendError(Job::Append(append))) = sent {
            let _ = append
                .done
                .send(Err(StoreError::unavailable("the store is shut down")));
        }
        rx
    }

    /// A game the store knows to be damaged is not written to again: Corrupt, with why.
    /// After every append queued before it is decided (the log read holds it, or it
    /// failed): a game refused since a failed append is written again from here.
    async fn load_to_write(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        if let Some(reason) = self.tree.damage_reason(game_id) {
            return Err(StoreError::corrupt(format!("game {game_id}: {reason}")));
        }
        let (done, decided) = oneshot::channel();
        let stopped = || StoreError::unavailable("the store is shut down");
        self.appends
            .lock()
            .expect("appends lock")
            .send(Job::Reload(self.tree.name(game_id), done))
            .map_err(|_| stopped())?;
        decided.await.map_err(|_| stopped())?;
        self.load_game(game_id).await
    }

    async fn load_game(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        let (tree, game_id) = (self.tree.clone(), game_id.to_string());
        blocking(move || tree.load_game_now(&game_id)).await
    }

    async fn read_range(
        &self,
        game_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<pb::LogRecord>, StoreError> {
        let (tree, game_id) = (self.tree.clone(), game_id.to_string());
        blocking(move || tree.read_range_now(&game_id, after_seq, limit)).await
    }

    async fn game_ids(&self) -> Result<Vec<String>, StoreError> {
        let tree = self.tree.clone();
        blocking(move || tree.game_ids_now()).await
    }

    /// One pass over the tree on one blocking thread, decoding as it goes: per game, a seek
    /// and a hop to a blocking thread and back cost more than reading its records.
    fn scan_all(&self) -> Option<GameScan> {
        let (tx, rx) = tokio::sync::mpsc::channel(SCAN_AHEAD);
        let tree = self.tree.clone();
        tokio::task::spawn_blocking(move || {
            // A scan that died must not look like the end of the log (games would be missing).
            let scanned =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tree.scan_now(&tx)));
            if scanned.is_err() {
                let _ = tx.blocking_send(Err(StoreError::unavailable("the log scan failed")));
            }
        });
        Some(rx)
    }

    async fn delete_game(&self, game_id: &str) -> Result<(), StoreError> {
        self.delete_games(&[game_id.to_string()])
            .await
            .pop()
            .expect("one result per game")
    }

    /// One checkpoint first (a journal replayed after a crash must not write a deleted game
    /// back), then every game's entries, then one flush.
    async fn delete_games(&self, game_ids: &[String]) -> Vec<Result<(), StoreError>> {
        if game_ids.is_empty() {
            return Vec::new();
        }
        let names = game_ids.iter().map(|id| self.tree.name(id)).collect();
        if let Err(e) = self.checkpoint(names).await {
            return game_ids.iter().map(|_| Err(e.clone())).collect();
        }
        let (tree, game_ids) = (self.tree.clone(), game_ids.to_vec());
        let (feed, index) = (self.feed.clone(), self.feed_index.clone());
        let count = game_ids.len();
        let deleted = blocking(move || {
            let mut results: Vec<Result<(), StoreError>> = game_ids
                .iter()
                .map(|id| {
                    forget_feed_entries(&feed, &index, &tree.name(id))?;
                    tree.delete_game_entries(id)
                })
                .collect();
            if let Err(e) = tree.tree.flush() {
                let failed = StoreError::unavailable(format!("cannot flush the log: {e}"));
                for result in results.iter_mut().filter(|r| r.is_ok()) {
                    *result = Err(failed.clone());
                }
            }
            Ok(results)
        })
        .await;
        deleted.unwrap_or_else(|e| (0..count).map(|_| Err(e.clone())).collect())
    }

    fn feed_head(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.head.clone())
    }

    /// Read from the entry's namespace.
    async fn feed_record(&self, entry: &FeedEntry) -> Result<Option<pb::LogRecord>, StoreError> {
        let tree = if entry.namespace == self.tree.namespace {
            self.tree.clone()
        } else {
            self.other.clone()
        };
        let (game_id, after) = (entry.game_id.clone(), entry.seq.saturating_sub(1));
        let records = blocking(move || tree.read_range_now(&game_id, after, 1)).await?;
        Ok(records.into_iter().next().filter(|r| r.seq == entry.seq))
    }

    async fn load_mark(&self, name: &str) -> Result<Option<u64>, StoreError> {
        self.load_mark_now(name).await
    }

    async fn save_mark(&self, name: &str, position: u64) -> Result<(), StoreError> {
        self.save_mark_now(name, position).await
    }

    fn keeps_modules(&self) -> bool {
        true
    }

    async fn put_module(&self, sha256: &str, module: &[u8]) -> Result<(), StoreError> {
        let (tree, sha256, module) = (self.modules.clone(), sha256.to_string(), module.to_vec());
        blocking(move || modules::put(&tree, &sha256, &module)).await
    }

    async fn get_module(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let (tree, sha256) = (self.modules.clone(), sha256.to_string());
        blocking(move || modules::get(&tree, &sha256)).await
    }

    async fn feed_after(&self, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
        let feed = self.feed.clone();
        // Only up to the durable head: an entry written but not yet flushed is not told.
        let head = *self.head.borrow();
        blocking(move || {
            let mut entries = Vec::new();
            let Some(from) = after.checked_add(1).filter(|from| *from <= head) else {
                return Ok(entries);
            };
            for entry in feed
                .range(from.to_be_bytes()..=head.to_be_bytes())
                .take(limit)
            {
                let (key, value) = entry.map_err(read_error)?;
                let malformed = || {
                    StoreError::corrupt(format!(
                        "malformed directory entry of {} bytes",
                        value.len()
                    ))
                };
                let (name, seq) = value.split_at(value.len().checked_sub(8).ok_or_else(malformed)?);
                let name = std::str::from_utf8(name).map_err(|_| malformed())?;
                let (namespace, id) = name_parts(name);
                if id.len() != GAME_ID_LEN {
                    return Err(malformed());
                }
                entries.push(FeedEntry {
                    position: u64_of(&key, "directory key")?,
                    namespace,
                    game_id: id.to_string(),
                    seq: u64::from_be_bytes(seq.try_into().expect("8 bytes")),
                });
            }
            Ok(entries)
        })
        .await
    }
}

/// The sled implementation of the marks (see `LogStore::load_mark`).
impl SledStore {
    /// Waits for the flusher to flush sled and start the journal over (forgetting what it
    /// knows of the games in `forget`, about to be deleted).
    async fn checkpoint(&self, forget: Vec<String>) -> Result<(), StoreError> {
        let (done, rx) = oneshot::channel();
        let stopped = || StoreError::unavailable("the store is shut down");
        self.appends
            .lock()
            .expect("appends lock")
            .send(Job::Checkpoint { forget, done })
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    async fn load_mark_now(&self, name: &str) -> Result<Option<u64>, StoreError> {
        let (marks, name) = (self.marks.clone(), name.to_string());
        blocking(
            move || match marks.get(name.as_bytes()).map_err(read_error)? {
                None => Ok(None),
                Some(value) => u64_of(&value, "mark").map(Some),
            },
        )
        .await
    }

    async fn save_mark_now(&self, name: &str, position: u64) -> Result<(), StoreError> {
        let (marks, name) = (self.marks.clone(), name.to_string());
        blocking(move || {
            let failed =
                |e: sled::Error| StoreError::unavailable(format!("cannot save a mark: {e}"));
            marks
                .insert(name.as_bytes(), position.to_be_bytes().to_vec())
                .map_err(failed)?;
            marks.flush().map_err(failed)?;
            Ok(())
        })
        .await
    }
}

/// The u64 (big-endian) a `directory` key, a mark or the journal's generation holds.
/// Deletes the feed entries of a log being deleted (`name`: its log name): readers skip them anyway (their record is
/// gone), and kept for ever they would pin sled's segments. The feed's newest entry stays: the
/// next position after a restart is read from it, and a position is never given twice.
fn forget_feed_entries(
    feed: &sled::Tree,
    index: &sled::Tree,
    name: &str,
) -> Result<(), StoreError> {
    let newest = feed.last().map_err(read_error)?.map(|(key, _)| key);
    let mut entries = sled::Batch::default();
    let mut keys = sled::Batch::default();
    for key in index.scan_prefix(name.as_bytes()).keys() {
        let key = key.map_err(read_error)?;
        let position = &key[key.len() - 8..];
        if newest.as_deref() != Some(position) {
            entries.remove(position);
            keys.remove(key);
        }
    }
    feed.apply_batch(entries)
        .and_then(|()| index.apply_batch(keys))
        .map_err(|e| StoreError::unavailable(format!("cannot delete {name}: {e}")))
}
