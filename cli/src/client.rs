//! The connection to the server and the requests several commands share: finding a game's
//! kind, joining, watching in batches, turning gRPC failures into plain errors.

use crate::error::CliError;
use crate::output::Output;
use gangs_proto::auth::{ApiKey, KeyedClient};
use gangs_proto::retry::{is_transient, Backoff, OUTAGE_BUDGET};
use gangs_proto::v1 as pb;
use std::future::Future;
use std::path::PathBuf;
use std::task::Poll;
use std::time::Instant;
use tonic::transport::Channel;
use tonic::Streaming;

/// A client that sends the `--api-key` with every call.
pub type Client = KeyedClient;

/// What every command gets: where the server is and how to print.
pub struct Context {
    pub server: String,
    pub out: Output,
    /// `--server` or GANGS_SERVER was given (not the default): `gangs arena` then uses that
    /// server instead of starting its own.
    pub server_given: bool,
    /// `--api-key` or GANGS_API_KEY, sent with every call.
    pub api_key: ApiKey,
    /// `--ca`: the certificate(s) to trust for an `https://` server.
    pub ca: Option<PathBuf>,
}

impl Context {
    pub fn new(server: String, out: Output) -> Self {
        Context {
            server,
            out,
            server_given: false,
            api_key: ApiKey::none(),
            ca: None,
        }
    }

    /// A connected client, or an error that says how to get one.
    pub async fn connect(&self) -> Result<Client, CliError> {
        Ok(self.api_key.client(self.channel().await?))
    }

    /// A connection to the server, for any of its services (`gangs health` asks the standard
    /// health service over it).
    pub async fn channel(&self) -> Result<Channel, CliError> {
        let endpoint = gangs_proto::connect::endpoint(&self.server, self.ca.as_deref())
            .map_err(|e| CliError::invalid(e.0))?;
        match endpoint.connect().await {
            Ok(channel) => Ok(channel),
            Err(e) => Err(match gangs_proto::connect::tls_failure(&self.server, &e) {
                Some(why) => CliError::new("UNAVAILABLE", why),
                None => CliError::unreachable(&self.server, &gangs_proto::innermost_cause(&e)),
            }),
        }
    }

    /// Turns a gRPC failure into the error to print.
    pub fn refused(&self, status: tonic::Status) -> CliError {
        CliError::from_status(&self.server, &status)
    }

    /// The game's summary from ListGames; NOT_FOUND if the server does not know the id.
    pub async fn find_game(
        &self,
        client: &mut Client,
        game_id: &str,
    ) -> Result<pb::GameSummary, CliError> {
        let found = find_summary(client, game_id)
            .await
            .map_err(|s| self.refused(s))?;
        found.ok_or_else(|| {
            CliError::new(
                "NOT_FOUND",
                format!(
                    "no game {game_id:?} on the server at {}: `gangs games` lists them",
                    self.server
                ),
            )
        })
    }

    /// Takes a seat (the given one, or the first free one).
    pub async fn join(
        &self,
        client: &mut Client,
        game_id: &str,
        seat: Option<u32>,
        name: &str,
        invitation: Option<&str>,
    ) -> Result<pb::JoinGameResponse, CliError> {
        let request = pb::JoinGameRequest {
            game_id: game_id.to_string(),
            seat,
            name: name.to_string(),
            join_id: gangs_proto::retry::new_join_id(),
            invitation: invitation.unwrap_or_default().to_string(),
        };
        Ok(client
            .join_game(request)
            .await
            .map_err(|s| self.refused(s))?
            .into_inner())
    }

    /// The update stream of a seat (with its token) or of a spectator (empty token).
    pub async fn watch(
        &self,
        client: &mut Client,
        game_id: &str,
        token: &str,
        from_seq: u64,
    ) -> Result<Streaming<pb::Update>, CliError> {
        let request = pb::WatchRequest {
            game_id: game_id.to_string(),
            token: token.to_string(),
            from_seq,
            ..Default::default()
        };
        Ok(client
            .watch(request)
            .await
            .map_err(|s| self.refused(s))?
            .into_inner())
    }

    /// The stream ended or broke before the game finished.
    pub fn stream_ended(&self, result: Result<(), tonic::Status>) -> CliError {
        match result {
            Ok(()) => CliError::new(
                "UNAVAILABLE",
                format!(
                    "the server at {} closed the stream before the game finished (restarted?): watch again with --from the last seq shown",
                    self.server
                ),
            ),
            Err(status) => self.refused(status),
        }
    }
}

impl Context {
    /// After the stream of `game_id` stopped with `end` before the game finished: connects
    /// again and watches from `last_seq` (no gap, no duplicate), retrying with the bots' backoff
    /// for up to their outage budget while the server is unreachable. A stop no reconnect can cure (a
    /// revoked token, an unknown game) is returned as the error to print.
    pub async fn resume_watch(
        &self,
        game_id: &str,
        token: &str,
        last_seq: u64,
        end: Result<(), tonic::Status>,
    ) -> Result<(Client, Streaming<pb::Update>), CliError> {
        self.resume_watch_with(game_id, token, last_seq, end, &|note| self.out.note(note))
            .await
    }

