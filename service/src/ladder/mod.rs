//! Ladders: standing competitions the server runs itself. Bots queue with their key;
//! the server pairs them, creates each game with clocks through the host's own typed API, as
//! "the ladder NAME" (`GamesService::create_game_as` and the others: the same admission, limits,
//! routing and durability as any client's call), takes the bots'
//! seats for them, rates every result and keeps the leaderboard. Map:
//! - `records.rs`: the ladder's log (one per ladder, in the game store) and the state it folds
//!   into; the only way the state changes;
//! - `matchmaker.rs`: which queued bots play together (pure);
//! - `rating.rs`: Weng-Lin and the leaderboard's statistics (pure);
//! - `fit.rs`: Plackett–Luce over every result at once, bootstrap intervals, tiers (pure);
//! - `play.rs`: one game of a match: create, seat, watch to the end, rate; `referee.rs`: its
//!   seats watched as it runs (a missing bot paused at once) and the words of a pause;
//! - `house.rs`: the server's own bots on a ladder (shipped policies, played in-process);
//! - `hosted.rs`, `bot_log.rs`: hosted bots (WebAssembly modules the server runs) and their
//!   stderr, kept in memory for their owners;
//! - `rerate.rs`: the leaderboard recomputed from the games' own logs, compared with the kept one;
//! - `nodes.rs`: ladders on a cluster: one node runs each ladder (its turn), the others
//!   forward its calls there; names unique and known to every node;
//! - `api.rs`: the `gangs.v1.Ladders` gRPC adapter; `reads.rs`: the reads in the host's typed
//!   API (the viewer's and the adapter's); `read_models.rs`: the standings, a bot's report and a
//!   page of games, built from the state;
//! - `ladders.rs`: the directory of ladders (rebuilt at startup, created, renamed, deleted);
//! - `queue.rs`: a ladder's Queue streams (a bot's Queue call, its events, heartbeats).
//!
//! Here: one ladder's runtime (its state behind one lock that also orders its appends, its
//! registrations, keys, pauses and seasons, its matchmaker task).
//!
//! Durability: a record is applied to the state, and anyone told, only once the store has it.
//! A match is logged before its games are created; the games are created and joined with ids
//! derived from the match (`create_id`, `join_id`), so a restart creates nothing twice and gets
//! the same seats and tokens back. A game is rated by one record, refused a second time.

pub mod api;
pub mod bot_log;
pub mod creation;
pub mod fit;
pub mod hosted;
pub mod house;
mod ladders;
pub mod matchmaker;
pub mod nodes;
mod owners;
pub mod play;
mod queue;
pub mod rating;
pub mod read_models;
mod reads;
pub mod records;
mod referee;
pub mod rerate;
pub mod routes;

use ladders::{grant_replaced_keys, name_taken};
pub use ladders::{Ladders, FORMER_NAME_ANSWERS_MS};

use crate::api::GamesService;
use crate::cluster::Cluster;
use crate::error::{HostError, HostResult};
use crate::front::{BotGrants, Principal};
use crate::store::{Store, StoreErrorKind};
use gangs_proto::v1 as pb;
use pb::ladder_event::paused::Reason;
use pb::ladder_record::Record as Lr;
use records::LadderState;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch, Notify};

/// Games a bot may play at once on one key (a duplicate ladder counts matches); a Queue
/// asking for more is refused naming the cap (`bounds.rs`).
pub const MAX_CONCURRENT: u32 = crate::bounds::MAX_CONCURRENT_GAMES;
/// Games one bot key may be matched to per sliding hour, by default (`--ladder-games-per-hour`):
/// none. A ladder of one-second games at 8 at once is ~29,000 games an hour per bot, so any
/// fixed default either starves such a ladder or protects nothing; a bot's pace is bounded by
/// `MAX_CONCURRENT` games at once on the ladder's clocks, and the host by its own limits on
/// live games (`--max-live-games`). An organizer sets the cap for a fair share.
pub const DEFAULT_GAMES_PER_HOUR: u32 = 0;
/// The cap's words and flag, in the `capped` event and the standings.
const HOURLY_CAP: &str = "games per hour";
const HOURLY_FLAG: &str = "--ladder-games-per-hour";
const HOUR_MS: i64 = 3_600_000;

