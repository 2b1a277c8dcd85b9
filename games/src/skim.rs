//! A log record decoded without its events, which stay as their stored bytes: what a restart
//! replays. The replay needs a record's action and bookkeeping decoded, but its events only to
//! check that the engine produced the same ones, and that check can compare bytes: the engine's
//! events encoded against the stored ones ([`crate::replay::Replayer::apply_logged`]). Decoding
//! a Gang of Four deal's 64 cards (a `String` per card word) and dropping them again was a
//! third of a restart's rebuild (docs/performance.md).
//!
//! The `Skim*` messages mirror `gangs.v1.LogRecord` and the four messages that carry events,
//! with `bytes` where the originals have `GameEvent` (the same wire type: a length-delimited
//! field). A test checks their field numbers against the proto's descriptor, so a field added
//! to the proto and not here fails the build's tests instead of being dropped at restart.

use bytes::Bytes;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use prost::Message;

/// One record for the replay: decoded whole, or skimmed (decoded without its events, each
/// event kept as its stored bytes in `stored_events`; the record's own event lists are empty).
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedRecord {
    pub record: pb::LogRecord,
    /// `Some`: the events as stored, in order (the record's event list is empty). `None`: the
    /// record is whole.
    pub stored_events: Option<Vec<Bytes>>,
}

impl LoggedRecord {
    /// A record decoded whole (a store that decodes, a game loaded again).
    pub fn whole(record: pb::LogRecord) -> LoggedRecord {
        LoggedRecord {
            record,
            stored_events: None,
        }
    }

    /// The record in `stored` (its protobuf encoding), decoded without its events; the
    /// events are slices of `stored`, not copies.
    pub fn skim(stored: Bytes) -> Result<LoggedRecord, prost::DecodeError> {
        let skimmed = SkimRecord::decode(stored)?;
        let mut events = Vec::new();
        let record = skimmed.record.map(|body| match body {
            SkimBody::Created(created) => Record::Created(created),
            SkimBody::Joined(joined) => Record::Joined(joined),
            SkimBody::Ended(ended) => Record::Ended(ended),
            SkimBody::Ladder(ladder) => Record::Ladder(ladder.to_vec()),
            SkimBody::Started(started) => {
                events = started.events;
                Record::Started(pb::Started::default())
            }
            SkimBody::Expired(expired) => {
                events = expired.events;
                Record::Expired(pb::Expired::default())
            }
            SkimBody::Acted(acted) => {
                events = acted.events;
                Record::Acted(pb::Acted {
                    seat: acted.seat,
                    action: acted.action,
                    action_id: acted.action_id,
                    events: Vec::new(),
                })
            }
            SkimBody::TimedOut(timed_out) => {
                events = timed_out.events;
                Record::TimedOut(pb::TimedOut {
                    seat: timed_out.seat,
                    decision: timed_out.decision,
                    action: timed_out.action,
                    events: Vec::new(),
                    used_ms: timed_out.used_ms,
                    absent: timed_out.absent,
                    cause: timed_out.cause,
                })
            }
        });
        Ok(LoggedRecord {
            record: pb::LogRecord {
                seq: skimmed.seq,
                unix_ms: skimmed.unix_ms,
                record,
            },
            stored_events: Some(events),
        })
    }

    /// The record whole: a skimmed record's events decoded back into it.
    pub fn into_whole(self) -> Result<pb::LogRecord, prost::DecodeError> {
        let LoggedRecord {
            mut record,
            stored_events,
        } = self;
        let Some(stored) = stored_events else {
            return Ok(record);
        };
        let decoded = stored
            .into_iter()
            .map(pb::GameEvent::decode)
            .collect::<Result<Vec<_>, _>>()?;
        match &mut record.record {
            Some(Record::Started(started)) => started.events = decoded,
            Some(Record::Acted(acted)) => acted.events = decoded,
            Some(Record::Expired(expired)) => expired.events = decoded,
            Some(Record::TimedOut(timed_out)) => timed_out.events = decoded,
            _ => {}
        }
        Ok(record)
    }
}

#[derive(Clone, PartialEq, Message)]
struct SkimRecord {
    #[prost(uint64, tag = "1")]
    seq: u64,
    #[prost(int64, tag = "2")]
    unix_ms: i64,
    #[prost(oneof = "SkimBody", tags = "3, 4, 5, 6, 7, 8, 9, 10")]
    record: Option<SkimBody>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum SkimBody {
    #[prost(message, tag = "3")]
    Created(pb::Created),
    #[prost(message, tag = "4")]
    Joined(pb::Joined),
    #[prost(message, tag = "5")]
    Started(SkimStarted),
    #[prost(message, tag = "6")]
    Acted(SkimActed),
    #[prost(message, tag = "7")]
    Expired(SkimExpired),
    #[prost(message, tag = "8")]
    TimedOut(SkimTimedOut),
    #[prost(message, tag = "9")]
    Ended(pb::Ended),
    #[prost(bytes = "bytes", tag = "10")]
    Ladder(Bytes),
}

#[derive(Clone, PartialEq, Message)]
struct SkimStarted {
    #[prost(bytes = "bytes", repeated, tag = "1")]
    events: Vec<Bytes>,
}

#[derive(Clone, PartialEq, Message)]
struct SkimActed {
    #[prost(uint32, tag = "1")]
    seat: u32,
    #[prost(message, optional, tag = "2")]
    action: Option<pb::GameAction>,
    #[prost(string, tag = "3")]
    action_id: String,
    #[prost(bytes = "bytes", repeated, tag = "4")]
    events: Vec<Bytes>,
}

#[derive(Clone, PartialEq, Message)]
struct SkimExpired {
    #[prost(bytes = "bytes", repeated, tag = "1")]
    events: Vec<Bytes>,
}

#[derive(Clone, PartialEq, Message)]
struct SkimTimedOut {
    #[prost(uint32, tag = "1")]
    seat: u32,
    #[prost(string, tag = "2")]
    decision: String,
    #[prost(message, optional, tag = "3")]
    action: Option<pb::GameAction>,
    #[prost(bytes = "bytes", repeated, tag = "4")]
    events: Vec<Bytes>,
    #[prost(uint64, tag = "5")]
    used_ms: u64,
    #[prost(bool, tag = "6")]
    absent: bool,
    #[prost(string, tag = "7")]
    cause: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::DescriptorPool;

