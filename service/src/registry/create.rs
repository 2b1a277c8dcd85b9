//! Creating games: `CreateGame` (idempotent by `create_id`: a retry, also through another
//! node of a cluster or after a restart, gets the same game) and `ImportGame` (a verified game
//! file stored under a new id).

use super::*;

/// A creation asked for with a `create_id`: its `created` record (decided once), and its
/// answer once the game is durable. Concurrent retries wait for the same answer.
pub(super) struct CreateSlot {
    pub(super) game_id: String,
    created: pb::Created,
    answer: OnceCell<pb::CreateGameResponse>,
}

impl Registry {
    /// A restored game's create_id, so that a retry after the restart finds its game.
    pub(super) fn remember_create_id(&self, id: &str, created: &pb::Created) {
        if created.create_id.is_empty() {
            return;
        }
        let slot = CreateSlot {
            game_id: id.to_string(),
            created: created.clone(),
            answer: OnceCell::new_with(Some(create_answer(id, created))),
        };
        self.create_ids
            .lock()
            .expect("create ids lock")
            .insert(created.create_id.clone(), Arc::new(slot));
    }

    /// Creates a game that no client's limits count (the server's own).
    pub async fn create(
        &self,
        request: pb::CreateGameRequest,
    ) -> HostResult<pb::CreateGameResponse> {
        self.create_for(request, String::new()).await
    }

    /// Creates a game for `creator` (`Client::log_id`, kept in its `created` record: the
    /// per-client limits count it again after a restart).
    pub async fn create_for(
        &self,
        request: pb::CreateGameRequest,
        creator: String,
    ) -> HostResult<pb::CreateGameResponse> {
        let create_id = request.create_id.clone();
        let seed_given = request.seed;
        let (game, mut created) = requested(request)?;
        created.creator = creator;
        if created.reserve_seats {
            // 128 random bits each from the OS-seeded CSPRNG: unguessable.
            created.invitations = (0..created.players)
                .map(|_| format!("{:032x}", rand::random::<u128>()))
                .collect();
        }
        if create_id.is_empty() {
            return self.start(self.new_id(), game, created).await;
        }
        let slot = {
            let mut slots = self.create_ids.lock().expect("create ids lock");
            slots
                .entry(create_id.clone())
                .or_insert_with(|| {
                    // On a shared log the id comes from the create_id: a retry through any
                    // node, or after a restart, names the same game, and the log's first
                    // record (written once: it expects an empty subject) deduplicates it.
                    let game_id = if self.lazy {
                        game_id_of_create_id(&create_id)
                    } else {
                        self.new_id()
                    };
                    Arc::new(CreateSlot {
                        game_id,
                        created: created.clone(),
                        answer: OnceCell::new(),
                    })
                })
                .clone()
        };
        if !same_creation(&slot.created, &created, seed_given) {
            return Err(reused_create_id(&create_id, &slot.game_id));
        }
        // The first caller creates the game (from the slot's record: a retry gets the same
        // seed and invitations); the others wait for its answer. A failed creation is tried
        // again by the next retry.
        let game_id = slot.game_id.clone();
        let first = slot.created.clone();
        let answer = slot
            .answer
            .get_or_try_init(|| {
                let engine = if first == created {
                    Ok(game)
                } else {
                    GameActor::new_game(first.clone()).map(|(game, _)| game)
                };
                async move {
                    // Created already through another node (or by this node's previous
                    // process): the game as logged is the answer.
                    if let Some(answer) = self.created_before(&game_id, &first, seed_given).await? {
                        return Ok(answer);
                    }
                    let started = self.start(game_id.clone(), engine?, first.clone()).await;
                    match started {
                        // Another node created it at the same moment (its first record won):
                        // the same answer as there.
                        Err(e) if self.lazy => self
                            .created_before(&game_id, &first, seed_given)
                            .await?
                            .ok_or(e),
                        started => started,
                    }
                }
            })
            .await?;
        Ok(answer.clone())
    }

    /// On a shared log, the answer for a game the log already holds under `id` (a creation
    /// with the same create_id made through another node or process); None when the log has
    /// no such game. A different game under that create_id is INVALID_ARGUMENT.
    pub(super) async fn created_before(
        &self,
        id: &str,
        again: &pb::Created,
        seed_given: Option<u64>,
    ) -> HostResult<Option<pb::CreateGameResponse>> {
        if !self.lazy {
            return Ok(None);
        }
        let first = self
            .store
            .read_range(id, 0, 1)
            .await
            .map_err(|e| HostError::Storage(format!("reading game {id}: {e}")))?;
        let Some(record) = first.first() else {
            return Ok(None);
        };
        let Some(Record::Created(created)) = &record.record else {
            return Err(HostError::Internal(format!(
                "game {id}'s first record is not its creation"
            )));
        };
        if created.create_id != again.create_id || !same_creation(created, again, seed_given) {
            return Err(HostError::Invalid(format!(
                "create_id {} was already used to create a different game ({id}): draw a new create_id for a new game",
                quoted(&again.create_id)
            )));
        }
        Ok(Some(create_answer(id, created)))
    }

