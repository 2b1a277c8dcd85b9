//! Hosted bots on a ladder (`SubmitBot`, docs/hosted-bots.md): the server plays a bot's
//! WebAssembly module for it, as an in-process entry like the house bots (`house.rs` queues
//! it and plays its seats), deciding on a bounded pool of threads apart from the games'
//! runtime (`gangs_hosted::pool`). A decision that fails (out of fuel or memory, a trap, bad
//! output) plays the seat's default action, logged as a `timed_out` of that bot with the
//! cause. A seat's clock starts when its decision leaves the pool's queue and runs, not while
//! it waits there. A decision the host could not run in time (its pool full, the wall-clock
//! backstop) is the host's: the seat is left to its clock, and a hosted seat's timeout by the
//! clock voids the game (`play::void_reason`) instead of charging the bot. Every decision's
//! stderr is kept for the bot's owner (`bot_log.rs`, `GetBotLog`).

use super::bot_log::{self, BotLogs};
use super::owners::may_submit;
use super::records::{entry_name, HostedModule, LadderState};
use super::Ladder;
use crate::error::{HostError, HostResult};
use crate::front::Principal;
use gangs_hosted::seat::{self, SeatDecision};
use gangs_hosted::{pool::Pool, Bot, Budget, Fault, Runner};
use gangs_proto::v1 as pb;
use pb::ladder_record::Record as Lr;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// Jobs waiting per pool thread before the pool refuses more (the host is overloaded).
const QUEUE_PER_THREAD: usize = 64;
/// Decisions of one bot waiting at most (its games at once, a few each): past it, that bot's
/// decisions are the ones refused, never another bot's.
const QUEUE_PER_BOT: usize = 32;
/// The sample decision's game seed (SubmitBot checks a module on it).
const SAMPLE_SEED: u64 = 0x5eed;

/// The server's hosted-bot runner, shared by every ladder.
pub struct Hosting {
    runner: Runner,
    pool: Pool,
    /// `--max-module-bytes`.
    pub max_module_bytes: u64,
    /// Compiled modules by SHA-256, the most recently used kept (`Compiled`).
    compiled: Mutex<Compiled>,
    /// Compiled code on disk (`--cache-dir`): a restart loads it instead of compiling.
    cache: Option<gangs_hosted::compile::ArtefactCache>,
    /// Compiles run one at a time on a thread of their own, never on the decision threads: a
    /// module that takes the compiler seconds delays no decision.
    compiling: tokio::sync::Semaphore,
    /// When each recent decision left the queue and how long it had waited (the last minute):
    /// the matchmaker's backpressure (`backlog`).
    waits: Mutex<std::collections::VecDeque<(std::time::Instant, Duration)>>,
    /// Fuel this host burns per second on one hosted thread, measured once when first needed.
    fuel_rate: tokio::sync::OnceCell<f64>,
}

/// A hosted decision's fuel must run within this share of the ladder's turn on this host
/// (its measured fuel rate): the rest is the margin for a busier moment and for modules whose
/// instructions cost more than the measuring loop's.
const FUEL_SHARE_OF_TURN: f64 = 0.5;
/// The span over which the decisions' queue waits are read (`Hosting::backlog`), and the
/// waits kept at most in it.
const BACKLOG_WINDOW: Duration = Duration::from_secs(60);
const MAX_WAITS_KEPT: usize = 100_000;
/// Fuel per measuring run, and runs (the best is kept).
const MEASURE_FUEL: u64 = 20_000_000;
const MEASURE_ROUNDS: u32 = 3;

/// The default of `--hosted-bot-threads`: the cores less one, at least one.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
        .max(1)
}

/// Compiled modules kept in memory: at most this many, and modules of at most this many
/// bytes in all (the least recently used leave first; the disk cache brings them back).
const KEEP_COMPILED: usize = 256;
const KEEP_COMPILED_BYTES: usize = 512 << 20;

/// The compiled modules in memory, by SHA-256, each with when it was last used.
#[derive(Default)]
struct Compiled {
    bots: HashMap<String, (Bot, u64)>,
    uses: u64,
}

