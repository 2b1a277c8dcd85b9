//! The directory feed on JetStream (`WatchGames`, the webhooks' outbox): positions are the
//! stream sequences of the records the actor marked.
//!
//! A marked record is published with the header `Gangs-Mark: <seq>` (`jetstream_append.rs`):
//! the feed entry *is* the record's message, so it is durable exactly when the record is,
//! on every node, and never without it (no second write that a crash could separate from the
//! first). Stream sequences are handed out by the stream leader in the order messages are
//! stored, and a reader sees every message up to the stream's last one, so "every marked
//! message after sequence N" is exactly what a reader at N has not seen: no gap, no duplicate,
//! whichever node wrote the record or serves the reader, across restarts of any of them.
//! Fences carry no mark and are never entries.
//!
//! Readers ask only for the headers (`headers_only` consumers): a record's payload is never
//! sent to find the feed's entries. Each node follows the stream's new messages with one such
//! consumer, keeps the last [`RECENT`] entries in memory and announces its head; a reader at
//! the head (a live `WatchGames`, a webhook keeping up) is served from memory, and one further
//! back (a resumed cursor, a receiver back after an outage) scans the stream's headers from
//! its position, through the store's bounded pool of consumers.
//!
//! Readers' marks (each webhook receiver's last delivered position) are kept in the KV bucket
//! `GANGS_MARKS`, and only ever move forward (compare-and-set on the key's revision), so a node
//! that delivered less than another never takes a receiver back.

use super::jetstream::{log_of_subject, unavailable, MARK_HEADER};
use super::{FeedEntry, StoreError};
use async_nats::jetstream::{self, consumer, kv, stream};
use async_nats::HeaderMap;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::watch;
use tokio_stream::StreamExt;

pub const MARKS_BUCKET: &str = "GANGS_MARKS";
/// Feed entries each node keeps in memory (about 40 bytes each): a reader this close to the
/// head reads no stream.
pub const RECENT: usize = 4096;
/// How long a headers-only read waits for its next message before it is retried.
const READ_TIMEOUT: Duration = Duration::from_secs(6);

/// The last entries seen by this node's follower: every marked message with a stream sequence
/// above `floor`, oldest first.
struct Recent {
    floor: u64,
    entries: VecDeque<FeedEntry>,
}

#[derive(Clone)]
pub(super) struct Feed {
    recent: Arc<Mutex<Recent>>,
    head: watch::Receiver<u64>,
    marks: kv::Store,
}

/// The feed entry a message's headers stand for, if it is marked (of either namespace).
fn entry_of(subject: &str, headers: Option<&HeaderMap>, position: u64) -> Option<FeedEntry> {
    let seq = headers?.get(MARK_HEADER)?.as_str().parse().ok()?;
    let (namespace, id) = log_of_subject(subject)?;
    Some(FeedEntry {
        position,
        namespace,
        game_id: id.to_string(),
        seq,
    })
}

/// A headers-only ordered consumer of every log's messages (both namespaces: every subject of
/// the stream) from stream sequence `from` on.
async fn headers_from(
    stream: &stream::Stream,
    from: u64,
) -> Result<consumer::pull::Ordered, StoreError> {
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            headers_only: true,
            deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                start_sequence: from.max(1),
            },
            ..Default::default()
        })
        .await
        .map_err(|e| unavailable("cannot read the directory feed", e))?;
    consumer
        .messages()
        .await
        .map_err(|e| unavailable("cannot read the directory feed", e))
}

/// The stream's last sequence (0: empty), as its leader has it.
async fn last_sequence(stream: &stream::Stream) -> Result<u64, StoreError> {
    let info = stream
        .get_info()
        .await
        .map_err(|e| unavailable("cannot read the stream's state", e))?;
    Ok(if info.state.messages == 0 {
        0
    } else {
        info.state.last_sequence
    })
}

