//! `gangs bench [--games 64] [--seconds 10] [--kind KIND] [--watchers none|seats|all]
//! [--views every|when-needed] [--hosted-beside FILE.wasm [--hosted-bots N]]`: the
//! load tool operators run against their own server. Two phases with the same concurrency over
//! the same connections: a baseline of plain unary calls (the health service's `Check`), and
//! `--games` games played flat out with random legal actions (every accepted action durable
//! before its answer). The phases alternate in slices of about two seconds (baseline, games,
//! games, baseline, ...; the games wait between their slices), so that a shared machine's
//! drift over the run weighs on both alike. Prints durable actions/s, Act latency
//! p50/p90/p99/p99.9, refusals by status code, the baseline's calls/s and the ratio of the two,
//! the bytes of Watch updates the watchers received per action (`bytes_per_action`), and the
//! CPU time per action and per call of the bench itself and of its own server, and how idle the
//! machine's cores were in each phase. The ratio is the figure to compare between machines and
//! versions: both phases share the machine's noise.
//!
//! Without `--server` (or GANGS_SERVER) it starts its own `gangs-server` on a free port with a
//! temporary data dir, like `gangs arena`; that server has no create-rate limit in the way.
//! The driving code is `gangs_cli::load`, shared with the host benchmark. `--ladder-bots N`
//! runs a ladder of N connected bots instead (`bench_ladder.rs`). `--hosted-beside` has a
//! hosted ladder play on its own server during both phases (`bench_hosted.rs`), so that the
//! ratio and the Act p99 show the cost of hosted bots playing beside the games.

use super::arena::OwnServer;
use super::bench_hosted::{unix_ms, HostedBeside, Played};
use crate::client::Context;
use crate::error::CliError;
use clap::Args;
use gangs_cli::load::{
    self, Compared, Connections, Edge, LoadPlan, Measured, Phase, Views, Watchers,
};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// At most this many games (and their watch streams) share one connection: with
/// `--watchers all` that is 80 streams, well under a server's default per-connection cap (256).
const GAMES_PER_CONNECTION: usize = 16;

const MAX_GAMES: usize = 10_000;
const MAX_SECONDS: u64 = 3600;

#[derive(Args)]
pub struct BenchArgs {
    /// Games played at once (and callers of the baseline), 1 to 10000.
    #[arg(long, default_value_t = 64)]
    games: usize,

    /// Length of each phase (the baseline and the games, alternating in slices of about two
    /// seconds), 1 to 3600 seconds.
    #[arg(long, default_value_t = 10)]
    seconds: u64,

    /// The game to play, with its default options (default: the registry's first game).
    #[arg(long, default_value_t = gangs_games::kinds()[0].name.to_string())]
    kind: String,

    /// Who streams each game's updates while it is played: nobody, every seat (as bots do),
    /// or every seat and a spectator.
    #[arg(long, value_enum, default_value = "none")]
    watchers: Watchers,

    /// Which of the watchers' updates carry the view: every one (the API's default), or only
    /// when needed (when the seat may act, first on a stream, at the end), as the shipped bots
    /// watch.
    #[arg(long, value_enum, default_value = "every")]
    views: Views,

    /// The first game's seed (game g's n-th game: seed + g * 1000000 + n).
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// Instead of the two phases: a ladder of this many bots (2 to 5000) for --seconds, each
    /// on a connection of its own holding its Queue stream and playing the games it is matched
    /// to with random legal actions. Prints games started and finished per second, Act latency
    /// and, with its own server, that server's memory and open descriptors.
    #[arg(long, value_name = "N", conflicts_with_all = ["games", "watchers", "views"])]
    ladder_bots: Option<usize>,

    /// A hosted bot's module played beside the measured games: before measuring, the bench
    /// creates a ladder of --kind on its own server, submits --hosted-bots copies of the
    /// module and the house bot `random`, and waits until a hosted game is under way. Its own
    /// server only (not with --server).
    #[arg(long, value_name = "FILE.wasm", conflicts_with = "ladder_bots")]
    hosted_beside: Option<std::path::PathBuf>,

