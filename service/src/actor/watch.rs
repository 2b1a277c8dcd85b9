//! What each seat (or a spectator) sees: the update built for every record, the watchers it is
//! fanned out to (a slow one is cut off, never waited for), the catch-up of a watcher joining
//! late, and the log as `GetLog` shows it.

use super::{GameActor, UpdateStream};
use crate::error::{HostError, HostResult};
use gangs_games::clock::Clocks;
use gangs_games::replay::Replayer;
use gangs_games::update::build_update;
use gangs_games::Game;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use tokio::sync::mpsc;

pub(super) struct Watcher {
    seat: Option<usize>,
    updates: mpsc::Sender<HostResult<pb::Update>>,
}

impl GameActor {
    pub(super) fn fan_out(&mut self, updates: &[pb::Update]) {
        let spectator = updates.len() - 1;
        let id = &self.id;
        let buffer = self.settings.watcher_buffer;
        self.watchers.retain(|w| {
            let update = &updates[w.seat.unwrap_or(spectator)];
            // The last free slot is kept for the status that tells a slow watcher it was cut off.
            if w.updates.capacity() <= 1 {
                tracing::info!(game = %id, seat = ?w.seat, "cutting off a watcher that fell behind");
                crate::metrics::watcher_cut_off();
                let _ = w.updates.try_send(Err(HostError::Exhausted(format!(
                    "you fell more than {buffer} updates behind game {id}: watch again with from_seq = the last seq you received"
                ))));
                return false;
            }
            w.updates.try_send(Ok(update.clone())).is_ok()
        });
    }

    /// The update of `record` for every seat and the spectator, computed once when the record
    /// is applied (the state moves on before the record is durable).
    pub(super) fn updates_for_all(&self, record: &pb::LogRecord) -> Vec<pb::Update> {
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
            self.clocks.as_ref().map(Clocks::to_pb).unwrap_or_default(),
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

    pub(super) fn watch(&mut self, token: &str, from_seq: u64) -> HostResult<UpdateStream> {
        let seat = if token.is_empty() {
            None
        } else {
            Some(self.seat_of(token)?)
        };
        if from_seq > self.last_seq() {
            return Err(HostError::OutOfRange(format!(
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
        if !(self.is_over() && self.pending.is_empty()) {
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
                let clocks = replayer.clocks().map(Clocks::to_pb).unwrap_or_default();
                updates.push(build_update(
                    game,
                    record,
                    seat,
                    started,
                    seats_taken,
                    deadline,
                    clocks,
                ));
            }
        }
        updates
    }

    /// The durable records after `from_seq` as `GetLog` shows them.
    pub(super) fn log(&self, from_seq: u64) -> Vec<pb::LogRecord> {
        let finished = self.is_over();
        self.records[..self.durable_seq as usize]
            .iter()
            .filter(|r| r.seq > from_seq)
            .map(|r| self.game.public_record(r, finished))
            .collect()
    }
}
