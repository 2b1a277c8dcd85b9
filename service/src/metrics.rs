//! Prometheus metrics, served at `http://ADDR/metrics` with `--metrics ADDR`. The rest of the
//! host reports through the one-line functions below; without `--metrics` no recorder is
//! installed and each call costs next to nothing (the `metrics` facade's no-op).
//!
//! | metric | type | labels | what |
//! |---|---|---|---|
//! | `gangs_live_games` | gauge | | games not finished (waiting for seats or running) |
//! | `gangs_watchers` | gauge | | open `Watch` streams |
//! | `gangs_game_watchers` | gauge | | watchers in the games' lists (fed live updates); a closed stream leaves at once |
//! | `gangs_games_known` | gauge | | games in the directory: every game in the log (bounded by `--retain-finished`) |
//! | `gangs_game_handles` | gauge | | games in memory: live, and finished ones within their quiet spell |
//! | `gangs_create_ids` | gauge | | `create_id`s remembered: one per game in the log created with one |
//! | `gangs_damaged_games` | gauge | | games whose log does not replay |
//! | `gangs_limit_entries` | gauge | | entries in the limits' tables (games per client, watch counts, rate buckets) |
//! | `gangs_tasks` | gauge | | tokio tasks alive in the server |
//! | `gangs_actions_total` | counter | `kind` | accepted actions, by game kind (rate: actions/s) |
//! | `gangs_act_duration_seconds` | histogram | | `Act` latency as the server sees it, any outcome |
//! | `gangs_log_append_duration_seconds` | histogram | | writing one group-commit batch to the log |
//! | `gangs_log_flush_duration_seconds` | histogram | | making that batch durable (the flush) |
//! | `gangs_log_batch_records` | histogram | | records per group-commit batch |
//! | `gangs_log_checkpoint_duration_seconds` | histogram | | one checkpoint of the embedded store (the journal's records written into sled and flushed) |
//! | `gangs_watchers_cut_off_total` | counter | | watchers cut off for falling behind |
//! | `gangs_rpc_errors_total` | counter | `method`, `code` | refused calls, by gRPC status code |
//! | `gangs_ladder_queued_total` | counter | `ladder` | Queue streams opened by bots |
//! | `gangs_ladder_bots_queued` | gauge | `ladder` | bots with a Queue stream open now (house bots too; refreshed by each matchmaker round, at least every second) |
//! | `gangs_ladder_matches_total` | counter | `ladder` | matches made |
//! | `gangs_ladder_rated_games_total` | counter | `ladder` | games rated (rating updates) |
//! | `gangs_connections_open` | gauge | `port` | connections open on the port (`grpc`, `http`) |
//! | `gangs_connections_refused_total` | counter | `port`, `limit` | connections refused at accept, by the limit: `max-connections`, `max-connections-per-client`, `open-files` |
//! | `gangs_accept_errors_total` | counter | `port`, `error` | failed accepts: `open-files` (EMFILE/ENFILE), `connection` (reset before accepted), `other` |
//! | `gangs_connections_idle_closed_total` | counter | `port` | connections closed after `--idle-connection-timeout` without a call |
//! | `gangs_viewer_live_streams_refused_total` | counter | `limit` | viewer live streams refused: all taken, or the address's share |
//! | `gangs_hosted_decisions_total` | counter | `result` | hosted decisions, by result (`ok` or the failure's cause) |
//! | `gangs_hosted_fuel_total` | counter | | fuel of every hosted decision |
//! | `gangs_hosted_bot_fuel_total` | counter | `ladder`, `bot` | fuel of one hosted bot's decisions: its share of the hosted threads |
//! | `gangs_hosted_queue_wait_seconds` | histogram | | a hosted decision's wait for a thread |
//! | `gangs_hosted_compile_cache_total` | counter | `result` | hosted modules made ready: `hit` (the compiled-artefact cache) or `miss` (compiled) |
//! | `gangs_ladder_overload_voids_total` | counter | `ladder` | games void because the host could not run a hosted decision in time |
//!
//! Gauges that are counts of a whole (live games, the size of each structure that lives as long
//! as the server) are sampled every second ([`SAMPLED`]) instead of being kept by increments on
//! every path that could change them.

