//! Every game the server knows, by id: creation, lookup, listing, and the rebuild from the log
//! at startup. Each game's state lives in its actor (`actor.rs`); this is only the directory.
//! A finished game's actor ends after a quiet spell; the game is then reloaded from the log
//! when someone asks for it again (`revive`), so memory holds the live games, not the history.

use crate::actor::{GameActor, GameHandle, Settings, Summaries};
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
    settings: Settings,
}

impl Registry {
    /// Rebuilds every game of the log before the server takes calls.
    pub async fn restore(store: Store, settings: Settings) -> Result<Registry, String> {
        let registry = Registry {
            store: store.clone(),
            games: Arc::default(),
            summaries: Arc::default(),
            settings,
        };
        // One game at a time, so that memory holds one finished game's log at most.
        let ids = store.game_ids().await.map_err(|e| e.message)?;
        let count = ids.len();
        let mut running = 0;
        for id in ids {
            let records = store.load_game(&id).await.map_err(|e| e.message)?;
            let actor = registry.rebuild(&id, records)?;
            // A finished game is listed, and loaded only when asked for.
            let handle = if actor.is_settled() {
                GameHandle::unloaded()
            } else {
                running += 1;
                actor.spawn()
            };
            registry
                .games
                .write()
                .expect("games lock")
                .insert(id, handle);
        }
        tracing::info!(games = count, running, "rebuilt the games from the log");
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
            self.settings,
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
                Status::not_found(format!(
                    "no game {}: `gangs games` lists the games",
                    gangs_proto::quoted(id)
                ))
            })
    }

    /// The game's actor again after the one in the directory ended (a finished game unloaded
    /// after a quiet spell): rebuilt from the log. Concurrent revivals may both rebuild; the
    /// directory keeps one, the other ends on its own (a finished game changes no more).
    pub async fn revive(&self, id: &str) -> Result<GameHandle, Status> {
        if let Some(handle) = self.live(id) {
            return Ok(handle);
        }
        let records = self
            .store
            .load_game(id)
            .await
            .map_err(|e| Status::internal(format!("reloading game {id}: {e}")))?;
        if records.is_empty() {
            return Err(Status::not_found(format!(
                "no game {id:?}: `gangs games` lists the games"
            )));
        }
        let handle = self.rebuild(id, records).map_err(Status::internal)?.spawn();
        let mut games = self.games.write().expect("games lock");
        match games.get(id) {
            Some(other) if !other.commands.is_closed() => Ok(other.clone()),
            _ => {
                games.insert(id.to_string(), handle.clone());
                Ok(handle)
            }
        }
    }

    /// A game's actor rebuilt from its records (listed, not yet running).
    fn rebuild(&self, id: &str, records: Vec<pb::LogRecord>) -> Result<GameActor, String> {
        GameActor::rebuild(
            id.to_string(),
            self.store.clone(),
            self.summaries.clone(),
            self.settings,
            records,
        )
    }

    fn live(&self, id: &str) -> Option<GameHandle> {
        self.games
            .read()
            .expect("games lock")
            .get(id)
            .filter(|h| !h.commands.is_closed())
            .cloned()
    }

    /// Games whose actor is in memory now (finished games unloaded are not counted).
    pub fn loaded_games(&self) -> usize {
        self.games
            .read()
            .expect("games lock")
            .values()
            .filter(|h| !h.commands.is_closed())
            .count()
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
