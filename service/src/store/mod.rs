//! The storage boundary: the durable, append-only log of every game, behind one trait.
//!
//! The actor, the registry and the API hold a [`Store`] (`Arc<dyn LogStore>`) and never know
//! which implementation is behind it:
//! - `sled.rs`: the embedded default (`--data-dir`), group commit on a dedicated thread;
//! - `jetstream.rs`: the distributed log on NATS JetStream (`--store nats://…`).
//!
//! # The contract every implementation keeps
//! - **Durable** means: the records survive a crash of this process (sled: flushed to disk;
//!   a replicated store: acknowledged by a quorum). An append's [`Durable`] resolves `Ok` only
//!   then, and the host tells nobody about a record before that (answers, updates, listings).
//! - **Ordering**: a game's records are numbered `1, 2, 3…` (`LogRecord::seq`), appended in that
//!   order by the one actor that owns the game. Appends of one game made through one handle
//!   become durable in the order they were made; a failed append fails every later append of
//!   that game that was in flight with it (the log ends before the first failed record, never
//!   with a hole; the actor leaves memory and the next call reloads the game from the log).
//! - **Each record follows the log's last record** (`seq` = the last stored seq + 1), whoever
//!   wrote that one: a record that does not (another writer appended first, or took the game
//!   over since this writer's actor loaded it) is refused, never stored as a second record
//!   with the same seq. The store checks this itself; what it remembers of a game's end is
//!   only used for the record that follows it. After a failed append, a game's later appends
//!   are refused until it is loaded to be written again ([`LogStore::load_to_write`]).
//! - **"Not saved" means not saved**: an append is reported failed only if no reader saw its
//!   records and no restart brings them back.
//! - **Damage is never silent**: a store that finds a game's records damaged (an undecodable
//!   record, a damaged sled journal) reports the game as damaged ([`ScannedGame::damaged`], or
//!   a [`StoreErrorKind::Corrupt`] read) and keeps serving the others.
//! - **A lost race** (another writer appended to the same game: two owners at once) resolves
//!   with [`StoreErrorKind::Conflict`]: nothing of the losing append is stored, the log is never
//!   forked. An embedded store has one writer per game by construction and never returns it.
//! - **Taking a game over** ([`LogStore::load_to_write`]): the log as it is, and from then on
//!   every append prepared before (by another node that owned the game, or an earlier actor of
//!   this node) is refused: a stale owner never has a record acknowledged that the new owner
//!   does not serve.
//! - **An append whose outcome is unknown** (an ack lost in a failover) is resolved by
//!   reading the log back before it is answered: stored means `Ok`.
//! - **Reads** see every durable record; [`LogStore::read_range`] reads a game in chunks so a
//!   long catch-up need not hold a whole log in memory.
//! - **Ids**: game ids are [`GAME_ID_LEN`] lowercase hex characters.
//! - **The directory feed** (optional: [`LogStore::feed_head`] is `None` without it): the records
//!   an append marks (a game created, a seat taken, started, over) get the next *position* of a
//!   server-wide feed, durable with the records themselves, in the order they became durable.
//!   Positions only grow and are never reused, so a reader that remembers one resumes after it
//!   with no gap and no duplicate, across restarts (`WatchGames`, the webhooks' outbox).
//!
//! # Namespaces
//! The store keeps two namespaces of logs ([`Namespace`]): the games' and the ladders' (each
//! ladder's event-sourced log, `ladder/records.rs`). A handle ([`Store`]) reads and writes one
//! of them ([`Logs`] holds both): listing the games never sees a ladder's log, nor the other way
//! round, and nobody tells them apart by their ids. Every rule above holds per log in each
//! namespace (the sequence rule, damage, takeover); the directory feed is one, server-wide, and
//! each of its entries names its namespace. sled keeps each namespace in its own tree,
//! JetStream in its own subjects of the one stream. A store written before namespaces existed
//! (ladders' logs among the games') is rearranged once, when it is opened (`sled.rs`,
//! `jetstream_layout.rs`).

