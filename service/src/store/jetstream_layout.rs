//! The JetStream log's layout across versions: the stream's subjects, and the one-time move of
//! a stream written before namespaces, where every ladder's log was a subject
//! `gangs.log.ladder…` among the games', to the ladders' subjects `gangs.ladders.…`.
//!
//! A subject cannot be renamed: each such log is copied to its new subject through the
//! ladders' namespace (so with the same sequence rule as any append: two nodes starting at once
//! and both moving it never store a record twice), checked whole, and only then purged from the
//! old one. A move cut short (a node killed) is completed by the next open, which finds the
//! copy's records a prefix of the source's. The stream's metadata key [`LAYOUT_KEY`] says it
//! was done: a second open moves nothing. Every node of the earlier version must be stopped
//! before the first node of this one starts (they would go on writing the old subjects).
//!
//! A ladder's rated results are marked for the directory feed (the webhooks send them). A
//! copied record is marked again only if a webhook receiver has not delivered its old
//! position yet (the lowest saved mark is before it): the copy gets a new position, after
//! everything in the stream, and a receiver that had delivered it would get it twice.

use super::jetstream::{
    log_of_subject, unavailable, JetStreamStore, ACK_TIMEOUT, FENCE_HEADER, LADDERS_SUBJECT_PREFIX,
    MARK_HEADER, STREAM, SUBJECT_PREFIX,
};
use super::{legacy_ladder_id, EncodedRecord, LogStore, Namespace, StoreError, StoreErrorKind};
use async_nats::jetstream::{self, consumer, stream};
use gangs_proto::v1 as pb;
use prost::Message;
use tokio_stream::StreamExt;

/// The stream's metadata key that holds its layout; [`LAYOUT_NAMESPACES`] once the ladders'
/// logs have their own subjects.
pub const LAYOUT_KEY: &str = "gangs_layout";
pub const LAYOUT_NAMESPACES: &str = "2";

/// Copies of one log tried in a row without the copy growing before the move gives up (a
/// retry means another node copied part of it meanwhile: while the copy grows, it goes on).
const MOVE_TRIES: usize = 5;

/// Every subject the stream holds: one wildcard per namespace.
pub(super) fn subjects() -> Vec<String> {
    vec![
        format!("{SUBJECT_PREFIX}*"),
        format!("{LADDERS_SUBJECT_PREFIX}*"),
    ]
}

/// The metadata of a stream made with the current layout.
pub(super) fn metadata() -> std::collections::HashMap<String, String> {
    [(LAYOUT_KEY.to_string(), LAYOUT_NAMESPACES.to_string())].into()
}

/// The stream with every namespace's subjects: a stream made before namespaces takes the
/// ladders' (its other settings kept).
pub(super) async fn with_every_subject(
    js: &jetstream::Context,
    stream: stream::Stream,
) -> Result<stream::Stream, StoreError> {
    let mut config = stream.cached_info().config.clone();
    let wanted = subjects();
    if wanted.iter().all(|s| config.subjects.contains(s)) {
        return Ok(stream);
    }
    for subject in wanted {
        if !config.subjects.contains(&subject) {
            config.subjects.push(subject);
        }
    }
    js.update_stream(config)
        .await
        .map_err(|e| unavailable("cannot add the ladders' subjects to the stream", e))?;
    js.get_stream(STREAM)
        .await
        .map_err(|e| unavailable("cannot open the stream GANGS_LOG", e))
}

/// Moves the ladders' logs of a stream written before namespaces (see the module doc), once.
pub(super) async fn move_legacy_ladders(games: &JetStreamStore) -> Result<(), StoreError> {
    let mut stream = games.stream().clone();
    let info = stream
        .info()
        .await
        .map_err(|e| unavailable("cannot read the stream's state", e))?;
    if info.config.metadata.get(LAYOUT_KEY).map(String::as_str) == Some(LAYOUT_NAMESPACES) {
        return Ok(());
    }
    let ladders = games.in_namespace(Namespace::Ladders);
    let legacy: Vec<String> = games
        .game_ids()
        .await?
        .into_iter()
        .filter(|id| legacy_ladder_id(id))
        .collect();
    let lowest_mark = games.feed().lowest_mark().await?;
    let mut records = 0;
    for id in &legacy {
        records += move_log(games, &ladders, id, lowest_mark).await?;
    }
    if !legacy.is_empty() {
        tracing::info!(
            ladders = legacy.len(),
            records,
            "moved the ladders' logs to their own subjects (once: a stream of an earlier version)"
        );
    }
    let mut config = info.config.clone();
    config.metadata.extend(metadata());
    games
        .context()
        .update_stream(config)
        .await
        .map_err(|e| unavailable("cannot note the stream's layout", e))?;
    Ok(())
}

