//! `WatchGames`: the directory's events (a game created, a seat taken, started, finished,
//! cancelled, abandoned), read from the store's directory feed (`store/mod.rs`).
//!
//! Why a feed in the store rather than a cursor computed from the logs: an event must never
//! be skipped by a client that resumes, yet games become durable in parallel, so no order
//! computed from the records (their time, their game) is the order in which readers saw them;
//! a record timestamped before a cursor could become durable after it. The feed gives each
//! marked record a position when it becomes durable, in one transaction with the record, so
//! "every position after N" is exactly what a reader at N has not seen, across restarts. The
//! actor marks the records (`actor/durability.rs`, `directory_marks`); the event is rebuilt
//! here from the record the entry points at, so the feed holds 24 bytes per event.
//!
//! Each stream is one task reading the feed a chunk at a time into a small channel, as fast
//! as the client reads: a client that never reads holds [`STREAM_BUFFER`] events.

use crate::actor::GameActor;
use crate::cluster::Cluster;
use crate::error::{HostError, HostResult};
use crate::registry::Registry;
use crate::store::{FeedEntry, Namespace};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use std::sync::Arc;
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};
use tokio_stream::wrappers::ReceiverStream;

/// `WatchGames` streams open at once on a server.
pub const MAX_DIRECTORY_STREAMS: usize = 256;
/// Events a stream holds for a client that does not read.
pub const STREAM_BUFFER: usize = 16;
/// Feed entries read from the store at a time.
const READ_CHUNK: usize = 64;

/// The directory's streams: their limit, the signal that ends them at shutdown, and (on a
/// cluster) where the summaries of other nodes' games are.
#[derive(Clone)]
pub struct Directory {
    streams: Arc<Semaphore>,
    closing: watch::Sender<bool>,
    cluster: Option<Arc<Cluster>>,
}

impl Default for Directory {
    fn default() -> Self {
        Directory {
            streams: Arc::new(Semaphore::new(MAX_DIRECTORY_STREAMS)),
            closing: watch::channel(false).0,
            cluster: None,
        }
    }
}

/// What a client asked for, checked.
#[derive(Debug, Clone)]
pub struct Filter {
    kind: String,
    statuses: Vec<pb::GameStatus>,
}

impl Filter {
    /// The request's filters, or INVALID_ARGUMENT naming what is wrong.
    pub fn new(kind: String, statuses: &[i32]) -> HostResult<Filter> {
        if !kind.is_empty() && gangs_games::kind(&kind).is_err() {
            return Err(HostError::Invalid(format!(
                "kind {} is not a game kind: one of {}",
                gangs_proto::quoted(&kind),
                gangs_games::kind_names().join(", ")
            )));
        }
        let statuses = statuses
            .iter()
            .map(|&s| match pb::GameStatus::try_from(s) {
                Ok(pb::GameStatus::Unspecified) | Err(_) => Err(HostError::Invalid(format!(
                    "statuses: {s} is not a game status (WAITING, RUNNING, FINISHED, CANCELLED, ABANDONED)"
                ))),
                Ok(status) => Ok(status),
            })
            .collect::<HostResult<Vec<_>>>()?;
        Ok(Filter { kind, statuses })
    }

    fn accepts(&self, event: &pb::WatchGamesResponse) -> bool {
        let kind = event.summary.as_ref().map_or("", |s| s.kind.as_str());
        (self.kind.is_empty() || self.kind == kind)
            && (self.statuses.is_empty() || self.statuses.contains(&status_after(event.event())))
    }
}

/// The game's status right after an event.
fn status_after(event: pb::DirectoryEvent) -> pb::GameStatus {
    match event {
        pb::DirectoryEvent::Created | pb::DirectoryEvent::SeatTaken => pb::GameStatus::Waiting,
        pb::DirectoryEvent::Started => pb::GameStatus::Running,
        pb::DirectoryEvent::Finished => pb::GameStatus::Finished,
        pb::DirectoryEvent::Cancelled => pb::GameStatus::Cancelled,
        pb::DirectoryEvent::Abandoned => pb::GameStatus::Abandoned,
        pb::DirectoryEvent::Unspecified => pb::GameStatus::Unspecified,
    }
}

/// The feed position a `from_cursor` names: empty = the newest (only later events), else a
/// position in decimal, at most `head`.
fn position_of(cursor: &str, head: u64) -> HostResult<u64> {
    if cursor.is_empty() {
        return Ok(head);
    }
    let position: u64 = cursor.parse().map_err(|_| {
        HostError::Invalid(format!(
            "from_cursor {} is not a cursor: pass an event's `cursor`, \"0\" for the first event, or nothing for new events only",
            gangs_proto::quoted(cursor)
        ))
    })?;
    if position > head {
        return Err(HostError::OutOfRange(format!(
            "from_cursor {position} is ahead of this server's newest event ({head}): a cursor of another server?"
        )));
    }
    Ok(position)
}

