//! The one bridge between an engine and the host, written once over the engine contract
//! ([`gangs_rules::Engine`]): each game supplies only its wire mapping ([`Wire`], in
//! `<game>/wire.rs`) and its visibility decisions ([`Visibility`], in `<game>/visibility.rs`).
//! The seat range is checked here, once, for every game.

use crate::clock::{ClockSettings, WireClock};
use crate::{EncodedEvents, Game, Refusal, Seat, Step};
use gangs_proto::v1 as pb;
use gangs_rules::Engine;

/// How one game's engine maps to `gangs.v1`: options, actions and events. Pure translation:
/// nothing here decides what a seat may see.
pub trait Wire: Send + Sync + 'static {
    type Engine: Engine;
    /// This game's case of the `gangs.v1` oneofs (`GameEvent.game`, `GameView.game`): the
    /// bridge unwraps and wraps them here, once, so a game's visibility sees only its own
    /// messages.
    type PbEvent;
    type PbView: prost::Message + Default;
    /// The kind's name, as the registry lists it (`KindInfo::name`).
    const KIND: &'static str;
    /// The number of this game's case in `GameView.game` (what [`Wire::wrap_view`] sets).
    const VIEW_FIELD: u32;
    /// The options with every default filled in (logged in the `created` record).
    fn options(engine: &Self::Engine) -> pb::GameOptions;
    /// A wire action of `seat` as an engine action (`seat` exists). Refuses actions of another
    /// game and malformed ones, with a reason a bot author understands.
    fn action_from_pb(
        engine: &Self::Engine,
        seat: Seat,
        action: &pb::GameAction,
    ) -> Result<<Self::Engine as Engine>::Action, Refusal>;
    fn action_to_pb(action: &<Self::Engine as Engine>::Action) -> pb::GameAction;
    /// The decision a seat's default action answers, in words ("play or pass", "chip move").
    fn decision(action: &<Self::Engine as Engine>::Action) -> &'static str;
    /// The clock fields of this game's wire options.
    fn clock_fields(options: &mut pb::GameOptions) -> Option<ClockFields<'_>>;
    /// This game's event inside `event`; `None` when it is another game's (or empty).
    fn unwrap_event(event: &pb::GameEvent) -> Option<&Self::PbEvent>;
    fn wrap_event(event: Self::PbEvent) -> pb::GameEvent;
    fn wrap_view(view: Self::PbView) -> pb::GameView;
    /// A complete event (nothing hidden) on the wire.
    fn event_to_pb(engine: &Self::Engine, event: &<Self::Engine as Engine>::Event)
        -> pb::GameEvent;
    /// Appends the bytes of [`Wire::event_to_pb`]'s `GameEvent` to `out`, exactly as prost
    /// encodes it (a replay compares them with stored bytes). The default builds the message
    /// and encodes it; a game whose events carry many cards may write them directly.
    fn encode_event(
        engine: &Self::Engine,
        event: &<Self::Engine as Engine>::Event,
        out: &mut Vec<u8>,
    ) {
        use prost::Message;
        Self::event_to_pb(engine, event).encode_raw(out);
    }
}

/// The three clock fields of one game's options message, to read or fill in.
pub struct ClockFields<'a> {
    pub turn_ms: &'a mut Option<u64>,
    pub bank_ms: &'a mut Option<u64>,
    pub absent_after: &'a mut Option<u32>,
}

impl ClockFields<'_> {
    pub fn get(&self) -> WireClock {
        WireClock {
            turn_ms: *self.turn_ms,
            bank_ms: *self.bank_ms,
            absent_after: *self.absent_after,
        }
    }

    pub fn set(&mut self, wire: WireClock) {
        *self.turn_ms = wire.turn_ms;
        *self.bank_ms = wire.bank_ms;
        *self.absent_after = wire.absent_after;
    }
}

