//! A crowd at the door: clients opening more connections than the server has open files, or
//! one address holding connections, slow requests and live streams. The server (gRPC and the
//! web viewer, started here under a low open-files limit where the test says so) must not spin,
//! must log once per burst, must keep answering another address, count what it refused, and
//! recover by itself when the crowd leaves.

use crate::common;

use common::observe::{free_port, metric, scrape};
use common::{bin, Server};
use gangs_proto::v1 as pb;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const CROWD: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
const OTHER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);

/// A server with its viewer and metrics on free ports, its stderr in a file.
struct Crowded {
    server: Server,
    grpc: SocketAddr,
    http: SocketAddr,
    metrics: u16,
    log: std::path::PathBuf,
}

impl Crowded {
    /// Starts `gangs-server` with `flags`, under `prlimit --nofile=N:N` when `files` is given
    /// (soft and hard: the server cannot raise it).
    fn start(dir: &Path, files: Option<u64>, flags: &[&str]) -> Crowded {
        let metrics = free_port();
        let log = dir.join("server.log");
        let mut command = match files {
            Some(n) => {
                let mut command = Command::new("prlimit");
                command
                    .arg(format!("--nofile={n}:{n}"))
                    .arg("--")
                    .arg(bin("gangs-server"));
                command
            }
            None => Command::new(bin("gangs-server")),
        };
        let mut child = command
            .args(flags)
            .args(["--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"])
            .args(["--metrics", &format!("127.0.0.1:{metrics}"), "--data-dir"])
            .arg(dir.join("data"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("the server's log"))
            .spawn()
            .expect("start gangs-server under prlimit (util-linux)");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut lines = [String::new(), String::new()];
        for line in &mut lines {
            stdout.read_line(line).expect("the server's ready lines");
        }
        let grpc: SocketAddr = lines[0]
            .trim()
            .strip_prefix("gangs-server listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {:?}", lines[0]))
            .parse()
            .unwrap();
        let http: SocketAddr = lines[1]
            .trim()
            .strip_prefix("gangs-server web viewer on http://")
            .unwrap_or_else(|| panic!("unexpected second line {:?}", lines[1]))
            .trim_end_matches('/')
            .parse()
            .unwrap();
        let server = Server {
            child,
            addr: grpc.to_string(),
            data_dir: dir.join("data"),
            flags: Vec::new(),
            ca: None,
            stderr_log: Some(log.clone()),
            env: Vec::new(),
        };
        Crowded {
            server,
            grpc,
            http,
            metrics,
            log,
        }
    }

    fn pid(&self) -> u32 {
        self.server.child.id()
    }

    /// Log lines containing `text`.
    fn logged(&self, text: &str) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(text))
            .count()
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The server's CPU time (user + system) so far.
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        Duration::from_secs_f64(ticks as f64 / clock_ticks() as f64)
    }

    /// The server's CPU over `window`, as a fraction of one core.
    async fn cpu_share(&self, window: Duration) -> f64 {
        let before = self.cpu();
        tokio::time::sleep(window).await;
        (self.cpu() - before).as_secs_f64() / window.as_secs_f64()
    }

    fn metric(&self, series: &str) -> f64 {
        metric(&scrape(self.metrics), series).unwrap_or_else(|| panic!("no series {series}"))
    }
}

fn clock_ticks() -> u64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(100)
}

/// A TCP connection to `to` from the loopback address `from`.
async fn connect_from(from: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind((from, 0).into())?;
    tokio::time::timeout(Duration::from_secs(2), socket.connect(to))
        .await
        .map_err(|_| std::io::Error::other("connect timed out"))?
}

/// `count` connections from `from` that send nothing (or `first` bytes and nothing more).
async fn crowd(from: Ipv4Addr, to: SocketAddr, count: usize, first: &[u8]) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        if let Ok(mut stream) = connect_from(from, to).await {
            if !first.is_empty() {
                let _ = stream.write_all(first).await;
            }
            held.push(stream);
        }
    }
    held
}

