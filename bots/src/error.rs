//! What can stop a bot, and which gRPC failures are only the connection's fault (worth a
//! reconnect) rather than the server refusing the request.

use gangs_proto::code_name;
use tonic::Status;

#[derive(Debug)]
pub enum BotError {
    /// `--server` (with `--ca`) is not usable: the message says why.
    BadServer(gangs_proto::connect::BadEndpoint),
    /// `--api-key` cannot travel in a header.
    BadKey(String),
    /// The server stayed unreachable for the whole retry budget.
    ServerLost {
        url: String,
        seconds: u64,
        last: String,
    },
    /// The server refused a request for good (NOT_FOUND game, seat taken, bad token...).
    Refused { what: &'static str, status: Status },
    /// The policy returned an action that is not among the update's legal actions: a bug in
    /// the bot.
    IllegalChoice { seq: u64, action: String },
    /// The server keeps failing the same action.
    ActKeepsFailing {
        seq: u64,
        attempts: u32,
        last: Status,
    },
}

impl std::fmt::Display for BotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BotError::BadServer(why) => write!(f, "{why}"),
            BotError::BadKey(reason) => write!(f, "invalid --api-key: {reason}"),
            BotError::ServerLost { url, seconds, last } => write!(
                f,
                "cannot reach the server at {url} for {seconds} s (last error: {last}): is `gangs-server` running?"
            ),
            BotError::Refused { what, status } => write!(
                f,
                "{what} refused by the server: {} ({})",
                status.message(),
                code_name(status.code())
            ),
            BotError::IllegalChoice { seq, action } => write!(
                f,
                "BUG: the policy chose `{action}` at seq {seq}, which is not one of the legal actions"
            ),
            BotError::ActKeepsFailing {
                seq,
                attempts,
                last,
            } => write!(
                f,
                "the server failed the action at seq {seq} {attempts} times in a row (last: {} {})",
                code_name(last.code()),
                last.message()
            ),
        }
    }
}

impl std::error::Error for BotError {}

pub use gangs_proto::retry::is_transient;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_do() {
        let lost = BotError::ServerLost {
            url: "http://127.0.0.1:50051".into(),
            seconds: 60,
            last: "connection refused".into(),
        };
        assert!(lost.to_string().contains("is `gangs-server` running?"));
        let refused = BotError::Refused {
            what: "joining game g9",
            status: Status::not_found("no game g9"),
        };
        assert_eq!(
            refused.to_string(),
            "joining game g9 refused by the server: no game g9 (NOT_FOUND)"
        );
    }
}