/// What a seat (or a spectator, `None`) may see of one game: the one place that decides it.
/// Implementations match exhaustively, without a catch-all arm, so that a new event or field
/// cannot compile without a decision.
pub trait Visibility: Wire {
    /// The game as `seat` may see it now (`seat` exists, or is `None`).
    fn view(engine: &Self::Engine, seat: Option<Seat>) -> Self::PbView;
    /// The views of several audiences of the same state, encoded: for each, the bytes of
    /// `view(engine, seat)`. The default encodes each view in turn; a game whose audiences
    /// share most of their view (everything but a seat's own cards) builds and encodes that
    /// part once. The watchers of a record get their views from here.
    fn encoded_views(engine: &Self::Engine, audiences: &[Option<Seat>]) -> Vec<Vec<u8>> {
        use prost::Message;
        audiences
            .iter()
            .map(|&seat| Self::view(engine, seat).encode_to_vec())
            .collect()
    }
    /// A complete event of this game as `seat` may see it.
    fn redact(event: &Self::PbEvent, seat: Option<Seat>) -> Self::PbEvent;
    /// A logged action as `GetLog` shows it: `None` while the game runs (an action may name a
    /// hidden card), the action once it is over.
    fn public_action(action: &pb::GameAction, finished: bool) -> Option<pb::GameAction>;
}

/// A live game of kind `W`: the engine behind the host's [`Game`] trait.
pub struct Bridge<W: Wire> {
    engine: W::Engine,
    /// The clock options: the host's business, not the engine's; kept here so that the
    /// `created` record logs them with the game's other options.
    clock: ClockSettings,
}

impl<W: Wire> Clone for Bridge<W> {
    fn clone(&self) -> Self {
        Bridge {
            engine: self.engine.clone(),
            clock: self.clock,
        }
    }
}

impl<W: Visibility> Bridge<W> {
    pub fn from_engine(engine: W::Engine) -> Self {
        Bridge {
            engine,
            clock: ClockSettings::default(),
        }
    }

    /// The game with the clock options of its wire options (checked against their ranges).
    pub fn with_clock(mut self, wire: WireClock) -> Result<Self, Refusal> {
        self.clock = ClockSettings::from_wire(wire)?;
        Ok(self)
    }

    /// [`Bridge::with_clock`] with the clock fields of this game's `options` (absent: no
    /// clock), read through [`Wire::clock_fields`]: the one place each game names them.
    pub fn with_clock_of(self, mut options: pb::GameOptions) -> Result<Self, Refusal> {
        let wire = W::clock_fields(&mut options).map_or_else(WireClock::default, |f| f.get());
        self.with_clock(wire)
    }

    /// The engine, with every card: for tests and for bots that know the truth.
    pub fn engine(&self) -> &W::Engine {
        &self.engine
    }

    fn events(&self, events: &[<W::Engine as Engine>::Event]) -> Vec<pb::GameEvent> {
        events
            .iter()
            .map(|e| W::event_to_pb(&self.engine, e))
            .collect()
    }

    /// Applies `step` to the engine: the engine's events.
    fn step(&mut self, step: Step<'_>) -> Result<Vec<<W::Engine as Engine>::Event>, Refusal> {
        match step {
            Step::Start => Ok(self.engine.start()),
            Step::Act { seat, action } => {
                let seat = self.seat(seat)?;
                let action = W::action_from_pb(&self.engine, seat, action)?;
                Ok(self.engine.apply(seat, action)?)
            }
            Step::Expire => Ok(self.engine.expire()?),
        }
    }

    fn seat(&self, seat: Seat) -> Result<Seat, Refusal> {
        let players = self.engine.players();
        if seat >= players {
            return Err(Refusal::invalid(format!(
                "seat {seat} does not exist: seats are 0 to {}",
                players - 1
            )));
        }
        Ok(seat)
    }
}

