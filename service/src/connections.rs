//! The connections of both ports (gRPC, and the viewer's with `--http`): who is let in, how many
//! each client may hold, what happens when the process runs out of open files, and when an idle
//! connection is let go.
//!
//! - **At start** the soft open-files limit is raised to the hard one ([`raise_open_files_limit`])
//!   and each port's connection count is sized to fit under it ([`size`]): a limit below what
//!   the settings need is said once in the log, never a refusal to start.
//! - **At accept** ([`Acceptor`]) a connection is admitted against the port's [`Gate`]:
//!   `--max-connections` for the port, and, while the port holds more than half of it,
//!   `--max-connections-per-client` for one IP address. One past either is refused (a short
//!   refusal the client can read, then closed) and counted.
//! - **Out of open files** (EMFILE/ENFILE) the accept loop does not spin: it backs off (up to
//!   a second), closes the connections waiting in the backlog with a reserve descriptor so their
//!   clients get a refusal rather than a hang, logs once per burst and counts each one.
//! - **Idle** ([`Admitted`]): a connection with no call and no stream open for
//!   `--idle-connection-timeout` is closed (an HTTP/2 GOAWAY first on the gRPC port).
//!
//! Why at the transport, under tonic and hyper: neither bounds connections per client nor
//! survives EMFILE without spinning (tonic's `TcpIncoming` retries at once), and hyper's HTTP/2
//! server has no idle timeout.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

mod idle;
pub use idle::*;

/// Default of `--max-connections`, per port. A ladder bot holds one connection (its Queue,
/// Watch and Act calls share it as HTTP/2 streams), so 8,192 leaves room for a few thousand
/// bots with the per-client rule not binding (it binds past half: 4,096); at about 15 KB per
/// idle HTTP/2 connection (measured) that is some 120 MB at the worst, and with both ports
/// full 2 × 8,192 + 64 open files (docs/deployment.md, "Connections").
pub const DEFAULT_MAX_CONNECTIONS: u32 = 8_192;

/// Open files kept back from the connections: the store's files, the log, the metrics
/// endpoint's and the webhooks' connections, the refusals being written, the reserves.
pub const RESERVE_FILES: u64 = 64;

/// A port takes at least this many connections however low the limit: a server that can
/// serve nobody is no use, and past the limit the accept loop copes (see [`Acceptor`]).
const MIN_CONNECTIONS_PER_PORT: usize = 16;

/// The accept loop's pause after a failed accept, doubled while failures go on.
const FIRST_BACKOFF: Duration = Duration::from_millis(20);
/// ... up to this.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Events at least this far apart start a new burst (a new log line).
const QUIET_ENDS_BURST: Duration = Duration::from_secs(10);

/// Refusals written at once per port (each holds its descriptor for up to [`REFUSAL_LINGER`]);
/// past it a refused connection is closed without a word.
const MAX_REFUSALS_WRITING: usize = 8;
/// How long a refusal waits for the client to read it and close.
const REFUSAL_LINGER: Duration = Duration::from_millis(500);

/// The connection flags (`gangs-server --help`).
#[derive(Debug, Clone, clap::Args)]
pub struct ConnectionFlags {
    /// Connections open at once on each port (gRPC, and the web viewer's with --http); one
    /// more is refused when it connects (closed, and counted). Lowered to what the open-files
    /// limit allows when that is less (said in the log at start).
    #[arg(long, env = "GANGS_MAX_CONNECTIONS", default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// While a port holds more than half of --max-connections, one client (an IP address) may
    /// hold at most this many of its connections; below half any address may open more.
    /// Default: a quarter of --max-connections.
    #[arg(long, env = "GANGS_MAX_CONNECTIONS_PER_CLIENT",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_client: Option<u32>,
    /// A connection with no call and no stream open this long is closed (e.g. 5m, 90s): with
    /// an HTTP/2 GOAWAY on the gRPC port, as a keep-alive timeout on the viewer's.
    #[arg(long, env = "GANGS_IDLE_CONNECTION_TIMEOUT", default_value = "5m",
          value_parser = parse_timeout)]
    pub idle_connection_timeout: Duration,
    /// HTTP/2 keepalive on the gRPC port: a PING to a peer that sent no frame for this long
    /// (e.g. 30s), so that a dead peer (a machine gone, a NAT that forgot) is found...
    #[arg(long, env = "GANGS_KEEPALIVE_INTERVAL", default_value = "30s",
          value_parser = parse_timeout)]
    pub keepalive_interval: Duration,
    /// ... and its connection closed (its calls and streams ended) when the PING's answer has
    /// not come within this.
    #[arg(long, env = "GANGS_KEEPALIVE_TIMEOUT", default_value = "20s",
          value_parser = parse_timeout)]
    pub keepalive_timeout: Duration,
}

