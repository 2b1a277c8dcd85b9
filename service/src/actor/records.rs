//! The game's log as the actor keeps it in memory: every record applied (durable or not),
//! **encoded**. A decoded record is a tree of small allocations (each card of a deal, each event)
//! about ten times its encoded size, and every live game holds its whole log; the actor reads
//! an old record rarely (a retried action, a resume, `GetLog`), so it decodes on those reads.
//! The same bytes go to the store (`RecordBytes` are shared): it writes them, and the sled log
//! keeps them until its next checkpoint, without a copy or an encoding of its own.

use crate::store::{record_bytes, RecordBytes};
use gangs_proto::v1 as pb;
use prost::Message;

#[derive(Default)]
pub(super) struct Records {
    /// Record `seq` is `encoded[seq - 1]`.
    encoded: Vec<RecordBytes>,
    first_unix_ms: Option<i64>,
    last_unix_ms: Option<i64>,
}

impl Records {
    /// Room for `records` records.
    pub(super) fn with_capacity(records: usize) -> Records {
        Records {
            encoded: Vec::with_capacity(records),
            ..Records::default()
        }
    }

    /// The next record (its seq must be `len() + 1`).
    pub(super) fn push(&mut self, record: &pb::LogRecord) {
        debug_assert_eq!(record.seq, self.len() + 1, "records are kept in seq order");
        self.encoded.push(record_bytes(record));
        self.first_unix_ms.get_or_insert(record.unix_ms);
        self.last_unix_ms = Some(record.unix_ms);
    }

    /// The next record as the store holds it: `bytes`, its encoding, written at `unix_ms`
    /// (kept as they are, not encoded again).
    pub(super) fn push_stored(&mut self, bytes: RecordBytes, unix_ms: i64) {
        self.encoded.push(bytes);
        self.first_unix_ms.get_or_insert(unix_ms);
        self.last_unix_ms = Some(unix_ms);
    }

    /// The last seq (0 before the first record).
    pub(super) fn len(&self) -> u64 {
        self.encoded.len() as u64
    }

    /// Record `seq`'s bytes (1-based, at most `len()`), shared.
    pub(super) fn bytes(&self, seq: u64) -> RecordBytes {
        self.encoded[seq as usize - 1].clone()
    }

    /// Record `seq` (1-based, at most `len()`).
    pub(super) fn get(&self, seq: u64) -> pb::LogRecord {
        let bytes = &self.encoded[seq as usize - 1];
        // These bytes were encoded by `push` from a record in this process.
        pb::LogRecord::decode(&bytes[..]).expect("a record this actor encoded decodes")
    }

    /// Records `from..=through` (seqs), decoded one by one.
    pub(super) fn range(
        &self,
        from: u64,
        through: u64,
    ) -> impl Iterator<Item = pb::LogRecord> + '_ {
        (from.max(1)..=through.min(self.len())).map(|seq| self.get(seq))
    }

    /// When the first record (`created`) was written.
    pub(super) fn first_unix_ms(&self) -> Option<i64> {
        self.first_unix_ms
    }

    /// When the last record was written.
    pub(super) fn last_unix_ms(&self) -> Option<i64> {
        self.last_unix_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::log_record::Record;
    use std::sync::Arc;

    fn record(seq: u64, unix_ms: i64) -> pb::LogRecord {
        pb::LogRecord {
            seq,
            unix_ms,
            record: Some(Record::Joined(pb::Joined {
                seat: seq as u32,
                name: format!("p{seq}"),
                ..Default::default()
            })),
        }
    }

    #[test]
    fn records_come_back_as_they_went_in() {
        let log: Vec<_> = (1..=4).map(|seq| record(seq, 100 + seq as i64)).collect();
        let mut kept = Records::default();
        log.iter().for_each(|r| kept.push(r));
        assert_eq!(kept.len(), 4);
        assert_eq!(kept.get(3), log[2]);
        assert_eq!(kept.range(2, 3).collect::<Vec<_>>(), log[1..3].to_vec());
        assert_eq!(kept.range(0, 99).count(), 4);
        assert_eq!(kept.first_unix_ms(), Some(101));
        assert_eq!(kept.last_unix_ms(), Some(104));
        assert_eq!(Records::default().range(1, 5).count(), 0);
    }

    #[test]
    fn records_given_as_their_stored_bytes_keep_them() {
        let log: Vec<_> = (1..=3).map(|seq| record(seq, 200 + seq as i64)).collect();
        let bytes: Vec<RecordBytes> = log.iter().map(record_bytes).collect();
        let mut kept = Records::with_capacity(bytes.len());
        for (bytes, record) in bytes.iter().zip(&log) {
            kept.push_stored(bytes.clone(), record.unix_ms);
        }
        assert_eq!(kept.len(), 3);
        assert!(kept
            .encoded
            .iter()
            .zip(&bytes)
            .all(|(a, b)| Arc::ptr_eq(a, b)));
        assert_eq!(kept.range(1, 3).collect::<Vec<_>>(), log);
        assert_eq!(kept.bytes(2), bytes[1]);
        assert_eq!(kept.first_unix_ms(), Some(201));
        assert_eq!(kept.last_unix_ms(), Some(203));
    }
}
