//! The `gangs.v1.Games` service, and the host's own typed API under it. A gRPC call is admitted
//! by the front (`front/`: its caller and its bounds), then served by the same typed method an
//! in-process caller uses (the ladders, the web viewer: `GamesService::create_game_as` and the
//! others, given the caller's [`Principal`]), which routes a call for one game (here, or
//! forwarded to the node that runs it: `GamesService::route`, the one place that decides) and
//! hands the request to the game's actor. No game logic here; errors are [`HostError`]s, made
//! statuses by the front (`front/errors.rs`).

mod call;
mod grpc;

use crate::actor::{Command, Encoded, GameHandle, Reply};
use crate::bounds::Bounded;
use crate::cluster::Cluster;
use crate::directory::Directory;
use crate::error::{HostError, HostResult};
use crate::front::access::{self, bearer};
use crate::front::{Front, Principal};
use crate::limits::{Client, Limits};
use crate::registry::Registry;
use call::{Answer, Caller, GameCall};
use gangs_proto::v1 as pb;
use prost::Message;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Status};

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
/// as its [`Principal`] (the gRPC methods in `grpc.rs`, once the front admitted theirs; the
/// ladder NAME; the web viewer's logged-in key, made a principal by [`Front::principal_of`]).
/// Each is a [`GameCall`] (`call.rs`), placed by the one route like any other: on a cluster, at
/// the node that runs the game, where it is trusted on the cluster's mark. Nothing here reads a
/// key.
impl GamesService {
    /// `CreateGame` for `principal`.
    pub async fn create_game_as(
        &self,
        principal: &Principal,
        request: pb::CreateGameRequest,
    ) -> HostResult<pb::CreateGameResponse> {
        request.check_bounds()?;
        // A ladder counts in the per-client limits as itself (its games under its own name).
        let mut caller = Caller::in_process(principal);
        if let Principal::Ladder(name) = principal {
            caller.client = Client::of_key(&format!("ladder {name}"));
        }
        self.create_game_for(&caller, request).await
    }

    /// `JoinGame` for `principal`.
    pub async fn join_game_as(
        &self,
        principal: &Principal,
        request: pb::JoinGameRequest,
    ) -> HostResult<pb::JoinGameResponse> {
        request.check_bounds()?;
        self.call(&Caller::in_process(principal), GameCall::Join(request))
            .await?
            .into_joined()
    }

    /// `Act` for `principal`.
    pub async fn act_as(
        &self,
        principal: &Principal,
        request: pb::ActRequest,
    ) -> HostResult<pb::ActResponse> {
        request.check_bounds()?;
        self.call(&Caller::in_process(principal), GameCall::Act(request))
            .await?
            .into_acted()
    }

    /// `CancelGame` for `principal`.
    pub async fn cancel_game_as(
        &self,
        principal: &Principal,
        request: pb::CancelGameRequest,
    ) -> HostResult<pb::CancelGameResponse> {
        request.check_bounds()?;
        self.call(&Caller::in_process(principal), GameCall::Cancel(request))
            .await?
            .into_cancelled()
    }

    /// `GetLog` for `principal`: the records, read to the end.
    pub async fn get_log_as(
        &self,
        principal: &Principal,
        request: pb::GetLogRequest,
    ) -> HostResult<Vec<pb::LogRecord>> {
        request.check_bounds()?;
        let mut stream = self
            .call(&Caller::in_process(principal), GameCall::GetLog(request))
            .await?
            .into_log()?;
        let mut records = Vec::new();
        while let Some(record) = stream.next().await {
            records.push(record?);
        }
        Ok(records)
    }

    /// `ListGames` for `principal`.
    pub async fn list_games_as(
        &self,
        principal: &Principal,
        request: pb::ListGamesRequest,
    ) -> HostResult<pb::ListGamesResponse> {
        request.check_bounds()?;
        self.call(&Caller::in_process(principal), GameCall::List(request))
            .await?
            .into_listed()
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
            .call(&Caller::in_process(principal), GameCall::Watch(request))
            .await?
            .into_watching()?;
        let decoded = crate::metrics::Watched::new(encoded).map(|update| {
            update.and_then(|bytes| {
                pb::Update::decode(bytes.message())
                    .map_err(|e| HostError::internal(format!("an update does not decode: {e}")))
            })
        });
        Ok(Box::pin(decoded))
    }

    /// `CreateGame` for `caller`: a retry of a creation that succeeded is answered before
    /// anything else (never refused by a limit, never placed again).
    pub(crate) async fn create_game_for(
        &self,
        caller: &Caller<'_>,
        request: pb::CreateGameRequest,
    ) -> HostResult<pb::CreateGameResponse> {
        let created = async {
            if request.kind.is_empty() {
                return Err(HostError::invalid_argument(format!(
                    "kind is required: one of {}",
                    gangs_games::kind_names().join(", ")
                )));
            }
            if let Some(created) = self.registry.created_already(&request).await? {
                return Ok(created);
            }
            self.call(caller, GameCall::Create(request))
                .await?
                .into_created()
        }
        .await;
        crate::metrics::rpc_result("CreateGame", &created);
        created
    }
}

impl Caller<'_> {
    /// An in-process caller: no credentials to pass on, no connection, no per-client count.
    fn in_process(principal: &Principal) -> Caller<'_> {
        Caller {
            principal,
            credentials: Credentials(None),
            client: Client::Unknown,
            connection: None,
        }
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
        let caller = Caller {
            principal: &principal,
            credentials,
            client: Client::Unknown,
            connection,
        };
        let stream = self
            .call(&caller, GameCall::Watch(request))
            .await
            .and_then(Answer::into_watching)
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
}

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
