//! What a seat (or the spectator) receives for one log record: the `Update` the server sends
//! live (`service/src/actor/watch.rs`), and `gangs replay --at` rebuilds from a finished log. One
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
        Some(Record::TimedOut(t)) => &t.events,
        _ => &[],
    }
}

/// Which updates carry the game's view: what a `Watch` stream asked for
/// (`WatchRequest.views`), and how an update is built for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithView {
    /// Every update, once the game has started (`WATCH_VIEWS_EVERY_UPDATE`, the default, and
    /// what every client got before the option existed).
    Always,
    /// Only when the update needs it ([`needs_view`]; a stream's first update has it too,
    /// which its sender decides): the view is not even built otherwise, the costly part of an
    /// update (a Gang of Four hand names each of its cards).
    WhenNeeded,
}

impl WithView {
    /// A `WatchRequest.views` value; one that is not a `WatchViews` is taken as the default
    /// (the server refuses those before they get here).
    pub fn of(views: i32) -> WithView {
        match pb::WatchViews::try_from(views) {
            Ok(pb::WatchViews::WhenNeeded) => WithView::WhenNeeded,
            _ => WithView::Always,
        }
    }
}

/// Whether an update is sent with its view to a stream that asked for views only when needed:
/// the seat may act (its legal actions are there: it decides from the view), or the game is
/// over (the final state).
pub fn needs_view(update: &pb::Update) -> bool {
    !update.legal_actions.is_empty() || pb::GameStatus::is_over_code(update.status)
}

/// What an update says beside its record and the game's state: the same for every audience
/// of one record, so a sender works it out once per record.
#[derive(Debug, Clone, Default)]
pub struct UpdateContext {
    /// The game had started at this record.
    pub started: bool,
    /// Seats taken at this record.
    pub seats_taken: u32,
    /// When the current phase closes by itself (The Gang's `phase_deadline_ms`), unix ms.
    pub deadline_unix_ms: Option<i64>,
    /// Every seat's clock (public).
    pub clocks: Vec<pb::SeatClock>,
}

/// The update of `seat` in a game played in process, without a server (arenas, a hosted bot's
/// sample decision, tests): `events` (the last step's, redacted for the seat), its view and
/// legal actions, numbered `seq`. No clocks and no wall-clock time: there is no log.
pub fn in_process_update(
    game: &dyn Game,
    seat: usize,
    seq: u64,
    events: &[pb::GameEvent],
) -> pb::Update {
    pb::Update {
        seq,
        events: events
            .iter()
            .filter_map(|e| game.redact(e, Some(seat)))
            .collect(),
        view: Some(game.view(Some(seat))),
        legal_actions: game.legal_actions(seat),
        status: if game.is_over() {
            pb::GameStatus::Finished
        } else {
            pb::GameStatus::Running
        } as i32,
        seat: Some(seat as u32),
        seats_taken: game.players() as u32,
        ..Default::default()
    }
}

/// What `seat` (or a spectator) receives for `record`, with the game in the state right after it.
pub fn build_update(
    game: &dyn Game,
    record: &pb::LogRecord,
    seat: Option<usize>,
    context: &UpdateContext,
    with_view: WithView,
) -> pb::Update {
    let mut update = update_without_view(game, record, seat, context);
    if wants_view(&update, context, with_view) {
        update.view = Some(game.view(seat));
    }
    update
}

/// Whether `update`, built by [`update_without_view`], carries the view in a stream that asked
/// for `with_view`: once the game has started, always or when the update needs it.
pub fn wants_view(update: &pb::Update, context: &UpdateContext, with_view: WithView) -> bool {
    context.started && (with_view == WithView::Always || needs_view(update))
}

/// [`build_update`] without the view, for a sender that adds the view's bytes itself (the live
/// fan-out encodes all its audiences' views together: `Game::encoded_views`).
pub fn update_without_view(
    game: &dyn Game,
    record: &pb::LogRecord,
    seat: Option<usize>,
    context: &UpdateContext,
) -> pb::Update {
    let UpdateContext {
        started,
        seats_taken,
        deadline_unix_ms,
        ref clocks,
    } = *context;
    // An `ended` record (a cancelled or abandoned game) is the last: its update is the final one.
    let ended = match &record.record {
        Some(Record::Ended(e)) => Some(e.reason()),
        _ => None,
    };
    let over = game.is_over() || ended.is_some();
    let status = if let Some(reason) = ended {
        ended_status(reason)
    } else if over {
        pb::GameStatus::Finished
    } else if started {
        pb::GameStatus::Running
    } else {
        pb::GameStatus::Waiting
    };
    let actor = match &record.record {
        Some(Record::Acted(a)) => Some(a.seat),
        Some(Record::TimedOut(t)) => Some(t.seat),
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
        view: None,
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
        outcome: if game.is_over() { game.outcome() } else { None },
        seat: seat.map(|s| s as u32),
        seats_taken,
        // Every seat's clock is public: the same for every audience.
        clocks: clocks.clone(),
        unix_ms: record.unix_ms,
    }
}

/// The status of a game closed by an `ended` record.
pub fn ended_status(reason: pb::ended::Reason) -> pb::GameStatus {
    match reason {
        pb::ended::Reason::Abandoned => pb::GameStatus::Abandoned,
        pb::ended::Reason::Cancelled | pb::ended::Reason::Unspecified => pb::GameStatus::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An update built for views only when needed has the view exactly when the seat may act
    /// (and is otherwise the same update as with the view always).
    #[test]
    fn a_view_is_built_only_when_needed() {
        for kind in crate::kind_names() {
            let mut game = crate::new_game(kind, None, 7, None).expect("a default game");
            game.start();
            let record = pb::LogRecord {
                seq: 5,
                ..Default::default()
            };
            let context = UpdateContext {
                started: true,
                seats_taken: 4,
                ..Default::default()
            };
            let build = |seat, with_view| build_update(&*game, &record, seat, &context, with_view);
            for seat in (0..game.players()).map(Some).chain([None]) {
                let always = build(seat, WithView::Always);
                let lean = build(seat, WithView::WhenNeeded);
                assert!(always.view.is_some(), "{kind} seat {seat:?}");
                let may_act = seat.is_some_and(|s| !game.legal_actions(s).is_empty());
                assert_eq!(lean.view.is_some(), may_act, "{kind} seat {seat:?}");
                assert_eq!(needs_view(&lean), may_act, "{kind} seat {seat:?}");
                let mut without = always.clone();
                without.view = lean.view.clone();
                assert_eq!(without, lean, "{kind} seat {seat:?}");
            }
        }
    }
}
