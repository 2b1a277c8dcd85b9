//! Every ladder of the server (`Ladders`): rebuilt from their logs at a start, created,
//! listed, found by name (a former name too, for Queue, a day after a rename), renamed and
//! deleted; each one run here with its matchmaker, house and hosted bots and unfinished games,
//! its bots' keys entered in the front.

use super::*;

/// Every ladder of the server, by name.
pub struct Ladders {
    pub(super) ctx: Arc<Context>,
    /// The ladders this node runs: every ladder on a single node; on a cluster, those whose
    /// turn it holds (`nodes.rs`).
    pub(super) ladders: RwLock<HashMap<String, Arc<Ladder>>>,
    /// Creations one at a time: a name is taken once.
    pub(super) creating: tokio::sync::Mutex<()>,
    /// Set on a cluster: the others run the rest of the ladders.
    pub(super) cluster: Option<Arc<Cluster>>,
    /// On a cluster, the ladders this node contends for (a task each, `nodes::keep`).
    pub(super) keepers: Mutex<HashSet<String>>,
    /// Former names (RenameLadder): old name -> the ladder's name now, and when it was left.
    pub(super) former_names: RwLock<HashMap<String, (String, i64)>>,
    /// Moves each time a ladder starts running here: a call waiting for a ladder this node
    /// just took over is woken by it (`nodes.rs`).
    pub(super) started: watch::Sender<u64>,
}

/// How long a renamed ladder still answers to its former name (Queue included), so that a bot
/// that did not hear of the rename finds it; then NOT_FOUND names the new name.
pub const FORMER_NAME_ANSWERS_MS: i64 = 24 * 3_600_000;

impl Ladders {
    /// Rebuilds every ladder from its log and resumes its matchmaker and unfinished games; on
    /// a cluster, contends for the turn of every ladder instead (`nodes.rs`).
    pub async fn restore(
        ctx: Context,
        cluster: Option<Arc<Cluster>>,
    ) -> Result<Arc<Ladders>, String> {
        let ctx = Arc::new(ctx);
        let ladders = Arc::new(Ladders {
            ctx: ctx.clone(),
            ladders: RwLock::default(),
            creating: tokio::sync::Mutex::new(()),
            cluster,
            keepers: Mutex::default(),
            former_names: RwLock::default(),
            started: watch::Sender::new(0),
        });
        let ids = ctx
            .ladder_logs
            .game_ids()
            .await
            .map_err(|e| format!("listing the ladders: {e}"))?;
        for id in ids {
            // On a cluster only the creation is needed here (the node that takes a ladder's
            // turn reads the whole log then).
            let log = match ladders.cluster {
                Some(_) => ctx.ladder_logs.read_range(&id, 0, 1).await,
                None => ctx.ladder_logs.load_game(&id).await,
            }
            .map_err(|e| format!("reading ladder log {id}: {e}"))?;
            let state = match LadderState::rebuild(&id, &log) {
                Ok(state) => state,
                Err(e) => {
                    tracing::error!(log = %id, "a ladder's log does not rebuild, the ladder is left out: {e}");
                    continue;
                }
            };
            if state.deleted {
                continue;
            }
            if ladders.cluster.is_some() {
                // Made before the cluster kept ladders' names: entered now (a name taken
                // meanwhile keeps its first ladder).
                ladders.adopt(&state).await?;
                continue;
            }
            tracing::info!(ladder = %state.info.name, bots = state.entries.len(), matches = state.matches.len(), "rebuilt a ladder from its log");
            ladders.start(state, ctx.stop.clone());
        }
        if ladders.cluster.is_some() {
            ladders.clone().contend();
        }
        Ok(ladders)
    }