/// The server's ladder flags.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// `--open-registration`: RegisterBot needs no key.
    pub open_registration: bool,
    /// `--ladder-games-per-hour` (0: no limit).
    pub games_per_hour: u32,
    /// `--max-submits-per-hour` (0: no limit).
    pub submits_per_hour: u32,
}

/// The default of `--max-submits-per-hour`.
pub const DEFAULT_SUBMITS_PER_HOUR: u32 = 20;

/// A Queue stream hears something at least this often.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);
/// Events buffered per Queue stream; a bot that reads none of them loses its stream (it
/// resumes with Queue and gets its matched games again).
const QUEUE_BUFFER: usize = 64;
/// The matchmaker looks again at least this often (besides every queue and result).
const MATCH_EVERY: Duration = Duration::from_secs(1);

pub type EventSender = mpsc::Sender<Result<pb::LadderEvent, HostError>>;

/// What every ladder shares: the store, the games service, the policy, the stop.
pub struct Context {
    /// The games' namespace of the store (a ladder reads its games' logs).
    pub store: Store,
    /// The ladders' namespace: every ladder's own log.
    pub ladder_logs: Store,
    pub games: GamesService,
    pub policy: Policy,
    pub stop: watch::Receiver<bool>,
    /// Runs the hosted bots' decisions (`hosted.rs`).
    pub hosting: Arc<hosted::Hosting>,
}

/// Sleeps `pause`; false when `stop` turns true meanwhile.
async fn pause_unless(stop: &watch::Receiver<bool>, pause: Duration) -> bool {
    let mut stopped = stop.clone();
    tokio::select! {
        _ = stopped.wait_for(|s| *s) => false,
        _ = tokio::time::sleep(pause) => !*stop.borrow(),
    }
}

/// One bot's open Queue stream.
pub struct Session {
    id: u64,
    tx: EventSender,
    max_concurrent: u32,
    /// Games it may still be matched to on this stream (None: no limit).
    remaining: Option<u32>,
    /// Games matched on this stream and not over: (match, game).
    open: HashSet<(u64, u32)>,
    since_unix_ms: i64,
    /// The stream was told its bot reached a cap (once each time it reaches it).
    capped_told: bool,
    /// The stream was told its bot waits while hosted decisions back up (once each time).
    backlog_told: bool,
}

/// One ladder at run time.
pub struct Ladder {
    ctx: Arc<Context>,
    /// The state; the lock also orders the ladder's appends.
    state: tokio::sync::Mutex<LadderState>,
    /// Entry index -> its Queue stream.
    sessions: Mutex<HashMap<usize, Session>>,
    next_session: AtomicU64,
    wake: Notify,
    pub name: String,
    /// "The ladder NAME": who its games' calls come from (`front::Principal::Ladder`).
    principal: Principal,
    /// Moves each time a record is applied (the viewer's live leaderboard waits on it).
    changed: watch::Sender<u64>,
    /// True when this node stops running the ladder: the server stops, (on a cluster) another
    /// node took its turn, or the ladder was deleted or renamed (`halt`). Every task of the
    /// ladder ends then.
    stop: watch::Receiver<bool>,
    /// Stops this runtime of the ladder alone (deleted, or renamed: run again under its new
    /// name).
    halt: Arc<watch::Sender<bool>>,
    /// Its hosted entries' stderr, in memory (`GetBotLog`).
    bot_logs: Arc<bot_log::BotLogs>,
    /// Each bot's submissions in the last hour (unix ms), for `--max-submits-per-hour`.
    submits: Mutex<HashMap<String, std::collections::VecDeque<i64>>>,
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> HostError {
    HostError::unavailable(format!("{what}: {e}; try again"))
}

impl Ladder {
    fn new(ctx: Arc<Context>, state: LadderState, outer: watch::Receiver<bool>) -> Arc<Ladder> {
        // Its own stop: set when `outer` is, or by `halt`.
        let (halt, stop) = watch::channel(*outer.borrow());
        let halt = Arc::new(halt);
        let follow = halt.clone();
        tokio::spawn(async move {
            let mut outer = outer;
            let mut own = follow.subscribe();
            tokio::select! {
                _ = outer.wait_for(|s| *s) => { let _ = follow.send(true); }
                _ = own.wait_for(|s| *s) => {}
            }
        });
        Arc::new(Ladder {
            ctx,
            name: state.info.name.clone(),
            principal: Principal::Ladder(state.info.name.clone()),
            state: tokio::sync::Mutex::new(state),
            sessions: Mutex::default(),
            next_session: AtomicU64::new(1),
            wake: Notify::new(),
            changed: watch::Sender::new(0),
            stop,
            halt,
            bot_logs: Arc::default(),
            submits: Mutex::default(),
        })
    }

