//! The embedded store's journal as it lies on disk (`gangs_service::store`'s `journal.rs`), read
//! by the tests that damage it, and the child those tests write it with. An entry: magic (4),
//! generation (8), payload length (4), CRC (4), then the payload: a count of appends (4), each
//! its game id (2-byte length, then the id), its records (a count (4), each a seq (8), a length
//! (4) and the record's bytes) and its feed positions (a count (4), 16 bytes each). Every
//! number is little-endian.

#![allow(dead_code)]

/// An entry's header.
pub const HEADER: usize = 20;
const MAGIC: u32 = 0x314c_4e4a;

/// The offsets of the entries from the journal's start (as far as the headers chain), the last
/// one's end included.
pub fn entry_starts(journal: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    let mut at = 0;
    while journal.get(at..at + 4) == Some(&MAGIC.to_le_bytes()[..]) {
        at += HEADER + u32::from_le_bytes(journal[at + 12..at + 16].try_into().unwrap()) as usize;
        starts.push(at);
    }
    starts
}

/// The appends of the entry at `start`: each one's game and first seq (`None`: no records).
pub fn appends_in(journal: &[u8], start: usize) -> Vec<(String, Option<u64>)> {
    let mut at = start + HEADER;
    let u32_at = |at: usize| u32::from_le_bytes(journal[at..at + 4].try_into().unwrap());
    let count = u32_at(at);
    at += 4;
    let mut found = Vec::new();
    for _ in 0..count {
        let id_len = u16::from_le_bytes(journal[at..at + 2].try_into().unwrap()) as usize;
        let id = String::from_utf8(journal[at + 2..at + 2 + id_len].to_vec()).unwrap();
        at += 2 + id_len;
        let records = u32_at(at);
        at += 4;
        let mut first = None;
        for _ in 0..records {
            first.get_or_insert(u64::from_le_bytes(journal[at..at + 8].try_into().unwrap()));
            at += 12 + u32_at(at + 8) as usize;
        }
        at += 4 + 16 * u32_at(at) as usize;
        found.push((id, first));
    }
    found
}

/// Runs `test`, a test of this binary, again as a child with `env` set to `dir` (the child's
/// half of the test, which dies once its writes are acknowledged, as a SIGKILL leaves a
/// server); answers once it has died.
pub fn run_child_until_it_dies(test: &str, env: &str, dir: &std::path::Path) {
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1"])
        .env(env, dir)
        .output()
        .unwrap();
    assert!(
        !child.status.success(),
        "the child dies after its writes: {}",
        String::from_utf8_lossy(&child.stderr)
    );
}
