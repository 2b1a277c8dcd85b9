//! One task per game: the only owner of the game's state.
//!
//! Every request for a game (join, act, watch, read the log) is a [`Command`] sent to its actor,
//! which handles them one at a time, so concurrent players are serialized and the log keeps
//! their order. An accepted action goes to the engine, then to the store; the actor keeps
//! serving other commands while the flush runs (so one flush can serve many actions), and
//! only when the store says the records are durable does it answer the caller and fan the
//! update out to the watchers, each receiving what its seat may see (`Game::view`/`redact`).

use crate::store::Store;
use gangs_games::{new_game, replay::Replayer, Game, Refusal, RefusalKind};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_stream::Stream;
use tonic::Status;

/// Updates a watcher may have queued before it is cut off as too slow (`--watch-buffer`).
pub const DEFAULT_WATCHER_BUFFER: usize = 512;
/// Longest display name accepted.
pub const MAX_NAME_LEN: usize = 64;
/// Longest action id accepted.
pub const MAX_ACTION_ID_LEN: usize = 128;

pub type UpdateStream = Pin<Box<dyn Stream<Item = Result<pb::Update, Status>> + Send>>;
pub type Reply<T> = oneshot::Sender<Result<T, Status>>;
pub type Summaries = Arc<Mutex<HashMap<String, pb::GameSummary>>>;

pub enum Command {
    Join {
        seat: Option<u32>,
        name: String,
        join_id: String,
        reply: Reply<pb::JoinGameResponse>,
    },
    Act {
        request: pb::ActRequest,
        reply: Reply<pb::ActResponse>,
    },
    Watch {
        token: String,
        from_seq: u64,
        reply: Reply<UpdateStream>,
    },
    GetLog {
        from_seq: u64,
        reply: Reply<Vec<pb::LogRecord>>,
    },
}

/// The channel to a game's actor.
#[derive(Clone)]
pub struct GameHandle {
    pub commands: mpsc::Sender<Command>,
}

impl GameHandle {
    /// A handle to no actor (closed): a finished game that is only on disk. Sending to it
    /// fails, which makes the registry reload the game.
    pub fn unloaded() -> GameHandle {
        let (commands, _) = mpsc::channel(1);
        GameHandle { commands }
    }
}

struct Seat {
    name: String,
    token: String,
    /// The request's join_id (may be empty): a retry with it gets this seat's answer again.
    join_id: String,
    /// Seq of the `joined` record.
    joined_seq: u64,
}

impl Seat {
    fn join_answer(&self, seat: usize) -> pb::JoinGameResponse {
        pb::JoinGameResponse {
            seat: seat as u32,
            token: self.token.clone(),
            seq: self.joined_seq,
        }
    }
}

struct Watcher {
    seat: Option<usize>,
    updates: mpsc::Sender<Result<pb::Update, Status>>,
}

/// What to do once a batch of records is durable.
struct Pending {
    last_seq: u64,
    /// One entry per record: the update of each seat (index = seat) and, last, the spectator's.
    updates: Vec<Vec<pb::Update>>,
    reply: PendingReply,
}

enum PendingReply {
    None,
    Created(Reply<()>),
    /// Several replies when a retry (same join_id) came while the join was being saved.
    Join(Vec<Reply<pb::JoinGameResponse>>, pb::JoinGameResponse),
    Act(Vec<Reply<pb::ActResponse>>, pb::ActResponse),
}

struct Timer {
    phase_id: u64,
    at: Instant,
    unix_ms: i64,
}

/// What the server's flags set for every game actor.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Updates a watcher may have queued before it is cut off as too slow.
    pub watcher_buffer: usize,
    /// How long a finished game's actor stays in memory after its last request. It then ends,
    /// freeing the game's records; the registry reloads the game from the log when asked again.
    pub keep_finished: Duration,
}

