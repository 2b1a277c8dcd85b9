//! The `gangs.v1.Games` service, and the host's own typed API under it. A gRPC call is admitted
//! by the front (`front/`: its caller and its bounds), then served by the same typed method an
//! in-process caller uses (the ladders, the web viewer: `GamesService::create_game_as` and the
//! others, given the caller's [`Principal`]), which routes a call for one game (here, or
//! forwarded to the node that runs it: `GamesService::route`, the one place that decides) and
//! hands the request to the game's actor. No game logic here; errors are [`HostError`]s, made
//! statuses by the front (`front/errors.rs`).

use crate::actor::{Command, Encoded, GameHandle, Reply};
use crate::bounds::{Bounded, MAX_IMPORT_BYTES, MAX_IMPORT_RECORDS};
use crate::cluster::{Cluster, Route};
use crate::directory::{Directory, Filter};
use crate::error::{HostError, HostResult};
use crate::front::access::{self, bearer};
use crate::front::{Front, Principal};
use crate::limits::{Client, Limits};
use crate::registry::{ListQuery, Registry};
use gangs_games::game_file::Header;
use gangs_proto::v1 as pb;
use gangs_proto::v1::games_client::GamesClient;
use pb::games_server::Games;
use prost::Message;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::{Stream, StreamExt};
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

/// Cheap to clone: every field is a handle (the web viewer reads through a clone).
#[derive(Clone)]
pub struct GamesService {
    registry: Registry,
    /// Who may call what (`front/`).
    front: Front,
    limits: Limits,
    /// Set when several nodes share the log: calls for a game run elsewhere are forwarded.
    cluster: Option<Arc<Cluster>>,
    /// The `WatchGames` streams.
    directory: Directory,
}

pub use crate::front::Keys;

impl GamesService {
    pub fn new(registry: Registry, api_key: Option<String>) -> Self {
        GamesService::with_keys(
            registry,
            Keys {
                admin: api_key,
                player: None,
            },
        )
    }

    /// A node of a cluster (`--store nats://…`): see `cluster/`.
    pub fn with_cluster(mut self, cluster: Arc<Cluster>) -> Self {
        self.directory = self.directory.clone().with_cluster(cluster.clone());
        self.front = self.front.clone().with_cluster(cluster.clone());
        self.cluster = Some(cluster);
        self
    }

    /// Where a call for one game runs, once its caller is known: the game a bot key may touch
    /// ([`Front::may_play`]), then here or another node. Served here, the request comes back
    /// ([`Routed::Here`]); run by another node of a cluster, `forward` sends it there with the
    /// caller's own credentials (none for an in-process caller) and the cluster's mark (that
    /// node trusts this one's admission), and its answer is the answer.
    async fn route<R, T, F>(
        &self,
        principal: &Principal,
        credentials: &Credentials,
        request: R,
        forward: impl FnOnce(GamesClient<Channel>, Request<R>) -> F,
    ) -> HostResult<Routed<R, T>>
    where
        R: ForGame,
        F: Future<Output = Result<Response<T>, Status>>,
    {
        let forwarded = *principal == Principal::Forwarded;
        self.front
            .may_play(principal, request.game_id(), request.token())
            .await?;
        let Some(cluster) = &self.cluster else {
            return Ok(Routed::Here(request));
        };
        // Boxed: a cluster's routing and a forwarded call are large futures, which would
        // otherwise make every call's future as large, on a single server too.
        match Box::pin(cluster.route(request.game_id(), &self.registry, forwarded)).await? {
            Route::Local => Ok(Routed::Here(request)),
            Route::Owner(owner) => Ok(Routed::There(
                Box::pin(forward(owner, credentials.forwarded(request, cluster)))
                    .await
                    .map_err(crate::cluster::forward_failed)?,
            )),
        }
    }

    pub fn with_keys(registry: Registry, keys: Keys) -> Self {
        GamesService {
            registry,
            front: Front::new(keys),
            limits: Limits::new(Default::default()),
            cluster: None,
            directory: Directory::default(),
        }
    }

