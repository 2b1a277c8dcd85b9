//! Webhooks (`--webhook URL`, repeatable, with `--webhook-secret`): a signed JSON POST to each
//! URL for every game finished, cancelled or abandoned, at least once, in order.
//!
//! The outbox is the store's directory feed (`store/mod.rs`): the events are durable there with
//! the log itself, and each receiver has a *mark* in the store, the feed position of the last
//! event it acknowledged (2xx). A deliverer (one task per URL) reads the feed after its mark,
//! POSTs each ending event until it is acknowledged, then saves the mark. A restart, or a
//! receiver down for hours, therefore loses nothing: the deliverer resumes from its mark. An
//! event whose POST fails is retried with backoff (1 s doubling to 10 min) for
//! `--webhook-retry-for` (24 h by default) before it is given up (logged, counted); the
//! events behind it wait, so a receiver sees them in order. A receiver seen for the first time
//! starts at the newest event (it gets what happens from then on, not the whole history).
//!
//! Body: the `WatchGames` event in the proto3 JSON mapping (`cursor`, `game_id`, `seq`,
//! `unix_ms`, `outcome`, `reason`, `summary`...), plus `id` (also the header `gangs-event-id`,
//! the same on every retry: the receiver's idempotency key) and `type` (`game.finished`,
//! `game.cancelled`, `game.abandoned`). Signed as `gangs_proto::webhook` says.

use crate::cluster::Cluster;
use crate::directory::{event_of, Directory};
use crate::registry::Registry;
use crate::store::{Namespace, Store};
use gangs_proto::v1 as pb;
use gangs_proto::webhook::{event_body as body, signed_headers as headers};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Feed entries read at a time.
const READ_CHUNK: usize = 64;
/// First and longest wait between two attempts of one event.
const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(600);
/// Default of `--webhook-retry-for`.
pub const RETRY_FOR: Duration = Duration::from_secs(24 * 3600);

/// The webhooks' settings.
#[derive(Clone)]
pub struct Webhooks {
    pub urls: Vec<String>,
    pub secret: String,
    pub retry_for: Duration,
    /// The ladders' namespace of the store: a `ladder.result` names its ladder from there.
    pub ladder_logs: Store,
}

/// The store's mark of a receiver.
fn mark_name(url: &str) -> String {
    format!("webhook {url}")
}

/// The event's `type`, for the events webhooks carry.
fn event_type(event: pb::DirectoryEvent) -> Option<&'static str> {
    match event {
        pb::DirectoryEvent::Finished => Some("game.finished"),
        pb::DirectoryEvent::Cancelled => Some("game.cancelled"),
        pb::DirectoryEvent::Abandoned => Some("game.abandoned"),
        _ => None,
    }
}

impl Webhooks {
    /// Starts one deliverer per URL; each ends when the directory closes. Refused at once when
    /// the store keeps no feed. On a cluster (`cluster`), each receiver is sent to by one node
    /// at a time, the holder of its lease (`Cluster::turn`): the outbox and the marks are the
    /// cluster's, so every node could send, and each would send every event once.
    pub fn start(
        &self,
        registry: &Registry,
        directory: &Directory,
        cluster: Option<Arc<Cluster>>,
    ) -> Result<(), String> {
        let store = registry.store();
        if store.feed_head().is_none() {
            return Err("--webhook needs a store that keeps the directory feed".to_string());
        }
        for url in &self.urls {
            gangs_proto::webhook::check_url(url).map_err(|e| format!("--webhook {e}"))?;
        }
        for url in &self.urls {
            let deliverer = Deliverer {
                directory: directory.clone(),
                registry: registry.clone(),
                url: url.clone(),
                settings: self.clone(),
            };
            tokio::spawn(deliverer.run(cluster.clone(), directory.closing()));
        }
        Ok(())
    }
}

/// One receiver's deliverer.
struct Deliverer {
    directory: Directory,
    registry: Registry,
    url: String,
    settings: Webhooks,
}

impl Deliverer {
    /// Delivers until the server closes; on a cluster only while this node holds the
    /// receiver's lease (waiting for it otherwise). A node that loses the lease stops at once;
    /// the next holder resumes from the receiver's mark in the store, so an event in flight
    /// then may be sent twice (at least once; `gangs-event-id` is the same), none is lost.
    async fn run(self, cluster: Option<Arc<Cluster>>, mut closing: watch::Receiver<bool>) {
        let Some(cluster) = cluster else {
            return deliver(&self, closing).await;
        };
        loop {
            let Some(mut lost) = cluster.turn(&mark_name(&self.url), &mut closing).await else {
                return;
            };
            // Stops the delivery when the server closes or the lease is lost.
            let (stop_tx, stop) = watch::channel(false);
            let mut server_closing = closing.clone();
            let watcher = tokio::spawn(async move {
                tokio::select! {
                    _ = server_closing.wait_for(|&closed| closed) => {}
                    _ = lost.wait_for(|&lost| lost) => {}
                }
                stop_tx.send_replace(true);
                // Held until here: dropping it lets the lease go.
                drop(lost);
            });
            deliver(&self, stop).await;
            watcher.abort();
            if *closing.borrow() {
                return;
            }
        }
    }
}

