//! The `gangs.v1.Games` gRPC service: each method admits its caller by the front's rule for
//! it, then serves the same [`GameCall`] an in-process caller makes (`call.rs`).

use super::call::{Answer, Caller, GameCall};
use super::{Credentials, DirectoryStream, GamesService, LogStream, UpdateStream};
use crate::bounds::{MAX_IMPORT_BYTES, MAX_IMPORT_RECORDS};
use crate::directory::Filter;
use crate::error::{HostError, HostResult};
use crate::front::access;
use crate::front::Principal;
use crate::limits::Client;
use gangs_games::game_file::Header;
use gangs_proto::v1 as pb;
use pb::games_server::Games;
use prost::Message;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status};

impl GamesService {
    /// A gRPC call admitted as `principal` (not a creation: no per-client limit counts it),
    /// served as the call `make` makes of its message; its credentials go with it if it is
    /// forwarded.
    async fn serve_grpc<M>(
        &self,
        principal: &Principal,
        request: Request<M>,
        make: impl FnOnce(M) -> GameCall,
    ) -> HostResult<Answer> {
        let (credentials, message) = Credentials::split(request);
        let caller = Caller {
            principal,
            credentials,
            client: Client::Unknown,
            connection: None,
        };
        self.call(&caller, make(message)).await
    }
}

/// The gRPC methods: the front admits the caller and checks the request's bounds
/// ([`Front::accept`] by the method's rule in `front/access.rs`), then the host's own typed
/// method serves it; its error becomes a status by the front's one mapping (`front/errors.rs`).
#[tonic::async_trait]
impl Games for GamesService {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let principal = self.front.accept(&request, &access::CREATE_GAME)?;
        let client = self.client_of(&request);
        let (credentials, request) = Credentials::split(request);
        let caller = Caller {
            principal: &principal,
            credentials,
            client,
            connection: None,
        };
        Ok(Response::new(self.create_game_for(&caller, request).await?))
    }

    async fn cancel_game(
        &self,
        request: Request<pb::CancelGameRequest>,
    ) -> Result<Response<pb::CancelGameResponse>, Status> {
        let principal = self.front.accept(&request, &access::CANCEL_GAME)?;
        let answer = self
            .serve_grpc(&principal, request, GameCall::Cancel)
            .await?
            .into_cancelled()?;
        Ok(Response::new(answer))
    }

    async fn join_game(
        &self,
        request: Request<pb::JoinGameRequest>,
    ) -> Result<Response<pb::JoinGameResponse>, Status> {
        let principal = self.front.accept(&request, &access::JOIN_GAME)?;
        let joined = self
            .serve_grpc(&principal, request, GameCall::Join)
            .await?
            .into_joined()?;
        Ok(Response::new(joined))
    }

    type WatchStream = UpdateStream;

    /// The gRPC route serves `watch_encoded` itself (`watch_route.rs`); this decodes its
    /// updates for a caller of the trait.
    async fn watch(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<Response<UpdateStream>, Status> {
        let encoded = self.watch_encoded(request).await?;
        let decoded = encoded.map(|update| {
            update.and_then(|bytes| {
                pb::Update::decode(bytes.message()).map_err(|e| {
                    HostError::internal(format!("an update does not decode: {e}")).into()
                })
            })
        });
        Ok(Response::new(Box::pin(decoded)))
    }

    async fn act(
        &self,
        request: Request<pb::ActRequest>,
    ) -> Result<Response<pb::ActResponse>, Status> {
        let (game_id, token) = (
            request.get_ref().game_id.clone(),
            request.get_ref().token.clone(),
        );
        let refused = |status: &Status| self.front.refusals().note(&game_id, &token, "Act", status);
        let principal = self
            .front
            .accept(&request, &access::ACT)
            .inspect_err(refused)?;
        let acted = self
            .serve_grpc(&principal, request, GameCall::Act)
            .await
            .and_then(Answer::into_acted)
            .map_err(Status::from)
            .inspect_err(refused)?;
        Ok(Response::new(acted))
    }

    type GetLogStream = LogStream;

    async fn get_log(
        &self,
        request: Request<pb::GetLogRequest>,
    ) -> Result<Response<LogStream>, Status> {
        let principal = self.front.accept(&request, &access::GET_LOG)?;
        let records = self
            .serve_grpc(&principal, request, GameCall::GetLog)
            .await?
            .into_log()?;
        Ok(Response::new(Box::pin(
            records.map(|record| record.map_err(Status::from)),
        )))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let principal = self.front.accept(&request, &access::LIST_GAMES)?;
        let listed = self
            .serve_grpc(&principal, request, GameCall::List)
            .await?
            .into_listed()?;
        Ok(Response::new(listed))
    }

    type WatchGamesStream = DirectoryStream;

    async fn watch_games(
        &self,
        request: Request<pb::WatchGamesRequest>,
    ) -> Result<Response<DirectoryStream>, Status> {
        self.front.accept(&request, &access::WATCH_GAMES)?;
        let request = request.into_inner();
        let filter = Filter::new(request.kind, &request.statuses)?;
        let stream = self
            .directory
            .watch(self.registry.clone(), &request.from_cursor, filter)
            .await?;
        Ok(Response::new(Box::pin(
            stream.map(|event| event.map_err(Status::from)),
        )))
    }

    async fn import_game(
        &self,
        request: Request<tonic::Streaming<pb::ImportGameRequest>>,
    ) -> Result<Response<pb::ImportGameResponse>, Status> {
        let imported: Result<_, Status> = async {
            self.front.admit(&request, &access::IMPORT_GAME)?;
            let (header, records) = read_import(request.into_inner()).await?;
            Ok(self.registry.import(header, records).await?)
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
) -> HostResult<(Option<Header>, Vec<pb::LogRecord>)> {
    let mut header = None;
    let mut records = Vec::new();
    let mut bytes = 0;
    let mut first = true;
    while let Some(part) = parts.message().await? {
        bytes += part.encoded_len();
        if bytes > MAX_IMPORT_BYTES {
            return Err(HostError::resource_exhausted(format!(
                "the game is larger than the import limit of {MAX_IMPORT_BYTES} bytes"
            )));
        }
        if records.len() + part.records.len() > MAX_IMPORT_RECORDS {
            return Err(HostError::resource_exhausted(format!(
                "the game has more than the import limit of {MAX_IMPORT_RECORDS} records"
            )));
        }
        if !part.header.is_empty() {
            if !first {
                return Err(HostError::invalid_argument(
                    "the header goes in the first message only",
                ));
            }
            header = Some(Header::from_line(&part.header).map_err(|e| {
                HostError::invalid_argument(format!("the header is not a game file's: {e}"))
            })?);
        }
        first = false;
        records.extend(part.records);
    }
    Ok((header, records))
}
