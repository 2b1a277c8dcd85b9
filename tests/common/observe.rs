//! Watching a running `gangs-server` from outside, as an operator would: its Prometheus metrics
//! (`--metrics`), and what Linux says of the process in `/proc` (resident memory, open file
//! descriptors, threads). Used by the tests that check that nothing grows without bound.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A free TCP port on 127.0.0.1 (for `--metrics`, `--http`).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// `GET /metrics` over plain HTTP/1.1; the body.
pub fn scrape(port: u16) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the metrics port");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

/// The value of the unlabelled series `name` in a scrape; None when absent.
pub fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .find(|(series, _)| *series == name)
        .map(|(_, v)| v.trim().parse().expect("a number"))
}

/// The value of the unlabelled series `name` on the server's metrics port now; 0 when absent
/// (a counter not yet incremented is not exported).
pub fn read_metric(port: u16, name: &str) -> f64 {
    metric(&scrape(port), name).unwrap_or(0.0)
}

/// Scrapes until the series `name` reads `want`, within `deadline`; panics with the last value.
pub async fn await_metric(port: u16, name: &str, want: f64, deadline: Duration) {
    let start = Instant::now();
    loop {
        let text = tokio::task::spawn_blocking(move || scrape(port))
            .await
            .unwrap();
        let value = metric(&text, name);
        if value == Some(want) {
            return;
        }
        assert!(
            start.elapsed() < deadline,
            "{name} read {value:?}, not {want}, for {deadline:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A field of `/proc/PID/status` in its unit (kB for memory), e.g. `VmRSS`, `Threads`.
pub fn proc_status(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Resident memory of a process, KB.
pub fn rss_kb(pid: u32) -> u64 {
    proc_status(pid, "VmRSS")
}

/// Threads of a process.
pub fn threads(pid: u32) -> u64 {
    proc_status(pid, "Threads")
}

/// Open file descriptors of a process.
pub fn open_fds(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("/proc fd")
        .count() as u64
}

/// Bytes of every file under `dir`.
pub fn dir_bytes(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// The established TCP connections to local port `port` (the server's side), as Linux lists
/// them in `/proc/net/tcp` and `/proc/net/tcp6`: each with the client's port and the bytes
/// received that the server has not read yet. A connection the server has not accepted yet
/// (it is stopped, say) is listed too, with what the client sent into it.
pub fn connections_to(port: u16) -> Vec<(u16, u64)> {
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx_queue:rx_queue ...
            let (Some(local), Some(remote), Some(state), Some(queues)) =
                (fields.get(1), fields.get(2), fields.get(3), fields.get(4))
            else {
                continue;
            };
            let hex_port = |address: &str| {
                address
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
            };
            let unread = queues
                .split_once(':')
                .and_then(|(_, rx)| u64::from_str_radix(rx, 16).ok());
            // 01: ESTABLISHED.
            if *state == "01" && hex_port(local) == Some(port) {
                if let (Some(client), Some(unread)) = (hex_port(remote), unread) {
                    found.push((client, unread));
                }
            }
        }
    }
    found
}
