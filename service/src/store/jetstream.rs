//! The distributed log on NATS JetStream (`--store nats://…`): the one place that talks to NATS
//! for storage.
//!
//! Layout: one stream, `GANGS_LOG`, file storage, `--nats-replicas` copies; one subject per game,
//! `gangs.log.<game id>`; one message per record (the encoded `LogRecord`).
//!
//! Appends: one writer task per game publishes its records one after another, each with
//! - `Nats-Expected-Last-Subject-Sequence` = the stream sequence of the game's previous record,
//!   so a second writer of the same game (two nodes both believing they own it) loses cleanly:
//!   its record is refused ([`StoreErrorKind::Conflict`]) and the log never forks;
//! - `Nats-Msg-Id` = `<game id>:<seq>:<hash of the record>`, so a publish retried after a lost
//!   ack (a NATS node died, the client reconnected) is not stored twice: the stream answers
//!   "duplicate" instead. The hash matters: the stream checks the Msg-Id *before* the expected
//!   sequence, so a different record with the same seq from a losing node must not pass as a
//!   duplicate of the winner's.
//!
//! A record is durable when the stream acknowledged it: with replicas 3, a quorum has it. Games
//! write in parallel (one task each); one game's records wait for the previous ack, which the
//! expected-sequence check needs anyway.
//!
//! Conflict is [`super::StoreErrorKind::Conflict`].
//!
//! Reads go through ordered consumers (served by the stream leader, so a read sees every
//! acknowledged record; a direct get from a lagging replica might not).

use super::{Durable, LogStore, StoreError, GAME_ID_LEN};
use async_nats::jetstream::{self, consumer, context::PublishErrorKind, stream};
use gangs_proto::v1 as pb;
use prost::Message;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::StreamExt;

pub const STREAM: &str = "GANGS_LOG";
pub const SUBJECT_PREFIX: &str = "gangs.log.";

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

/// How long a publish may wait for its ack before it is retried (same Msg-Id: safe).
const ACK_TIMEOUT: Duration = Duration::from_secs(3);
/// How long an append keeps retrying through a NATS outage (leader election, reconnect)
/// before the game is stopped as unavailable.
const OUTAGE_BUDGET: Duration = Duration::from_secs(20);

/// The JetStream log. Share it as a [`super::Store`].
pub struct JetStreamStore {
    js: jetstream::Context,
    stream: stream::Stream,
    writers: Writers,
}

/// The writer of each game that appended recently.
type Writers = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Append>>>>;

/// A game's writer ends after this long without appends (a finished or idle game).
const WRITER_IDLE: Duration = Duration::from_secs(30);

struct Append {
    records: Vec<pb::LogRecord>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

pub fn subject(game_id: &str) -> String {
    format!("{SUBJECT_PREFIX}{game_id}")
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::unavailable(format!("NATS: {what}: {e}"))
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
    /// Connects and creates the stream if it does not exist yet.
    pub async fn open(options: &NatsOptions) -> Result<Arc<JetStreamStore>, StoreError> {
        let client = connect(options, "gangs-server").await?;
        JetStreamStore::with_client(client, options.replicas).await
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
            subjects: vec![format!("{SUBJECT_PREFIX}*")],
            storage: stream::StorageType::File,
            num_replicas: replicas.max(1),
            // Msg-Id dedup window: longer than any retry of one append.
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        };
        let stream = while_jetstream_starts(STREAM, || js.get_or_create_stream(config.clone()))
            .await
            .map_err(|e| unavailable("cannot create the stream GANGS_LOG", e))?;
        Ok(Arc::new(JetStreamStore {
            js,
            stream,
            writers: Writers::default(),
        }))
    }

    /// The JetStream context (the cluster's lease bucket lives beside the stream).
    pub fn context(&self) -> jetstream::Context {
        self.js.clone()
    }

