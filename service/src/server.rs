//! Configuration and startup: open the store, rebuild every game and ladder, serve
//! `gangs.v1.Games` and `gangs.v1.Ladders` with
//! reflection (v1 and v1alpha) and health, and shut down gracefully on SIGINT/SIGTERM.

use crate::api::GamesService;
use crate::cluster::Cluster;
use crate::durations::parse_duration;
use crate::front::errors::request_size_status;
use crate::ladder::api::LaddersService;
use crate::registry::Registry;
use crate::store::jetstream::{JetStreamStore, NatsOptions};
use crate::store::sled::SledStore;
use crate::store::{Logs, StoreCloser};
use gangs_proto::v1::games_server::GamesServer;
use gangs_proto::v1::ladders_server::LaddersServer;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::ServerTlsConfig;

/// Default of `--max-request-bytes`: a game's action is a few dozen bytes, a preset a few KB.
pub const MAX_REQUEST_BYTES: u32 = 64 * 1024;
/// The defaults of `--max-module-bytes` and `--max-component-bytes`.
pub const MAX_MODULE_BYTES: u32 = 8 * 1024 * 1024;
pub const MAX_COMPONENT_BYTES: u32 = gangs_hosted::DEFAULT_COMPONENT_BYTES as u32;

/// Threads for blocking work (the store's reads, the restore scan, replays) at most; more work
/// waits for one. Idle ones leave after 10 s (tokio's default).
pub const MAX_BLOCKING_THREADS: usize = 32;

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "gangs-server",
    version,
    about = format!("The gangs game server: {} over gRPC.", gangs_games::kind_titles())
)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "GANGS_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,
    /// Where the game log (embedded sled database) lives.
    #[arg(long, env = "GANGS_DATA_DIR", default_value = "./gangs-data")]
    pub data_dir: PathBuf,
    /// The admin key: when set, every call (health and reflection excepted) needs
    /// `authorization: Bearer KEY` metadata with this key (may do everything) or the player key.
    #[arg(long, env = "GANGS_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// The player key (needs --api-key): may join, watch, act, read logs and list games, not
    /// create or cancel games.
    #[arg(
        long,
        env = "GANGS_PLAYER_KEY",
        hide_env_values = true,
        requires = "api_key"
    )]
    pub player_key: Option<String>,
    /// A game whose seats are not all taken this long after its creation ends as abandoned
    /// (e.g. 1h, 30m, 90s, 500ms).
    #[arg(long, env = "GANGS_FILL_TIMEOUT", default_value = "1h", value_parser = parse_duration)]
    pub fill_timeout: Duration,
    /// A running game without a clock where nobody acts this long ends as abandoned.
    #[arg(long, env = "GANGS_IDLE_TIMEOUT", default_value = "24h", value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// Delete the logs of games over (finished, cancelled, abandoned) for longer than this
    /// (e.g. 30d); omitted: keep them forever.
    #[arg(long, env = "GANGS_RETAIN_FINISHED", value_parser = parse_duration)]
    pub retain_finished: Option<Duration>,
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
    /// On a server with --api-key it asks for a key once (a login page, then a session
    /// cookie) and shows what that key may read over gRPC; see --http-public.
    #[arg(long, env = "GANGS_HTTP")]
    pub http: Option<SocketAddr>,
    /// With --http on a server with keys: no login; anyone who reaches the viewer reads every
    /// game as a spectator (finished ones with every hand), as with the player key.
    #[arg(long, env = "GANGS_HTTP_PUBLIC")]
    pub http_public: bool,
    /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9100); off when absent.
    #[arg(long, env = "GANGS_METRICS", value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// Log lines on stderr as `text` (colours only on a terminal) or `json` (one object per line).
    #[arg(long, env = "GANGS_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: crate::logging::LogFormat,
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
    /// Also answer gRPC-Web (HTTP/1.1 and HTTP/2, binary and text) on --listen, so that a
    /// browser can call the `Games` service directly (unary calls and server streams).
    #[arg(long, env = "GANGS_GRPC_WEB")]
    pub grpc_web: bool,
    /// With --grpc-web: a web origin allowed to call from a page of another origin, e.g.
    /// https://play.example.org (repeatable; GANGS_CORS_ORIGINS: comma-separated). Without it
    /// only pages of the server's own origin can.
    #[arg(
        long = "cors-origin",
        env = "GANGS_CORS_ORIGINS",
        value_delimiter = ',',
        requires = "grpc_web",
        value_name = "ORIGIN"
    )]
    pub cors_origins: Vec<String>,
    /// POST a signed JSON event to this URL for every game finished, cancelled or abandoned
    /// (repeatable; GANGS_WEBHOOKS: comma-separated), kept in the store until delivered.
    #[arg(
        long = "webhook",
        env = "GANGS_WEBHOOKS",
        value_delimiter = ',',
        requires = "webhook_secret",
        value_name = "URL"
    )]
    pub webhooks: Vec<String>,
    /// The secret that signs every webhook POST (header `gangs-signature`, HMAC-SHA256).
    #[arg(long, env = "GANGS_WEBHOOK_SECRET", hide_env_values = true)]
    pub webhook_secret: Option<String>,
    /// How long one webhook event is retried (with backoff up to 10 min) before it is given up.
    #[arg(long, env = "GANGS_WEBHOOK_RETRY_FOR", default_value = "24h", value_parser = parse_duration)]
    pub webhook_retry_for: Duration,
    /// Anyone may register a bot on a ladder (`RegisterBot` without the admin key), e.g. a
    /// community ladder; creating ladders, pausing and retiring bots still need the admin key.
    #[arg(long, env = "GANGS_OPEN_REGISTRATION")]
    pub open_registration: bool,
    /// Games one bot key may be matched to per hour on a ladder (a sliding hour); past it the
    /// bot's Queue stream gets a `capped` event (until when) and it waits. 0 (the default): no
    /// limit, the host protected by --max-live-games and 8 games at once per bot.
    #[arg(long, env = "GANGS_LADDER_GAMES_PER_HOUR", default_value_t = crate::ladder::DEFAULT_GAMES_PER_HOUR)]
    pub ladder_games_per_hour: u32,
    /// Hosted bot versions one bot may submit to a ladder per hour (a sliding hour): each
    /// submission costs a compile. 0: no limit.
    #[arg(long, env = "GANGS_MAX_SUBMITS_PER_HOUR", default_value_t = crate::ladder::DEFAULT_SUBMITS_PER_HOUR)]
    pub max_submits_per_hour: u32,
    /// Largest hosted bot module SubmitBot accepts, in bytes (1024 to 268435456; a ladder's
    /// own module budget may be lower). SubmitBot alone is read up to this size; every other
    /// call up to --max-request-bytes.
    #[arg(long, env = "GANGS_MAX_MODULE_BYTES", default_value_t = MAX_MODULE_BYTES,
          value_parser = clap::value_parser!(u32).range(1024..=256 * 1024 * 1024))]
    pub max_module_bytes: u32,
    /// Largest hosted bot component SubmitBot accepts, in bytes (1024 to 268435456): it carries
    /// its interpreter (a Python bot: some 18 MiB); a ladder's module budget is for modules.
    #[arg(long, env = "GANGS_MAX_COMPONENT_BYTES", default_value_t = MAX_COMPONENT_BYTES,
          value_parser = clap::value_parser!(u32).range(1024..=256 * 1024 * 1024))]
    pub max_component_bytes: u32,
    /// Most functions a hosted bot module may define, checked before compiling (with the two
    /// below: a module built to keep the compiler busy is refused at once, naming the flag).
    #[arg(long, env = "GANGS_MAX_MODULE_FUNCTIONS", default_value_t = gangs_hosted::compile::DEFAULT_BOUNDS.functions)]
    pub max_module_functions: u32,
    /// Largest function body of a hosted bot module, in bytes.
    #[arg(long, env = "GANGS_MAX_FUNCTION_BYTES", default_value_t = gangs_hosted::compile::DEFAULT_BOUNDS.function_body_bytes)]
    pub max_function_bytes: u32,
    /// Most locals of one function of a hosted bot module.
    #[arg(long, env = "GANGS_MAX_FUNCTION_LOCALS", default_value_t = gangs_hosted::compile::DEFAULT_BOUNDS.locals)]
    pub max_function_locals: u32,
    /// Threads that run hosted bots' decisions, apart from the games' own (default: the
    /// cores less one, at least one).
    #[arg(long, env = "GANGS_HOSTED_BOT_THREADS",
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub hosted_bot_threads: Option<u16>,
    /// Where hosted bots' compiled modules are kept, so that a start loads them instead of
    /// compiling again (derived data: deleting it costs only compile time). Default:
    /// `hosted-cache` in the data dir; on a cluster node (no data dir), in the system's
    /// temporary directory.
    #[arg(long, env = "GANGS_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    #[command(flatten)]
    pub limits: crate::limits::LimitFlags,
    #[command(flatten)]
    pub connections: crate::connections::ConnectionFlags,
    #[command(flatten)]
    pub store: StoreFlags,
    #[command(subcommand)]
    pub command: Option<ServerCommand>,
}