impl Default for ConnectionFlags {
    fn default() -> Self {
        ConnectionFlags {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: None,
            idle_connection_timeout: Duration::from_secs(300),
            keepalive_interval: Duration::from_secs(30),
            keepalive_timeout: Duration::from_secs(20),
        }
    }
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    let duration = crate::durations::parse_duration(text)?;
    if duration < Duration::from_millis(100) {
        return Err(format!("{text:?} is too short: at least 100ms"));
    }
    Ok(duration)
}

/// Raises the soft open-files limit to the hard one; the soft limit it then is (None where it
/// cannot be read).
pub fn raise_open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = limit.rlim_max;
        }
    }
    // rlim_t is u64 on Linux, not on every target.
    #[allow(clippy::unnecessary_cast)]
    let soft = limit.rlim_cur as u64;
    Some(soft)
}

/// Files this process has open now (where /proc tells; else a guess).
fn files_open_now() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|entries| entries.count().saturating_sub(1) as u64)
        .unwrap_or(32)
}

/// What each port may hold, from the flags and the open-files limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizing {
    pub max_connections: usize,
    pub per_client: usize,
}

/// Sizes each of `ports` ports under the open-files limit `soft` (None: unknown, the flags as
/// they are). Says once in the log when the limit is below what the flags need.
pub fn size(flags: &ConnectionFlags, ports: usize, soft: Option<u64>) -> Sizing {
    size_with(flags, ports, soft, files_open_now())
}

fn size_with(flags: &ConnectionFlags, ports: usize, soft: Option<u64>, open: u64) -> Sizing {
    let ports = ports.max(1) as u64;
    let wanted = u64::from(flags.max_connections);
    let need = open + RESERVE_FILES + ports * wanted;
    let max_connections = match soft {
        Some(limit) if limit < need => {
            let fit = (limit.saturating_sub(open + RESERVE_FILES) / ports)
                .max(MIN_CONNECTIONS_PER_PORT as u64);
            tracing::warn!(
                limit,
                need,
                "the open-files limit is {limit}, below the {need} these settings need \
                 ({ports} port(s) x --max-connections {wanted}, {open} files open at start, \
                 {RESERVE_FILES} kept for the store and the log): each port takes at most {fit} \
                 connections. Raise it to {need}: `ulimit -n {need}` before starting, \
                 LimitNOFILE={need} in a systemd unit, `ulimits: nofile` in compose.yaml \
                 (docs/deployment.md, \"Connections\")"
            );
            fit.min(wanted) as usize
        }
        _ => wanted as usize,
    };
    let per_client = match flags.max_connections_per_client {
        Some(n) => (n as usize).min(max_connections),
        None => (max_connections / 4).max(1),
    };
    Sizing {
        max_connections,
        per_client,
    }
}

/// Why a connection (or a live stream) was refused: the name of the limit, as the metrics and
/// the messages spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The port holds `--max-connections`.
    Full,
    /// The port holds more than half of it and this address its share.
    PerClient,
}

impl Refusal {
    pub fn limit(self) -> &'static str {
        match self {
            Refusal::Full => "max-connections",
            Refusal::PerClient => "max-connections-per-client",
        }
    }
}

/// Counts what a port (or a pool) holds, in all and per IP address, and admits or refuses one
/// more. Shared fairly: below half of `max` anyone may take more; past half one address may
/// hold at most `per_client` (so a crowd from one address leaves at least half for the rest).
pub struct Gate {
    max: usize,
    per_client: usize,
    /// The metrics' `port` label; None: not a port (the viewer's live streams).
    port: Option<&'static str>,
    state: Mutex<GateState>,
}

#[derive(Default)]
struct GateState {
    open: usize,
    by_address: HashMap<IpAddr, usize>,
}