impl Compiled {
    fn get(&mut self, sha256: &str) -> Option<Bot> {
        self.uses += 1;
        let uses = self.uses;
        self.bots.get_mut(sha256).map(|(bot, used)| {
            *used = uses;
            bot.clone()
        })
    }

    fn insert(&mut self, sha256: String, bot: Bot) {
        self.uses += 1;
        self.bots.insert(sha256, (bot, self.uses));
        while self.bots.len() > KEEP_COMPILED
            || self.bots.values().map(|(b, _)| b.size).sum::<usize>() > KEEP_COMPILED_BYTES
        {
            let Some(oldest) = self
                .bots
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(sha, _)| sha.clone())
            else {
                return;
            };
            self.bots.remove(&oldest);
        }
    }
}

impl Hosting {
    /// `cache_dir`: where compiled modules are kept on disk (none: compiled at every start).
    /// Modules' structure is checked against the default bounds.
    pub fn new(
        threads: usize,
        max_module_bytes: u64,
        cache_dir: Option<&std::path::Path>,
    ) -> Arc<Hosting> {
        let bounds = gangs_hosted::compile::DEFAULT_BOUNDS;
        let sizes = (max_module_bytes, gangs_hosted::DEFAULT_COMPONENT_BYTES);
        Hosting::with_bounds(threads, sizes, cache_dir, bounds)
    }

    /// [`Hosting::new`], modules' structure checked against `bounds` (the server's
    /// `--max-module-functions`, `--max-function-bytes`, `--max-function-locals`), modules and
    /// components up to `(max_module_bytes, max_component_bytes)`.
    pub fn with_bounds(
        threads: usize,
        (max_module_bytes, max_component_bytes): (u64, u64),
        cache_dir: Option<&std::path::Path>,
        bounds: gangs_hosted::compile::Bounds,
    ) -> Arc<Hosting> {
        let threads = threads.max(1);
        let cache = cache_dir.map(gangs_hosted::compile::ArtefactCache::new);
        Arc::new(Hosting {
            runner: Runner::compiling_on_one_core()
                .with_bounds(bounds)
                .with_component_bytes(max_component_bytes),
            pool: Pool::new(threads, threads * QUEUE_PER_THREAD, QUEUE_PER_BOT),
            max_module_bytes,
            compiled: Mutex::default(),
            cache,
            compiling: tokio::sync::Semaphore::new(1),
            waits: Mutex::default(),
            fuel_rate: tokio::sync::OnceCell::new(),
        })
    }

    /// Keeps a decision's wait in the queue for a minute (and in the metrics).
    fn note_wait(&self, waited: Duration) {
        crate::metrics::hosted_queue_wait(waited.as_secs_f64());
        let now = std::time::Instant::now();
        let mut waits = self.waits.lock().expect("waits lock");
        while waits
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > BACKLOG_WINDOW)
        {
            waits.pop_front();
        }
        if waits.len() < MAX_WAITS_KEPT {
            waits.push_back((now, waited));
        }
    }

    /// How long hosted decisions waited for a thread of late: the 90th percentile over the
    /// last minute (zero without decisions). The matchmaker starts no game with a hosted seat
    /// while it exceeds a quarter of the ladder's turn, rather than letting tables go void.
    pub fn backlog(&self) -> Duration {
        let now = std::time::Instant::now();
        let mut recent: Vec<Duration> = self
            .waits
            .lock()
            .expect("waits lock")
            .iter()
            .filter(|(at, _)| now.duration_since(*at) <= BACKLOG_WINDOW)
            .map(|(_, waited)| *waited)
            .collect();
        if recent.is_empty() {
            return Duration::ZERO;
        }
        recent.sort();
        recent[(recent.len() * 9 / 10).min(recent.len() - 1)]
    }

    /// Fuel this host burns per second on one hosted thread (measured once, off the runtime).
    pub async fn fuel_per_second(&self) -> f64 {
        *self
            .fuel_rate
            .get_or_init(|| async {
                let runner = self.runner.clone();
                let measured = tokio::task::spawn_blocking(move || {
                    runner.fuel_per_second(MEASURE_FUEL, MEASURE_ROUNDS)
                })
                .await
                .unwrap_or(f64::INFINITY);
                tracing::info!(
                    fuel_per_second = measured as u64,
                    "measured the hosted bots' fuel rate on this host"
                );
                measured
            })
            .await
    }

    /// Refuses a ladder whose hosted fuel per decision this host cannot run within its turn
    /// (`FUEL_SHARE_OF_TURN` of it): such a decision, still running within its fuel at the
    /// seat's deadline, would be neither the bot's fault nor fixable by it.
    pub async fn check_fuel_fits_turn(&self, fuel: u64, turn_ms: u64) -> HostResult<()> {
        let rate = self.fuel_per_second().await;
        check_fuel_fits(fuel, turn_ms, rate)
    }
}

