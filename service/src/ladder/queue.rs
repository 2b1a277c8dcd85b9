//! A ladder's Queue streams: a bot's Queue call (its key checked, a connected bot's pause for
//! its own absence lifted, its games not over sent again), the events sent on its stream,
//! heartbeats, and the stream's end (drained, replaced, the ladder renamed or stopping).

use super::*;

impl Ladder {
    /// The entry's Queue stream matches nothing new from now on and ends (OK) once the games
    /// it has are over (a rekey: the old key finishes its games).
    pub(super) fn drain_session(&self, entry: usize) {
        let mut sessions = self.sessions.lock().expect("sessions lock");
        if let Some(session) = sessions.get_mut(&entry) {
            session.remaining = Some(0);
            if session.open.is_empty() {
                sessions.remove(&entry);
            }
        }
    }

    /// Sends `event` to the entry's Queue stream, if one is open; a stream whose buffer is full
    /// (the bot reads nothing) is closed: the bot resumes with Queue.
    pub(super) fn send(&self, entry: usize, event: pb::ladder_event::Event) {
        let mut sessions = self.sessions.lock().expect("sessions lock");
        let Some(session) = sessions.get(&entry) else {
            return;
        };
        let event = pb::LadderEvent { event: Some(event) };
        if session.tx.try_send(Ok(event)).is_err() {
            sessions.remove(&entry);
        }
    }

    /// Ends the entry's Queue stream with `status` (None: it ends OK).
    pub(super) fn close_session(&self, entry: usize, status: Option<HostError>) {
        if let Some(session) = self.sessions.lock().expect("sessions lock").remove(&entry) {
            if let Some(status) = status {
                let _ = session.tx.try_send(Err(status));
            }
        }
    }

    /// Tells every Queue stream that the ladder is now called `name` (it was `was`), and ends
    /// it (OK): the bot queues again on the new name.
    pub(super) fn tell_renamed(&self, was: &str, name: &str) {
        let sessions: Vec<Session> = {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            sessions.drain().map(|(_, s)| s).collect()
        };
        for session in sessions {
            let _ = session.tx.try_send(Ok(renamed_event(was, name)));
        }
    }

    /// Ends every Queue stream with `status` (this node stops running the ladder).
    pub(super) fn close_all(&self, status: HostError) {
        let sessions: Vec<Session> = {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            sessions.drain().map(|(_, s)| s).collect()
        };
        for session in sessions {
            let _ = session.tx.try_send(Err(status.clone()));
        }
    }

    /// A bot's Queue call: checks its key, lifts a pause for timeouts, replaces its previous
    /// stream, sends again the games it plays that it did not acknowledge, and queues it.
    pub async fn queue(
        self: &Arc<Self>,
        request: pb::QueueRequest,
    ) -> Result<mpsc::Receiver<Result<pb::LadderEvent, HostError>>, HostError> {
        let hash = creation::key_hash(&request.bot_key);
        let (index, replaced) = {
            let state = self.state.lock().await;
            let replaced = state
                .entries
                .iter()
                .find(|e| e.replaced_keys.iter().any(|(old, _)| *old == hash))
                .map(|e| e.name());
            (state.by_key.get(&hash).copied(), replaced)
        };
        if let (None, Some(bot)) = (index, replaced) {
            return Err(HostError::permission_denied(format!(
                "this key of {bot} on ladder {} was replaced (gangs ladder rekey): it plays only the games it was matched to before; queue with the new key",
                self.name
            )));
        }
        let Some(index) = index else {
            return Err(HostError::permission_denied(format!(
                "this bot key is not registered on ladder {}: use the key RegisterBot printed for this ladder",
                gangs_proto::quoted(&self.name)
            )));
        };
        self.queue_entry(index, &request).await
    }

