//! Appends to the JetStream log (see `jetstream.rs` for the layout and why): one writer task per
//! game, the tail it checks every record against, publishing with retries through an outage,
//! resolving an append whose outcome is unknown by reading the stream back, and the fences a
//! node writes before it runs a game.

use super::jetstream::{read_tail, unavailable, FENCE_HEADER, MARK_HEADER};
use super::{EncodedRecord, StoreError};
use async_nats::jetstream::{self, context::PublishErrorKind, stream};
use gangs_proto::v1 as pb;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// How long an append keeps retrying through a NATS outage (leader election, reconnect)
/// before the game is stopped as unavailable.
const OUTAGE_BUDGET: Duration = Duration::from_secs(20);
/// A game's writer ends after this long without appends (a finished or idle game).
const WRITER_IDLE: Duration = Duration::from_secs(30);

/// The writer of each log that appended recently, by subject (unique across namespaces).
pub(super) type Writers = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Append>>>>;

pub(super) struct Append {
    /// Each record with its encoding, the message's payload.
    pub(super) records: Vec<EncodedRecord>,
    /// Seqs of the records that enter the directory feed (`jetstream_feed.rs`).
    pub(super) marked: Vec<u64>,
    pub(super) done: oneshot::Sender<Result<(), StoreError>>,
}

/// The last message of a game's subject: its stream sequence, and the seq of the last record
/// (the record itself, or the one a fence follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tail {
    pub(super) stream_seq: u64,
    pub(super) record_seq: u64,
}

/// What a game's writer task needs.
pub(super) struct Writer {
    pub(super) js: jetstream::Context,
    pub(super) stream: stream::Stream,
    pub(super) writers: Writers,
    pub(super) game_id: String,
    /// The log's subject (its namespace's and its id).
    pub(super) subject: String,
    pub(super) hold: Option<Arc<HoldPoint>>,
    /// This writer's own channel, to tell it from a successor in `writers` (not keeping it open).
    pub(super) me: mpsc::WeakUnboundedSender<Append>,
}

/// Where a writer that does not know the game's tail appends `record`.
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
    subject: &str,
    game_id: &str,
    record: &pb::LogRecord,
) -> Result<Expected, StoreError> {
    let (tail, last) = read_tail(stream, subject, game_id).await?.unwrap_or((
        Tail {
            stream_seq: 0,
            record_seq: 0,
        },
        None,
    ));
    if tail.record_seq + 1 == record.seq {
        Ok(Expected::After(tail.stream_seq))
    } else if last.as_ref() == Some(record) {
        Ok(Expected::AlreadyStored(tail.stream_seq))
    } else {
        Err(conflict(game_id, record.seq, tail.record_seq))
    }
}

fn conflict(game_id: &str, seq: u64, found: u64) -> StoreError {
    StoreError::conflict(format!(
        "game {game_id}: record {seq} does not follow the log's last record {found} (another node appended to it, or took the game over)"
    ))
}

