//! Hosted bots' modules as a store keeps them: once per content, under the SHA-256 of their
//! bytes, deflated. Reading one back checks its hash, so a damaged copy is an error, never a
//! different bot.

use super::StoreError;
use gangs_hosted::compile::sha256_hex;
use std::io::{Read, Write};

/// The most bytes a kept module inflates to: the largest component the server takes at most.
const MAX_INFLATED_BYTES: u64 = 256 << 20;

/// Whether `sha256` can name a module (64 hex digits): it is a key in the store.
pub fn valid_hash(sha256: &str) -> bool {
    sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `module` deflated (fast: a module is written once and read at each start).
pub fn deflate(module: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder
        .write_all(module)
        .and_then(|()| encoder.finish())
        .expect("deflating into memory does not fail")
}

/// The module kept as `kept` under `sha256`, inflated and checked against its hash.
pub fn inflate(sha256: &str, kept: &[u8]) -> Result<Vec<u8>, StoreError> {
    let mut module = Vec::new();
    flate2::read::DeflateDecoder::new(kept)
        .take(MAX_INFLATED_BYTES + 1)
        .read_to_end(&mut module)
        .map_err(|e| {
            StoreError::corrupt(format!("the hosted module {sha256} does not inflate: {e}"))
        })?;
    if module.len() as u64 > MAX_INFLATED_BYTES || sha256_hex(&module) != sha256 {
        return Err(StoreError::corrupt(format!(
            "the hosted module kept under {sha256} is damaged (its bytes have another hash)"
        )));
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_inflates_to_its_bytes_and_a_damaged_copy_is_an_error() {
        let module: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let sha = sha256_hex(&module);
        assert!(valid_hash(&sha) && !valid_hash("../x"));
        let kept = deflate(&module);
        assert!(kept.len() < module.len() / 2, "{}", kept.len());
        assert_eq!(inflate(&sha, &kept).unwrap(), module);
        let mut damaged = kept.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 0x55;
        assert!(inflate(&sha, &damaged).is_err());
        assert!(inflate(&sha_of_other(), &kept).is_err());
    }

    fn sha_of_other() -> String {
        sha256_hex(b"another module")
    }
}
