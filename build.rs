//! Compiles `proto/*.proto` with protox (pure Rust: no system `protoc` needed) and generates
//! prost messages plus tonic client and server code. The encoded file descriptor set is kept
//! too, for gRPC reflection.
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/gangs.proto",
        "proto/gang_of_four.proto",
        "proto/the_gang.proto",
        "proto/ladder.proto",
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={f}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("gangs_descriptor.bin"),
        prost::Message::encode_to_vec(&descriptors),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // Decode errors answer INVALID_ARGUMENT, not INTERNAL (proto/codec.rs).
        .codec_path("crate::codec::ClearCodec")
        .compile_fds(descriptors)?;
    Ok(())
}