mod chunks;
pub mod jetstream;
mod jetstream_append;
mod jetstream_feed;
mod jetstream_layout;
mod jetstream_modules;
mod journal;
mod journal_damage;
pub mod modules;
pub mod sled;

pub use journal_damage::OnJournalDamage;

use gangs_games::skim::LoggedRecord;
use gangs_proto::v1 as pb;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Game ids are 16 lowercase hex characters: the fixed-width prefix of every sled log key and
/// the last token of every stream subject.
pub const GAME_ID_LEN: usize = 16;

/// The log every part of the host uses, in one namespace; cheap to clone.
pub type Store = Arc<dyn LogStore>;

/// Which logs a handle reads and writes (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Namespace {
    /// The games' logs: what the registry rebuilds, lists and deletes.
    Games,
    /// The ladders' logs (`ladder/records.rs`).
    Ladders,
}

/// Both namespaces of one store: handles that share the store's writer and feed.
#[derive(Clone)]
pub struct Logs {
    pub games: Store,
    pub ladders: Store,
}

/// The ids of a store written before namespaces existed, whose logs were ladders': a ladder's
/// log id starts with this, a game's is hex (`ladder/records.rs`). Used only to rearrange such a
/// store when it is opened.
pub(crate) const LEGACY_LADDER_PREFIX: &str = "ladder";

/// Whether `id`, in a store of the layout before namespaces, was a ladder's log.
pub(crate) fn legacy_ladder_id(id: &str) -> bool {
    id.len() == GAME_ID_LEN && id.starts_with(LEGACY_LADDER_PREFIX)
}

/// Resolves once an append is durable (or failed). Dropped without an answer = the store stopped.
pub type Durable = oneshot::Receiver<Result<(), StoreError>>;

/// What went wrong, for the callers that react differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// Another writer appended to this game first: the append was not stored.
    Conflict,
    /// The store cannot be reached or refused the write/read (disk, network, shut down).
    Unavailable,
    /// What is stored cannot be understood (undecodable record, malformed key).
    Corrupt,
}

#[derive(Debug, Clone)]
pub struct StoreError {
    pub kind: StoreErrorKind,
    pub message: String,
}

impl StoreError {
    pub fn unavailable(message: impl Into<String>) -> StoreError {
        StoreError {
            kind: StoreErrorKind::Unavailable,
            message: message.into(),
        }
    }

    pub fn corrupt(message: impl Into<String>) -> StoreError {
        StoreError {
            kind: StoreErrorKind::Corrupt,
            message: message.into(),
        }
    }

    pub fn conflict(message: impl Into<String>) -> StoreError {
        StoreError {
            kind: StoreErrorKind::Conflict,
            message: message.into(),
        }
    }
}

impl std::error::Error for StoreError {}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// One entry of the directory feed: record `seq` of the log `game_id` of `namespace`, at
/// `position`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedEntry {
    pub position: u64,
    pub namespace: Namespace,
    pub game_id: String,
    pub seq: u64,
}

