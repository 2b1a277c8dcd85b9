//! `gangs-server`: parses the configuration, sets up tracing (`RUST_LOG`), binds and serves.

use clap::Parser;
use gangs_service::server::{migrate, run, shutdown_signal, Config, ServerCommand};

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let config = Config::parse();
    if let Some(ServerCommand::Migrate { from, to }) = &config.command {
        match migrate(from, to, &config.store).await {
            Ok(done) => {
                println!(
                    "migrated {} game(s), {} record(s) to {to}; {} game(s) were already there",
                    done.games, done.records, done.already_there
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
    // One line on stdout with the bound address, so scripts can start it with port 0.
    if let Ok(addr) = listener.local_addr() {
        println!("gangs-server listening on {addr}");
    }
    if let Err(e) = run(config, listener, shutdown_signal()).await {
        eprintln!("gangs-server: {e}");
        std::process::exit(1);
    }
}
