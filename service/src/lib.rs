//! The game host. Its modules are stages whose imports run only down (the order, and the
//! test that keeps it, in `tests/structure.rs`). Map:
//! - `server.rs`: configuration and the tonic server (reflection, health, shutdown);
//! - `api/`: the host's typed API (`mod.rs`), one call type placed by one route and sent on by
//!   one forwarder (`call.rs`), and the `gangs.v1.Games` gRPC adapter (`grpc.rs`);
//! - `grpc_web.rs`: `--grpc-web` and `--cors-origin`, for browsers calling `Games` directly;
//! - `front/`: who may call each method of both services (the admin, player and bot keys);
//! - `bounds.rs`: the size limits of every id and string a client sends;
//! - `connections.rs`: every port's connections (gRPC, viewer, metrics): per-port and per-client caps, the open-files
//!   limit, accept without spinning at EMFILE, idle connections closed;
//! - `cluster/`: several nodes on one JetStream log: games in shards, a lease per shard, forwarding to its holder;
//! - `registry/`: the directory of games, rebuilt from the log at startup;
//! - `directory.rs`: `WatchGames`, the directory's events read from the store's feed;
//! - `webhooks.rs`: a signed POST per game over (`--webhook`), the feed as their outbox;
//! - `actor/`: one task per game, the only owner of its state (seats, act, durability then
//!   fan-out, watch, timers: one file each);
//! - `error.rs`: the host's domain error; `front/errors.rs` alone turns it into gRPC statuses;
//! - `durations.rs`: durations in flags (`30d`, `500ms`);
//! - `store/`: the storage boundary (`LogStore`); `store/sled.rs` the embedded log, the one
//!   place that talks to sled (group commit on a dedicated thread); `store/jetstream.rs` the
//!   distributed log on NATS JetStream;
//! - `secret.rs`: comparing keys, tokens and invitations in constant time;
//! - `metrics.rs`: Prometheus metrics (`--metrics`); `logging.rs`: text or JSON logs;
//! - `ladder/`: ladders (`gangs.v1.Ladders`): bots queue, the server pairs, seats and rates
//!   them; each ladder's records are a log of their own in the store;
//! - `write_coalescing.rs`: each connection's writes gathered until its next flush;
//! - `viewer/`: the web viewer (`--http`): a read-only page and JSON API over the same service.

pub mod actor;
pub mod api;
pub mod bounds;
pub mod cluster;
pub mod connections;
pub mod directory;
pub mod durations;
pub mod error;
pub mod front;
pub mod grpc_web;
pub mod ladder;
pub mod limits;
pub mod logging;
pub mod metrics;
pub mod registry;
pub mod secret;
pub mod server;
pub mod store;
pub mod viewer;
pub mod watch_route;
pub mod webhooks;
pub mod write_coalescing;