use ::metrics::{counter, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio_stream::Stream;
use tonic::Status;

/// Latency buckets (seconds): 50 µs to 2.5 s.
const LATENCY_BUCKETS: [f64; 14] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 2.5,
];
/// Batch-size buckets (records).
const BATCH_BUCKETS: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];
/// How often the sampled gauges are refreshed.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// The gauges sampled every [`SAMPLE_EVERY`], with their descriptions: counts of a whole that
/// the server reads rather than keeps (`gangs_tasks` is read from the runtime here; the others
/// come from the reader given to [`sample`]).
pub const SAMPLED: &[(&str, &str)] = &[
    (
        "gangs_cluster_shards",
        "Shards of the cluster (0 on a server with its own sled log).",
    ),
    (
        "gangs_cluster_shards_held",
        "Shards this node holds: it runs their games.",
    ),
    (
        "gangs_live_games",
        "Games not finished (waiting for seats or running).",
    ),
    (
        "gangs_games_known",
        "Games in the directory (every game in the log; bounded by --retain-finished).",
    ),
    (
        "gangs_game_handles",
        "Games in memory (live, and finished ones within their quiet spell).",
    ),
    (
        "gangs_create_ids",
        "create_ids remembered (one per game in the log created with one).",
    ),
    ("gangs_damaged_games", "Games whose log does not replay."),
    (
        "gangs_limit_entries",
        "Entries in the limits' tables (games per client, watch counts, rate buckets).",
    ),
    ("gangs_tasks", "Tokio tasks alive in the server."),
];

/// Installs the recorder and binds `addr` (now: an address in use is an error here, before the
/// server says it is listening); the caller serves the listener
/// (`connections::serve_metrics`). Call inside the tokio runtime.
pub fn install(addr: SocketAddr) -> Result<(Exposition, tokio::net::TcpListener), String> {
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &LATENCY_BUCKETS)
        .and_then(|b| {
            b.set_buckets_for_metric(
                Matcher::Full("gangs_log_batch_records".into()),
                &BATCH_BUCKETS,
            )
        })
        .map_err(|e| format!("metrics: {e}"))?
        .build_recorder();
    let handle = recorder.handle();
    let listener = std::net::TcpListener::bind(addr)
        .and_then(|listener| {
            listener.set_nonblocking(true)?;
            tokio::net::TcpListener::from_std(listener)
        })
        .map_err(|e| format!("cannot serve metrics on {addr}: {e}"))?;
    ::metrics::set_global_recorder(recorder)
        .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;
    // What the exporter's own task did: histograms drained now and then.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            upkeep.run_upkeep();
        }
    });
    describe();
    // Every series exists from the start, so a scrape before the first game shows zeros.
    for (name, _) in SAMPLED {
        gauge!(*name).set(0.0);
    }
    gauge!("gangs_watchers").set(0.0);
    gauge!("gangs_game_watchers").set(0.0);
    counter!("gangs_watchers_cut_off_total").absolute(0);
    for kind in gangs_games::kind_names() {
        counter!("gangs_actions_total", "kind" => kind).absolute(0);
    }
    counter!("gangs_webhook_delivered_total").absolute(0);
    counter!("gangs_webhook_failed_total").absolute(0);
    counter!("gangs_webhook_expired_total").absolute(0);
    gauge!("gangs_webhook_pending").set(0.0);
    counter!("gangs_viewer_logins_throttled_total").absolute(0);
    gauge!("gangs_viewer_login_addresses").set(0.0);
    Ok((Exposition(handle), listener))
}

/// The installed recorder's text exposition, rendered at each scrape.
#[derive(Clone)]
pub struct Exposition(metrics_exporter_prometheus::PrometheusHandle);

impl Exposition {
    /// Every series in Prometheus' text format.
    pub fn render(&self) -> String {
        self.0.render()
    }
}

