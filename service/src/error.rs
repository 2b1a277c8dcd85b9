//! The host's domain error: what went wrong with a request, in terms callers can act on.
//! The games, the ladders, the cluster and the store boundary speak only this type; it becomes
//! a gRPC status at the edge only, in `front/errors.rs` (`impl From<HostError> for
//! tonic::Status`), the one place errors are mapped.

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
    /// The name is taken already (a ladder's, a bot's).
    Exists(String),
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
            | HostError::Internal(m)
            | HostError::Exists(m) => m,
        }
    }
}

impl HostError {
    /// Whether the same call may succeed later, unchanged: the server or its store cannot
    /// answer now, a limit frees up, the log moved on meanwhile, or a fault of ours.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            HostError::Unavailable(_)
                | HostError::Storage(_)
                | HostError::Exhausted(_)
                | HostError::StaleSeq(_)
                | HostError::Internal(_)
        )
    }

    /// The server (or the node that runs the call) cannot answer now; nothing was refused.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, HostError::Unavailable(_) | HostError::Storage(_))
    }
}

/// Constructors named as the gRPC codes they become (`front/errors.rs`), so that a refusal
/// reads the same wherever it is made.
impl HostError {
    pub fn not_found(message: impl Into<String>) -> HostError {
        HostError::NotFound(message.into())
    }
    pub fn invalid_argument(message: impl Into<String>) -> HostError {
        HostError::Invalid(message.into())
    }
    pub fn failed_precondition(message: impl Into<String>) -> HostError {
        HostError::NotNow(message.into())
    }
    pub fn permission_denied(message: impl Into<String>) -> HostError {
        HostError::Permission(message.into())
    }
    pub fn unauthenticated(message: impl Into<String>) -> HostError {
        HostError::Unauthenticated(message.into())
    }
    pub fn aborted(message: impl Into<String>) -> HostError {
        HostError::StaleSeq(message.into())
    }
    pub fn resource_exhausted(message: impl Into<String>) -> HostError {
        HostError::Exhausted(message.into())
    }
    pub fn unavailable(message: impl Into<String>) -> HostError {
        HostError::Unavailable(message.into())
    }
    pub fn internal(message: impl Into<String>) -> HostError {
        HostError::Internal(message.into())
    }
    pub fn already_exists(message: impl Into<String>) -> HostError {
        HostError::Exists(message.into())
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
