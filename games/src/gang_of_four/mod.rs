//! Gang of Four in the bridge: [`wire`] (options, presets, actions, events of `gangs.v1`),
//! [`visibility`] (the one place that decides what a seat may see) and [`words`] (the CLI's
//! words, descriptions and terminal picture).

pub mod visibility;
pub mod wire;
pub mod words;

pub use wire::{card, engine_options, new_engine, GangOfFourWire};
pub use words::{
    describe_action, describe_event, parse_action, parse_options, render_view, ACTION_HELP,
};

use crate::bridge::Bridge;
use crate::Refusal;
use gangs_proto::v1 as pb;

/// A live game of Gang of Four behind the host's `Game` trait.
pub type GangOfFourGame = Bridge<GangOfFourWire>;

impl Bridge<GangOfFourWire> {
    /// A game from wire options (defaults when omitted), a seed and preset deals.
    pub fn new(
        options: Option<&pb::GangOfFourOptions>,
        seed: u64,
        preset: Option<&pb::GangOfFourPreset>,
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
