//! The ladder's reads in the host's own typed API (standings, a page of games, a bot's page,
//! a hosted bot's log) for a caller already admitted: the web viewer calls them, and the gRPC
//! adapter (`api.rs`) serves the same bodies once the front admitted its caller.

use super::api::{LaddersService, Routed, DEFAULT_PAGE, MAX_PAGE};
use super::read_models::*;
use super::records::LadderState;
use super::{fit, Ladder};
use crate::bounds::Bounded;
use crate::error::{HostError, HostResult};
use crate::front::Principal;
use gangs_proto::v1 as pb;
use pb::ladders_client::LaddersClient;
use std::future::Future;
use std::sync::Arc;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

/// The reads of the `Ladders` service in the host's own typed API, for a caller already
/// admitted (the web viewer, with its logged-in key made a principal by
/// [`Front::principal_of`]): the gRPC methods serve the same bodies once the front admitted
/// theirs. A ladder another node runs is asked there, through [`LaddersService::route`], with
/// the cluster's mark and no key.
impl LaddersService {
    /// `ListLadders`.
    pub async fn list_ladders_as(
        &self,
        _principal: &Principal,
    ) -> HostResult<pb::ListLaddersResponse> {
        let ladders = self.ladders.list().await;
        Ok(pb::ListLaddersResponse { ladders })
    }

    /// `Standings` for `principal`.
    pub async fn standings_as(
        &self,
        _principal: &Principal,
        request: pb::StandingsRequest,
    ) -> HostResult<pb::StandingsResponse> {
        request.check_bounds()?;
        let name = request.ladder.clone();
        let forward = |mut node: LaddersClient<Channel>, request| async move {
            node.standings(request).await
        };
        match self.in_process(&name, request, forward).await? {
            Routed::Here(ladder, request) => self.standings_at(ladder, request.into_inner()).await,
            Routed::There(answer) => Ok(answer.into_inner()),
        }
    }

    /// `LadderGames` for `principal`.
    pub async fn ladder_games_as(
        &self,
        _principal: &Principal,
        request: pb::LadderGamesRequest,
    ) -> HostResult<pb::LadderGamesResponse> {
        request.check_bounds()?;
        let name = request.ladder.clone();
        let forward = |mut node: LaddersClient<Channel>, request| async move {
            node.ladder_games(request).await
        };
        match self.in_process(&name, request, forward).await? {
            Routed::Here(ladder, request) => {
                self.ladder_games_at(ladder, request.into_inner()).await
            }
            Routed::There(answer) => Ok(answer.into_inner()),
        }
    }

    /// `BotReport` for `principal`.
    pub async fn bot_report_as(
        &self,
        _principal: &Principal,
        request: pb::BotReportRequest,
    ) -> HostResult<pb::BotReportResponse> {
        request.check_bounds()?;
        let name = request.ladder.clone();
        let forward = |mut node: LaddersClient<Channel>, request| async move {
            node.bot_report(request).await
        };
        match self.in_process(&name, request, forward).await? {
            Routed::Here(ladder, request) => self.bot_report_at(ladder, request.into_inner()).await,
            Routed::There(answer) => Ok(answer.into_inner()),
        }
    }

    /// `GetBotLog` for `principal` (admitted by the owner rule, `access::GET_BOT_LOG`): the
    /// owner's check is the ladder's, as SubmitBot's. Hosted bots run on a single node only.
    pub async fn get_bot_log_as(
        &self,
        principal: &Principal,
        request: pb::GetBotLogRequest,
    ) -> HostResult<pb::GetBotLogResponse> {
        request.check_bounds()?;
        self.ladders.single_node("asked for a hosted bot's log")?;
        let ladder = self.ladders.get(&request.ladder)?;
        super::owners::read_log(&ladder, principal, self.front.keyed(), request).await
    }

    /// Where an in-process call for ladder `name` runs ([`LaddersService::route`]): it carries
    /// no key, and is never a forwarded one.
    async fn in_process<R, T, F>(
        &self,
        name: &str,
        message: R,
        forward: impl FnOnce(LaddersClient<Channel>, Request<R>) -> F,
    ) -> HostResult<Routed<R, T>>
    where
        F: Future<Output = Result<Response<T>, Status>>,
    {
        self.route(name, Request::new(message), forward).await
    }