fn describe() {
    use ::metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    for (name, what) in SAMPLED {
        describe_gauge!(*name, *what);
    }
    describe_gauge!("gangs_watchers", "Open Watch streams.");
    describe_gauge!(
        "gangs_game_watchers",
        "Watchers in the games' lists (fed live updates); a closed stream leaves at once."
    );
    describe_counter!("gangs_actions_total", "Accepted actions, by game kind.");
    describe_counter!(
        "gangs_viewer_logins_throttled_total",
        "Viewer logins refused with 429: too many wrong keys from one address."
    );
    describe_gauge!(
        "gangs_viewer_login_addresses",
        "Addresses whose failed viewer logins are remembered (at most 10,000)."
    );
    describe_histogram!(
        "gangs_act_duration_seconds",
        Unit::Seconds,
        "Act latency, any outcome."
    );
    describe_histogram!(
        "gangs_log_append_duration_seconds",
        Unit::Seconds,
        "Writing one group-commit batch to the log."
    );
    describe_histogram!(
        "gangs_log_flush_duration_seconds",
        Unit::Seconds,
        "Making one group-commit batch durable."
    );
    describe_histogram!("gangs_log_batch_records", "Records per group-commit batch.");
    describe_histogram!(
        "gangs_log_checkpoint_duration_seconds",
        Unit::Seconds,
        "One checkpoint of the embedded store: the journal's records written into sled and flushed."
    );
    describe_counter!(
        "gangs_watchers_cut_off_total",
        "Watchers cut off for falling behind (RESOURCE_EXHAUSTED)."
    );
    describe_counter!(
        "gangs_rpc_errors_total",
        "Refused calls, by method and gRPC status code."
    );
    describe_counter!(
        "gangs_webhook_delivered_total",
        "Webhook events a receiver acknowledged (2xx)."
    );
    describe_counter!(
        "gangs_webhook_failed_total",
        "Webhook POSTs that failed (no answer, or not 2xx); each is retried."
    );
    describe_counter!(
        "gangs_webhook_expired_total",
        "Webhook events given up after retrying for --webhook-retry-for."
    );
    describe_gauge!(
        "gangs_webhook_pending",
        "Webhook events read from the log and not yet delivered, all receivers together."
    );
    describe_counter!(
        "gangs_ladder_queued_total",
        "Queue streams opened by bots, by ladder."
    );
    describe_gauge!(
        "gangs_ladder_bots_queued",
        "Bots with a Queue stream open now, by ladder (house bots too)."
    );
    describe_counter!("gangs_ladder_matches_total", "Matches made, by ladder.");
    describe_gauge!("gangs_connections_open", "Connections open, by port.");
    describe_counter!(
        "gangs_connections_refused_total",
        "Connections refused at accept, by port and by the limit that refused them."
    );
    describe_counter!(
        "gangs_accept_errors_total",
        "Failed accepts, by port and error (open-files: the process is out of descriptors)."
    );
    describe_counter!(
        "gangs_connections_idle_closed_total",
        "Connections closed after --idle-connection-timeout without a call or stream."
    );
    describe_counter!(
        "gangs_viewer_live_streams_refused_total",
        "Viewer live streams refused: all taken (max-live-streams) or the address's share."
    );
    describe_counter!(
        "gangs_ladder_rated_games_total",
        "Ladder games rated, by ladder."
    );
}

/// A webhook event was delivered (`Delivered`), a POST failed (`Failed`), or an event was given
/// up (`Expired`); `pending` moves the gauge of events waiting.
pub fn webhook(outcome: WebhookOutcome) {
    match outcome {
        WebhookOutcome::Delivered => counter!("gangs_webhook_delivered_total").increment(1),
        WebhookOutcome::Failed => counter!("gangs_webhook_failed_total").increment(1),
        WebhookOutcome::Expired => counter!("gangs_webhook_expired_total").increment(1),
    }
}

/// What happened to one webhook attempt or event.
#[derive(Debug, Clone, Copy)]
pub enum WebhookOutcome {
    Delivered,
    Failed,
    Expired,
}

/// Every connection series of `port` exists from the start (zeros before the first event).
pub fn connections_port(port: &'static str) {
    gauge!("gangs_connections_open", "port" => port).increment(0.0);
    for limit in [
        "max-connections",
        "max-connections-per-client",
        "open-files",
    ] {
        counter!("gangs_connections_refused_total", "port" => port, "limit" => limit).increment(0);
    }
    for error in ["open-files", "connection", "other"] {
        counter!("gangs_accept_errors_total", "port" => port, "error" => error).increment(0);
    }
    counter!("gangs_connections_idle_closed_total", "port" => port).increment(0);
}