    /// The `WatchGames` streams, to end them at shutdown.
    pub fn directory(&self) -> Directory {
        self.directory.clone()
    }

    /// The server's limits (`--max-live-games` and the others; see `limits.rs`).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Who is calling, for the per-client limits: its key once the front admitted it (a
    /// server without keys does not trust any), else its IP address.
    fn client_of<T>(&self, request: &Request<T>) -> Client {
        match bearer(request) {
            Ok(Some(key)) if self.front.keyed() => Client::of_key(key),
            _ => request
                .remote_addr()
                .map_or(Client::Unknown, |a| Client::Address(a.ip())),
        }
    }

    /// Who may call what, and what each ladder bot's key may do (the ladders keep it).
    pub fn front(&self) -> &Front {
        &self.front
    }
}

/// The host's own API: each method of the `Games` service for a caller already admitted, given
/// as its [`Principal`] (the gRPC methods below, once the front admitted theirs; the ladder
/// NAME; the web viewer's logged-in key, made a principal by [`Front::principal_of`]). A call
/// for one game goes through [`GamesService::route`] like any other: on a cluster, to the node
/// that runs the game, where it is trusted on the cluster's mark. Nothing here reads a key.
impl GamesService {
    /// `CreateGame` for `principal`.
    pub async fn create_game_as(
        &self,
        principal: &Principal,
        request: pb::CreateGameRequest,
    ) -> HostResult<pb::CreateGameResponse> {
        request.check_bounds()?;
        self.create_game_for(
            principal,
            client_of_principal(principal),
            &Credentials(None),
            request,
        )
        .await
    }

    /// `JoinGame` for `principal`.
    pub async fn join_game_as(
        &self,
        principal: &Principal,
        request: pb::JoinGameRequest,
    ) -> HostResult<pb::JoinGameResponse> {
        request.check_bounds()?;
        self.join_game_for(principal, &Credentials(None), request)
            .await
    }

    /// `Act` for `principal`.
    pub async fn act_as(
        &self,
        principal: &Principal,
        request: pb::ActRequest,
    ) -> HostResult<pb::ActResponse> {
        request.check_bounds()?;
        self.act_for(principal, &Credentials(None), request).await
    }

    /// `CancelGame` for `principal`.
    pub async fn cancel_game_as(
        &self,
        principal: &Principal,
        request: pb::CancelGameRequest,
    ) -> HostResult<pb::CancelGameResponse> {
        request.check_bounds()?;
        self.cancel_game_for(principal, &Credentials(None), request)
            .await
    }

    /// `GetLog` for `principal`: the records, read to the end.
    pub async fn get_log_as(
        &self,
        principal: &Principal,
        request: pb::GetLogRequest,
    ) -> HostResult<Vec<pb::LogRecord>> {
        request.check_bounds()?;
        let mut stream = self
            .get_log_for(principal, &Credentials(None), request)
            .await?;
        let mut records = Vec::new();
        while let Some(record) = stream.next().await {
            records.push(record?);
        }
        Ok(records)
    }

    /// `ListGames` for `principal`.
    pub async fn list_games_as(
        &self,
        _principal: &Principal,
        request: pb::ListGamesRequest,
    ) -> HostResult<pb::ListGamesResponse> {
        request.check_bounds()?;
        self.list_games_for(request)
    }

    /// `Watch` for `principal`: the updates, decoded (the gRPC route writes them encoded,
    /// `watch_route.rs`). The watcher's slot in the limits (counted against the game) is held
    /// by the stream.
    pub async fn watch_as(
        &self,
        principal: &Principal,
        request: pb::WatchRequest,
    ) -> HostResult<HostUpdateStream> {
        request.check_bounds()?;
        let encoded = self
            .watch_for(principal, &Credentials(None), None, request)
            .await?;
        let decoded = crate::metrics::Watched::new(encoded).map(|update| {
            update.and_then(|bytes| {
                pb::Update::decode(bytes.message())
                    .map_err(|e| HostError::internal(format!("an update does not decode: {e}")))
            })
        });
        Ok(Box::pin(decoded))
    }
}