    /// The answer to a CreateGame whose create_id already made its game (a retry after a lost
    /// answer), if it did: asked before any limit, since it creates nothing and a client must
    /// not be refused the game it already has. A create_id used for another game is refused.
    /// On a shared log the game may have been made by another node or before a restart: its
    /// id derives from the create_id, so the log says.
    pub async fn created_already(
        &self,
        request: &pb::CreateGameRequest,
    ) -> HostResult<Option<pb::CreateGameResponse>> {
        if request.create_id.is_empty() {
            return Ok(None);
        }
        let slot = self
            .create_ids
            .lock()
            .expect("create ids lock")
            .get(&request.create_id)
            .cloned();
        let Some((slot, answer)) = slot.and_then(|s| s.answer.get().cloned().map(|a| (s, a)))
        else {
            if !self.lazy {
                return Ok(None);
            }
            let (_, again) = requested(request.clone())?;
            let id = game_id_of_create_id(&request.create_id);
            return self.created_before(&id, &again, request.seed).await;
        };
        let (_, again) = requested(request.clone())?;
        if !same_creation(&slot.created, &again, request.seed) {
            return Err(reused_create_id(&request.create_id, &slot.game_id));
        }
        Ok(Some(answer))
    }

    /// Starts a new game's actor and answers once its `created` record is durable.
    pub(super) async fn start(
        &self,
        id: String,
        game: Box<dyn gangs_games::Game>,
        created: pb::Created,
    ) -> HostResult<pb::CreateGameResponse> {
        self.refuse_when_stopping()?;
        let answer = create_answer(&id, &created);
        let (reply, durable) = tokio::sync::oneshot::channel();
        let handle = GameActor::create(
            id.clone(),
            self.store.clone(),
            self.summaries.clone(),
            self.settings,
            (game, created),
            reply,
        );
        // In the directory before its summary is published (once durable): a caller that
        // finds the game listed reaches this actor, never a second one loaded from the log.
        self.games.write().expect("games lock").insert(id, handle);
        durable
            .await
            .map_err(|_| HostError::Internal("the game stopped before it was saved".into()))??;
        Ok(answer)
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
        let id = self.new_id();
        self.store
            .append(&id, records.clone())
            .await
            .map_err(|_| {
                HostError::Unavailable("the store stopped before the game was saved".into())
            })?
            .map_err(|e| HostError::Storage(format!("the game was not saved: {}", e.message)))?;
        // Listed from its summary and loaded from the log when asked for, like any finished game.
        let count = records.len() as u64;
        self.rebuild(&id, crate::store::StoredLog::Decoded(records))?;
        Ok(pb::ImportGameResponse {
            game_id: id,
            records: count,
        })
    }
}

/// The engine and `created` record (defaults filled in, a seed drawn when none is given, no
/// invitations or creator yet) a CreateGame asks for.
pub(super) fn requested(
    request: pb::CreateGameRequest,
) -> HostResult<(Box<dyn gangs_games::Game>, pb::Created)> {
    GameActor::new_game(pb::Created {
        seed: Some(request.seed.unwrap_or_else(rand::random)),
        kind: request.kind,
        options: request.options,
        preset: request.preset,
        players: 0,
        reserve_seats: request.reserve_seats,
        invitations: Vec::new(),
        create_id: request.create_id,
        creator: String::new(),
    })
}

/// What a CreateGame reusing `create_id` (of game `game_id`) for another game answers.
pub(super) fn reused_create_id(create_id: &str, game_id: &str) -> HostError {
    HostError::Invalid(format!(
        "create_id {} was already used to create a different game ({game_id}): draw a new create_id for a new game",
        quoted(create_id)
    ))
}

/// What CreateGame answers for a game created from `created`.
pub(super) fn create_answer(id: &str, created: &pb::Created) -> pb::CreateGameResponse {
    pb::CreateGameResponse {
        game_id: id.to_string(),
        players: created.players,
        invitations: created.invitations.clone(),
    }
}

/// Whether a retried creation (`again`, with a fresh seed when none was given, and fresh
/// invitations) asks for the same game as the first (`first`, as logged).
pub(super) fn same_creation(
    first: &pb::Created,
    again: &pb::Created,
    seed_given: Option<u64>,
) -> bool {
    first.kind == again.kind
        && first.options == again.options
        && first.preset == again.preset
        && first.players == again.players
        && first.reserve_seats == again.reserve_seats
        && seed_given.is_none_or(|seed| first.seed == Some(seed))
}

/// The game id a create_id names on a shared log: FNV-1a (64 bits, a fixed algorithm: every
/// node and every version computes the same id) of its bytes. A collision of two create_ids
/// answers the second with INVALID_ARGUMENT (a different game), never with the other's game.
pub fn game_id_of_create_id(create_id: &str) -> String {
    format!("{:016x}", fnv1a_64(create_id))
}

/// FNV-1a, 64 bits: a fixed hash every node and every version computes alike (game ids from
/// create_ids here, a game's shard in `cluster/shards.rs`).
pub fn fnv1a_64(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

pub(super) fn new_game_id() -> String {
    let id = format!("{:016x}", rand::random::<u64>());
    debug_assert_eq!(id.len(), GAME_ID_LEN);
    id
}