/// [`Hosting::check_fuel_fits_turn`] at a measured `rate` (fuel per second).
fn check_fuel_fits(fuel: u64, turn_ms: u64, rate: f64) -> HostResult<()> {
    if turn_ms == 0 || !rate.is_finite() {
        return Ok(());
    }
    let needs_ms = fuel as f64 / rate * 1000.0;
    let allowed_ms = turn_ms as f64 * FUEL_SHARE_OF_TURN;
    if needs_ms <= allowed_ms {
        return Ok(());
    }
    let most_fuel = (rate * allowed_ms / 1000.0) as u64;
    let least_turn = (needs_ms / FUEL_SHARE_OF_TURN).ceil() as u64;
    Err(HostError::failed_precondition(format!(
        "--hosted-fuel {fuel} takes about {} ms per decision on this host (it runs about {} M fuel per second on one hosted thread), more than half of --turn-ms {turn_ms}: a decision still running within its fuel at the seat's deadline would be nobody's fault; lower --hosted-fuel to at most {most_fuel} or raise --turn-ms to at least {least_turn}",
        needs_ms.round() as u64,
        (rate / 1e6).round() as u64
    )))
}

impl Hosting {
    /// Runs decision `job` of bot `tenant` on the pool; None when its queue is full (the host
    /// is overloaded).
    async fn run(
        &self,
        tenant: &str,
        job: impl FnOnce(&Runner) -> seat::Decided + Send + 'static,
    ) -> Option<seat::Decided> {
        self.run_reporting_start(tenant, job, std::future::ready(()))
            .await
    }

    /// Runs decision `job` of bot `tenant` on the pool (its turn by the fuel each bot used:
    /// `gangs_hosted::pool`), and `started` once a thread has taken the job from the queue
    /// (while the job runs); None when the queue is full (the host is overloaded).
    async fn run_reporting_start(
        &self,
        tenant: &str,
        job: impl FnOnce(&Runner) -> seat::Decided + Send + 'static,
        started: impl std::future::Future<Output = ()>,
    ) -> Option<seat::Decided> {
        let (started_tx, started_rx) = oneshot::channel();
        let (tx, rx) = oneshot::channel();
        let runner = self.runner.clone();
        let queued_at = std::time::Instant::now();
        let queued = self.pool.spawn(tenant, move || {
            let _ = started_tx.send(queued_at.elapsed());
            let decided = job(&runner);
            let fuel = decided.outcome.fuel_used;
            let _ = tx.send(decided);
            fuel
        });
        crate::metrics::hosted_pool(&self.pool);
        queued.ok()?;
        if let Ok(waited) = started_rx.await {
            self.note_wait(waited);
            started.await;
        }
        rx.await.ok()
    }

    /// Decisions queued or running on the pool's threads now: work outside tokio, which a
    /// simulation on tokio's paused clock waits for before it lets the clock move.
    pub fn decisions_in_flight(&self) -> usize {
        use std::sync::atomic::Ordering::SeqCst;
        let stats = self.pool.stats();
        // The queue's count first: a job leaves it only once counted as running.
        let queued = stats.queued.load(SeqCst);
        queued + stats.running.load(SeqCst)
    }