/// The per-client limits' client of an in-process caller: a ladder counts as itself (its games
/// under its own name).
fn client_of_principal(principal: &Principal) -> Client {
    match principal {
        Principal::Ladder(name) => Client::of_key(&format!("ladder {name}")),
        _ => Client::Unknown,
    }
}

impl GamesService {
    /// A game's answer from its actor here. A refusal is judged on this node's memory of the
    /// game, which is the truth only while this node's lease on the game's shard is fresh: on a
    /// cluster node whose lease went stale meanwhile (NATS unreachable, the node paused),
    /// another node may have moved the game on, so the refusal answers UNAVAILABLE and the
    /// client's retry reaches the game where it runs. (An accepted action is safe either way:
    /// the stream refuses a stale append.)
    async fn ask_here<T>(
        &self,
        game_id: &str,
        make: impl FnOnce(Reply<T>) -> Command,
    ) -> HostResult<T> {
        let answer = ask_game(&self.registry, game_id, make).await;
        match (&answer, &self.cluster) {
            (Err(error), Some(cluster))
                if !error.is_unavailable() && !cluster.answers_for(game_id) =>
            {
                Err(HostError::unavailable(format!(
                    "game {game_id} may have moved to another node (this node's lease on it was not renewed lately): retry"
                )))
            }
            _ => answer,
        }
    }

    /// In-process, for a ladder's hosted bots: what the bot of the seat of `token` in `game_id`
    /// reports of its decision awaited at `expected_seq` (running: the seat's clock starts; or
    /// failed with a cause: its default action is played, logged as `timed_out` with the
    /// cause). Hosted bots run on a single node, which runs their games.
    pub async fn hosted_decision(
        &self,
        game_id: &str,
        token: String,
        expected_seq: u64,
        decision: crate::actor::HostedDecision,
    ) -> HostResult<()> {
        ask_game(&self.registry, game_id, |reply| Command::Hosted {
            report: Box::new(crate::actor::HostedReport {
                token,
                expected_seq,
                decision,
            }),
            reply,
        })
        .await
    }

