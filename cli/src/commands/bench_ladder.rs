//! `gangs bench --ladder-bots N [--seconds S] [--kind KIND]`: a ladder of N bots, as a
//! classroom's would be. Each bot has a connection of its own, holds its `Queue` stream and
//! plays every game it is matched to with random legal actions (views only when needed, as the
//! shipped bots watch), one game at a time. Over `--seconds`: games started and finished per
//! second, accepted actions per second, `Act` latency, refusals by status code; with its own
//! server (no `--server`), that server's memory and open descriptors once every bot is
//! connected (a quarter into the run, at most 2 s) and again at the end.
//!
//! The ladder is created for the run (`bench-<time>`), with the server's default clocks; against
//! another server the admin key (`--api-key`) is needed to create it and register the bots.
//! Every action is sent with the seq it was chosen at (`expected_seq`): where seats act at once
//! (The Gang), one made stale by a faster seat is refused `ABORTED` and counted under `errors`,
//! and the bot chooses again from the next update, as a careful bot does.

use super::arena::OwnServer;
use crate::client::Context;
use crate::error::CliError;
use gangs_cli::load::percentile;
use gangs_proto::auth::ApiKey;
use gangs_proto::code_name;
use gangs_proto::v1 as pb;
use pb::ladder_event::Event;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tonic::transport::Channel;

/// The most bots one run connects (each holds a connection and a stream).
pub const MAX_LADDER_BOTS: usize = 5000;

/// How long a bot waits after a refused or broken Queue call before queueing again.
const QUEUE_AGAIN_AFTER: Duration = Duration::from_millis(500);

/// What the bots saw, together.
#[derive(Default)]
struct Tally {
    started: HashSet<String>,
    finished: HashSet<String>,
    /// Latencies of accepted actions.
    acts: Vec<Duration>,
    refused: BTreeMap<&'static str, u64>,
}

impl Tally {
    fn refused(&mut self, status: &tonic::Status) {
        *self.refused.entry(code_name(status.code())).or_default() += 1;
    }
}

type Shared = Arc<Mutex<Tally>>;

/// Memory and open descriptors of a process (Linux's /proc; None elsewhere or once gone).
fn footprint(pid: Option<u32>) -> (Option<u64>, Option<usize>) {
    let Some(pid) = pid else {
        return (None, None);
    };
    let rss_kb = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        });
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(|dir| dir.count());
    (rss_kb, fds)
}

