//! What the benchmarks that run the real `gangs-server` share: the child process (killed when
//! dropped), its "listening" line, and the figures read from `/proc`.

use std::io::{BufRead, BufReader};
use std::process::Child;

/// A child process, killed and reaped when dropped (a bench that panics leaves none behind).
pub struct Process {
    pub child: Child,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The URL a just-spawned `gangs-server` (stdout piped) serves on, from its first line.
pub fn listening_url(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the listening line");
    let addr = line
        .trim()
        .strip_prefix("gangs-server listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    format!("http://{addr}")
}

/// Resident memory of a process, in bytes (Linux).
pub fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kb * 1024
}

/// The line every bench prints first: how many cores it ran on.
pub fn print_machine(what: &str) {
    println!(
        "machine: {} cores (shared, noisy){what}",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
}