    /// Copies of --hosted-beside's module entered, each a bot of its own (1 to 64; at least the
    /// kind's seats less one).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 4,
        requires = "hosted_beside"
    )]
    hosted_bots: usize,

    /// A heavy hosted bot's module entered beside --hosted-beside's light ones on the same
    /// ladder (bots `heavy-0` ..): the report then says the void share of the games without a
    /// heavy bot at the table apart, and the hosted decisions' queue wait (p50, p99) and rate,
    /// read from the server's metrics. Shows whether a heavy bot's cost stays its own.
    #[arg(long, value_name = "FILE.wasm", requires = "hosted_beside")]
    hosted_heavy: Option<std::path::PathBuf>,

    /// Copies of --hosted-heavy's module entered (1 to 64).
    #[arg(long, value_name = "N", default_value_t = 4, requires = "hosted_heavy")]
    hosted_heavy_bots: usize,
}

/// The server a bench drives: its own `gangs-server` in `dir` (no create-rate limit: the bench
/// creates a game every few dozen actions per player), or the one `--server` names, with the
/// command line's key and CA.
pub(super) async fn own_or_given_server(
    dir: &std::path::Path,
    context: &Context,
    metrics: Option<&str>,
) -> Result<(Option<OwnServer>, Context), CliError> {
    let own_server = if context.server_given {
        None
    } else {
        let mut flags = vec!["--create-rate", "1000000000"];
        if let Some(address) = metrics {
            flags.extend(["--metrics", address]);
        }
        Some(OwnServer::start(dir, &flags).await?)
    };
    let mut target = Context::new(
        own_server
            .as_ref()
            .map_or_else(|| context.server.clone(), |s| s.url.clone()),
        context.out,
    );
    if own_server.is_none() {
        target.api_key = context.api_key.clone();
        target.ca = context.ca.clone();
    }
    Ok((own_server, target))
}

pub async fn run(args: BenchArgs, context: &Context) -> Result<(), CliError> {
    check_args(&args, context)?;
    if let Some(bots) = args.ladder_bots {
        return super::bench_ladder::run(&args.kind, bots, args.seconds, args.seed, context).await;
    }
    if !(1..=MAX_GAMES).contains(&args.games) {
        return Err(CliError::invalid(format!(
            "--games must be 1 to {MAX_GAMES}, not {}",
            args.games
        )));
    }

    let dir = tempfile::Builder::new()
        .prefix("gangs-bench-")
        .tempdir()
        .map_err(|e| CliError::local(format!("cannot create a temporary directory: {e}")))?;
    // With hosted bots beside, the server's metrics tell their queue wait and rate.
    let metrics = match &args.hosted_beside {
        Some(_) => Some(super::bench_hosted::free_local_address()?),
        None => None,
    };
    let (own_server, target) = own_or_given_server(dir.path(), context, metrics.as_deref()).await?;
    let hosted = match &args.hosted_beside {
        Some(module) => {
            let heavy = args
                .hosted_heavy
                .as_deref()
                .map(|heavy| (heavy, args.hosted_heavy_bots));
            let entered = (module.as_path(), args.hosted_bots, heavy);
            Some(HostedBeside::start(&target, &args.kind, entered, metrics).await?)
        }
        None => None,
    };

    let mut channels = Vec::new();
    for _ in 0..args.games.div_ceil(GAMES_PER_CONNECTION) {
        channels.push(target.channel().await?);
    }
    let connections = Connections {
        channels,
        key: target.api_key.clone(),
    };
    let plan = LoadPlan {
        kind: args.kind.clone(),
        games: args.games,
        duration: Duration::from_secs(args.seconds),
        watchers: args.watchers,
        views: args.views,
        seed: args.seed,
    };

    let bar = progress_bar(args.seconds, context.out.json);
    let server_pid = own_server.as_ref().and_then(OwnServer::pid);
    let calls_counted = Arc::new(AtomicU64::new(0));
    let actions_counted = Arc::new(AtomicU64::new(0));
    let mut server_cpu = PerPhase::<Duration>::default();
    let mut client_cpu = PerPhase::<Duration>::default();
    let mut idle = IdleUse::default();
    let cpu_now = || {
        (
            process_cpu(server_pid),
            process_cpu(Some(std::process::id())),
            machine_ticks(),
        )
    };
    // (server, this bench, the machine) CPU readings at the start of the slice under way.
    let mut before = (None, None, None);
    let mut ticker: Option<tokio::task::JoinHandle<()>> = None;
    let measured_from = unix_ms();
    let Compared {
        baseline,
        played,
        rounds,
    } = load::compare(
        &plan,
        &connections,
        calls_counted.clone(),
        actions_counted.clone(),
        |phase, edge| match edge {
            Edge::Start => {
                before = cpu_now();
                ticker = Some(match phase {
                    Phase::Baseline => {
                        tick(bar.clone(), calls_counted.clone(), "baseline", "calls")
                    }
                    Phase::Games => {
                        tick(bar.clone(), actions_counted.clone(), "playing", "actions")
                    }
                });
            }
            Edge::End => {
                if let Some(ticker) = ticker.take() {
                    ticker.abort();
                }
                let after = cpu_now();
                server_cpu.add(phase, before.0, after.0);
                client_cpu.add(phase, before.1, after.1);
                idle.add(phase, before.2, after.2);
            }
        },
    )
    .await;
    let measured_to = unix_ms();
    let server_cpu = server_cpu.per(&baseline, &played);
    let client_cpu = client_cpu.per(&baseline, &played);
    bar.finish_and_clear();
    let hosted = match hosted {
        Some(hosted) => Some(hosted.played(&target, measured_from, measured_to).await?),
        None => None,
    };
    if let Some(server) = own_server {
        server.stop().await;
    }

    check_measured(&target.server, args.seconds, &baseline, &played)?;
    let report = Report {
        args: &args,
        server: &target.server,
        baseline: &baseline,
        played: &played,
        server_cpu,
        client_cpu,
        idle,
        rounds,
        hosted,
    };
    context.out.emit(report.json(), || report.lines());
    Ok(())
}