/// The durable log of every game (see the module doc for the contract).
#[async_trait::async_trait]
pub trait LogStore: Send + Sync + 'static {
    /// Appends records of one game (consecutive seqs, following the game's last record). Returns
    /// at once; the receiver resolves once the records are durable. Never blocks the caller.
    fn append(&self, game_id: &str, records: Vec<pb::LogRecord>) -> Durable {
        self.append_marked(game_id, records, Vec::new())
    }

    /// As [`LogStore::append`], with the seqs of the records that change the game's place in
    /// the directory (`marked`, possibly none): the store gives each the next position in its
    /// directory feed, durable together with the records.
    fn append_marked(
        &self,
        game_id: &str,
        records: Vec<pb::LogRecord>,
        marked: Vec<u64>,
    ) -> Durable {
        let records = records.into_iter().map(EncodedRecord::of).collect();
        self.append_encoded(game_id, records, marked)
    }

    /// As [`LogStore::append_marked`], each record with its encoding (the game's actor keeps
    /// its records encoded): the one method a store implements, writing those bytes instead of
    /// encoding the records again.
    fn append_encoded(
        &self,
        game_id: &str,
        records: Vec<EncodedRecord>,
        marked: Vec<u64>,
    ) -> Durable;

    /// Whether this store keeps hosted bots' modules apart from the logs ([`LogStore::put_module`]):
    /// a ladder's record then names its module by its SHA-256 alone. A store that does not
    /// keeps each module in the record that enters it.
    fn keeps_modules(&self) -> bool {
        false
    }

    /// Keeps a hosted bot's module once per content, under its SHA-256 (hex), durably before
    /// it returns (before any record names it): a module (a Python bot's component is tens of
    /// megabytes) can be larger than one append may be.
    async fn put_module(&self, sha256: &str, module: &[u8]) -> Result<(), StoreError> {
        let _ = (sha256, module);
        Err(StoreError::unavailable(
            "this store keeps no hosted modules",
        ))
    }

    /// The module kept under `sha256`; `None` if none is.
    async fn get_module(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let _ = sha256;
        Ok(None)
    }

    /// The newest durable position of the directory feed, as it changes; `None` when this
    /// store keeps no feed.
    fn feed_head(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }

    /// At most `limit` feed entries with `position > after`, in position order.
    async fn feed_after(&self, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
        let _ = (after, limit);
        Err(StoreError::unavailable(
            "this store keeps no directory feed",
        ))
    }

    /// The record a feed entry points at (`None`: the game was deleted since), whichever
    /// namespace the entry is of. The default reads it from this handle's log (a store that
    /// keeps a feed reads it from the entry's namespace, or by position).
    async fn feed_record(&self, entry: &FeedEntry) -> Result<Option<pb::LogRecord>, StoreError> {
        let records = self
            .read_range(&entry.game_id, entry.seq.saturating_sub(1), 1)
            .await?;
        Ok(records.into_iter().next().filter(|r| r.seq == entry.seq))
    }

    /// The feed position a reader saved under `name` (a webhook: its last delivered event);
    /// `None` if it never saved one.
    async fn load_mark(&self, name: &str) -> Result<Option<u64>, StoreError> {
        let _ = name;
        Err(StoreError::unavailable(
            "this store keeps no directory feed",
        ))
    }

    /// Saves a reader's feed position durably (returns once it is).
    async fn save_mark(&self, name: &str, position: u64) -> Result<(), StoreError> {
        let _ = (name, position);
        Err(StoreError::unavailable(
            "this store keeps no directory feed",
        ))
    }

    /// One game's records, in seq order, to run it: the caller becomes the game's only writer.
    /// Every append made before this call that is not in the records returned is refused
    /// (Conflict) from now on, whichever node or actor made it, and a game refused since a
    /// failed append is taken again. The default reads the game.
    async fn load_to_write(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        self.load_game(game_id).await
    }

    /// One game's records, in seq order (empty if the game is unknown).
    async fn load_game(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        let mut records = Vec::new();
        loop {
            let after = records.last().map_or(0, |r: &pb::LogRecord| r.seq);
            let chunk = self.read_range(game_id, after, READ_CHUNK).await?;
            let done = chunk.len() < READ_CHUNK;
            records.extend(chunk);
            if done {
                return Ok(records);
            }
        }
    }

    /// At most `limit` records of one game with `seq > after_seq`, in seq order. Fewer than
    /// `limit` means the end of the durable log was reached.
    async fn read_range(
        &self,
        game_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<pb::LogRecord>, StoreError>;

    /// Every game id in the log, in ascending order.
    async fn game_ids(&self) -> Result<Vec<String>, StoreError>;

    /// Every game's records in one pass (a restart), if this store reads that way faster than
    /// game by game; `None` makes [`scan`] read game by game. Call within a tokio runtime.
    fn scan_all(&self) -> Option<GameScan> {
        None
    }

    /// Removes a game's whole log (retention). Deleting an unknown game is not an error. The
    /// caller makes sure no actor is appending to the game meanwhile.
    async fn delete_game(&self, game_id: &str) -> Result<(), StoreError>;

    /// [`LogStore::delete_game`] for several games, one result per id in order. A store that
    /// pays a fixed cost per deletion pays it once here (sled: one checkpoint and one flush
    /// for the lot, not one per game: retention may find thousands of games due at once, and
    /// each checkpoint holds up every game's appends while it runs).
    async fn delete_games(&self, game_ids: &[String]) -> Vec<Result<(), StoreError>> {
        let mut results = Vec::with_capacity(game_ids.len());
        for id in game_ids {
            results.push(self.delete_game(id).await);
        }
        results
    }
}

