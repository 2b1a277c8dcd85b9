//! The `gangs.v1` contract, generated from `proto/*.proto` at build time (see `build.rs`).
//! Everything that crosses the wire is defined there; this crate exposes it, with the few
//! helpers every client needs (`code_name`, `innermost_cause`, `quoted`, `retry`, `connect`, `json`:
//! the proto3 JSON mapping; `webhook`: the webhooks' signature and HTTP client; `csv`: a
//! ladder's standings as CSV).

#![allow(clippy::large_enum_variant, clippy::doc_lazy_continuation)]

pub mod v1 {
    tonic::include_proto!("gangs.v1");
}

/// The encoded file descriptor set, served by gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("gangs_descriptor");

pub use v1::*;

impl v1::GameStatus {
    /// Over: finished by its rules, cancelled or abandoned. Nothing happens to the game any
    /// more, and a watch stream ends after the update that says so.
    pub fn is_over(self) -> bool {
        matches!(self, Self::Finished | Self::Cancelled | Self::Abandoned)
    }

    /// Waiting for seats or running: what the live-game limits count.
    pub fn is_live(self) -> bool {
        matches!(self, Self::Waiting | Self::Running)
    }

    /// [`is_over`](Self::is_over) for a status as it comes off the wire (unknown: not over).
    pub fn is_over_code(status: i32) -> bool {
        Self::try_from(status).is_ok_and(Self::is_over)
    }
}

pub mod auth;
pub mod codec;
pub mod connect;
pub mod csv;
pub mod json;
pub mod retry;
pub mod time;
pub mod webhook;

/// Most bytes of client input quoted back in a message: an error must stay small whatever was
/// sent (a 60 KB id echoed whole overflows gRPC's metadata limit and hides the real status).
pub const MAX_QUOTED_BYTES: usize = 80;

/// `input` quoted for a message (`"abc"`), cut to [`MAX_QUOTED_BYTES`] on a character boundary
/// with the full length said when cut.
pub fn quoted(input: &str) -> String {
    if input.len() <= MAX_QUOTED_BYTES {
        return format!("{input:?}");
    }
    let mut end = MAX_QUOTED_BYTES;
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}… ({} bytes)", &input[..end], input.len())
}

/// The canonical name of a gRPC status code (`NOT_FOUND`), as other gRPC tools print it: the
/// CLI's `--json` errors and the bots' logs use it.
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// The innermost cause of an error ("connection refused" rather than tonic's "transport error"):
/// what a user can act on. The CLI and the bots print it when the server is unreachable.
pub fn innermost_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text = s.to_string();
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoted_is_bounded() {
        assert_eq!(super::quoted("abc"), "\"abc\"");
        let long = "é".repeat(30_000);
        let q = super::quoted(&long);
        assert!(q.len() < 2 * super::MAX_QUOTED_BYTES, "{q}");
        assert!(q.ends_with("(60000 bytes)"), "{q}");
    }
}