impl Gate {
    pub fn new(sizing: Sizing, port: Option<&'static str>) -> Arc<Gate> {
        if let Some(port) = port {
            crate::metrics::connections_open(port, 0.0);
        }
        Arc::new(Gate {
            max: sizing.max_connections.max(1),
            per_client: sizing.per_client.max(1),
            port,
            state: Mutex::default(),
        })
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn per_client(&self) -> usize {
        self.per_client
    }

    /// One more for `address`, or why not.
    pub fn admit(self: &Arc<Self>, address: IpAddr) -> Result<Ticket, Refusal> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.open >= self.max {
            return Err(Refusal::Full);
        }
        let held = state.by_address.get(&address).copied().unwrap_or(0);
        if state.open > self.max / 2 && held >= self.per_client {
            return Err(Refusal::PerClient);
        }
        state.open += 1;
        *state.by_address.entry(address).or_insert(0) += 1;
        drop(state);
        if let Some(port) = self.port {
            crate::metrics::connections_open(port, 1.0);
        }
        Ok(Ticket {
            gate: self.clone(),
            address,
        })
    }

    /// (all held, held by `address`).
    pub fn held(&self, address: IpAddr) -> (usize, usize) {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (
            state.open,
            state.by_address.get(&address).copied().unwrap_or(0),
        )
    }
}

/// One admitted connection (or stream): counted until dropped.
pub struct Ticket {
    gate: Arc<Gate>,
    address: IpAddr,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.gate.state.lock().unwrap_or_else(|e| e.into_inner());
        state.open -= 1;
        if let Some(held) = state.by_address.get_mut(&self.address) {
            *held -= 1;
            if *held == 0 {
                state.by_address.remove(&self.address);
            }
        }
        drop(state);
        if let Some(port) = self.gate.port {
            crate::metrics::connections_open(port, -1.0);
        }
    }
}

/// Events that come in bursts (refusals, failed accepts): true for the first of a burst, the
/// one worth a log line.
#[derive(Default)]
struct Burst {
    last: Option<Instant>,
}

impl Burst {
    fn starts(&mut self) -> bool {
        let now = Instant::now();
        let new = self
            .last
            .is_none_or(|last| now.duration_since(last) >= QUIET_ENDS_BURST);
        self.last = Some(now);
        new
    }
}

/// Which port an [`Acceptor`] serves: what a refusal says on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Port {
    /// gRPC over HTTP/2 in clear: a refusal is an HTTP/2 GOAWAY (ENHANCE_YOUR_CALM) whose
    /// debug data names the limit; gRPC clients read it as RESOURCE_EXHAUSTED.
    Grpc,
    /// gRPC over TLS: the connection is closed (nothing can be said before the handshake).
    GrpcTls,
    /// The web viewer: an HTTP/1.1 503 with a JSON body naming the limit.
    Viewer,
    /// The metrics endpoint (`--metrics`): as the viewer.
    Metrics,
}

impl Port {
    /// The metrics' `port` label and the log's name.
    pub fn label(self) -> &'static str {
        match self {
            Port::Grpc | Port::GrpcTls => "grpc",
            Port::Viewer => "http",
            Port::Metrics => "metrics",
        }
    }
}

/// Accepts a port's connections: admitted against its [`Gate`], refused past it, never
/// spinning when the process is out of open files.
pub struct Acceptor {
    listener: TcpListener,
    port: Port,
    gate: Arc<Gate>,
    /// A descriptor held back for the day accept fails with EMFILE: closed to accept (and
    /// close) the connections waiting, then opened again.
    reserve: Option<std::fs::File>,
    backoff: Duration,
    out_of_files: Burst,
    other_errors: Burst,
    refused: [Burst; 2],
    writing_refusals: Arc<Semaphore>,
}

impl Acceptor {
    pub fn new(listener: TcpListener, port: Port, gate: Arc<Gate>) -> Acceptor {
        crate::metrics::connections_port(port.label());
        Acceptor {
            listener,
            port,
            gate,
            reserve: open_reserve(),
            backoff: FIRST_BACKOFF,
            out_of_files: Burst::default(),
            other_errors: Burst::default(),
            refused: Default::default(),
            writing_refusals: Arc::new(Semaphore::new(MAX_REFUSALS_WRITING)),
        }
    }

