//! The embedded log (the default store): the one place that talks to sled.
//!
//! Layout: one tree, `log`, keyed by `game id (16 bytes) ++ seq (u64 big-endian)`, valued by the
//! encoded `LogRecord`. A restart scans it once and rebuilds every game. The directory feed
//! (`store/mod.rs`) is the tree `directory`, keyed by position (u64 big-endian), valued by
//! `game id ++ seq`; a batch that marks records writes both trees in one transaction. The
//! feed's readers save their positions in the tree `marks` (name -> u64 big-endian).
//!
//! Durability uses group commit: appends go over a channel to one dedicated OS thread (never a
//! tokio worker) that inserts everything that arrived meanwhile into sled, writes the batch to
//! the journal (`journal.rs`) with one `fdatasync`, then tells each appender its records are
//! durable. One sync thus serves every action of every game that arrived during the previous
//! one. sled itself is flushed at checkpoints (the journal full, a game deleted, shutdown); a
//! store opened after a crash first writes the journal's batches into sled again.

use super::journal::{self, Journal, JournaledAppend};
use super::{
    decode_record, Durable, FeedEntry, GameScan, LogStore, ScannedGame, ScannedLog, StoreCloser,
    StoreError, GAME_ID_LEN, SCAN_AHEAD, SCAN_BATCH,
};
use gangs_proto::v1 as pb;
use prost::Message;
use std::ops::Bound;
use std::path::Path;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Most appends folded into one flush; bounds the latency of the first appender in a batch.
const MAX_BATCH: usize = 4096;

/// What the flusher thread is asked to do.
enum Job {
    Append(Append),
    /// Flush sled and start the journal over (before a deletion: a journal replayed after a
    /// crash must not write a deleted game's records back).
    Checkpoint(oneshot::Sender<Result<(), StoreError>>),
}

