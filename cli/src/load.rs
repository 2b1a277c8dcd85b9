//! The load driver behind `gangs bench` and the host benchmark: many games played at once, flat
//! out, with random legal actions over real gRPC; and, with the same concurrency over the same
//! connections, a baseline of plain unary calls (the standard health service's `Check`: no game,
//! no disk) to divide by. Only the ratio between the two means anything on a shared machine.
//!
//! Each game task keeps a local replica of its game (same kind, options and seed) only to pick a
//! legal action for a seat that may act; the server decides everything. A refused call is counted
//! under its status code and the game is dropped (its replica may no longer match the server),
//! so a wrong guess never turns into a stream of errors.

use gangs_proto::auth::{ApiKey, KeyedClient};
use gangs_proto::codec::ClearCodec;
use gangs_proto::v1 as pb;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::transport::Channel;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

/// How long a game task waits after a refused CreateGame/JoinGame (a rate limit, a full
/// server) before trying again: a refusal is counted, never hammered.
const RETRY_AFTER_REFUSAL: Duration = Duration::from_millis(200);

/// Who streams each game's updates while it is played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Watchers {
    /// Nobody: only the Act answers travel.
    None,
    /// Every seat, as bots do.
    Seats,
    /// Every seat and one spectator.
    All,
}

impl Watchers {
    /// The name as the flag spells it.
    pub fn name(self) -> &'static str {
        match self {
            Watchers::None => "none",
            Watchers::Seats => "seats",
            Watchers::All => "all",
        }
    }
}

/// Which updates of the watchers' streams carry the view (`WatchRequest.views`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Views {
    /// Every update (the default of the API).
    Every,
    /// Only when the seat may act, first on a stream, and when the game ends (as the shipped
    /// bots watch).
    WhenNeeded,
}

impl Views {
    /// The name as the flag spells it.
    pub fn name(self) -> &'static str {
        match self {
            Views::Every => "every",
            Views::WhenNeeded => "when-needed",
        }
    }

    fn to_pb(self) -> pb::WatchViews {
        match self {
            Views::Every => pb::WatchViews::EveryUpdate,
            Views::WhenNeeded => pb::WatchViews::WhenNeeded,
        }
    }
}

/// The `Watch` call as the bench's watchers make it: each update is read as its bytes and
/// counted, never decoded. The bench measures the server; decoding is the bot's own cost, and
/// on a machine shared by client and server it would be taken from the server (a load
/// generator does the least it can). The bytes are those the generated client would decode.
async fn watch_update_sizes(
    connections: &Connections,
    index: usize,
    request: pb::WatchRequest,
) -> Result<tonic::Streaming<u64>, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(tonic::service::interceptor::InterceptedService::new(
        connections.channel(index),
        connections.key.clone(),
    ));
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(format!("the connection is not ready: {e}")))?;
    let path = http::uri::PathAndQuery::from_static("/gangs.v1.Games/Watch");
    let response = grpc
        .server_streaming(tonic::Request::new(request), path, UpdateSizes)
        .await?;
    Ok(response.into_inner())
}

/// Encodes a `WatchRequest` as the generated client does; decodes each `Update` to its size on
/// the stream (the message and gRPC's 5-byte length prefix).
struct UpdateSizes;

impl tonic::codec::Codec for UpdateSizes {
    type Encode = pb::WatchRequest;
    type Decode = u64;
    type Encoder = <ClearCodec<pb::WatchRequest, pb::Update> as tonic::codec::Codec>::Encoder;
    type Decoder = UpdateSizes;

    fn encoder(&mut self) -> Self::Encoder {
        ClearCodec::<pb::WatchRequest, pb::Update>::default().encoder()
    }

    fn decoder(&mut self) -> UpdateSizes {
        UpdateSizes
    }
}

impl tonic::codec::Decoder for UpdateSizes {
    type Item = u64;
    type Error = tonic::Status;

    fn decode(
        &mut self,
        src: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<u64>, tonic::Status> {
        use bytes::Buf;
        let message = src.remaining();
        src.advance(message);
        Ok(Some(message as u64 + 5))
    }
}

/// What to play.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// A kind from the registry (`gangs_games::kinds`), played with its default options.
    pub kind: String,
    /// Games played at once (each by one sequential player for all its seats).
    pub games: usize,
    pub duration: Duration,
    pub watchers: Watchers,
    /// Which of the watchers' updates carry the view.
    pub views: Views,
    /// Game `g`'s n-th game uses seed `seed + g * 1_000_000 + n`.
    pub seed: u64,
}

