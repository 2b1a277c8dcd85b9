//! The game host. Map:
//! - `server.rs`: configuration and the tonic server (reflection, health, shutdown);
//! - `api.rs`: the `gangs.v1.Games` service, a thin layer over the registry;
//! - `bounds.rs`: the size limits of every id and string a client sends;
//! - `registry.rs`: the directory of games, rebuilt from the log at startup;
//! - `actor.rs`: one task per game, the only owner of its state; durability then fan-out;
//! - `store/`: the storage boundary (`LogStore`); `store/sled.rs` the embedded log, the one
//!   place that talks to sled (group commit on a dedicated thread).
//! - `viewer/`: the web viewer (`--http`): a read-only page and JSON API over the same service.

pub mod actor;
pub mod api;
pub mod bounds;
pub mod viewer;
pub mod registry;
pub mod server;
pub mod store;