/// The flags' bounds and combinations, before anything starts.
fn check_args(args: &BenchArgs, context: &Context) -> Result<(), CliError> {
    if gangs_games::kind(&args.kind).is_err() {
        return Err(CliError::invalid(format!(
            "unknown --kind {:?}: one of {}",
            args.kind,
            gangs_games::kind_names().join(", ")
        )));
    }
    if !(1..=MAX_SECONDS).contains(&args.seconds) {
        return Err(CliError::invalid(format!(
            "--seconds must be 1 to {MAX_SECONDS}, not {}",
            args.seconds
        )));
    }
    if args.hosted_beside.is_some() && context.server_given {
        return Err(CliError::invalid(
            "--hosted-beside runs only against the bench's own server, not with --server (or \
             GANGS_SERVER): it creates a ladder and submits hosted bots there",
        ));
    }
    Ok(())
}

/// A run that measured nothing (no health Check answered, no action accepted) is an error
/// that says what was refused, not a report of zeros.
fn check_measured(
    server: &str,
    seconds: u64,
    baseline: &Measured,
    played: &Measured,
) -> Result<(), CliError> {
    if baseline.count == 0 {
        return Err(CliError::new(
            "UNAVAILABLE",
            format!(
                "no health Check answered by {} in {} s ({}): is it a gangs server?",
                server,
                seconds,
                errors_line(baseline)
            ),
        ));
    }
    if played.count == 0 {
        return Err(CliError::new(
            "UNAVAILABLE",
            format!(
                "no action accepted by {} in {} s ({}): check --api-key and the server's limits",
                server,
                seconds,
                errors_line(played)
            ),
        ));
    }
    Ok(())
}

/// Two phases of `seconds` each, in tenths of a second.
fn progress_bar(seconds: u64, json: bool) -> ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(2 * seconds * 10);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {elapsed}/{duration}  {msg}") {
        bar.set_style(style);
    }
    bar
}

