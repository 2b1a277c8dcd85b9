//! The `gangs.v1.Ladders` gRPC service: checks each request's key and shape (names, options,
//! bot keys), then asks the ladder, here or (on a cluster) on the node that runs it
//! (`LaddersService::route`, `nodes.rs`). Bot keys are 256 random bits shown once; the
//! ladder's log keeps only their SHA-256.

use super::nodes::Place;
use super::records::{entry_name, version_of};
use super::{house, Context, Ladder, Ladders, Policy};
use crate::api::{Credentials, GamesService};
use crate::cluster::Cluster;
use crate::error::HostError;
use crate::front::access;
use crate::front::{Front, Principal};
use gangs_proto::v1 as pb;
use pb::ladder_event::paused::Reason;
use pb::ladders_client::LaddersClient;
use pb::ladders_server::Ladders as LaddersRpc;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio_stream::{Stream, StreamExt};
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

use super::creation::check_future;
pub use super::creation::{key_hash, ladder_of, DEFAULT_ABSENT_AFTER, DEFAULT_TURN_MS};
pub use super::read_models::*;
pub use crate::bounds::{MAX_BOT_NAME, MAX_LADDER_NAME, MAX_VERSION};
/// LadderGames pages.
pub(super) const DEFAULT_PAGE: usize = 50;
pub(super) const MAX_PAGE: usize = crate::bounds::MAX_LADDER_PAGE as usize;

#[derive(Clone)]
pub struct LaddersService {
    pub(super) ladders: Arc<Ladders>,
    /// Who may call what (`front/`), with the server's `--open-registration`.
    pub(super) front: Front,
    /// One `RerateLadder` at a time: it reads every game of a ladder.
    rerating: Arc<tokio::sync::Semaphore>,
    /// One heavy read at a time (a fit, a page of games older than the state keeps): the
    /// others wait their turn.
    pub(super) heavy: Arc<tokio::sync::Semaphore>,
}

impl LaddersService {
    /// Rebuilds every ladder (after the games were: a ladder's games are found by create_id).
    pub async fn restore(
        logs: crate::store::Logs,
        games: GamesService,
        policy: Policy,
        hosting: Arc<super::hosted::Hosting>,
        stop: tokio::sync::watch::Receiver<bool>,
        cluster: Option<Arc<Cluster>>,
    ) -> Result<LaddersService, String> {
        let front = games
            .front()
            .clone()
            .with_open_registration(policy.open_registration);
        let ctx = Context {
            store: logs.games,
            ladder_logs: logs.ladders,
            games,
            policy,
            stop,
            hosting,
        };
        Ok(LaddersService {
            ladders: Ladders::restore(ctx, cluster).await?,
            front,
            rerating: Arc::new(tokio::sync::Semaphore::new(1)),
            heavy: Arc::new(tokio::sync::Semaphore::new(1)),
        })
    }

    /// Where a call for ladder `name` runs: here (the ladder and the request come back), or on
    /// the node of the cluster that runs the ladder: `forward` sends it there with the
    /// caller's key and the cluster's mark (that node trusts this one's admission), and its
    /// answer is the answer.
    pub(super) async fn route<R, T, F>(
        &self,
        name: &str,
        request: Request<R>,
        forward: impl FnOnce(LaddersClient<Channel>, Request<R>) -> F,
    ) -> Result<Routed<R, T>, HostError>
    where
        F: Future<Output = Result<Response<T>, Status>>,
    {
        let cluster = self.ladders.cluster();
        let forwarded = cluster.is_some_and(|c| c.was_forwarded(request.metadata()));
        match self.ladders.route(name, forwarded).await? {
            Place::Here(ladder) => Ok(Routed::Here(ladder, request)),
            Place::There(channel) => {
                let cluster = cluster.expect("only a cluster runs a ladder on another node");
                let (credentials, message) = Credentials::split(request);
                let request = credentials.forwarded(message, cluster);
                Ok(Routed::There(
                    forward(LaddersClient::new(channel), request)
                        .await
                        .map_err(crate::cluster::forward_failed)?,
                ))
            }
        }
    }

    /// A count that moves each time ladder `name` logs a record (a game rated, a bot paused,
    /// a match made...), when this node runs it; None otherwise (on a cluster, another node
    /// may run it: the viewer then looks again now and then).
    pub fn changes(&self, name: &str) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.ladders.get(name).ok().map(|l| l.changed.subscribe())
    }

    /// The entry for `bot` and `version` (empty: "1") of a ladder this node runs.
    async fn entry(
        &self,
        ladder: Arc<Ladder>,
        bot: &str,
        version: &str,
    ) -> Result<(Arc<Ladder>, usize), HostError> {
        let name = entry_name(bot, &version_of(version));
        let index = ladder.state.lock().await.by_name.get(&name).copied();
        let index = index.ok_or_else(|| {
            HostError::not_found(format!(
                "no bot {name} on ladder {}: `gangs ladder standings {}` lists its bots",
                ladder.name, ladder.name
            ))
        })?;
        Ok((ladder, index))
    }
}

