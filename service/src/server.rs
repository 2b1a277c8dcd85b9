//! Configuration and startup: open the store, rebuild every game, serve `gangs.v1.Games` with
//! reflection (v1 and v1alpha) and health, and shut down gracefully on SIGINT/SIGTERM.

use crate::api::GamesService;
use crate::registry::Registry;
use crate::store::sled::SledStore;
use gangs_proto::v1::games_server::GamesServer;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use tonic::transport::{Identity, ServerTlsConfig};

/// Default of `--max-request-bytes`: a game's action is a few dozen bytes, a preset a few KB.
pub const MAX_REQUEST_BYTES: u32 = 64 * 1024;

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "gangs-server",
    version,
    about = "The gangs game server: Gang of Four and The Gang over gRPC."
)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "GANGS_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,
    /// Where the game log (embedded sled database) lives.
    #[arg(long, env = "GANGS_DATA_DIR", default_value = "./gangs-data")]
    pub data_dir: PathBuf,
    /// When set, CreateGame requires `authorization: Bearer KEY` metadata.
    #[arg(long, env = "GANGS_API_KEY")]
    pub api_key: Option<String>,
    /// Updates a watcher may fall behind before it is cut off (RESOURCE_EXHAUSTED; it resumes
    /// by seq). Bounds the memory a slow watcher costs; a game never waits for a watcher.
    #[arg(long, env = "GANGS_WATCH_BUFFER", default_value_t = crate::actor::DEFAULT_WATCHER_BUFFER)]
    pub watch_buffer: usize,
    /// Milliseconds a finished game stays in memory after its last request; it is then
    /// reloaded from the log when asked for again (memory holds the live games, not the history).
    #[arg(long, env = "GANGS_KEEP_FINISHED_MS", default_value_t = 60_000)]
    pub keep_finished_ms: u64,
    /// Also serve the read-only web viewer and its JSON API on this address (e.g.
    /// 127.0.0.1:8080): the game list, live games as a spectator, finished games replayed.
    #[arg(long, env = "GANGS_HTTP")]
    pub http: Option<SocketAddr>,
    /// Largest request accepted, in bytes (1024 to 16777216); a larger one is refused with
    /// RESOURCE_EXHAUSTED.
    #[arg(long, env = "GANGS_MAX_REQUEST_BYTES", default_value_t = MAX_REQUEST_BYTES,
          value_parser = clap::value_parser!(u32).range(1024..=16 * 1024 * 1024))]
    pub max_request_bytes: u32,
    /// Serve TLS with this PEM certificate chain (with --tls-key); clients then use https://.
    #[arg(long, env = "GANGS_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = "GANGS_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

/// The server's TLS identity from `--tls-cert`/`--tls-key`, checked before the server starts so
/// that a wrong file is a clear error at startup rather than failed handshakes later.
fn tls_config(config: &Config) -> Result<Option<ServerTlsConfig>, String> {
    let (Some(cert), Some(key)) = (&config.tls_cert, &config.tls_key) else {
        return Ok(None);
    };
    let read = |flag: &str, path: &PathBuf, marker: &str| {
        let pem = std::fs::read(path)
            .map_err(|e| format!("cannot read {flag} {}: {e}", path.display()))?;
        if !String::from_utf8_lossy(&pem).contains(marker) {
            return Err(format!(
                "{flag} {} is not a PEM file (no `{marker}` line)",
                path.display()
            ));
        }
        Ok(pem)
    };
    let cert = read("--tls-cert", cert, "-----BEGIN CERTIFICATE-----")?;
    let key = read("--tls-key", key, "PRIVATE KEY-----")?;
    Ok(Some(
        ServerTlsConfig::new().identity(Identity::from_pem(cert, key)),
    ))
}

/// Runs the server until `shutdown` resolves; pending flushes finish before it returns.
pub async fn run(
    config: Config,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    run_with_http(config, listener, None, shutdown).await
}

/// As [`run`], also serving the web viewer (`crate::viewer`) on `http` when given.
pub async fn run_with_http(
    config: Config,
    listener: tokio::net::TcpListener,
    http: Option<tokio::net::TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let tls = tls_config(&config)?;
    let (store, closer) = SledStore::open(&config.data_dir)?;
    let settings = crate::actor::Settings {
        watcher_buffer: config.watch_buffer.max(1),
        keep_finished: std::time::Duration::from_millis(config.keep_finished_ms),
    };
    let registry = Registry::restore(store, settings).await?;
    let service = GamesService::new(registry.clone(), config.api_key.clone());

    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<GamesServer<GamesService>>()
        .await;
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(gangs_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(gangs_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;

    tracing::info!(listen = %listener.local_addr()?, data_dir = %config.data_dir.display(), tls = tls.is_some(), "gangs-server ready");
    // TCP_NODELAY on every accepted connection: tonic sets it only on listeners it binds itself,
    // and without it Nagle + delayed ACK held about 1% of Act answers for 40 ms.
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    // On the signal, first stop the game actors: that ends every open Watch stream, which the
    // graceful shutdown would otherwise wait for forever. Actors answer their pending flushes.
    let closing = registry.clone();
    let (stop_http, http_stopped) = tokio::sync::watch::channel(false);
    if let Some(http) = http {
        let viewer = GamesService::new(registry.clone(), config.api_key.clone());
        let mut stopped = http_stopped;
        tokio::spawn(crate::viewer::serve(
            viewer,
            config.api_key.clone(),
            http,
            async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            },
        ));
    }
    let shutdown = async move {
        shutdown.await;
        let _ = stop_http.send(true);
        closing.close();
    };
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = tls {
        builder = builder
            .tls_config(tls)
            .map_err(|e| format!("--tls-cert/--tls-key: {}", gangs_proto::innermost_cause(&e)))?;
    }
    let max_request_bytes = usize::try_from(config.max_request_bytes).unwrap_or(usize::MAX);
    builder
        .layer(tower::util::MapResponseLayer::new(move |response| {
            request_size_status(response, max_request_bytes)
        }))
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(GamesServer::new(service).max_decoding_message_size(max_request_bytes))
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await?;
    tracing::info!("shutting down: finishing pending writes");
    registry.close();
    drop(registry);
    // Actors end when their handles are gone, after answering their pending flushes; the
    // store's writer (sled: the flusher thread) ends when the last store handle is gone.
    tokio::task::spawn_blocking(move || closer.join()).await?;
    Ok(())
}

/// tonic refuses a request over `max_decoding_message_size` with OUT_OF_RANGE and a message
/// that names no flag; a client should get RESOURCE_EXHAUSTED naming the limit and the flag that
/// sets it (gRPC's code for a message too large). Such a refusal is a trailers-only response, so
/// its status is in the headers.
fn request_size_status(
    mut response: http::Response<tonic::body::Body>,
    limit: usize,
) -> http::Response<tonic::body::Body> {
    let too_large = tonic::Status::from_header_map(response.headers()).is_some_and(|status| {
        status.code() == tonic::Code::OutOfRange
            && status
                .message()
                .contains("decoded message length too large")
    });
    if too_large {
        let status = tonic::Status::resource_exhausted(format!(
            "the request is larger than this server's limit of {limit} bytes (--max-request-bytes)"
        ));
        let _ = status.add_header(response.headers_mut());
    }
    response
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}
