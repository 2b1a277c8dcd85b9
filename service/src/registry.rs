//! Every game the server knows, by id: creation, lookup, listing, and the rebuild from the log
//! at startup. Each game's state lives in its actor (`actor.rs`); this is only the directory.

use crate::actor::{GameActor, GameHandle, Summaries};
use crate::store::{Store, GAME_ID_LEN};
use gangs_proto::v1 as pb;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use tonic::Status;

#[derive(Clone)]
pub struct Registry {
    store: Store,
    games: Arc<RwLock<HashMap<String, GameHandle>>>,
    summaries: Summaries,
    watcher_buffer: usize,
}

impl Registry {
    /// Rebuilds every game of the log before the server takes calls.
    pub fn restore(store: Store, watcher_buffer: usize) -> Result<Registry, String> {
        let registry = Registry {
            store: store.clone(),
            games: Arc::default(),
            summaries: Arc::default(),
            watcher_buffer,
        };
        let logs = store.load_all().map_err(|e| e.0)?;
        let count = logs.len();
        for (id, records) in logs {
            let handle = GameActor::restore(
                id.clone(),
                store.clone(),
                registry.summaries.clone(),
                watcher_buffer,
                records,
            )?;
            registry
                .games
                .write()
                .expect("games lock")
                .insert(id, handle);
        }
        tracing::info!(games = count, "rebuilt the games from the log");
        Ok(registry)
    }

    pub async fn create(
        &self,
        request: pb::CreateGameRequest,
    ) -> Result<pb::CreateGameResponse, Status> {
        let id = new_game_id();
        let seed = request.seed.unwrap_or_else(rand::random);
        let created = pb::Created {
            kind: request.kind,
            options: request.options,
            seed: Some(seed),
            preset: request.preset,
            players: 0,
        };
        let (reply, durable) = tokio::sync::oneshot::channel();
        let handle = GameActor::create(
            id.clone(),
            self.store.clone(),
            self.summaries.clone(),
            self.watcher_buffer,
            created,
            reply,
        )?;
        durable
            .await
            .map_err(|_| Status::internal("the game stopped before it was saved"))??;
        let players = self
            .summaries
            .lock()
            .expect("summaries lock")
            .get(&id)
            .map(|s| s.players)
            .unwrap_or_default();
        self.games
            .write()
            .expect("games lock")
            .insert(id.clone(), handle);
        Ok(pb::CreateGameResponse {
            game_id: id,
            players,
        })
    }

    pub fn get(&self, id: &str) -> Result<GameHandle, Status> {
        if id.is_empty() {
            return Err(Status::invalid_argument("game_id is required"));
        }
        self.games
            .read()
            .expect("games lock")
            .get(id)
            .cloned()
            .ok_or_else(|| {
                Status::not_found(format!("no game {id:?}: `gangs games` lists the games"))
            })
    }

    pub fn list(&self) -> Vec<pb::GameSummary> {
        let mut games: Vec<_> = self
            .summaries
            .lock()
            .expect("summaries lock")
            .values()
            .cloned()
            .collect();
        games.sort_by(|a, b| a.game_id.cmp(&b.game_id));
        games
    }

    /// Stops every actor (they finish their pending flushes first).
    pub fn close(&self) {
        self.games.write().expect("games lock").clear();
    }
}

fn new_game_id() -> String {
    let id = format!("{:016x}", rand::random::<u64>());
    debug_assert_eq!(id.len(), GAME_ID_LEN);
    id
}
