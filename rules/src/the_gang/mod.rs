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
//! See `game.rs` for every decision taken where the rules are silent.

pub mod cards;
pub mod challenges;
pub mod chips;
pub mod evaluator;
pub mod game;
pub mod strength;

pub use cards::{cards, parse_rank, Card, Suit, JACK, RANK_LETTERS};
pub use challenges::{Announcement, Challenge, GuessValue, Specialist, SpecialistUse};
pub use chips::{ChipMove, ChipMoveKind, ChipPhase, Street};
pub use evaluator::{evaluate, Category, EvalHand, Evaluator, HandValue};
pub use game::{
    Action, Config, Event, Heist, HeistPreset, Mode, PendingChoice, Preset, Proposal, Reveal,
    Stage, TeamGuess, TheGang,
};
pub use strength::{estimate_strength, StrengthEstimate, StrengthQuery};

/// Why the engine refused an action: `Invalid` (malformed, impossible) or `NotNow` (well
/// formed, but not allowed at this moment). Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionError {
    Invalid(String),
    NotNow(String),
}

impl ActionError {
    pub fn invalid(message: impl Into<String>) -> Self {
        ActionError::Invalid(message.into())
    }
    pub fn not_now(message: impl Into<String>) -> Self {
        ActionError::NotNow(message.into())
    }
    pub fn message(&self) -> &str {
        match self {
            ActionError::Invalid(m) | ActionError::NotNow(m) => m,
        }
    }
}

impl std::fmt::Display for ActionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for ActionError {}
