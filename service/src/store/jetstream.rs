//! The distributed log on NATS JetStream (`--store nats://…`): the one place that talks to NATS
//! for storage.
//!
//! Layout: one stream, `GANGS_LOG`, file storage, `--nats-replicas` copies; one subject per log,
//! `gangs.log.<game id>` for the games' namespace and `gangs.ladders.<ladder log id>` for the
//! ladders' (`store/mod.rs`); one message per record (the encoded `LogRecord`), and now and then
//! a *fence* (below): an empty message with the header `Gangs-Fence: <seq of the record
//! before>`, which every reader skips.
//!
//! Why subjects of one stream and not a stream per namespace: every rule below is per subject
//! (the expected last subject sequence, the fences of a takeover, the Msg-Id), so it holds in
//! each namespace unchanged; and the directory feed's positions are the stream's sequences
//! (`jetstream_feed.rs`), one order over the games' and the ladders' marked records (the
//! webhooks send both), which two streams would not give. A stream written before namespaces
//! (ladders' logs under `gangs.log.`) is rearranged once when opened (`jetstream_layout.rs`).
//!
//! Appends: one writer task per game publishes its records one after another, each with
//! - `Nats-Expected-Last-Subject-Sequence` = the stream sequence of the game's last message, so
//!   a second writer of the same game (two nodes both believing they own it) loses cleanly:
//!   its record is refused ([`StoreErrorKind::Conflict`]) and the log never forks;
//! - `Nats-Msg-Id` = `<game id>:<seq>:<hash of the record>`, so a publish retried after a lost
//!   ack (a NATS node died, the client reconnected) is not stored twice: the stream answers
//!   "duplicate" instead. The hash matters: the stream checks the Msg-Id *before* the expected
//!   sequence, so a different record with the same seq from a losing node must not pass as a
//!   duplicate of the winner's.
//!
//! The writer remembers the game's *tail* (the stream sequence and the record seq of the last
//! message it stored or read), and uses it only for the record that follows it (`seq + 1`);
//! any other record reads the tail from the stream first. That closes a fork once seen:
//! an actor rebuilt on the same node while the writer still retried its predecessor's record
//! N (a NATS election) queued its own record N behind it; once the old N landed, the cached
//! tail made the new N "follow" it, and the stream, asked only about stream sequences,
//! accepted two records N.
//!
//! **Fences** ([`LogStore::load_to_write`]): a node about to run a game (it took the game's
//! lease, or rebuilds it after a failure) reads the log and appends a fence expecting the
//! last message it read. From then on every append prepared by an earlier owner (a paused
//! process, a partitioned one, this node's previous actor) expects a sequence the stream no
//! longer has, and is refused: a stale owner never acknowledges a record the new owner does
//! not serve. The ownership epoch is thus part of what the stream checks, not only the lease.
//!
//! An append whose outcome is unknown (the ack lost in an election, the retry budget spent)
//! or refused as out of date is resolved by reading the stream back: if the game's last
//! record is this very record, the append succeeded; otherwise it did not.
//!
//! A record is durable when the stream acknowledged it: with replicas 3, a quorum has it. Games
//! write in parallel (one task each); one game's records wait for the previous ack, which the
//! expected-sequence check needs anyway.
//!
//! Reads go through the stream leader (`STREAM.MSG.GET`, last or next message of a subject),
//! so a read sees every acknowledged record (a direct get from a lagging replica might not).
//! Ranged reads (watchers' catch-ups) use no consumer at all: reconnecting watchers cannot
//! exhaust the stream's consumer limit. Loading a whole game uses one ordered consumer, at
//! most [`LOAD_CONSUMERS`] at a time per node.

use super::jetstream_append::{self as append, Append, HoldPoint, Tail, Writers};
use super::jetstream_feed::{self as feed, Feed};
use super::jetstream_layout as layout;
use super::{
    Durable, EncodedRecord, FeedEntry, LogStore, Logs, Namespace, StoreError, GAME_ID_LEN,
};
use async_nats::jetstream::{self, consumer, stream};
use async_nats::HeaderMap;
use gangs_proto::v1 as pb;
use prost::Message;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio_stream::StreamExt;

