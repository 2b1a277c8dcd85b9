//! Damaged games: a log that reads but does not replay keeps its game out of play, listed
//! with the reason and readable (publicly redacted) through GetLog.

use super::*;

/// The longest damage reason kept (it comes from the log, not a client, but is still bounded).
pub(super) const MAX_DAMAGE_REASON_LEN: usize = 300;

impl Registry {
    /// Marks a game whose log does not replay (`reason`) as damaged, from its records as read
    /// again (a rare path: the records of a healthy game are read once). Only a store that
    /// cannot be read is an error.
    pub(super) async fn damage(&self, id: &str, reason: &str) -> HostResult<()> {
        match self.store.load_game(id).await {
            Ok(records) => self.mark_damaged(id, &records, reason),
            Err(e) if e.kind == StoreErrorKind::Corrupt => self.mark_damaged(id, &[], reason),
            Err(e) => return Err(HostError::Storage(e.message)),
        }
        Ok(())
    }

    /// Lists a damaged game with what its records say (kind, seats, names, times), logs why,
    /// and keeps it out of play.
    pub(super) fn mark_damaged(&self, id: &str, records: &[pb::LogRecord], reason: &str) {
        tracing::error!(
            game = %id,
            reason = %reason,
            "the game's log does not replay: the game is damaged (listed and readable, not playable); the other games start"
        );
        self.list_damaged(id, records, reason);
    }

    /// Lists a damaged game (as [`Registry::mark_damaged`]) without a log line of its own:
    /// the store already named it (a damaged journal: one line for all the games it cost).
    pub(super) fn list_damaged(&self, id: &str, records: &[pb::LogRecord], reason: &str) {
        // The engine's and the store's reasons name the game already; the summary does too.
        let prefix = format!("game {id}: ");
        let reason = bounded_reason(reason.strip_prefix(&prefix).unwrap_or(reason));
        let mut summary = pb::GameSummary {
            game_id: id.to_string(),
            status: pb::GameStatus::Unspecified as i32,
            last_seq: records.last().map_or(0, |r| r.seq),
            created_unix_ms: records.first().map_or(0, |r| r.unix_ms),
            damaged: true,
            damage_reason: reason.clone(),
            ..Default::default()
        };
        for record in records {
            match &record.record {
                Some(Record::Created(created)) if summary.kind.is_empty() => {
                    summary.kind = created.kind.clone();
                    summary.players = created.players;
                    summary.names = vec![String::new(); created.players.min(64) as usize];
                    self.remember_create_id(id, created);
                }
                Some(Record::Joined(joined)) => {
                    if let Some(name) = summary.names.get_mut(joined.seat as usize) {
                        if name.is_empty() {
                            summary.seats_taken += 1;
                        }
                        name.clone_from(&joined.name);
                    }
                }
                _ => {}
            }
        }
        self.games.write().expect("games lock").remove(id);
        self.summaries
            .lock()
            .expect("summaries lock")
            .insert(id.to_string(), summary);
        self.damaged
            .write()
            .expect("damaged lock")
            .insert(id.to_string(), reason);
    }

    /// Why the game is damaged; None if it is not.
    pub(super) fn damage_reason(&self, id: &str) -> Option<String> {
        self.damaged.read().expect("damaged lock").get(id).cloned()
    }

    /// A damaged game's records after `from_seq` as GetLog shows a running game's (public
    /// redaction: no seed, no tokens, events as a spectator sees them), read from the store;
    /// None if the game is not damaged. A log that cannot be shown that way (its records do
    /// not decode, its `created` record builds no game, so nothing says what is hidden)
    /// answers FAILED_PRECONDITION: a damaged log never reveals hidden cards.
    pub async fn damaged_log(
        &self,
        id: &str,
        from_seq: u64,
    ) -> Option<HostResult<Vec<pb::LogRecord>>> {
        let reason = self.damage_reason(id)?;
        let unreadable = |why: &str| {
            HostError::NotNow(format!(
                "game {id} is damaged ({reason}) and its log cannot be shown: {why}"
            ))
        };
        let records = match self.store.load_game(id).await {
            Ok(records) => records,
            Err(e) if e.kind == StoreErrorKind::Corrupt => {
                return Some(Err(unreadable("a record does not decode")))
            }
            Err(e) => return Some(Err(HostError::Storage(e.message))),
        };
        let created = records.iter().find_map(|r| match &r.record {
            Some(Record::Created(created)) => Some(created.clone()),
            _ => None,
        });
        let Some(Ok((game, _))) = created.map(GameActor::new_game) else {
            return Some(Err(unreadable(
                "its `created` record does not build a game, so nothing says which parts are hidden",
            )));
        };
        Some(Ok(records
            .iter()
            .filter(|r| r.seq > from_seq)
            .map(|r| game.public_record(r, false))
            .collect()))
    }
}

/// What a call to play a damaged game answers (FAILED_PRECONDITION).
pub(super) fn damaged_error(id: &str, reason: &str) -> HostError {
    HostError::NotNow(format!(
        "game {id} is damaged: its log does not replay ({reason}); it is listed and GetLog shows its log, but it cannot be joined, watched, played or cancelled"
    ))
}

/// `reason` cut to [`MAX_DAMAGE_REASON_LEN`] bytes (at a character boundary).
pub(super) fn bounded_reason(reason: &str) -> String {
    let mut end = reason.len().min(MAX_DAMAGE_REASON_LEN);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = reason[..end].to_string();
    if end < reason.len() {
        cut.push('…');
    }
    cut
}