/// Advances the bar every tenth of a second and shows the phase's running count.
fn tick(
    bar: ProgressBar,
    counted: Arc<AtomicU64>,
    phase: &'static str,
    unit: &'static str,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_millis(100));
        every.tick().await;
        loop {
            every.tick().await;
            bar.inc(1);
            bar.set_message(format!(
                "{phase}: {} {unit}",
                counted.load(Ordering::Relaxed)
            ));
        }
    })
}

fn ms(duration: Option<Duration>) -> Value {
    duration.map_or(Value::Null, |d| json!(d.as_secs_f64() * 1000.0))
}

fn ratio(played: &Measured, baseline: &Measured) -> f64 {
    played.per_second() / baseline.per_second()
}

/// The CPU time (user + system) a process used per baseline call and per action, in µs: for the
/// bench's own server, steadier than the ratio on a shared machine (it does not depend on how
/// much CPU the host lent that minute; None against another server, `--server`); for the bench
/// itself, its share of the machine when client and server share it. None off Linux.
struct Cpu {
    per_call: Option<f64>,
    per_action: Option<f64>,
}

/// What was used in each phase, summed over the rounds: a process's CPU time, or the machine's
/// (idle, total) ticks. None once a reading failed (or a counter went back): a phase is measured
/// whole or not at all.
struct PerPhase<T> {
    baseline: Option<T>,
    games: Option<T>,
}

impl<T: Default> Default for PerPhase<T> {
    fn default() -> PerPhase<T> {
        PerPhase {
            baseline: Some(T::default()),
            games: Some(T::default()),
        }
    }
}

/// A counter read at both edges of a slice: what was used in between is their difference.
trait Reading: Copy + std::ops::Add<Output = Self> {
    /// What was used since `earlier`; None if the counter went back.
    fn since(self, earlier: Self) -> Option<Self>;
}

impl Reading for Duration {
    fn since(self, earlier: Duration) -> Option<Duration> {
        self.checked_sub(earlier)
    }
}

impl<T: Reading> PerPhase<T> {
    /// Adds what a slice of `phase` used, from the readings taken at its edges (None: a reading
    /// failed).
    fn add(&mut self, phase: Phase, before: Option<T>, after: Option<T>) {
        let used = before.zip(after).and_then(|(b, a)| a.since(b));
        let sum = match phase {
            Phase::Baseline => &mut self.baseline,
            Phase::Games => &mut self.games,
        };
        *sum = sum.zip(used).map(|(sum, used)| sum + used);
    }
}

impl PerPhase<Duration> {
    /// Per baseline call and per action.
    fn per(&self, baseline: &Measured, played: &Measured) -> Cpu {
        Cpu {
            per_call: cpu_per(self.baseline, baseline.count),
            per_action: cpu_per(self.games, played.count),
        }
    }
}

impl Cpu {
    /// The report's line: `label`, then both figures and `measured_note`, or why there are none.
    fn line(&self, label: &str, measured_note: &str, unmeasured_why: &str) -> String {
        match (self.per_action, self.per_call) {
            (Some(action), Some(call)) => format!(
                "{label}: {action:.0} µs per action, {call:.0} µs per baseline call{measured_note}"
            ),
            _ => format!("{label}: not measured ({unmeasured_why})"),
        }
    }
}

/// The CPU time a process has used so far (user + system), from `/proc/PID/stat`.
#[cfg(target_os = "linux")]
fn process_cpu(pid: Option<u32>) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid?)).ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces: utime
    // and stime are the 14th and 15th fields of the line, the 12th and 13th after the name.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_second > 0).then(|| Duration::from_secs_f64(ticks as f64 / per_second as f64))
}

#[cfg(not(target_os = "linux"))]
fn process_cpu(_pid: Option<u32>) -> Option<Duration> {
    None
}

/// The machine's CPU time so far, all cores: (idle, total) in clock ticks, from `/proc/stat`'s
/// first line (`user nice system idle iowait irq softirq steal`; idle counts iowait too: a core
/// waiting on the disk with nothing to run is a core left unused).
#[cfg(target_os = "linux")]
fn machine_ticks() -> Option<Ticks> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .take(8)
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    (fields.len() == 8).then(|| Ticks(fields[3] + fields[4], fields.iter().sum()))
}

#[cfg(not(target_os = "linux"))]
fn machine_ticks() -> Option<Ticks> {
    None
}