pub struct GameActor {
    id: String,
    store: Store,
    summaries: Summaries,
    settings: Settings,
    game: Box<dyn Game>,
    /// The `created` record as stored (seed included).
    created: pb::Created,
    /// Every record applied, durable or not; `records[i].seq == i + 1`.
    records: Vec<pb::LogRecord>,
    durable_seq: u64,
    seats: Vec<Option<Seat>>,
    tokens: HashMap<String, usize>,
    /// Seq of the `started` record: the game started once every seat was taken.
    start_seq: Option<u64>,
    /// (seat, action id) -> seq of the record that applied it.
    action_ids: HashMap<(usize, String), u64>,
    watchers: Vec<Watcher>,
    pending: VecDeque<Pending>,
    durable_tx: mpsc::UnboundedSender<(u64, Result<(), String>)>,
    durable_rx: mpsc::UnboundedReceiver<(u64, Result<(), String>)>,
    timer: Option<Timer>,
    /// Set when the store failed: the state in memory may be ahead of the disk.
    broken: Option<String>,
}

pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

pub fn rule_status(error: Refusal) -> Status {
    match error.kind() {
        RefusalKind::Invalid => Status::invalid_argument(error.message()),
        RefusalKind::NotNow => Status::failed_precondition(error.message()),
    }
}

impl GameActor {
    /// A new game: logs its `created` record; `created_reply` answers once it is durable.
    pub fn create(
        id: String,
        store: Store,
        summaries: Summaries,
        settings: Settings,
        created: pb::Created,
        created_reply: Reply<()>,
    ) -> Result<GameHandle, Status> {
        let game = new_game(
            &created.kind,
            created.options.as_ref(),
            created.seed.unwrap_or_default(),
            created.preset.as_ref(),
        )
        .map_err(rule_status)?;
        // Store the options with every default filled in, so the log says exactly what ran.
        let created = pb::Created {
            options: Some(game.options()),
            players: game.players() as u32,
            ..created
        };
        let mut actor = GameActor::empty(id, store, summaries, settings, game, created.clone());
        let record = actor.push_record(Record::Created(created));
        actor.submit(vec![record], PendingReply::Created(created_reply));
        Ok(actor.spawn())
    }

    /// A game rebuilt from its log (at startup, or a finished game asked for again), its
    /// summary published, not yet running (`spawn` runs it); every record is checked against
    /// the engine.
    pub fn rebuild(
        id: String,
        store: Store,
        summaries: Summaries,
        settings: Settings,
        records: Vec<pb::LogRecord>,
    ) -> Result<GameActor, String> {
        let mut replayer = Replayer::new();
        let mut seats_info: Vec<(usize, Seat)> = Vec::new();
        let mut action_ids = Vec::new();
        let mut started = None;
        let mut created = None;
        for record in &records {
            replayer
                .apply(record)
                .map_err(|e| format!("game {id}: {e}"))?;
            match &record.record {
                Some(Record::Created(c)) => created = Some(c.clone()),
                Some(Record::Joined(j)) => seats_info.push((
                    j.seat as usize,
                    Seat {
                        name: j.name.clone(),
                        token: j.token.clone(),
                        join_id: j.join_id.clone(),
                        joined_seq: record.seq,
                    },
                )),
                Some(Record::Started(_)) => started = Some(record.seq),
                Some(Record::Acted(a)) if !a.action_id.is_empty() => {
                    action_ids.push(((a.seat as usize, a.action_id.clone()), record.seq))
                }
                _ => {}
            }
        }
        let created = created.ok_or_else(|| format!("game {id}: no `created` record"))?;
        let game = replayer
            .into_game()
            .ok_or_else(|| format!("game {id}: empty log"))?;
        let mut actor = GameActor::empty(id, store, summaries, settings, game, created);
        for (seat, info) in seats_info {
            actor.tokens.insert(info.token.clone(), seat);
            actor.seats[seat] = Some(info);
        }
        actor.action_ids.extend(action_ids);
        actor.start_seq = started;
        actor.durable_seq = records.len() as u64;
        actor.records = records;
        actor.arm_timer();
        actor.publish_summary();
        Ok(actor)
    }

    fn empty(
        id: String,
        store: Store,
        summaries: Summaries,
        settings: Settings,
        game: Box<dyn Game>,
        created: pb::Created,
    ) -> Self {
        let (durable_tx, durable_rx) = mpsc::unbounded_channel();
        let players = game.players();
        GameActor {
            id,
            store,
            summaries,
            settings,
            game,
            created,
            records: Vec::new(),
            durable_seq: 0,
            seats: (0..players).map(|_| None).collect(),
            tokens: HashMap::new(),
            start_seq: None,
            action_ids: HashMap::new(),
            watchers: Vec::new(),
            pending: VecDeque::new(),
            durable_tx,
            durable_rx,
            timer: None,
            broken: None,
        }
    }

