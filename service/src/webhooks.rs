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

use crate::directory::event_of;
use crate::registry::Registry;
use crate::store::Store;
use gangs_proto::v1 as pb;
use gangs_proto::webhook::{event_body as body, signed_headers as headers};
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
    /// Starts one deliverer per URL; each ends when `closing` turns true. Refused at once when
    /// the store keeps no feed.
    pub fn start(&self, registry: &Registry, closing: watch::Receiver<bool>) -> Result<(), String> {
        let store = registry.store();
        if store.feed_head().is_none() {
            return Err(
                "--webhook needs a store that keeps the directory feed: the embedded log (sled) does; NATS JetStream does not yet"
                    .to_string(),
            );
        }
        for url in &self.urls {
            gangs_proto::webhook::check_url(url).map_err(|e| format!("--webhook {e}"))?;
        }
        for url in &self.urls {
            tokio::spawn(deliver(
                store.clone(),
                registry.clone(),
                url.clone(),
                self.clone(),
                closing.clone(),
            ));
        }
        Ok(())
    }
}

/// Sleeps `wait` unless the server closes first (then false).
async fn pause(wait: Duration, closing: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(wait) => true,
        _ = closing.wait_for(|&closed| closed) => false,
    }
}

/// One receiver's deliverer: from its mark, every ending event, in order, until closing.
async fn deliver(
    store: Store,
    registry: Registry,
    url: String,
    settings: Webhooks,
    mut closing: watch::Receiver<bool>,
) {
    let Some(mut head) = store.feed_head() else {
        return;
    };
    let name = mark_name(&url);
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
            match event_of(&store, &registry, entry).await {
                Ok(Some(event)) => {
                    if let Some(kind) = event_type(event.event()) {
                        events.push((entry.position, kind, event));
                    }
                }
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
        for (position, kind, event) in events {
            let delivery =
                post_until_acknowledged(&url, &settings, &event, kind, &mut closing).await;
            pending -= 1;
            crate::metrics::webhook_pending(-1.0);
            if delivery == Delivery::Closing {
                crate::metrics::webhook_pending(-(pending as f64));
                return;
            }
            // Saved after each event: a restart re-sends at most the one in flight.
            if !save(&store, &name, position, &url, &mut closing).await {
                crate::metrics::webhook_pending(-(pending as f64));
                return;
            }
            mark = position;
        }
        if last > mark {
            if !save(&store, &name, last, &url, &mut closing).await {
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
    event: &pb::WatchGamesResponse,
    kind: &str,
    closing: &mut watch::Receiver<bool>,
) -> Delivery {
    let (id, body) = body(event, kind);
    let first = Instant::now();
    let mut wait = FIRST_RETRY;
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let headers = headers(&settings.secret, &id, &body);
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