    /// Counts a submission of `bot` now, or refuses it past `--max-submits-per-hour` (every
    /// submission costs the host a compile).
    pub fn admit_submit(&self, bot: &str) -> Result<(), HostError> {
        let limit = self.ctx.policy.submits_per_hour;
        if limit == 0 {
            return Ok(());
        }
        let now = crate::actor::unix_ms();
        let mut submits = self.submits.lock().expect("submits lock");
        let times = submits.entry(bot.to_string()).or_default();
        while times.front().is_some_and(|&at| now - at >= 3_600_000) {
            times.pop_front();
        }
        if times.len() >= limit as usize {
            let again = times.front().map_or(now, |&at| at + 3_600_000);
            return Err(HostError::Exhausted(format!(
                "bot {bot} submitted {} versions to ladder {} in the last hour: the limit is {limit} (--max-submits-per-hour); submit again after {}",
                times.len(),
                self.name,
                gangs_proto::time::utc_text(again)
            )));
        }
        times.push_back(now);
        Ok(())
    }

    /// Stops this runtime of the ladder: its tasks end, its appends are refused.
    fn halt(&self) {
        let _ = self.halt.send(true);
    }

    /// Who this ladder's calls to the games service come from: "the ladder NAME", given to the
    /// host's typed API (never a key, never a made-up request).
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// What the ladders' bot keys may do in the Games service.
    fn bots(&self) -> &BotGrants {
        self.ctx.games.front().bots()
    }

    /// The cluster this node is part of, if any: the ladder publishes its bots' keys and games
    /// there, for bots calling other nodes (`cluster/bot_keys.rs`).
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.ctx.games.front().cluster()
    }

    /// Publishes the key `hash` of `bot` to the cluster (if any), unless published as it is
    /// already. Called with the ladder's state locked: the keys are published in the order
    /// they change. A failure is logged (the ladder's next start publishes every key again).
    async fn publish_key(&self, hash: &str, bot: String, retired: bool) {
        let Some(cluster) = self.cluster() else {
            return;
        };
        let key = crate::cluster::PublishedKey {
            ladder: self.name.clone(),
            bot,
            retired,
        };
        if cluster.bot_key(hash).as_ref() == Some(&key) {
            return;
        }
        if let Err(e) = cluster.publish_bot_key(hash, &key).await {
            tracing::error!(ladder = %self.name, bot = %key.bot, "publishing a bot key to the cluster: {}", e.message());
        }
    }

    /// Publishes every key of the ladder that the cluster does not have as it is (this node
    /// starts running the ladder: another node may have run it before).
    async fn publish_keys(self: Arc<Self>) {
        if self.cluster().is_none() {
            return;
        }
        let state = self.state.lock().await;
        for entry in &state.entries {
            self.publish_key(&entry.key_sha256, entry.name(), entry.retired)
                .await;
        }
    }

    /// Whether this node stopped running the ladder.
    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Sleeps `pause`; false when this node stops running the ladder meanwhile.
    pub async fn pause(&self, pause: Duration) -> bool {
        pause_unless(&self.stop, pause).await
    }

