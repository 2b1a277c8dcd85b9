//! The host's domain error: what went wrong with a request, in terms callers can act on.
//! The actor, the registry and the store boundary speak only this type; it becomes a gRPC
//! status in `api.rs` (`impl From<HostError> for tonic::Status`).

use gangs_games::{Refusal, RefusalKind};

/// Why the host refused or could not serve a request. Every variant carries a message a bot
/// author understands (it becomes the status message as is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostError {
    /// No such game (or seat, or record).
    NotFound(String),
    /// The request is malformed or impossible, whatever the game's state.
    Invalid(String),
    /// Well-formed, but not in the game's current state (not started, over, seat taken).
    NotNow(String),
    /// The caller's credentials do not allow this (wrong token, key or invitation).
    Permission(String),
    /// The caller sent no credentials where some are required.
    Unauthenticated(String),
    /// The request was made against an older state of the game (`expected_seq`).
    StaleSeq(String),
    /// A position beyond the end of the log (`from_seq`).
    OutOfRange(String),
    /// A limit was reached (the message names it).
    Exhausted(String),
    /// The store failed: nothing was acknowledged, and the game's actor ends (its memory may be
    /// ahead of the log); the next call reloads the game from the log, so a retry succeeds once
    /// the store answers again.
    Storage(String),
    /// The server cannot answer now (shutting down, a game could not be reloaded); try again.
    Unavailable(String),
    /// A bug or a damaged log: nothing the caller did.
    Internal(String),
}

impl HostError {
    /// The message, as the caller will read it.
    pub fn message(&self) -> &str {
        match self {
            HostError::NotFound(m)
            | HostError::Invalid(m)
            | HostError::NotNow(m)
            | HostError::Permission(m)
            | HostError::Unauthenticated(m)
            | HostError::StaleSeq(m)
            | HostError::OutOfRange(m)
            | HostError::Exhausted(m)
            | HostError::Storage(m)
            | HostError::Unavailable(m)
            | HostError::Internal(m) => m,
        }
    }
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for HostError {}

/// An engine's refusal, kept as its kind says: malformed input or not now.
impl From<Refusal> for HostError {
    fn from(error: Refusal) -> Self {
        let message = error.message().to_string();
        match error.kind() {
            RefusalKind::Invalid => HostError::Invalid(message),
            RefusalKind::NotNow => HostError::NotNow(message),
        }
    }
}

pub type HostResult<T> = Result<T, HostError>;