/// Sleeps `wait` unless the server closes first (then false).
async fn pause(wait: Duration, closing: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(wait) => true,
        _ = closing.wait_for(|&closed| closed) => false,
    }
}

/// One receiver's deliveries: from its mark, every ending event, in order, until closing.
async fn deliver(deliverer: &Deliverer, mut closing: watch::Receiver<bool>) {
    let Deliverer {
        directory,
        registry,
        url,
        settings,
    } = deliverer;
    let store: &Store = registry.store();
    let Some(mut head) = store.feed_head() else {
        return;
    };
    let name = mark_name(url);
    let mut backoff = FIRST_RETRY;
    // The mark, or (a new receiver) the newest event, saved so a restart starts there too.
    let mut mark = loop {
        let newest = *head.borrow();
        let loaded = match store.load_mark(&name).await {
            Ok(Some(mark)) => Ok(mark),
            Ok(None) => store.save_mark(&name, newest).await.map(|()| newest),
            Err(e) => Err(e),
        };
        match loaded {
            Ok(mark) => break mark,
            Err(e) => {
                tracing::error!(url = %url, "webhook: cannot read its mark: {e}");
                if !pause(backoff, &mut closing).await {
                    return;
                }
                backoff = (backoff * 2).min(MAX_RETRY);
            }
        }
    };
    tracing::info!(url = %url, after = mark, "webhook deliverer started");
    loop {
        if *closing.borrow() {
            return;
        }
        let newest = *head.borrow_and_update();
        let entries = match store.feed_after(mark, READ_CHUNK).await {
            Ok(entries) => entries,
            Err(e) => {
                tracing::error!(url = %url, "webhook: cannot read the feed: {e}");
                if !pause(FIRST_RETRY, &mut closing).await {
                    return;
                }
                continue;
            }
        };
        if entries.is_empty() {
            // Positions of a failed write stay empty: skip them (nothing to deliver there).
            mark = mark.max(newest);
            tokio::select! {
                moved = head.wait_for(|&newest| newest > mark) => if moved.is_err() { return },
                _ = closing.wait_for(|&closed| closed) => return,
            }
            continue;
        }
        let mut events = Vec::new();
        let mut last = mark;
        let mut unreadable = false;
        for entry in &entries {
            last = entry.position;
            let outgoing = if entry.namespace == Namespace::Ladders {
                ladder_result(directory, registry, &settings.ladder_logs, entry).await
            } else {
                event_of(directory, registry, entry).await.map(|event| {
                    event.and_then(|event| {
                        let kind = event_type(event.event())?;
                        Some(body(&event, kind))
                    })
                })
            };
            match outgoing {
                Ok(Some((id, body))) => events.push((entry.position, id, body)),
                Ok(None) => {}
                Err(e) => {
                    tracing::error!(url = %url, "webhook: cannot read an event: {e}");
                    last = entry.position - 1;
                    unreadable = true;
                    break;
                }
            }
        }
        crate::metrics::webhook_pending(events.len() as f64);
        let mut pending = events.len();
        for (position, id, body) in events {
            let delivery = post_until_acknowledged(url, settings, &id, body, &mut closing).await;
            pending -= 1;
            crate::metrics::webhook_pending(-1.0);
            if delivery == Delivery::Closing {
                crate::metrics::webhook_pending(-(pending as f64));
                return;
            }
            // Saved after each event: a restart re-sends at most the one in flight.
            if !save(store, &name, position, url, &mut closing).await {
                crate::metrics::webhook_pending(-(pending as f64));
                return;
            }
            mark = position;
        }
        if last > mark {
            if !save(store, &name, last, url, &mut closing).await {
                return;
            }
            mark = last;
        }
        // The store failed to give an event: try it again in a moment, not in a busy loop.
        if unreadable && !pause(FIRST_RETRY, &mut closing).await {
            return;
        }
    }
}

/// Saves the mark, retrying while the store fails; false when the server closes first.
async fn save(
    store: &Store,
    name: &str,
    position: u64,
    url: &str,
    closing: &mut watch::Receiver<bool>,
) -> bool {
    loop {
        match store.save_mark(name, position).await {
            Ok(()) => return true,
            Err(e) => {
                tracing::error!(url = %url, "webhook: cannot save its mark: {e}");
                if !pause(FIRST_RETRY, closing).await {
                    return false;
                }
            }
        }
    }
}

/// How one event's delivery ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delivery {
    Acknowledged,
    /// Retried for the whole retry window in vain.
    GivenUp,
    /// The server is shutting down: the event is sent again after the restart.
    Closing,
}