/// `--nats-replicas`: 1 or 3 (a Raft group of 2 tolerates no failure; 5 is not needed here).
fn parse_replicas(value: &str) -> Result<usize, String> {
    match value {
        "1" => Ok(1),
        "3" => Ok(3),
        _ => Err("expected 1 or 3".to_string()),
    }
}

/// Where the log lives: sled in `--data-dir` (the default) or NATS JetStream (`--store`).
#[derive(Debug, Clone, clap::Args)]
pub struct StoreFlags {
    /// The log on NATS JetStream instead of the embedded sled: `nats://HOST:4222[,HOST:4222...]`
    /// (stream GANGS_LOG). Unset or `sled`: the sled database in --data-dir.
    #[arg(long = "store", env = "GANGS_STORE", global = true)]
    pub url: Option<String>,
    /// Copies of every record in the NATS stream when this node creates it: 1, or 3 (a quorum
    /// acknowledges each action; survives the loss of one NATS node).
    #[arg(long, env = "GANGS_NATS_REPLICAS", default_value_t = 1, global = true,
          value_parser = parse_replicas)]
    pub nats_replicas: usize,
    /// NATS credentials file (JWT + nkey seed), for clusters with accounts.
    #[arg(long, env = "GANGS_NATS_CREDS", global = true)]
    pub nats_creds: Option<PathBuf>,
    /// NATS user (with --nats-password).
    #[arg(
        long,
        env = "GANGS_NATS_USER",
        global = true,
        requires = "nats_password"
    )]
    pub nats_user: Option<String>,
    /// NATS password (with --nats-user).
    #[arg(
        long,
        env = "GANGS_NATS_PASSWORD",
        global = true,
        requires = "nats_user",
        hide_env_values = true
    )]
    pub nats_password: Option<String>,
    /// With --store nats://: the gRPC URL other gangs nodes reach this one at, to forward the
    /// calls of the games it runs (default: http://LISTEN-ADDRESS).
    #[arg(long, env = "GANGS_ADVERTISE", global = true)]
    pub advertise: Option<String>,
    /// With --store nats://: how many shards a new cluster spreads its games over (each node
    /// runs the games of the shards it holds). Fixed when the first node creates the cluster;
    /// later nodes use the cluster's.
    #[arg(long, env = "GANGS_SHARDS", global = true, default_value_t = crate::cluster::DEFAULT_SHARDS,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::cluster::MAX_SHARDS)))]
    pub shards: u32,
    /// With the embedded store: what a damaged journal (bytes that do not read back with
    /// whole entries after them) does to the start. `mark`: the games that may have lost
    /// records there are listed as damaged, every other game is served, the journal is kept
    /// aside (journal.damaged-N); `refuse`: the server does not start (exit code 1) and
    /// changes nothing. Either way one ERROR line names the journal, the offset and the games.
    #[arg(long, env = "GANGS_ON_JOURNAL_DAMAGE", global = true, value_enum,
          default_value_t = crate::store::OnJournalDamage::Mark)]
    pub on_journal_damage: crate::store::OnJournalDamage,
}