    /// The next admitted connection; refusals and failures are handled (and counted) inside.
    pub async fn next(&mut self) -> (TcpStream, SocketAddr, Ticket) {
        loop {
            match self.listener.accept().await {
                Ok((stream, peer)) => {
                    self.backoff = FIRST_BACKOFF;
                    if self.reserve.is_none() {
                        self.reserve = open_reserve();
                    }
                    match self.gate.admit(peer.ip()) {
                        Ok(ticket) => return (stream, peer, ticket),
                        Err(refusal) => self.refuse(stream, peer, refusal),
                    }
                }
                Err(e) if is_per_connection(&e) => {
                    // The client went away between its SYN and our accept: nothing to do.
                    crate::metrics::accept_error(self.port.label(), "connection");
                }
                Err(e) => {
                    let out_of_files = is_out_of_files(&e);
                    let label = self.port.label();
                    if out_of_files {
                        crate::metrics::accept_error(label, "open-files");
                        if self.out_of_files.starts() {
                            tracing::warn!(
                                port = label,
                                "{label} port out of open files ({e}): refusing new connections \
                                 until some close (the open-files limit: docs/deployment.md, \
                                 \"Connections\")"
                            );
                        }
                        let dropped = self.drop_waiting();
                        for _ in 0..dropped {
                            crate::metrics::connection_refused(label, "open-files");
                        }
                    } else {
                        crate::metrics::accept_error(label, "other");
                        if self.other_errors.starts() {
                            tracing::warn!(port = label, "{label} port: accept failed: {e}");
                        }
                    }
                    // Never at once again: a level-triggered accept that fails would spin.
                    tokio::time::sleep(self.backoff).await;
                    self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// Out of open files: the reserve descriptor is let go to accept and close each connection
    /// waiting in the backlog (their clients see the connection closed instead of waiting for
    /// a timeout), then taken again. How many were closed.
    fn drop_waiting(&mut self) -> usize {
        use std::os::fd::AsRawFd;
        drop(self.reserve.take());
        let fd = self.listener.as_raw_fd();
        let mut dropped = 0;
        // Bounded: the backlog is; a crowd that reconnects at once waits for the next round.
        while dropped < 4_096 {
            // SAFETY: accept4 on the listener's own descriptor (non-blocking, as tokio keeps
            // it), no address asked for; the descriptor it returns is ours and closed at once.
            let accepted = unsafe {
                libc::accept4(
                    fd,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    libc::SOCK_CLOEXEC,
                )
            };
            if accepted < 0 {
                break;
            }
            // SAFETY: `accepted` was just returned by accept4 and is closed once, here.
            unsafe { libc::close(accepted) };
            dropped += 1;
        }
        self.reserve = open_reserve();
        dropped
    }

    /// Refuses an accepted connection: counted, logged once per burst, told why when it can
    /// be (a few at a time), closed.
    fn refuse(&mut self, stream: TcpStream, peer: SocketAddr, refusal: Refusal) {
        let label = self.port.label();
        crate::metrics::connection_refused(label, refusal.limit());
        let index = match refusal {
            Refusal::Full => 0,
            Refusal::PerClient => 1,
        };
        let message = refusal_message(&self.gate, refusal, peer.ip());
        if self.refused[index].starts() {
            tracing::warn!(
                port = label,
                limit = refusal.limit(),
                "{label} port: {message}"
            );
        }
        let Ok(permit) = self.writing_refusals.clone().try_acquire_owned() else {
            return;
        };
        let (reply, http2) = match self.port {
            Port::Grpc => (goaway(0, ENHANCE_YOUR_CALM, &message, true), true),
            Port::Viewer | Port::Metrics => (http_refusal(&message), false),
            Port::GrpcTls => return,
        };
        tokio::spawn(async move {
            let _permit = permit;
            let _ = tokio::time::timeout(REFUSAL_LINGER, linger(stream, reply, http2)).await;
        });
    }
}

/// Writes `reply`, then reads until the client closes: closing with its request unread would
/// reset the connection, and closing before the client has read the reply made an HTTP/2
/// client see the connection closed before the GOAWAY that says why.
async fn linger(mut stream: TcpStream, reply: Vec<u8>, http2: bool) {
    if http2 {
        // An HTTP/2 client whose request is still queued when the GOAWAY comes reads only
        // "connection closed": wait (a little: the caller's timeout) for its first request.
        wait_for_request(&mut stream).await;
    }
    if stream.write_all(&reply).await.is_err() {
        return;
    }
    let mut sink = [0u8; 1024];
    while let Ok(n) = stream.read(&mut sink).await {
        if n == 0 {
            break;
        }
    }
}

/// Reads an HTTP/2 client's preface and frames until a HEADERS frame (a request) has come, the
/// client stops, or 16 KB were read.
async fn wait_for_request(stream: &mut TcpStream) {
    const PREFACE: usize = 24;
    let mut read = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while read.len() < 16 * 1024 {
        match tokio::time::timeout(Duration::from_millis(200), stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => read.extend_from_slice(&chunk[..n]),
            _ => return,
        }
        let mut at = PREFACE;
        while at + 9 <= read.len() {
            if read[at + 3] == 0x1 {
                return;
            }
            at += 9 + u32::from_be_bytes([0, read[at], read[at + 1], read[at + 2]]) as usize;
        }
    }
}

fn refusal_message(gate: &Gate, refusal: Refusal, address: IpAddr) -> String {
    match refusal {
        Refusal::Full => format!(
            "too many connections: this port holds its {} (--max-connections); try again later",
            gate.max()
        ),
        Refusal::PerClient => format!(
            "too many connections from {address}: while this port holds more than half of its \
             {} (--max-connections), one address may hold {} (--max-connections-per-client)",
            gate.max(),
            gate.per_client()
        ),
    }
}

fn http_refusal(message: &str) -> Vec<u8> {
    let body = serde_json::json!({ "error": message, "code": "RESOURCE_EXHAUSTED" }).to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// HTTP/2's error code for a peer generating excessive load.
const ENHANCE_YOUR_CALM: u32 = 0xb;
/// HTTP/2's error code for a graceful close.
const NO_ERROR: u32 = 0;

/// An HTTP/2 GOAWAY frame (RFC 9113, 6.8), after an empty SETTINGS frame (the server's preface)
/// when `with_preface`.
fn goaway(last_stream: u32, code: u32, debug: &str, with_preface: bool) -> Vec<u8> {
    let mut frame = Vec::with_capacity(9 + 17 + debug.len());
    if with_preface {
        frame.extend_from_slice(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
    }
    let length = (8 + debug.len()) as u32;
    frame.extend_from_slice(&length.to_be_bytes()[1..]);
    frame.push(0x7); // GOAWAY
    frame.push(0); // no flags
    frame.extend_from_slice(&0u32.to_be_bytes()); // stream 0: the connection
    frame.extend_from_slice(&(last_stream & 0x7fff_ffff).to_be_bytes());
    frame.extend_from_slice(&code.to_be_bytes());
    frame.extend_from_slice(debug.as_bytes());
    frame
}

fn open_reserve() -> Option<std::fs::File> {
    std::fs::File::open("/dev/null").ok()
}

fn is_out_of_files(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}

/// Errors about the one connection being accepted (it was reset or aborted meanwhile), after
/// which the next accept may go on at once.
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    ) || matches!(e.raw_os_error(), Some(libc::EPROTO) | Some(libc::EPERM))
}

/// The accepted gRPC connections as tonic's incoming stream: an [`Acceptor`] on its own task,
/// ended when tonic drops the stream (the listener closes with it).
pub fn incoming(
    mut acceptor: Acceptor,
    activity: Activity,
    idle: Duration,
) -> tokio_stream::wrappers::ReceiverStream<
    io::Result<Admitted<crate::write_coalescing::Coalescing<TcpStream>>>,
> {
    let (sender, receiver) = tokio::sync::mpsc::channel(1);
    let goaway = acceptor.port == Port::Grpc;
    tokio::spawn(async move {
        loop {
            let (stream, peer, ticket) = tokio::select! {
                () = sender.closed() => return,
                accepted = acceptor.next() => accepted,
            };
            // Without it Nagle + delayed ACK held about 1% of Act answers for 40 ms.
            let _ = stream.set_nodelay(true);
            let state = activity.register(peer);
            // Each connection's writes gathered until its next flush (`write_coalescing.rs`):
            // the frames of one action for the streams of one connection go out in one write.
            // Under `Admitted`, which sees HTTP/2's own flushes (where a GOAWAY may go).
            let stream = crate::write_coalescing::Coalescing::new(stream);
            let admitted = Admitted::new(
                stream,
                ticket,
                state,
                idle,
                goaway,
                Some(activity.clone()),
                peer,
            );
            if sender.send(Ok(admitted)).await.is_err() {
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(receiver)
}

/// Connections the metrics endpoint serves at once (a scraper holds one or two).
const METRICS_CONNECTIONS: usize = 16;

/// Serves `/metrics` on `listener` (`--metrics`) with this module's accept loop, not the
/// exporter's: that one retries a failed accept at once, and spun a core when the process was
/// out of open files.
pub fn serve_metrics(listener: TcpListener, exposition: crate::metrics::Exposition) {
    let gate = Gate::new(
        Sizing {
            max_connections: METRICS_CONNECTIONS,
            per_client: METRICS_CONNECTIONS / 4,
        },
        Some("metrics"),
    );
    let mut acceptor = Acceptor::new(listener, Port::Metrics, gate);
    tokio::spawn(async move {
        loop {
            let (stream, _, ticket) = acceptor.next().await;
            let exposition = exposition.clone();
            let service = hyper::service::service_fn(move |request: http::Request<_>| {
                let response = if request.uri().path() == "/metrics" {
                    http::Response::builder()
                        .header("content-type", "text/plain; version=0.0.4")
                        .body(axum::body::Body::from(exposition.render()))
                } else {
                    http::Response::builder()
                        .status(http::StatusCode::NOT_FOUND)
                        .body(axum::body::Body::from("the metrics are at /metrics\n"))
                };
                std::future::ready(response)
            });
            tokio::spawn(async move {
                let _ticket = ticket;
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(Duration::from_secs(10))
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}

/// The gRPC port's TLS identity from `--tls-cert` and `--tls-key` (none without both), checked
/// before the server starts so that a wrong file is a clear error at startup rather than failed
/// handshakes later.
pub fn tls_identity(
    cert: Option<&std::path::Path>,
    key: Option<&std::path::Path>,
) -> Result<Option<tonic::transport::ServerTlsConfig>, String> {
    let (Some(cert), Some(key)) = (cert, key) else {
        return Ok(None);
    };
    let read = |flag: &str, path: &std::path::Path, marker: &str| {
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
        tonic::transport::ServerTlsConfig::new()
            .identity(tonic::transport::Identity::from_pem(cert, key)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizing(max: usize, per_client: usize) -> Sizing {
        Sizing {
            max_connections: max,
            per_client,
        }
    }

    #[test]
    fn one_address_is_held_to_its_share_only_past_half() {
        let gate = Gate::new(sizing(8, 3), None);
        let crowd: IpAddr = "127.0.0.2".parse().unwrap();
        let other: IpAddr = "127.0.0.1".parse().unwrap();
        // Below half, one address takes what it likes...
        let mut held: Vec<Ticket> = (0..5).map(|_| gate.admit(crowd).unwrap()).collect();
        // ...past half, no more than its share (it already holds more).
        assert_eq!(gate.admit(crowd).err(), Some(Refusal::PerClient));
        // The others still get in, up to the whole.
        held.extend((0..3).map(|_| gate.admit(other).unwrap()));
        assert_eq!(gate.admit(other).err(), Some(Refusal::Full));
        assert_eq!(gate.held(crowd), (8, 5));
        // Back below half, the crowd's address may open again.
        held.truncate(3);
        assert_eq!(gate.held(crowd), (3, 3));
        held.push(gate.admit(crowd).unwrap());
        drop(held);
        assert_eq!(gate.held(crowd), (0, 0));
        assert!(gate.state.lock().unwrap().by_address.is_empty());
    }

    #[test]
    fn sizing_fits_the_open_files_limit() {
        let flags = ConnectionFlags::default();
        // A limit above the need: the flags as they are, a quarter per client.
        let roomy = size_with(&flags, 2, Some(1 << 20), 30);
        assert_eq!(roomy, sizing(8_192, 2_048));
        // Below: what fits after what is open and the reserve, per port.
        let tight = size_with(&flags, 2, Some(1_024), 30);
        assert_eq!(tight.max_connections, (1_024 - 30 - 64) / 2);
        assert_eq!(tight.per_client, tight.max_connections / 4);
        // Never below the floor, never refusing to start.
        assert_eq!(size_with(&flags, 2, Some(40), 30).max_connections, 16);
        // An explicit per-client cap is kept, within the port's.
        let explicit = ConnectionFlags {
            max_connections_per_client: Some(100_000),
            ..flags
        };
        assert_eq!(size_with(&explicit, 1, None, 30).per_client, 8_192);
    }

    #[test]
    fn a_goaway_frame_is_well_formed() {
        let frame = goaway(0, ENHANCE_YOUR_CALM, "why", true);
        assert_eq!(&frame[..9], &[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        let go = &frame[9..];
        assert_eq!(&go[..3], &[0, 0, 11]);
        assert_eq!(go[3], 7);
        assert_eq!(&go[13..17], &[0, 0, 0, 0xb]);
        assert_eq!(&go[17..], b"why");
    }

    #[test]
    fn bursts_log_once() {
        let mut burst = Burst::default();
        assert!(burst.starts());
        assert!(!burst.starts());
        burst.last = Some(Instant::now() - QUIET_ENDS_BURST);
        assert!(burst.starts());
    }
}
