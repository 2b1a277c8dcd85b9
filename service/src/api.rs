//! The `gangs.v1.Games` gRPC service: checks each request's key and bounds, routes a call for
//! one game (here, or forwarded to the node that runs it: `GamesService::route`, the one
//! place that decides), and hands the request to the game's actor. No game logic here. The one
//! place where the host's [`HostError`] becomes a gRPC status.

use crate::actor::{Command, Encoded, GameHandle, Reply};
use crate::bounds::{bounded, Bounded, MAX_IMPORT_BYTES, MAX_IMPORT_RECORDS};
use crate::cluster::{Cluster, Route};
use crate::directory::{Directory, Filter};
use crate::error::{HostError, HostResult};
use crate::front::access::{self, bearer, Method};
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

    /// The front of every call for one game: its caller and the request's bounds
    /// ([`Front::accept`] by `method`'s rule), the game a bot key may touch, then where it
    /// runs. Served here, the request comes back ([`Routed::Here`]); run by another node of a
    /// cluster, `forward` sends it there with the caller's credentials and the cluster's mark
    /// (that node trusts this one's admission) and its answer is the answer.
    async fn route<R, T, F>(
        &self,
        request: Request<R>,
        method: &Method,
        forward: impl FnOnce(GamesClient<Channel>, Request<R>) -> F,
    ) -> Result<Routed<R, T>, Status>
    where
        R: Bounded + ForGame,
        F: Future<Output = Result<Response<T>, Status>>,
    {
        let principal = self.front.accept(&request, method)?;
        let forwarded = principal == Principal::Forwarded;
        let (credentials, request) = Credentials::split(request);
        self.front
            .may_play(&principal, request.game_id(), request.token())?;
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

    /// Whether `request` was forwarded by another node of this server's cluster (it carries
    /// the cluster's mark; a client's header without it counts for nothing).
    fn forwarded_by_a_node<T>(&self, request: &Request<T>) -> bool {
        self.cluster
            .as_ref()
            .is_some_and(|cluster| cluster.was_forwarded(request.metadata()))
    }

    /// Who is calling, for the per-client limits: its key once the front admitted it (a
    /// server without keys does not trust any), else its IP address.
    fn client_of<T>(&self, request: &Request<T>) -> Client {
        // A ladder counts as itself (its games under its own name).
        if let Some(crate::front::InProcess::Ladder(name)) = request.extensions().get() {
            return Client::of_key(&format!("ladder {name}"));
        }
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
    ) -> Result<T, Status> {
        let answer = ask(&self.registry, game_id, make).await;
        match (&answer, &self.cluster) {
            (Err(status), Some(cluster))
                if status.code() != tonic::Code::Unavailable && !cluster.answers_for(game_id) =>
            {
                Err(Status::unavailable(format!(
                    "game {game_id} may have moved to another node (this node's lease on it was not renewed lately): retry"
                )))
            }
            _ => answer,
        }
    }

    /// In-process, for a ladder's hosted bots: the seat of `token` in `game_id`, awaited at
    /// `expected_seq`, plays its default action because its bot's decision failed (`cause`),
    /// logged as `timed_out` with the cause. Hosted bots run on a single node, which runs
    /// their games.
    pub(crate) async fn forfeit(
        &self,
        game_id: &str,
        token: String,
        expected_seq: u64,
        cause: String,
    ) -> HostResult<()> {
        ask_game(&self.registry, game_id, |reply| Command::Forfeit {
            token,
            expected_seq,
            cause,
            reply,
        })
        .await
    }

    /// `Watch`: the stream of a seat's (or the spectators') updates, each encoded once for its
    /// whole audience and passed to the wire as it is (`watch_route.rs`). The watcher's slot
    /// in the limits is held by the stream.
    pub(crate) async fn watch_encoded(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<crate::metrics::Watched<EncodedStream>, Status> {
        let peer = request.remote_addr();
        // A stream another node forwarded was counted there against its client's connection;
        // here it counts against the game only. The connection between two nodes carries the
        // streams of all their clients: counted per connection, a few hundred watchers through
        // one node would exhaust `--max-watchers-per-connection` for everyone.
        let connection = if self.forwarded_by_a_node(&request) {
            None
        } else {
            peer
        };
        // The watcher slot (here or for a forwarded stream) is held by the stream: it is free
        // again when the client closes it.
        let limits = self.limits.clone();
        let closing = self.directory.closing();
        let forward = |mut owner: GamesClient<Channel>, request: Request<pb::WatchRequest>| async move {
            let slot = limits.open_watch(&request.get_ref().game_id, peer)?;
            // Decoded and encoded again: a forwarded stream is the rarer path of a cluster.
            let stream = owner.watch(request).await?.into_inner();
            // Ended when this node stops, like the streams of the games it runs (the shutdown
            // waits for every stream): the watcher resumes by seq through another node.
            // The owner's stream ends the merged one (a None after its last item): the
            // shutdown signal never ends by itself.
            let stopping = tokio_stream::wrappers::WatchStream::new(closing)
                .filter(|closed| *closed)
                .map(|_| {
                    Some(Err(Status::unavailable(
                        "this node is stopping: resume the watch from your last seq through another node",
                    )))
                });
            let encoded = stream
                .map(|update| Some(update.map(|u| Encoded::of(&u))))
                .chain(tokio_stream::once(None))
                .merge(stopping)
                .take_while(Option::is_some)
                .map(|item| item.expect("taken while some"));
            Ok(Response::new(crate::metrics::Watched::new(
                Box::pin(encoded.map(holding(slot))) as EncodedStream,
            )))
        };
        let request = match self.route(request, &access::WATCH, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer.into_inner()),
        };
        let slot = self.limits.open_watch(&request.game_id, connection)?;
        let stream = ask(&self.registry, &request.game_id, |reply| Command::Watch {
            token: request.token,
            from_seq: request.from_seq,
            views: gangs_games::update::WithView::of(request.views),
            reply,
        })
        .await;
        crate::metrics::rpc_result("Watch", &stream);
        let stream = stream?
            .map(|update| update.map_err(Status::from))
            .map(holding(slot));
        Ok(crate::metrics::Watched::new(Box::pin(stream)))
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

#[tonic::async_trait]
impl Games for GamesService {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let created = async {
            let forwarded =
                self.front.accept(&request, &access::CREATE_GAME)? == Principal::Forwarded;
            let client = self.client_of(&request);
            let (credentials, request) = Credentials::split(request);
            if request.kind.is_empty() {
                return Err(Status::invalid_argument(format!(
                    "kind is required: one of {}",
                    gangs_games::kind_names().join(", ")
                )));
            }
            let registry = &self.registry;
            // A retry of a creation that succeeded is answered, never refused by a limit.
            if let Some(created) = registry
                .created_already(&request)
                .await
                .map_err(|error| bounded(error.into()))?
            {
                return Ok(created);
            }
            // On a cluster, a game is created by the node that holds its shard: the shard of
            // the id its create_id names, or (a random id) one this node holds.
            if let Some(cluster) = &self.cluster {
                let place = if request.create_id.is_empty() {
                    if forwarded && cluster.shard_counts().1 == 0 {
                        return Err(Status::unavailable(
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
                .admit_create(client, registry.live_games(), |id| registry.is_live(id))
                .map_err(Status::from)?;
            let created = registry
                .create_for(request, creator)
                .await
                .map_err(|error| bounded(error.into()))?;
            admission.created(&created.game_id);
            if let Some(cluster) = &self.cluster {
                cluster.list_new(registry.summary(&created.game_id)).await?;
            }
            Ok(created)
        }
        .await;
        crate::metrics::rpc_result("CreateGame", &created);
        Ok(Response::new(created?))
    }

    async fn cancel_game(
        &self,
        request: Request<pb::CancelGameRequest>,
    ) -> Result<Response<pb::CancelGameResponse>, Status> {
        let forward = |mut owner: GamesClient<Channel>, request| async move {
            owner.cancel_game(request).await
        };
        let request = match self.route(request, &access::CANCEL_GAME, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer),
        };
        let answer = self
            .ask_here(&request.game_id, |reply| Command::Cancel {
                reason: request.reason,
                reply,
            })
            .await?;
        Ok(Response::new(answer))
    }

    async fn join_game(
        &self,
        request: Request<pb::JoinGameRequest>,
    ) -> Result<Response<pb::JoinGameResponse>, Status> {
        let forward = |mut owner: GamesClient<Channel>, request| async move {
            owner.join_game(request).await
        };
        let request = match self.route(request, &access::JOIN_GAME, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer),
        };
        let game_id = request.game_id.clone();
        let answer = self
            .ask_here(&game_id, |reply| Command::Join {
                request: Box::new(request),
                reply,
            })
            .await;
        crate::metrics::rpc_result("JoinGame", &answer);
        Ok(Response::new(answer?))
    }

    type WatchStream = UpdateStream;

    /// `Watch` for in-process callers (the web viewer, the ladders): the updates decoded. The
    /// gRPC route serves `watch_encoded` itself (`watch_route.rs`), never this.
    async fn watch(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<Response<UpdateStream>, Status> {
        let encoded = self.watch_encoded(request).await?;
        let decoded = encoded.map(|update| {
            update.and_then(|bytes| {
                pb::Update::decode(bytes.message())
                    .map_err(|e| Status::internal(format!("an update does not decode: {e}")))
            })
        });
        Ok(Response::new(Box::pin(decoded)))
    }

    async fn act(
        &self,
        request: Request<pb::ActRequest>,
    ) -> Result<Response<pb::ActResponse>, Status> {
        let started = std::time::Instant::now();
        let forward =
            |mut owner: GamesClient<Channel>, request| async move { owner.act(request).await };
        let request = match self.route(request, &access::ACT, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer),
        };
        let game_id = request.game_id.clone();
        let answer = self
            .ask_here(&game_id, |reply| Command::Act {
                request: Box::new(request),
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
        let forward = |mut owner: GamesClient<Channel>, request| async move {
            let stream = owner.get_log(request).await?.into_inner();
            Ok(Response::new(Box::pin(stream) as LogStream))
        };
        let request = match self.route(request, &access::GET_LOG, forward).await? {
            Routed::Here(request) => request,
            Routed::There(answer) => return Ok(answer),
        };
        let records = match self
            .registry
            .damaged_log(&request.game_id, request.from_seq)
            .await
        {
            Some(records) => records.map_err(|error| bounded(error.into())),
            None => {
                ask(&self.registry, &request.game_id, |reply| Command::GetLog {
                    from_seq: request.from_seq,
                    reply,
                })
                .await
            }
        };
        crate::metrics::rpc_result("GetLog", &records);
        let records = records?;
        Ok(Response::new(Box::pin(tokio_stream::iter(
            records.into_iter().map(Ok),
        ))))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        self.front.accept(&request, &access::LIST_GAMES)?;
        let request = request.into_inner();
        let status = match pb::GameStatus::try_from(request.status) {
            Ok(pb::GameStatus::Unspecified) => None,
            Ok(status) => Some(status),
            Err(_) => {
                return Err(Status::invalid_argument(format!(
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
        Ok(Response::new(pb::ListGamesResponse {
            games,
            next_page_token,
        }))
    }

    type WatchGamesStream = DirectoryStream;

    async fn watch_games(
        &self,
        request: Request<pb::WatchGamesRequest>,
    ) -> Result<Response<DirectoryStream>, Status> {
        self.front.accept(&request, &access::WATCH_GAMES)?;
        let request = request.into_inner();
        let filter = Filter::new(request.kind, &request.statuses).map_err(Status::from)?;
        let stream = self
            .directory
            .watch(self.registry.clone(), &request.from_cursor, filter)
            .await
            .map_err(|error| bounded(error.into()))?;
        Ok(Response::new(Box::pin(
            stream.map(|event| event.map_err(Status::from)),
        )))
    }

    async fn import_game(
        &self,
        request: Request<tonic::Streaming<pb::ImportGameRequest>>,
    ) -> Result<Response<pb::ImportGameResponse>, Status> {
        let imported = async {
            self.front.admit(&request, &access::IMPORT_GAME)?;
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