pub const STREAM: &str = "GANGS_LOG";
/// The subjects of the games' namespace: this and the game id.
pub const SUBJECT_PREFIX: &str = "gangs.log.";
/// The subjects of the ladders' namespace: this and the ladder's log id.
pub const LADDERS_SUBJECT_PREFIX: &str = "gangs.ladders.";
/// The header of a fence message; its value is the seq of the record before it.
pub const FENCE_HEADER: &str = "Gangs-Fence";
/// The header of a record that enters the directory feed; its value is the record's seq
/// (read by the feed's headers-only consumers, which never see the record itself).
pub const MARK_HEADER: &str = "Gangs-Mark";

/// How a node reaches NATS (`--store`, `--nats-creds`, `--nats-user`/`--nats-password`).
#[derive(Debug, Clone, Default)]
pub struct NatsOptions {
    /// `nats://HOST:PORT[,HOST:PORT…]` (credentials in the URL work too).
    pub url: String,
    /// 1 or 3 copies of every record (a stream that exists keeps its own setting).
    pub replicas: usize,
    pub creds_file: Option<std::path::PathBuf>,
    pub user: Option<String>,
    pub password: Option<String>,
}

/// How long a publish or a read may wait for its answer before it is retried.
pub(super) const ACK_TIMEOUT: Duration = Duration::from_secs(3);
/// Whole-game loads (one ordered consumer each) running at once on one node: a consumer per
/// load, never one per watcher, and never more than this many.
pub const LOAD_CONSUMERS: usize = 8;
/// Ranged reads remembered (game, record seq -> stream sequence) so that the next chunk of a
/// catch-up starts where the previous one ended instead of at the game's first message.
const CURSORS: usize = 4096;

/// The JetStream log, one namespace of it (handles of both share everything else). Share it
/// as a [`super::Store`].
#[derive(Clone)]
pub struct JetStreamStore {
    namespace: Namespace,
    js: jetstream::Context,
    stream: stream::Stream,
    writers: Writers,
    loads: Arc<Semaphore>,
    /// By (subject, record seq).
    cursors: Arc<Mutex<HashMap<(String, u64), u64>>>,
    /// A test-only fail point (debug builds): see [`HoldPoint`].
    hold: Option<Arc<HoldPoint>>,
    /// The directory feed: its head, its recent entries, the readers' marks.
    feed: Feed,
    /// Hosted bots' modules (`jetstream_modules.rs`), the bucket opened on first use.
    modules: Arc<tokio::sync::OnceCell<async_nats::jetstream::object_store::ObjectStore>>,
    /// Copies of each message the cluster keeps (`--nats-replicas`).
    replicas: usize,
}

/// The subjects' prefix of a namespace.
pub fn subject_prefix(namespace: Namespace) -> &'static str {
    match namespace {
        Namespace::Games => SUBJECT_PREFIX,
        Namespace::Ladders => LADDERS_SUBJECT_PREFIX,
    }
}

/// The subject of log `id` of `namespace`.
pub fn subject(namespace: Namespace, id: &str) -> String {
    format!("{}{id}", subject_prefix(namespace))
}

/// The namespace and log id of a subject of the stream (`None`: not a log's subject).
pub fn log_of_subject(subject: &str) -> Option<(Namespace, &str)> {
    [Namespace::Games, Namespace::Ladders]
        .into_iter()
        .find_map(|namespace| {
            let id = subject.strip_prefix(subject_prefix(namespace))?;
            (id.len() == GAME_ID_LEN && !id.contains('.')).then_some((namespace, id))
        })
}

pub(super) fn unavailable(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::unavailable(format!("NATS: {what}: {e}"))
}

/// One message of a game's subject: a record, or a fence.
pub(super) enum Stored {
    /// Boxed: a fence is one number, a record a tree.
    Record(Box<pb::LogRecord>),
    /// A fence written after the record with this seq (0: before any record).
    Fence(u64),
}

