//! The one place that talks to sled: the durable, append-only log of every game.
//!
//! Layout: one tree, `log`, keyed by `game id (16 bytes) ++ seq (u64 big-endian)`, valued by the
//! encoded `LogRecord`. A restart scans it once and rebuilds every game.
//!
//! Durability uses group commit: appends go over a channel to one dedicated OS thread (never a
//! tokio worker) that inserts everything that arrived meanwhile, calls one `flush`, then tells
//! each appender its records are durable. One flush thus serves every action of every game that
//! arrived during the previous flush.

use gangs_proto::v1 as pb;
use prost::Message;
use std::ops::Bound;
use std::path::Path;
use std::sync::mpsc as std_mpsc;
use tokio::sync::oneshot;

/// Game ids are 16 lowercase hex characters: the fixed-width prefix of every log key.
pub const GAME_ID_LEN: usize = 16;

/// Most appends folded into one flush; bounds the latency of the first appender in a batch.
const MAX_BATCH: usize = 4096;

#[derive(Debug)]
pub struct StoreError(pub String);

impl std::error::Error for StoreError {}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

struct Append {
    game_id: String,
    records: Vec<pb::LogRecord>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// sled's page cache.
const CACHE_BYTES: u64 = 32 * 1024 * 1024;

/// Handle to the log; cheap to clone.
#[derive(Clone)]
pub struct Store {
    tree: sled::Tree,
    appends: std_mpsc::Sender<Append>,
}

impl Store {
    /// Opens (or creates) the data dir and starts the flusher thread.
    pub fn open(dir: &Path) -> Result<(Store, FlusherHandle), StoreError> {
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
                sled::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => StoreError(
                    format!(
                        "the data dir {} is in use by another gangs-server (choose another --data-dir or stop that server)",
                        dir.display()
                    ),
                ),
                e => StoreError(format!("cannot open the data dir {}: {e}", dir.display())),
            })?;
        let tree = db
            .open_tree("log")
            .map_err(|e| StoreError(format!("cannot open the log tree: {e}")))?;
        let (tx, rx) = std_mpsc::channel::<Append>();
        let flusher_tree = tree.clone();
        let thread = std::thread::Builder::new()
            .name("gangs-flusher".into())
            .spawn(move || flusher(db, flusher_tree, rx))
            .map_err(|e| StoreError(format!("cannot start the flusher thread: {e}")))?;
        Ok((
            Store { tree, appends: tx },
            FlusherHandle {
                thread: Some(thread),
            },
        ))
    }

    /// Appends records of one game; the future resolves once they are flushed to disk.
    pub fn append(
        &self,
        game_id: &str,
        records: Vec<pb::LogRecord>,
    ) -> oneshot::Receiver<Result<(), StoreError>> {
        let (done, rx) = oneshot::channel();
        let append = Append {
            game_id: game_id.to_string(),
            records,
            done,
        };
        if let Err(std_mpsc::SendError(append)) = self.appends.send(append) {
            let _ = append
                .done
                .send(Err(StoreError("the store is shut down".into())));
        }
        rx
    }

    /// One game's records, in seq order (empty if the game is unknown).
    pub fn load_game(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        let mut records = Vec::new();
        for entry in self.tree.scan_prefix(game_id.as_bytes()) {
            let (key, value) = entry.map_err(read_error)?;
            game_id_of(&key)?;
            let record = pb::LogRecord::decode(value.as_ref())
                .map_err(|e| StoreError(format!("game {game_id}: undecodable record: {e}")))?;
            records.push(record);
        }
        Ok(records)
    }

    /// Every game id in the log, in order: one key read per game (each read skips past the
    /// rest of that game's records).
    pub fn game_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut ids = Vec::new();
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
        Ok(ids)
    }
}

fn read_error(e: sled::Error) -> StoreError {
    StoreError(format!("cannot read the log: {e}"))
}

/// The game id part of a log key (`game id ++ seq`), or the error a malformed key is.
fn game_id_of(key: &[u8]) -> Result<&[u8], StoreError> {
    if key.len() != GAME_ID_LEN + 8 {
        return Err(StoreError(format!(
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

/// Joins the flusher thread at shutdown, after every pending append was flushed.
pub struct FlusherHandle {
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FlusherHandle {
    /// Waits for the flusher to drain. Call after every `Store` clone is dropped.
    pub fn join(mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
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
                Err(e) => Err(StoreError(e.clone())),
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