    /// `Watch` from a gRPC client: the stream of a seat's (or the spectators') updates, each
    /// encoded once for its whole audience and passed to the wire as it is (`watch_route.rs`).
    pub(crate) async fn watch_encoded(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<crate::metrics::Watched<EncodedStream>, Status> {
        let (game_id, token) = (
            request.get_ref().game_id.clone(),
            request.get_ref().token.clone(),
        );
        let principal = self
            .front
            .accept(&request, &access::WATCH)
            .inspect_err(|status| {
                self.front
                    .refusals()
                    .note(&game_id, &token, "Watch", status)
            })?;
        let peer = request.remote_addr();
        // A stream another node forwarded was counted there against its client's connection;
        // here it counts against the game only. The connection between two nodes carries the
        // streams of all their clients: counted per connection, a few hundred watchers through
        // one node would exhaust `--max-watchers-per-connection` for everyone.
        let connection = if principal == Principal::Forwarded {
            None
        } else {
            peer
        };
        let (credentials, request) = Credentials::split(request);
        let stream = self
            .watch_for(&principal, &credentials, connection, request)
            .await
            .map_err(Status::from)
            .inspect_err(|status| {
                self.front
                    .refusals()
                    .note(&game_id, &token, "Watch", status)
            })?;
        Ok(crate::metrics::Watched::new(
            Box::pin(stream.map(|update| update.map_err(Status::from))) as EncodedStream,
        ))
    }

    /// `Watch` for an admitted caller, its slot counted against `connection` (none: against
    /// the game only). The watcher's slot in the limits (here or for a forwarded stream) is
    /// held by the stream: it is free again when the caller drops it.
    async fn watch_for(
        &self,
        principal: &Principal,
        credentials: &Credentials,
        connection: Option<std::net::SocketAddr>,
        request: pb::WatchRequest,
    ) -> HostResult<HostEncodedStream> {
        let limits = self.limits.clone();
        let closing = self.directory.closing();
        let forward = |mut owner: GamesClient<Channel>, request: Request<pb::WatchRequest>| async move {
            let slot = limits.open_watch(&request.get_ref().game_id, connection)?;
            // Decoded and encoded again: a forwarded stream is the rarer path of a cluster.
            let stream = owner.watch(request).await?.into_inner();
            // Ended when this node stops, like the streams of the games it runs (the shutdown
            // waits for every stream): the watcher resumes by seq through another node.
            // The owner's stream ends the merged one (a None after its last item): the
            // shutdown signal never ends by itself.
            let stopping = tokio_stream::wrappers::WatchStream::new(closing)
                .filter(|closed| *closed)
                .map(|_| {
                    Some(Err(HostError::unavailable(
                        "this node is stopping: resume the watch from your last seq through another node",
                    )))
                });
            let encoded = stream
                .map(|update| Some(update.map(|u| Encoded::of(&u)).map_err(HostError::from)))
                .chain(tokio_stream::once(None))
                .merge(stopping)
                .take_while(Option::is_some)
                .map(|item| item.expect("taken while some"));
            Ok(Response::new(
                Box::pin(encoded.map(holding(slot))) as HostEncodedStream
            ))
        };
        let request = match self.route(principal, credentials, request, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer.into_inner()),
        };
        let slot = self.limits.open_watch(&request.game_id, connection)?;
        let stream = ask_game(&self.registry, &request.game_id, |reply| Command::Watch {
            token: request.token,
            from_seq: request.from_seq,
            views: gangs_games::update::WithView::of(request.views),
            reply,
        })
        .await;
        crate::metrics::rpc_result("Watch", &stream);
        Ok(Box::pin(stream?.map(holding(slot))))
    }

    async fn create_game_for(
        &self,
        principal: &Principal,
        client: Client,
        credentials: &Credentials,
        request: pb::CreateGameRequest,
    ) -> HostResult<pb::CreateGameResponse> {
        let created = async {
            let forwarded = *principal == Principal::Forwarded;
            if request.kind.is_empty() {
                return Err(HostError::invalid_argument(format!(
                    "kind is required: one of {}",
                    gangs_games::kind_names().join(", ")
                )));
            }
            let registry = &self.registry;
            // A retry of a creation that succeeded is answered, never refused by a limit.
            if let Some(created) = registry.created_already(&request).await? {
                return Ok(created);
            }
            // On a cluster, a game is created by the node that holds its shard: the shard of
            // the id its create_id names, or (a random id) one this node holds.
            if let Some(cluster) = &self.cluster {
                let place = if request.create_id.is_empty() {
                    if forwarded && cluster.shard_counts().1 == 0 {
                        return Err(HostError::unavailable(
                            "this node holds no shard yet: retry in a second",
                        ));
                    }
                    cluster.place_new()?
                } else {
                    let id = crate::registry::game_id_of_create_id(&request.create_id);
                    cluster.route(&id, registry, forwarded).await?
                };
                if let Route::Owner(mut owner) = place {
                    return Ok(owner
                        .create_game(credentials.forwarded(request, cluster))
                        .await
                        .map_err(crate::cluster::forward_failed)?
                        .into_inner());
                }
            }
            let creator = client.log_id();
            let admission = self
                .limits
                .admit_create(client, registry.live_games(), |id| registry.is_live(id))?;
            let created = registry.create_for(request, creator).await?;
            admission.created(&created.game_id);
            if let Some(cluster) = &self.cluster {
                cluster.list_new(registry.summary(&created.game_id)).await?;
            }
            Ok(created)
        }
        .await;
        crate::metrics::rpc_result("CreateGame", &created);
        created
    }

