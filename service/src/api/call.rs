//! One call type. Every `Games` call that names a game or makes one ([`GameCall`]) takes the
//! same way: admitted by the front, placed by [`GamesService::route`] (here, or the node that
//! runs its game), then served here ([`GamesService::serve_here`]) or sent whole to that node
//! by the one forwarder ([`GamesService::forward`]). `ListGames` takes it too: the cluster's
//! directory answers on any node, so it is always placed here.

use super::{ask_game, holding, Credentials, GamesService, HostEncodedStream, HostLogStream};
use crate::actor::Command;
use crate::cluster::Route;
use crate::error::{HostError, HostResult};
use crate::front::Principal;
use crate::limits::Client;
use crate::registry::ListQuery;
use gangs_proto::v1 as pb;
use gangs_proto::v1::games_client::GamesClient;
use std::borrow::Cow;
use tokio_stream::StreamExt;
use tonic::transport::Channel;

/// A call of the `Games` service that a node serves or forwards.
pub(crate) enum GameCall {
    Create(pb::CreateGameRequest),
    Join(pb::JoinGameRequest),
    Act(pb::ActRequest),
    Cancel(pb::CancelGameRequest),
    Watch(pb::WatchRequest),
    GetLog(pb::GetLogRequest),
    List(pb::ListGamesRequest),
}

/// What a [`GameCall`] answers, variant for variant.
pub(crate) enum Answer {
    Created(pb::CreateGameResponse),
    Joined(pb::JoinGameResponse),
    Acted(pb::ActResponse),
    Cancelled(pb::CancelGameResponse),
    Watching(HostEncodedStream),
    Log(HostLogStream),
    Listed(pb::ListGamesResponse),
}

/// Who makes a call, as far as serving it needs: the admitted principal, the credentials a
/// forwarded call carries on (none in process), the client the per-client limits count (read
/// only by a creation: other calls leave it `Unknown` and spare the hot path the key's
/// parsing), and the connection a watcher counts against (none: against the game only).
pub(crate) struct Caller<'a> {
    pub principal: &'a Principal,
    pub credentials: Credentials,
    pub client: Client,
    pub connection: Option<std::net::SocketAddr>,
}

/// Where [`GamesService::route`] places a call.
pub(crate) enum Place {
    Here,
    /// The node that runs the call's game.
    There(GamesClient<Channel>),
}

impl GameCall {
    /// The game the call is for: the one its request names, or the one a creation's
    /// `create_id` names. `None`: a new game with a random id, or the list of games.
    pub(crate) fn game_id(&self) -> Option<Cow<'_, str>> {
        match self {
            GameCall::Create(request) if request.create_id.is_empty() => None,
            GameCall::Create(request) => Some(Cow::Owned(crate::registry::game_id_of_create_id(
                &request.create_id,
            ))),
            _ => self.touches().map(|(game_id, _)| Cow::Borrowed(game_id)),
        }
    }

    /// The game an existing game's call touches, and the seat token it uses (empty: none):
    /// what a bot key's rights are checked against. `None` for a creation and the list.
    fn touches(&self) -> Option<(&str, &str)> {
        match self {
            GameCall::Create(_) | GameCall::List(_) => None,
            GameCall::Join(request) => Some((&request.game_id, "")),
            GameCall::Cancel(request) => Some((&request.game_id, "")),
            GameCall::GetLog(request) => Some((&request.game_id, "")),
            GameCall::Act(request) => Some((&request.game_id, &request.token)),
            GameCall::Watch(request) => Some((&request.game_id, &request.token)),
        }
    }
}

/// `Answer::into_*`: the answer of the variant its call asked for. Each call's answer is made
/// by its own arm of `serve_here` or `forward`, so another variant is a bug, reported as one.
macro_rules! answers {
    ($($method:ident: $variant:ident => $answer:ty),* $(,)?) => {
        impl Answer {
            $(pub(crate) fn $method(self) -> HostResult<$answer> {
                match self {
                    Answer::$variant(answer) => Ok(answer),
                    _ => Err(HostError::internal(concat!(
                        "a call answered with another call's answer (expected ",
                        stringify!($variant),
                        ")"
                    ))),
                }
            })*
        }
    };
}
answers!(
    into_created: Created => pb::CreateGameResponse,
    into_joined: Joined => pb::JoinGameResponse,
    into_acted: Acted => pb::ActResponse,
    into_cancelled: Cancelled => pb::CancelGameResponse,
    into_watching: Watching => HostEncodedStream,
    into_log: Log => HostLogStream,
    into_listed: Listed => pb::ListGamesResponse,
);