/// One stored record of an old subject, and whether it was in the directory feed then.
struct OldRecord {
    record: pb::LogRecord,
    /// Its stream sequence (its feed position, if marked).
    position: u64,
    marked: bool,
}

/// Copies ladder log `id` from the games' subjects to the ladders', then purges the old
/// subject; the records copied.
async fn move_log(
    games: &JetStreamStore,
    ladders: &JetStreamStore,
    id: &str,
    lowest_mark: Option<u64>,
) -> Result<usize, StoreError> {
    let old = read_old(games.stream(), id).await?;
    if old.is_empty() {
        // Moved by another node meanwhile.
        return Ok(0);
    }
    let mut copied = 0;
    let (mut tries, mut had) = (0, None);
    while tries < MOVE_TRIES {
        let there = ladders.load_game(id).await?;
        tries = if had.is_some_and(|had| there.len() > had) {
            0
        } else {
            tries + 1
        };
        had = Some(there.len());
        // Either a prefix of the other: a copy under way, or done (the source read while
        // another node purged it may come out shorter).
        if !old.iter().zip(&there).all(|(old, new)| old.record == *new) {
            return Err(StoreError::conflict(format!(
                "ladder log {id} is in {LADDERS_SUBJECT_PREFIX}{id} already with different records: not moved (stop every node of the earlier version, then start again)"
            )));
        }
        let Some(rest) = old.get(there.len()..).filter(|rest| !rest.is_empty()) else {
            games.delete_game(id).await?;
            return Ok(copied);
        };
        let marked = rest
            .iter()
            .filter(|r| r.marked && lowest_mark.is_some_and(|mark| r.position > mark))
            .map(|r| r.record.seq)
            .collect();
        let appended = ladders.append_encoded(
            id,
            rest.iter()
                .map(|r| EncodedRecord::of(r.record.clone()))
                .collect(),
            marked,
        );
        match appended.await {
            Ok(Ok(())) => copied += rest.len(),
            // Another node copies it too: read what is there and go on from it.
            Ok(Err(e)) if e.kind == StoreErrorKind::Conflict => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(StoreError::unavailable("the store stopped")),
        }
    }
    Err(StoreError::unavailable(format!(
        "ladder log {id} kept changing while this node moved it (another node is moving it): retry"
    )))
}

/// Every record of the old subject of ladder log `id`, with its position and mark (fences
/// left out).
async fn read_old(stream: &stream::Stream, id: &str) -> Result<Vec<OldRecord>, StoreError> {
    let subject = format!("{SUBJECT_PREFIX}{id}");
    let mut records = Vec::new();
    // Purged already (another node moved it meanwhile): an ordered consumer of an empty
    // subject would only wait.
    match stream.get_last_raw_message_by_subject(&subject).await {
        Ok(_) => {}
        Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => {
            return Ok(records)
        }
        Err(e) => return Err(unavailable("cannot read the log", e)),
    }
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: subject.clone(),
            deliver_policy: consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .map_err(|e| unavailable("cannot read the log", e))?;
    let mut messages = consumer
        .messages()
        .await
        .map_err(|e| unavailable("cannot read the log", e))?;
    loop {
        let Some(message) = tokio::time::timeout(ACK_TIMEOUT * 2, messages.next())
            .await
            .map_err(|_| StoreError::unavailable("NATS: reading the log timed out"))?
        else {
            break;
        };
        let message = message.map_err(|e| unavailable("cannot read the log", e))?;
        let info = message
            .info()
            .map_err(|e| unavailable("cannot read the log", e))?;
        let (position, pending) = (info.stream_sequence, info.pending);
        debug_assert!(log_of_subject(&message.subject).is_some());
        let headers = message.headers.as_ref();
        if headers.and_then(|h| h.get(FENCE_HEADER)).is_none() {
            let record = pb::LogRecord::decode(&message.payload[..]).map_err(|e| {
                StoreError::corrupt(format!(
                    "ladder log {id}: undecodable record at stream sequence {position}: {e}"
                ))
            })?;
            records.push(OldRecord {
                record,
                position,
                marked: headers.and_then(|h| h.get(MARK_HEADER)).is_some(),
            });
        }
        if pending == 0 {
            break;
        }
    }
    Ok(records)
}
