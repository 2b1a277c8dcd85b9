//! Hosted bots' modules in the distributed store: JetStream's object store bucket
//! `GANGS_MODULES`, each module once under the SHA-256 of its bytes, deflated
//! (`store::modules`), as the sled store keeps them. JetStream splits an object into chunks, so a
//! Python bot's component (tens of megabytes) fits where one message would not; every node of a
//! cluster reads the same copy, and keeps its own compiled artefacts (`--cache-dir`).

use super::jetstream::{unavailable, while_jetstream_starts};
use super::modules::{deflate, inflate, valid_hash};
use super::StoreError;
use async_nats::jetstream::{self, object_store};
use tokio::io::AsyncReadExt;

/// The object store bucket of the modules.
pub const MODULES_BUCKET: &str = "GANGS_MODULES";

/// The most bytes a kept (deflated) module may have: a module past the inflated limit
/// (`store::modules`) is refused when read anyway, and this bounds the read before that.
const MAX_KEPT_BYTES: usize = 256 << 20;

/// The modules' bucket, made on first use.
pub(super) async fn open(
    js: &jetstream::Context,
    replicas: usize,
) -> Result<object_store::ObjectStore, StoreError> {
    if let Ok(bucket) = js.get_object_store(MODULES_BUCKET).await {
        return Ok(bucket);
    }
    let config = object_store::Config {
        bucket: MODULES_BUCKET.to_string(),
        description: Some("gangs: hosted bots' modules by SHA-256, deflated".into()),
        storage: jetstream::stream::StorageType::File,
        num_replicas: replicas.max(1),
        ..Default::default()
    };
    while_jetstream_starts(MODULES_BUCKET, || js.create_object_store(config.clone()))
        .await
        .map_err(|e| unavailable("cannot create the object store GANGS_MODULES", e))
}

/// Keeps `module` under `sha256` (once: a module kept already is not written again), durably
/// once this returns.
pub(super) async fn put(
    bucket: &object_store::ObjectStore,
    sha256: &str,
    module: &[u8],
) -> Result<(), StoreError> {
    if !valid_hash(sha256) {
        return Err(StoreError::corrupt(format!("{sha256:?} names no module")));
    }
    match bucket.info(sha256).await {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == object_store::InfoErrorKind::NotFound => {}
        Err(e) => return Err(unavailable("cannot look for a hosted module", e)),
    }
    let kept = deflate(module);
    bucket
        .put(sha256, &mut kept.as_slice())
        .await
        .map_err(|e| unavailable("cannot keep a hosted module", e))?;
    Ok(())
}

/// The module kept under `sha256`, checked against it; `None` if none is.
pub(super) async fn get(
    bucket: &object_store::ObjectStore,
    sha256: &str,
) -> Result<Option<Vec<u8>>, StoreError> {
    if !valid_hash(sha256) {
        return Ok(None);
    }
    let mut object = match bucket.get(sha256).await {
        Ok(object) => object,
        Err(e) if e.kind() == object_store::GetErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unavailable("cannot read a hosted module", e)),
    };
    let mut kept = Vec::new();
    (&mut object)
        .take(MAX_KEPT_BYTES as u64 + 1)
        .read_to_end(&mut kept)
        .await
        .map_err(|e| unavailable("cannot read a hosted module", e))?;
    if kept.len() > MAX_KEPT_BYTES {
        return Err(StoreError::corrupt(format!(
            "the hosted module kept under {sha256} is larger than any module the server takes"
        )));
    }
    inflate(sha256, &kept).map(Some)
}
