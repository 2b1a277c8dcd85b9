//! How the sled log holds a game's records: one sled key per *chunk* of consecutive records,
//! written at a checkpoint, and the records made durable by the journal since the last
//! checkpoint (`Pending`), which every read merges in.
//!
//! Why: a sled insert per record (a random key: a leaf found and often split) was about a
//! quarter of the server's CPU per action. Between checkpoints a game's records are durable in
//! the journal and kept here; a checkpoint writes each game's pending records as one value.
//!
//! A log value is either a chunk (a `0x00` byte, then each record as a u32 little-endian length
//! and its stored bytes; the first record's seq is the key's, the others follow it) or one
//! record (the format data dirs were written in before chunks, still read as it is). A record's
//! encoding never starts with `0x00`: protobuf has no field number 0.

use super::RecordBytes;
use std::collections::HashMap;

const CHUNK_MARK: u8 = 0;
/// A chunk holds records up to about this many bytes (a larger record alone). sled splits a
/// leaf by its number of keys (16), not its size, and writes a leaf of more than 128 KB to a
/// file of its own: small chunks keep a game's leaves, which hold its consecutive chunks, well
/// under that.
pub const CHUNK_BYTES: usize = 8 * 1024;

/// The records a log value holds, each with its seq; `first_seq` is the key's.
pub fn records_in(first_seq: u64, value: &[u8]) -> Result<Vec<(u64, &[u8])>, String> {
    let Some((&CHUNK_MARK, mut rest)) = value.split_first() else {
        return Ok(vec![(first_seq, value)]);
    };
    let mut records = Vec::new();
    while !rest.is_empty() {
        let malformed = || format!("a malformed chunk of records from seq {first_seq}");
        let len = rest
            .get(..4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
            .ok_or_else(malformed)?;
        let record = rest.get(4..4 + len).ok_or_else(malformed)?;
        records.push((first_seq + records.len() as u64, record));
        rest = &rest[4 + len..];
    }
    Ok(records)
}

/// One value holding `records` (consecutive seqs, in order).
pub fn encode_chunk(records: &[(u64, RecordBytes)]) -> Vec<u8> {
    let mut value = Vec::with_capacity(1 + records.iter().map(|(_, r)| 4 + r.len()).sum::<usize>());
    value.push(CHUNK_MARK);
    for (_, record) in records {
        value.extend_from_slice(&(record.len() as u32).to_le_bytes());
        value.extend_from_slice(record);
    }
    value
}

/// `records` cut into runs of about [`CHUNK_BYTES`] each (one chunk per run).
pub fn runs(records: &[(u64, RecordBytes)]) -> Vec<&[(u64, RecordBytes)]> {
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, (_, record)) in records.iter().enumerate() {
        if i > start && bytes + 4 + record.len() > CHUNK_BYTES {
            runs.push(&records[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += 4 + record.len();
    }
    if start < records.len() {
        runs.push(&records[start..]);
    }
    runs
}

/// The records made durable since the last checkpoint, per game, in seq order.
#[derive(Default)]
pub struct Pending {
    games: HashMap<String, Vec<(u64, RecordBytes)>>,
}

impl Pending {
    pub fn add(&mut self, game_id: String, records: Vec<(u64, RecordBytes)>) {
        if !records.is_empty() {
            self.games.entry(game_id).or_default().extend(records);
        }
    }

    /// One game's last pending seq, if it has pending records.
    pub fn last_seq(&self, game_id: &str) -> Option<u64> {
        self.games.get(game_id)?.last().map(|(seq, _)| *seq)
    }

    /// One game's pending records with `seq > after_seq`, at most `limit` (shared, not copied).
    pub fn after(&self, game_id: &str, after_seq: u64, limit: usize) -> Vec<(u64, RecordBytes)> {
        self.games.get(game_id).map_or_else(Vec::new, |records| {
            records
                .iter()
                .filter(|(seq, _)| *seq > after_seq)
                .take(limit)
                .cloned()
                .collect()
        })
    }

    /// A copy of everything (a scan of the whole log).
    pub fn snapshot(&self) -> HashMap<String, Vec<(u64, RecordBytes)>> {
        self.games.clone()
    }

    pub fn ids(&self) -> impl Iterator<Item = &String> {
        self.games.keys()
    }

    pub fn forget(&mut self, game_id: &str) {
        self.games.remove(game_id);
    }

    /// Each game's pending records (a checkpoint writes them into sled, then clears them).
    pub fn games(&self) -> impl Iterator<Item = (&String, &Vec<(u64, RecordBytes)>)> {
        self.games.iter()
    }

    pub fn clear(&mut self) {
        self.games.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gangs_proto::v1 as pb;
    use prost::Message;

    #[test]
    fn a_chunk_gives_back_its_records_numbered_from_the_keys_seq() {
        let records: Vec<(u64, RecordBytes)> = (5..=8)
            .map(|seq| {
                let record = pb::LogRecord {
                    seq,
                    unix_ms: seq as i64,
                    record: None,
                };
                (seq, record.encode_to_vec().into())
            })
            .collect();
        let chunk = encode_chunk(&records);
        let read: Vec<(u64, RecordBytes)> = records_in(5, &chunk)
            .unwrap()
            .into_iter()
            .map(|(seq, bytes)| (seq, bytes.into()))
            .collect();
        assert_eq!(read, records);
        // A value of the earlier format is one record, under its key's seq.
        let single = &records[0].1;
        assert_eq!(records_in(5, single).unwrap(), vec![(5, &single[..])]);
        // A cut chunk is an error, not fewer records.
        assert!(records_in(5, &chunk[..chunk.len() - 1]).is_err());
    }

    #[test]
    fn runs_stay_under_the_chunk_size_and_keep_every_record_in_order() {
        let records: Vec<(u64, RecordBytes)> = (1..=100)
            .map(|seq| {
                let len = if seq == 50 { 3 * CHUNK_BYTES } else { 300 };
                (seq, vec![0; len].into())
            })
            .collect();
        let runs = runs(&records);
        assert!(runs.len() > 3);
        let joined: Vec<u64> = runs
            .iter()
            .flat_map(|r| r.iter().map(|(s, _)| *s))
            .collect();
        assert_eq!(joined, (1..=100).collect::<Vec<_>>());
        for run in runs {
            let size: usize = run.iter().map(|(_, r)| 4 + r.len()).sum();
            assert!(
                size <= CHUNK_BYTES || run.len() == 1,
                "{size} bytes in {}",
                run.len()
            );
        }
        assert!(super::runs(&[]).is_empty());
    }

    #[test]
    fn pending_records_are_read_after_a_seq_and_taken_whole() {
        let mut pending = Pending::default();
        let bytes = |b: u8| RecordBytes::from(vec![b]);
        pending.add("a".into(), vec![(1, bytes(1)), (2, bytes(2))]);
        pending.add("a".into(), vec![(3, bytes(3))]);
        pending.add("b".into(), vec![(7, bytes(7))]);
        assert_eq!(
            pending.after("a", 1, 10),
            vec![(2, bytes(2)), (3, bytes(3))]
        );
        assert_eq!(pending.after("a", 0, 1), vec![(1, bytes(1))]);
        assert!(pending.after("c", 0, 10).is_empty());
        pending.forget("b");
        assert_eq!(pending.games().count(), 1);
        pending.clear();
        assert!(pending.ids().next().is_none());
    }
}
