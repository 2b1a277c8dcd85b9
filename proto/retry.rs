//! How a client rides out a server restart, shared by the bots and the CLI: which failures a
//! retry can cure, the backoff between attempts and how long to keep trying, and the join id
//! that makes a retried `JoinGame` safe.

use std::time::Duration;
use tonic::{Code, Status};

pub const FIRST_DELAY: Duration = Duration::from_millis(100);
pub const MAX_DELAY: Duration = Duration::from_secs(1);
/// Continuous outage after which a client gives up.
pub const OUTAGE_BUDGET: Duration = Duration::from_secs(60);

/// Delays between attempts: 100 ms, 200 ms, 400 ms, 800 ms, 1 s, 1 s...
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: FIRST_DELAY }
    }
}

impl Backoff {
    /// No delay handed out yet.
    pub fn is_fresh(&self) -> bool {
        self.next == FIRST_DELAY
    }

    pub fn next_delay(&mut self) -> Duration {
        let delay = self.next;
        self.next = (self.next * 2).min(MAX_DELAY);
        delay
    }
}

/// The failure is the connection's (server down, restarting, stream cut, a watcher cut off
/// for lagging), not a verdict on the request: reconnect and try again. A server killed
/// mid-stream surfaces as UNAVAILABLE, UNKNOWN, INTERNAL (h2 errors, broken pipes) or
/// CANCELLED depending on timing.
pub fn is_transient(status: &Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable
            | Code::Unknown
            | Code::Internal
            | Code::Cancelled
            | Code::DeadlineExceeded
            | Code::ResourceExhausted
            | Code::OutOfRange
    )
}

/// Whether a failed call's status was raised by this side's own transport (no connection, the
/// connection broken, a timeout: tonic keeps the cause as the status's `source`) rather than
/// answered by the peer (a status decoded from a reply has no source). A server that answers
/// UNAVAILABLE runs and says what to do; one that cannot be reached may not run at all.
pub fn raised_here(status: &Status) -> bool {
    std::error::Error::source(status).is_some()
}

/// A fresh `join_id` (128 random bits in hex): draw one per client and send it with every
/// attempt, so that a join whose answer was lost returns the same seat and token.
pub fn new_join_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_one_second() {
        let mut b = Backoff::default();
        let delays: Vec<u64> = (0..7).map(|_| b.next_delay().as_millis() as u64).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000, 1000]);
    }

    #[test]
    fn transport_trouble_is_transient_verdicts_are_not() {
        assert!(is_transient(&Status::unavailable("connection refused")));
        assert!(is_transient(&Status::unknown("transport error")));
        assert!(is_transient(&Status::resource_exhausted(
            "watcher too slow"
        )));
        assert!(!is_transient(&Status::not_found("no such game")));
        assert!(!is_transient(&Status::invalid_argument("bad card")));
        assert!(!is_transient(&Status::aborted("stale seq")));
        assert!(!is_transient(&Status::failed_precondition("not your turn")));
    }

    #[test]
    fn a_status_answered_by_the_peer_was_not_raised_here() {
        // The transport's own failures (with a source) are checked where they are made:
        // service/src/cluster/mod.rs and cli/src/error.rs, against real sockets.
        assert!(!raised_here(&Status::unavailable(
            "game g is changing hands: retry"
        )));
    }

    #[test]
    fn join_ids_are_long_and_distinct() {
        let (a, b) = (new_join_id(), new_join_id());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