/// At most `limit` entries after `after`, read from the stream's headers (a reader behind the
/// entries kept in memory). Reads to the stream's end if it finds fewer: an empty answer
/// means there is no entry after `after` up to the stream's last message.
pub(super) async fn scan(
    stream: &stream::Stream,
    after: u64,
    limit: usize,
) -> Result<Vec<FeedEntry>, StoreError> {
    let mut entries = Vec::new();
    if last_sequence(stream).await? <= after {
        return Ok(entries);
    }
    let mut messages = headers_from(stream, after + 1).await?;
    while entries.len() < limit {
        let Some(message) = tokio::time::timeout(READ_TIMEOUT, messages.next())
            .await
            .map_err(|_| StoreError::unavailable("NATS: reading the directory feed timed out"))?
        else {
            break;
        };
        let message = message.map_err(|e| unavailable("cannot read the directory feed", e))?;
        let info = message
            .info()
            .map_err(|e| unavailable("cannot read the directory feed", e))?;
        let (position, pending) = (info.stream_sequence, info.pending);
        if let Some(entry) = entry_of(&message.subject, message.headers.as_ref(), position) {
            entries.push(entry);
        }
        if pending == 0 {
            break;
        }
    }
    Ok(entries)
}

/// A KV key for a reader's name (a webhook's is its URL, which KV keys may not hold).
fn mark_key(name: &str) -> String {
    crate::secret::sha256_hex(name)
}

impl Feed {
    /// Opens the marks' bucket and starts following the stream from its current end.
    pub(super) async fn open(
        js: &jetstream::Context,
        stream: &stream::Stream,
        replicas: usize,
    ) -> Result<Feed, StoreError> {
        let config = kv::Config {
            bucket: MARKS_BUCKET.to_string(),
            history: 1,
            storage: stream::StorageType::File,
            num_replicas: replicas.max(1),
            ..Default::default()
        };
        let marks = super::jetstream::while_jetstream_starts(MARKS_BUCKET, || {
            js.create_or_update_key_value(config.clone())
        })
        .await
        .map_err(|e| unavailable("cannot open the bucket GANGS_MARKS", e))?;
        let last = last_sequence(stream).await?;
        let recent = Arc::new(Mutex::new(Recent {
            floor: last,
            entries: VecDeque::new(),
        }));
        let (head_tx, head) = watch::channel(last);
        tokio::spawn(follow(
            stream.clone(),
            Arc::downgrade(&recent),
            head_tx,
            last,
        ));
        Ok(Feed {
            recent,
            head,
            marks,
        })
    }

    pub(super) fn head(&self) -> watch::Receiver<u64> {
        self.head.clone()
    }

    /// The entries after `after` from memory, if memory holds every one of them (`after` is
    /// not behind the oldest kept); `None` sends the reader to the stream.
    pub(super) fn recent_after(&self, after: u64, limit: usize) -> Option<Vec<FeedEntry>> {
        let recent = self.recent.lock().expect("feed lock");
        (after >= recent.floor).then(|| {
            recent
                .entries
                .iter()
                .filter(|e| e.position > after)
                .take(limit)
                .cloned()
                .collect()
        })
    }

    pub(super) async fn load_mark(&self, name: &str) -> Result<Option<u64>, StoreError> {
        let entry = self
            .marks
            .entry(mark_key(name))
            .await
            .map_err(|e| unavailable("cannot read a feed mark", e))?;
        Ok(entry
            .filter(|e| e.operation == kv::Operation::Put)
            .and_then(|e| decode_mark(&e.value)))
    }

    /// The lowest position any reader saved (`None`: no reader saved one).
    pub(super) async fn lowest_mark(&self) -> Result<Option<u64>, StoreError> {
        let mut keys = self
            .marks
            .keys()
            .await
            .map_err(|e| unavailable("cannot list the feed marks", e))?;
        let mut lowest: Option<u64> = None;
        while let Some(key) = keys.next().await {
            let key = key.map_err(|e| unavailable("cannot list the feed marks", e))?;
            let entry = self
                .marks
                .entry(key)
                .await
                .map_err(|e| unavailable("cannot read a feed mark", e))?;
            if let Some(mark) = entry
                .filter(|e| e.operation == kv::Operation::Put)
                .and_then(|e| decode_mark(&e.value))
            {
                lowest = Some(lowest.map_or(mark, |l| l.min(mark)));
            }
        }
        Ok(lowest)
    }

