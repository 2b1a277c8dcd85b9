//! The bridge between the pure rules engines (`gangs-rules`) and the wire (`gangs-proto`).
//!
//! The host drives every game through the [`Game`] trait and never looks inside a game.
//! [`bridge::Bridge`] implements it once over the engine contract ([`gangs_rules::Engine`]);
//! each game adds only `<game>/wire.rs` (engine ↔ `gangs.v1`), `<game>/visibility.rs` (**the one
//! place that decides what a seat may see**: views, event redaction, logged actions) and
//! `<game>/words.rs` (the CLI's words). [`visibility`] holds the record-level rules of the
//! public log. [`kinds`] is the one list of games.

pub mod bridge;
pub mod clock;
pub mod game_file;
pub mod gang_of_four;
pub mod kinds;
pub mod replay;
pub mod skim;
pub mod summary;
#[cfg(feature = "terminal")]
pub mod terminal;
pub mod the_gang;
pub mod update;
pub mod visibility;

use gangs_proto::v1 as pb;

pub use kinds::{kind, kind_names, kind_names_help, kind_titles, kinds, KindInfo};

/// Why an action or a request was refused: the engines' one refusal type. The host maps its
/// kind to a gRPC status (`Invalid` → INVALID_ARGUMENT, `NotNow` → FAILED_PRECONDITION).
pub use gangs_rules::{OptionSpec, OptionType, Refusal, RefusalKind, Seat};

/// A live game as the host sees it. Every method is deterministic: the same creation
/// parameters and the same sequence of `start`/`act`/`expire` calls give the same events.
///
/// Events returned by `start`, `act` and `expire` are **complete** (nothing hidden): the host
/// logs them as they are and passes them through [`Game::redact`] for each watcher.
pub trait Game: Send + Sync + 'static {
    /// The kind's name, as the registry lists it (`KindInfo::name`).
    fn kind(&self) -> &'static str;
    /// Number of seats.
    fn players(&self) -> usize;
    /// The game's options with every default filled in (logged in the `created` record).
    fn options(&self) -> pb::GameOptions;
    /// Every seat is taken: deal and return the opening events.
    fn start(&mut self) -> Vec<pb::GameEvent>;
    /// Applies `action` for `seat`. On error nothing changed.
    fn act(&mut self, seat: usize, action: &pb::GameAction) -> Result<Vec<pb::GameEvent>, Refusal>;
    /// How long the current phase may last from the moment it opened, if it has a deadline
    /// (The Gang's `phase_deadline_ms`). The host times it and calls [`Game::expire`].
    fn phase_deadline_ms(&self) -> Option<u64>;
    /// A number that changes whenever a new timed phase opens, so the host knows to restart
    /// its timer. Games without deadlines return 0.
    fn phase_id(&self) -> u64;
    /// The deadline of the current phase passed.
    fn expire(&mut self) -> Result<Vec<pb::GameEvent>, Refusal>;
    /// What `seat` (or a spectator, `None`) may see now. The one place that decides it.
    fn view(&self, seat: Option<usize>) -> pb::GameView;
    /// The views of several audiences at once, each encoded: the bytes of `view(seat)`'s
    /// `GameView`, made with less work than encoding each (what every audience sees alike is
    /// built and encoded once). No audience, nothing built.
    fn encoded_views(&self, audiences: &[Option<usize>]) -> Vec<Vec<u8>>;
    /// `event` as `seat` (or a spectator) may see it; `None` if it must not see it at all.
    fn redact(&self, event: &pb::GameEvent, seat: Option<usize>) -> Option<pb::GameEvent>;
    /// `record` as `GetLog` shows it: tokens never; while the game runs (`finished` false)
    /// nothing hidden (no seed, no preset, no actions, events as a spectator sees them).
    fn public_record(&self, record: &pb::LogRecord, finished: bool) -> pb::LogRecord;
    /// Every distinct action `seat` may take now (empty when it may not act).
    fn legal_actions(&self, seat: usize) -> Vec<pb::GameAction>;
    /// The seats the game is waiting for now (a clock runs for them), in seat order.
    fn actors(&self) -> Vec<Seat>;
    /// The clock options (`turn_ms`, `bank_ms`, `absent_after`); disabled without `turn_ms`.
    fn clock(&self) -> clock::ClockSettings;
    /// The decision `seat` faces now, in words ("play or pass", "chip move"), for the log's
    /// `timed_out` records; `None` when the game does not wait for it.
    fn decision(&self, seat: Seat) -> Option<&'static str>;
    /// What `seat` plays when silent (its clock ran out, it is absent), one of its legal
    /// actions; `None` when the game is not waiting for it. The defaults are documented in
    /// each engine's `contract` module.
    fn default_action(&self, seat: Seat) -> Option<pb::GameAction>;
    /// The game is over.
    fn is_over(&self) -> bool;
    /// The result, once the game is over.
    fn outcome(&self) -> Option<pb::Outcome>;
    /// What [`Game::start`], [`Game::act`] or [`Game::expire`] does (`step`), its events
    /// written into `out` as the bytes of each `GameEvent` instead of returned as messages:
    /// for a replay that compares them with a log's stored bytes, where building the messages
    /// only to encode them was most of the comparison's cost (a Gang of Four deal is 64 card
    /// messages). The bytes are exactly prost's encoding of the events the other methods
    /// return (tested for every game). On error nothing changed.
    fn step_encoded(&mut self, step: Step<'_>, out: &mut EncodedEvents) -> Result<(), Refusal>;
}

/// One step of a game, as [`Game::step_encoded`] takes it.
#[derive(Clone, Copy, Debug)]
pub enum Step<'a> {
    /// [`Game::start`].
    Start,
    /// [`Game::act`].
    Act {
        seat: usize,
        action: &'a pb::GameAction,
    },
    /// [`Game::expire`].
    Expire,
}

/// A step's events, each encoded as a `GameEvent`, in order, in one buffer (reused from step
/// to step: no allocation per event).
#[derive(Debug, Default)]
pub struct EncodedEvents {
    bytes: Vec<u8>,
    /// Where each event ends in `bytes`.
    ends: Vec<usize>,
}

impl EncodedEvents {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Appends one event, which `write` writes at the end of the buffer it is given.
    pub fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        write(&mut self.bytes);
        self.ends.push(self.bytes.len());
    }

    /// How many events (the replay compares the count first).
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Each event's bytes, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.bytes[start..end])
    }
}

pub use kinds::{
    action_help, describe_action, describe_event, new_game, parse_action, parse_options,
    render_view,
};

#[cfg(test)]
mod tests {
    /// The engines quote client input in their refusals, the host in its errors: a bot author
    /// reads both, so both quote alike (see `gangs_rules::engine::quote`).
    #[test]
    fn the_engines_and_the_host_quote_input_alike() {
        let long = "é".repeat(100);
        for input in ["", "ab\"c", "line\nbreak", long.as_str(), &"x".repeat(81)] {
            assert_eq!(
                gangs_rules::engine::quote(input),
                gangs_proto::quoted(input),
                "{input:?}"
            );
        }
    }
}
