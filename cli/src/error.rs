//! What makes a command fail, with the gRPC code it maps to. Humans read the message on
//! stderr; with `--json` the same error also goes to stdout as `{"error", "code"}` (plus
//! `"seq"` when it concerns one record).

use gangs_proto::code_name;
use tonic::{Code, Status};

#[derive(Debug, Clone, PartialEq)]
pub struct CliError {
    pub message: String,
    /// The canonical gRPC code name (`NOT_FOUND`), or `REPLAY_DIVERGED`, `RERATE_DIFFERS`
    /// (`gangs ladder rerate`), or `GAMES_FAILED` (`gangs arena`).
    pub code: String,
    /// The log record concerned, if any.
    pub seq: Option<u64>,
    /// The command's JSON result already reports this error (`gangs arena`'s `errors`): with
    /// `--json` it is not printed again, so stdout stays one object.
    pub in_json_result: bool,
}

impl CliError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: code.to_string(),
            seq: None,
            in_json_result: false,
        }
    }

    /// Bad input given on the command line or stdin.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new("INVALID_ARGUMENT", message)
    }

    /// A failure on this machine, not the server's.
    pub fn local(message: impl Into<String>) -> Self {
        Self::new("INTERNAL", message)
    }

    pub fn unreachable(server: &str, detail: &str) -> Self {
        Self::new(
            "UNAVAILABLE",
            format!("cannot reach the server at {server}: is `gangs-server` running? ({detail})"),
        )
    }

    /// A refusal from the server, as its message says it (UNAVAILABLE gets the usual hint).
    pub fn from_status(server: &str, status: &Status) -> Self {
        if status.code() == Code::Unavailable {
            return Self::unreachable(server, status.message());
        }
        Self::new(code_name(status.code()), status.message())
    }

    /// Marks the error as already part of the printed JSON result.
    pub fn in_json_result(mut self) -> Self {
        self.in_json_result = true;
        self
    }

    pub fn with_seq(mut self, seq: u64) -> Self {
        self.seq = Some(seq);
        self
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.seq {
            Some(seq) => write!(f, "seq {seq}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_message_is_kept_plain() {
        let e = CliError::from_status("http://x", &Status::not_found("no game g7"));
        assert_eq!(e.message, "no game g7");
        assert_eq!(e.code, "NOT_FOUND");
    }

    #[test]
    fn unavailable_says_what_to_do() {
        let e = CliError::from_status(
            "http://127.0.0.1:50051",
            &Status::unavailable("connection refused"),
        );
        assert_eq!(e.code, "UNAVAILABLE");
        assert!(e.message.starts_with(
            "cannot reach the server at http://127.0.0.1:50051: is `gangs-server` running?"
        ));
    }

    #[test]
    fn seq_prefixes_the_message() {
        let e = CliError::new("REPLAY_DIVERGED", "event 0 differs").with_seq(12);
        assert_eq!(e.to_string(), "seq 12: event 0 differs");
    }
}
