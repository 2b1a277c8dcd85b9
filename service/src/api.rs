//! The `gangs.v1.Games` gRPC service: checks each request's shape, finds the game, and hands
//! the request to the game's actor. No game logic here. The one place where the host's
//! [`HostError`] becomes a gRPC status.

use crate::actor::{Command, GameHandle, Reply, MAX_ACTION_ID_LEN, MAX_NAME_LEN};
use crate::bounds::{
    bounded, check_game_id, check_len, MAX_ACTION_BYTES, MAX_IMPORT_BYTES, MAX_IMPORT_RECORDS,
    MAX_KIND_BYTES, MAX_TOKEN_BYTES,
};
use crate::error::{HostError, HostResult};
use crate::registry::Registry;
use gangs_games::game_file::Header;
use gangs_proto::v1 as pb;
use pb::games_server::Games;
use prost::Message;
use std::pin::Pin;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

impl From<HostError> for Status {
    fn from(error: HostError) -> Status {
        match error {
            HostError::NotFound(m) => Status::not_found(m),
            HostError::Invalid(m) => Status::invalid_argument(m),
            HostError::NotNow(m) => Status::failed_precondition(m),
            HostError::Permission(m) => Status::permission_denied(m),
            HostError::Unauthenticated(m) => Status::unauthenticated(m),
            HostError::StaleSeq(m) => Status::aborted(m),
            HostError::OutOfRange(m) => Status::out_of_range(m),
            HostError::Exhausted(m) => Status::resource_exhausted(m),
            HostError::Storage(m) | HostError::Unavailable(m) => Status::unavailable(m),
            HostError::Internal(m) => Status::internal(m),
        }
    }
}

pub struct GamesService {
    registry: Registry,
    api_key: Option<String>,
}

impl GamesService {
    pub fn new(registry: Registry, api_key: Option<String>) -> Self {
        GamesService { registry, api_key }
    }

