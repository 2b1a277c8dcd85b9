//! The Gang: a cooperative Texas Hold'em for 3 to 6 players (rules: `docs/rules/the-gang.md`),
//! as a pure, deterministic engine. Every mode (basic, advanced, pro, gangster), all 10
//! challenge cards and all 10 specialist cards.
//!
//! # API for bots (e.g. `gangs-bot-crew`)
//! - Cards: [`Card`] (`Card::parse("Ah")`, `Card::SUITLESS_JACK`, `rank()`, `suit()`), [`cards`]
//!   for hand-written lists.
//! - Evaluator: [`evaluate`]`(&[Card]) -> `[`HandValue`] (0..=8 cards; larger is stronger, equal
//!   is a perfect tie; `.category()` gives the [`Category`]); [`Evaluator`] for hot loops.
//! - Monte Carlo strength: [`estimate_strength`] with a [`StrengthQuery`] (own cards, community
//!   cards, cards known to be elsewhere, number of other players) gives the share of other
//!   hands ours beats or ties.
//! - The engine: [`TheGang::new`], [`TheGang::start`], [`TheGang::act`], [`TheGang::expire`],
//!   [`TheGang::legal_actions`], and read-only state through [`TheGang::heist`] and friends.
//!
//! See [`game`] for every decision taken where the rules are silent, and its layout by stage.

pub mod cards;
pub mod challenges;
pub mod chips;
pub mod contract;
pub mod evaluator;
pub mod game;
pub mod strength;

/// The one refusal type of every engine.
pub use crate::engine::Refusal;
pub use cards::{cards, parse_rank, Card, Suit, JACK, RANK_LETTERS};
pub use challenges::{Announcement, Challenge, GuessValue, Specialist, SpecialistUse};
pub use chips::{ChipMove, ChipMoveKind, ChipPhase, Street};
pub use evaluator::{evaluate, fast_tables_built, Category, EvalHand, Evaluator, HandValue};
pub use game::{
    Action, Config, Event, Heist, HeistPreset, Mode, PendingChoice, Preset, Proposal, Reveal,
    Stage, TeamGuess, TheGang,
};
pub use strength::{estimate_strength, StrengthEstimate, StrengthQuery};