pub async fn run(
    kind: &str,
    bots: usize,
    seconds: u64,
    seed: u64,
    context: &Context,
) -> Result<(), CliError> {
    if !(2..=MAX_LADDER_BOTS).contains(&bots) {
        return Err(CliError::invalid(format!(
            "--ladder-bots must be 2 to {MAX_LADDER_BOTS}, not {bots}"
        )));
    }
    let dir = tempfile::Builder::new()
        .prefix("gangs-bench-")
        .tempdir()
        .map_err(|e| CliError::local(format!("cannot create a temporary directory: {e}")))?;
    let (own_server, target) = super::bench::own_or_given_server(dir.path(), context, None).await?;
    let server_pid = own_server.as_ref().and_then(OwnServer::pid);

    let mut admin = target.api_key.ladders(target.channel().await?);
    let unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let ladder = format!("bench-{unix_ms}");
    admin
        .create_ladder(pb::CreateLadderRequest {
            name: ladder.clone(),
            kind: kind.to_string(),
            ..Default::default()
        })
        .await
        .map_err(|s| target.refused(s))?;
    let mut keys = Vec::with_capacity(bots);
    for i in 0..bots {
        let registered = admin
            .register_bot(pb::RegisterBotRequest {
                ladder: ladder.clone(),
                bot: format!("b{i}"),
                version: String::new(),
            })
            .await
            .map_err(|s| target.refused(s))?
            .into_inner();
        keys.push(registered.bot_key);
    }
    let mut channels = Vec::with_capacity(bots);
    for _ in 0..bots {
        channels.push(target.channel().await?);
    }

    let tally = Shared::default();
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (i, (key, channel)) in keys.into_iter().zip(channels).enumerate() {
        let (ladder, tally) = (ladder.clone(), tally.clone());
        let rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed.wrapping_add(i as u64));
        tasks.spawn(play_ladder(channel, key, ladder, rng, tally));
    }
    // Read once the bots had a moment to queue (every connection accepted by then).
    let run_for = Duration::from_secs(seconds);
    let settle = (run_for / 4).min(Duration::from_secs(2));
    tokio::time::sleep(settle).await;
    let connected = footprint(server_pid);
    tokio::time::sleep(run_for - settle).await;
    let elapsed = start.elapsed();
    let at_end = footprint(server_pid);
    tasks.shutdown().await;
    if let Some(server) = own_server {
        server.stop().await;
    }

    let mut tally = std::mem::take(&mut *tally.lock().expect("tally lock"));
    tally.acts.sort_unstable();
    if tally.started.is_empty() {
        return Err(CliError::new(
            "UNAVAILABLE",
            format!(
                "no game of ladder {ladder} started in {seconds} s (refused: {:?}): check the server's limits",
                tally.refused
            ),
        ));
    }
    let report = Report {
        server: &target.server,
        kind,
        bots,
        elapsed,
        tally: &tally,
        connected,
        at_end,
    };
    context.out.emit(report.json(), || report.lines());
    Ok(())
}

/// One bot: queues, plays each game it is matched to, queues again when its stream ends
/// (paused for timeouts, a broken connection), until the run ends (the task is aborted).
async fn play_ladder(
    channel: Channel,
    key: String,
    ladder: String,
    mut rng: rand_chacha::ChaCha8Rng,
    tally: Shared,
) {
    // The bot key is the bot's credential for its games on a server with keys.
    let Ok(credential) = ApiKey::new(Some(&key)) else {
        return;
    };
    let mut ladders = credential.ladders(channel.clone());
    let mut games = credential.client(channel);
    loop {
        let request = pb::QueueRequest {
            ladder: ladder.clone(),
            bot_key: key.clone(),
            max_concurrent: 1,
            ..Default::default()
        };
        let mut events = match ladders.queue(request).await {
            Ok(events) => events.into_inner(),
            Err(status) => {
                tally.lock().expect("tally lock").refused(&status);
                tokio::time::sleep(QUEUE_AGAIN_AFTER).await;
                continue;
            }
        };
        loop {
            match events.message().await {
                Ok(Some(pb::LadderEvent {
                    event: Some(Event::Matched(matched)),
                })) => play_game(&mut games, matched, &mut rng, &tally).await,
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(status) => {
                    tally.lock().expect("tally lock").refused(&status);
                    tokio::time::sleep(QUEUE_AGAIN_AFTER).await;
                    break;
                }
            }
        }
    }
}