    fn check_api_key<T>(&self, request: &Request<T>) -> Result<(), Status> {
        let Some(key) = &self.api_key else {
            return Ok(());
        };
        let given = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            Some(given) if constant_time_eq(given.as_bytes(), key.as_bytes()) => Ok(()),
            Some(_) => Err(Status::permission_denied("wrong API key")),
            None => Err(Status::unauthenticated(
                "this server requires an API key to create or import games: send `authorization: Bearer KEY` metadata",
            )),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Sends a command to a game's actor and waits for its answer. A finished game whose actor
/// was unloaded is reloaded from the log first.
async fn ask<T>(
    registry: &Registry,
    game_id: &str,
    make: impl FnOnce(Reply<T>) -> Command,
) -> Result<T, Status> {
    ask_game(registry, game_id, make)
        .await
        .map_err(|error| bounded(error.into()))
}

async fn ask_game<T>(
    registry: &Registry,
    game_id: &str,
    make: impl FnOnce(Reply<T>) -> Command,
) -> HostResult<T> {
    let (reply, answer) = oneshot::channel();
    let mut command = make(reply);
    let mut game: GameHandle = registry.get(game_id)?;
    // A reloaded finished game stays loaded for a whole quiet spell, so one reload is enough
    // unless that spell is near zero; a few tries cover that too.
    for _ in 0..3 {
        match game.commands.send(command).await {
            Ok(()) => {
                return answer
                    .await
                    .map_err(|_| HostError::Unavailable("the server is shutting down".into()))?
            }
            Err(mpsc::error::SendError(back)) => {
                command = back;
                game = registry.revive(game_id).await?;
            }
        }
    }
    Err(HostError::Unavailable(format!(
        "game {game_id} could not be reloaded: try again"
    )))
}

type LogStream = Pin<Box<dyn Stream<Item = Result<pb::LogRecord, Status>> + Send>>;
type UpdateStream = Pin<Box<dyn Stream<Item = Result<pb::Update, Status>> + Send>>;

#[tonic::async_trait]
impl Games for GamesService {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let created = async {
            self.check_api_key(&request)?;
            let request = request.into_inner();
            check_len("kind", &request.kind, MAX_KIND_BYTES)?;
            if request.kind.is_empty() {
                return Err(Status::invalid_argument(format!(
                    "kind is required: one of {}",
                    gangs_games::KINDS.join(", ")
                )));
            }
            self.registry
                .create(request)
                .await
                .map_err(|error| bounded(error.into()))
        }
        .await;
        crate::metrics::rpc_result("CreateGame", &created);
        Ok(Response::new(created?))
    }

    async fn join_game(
        &self,
        request: Request<pb::JoinGameRequest>,
    ) -> Result<Response<pb::JoinGameResponse>, Status> {
        let request = request.into_inner();
        check_game_id(&request.game_id)?;
        // Characters are counted by the game (at most MAX_NAME_LEN); bytes bound the work first.
        check_len("name", &request.name, 4 * MAX_NAME_LEN)?;
        check_len("join_id", &request.join_id, MAX_ACTION_ID_LEN)?;
        let answer = ask(&self.registry, &request.game_id, |reply| Command::Join {
            seat: request.seat,
            name: request.name,
            join_id: request.join_id,
            reply,
        })
        .await;
        crate::metrics::rpc_result("JoinGame", &answer);
        Ok(Response::new(answer?))
    }

    type WatchStream = crate::metrics::Watched<UpdateStream>;

    async fn watch(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let request = request.into_inner();
        check_game_id(&request.game_id)?;
        check_len("token", &request.token, MAX_TOKEN_BYTES)?;
        let stream = ask(&self.registry, &request.game_id, |reply| Command::Watch {
            token: request.token,
            from_seq: request.from_seq,
            reply,
        })
        .await;
        crate::metrics::rpc_result("Watch", &stream);
        let stream = stream?.map(|update| update.map_err(Status::from));
        Ok(Response::new(crate::metrics::Watched::new(Box::pin(
            stream,
        ))))
    }

    async fn act(
        &self,
        request: Request<pb::ActRequest>,
    ) -> Result<Response<pb::ActResponse>, Status> {
        let started = std::time::Instant::now();
        let request = request.into_inner();
        check_game_id(&request.game_id)?;
        check_len("token", &request.token, MAX_TOKEN_BYTES)?;
        check_len("action_id", &request.action_id, MAX_ACTION_ID_LEN)?;
        let action_bytes = request.action.as_ref().map_or(0, |a| a.encoded_len());
        if action_bytes > MAX_ACTION_BYTES {
            return Err(Status::invalid_argument(format!(
                "action is {action_bytes} bytes encoded, longer than its limit of {MAX_ACTION_BYTES}"
            )));
        }
        let game_id = request.game_id.clone();
        let answer = ask(&self.registry, &game_id, |reply| Command::Act {
            request,
            reply,
        })
        .await;
        crate::metrics::act_answered(started, &answer);
        Ok(Response::new(answer?))
    }

    type GetLogStream = LogStream;

    async fn get_log(
        &self,
        request: Request<pb::GetLogRequest>,
    ) -> Result<Response<LogStream>, Status> {
        let request = request.into_inner();
        check_game_id(&request.game_id)?;
        let records = ask(&self.registry, &request.game_id, |reply| Command::GetLog {
            from_seq: request.from_seq,
            reply,
        })
        .await;
        crate::metrics::rpc_result("GetLog", &records);
        let records = records?;
        Ok(Response::new(Box::pin(tokio_stream::iter(
            records.into_iter().map(Ok),
        ))))
    }

    async fn list_games(
        &self,
        _request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        Ok(Response::new(pb::ListGamesResponse {
            games: self.registry.list(),
        }))
    }

    async fn import_game(
        &self,
        request: Request<tonic::Streaming<pb::ImportGameRequest>>,
    ) -> Result<Response<pb::ImportGameResponse>, Status> {
        let imported = async {
            self.check_api_key(&request)?;
            let (header, records) = read_import(request.into_inner()).await?;
            self.registry
                .import(header, records)
                .await
                .map_err(|error| bounded(error.into()))
        }
        .await;
        crate::metrics::rpc_result("ImportGame", &imported);
        Ok(Response::new(imported?))
    }
}

/// The header and records an `ImportGame` stream carries, within [`MAX_IMPORT_BYTES`] and
/// [`MAX_IMPORT_RECORDS`] (each message is also within `--max-request-bytes`).
async fn read_import(
    mut parts: tonic::Streaming<pb::ImportGameRequest>,
) -> Result<(Option<Header>, Vec<pb::LogRecord>), Status> {
    let mut header = None;
    let mut records = Vec::new();
    let mut bytes = 0;
    let mut first = true;
    while let Some(part) = parts.message().await? {
        bytes += part.encoded_len();
        if bytes > MAX_IMPORT_BYTES {
            return Err(Status::resource_exhausted(format!(
                "the game is larger than the import limit of {MAX_IMPORT_BYTES} bytes"
            )));
        }
        if records.len() + part.records.len() > MAX_IMPORT_RECORDS {
            return Err(Status::resource_exhausted(format!(
                "the game has more than the import limit of {MAX_IMPORT_RECORDS} records"
            )));
        }
        if !part.header.is_empty() {
            if !first {
                return Err(Status::invalid_argument(
                    "the header goes in the first message only",
                ));
            }
            header = Some(Header::from_line(&part.header).map_err(|e| {
                Status::invalid_argument(format!("the header is not a game file's: {e}"))
            })?);
        }
        first = false;
        records.extend(part.records);
    }
    Ok((header, records))
}
