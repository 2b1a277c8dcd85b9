//! Wire messages as JSON for `--json` output, in the proto3 JSON mapping read from the proto's
//! own descriptors: field names exactly as in `proto/*.proto` (snake_case), enums by name, every
//! field present. A script in any language reads the same names as the proto it generated from.

use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};
use serde_json::Value;
use std::sync::OnceLock;

fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(gangs_proto::FILE_DESCRIPTOR_SET)
            .expect("the descriptors compiled into gangs-proto decode")
    })
}

/// `message` (of proto type `full_name`, e.g. `gangs.v1.GameView`) as a JSON object.
pub fn to_json<M: prost::Message>(message: &M, full_name: &str) -> Value {
    let Some(descriptor) = pool().get_message_by_name(full_name) else {
        return Value::Null;
    };
    let Ok(dynamic) = DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice()) else {
        return Value::Null;
    };
    let options = SerializeOptions::new()
        .use_proto_field_name(true)
        .stringify_64_bit_integers(false)
        .skip_default_fields(false);
    dynamic
        .serialize_with_options(serde_json::value::Serializer, &options)
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gangs_proto::v1 as pb;

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
}