/// One game as a [`scan`] reads it: its log, or why it cannot be read
/// ([`StoreErrorKind::Corrupt`]: the game is damaged, the scan goes on).
pub struct ScannedGame {
    pub id: String,
    pub log: Result<StoredLog, StoreError>,
    /// Why the store knows the game to be damaged although its log reads (its journal lost
    /// records of it: `store/journal_damage.rs`); the log is what is left, up to the damage.
    pub damaged: Option<String>,
}

/// A game's records as a store gave them: decoded, or as stored (each record's protobuf
/// encoding) for the reader to skim one at a time while it rebuilds the game
/// (`GameActor::rebuild`). sled's scan hands the bytes over: decoded on the scan's thread,
/// every record's many small allocations were freed on the rebuild's, and glibc's malloc
/// serialises such frees on the allocating thread's arena lock (a fifth of a restart's time in
/// futex waits, docs/performance.md).
pub enum StoredLog {
    Decoded(Vec<pb::LogRecord>),
    Encoded(Vec<RecordBytes>),
}

impl StoredLog {
    /// The records decoded; those that do not decode are left out (a damaged game's listing
    /// shows what it can).
    pub(crate) fn decoded(self, game_id: &str) -> Vec<pb::LogRecord> {
        match self {
            StoredLog::Decoded(records) => records,
            StoredLog::Encoded(encoded) => encoded
                .iter()
                .filter_map(|bytes| decode_record(game_id, bytes).ok())
                .collect(),
        }
    }

    /// How many records.
    pub(crate) fn len(&self) -> usize {
        match self {
            StoredLog::Decoded(records) => records.len(),
            StoredLog::Encoded(encoded) => encoded.len(),
        }
    }
}

/// One record's protobuf encoding, as the log stores it. Shared, not copied: the actor keeps
/// its records this way (`actor/records.rs`) and hands the same bytes to the store
/// ([`LogStore::append_encoded`]), whose sled log keeps them until its next checkpoint.
pub type RecordBytes = std::sync::Arc<[u8]>;

/// `record`'s encoding as the log stores it.
pub fn record_bytes(record: &pb::LogRecord) -> RecordBytes {
    <pb::LogRecord as prost::Message>::encode_to_vec(record).into()
}

/// A record to append, with its encoding (`bytes` is `record` encoded by [`record_bytes`]).
pub struct EncodedRecord {
    pub record: pb::LogRecord,
    pub bytes: RecordBytes,
}

impl EncodedRecord {
    /// `record` with its encoding, made now.
    pub fn of(record: pb::LogRecord) -> EncodedRecord {
        EncodedRecord {
            bytes: record_bytes(&record),
            record,
        }
    }
}

/// A record from its stored bytes; undecodable bytes are a corrupt log.
pub fn decode_record(game_id: &str, bytes: &[u8]) -> Result<pb::LogRecord, StoreError> {
    <pb::LogRecord as prost::Message>::decode(bytes).map_err(|e| undecodable(game_id, e))
}

/// A record skimmed from its stored bytes (`gangs_games::skim`: its events stay slices of
/// them, not copies); undecodable bytes are a corrupt log.
pub fn skim_record(game_id: &str, bytes: &RecordBytes) -> Result<LoggedRecord, StoreError> {
    LoggedRecord::skim(bytes::Bytes::from_owner(bytes.clone())).map_err(|e| undecodable(game_id, e))
}

fn undecodable(game_id: &str, e: prost::DecodeError) -> StoreError {
    StoreError::corrupt(format!("game {game_id}: undecodable record: {e}"))
}