    /// Queues entry `index` (its key checked by the caller, or a house bot).
    pub async fn queue_entry(
        self: &Arc<Self>,
        index: usize,
        request: &pb::QueueRequest,
    ) -> Result<mpsc::Receiver<Result<pb::LadderEvent, HostError>>, HostError> {
        let mut state = self.state.lock().await;
        if state.entries[index].retired {
            return Err(HostError::failed_precondition(format!(
                "{} is retired from ladder {}: register a new version",
                state.entries[index].name(),
                self.name
            )));
        }
        // A connected bot's pause for its own absence is lifted by its queueing again (it says
        // it is back). A hosted bot is queued by the server itself (at every start, after a
        // rename): its pause holds until an admin resumes it or a new version is submitted.
        let lifts = state.entries[index].hosted.is_none();
        if let Some((reason @ (Reason::Timeouts | Reason::NoFirstAction), _)) =
            state.entries[index].paused.clone().filter(|_| lifts)
        {
            let detail = "queued again".to_string();
            self.set_paused(&mut state, index, reason, detail, true)
                .await?;
        }
        let (tx, rx) = mpsc::channel(QUEUE_BUFFER);
        // Queued on a former name (within a day of the rename): the bot hears the new one.
        if !request.ladder.is_empty() && request.ladder != self.name {
            let _ = tx.try_send(Ok(renamed_event(&request.ladder, &self.name)));
        }
        let acknowledged: HashSet<&str> = request
            .acknowledged_game_ids
            .iter()
            .map(String::as_str)
            .collect();
        // Games of this entry not over yet and not acknowledged: sent again (once their seat
        // is known; the others are sent when it is). They are this stream's games: they count
        // toward its max_games, and it ends once they are over too. A draining stream counts
        // every game not over, acknowledged or not: it ends once the bot has none left.
        let mut resent = HashSet::new();
        for m in state
            .matches
            .values()
            .filter(|m| m.entries.contains(&index))
        {
            for (g, game) in m.games.iter().enumerate() {
                let acknowledged = game
                    .game_id
                    .as_ref()
                    .is_some_and(|id| acknowledged.contains(id.as_str()));
                if game.result.is_some() {
                    continue;
                }
                if acknowledged {
                    if request.drain {
                        resent.insert((m.no, g as u32));
                    }
                    continue;
                }
                resent.insert((m.no, g as u32));
                if let Some(event) = play::matched_event(&state, m, g, index) {
                    let event = pb::LadderEvent { event: Some(event) };
                    let _ = tx.try_send(Ok(event));
                }
            }
        }
        // A capped bot's stream opens all the same: it says until when, and the bot is matched
        // once the cap frees (no call again, no retry loop).
        let capped = match request.drain {
            true => None,
            false => self.capped_until(&state, index, crate::actor::unix_ms()),
        };
        if let Some(until) = capped {
            let event = self.capped_event(&state.entries[index].name(), until);
            self.log_capped(&mut state, index, event.clone()).await?;
            let event = pb::ladder_event::Event::Capped(event);
            let _ = tx.try_send(Ok(pb::LadderEvent { event: Some(event) }));
        }
        if let Some((reason, detail)) = &state.entries[index].paused {
            let event = pb::ladder_event::Event::Paused(pb::ladder_event::Paused {
                reason: *reason as i32,
                detail: detail.clone(),
            });
            let _ = tx.try_send(Ok(pb::LadderEvent { event: Some(event) }));
        }
        let open_games = resent.len();
        let id = self.next_session.fetch_add(1, Ordering::Relaxed);
        let session = Session {
            id,
            tx: tx.clone(),
            max_concurrent: request.max_concurrent.clamp(1, MAX_CONCURRENT),
            remaining: if request.drain {
                Some(0)
            } else {
                (request.max_games > 0)
                    .then(|| request.max_games.saturating_sub(resent.len() as u32))
            },
            open: resent,
            since_unix_ms: crate::actor::unix_ms(),
            capped_told: capped.is_some(),
            backlog_told: false,
        };
        let replaced = self
            .sessions
            .lock()
            .expect("sessions lock")
            .insert(index, session);
        if let Some(old) = replaced {
            let _ = old.tx.try_send(Err(HostError::aborted(
                "another Queue stream of this bot took over (a bot queues on one stream at a time)",
            )));
        }
        if request.drain && open_games == 0 {
            // Nothing left to play: the stream ends (OK) after what was queued in it.
            self.sessions.lock().expect("sessions lock").remove(&index);
            let bot = state.entries[index].name();
            drop(state);
            tracing::info!(ladder = %self.name, %bot, "drained: no game left");
            return Ok(rx);
        }
        drop(state);
        tokio::spawn(self.clone().heartbeat(index, id, tx));
        self.wake.notify_one();
        Ok(rx)
    }

    /// Heartbeats on one Queue stream until it closes or is replaced.
    pub(super) async fn heartbeat(self: Arc<Self>, index: usize, session: u64, tx: EventSender) {
        loop {
            if !self.pause(HEARTBEAT_EVERY).await || tx.is_closed() {
                return;
            }
            let playing = self.state.lock().await.entries[index].playing;
            let queued = {
                let sessions = self.sessions.lock().expect("sessions lock");
                match sessions.get(&index) {
                    Some(s) if s.id == session => s.remaining != Some(0),
                    // Replaced or closed: this stream is over.
                    _ => return,
                }
            };
            let event = pb::ladder_event::Event::Heartbeat(pb::ladder_event::Heartbeat {
                unix_ms: crate::actor::unix_ms(),
                playing,
                queued,
            });
            if tx
                .try_send(Ok(pb::LadderEvent { event: Some(event) }))
                .is_err()
            {
                self.close_session(index, None);
                return;
            }
        }
    }
}

/// The `renamed` event: the ladder called `was` is now called `name`.
fn renamed_event(was: &str, name: &str) -> pb::LadderEvent {
    let renamed = pb::ladder_event::Renamed {
        name: name.to_string(),
        was: was.to_string(),
    };
    pb::LadderEvent {
        event: Some(pb::ladder_event::Event::Renamed(renamed)),
    }
}

impl Ladder {
    /// While hosted decisions back up (`backlog`: the matchmaker just held back a hosted entry
    /// that had room), the streams of the bots in `waiting` (room for a game, left unmatched by
    /// the same pass) are told once why they may wait longer; told again after the backlog
    /// cleared and came back. A `capped` event: the hosted threads are the server's
    /// capacity, and every bot already handles the event (the stream stays open).
    pub(super) fn tell_backlog(&self, backlog: bool, quarter_turn: Duration, waiting: &[usize]) {
        let mut sessions = self.sessions.lock().expect("sessions lock");
        if !backlog {
            for session in sessions.values_mut() {
                session.backlog_told = false;
            }
            return;
        }
        for &index in waiting {
            let Some(session) = sessions.get_mut(&index) else {
                continue;
            };
            if session.backlog_told {
                continue;
            }
            session.backlog_told = true;
            let limit_ms = u32::try_from(quarter_turn.as_millis()).unwrap_or(u32::MAX);
            let capped = pb::ladder_event::Capped {
                cap: "hosted decisions backlog".into(),
                flag: "--hosted-bot-threads".into(),
                limit: limit_ms,
                until_unix_ms: 0,
                detail: format!(
                    "hosted bots' decisions wait for a thread longer than a quarter of the turn ({limit_ms} ms): until the backlog clears no new game of ladder {} gets a hosted seat, so games may start later (the server's --hosted-bot-threads); the stream stays open",
                    self.name
                ),
            };
            let event = pb::ladder_event::Event::Capped(capped);
            let _ = session
                .tx
                .try_send(Ok(pb::LadderEvent { event: Some(event) }));
        }
    }
}