    /// The seed of the ladder's game `game_id` (every game of a match is dealt from the
    /// match's seed), while the ladder keeps its match.
    pub async fn seed_of(&self, game_id: &str) -> Option<u64> {
        let state = self.state.lock().await;
        state.matches.values().find_map(|m| {
            (0..m.games.len())
                .any(|g| {
                    let id = m.games[g].game_id.clone().unwrap_or_else(|| {
                        crate::registry::game_id_of_create_id(&play::create_id(
                            &state.log_id,
                            m.no,
                            g as u32,
                        ))
                    });
                    id == game_id
                })
                .then_some(m.seed)
        })
    }

    /// Waits until entry `index` is not paused (an admin lifted its pause); false when it is
    /// retired or this node stops running the ladder meanwhile.
    pub async fn wait_unpaused(&self, index: usize) -> bool {
        let mut changed = self.changed.subscribe();
        loop {
            {
                let state = self.state.lock().await;
                let entry = &state.entries[index];
                if entry.retired {
                    return false;
                }
                if entry.paused.is_none() {
                    return true;
                }
            }
            let mut stop = self.stop.clone();
            tokio::select! {
                _ = stop.wait_for(|s| *s) => return false,
                moved = changed.changed() => if moved.is_err() { return false },
            }
        }
    }

    /// Appends one record and applies it once durable. A failed append reloads the state from
    /// the log (another node may have written, or part of the log is unknown now).
    async fn append(&self, state: &mut LadderState, record: Lr) -> Result<(), HostError> {
        if self.stopping() {
            // Deleted, renamed (the new runtime writes now), or run by another node.
            return Err(HostError::unavailable(format!(
                "ladder {} is not run here any more; try again",
                self.name
            )));
        }
        let seq = state.last_seq + 1;
        let now = crate::actor::unix_ms();
        // A game's result enters the directory feed: the webhooks send it (`ladder.result`);
        // `WatchGames` leaves ladders' records out.
        let marked = match &record {
            Lr::Rated(_) => vec![seq],
            _ => Vec::new(),
        };
        let durable = self.ctx.ladder_logs.append_marked(
            &state.log_id,
            vec![records::to_log(seq, now, record.clone())],
            marked,
        );
        let failure = match durable.await {
            Ok(Ok(())) => {
                let applied = state
                    .apply(seq, now, record)
                    .map_err(|e| HostError::internal(format!("ladder {}: {e}", state.info.name)));
                self.changed.send_modify(|n| *n += 1);
                return applied;
            }
            Ok(Err(e)) if e.kind == StoreErrorKind::Conflict => {
                unavailable("another node wrote to this ladder first", e)
            }
            Ok(Err(e)) => unavailable("the ladder's log could not be written", e),
            Err(_) => HostError::unavailable("the server is shutting down"),
        };
        if let Err(e) = self.reload(state).await {
            tracing::error!(ladder = %self.name, "reloading the ladder after a failed append: {e}");
        }
        Err(failure)
    }

    /// Logs a new entry `bot@version` (the caller checked the name is free) with a fresh bot
    /// key; the key, which the ladder keeps only hashed.
    async fn register(
        &self,
        state: &mut LadderState,
        bot: String,
        version: String,
    ) -> Result<String, HostError> {
        let key = new_bot_key();
        let name = records::entry_name(&bot, &version);
        let key_sha256 = creation::key_hash(&key);
        let record = Lr::Registered(pb::ladder_record::BotRegistered {
            bot,
            version,
            key_sha256: key_sha256.clone(),
        });
        self.append(state, record).await?;
        // The key plays its games from now on (`front/bots.rs`).
        self.bots().enter(&key_sha256, &self.name, &name, false);
        self.publish_key(&key_sha256, name, false).await;
        Ok(key)
    }

    /// Logs a new hosted entry `bot@version` (SubmitBot; the caller checked the name is free
    /// and the module) with a fresh bot key; the key.
    async fn register_hosted(
        &self,
        state: &mut LadderState,
        bot: String,
        version: String,
        module: &records::HostedModule,
    ) -> HostResult<String> {
        let key = new_bot_key();
        let name = records::entry_name(&bot, &version);
        let key_sha256 = creation::key_hash(&key);
        let inline = !self.ctx.ladder_logs.keeps_modules();
        let record = hosted::submitted(bot, version, key_sha256.clone(), module, inline);
        self.append(state, record).await?;
        self.bots().enter(&key_sha256, &self.name, &name, false);
        Ok(key)
    }