    /// `Standings` of a ladder this node runs.
    pub(super) async fn standings_at(
        &self,
        ladder: Arc<Ladder>,
        request: pb::StandingsRequest,
    ) -> HostResult<pb::StandingsResponse> {
        let state = ladder.state.lock().await;
        let season = season_of(&state, &ladder.name, request.season)?;
        // A season that is over: its frozen figures.
        let past = match season == state.info.season {
            true => None,
            false => state.as_of_season(season),
        };
        let view: &LadderState = past.as_ref().unwrap_or(&*state);
        let mut rows = standings(view);
        if past.is_none() {
            ladder.live_states(&state, &mut rows, crate::actor::unix_ms());
        } else {
            frozen_rows(&mut rows);
        }
        let mut response = pb::StandingsResponse {
            ladder: Some(state.info.clone()),
            standings: rows,
            season: state.season_info(season),
        };
        // A team ladder is always shown by its crews' fit (its rating); another on request.
        let team = state.team_game();
        if !request.fit && !team {
            return Ok(response);
        }
        let by_name = state.by_name.clone();
        let entries = by_name.len();
        let work: Box<dyn FnOnce() -> Vec<Option<fit::Fitted>> + Send> = if team {
            let games = fit::crew_games(view, season);
            Box::new(move || fit::fit_crews(entries, &games))
        } else {
            let games = fit::rankings(view, season);
            Box::new(move || fit::fit(entries, &games))
        };
        drop(past);
        drop(state);
        let _one_at_a_time = self.heavy.acquire().await;
        let fitted = tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| HostError::internal(format!("the fit failed: {e}")))?;
        apply_fit(&by_name, &fitted, &mut response.standings, team);
        Ok(response)
    }

    /// `LadderGames` of a ladder this node runs.
    pub(super) async fn ladder_games_at(
        &self,
        ladder: Arc<Ladder>,
        request: pb::LadderGamesRequest,
    ) -> HostResult<pb::LadderGamesResponse> {
        let after = parse_page_token(&request.page_token)?;
        let size = match request.page_size as usize {
            0 => DEFAULT_PAGE,
            n => n.min(MAX_PAGE),
        };
        let state = ladder.state.lock().await;
        if request.season > state.info.season {
            return Err(HostError::not_found(format!(
                "ladder {} has no season {}: its current season is {}",
                ladder.name, request.season, state.info.season
            )));
        }
        let only = if request.bot.is_empty() {
            None
        } else {
            Some(entry_of(
                &state,
                &ladder.name,
                &request.bot,
                &request.version,
            )?)
        };
        let (games, next_page_token) = games_page(&state, after, size, request.season, only);
        if !next_page_token.is_empty() || state.forgotten == 0 {
            return Ok(pb::LadderGamesResponse {
                games,
                next_page_token,
            });
        }
        // The page reaches matches older than the state keeps: from the log, one such read at a
        // time.
        let log_id = state.log_id.clone();
        drop(state);
        let _one_at_a_time = self.heavy.acquire().await;
        let records = self
            .ladders
            .ctx
            .ladder_logs
            .load_game(&log_id)
            .await
            .map_err(|e| {
                HostError::unavailable(format!(
                    "the ladder's log could not be read: {e}; try again"
                ))
            })?;
        let history = LadderState::rebuild_with_history(&log_id, &records)
            .map_err(|e| HostError::internal(format!("ladder {}: {e}", ladder.name)))?;
        let (games, next_page_token) = games_page(&history, after, size, request.season, only);
        Ok(pb::LadderGamesResponse {
            games,
            next_page_token,
        })
    }

    /// `BotReport` of a ladder this node runs.
    pub(super) async fn bot_report_at(
        &self,
        ladder: Arc<Ladder>,
        request: pb::BotReportRequest,
    ) -> HostResult<pb::BotReportResponse> {
        let state = ladder.state.lock().await;
        let index = entry_of(&state, &ladder.name, &request.bot, &request.version)?;
        let mut rows = standings(&state);
        ladder.live_states(&state, &mut rows, crate::actor::unix_ms());
        Ok(bot_report(&state, index, &rows))
    }
}