/// A count of the machine's clock ticks: (idle, total).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Ticks(u64, u64);

impl std::ops::Add for Ticks {
    type Output = Ticks;
    fn add(self, other: Ticks) -> Ticks {
        Ticks(self.0 + other.0, self.1 + other.1)
    }
}

impl Reading for Ticks {
    fn since(self, earlier: Ticks) -> Option<Ticks> {
        Some(Ticks(
            self.0.checked_sub(earlier.0)?,
            self.1.checked_sub(earlier.1)?,
        ))
    }
}

impl Ticks {
    /// The idle share in percent (None without ticks).
    fn idle_percent(self) -> Option<f64> {
        let Ticks(idle, total) = self;
        (total > 0).then(|| 100.0 * idle as f64 / total as f64)
    }
}

/// How idle the machine's cores were in each phase: when client and server share the machine,
/// idle during the games is time both left unused (waits on the disk, or one core queueing work
/// while the other has none; see docs/performance.md).
type IdleUse = PerPhase<Ticks>;

impl IdleUse {
    fn line(&self) -> String {
        let percent = |phase: Option<Ticks>| phase.and_then(Ticks::idle_percent);
        match (percent(self.games), percent(self.baseline)) {
            (Some(games), Some(baseline)) => format!(
                "the machine's cores idle: {games:.1}% during the games, {baseline:.1}% during the baseline"
            ),
            _ => "the machine's cores idle: not measured (Linux only)".to_string(),
        }
    }
}

/// µs of CPU per call (None without a reading or without a call).
fn cpu_per(used: Option<Duration>, calls: u64) -> Option<f64> {
    let used = used?;
    (calls > 0).then(|| used.as_secs_f64() * 1e6 / calls as f64)
}

/// What a run measured, as both reports show it.
struct Report<'a> {
    args: &'a BenchArgs,
    server: &'a str,
    baseline: &'a Measured,
    played: &'a Measured,
    server_cpu: Cpu,
    client_cpu: Cpu,
    idle: IdleUse,
    /// Rounds of (baseline, games) the phases alternated in.
    rounds: u32,
    /// The hosted ladder played beside (`--hosted-beside`).
    hosted: Option<Played>,
}

impl Report<'_> {
    fn json(&self) -> Value {
        json!({
            "server": self.server,
            "kind": self.args.kind,
            "games": self.args.games,
            "seconds": self.args.seconds,
            "rounds": self.rounds,
            "watchers": self.args.watchers.name(),
            "views": self.args.views.name(),
            "actions": self.played.count,
            "acts_per_s": self.played.per_second(),
            "p50_ms": ms(self.played.percentile(0.5)),
            "p90_ms": ms(self.played.percentile(0.9)),
            "p99_ms": ms(self.played.percentile(0.99)),
            "p999_ms": ms(self.played.percentile(0.999)),
            "errors": self.played.errors,
            "setup_errors": self.played.setup_errors,
            "baseline_calls": self.baseline.count,
            "baseline_calls_per_s": self.baseline.per_second(),
            "baseline_p50_ms": ms(self.baseline.percentile(0.5)),
            "baseline_p99_ms": ms(self.baseline.percentile(0.99)),
            "baseline_errors": self.baseline.errors,
            "ratio": ratio(self.played, self.baseline),
            "bytes_per_action": self.played.bytes_per_call(),
            "server_cpu_us_per_action": self.server_cpu.per_action,
            "baseline_server_cpu_us_per_call": self.server_cpu.per_call,
            "client_cpu_us_per_action": self.client_cpu.per_action,
            "baseline_client_cpu_us_per_call": self.client_cpu.per_call,
            "idle_percent": self.idle.games.and_then(Ticks::idle_percent),
            "baseline_idle_percent": self.idle.baseline.and_then(Ticks::idle_percent),
            "hosted_beside": self.hosted.as_ref().map(Played::json),
        })
    }

    fn lines(&self) -> String {
        let Report {
            args,
            server,
            baseline,
            played,
            server_cpu,
            client_cpu,
            idle,
            rounds,
            hosted,
        } = self;
        let latency = |m: &Measured, p: f64| {
            m.percentile(p).map_or_else(
                || "-".to_string(),
                |d| format!("{:.2} ms", d.as_secs_f64() * 1e3),
            )
        };
        [
            format!(
                "{} games of {} at once on {server}, watchers: {} (views: {}), {} s per phase \
                 in {rounds} alternating rounds",
                args.games,
                args.kind,
                args.watchers.name(),
                args.views.name(),
                args.seconds
            ),
            format!(
                "baseline (health Check): {:>9.0} calls/s    p50 {}  p99 {}",
                baseline.per_second(),
                latency(baseline, 0.5),
                latency(baseline, 0.99)
            ),
            format!(
                "Act (durable):           {:>9.0} actions/s  p50 {}  p90 {}  p99 {}  p99.9 {}",
                played.per_second(),
                latency(played, 0.5),
                latency(played, 0.9),
                latency(played, 0.99),
                latency(played, 0.999)
            ),
            format!(
                "ratio: {:.2} (durable actions/s ÷ baseline calls/s)",
                ratio(played, baseline)
            ),
            format!(
                "Watch updates received: {:.0} bytes per action",
                played.bytes_per_call()
            ),
            server_cpu.line(
                "server CPU",
                " (its own server)",
                "only for the bench's own server, on Linux",
            ),
            client_cpu.line("this bench's own CPU", "", "Linux only"),
            idle.line(),
            format!("refused: {}", errors_line(played)),
        ]
        .into_iter()
        .chain(hosted.as_ref().map(Played::line))
        .collect::<Vec<_>>()
        .join("\n")
    }
}