    /// Runs a ladder here until `stop`: its matchmaker, its house bots and its unfinished
    /// games.
    pub(super) fn start(&self, state: LadderState, stop: watch::Receiver<bool>) -> Arc<Ladder> {
        let unfinished: Vec<(u64, u32)> = state
            .matches
            .values()
            .flat_map(|m| {
                m.games
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| g.result.is_none())
                    .map(|(g, _)| (m.no, g as u32))
            })
            .collect();
        grant_keys(self.ctx.games.front().bots(), &state);
        {
            let mut former = self.former_names.write().expect("former names lock");
            for (old, left_unix_ms) in &state.former_names {
                former.insert(old.clone(), (state.info.name.clone(), *left_unix_ms));
            }
        }
        let hosted_entries: Vec<usize> = (0..state.entries.len())
            .filter(|&i| state.entries[i].hosted.is_some() && !state.entries[i].retired)
            .collect();
        let ladder = Ladder::new(self.ctx.clone(), state, stop);
        tokio::spawn(ladder.clone().matchmaker());
        tokio::spawn(ladder.clone().publish_keys());
        tokio::spawn(house::run(ladder.clone()));
        for index in hosted_entries {
            tokio::spawn(hosted::play(ladder.clone(), index));
        }
        for (no, game) in unfinished {
            tokio::spawn(play::run_game(ladder.clone(), no, game));
        }
        self.ladders
            .write()
            .expect("ladders lock")
            .insert(ladder.name.clone(), ladder.clone());
        self.started.send_modify(|count| *count += 1);
        ladder
    }

    /// The server's hosted-bot runner.
    pub fn hosting(&self) -> &hosted::Hosting {
        &self.ctx.hosting
    }

    pub fn get(&self, name: &str) -> Result<Arc<Ladder>, HostError> {
        if name.is_empty() {
            return Err(HostError::invalid_argument(
                "ladder is required: `gangs ladder list` lists the ladders",
            ));
        }
        let ladders = self.ladders.read().expect("ladders lock");
        if let Some(ladder) = ladders.get(name) {
            return Ok(ladder.clone());
        }
        let renamed = self
            .former_names
            .read()
            .expect("former names lock")
            .get(name)
            .filter(|(now_called, _)| ladders.contains_key(now_called))
            .map(|(now_called, _)| now_called.clone());
        Err(HostError::not_found(match renamed {
            Some(now_called) => format!(
                "no ladder {}: it was renamed {}: use the new name",
                gangs_proto::quoted(name),
                gangs_proto::quoted(&now_called)
            ),
            None => format!(
                "no ladder {}: `gangs ladder list` lists the ladders",
                gangs_proto::quoted(name)
            ),
        }))
    }

    /// The name to queue on for a bot that queues on `name`: a former name (RenameLadder)
    /// answers as the new one for a day after the rename (`FORMER_NAME_ANSWERS_MS`), so a bot
    /// that did not hear of the rename finds its ladder (and hears the new name first).
    pub fn queue_name(&self, name: &str) -> String {
        let former = self
            .former_names
            .read()
            .expect("former names lock")
            .get(name)
            .cloned();
        match former {
            Some((now_called, left_unix_ms))
                if crate::actor::unix_ms() - left_unix_ms < FORMER_NAME_ANSWERS_MS
                    && !self
                        .ladders
                        .read()
                        .expect("ladders lock")
                        .contains_key(name) =>
            {
                now_called
            }
            _ => name.to_string(),
        }
    }

    /// Every ladder's creation, by name: the ones this node runs, and on a cluster the
    /// others' too.
    pub async fn list(&self) -> Vec<pb::Ladder> {
        let running: Vec<Arc<Ladder>> = self
            .ladders
            .read()
            .expect("ladders lock")
            .values()
            .cloned()
            .collect();
        let mut all: HashMap<String, pb::Ladder> = match &self.cluster {
            Some(cluster) => cluster
                .ladder_names()
                .into_iter()
                .map(|(name, l)| (name, l.info))
                .collect(),
            None => HashMap::new(),
        };
        for ladder in running {
            let info = ladder.state.lock().await.info.clone();
            all.insert(info.name.clone(), info);
        }
        let mut all: Vec<pb::Ladder> = all.into_values().collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// Logs a new ladder (checked by the caller) under a fresh log id and starts it (on a
    /// cluster: enters its name, then runs it here, `nodes.rs`).
    pub async fn create(self: &Arc<Self>, info: pb::Ladder) -> Result<pb::Ladder, HostError> {
        let _one_at_a_time = self.creating.lock().await;
        let taken = match &self.cluster {
            Some(cluster) => cluster.ladder_name(&info.name).await?.is_some(),
            None => self.get(&info.name).is_ok(),
        };
        if taken {
            return Err(name_taken(&info.name));
        }
        let log_id = loop {
            let id = records::new_log_id();
            let taken = self
                .ctx
                .ladder_logs
                .read_range(&id, 0, 1)
                .await
                .map_err(|e| unavailable("the log could not be read", e))?;
            if taken.is_empty() {
                break id;
            }
        };
        let record = records::to_log(1, info.created_unix_ms, Lr::Created(info.clone()));
        match self.ctx.ladder_logs.append(&log_id, vec![record]).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(unavailable("the ladder could not be saved", e)),
            Err(_) => return Err(HostError::unavailable("the server is shutting down")),
        }
        if self.cluster.is_some() {
            return self.enter_new(log_id, info).await;
        }
        let mut state = LadderState::new(log_id, info.clone());
        state.last_seq = 1;
        self.start(state, self.ctx.stop.clone());
        Ok(info)
    }
}