/// One game's writer: publishes each append's records in order. Each record follows the tail
/// only if its seq is the tail's next one; any other is checked against the stream first (see
/// `jetstream.rs`). Ends when idle (the store forgets it) or after a failure (every queued
/// append fails with it, and the next append starts from the stream's state again).
pub(super) async fn write_game(
    writer: Writer,
    mut appends: mpsc::UnboundedReceiver<Append>,
    mut tail: Option<Tail>,
) {
    let Writer {
        js,
        stream,
        writers,
        game_id,
        subject,
        hold,
        me,
    } = writer;
    loop {
        let append = match tokio::time::timeout(WRITER_IDLE, appends.recv()).await {
            Ok(Some(append)) => append,
            Ok(None) => return,
            Err(_idle) => {
                // Under the lock no append can slip in between the check and the removal; a
                // writer that was replaced (a fence) leaves its successor in place.
                let mut writers = writers.lock().expect("writers lock");
                if appends.is_empty() {
                    let mine = me.upgrade();
                    if writers
                        .get(&subject)
                        .is_some_and(|w| mine.is_some_and(|m| m.same_channel(w)))
                    {
                        writers.remove(&subject);
                    }
                    return;
                }
                continue;
            }
        };
        let mut result = Ok(());
        for encoded in &append.records {
            let record = &encoded.record;
            let expected = match tail {
                Some(t) if t.record_seq + 1 == record.seq => t.stream_seq,
                _ => match expected_before(&stream, &subject, &game_id, record).await {
                    Ok(Expected::After(seq)) => seq,
                    Ok(Expected::AlreadyStored(seq)) => {
                        tail = Some(Tail {
                            stream_seq: seq,
                            record_seq: record.seq,
                        });
                        continue;
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                },
            };
            if let Some(hold) = &hold {
                hold.wait(record.seq).await;
            }
            let marked = append.marked.contains(&record.seq);
            match publish(&js, &stream, &subject, &game_id, encoded, marked, expected).await {
                Ok(seq) => {
                    tail = Some(Tail {
                        stream_seq: seq,
                        record_seq: record.seq,
                    })
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_err() {
            // Closed before the failure is answered: an append made once the caller knows of
            // it goes to a fresh writer (reading the stream's state), not into this queue.
            appends.close();
        }
        let _ = append.done.send(result.clone());
        if let Err(error) = result {
            // Whatever was queued behind a failure fails too: a log never has a hole.
            while let Some(queued) = appends.recv().await {
                let _ = queued.done.send(Err(error.clone()));
            }
            return;
        }
    }
}

/// Why a publish failed.
enum Refused {
    /// The subject's last message is not the one expected: someone else wrote.
    WrongLast,
    /// Anything else, after the retries (the outcome may be unknown: see `resolve`).
    Failed(StoreError),
}

/// Sends one message expecting the subject's last sequence, retried through an outage (a
/// retried record carries its Msg-Id: not stored twice). Returns its stream sequence.
async fn send(
    js: &jetstream::Context,
    subject: &str,
    what: &str,
    build: impl Fn() -> jetstream::message::PublishMessage,
) -> Result<u64, Refused> {
    let give_up = tokio::time::Instant::now() + OUTAGE_BUDGET;
    let mut pause = Duration::from_millis(50);
    loop {
        let outcome = match js.send_publish(subject.to_string(), build()).await {
            Ok(ack) => ack.await,
            Err(e) => Err(e),
        };
        let error = match outcome {
            Ok(ack) => return Ok(ack.sequence),
            Err(e) => e,
        };
        match error.kind() {
            PublishErrorKind::WrongLastSequence => return Err(Refused::WrongLast),
            // `Other` covers the stream's "temporarily unavailable" answers of a new leader
            // still applying its log, and "no responders" during an election.
            PublishErrorKind::TimedOut
            | PublishErrorKind::BrokenPipe
            | PublishErrorKind::MaxAckPending
            | PublishErrorKind::Other
            | PublishErrorKind::StreamNotFound
                if tokio::time::Instant::now() < give_up =>
            {
                tracing::warn!(subject, "{what} retried: {error}");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            _ => return Err(Refused::Failed(unavailable(what, error))),
        }
    }
}

/// Publishes one record after the message at stream sequence `expected`. Refused or out of
/// retries, the outcome is resolved by reading the stream back: a previous attempt may have
/// landed (its ack lost in an election, its duplicate not recognized) and then the record
/// *is* stored; if it is not the game's last record, it is not stored (a conflict, or the
/// outage).
async fn publish(
    js: &jetstream::Context,
    stream: &stream::Stream,
    subject: &str,
    game_id: &str,
    EncodedRecord { record, bytes }: &EncodedRecord,
    marked: bool,
    expected: u64,
) -> Result<u64, StoreError> {
    // The caller's encoding, shared (no copy): the same bytes on every retry, so the same id.
    let payload = bytes::Bytes::from_owner(bytes.clone());
    let msg_id = msg_id(subject, record.seq, &payload);
    let what = format!("append record {} of game {game_id}", record.seq);
    let seq = record.seq.to_string();
    let refused = match send(js, subject, &what, || {
        let message = jetstream::message::PublishMessage::build()
            .payload(payload.clone())
            .message_id(&msg_id)
            .expected_last_subject_sequence(expected);
        // The mark is part of the one message: a feed entry exists exactly when its record does.
        if marked {
            message.header(MARK_HEADER, seq.as_str())
        } else {
            message
        }
    })
    .await
    {
        Ok(seq) => return Ok(seq),
        Err(refused) => refused,
    };
    match read_tail(stream, subject, game_id).await {
        Ok(Some((tail, Some(last)))) if last == *record => {
            tracing::info!(
                game = game_id,
                seq = record.seq,
                "an append whose answer was lost is in the log: it succeeded"
            );
            Ok(tail.stream_seq)
        }
        Ok(found) => Err(match refused {
            Refused::WrongLast => conflict(
                game_id,
                record.seq,
                found.map_or(0, |(tail, _)| tail.record_seq),
            ),
            Refused::Failed(e) => e,
        }),
        // Neither the append nor the read went through: still unknown, and the caller
        // reloads the game from the log before it writes again (the log is the truth).
        Err(_) => Err(match refused {
            Refused::WrongLast => conflict(game_id, record.seq, record.seq),
            Refused::Failed(e) => e,
        }),
    }
}

/// Appends a fence after `tail` (see `jetstream.rs`): the new tail, or None if the subject's
/// last message is no longer `tail` (someone appended: read again).
pub(super) async fn fence(
    js: &jetstream::Context,
    subject: &str,
    game_id: &str,
    tail: Tail,
) -> Result<Option<Tail>, StoreError> {
    let what = format!("fence game {game_id}");
    let sent = send(js, subject, &what, || {
        jetstream::message::PublishMessage::build()
            .payload(bytes::Bytes::new())
            .header(FENCE_HEADER, tail.record_seq.to_string().as_str())
            .expected_last_subject_sequence(tail.stream_seq)
    })
    .await;
    match sent {
        Ok(stream_seq) => Ok(Some(Tail {
            stream_seq,
            record_seq: tail.record_seq,
        })),
        // A retried fence whose first try landed is refused too: reading again finds it.
        Err(Refused::WrongLast) => Ok(None),
        Err(Refused::Failed(e)) => Err(e),
    }
}

/// The dedup id of one record: the same record retried gets the same id, a different record
/// with the same seq (another writer's) does not, nor a record of another log (the subject
/// names the namespace too).
fn msg_id(subject: &str, seq: u64, payload: &[u8]) -> String {
    use std::hash::{Hash, Hasher};
    // `DefaultHasher::new()` uses fixed keys: the same bytes hash the same in every process.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    payload.hash(&mut hasher);
    format!("{subject}:{seq}:{:016x}", hasher.finish())
}

/// A test-only fail point, read in debug builds only (release builds ignore it):
/// `GANGS_FAILPOINT_HOLD_APPEND=DIR` makes this process hold one append once the file
/// `DIR/arm` exists: the next record about to be published (of any game) is held; the fail
/// point removes `arm`, writes the record's seq to `DIR/held`, and publishes only once
/// `DIR/release` exists. A test so freezes an owner with an append in flight at a known
/// point, lets another node take the game over, and releases it
/// (`tests/e2e_nats_cluster.rs`).
pub(super) struct HoldPoint {
    dir: std::path::PathBuf,
}

impl HoldPoint {
    pub(super) fn from_env() -> Option<Arc<HoldPoint>> {
        if !cfg!(debug_assertions) {
            return None;
        }
        let dir = std::env::var_os("GANGS_FAILPOINT_HOLD_APPEND")?;
        Some(Arc::new(HoldPoint { dir: dir.into() }))
    }

    async fn wait(&self, seq: u64) {
        if std::fs::remove_file(self.dir.join("arm")).is_err() {
            return;
        }
        tracing::warn!(seq, "fail point: holding this append until released");
        // Written aside, then renamed: the test waits for `held` to exist and reads it at
        // once, and a file written in place can be seen still empty.
        let written = std::fs::write(self.dir.join("held.new"), seq.to_string());
        let _ = written
            .and_then(|()| std::fs::rename(self.dir.join("held.new"), self.dir.join("held")));
        while !self.dir.join("release").exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tracing::warn!(seq, "fail point: append released");
    }
}