    /// `module` ready to run: kept in memory, else loaded from the disk cache or compiled, on
    /// the compiling thread (never a decision thread), one module at a time.
    async fn compile(&self, module: &HostedModule, budget: Budget) -> Result<Bot, String> {
        let sha256 = &module.module_sha256;
        if let Some(bot) = self.compiled.lock().expect("compiled").get(sha256) {
            return Ok(bot);
        }
        let bot = self
            .compile_bytes(module.module.clone(), sha256.clone(), u64::MAX, budget)
            .await
            .map_err(|refusal| refusal.0)?;
        self.compiled
            .lock()
            .expect("compiled")
            .insert(sha256.clone(), bot.clone());
        Ok(bot)
    }

    /// Compiles `bytes` (of SHA-256 `sha256`, at most `max_bytes`) on the compiling thread,
    /// through the disk cache.
    async fn compile_bytes(
        &self,
        bytes: Arc<[u8]>,
        sha256: String,
        max_bytes: u64,
        budget: Budget,
    ) -> Result<Bot, gangs_hosted::Refusal> {
        let _one_at_a_time = self
            .compiling
            .acquire()
            .await
            .map_err(|_| gangs_hosted::Refusal("the server is stopping".into()))?;
        let runner = self.runner.clone();
        let cache = self.cache.clone();
        let started = std::time::Instant::now();
        let compiled = tokio::task::spawn_blocking(move || {
            let cache = cache.as_ref().map(|cache| (cache, sha256.as_str()));
            runner.compile_cached(&bytes, max_bytes, &budget, cache)
        })
        .await
        .map_err(|e| gangs_hosted::Refusal(format!("the compiler failed: {e}")))?;
        let (bot, used) = compiled?;
        let result = match used {
            gangs_hosted::compile::CacheUse::Hit => "hit",
            gangs_hosted::compile::CacheUse::Miss | gangs_hosted::compile::CacheUse::None => "miss",
        };
        crate::metrics::hosted_compile(result, started.elapsed().as_secs_f64());
        Ok(bot)
    }
}

/// A ladder's budget per hosted decision (defaults for a ladder created without one). The
/// wall-clock backstop is the ladder's turn: past it the game's clock would have fired anyway.
pub fn budget(info: &pb::Ladder) -> Budget {
    let or = |value: u64, default: u64| if value == 0 { default } else { value };
    Budget {
        fuel: or(info.hosted_fuel, gangs_hosted::DEFAULT_FUEL),
        memory_bytes: or(info.hosted_memory_bytes, gangs_hosted::DEFAULT_MEMORY_BYTES),
        backstop: Duration::from_millis(info.turn_ms.max(1000)),
    }
}

/// The largest module a ladder takes: its module budget, within the server's flag.
fn module_limit(info: &pb::Ladder, hosting: &Hosting) -> u64 {
    let own = if info.hosted_module_bytes == 0 {
        gangs_hosted::DEFAULT_MODULE_BYTES
    } else {
        info.hosted_module_bytes
    };
    own.min(hosting.max_module_bytes)
}

/// A seat's first update in a fresh game of the ladder's kind: what SubmitBot's sample
/// decision answers.
fn sample_update(info: &pb::Ladder) -> HostResult<pb::Update> {
    let broken = |e: gangs_games::Refusal| HostError::Internal(format!("a sample game: {e}"));
    let mut game = gangs_games::new_game(&info.kind, info.options.as_ref(), SAMPLE_SEED, None)
        .map_err(broken)?;
    let events = game.start();
    let players = game.players();
    let seat = (0..players)
        .find(|&s| !game.legal_actions(s).is_empty())
        .ok_or_else(|| HostError::Internal("a sample game awaits no seat".into()))?;
    let seq = players as u64 + 2;
    Ok(gangs_games::update::in_process_update(
        &*game, seat, seq, &events,
    ))
}