/// Decodes a message of `game_id`'s subject (stored at `sequence`).
pub(super) fn decode(
    game_id: &str,
    headers: Option<&HeaderMap>,
    payload: &[u8],
    sequence: u64,
) -> Result<Stored, StoreError> {
    if let Some(fence) = headers.and_then(|h| h.get(FENCE_HEADER)) {
        let after: &str = fence.as_ref();
        return after.parse().map(Stored::Fence).map_err(|_| {
            StoreError::corrupt(format!(
                "game {game_id}: bad fence {after:?} at stream sequence {sequence}"
            ))
        });
    }
    pb::LogRecord::decode(payload)
        .map(|record| Stored::Record(Box::new(record)))
        .map_err(|e| {
            StoreError::corrupt(format!(
                "game {game_id}: undecodable record at stream sequence {sequence}: {e}"
            ))
        })
}

/// The last message of a game's subject as the stream leader has it: its tail, and the last
/// record if that message is a record (not a fence). `None`: the game has no message.
pub(super) async fn read_tail(
    stream: &stream::Stream,
    subject: &str,
    game_id: &str,
) -> Result<Option<(Tail, Option<pb::LogRecord>)>, StoreError> {
    let message = match stream.get_last_raw_message_by_subject(subject).await {
        Ok(message) => message,
        Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => return Ok(None),
        Err(e) => return Err(unavailable("cannot read the log", e)),
    };
    Ok(Some(
        match decode(
            game_id,
            Some(&message.headers),
            &message.payload,
            message.sequence,
        )? {
            Stored::Record(record) => (
                Tail {
                    stream_seq: message.sequence,
                    record_seq: record.seq,
                },
                Some(*record),
            ),
            Stored::Fence(after) => (
                Tail {
                    stream_seq: message.sequence,
                    record_seq: after,
                },
                None,
            ),
        },
    ))
}

/// Connects with the options' credentials; `name` tells operators which process this is.
pub async fn connect(options: &NatsOptions, name: &str) -> Result<async_nats::Client, StoreError> {
    let mut connect = async_nats::ConnectOptions::new()
        .name(name)
        .retry_on_initial_connect()
        .max_reconnects(None::<usize>);
    if let Some(path) = &options.creds_file {
        connect = connect
            .credentials_file(path)
            .await
            .map_err(|e| unavailable(&format!("cannot read {}", path.display()), e))?;
    }
    if let (Some(user), Some(password)) = (&options.user, &options.password) {
        connect = connect.user_and_password(user.clone(), password.clone());
    }
    let servers: Vec<async_nats::ServerAddr> = options
        .url
        .split(',')
        .map(|s| s.trim().parse())
        .collect::<Result<_, _>>()
        .map_err(|e| unavailable(&format!("bad --store {:?}", options.url), e))?;
    // `retry_on_initial_connect` returns at once; the first request waits for the connection.
    tokio::time::timeout(Duration::from_secs(30), connect.connect(servers))
        .await
        .map_err(|_| StoreError::unavailable(format!("NATS: cannot reach {}", options.url)))?
        .map_err(|e| unavailable(&format!("cannot connect to {}", options.url), e))
}

impl JetStreamStore {
    /// Connects and creates the stream if it does not exist yet; the games' namespace.
    pub async fn open(options: &NatsOptions) -> Result<Arc<JetStreamStore>, StoreError> {
        let client = connect(options, "gangs-server").await?;
        JetStreamStore::with_client(client, options.replicas).await
    }

    /// [`JetStreamStore::open`], both namespaces.
    pub async fn open_logs(options: &NatsOptions) -> Result<Logs, StoreError> {
        let games = JetStreamStore::open(options).await?;
        Ok(Logs {
            ladders: games.in_namespace(Namespace::Ladders),
            games,
        })
    }

    /// A handle on the same store for `namespace`.
    pub fn in_namespace(&self, namespace: Namespace) -> Arc<JetStreamStore> {
        Arc::new(JetStreamStore {
            namespace,
            ..self.clone()
        })
    }

    /// The subject of this namespace's log `id`.
    fn subject(&self, id: &str) -> String {
        subject(self.namespace, id)
    }