/// `delta` more (or fewer) connections open on `port`.
pub fn connections_open(port: &'static str, delta: f64) {
    gauge!("gangs_connections_open", "port" => port).increment(delta);
}

/// A connection refused at accept on `port` by `limit`.
pub fn connection_refused(port: &'static str, limit: &'static str) {
    counter!("gangs_connections_refused_total", "port" => port, "limit" => limit).increment(1);
}

/// An accept on `port` failed (`error`: `open-files`, `connection`, `other`).
pub fn accept_error(port: &'static str, error: &'static str) {
    counter!("gangs_accept_errors_total", "port" => port, "error" => error).increment(1);
}

/// A connection of `port` closed for being idle.
pub fn idle_closed(port: &'static str) {
    counter!("gangs_connections_idle_closed_total", "port" => port).increment(1);
}

/// A viewer live stream refused by `limit`.
pub fn live_stream_refused(limit: &'static str) {
    counter!("gangs_viewer_live_streams_refused_total", "limit" => limit).increment(1);
}

/// A viewer login refused as throttled (too many wrong keys from its address).
pub fn login_throttled() {
    counter!("gangs_viewer_logins_throttled_total").increment(1);
}

/// Addresses whose failed viewer logins are remembered.
pub fn login_throttle_addresses(addresses: usize) {
    gauge!("gangs_viewer_login_addresses").set(addresses as f64);
}

/// `delta` more (or fewer) webhook events waiting.
pub fn webhook_pending(delta: f64) {
    gauge!("gangs_webhook_pending").increment(delta);
}

/// Refreshes the sampled gauges every second: `read` gives (gauge, value) pairs of
/// [`SAMPLED`]; the runtime gives `gangs_tasks`.
pub fn sample(read: impl Fn() -> Vec<(&'static str, usize)> + Send + 'static) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(SAMPLE_EVERY);
        loop {
            tick.tick().await;
            for (name, value) in read() {
                debug_assert!(SAMPLED.iter().any(|(n, _)| *n == name), "{name}");
                gauge!(name).set(value as f64);
            }
            let tasks = tokio::runtime::Handle::current()
                .metrics()
                .num_alive_tasks();
            gauge!("gangs_tasks").set(tasks as f64);
        }
    });
}

/// A refusal's gRPC code: a status's, or the host's error's (the code it is answered with).
pub trait Refused {
    fn refused_with(&self) -> tonic::Code;
}

impl Refused for Status {
    fn refused_with(&self) -> tonic::Code {
        self.code()
    }
}

impl Refused for crate::error::HostError {
    fn refused_with(&self) -> tonic::Code {
        self.code()
    }
}

/// One `Act` answered (or refused), `started` when it arrived.
pub fn act_answered<T, E: Refused>(started: Instant, result: &Result<T, E>) {
    histogram!("gangs_act_duration_seconds").record(started.elapsed().as_secs_f64());
    rpc_result("Act", result);
}

/// Counts a refused call of `method` by its status code.
pub fn rpc_result<T, E: Refused>(method: &'static str, result: &Result<T, E>) {
    if let Err(error) = result {
        counter!("gangs_rpc_errors_total", "method" => method, "code" => code_name(error.refused_with()))
            .increment(1);
    }
}

/// An action of a game of `kind` was accepted.
pub fn action_accepted(kind: &'static str) {
    counter!("gangs_actions_total", "kind" => kind).increment(1);
}

/// A watcher entered (`1.0`) or left (`-1.0`) a game's list (kept by increments, not sampled:
/// a test sees a closed stream leave at once).
pub fn game_watchers(change: f64) {
    gauge!("gangs_game_watchers").increment(change);
}

/// A watcher was cut off for falling behind.
pub fn watcher_cut_off() {
    counter!("gangs_watchers_cut_off_total").increment(1);
}

/// A bot opened a Queue stream on `ladder` (ladders are few, made by the admin: a bounded label).
pub fn ladder_queued(ladder: &str) {
    counter!("gangs_ladder_queued_total", "ladder" => ladder.to_string()).increment(1);
}