type EventStream = Pin<Box<dyn Stream<Item = Result<pb::LadderEvent, Status>> + Send>>;

/// A call served here (the ladder, the request), or answered by the node that runs its ladder.
pub(super) enum Routed<R, T> {
    Here(Arc<Ladder>, Request<R>),
    There(Response<T>),
}

/// Serves `$request` here, or returns the answer of the node that runs ladder `$name` to
/// `$call` forwarded there.
macro_rules! here_or_return {
    ($service:expr, $name:expr, $request:expr, $call:ident) => {
        match $service
            .route(&$name, $request, |mut node, request| async move {
                node.$call(request).await
            })
            .await?
        {
            Routed::Here(ladder, request) => (ladder, request),
            Routed::There(answer) => return Ok(answer),
        }
    };
}

#[tonic::async_trait]
impl LaddersRpc for LaddersService {
    async fn create_ladder(
        &self,
        request: Request<pb::CreateLadderRequest>,
    ) -> Result<Response<pb::CreateLadderResponse>, Status> {
        self.front.accept(&request, &access::CREATE_LADDER)?;
        let info = ladder_of(request.get_ref(), crate::actor::unix_ms())?;
        if request.get_ref().hosted_fuel.is_some() {
            self.ladders
                .hosting()
                .check_fuel_fits_turn(info.hosted_fuel, info.turn_ms)
                .await?;
        }
        let ladder = self.ladders.create(info).await?;
        tracing::info!(ladder = %ladder.name, kind = %ladder.kind, players = ladder.players, "created a ladder");
        Ok(Response::new(pb::CreateLadderResponse {
            ladder: Some(ladder),
        }))
    }

    async fn list_ladders(
        &self,
        request: Request<pb::ListLaddersRequest>,
    ) -> Result<Response<pb::ListLaddersResponse>, Status> {
        self.front.accept(&request, &access::LIST_LADDERS)?;
        Ok(Response::new(
            self.list_ladders_as(&Principal::Anyone).await?,
        ))
    }

    async fn register_bot(
        &self,
        request: Request<pb::RegisterBotRequest>,
    ) -> Result<Response<pb::RegisterBotResponse>, Status> {
        // --open-registration: anyone may register a bot (and gets only its key).
        self.front.accept(&request, &access::REGISTER_BOT)?;
        let name = request.get_ref().ladder.clone();
        let (ladder, request) = here_or_return!(self, name, request, register_bot);
        let request = request.into_inner();
        if request.bot.starts_with(house::HOUSE_PREFIX) {
            return Err(HostError::invalid_argument(format!(
                "bot names starting with {:?} are the server's own house bots: choose another name",
                house::HOUSE_PREFIX
            ))
            .into());
        }
        let version = version_of(&request.version);
        let name = entry_name(&request.bot, &version);
        let mut state = ladder.state.lock().await;
        if state.by_name.contains_key(&name) {
            return Err(HostError::already_exists(format!(
                "{name} is registered on ladder {} already: register a new version (--version), its rating starts afresh",
                ladder.name
            )).into());
        }
        let key = ladder
            .register(&mut state, request.bot.clone(), version.clone())
            .await?;
        tracing::info!(ladder = %ladder.name, bot = %name, "registered a bot");
        Ok(Response::new(pb::RegisterBotResponse {
            bot_key: key,
            bot: request.bot,
            version,
        }))
    }

    async fn submit_bot(
        &self,
        request: Request<pb::SubmitBotRequest>,
    ) -> Result<Response<pb::SubmitBotResponse>, Status> {
        let principal = self.front.accept(&request, &access::SUBMIT_BOT)?;
        self.ladders.single_node("given hosted bots (SubmitBot)")?;
        let ladder = self.ladders.get(&request.get_ref().ladder)?;
        let keyed = self.front.keyed();
        let answer =
            super::hosted::submit(&ladder, &principal, keyed, request.into_inner()).await?;
        Ok(Response::new(answer))
    }

    async fn get_bot_log(
        &self,
        request: Request<pb::GetBotLogRequest>,
    ) -> Result<Response<pb::GetBotLogResponse>, Status> {
        let principal = self.front.accept(&request, &access::GET_BOT_LOG)?;
        let answer = self
            .get_bot_log_as(&principal, request.into_inner())
            .await?;
        Ok(Response::new(answer))
    }

