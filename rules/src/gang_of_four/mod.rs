//! Gang of Four, exactly as `docs/rules/gang-of-four.md` says: a pure, deterministic engine.
//!
//! Layout: [`cards`] (ids, words, masks), [`combination`] (what a play is and its strength
//! key), [`compare`] (what beats what), [`legal`] (allocation-free play generation),
//! [`deal`] (one deal in play: tricks, the last-card rule), [`scoring`] (penalties, loser,
//! end and ranking) and [`game`] (successive deals, the exchange, events).
//!
//! Cards are ids 0..=63 ordered by single strength (see [`cards`]); sets of cards are `u64`
//! masks ([`Mask`]).
//!
//! # API for bots
//! - Build a deal: [`DealState::from_parts`]`(options, hands, direction, turn, table, passes,
//!   announced, barred)` from a determinization of every hand plus the public situation (the
//!   view carries all of it), or take [`GangOfFour::deal`] when the truth is known.
//! - List plays without allocation: keep one [`PlayList`] and call
//!   [`DealState::legal_plays`]`(&mut list)`; `list.as_slice()` are the distinct plays,
//!   `list.can_pass` whether passing is allowed.
//! - Apply: [`DealState::apply`] (checked) or [`DealState::apply_unchecked`] (for moves taken
//!   from the list); play to the end with [`DealState::random_playout`] or
//!   [`DealState::random_step`].
//! - Score: [`DealState::penalties`] (penalty points per seat), [`DealState::winner`],
//!   [`scoring::choose_loser`].
//! - Judge combinations: [`Combination::classify`]`(mask)` and [`beats`]`(a, b, &options)`.

pub mod cards;
pub mod combination;
pub mod compare;
pub mod contract;
pub mod deal;
pub mod game;
pub mod legal;
pub mod scoring;

pub use cards::{CardId, Color, Mask};
pub use combination::{Combination, Kind};
pub use compare::beats;
pub use deal::{DealState, Direction, Move, StepOutcome};
pub use game::{Action, DealScore, Event, ExchangedCard, GangOfFour, Phase, TrickEntry};
pub use legal::{PlayList, MAX_PLAYS};
pub use scoring::Ranked;

/// The one refusal type of every engine.
pub use crate::engine::Refusal;

/// The options of §10, named as there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    /// 3 or 4 (with 3, a dead hand of 16 cards is dealt out of play).
    pub players: u8,
    /// Points that end the game.
    pub target_score: u32,
    /// Flushes compare by the sum of their values first.
    pub flush_by_sum: bool,
    /// The loser tie is broken by the strongest single card held.
    pub loser_tie_strongest_card: bool,
    /// Seats announce their last card themselves; forgetting bars them from playing.
    pub manual_last_card: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            players: 4,
            target_score: 100,
            flush_by_sum: false,
            loser_tie_strongest_card: false,
            manual_last_card: false,
        }
    }
}

impl Options {
    pub fn validate(&self) -> Result<(), Refusal> {
        if !(3..=4).contains(&self.players) {
            return Err(Refusal::invalid(format!(
                "players must be 3 or 4, not {}",
                self.players
            )));
        }
        if self.target_score == 0 {
            return Err(Refusal::invalid("target_score must be at least 1"));
        }
        Ok(())
    }
}