    /// Gives entry `index` a new bot key (the caller checked it is not retired); the key, which
    /// the ladder keeps only hashed. The old key stops at once: Queue refuses it (its open
    /// stream ends), and so does the Games service.
    ///
    /// Without `now`, the old key plays the games it was matched to before to their end (its
    /// grants stay; the new key gets them too) and its Queue stream drains: nothing new is
    /// matched on it, and it ends (OK) once those games are over; queueing needs the new key.
    /// With `now` (a leaked key), the old key stops at once, in its games in play too.
    async fn rekey(
        &self,
        state: &mut LadderState,
        index: usize,
        now: bool,
    ) -> Result<String, HostError> {
        let key = new_bot_key();
        let key_sha256 = creation::key_hash(&key);
        let old = state.entries[index].key_sha256.clone();
        let entry = &state.entries[index];
        let earlier: Vec<String> = entry.replaced_keys.iter().map(|(h, _)| h.clone()).collect();
        let record = Lr::Rekeyed(pb::ladder_record::BotRekeyed {
            bot: entry.bot.clone(),
            version: entry.version.clone(),
            key_sha256: key_sha256.clone(),
            now,
            last_match: state.next_match_no() - 1,
        });
        self.append(state, record).await?;
        let name = state.entries[index].name();
        if now {
            self.bots().rekey(&old, &key_sha256);
            for replaced in &earlier {
                self.bots().forget(replaced);
            }
            if let Some(cluster) = self.cluster() {
                if let Err(e) = cluster.withdraw_bot_key(&old).await {
                    tracing::error!(ladder = %self.name, "withdrawing a replaced bot key from the cluster: {}", e.message());
                }
            }
            self.close_session(
                index,
                Some(HostError::permission_denied(format!(
                    "the key of {name} on ladder {} was replaced at once (gangs ladder rekey --now): it plays nothing more, its games in play included; queue with the new key",
                    self.name
                ))),
            );
        } else {
            self.bots().rekey(&old, &key_sha256);
            grant_replaced_keys(self.bots(), state, index);
            self.drain_session(index);
        }
        self.publish_key(&key_sha256, name, false).await;
        Ok(key)
    }

    /// Ends the current season now: its standings are frozen, the next one starts every entry
    /// from the initial rating. The season ended.
    async fn end_season(&self, state: &mut LadderState) -> Result<u32, HostError> {
        let season = state.info.season;
        let last_match = state.next_match_no() - 1;
        let record = Lr::SeasonEnded(pb::ladder_record::SeasonEnded { season, last_match });
        self.append(state, record).await?;
        tracing::info!(ladder = %self.name, season, "a season ended: its standings are frozen");
        Ok(season)
    }

    /// Sets (or clears) when the current season ends.
    async fn plan_season(
        &self,
        state: &mut LadderState,
        ends: Option<i64>,
    ) -> Result<(), HostError> {
        let record = Lr::SeasonPlanned(pb::ladder_record::SeasonPlanned { ends_unix_ms: ends });
        self.append(state, record).await
    }

    /// Ends the current season once its planned end has come.
    async fn season_due(&self) -> Result<(), HostError> {
        let mut state = self.state.lock().await;
        let now = crate::actor::unix_ms();
        if state.info.season_ends_unix_ms.is_some_and(|end| now >= end) {
            self.end_season(&mut state).await?;
        }
        Ok(())
    }

    /// The state as the log has it, keeping what only this process knows (games and tokens).
    async fn reload(&self, state: &mut LadderState) -> Result<(), String> {
        // Loaded to write: the store takes the ladder's appends again after a failed one.
        let records = self
            .ctx
            .ladder_logs
            .load_to_write(&state.log_id)
            .await
            .map_err(|e| e.to_string())?;
        let mut fresh = LadderState::rebuild(&state.log_id, &records)?;
        for (no, m) in &mut fresh.matches {
            if let Some(old) = state.matches.get(no) {
                for (game, old_game) in m.games.iter_mut().zip(&old.games) {
                    if game.game_id.is_none() {
                        game.game_id.clone_from(&old_game.game_id);
                    }
                    game.tokens.clone_from(&old_game.tokens);
                }
            }
        }
        *state = fresh;
        Ok(())
    }