    /// [`Context::resume_watch`] with its progress notes given to `note` (the full-screen
    /// table shows them in its status line instead of writing over the screen).
    pub async fn resume_watch_with(
        &self,
        game_id: &str,
        token: &str,
        last_seq: u64,
        end: Result<(), tonic::Status>,
        note: &dyn Fn(&str),
    ) -> Result<(Client, Streaming<pb::Update>), CliError> {
        if end.as_ref().is_err_and(|status| !is_transient(status)) {
            return Err(self.stream_ended(end));
        }
        let why = match &end {
            Ok(()) => "the server closed the stream".to_string(),
            Err(status) => status.message().to_string(),
        };
        note(&format!(
            "lost the stream of game {game_id} ({why}); reconnecting to {} for up to {} s",
            self.server,
            OUTAGE_BUDGET.as_secs()
        ));
        let start = Instant::now();
        let mut backoff = Backoff::default();
        loop {
            let attempt = async {
                let mut client = self.connect().await?;
                let stream = self.watch(&mut client, game_id, token, last_seq).await?;
                Ok::<_, CliError>((client, stream))
            }
            .await;
            match attempt {
                Ok(resumed) => {
                    note(&format!("reconnected; resuming after seq {last_seq}"));
                    return Ok(resumed);
                }
                // Unreachable, or a transport failure while it comes back up.
                Err(e)
                    if matches!(e.code.as_str(), "UNAVAILABLE" | "UNKNOWN")
                        && start.elapsed() < OUTAGE_BUDGET =>
                {
                    tokio::time::sleep(backoff.next_delay()).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// How long a log read waits out UNAVAILABLE answered by the server itself: a game changing
/// hands between the nodes of a cluster is served again within the lease's life (5 s) and a
/// rebuild. No server at all (a transport failure) is reported at once.
pub const READ_PATIENCE: std::time::Duration = std::time::Duration::from_secs(20);

/// Reads a game's log records after `from_seq`, passing each to `each` in order. A server's
/// own UNAVAILABLE (the status has no transport `source`) is retried for [`READ_PATIENCE`],
/// from the last record received, so a record is never passed twice.
pub async fn read_log(
    client: &mut Client,
    game_id: &str,
    from_seq: u64,
    mut each: impl FnMut(pb::LogRecord),
) -> Result<(), tonic::Status> {
    let started = Instant::now();
    let mut backoff = Backoff::default();
    let mut after = from_seq;
    loop {
        let read = async {
            let mut stream = client
                .get_log(pb::GetLogRequest {
                    game_id: game_id.to_string(),
                    from_seq: after,
                })
                .await?
                .into_inner();
            while let Some(record) = stream.message().await? {
                after = record.seq;
                each(record);
            }
            Ok::<(), tonic::Status>(())
        };
        match read.await {
            Ok(()) => return Ok(()),
            Err(status)
                if status.code() == tonic::Code::Unavailable
                    && !gangs_proto::retry::raised_here(&status)
                    && started.elapsed() < READ_PATIENCE =>
            {
                tokio::time::sleep(backoff.next_delay()).await;
            }
            Err(status) => return Err(status),
        }
    }
}

/// A game's summary, paging through ListGames (the server answers a page at a time).
pub async fn find_summary(
    client: &mut Client,
    game_id: &str,
) -> Result<Option<pb::GameSummary>, tonic::Status> {
    let mut page_token = String::new();
    loop {
        let page = client
            .list_games(pb::ListGamesRequest {
                page_size: 1000,
                page_token,
                ..Default::default()
            })
            .await?
            .into_inner();
        if let Some(found) = page.games.into_iter().find(|g| g.game_id == game_id) {
            return Ok(Some(found));
        }
        if page.next_page_token.is_empty() {
            return Ok(None);
        }
        page_token = page.next_page_token;
    }
}

/// A burst of updates received back to back, and whether the stream stopped behind them.
pub struct Batch {
    pub updates: Vec<pb::Update>,
    /// `Some(Ok(()))`: the server closed the stream; `Some(Err(_))`: it broke.
    pub end: Option<Result<(), tonic::Status>>,
}

/// Waits for the next update, then takes every update already received behind it (without
/// waiting), so that a catch-up burst is shown at once and only its newest update is acted on.
/// Cancel-safe: it only waits before the first update.
pub async fn next_batch(stream: &mut Streaming<pb::Update>) -> Batch {
    let mut updates = Vec::new();
    let end = match stream.message().await {
        Ok(Some(update)) => {
            updates.push(update);
            loop {
                match ready_now(stream.message()).await {
                    Some(Ok(Some(update))) => updates.push(update),
                    Some(Ok(None)) => break Some(Ok(())),
                    Some(Err(status)) => break Some(Err(status)),
                    None => break None,
                }
            }
        }
        Ok(None) => Some(Ok(())),
        Err(status) => Some(Err(status)),
    };
    Batch { updates, end }
}

/// Polls `future` once: its output if it is ready now, else `None`. Never yields, so a
/// `select!` cannot cancel a batch half-read (a zero `timeout` may yield and lose it).
pub async fn ready_now<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|cx| match future.as_mut().poll(cx) {
        Poll::Ready(output) => Poll::Ready(Some(output)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ready_now_polls_once() {
        assert_eq!(ready_now(async { 7 }).await, Some(7));
        assert_eq!(ready_now(std::future::pending::<u8>()).await, None);
    }
}
