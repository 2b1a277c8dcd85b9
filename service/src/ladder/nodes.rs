//! Ladders on a cluster (`--store nats://`): one node runs each ladder, every node answers
//! for all of them.
//!
//! - **Names.** A ladder's name is entered in the cluster's ladders bucket when it is created
//!   (`Cluster::add_ladder_name`, refused when taken): a name is unique in the cluster, and
//!   every node knows every ladder as soon as the bucket's watch tells it, without a restart.
//!   Ladders made before the bucket existed are entered at start (`adopt`).
//! - **Turns.** Each node contends for the turn of every ladder it knows (`keep`, the lease
//!   `Cluster::turn` of "ladder NAME"); the node a ladder was made through first
//!   (`CREATOR_FIRST`), so that it runs there. A call waiting for a ladder between nodes is
//!   woken by the turn's KV watch or this node starting it, not by polling. The holder fences the ladder's log
//!   (`LogStore::load_to_write`: a former holder's late append is refused), rebuilds the state
//!   and runs the ladder: its matchmaker over every bot's Queue stream, its house bots, its
//!   unfinished games. It lets the turn go when the server stops (another node takes it
//!   within a second) and stops running the ladder the moment the turn is lost (its bots'
//!   Queue streams end UNAVAILABLE: they queue again, and reach the new holder). A dead node's
//!   turn passes after the lease's TTL.
//! - **Forwarding.** A call for a ladder another node runs is sent to it with the caller's
//!   key (`route`): Queue streams are piped through, so a bot may queue through any node and
//!   is matched with the bots of every node. A forwarded call is never forwarded again.
//! - **Safety** rests on the log, as for games: the expected-sequence check refuses a
//!   second writer, so two nodes that both believe they hold a ladder cannot fork its log.

use super::{name_taken, pause_unless, records, Ladder, Ladders};
use crate::cluster::{Cluster, LadderName, Patience};
use crate::error::HostError;
use gangs_proto::v1 as pb;
use records::LadderState;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio_stream::StreamExt;
use tonic::transport::Channel;

/// How long a call waits for a ladder whose turn is between nodes (a new ladder, a holder
/// that just let go) before it answers UNAVAILABLE.
const SETTLE: Duration = Duration::from_secs(2);
/// How often a node looks for ladders it does not contend for yet, when the ladders' bucket
/// cannot be followed (it is woken by the bucket's changes otherwise).
const DISCOVER_EVERY: Duration = Duration::from_secs(1);
/// How long a node that heard of a ladder from the cluster's bucket (not its creator) waits
/// before it contends for its turn: the creator takes it, and the creator's next call finds
/// the ladder where it was made.
const CREATOR_FIRST: Duration = Duration::from_secs(1);
/// A node that could not read a ladder's log lets its turn go and tries again after this.
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// Where a ladder's calls go.
pub enum Place {
    /// This node runs the ladder.
    Here(Arc<Ladder>),
    /// Another node does: the connection to it.
    There(Channel),
}

fn turn_name(ladder: &str) -> String {
    format!("ladder {ladder}")
}

fn changing_hands(name: &str) -> HostError {
    HostError::unavailable(format!(
        "ladder {} is changing hands between the cluster's nodes: retry in a few seconds",
        gangs_proto::quoted(name)
    ))
}

