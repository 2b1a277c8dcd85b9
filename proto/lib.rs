//! The `gangs.v1` contract, generated from `proto/*.proto` at build time (see `build.rs`).
//! Everything that crosses the wire is defined there; this crate exposes it, with the few
//! helpers every client needs (`code_name`, `innermost_cause`, `retry`, `json`: the proto3 JSON
//! mapping).

#![allow(clippy::large_enum_variant, clippy::doc_lazy_continuation)]

pub mod v1 {
    tonic::include_proto!("gangs.v1");
}

/// The encoded file descriptor set, served by gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("gangs_descriptor");

pub use v1::*;

pub mod json;
pub mod retry;

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