    type QueueStream = EventStream;

    async fn queue(
        &self,
        request: Request<pb::QueueRequest>,
    ) -> Result<Response<EventStream>, Status> {
        self.front.accept(&request, &access::QUEUE)?;
        let checked = request.get_ref();
        if checked.bot_key.is_empty() {
            return Err(HostError::unauthenticated(
                "bot_key is required: the key RegisterBot printed (gangs ladder register)",
            )
            .into());
        }
        let name = self.ladders.queue_name(&checked.ladder);
        let forward = |mut node: LaddersClient<Channel>, request| async move {
            // Piped through: the bot hears the running node's events, its end included.
            let events = node.queue(request).await?.into_inner();
            Ok(Response::new(Box::pin(events) as EventStream))
        };
        let (ladder, request) = match self.route(&name, request, forward).await? {
            Routed::Here(ladder, request) => (ladder, request.into_inner()),
            Routed::There(answer) => return Ok(answer),
        };
        let events = ladder.queue(request).await?;
        crate::metrics::ladder_queued(&ladder.name);
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(events)
                .map(|event| event.map_err(Status::from)),
        )))
    }

    async fn standings(
        &self,
        request: Request<pb::StandingsRequest>,
    ) -> Result<Response<pb::StandingsResponse>, Status> {
        self.front.accept(&request, &access::STANDINGS)?;
        let name = request.get_ref().ladder.clone();
        let (ladder, request) = here_or_return!(self, name, request, standings);
        let answer = self.standings_at(ladder, request.into_inner()).await?;
        Ok(Response::new(answer))
    }

    async fn ladder_games(
        &self,
        request: Request<pb::LadderGamesRequest>,
    ) -> Result<Response<pb::LadderGamesResponse>, Status> {
        self.front.accept(&request, &access::LADDER_GAMES)?;
        let name = request.get_ref().ladder.clone();
        let (ladder, request) = here_or_return!(self, name, request, ladder_games);
        let answer = self.ladder_games_at(ladder, request.into_inner()).await?;
        Ok(Response::new(answer))
    }

    async fn pause_bot(
        &self,
        request: Request<pb::PauseBotRequest>,
    ) -> Result<Response<pb::PauseBotResponse>, Status> {
        self.front.accept(&request, &access::PAUSE_BOT)?;
        let name = request.get_ref().ladder.clone();
        let (ladder, request) = here_or_return!(self, name, request, pause_bot);
        let request = request.into_inner();
        let (ladder, index) = self.entry(ladder, &request.bot, &request.version).await?;
        let mut state = ladder.state.lock().await;
        let entry = &state.entries[index];
        if entry.retired {
            return Err(HostError::failed_precondition(format!(
                "{} is retired: it cannot be paused or resumed",
                entry.name()
            ))
            .into());
        }
        // Resuming lifts any pause (the organizer's, or one for the bot's timeouts or its
        // module's failures: the way back the pause's detail names); pausing sets the
        // organizer's, unless it is in place already.
        let (reason, detail) = match (&entry.paused, request.resume) {
            (Some((reason, _)), true) => (*reason, "resumed by an organizer"),
            (Some((Reason::Admin, _)), false) | (None, true) => {
                return Ok(Response::new(pb::PauseBotResponse {}));
            }
            (_, false) => (Reason::Admin, "paused by an organizer"),
        };
        ladder
            .set_paused(
                &mut state,
                index,
                reason,
                detail.to_string(),
                request.resume,
            )
            .await?;
        drop(state);
        ladder.wake.notify_one();
        Ok(Response::new(pb::PauseBotResponse {}))
    }

    async fn retire_bot(
        &self,
        request: Request<pb::RetireBotRequest>,
    ) -> Result<Response<pb::RetireBotResponse>, Status> {
        self.front.accept(&request, &access::RETIRE_BOT)?;
        let name = request.get_ref().ladder.clone();
        let (ladder, request) = here_or_return!(self, name, request, retire_bot);
        let request = request.into_inner();
        let (ladder, index) = self.entry(ladder, &request.bot, &request.version).await?;
        let mut state = ladder.state.lock().await;
        let entry = &state.entries[index];
        if entry.retired {
            return Ok(Response::new(pb::RetireBotResponse {}));
        }
        let detail = "retired by an organizer".to_string();
        ladder
            .set_paused(&mut state, index, Reason::Retired, detail, false)
            .await?;
        drop(state);
        ladder.close_session(index, None);
        Ok(Response::new(pb::RetireBotResponse {}))
    }

    async fn rerate_ladder(
        &self,
        request: Request<pb::RerateLadderRequest>,
    ) -> Result<Response<pb::RerateLadderResponse>, Status> {
        self.front.accept(&request, &access::RERATE_LADDER)?;
        let name = request.get_ref().ladder.clone();
        let (ladder, request) = here_or_return!(self, name, request, rerate_ladder);
        let _one_at_a_time = self.rerating.try_acquire().map_err(|_| {
            HostError::resource_exhausted(
                "another ladder is being rerated (one at a time per server): try again when it is done",
            )
        })?;
        let season = request.get_ref().season;
        Ok(Response::new(super::rerate::rerate(&ladder, season).await?))
    }

    async fn delete_ladder(
        &self,
        request: Request<pb::DeleteLadderRequest>,
    ) -> Result<Response<pb::DeleteLadderResponse>, Status> {
        self.front.accept(&request, &access::DELETE_LADDER)?;
        let request = request.into_inner();
        let cancelled_games = self.ladders.delete(&request.ladder, request.force).await?;
        Ok(Response::new(pb::DeleteLadderResponse { cancelled_games }))
    }

    async fn rename_ladder(
        &self,
        request: Request<pb::RenameLadderRequest>,
    ) -> Result<Response<pb::RenameLadderResponse>, Status> {
        self.front.accept(&request, &access::RENAME_LADDER)?;
        let request = request.into_inner();
        let ladder = self
            .ladders
            .rename(&request.ladder, &request.new_name)
            .await?;
        Ok(Response::new(pb::RenameLadderResponse {
            ladder: Some(ladder),
        }))
    }

    async fn rekey_bot(
        &self,
        request: Request<pb::RekeyBotRequest>,
    ) -> Result<Response<pb::RekeyBotResponse>, Status> {
        self.front.accept(&request, &access::REKEY_BOT)?;
        let name = request.get_ref().ladder.clone();
        let (ladder, request) = here_or_return!(self, name, request, rekey_bot);
        let request = request.into_inner();
        let (ladder, index) = self.entry(ladder, &request.bot, &request.version).await?;
        let mut state = ladder.state.lock().await;
        let entry = &state.entries[index];
        if entry.retired {
            return Err(HostError::failed_precondition(format!(
                "{} is retired: its key is refused for good (register a new version)",
                entry.name()
            ))
            .into());
        }
        if entry.bot.starts_with(house::HOUSE_PREFIX) {
            return Err(HostError::failed_precondition(format!(
                "{} is a house bot: the server plays it without a key",
                entry.name()
            ))
            .into());
        }
        let key = ladder.rekey(&mut state, index, request.now).await?;
        let entry = &state.entries[index];
        tracing::info!(ladder = %ladder.name, bot = %entry.name(), now = request.now, "gave a bot a new key");
        Ok(Response::new(pb::RekeyBotResponse {
            bot_key: key,
            bot: entry.bot.clone(),
            version: entry.version.clone(),
        }))
    }

    async fn set_season(
        &self,
        request: Request<pb::SetSeasonRequest>,
    ) -> Result<Response<pb::SetSeasonResponse>, Status> {
        self.front.accept(&request, &access::SET_SEASON)?;
        let name = request.get_ref().ladder.clone();
        let (ladder, request) = here_or_return!(self, name, request, set_season);
        let request = request.into_inner();
        let now = crate::actor::unix_ms();
        if let Some(ends) = request.ends_unix_ms {
            check_future("ends_unix_ms", ends, now)?;
        }
        let mut state = ladder.state.lock().await;
        let ended_season = match request.end {
            true => ladder.end_season(&mut state).await?,
            false => 0,
        };
        if request.ends_unix_ms.is_some() || request.clear_ends {
            ladder.plan_season(&mut state, request.ends_unix_ms).await?;
        }
        Ok(Response::new(pb::SetSeasonResponse {
            ladder: Some(state.info.clone()),
            ended_season,
        }))
    }

    async fn bot_report(
        &self,
        request: Request<pb::BotReportRequest>,
    ) -> Result<Response<pb::BotReportResponse>, Status> {
        self.front.accept(&request, &access::BOT_REPORT)?;
        let name = request.get_ref().ladder.clone();
        let (ladder, request) = here_or_return!(self, name, request, bot_report);
        let answer = self.bot_report_at(ladder, request.into_inner()).await?;
        Ok(Response::new(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_read_as_ordinals() {
        let words: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22].map(ordinal).into();
        assert_eq!(
            words,
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd"]
        );
    }
}