impl Ladders {
    /// Deletes ladder `name` (single node): refused while games of it are in play unless
    /// `force`, which cancels them. The number of games cancelled.
    pub async fn delete(self: &Arc<Self>, name: &str, force: bool) -> Result<u32, HostError> {
        self.single_node("deleted")?;
        let _one_at_a_time = self.creating.lock().await;
        let ladder = self.get(name)?;
        let mut state = ladder.state.lock().await;
        let in_play = games_in_play(&state);
        if !in_play.is_empty() && !force {
            return Err(HostError::failed_precondition(format!(
                "ladder {name} has {} games in play: wait until they are over, or pass --force (DeleteLadderRequest.force) to cancel them",
                in_play.len()
            )));
        }
        let cancelled = in_play.len() as u32;
        let record = Lr::Deleted(pb::ladder_record::LadderDeleted {
            cancelled_games: cancelled,
        });
        ladder.append(&mut state, record).await?;
        self.stop_running(
            &ladder,
            HostError::not_found(format!("ladder {name} was deleted")),
        );
        drop(state);
        for game_id in in_play {
            let request = pb::CancelGameRequest {
                game_id: game_id.clone(),
                reason: format!("ladder {name} was deleted"),
            };
            let cancelled = self
                .ctx
                .games
                .cancel_game_as(ladder.principal(), request)
                .await;
            if let Err(status) = cancelled {
                tracing::debug!(ladder = %name, game = %game_id, "cancelling a deleted ladder's game: {}", status.message());
            }
        }
        tracing::info!(ladder = %name, cancelled, "deleted a ladder");
        Ok(cancelled)
    }

    /// Renames ladder `name` to `new_name` (single node): logged, then run again under the new
    /// name (its games in play are picked up again, as after a restart).
    pub async fn rename(
        self: &Arc<Self>,
        name: &str,
        new_name: &str,
    ) -> Result<pb::Ladder, HostError> {
        self.single_node("renamed")?;
        let _one_at_a_time = self.creating.lock().await;
        let ladder = self.get(name)?;
        if name == new_name {
            return Ok(ladder.state.lock().await.info.clone());
        }
        if self.get(new_name).is_ok() {
            return Err(name_taken(new_name));
        }
        let mut state = ladder.state.lock().await;
        let record = Lr::Renamed(pb::ladder_record::LadderRenamed {
            name: new_name.to_string(),
        });
        ladder.append(&mut state, record).await?;
        // Every bot queued hears the new name, then its stream ends (OK): it queues again on
        // the new name; its games in play go on with the same seats and tokens.
        ladder.tell_renamed(name, new_name);
        self.stop_running(
            &ladder,
            HostError::unavailable(format!(
                "ladder {name} is now called {new_name}: queue again on {new_name}"
            )),
        );
        let renamed = state.clone();
        drop(state);
        let info = renamed.info.clone();
        self.start(renamed, self.ctx.stop.clone());
        tracing::info!(ladder = %new_name, was = %name, "renamed a ladder");
        Ok(info)
    }