/// POSTs one event until a 2xx, the end of the retry window or the server's shutdown.
async fn post_until_acknowledged(
    url: &str,
    settings: &Webhooks,
    id: &str,
    body: Vec<u8>,
    closing: &mut watch::Receiver<bool>,
) -> Delivery {
    let first = Instant::now();
    let mut wait = FIRST_RETRY;
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let headers = headers(&settings.secret, id, &body);
        let sent = tokio::select! {
            sent = gangs_proto::webhook::post(url, &headers, body.clone()) => sent,
            _ = closing.wait_for(|&closed| closed) => return Delivery::Closing,
        };
        match sent {
            Ok(_) => {
                crate::metrics::webhook(crate::metrics::WebhookOutcome::Delivered);
                tracing::debug!(url = %url, event = %id, attempts, "webhook delivered");
                return Delivery::Acknowledged;
            }
            Err(e) => {
                crate::metrics::webhook(crate::metrics::WebhookOutcome::Failed);
                if first.elapsed() >= settings.retry_for {
                    crate::metrics::webhook(crate::metrics::WebhookOutcome::Expired);
                    tracing::error!(url = %url, event = %id, attempts, "webhook given up after {:?}: {e}", settings.retry_for);
                    return Delivery::GivenUp;
                }
                tracing::warn!(url = %url, event = %id, attempts, "webhook not delivered ({e}); again in {wait:?}");
                if !pause(wait, closing).await {
                    return Delivery::Closing;
                }
                wait = (wait * 2).min(MAX_RETRY);
            }
        }
    }
}

/// The id and body of a ladder's game result (`type` `ladder.result`), from the ladder's
/// `rated` record the feed entry points at: the ladder, the match and game, the game's id,
/// outcome and names by seat, and the ratings after it by entry (set when the result closed
/// its match: a duplicate match is rated at its last game). None: not a result.
async fn ladder_result(
    directory: &Directory,
    registry: &Registry,
    store: &Store,
    entry: &crate::store::FeedEntry,
) -> crate::error::HostResult<Option<(String, Vec<u8>)>> {
    use crate::error::HostError;
    use pb::ladder_record::Record as Lr;
    let storage = |e: crate::store::StoreError| HostError::Storage(e.message);
    let Some(record) = store.feed_record(entry).await.map_err(storage)? else {
        return Ok(None);
    };
    let Ok(Lr::Rated(rated)) = crate::ladder::records::from_log(&record) else {
        return Ok(None);
    };
    let first = store
        .read_range(&entry.game_id, 0, 1)
        .await
        .map_err(storage)?;
    let ladder = match first.first().map(crate::ladder::records::from_log) {
        Some(Ok(Lr::Created(ladder))) => ladder,
        _ => return Ok(None),
    };
    let names = directory
        .final_summary(registry, &rated.game_id)
        .await?
        .map(|s| s.names)
        .unwrap_or_default();
    // Seat s of game g of match m holds entry (s + m + g) % n (the matchmaker's seating).
    let n = names.len().max(1);
    let shift = (rated.r#match as usize).wrapping_add(rated.game as usize) % n;
    let ratings: Vec<serde_json::Value> = rated
        .ratings_after
        .iter()
        .enumerate()
        .map(|(i, rating)| {
            let mut value = gangs_proto::json::to_json(rating, "gangs.v1.Rating");
            let name = names.get((i + n - shift) % n).cloned().unwrap_or_default();
            value["entry"] = serde_json::json!(name);
            value
        })
        .collect();
    let id = format!("{}-{}", entry.game_id, entry.seq);
    let body = serde_json::json!({
        "id": id,
        "type": "ladder.result",
        "cursor": entry.position.to_string(),
        "unix_ms": record.unix_ms,
        "ladder": ladder.name,
        "ladder_id": entry.game_id,
        "kind": ladder.kind,
        "match": rated.r#match,
        "game": rated.game,
        "game_id": rated.game_id,
        "void": rated.void,
        "names": names,
        "outcome": rated.outcome.as_ref().map(|o| gangs_proto::json::to_json(o, "gangs.v1.Outcome")),
        "ratings_after": ratings,
    });
    Ok(Some((id, body.to_string().into_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_ends_of_games_are_sent() {
        assert_eq!(
            event_type(pb::DirectoryEvent::Finished),
            Some("game.finished")
        );
        assert_eq!(
            event_type(pb::DirectoryEvent::Cancelled),
            Some("game.cancelled")
        );
        assert_eq!(
            event_type(pb::DirectoryEvent::Abandoned),
            Some("game.abandoned")
        );
        assert_eq!(event_type(pb::DirectoryEvent::Started), None);
        assert_eq!(event_type(pb::DirectoryEvent::Created), None);
        assert_eq!(mark_name("http://x/h"), "webhook http://x/h");
    }
}
