//! The front of the `gangs.v1.Games` and `gangs.v1.Ladders` services: who may call each method,
//! declared once per method in `access.rs` (a test checks that every method of both services,
//! read from the proto's descriptors, has its rule), and what a ladder's bot key may do in the
//! Games service (`bots.rs`: the games its ladder matched it to, nothing else), and the last
//! refusal of each seat's calls (`refusals.rs`, quoted when a ladder pauses a silent bot). Handlers are
//! given the caller as a [`Principal`] and never read keys themselves. `errors.rs` is the one
//! place where the host's typed errors become gRPC statuses.

pub mod access;
pub mod bots;
pub mod errors;
pub mod refusals;

pub use access::{Front, Keys, Method, Principal, Rule};
pub use bots::{BotGrants, BotKey};
pub use refusals::Refusals;