/// GET `path` on the viewer from `from` over a fresh connection: the status and body, or what
/// went wrong (refused, closed, timed out).
async fn page(from: Ipv4Addr, http: SocketAddr, path: &str) -> Result<(u16, String), String> {
    let exchange = async {
        let mut stream = connect_from(from, http).await.map_err(|e| e.to_string())?;
        let request = format!("GET {path} HTTP/1.1\r\nhost: {http}\r\nconnection: close\r\n\r\n");
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut response = Vec::new();
        stream
            .read_to_end(&mut response)
            .await
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&response).to_string();
        let status = text
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("no HTTP response: {text:?}"))?;
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        Ok((status, body.to_string()))
    };
    tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .map_err(|_| "no answer within 5 s".to_string())?
}

/// A tonic connector whose connections leave from one loopback address.
#[derive(Clone)]
struct Source(Ipv4Addr);

impl tonic::codegen::Service<tonic::codegen::http::Uri> for Source {
    type Response = hyper_util::rt::TokioIo<TcpStream>;
    type Error = std::io::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<Self::Response>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: tonic::codegen::http::Uri) -> Self::Future {
        let from = self.0;
        Box::pin(async move {
            let authority = uri.authority().expect("an authority").as_str().to_string();
            let to: SocketAddr = authority.parse().map_err(std::io::Error::other)?;
            let stream = connect_from(from, to).await?;
            stream.set_nodelay(true)?;
            Ok(hyper_util::rt::TokioIo::new(stream))
        })
    }
}

type Games = pb::games_client::GamesClient<tonic::transport::Channel>;

/// A gRPC client on a fresh connection from `from`.
async fn client_from(from: Ipv4Addr, grpc: SocketAddr) -> Result<Games, tonic::Status> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{grpc}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(3))
        .connect_with_connector(Source(from))
        .await
        .map_err(|e| tonic::Status::unavailable(format!("connect: {e}")))?;
    Ok(pb::games_client::GamesClient::new(channel))
}

/// ListGames from `from` over a fresh connection: how long it took and what came back.
async fn list_from(from: Ipv4Addr, grpc: SocketAddr) -> (Duration, Result<usize, tonic::Status>) {
    let started = Instant::now();
    let result = async {
        let mut client = client_from(from, grpc).await?;
        let listed = client
            .list_games(pb::ListGamesRequest::default())
            .await?
            .into_inner();
        Ok(listed.games.len())
    }
    .await;
    (started.elapsed(), result)
}