/// The connections to spread the games over (game `g` uses `channels[g % len]`) and the key
/// sent with every call.
#[derive(Clone)]
pub struct Connections {
    pub channels: Vec<Channel>,
    pub key: ApiKey,
}

impl Connections {
    fn channel(&self, index: usize) -> Channel {
        self.channels[index % self.channels.len()].clone()
    }

    fn games(&self, index: usize) -> KeyedClient {
        self.key.client(self.channel(index))
    }
}

/// One measured phase: how many calls succeeded in how long, their latencies (sorted), and the
/// refusals by status code.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub count: u64,
    pub elapsed: Duration,
    /// Sorted, shortest first.
    pub latencies: Vec<Duration>,
    /// Status code name (`RESOURCE_EXHAUSTED`, ...) to how many calls got it: the measured
    /// calls (`Check`, `Act`).
    pub errors: BTreeMap<&'static str, u64>,
    /// The same for the calls that set a game up (`CreateGame`, `JoinGame`, `Watch`), kept
    /// apart: a create-rate limit is not a refused action.
    pub setup_errors: BTreeMap<&'static str, u64>,
    /// Bytes of Watch updates the watchers received (each message with its gRPC length prefix).
    pub update_bytes: u64,
}

impl Measured {
    /// Successful calls per second of the phase (0 for an empty phase).
    pub fn per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.count as f64 / seconds
        } else {
            0.0
        }
    }

    /// Bytes of Watch updates received per successful call (0 without a call).
    pub fn bytes_per_call(&self) -> f64 {
        if self.count > 0 {
            self.update_bytes as f64 / self.count as f64
        } else {
            0.0
        }
    }

    /// The `p` quantile (0..=1) of the latencies, nearest rank; None without a call.
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        percentile(&self.latencies, p)
    }

    /// Adds a later slice of the same phase: counts, time and latencies (kept sorted).
    pub fn add_slice(&mut self, slice: Measured) {
        self.elapsed += slice.elapsed;
        self.merge(slice);
        self.latencies.sort_unstable();
    }

    fn merge(&mut self, other: Measured) {
        self.count += other.count;
        self.update_bytes += other.update_bytes;
        self.latencies.extend(other.latencies);
        for (code, n) in other.errors {
            *self.errors.entry(code).or_default() += n;
        }
        for (code, n) in other.setup_errors {
            *self.setup_errors.entry(code).or_default() += n;
        }
    }

    fn refused(&mut self, status: &tonic::Status) {
        *self
            .errors
            .entry(gangs_proto::code_name(status.code()))
            .or_default() += 1;
    }

    fn refused_setup(&mut self, status: &tonic::Status) {
        *self
            .setup_errors
            .entry(gangs_proto::code_name(status.code()))
            .or_default() += 1;
    }
}

/// The `p` quantile (0..=1) of sorted latencies, nearest rank; None for none.
pub fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((sorted.len() - 1) as f64 * p.clamp(0.0, 1.0)).round() as usize;
    Some(sorted[rank])
}

/// Plays `plan.games` games at once for `plan.duration`; `progress` counts accepted actions as
/// they happen (for a progress bar). Latencies are those of accepted `Act`s, each durable when
/// answered.
pub async fn play_games(
    plan: &LoadPlan,
    connections: &Connections,
    progress: Arc<AtomicU64>,
) -> Measured {
    let mut games = Games::start(plan, connections, progress);
    let measured = games.play_for(plan.duration).await;
    games.stop().await;
    measured
}

/// The two phases a load is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Health `Check` calls (`baseline`).
    Baseline,
    /// The games (`Games`).
    Games,
}

/// The edges of a slice, where a caller takes its own readings (CPU time, a progress bar).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Start,
    End,
}

/// Both phases of a load, each summed over its slices.
pub struct Compared {
    pub baseline: Measured,
    pub played: Measured,
    /// Rounds of (baseline, games) the phases alternated in.
    pub rounds: u32,
}