impl Ladders {
    /// The cluster this node belongs to (`None` on a single node).
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref()
    }

    /// Where the calls for ladder `name` go. `forwarded`: the call came from another node,
    /// which believed this one runs the ladder.
    pub async fn route(self: &Arc<Self>, name: &str, forwarded: bool) -> Result<Place, HostError> {
        let Some(cluster) = &self.cluster else {
            return self.get(name).map(Place::Here);
        };
        // An empty name is refused, and a name too long for a ladder is none, as on a single
        // node, without asking the cluster.
        if name.is_empty() || name.len() > crate::bounds::MAX_LADDER_NAME {
            return self.get(name).map(Place::Here);
        }
        if let Ok(ladder) = self.get(name) {
            return Ok(Place::Here(ladder));
        }
        let Some(known) = cluster.ladder_name(name).await? else {
            return self.get(name).map(Place::Here);
        };
        self.keep(&known, CREATOR_FIRST);
        let deadline = tokio::time::Instant::now() + SETTLE;
        let mut started = self.started.subscribe();
        // The turn's changes, watched from the first look that finds the ladder between nodes
        // (then looked at once more: a change before the watch began is not missed).
        let mut turn_changes = None;
        loop {
            if let Ok(ladder) = self.get(name) {
                return Ok(Place::Here(ladder));
            }
            match cluster.turn_holder(&turn_name(name)).await? {
                Some(url) if url != cluster.me() => {
                    if forwarded {
                        return Err(changing_hands(name));
                    }
                    return Ok(Place::There(cluster.channel(&url, Patience::Long)?));
                }
                // Nobody holds the turn (it is being taken), or this node took it and is
                // rebuilding the ladder.
                _ => {}
            }
            let Some(changes) = &mut turn_changes else {
                turn_changes = Some(cluster.turn_changes(&turn_name(name)).await?);
                continue;
            };
            tokio::select! {
                _ = changes.next() => {}
                _ = started.changed() => {}
                _ = tokio::time::sleep_until(deadline) => return Err(changing_hands(name)),
            }
        }
    }

    /// Enters a ladder found in the store at start in the cluster's names (a ladder made
    /// before the names were kept); a name another ladder holds already stays that ladder's.
    pub(super) async fn adopt(&self, state: &LadderState) -> Result<(), String> {
        let Some(cluster) = &self.cluster else {
            return Ok(());
        };
        let name = LadderName {
            log_id: state.log_id.clone(),
            info: state.info.clone(),
        };
        let entered = cluster
            .add_ladder_name(&name)
            .await
            .map_err(|e| format!("entering ladder {}: {}", state.info.name, e.message()))?;
        if !entered
            && cluster
                .ladder_name(&state.info.name)
                .await
                .ok()
                .flatten()
                .is_some_and(|held| held.log_id != state.log_id)
        {
            tracing::warn!(ladder = %state.info.name, log = %state.log_id, "another ladder of the cluster has this name: this log is left out");
        }
        Ok(())
    }

    /// A new ladder, its creation logged under `log_id`: enters its name (refused if taken
    /// meanwhile by another node: the log is deleted) and waits, briefly, until it runs here,
    /// so that the creator's next call finds it on any node.
    pub(super) async fn enter_new(
        self: &Arc<Self>,
        log_id: String,
        info: pb::Ladder,
    ) -> Result<pb::Ladder, HostError> {
        let cluster = self.cluster.as_ref().expect("called on a cluster");
        let name = LadderName {
            log_id: log_id.clone(),
            info: info.clone(),
        };
        // Claimed before the name is entered: this node's own look at the bucket's change
        // (`contend`) must not start a keeper that leaves the creator's turn to another node.
        let claimed = self.claim(&info.name);
        let entered = cluster.add_ladder_name(&name).await;
        if !matches!(entered, Ok(true)) {
            if claimed {
                self.keepers
                    .lock()
                    .expect("keepers lock")
                    .remove(&info.name);
            }
            entered?;
            if let Err(e) = self.ctx.ladder_logs.delete_game(&log_id).await {
                tracing::warn!(log = %log_id, "deleting the log of a ladder whose name was taken: {e}");
            }
            return Err(name_taken(&info.name));
        }
        let mut started = self.started.subscribe();
        if claimed {
            self.run_keeper(&name, Duration::ZERO);
        }
        let deadline = tokio::time::Instant::now() + SETTLE;
        while self.get(&info.name).is_err() {
            tokio::select! {
                _ = started.changed() => {}
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        Ok(info)
    }

    /// Contends for every ladder of the cluster, and for each new one as the ladders' bucket
    /// tells of it.
    pub(super) fn contend(self: Arc<Self>) {
        let Some(cluster) = self.cluster.clone() else {
            return;
        };
        let mut stop = self.ctx.stop.clone();
        let mut changes = cluster.ladder_name_changes();
        tokio::spawn(async move {
            loop {
                for name in cluster.ladder_names().values() {
                    self.keep(name, CREATOR_FIRST);
                }
                let followed = tokio::select! {
                    _ = stop.wait_for(|s| *s) => return,
                    changed = changes.changed() => changed.is_ok(),
                };
                // The bucket's watch ended (it is not followed any more): look again now and
                // then instead.
                if !followed && !pause_unless(&stop, DISCOVER_EVERY).await {
                    return;
                }
            }
        });
    }

    /// Starts contending for `ladder`'s turn, after `after`, unless this node does already.
    fn keep(self: &Arc<Self>, ladder: &LadderName, after: Duration) {
        if self.claim(&ladder.info.name) {
            self.run_keeper(ladder, after);
        }
    }

    /// Marks ladder `name` as one this node contends for; false if it does already.
    fn claim(&self, name: &str) -> bool {
        self.cluster.is_some()
            && self
                .keepers
                .lock()
                .expect("keepers lock")
                .insert(name.to_string())
    }

    /// The task that contends for `ladder`'s turn (after `after`) and runs the ladder while
    /// this node holds it; the ladder was claimed.
    fn run_keeper(self: &Arc<Self>, ladder: &LadderName, after: Duration) {
        let Some(cluster) = self.cluster.clone() else {
            return;
        };
        let (ctx, name, log_id) = (
            self.ctx.clone(),
            ladder.info.name.clone(),
            ladder.log_id.clone(),
        );
        // The task holds the ladders weakly: it ends with the server.
        let ladders = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut closing = ctx.stop.clone();
            let mut first = true;
            loop {
                // A node that heard of the ladder from the bucket leaves its creator the first
                // try.
                if std::mem::take(&mut first) && !pause_unless(&closing, after).await {
                    break;
                }
                let Some(mut lost) = cluster.turn(&turn_name(&name), &mut closing).await else {
                    break;
                };
                let records = match ctx.ladder_logs.load_to_write(&log_id).await {
                    Ok(records) => records,
                    Err(e) => {
                        tracing::warn!(ladder = %name, "reading the ladder's log to run it: {e}; letting the turn go");
                        drop(lost);
                        if !pause_unless(&closing, RETRY_AFTER).await {
                            break;
                        }
                        continue;
                    }
                };
                let state = match LadderState::rebuild(&log_id, &records) {
                    Ok(state) => state,
                    Err(e) => {
                        // Stays among the keepers: not tried again until a restart.
                        tracing::error!(ladder = %name, log = %log_id, "the ladder's log does not rebuild: this node leaves the ladder out: {e}");
                        return;
                    }
                };
                let Some(this) = ladders.upgrade() else { break };
                let (end_term, term) = watch::channel(false);
                tracing::info!(ladder = %name, bots = state.entries.len(), matches = state.matches.len(), "this node runs the ladder");
                let ladder = this.start(state, term);
                drop(this);
                let server_stops = tokio::select! {
                    _ = lost.wait_for(|&gone| gone) => false,
                    _ = closing.wait_for(|&stopping| stopping) => true,
                };
                if let Some(this) = ladders.upgrade() {
                    let mut running = this.ladders.write().expect("ladders lock");
                    if running.get(&name).is_some_and(|l| Arc::ptr_eq(l, &ladder)) {
                        running.remove(&name);
                    }
                }
                if !server_stops {
                    tracing::warn!(ladder = %name, "lost the ladder's turn: another node runs it");
                    ladder.close_all(HostError::unavailable(format!(
                        "this node no longer runs ladder {name} (another node of the cluster took it over): queue again"
                    )));
                }
                let _ = end_term.send(true);
                // Lets the turn go at once (when still held).
                drop(lost);
                if server_stops {
                    break;
                }
            }
            if let Some(this) = ladders.upgrade() {
                this.keepers.lock().expect("keepers lock").remove(&name);
            }
        });
    }
}
