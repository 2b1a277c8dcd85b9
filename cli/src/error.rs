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

    /// A refusal from the server, as its message says it. UNAVAILABLE raised by this side's
    /// transport (the status has a `source`: no connection) gets the "is it running?" hint;
    /// UNAVAILABLE the server answered itself (a game changing hands between the nodes of a
    /// cluster, a shutdown under way) says so, with the server's own advice.
    pub fn from_status(server: &str, status: &Status) -> Self {
        if status.code() == Code::Unavailable {
            if gangs_proto::retry::raised_here(status) {
                return Self::unreachable(server, status.message());
            }
            return Self::new(
                "UNAVAILABLE",
                format!(
                    "the server at {server} cannot serve this now: {}",
                    status.message()
                ),
            );
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

    #[tokio::test]
    async fn unavailable_says_what_to_do() {
        // No server on that port: this side's transport fails.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let server = format!("http://127.0.0.1:{port}");
        let channel = tonic::transport::Endpoint::from_shared(server.clone())
            .unwrap()
            .connect_lazy();
        let status = gangs_proto::v1::games_client::GamesClient::new(channel)
            .list_games(gangs_proto::v1::ListGamesRequest::default())
            .await
            .unwrap_err();
        let e = CliError::from_status(&server, &status);
        assert_eq!(e.code, "UNAVAILABLE");
        assert!(
            e.message.starts_with(&format!(
                "cannot reach the server at {server}: is `gangs-server` running?"
            )),
            "{e:?}"
        );
        // The server's own UNAVAILABLE: it runs, and says what to do.
        let e = CliError::from_status(
            "http://127.0.0.1:50051",
            &Status::unavailable("game g is changing hands between nodes: retry"),
        );
        assert_eq!(e.code, "UNAVAILABLE");
        assert_eq!(
            e.message,
            "the server at http://127.0.0.1:50051 cannot serve this now: game g is changing hands between nodes: retry"
        );
    }

    #[test]
    fn seq_prefixes_the_message() {
        let e = CliError::new("REPLAY_DIVERGED", "event 0 differs").with_seq(12);
        assert_eq!(e.to_string(), "seq 12: event 0 differs");
    }
}
