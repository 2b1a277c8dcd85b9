//! The log's keys (`id (16 bytes) ++ seq (u64 big-endian)`) and numbers as sled keeps them,
//! read back strictly: a malformed key or value is the error a corrupt store is.

use super::{StoreError, GAME_ID_LEN};

pub(super) fn u64_of(bytes: &[u8], what: &str) -> Result<u64, StoreError> {
    bytes
        .try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| StoreError::corrupt(format!("malformed {what} of {} bytes", bytes.len())))
}

pub(super) fn read_error(e: sled::Error) -> StoreError {
    StoreError::unavailable(format!("cannot read the log: {e}"))
}

/// The game id part of a log key (`game id ++ seq`), or the error a malformed key is.
pub(super) fn game_id_of(key: &[u8]) -> Result<&[u8], StoreError> {
    if key.len() != GAME_ID_LEN + 8 {
        return Err(StoreError::corrupt(format!(
            "malformed log key of {} bytes",
            key.len()
        )));
    }
    Ok(&key[..GAME_ID_LEN])
}

/// The seq part of a log key (its game id checked first).
pub(super) fn seq_of(key: &[u8]) -> Result<u64, StoreError> {
    game_id_of(key)?;
    Ok(u64::from_be_bytes(
        key[GAME_ID_LEN..].try_into().expect("8 bytes"),
    ))
}

pub(super) fn log_key(game_id: &str, seq: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(GAME_ID_LEN + 8);
    key.extend_from_slice(game_id.as_bytes());
    key.extend_from_slice(&seq.to_be_bytes());
    key
}