    pub async fn with_client(
        client: async_nats::Client,
        replicas: usize,
    ) -> Result<Arc<JetStreamStore>, StoreError> {
        let js = jetstream::ContextBuilder::new()
            .ack_timeout(ACK_TIMEOUT)
            .timeout(ACK_TIMEOUT)
            .build(client);
        let config = stream::Config {
            name: STREAM.to_string(),
            subjects: layout::subjects(),
            storage: stream::StorageType::File,
            num_replicas: replicas.max(1),
            // Msg-Id dedup window: longer than any retry of one append.
            duplicate_window: Duration::from_secs(120),
            metadata: layout::metadata(),
            ..Default::default()
        };
        let stream = while_jetstream_starts(STREAM, || js.get_or_create_stream(config.clone()))
            .await
            .map_err(|e| unavailable("cannot create the stream GANGS_LOG", e))?;
        // A stream made before namespaces takes the ladders' subjects first.
        let stream = layout::with_every_subject(&js, stream).await?;
        let feed = Feed::open(&js, &stream, replicas).await?;
        let store = JetStreamStore {
            namespace: Namespace::Games,
            js,
            stream,
            writers: Writers::default(),
            loads: Arc::new(Semaphore::new(LOAD_CONSUMERS)),
            cursors: Arc::default(),
            hold: HoldPoint::from_env(),
            feed,
            modules: Arc::default(),
            replicas,
        };
        layout::move_legacy_ladders(&store).await?;
        Ok(Arc::new(store))
    }

    /// The JetStream context (the cluster's lease bucket lives beside the stream).
    pub fn context(&self) -> jetstream::Context {
        self.js.clone()
    }

    pub(super) fn stream(&self) -> &stream::Stream {
        &self.stream
    }

    pub(super) fn feed(&self) -> &Feed {
        &self.feed
    }

    /// The hosted modules' bucket, opened (or made) on first use.
    async fn modules(
        &self,
    ) -> Result<&async_nats::jetstream::object_store::ObjectStore, StoreError> {
        self.modules
            .get_or_try_init(|| super::jetstream_modules::open(&self.js, self.replicas))
            .await
    }

    /// Starts a game's writer (its tail known, or to be read) and makes it the one appends go
    /// to from now on; a writer it replaces ends after its queue (its appends expect a
    /// sequence the stream has moved past, if a fence was written meanwhile).
    fn start_writer(
        &self,
        writers: &mut HashMap<String, mpsc::UnboundedSender<Append>>,
        game_id: &str,
        tail: Option<Tail>,
    ) -> mpsc::UnboundedSender<Append> {
        let (tx, appends) = mpsc::unbounded_channel();
        let subject = self.subject(game_id);
        writers.insert(subject.clone(), tx.clone());
        tokio::spawn(append::write_game(
            append::Writer {
                js: self.js.clone(),
                stream: self.stream.clone(),
                writers: self.writers.clone(),
                game_id: game_id.to_string(),
                subject,
                hold: self.hold.clone(),
                me: tx.downgrade(),
            },
            appends,
            tail,
        ));
        tx
    }

    /// Where a ranged read after `after` starts: the stream sequence after the record the
    /// previous read of this game ended with, if remembered.
    fn cursor(&self, game_id: &str, after: u64) -> u64 {
        let cursors = self.cursors.lock().expect("cursors lock");
        cursors
            .get(&(self.subject(game_id), after))
            .map_or(1, |seq| seq + 1)
    }

    fn remember_cursor(&self, game_id: &str, record_seq: u64, stream_seq: u64) {
        let mut cursors = self.cursors.lock().expect("cursors lock");
        if cursors.len() >= CURSORS {
            // Forgetting costs the next read a walk from the game's start, nothing else.
            cursors.clear();
        }
        cursors.insert((self.subject(game_id), record_seq), stream_seq);
    }
}

/// How long a node waits at start for JetStream to answer (a cluster electing its leaders).
const START_BUDGET: Duration = Duration::from_secs(30);