struct Append {
    game_id: String,
    records: Vec<pb::LogRecord>,
    /// Seqs of the records that get a directory feed position.
    marked: Vec<u64>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// sled's default tree holds the journal's generation (u64 big-endian): the journal's entries
/// of this generation are not yet known to be in sled's files.
const JOURNAL_GENERATION: &[u8] = b"journal_generation";
/// A checkpoint is made after the batch that fills the journal past this much, so that a
/// batch rarely finds it full.
const CHECKPOINT_AT: u64 = journal::CAPACITY / 4 * 3;

/// sled's page cache.
const CACHE_BYTES: u64 = 32 * 1024 * 1024;

/// The sled log. Share it as a [`super::Store`].
pub struct SledStore {
    tree: LogTree,
    /// The `directory` tree (the feed), and its newest durable position.
    feed: sled::Tree,
    /// `directory_by_game`: game id ++ position -> (), so that deleting a game deletes its feed
    /// entries too. A feed that only grew kept sled from reusing its segments: under churn the
    /// data dir grew without bound although retention deleted the games.
    feed_index: sled::Tree,
    head: tokio::sync::watch::Receiver<u64>,
    marks: sled::Tree,
    /// `std::sync::mpsc::Sender` is `Send` but not `Sync`; the mutex makes the store shareable
    /// and is held only for one `send` (never contended for long).
    appends: Mutex<std_mpsc::Sender<Job>>,
}

impl SledStore {
    /// Opens (or creates) the data dir and starts the flusher thread. The closer waits for the
    /// flusher to drain once every store handle is gone.
    pub fn open(dir: &Path) -> Result<(super::Store, StoreCloser), StoreError> {
        // sled's own periodic flusher is off: every write is flushed explicitly by the flusher
        // thread below, so a second, timed flusher would only contend with it.
        let db = sled::Config::new()
            .path(dir)
            .flush_every_ms(None)
            // The log is written far more than read (reads: startup, reloading a finished
            // game), so a small page cache will do; sled's default would grow to 1 GB.
            .cache_capacity(CACHE_BYTES)
            .open()
            .map_err(|e| match e {
                // sled locks its `db` file: another process holds the data dir.
                sled::Error::Io(io) if io.to_string().contains("could not acquire lock") => {
                    StoreError::unavailable(format!(
                        "the data dir {} is in use by another gangs-server (choose another --data-dir or stop that server)",
                        dir.display()
                    ))
                }
                e => StoreError::unavailable(format!(
                    "cannot open the data dir {}: {e}",
                    dir.display()
                )),
            })?;
        let tree = db
            .open_tree("log")
            .map_err(|e| StoreError::unavailable(format!("cannot open the log tree: {e}")))?;
        let feed = db
            .open_tree("directory")
            .map_err(|e| StoreError::unavailable(format!("cannot open the directory tree: {e}")))?;
        let feed_index = db.open_tree("directory_by_game").map_err(|e| {
            StoreError::unavailable(format!("cannot open the directory index tree: {e}"))
        })?;
        let marks = db
            .open_tree("marks")
            .map_err(|e| StoreError::unavailable(format!("cannot open the marks tree: {e}")))?;
        let journal_failed =
            |e: std::io::Error| StoreError::unavailable(format!("cannot read the journal: {e}"));
        let generation = match db.get(JOURNAL_GENERATION).map_err(read_error)? {
            None => 0,
            Some(value) => position_of(&value)?,
        };
        let (journal, recovered) = Journal::open(dir, generation).map_err(journal_failed)?;
        let mut trees = Trees {
            db: db.clone(),
            log: tree.clone(),
            feed: feed.clone(),
            feed_index: feed_index.clone(),
            next_position: 0,
            head: tokio::sync::watch::channel(0).0,
            journal,
        };
        if !recovered.is_empty() {
            // Batches acknowledged before a crash that sled may not have written: write them
            // again (the same keys and bytes), and make that sled's own.
            let records: usize = recovered.iter().map(|a| a.records.len()).sum();
            trees
                .insert(&recovered)
                .and_then(|()| trees.checkpoint())
                .map_err(StoreError::unavailable)?;
            tracing::info!(
                batches = recovered.len(),
                records,
                "wrote the journal's records into the log"
            );
        }
        let last = match feed.last().map_err(read_error)? {
            None => 0,
            Some((key, _)) => position_of(&key)?,
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
        let store = SledStore {
            tree: LogTree(tree),
            feed,
            feed_index,
            head,
            marks,
            appends: Mutex::new(tx),
        };
        let closer = StoreCloser::new(move || {
            let _ = thread.join();
        });
        Ok((Arc::new(store), closer))
    }
}

/// The `log` tree; its reads are blocking, so each runs on a clone moved to a blocking thread.
#[derive(Clone)]
struct LogTree(sled::Tree);

impl LogTree {
    /// Records of one game with `seq > after_seq`, at most `limit` (a range scan: one seek).
    fn read_range_now(
        &self,
        game_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<pb::LogRecord>, StoreError> {
        let from = log_key(game_id, after_seq.saturating_add(1));
        let to = log_key(game_id, u64::MAX);
        let mut records = Vec::new();
        if after_seq == u64::MAX {
            return Ok(records);
        }
        for entry in self.0.range(from..=to).take(limit) {
            let (key, value) = entry.map_err(read_error)?;
            game_id_of(&key)?;
            records.push(decode_record(game_id, &value)?);
        }
        Ok(records)
    }

    /// One game's records, in seq order (empty if the game is unknown): one prefix scan.
    fn load_game_now(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        let mut records = Vec::new();
        for entry in self.0.scan_prefix(game_id.as_bytes()) {
            let (key, value) = entry.map_err(read_error)?;
            game_id_of(&key)?;
            records.push(decode_record(game_id, &value)?);
        }
        Ok(records)
    }

    /// Every game's records, in key order, one pass over the tree: a game is complete once its
    /// last record is read, and sent in a batch of [`SCAN_BATCH`] complete games (the last
    /// batch as it is). Stops when the reader goes away or the tree cannot be read (the error
    /// ends the scan: the batch not yet sent is dropped, the restart fails anyway).
    fn scan_now(&self, games: &tokio::sync::mpsc::Sender<Result<Vec<ScannedGame>, StoreError>>) {
        let mut batch: Vec<ScannedGame> = Vec::with_capacity(SCAN_BATCH);
        let mut current: Option<ScannedGame> = None;
        // A game is complete when the next one starts; a batch goes when it is full.
        let complete = |game: ScannedGame, batch: &mut Vec<ScannedGame>| {
            batch.push(game);
            batch.len() < SCAN_BATCH
                || games
                    .blocking_send(Ok(std::mem::replace(batch, Vec::with_capacity(SCAN_BATCH))))
                    .is_ok()
        };
        for entry in self.0.iter() {
            let (key, value) = match entry.map_err(read_error) {
                Ok(entry) => entry,
                Err(e) => return drop(games.blocking_send(Err(e))),
            };
            let id = match game_id_of(&key) {
                Ok(id) => id,
                Err(e) => return drop(games.blocking_send(Err(e))),
            };
            // A new game: the previous one is complete.
            if current.as_ref().is_some_and(|g| g.id.as_bytes() != id)
                && !complete(current.take().expect("checked"), &mut batch)
            {
                return;
            }
            let game = current.get_or_insert_with(|| ScannedGame {
                id: String::from_utf8_lossy(id).into_owned(),
                log: Ok(ScannedLog::Encoded(Vec::new())),
            });
            // Decoded by the reader, on its thread (`ScannedLog`).
            if let Ok(ScannedLog::Encoded(records)) = &mut game.log {
                records.push(Box::from(&value[..]));
            }
        }
        if let Some(game) = current {
            batch.push(game);
        }
        if !batch.is_empty() {
            let _ = games.blocking_send(Ok(batch));
        }
    }

    /// Every game id in the log, in order: one key read per game (each read skips past the
    /// rest of that game's records).
    fn game_ids_now(&self) -> Result<Vec<String>, StoreError> {
        let mut ids = Vec::new();
        let mut next = self.0.first().map_err(read_error)?;
        while let Some((key, _)) = next {
            let id = game_id_of(&key)?;
            ids.push(String::from_utf8_lossy(id).into_owned());
            let mut last_of_game = id.to_vec();
            last_of_game.extend_from_slice(&[0xff; 8]);
            next = self
                .0
                .range((Bound::Excluded(last_of_game), Bound::Unbounded))
                .next()
                .transpose()
                .map_err(read_error)?;
        }
        Ok(ids)
    }

    /// Removes every key of one game, then flushes (a deletion is durable like an append).
    fn delete_game_now(&self, game_id: &str) -> Result<(), StoreError> {
        let mut batch = sled::Batch::default();
        for key in self.0.scan_prefix(game_id.as_bytes()).keys() {
            batch.remove(key.map_err(read_error)?);
        }
        self.0
            .apply_batch(batch)
            .map_err(|e| StoreError::unavailable(format!("cannot delete game {game_id}: {e}")))?;
        self.0
            .flush()
            .map_err(|e| StoreError::unavailable(format!("cannot flush the log: {e}")))?;
        Ok(())
    }
}

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
    fn append_marked(
        &self,
        game_id: &str,
        records: Vec<pb::LogRecord>,
        marked: Vec<u64>,
    ) -> Durable {
        let (done, rx) = oneshot::channel();
        let append = Append {
            game_id: game_id.to_string(),
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
        self.checkpoint().await?;
        let (tree, game_id) = (self.tree.clone(), game_id.to_string());
        let (feed, index) = (self.feed.clone(), self.feed_index.clone());
        blocking(move || {
            forget_feed_entries(&feed, &index, &game_id)?;
            tree.delete_game_now(&game_id)
        })
        .await
    }

    fn feed_head(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.head.clone())
    }