impl GamesService {
    /// Serves `call` for `caller`: routed, then served here or forwarded. A watcher's slot in
    /// the limits is taken once the call is placed (here or there), and held by its stream.
    pub(crate) async fn call(&self, caller: &Caller<'_>, call: GameCall) -> HostResult<Answer> {
        let place = self.route(caller.principal, &call).await?;
        let slot = match &call {
            GameCall::Watch(request) => Some(
                self.limits
                    .open_watch(&request.game_id, caller.connection)?,
            ),
            _ => None,
        };
        let answer = match place {
            Place::Here => self.serve_here(caller, call).await?,
            Place::There(owner) => Box::pin(self.forward(owner, &caller.credentials, call))
                .await
                .map_err(crate::cluster::forward_failed)?,
        };
        Ok(match (answer, slot) {
            (Answer::Watching(stream), Some(slot)) => {
                Answer::Watching(Box::pin(stream.map(holding(slot))))
            }
            (answer, _) => answer,
        })
    }

    /// Where `call` runs, the one place that decides: a bot key may touch only its ladder's
    /// games ([`crate::front::Front::may_play`]); on a single node, here; on a cluster, the node
    /// that holds its game's shard (a new game with a random id: a shard this node holds if
    /// any; the list: here, from the cluster's directory). A call another node forwarded is
    /// never forwarded again.
    async fn route(&self, principal: &Principal, call: &GameCall) -> HostResult<Place> {
        if let Some((game_id, token)) = call.touches() {
            self.front.may_play(principal, game_id, token).await?;
        }
        let Some(cluster) = &self.cluster else {
            return Ok(Place::Here);
        };
        let forwarded = *principal == Principal::Forwarded;
        let route = match call.game_id() {
            // The list is the cluster's directory, which every node follows.
            None if matches!(call, GameCall::List(_)) => return Ok(Place::Here),
            None => {
                if forwarded && cluster.shard_counts().1 == 0 {
                    return Err(HostError::unavailable(
                        "this node holds no shard yet: retry in a second",
                    ));
                }
                cluster.place_new()?
            }
            // Boxed: a cluster's routing is a large future, which would otherwise make every
            // call's future as large, on a single server too.
            Some(game_id) => Box::pin(cluster.route(&game_id, &self.registry, forwarded)).await?,
        };
        Ok(match route {
            Route::Local => Place::Here,
            Route::Owner(owner) => Place::There(owner),
        })
    }

    /// `call` sent whole to `owner`, the node that runs its game, with the caller's own
    /// credentials (none for an in-process caller) and the cluster's mark (that node trusts
    /// this one's admission): its answer is the answer.
    async fn forward(
        &self,
        mut owner: GamesClient<Channel>,
        credentials: &Credentials,
        call: GameCall,
    ) -> Result<Answer, tonic::Status> {
        let cluster = self
            .cluster
            .as_ref()
            .expect("only a cluster's calls are placed on another node");
        Ok(match call {
            GameCall::Create(request) => Answer::Created(
                owner
                    .create_game(credentials.forwarded(request, cluster))
                    .await?
                    .into_inner(),
            ),
            GameCall::Join(request) => Answer::Joined(
                owner
                    .join_game(credentials.forwarded(request, cluster))
                    .await?
                    .into_inner(),
            ),
            GameCall::Act(request) => Answer::Acted(
                owner
                    .act(credentials.forwarded(request, cluster))
                    .await?
                    .into_inner(),
            ),
            GameCall::Cancel(request) => Answer::Cancelled(
                owner
                    .cancel_game(credentials.forwarded(request, cluster))
                    .await?
                    .into_inner(),
            ),
            GameCall::GetLog(request) => {
                let stream = owner
                    .get_log(credentials.forwarded(request, cluster))
                    .await?
                    .into_inner();
                Answer::Log(Box::pin(
                    stream.map(|record| record.map_err(HostError::from)),
                ))
            }
            GameCall::Watch(request) => {
                // Decoded and encoded again: a forwarded stream is the rarer path of a cluster.
                let stream = owner
                    .watch(credentials.forwarded(request, cluster))
                    .await?
                    .into_inner();
                Answer::Watching(self.ended_when_stopping(stream))
            }
            GameCall::List(request) => Answer::Listed(
                owner
                    .list_games(credentials.forwarded(request, cluster))
                    .await?
                    .into_inner(),
            ),
        })
    }