fn errors_line(measured: &Measured) -> String {
    let codes = |errors: &std::collections::BTreeMap<&str, u64>| {
        errors
            .iter()
            .map(|(code, n)| format!("{code} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (measured.errors.is_empty(), measured.setup_errors.is_empty()) {
        (true, true) => "none".to_string(),
        (false, true) => codes(&measured.errors),
        (true, false) => format!("setting games up: {}", codes(&measured.setup_errors)),
        (false, false) => format!(
            "{}; setting games up: {}",
            codes(&measured.errors),
            codes(&measured.setup_errors)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_is_summed_per_phase_and_lost_with_a_failed_reading() {
        let mut idle = IdleUse::default();
        idle.add(
            Phase::Games,
            Some(Ticks(100, 1_000)),
            Some(Ticks(130, 1_200)),
        );
        idle.add(
            Phase::Games,
            Some(Ticks(200, 2_000)),
            Some(Ticks(210, 2_100)),
        );
        idle.add(Phase::Baseline, Some(Ticks(0, 0)), Some(Ticks(5, 100)));
        assert_eq!(idle.games, Some(Ticks(40, 300)));
        assert_eq!(
            idle.games.and_then(Ticks::idle_percent),
            Some(100.0 * 40.0 / 300.0)
        );
        assert_eq!(idle.baseline.and_then(Ticks::idle_percent), Some(5.0));
        assert_eq!(
            idle.line(),
            "the machine's cores idle: 13.3% during the games, 5.0% during the baseline"
        );
        // A reading that failed, or counters that went back, leave the phase unmeasured.
        idle.add(Phase::Baseline, None, Some(Ticks(5, 100)));
        idle.add(
            Phase::Games,
            Some(Ticks(300, 3_000)),
            Some(Ticks(290, 3_100)),
        );
        assert_eq!(idle.baseline, None);
        assert_eq!(idle.games, None);
        assert_eq!(
            idle.line(),
            "the machine's cores idle: not measured (Linux only)"
        );
        // No ticks at all: no share.
        assert_eq!(Ticks(0, 0).idle_percent(), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_machine_s_ticks_are_read_and_grow() {
        let Ticks(idle, total) = machine_ticks().expect("/proc/stat");
        assert!(idle <= total && total > 0);
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(50) {
            std::hint::black_box(0);
        }
        let Ticks(idle_after, total_after) = machine_ticks().expect("/proc/stat");
        assert!(idle_after >= idle && total_after > total);
    }
}