    /// Logs that an entry is paused for `reason` (or, `lifted`, that its pause is over) and,
    /// for a new pause, tells its Queue stream why.
    async fn set_paused(
        &self,
        state: &mut LadderState,
        entry: usize,
        reason: Reason,
        detail: String,
        lifted: bool,
    ) -> Result<(), HostError> {
        let paused = &state.entries[entry];
        let record = Lr::Paused(pb::ladder_record::BotPaused {
            bot: paused.bot.clone(),
            version: paused.version.clone(),
            reason: reason as i32,
            detail: detail.clone(),
            lifted,
        });
        self.append(state, record).await?;
        if reason == Reason::Retired && !lifted {
            // A retired bot's key no longer plays, its running games included.
            self.bots().retire(&state.entries[entry].key_sha256);
            let retired = &state.entries[entry];
            self.publish_key(&retired.key_sha256, retired.name(), true)
                .await;
        }
        if !lifted {
            let reason = reason as i32;
            let event = pb::ladder_event::Paused { reason, detail };
            self.send(entry, pb::ladder_event::Event::Paused(event));
        }
        Ok(())
    }

    /// The matchmaker: a round on every queue, result and pause, and at least every second.
    async fn matchmaker(self: Arc<Self>) {
        let mut stop = self.stop.clone();
        loop {
            tokio::select! {
                _ = stop.wait_for(|s| *s) => {
                    // The Queue streams end with the server (a graceful shutdown waits for
                    // every open stream), or when another node of a cluster takes the ladder:
                    // UNAVAILABLE, so that a bot queues again rather than thinking it drained.
                    self.close_all(HostError::unavailable(format!(
                        "ladder {} stops running on this server (it is stopping, or another node of the cluster takes the ladder over): queue again",
                        self.name
                    )));
                    crate::metrics::ladder_bots_queued(&self.name, 0);
                    // Its bots' keys are the node's that runs it now. A server that stops
                    // keeps them until it is gone: its games answer their seats' calls until
                    // the actors stop (then UNAVAILABLE, and the bots retry), where a key
                    // refused would have stopped each bot for good and charged it timeouts
                    // after the next start.
                    if !*self.ctx.stop.borrow() {
                        self.bots().forget_ladder(&self.name);
                    }
                    return;
                }
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(MATCH_EVERY) => {}
            }
            if let Err(e) = self.season_due().await {
                tracing::warn!(ladder = %self.name, "ending a season: {}", e.message());
            }
            if let Err(e) = self.match_round().await {
                tracing::warn!(ladder = %self.name, "matching: {}", e.message());
            }
            let queued = self.sessions.lock().expect("sessions lock").len();
            crate::metrics::ladder_bots_queued(&self.name, queued);
        }
    }

    /// Games the entry may still be matched to in this sliding hour (None: no limit).
    fn games_left_this_hour(&self, state: &LadderState, entry: usize, now: i64) -> Option<u32> {
        let cap = self.ctx.policy.games_per_hour;
        if cap == 0 {
            return None;
        }
        let recent: u32 = state
            .matches
            .values()
            .rev()
            .take_while(|m| m.matched_unix_ms > now - HOUR_MS)
            .filter(|m| m.entries.contains(&entry))
            .map(|m| m.games.len() as u32)
            .sum();
        Some(cap.saturating_sub(recent))
    }

    /// Adds to `rows` (the leaderboard of `state`) what only the running ladder knows: which
    /// bots have a Queue stream open (queued).
    pub fn live_states(&self, state: &LadderState, rows: &mut [pb::Standing], now: i64) {
        let sessions = self.sessions.lock().expect("sessions lock");
        for row in rows.iter_mut().filter(|r| !r.house) {
            let Some(&index) = state
                .by_name
                .get(&records::entry_name(&row.bot, &row.version))
            else {
                continue;
            };
            let open = sessions.get(&index).is_some_and(|s| !s.tx.is_closed());
            let free = matches!(
                pb::BotState::try_from(row.state),
                Ok(pb::BotState::Idle | pb::BotState::Playing)
            );
            if let (true, Some(until)) = (free, self.capped_until(state, index, now)) {
                row.state = pb::BotState::Capped as i32;
                row.state_reason = self.capped_event(&row_name(row), until).detail;
                row.capped_until_unix_ms = until;
            } else if open && row.state == pb::BotState::Idle as i32 {
                row.state = pb::BotState::Queued as i32;
            }
        }
    }