/// The hosted bots' pool now: decisions waiting for a thread and running.
pub fn hosted_pool(pool: &gangs_hosted::pool::Pool) {
    use std::sync::atomic::Ordering::Relaxed;
    let stats = pool.stats();
    gauge!("gangs_hosted_queued").set(stats.queued.load(Relaxed) as f64);
    gauge!("gangs_hosted_running").set(stats.running.load(Relaxed) as f64);
}

/// A hosted decision ended (`result`: `ok`, or the cause of its failure: `fuel`, `memory`,
/// `trap`, `bad output`, `overload`), having used `fuel`.
pub fn hosted_decision(result: &'static str, fuel: u64) {
    counter!("gangs_hosted_decisions_total", "result" => result).increment(1);
    counter!("gangs_hosted_fuel_total").increment(fuel);
}

/// Bot `bot` (`BOT@VERSION`) of `ladder` used `fuel` in one decision: the share of the hosted
/// threads each bot takes (the pool serves bots in turn, weighted by this fuel).
pub fn hosted_bot_fuel(ladder: &str, bot: &str, fuel: u64) {
    counter!(
        "gangs_hosted_bot_fuel_total",
        "ladder" => ladder.to_string(),
        "bot" => bot.to_string()
    )
    .increment(fuel);
}

/// A hosted module was made ready to run (`result`: `hit`, loaded from the compiled-artefact
/// cache; `miss`, compiled and kept there), in `seconds`.
pub fn hosted_compile(result: &'static str, seconds: f64) {
    counter!("gangs_hosted_compile_cache_total", "result" => result).increment(1);
    histogram!("gangs_hosted_compile_seconds").record(seconds);
}

/// A hosted decision waited `seconds` in the pool's queue before a thread ran it.
pub fn hosted_queue_wait(seconds: f64) {
    histogram!("gangs_hosted_queue_wait_seconds").record(seconds);
}

/// A game of `ladder` was void because the host could not run a hosted seat's decision in time.
pub fn ladder_overload_void(ladder: &str) {
    counter!("gangs_ladder_overload_voids_total", "ladder" => ladder.to_string()).increment(1);
}

/// `queued` bots of `ladder` have a Queue stream open now.
pub fn ladder_bots_queued(ladder: &str, queued: usize) {
    gauge!("gangs_ladder_bots_queued", "ladder" => ladder.to_string()).set(queued as f64);
}

/// The matchmaker of `ladder` made a match.
pub fn ladder_match(ladder: &str) {
    counter!("gangs_ladder_matches_total", "ladder" => ladder.to_string()).increment(1);
}

/// A game of `ladder` was rated.
pub fn ladder_rated(ladder: &str) {
    counter!("gangs_ladder_rated_games_total", "ladder" => ladder.to_string()).increment(1);
}

/// One group commit: `records` written in `append`, made durable in `flush`.
pub fn log_committed(records: usize, append: Duration, flush: Duration) {
    histogram!("gangs_log_batch_records").record(records as f64);
    histogram!("gangs_log_append_duration_seconds").record(append.as_secs_f64());
    histogram!("gangs_log_flush_duration_seconds").record(flush.as_secs_f64());
}

/// One checkpoint of the embedded store took `took`.
pub fn log_checkpointed(took: Duration) {
    histogram!("gangs_log_checkpoint_duration_seconds").record(took.as_secs_f64());
}

/// The status code as Prometheus label text (`NOT_FOUND`, …), as gRPC spells it.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A stream counted in `gangs_watchers` while it lives (a Watch stream; dropped when the
/// client goes away or the game ends).
pub struct Watched<S> {
    inner: S,
}

impl<S> Watched<S> {
    pub fn new(inner: S) -> Self {
        gauge!("gangs_watchers").increment(1.0);
        Watched { inner }
    }
}

impl<S> Drop for Watched<S> {
    fn drop(&mut self) {
        gauge!("gangs_watchers").decrement(1.0);
    }
}

impl<S: Stream + Unpin> Stream for Watched<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        Pin::new(&mut self.inner).poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}