/// How many rounds a phase of `duration` is cut into: slices of about two seconds, long enough
/// that the calls in flight at a slice's end weigh nothing.
fn rounds_for(duration: Duration) -> u32 {
    (duration.as_secs() / 2).clamp(1, u32::MAX as u64) as u32
}

/// Measures the baseline (`plan.games` callers) and the games for `plan.duration` each,
/// alternating in slices of about two seconds in ABBA order (baseline, games, games, baseline,
/// ...), so that a shared machine's drift over the run weighs on both alike; the games wait
/// between their slices. `around` is called at both edges of every slice. `calls` and `actions`
/// count as they go (for a progress bar).
pub async fn compare(
    plan: &LoadPlan,
    connections: &Connections,
    calls: Arc<AtomicU64>,
    actions: Arc<AtomicU64>,
    mut around: impl FnMut(Phase, Edge),
) -> Compared {
    let rounds = rounds_for(plan.duration);
    let slice = plan.duration / rounds;
    let mut games = Games::start(plan, connections, actions);
    let mut baseline_measured = Measured::default();
    let mut played = Measured::default();
    for round in 0..rounds {
        let phases = if round % 2 == 0 {
            [Phase::Baseline, Phase::Games]
        } else {
            [Phase::Games, Phase::Baseline]
        };
        for phase in phases {
            around(phase, Edge::Start);
            match phase {
                Phase::Baseline => baseline_measured
                    .add_slice(baseline(plan.games, slice, connections, calls.clone()).await),
                Phase::Games => played.add_slice(games.play_for(slice).await),
            }
            around(phase, Edge::End);
        }
    }
    games.stop().await;
    Compared {
        baseline: baseline_measured,
        played,
        rounds,
    }
}

/// The games of a load, played in slices of time: between two slices every game (with its
/// watch streams) waits where it was. `compare` alternates them with slices of the baseline,
/// so that both phases see the same minutes of a shared machine.
pub struct Games {
    /// One per game task: where its next slice is sent.
    slices: Vec<tokio::sync::mpsc::Sender<Slice>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Bytes of updates received by every watcher since the last slice ended.
    received: Arc<AtomicU64>,
}

/// One slice of play for one game task: play until `deadline`, then answer what was measured.
struct Slice {
    deadline: Instant,
    done: tokio::sync::oneshot::Sender<Measured>,
}

impl Games {
    /// Starts `plan.games` game tasks, idle until the first slice (`plan.duration` is unused:
    /// each slice says how long).
    pub fn start(plan: &LoadPlan, connections: &Connections, progress: Arc<AtomicU64>) -> Games {
        let options = gangs_games::parse_options(&plan.kind, None, &[])
            .expect("the kind was checked by the caller");
        let received = Arc::new(AtomicU64::new(0));
        let mut slices = Vec::with_capacity(plan.games);
        let mut tasks = Vec::with_capacity(plan.games);
        for g in 0..plan.games {
            let player = Player {
                kind: plan.kind.clone(),
                options,
                watchers: plan.watchers,
                views: plan.views,
                received: received.clone(),
                connections: connections.clone(),
                index: g,
                progress: progress.clone(),
            };
            let (send, receive) = tokio::sync::mpsc::channel(1);
            let first_seed = plan.seed.wrapping_add(g as u64 * 1_000_000);
            slices.push(send);
            tasks.push(tokio::spawn(player.play_slices(first_seed, receive)));
        }
        Games {
            slices,
            tasks,
            received,
        }
    }

    /// Plays every game for `duration` (a call in flight at the end is waited for and counted)
    /// and answers the slice's measure, latencies sorted. The updates counted are those that
    /// arrived since the previous slice ended.
    pub async fn play_for(&mut self, duration: Duration) -> Measured {
        let start = Instant::now();
        let deadline = start + duration;
        let mut answers = Vec::with_capacity(self.slices.len());
        for slices in &self.slices {
            let (done, answer) = tokio::sync::oneshot::channel();
            if slices.send(Slice { deadline, done }).await.is_ok() {
                answers.push(answer);
            }
        }
        let mut total = gather(answers, start).await;
        total.update_bytes = self.received.swap(0, Ordering::Relaxed);
        total
    }