    async fn cancel_game_for(
        &self,
        principal: &Principal,
        credentials: &Credentials,
        request: pb::CancelGameRequest,
    ) -> HostResult<pb::CancelGameResponse> {
        let forward = |mut owner: GamesClient<Channel>, request| async move {
            owner.cancel_game(request).await
        };
        let request = match self.route(principal, credentials, request, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer.into_inner()),
        };
        self.ask_here(&request.game_id, |reply| Command::Cancel {
            reason: request.reason,
            reply,
        })
        .await
    }

    async fn join_game_for(
        &self,
        principal: &Principal,
        credentials: &Credentials,
        request: pb::JoinGameRequest,
    ) -> HostResult<pb::JoinGameResponse> {
        let forward = |mut owner: GamesClient<Channel>, request| async move {
            owner.join_game(request).await
        };
        let request = match self.route(principal, credentials, request, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer.into_inner()),
        };
        let game_id = request.game_id.clone();
        let answer = self
            .ask_here(&game_id, |reply| Command::Join {
                request: Box::new(request),
                reply,
            })
            .await;
        crate::metrics::rpc_result("JoinGame", &answer);
        answer
    }

    async fn act_for(
        &self,
        principal: &Principal,
        credentials: &Credentials,
        request: pb::ActRequest,
    ) -> HostResult<pb::ActResponse> {
        let started = std::time::Instant::now();
        let forward =
            |mut owner: GamesClient<Channel>, request| async move { owner.act(request).await };
        let request = match self.route(principal, credentials, request, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer.into_inner()),
        };
        let game_id = request.game_id.clone();
        let answer = self
            .ask_here(&game_id, |reply| Command::Act {
                request: Box::new(request),
                reply,
            })
            .await;
        crate::metrics::act_answered(started, &answer);
        answer
    }

    async fn get_log_for(
        &self,
        principal: &Principal,
        credentials: &Credentials,
        request: pb::GetLogRequest,
    ) -> HostResult<HostLogStream> {
        let forward = |mut owner: GamesClient<Channel>, request| async move {
            let stream = owner.get_log(request).await?.into_inner();
            Ok(Response::new(
                Box::pin(stream.map(|record| record.map_err(HostError::from))) as HostLogStream,
            ))
        };
        let request = match self.route(principal, credentials, request, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer.into_inner()),
        };
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

    fn list_games_for(&self, request: pb::ListGamesRequest) -> HostResult<pb::ListGamesResponse> {
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

/// Where [`GamesService::route`] sends a call: the request to serve here, or the answer of
/// the node that runs the game.
enum Routed<R, T> {
    Here(R),
    There(Response<T>),
}

/// A request for one game.
trait ForGame {
    fn game_id(&self) -> &str;
    /// The seat token it uses (empty: none).
    fn token(&self) -> &str {
        ""
    }
}

macro_rules! for_game {
    ($($request:ty),*) => {
        $(impl ForGame for $request {
            fn game_id(&self) -> &str {
                &self.game_id
            }
        })*
    };
}
for_game!(
    pb::CancelGameRequest,
    pb::JoinGameRequest,
    pb::GetLogRequest
);

macro_rules! for_seat {
    ($($request:ty),*) => {
        $(impl ForGame for $request {
            fn game_id(&self) -> &str {
                &self.game_id
            }
            fn token(&self) -> &str {
                &self.token
            }
        })*
    };
}
for_seat!(pb::WatchRequest, pb::ActRequest);

/// The `authorization` metadata of a call, passed on when the call is forwarded to the node
/// that runs the game (with the cluster's mark, which that node trusts for the admission).
pub(crate) struct Credentials(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl Credentials {
    pub(crate) fn split<T>(request: Request<T>) -> (Credentials, T) {
        let credentials = Credentials(request.metadata().get("authorization").cloned());
        (credentials, request.into_inner())
    }

    /// `message` as a request with these credentials.
    pub(crate) fn on<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        request
    }

    /// `message` as a call forwarded to another node of `cluster`, with these credentials and
    /// the cluster's mark that it was forwarded (that node trusts this admission on the mark;
    /// the call is not sent on).
    pub(crate) fn forwarded<T>(&self, message: T, cluster: &Cluster) -> Request<T> {
        let mut request = self.on(message);
        cluster.mark_forwarded(&mut request);
        request
    }
}

/// Sends a command to a game's actor and waits for its answer. A finished game whose actor
/// was unloaded is reloaded from the log first.
async fn ask_game<T>(
    registry: &Registry,
    game_id: &str,
    make: impl FnOnce(Reply<T>) -> Command,
) -> HostResult<T> {
    let (reply, answer) = oneshot::channel();
    let mut command = make(reply);
    let mut game: GameHandle = match registry.get(game_id) {
        Ok(game) => game,
        // A node of a cluster knows only the games it runs: the others are in the log.
        // Boxed (a reload is rare, and its future large): see `GamesService::route`.
        Err(HostError::NotFound(_)) if registry.is_lazy() => {
            Box::pin(registry.revive(game_id)).await?
        }
        Err(error) => return Err(error),
    };
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
                game = Box::pin(registry.revive(game_id)).await?;
            }
        }
    }
    Err(HostError::Unavailable(format!(
        "game {game_id} could not be reloaded: try again"
    )))
}