/// Retries `check` until it holds or `within` passes.
async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let deadline = Instant::now() + within;
    loop {
        match check().await {
            Ok(()) => return,
            Err(e) if Instant::now() >= deadline => panic!("{what}: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// Both ports answer 127.0.0.1 again: a gRPC call and a viewer page.
async fn recovered(crowded: &Crowded) {
    let (grpc, http) = (crowded.grpc, crowded.http);
    eventually(
        Duration::from_secs(10),
        "gRPC after the crowd",
        || async move {
            list_from(OTHER, grpc)
                .await
                .1
                .map(|_| ())
                .map_err(|s| s.to_string())
        },
    )
    .await;
    eventually(
        Duration::from_secs(10),
        "the viewer after the crowd",
        || async move {
            match page(OTHER, http, "/api/games").await? {
                (200, _) => Ok(()),
                other => Err(format!("{other:?}")),
            }
        },
    )
    .await;
}

/// Past the open-files limit (lowered under the running server: its pools were sized for more),
/// twice that many idle connections to each port: accept fails with EMFILE, and the server
/// backs off instead of spinning, says so once per port, drops what waits in its backlog (a
/// third client is refused quickly rather than left hanging), counts it, and recovers alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_open_files_the_server_neither_spins_nor_hangs() {
    let dir = tempfile::tempdir().unwrap();
    let crowded = Crowded::start(dir.path(), Some(1024), &[]);
    const LIMIT: u64 = 128;
    let lowered = Command::new("prlimit")
        .arg(format!("--pid={}", crowded.pid()))
        .arg(format!("--nofile={LIMIT}:{LIMIT}"))
        .status()
        .unwrap();
    assert!(lowered.success(), "prlimit --pid");

    let grpc_crowd = crowd(CROWD, crowded.grpc, 2 * LIMIT as usize, b"").await;
    let http_crowd = crowd(CROWD, crowded.http, 2 * LIMIT as usize, b"").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let share = crowded.cpu_share(Duration::from_secs(3)).await;
    assert!(
        share < 0.05,
        "the server used {:.0}% of a core with the crowd waiting",
        share * 100.0
    );
    // Another address: answered, or refused quickly (its connection closed: the client reads
    // a transport error), never left waiting until its deadline.
    let (took, result) = list_from(OTHER, crowded.grpc).await;
    assert!(
        took < Duration::from_secs(3),
        "gRPC took {took:?}: {result:?}"
    );
    if let Err(status) = &result {
        assert_ne!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");
        assert!(
            format!("{status:?}").contains("transport error")
                || status.code() == tonic::Code::ResourceExhausted,
            "{status:?}"
        );
    }
    let started = Instant::now();
    let viewed = page(OTHER, crowded.http, "/").await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the viewer took {:?}: {viewed:?}",
        started.elapsed()
    );
    if let Ok((status, _)) = &viewed {
        assert!(matches!(status, 200 | 503), "{viewed:?}");
    }
    // Once per burst, not per attempt.
    assert_eq!(
        crowded.logged("grpc port out of open files"),
        1,
        "{}",
        crowded.log_text()
    );
    assert_eq!(
        crowded.logged("http port out of open files"),
        1,
        "{}",
        crowded.log_text()
    );

    drop(grpc_crowd);
    drop(http_crowd);
    recovered(&crowded).await;
    for port in ["grpc", "http"] {
        let errors = crowded.metric(&format!(
            r#"gangs_accept_errors_total{{port="{port}",error="open-files"}}"#
        ));
        assert!(errors >= 1.0, "{port}: {errors} accept errors counted");
        let dropped = crowded.metric(&format!(
            r#"gangs_connections_refused_total{{port="{port}",limit="open-files"}}"#
        ));
        assert!(dropped >= 1.0, "{port}: {dropped} connections dropped");
    }
}

/// Started under a low open-files limit it cannot raise, the server says so once with the
/// number and how to raise it, sizes each port to fit, and refuses the crowd of one address at
/// accept (told why, counted) while another address is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_a_low_limit_the_ports_are_sized_to_fit_and_the_crowd_refused() {
    let dir = tempfile::tempdir().unwrap();
    const LIMIT: u64 = 256;
    let crowded = Crowded::start(dir.path(), Some(LIMIT), &[]);
    let text = crowded.log_text();
    assert!(
        text.contains("the open-files limit is 256, below")
            && text.contains("ulimit -n")
            && text.contains("--max-connections"),
        "{text}"
    );
    assert_eq!(crowded.logged("the open-files limit is"), 1, "{text}");

    let grpc_crowd = crowd(CROWD, crowded.grpc, 2 * LIMIT as usize, b"").await;
    let http_crowd = crowd(CROWD, crowded.http, 2 * LIMIT as usize, b"").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let share = crowded.cpu_share(Duration::from_secs(3)).await;
    assert!(share < 0.05, "{:.0}% of a core", share * 100.0);

    // The crowd's address is refused with a status naming the limit...
    let (took, refused) = list_from(CROWD, crowded.grpc).await;
    let status = refused.expect_err("the crowd's address is past its share");
    assert!(took < Duration::from_secs(1), "refused after {took:?}");
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    // The GOAWAY's words, in the error's source.
    assert!(
        format!("{status:?}").contains("--max-connections-per-client"),
        "{status:?}"
    );
    let (code, body) = page(CROWD, crowded.http, "/").await.expect("a refusal");
    assert_eq!(code, 503, "{body}");
    assert!(
        body.contains("RESOURCE_EXHAUSTED") && body.contains("--max-connections-per-client"),
        "{body}"
    );
    // ...while another address is served.
    let (took, listed) = list_from(OTHER, crowded.grpc).await;
    assert!(
        listed.is_ok() && took < Duration::from_secs(1),
        "{took:?} {listed:?}"
    );
    let started = Instant::now();
    let (code, _) = page(OTHER, crowded.http, "/").await.expect("a page");
    assert!(
        code == 200 && started.elapsed() < Duration::from_secs(1),
        "{code}"
    );

    // One line per burst and port; every refusal counted by its limit.
    for port in ["grpc", "http"] {
        assert_eq!(
            crowded.logged(&format!("{port} port: too many connections from 127.0.0.2")),
            1,
            "{}",
            crowded.log_text()
        );
        let refused = crowded.metric(&format!(
            r#"gangs_connections_refused_total{{port="{port}",limit="max-connections-per-client"}}"#
        ));
        assert!(refused >= LIMIT as f64, "{port}: {refused} refused");
        let open = crowded.metric(&format!(r#"gangs_connections_open{{port="{port}"}}"#));
        assert!(open < LIMIT as f64 / 2.0, "{port}: {open} open");
    }
    assert_eq!(
        crowded.logged("out of open files"),
        0,
        "{}",
        crowded.log_text()
    );

    drop(grpc_crowd);
    drop(http_crowd);
    recovered(&crowded).await;
    let (_, again) = list_from(CROWD, crowded.grpc).await;
    assert!(
        again.is_ok(),
        "the crowd's address is served again: {again:?}"
    );
}

/// One address opens 1,000 connections to each port, then 300 slow requests, then 300 live
/// streams on the viewer; 127.0.0.1 keeps getting pages, a live stream and gRPC answers within
/// a second all along.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_take_either_port() {
    let dir = tempfile::tempdir().unwrap();
    let crowded = Crowded::start(dir.path(), None, &["--max-connections", "400"]);
    let (grpc, http) = (crowded.grpc, crowded.http);
    let mut games = client_from(OTHER, grpc).await.expect("a client");
    let game = games
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .expect("create a game")
        .into_inner()
        .game_id;

    async fn others_are_served(grpc: SocketAddr, http: SocketAddr, game: &str) {
        let (took, listed) = list_from(OTHER, grpc).await;
        assert!(
            listed.is_ok() && took < Duration::from_secs(1),
            "gRPC: {took:?} {listed:?}"
        );
        for path in ["/", "/api/games"] {
            let started = Instant::now();
            let viewed = page(OTHER, http, path).await;
            let took = started.elapsed();
            assert!(
                matches!(viewed, Ok((200, _))) && took < Duration::from_secs(1),
                "GET {path}: {took:?} {viewed:?}"
            );
        }
        // A live stream: its head within a second.
        let started = Instant::now();
        let mut stream = connect_from(OTHER, http).await.expect("connect");
        let request = format!("GET /api/games/{game}/live HTTP/1.1\r\nhost: {http}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut head = [0u8; 12];
        tokio::time::timeout(Duration::from_secs(1), stream.read_exact(&mut head))
            .await
            .expect("a live stream's head within 1 s")
            .unwrap();
        assert_eq!(&head[9..12], b"200", "{:?}", String::from_utf8_lossy(&head));
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    // 1,000 idle connections to each port.
    let grpc_crowd = crowd(CROWD, grpc, 1_000, b"").await;
    let http_crowd = crowd(CROWD, http, 1_000, b"").await;
    others_are_served(grpc, http, &game).await;
    let open = crowded.metric(r#"gangs_connections_open{port="grpc"}"#);
    assert!(open <= 202.0, "{open} gRPC connections open");
    drop(grpc_crowd);
    drop(http_crowd);
    recovered(&crowded).await;

    // 300 slow requests: a head begun and never finished.
    let slow = crowd(CROWD, http, 300, b"GET / HTTP/1.1\r\nhost: x").await;
    others_are_served(grpc, http, &game).await;
    drop(slow);
    recovered(&crowded).await;

    // 300 live streams from one address: it gets its share, the rest are told why.
    let mut live = Vec::new();
    let (mut admitted, mut refused) = (0, 0);
    for _ in 0..300 {
        let Ok(mut stream) = connect_from(CROWD, http).await else {
            continue;
        };
        let request = format!("GET /api/games/{game}/live HTTP/1.1\r\nhost: {http}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut head = [0u8; 12];
        if tokio::time::timeout(Duration::from_secs(2), stream.read_exact(&mut head))
            .await
            .is_ok_and(|r| r.is_ok())
        {
            match &head[9..12] {
                b"200" => admitted += 1,
                b"503" => refused += 1,
                other => panic!("{:?}", String::from_utf8_lossy(other)),
            }
        }
        live.push(stream);
    }
    assert!(
        (16..=33).contains(&admitted),
        "{admitted} live streams admitted"
    );
    // The others past its share of connections were refused (or closed) at accept already.
    assert!(refused >= 150, "{refused} refused");
    others_are_served(grpc, http, &game).await;
    let refusals = crowded
        .metric(r#"gangs_viewer_live_streams_refused_total{limit="max-connections-per-client"}"#);
    // Past its share of connections (--max-connections 400: 200 once the port is half full),
    // the rest were refused at accept already.
    assert!(refusals >= 150.0, "{refusals}");
    drop(live);
}

/// With --idle-connection-timeout, a connection that holds no call is closed (with an HTTP/2
/// GOAWAY on the gRPC port), one with a stream open is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_busy_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let crowded = Crowded::start(dir.path(), None, &["--idle-connection-timeout", "1s"]);
    let (grpc, http) = (crowded.grpc, crowded.http);

    // An HTTP/2 client that says hello and nothing more: GOAWAY (NO_ERROR), then closed.
    let started = Instant::now();
    let mut idle = http2_hello(OTHER, grpc).await;
    let mut received = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), idle.read_to_end(&mut received))
        .await
        .expect("closed within 5 s")
        .expect("read");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900), "closed after {took:?}");
    let goaway = frames(&received)
        .into_iter()
        .find(|(kind, _)| *kind == 7)
        .unwrap_or_else(|| panic!("no GOAWAY in {received:?}"));
    assert_eq!(&goaway.1[4..8], &[0, 0, 0, 0], "NO_ERROR");

    // An idle viewer connection: closed.
    let mut idle = connect_from(OTHER, http).await.unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), idle.read_to_end(&mut rest))
        .await
        .expect("the viewer closes an idle connection")
        .expect("read");

    // A Watch stream open for longer than the timeout keeps its connection: it sees the cancel.
    let (_games, game, mut watching) = watched_game(grpc).await;
    // A live stream on the viewer, likewise.
    let mut live = connect_from(OTHER, http).await.unwrap();
    let request = format!("GET /api/games/{game}/live HTTP/1.1\r\nhost: {http}\r\n\r\n");
    live.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let mut canceller = client_from(OTHER, grpc).await.unwrap();
    cancel_and_see_it(&mut canceller, &game, &mut watching, 5).await;
    let mut seen = Vec::new();
    let saw_cancel = tokio::time::timeout(Duration::from_secs(5), async {
        let mut buffer = [0u8; 4096];
        loop {
            let n = live.read(&mut buffer).await.unwrap();
            if n == 0 {
                return false;
            }
            seen.extend_from_slice(&buffer[..n]);
            if String::from_utf8_lossy(&seen).contains("CANCELLED") {
                return true;
            }
        }
    })
    .await
    .expect("the live stream's cancel within 5 s");
    assert!(
        saw_cancel,
        "the live stream ended early: {}",
        String::from_utf8_lossy(&seen)
    );
    let closed = crowded.metric(r#"gangs_connections_idle_closed_total{port="grpc"}"#);
    assert!(closed >= 1.0, "{closed}");
}

