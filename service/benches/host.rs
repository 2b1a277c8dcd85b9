//! Host benchmark: `cargo bench -p gangs-service --bench host`.
//!
//! Starts the real server in-process on a free port with a temporary data dir and measures,
//! over real gRPC on loopback:
//! - a plain tonic unary call (the health service's `Check`: no game, no disk) as the baseline;
//! - `Act` latency (p50/p99) for one Gang of Four game, every action durable before its answer;
//! - durable actions per second with 64 games played concurrently (group commit at work),
//!   without watchers and with every seat streaming its view as bots do;
//! - beside them, a raw sled `insert` + `flush` on another temporary dir (no gRPC, no game): the
//!   disk's own floor, so that the Act tail can be told apart from the host's.
//!
//! - then the same Act latency and 64-game throughput with the log on NATS JetStream (a local
//!   `nats-server`, fetched into `target/nats-venv` if missing): one node with replicas 1, and a
//!   3-node loopback cluster with replicas 3, printed side by side with sled's figures.
//!
//! The bench keeps a local replica of each game (same seed and options) only to pick a legal
//! action for the seat to play; the server decides everything.

#[path = "../../tests/common/nats.rs"]
mod nats;

use gangs_proto::v1 as pb;
use gangs_service::server::StoreFlags;
use pb::games_client::GamesClient;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};
use tonic::transport::Channel;

const ECHO_CALLS: usize = 3000;
const LATENCY_ACTIONS: usize = 2000;
const CONCURRENT_GAMES: usize = 64;
const CONCURRENT_SECONDS: u64 = 8;
const RAW_FLUSHES: usize = 2000;
const STORE_ACTIONS: usize = 1000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn print_latencies(label: &str, sorted: &[Duration], unit: &str) {
    let line: Vec<String> = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)]
        .iter()
        .map(|&(name, p)| format!("{name} {:>8.1?}", percentile(sorted, p)))
        .collect();
    println!("{label:<28} {}  ({} {unit})", line.join("  "), sorted.len());
}

struct Game {
    id: String,
    tokens: Vec<String>,
    replica: Box<dyn gangs_games::Game>,
    rng: rand_chacha::ChaCha8Rng,
}

async fn new_game(client: &mut GamesClient<Channel>, seed: u64) -> Game {
    let options = gangs_games::parse_options("gang-of-four", Some(4), &[]).expect("options");
    let id = client
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            options: Some(options),
            seed: Some(seed),
            preset: None,
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner()
        .game_id;
    let mut tokens = Vec::new();
    for seat in 0..4 {
        let join = pb::JoinGameRequest {
            game_id: id.clone(),
            seat: Some(seat),
            name: format!("bench{seat}"),
            join_id: String::new(),
            ..Default::default()
        };
        tokens.push(
            client
                .join_game(join)
                .await
                .expect("join")
                .into_inner()
                .token,
        );
    }
    let mut replica =
        gangs_games::new_game("gang-of-four", Some(&options), seed, None).expect("replica");
    replica.start();
    Game {
        id,
        tokens,
        replica,
        rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
    }
}

/// Plays one random legal action; returns false when the game is over.
async fn step(client: &mut GamesClient<Channel>, game: &mut Game) -> bool {
    if game.replica.is_over() {
        return false;
    }
    let (seat, actions) = (0..game.replica.players())
        .map(|s| (s, game.replica.legal_actions(s)))
        .find(|(_, a)| !a.is_empty())
        .expect("someone may act in a running game");
    let action = actions[game.rng.random_range(0..actions.len())].clone();
    game.replica.act(seat, &action).expect("a legal action");
    client
        .act(pb::ActRequest {
            game_id: game.id.clone(),
            token: game.tokens[seat].clone(),
            action: Some(action),
            expected_seq: None,
            action_id: String::new(),
        })
        .await
        .expect("act");
    true
}

