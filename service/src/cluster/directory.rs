//! The cluster's shared directory of games: each node writes the summaries of the games it runs
//! to the KV bucket `GANGS_GAMES` (a new game's at once, before CreateGame answers; then at most
//! once a second, only what changed) and follows the bucket, so `ListGames` on any node lists
//! every game (another node's changes up to a second late).

use super::{kv_error, shard_of, Cluster, PUBLISH_AT_ONCE};
use crate::error::HostError;
use crate::registry::Registry;
use async_nats::jetstream::kv;
use gangs_proto::v1 as pb;
use prost::Message;
use std::collections::HashMap;

impl Cluster {
    /// The games of `shards` the directory lists as waiting or running.
    pub(super) fn unfinished_games_of(&self, shards: &[u32]) -> Vec<String> {
        let count = self.shards.count();
        let shards: std::collections::HashSet<u32> = shards.iter().copied().collect();
        self.directory
            .lock()
            .expect("directory lock")
            .values()
            .filter(|s| crate::actor::is_live(s) && shards.contains(&shard_of(&s.game_id, count)))
            .map(|s| s.game_id.clone())
            .collect()
    }

    /// A game's summary as the cluster's directory has it (another node's game).
    pub fn summary(&self, game_id: &str) -> Option<pb::GameSummary> {
        self.directory
            .lock()
            .expect("directory lock")
            .get(game_id)
            .cloned()
    }

    /// Lists a game this node just created at once (before CreateGame answers, so that every
    /// node lists it from then on).
    pub async fn list_new(&self, summary: Option<pb::GameSummary>) -> Result<(), HostError> {
        if let Some(summary) = summary {
            self.write_summary(summary).await.map_err(kv_error)?;
        }
        Ok(())
    }

    /// Takes a game deleted by retention out of the cluster's directory: every node following
    /// the bucket drops it, and this node forgets what it wrote of it. A failed purge (NATS
    /// unreachable) leaves the summary listed, as the log's deletion is already done.
    pub async fn forget(&self, game_id: &str) {
        self.written.lock().expect("written lock").remove(game_id);
        self.unpublished
            .lock()
            .expect("unpublished lock")
            .retain(|s| s.game_id != game_id);
        if let Err(e) = self.games.purge(game_id).await {
            tracing::warn!(game = %game_id, "could not take a deleted game out of the cluster's directory: {e}");
        }
    }

    async fn write_summary(&self, summary: pb::GameSummary) -> Result<(), kv::PutError> {
        let value = summary.encode_to_vec();
        self.games
            .put(summary.game_id.as_str(), value.into())
            .await?;
        self.written
            .lock()
            .expect("written lock")
            .insert(summary.game_id.clone(), summary);
        Ok(())
    }

    /// Every game: the directory's summaries, with this node's own (fresher) for the games it
    /// runs, in id order.
    pub fn list(&self, local: Vec<pb::GameSummary>) -> Vec<pb::GameSummary> {
        let mut games = self.directory.lock().expect("directory lock").clone();
        for summary in local {
            if self.shards.holds_game(&summary.game_id) || !games.contains_key(&summary.game_id) {
                games.insert(summary.game_id.clone(), summary);
            }
        }
        let mut games: Vec<_> = games.into_values().collect();
        games.sort_by(|a, b| a.game_id.cmp(&b.game_id));
        games
    }

    /// Writes the summaries that changed since the last time (the registry notes which: no
    /// scan of every game), of the games this node runs or ran last (a game finished and let
    /// go keeps its final summary here). A summary older than the directory's (another node ran
    /// the game since) is not written back.
    pub(super) async fn publish(&self, registry: &Registry) {
        let changed: Vec<pb::GameSummary> = {
            let directory = self.directory.lock().expect("directory lock");
            let written = self.written.lock().expect("written lock");
            let mut changed: HashMap<String, pb::GameSummary> =
                std::mem::take(&mut *self.unpublished.lock().expect("unpublished lock"))
                    .into_iter()
                    .map(|s| (s.game_id.clone(), s))
                    .collect();
            // The registry's newer summary of a game wins over one left from a failed write.
            for summary in registry.take_changed_summaries() {
                changed.insert(summary.game_id.clone(), summary);
            }
            changed
                .into_values()
                .filter(|s| {
                    written.get(&s.game_id) != Some(s)
                        && (self.shards.holds_game(&s.game_id)
                            || directory
                                .get(&s.game_id)
                                .is_none_or(|listed| s.last_seq > listed.last_seq))
                })
                .collect()
        };
        // Many at once (a node that just created thousands of games has as many to write),
        // each a KV round trip.
        let mut writes = tokio::task::JoinSet::new();
        // A summary not written (NATS unreachable) is tried again next time.
        let note =
            |written: Option<Result<Result<pb::GameSummary, pb::GameSummary>, _>>| match written {
                Some(Ok(Ok(summary))) => {
                    self.written
                        .lock()
                        .expect("written lock")
                        .insert(summary.game_id.clone(), summary);
                }
                Some(Ok(Err(summary))) => {
                    self.unpublished
                        .lock()
                        .expect("unpublished lock")
                        .push(summary);
                }
                _ => {}
            };
        for summary in changed {
            while writes.len() >= PUBLISH_AT_ONCE {
                note(writes.join_next().await);
            }
            let games = self.games.clone();
            writes.spawn(async move {
                let value = summary.encode_to_vec();
                let put = games.put(summary.game_id.as_str(), value.into()).await;
                match put {
                    Ok(_) => Ok(summary),
                    Err(_) => Err(summary),
                }
            });
        }
        while !writes.is_empty() {
            note(writes.join_next().await);
        }
    }
}