impl Config {
    /// `--cache-dir`, or its default: `hosted-cache` in the data dir; on a cluster node (no
    /// data dir of its own), in the system's temporary directory.
    pub fn hosted_cache_dir(&self) -> PathBuf {
        match (&self.cache_dir, self.store.nats()) {
            (Some(dir), _) => dir.clone(),
            (None, None) => self.data_dir.join("hosted-cache"),
            (None, Some(_)) => std::env::temp_dir().join("gangs-hosted-cache"),
        }
    }
}

impl StoreFlags {
    /// How the embedded store is opened.
    pub fn sled_options(&self) -> crate::store::sled::SledOptions {
        crate::store::sled::SledOptions {
            on_journal_damage: self.on_journal_damage,
            faults: None,
        }
    }

    /// The NATS options when `--store` names a NATS cluster; None for sled.
    pub fn nats(&self) -> Option<NatsOptions> {
        let url = self.url.as_deref().filter(|u| *u != "sled")?;
        Some(NatsOptions {
            url: url.to_string(),
            replicas: self.nats_replicas,
            creds_file: self.nats_creds.clone(),
            user: self.nats_user.clone(),
            password: self.nats_password.clone(),
        })
    }

    /// Opens the configured store (sled in `data_dir` unless `--store` names NATS), both its
    /// namespaces; with NATS, also the JetStream context the cluster's leases use.
    pub async fn open(
        &self,
        data_dir: &std::path::Path,
    ) -> Result<(Logs, StoreCloser, Option<async_nats::jetstream::Context>), crate::store::StoreError>
    {
        if let Some(url) = self.url.as_deref() {
            if url != "sled" && !url.starts_with("nats://") && !url.starts_with("tls://") {
                return Err(crate::store::StoreError::unavailable(format!(
                    "--store {url:?}: expected nats://HOST:4222[,HOST:4222...] or sled"
                )));
            }
        }
        match self.nats() {
            None => {
                let opening = std::time::Instant::now();
                let (store, closer) = SledStore::open_logs(data_dir, &self.sled_options())?;
                tracing::info!(
                    ms = opening.elapsed().as_millis() as u64,
                    "opened the log in {}",
                    data_dir.display()
                );
                Ok((store, closer, None))
            }
            Some(options) => {
                let jetstream = JetStreamStore::open(&options).await?;
                let context = jetstream.context();
                let logs = Logs {
                    ladders: jetstream.in_namespace(crate::store::Namespace::Ladders),
                    games: jetstream,
                };
                // Every append is answered by the stream's ack: nothing to drain at shutdown
                // beyond what the actors already wait for.
                Ok((logs, StoreCloser::new(|| {}), Some(context)))
            }
        }
    }
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum ServerCommand {
    /// Copies every game of a sled data dir into NATS JetStream (`--to nats://...`), then exits.
    /// Idempotent: games already copied are skipped, a copy cut short is completed.
    Migrate {
        /// The sled data dir to read (the server that used it must be stopped).
        #[arg(long)]
        from: PathBuf,
        /// The NATS cluster: nats://HOST:4222[,HOST:4222...].
        #[arg(long)]
        to: String,
    },
}

/// `gangs-server migrate`: copies the log, prints what it did.
pub async fn migrate(
    from: &std::path::Path,
    to: &str,
    flags: &StoreFlags,
) -> Result<crate::store::Migrated, Box<dyn std::error::Error + Send + Sync>> {
    if !from.join("conf").exists() && !from.join("db").exists() {
        return Err(format!(
            "{} is not a gangs data dir (no sled database there)",
            from.display()
        )
        .into());
    }
    let (source, closer) = SledStore::open_logs(from, &flags.sled_options())?;
    let target_flags = StoreFlags {
        url: Some(to.to_string()),
        ..flags.clone()
    };
    let options = target_flags
        .nats()
        .ok_or("--to must name a NATS cluster: nats://HOST:4222[,HOST:4222...]")?;
    let target = JetStreamStore::open_logs(&options).await?;
    let migrated = crate::store::copy_log(&source, &target).await?;
    drop(source);
    tokio::task::spawn_blocking(move || closer.join()).await?;
    Ok(migrated)
}

/// Runs the server until `shutdown` resolves; pending flushes finish before it returns.
pub async fn run(
    config: Config,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // Before anything opens files: the soft open-files limit raised to the hard one (a
    // service manager's default soft limit, 1,024, is far below what the connections need).
    let open_files = crate::connections::raise_open_files_limit();
    // The addresses first (the metrics port), then the data dir: whatever is taken stops the
    // start before a single log line.
    if let Some(addr) = config.metrics {
        let (exposition, listener) = crate::metrics::install(addr)?;
        crate::connections::serve_metrics(listener, exposition);
    }
    let http = match config.http {
        None => None,
        Some(addr) => Some(tokio::net::TcpListener::bind(addr).await.map_err(|e| {
            format!("cannot serve the web viewer on --http {addr}: {e} (try --http 127.0.0.1:0)")
        })?),
    };
    let tls =
        crate::connections::tls_identity(config.tls_cert.as_deref(), config.tls_key.as_deref())?;
    let (logs, closer, jetstream) = config.store.open(&config.data_dir).await?;
    let store = logs.games.clone();
    // With the store open (its files counted): each port's connections sized to fit the limit.
    let ports = if http.is_some() { 2 } else { 1 };
    let sizing = crate::connections::size(&config.connections, ports, open_files);
    let idle_connection_timeout = config.connections.idle_connection_timeout;
    let settings = crate::actor::Settings {
        watcher_buffer: config.watch_buffer.max(1),
        keep_finished: Duration::from_millis(config.keep_finished_ms),
        fill_timeout: config.fill_timeout,
        idle_timeout: config.idle_timeout,
    };
    let limits = crate::limits::Limits::new(config.limits.clone());
    let counted = limits.clone();
    let keys = crate::api::Keys {
        admin: config.api_key.clone(),
        player: config.player_key.clone(),
    };
    let (registry, service, cluster) = start_games(
        &config,
        store,
        settings,
        keys,
        limits,
        &listener,
        jetstream.as_ref(),
    )
    .await?;
    // The limits count the live games each client created, as the log says (not from zero).
    counted.restore_games(
        registry
            .take_restored_creators()
            .into_iter()
            .filter_map(|(creator, id)| Some((crate::limits::Client::from_log_id(&creator)?, id))),
    );
    housekeeping(&registry, counted.clone());
    if config.metrics.is_some() {
        sample_sizes(&registry, cluster.clone(), counted.clone());
    }
    let directory = service.directory();
    start_webhooks(&config, &logs, &registry, &directory, cluster.clone())?;
    // Told when the server stops: the tasks that hold the store end then, or the store's
    // writer would wait for them for ever (a SIGTERM with --retain-finished never ended).
    let (stop_http, http_stopped) = tokio::sync::watch::channel(false);
    if let Some(retain) = config.retain_finished {
        tokio::spawn(delete_old_games(
            registry.clone(),
            cluster.clone(),
            retain,
            http_stopped.clone(),
        ));
    }

    let (stop_ladders, ladders_stopped) = tokio::sync::watch::channel(false);
    let ladders = start_ladders(&config, logs, &service, ladders_stopped, cluster.clone()).await?;

    announce_ready(&config, &listener, http.as_ref(), tls.is_some())?;
    // Every connection admitted against --max-connections (and the per-client share), never a
    // spin when out of open files, closed when idle (`connections.rs`).
    let activity = crate::connections::Activity::default();
    let incoming = crate::connections::incoming(
        crate::connections::Acceptor::new(
            listener,
            if tls.is_some() {
                crate::connections::Port::GrpcTls
            } else {
                crate::connections::Port::Grpc
            },
            crate::connections::Gate::new(sizing, Some("grpc")),
        ),
        activity.clone(),
        idle_connection_timeout,
    );
    // On the signal, first stop the game actors: that ends every open Watch stream, which the
    // graceful shutdown would otherwise wait for forever. Actors answer their pending flushes.
    let closing = registry.clone();
    if let Some(http) = http {
        serve_viewer(
            &config,
            http,
            &service,
            &ladders,
            sizing,
            idle_connection_timeout,
            http_stopped,
        );
    }
    let leaving = cluster.clone();
    let shutdown = async move {
        shutdown.await;
        if let Some(cluster) = leaving {
            // While this node still answers (forwarding what it no longer runs): each shard's
            // games finish what is in flight, then its lease is let go for another node to
            // take at once, not after the lease TTL.
            cluster.leave(&closing).await;
        }
        let _ = stop_http.send(true);
        directory.close();
        let _ = stop_ladders.send(true);
        closing.close();
    };
    let cluster_health = jetstream
        .as_ref()
        .zip(cluster.as_ref())
        .map(|(context, cluster)| (context.client(), cluster.clone()));
    serve_grpc(
        &config,
        tls,
        incoming,
        activity,
        (service, ladders),
        cluster_health,
        shutdown,
    )
    .await?;
    tracing::info!("shutting down: finishing pending writes");
    registry.close();
    drop(registry);
    // Actors end when their handles are gone, after answering their pending flushes; the
    // store's writer (sled: the flusher thread) ends when the last store handle is gone.
    tokio::task::spawn_blocking(move || closer.join()).await?;
    Ok(())
}

/// The gRPC port: health (NOT_SERVING while a cluster node is cut off), reflection, `Games`
/// and `Ladders` behind the transport's layers, until `shutdown`.
async fn serve_grpc(
    config: &Config,
    tls: Option<ServerTlsConfig>,
    incoming: tokio_stream::wrappers::ReceiverStream<
        std::io::Result<
            crate::connections::Admitted<
                crate::write_coalescing::Coalescing<tokio::net::TcpStream>,
            >,
        >,
    >,
    activity: crate::connections::Activity,
    (service, ladders): (GamesService, LaddersService),
    cluster_health: Option<(async_nats::Client, Arc<Cluster>)>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<GamesServer<GamesService>>()
        .await;
    if let Some((client, cluster)) = cluster_health {
        tokio::spawn(report_cluster_health(
            client,
            cluster,
            health_reporter.clone(),
        ));
    }
    health_reporter
        .set_serving::<LaddersServer<LaddersService>>()
        .await;
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(gangs_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(gangs_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;

    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = tls {
        builder = builder
            .tls_config(tls)
            .map_err(|e| format!("--tls-cert/--tls-key: {}", gangs_proto::innermost_cause(&e)))?;
    }
    let max_request_bytes = usize::try_from(config.max_request_bytes).unwrap_or(usize::MAX);
    let (cors, grpc_web) = crate::grpc_web::layers(config.grpc_web, &config.cors_origins)?;
    builder
        .accept_http1(config.grpc_web)
        // Dead peers (a machine gone, a NAT that forgot) found and their connections closed.
        .http2_keepalive_interval(Some(config.connections.keepalive_interval))
        .http2_keepalive_timeout(Some(config.connections.keepalive_timeout))
        // CORS outside gRPC-Web: a browser's preflight is answered before any translation.
        .layer(tower::util::option_layer(cors))
        .layer(tower::util::option_layer(grpc_web))
        .layer(tower::util::MapResponseLayer::new(move |response| {
            request_size_status(response, max_request_bytes, "--max-request-bytes")
        }))
        // Innermost: each call (and stream) keeps its connection from counting as idle.
        .layer(activity.layer())
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        // `Watch` writes the actor's encoded updates as they are (`watch_route.rs`).
        .add_service(crate::watch_route::GamesRoutes::new(
            service,
            max_request_bytes,
        ))
        .add_service(crate::ladder::routes::LaddersRoutes::new(
            ladders,
            max_request_bytes,
            usize::try_from(config.max_module_bytes.max(config.max_component_bytes))
                .unwrap_or(usize::MAX),
        ))
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await?;
    Ok(())
}

/// A signed POST per game over to each `--webhook`, none without.
fn start_webhooks(
    config: &Config,
    logs: &Logs,
    registry: &Registry,
    directory: &crate::directory::Directory,
    cluster: Option<Arc<Cluster>>,
) -> Result<(), String> {
    if config.webhooks.is_empty() {
        return Ok(());
    }
    let webhooks = crate::webhooks::Webhooks {
        urls: config.webhooks.clone(),
        secret: config.webhook_secret.clone().unwrap_or_default(),
        retry_for: config.webhook_retry_for,
        ladder_logs: logs.ladders.clone(),
    };
    webhooks.start(registry, directory, cluster)
}

/// The games: restored whole from the embedded log, or, on a shared log, only the games of the
/// shards this node holds (cluster/).
async fn start_games(
    config: &Config,
    store: Arc<dyn crate::store::LogStore>,
    settings: crate::actor::Settings,
    keys: crate::api::Keys,
    limits: crate::limits::Limits,
    listener: &tokio::net::TcpListener,
    jetstream: Option<&async_nats::jetstream::Context>,
) -> Result<(Registry, GamesService, Option<Arc<Cluster>>), Box<dyn std::error::Error + Send + Sync>>
{
    let Some(context) = jetstream else {
        let registry = Registry::restore(store, settings).await?;
        let service = GamesService::with_keys(registry.clone(), keys).with_limits(limits);
        return Ok((registry, service, None));
    };
    let registry = Registry::lazy(store, settings);
    let me = match &config.store.advertise {
        Some(url) => url.clone(),
        None => format!("http://{}", listener.local_addr()?),
    };
    let cluster = Cluster::start(
        context,
        me,
        config.store.nats_replicas,
        config.store.shards,
        registry.clone(),
    )
    .await?;
    let service = GamesService::with_keys(registry.clone(), keys)
        .with_limits(limits)
        .with_cluster(cluster.clone());
    Ok((registry, service, Some(cluster)))
}

/// The gauges sampled each second (`--metrics`): the registry's tables, the shards, the limits.
fn sample_sizes(registry: &Registry, shards: Option<Arc<Cluster>>, counted: crate::limits::Limits) {
    let sizes = registry.sizes_reader();
    crate::metrics::sample(move || {
        let sizes = sizes();
        let (count, held) = shards.as_ref().map_or((0, 0), |c| c.shard_counts());
        vec![
            ("gangs_cluster_shards", count as usize),
            ("gangs_cluster_shards_held", held),
            ("gangs_live_games", sizes.live),
            ("gangs_games_known", sizes.known),
            ("gangs_game_handles", sizes.handles),
            ("gangs_create_ids", sizes.create_ids),
            ("gangs_damaged_games", sizes.damaged),
            ("gangs_limit_entries", counted.entries()),
        ]
    });
}

/// The ladders, after the games: a ladder finds its games again by their create_id.
async fn start_ladders(
    config: &Config,
    logs: Logs,
    service: &GamesService,
    stopped: tokio::sync::watch::Receiver<bool>,
    cluster: Option<Arc<Cluster>>,
) -> Result<LaddersService, String> {
    LaddersService::restore(
        logs,
        service.clone(),
        crate::ladder::Policy {
            open_registration: config.open_registration,
            games_per_hour: config.ladder_games_per_hour,
            submits_per_hour: config.max_submits_per_hour,
        },
        crate::ladder::hosted::Hosting::with_bounds(
            config
                .hosted_bot_threads
                .map_or_else(crate::ladder::hosted::default_threads, usize::from),
            (
                u64::from(config.max_module_bytes),
                u64::from(config.max_component_bytes),
            ),
            Some(&config.hosted_cache_dir()),
            gangs_hosted::compile::Bounds {
                functions: config.max_module_functions,
                function_body_bytes: config.max_function_bytes,
                locals: config.max_function_locals,
            },
        ),
        stopped,
        cluster,
    )
    .await
}

/// Says the server is ready, only with the port bound, the data dir locked and every game
/// rebuilt: scripts wait for the line on stdout (port 0 tells them the address). With --http a
/// second line gives the viewer's address, in the same write: a reader that stops after the
/// first line never makes the second fail.
fn announce_ready(
    config: &Config,
    listener: &tokio::net::TcpListener,
    http: Option<&tokio::net::TcpListener>,
    tls: bool,
) -> std::io::Result<()> {
    match config.store.nats() {
        Some(nats) => {
            tracing::info!(listen = %listener.local_addr()?, store = %nats.url, tls, "gangs-server ready")
        }
        None => {
            tracing::info!(listen = %listener.local_addr()?, data_dir = %config.data_dir.display(), tls, "gangs-server ready")
        }
    }
    let mut ready = format!("gangs-server listening on {}\n", listener.local_addr()?);
    if let Some(http) = http {
        ready.push_str(&format!(
            "gangs-server web viewer on http://{}/\n",
            http.local_addr()?
        ));
    }
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(ready.as_bytes());
    let _ = stdout.flush();
    Ok(())
}

/// The web viewer on its own port (`--http`), until `stopped`.
fn serve_viewer(
    config: &Config,
    http: tokio::net::TcpListener,
    service: &GamesService,
    ladders: &LaddersService,
    sizing: crate::connections::Sizing,
    idle_connection_timeout: Duration,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    // Behind the keys unless --http-public; an open viewer reads with the player key when
    // there is one (least privilege), else the admin key.
    let access = crate::viewer::Access::new(
        config.api_key.clone(),
        config.player_key.clone(),
        config.http_public,
    );
    // A second handle on the same service: the viewer sees what a spectator sees, forwarded
    // to a game's owner in a cluster. Made only here: an unused handle would keep the store
    // open and the shutdown waiting for it forever.
    tokio::spawn(crate::viewer::serve(
        service.clone(),
        ladders.clone(),
        access,
        crate::connections::Acceptor::new(
            http,
            crate::connections::Port::Viewer,
            crate::connections::Gate::new(sizing, Some("http")),
        ),
        idle_connection_timeout,
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        },
    ));
}

/// A cluster node cut off from NATS cannot save or serve anything, and a node that does not
/// hold its share of the shards yet (just started, or stopping) would forward most calls:
/// health answers NOT_SERVING (for the whole server and for `gangs.v1.Games`) meanwhile, so a
/// load balancer sends the calls elsewhere; SERVING once connected and holding its share.
async fn report_cluster_health(
    client: async_nats::Client,
    cluster: Arc<Cluster>,
    reporter: tonic_health::server::HealthReporter,
) {
    let mut serving = None;
    loop {
        let connected = client.connection_state() == async_nats::connection::State::Connected;
        let now = connected && cluster.ready();
        if serving != Some(now) {
            if serving == Some(true) && !connected {
                tracing::warn!("lost NATS: health answers NOT_SERVING until it is back");
            }
            serving = Some(now);
            let status = if now {
                tonic_health::ServingStatus::Serving
            } else {
                tonic_health::ServingStatus::NotServing
            };
            reporter.set_service_status("", status).await;
            match now {
                true => reporter.set_serving::<GamesServer<GamesService>>().await,
                false => {
                    reporter
                        .set_not_serving::<GamesServer<GamesService>>()
                        .await
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// How often the directory and the limits forget what ended (see [`housekeeping`]).
const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(5);

/// Every few seconds, the directory forgets the handles of actors that ended (finished games
/// unloaded) and the limits forget the games over: what lives as long as the server follows
/// what exists. Holds no store (the store must close at shutdown).
fn housekeeping(registry: &Registry, limits: crate::limits::Limits) {
    let forget_unloaded = registry.unloaded_forgetter();
    let is_live = registry.liveness();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(HOUSEKEEPING_EVERY);
        loop {
            tick.tick().await;
            forget_unloaded();
            limits.forget_over(&is_live);
        }
    });
}

/// Deletes the logs of games over for longer than `retain`, now and then (often enough that
/// a log outlives its retention by a small fraction of it, at most a minute).
/// Ends when `stopped` turns true (the server stops), dropping its registry and so its store.
async fn delete_old_games(
    registry: Registry,
    cluster: Option<Arc<Cluster>>,
    retain: Duration,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    let every = (retain / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
    let deleting = async {
        loop {
            let deleted = registry.delete_over_before(retain).await;
            if let Some(cluster) = &cluster {
                for id in &deleted {
                    cluster.forget(id).await;
                }
            }
            tokio::time::sleep(every).await;
        }
    };
    tokio::select! {
        () = deleting => {}
        _ = stopped.wait_for(|stop| *stop) => {}
    }
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