/// Plays one seat to the game's end: watches it (views when needed) and acts at random among
/// the legal actions of each update that lists some.
async fn play_game(
    games: &mut gangs_proto::auth::KeyedClient,
    matched: pb::ladder_event::Matched,
    rng: &mut rand_chacha::ChaCha8Rng,
    tally: &Shared,
) {
    let game_id = matched.game_id;
    tally
        .lock()
        .expect("tally lock")
        .started
        .insert(game_id.clone());
    let watch = games
        .watch(pb::WatchRequest {
            game_id: game_id.clone(),
            token: matched.token.clone(),
            from_seq: 0,
            views: pb::WatchViews::WhenNeeded as i32,
        })
        .await;
    let mut updates = match watch {
        Ok(updates) => updates.into_inner(),
        Err(status) => return tally.lock().expect("tally lock").refused(&status),
    };
    let mut sent = 0u64;
    loop {
        let update = match updates.message().await {
            Ok(Some(update)) => update,
            Ok(None) => return,
            Err(status) => return tally.lock().expect("tally lock").refused(&status),
        };
        let over = matches!(
            update.status(),
            pb::GameStatus::Finished | pb::GameStatus::Cancelled | pb::GameStatus::Abandoned
        );
        if over {
            tally
                .lock()
                .expect("tally lock")
                .finished
                .insert(game_id.clone());
            return;
        }
        if update.legal_actions.is_empty() {
            continue;
        }
        let action = update.legal_actions[rng.random_range(0..update.legal_actions.len())].clone();
        sent += 1;
        let asked = Instant::now();
        let answer = games
            .act(pb::ActRequest {
                game_id: game_id.clone(),
                token: matched.token.clone(),
                action: Some(action),
                expected_seq: Some(update.seq),
                action_id: format!("{}-{sent}", matched.seat),
            })
            .await;
        let mut tally = tally.lock().expect("tally lock");
        match answer {
            Ok(_) => tally.acts.push(asked.elapsed()),
            Err(status) => tally.refused(&status),
        }
    }
}

struct Report<'a> {
    server: &'a str,
    kind: &'a str,
    bots: usize,
    elapsed: Duration,
    tally: &'a Tally,
    /// The server's (memory KB, descriptors) once every bot was started, and at the end.
    connected: (Option<u64>, Option<usize>),
    at_end: (Option<u64>, Option<usize>),
}

impl Report<'_> {
    fn per_second(&self, count: usize) -> f64 {
        count as f64 / self.elapsed.as_secs_f64()
    }

    fn ms(&self, p: f64) -> Value {
        percentile(&self.tally.acts, p).map_or(Value::Null, |d| json!(d.as_secs_f64() * 1000.0))
    }

    fn json(&self) -> Value {
        json!({
            "mode": "ladder",
            "server": self.server,
            "kind": self.kind,
            "ladder_bots": self.bots,
            "seconds": self.elapsed.as_secs_f64(),
            "games_started": self.tally.started.len(),
            "games_finished": self.tally.finished.len(),
            "matches_per_s": self.per_second(self.tally.started.len()),
            "finished_per_s": self.per_second(self.tally.finished.len()),
            "actions": self.tally.acts.len(),
            "acts_per_s": self.per_second(self.tally.acts.len()),
            "p50_ms": self.ms(0.5),
            "p99_ms": self.ms(0.99),
            "errors": self.tally.refused,
            "server_rss_kb_connected": self.connected.0,
            "server_fds_connected": self.connected.1,
            "server_rss_kb": self.at_end.0,
            "server_fds": self.at_end.1,
        })
    }

    fn lines(&self) -> String {
        let ms = |p| percentile(&self.tally.acts, p).map_or("-".into(), |d| format!("{d:.1?}"));
        let mut lines = vec![
            format!(
                "{} bots on a {} ladder of {} for {:.1} s",
                self.bots,
                self.kind,
                self.server,
                self.elapsed.as_secs_f64()
            ),
            format!(
                "games started {} ({:.1}/s), finished {} ({:.1}/s)",
                self.tally.started.len(),
                self.per_second(self.tally.started.len()),
                self.tally.finished.len(),
                self.per_second(self.tally.finished.len())
            ),
            format!(
                "actions accepted {} ({:.0}/s), Act p50 {} p99 {}",
                self.tally.acts.len(),
                self.per_second(self.tally.acts.len()),
                ms(0.5),
                ms(0.99)
            ),
        ];
        if !self.tally.refused.is_empty() {
            lines.push(format!("refused: {:?}", self.tally.refused));
        }
        if let (Some(rss), Some(fds)) = self.at_end {
            lines.push(format!(
                "the server: {} MB, {fds} open descriptors at the end",
                rss / 1024
            ));
        }
        lines.join("\n")
    }
}