    /// Ends every game task (their games and watch streams with them).
    pub async fn stop(self) {
        drop(self.slices);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// `concurrency` callers each calling the health service's `Check` in a loop for `duration`,
/// spread over the connections like the games are: the baseline.
pub async fn baseline(
    concurrency: usize,
    duration: Duration,
    connections: &Connections,
    progress: Arc<AtomicU64>,
) -> Measured {
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = Vec::with_capacity(concurrency);
    for c in 0..concurrency {
        let mut health =
            HealthClient::with_interceptor(connections.channel(c), connections.key.clone());
        let progress = progress.clone();
        tasks.push(tokio::spawn(async move {
            let mut measured = Measured::default();
            while Instant::now() < deadline {
                let t = Instant::now();
                let request = HealthCheckRequest {
                    service: String::new(),
                };
                match health.check(request).await {
                    Ok(_) => {
                        measured.latencies.push(t.elapsed());
                        measured.count += 1;
                        progress.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(status) => {
                        measured.refused(&status);
                        tokio::time::sleep(RETRY_AFTER_REFUSAL).await;
                    }
                }
            }
            measured
        }));
    }
    gather(tasks, start).await
}

/// The measures of a phase's tasks (their handles, or their answers) merged into one, timed
/// from `start`, latencies sorted. A task that ended without one counts nothing.
async fn gather<E>(
    answers: Vec<impl std::future::Future<Output = Result<Measured, E>>>,
    start: Instant,
) -> Measured {
    let mut total = Measured::default();
    for answer in answers {
        if let Ok(measured) = answer.await {
            total.merge(measured);
        }
    }
    total.elapsed = start.elapsed();
    total.latencies.sort_unstable();
    total
}

/// One game task: plays games one after another, every seat itself, until the deadline.
struct Player {
    kind: String,
    options: pb::GameOptions,
    watchers: Watchers,
    views: Views,
    /// Bytes of updates received by every watcher of every game.
    received: Arc<AtomicU64>,
    connections: Connections,
    index: usize,
    progress: Arc<AtomicU64>,
}

/// A game being played: its id, the seats' tokens and the local replica.
struct Playing {
    id: String,
    tokens: Vec<String>,
    replica: Box<dyn gangs_games::Game>,
    rng: rand_chacha::ChaCha8Rng,
    /// The watch streams' drain tasks, stopped with the game (or the bench).
    watchers: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Playing {
    fn drop(&mut self) {
        for watcher in &self.watchers {
            watcher.abort();
        }
    }
}

impl Player {
    /// Plays each slice it is sent until the slice's deadline, then answers its measure. A
    /// game cut by a deadline goes on in the next slice; a game over, or refused, is followed
    /// by a new one.
    async fn play_slices(self, first_seed: u64, mut slices: tokio::sync::mpsc::Receiver<Slice>) {
        let mut client = self.connections.games(self.index);
        let mut seed = first_seed;
        let mut current: Option<Playing> = None;
        while let Some(slice) = slices.recv().await {
            let mut measured = Measured::default();
            while Instant::now() < slice.deadline {
                let mut game = match current.take() {
                    Some(game) => game,
                    None => match self.new_game(&mut client, seed).await {
                        Ok(game) => {
                            seed = seed.wrapping_add(1);
                            game
                        }
                        Err(status) => {
                            measured.refused_setup(&status);
                            tokio::time::sleep(RETRY_AFTER_REFUSAL).await;
                            continue;
                        }
                    },
                };
                if self
                    .play(&mut client, &mut game, &mut measured, slice.deadline)
                    .await
                {
                    current = Some(game);
                }
            }
            let _ = slice.done.send(measured);
        }
    }

    /// Creates a game, takes every seat and starts the requested watchers.
    async fn new_game(
        &self,
        client: &mut KeyedClient,
        seed: u64,
    ) -> Result<Playing, tonic::Status> {
        let id = client
            .create_game(pb::CreateGameRequest {
                kind: self.kind.clone(),
                options: Some(self.options),
                seed: Some(seed),
                ..Default::default()
            })
            .await?
            .into_inner()
            .game_id;
        let mut replica = gangs_games::new_game(&self.kind, Some(&self.options), seed, None)
            .map_err(|refusal| tonic::Status::internal(refusal.to_string()))?;
        let mut tokens = Vec::with_capacity(replica.players());
        for seat in 0..replica.players() {
            let join = pb::JoinGameRequest {
                game_id: id.clone(),
                seat: Some(seat as u32),
                name: format!("bench{seat}"),
                ..Default::default()
            };
            tokens.push(client.join_game(join).await?.into_inner().token);
        }
        replica.start();
        let mut game = Playing {
            id,
            tokens,
            replica,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
            watchers: Vec::new(),
        };
        let mut audiences: Vec<String> = match self.watchers {
            Watchers::None => Vec::new(),
            Watchers::Seats | Watchers::All => game.tokens.clone(),
        };
        if self.watchers == Watchers::All {
            audiences.push(String::new()); // the spectator
        }
        for token in audiences {
            let request = pb::WatchRequest {
                game_id: game.id.clone(),
                token,
                from_seq: 0,
                views: self.views.to_pb() as i32,
            };
            let mut stream = watch_update_sizes(&self.connections, self.index, request).await?;
            let received = self.received.clone();
            game.watchers.push(tokio::spawn(async move {
                while let Ok(Some(bytes)) = stream.message().await {
                    received.fetch_add(bytes, Ordering::Relaxed);
                }
            }));
        }
        Ok(game)
    }

    /// Plays random legal actions until the game is over, `deadline` passes or a call is
    /// refused. Answers whether the game may go on (only the deadline stopped it).
    async fn play(
        &self,
        client: &mut KeyedClient,
        game: &mut Playing,
        measured: &mut Measured,
        deadline: Instant,
    ) -> bool {
        while !game.replica.is_over() {
            if Instant::now() >= deadline {
                return true;
            }
            // The first seat the game waits for (only its legal actions are worked out).
            let Some((seat, actions)) = game
                .replica
                .actors()
                .into_iter()
                .map(|seat| (seat, game.replica.legal_actions(seat)))
                .find(|(_, actions)| !actions.is_empty())
            else {
                return false; // nobody may act: a game waiting on a clock; start another
            };
            let action = actions[game.rng.random_range(0..actions.len())].clone();
            let request = pb::ActRequest {
                game_id: game.id.clone(),
                token: game.tokens[seat].clone(),
                action: Some(action.clone()),
                expected_seq: None,
                action_id: String::new(),
            };
            let t = Instant::now();
            match client.act(request).await {
                Ok(_) => {
                    measured.latencies.push(t.elapsed());
                    measured.count += 1;
                    self.progress.fetch_add(1, Ordering::Relaxed);
                }
                Err(status) => {
                    measured.refused(&status);
                    return false;
                }
            }
            if game.replica.act(seat, &action).is_err() {
                return false; // cannot happen for a legal action; never play on a doubtful replica
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_nearest_rank_and_none_when_empty() {
        assert_eq!(percentile(&[], 0.5), None);
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&sorted, 0.0), Some(Duration::from_millis(1)));
        assert_eq!(percentile(&sorted, 0.5), Some(Duration::from_millis(51)));
        assert_eq!(percentile(&sorted, 0.99), Some(Duration::from_millis(99)));
        assert_eq!(percentile(&sorted, 1.0), Some(Duration::from_millis(100)));
    }

    #[test]
    fn measured_merges_counts_and_errors() {
        let mut total = Measured::default();
        let mut part = Measured {
            count: 2,
            latencies: vec![Duration::from_millis(3), Duration::from_millis(1)],
            ..Default::default()
        };
        part.refused(&tonic::Status::resource_exhausted("limit"));
        part.refused_setup(&tonic::Status::unauthenticated("no key"));
        total.merge(part.clone());
        total.merge(part);
        assert_eq!(total.count, 4);
        assert_eq!(total.latencies.len(), 4);
        assert_eq!(total.errors.get("RESOURCE_EXHAUSTED"), Some(&2));
        assert_eq!(total.errors.get("UNAUTHENTICATED"), None);
        assert_eq!(total.setup_errors.get("UNAUTHENTICATED"), Some(&2));
        total.elapsed = Duration::from_secs(2);
        assert_eq!(total.per_second(), 2.0);
    }
}