    pub fn spawn(self) -> GameHandle {
        let (tx, rx) = mpsc::channel(1024);
        tokio::spawn(self.run(rx));
        GameHandle { commands: tx }
    }

    async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        loop {
            let deadline = self.timer.as_ref().map(|t| t.at);
            // Restarted by every event: a finished game is let go after a quiet spell.
            let unload_at = self
                .is_settled()
                .then(|| Instant::now() + self.settings.keep_finished);
            tokio::select! {
                command = commands.recv() => match command {
                    Some(command) => self.handle(command),
                    None => break,
                },
                Some((seq, result)) = self.durable_rx.recv() => self.on_durable(seq, result),
                _ = sleep_until_opt(deadline), if deadline.is_some() => self.on_deadline(),
                _ = sleep_until_opt(unload_at), if unload_at.is_some() => {
                    // No new command gets in from here on (senders see the channel closed and
                    // reload the game from the log); the ones already queued are answered.
                    commands.close();
                    while let Some(command) = commands.recv().await {
                        self.handle(command);
                    }
                    tracing::debug!(game = %self.id, "finished game unloaded");
                    break;
                }
            }
        }
        // The server is shutting down: let the pending flushes finish and answer their callers.
        while !self.pending.is_empty() {
            match self.durable_rx.recv().await {
                Some((seq, result)) => self.on_durable(seq, result),
                None => break,
            }
        }
    }

    /// Over, everything durable, nobody watching, storage healthy: nothing left to do but
    /// answer reads, which the log can answer as well.
    pub fn is_settled(&self) -> bool {
        self.game.is_over()
            && self.pending.is_empty()
            && self.watchers.is_empty()
            && self.broken.is_none()
    }

    fn handle(&mut self, command: Command) {
        if let Some(reason) = &self.broken {
            let status = Status::unavailable(format!("game {} is unavailable: {reason}", self.id));
            match command {
                Command::Join { reply, .. } => drop(reply.send(Err(status))),
                Command::Act { reply, .. } => drop(reply.send(Err(status))),
                Command::Watch { reply, .. } => drop(reply.send(Err(status))),
                Command::GetLog { reply, .. } => drop(reply.send(Err(status))),
            }
            return;
        }
        match command {
            Command::Join {
                seat,
                name,
                join_id,
                reply,
            } => {
                if let Some(first) = self.seat_joined_with(&join_id) {
                    return self.answer_join_retry(first, reply);
                }
                match self.join(seat, name, join_id) {
                    Ok((records, response)) => {
                        self.submit(records, PendingReply::Join(vec![reply], response))
                    }
                    Err(status) => drop(reply.send(Err(status))),
                }
            }
            Command::Act { request, reply } => self.act(request, reply),
            Command::Watch {
                token,
                from_seq,
                reply,
            } => {
                let _ = reply.send(self.watch(&token, from_seq));
            }
            Command::GetLog { from_seq, reply } => {
                let _ = reply.send(Ok(self.log(from_seq)));
            }
        }
    }

    fn last_seq(&self) -> u64 {
        self.records.len() as u64
    }

    fn status(&self) -> pb::GameStatus {
        if self.game.is_over() {
            pb::GameStatus::Finished
        } else if self.start_seq.is_some() {
            pb::GameStatus::Running
        } else {
            pb::GameStatus::Waiting
        }
    }

    fn seats_taken(&self) -> u32 {
        self.seats.iter().filter(|s| s.is_some()).count() as u32
    }

    fn seat_of(&self, token: &str) -> Result<usize, Status> {
        if token.is_empty() {
            return Err(Status::invalid_argument(
                "a seat token is required: JoinGame returns it",
            ));
        }
        self.tokens.get(token).copied().ok_or_else(|| {
            Status::permission_denied(format!("this token holds no seat in game {}", self.id))
        })
    }

    /// The answer of the join made with `join_id`, if any (an empty id never matches).
    fn seat_joined_with(&self, join_id: &str) -> Option<pb::JoinGameResponse> {
        self.seats.iter().enumerate().find_map(|(seat, s)| {
            s.as_ref()
                .filter(|s| !join_id.is_empty() && s.join_id == join_id)
                .map(|s| s.join_answer(seat))
        })
    }

    /// A join retried with the same join_id: the first answer again, once it is durable.
    fn answer_join_retry(
        &mut self,
        first: pb::JoinGameResponse,
        reply: Reply<pb::JoinGameResponse>,
    ) {
        if first.seq <= self.durable_seq {
            let _ = reply.send(Ok(first));
        } else if let Some(pending) = self.pending.iter_mut().find(|p| p.last_seq >= first.seq) {
            if let PendingReply::Join(replies, _) = &mut pending.reply {
                replies.push(reply);
            }
        }
    }

    fn join(
        &mut self,
        seat: Option<u32>,
        name: String,
        join_id: String,
    ) -> Result<(Vec<pb::LogRecord>, pb::JoinGameResponse), Status> {
        if name.chars().count() > MAX_NAME_LEN {
            return Err(Status::invalid_argument(format!(
                "name is longer than {MAX_NAME_LEN} characters"
            )));
        }
        if join_id.len() > MAX_ACTION_ID_LEN {
            return Err(Status::invalid_argument(format!(
                "join_id is longer than {MAX_ACTION_ID_LEN} bytes"
            )));
        }
        let players = self.seats.len();
        let seat = match seat {
            Some(s) if s as usize >= players => {
                return Err(Status::invalid_argument(format!(
                    "seat {s} does not exist: this game has seats 0 to {}",
                    players - 1
                )))
            }
            Some(s) if self.seats[s as usize].is_some() => {
                return Err(Status::failed_precondition(format!(
                    "seat {s} is already taken"
                )))
            }
            Some(s) => s as usize,
            None => self.seats.iter().position(|s| s.is_none()).ok_or_else(|| {
                Status::failed_precondition("the game is full: every seat is taken")
            })?,
        };
        let name = if name.is_empty() {
            format!("seat {seat}")
        } else {
            name
        };
        // 128 random bits from the OS-seeded CSPRNG: unguessable.
        let token = format!("{:032x}", rand::random::<u128>());
        self.tokens.insert(token.clone(), seat);
        let joined = pb::Joined {
            seat: seat as u32,
            name: name.clone(),
            token: token.clone(),
            join_id: join_id.clone(),
        };
        let mut records = vec![self.push_record(Record::Joined(joined))];
        let taken = Seat {
            name,
            token,
            join_id,
            joined_seq: records[0].seq,
        };
        let response = taken.join_answer(seat);
        self.seats[seat] = Some(taken);
        if self.seats.iter().all(|s| s.is_some()) {
            let events = self.game.start();
            let record = self.push_record(Record::Started(pb::Started { events }));
            self.start_seq = Some(record.seq);
            records.push(record);
        }
        Ok((records, response))
    }

    fn act(&mut self, request: pb::ActRequest, reply: Reply<pb::ActResponse>) {
        let seat = match self.seat_of(&request.token) {
            Ok(seat) => seat,
            Err(status) => return drop(reply.send(Err(status))),
        };
        if request.action_id.len() > MAX_ACTION_ID_LEN {
            let status = Status::invalid_argument(format!(
                "action_id is longer than {MAX_ACTION_ID_LEN} bytes"
            ));
            return drop(reply.send(Err(status)));
        }
        // A retry: answer as the first time, apply nothing.
        if !request.action_id.is_empty() {
            if let Some(&seq) = self.action_ids.get(&(seat, request.action_id.clone())) {
                if seq <= self.durable_seq {
                    let _ = reply.send(Ok(self.act_response(seq, seat)));
                } else if let Some(pending) = self.pending.iter_mut().find(|p| p.last_seq >= seq) {
                    if let PendingReply::Act(replies, _) = &mut pending.reply {
                        replies.push(reply);
                    }
                }
                return;
            }
        }
        match self.apply_action(seat, request) {
            Ok((records, response)) => {
                self.submit(records, PendingReply::Act(vec![reply], response))
            }
            Err(status) => drop(reply.send(Err(status))),
        }
    }

    fn apply_action(
        &mut self,
        seat: usize,
        request: pb::ActRequest,
    ) -> Result<(Vec<pb::LogRecord>, pb::ActResponse), Status> {
        if self.start_seq.is_none() {
            let missing = self.seats.len() as u32 - self.seats_taken();
            return Err(Status::failed_precondition(format!(
                "the game has not started: waiting for {missing} more player(s) to join"
            )));
        }
        if self.game.is_over() {
            return Err(Status::failed_precondition("the game is over"));
        }
        if let Some(expected) = request.expected_seq {
            if expected != self.last_seq() {
                return Err(Status::aborted(format!(
                    "stale expected_seq {expected}: the game is at seq {}; act on the newest update",
                    self.last_seq()
                )));
            }
        }
        let action = request
            .action
            .ok_or_else(|| Status::invalid_argument("the request has no action"))?;
        let events = self.game.act(seat, &action).map_err(rule_status)?;
        let acted = pb::Acted {
            seat: seat as u32,
            action: Some(action),
            action_id: request.action_id.clone(),
            events,
        };
        let record = self.push_record(Record::Acted(acted));
        if !request.action_id.is_empty() {
            self.action_ids
                .insert((seat, request.action_id), record.seq);
        }
        let response = self.act_response(record.seq, seat);
        Ok((vec![record], response))
    }

    /// The answer to an action: its seq and its events as the acting seat may see them.
    fn act_response(&self, seq: u64, seat: usize) -> pb::ActResponse {
        let events = record_events(&self.records[seq as usize - 1])
            .iter()
            .filter_map(|e| self.game.redact(e, Some(seat)))
            .collect();
        pb::ActResponse { seq, events }
    }

    fn on_deadline(&mut self) {
        self.timer = None;
        if self.game.is_over() {
            return;
        }
        match self.game.expire() {
            Ok(events) => {
                let record = self.push_record(Record::Expired(pb::Expired { events }));
                self.submit(vec![record], PendingReply::None);
            }
            Err(e) => tracing::warn!(game = %self.id, "deadline refused by the engine: {e}"),
        }
    }

    /// Starts the phase timer when the engine opened a new timed phase.
    fn arm_timer(&mut self) {
        if self.game.is_over() || self.start_seq.is_none() {
            self.timer = None;
            return;
        }
        match self.game.phase_deadline_ms() {
            None => self.timer = None,
            Some(ms) => {
                let phase_id = self.game.phase_id();
                if self.timer.as_ref().map(|t| t.phase_id) != Some(phase_id) {
                    self.timer = Some(Timer {
                        phase_id,
                        at: Instant::now() + std::time::Duration::from_millis(ms),
                        unix_ms: unix_ms() + ms as i64,
                    });
                }
            }
        }
    }

    fn push_record(&mut self, record: Record) -> pb::LogRecord {
        let record = pb::LogRecord {
            seq: self.last_seq() + 1,
            unix_ms: unix_ms(),
            record: Some(record),
        };
        self.records.push(record.clone());
        record
    }

    /// Sends records to the store; what follows happens in `on_durable`.
    fn submit(&mut self, records: Vec<pb::LogRecord>, reply: PendingReply) {
        self.arm_timer();
        let last_seq = records.last().map(|r| r.seq).unwrap_or(self.last_seq());
        let updates = records.iter().map(|r| self.updates_for_all(r)).collect();
        self.pending.push_back(Pending {
            last_seq,
            updates,
            reply,
        });
        let done = self.store.append(&self.id, records);
        let notify = self.durable_tx.clone();
        tokio::spawn(async move {
            let result = match done.await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(e.message),
                Err(_) => Err("the store stopped".to_string()),
            };
            let _ = notify.send((last_seq, result));
        });
    }

    fn on_durable(&mut self, seq: u64, result: Result<(), String>) {
        if let Err(reason) = result {
            tracing::error!(game = %self.id, seq, "storage failure: {reason}");
            self.broken = Some(format!("storage failure: {reason}"));
            for pending in self.pending.drain(..) {
                let status = Status::unavailable(format!("not saved: {reason}"));
                match pending.reply {
                    PendingReply::None => {}
                    PendingReply::Created(r) => drop(r.send(Err(status))),
                    PendingReply::Join(rs, _) => rs
                        .into_iter()
                        .for_each(|r| drop(r.send(Err(status.clone())))),
                    PendingReply::Act(rs, _) => rs
                        .into_iter()
                        .for_each(|r| drop(r.send(Err(status.clone())))),
                }
            }
            self.watchers.clear();
            return;
        }
        // The flusher writes batches in order: everything up to `seq` is durable.
        self.durable_seq = self.durable_seq.max(seq);
        // Before anyone is answered: a caller that lists games next must see this seq.
        self.publish_summary();
        while self
            .pending
            .front()
            .is_some_and(|p| p.last_seq <= self.durable_seq)
        {
            let pending = self.pending.pop_front().expect("checked above");
            match pending.reply {
                PendingReply::None => {}
                PendingReply::Created(r) => drop(r.send(Ok(()))),
                PendingReply::Join(rs, response) => rs
                    .into_iter()
                    .for_each(|r| drop(r.send(Ok(response.clone())))),
                PendingReply::Act(rs, response) => rs
                    .into_iter()
                    .for_each(|r| drop(r.send(Ok(response.clone())))),
            }
            for updates in pending.updates {
                self.fan_out(&updates);
            }
        }
        if self.game.is_over() && self.pending.is_empty() {
            // The final update is out: end every stream.
            self.watchers.clear();
        }
    }

    fn fan_out(&mut self, updates: &[pb::Update]) {
        let spectator = updates.len() - 1;
        let id = &self.id;
        let buffer = self.settings.watcher_buffer;
        self.watchers.retain(|w| {
            let update = &updates[w.seat.unwrap_or(spectator)];
            // The last free slot is kept for the status that tells a slow watcher it was cut off.
            if w.updates.capacity() <= 1 {
                tracing::info!(game = %id, seat = ?w.seat, "cutting off a watcher that fell behind");
                let _ = w.updates.try_send(Err(Status::resource_exhausted(format!(
                    "you fell more than {buffer} updates behind game {id}: watch again with from_seq = the last seq you received"
                ))));
                return false;
            }
            w.updates.try_send(Ok(update.clone())).is_ok()
        });
    }

    /// The update of `record` for every seat and the spectator, computed once when the record
    /// is applied (the state moves on before the record is durable).
    fn updates_for_all(&self, record: &pb::LogRecord) -> Vec<pb::Update> {
        let mut updates: Vec<pb::Update> = (0..self.seats.len())
            .map(|s| self.update_for(&*self.game, record, Some(s)))
            .collect();
        updates.push(self.update_for(&*self.game, record, None));
        updates
    }

    fn update_for(
        &self,
        game: &dyn Game,
        record: &pb::LogRecord,
        seat: Option<usize>,
    ) -> pb::Update {
        let (started, seats_taken) = self.progress_at(record.seq);
        build_update(
            game,
            record,
            seat,
            started,
            seats_taken,
            self.timer.as_ref().map(|t| t.unix_ms),
        )
    }

    /// Whether the game had started at `seq`, and how many seats were taken then.
    fn progress_at(&self, seq: u64) -> (bool, u32) {
        if self.start_seq.is_some_and(|start| start <= seq) {
            return (true, self.seats.len() as u32);
        }
        let taken = self.records[..seq as usize]
            .iter()
            .filter(|r| matches!(r.record, Some(Record::Joined(_))))
            .count() as u32;
        (false, taken)
    }

    fn watch(&mut self, token: &str, from_seq: u64) -> Result<UpdateStream, Status> {
        let seat = if token.is_empty() {
            None
        } else {
            Some(self.seat_of(token)?)
        };
        if from_seq > self.last_seq() {
            return Err(Status::out_of_range(format!(
                "from_seq {from_seq} is beyond the game's last seq {}",
                self.last_seq()
            )));
        }
        let catch_up = self.catch_up(seat, from_seq);
        let (tx, rx) = mpsc::channel(catch_up.len() + self.settings.watcher_buffer + 1);
        for update in catch_up {
            tx.try_send(Ok(update))
                .expect("the channel was sized for the catch-up");
        }
        // A finished game's stream ends after the catch-up.
        if !(self.game.is_over() && self.pending.is_empty()) {
            self.watchers.push(Watcher { seat, updates: tx });
        }
        Ok(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)))
    }

    /// Updates for the durable records after `from_seq`, each with the view as it was then:
    /// the game is replayed from its log (the engines are fast; a log is short).
    fn catch_up(&self, seat: Option<usize>, from_seq: u64) -> Vec<pb::Update> {
        if from_seq >= self.durable_seq {
            return Vec::new();
        }
        // The usual resume asks for the newest record only: the current state is its state.
        if from_seq + 1 == self.durable_seq && self.pending.is_empty() {
            let record = &self.records[from_seq as usize];
            return vec![self.update_for(&*self.game, record, seat)];
        }
        let mut replayer = Replayer::new();
        let mut updates = Vec::new();
        for record in &self.records[..self.durable_seq as usize] {
            if replayer.apply(record).is_err() {
                // Cannot happen: the actor checked every record when it applied or restored it.
                break;
            }
            if record.seq > from_seq {
                let game = replayer.game().expect("created is the first record");
                let deadline = if record.seq == self.durable_seq {
                    self.timer.as_ref().map(|t| t.unix_ms)
                } else {
                    None
                };
                let (started, seats_taken) = self.progress_at(record.seq);
                updates.push(build_update(
                    game,
                    record,
                    seat,
                    started,
                    seats_taken,
                    deadline,
                ));
            }
        }
        updates
    }

    fn log(&self, from_seq: u64) -> Vec<pb::LogRecord> {
        let finished = self.game.is_over();
        self.records[..self.durable_seq as usize]
            .iter()
            .filter(|r| r.seq > from_seq)
            .map(|r| public_record(&*self.game, r, finished))
            .collect()
    }

    fn publish_summary(&self) {
        let summary = pb::GameSummary {
            game_id: self.id.clone(),
            kind: self.created.kind.clone(),
            players: self.seats.len() as u32,
            seats_taken: self.seats_taken(),
            status: self.status() as i32,
            names: self
                .seats
                .iter()
                .map(|s| s.as_ref().map(|s| s.name.clone()).unwrap_or_default())
                .collect(),
            last_seq: self.durable_seq,
        };
        self.summaries
            .lock()
            .expect("summaries lock")
            .insert(self.id.clone(), summary);
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn record_events(record: &pb::LogRecord) -> &[pb::GameEvent] {
    match &record.record {
        Some(Record::Started(s)) => &s.events,
        Some(Record::Acted(a)) => &a.events,
        Some(Record::Expired(e)) => &e.events,
        _ => &[],
    }
}

/// What `seat` (or a spectator) receives for `record`, with the game in the state right after it.
fn build_update(
    game: &dyn Game,
    record: &pb::LogRecord,
    seat: Option<usize>,
    started: bool,
    seats_taken: u32,
    deadline_unix_ms: Option<i64>,
) -> pb::Update {
    let over = game.is_over();
    let status = if over {
        pb::GameStatus::Finished
    } else if started {
        pb::GameStatus::Running
    } else {
        pb::GameStatus::Waiting
    };
    let actor = match &record.record {
        Some(Record::Acted(a)) => Some(a.seat),
        Some(Record::Joined(j)) => Some(j.seat),
        _ => None,
    };
    pb::Update {
        seq: record.seq,
        events: record_events(record)
            .iter()
            .filter_map(|e| game.redact(e, seat))
            .collect(),
        actor,
        view: started.then(|| game.view(seat)),
        legal_actions: match seat {
            Some(s) if started && !over => game.legal_actions(s),
            _ => Vec::new(),
        },
        deadline_unix_ms: if started && !over {
            deadline_unix_ms
        } else {
            None
        },
        status: status as i32,
        outcome: if over { game.outcome() } else { None },
        seat: seat.map(|s| s as u32),
        seats_taken,
    }
}

/// A record as `GetLog` shows it: tokens never; while the game runs, nothing hidden (no seed,
/// no preset, no actions, events as a spectator sees them).
fn public_record(game: &dyn Game, record: &pb::LogRecord, finished: bool) -> pb::LogRecord {
    let mut record = record.clone();
    match &mut record.record {
        Some(Record::Joined(j)) => {
            j.token.clear();
            j.join_id.clear();
        }
        Some(Record::Created(c)) if !finished => {
            c.seed = None;
            c.preset = None;
        }
        Some(Record::Started(s)) if !finished => {
            s.events = s
                .events
                .iter()
                .filter_map(|e| game.redact(e, None))
                .collect();
        }
        Some(Record::Acted(a)) if !finished => {
            a.action = None;
            a.action_id.clear();
            a.events = a
                .events
                .iter()
                .filter_map(|e| game.redact(e, None))
                .collect();
        }
        Some(Record::Expired(e)) if !finished => {
            e.events = e
                .events
                .iter()
                .filter_map(|ev| game.redact(ev, None))
                .collect();
        }
        _ => {}
    }
    record
}