    /// The mirrors know every field of the messages they mirror: a field added to the proto
    /// must be added here too (or a restart would drop it from the replay's view).
    #[test]
    fn the_mirrors_have_the_protos_fields() {
        let pool = DescriptorPool::decode(gangs_proto::FILE_DESCRIPTOR_SET).expect("descriptors");
        let mirrored: [(&str, &[u32]); 5] = [
            ("gangs.v1.LogRecord", &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
            ("gangs.v1.Started", &[1]),
            ("gangs.v1.Acted", &[1, 2, 3, 4]),
            ("gangs.v1.Expired", &[1]),
            ("gangs.v1.TimedOut", &[1, 2, 3, 4, 5, 6, 7]),
        ];
        for (name, fields) in mirrored {
            let message = pool.get_message_by_name(name).expect(name);
            let mut numbers: Vec<u32> = message.fields().map(|f| f.number()).collect();
            numbers.sort_unstable();
            assert_eq!(
                numbers, fields,
                "{name}'s fields changed: update games/src/skim.rs"
            );
        }
    }

    /// A real deal's events and a real first action (the skim never looks inside either).
    fn events_and_action() -> (Vec<pb::GameEvent>, pb::GameAction) {
        let mut game =
            crate::new_game(crate::gang_of_four::KIND.name, None, 7, None).expect("a game");
        let mut events = game.start();
        let seat = (0..game.players())
            .find(|&s| !game.legal_actions(s).is_empty())
            .expect("someone acts");
        let action = game.legal_actions(seat).swap_remove(0);
        events.extend(game.act(seat, &action).expect("a legal action"));
        (events, action)
    }

    /// Every kind of record, skimmed then made whole again, is the record decoded whole; the
    /// skimmed one holds its events as their own encodings.
    #[test]
    fn a_skimmed_record_is_the_record_without_its_events() {
        let (events, action) = events_and_action();
        assert!(events.len() > 1, "a deal and a play are several events");
        let bodies = [
            Record::Created(pb::Created {
                kind: "gang-of-four".into(),
                seed: Some(7),
                creator: "key:abc".into(),
                invitations: vec!["x".into()],
                ..Default::default()
            }),
            Record::Joined(pb::Joined {
                seat: 2,
                name: "bot".into(),
                token: "t".into(),
                join_id: "j".into(),
            }),
            Record::Started(pb::Started {
                events: events.clone(),
            }),
            Record::Acted(pb::Acted {
                seat: 1,
                action: Some(action.clone()),
                action_id: "a1".into(),
                events: events.clone(),
            }),
            Record::Expired(pb::Expired {
                events: events.clone(),
            }),
            Record::TimedOut(pb::TimedOut {
                seat: 3,
                decision: "play or pass".into(),
                action: Some(action.clone()),
                events: events.clone(),
                used_ms: 1500,
                absent: true,
                cause: "fuel: out of fuel".into(),
            }),
            Record::Ended(pb::Ended {
                reason: pb::ended::Reason::Cancelled as i32,
                detail: "bye".into(),
            }),
            Record::Ladder(vec![1, 2, 3]),
        ];
        for (i, body) in bodies.into_iter().enumerate() {
            let record = pb::LogRecord {
                seq: i as u64 + 1,
                unix_ms: 1_700_000_000_000 + i as i64,
                record: Some(body),
            };
            let stored = Bytes::from(record.encode_to_vec());
            let skimmed = LoggedRecord::skim(stored).expect("skims");
            let stored_events = skimmed.stored_events.clone().expect("skimmed");
            let carries_events = matches!(
                record.record,
                Some(
                    Record::Started(_)
                        | Record::Acted(_)
                        | Record::Expired(_)
                        | Record::TimedOut(_)
                )
            );
            if carries_events {
                let expected: Vec<Vec<u8>> = events.iter().map(|e| e.encode_to_vec()).collect();
                let got: Vec<Vec<u8>> = stored_events.iter().map(|b| b.to_vec()).collect();
                assert_eq!(got, expected, "record {i}'s events as stored");
            } else {
                assert!(stored_events.is_empty(), "record {i} has no events");
            }
            assert_eq!(skimmed.into_whole().expect("decodes"), record, "record {i}");
        }
    }

    #[test]
    fn bytes_that_are_no_record_do_not_skim() {
        assert!(LoggedRecord::skim(Bytes::from_static(&[0x2a, 0x05, 0x01])).is_err());
    }
}
