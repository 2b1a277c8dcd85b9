//! What the public log shows (`GetLog`), for every game: the record-level decisions. What a
//! seat may see *inside* a game (views, events, actions) is decided by the game's own
//! visibility module (`<game>/visibility.rs`), which this module asks.
//!
//! # What "may see" means, for every game
//! - A **seat** sees its own hand, the public table, and what the rules show it alone (each
//!   game's visibility module lists it); never another seat's hidden cards, the deck, the
//!   seed or the preset while the game runs.
//! - A **spectator** (and the public log of a running game) sees what every seat may see:
//!   no hidden card at all.
//! - **Tokens, join ids, invitations, create ids and creators** are never shown, not even once the game is over.
//! - Once the game is **over**, the log is complete (seed, preset, actions, complete events):
//!   it must replay byte for byte (`gangs replay --verify`).

use gangs_proto::v1 as pb;
use pb::log_record::Record;

/// `record` as `GetLog` shows it. `spectator_event` is the game's redaction for a spectator;
/// `public_action` its decision for logged actions. Every record kind is decided here: a new
/// kind does not compile until it is.
pub fn public_record(
    record: &pb::LogRecord,
    finished: bool,
    spectator_event: impl Fn(&pb::GameEvent) -> Option<pb::GameEvent>,
    public_action: impl Fn(&pb::GameAction) -> Option<pb::GameAction>,
) -> pb::LogRecord {
    let events = |events: &[pb::GameEvent]| -> Vec<pb::GameEvent> {
        if finished {
            events.to_vec()
        } else {
            events.iter().filter_map(&spectator_event).collect()
        }
    };
    // Every record and every field is destructured: a new one does not compile until its
    // visibility is decided here.
    let record_kind = match &record.record {
        None => None,
        Some(Record::Created(pb::Created {
            kind,
            options,
            seed,
            preset,
            players,
            reserve_seats,
            invitations: _,
            create_id: _,
            creator: _,
        })) => Some(Record::Created(pb::Created {
            kind: kind.clone(),
            options: *options,
            seed: seed.filter(|_| finished),
            preset: preset.clone().filter(|_| finished),
            players: *players,
            reserve_seats: *reserve_seats,
            // Secrets, like tokens: never shown, not even once the game is over.
            invitations: Vec::new(),
            create_id: String::new(),
            creator: String::new(),
        })),
        Some(Record::Joined(pb::Joined {
            seat,
            name,
            token: _,
            join_id: _,
        })) => Some(Record::Joined(pb::Joined {
            seat: *seat,
            name: name.clone(),
            token: String::new(),
            join_id: String::new(),
        })),
        Some(Record::Started(pb::Started { events: e })) => {
            Some(Record::Started(pb::Started { events: events(e) }))
        }
        Some(Record::Acted(pb::Acted {
            seat,
            action,
            action_id,
            events: e,
        })) => Some(Record::Acted(pb::Acted {
            seat: *seat,
            action: action.as_ref().and_then(&public_action),
            action_id: if finished {
                action_id.clone()
            } else {
                String::new()
            },
            events: events(e),
        })),
        Some(Record::Expired(pb::Expired { events: e })) => {
            Some(Record::Expired(pb::Expired { events: events(e) }))
        }
        Some(Record::TimedOut(pb::TimedOut {
            seat,
            decision,
            action,
            events: e,
            used_ms,
            absent,
            cause,
        })) => Some(Record::TimedOut(pb::TimedOut {
            seat: *seat,
            decision: decision.clone(),
            // Like a seat's own action: it may name a hidden card.
            action: action.as_ref().and_then(&public_action),
            events: events(e),
            used_ms: *used_ms,
            absent: *absent,
            // Why a hosted bot's decision failed: about the bot, not the cards.
            cause: cause.clone(),
        })),
        // A ladder's record (service/src/ladder) is never part of a game's log: nothing shown.
        Some(Record::Ladder(_)) => None,
        // Why the game ended (cancelled, abandoned) is public.
        Some(Record::Ended(pb::Ended { reason, detail })) => Some(Record::Ended(pb::Ended {
            reason: *reason,
            detail: detail.clone(),
        })),
    };
    let pb::LogRecord {
        seq,
        unix_ms,
        record: _,
    } = record;
    pb::LogRecord {
        seq: *seq,
        unix_ms: *unix_ms,
        record: record_kind,
    }
}