/// Durable actions over `CONCURRENT_SECONDS` with `CONCURRENT_GAMES` games played at once;
/// with `watched`, every seat of every game streams its updates (drained as they come).
async fn throughput(channel: &Channel, watched: bool) -> (u64, f64) {
    let deadline = Instant::now() + Duration::from_secs(CONCURRENT_SECONDS);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for g in 0..CONCURRENT_GAMES {
        let channel = channel.clone();
        tasks.push(tokio::spawn(async move {
            let mut client = GamesClient::new(channel);
            let mut seed = 1000 + g as u64 * 1000 + watched as u64 * 500;
            let mut actions = 0u64;
            while Instant::now() < deadline {
                let mut game = new_game(&mut client, seed).await;
                if watched {
                    watch_every_seat(&mut client, &game).await;
                }
                while Instant::now() < deadline && step(&mut client, &mut game).await {
                    actions += 1;
                }
                seed += 1;
            }
            actions
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await.expect("player task");
    }
    (total, start.elapsed().as_secs_f64())
}

/// One drained Watch stream per seat; each ends with the game (or the bench).
async fn watch_every_seat(client: &mut GamesClient<Channel>, game: &Game) {
    for token in &game.tokens {
        let mut stream = client
            .watch(pb::WatchRequest {
                game_id: game.id.clone(),
                token: token.clone(),
                from_seq: 0,
            })
            .await
            .expect("watch")
            .into_inner();
        tokio::spawn(async move { while let Ok(Some(_)) = stream.message().await {} });
    }
}

/// A server run in-process on a free port with the given store; stop it with `stop`.
struct Running {
    channel: Channel,
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
        max_request_bytes: gangs_service::server::MAX_REQUEST_BYTES,
        tls_cert: None,
        tls_key: None,
        // The bench creates games flat out: no rate limit in the way of the measure.
        limits: gangs_service::limits::LimitFlags {
            create_rate: u32::MAX,
            ..Default::default()
        },
        store: StoreFlags {
            url: store,
            nats_replicas: replicas,
            nats_creds: None,
            nats_user: None,
            nats_password: None,
            advertise: None,
        },
        command: None,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(gangs_service::server::run(config, listener, async {
        let _ = stopped.await;
    }));
    let url = format!("http://{addr}");
    let channel = loop {
        if let Ok(c) = Channel::from_shared(url.clone()).unwrap().connect().await {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    Running {
        channel,
        stop,
        server,
        _dir: dir,
    }
}

/// Act latencies, one game at a time, `count` actions.
async fn act_latencies(channel: &Channel, count: usize) -> Vec<Duration> {
    let mut client = GamesClient::new(channel.clone());
    let mut latencies = Vec::with_capacity(count);
    let mut seed = 1;
    let mut game = new_game(&mut client, seed).await;
    while latencies.len() < count {
        let t = Instant::now();
        if !step(&mut client, &mut game).await {
            seed += 1;
            game = new_game(&mut client, seed).await;
            continue;
        }
        latencies.push(t.elapsed());
    }
    latencies.sort();
    latencies
}

/// One row of the store comparison: Act p50/p99 and 64-game throughput.
async fn store_row(label: &str, store: Option<String>, replicas: usize) -> String {
    let running = start(store, replicas).await;
    let latencies = act_latencies(&running.channel, STORE_ACTIONS).await;
    let (total, elapsed) = throughput(&running.channel, false).await;
    let _ = running.stop.send(());
    let _ = running.server.await;
    format!(
        "| {label:<24} | {:>9.2?} | {:>9.2?} | {:>9.0} |",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        total as f64 / elapsed
    )
}

#[tokio::main]
async fn main() {
    let Running {
        channel,
        stop,
        server,
        _dir,
    } = start(None, 1).await;

    // Baseline: a plain tonic unary round trip.
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    let mut echo = Vec::with_capacity(ECHO_CALLS);
    for _ in 0..ECHO_CALLS {
        let t = Instant::now();
        health
            .check(tonic_health::pb::HealthCheckRequest {
                service: String::new(),
            })
            .await
            .expect("check");
        echo.push(t.elapsed());
    }
    echo.sort();

    // Act latency, one game at a time.
    let latencies = act_latencies(&channel, LATENCY_ACTIONS).await;

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

    // Throughput: 64 games at once, each a sequential player; then the same with every seat
    // streaming its view, as bots do (each action then fans out to four watchers).
    let (total, elapsed) = throughput(&channel, false).await;
    let (watched_total, watched_elapsed) = throughput(&channel, true).await;

    println!(
        "machine: {} cores (shared, noisy: compare ratios)",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    print_latencies("tonic echo (health Check)", &echo, "calls");
    print_latencies("sled insert+flush (raw)", &raw, "flushes");
    print_latencies("Act, one game (durable)", &latencies, "actions");
    println!(
        "{CONCURRENT_GAMES} concurrent games:         {:>8.0} durable actions/s  ({total} actions in {elapsed:.1} s)",
        total as f64 / elapsed
    );
    println!(
        "  ... every seat watching:   {:>8.0} durable actions/s  ({watched_total} actions in {watched_elapsed:.1} s)",
        watched_total as f64 / watched_elapsed
    );
    println!(
        "ratio Act p50 / echo p50:    {:.1}x",
        percentile(&latencies, 0.5).as_secs_f64() / percentile(&echo, 0.5).as_secs_f64()
    );
    let _ = stop.send(());
    let _ = server.await;

    // The stores side by side, same load: sled again (fresh dir), then JetStream.
    println!("\nstores ({STORE_ACTIONS} Acts for latency; {CONCURRENT_GAMES} games for {CONCURRENT_SECONDS} s for throughput):");
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