/// Runs `open` (create or open a stream or bucket named `what`) until it succeeds or
/// [`START_BUDGET`] has passed: a node often starts while the NATS cluster is still electing
/// its meta leader (all of it starting, or one NATS node just restarted). The last error if
/// none succeeded.
pub async fn while_jetstream_starts<T, E, F>(
    what: &str,
    mut open: impl FnMut() -> F,
) -> Result<T, E>
where
    E: std::fmt::Display,
    F: std::future::Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + START_BUDGET;
    loop {
        match open().await {
            Err(e) if tokio::time::Instant::now() < deadline => {
                tracing::info!(what, "waiting for JetStream: {e}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            done => return done,
        }
    }
}

#[async_trait::async_trait]
impl LogStore for JetStreamStore {
    /// Modules live in the object store bucket `GANGS_MODULES` (`jetstream_modules.rs`).
    fn keeps_modules(&self) -> bool {
        true
    }

    async fn put_module(&self, sha256: &str, module: &[u8]) -> Result<(), StoreError> {
        super::jetstream_modules::put(self.modules().await?, sha256, module).await
    }

    async fn get_module(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        super::jetstream_modules::get(self.modules().await?, sha256).await
    }

    /// Publishes the caller's bytes as each record's message.
    fn append_encoded(
        &self,
        game_id: &str,
        records: Vec<EncodedRecord>,
        marked: Vec<u64>,
    ) -> Durable {
        let (done, rx) = oneshot::channel();
        let mut append = Append {
            records,
            marked,
            done,
        };
        let mut writers = self.writers.lock().expect("writers lock");
        // A writer that ended (failure, idle) is replaced by a fresh one.
        if let Some(writer) = writers.get(&self.subject(game_id)) {
            match writer.send(append) {
                Ok(()) => return rx,
                Err(mpsc::error::SendError(back)) => append = back,
            }
        }
        let writer = self.start_writer(&mut writers, game_id, None);
        writer.send(append).expect("the writer was just started");
        rx
    }

    fn feed_head(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.feed.head())
    }

    async fn feed_after(&self, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
        if let Some(entries) = self.feed.recent_after(after, limit) {
            return Ok(entries);
        }
        // Further back than the entries this node keeps: read the stream's headers from there.
        let _permit = self
            .loads
            .acquire()
            .await
            .map_err(|_| StoreError::unavailable("the store is closing"))?;
        feed::scan(&self.stream, after, limit).await
    }

    async fn feed_record(&self, entry: &FeedEntry) -> Result<Option<pb::LogRecord>, StoreError> {
        // The position is the record's own stream sequence: one get, not a walk of the game.
        let message = match self.stream.get_raw_message(entry.position).await {
            Ok(message) => message,
            Err(e) if e.kind() == stream::RawMessageErrorKind::NoMessageFound => return Ok(None),
            Err(e) => return Err(unavailable("cannot read the log", e)),
        };
        if message.subject.as_str() != subject(entry.namespace, &entry.game_id) {
            return Ok(None);
        }
        match decode(
            &entry.game_id,
            Some(&message.headers),
            &message.payload,
            message.sequence,
        )? {
            Stored::Record(record) if record.seq == entry.seq => Ok(Some(*record)),
            _ => Ok(None),
        }
    }

    async fn load_mark(&self, name: &str) -> Result<Option<u64>, StoreError> {
        self.feed.load_mark(name).await
    }

    async fn save_mark(&self, name: &str, position: u64) -> Result<(), StoreError> {
        self.feed.save_mark(name, position).await
    }

    async fn load_to_write(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        for _ in 0..FENCE_TRIES {
            let Some((tail, _)) = read_tail(&self.stream, &self.subject(game_id), game_id).await?
            else {
                // No game: nothing to fence. A creation's first record expects an empty
                // subject, which is its own fence.
                return Ok(Vec::new());
            };
            let records = self.load_game(game_id).await?;
            if records.last().map_or(0, |r| r.seq) != tail.record_seq {
                // A record landed between the two reads (or the read lagged): read again.
                continue;
            }
            match append::fence(&self.js, &self.subject(game_id), game_id, tail).await? {
                Some(fence) => {
                    let mut writers = self.writers.lock().expect("writers lock");
                    self.start_writer(&mut writers, game_id, Some(fence));
                    tracing::debug!(
                        game = game_id,
                        after = tail.record_seq,
                        "fenced the log: earlier writers' appends are refused"
                    );
                    return Ok(records);
                }
                // Someone appended after what was read: read again.
                None => continue,
            }
        }
        Err(StoreError::unavailable(format!(
            "game {game_id} kept changing while this node loaded it (another node is writing it): retry"
        )))
    }

    async fn read_range(
        &self,
        game_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<pb::LogRecord>, StoreError> {
        // One leader-served get per message (next message of the subject from a sequence on):
        // no consumer, whatever the number of readers.
        let subject = self.subject(game_id);
        let mut records = Vec::new();
        let mut next = self.cursor(game_id, after_seq);
        while records.len() < limit {
            let message = match self
                .stream
                .raw_message_builder()
                .sequence(next)
                .next_by_subject(subject.clone())
                .send()
                .await
            {
                Ok(message) => message,
                Err(e) if e.kind() == stream::RawMessageErrorKind::NoMessageFound => break,
                Err(e) => return Err(unavailable("cannot read the log", e)),
            };
            next = message.sequence + 1;
            let decoded = decode(
                game_id,
                Some(&message.headers),
                &message.payload,
                message.sequence,
            )?;
            if let Stored::Record(record) = decoded {
                if record.seq > after_seq {
                    records.push(*record);
                }
            }
        }
        if let Some(last) = records.last() {
            self.remember_cursor(game_id, last.seq, next - 1);
        }
        Ok(records)
    }

    async fn load_game(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        let mut records = Vec::new();
        if read_tail(&self.stream, &self.subject(game_id), game_id)
            .await?
            .is_none()
        {
            return Ok(records);
        }
        // One consumer streams the whole game (a get per record would cost a round trip
        // each); a bounded number at a time.
        let _permit = self
            .loads
            .acquire()
            .await
            .map_err(|_| StoreError::unavailable("the store is closing"))?;
        let consumer = self
            .stream
            .create_consumer(consumer::pull::OrderedConfig {
                filter_subject: self.subject(game_id),
                deliver_policy: consumer::DeliverPolicy::All,
                ..Default::default()
            })
            .await
            .map_err(|e| unavailable("cannot read the log", e))?;
        let mut messages = consumer
            .messages()
            .await
            .map_err(|e| unavailable("cannot read the log", e))?;
        while let Some(message) = tokio::time::timeout(ACK_TIMEOUT * 2, messages.next())
            .await
            .map_err(|_| StoreError::unavailable("NATS: reading the log timed out"))?
        {
            let message = message.map_err(|e| unavailable("cannot read the log", e))?;
            let info = message
                .info()
                .map_err(|e| unavailable("cannot read the log", e))?;
            let (sequence, pending) = (info.stream_sequence, info.pending);
            if let Stored::Record(record) = decode(
                game_id,
                message.headers.as_ref(),
                &message.payload,
                sequence,
            )? {
                records.push(*record);
            }
            if pending == 0 {
                break;
            }
        }
        Ok(records)
    }

    async fn game_ids(&self) -> Result<Vec<String>, StoreError> {
        let stream = self.stream.clone();
        let prefix = subject_prefix(self.namespace);
        let mut subjects = stream
            .info_with_subjects(format!("{prefix}*"))
            .await
            .map_err(|e| unavailable("cannot list the games", e))?;
        let mut ids = Vec::new();
        while let Some(entry) = subjects.next().await {
            let (subject, _count) = entry.map_err(|e| unavailable("cannot list the games", e))?;
            match log_of_subject(&subject) {
                Some((namespace, id)) if namespace == self.namespace => ids.push(id.to_string()),
                _ => {
                    return Err(StoreError::corrupt(format!(
                        "unexpected subject {subject:?} in stream {STREAM}"
                    )))
                }
            }
        }
        ids.sort();
        Ok(ids)
    }

    async fn delete_game(&self, game_id: &str) -> Result<(), StoreError> {
        self.stream
            .purge()
            .filter(self.subject(game_id))
            .await
            .map_err(|e| unavailable(&format!("cannot delete game {game_id}"), e))?;
        // The next append of this id (none expected) must not expect the purged sequence.
        self.writers
            .lock()
            .expect("writers lock")
            .remove(&self.subject(game_id));
        Ok(())
    }
}

/// Reads and fences tried before a load gives up (each retry means another node appended to
/// the game meanwhile).
const FENCE_TRIES: usize = 5;
