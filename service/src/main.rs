//! `gangs-server`: parses the configuration, sets up tracing (`RUST_LOG`), binds and serves.

use clap::Parser;
use gangs_service::server::{run_with_http, shutdown_signal, Config};

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
    let listener = match tokio::net::TcpListener::bind(config.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("gangs-server: cannot listen on {}: {e} (is another server running? try --listen 127.0.0.1:0)", config.listen);
            std::process::exit(2);
        }
    };
    let http = match config.http {
        None => None,
        Some(addr) => match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => Some(listener),
            Err(e) => {
                eprintln!("gangs-server: cannot serve the web viewer on {addr}: {e} (try --http 127.0.0.1:0)");
                std::process::exit(2);
            }
        },
    };
    // One line on stdout with the bound address, so scripts can start it with port 0; with
    // --http a second line gives the viewer's address (one write: a reader that stops after
    // the first line never makes the second fail).
    if let Ok(addr) = listener.local_addr() {
        let mut lines = format!("gangs-server listening on {addr}\n");
        if let Some(Ok(http)) = http.as_ref().map(|l| l.local_addr()) {
            lines.push_str(&format!("gangs-server web viewer on http://{http}/\n"));
        }
        print!("{lines}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
    }
    if let Err(e) = run_with_http(config, listener, http, shutdown_signal()).await {
        eprintln!("gangs-server: {e}");
        std::process::exit(1);
    }
}