/// The version a submission gets: as given, or the next number after the bot's numbered
/// versions.
fn next_version(state: &LadderState, bot: &str) -> String {
    let last = state
        .entries
        .iter()
        .filter(|e| e.bot == bot)
        .filter_map(|e| e.version.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    (last + 1).to_string()
}

/// SubmitBot's request checked before anything runs: a bot name that is not a house bot's, a
/// module, within its size limit (a component's, or the ladder's module budget).
fn check_submitted(
    ladder: &str,
    info: &pb::Ladder,
    hosting: &Hosting,
    request: &pb::SubmitBotRequest,
) -> HostResult<()> {
    if request.bot.starts_with(super::house::HOUSE_PREFIX) {
        return Err(HostError::Invalid(format!(
            "bot names starting with {:?} are the server's own house bots: choose another name",
            super::house::HOUSE_PREFIX
        )));
    }
    if request.module.is_empty() {
        return Err(HostError::Invalid(
            "module is required: the bot's .wasm file (gangs ladder submit LADDER BOT --wasm FILE)"
                .into(),
        ));
    }
    let size = request.module.len() as u64;
    if gangs_hosted::component::is_component(&request.module) {
        let limit = hosting.runner.max_component_bytes();
        if size > limit {
            return Err(HostError::Exhausted(format!(
                "the component is {size} bytes: the server takes components up to {limit} bytes (--max-component-bytes)"
            )));
        }
        return Ok(());
    }
    let limit = module_limit(info, hosting);
    if size > limit {
        return Err(HostError::Exhausted(format!(
            "the module is {size} bytes: ladder {ladder} takes modules up to {limit} bytes (the ladder's module budget, within the server's --max-module-bytes)"
        )));
    }
    Ok(())
}

/// `SubmitBot` on the ladder that runs here: checks the module (compiles, imports, a legal
/// answer to a sample decision within the budget), then enters it as a new version of the bot
/// and starts playing it.
pub async fn submit(
    ladder: &Arc<Ladder>,
    principal: &Principal,
    keyed: bool,
    request: pb::SubmitBotRequest,
) -> HostResult<pb::SubmitBotResponse> {
    let hosting = ladder.ctx.hosting.clone();
    let info = ladder.state.lock().await.info.clone();
    check_submitted(&ladder.name, &info, &hosting, &request)?;
    let version = {
        let state = ladder.state.lock().await;
        let exists = state.entries.iter().any(|e| e.bot == request.bot);
        may_submit(principal, keyed, &ladder.name, &request.bot, exists)?;
        let version = if request.version.is_empty() {
            next_version(&state, &request.bot)
        } else {
            request.version.clone()
        };
        let name = entry_name(&request.bot, &version);
        if state.by_name.contains_key(&name) {
            return Err(HostError::Invalid(format!(
                "{name} is registered on ladder {} already: give another --version, or none for the next number",
                ladder.name
            )));
        }
        version
    };
    let budget = budget(&info);
    hosting
        .check_fuel_fits_turn(budget.fuel, info.turn_ms)
        .await?;
    ladder.admit_submit(&request.bot)?;
    let sample = sample_update(&info)?;
    let module: Arc<[u8]> = request.module.into();
    let entry = entry_name(&request.bot, &version);
    let kind = info.kind.clone();
    let module_sha256 = gangs_hosted::compile::sha256_hex(&module);
    // Compiled on the compiling thread (a compile never delays a decision), then its sample
    // decision on the decision threads like any decision.
    let compiled = hosting
        .compile_bytes(
            module.clone(),
            module_sha256.clone(),
            module_limit(&info, &hosting),
            budget,
        )
        .await
        .map_err(|refusal| HostError::Invalid(format!("the module was refused: {refusal}")))?;
    let decided = {
        let bot = compiled.clone();
        let entry = entry.clone();
        hosting
            .run(&entry.clone(), move |runner| {
                seat::decide(
                    runner,
                    &bot,
                    &budget,
                    SeatDecision {
                        kind: &kind,
                        update: &sample,
                        record_unix_ms: 0,
                        seed: SAMPLE_SEED,
                        bot: &entry,
                    },
                )
            })
            .await
            .ok_or_else(|| {
                HostError::Exhausted(
                    "the server's hosted-bot threads are busy (--hosted-bot-threads): try again"
                        .into(),
                )
            })?
    };
    let sample_answer = match (&decided.action, &decided.outcome.answer) {
        (Ok(_), Ok(line)) => line.clone(),
        (Err(fault), _) => {
            let stderr = String::from_utf8_lossy(&decided.outcome.stderr);
            let stderr = stderr.trim();
            let tail: String = stderr
                .chars()
                .rev()
                .take(400)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            return Err(HostError::Invalid(format!(
                "the module failed its sample decision ({fault}; fuel used {} of {}){}",
                decided.outcome.fuel_used,
                budget.fuel,
                if tail.is_empty() {
                    String::new()
                } else {
                    format!("; it printed on stderr: {tail}")
                }
            )));
        }
        (Ok(_), Err(_)) => unreachable!("an action comes from an answer"),
    };
    hosting
        .compiled
        .lock()
        .expect("compiled")
        .insert(module_sha256.clone(), compiled);
    let store = &ladder.ctx.ladder_logs;
    if store.keeps_modules() {
        // Durable before the record that names it.
        store
            .put_module(&module_sha256, &module)
            .await
            .map_err(|e| HostError::unavailable(format!("the module could not be kept: {e}")))?;
    }
    let hosted = HostedModule {
        module,
        module_sha256: module_sha256.clone(),
        engine: gangs_hosted::ENGINE.to_string(),
    };
    let (key, index) = {
        let mut state = ladder.state.lock().await;
        if state.by_name.contains_key(&entry) {
            return Err(HostError::Invalid(format!(
                "{entry} was registered on ladder {} meanwhile: submit again",
                ladder.name
            )));
        }
        let key = ladder
            .register_hosted(&mut state, request.bot.clone(), version.clone(), &hosted)
            .await?;
        (key, state.by_name[&entry])
    };
    tracing::info!(ladder = %ladder.name, bot = %entry, bytes = hosted.module.len(), "entered a hosted bot");
    tokio::spawn(play(ladder.clone(), index));
    Ok(pb::SubmitBotResponse {
        bot: request.bot,
        version,
        bot_key: key,
        module_sha256,
        engine: gangs_hosted::ENGINE.to_string(),
        sample_fuel: decided.outcome.fuel_used,
        sample_answer,
    })
}

/// The record that enters a hosted version: its module inline, or (`inline` false: the store
/// keeps modules apart, `LogStore::put_module`) named by its SHA-256 alone.
pub fn submitted(
    bot: String,
    version: String,
    key_sha256: String,
    hosted: &HostedModule,
    inline: bool,
) -> Lr {
    Lr::Submitted(pb::ladder_record::BotSubmitted {
        bot,
        version,
        key_sha256,
        module: if inline {
            hosted.module.to_vec()
        } else {
            Vec::new()
        },
        module_sha256: hosted.module_sha256.clone(),
        engine: hosted.engine.clone(),
    })
}

/// `module` with its bytes: a record that names its module by hash alone is read from the
/// store's modules (None, logged, when the store has no such module).
async fn with_bytes(
    ladder: &Ladder,
    module: Arc<HostedModule>,
    name: &str,
) -> Option<Arc<HostedModule>> {
    if !module.module.is_empty() {
        return Some(module);
    }
    match ladder
        .ctx
        .ladder_logs
        .get_module(&module.module_sha256)
        .await
    {
        Ok(Some(bytes)) => Some(Arc::new(HostedModule {
            module: bytes.into(),
            module_sha256: module.module_sha256.clone(),
            engine: module.engine.clone(),
        })),
        Ok(None) => {
            tracing::error!(ladder = %ladder.name, bot = %name, sha256 = %module.module_sha256, "a hosted bot's module is not in the store: it does not play");
            None
        }
        Err(e) => {
            tracing::error!(ladder = %ladder.name, bot = %name, "a hosted bot's module cannot be read: it does not play: {e}");
            None
        }
    }
}

/// Plays hosted entry `index` until the server stops or the bot retires: compiled once, then
/// queued and played like a house bot.
pub async fn play(ladder: Arc<Ladder>, index: usize) {
    let (module, info, name) = {
        let state = ladder.state.lock().await;
        let entry = &state.entries[index];
        let Some(module) = entry.hosted.clone() else {
            return;
        };
        if entry.retired {
            return;
        }
        (module, state.info.clone(), entry.name())
    };
    let budget = budget(&info);
    let Some(module) = with_bytes(&ladder, module, &name).await else {
        return;
    };
    let bot = match ladder.ctx.hosting.compile(&module, budget).await {
        Ok(bot) => bot,
        Err(why) => {
            tracing::error!(ladder = %ladder.name, bot = %name, "a hosted bot's module does not compile here: {why}");
            return;
        }
    };
    if module.engine != gangs_hosted::ENGINE {
        tracing::warn!(ladder = %ladder.name, bot = %name, submitted = %module.engine, running = gangs_hosted::ENGINE, "a hosted bot submitted for another engine: its fuel may count differently");
    }
    let hosted = Arc::new(HostedBot {
        hosting: ladder.ctx.hosting.clone(),
        bot,
        budget,
        kind: info.kind.clone(),
        ladder: ladder.name.clone(),
        name: name.clone(),
        index,
        logs: ladder.bot_logs.clone(),
    });
    super::house::play(ladder, super::house::Player::Hosted(hosted), name, index).await;
}

/// A hosted entry, ready to decide.
pub struct HostedBot {
    hosting: Arc<Hosting>,
    bot: Bot,
    budget: Budget,
    kind: String,
    /// Its ladder's name when it started playing (the per-bot fuel metric's label).
    ladder: String,
    /// `BOT@VERSION`.
    name: String,
    /// Its entry, and where its decisions' stderr is kept.
    index: usize,
    logs: Arc<BotLogs>,
}

/// What a seat does with an update.
pub enum Step {
    Act(pb::GameAction),
    /// Play the default action, logged with this cause.
    Forfeit(String),
    /// Nothing: the seat's clock decides (the host could not run the decision).
    Wait,
}

impl HostedBot {
    /// The seat's step on `update` of game `game_id`, dealt from `seed`; `running` is awaited
    /// once the decision leaves the pool's queue and runs (the seat's clock starts then); its
    /// stderr kept in the bot's log.
    pub async fn decide(
        self: &Arc<Self>,
        game_id: &str,
        seed: u64,
        update: pb::Update,
        running: impl std::future::Future<Output = ()>,
    ) -> Step {
        let (seq, seat) = (update.seq, update.seat.unwrap_or(0));
        let me = self.clone();
        let decided = self
            .hosting
            .run_reporting_start(
                &self.name,
                move |runner| {
                    seat::decide(
                        runner,
                        &me.bot,
                        &me.budget,
                        SeatDecision {
                            kind: &me.kind,
                            update: &update,
                            record_unix_ms: update.unix_ms,
                            seed,
                            bot: &me.name,
                        },
                    )
                },
                running,
            )
            .await;
        let Some(decided) = decided else {
            crate::metrics::hosted_decision("overload", 0);
            return Step::Wait;
        };
        let fuel = decided.outcome.fuel_used;
        crate::metrics::hosted_bot_fuel(&self.ladder, &self.name, fuel);
        let cause = match &decided.action {
            Ok(_) => String::new(),
            Err(fault) => fault.to_string(),
        };
        self.logs.record(
            self.index,
            game_id,
            bot_log::Decision {
                seq,
                seat,
                fuel,
                cause,
                stderr: String::from_utf8_lossy(&decided.outcome.stderr).into_owned(),
            },
            crate::actor::unix_ms(),
        );
        match decided.action {
            Ok(action) => {
                crate::metrics::hosted_decision("ok", fuel);
                Step::Act(action)
            }
            Err(Fault::Overload) => {
                crate::metrics::hosted_decision("overload", fuel);
                Step::Wait
            }
            Err(fault) => {
                crate::metrics::hosted_decision(fault.cause(), fuel);
                Step::Forfeit(fault.to_string())
            }
        }
    }
}

#[cfg(test)]
mod fuel_tests {
    use super::check_fuel_fits;

    #[test]
    fn a_fuel_budget_must_run_within_half_the_turn_on_this_host() {
        // 100 M fuel per second: 300 M takes 3 s.
        let rate = 100e6;
        assert!(check_fuel_fits(300_000_000, 6_000, rate).is_ok());
        let refused = check_fuel_fits(300_000_000, 1_000, rate).unwrap_err();
        let message = refused.message().to_string();
        for part in [
            "--hosted-fuel 300000000",
            "about 3000 ms",
            "--turn-ms 1000",
            "at most 50000000",
            "at least 6000",
        ] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    }
}