    /// When entry `entry`, capped by `--ladder-games-per-hour` at `now`, may be matched again
    /// (once enough of its games of the last hour are older than an hour that a match fits);
    /// None when it is not capped.
    fn capped_until(&self, state: &LadderState, entry: usize, now: i64) -> Option<i64> {
        let cap = self.ctx.policy.games_per_hour;
        let per_match = Self::games_per_match(&state.info);
        if self.games_left_this_hour(state, entry, now)? >= per_match {
            return None;
        }
        // Oldest first: the cap frees once the games left in the window leave room for a match.
        let mut recent: Vec<(i64, u32)> = state
            .matches
            .values()
            .rev()
            .take_while(|m| m.matched_unix_ms > now - HOUR_MS)
            .filter(|m| m.entries.contains(&entry))
            .map(|m| (m.matched_unix_ms, m.games.len() as u32))
            .collect();
        recent.reverse();
        let mut counted: u32 = recent.iter().map(|(_, g)| g).sum();
        let room = cap.saturating_sub(per_match);
        for (at, games) in recent {
            counted = counted.saturating_sub(games);
            if counted <= room {
                return Some(at + HOUR_MS);
            }
        }
        Some(now)
    }

    /// The `capped` event and the standings' reason for an entry capped until `until`.
    fn capped_event(&self, name: &str, until: i64) -> pb::ladder_event::Capped {
        let limit = self.ctx.policy.games_per_hour;
        let at = gangs_proto::time::utc_text(until);
        pb::ladder_event::Capped {
            cap: HOURLY_CAP.into(),
            flag: HOURLY_FLAG.into(),
            limit,
            until_unix_ms: until,
            detail: format!(
                "{name} was matched to {limit} games in the last hour, the limit of this server ({HOURLY_FLAG}): it is matched again from {at}; the Queue stream stays open"
            ),
        }
    }

    /// Logs that entry `index` reached a cap (`capped`, as its stream was told), unless the log
    /// has this very cap already (the same entry capped until the same time: told again after
    /// a restart or a new Queue stream).
    async fn log_capped(
        &self,
        state: &mut LadderState,
        index: usize,
        capped: pb::ladder_event::Capped,
    ) -> Result<(), HostError> {
        let entry = &state.entries[index];
        if entry
            .caps
            .back()
            .is_some_and(|c| c.until_unix_ms == capped.until_unix_ms)
        {
            return Ok(());
        }
        let record = Lr::Capped(pb::ladder_record::BotCapped {
            bot: entry.bot.clone(),
            version: entry.version.clone(),
            cap: capped.cap,
            flag: capped.flag,
            limit: capped.limit,
            until_unix_ms: capped.until_unix_ms,
            detail: capped.detail,
        });
        self.append(state, record).await
    }

    /// Games per match: one, or one per seat rotation in a duplicate ladder.
    fn games_per_match(info: &pb::Ladder) -> u32 {
        if info.duplicate {
            info.players.max(1)
        } else {
            1
        }
    }

