//! An actor made again from its game's log: at a restart (every game), and when a game not in
//! memory is asked for (a finished game unloaded, a game another node ran). Every record is
//! checked against the engine as it is applied (`gangs_games::replay`); a log that does not
//! replay is an error, and the registry lists the game as damaged.
//!
//! Records are taken one at a time: skimmed from their stored bytes, applied, dropped. A whole
//! game's records skimmed first and applied after was a buffer of thousands of records per
//! long game, grown and copied as it filled: a third of the rebuild on a log of whole games
//! (docs/performance.md). The stored bytes themselves are kept: they are the actor's records.

use super::records::Records;
use super::seats::Seat;
use super::{GameActor, Settings, Summaries};
use crate::error::{HostError, HostResult};
use crate::store::{skim_record, Store, StoredLog};
use gangs_games::replay::Replayer;
use gangs_games::skim::LoggedRecord;
use gangs_proto::v1 as pb;
use pb::ended::Reason;
use pb::log_record::Record;

/// What the rebuild gathers from the records besides the engine's state.
#[derive(Default)]
struct Rebuilding {
    replayer: Replayer,
    created: Option<pb::Created>,
    seats: Vec<(usize, Seat)>,
    action_ids: Vec<((usize, String), u64)>,
    started: Option<u64>,
    ended: Option<Reason>,
}

impl Rebuilding {
    /// Checks `logged` against the engine and applies it; notes what the actor keeps of it.
    fn apply(&mut self, logged: &LoggedRecord) -> Result<(), String> {
        self.replayer
            .apply_logged(logged)
            .map_err(|e| e.to_string())?;
        let record = &logged.record;
        match &record.record {
            Some(Record::Created(c)) => self.created = Some(c.clone()),
            Some(Record::Joined(j)) => self.seats.push((
                j.seat as usize,
                Seat {
                    name: j.name.clone(),
                    token: j.token.clone(),
                    join_id: j.join_id.clone(),
                    joined_seq: record.seq,
                },
            )),
            Some(Record::Started(_)) => self.started = Some(record.seq),
            Some(Record::Ended(e)) => self.ended = Some(e.reason()),
            Some(Record::Acted(a)) if !a.action_id.is_empty() => self
                .action_ids
                .push(((a.seat as usize, a.action_id.clone()), record.seq)),
            _ => {}
        }
        Ok(())
    }
}

impl GameActor {
    /// A game rebuilt from its log (at startup, or a game asked for again), its summary
    /// published, not yet running (`spawn` runs it); every record is checked against the
    /// engine. Records given as stored bytes are kept as they are (the actor's records);
    /// decoded ones are encoded.
    pub fn rebuild(
        id: String,
        store: Store,
        summaries: Summaries,
        settings: Settings,
        log: StoredLog,
    ) -> HostResult<GameActor> {
        let damaged = |e: String| HostError::Internal(format!("game {id}: {e}"));
        let mut rebuilding = Rebuilding::default();
        let mut records = Records::with_capacity(log.len());
        match log {
            StoredLog::Decoded(decoded) => {
                for record in decoded {
                    let logged = LoggedRecord::whole(record);
                    rebuilding.apply(&logged).map_err(damaged)?;
                    records.push(&logged.record);
                }
            }
            StoredLog::Encoded(encoded) => {
                for bytes in encoded {
                    // The store's message names the game already.
                    let logged =
                        skim_record(&id, &bytes).map_err(|e| HostError::Internal(e.message))?;
                    rebuilding.apply(&logged).map_err(damaged)?;
                    records.push_stored(bytes, logged.record.unix_ms);
                }
            }
        }
        let Rebuilding {
            replayer,
            created,
            seats,
            action_ids,
            started,
            ended,
        } = rebuilding;
        let created = created.ok_or_else(|| damaged("no `created` record".into()))?;
        let clocks = replayer.clocks().cloned();
        let (phase_id, phase_opened) = replayer.phase_opened();
        let game = replayer
            .into_game()
            .ok_or_else(|| damaged("empty log".into()))?;
        let mut actor = GameActor::empty(id, store, summaries, settings, game, created);
        for (seat, info) in seats {
            actor.seating.tokens.insert(info.token.clone(), seat);
            actor.seating.seats[seat] = Some(info);
        }
        actor.seating.action_ids.extend(action_ids);
        actor.seating.start_seq = started;
        actor.ended = ended;
        actor.durability.durable.send_replace(records.len());
        actor.records = records;
        actor.timers.clocks = clocks;
        // Deadlines are wall-clock times from the log, moved by the time the host was away.
        actor.resume_after_gap(super::unix_ms());
        actor.arm_timer();
        actor.rearm_phase_timer(phase_id, phase_opened);
        actor.publish_summary();
        Ok(actor)
    }
}
