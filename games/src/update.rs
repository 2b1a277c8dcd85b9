//! What a seat (or the spectator) receives for one log record: the `Update` the server sends
//! live (`service/src/actor.rs`), and `gangs replay --at` rebuilds from a finished log. One
//! function for both, so a replayed view is exactly the one the seat saw.

use crate::Game;
use gangs_proto::v1 as pb;
use pb::log_record::Record;

/// The events a record holds (none for `created` and `joined`).
pub fn record_events(record: &pb::LogRecord) -> &[pb::GameEvent] {
    match &record.record {
        Some(Record::Started(s)) => &s.events,
        Some(Record::Acted(a)) => &a.events,
        Some(Record::Expired(e)) => &e.events,
        _ => &[],
    }
}

/// What `seat` (or a spectator) receives for `record`, with the game in the state right after it.
pub fn build_update(
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