/// The event a feed entry stands for: None when its game is gone (deleted by
/// `--retain-finished`) or the record is not an event's.
pub async fn event_of(
    directory: &Directory,
    registry: &Registry,
    entry: &FeedEntry,
) -> HostResult<Option<pb::WatchGamesResponse>> {
    // A ladder's result is in the feed for the webhooks (`ladder.result`): no game's event.
    if entry.namespace != Namespace::Games {
        return Ok(None);
    }
    let store = registry.store();
    let record = store
        .feed_record(entry)
        .await
        .map_err(|e| HostError::Storage(e.message))?;
    let Some(record) = record.filter(|r| r.seq == entry.seq) else {
        return Ok(None);
    };
    let summary = directory
        .summary_at(registry, &entry.game_id, record.seq)
        .await?;
    let mut event = pb::WatchGamesResponse {
        cursor: entry.position.to_string(),
        game_id: entry.game_id.clone(),
        seq: record.seq,
        unix_ms: record.unix_ms,
        ..Default::default()
    };
    let kind = match record.record {
        Some(Record::Created(_)) => pb::DirectoryEvent::Created,
        Some(Record::Joined(joined)) => {
            event.seat = Some(joined.seat);
            event.name = joined.name;
            pb::DirectoryEvent::SeatTaken
        }
        Some(Record::Started(_)) => pb::DirectoryEvent::Started,
        Some(Record::Acted(_) | Record::TimedOut(_) | Record::Expired(_)) => {
            event.outcome = summary.as_ref().and_then(|s| s.outcome.clone());
            pb::DirectoryEvent::Finished
        }
        Some(Record::Ended(ended)) => {
            let kind = match ended.reason() {
                pb::ended::Reason::Abandoned => pb::DirectoryEvent::Abandoned,
                _ => pb::DirectoryEvent::Cancelled,
            };
            event.reason = ended.detail;
            kind
        }
        // A ladder's own log is no game of the directory.
        Some(Record::Ladder(_)) | None => return Ok(None),
    };
    event.set_event(kind);
    event.summary = summary;
    Ok(Some(event))
}

/// Longest wait for this node's view of the feed to reach a cursor given by another node.
const CURSOR_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Longest wait for a game's summary to reach an event's record.
const SUMMARY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The summary of a game as of its record `seq` (`u64::MAX`: its last), rebuilt from its log
/// (a game another node of a cluster runs, whose summary in the cluster's directory is not
/// there yet).
async fn summary_from_log(
    registry: &Registry,
    game_id: &str,
    seq: u64,
) -> HostResult<Option<pb::GameSummary>> {
    let store = registry.store();
    let mut records = store
        .load_game(game_id)
        .await
        .map_err(|e| HostError::Storage(e.message))?;
    if seq != u64::MAX {
        records.truncate(seq as usize);
        if records.len() as u64 != seq {
            return Ok(None);
        }
    }
    if records.is_empty() {
        return Ok(None);
    }
    let summaries = crate::actor::Summaries::default();
    // Rebuilt, never run: the actor only publishes its summary into this map.
    let built = GameActor::rebuild(
        game_id.to_string(),
        store.clone(),
        summaries.clone(),
        crate::actor::Settings::default(),
        crate::store::StoredLog::Decoded(records),
    );
    drop(built);
    let summary = summaries.lock().expect("summaries lock").remove(game_id);
    Ok(summary)
}

impl Directory {
    /// A node of a cluster: the summaries of the games other nodes run come from the cluster's
    /// directory (or their logs).
    pub fn with_cluster(mut self, cluster: Arc<Cluster>) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// A game's newest summary wherever it is: this node's, the cluster's directory, or
    /// (a game this node never ran) its log's.
    pub async fn final_summary(
        &self,
        registry: &Registry,
        game_id: &str,
    ) -> HostResult<Option<pb::GameSummary>> {
        if let Some(summary) = registry.summary(game_id) {
            return Ok(Some(summary));
        }
        if let Some(summary) = self.cluster.as_ref().and_then(|c| c.summary(game_id)) {
            return Ok(Some(summary));
        }
        summary_from_log(registry, game_id, u64::MAX).await
    }