    /// A stream forwarded from another node, ended when this node stops, like the streams of
    /// the games it runs (the shutdown waits for every stream): the watcher resumes by seq
    /// through another node. The owner's stream ends the merged one (a None after its last
    /// item): the shutdown signal never ends by itself.
    fn ended_when_stopping(&self, stream: tonic::Streaming<pb::Update>) -> HostEncodedStream {
        let stopping = tokio_stream::wrappers::WatchStream::new(self.directory.closing())
            .filter(|closed| *closed)
            .map(|_| {
                Some(Err(HostError::unavailable(
                    "this node is stopping: resume the watch from your last seq through another node",
                )))
            });
        let encoded = stream
            .map(|update| {
                Some(
                    update
                        .map(|u| crate::actor::Encoded::of(&u))
                        .map_err(HostError::from),
                )
            })
            .chain(tokio_stream::once(None))
            .merge(stopping)
            .take_while(Option::is_some)
            .map(|item| item.expect("taken while some"));
        Box::pin(encoded)
    }

    /// `call` served by this node.
    async fn serve_here(&self, caller: &Caller<'_>, call: GameCall) -> HostResult<Answer> {
        Ok(match call {
            GameCall::Create(request) => {
                let registry = &self.registry;
                let creator = caller.client.log_id();
                let admission = self.limits.admit_create(
                    caller.client.clone(),
                    registry.live_games(),
                    |id| registry.is_live(id),
                )?;
                let created = registry.create_for(request, creator).await?;
                admission.created(&created.game_id);
                if let Some(cluster) = &self.cluster {
                    cluster.list_new(registry.summary(&created.game_id)).await?;
                }
                Answer::Created(created)
            }
            GameCall::Join(request) => {
                let game_id = request.game_id.clone();
                let answer = self
                    .ask_here(&game_id, |reply| Command::Join {
                        request: Box::new(request),
                        reply,
                    })
                    .await;
                crate::metrics::rpc_result("JoinGame", &answer);
                Answer::Joined(answer?)
            }
            GameCall::Act(request) => {
                let started = std::time::Instant::now();
                let game_id = request.game_id.clone();
                let answer = self
                    .ask_here(&game_id, |reply| Command::Act {
                        request: Box::new(request),
                        reply,
                    })
                    .await;
                crate::metrics::act_answered(started, &answer);
                Answer::Acted(answer?)
            }
            GameCall::Cancel(request) => Answer::Cancelled(
                self.ask_here(&request.game_id, |reply| Command::Cancel {
                    reason: request.reason,
                    reply,
                })
                .await?,
            ),
            GameCall::Watch(request) => {
                let stream = ask_game(&self.registry, &request.game_id, |reply| Command::Watch {
                    token: request.token,
                    from_seq: request.from_seq,
                    views: gangs_games::update::WithView::of(request.views),
                    reply,
                })
                .await;
                crate::metrics::rpc_result("Watch", &stream);
                Answer::Watching(stream?)
            }
            GameCall::GetLog(request) => Answer::Log(self.log_here(request).await?),
            GameCall::List(request) => Answer::Listed(self.list_here(request)?),
        })
    }

    /// A game's records from `from_seq`, as this node keeps them (a damaged game's from the
    /// registry, which holds what its log could still say).
    async fn log_here(&self, request: pb::GetLogRequest) -> HostResult<HostLogStream> {
        let records = match self
            .registry
            .damaged_log(&request.game_id, request.from_seq)
            .await
        {
            Some(records) => records,
            None => {
                ask_game(&self.registry, &request.game_id, |reply| Command::GetLog {
                    from_seq: request.from_seq,
                    reply,
                })
                .await
            }
        };
        crate::metrics::rpc_result("GetLog", &records);
        Ok(Box::pin(tokio_stream::iter(records?.into_iter().map(Ok))))
    }

    /// A page of the games: this node's directory, or on a cluster the cluster's.
    fn list_here(&self, request: pb::ListGamesRequest) -> HostResult<pb::ListGamesResponse> {
        let status = match pb::GameStatus::try_from(request.status) {
            Ok(pb::GameStatus::Unspecified) => None,
            Ok(status) => Some(status),
            Err(_) => {
                return Err(HostError::invalid_argument(format!(
                    "unknown status {}: use a GameStatus value",
                    request.status
                )))
            }
        };
        let query = ListQuery {
            page_size: request.page_size,
            page_token: request.page_token,
            kind: request.kind,
            status,
            created_after_unix_ms: request.created_after_unix_ms,
            created_before_unix_ms: request.created_before_unix_ms,
            damaged_only: request.damaged_only,
        };
        let (games, next_page_token) = match &self.cluster {
            Some(cluster) => {
                crate::registry::page(cluster.list(self.registry.summaries()), &query)?
            }
            None => self.registry.list(&query)?,
        };
        Ok(pb::ListGamesResponse {
            games,
            next_page_token,
        })
    }
}