    /// Saves `position` unless the mark is already there or further (another node delivered
    /// more): compare-and-set on the key's revision, retried when another node wrote between.
    pub(super) async fn save_mark(&self, name: &str, position: u64) -> Result<(), StoreError> {
        let key = mark_key(name);
        let value: bytes::Bytes = position.to_be_bytes().to_vec().into();
        for _ in 0..MARK_TRIES {
            let entry = self
                .marks
                .entry(key.as_str())
                .await
                .map_err(|e| unavailable("cannot read a feed mark", e))?;
            let saved = match entry.filter(|e| e.operation == kv::Operation::Put) {
                Some(e) if decode_mark(&e.value).is_some_and(|m| m >= position) => return Ok(()),
                Some(e) => self
                    .marks
                    .update(key.as_str(), value.clone(), e.revision)
                    .await
                    .is_ok(),
                None => self.marks.create(key.as_str(), value.clone()).await.is_ok(),
            };
            if saved {
                return Ok(());
            }
        }
        Err(StoreError::unavailable(format!(
            "NATS: the feed mark of {name} kept changing while it was saved: retry"
        )))
    }
}

/// Saves tried before a mark's save gives up (each retry means another node saved it between).
const MARK_TRIES: usize = 8;

fn decode_mark(value: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(value.try_into().ok()?))
}

/// This node's follower: every new message's headers, the marked ones kept (the last
/// [`RECENT`]) and announced as the head, until the store is dropped. Resumes after an outage
/// from the last message it saw, so it never skips one.
async fn follow(
    stream: stream::Stream,
    recent: Weak<Mutex<Recent>>,
    head: watch::Sender<u64>,
    mut seen: u64,
) {
    let mut pause = Duration::from_millis(100);
    loop {
        let mut messages = match headers_from(&stream, seen + 1).await {
            Ok(messages) => messages,
            Err(e) => {
                tracing::warn!("the directory feed's follower retries: {e}");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(5));
                if recent.strong_count() == 0 {
                    return;
                }
                continue;
            }
        };
        pause = Duration::from_millis(100);
        // An ordered consumer recreates itself after a gap or a lost heartbeat; an error it
        // cannot get past ends this consumer and the loop starts another from `seen`.
        while let Some(message) = messages.next().await {
            let Ok(message) = message else { break };
            let Ok(info) = message.info() else { break };
            let position = info.stream_sequence;
            if position <= seen {
                continue;
            }
            seen = position;
            let Some(entry) = entry_of(&message.subject, message.headers.as_ref(), position) else {
                continue;
            };
            let Some(recent) = recent.upgrade() else {
                return;
            };
            let mut recent = recent.lock().expect("feed lock");
            recent.entries.push_back(entry);
            if recent.entries.len() > RECENT {
                let oldest = recent.entries.pop_front().expect("longer than RECENT");
                recent.floor = oldest.position;
            }
            // Under the lock: a reader that sees this head finds the entry in memory.
            head.send_replace(position);
        }
        if recent.strong_count() == 0 {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_marked_game_messages_are_entries() {
        let mut headers = HeaderMap::new();
        headers.insert(MARK_HEADER, "7");
        let subject = format!(
            "{}0123456789abcdef",
            super::super::jetstream::SUBJECT_PREFIX
        );
        assert_eq!(
            entry_of(&subject, Some(&headers), 42),
            Some(FeedEntry {
                position: 42,
                namespace: super::super::Namespace::Games,
                game_id: "0123456789abcdef".into(),
                seq: 7
            })
        );
        let ladder = format!(
            "{}ladder0123456789",
            super::super::jetstream::LADDERS_SUBJECT_PREFIX
        );
        assert_eq!(
            entry_of(&ladder, Some(&headers), 43).map(|e| (e.namespace, e.game_id)),
            Some((super::super::Namespace::Ladders, "ladder0123456789".into()))
        );
        assert_eq!(entry_of(&subject, None, 42), None);
        let mut fence = HeaderMap::new();
        fence.insert(super::super::jetstream::FENCE_HEADER, "7");
        assert_eq!(entry_of(&subject, Some(&fence), 42), None);
        assert_eq!(entry_of("gangs.log.short", Some(&headers), 42), None);
        assert_eq!(decode_mark(&9u64.to_be_bytes()), Some(9));
        assert_eq!(decode_mark(b"x"), None);
        assert_eq!(mark_key("webhook http://x/h").len(), 64);
    }
}