    /// The game's summary once it shows record `seq`: the store announces a record durable a
    /// moment before the game's actor hears it and publishes its summary, and an event read at
    /// once would carry the summary from before (a finished game without its outcome). The
    /// wait is short and only at the head of the feed, for a game this node runs. On a
    /// cluster, another node's game is summarized from the cluster's directory if that shows
    /// the record already, else from the game's log as of that record.
    async fn summary_at(
        &self,
        registry: &Registry,
        game_id: &str,
        seq: u64,
    ) -> HostResult<Option<pb::GameSummary>> {
        let started = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(1);
        loop {
            let summary = registry.summary(game_id);
            let local =
                summary.is_some() && (self.cluster.is_none() || registry.is_loaded(game_id));
            if !local {
                break;
            }
            if summary.as_ref().is_some_and(|s| s.last_seq >= seq)
                || started.elapsed() >= SUMMARY_WAIT
            {
                return Ok(summary);
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_millis(50));
        }
        let Some(cluster) = &self.cluster else {
            // A game this node does not know (any more): what there is.
            return Ok(registry.summary(game_id));
        };
        let listed = cluster.summary(game_id).filter(|s| s.last_seq >= seq);
        if listed.is_some() {
            return Ok(listed);
        }
        summary_from_log(registry, game_id, seq).await
    }
    /// Ends every stream (the server is shutting down): each drops its store handle, which the
    /// store's closing waits for.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// The shutdown signal, for other readers of the feed (the webhooks).
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// A stream of the events after `from_cursor` that pass `filter`.
    pub async fn watch(
        &self,
        registry: Registry,
        from_cursor: &str,
        filter: Filter,
    ) -> HostResult<ReceiverStream<HostResult<pb::WatchGamesResponse>>> {
        let store = registry.store().clone();
        let Some(mut head) = store.feed_head() else {
            return Err(HostError::NotNow(
                "WatchGames needs a store that keeps the directory feed".into(),
            ));
        };
        // A cursor another node of a cluster handed out may be a moment ahead of this node's
        // view of the feed: wait for it briefly before calling it foreign.
        if let Ok(wanted) = from_cursor.parse::<u64>() {
            let _ = tokio::time::timeout(CURSOR_WAIT, head.wait_for(|&h| h >= wanted)).await;
        }
        let after = position_of(from_cursor, *head.borrow())?;
        let permit = self.streams.clone().try_acquire_owned().map_err(|_| {
            HostError::Exhausted(format!(
                "this server has {MAX_DIRECTORY_STREAMS} WatchGames streams open, its limit: close one"
            ))
        })?;
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        let closing = self.closing.subscribe();
        tokio::spawn(follow(
            self.clone(),
            registry,
            head,
            after,
            filter,
            tx,
            closing,
            permit,
        ));
        Ok(ReceiverStream::new(rx))
    }
}

/// Sends the events after `after` to `tx`, then each new one, until the client goes away or
/// the server closes.
#[allow(clippy::too_many_arguments)]
async fn follow(
    directory: Directory,
    registry: Registry,
    mut head: watch::Receiver<u64>,
    mut after: u64,
    filter: Filter,
    tx: mpsc::Sender<HostResult<pb::WatchGamesResponse>>,
    mut closing: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    let store = registry.store().clone();
    loop {
        if *closing.borrow() {
            return;
        }
        let newest = *head.borrow_and_update();
        let entries = match store.feed_after(after, READ_CHUNK).await {
            Ok(entries) => entries,
            Err(e) => return drop(tx.send(Err(HostError::Storage(e.message))).await),
        };
        if entries.is_empty() {
            // Nothing up to `newest` (durable) after `after`: positions of a failed write are
            // never filled, so skip them rather than wait for them.
            after = after.max(newest);
            tokio::select! {
                moved = head.wait_for(|&newest| newest > after) => if moved.is_err() { return },
                _ = closing.wait_for(|&closed| closed) => return,
                _ = tx.closed() => return,
            }
            continue;
        }
        for entry in entries {
            after = entry.position;
            let event = match event_of(&directory, &registry, &entry).await {
                Ok(Some(event)) if filter.accepts(&event) => event,
                Ok(_) => continue,
                Err(e) => return drop(tx.send(Err(e)).await),
            };
            tokio::select! {
                sent = tx.send(Ok(event)) => if sent.is_err() { return },
                _ = closing.wait_for(|&closed| closed) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_and_filters_are_checked() {
        assert_eq!(position_of("", 7).unwrap(), 7);
        assert_eq!(position_of("0", 7).unwrap(), 0);
        assert_eq!(position_of("7", 7).unwrap(), 7);
        assert!(matches!(position_of("8", 7), Err(HostError::OutOfRange(_))));
        assert!(matches!(position_of("x", 7), Err(HostError::Invalid(_))));
        assert!(matches!(
            position_of(&"9".repeat(100), 7),
            Err(HostError::Invalid(_))
        ));
        assert!(Filter::new("gang-of-four".into(), &[3]).is_ok());
        assert!(Filter::new("chess".into(), &[]).is_err());
        assert!(Filter::new(String::new(), &[0]).is_err());
        assert!(Filter::new(String::new(), &[99]).is_err());
        let filter = Filter::new(String::new(), &[pb::GameStatus::Finished as i32]).unwrap();
        let mut event = pb::WatchGamesResponse::default();
        event.set_event(pb::DirectoryEvent::Finished);
        assert!(filter.accepts(&event));
        event.set_event(pb::DirectoryEvent::SeatTaken);
        assert!(!filter.accepts(&event));
    }
}