    /// Stops running `ladder` here: its tasks end, it leaves the list, its keys are forgotten,
    /// its Queue streams end with `status`.
    pub(super) fn stop_running(&self, ladder: &Arc<Ladder>, status: HostError) {
        ladder.halt();
        self.ladders
            .write()
            .expect("ladders lock")
            .remove(&ladder.name);
        self.ctx.games.front().bots().forget_ladder(&ladder.name);
        ladder.close_all(status);
    }

    pub(super) fn single_node(&self, what: &str) -> Result<(), HostError> {
        match self.cluster {
            Some(_) => Err(HostError::failed_precondition(format!(
                "a ladder on a cluster cannot be {what} yet: only on a single node"
            ))),
            None => Ok(()),
        }
    }
}

/// The ids of the ladder's games not over yet (those not created yet by the ids they will
/// have).
fn games_in_play(state: &LadderState) -> Vec<String> {
    let mut ids = Vec::new();
    for m in state.matches.values() {
        for (g, game) in m.games.iter().enumerate() {
            if game.result.is_some() {
                continue;
            }
            ids.push(game.game_id.clone().unwrap_or_else(|| {
                crate::registry::game_id_of_create_id(&play::create_id(
                    &state.log_id,
                    m.no,
                    g as u32,
                ))
            }));
        }
    }
    ids
}

/// The keys of entry `index` replaced by a rekey without `now`: each entered, and granted
/// the games not over of the matches made before its replacement (and nothing else).
pub(super) fn grant_replaced_keys(bots: &BotGrants, state: &LadderState, index: usize) {
    let entry = &state.entries[index];
    if entry.replaced_keys.is_empty() {
        return;
    }
    for (hash, _) in &entry.replaced_keys {
        bots.enter(hash, &state.info.name, &entry.name(), entry.retired);
    }
    for m in state
        .matches
        .values()
        .filter(|m| m.entries.contains(&index))
    {
        for (g, game) in m.games.iter().enumerate() {
            if game.result.is_some() {
                continue;
            }
            let seats = matchmaker::seating(&m.entries, m.no, g);
            let Some(seat) = seats.iter().position(|&e| e == index) else {
                continue;
            };
            let game_id = game.game_id.clone().unwrap_or_else(|| {
                crate::registry::game_id_of_create_id(&play::create_id(
                    &state.log_id,
                    m.no,
                    g as u32,
                ))
            });
            let tokens = game.tokens.get(seat).map(|token| vec![token.clone()]);
            for (hash, last) in &entry.replaced_keys {
                if m.no <= *last {
                    bots.grant_game(hash, &game_id, tokens.clone());
                }
            }
        }
    }
}

/// Enters every bot key of a ladder this node starts running, with the games its state knows:
/// a finished game for its log, a running one with its seats' tokens once the ladder seated it
/// again (`play.rs`).
pub(super) fn grant_keys(bots: &BotGrants, state: &LadderState) {
    let ladder = &state.info.name;
    for entry in &state.entries {
        bots.enter(&entry.key_sha256, ladder, &entry.name(), entry.retired);
    }
    for index in 0..state.entries.len() {
        grant_replaced_keys(bots, state, index);
    }
    for m in state.matches.values() {
        for (g, game) in m.games.iter().enumerate() {
            let game_id = game.game_id.clone().unwrap_or_else(|| {
                crate::registry::game_id_of_create_id(&play::create_id(
                    &state.log_id,
                    m.no,
                    g as u32,
                ))
            });
            let seats = matchmaker::seating(&m.entries, m.no, g);
            for (seat, &entry) in seats.iter().enumerate() {
                let tokens = match game.tokens.get(seat) {
                    Some(token) => Some(vec![token.clone()]),
                    None if game.result.is_some() => Some(Vec::new()),
                    None => None,
                };
                bots.grant_game(&state.entries[entry].key_sha256, &game_id, tokens);
            }
        }
    }
}

pub(super) fn name_taken(name: &str) -> HostError {
    HostError::already_exists(format!(
        "ladder {} exists already: choose another name",
        gangs_proto::quoted(name)
    ))
}
