//! The `gangs.v1.Games` gRPC service: checks each request's shape, finds the game, and hands
//! the request to the game's actor. No game logic here.

use crate::actor::{Command, GameHandle, UpdateStream};
use crate::cluster::{Cluster, Route};
use crate::registry::Registry;
use gangs_proto::v1 as pb;
use gangs_proto::v1::games_client::GamesClient;
use pb::games_server::Games;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::Stream;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

pub struct GamesService {
    registry: Registry,
    api_key: Option<String>,
    /// Set when several nodes share the log: calls for a game run elsewhere are forwarded.
    cluster: Option<Arc<Cluster>>,
}

impl GamesService {
    pub fn new(registry: Registry, api_key: Option<String>) -> Self {
        GamesService {
            registry,
            api_key,
            cluster: None,
        }
    }

    /// A node of a cluster (`--store nats://…`): see `cluster.rs`.
    pub fn with_cluster(mut self, cluster: Arc<Cluster>) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// The owner's client when another node runs `game_id`; None to serve it here.
    async fn forward_to(&self, game_id: &str) -> Result<Option<GamesClient<Channel>>, Status> {
        let Some(cluster) = &self.cluster else {
            return Ok(None);
        };
        if game_id.is_empty() {
            return Err(Status::invalid_argument("game_id is required"));
        }
        match cluster.route(game_id, &self.registry).await? {
            Route::Local => Ok(None),
            Route::Owner(client) => Ok(Some(client)),
        }
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
                "this server requires an API key to create games: send `authorization: Bearer KEY` metadata",
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
    make: impl FnOnce(oneshot::Sender<Result<T, Status>>) -> Command,
) -> Result<T, Status> {
    let (reply, answer) = oneshot::channel();
    let mut command = make(reply);
    let mut game: GameHandle = match registry.get(game_id) {
        Ok(game) => game,
        // A node of a cluster knows only the games it runs: the others are in the log.
        Err(status) if status.code() == tonic::Code::NotFound && registry.is_lazy() => {
            registry.revive(game_id).await?
        }
        Err(status) => return Err(status),
    };
    // A reloaded finished game stays loaded for a whole quiet spell, so one reload is enough
    // unless that spell is near zero; a few tries cover that too.
    for _ in 0..3 {
        match game.commands.send(command).await {
            Ok(()) => {
                return answer
                    .await
                    .map_err(|_| Status::unavailable("the server is shutting down"))?
            }
            Err(mpsc::error::SendError(back)) => {
                command = back;
                game = registry.revive(game_id).await?;
            }
        }
    }
    Err(Status::unavailable(format!(
        "game {game_id} could not be reloaded: try again"
    )))
}

type LogStream = Pin<Box<dyn Stream<Item = Result<pb::LogRecord, Status>> + Send>>;

#[tonic::async_trait]
impl Games for GamesService {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        self.check_api_key(&request)?;
        let request = request.into_inner();
        if request.kind.is_empty() {
            return Err(Status::invalid_argument(format!(
                "kind is required: one of {}",
                gangs_games::KINDS.join(", ")
            )));
        }
        let created = self.registry.create(request).await?;
        if let Some(cluster) = &self.cluster {
            cluster.claim_new(&created.game_id).await?;
        }
        Ok(Response::new(created))
    }

    async fn join_game(
        &self,
        request: Request<pb::JoinGameRequest>,
    ) -> Result<Response<pb::JoinGameResponse>, Status> {
        let request = request.into_inner();
        if let Some(mut owner) = self.forward_to(&request.game_id).await? {
            return owner.join_game(request).await;
        }
        let answer = ask(&self.registry, &request.game_id, |reply| Command::Join {
            seat: request.seat,
            name: request.name,
            join_id: request.join_id,
            reply,
        })
        .await?;
        Ok(Response::new(answer))
    }

    type WatchStream = UpdateStream;

    async fn watch(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<Response<UpdateStream>, Status> {
        let request = request.into_inner();
        if let Some(mut owner) = self.forward_to(&request.game_id).await? {
            let stream = owner.watch(request).await?.into_inner();
            return Ok(Response::new(Box::pin(stream) as UpdateStream));
        }
        let stream = ask(&self.registry, &request.game_id, |reply| Command::Watch {
            token: request.token,
            from_seq: request.from_seq,
            reply,
        })
        .await?;
        Ok(Response::new(stream))
    }

    async fn act(
        &self,
        request: Request<pb::ActRequest>,
    ) -> Result<Response<pb::ActResponse>, Status> {
        let request = request.into_inner();
        if let Some(mut owner) = self.forward_to(&request.game_id).await? {
            return owner.act(request).await;
        }
        let game_id = request.game_id.clone();
        let answer = ask(&self.registry, &game_id, |reply| Command::Act {
            request,
            reply,
        })
        .await?;
        Ok(Response::new(answer))
    }

    type GetLogStream = LogStream;

    async fn get_log(
        &self,
        request: Request<pb::GetLogRequest>,
    ) -> Result<Response<LogStream>, Status> {
        let request = request.into_inner();
        if let Some(mut owner) = self.forward_to(&request.game_id).await? {
            let stream = owner.get_log(request).await?.into_inner();
            return Ok(Response::new(Box::pin(stream) as LogStream));
        }
        let records = ask(&self.registry, &request.game_id, |reply| Command::GetLog {
            from_seq: request.from_seq,
            reply,
        })
        .await?;
        Ok(Response::new(Box::pin(tokio_stream::iter(
            records.into_iter().map(Ok),
        ))))
    }

    async fn list_games(
        &self,
        _request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let games = match &self.cluster {
            Some(cluster) => cluster.list(self.registry.list()),
            None => self.registry.list(),
        };
        Ok(Response::new(pb::ListGamesResponse { games }))
    }
}
