//! The `modules` tree: hosted bots' modules by SHA-256, deflated (`store::modules`), flushed
//! before the caller appends the record that names one.

use super::keys::read_error;
use crate::store::modules::{deflate, inflate, valid_hash};
use crate::store::StoreError;

/// Keeps `module` under `sha256` (once: the same content is the same key), durably.
pub(super) fn put(tree: &sled::Tree, sha256: &str, module: &[u8]) -> Result<(), StoreError> {
    if !valid_hash(sha256) {
        return Err(StoreError::corrupt(format!("{sha256:?} names no module")));
    }
    let failed =
        |e: sled::Error| StoreError::unavailable(format!("cannot keep a hosted module: {e}"));
    if !tree.contains_key(sha256.as_bytes()).map_err(failed)? {
        tree.insert(sha256.as_bytes(), deflate(module))
            .map_err(failed)?;
    }
    tree.flush().map_err(failed)?;
    Ok(())
}

/// The module kept under `sha256`, checked against it.
pub(super) fn get(tree: &sled::Tree, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
    match tree.get(sha256.as_bytes()).map_err(read_error)? {
        Some(kept) => inflate(sha256, &kept).map(Some),
        None => Ok(None),
    }
}