    /// The stream sequence of a game's last record (0 when the game has none).
    async fn last_stream_seq(&self, game_id: &str) -> Result<u64, StoreError> {
        last_stream_seq(&self.stream, game_id).await
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

async fn last_stream_seq(stream: &stream::Stream, game_id: &str) -> Result<u64, StoreError> {
    match stream
        .get_last_raw_message_by_subject(&subject(game_id))
        .await
    {
        Ok(message) => Ok(message.sequence),
        Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(0),
        Err(e) => Err(unavailable("cannot read the log", e)),
    }
}

/// Where a writer that knows nothing of a game yet appends `record`.
enum Expected {
    /// After the message with this stream sequence (0: the game's first record).
    After(u64),
    /// The very same record is already the game's last (a retry): stored at this sequence.
    AlreadyStored(u64),
}

/// Reads the game's last message and checks that `record` follows it. The expected-sequence
/// header alone only proves that nobody wrote between this read and the publish; the record's
/// own seq proves that the log this writer continues is the one it was built from, so a writer
/// whose game moved on elsewhere gets a Conflict instead of appending a second record N.
async fn expected_before(
    stream: &stream::Stream,
    game_id: &str,
    record: &pb::LogRecord,
) -> Result<Expected, StoreError> {
    let conflict = |found: u64| {
        StoreError::conflict(format!(
            "game {game_id}: record {} does not follow the log's last record {found} (another node appended to it)",
            record.seq
        ))
    };
    let message = match stream
        .get_last_raw_message_by_subject(&subject(game_id))
        .await
    {
        Ok(message) => message,
        Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => {
            return if record.seq == 1 {
                Ok(Expected::After(0))
            } else {
                Err(conflict(0))
            };
        }
        Err(e) => return Err(unavailable("cannot read the log", e)),
    };
    let stored = pb::LogRecord::decode(message.payload.as_ref()).map_err(|e| {
        StoreError::corrupt(format!(
            "game {game_id}: undecodable record at stream sequence {}: {e}",
            message.sequence
        ))
    })?;
    if stored.seq + 1 == record.seq {
        Ok(Expected::After(message.sequence))
    } else if stored == *record {
        Ok(Expected::AlreadyStored(message.sequence))
    } else {
        Err(conflict(stored.seq))
    }
}

/// One game's writer: publishes each append's records in order, each expecting the previous
/// one's stream sequence. Ends when idle (the store forgets it) or after a failure (every
/// queued append fails with it, and the next append starts from the stream's state again).
async fn write_game(
    js: jetstream::Context,
    stream: stream::Stream,
    writers: Writers,
    game_id: String,
    mut appends: mpsc::UnboundedReceiver<Append>,
) {
    let subject = subject(&game_id);
    let mut last: Option<u64> = None;
    loop {
        let append = match tokio::time::timeout(WRITER_IDLE, appends.recv()).await {
            Ok(Some(append)) => append,
            Ok(None) => return,
            Err(_idle) => {
                // Under the lock no append can slip in between the check and the removal.
                let mut writers = writers.lock().expect("writers lock");
                if appends.is_empty() {
                    writers.remove(&game_id);
                    return;
                }
                continue;
            }
        };
        let mut result = Ok(());
        for record in &append.records {
            let expected = match last {
                Some(seq) => seq,
                None => match expected_before(&stream, &game_id, record).await {
                    Ok(Expected::After(seq)) => seq,
                    Ok(Expected::AlreadyStored(seq)) => {
                        last = Some(seq);
                        continue;
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                },
            };
            match publish(&js, &subject, &game_id, record, expected).await {
                Ok(seq) => last = Some(seq),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let _ = append.done.send(result.clone());
        if let Err(error) = result {
            // Whatever was queued behind a failure fails too: a log never has a hole.
            appends.close();
            while let Some(queued) = appends.recv().await {
                let _ = queued.done.send(Err(error.clone()));
            }
            return;
        }
    }
}

/// Publishes one record; retried through an outage with the same Msg-Id. Returns its stream
/// sequence.
async fn publish(
    js: &jetstream::Context,
    subject: &str,
    game_id: &str,
    record: &pb::LogRecord,
    expected: u64,
) -> Result<u64, StoreError> {
    let payload: bytes::Bytes = record.encode_to_vec().into();
    let msg_id = msg_id(game_id, record.seq, &payload);
    let give_up = tokio::time::Instant::now() + OUTAGE_BUDGET;
    let mut pause = Duration::from_millis(50);
    loop {
        let message = jetstream::message::PublishMessage::build()
            .payload(payload.clone())
            .message_id(&msg_id)
            .expected_last_subject_sequence(expected);
        let outcome = match js.send_publish(subject.to_string(), message).await {
            Ok(ack) => ack.await,
            Err(e) => Err(e),
        };
        let error = match outcome {
            Ok(ack) => return Ok(ack.sequence),
            Err(e) => e,
        };
        match error.kind() {
            PublishErrorKind::WrongLastSequence => {
                return Err(StoreError::conflict(format!(
                    "game {game_id}: another node appended record {} first (this node no longer owns the game)",
                    record.seq
                )))
            }
            PublishErrorKind::TimedOut
            | PublishErrorKind::BrokenPipe
            | PublishErrorKind::MaxAckPending
            | PublishErrorKind::Other
            | PublishErrorKind::StreamNotFound
                if tokio::time::Instant::now() < give_up =>
            {
                tracing::warn!(game = game_id, seq = record.seq, "append retried: {error}");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            _ => return Err(unavailable(&format!("cannot append to game {game_id}"), error)),
        }
    }
}

/// The dedup id of one record: the same record retried gets the same id, a different record
/// with the same seq (another writer's) does not.
fn msg_id(game_id: &str, seq: u64, payload: &[u8]) -> String {
    use std::hash::{Hash, Hasher};
    // `DefaultHasher::new()` uses fixed keys: the same bytes hash the same in every process.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    payload.hash(&mut hasher);
    format!("{game_id}:{seq}:{:016x}", hasher.finish())
}

#[async_trait::async_trait]
impl LogStore for JetStreamStore {
    fn append(&self, game_id: &str, records: Vec<pb::LogRecord>) -> Durable {
        let (done, rx) = oneshot::channel();
        let mut append = Append { records, done };
        let mut writers = self.writers.lock().expect("writers lock");
        // A writer that ended (failure) is replaced by a fresh one.
        if let Some(writer) = writers.get(game_id) {
            match writer.send(append) {
                Ok(()) => return rx,
                Err(mpsc::error::SendError(back)) => append = back,
            }
        }
        let (tx, appends) = mpsc::unbounded_channel();
        tx.send(append).expect("the receiver is here");
        writers.insert(game_id.to_string(), tx);
        tokio::spawn(write_game(
            self.js.clone(),
            self.stream.clone(),
            self.writers.clone(),
            game_id.to_string(),
            appends,
        ));
        rx
    }

    async fn read_range(
        &self,
        game_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<pb::LogRecord>, StoreError> {
        let mut records = Vec::new();
        if limit == 0 || self.last_stream_seq(game_id).await? == 0 {
            return Ok(records);
        }
        let consumer = self
            .stream
            .create_consumer(consumer::pull::OrderedConfig {
                filter_subject: subject(game_id),
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
            let record = pb::LogRecord::decode(message.payload.as_ref()).map_err(|e| {
                StoreError::corrupt(format!("game {game_id}: undecodable record: {e}"))
            })?;
            let pending = message
                .info()
                .map_err(|e| unavailable("cannot read the log", e))?
                .pending;
            if record.seq > after_seq {
                records.push(record);
            }
            if records.len() >= limit || pending == 0 {
                break;
            }
        }
        Ok(records)
    }

    async fn load_game(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        // One consumer for the whole game (ranged reads start a consumer each).
        self.read_range(game_id, 0, usize::MAX).await
    }

    async fn game_ids(&self) -> Result<Vec<String>, StoreError> {
        let stream = self.stream.clone();
        let mut subjects = stream
            .info_with_subjects(format!("{SUBJECT_PREFIX}*"))
            .await
            .map_err(|e| unavailable("cannot list the games", e))?;
        let mut ids = Vec::new();
        while let Some(entry) = subjects.next().await {
            let (subject, _count) = entry.map_err(|e| unavailable("cannot list the games", e))?;
            match subject.strip_prefix(SUBJECT_PREFIX) {
                Some(id) if id.len() == GAME_ID_LEN => ids.push(id.to_string()),
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
            .filter(subject(game_id))
            .await
            .map_err(|e| unavailable(&format!("cannot delete game {game_id}"), e))?;
        // The next append of this id (none expected) must not expect the purged sequence.
        self.writers.lock().expect("writers lock").remove(game_id);
        Ok(())
    }
}
