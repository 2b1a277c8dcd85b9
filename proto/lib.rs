//! The `gangs.v1` contract, generated from `proto/*.proto` at build time (see `build.rs`).
//! Everything that crosses the wire is defined there; this crate only exposes it.

#![allow(clippy::large_enum_variant, clippy::doc_lazy_continuation)]

pub mod v1 {
    tonic::include_proto!("gangs.v1");
}

/// The encoded file descriptor set, served by gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("gangs_descriptor");

pub use v1::*;