/// A connection from `from` that sends the HTTP/2 preface and an empty SETTINGS frame, then
/// nothing more.
async fn http2_hello(from: Ipv4Addr, to: SocketAddr) -> TcpStream {
    let mut stream = connect_from(from, to).await.unwrap();
    stream
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    stream
        .write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0])
        .await
        .unwrap();
    stream
}

/// A game created from 127.0.0.1 and a Watch stream on it: the client, the game, the stream.
async fn watched_game(grpc: SocketAddr) -> (Games, String, tonic::Streaming<pb::Update>) {
    let mut games = client_from(OTHER, grpc).await.unwrap();
    let game = games
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .game_id;
    let watching = games
        .watch(pb::WatchRequest {
            game_id: game.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    (games, game, watching)
}

/// Cancels `game` through `canceller` and asserts that `watching` (still open) delivers the
/// cancel within `secs`.
async fn cancel_and_see_it(
    canceller: &mut Games,
    game: &str,
    watching: &mut tonic::Streaming<pb::Update>,
    secs: u64,
) {
    canceller
        .cancel_game(pb::CancelGameRequest {
            game_id: game.to_string(),
            reason: "checking the stream".into(),
        })
        .await
        .unwrap();
    let cancelled = tokio::time::timeout(Duration::from_secs(secs), async {
        while let Some(update) = watching.message().await.expect("the stream is still open") {
            if update.status == pb::GameStatus::Cancelled as i32 {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or_else(|_| panic!("the cancel within {secs} s"));
    assert!(cancelled, "the stream ended before the cancel");
}

/// HTTP/2 frames in `bytes`: (type, payload).
fn frames(bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut found = Vec::new();
    let mut at = 0;
    while at + 9 <= bytes.len() {
        let length = u32::from_be_bytes([0, bytes[at], bytes[at + 1], bytes[at + 2]]) as usize;
        let kind = bytes[at + 3];
        let end = (at + 9 + length).min(bytes.len());
        found.push((kind, bytes[at + 9..end].to_vec()));
        at = end;
    }
    found
}

/// HTTP/2 keepalive finds a dead peer: a client that said hello and then answers nothing (not
/// even the server's PING) is closed once `--keepalive-timeout` passed after the PING, while a
/// live client's stream (its HTTP/2 stack answers PINGs) stays open for longer than both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keepalive_closes_a_dead_peer_and_keeps_a_live_one() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--keepalive-interval", "1s", "--keepalive-timeout", "1s"];
    let crowded = Crowded::start(dir.path(), None, &flags);
    let grpc = crowded.grpc;

    // The live client: a Watch stream open on a game, for longer than interval + timeout.
    let (mut games, game, mut watching) = watched_game(grpc).await;

    // The dead peer: the HTTP/2 preface and its SETTINGS, then silence.
    let mut dead = http2_hello(OTHER, grpc).await;
    let mut received = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), dead.read_to_end(&mut received))
        .await
        .expect("the dead peer's connection closed within 20 s")
        .expect("read");
    let pinged = frames(&received).iter().any(|(kind, _)| *kind == 6);
    assert!(
        pinged,
        "the server sent no PING before closing: {received:?}"
    );

    // The live stream outlived it and still delivers.
    cancel_and_see_it(&mut games, &game, &mut watching, 10).await;
}
