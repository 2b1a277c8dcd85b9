//! The game's log as the actor keeps it in memory: every record applied (durable or not),
//! **encoded**. A decoded record is a tree of small allocations (each card of a deal, each event)
//! about ten times its encoded size, and every live game holds its whole log; the actor reads
//! an old record rarely (a retried action, a resume, `GetLog`), so it decodes on those reads.
//! The same bytes go to the store (`RecordBytes` are shared): it writes them, and the sled log
//! keeps them until its next checkpoint, without a copy or an encoding of its own.

use crate::store::{record_bytes, RecordBytes};
use gangs_games::skim::LoggedRecord;
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
    /// The records of a log; `encoded`, their bytes as the store holds them when it gave
    /// them (one per record, each the record's encoding), else empty: then the records, which
    /// are whole, are encoded. A skimmed record (its events left as bytes) is never encoded
    /// again: it would lose its events.
    pub(super) fn from_log(records: &[LoggedRecord], encoded: Vec<RecordBytes>) -> Records {
        if encoded.len() != records.len() {
            let mut kept = Records::default();
            for logged in records {
                assert!(
                    logged.stored_events.is_none(),
                    "a skimmed record comes with its stored bytes"
                );
                kept.push(&logged.record);
            }
            return kept;
        }
        debug_assert!(
            records.iter().zip(&encoded).all(|(logged, bytes)| {
                pb::LogRecord::decode(&bytes[..]).ok() == logged.clone().into_whole().ok()
            }),
            "stored bytes are their records' encodings"
        );
        Records {
            encoded,
            first_unix_ms: records.first().map(|r| r.record.unix_ms),
            last_unix_ms: records.last().map(|r| r.record.unix_ms),
        }
    }

    /// The next record (its seq must be `len() + 1`).
    pub(super) fn push(&mut self, record: &pb::LogRecord) {
        debug_assert_eq!(record.seq, self.len() + 1, "records are kept in seq order");
        self.encoded.push(record_bytes(record));
        self.first_unix_ms.get_or_insert(record.unix_ms);
        self.last_unix_ms = Some(record.unix_ms);
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
        let kept = Records::from_log(&whole(&log), Vec::new());
        assert_eq!(kept.len(), 4);
        assert_eq!(kept.get(3), log[2]);
        assert_eq!(kept.range(2, 3).collect::<Vec<_>>(), log[1..3].to_vec());
        assert_eq!(kept.range(0, 99).count(), 4);
        assert_eq!(kept.first_unix_ms(), Some(101));
        assert_eq!(kept.last_unix_ms(), Some(104));
        assert_eq!(Records::default().range(1, 5).count(), 0);
    }

    /// Three records from seq 1, the first at `first_unix_ms + 1`, and their stored bytes.
    fn log_with_bytes(first_unix_ms: i64) -> (Vec<pb::LogRecord>, Vec<RecordBytes>) {
        let log: Vec<_> = (1..=3)
            .map(|seq| record(seq, first_unix_ms + seq as i64))
            .collect();
        let bytes = log.iter().map(record_bytes).collect();
        (log, bytes)
    }

    #[test]
    fn records_given_with_their_stored_bytes_keep_them() {
        let (log, bytes) = log_with_bytes(200);
        let kept = Records::from_log(&whole(&log), bytes.clone());
        assert_eq!(kept.encoded, bytes);
        assert_eq!(kept.range(1, 3).collect::<Vec<_>>(), log);
        assert_eq!(kept.first_unix_ms(), Some(201));
        assert_eq!(kept.last_unix_ms(), Some(203));
        // Bytes that do not match the records one for one are not used: encoded anew.
        let kept = Records::from_log(&whole(&log), bytes[..2].to_vec());
        assert_eq!(kept.len(), 3);
        assert_eq!(kept.get(3), log[2]);
    }

    fn whole(log: &[pb::LogRecord]) -> Vec<LoggedRecord> {
        LoggedRecord::all_whole(log.to_vec())
    }

    fn skimmed(bytes: &[RecordBytes]) -> Vec<LoggedRecord> {
        bytes
            .iter()
            .map(|b| crate::store::skim_record("g", b).expect("skims"))
            .collect()
    }

    #[test]
    fn skimmed_records_keep_their_stored_bytes() {
        let (log, bytes) = log_with_bytes(300);
        let kept = Records::from_log(&skimmed(&bytes), bytes.clone());
        assert_eq!(kept.encoded, bytes);
        assert_eq!(kept.range(1, 3).collect::<Vec<_>>(), log);
        assert_eq!(kept.first_unix_ms(), Some(301));
    }

    /// A skimmed record lacks its events: encoding it again would lose them.
    #[test]
    #[should_panic(expected = "a skimmed record comes with its stored bytes")]
    fn skimmed_records_without_their_bytes_are_never_encoded_again() {
        let (_, bytes) = log_with_bytes(400);
        Records::from_log(&skimmed(&bytes), Vec::new());
    }
}
