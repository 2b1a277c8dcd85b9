//! Any `gangs.v1` message as JSON in the proto3 JSON mapping, read from the proto's own
//! descriptors (prost-reflect): field names exactly as in `proto/*.proto` (snake_case), enums by
//! name, every field present. The CLI's `--json`, the game files (`gangs export`) and the
//! server's HTTP API all speak it, so a script in any language reads the proto's own names.

use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, SerializeOptions};
use serde_json::Value;
use std::sync::OnceLock;

fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(crate::FILE_DESCRIPTOR_SET)
            .expect("the descriptors compiled into gangs-proto decode")
    })
}

/// How 64-bit integers are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int64 {
    /// As JSON numbers: easy to read in a terminal and in scripts (the CLI's `--json`).
    Numbers,
    /// As strings, the canonical mapping: exact in every JSON reader, JavaScript included (a
    /// seed is a full 64-bit number). Files that last use it.
    Strings,
}

/// `message` (of proto type `full_name`, e.g. `gangs.v1.GameView`) as a JSON object; `Null` if
/// the name is not a `gangs.v1` message.
pub fn to_json<M: prost::Message>(message: &M, full_name: &str) -> Value {
    to_json_with(message, full_name, Int64::Numbers)
}

/// [`to_json`] choosing how 64-bit integers are written.
pub fn to_json_with<M: prost::Message>(message: &M, full_name: &str, int64: Int64) -> Value {
    let Some(descriptor) = pool().get_message_by_name(full_name) else {
        return Value::Null;
    };
    let Ok(dynamic) = DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice()) else {
        return Value::Null;
    };
    let options = SerializeOptions::new()
        .use_proto_field_name(true)
        .stringify_64_bit_integers(int64 == Int64::Strings)
        .skip_default_fields(false);
    dynamic
        .serialize_with_options(serde_json::value::Serializer, &options)
        .unwrap_or(Value::Null)
}

/// The message of proto type `full_name` read from `value` in the proto3 JSON mapping (either
/// field spelling, 64-bit integers as numbers or strings). Unknown fields are ignored, as in
/// the binary encoding, so a newer writer's file still reads. The error says what is wrong.
pub fn from_json<M: prost::Message + Default>(value: Value, full_name: &str) -> Result<M, String> {
    let descriptor = pool()
        .get_message_by_name(full_name)
        .ok_or_else(|| format!("{full_name} is not a message of the gangs.v1 contract"))?;
    let options = DeserializeOptions::new().deny_unknown_fields(false);
    let dynamic = DynamicMessage::deserialize_with_options(descriptor, value, &options)
        .map_err(|e| format!("not a {full_name}: {e}"))?;
    dynamic
        .transcode_to::<M>()
        .map_err(|e| format!("not a {full_name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1 as pb;

    #[test]
    fn a_view_keeps_the_proto_field_names_and_enum_names() {
        let view = pb::GameView {
            game: Some(pb::game_view::Game::TheGang(pb::TheGangView {
                players: 4,
                heist: 2,
                street: pb::TheGangStreet::Red as i32,
                ..Default::default()
            })),
        };
        let json = to_json(&view, "gangs.v1.GameView");
        let gang = &json["the_gang"];
        assert_eq!(gang["players"], 4);
        assert_eq!(gang["heist"], 2);
        assert_eq!(gang["street"], "THE_GANG_STREET_RED");
        // Defaults are present, so scripts need no fallbacks.
        assert_eq!(gang["vaults"], 0);
    }

    #[test]
    fn a_record_round_trips_with_its_full_64_bit_seed() {
        let record = pb::LogRecord {
            seq: 1,
            unix_ms: 1_700_000_000_000,
            record: Some(pb::log_record::Record::Created(pb::Created {
                kind: "gang-of-four".into(),
                seed: Some(u64::MAX - 1),
                players: 4,
                ..Default::default()
            })),
        };
        let json = to_json_with(&record, "gangs.v1.LogRecord", Int64::Strings);
        assert_eq!(json["created"]["seed"], "18446744073709551614");
        let back: pb::LogRecord = from_json(json, "gangs.v1.LogRecord").unwrap();
        assert_eq!(back, record);
        // Numbers read too, and so do unknown fields from a newer writer.
        let numbers = serde_json::json!({"seq": 2, "unix_ms": 5, "expired": {}, "later": 1});
        let back: pb::LogRecord = from_json(numbers, "gangs.v1.LogRecord").unwrap();
        assert_eq!(back.seq, 2);
    }

    #[test]
    fn a_wrong_shape_is_an_error_that_says_so() {
        let bad = serde_json::json!({"seq": "not a number"});
        let e = from_json::<pb::LogRecord>(bad, "gangs.v1.LogRecord").unwrap_err();
        assert!(e.contains("gangs.v1.LogRecord"), "{e}");
    }
}