    async fn load_mark(&self, name: &str) -> Result<Option<u64>, StoreError> {
        self.load_mark_now(name).await
    }

    async fn save_mark(&self, name: &str, position: u64) -> Result<(), StoreError> {
        self.save_mark_now(name, position).await
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
                if value.len() != GAME_ID_LEN + 8 {
                    return Err(StoreError::corrupt(format!(
                        "malformed directory entry of {} bytes",
                        value.len()
                    )));
                }
                let (id, seq) = value.split_at(GAME_ID_LEN);
                entries.push(FeedEntry {
                    position: position_of(&key)?,
                    game_id: String::from_utf8_lossy(id).into_owned(),
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
    /// Waits for the flusher to flush sled and start the journal over.
    async fn checkpoint(&self) -> Result<(), StoreError> {
        let (done, rx) = oneshot::channel();
        let stopped = || StoreError::unavailable("the store is shut down");
        self.appends
            .lock()
            .expect("appends lock")
            .send(Job::Checkpoint(done))
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    async fn load_mark_now(&self, name: &str) -> Result<Option<u64>, StoreError> {
        let (marks, name) = (self.marks.clone(), name.to_string());
        blocking(
            move || match marks.get(name.as_bytes()).map_err(read_error)? {
                None => Ok(None),
                Some(value) => position_of(&value).map(Some),
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

/// The position a `directory` key holds.
fn position_of(key: &[u8]) -> Result<u64, StoreError> {
    key.try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| StoreError::corrupt(format!("malformed directory key of {} bytes", key.len())))
}

fn read_error(e: sled::Error) -> StoreError {
    StoreError::unavailable(format!("cannot read the log: {e}"))
}

/// The game id part of a log key (`game id ++ seq`), or the error a malformed key is.
fn game_id_of(key: &[u8]) -> Result<&[u8], StoreError> {
    if key.len() != GAME_ID_LEN + 8 {
        return Err(StoreError::corrupt(format!(
            "malformed log key of {} bytes",
            key.len()
        )));
    }
    Ok(&key[..GAME_ID_LEN])
}

fn log_key(game_id: &str, seq: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(GAME_ID_LEN + 8);
    key.extend_from_slice(game_id.as_bytes());
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

/// Deletes the feed entries of a game being deleted: readers skip them anyway (their record is
/// gone), and kept for ever they would pin sled's segments. The feed's newest entry stays: the
/// next position after a restart is read from it, and a position is never given twice.
fn forget_feed_entries(
    feed: &sled::Tree,
    index: &sled::Tree,
    game_id: &str,
) -> Result<(), StoreError> {
    let newest = feed.last().map_err(read_error)?.map(|(key, _)| key);
    let mut entries = sled::Batch::default();
    let mut keys = sled::Batch::default();
    for key in index.scan_prefix(game_id.as_bytes()).keys() {
        let key = key.map_err(read_error)?;
        let position = &key[key.len() - 8..];
        if newest.as_deref() != Some(position) {
            entries.remove(position);
            keys.remove(key);
        }
    }
    feed.apply_batch(entries)
        .and_then(|()| index.apply_batch(keys))
        .map_err(|e| StoreError::unavailable(format!("cannot delete game {game_id}: {e}")))
}

/// What the flusher writes to: the log, the directory feed and its next position, the journal.
struct Trees {
    db: sled::Db,
    log: sled::Tree,
    feed: sled::Tree,
    feed_index: sled::Tree,
    next_position: u64,
    head: tokio::sync::watch::Sender<u64>,
    journal: Journal,
}

fn flusher(mut trees: Trees, rx: std_mpsc::Receiver<Job>) {
    let mut batch: Vec<Append> = Vec::new();
    let mut checkpoints: Vec<oneshot::Sender<Result<(), StoreError>>> = Vec::new();
    // `recv` fails once every sender is gone: the server is shutting down.
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(job) = next.take() {
            match job {
                Job::Append(append) => batch.push(append),
                Job::Checkpoint(done) => checkpoints.push(done),
            }
            if batch.len() < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            let result = trees.write_batch(&mut batch);
            for append in batch.drain(..) {
                let outcome = match &result {
                    Ok(()) => Ok(()),
                    Err(e) => Err(StoreError::unavailable(e.clone())),
                };
                let _ = append.done.send(outcome);
            }
        }
        if !checkpoints.is_empty() || trees.journal.len() >= CHECKPOINT_AT {
            let result = trees.checkpoint();
            if let Err(e) = &result {
                tracing::error!("cannot flush the log at a checkpoint: {e}");
            }
            for done in checkpoints.drain(..) {
                let _ = done.send(result.clone().map_err(StoreError::unavailable));
            }
        }
    }
    // Everything journaled goes into sled's files: the next start has nothing to write again.
    if let Err(e) = trees.checkpoint() {
        tracing::error!("cannot flush the log at shutdown: {e}");
    }
}

impl Trees {
    /// Inserts a batch into sled, then makes it durable: one journal entry and one sync (or,
    /// for a batch larger than the journal has room for, a checkpoint).
    fn write_batch(&mut self, batch: &mut [Append]) -> Result<(), String> {
        let started = std::time::Instant::now();
        // Positions are taken even if the write fails: never reused, so never seen twice.
        let mut position = self.next_position;
        let writes: Vec<JournaledAppend> = batch
            .iter_mut()
            .map(|append| JournaledAppend {
                game_id: std::mem::take(&mut append.game_id),
                records: append
                    .records
                    .iter()
                    .map(|record| (record.seq, record.encode_to_vec()))
                    .collect(),
                marked: append
                    .marked
                    .iter()
                    .map(|&seq| {
                        position += 1;
                        (seq, position - 1)
                    })
                    .collect(),
            })
            .collect();
        let marked = position > self.next_position;
        self.next_position = position;
        self.insert(&writes)?;
        let inserted = started.elapsed();
        let journaled = self
            .journal
            .write(&writes)
            .map_err(|e| format!("cannot write the journal: {e}"))?;
        if journaled.is_err() {
            self.checkpoint()?;
        }
        let records = writes.iter().map(|a| a.records.len()).sum();
        crate::metrics::log_committed(records, inserted, started.elapsed() - inserted);
        if marked {
            self.head.send_replace(position - 1);
        }
        Ok(())
    }

    /// Writes records and their feed entries into sled's trees (in memory until sled flushes).
    ///
    /// One insert at a time, not a `sled::Batch` or a transaction: sled 0.34 writes and syncs
    /// its IO buffer for every batch (`pin_log` rolls it), which cost a third of the server's
    /// CPU per action. The journal makes the batch durable and atomic instead: after a crash,
    /// opening the store inserts every journaled batch again, whatever part of it sled kept.
    /// Readers of the feed read only up to the durable head, so they never see a feed entry
    /// before the records it points at.
    fn insert(&self, writes: &[JournaledAppend]) -> Result<(), String> {
        let failed = |e: sled::Error| format!("cannot write the log: {e}");
        for append in writes {
            for (seq, bytes) in &append.records {
                self.log
                    .insert(log_key(&append.game_id, *seq), &bytes[..])
                    .map_err(failed)?;
            }
            for &(seq, position) in &append.marked {
                self.feed
                    .insert(position.to_be_bytes(), log_key(&append.game_id, seq))
                    .map_err(failed)?;
                self.feed_index
                    .insert(log_key(&append.game_id, position), &[])
                    .map_err(failed)?;
            }
        }
        Ok(())
    }

    /// Flushes sled (every batch journaled so far is then in its files), then stores the
    /// journal's next generation and flushes again: from then on a restart skips the entries
    /// written so far, and the journal starts over.
    fn checkpoint(&mut self) -> Result<(), String> {
        let flush_failed = |e: sled::Error| format!("cannot flush the log: {e}");
        self.db.flush().map_err(flush_failed)?;
        let next = self.journal.generation() + 1;
        self.db
            .insert(JOURNAL_GENERATION, &next.to_be_bytes())
            .map_err(flush_failed)?;
        self.db.flush().map_err(flush_failed)?;
        self.journal.start_over(next);
        Ok(())
    }
}
