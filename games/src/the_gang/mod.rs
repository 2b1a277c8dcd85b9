//! The Gang in the bridge: [`wire`] (options, presets, actions, events of `gangs.v1`),
//! [`visibility`] (the one place that decides what a seat may see) and [`words`] (the CLI's
//! words, descriptions and terminal picture).

pub mod visibility;
pub mod wire;
pub mod words;

pub use wire::{
    action_from_pb, action_to_pb, card_from_pb, card_to_pb, config_from_pb, event_to_pb,
    new_engine, preset_from_pb, TheGangWire,
};
pub use words::{
    describe_action, describe_event, parse_action, parse_options, render_view, ACTION_HELP,
};

use crate::bridge::Bridge;
use crate::Refusal;
use gangs_proto::v1 as pb;

/// A live game of The Gang behind the host's `Game` trait.
pub type TheGangGame = Bridge<TheGangWire>;

impl Bridge<TheGangWire> {
    /// A game from wire options (defaults when omitted), a seed and preset heists.
    pub fn new(
        options: Option<&pb::TheGangOptions>,
        seed: u64,
        preset: Option<&pb::TheGangPreset>,
    ) -> Result<Self, Refusal> {
        let clock = options.map_or_else(crate::clock::WireClock::default, |o| {
            crate::clock::WireClock {
                turn_ms: o.turn_ms,
                bank_ms: o.bank_ms,
                absent_after: o.absent_after,
            }
        });
        Bridge::from_engine(new_engine(options, seed, preset)?).with_clock(clock)
    }
}
