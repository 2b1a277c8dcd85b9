//! The end-to-end tests, one binary: each file beside this one is a module, run as
//! `cargo test --test e2e` (all) or `cargo test --test e2e e2e_web::` (one file's tests).
//! They start the real binaries on free ports with temporary data dirs (see `common`). The
//! soak, which measures the server's memory and threads over minutes, is the binary `alone`.

mod common;
mod web;

mod e2e_arena;
mod e2e_bad_input;
mod e2e_bench;
mod e2e_bot_keys;
mod e2e_cancelled_watch;
mod e2e_catch_up;
mod e2e_cli_watch;
mod e2e_clocks;
mod e2e_cluster_faults;
mod e2e_crowd;
mod e2e_damaged_log;
mod e2e_deadline;
mod e2e_deadline_flood;
mod e2e_game_files;
mod e2e_games;
mod e2e_grpc_web;
mod e2e_hosted;
mod e2e_hosted_compile;
mod e2e_hosted_hostile;
mod e2e_hostile;
mod e2e_join_retry;
mod e2e_journal_damage;
mod e2e_ladder;
mod e2e_ladder_cluster;
mod e2e_ladder_fair;
mod e2e_ladder_policy;
mod e2e_ladder_ranking;
mod e2e_ladder_term;
mod e2e_lifecycle;
mod e2e_limits;
mod e2e_migrate;
mod e2e_nats_cluster;
mod e2e_nats_directory;
mod e2e_nats_forwarding;
mod e2e_operations;
mod e2e_python_bot;
mod e2e_rpc_fuzz;
mod e2e_seats_and_keys;
mod e2e_slow_watcher;
mod e2e_tls;
mod e2e_tui;
mod e2e_visibility;
mod e2e_watch_games;
mod e2e_watch_views;
mod e2e_web;
mod e2e_web_api;
mod e2e_web_auth;
mod e2e_web_bot_key;
mod e2e_web_bot_page;
mod e2e_web_ladders;
mod e2e_web_visibility;
mod e2e_webhooks;
mod proto_contract;
mod repository;
mod structure;