/// Games in id order, a batch at a time, a few batches read ahead of the reader; an `Err`
/// item (the store cannot be read) ends it. Batches, not games: a restart reads thousands of
/// small games, and one hand-over between the scan's thread and the rebuild per game was a
/// thread wake-up per game (docs/performance.md).
pub type GameScan = mpsc::Receiver<Result<Vec<ScannedGame>, StoreError>>;

/// Games in a scan's batch (at most; a store that reads game by game sends them one by one).
pub const SCAN_BATCH: usize = 32;
/// Batches a scan reads ahead of its reader (with [`SCAN_BATCH`], bounds its memory to a
/// few logs).
pub const SCAN_AHEAD: usize = 4;

/// Every game of the log, game by game, for a restart: the store's own single pass when it
/// has one, else a task reading the games one by one.
pub fn scan(store: &Store) -> GameScan {
    if let Some(scan) = store.scan_all() {
        return scan;
    }
    let (tx, rx) = mpsc::channel(SCAN_AHEAD);
    let store = store.clone();
    tokio::spawn(async move {
        let ids = match store.game_ids().await {
            Ok(ids) => ids,
            Err(e) => return drop(tx.send(Err(e)).await),
        };
        for id in ids {
            let item = match store.load_game(&id).await {
                Err(e) if e.kind != StoreErrorKind::Corrupt => Err(e),
                records => Ok(vec![ScannedGame {
                    id,
                    log: records.map(StoredLog::Decoded),
                    damaged: None,
                }]),
            };
            let stop = item.is_err();
            if tx.send(item).await.is_err() || stop {
                return;
            }
        }
    });
    rx
}

/// What [`copy_log`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// Games copied (in whole or completed), and ladders.
    pub games: usize,
    pub ladders: usize,
    /// Records copied, of both.
    pub records: usize,
    /// Logs whose whole log was in the target already (a migration run twice).
    pub already_there: usize,
}

/// Copies every log of both namespaces from one store into another (`gangs-server migrate`),
/// one log at a time, each into its own namespace. A log the target already holds in part (a
/// copy cut short) is completed; one whose records differ from the source's is an error: the
/// target is never forked.
pub async fn copy_log(from: &Logs, to: &Logs) -> Result<Migrated, StoreError> {
    let mut done = Migrated::default();
    done.games = copy_namespace(&from.games, &to.games, &mut done).await?;
    done.ladders = copy_namespace(&from.ladders, &to.ladders, &mut done).await?;
    Ok(done)
}

/// [`copy_log`] of one namespace: the logs copied.
async fn copy_namespace(
    from: &Store,
    to: &Store,
    done: &mut Migrated,
) -> Result<usize, StoreError> {
    let mut copied = 0;
    for id in from.game_ids().await? {
        let records = from.load_game(&id).await?;
        let there = to.load_game(&id).await?;
        if there.len() > records.len() || records[..there.len()] != there[..] {
            return Err(StoreError::conflict(format!(
                "log {id} is in the target already with different records: not copied"
            )));
        }
        if there.len() == records.len() {
            done.already_there += 1;
            continue;
        }
        let rest = records[there.len()..].to_vec();
        let count = rest.len();
        // Appended in chunks, each durable before the next (bounded memory in flight).
        for chunk in rest.chunks(READ_CHUNK) {
            to.append(&id, chunk.to_vec())
                .await
                .map_err(|_| StoreError::unavailable("the target store stopped"))??;
        }
        copied += 1;
        done.records += count;
    }
    Ok(copied)
}

/// Records read per call when a whole game is loaded.
pub const READ_CHUNK: usize = 512;

/// Waits, at shutdown, until every append made before was answered. Call after every [`Store`]
/// clone is dropped.
pub struct StoreCloser(Option<Box<dyn FnOnce() + Send>>);

impl StoreCloser {
    pub fn new(finish: impl FnOnce() + Send + 'static) -> StoreCloser {
        StoreCloser(Some(Box::new(finish)))
    }

    /// Blocking: run it on a blocking thread.
    pub fn join(mut self) {
        if let Some(finish) = self.0.take() {
            finish();
        }
    }
}
