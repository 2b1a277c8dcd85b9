//! Bounds on what a client sends, checked in `api.rs` before a request reaches a game: every id
//! and string has a length limit, refused with INVALID_ARGUMENT naming the field and its limit,
//! and no message quotes more than [`gangs_proto::MAX_QUOTED_BYTES`] of input. A careless or
//! hostile client thus gets a clear status (a 60 KB game id echoed whole would overflow gRPC's
//! metadata limit and arrive as an unrelated RESOURCE_EXHAUSTED) and costs little.

use gangs_proto::quoted;
use tonic::Status;

/// Game ids the server makes are 16 hex characters; anything much longer is no id of ours.
pub const MAX_GAME_ID_BYTES: usize = 64;
/// Seat tokens the server makes are 32 hex characters.
pub const MAX_TOKEN_BYTES: usize = 128;
/// Game kinds are short words (`gang-of-four`).
pub const MAX_KIND_BYTES: usize = 32;
/// An action, encoded: a handful of card ids or words. Bounds the card lists and words inside.
pub const MAX_ACTION_BYTES: usize = 4096;
/// Most records of a game loaded by `ImportGame`: the most a game file may hold.
pub const MAX_IMPORT_RECORDS: usize = gangs_games::game_file::MAX_RECORDS;
/// Most bytes of a game loaded by `ImportGame`, over all its messages (each message is also
/// bounded by `--max-request-bytes`): far more than the longest game's log.
pub const MAX_IMPORT_BYTES: usize = 32 << 20;
/// Longest status message sent: a last guard so that no message can grow past gRPC's metadata
/// limit, whatever a lower layer put in it.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// `value` of `field` is at most `max` bytes.
pub fn check_len(field: &str, value: &str, max: usize) -> Result<(), Status> {
    if value.len() > max {
        return Err(Status::invalid_argument(format!(
            "{field} is {} bytes, longer than its limit of {max}: {}",
            value.len(),
            quoted(value)
        )));
    }
    Ok(())
}

/// A required, bounded game id.
pub fn check_game_id(game_id: &str) -> Result<(), Status> {
    if game_id.is_empty() {
        return Err(Status::invalid_argument(
            "game_id is required: `gangs games` lists the games",
        ));
    }
    check_len("game_id", game_id, MAX_GAME_ID_BYTES)
}

/// The same status with its message cut to [`MAX_MESSAGE_BYTES`] (on a character boundary).
pub fn bounded(status: Status) -> Status {
    if status.message().len() <= MAX_MESSAGE_BYTES {
        return status;
    }
    let message = status.message();
    let mut end = MAX_MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    Status::new(status.code(), format!("{}…", &message[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_fields_are_named_and_quoted_briefly() {
        let id = "x".repeat(60_000);
        let status = check_game_id(&id).unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert!(status.message().starts_with("game_id is 60000 bytes"));
        assert!(status.message().len() < 300, "{}", status.message());
        assert!(check_game_id("0123456789abcdef").is_ok());
        assert!(check_game_id("").is_err());
    }

    #[test]
    fn messages_are_cut() {
        let status = bounded(Status::not_found("é".repeat(5_000)));
        assert_eq!(status.code(), tonic::Code::NotFound);
        assert!(status.message().len() <= MAX_MESSAGE_BYTES + 3);
    }
}