    /// One round: groups the queued entries with free slots and logs a match per group, then
    /// starts its games.
    async fn match_round(self: &Arc<Self>) -> Result<(), HostError> {
        let mut state = self.state.lock().await;
        let per_match = Self::games_per_match(&state.info);
        let now = crate::actor::unix_ms();
        let mut newly_capped = Vec::new();
        // Backpressure: while hosted decisions wait for a thread longer than a quarter of the
        // turn, no new game gets a hosted seat (its table would risk a void for the host's
        // overload); the hosted bots are matched again once the backlog clears.
        let quarter_turn = Duration::from_millis(state.info.turn_ms / 4);
        let hosted_backlog = self.ctx.hosting.backlog() > quarter_turn;
        let mut held_hosted = false;
        let candidates: Vec<matchmaker::Candidate> = {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            sessions.retain(|_, s| !s.tx.is_closed());
            sessions
                .iter_mut()
                .filter_map(|(&index, s)| {
                    let entry = &state.entries[index];
                    if entry.paused.is_some() || entry.retired {
                        return None;
                    }
                    // A duplicate ladder counts matches against max_concurrent.
                    let busy = entry.playing.div_ceil(per_match);
                    let mut free = s.max_concurrent.saturating_sub(busy);
                    if let Some(remaining) = s.remaining {
                        free = free.min(remaining / per_match);
                    }
                    if let Some(left) = self.games_left_this_hour(&state, index, now) {
                        free = free.min(left / per_match);
                    }
                    if hosted_backlog && entry.hosted.is_some() {
                        held_hosted |= free > 0;
                        free = 0;
                    }
                    // Told once each time it reaches the cap, on its stream and in the log.
                    match self.capped_until(&state, index, now) {
                        Some(until) if !s.capped_told => {
                            s.capped_told = true;
                            let capped = self.capped_event(&entry.name(), until);
                            tracing::info!(ladder = %self.name, bot = %entry.name(), "capped: {}", capped.detail);
                            newly_capped.push((index, capped.clone()));
                            let event = pb::ladder_event::Event::Capped(capped);
                            let _ = s.tx.try_send(Ok(pb::LadderEvent { event: Some(event) }));
                        }
                        Some(_) => {}
                        None => s.capped_told = false,
                    }
                    Some(matchmaker::Candidate {
                        entry: index,
                        mu: entry.rating.mu,
                        sigma: entry.rating.sigma,
                        free_slots: free,
                        waiting_since: s.since_unix_ms,
                    })
                })
                .collect()
        };
        for (index, capped) in newly_capped {
            self.log_capped(&mut state, index, capped).await?;
        }
        let players = state.info.players as usize;
        let room: Vec<usize> = candidates
            .iter()
            .filter(|c| c.free_slots > 0 && state.entries[c.entry].hosted.is_none())
            .map(|c| c.entry)
            .collect();
        let groups = if state.team_game() {
            // Seeded by the ladder (its log id's FNV-1a) and the match to come: the same
            // history, the same crews.
            let seed = crate::registry::fnv1a_64(&state.log_id) ^ state.next_match_no();
            matchmaker::make_crews(candidates, players, &state.together, seed)
        } else {
            matchmaker::make_groups(candidates, players)
        };
        let unmatched: Vec<usize> = room
            .into_iter()
            .filter(|e| !groups.iter().any(|g| g.contains(e)))
            .collect();
        self.tell_backlog(hosted_backlog && held_hosted, quarter_turn, &unmatched);
        for group in groups {
            let no = state.next_match_no();
            let entries = group.iter().map(|&i| state.entries[i].name()).collect();
            let record = Lr::Matched(pb::ladder_record::MatchMade {
                r#match: no,
                entries,
                seed: rand::random(),
                games: per_match,
            });
            self.append(&mut state, record).await?;
            crate::metrics::ladder_match(&self.name);
            let now = crate::actor::unix_ms();
            {
                let mut sessions = self.sessions.lock().expect("sessions lock");
                for &index in &group {
                    if let Some(s) = sessions.get_mut(&index) {
                        if let Some(remaining) = &mut s.remaining {
                            *remaining = remaining.saturating_sub(per_match);
                        }
                        s.open.extend((0..per_match).map(|g| (no, g)));
                        s.since_unix_ms = now;
                    }
                }
            }
            for game in 0..per_match {
                tokio::spawn(play::run_game(self.clone(), no, game));
            }
        }
        Ok(())
    }
}

/// A fresh bot key: 256 random bits, hex.
fn new_bot_key() -> String {
    (0..4)
        .map(|_| format!("{:016x}", rand::random::<u64>()))
        .collect()
}

fn row_name(row: &pb::Standing) -> String {
    records::entry_name(&row.bot, &row.version)
}
