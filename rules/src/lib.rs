//! The rules engines, pure code shared by the service, the bots and the tests.
//!
//! Each engine is deterministic from its seed (a seeded ChaCha RNG) and does no I/O. The
//! engines know nothing of the wire: `gangs-games` translates between them and `gangs.v1`.

pub mod engine;
pub mod gang_of_four;
pub mod the_gang;

pub use engine::{
    Engine, OptionSpec, OptionType, OptionValue, Outcome, Refusal, RefusalKind, Seat, SeatResult,
};