/// Passes a stream's items through, holding `slot` (a watcher's place in the limits) for as
/// long as the stream lives.
fn holding<S, T>(slot: S) -> impl FnMut(T) -> T {
    move |item| {
        let _ = &slot;
        item
    }
}

type LogStream = Pin<Box<dyn Stream<Item = Result<pb::LogRecord, Status>> + Send>>;
type DirectoryStream = Pin<Box<dyn Stream<Item = Result<pb::WatchGamesResponse, Status>> + Send>>;
type UpdateStream = Pin<Box<dyn Stream<Item = Result<pb::Update, Status>> + Send>>;
/// A Watch stream's updates, encoded (`watch_route.rs` writes them as they are).
pub(crate) type EncodedStream = Pin<Box<dyn Stream<Item = Result<Encoded, Status>> + Send>>;
/// The same, as the host serves them (here, or from the node that runs the game).
type HostEncodedStream = Pin<Box<dyn Stream<Item = HostResult<Encoded>> + Send>>;
/// A Watch stream's updates, decoded, for in-process callers ([`GamesService::watch_as`]).
pub type HostUpdateStream = Pin<Box<dyn Stream<Item = HostResult<pb::Update>> + Send>>;
type HostLogStream = Pin<Box<dyn Stream<Item = HostResult<pb::LogRecord>> + Send>>;

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
        let created = self
            .create_game_for(&principal, client, &credentials, request)
            .await?;
        Ok(Response::new(created))
    }

    async fn cancel_game(
        &self,
        request: Request<pb::CancelGameRequest>,
    ) -> Result<Response<pb::CancelGameResponse>, Status> {
        let principal = self.front.accept(&request, &access::CANCEL_GAME)?;
        let (credentials, request) = Credentials::split(request);
        let answer = self
            .cancel_game_for(&principal, &credentials, request)
            .await?;
        Ok(Response::new(answer))
    }

    async fn join_game(
        &self,
        request: Request<pb::JoinGameRequest>,
    ) -> Result<Response<pb::JoinGameResponse>, Status> {
        let principal = self.front.accept(&request, &access::JOIN_GAME)?;
        let (credentials, request) = Credentials::split(request);
        let joined = self
            .join_game_for(&principal, &credentials, request)
            .await?;
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
        let (credentials, request) = Credentials::split(request);
        let acted = self
            .act_for(&principal, &credentials, request)
            .await
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
        let (credentials, request) = Credentials::split(request);
        let records = self.get_log_for(&principal, &credentials, request).await?;
        Ok(Response::new(Box::pin(
            records.map(|record| record.map_err(Status::from)),
        )))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        self.front.accept(&request, &access::LIST_GAMES)?;
        Ok(Response::new(self.list_games_for(request.into_inner())?))
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
