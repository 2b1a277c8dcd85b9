//! The embedded log (the default store): the one place that talks to sled.
//!
//! Layout: one tree, `log`, keyed by `game id (16 bytes) ++ seq (u64 big-endian)`, valued by the
//! encoded `LogRecord`. A restart scans it once and rebuilds every game.
//!
//! Durability uses group commit: appends go over a channel to one dedicated OS thread (never a
//! tokio worker) that inserts everything that arrived meanwhile, calls one `flush`, then tells
//! each appender its records are durable. One flush thus serves every action of every game that
//! arrived during the previous flush.

use super::{
    Durable, GameScan, LogStore, ScannedGame, StoreCloser, StoreError, GAME_ID_LEN, SCAN_AHEAD,
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

struct Append {
    game_id: String,
    records: Vec<pb::LogRecord>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// sled's page cache.
const CACHE_BYTES: u64 = 32 * 1024 * 1024;

/// The sled log. Share it as a [`super::Store`].
pub struct SledStore {
    tree: LogTree,
    /// `std::sync::mpsc::Sender` is `Send` but not `Sync`; the mutex makes the store shareable
    /// and is held only for one `send` (never contended for long).
    appends: Mutex<std_mpsc::Sender<Append>>,
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
        let (tx, rx) = std_mpsc::channel::<Append>();
        let flusher_tree = tree.clone();
        let thread = std::thread::Builder::new()
            .name("gangs-flusher".into())
            .spawn(move || flusher(db, flusher_tree, rx))
            .map_err(|e| {
                StoreError::unavailable(format!("cannot start the flusher thread: {e}"))
            })?;
        let store = SledStore {
            tree: LogTree(tree),
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
            records.push(decode(game_id, &value)?);
        }
        Ok(records)
    }

    /// One game's records, in seq order (empty if the game is unknown): one prefix scan.
    fn load_game_now(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        let mut records = Vec::new();
        for entry in self.0.scan_prefix(game_id.as_bytes()) {
            let (key, value) = entry.map_err(read_error)?;
            game_id_of(&key)?;
            records.push(decode(game_id, &value)?);
        }
        Ok(records)
    }

    /// Every game's records, in key order, one pass over the tree: each game is sent once its
    /// last record is read. Stops when the reader goes away or the tree cannot be read.
    fn scan_now(&self, games: &tokio::sync::mpsc::Sender<Result<ScannedGame, StoreError>>) {
        let mut current: Option<ScannedGame> = None;
        let send = |game: ScannedGame| games.blocking_send(Ok(game)).is_ok();
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
                && !send(current.take().expect("checked"))
            {
                return;
            }
            let game = current.get_or_insert_with(|| ScannedGame {
                id: String::from_utf8_lossy(id).into_owned(),
                records: Ok(Vec::new()),
            });
            if let Ok(records) = &mut game.records {
                match decode(&game.id, &value) {
                    Ok(record) => records.push(record),
                    Err(e) => game.records = Err(e),
                }
            }
        }
        if let Some(game) = current {
            send(game);
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
    fn append(&self, game_id: &str, records: Vec<pb::LogRecord>) -> Durable {
        let (done, rx) = oneshot::channel();
        let append = Append {
            game_id: game_id.to_string(),
            records,
            done,
        };
        let sent = self.appends.lock().expect("appends lock").send(append);
        if let Err(std_mpsc::SendError(append)) = sent {
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
        let (tree, game_id) = (self.tree.clone(), game_id.to_string());
        blocking(move || tree.delete_game_now(&game_id)).await
    }
}

fn decode(game_id: &str, value: &[u8]) -> Result<pb::LogRecord, StoreError> {
    pb::LogRecord::decode(value)
        .map_err(|e| StoreError::corrupt(format!("game {game_id}: undecodable record: {e}")))
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

fn flusher(db: sled::Db, tree: sled::Tree, rx: std_mpsc::Receiver<Append>) {
    let mut batch: Vec<Append> = Vec::new();
    // `recv` fails once every sender is gone: the server is shutting down and all is flushed.
    while let Ok(first) = rx.recv() {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let result = write_batch(&db, &tree, &batch);
        for append in batch.drain(..) {
            let outcome = match &result {
                Ok(()) => Ok(()),
                Err(e) => Err(StoreError::unavailable(e.clone())),
            };
            let _ = append.done.send(outcome);
        }
    }
    let _ = db.flush();
}

fn write_batch(db: &sled::Db, tree: &sled::Tree, batch: &[Append]) -> Result<(), String> {
    let started = std::time::Instant::now();
    let mut writes = sled::Batch::default();
    let mut records = 0;
    for append in batch {
        for record in &append.records {
            writes.insert(log_key(&append.game_id, record.seq), record.encode_to_vec());
            records += 1;
        }
    }
    tree.apply_batch(writes)
        .map_err(|e| format!("cannot write the log: {e}"))?;
    let appended = started.elapsed();
    db.flush()
        .map_err(|e| format!("cannot flush the log: {e}"))?;
    crate::metrics::log_committed(records, appended, started.elapsed() - appended);
    Ok(())
}
