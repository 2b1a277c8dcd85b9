//! Helpers of the crew policy for The Gang ([`crate::policies::crew`]): the chip convention
//! ([`protocol`]), hand computations with the rules library ([`hand`]) and an in-process
//! evaluation harness that plays whole games without a server ([`arena`]).

pub mod arena;
pub mod hand;
pub mod protocol;
