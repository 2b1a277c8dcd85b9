//! Every game the server knows, by id: creation, lookup, listing, and the rebuild from the log
//! at startup. Each game's state lives in its actor (`actor.rs`); this is only the directory.
//! A finished game's actor ends after a quiet spell; the game is then reloaded from the log
//! when someone asks for it again (`revive`), so memory holds the live games, not the history.

use crate::actor::{GameActor, GameHandle, Settings, Summaries};
use crate::error::{HostError, HostResult};
use crate::store::{Store, GAME_ID_LEN};
use gangs_games::game_file::{GameFile, GameFileError, Header};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

#[derive(Clone)]
pub struct Registry {
    store: Store,
    games: Arc<RwLock<HashMap<String, GameHandle>>>,
    summaries: Summaries,
    settings: Settings,
}

impl Registry {
    /// Rebuilds every game of the log before the server takes calls.
    pub async fn restore(store: Store, settings: Settings) -> HostResult<Registry> {
        let registry = Registry {
            store: store.clone(),
            games: Arc::default(),
            summaries: Arc::default(),
            settings,
        };
        // One game at a time, so that memory holds one finished game's log at most.
        let ids = store
            .game_ids()
            .await
            .map_err(|e| HostError::Storage(e.message))?;
        let count = ids.len();
        let mut running = 0;
        for id in ids {
            let records = store
                .load_game(&id)
                .await
                .map_err(|e| HostError::Storage(e.message))?;
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
    ) -> HostResult<pb::CreateGameResponse> {
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
            .map_err(|_| HostError::Internal("the game stopped before it was saved".into()))??;
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

    /// Loads a finished game from a game file's header (None: derived from the records) and
    /// records under a new id (`ImportGame`). The file is verified as `gangs replay --file
    /// --verify` does, through the engine, before anything is stored: a tampered, cut or
    /// unfinished log stores nothing. Seat tokens are dropped (nobody acts in an imported game);
    /// seats without a token are how an imported game is known, after a restart too.
    pub async fn import(
        &self,
        header: Option<Header>,
        mut records: Vec<pb::LogRecord>,
    ) -> HostResult<pb::ImportGameResponse> {
        for record in &mut records {
            if let Some(Record::Joined(joined)) = &mut record.record {
                joined.token.clear();
                joined.join_id.clear();
            }
        }
        let refused =
            |e: GameFileError| HostError::Invalid(format!("the game cannot be imported: {e}"));
        let header = match header {
            Some(header) => header,
            None => {
                GameFile::from_log("", records.clone())
                    .map_err(refused)?
                    .header
            }
        };
        let file = GameFile { header, records };
        file.verify().map_err(refused)?;
        let records = file.records;
        let id = new_game_id();
        self.store
            .append(&id, records.clone())
            .await
            .map_err(|_| {
                HostError::Unavailable("the store stopped before the game was saved".into())
            })?
            .map_err(|e| HostError::Storage(format!("the game was not saved: {}", e.message)))?;
        // Listed from its summary and loaded from the log when asked for, like any finished game.
        let count = records.len() as u64;
        self.rebuild(&id, records)?;
        self.games
            .write()
            .expect("games lock")
            .insert(id.clone(), GameHandle::unloaded());
        Ok(pb::ImportGameResponse {
            game_id: id,
            records: count,
        })
    }

    pub fn get(&self, id: &str) -> HostResult<GameHandle> {
        if id.is_empty() {
            return Err(HostError::Invalid("game_id is required".into()));
        }
        self.games
            .read()
            .expect("games lock")
            .get(id)
            .cloned()
            .ok_or_else(|| not_found(id))
    }

    /// The game's actor again after the one in the directory ended (a finished game unloaded
    /// after a quiet spell): rebuilt from the log. Concurrent revivals may both rebuild; the
    /// directory keeps one, the other ends on its own (a finished game changes no more).
    pub async fn revive(&self, id: &str) -> HostResult<GameHandle> {
        if let Some(handle) = self.live(id) {
            return Ok(handle);
        }
        let records = self
            .store
            .load_game(id)
            .await
            .map_err(|e| HostError::Internal(format!("reloading game {id}: {e}")))?;
        if records.is_empty() {
            return Err(not_found(id));
        }
        let handle = self.rebuild(id, records)?.spawn();
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
    fn rebuild(&self, id: &str, records: Vec<pb::LogRecord>) -> HostResult<GameActor> {
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

    /// Counts the games not finished (waiting for seats or running), for the metrics sampler.
    /// It holds only the summaries, never the store: the store must close at shutdown.
    pub fn live_games_counter(&self) -> impl Fn() -> usize + Send + 'static {
        let summaries = self.summaries.clone();
        move || {
            use pb::GameStatus::{Running, Waiting};
            let summaries = summaries.lock().expect("summaries lock");
            summaries
                .values()
                .filter(|g| g.status == Waiting as i32 || g.status == Running as i32)
                .count()
        }
    }

    /// Stops every actor (they finish their pending flushes first).
    pub fn close(&self) {
        self.games.write().expect("games lock").clear();
    }
}

fn not_found(id: &str) -> HostError {
    HostError::NotFound(format!(
        "no game {}: `gangs games` lists the games",
        gangs_proto::quoted(id)
    ))
}

fn new_game_id() -> String {
    let id = format!("{:016x}", rand::random::<u64>());
    debug_assert_eq!(id.len(), GAME_ID_LEN);
    id
}
