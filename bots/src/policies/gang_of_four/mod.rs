//! Gang of Four helpers shared by the greedy and search policies: reading the view into
//! engine terms ([`view`]), planning a hand into combinations ([`plan`]), dealing the unseen
//! cards consistently with what is public ([`sample`]) and the fast default policy that
//! finishes simulated deals ([`rollout`]), and an in-process table to evaluate policies on
//! ([`arena`]).

pub mod arena;
pub mod plan;
pub mod rollout;
pub mod sample;
pub mod view;
