//! `gangs-server`: parses the configuration, sets up logging (`RUST_LOG`, `--log-format`),
//! binds and serves.

use clap::Parser;
use gangs_service::server::{
    migrate, run, shutdown_signal, Config, ServerCommand, MAX_BLOCKING_THREADS,
};

#[cfg_attr(not(feature = "jemalloc"), allow(dead_code, unused_imports))]
mod allocator;

/// jemalloc for the small allocations, the system's malloc for the large ones: under many
/// games at once (many small allocations freed on other threads: requests, records, updates)
/// jemalloc took a quarter less of the server's CPU per action than glibc's, and the split
/// keeps the empty server as small as with glibc (`allocator.rs`; docs/performance.md, "The
/// allocator").
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: allocator::ServerAllocator = allocator::SERVER_ALLOCATOR;

fn main() {
    #[cfg(feature = "jemalloc")]
    allocator::init();
    let config = Config::parse();
    // One worker per core (tokio's default); the blocking pool (the store's reads, the restore
    // scan, replays) capped, so that a storm of reads queues instead of starting hundreds of
    // threads.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
        .unwrap_or_else(|e| {
            eprintln!("gangs-server: cannot start the runtime: {e}");
            std::process::exit(1);
        });
    runtime.block_on(serve(config));
}

async fn serve(config: Config) {
    gangs_service::logging::init(config.log_format);
    if let Some(ServerCommand::Migrate { from, to }) = &config.command {
        match migrate(from, to, &config.store).await {
            Ok(done) => {
                println!(
                    "migrated {} game(s), {} ladder(s), {} record(s) to {to}; {} log(s) were already there",
                    done.games, done.ladders, done.records, done.already_there
                );
                return;
            }
            Err(e) => {
                eprintln!("gangs-server migrate: {e}");
                std::process::exit(1);
            }
        }
    }
    let listener = match tokio::net::TcpListener::bind(config.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("gangs-server: cannot listen on {}: {e} (is another server running? try --listen 127.0.0.1:0)", config.listen);
            std::process::exit(2);
        }
    };
    // `run` prints "gangs-server listening on ADDR" once it can serve.
    if let Err(e) = run(config, listener, shutdown_signal()).await {
        eprintln!("gangs-server: {e}");
        std::process::exit(1);
    }
}