impl<W: Visibility> Game for Bridge<W> {
    fn kind(&self) -> &'static str {
        W::KIND
    }

    fn players(&self) -> usize {
        self.engine.players()
    }

    fn options(&self) -> pb::GameOptions {
        let mut options = W::options(&self.engine);
        if let Some(mut fields) = W::clock_fields(&mut options) {
            fields.set(self.clock.to_wire());
        }
        options
    }

    fn start(&mut self) -> Vec<pb::GameEvent> {
        let events = self.engine.start();
        self.events(&events)
    }

    fn act(&mut self, seat: Seat, action: &pb::GameAction) -> Result<Vec<pb::GameEvent>, Refusal> {
        let events = self.step(Step::Act { seat, action })?;
        Ok(self.events(&events))
    }

    fn step_encoded(&mut self, step: Step<'_>, out: &mut EncodedEvents) -> Result<(), Refusal> {
        let events = self.step(step)?;
        out.clear();
        for event in &events {
            out.push_with(|bytes| W::encode_event(&self.engine, event, bytes));
        }
        Ok(())
    }

    fn phase_deadline_ms(&self) -> Option<u64> {
        self.engine.phase_deadline_ms()
    }

    fn phase_id(&self) -> u64 {
        self.engine.phase_id()
    }

    fn expire(&mut self) -> Result<Vec<pb::GameEvent>, Refusal> {
        let events = self.step(Step::Expire)?;
        Ok(self.events(&events))
    }

    fn view(&self, seat: Option<Seat>) -> pb::GameView {
        W::wrap_view(W::view(
            &self.engine,
            seat.filter(|&s| s < self.engine.players()),
        ))
    }

    fn encoded_views(&self, audiences: &[Option<Seat>]) -> Vec<Vec<u8>> {
        use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};
        if audiences.is_empty() {
            // A game may build a shared part before the first audience's: never for nobody.
            return Vec::new();
        }
        let players = self.engine.players();
        let audiences: Vec<Option<Seat>> = audiences
            .iter()
            .map(|seat| seat.filter(|&s| s < players))
            .collect();
        W::encoded_views(&self.engine, &audiences)
            .into_iter()
            .map(|inner| {
                // A `GameView` holding this game's case: its key, its length, its bytes.
                let len = inner.len() as u64;
                let mut view = Vec::with_capacity(
                    key_len(W::VIEW_FIELD) + encoded_len_varint(len) + inner.len(),
                );
                encode_key(W::VIEW_FIELD, WireType::LengthDelimited, &mut view);
                encode_varint(len, &mut view);
                view.extend_from_slice(&inner);
                view
            })
            .collect()
    }

    fn redact(&self, event: &pb::GameEvent, seat: Option<Seat>) -> Option<pb::GameEvent> {
        W::unwrap_event(event).map(|e| W::wrap_event(W::redact(e, seat)))
    }

    fn public_record(&self, record: &pb::LogRecord, finished: bool) -> pb::LogRecord {
        crate::visibility::public_record(
            record,
            finished,
            |e| self.redact(e, None),
            |a| W::public_action(a, finished),
        )
    }

    fn legal_actions(&self, seat: Seat) -> Vec<pb::GameAction> {
        if seat >= self.engine.players() {
            return Vec::new();
        }
        self.engine
            .legal_actions(seat)
            .iter()
            .map(W::action_to_pb)
            .collect()
    }

    fn actors(&self) -> Vec<Seat> {
        self.engine.actors()
    }

    fn clock(&self) -> ClockSettings {
        self.clock
    }

    fn decision(&self, seat: Seat) -> Option<&'static str> {
        self.engine.default_action(seat).as_ref().map(W::decision)
    }

    fn default_action(&self, seat: Seat) -> Option<pb::GameAction> {
        self.engine
            .default_action(seat)
            .as_ref()
            .map(W::action_to_pb)
    }

    fn is_over(&self) -> bool {
        self.engine.is_terminal()
    }

    fn outcome(&self) -> Option<pb::Outcome> {
        let outcome = self.engine.outcome()?;
        Some(pb::Outcome {
            seats: outcome
                .seats
                .iter()
                .map(|s| pb::SeatOutcome {
                    seat: s.seat as u32,
                    rank: s.rank,
                    score: s.score,
                    won: s.won,
                })
                .collect(),
            summary: outcome.summary,
        })
    }
}
