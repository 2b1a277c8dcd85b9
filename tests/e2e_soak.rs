//! The soak test: weeks of a server's life compressed into minutes. Round after round, against
//! the real `gangs-server` (with `--metrics`, `--http`, short fill and idle timeouts, a short
//! `--retain-finished`): games created (some with a `create_id`), played to the end by bot
//! processes (one killed mid-game and resumed with its token), cancelled, left to expire
//! waiting for seats or idle; hundreds of `Watch` streams per round opened and dropped, read
//! and unread, on waiting, idle, running and finished games; the viewer's live pages opened and
//! closed; two restarts (SIGKILL, then SIGTERM) during the warm-up.
//!
//! After the warm-up, what the server holds must level off: its resident memory, file
//! descriptors, threads, tokio tasks, the directory's tables and the limits' tables (from
//! `--metrics`), and its data dir. Each is sampled once per round when the round's streams are
//! gone; the measured window is split in two halves and the second half's figure may exceed the
//! first's only by the tolerance given with each (see `Limit`): a few percent, or a few units
//! where the figure is small. Each figure is summed up per half by the statistic that a leak
//! moves and the moment of a sample does not (see `Statistic`): files and the data dir by their
//! peaks; memory and the sockets by their medians (a burst of streams in flight when a sample
//! is taken moves a peak by megabytes, a leak moves every value); tasks, threads and the
//! server's tables by their floors (tasks of streams still winding down, blocking threads after
//! a burst, games over not yet forgotten come and go within seconds; a leaked one stays, and the
//! floor rises). The threads also stay under a fixed ceiling: one worker per core, the capped
//! blocking pool, and a few of the server's own.
//!
//! `GANGS_SOAK_SECONDS` sets the length (default 150 s: CI); the hour-long run of
//! docs/performance.md is `GANGS_SOAK_SECONDS=3600 cargo test --release --test
//! alone -- --nocapture`. Every sample is printed (`--nocapture`).

use crate::common;

use common::observe::{
    await_metric, dir_bytes, free_port, metric, open_fds, rss_kb, scrape, threads,
};
use common::*;
use gangs_proto::v1 as pb;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

type Client = pb::games_client::GamesClient<tonic::transport::Channel>;

/// Watch streams opened per round, over `CONNECTIONS` connections (each below the server's
/// limit of concurrent streams per connection).
const STREAMS: usize = 400;
const CONNECTIONS: usize = 4;
/// Games played by bots at once.
const PLAYED_AT_ONCE: usize = 2;
/// Viewer live pages opened and closed per round.
const PAGES: usize = 3;
/// The server's cap on its blocking threads (`MAX_BLOCKING_THREADS` in service/src/server.rs;
/// this crate does not link the service).
const SERVER_BLOCKING_THREADS: u64 = 32;
/// How long a round's streams may take to be gone from the server once dropped.
const RELEASE_DEADLINE: Duration = Duration::from_secs(20);

/// A game played by bot processes, one seat each, with the tokens the test joined them with.
struct Played {
    id: String,
    tokens: Vec<String>,
    bots: Vec<Bot>,
    /// Whether a bot was already killed and resumed in this game.
    resumed: bool,
}

/// One round's figures, taken when its streams are gone.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    seconds: u64,
    rss_kb: u64,
    /// Descriptors that are not sockets (the log's files, the runtime's own).
    files: u64,
    /// Sockets: listeners, and the connections of bots in play.
    sockets: u64,
    threads: u64,
    tasks: u64,
    live: u64,
    known: u64,
    handles: u64,
    create_ids: u64,
    limit_entries: u64,
    data_kb: u64,
}

/// How a half of the measured window is summed up in one figure.
#[derive(Clone, Copy)]
enum Statistic {
    /// For what only grows until it levels off: a leak shows in the highest value.
    Peak,
    /// For what moves with the moment of the sample: a leak raises the middle value too.
    Median,
    /// For what comes and goes within seconds around a lasting level (tasks, threads): the
    /// quietest sample shows the level, and a leak raises it.
    Floor,
}

impl Statistic {
    fn of(self, mut values: Vec<u64>) -> u64 {
        values.sort_unstable();
        match self {
            Statistic::Peak => values.last().copied().unwrap_or(0),
            Statistic::Median => values.get(values.len() / 2).copied().unwrap_or(0),
            Statistic::Floor => values.first().copied().unwrap_or(0),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Statistic::Peak => "peak",
            Statistic::Median => "median",
            Statistic::Floor => "floor",
        }
    }
}

/// How much a figure's second half may exceed its first half.
struct Limit {
    name: &'static str,
    read: fn(&Sample) -> u64,
    statistic: Statistic,
    /// Relative tolerance (0.05: 5 %).
    percent: f64,
    /// Absolute tolerance, in the figure's unit.
    units: u64,
    /// Why this tolerance: robust to the noise, yet a leak fails it.
    why: &'static str,
}

const LIMITS: &[Limit] = &[
    Limit {
        name: "resident memory (KB)",
        read: |s| s.rss_kb,
        statistic: Statistic::Median,
        percent: 0.08,
        units: 1024,
        why: "the streams in flight at a sample move it by megabytes, the median by a few hundred KB; at the CI length the allocator is still warming up after the SIGTERM restart (+5 % seen; the hour levels off at 72-75 MB); the leak this test was built for cost 2.3 MB a round",
    },
    Limit {
        name: "file descriptors other than sockets",
        read: |s| s.files,
        statistic: Statistic::Peak,
        percent: 0.0,
        units: 2,
        why: "the log's files and the runtime's are fixed; 2 for a blocking read in flight",
    },
    Limit {
        name: "sockets",
        read: |s| s.sockets,
        statistic: Statistic::Median,
        percent: 0.0,
        units: 3 * PLAYED_AT_ONCE as u64 + 2,
        why: "the bots in play hold one connection each (3 per game), which a sample may or may not catch",
    },
    Limit {
        name: "threads",
        read: |s| s.threads,
        statistic: Statistic::Floor,
        percent: 0.0,
        // Half the blocking pool's cap: a CI run saw a burst leave 9 more blocking threads,
        // kept alive from then on by the light steady work (19 before, 28-30 in every later
        // sample, never rising again), which 8 did not allow.
        units: SERVER_BLOCKING_THREADS / 2,
        why: "tokio's blocking threads (log reads, restore, replays) linger 10 s after their last job, and steady light work keeps a burst's extra threads alive (up to the pool's cap, which the ceiling below checks), so the floor may step up once; a thread per stream, connection or round would add hundreds",
    },
    Limit {
        name: "tokio tasks",
        read: |s| s.tasks,
        statistic: Statistic::Floor,
        percent: 0.10,
        units: 20,
        why: "one actor per live game and a few tasks per connection; the quietest sample shows the lasting ones, and a task left behind by each stream would add hundreds a round",
    },
    Limit {
        name: "games in the directory",
        read: |s| s.known,
        statistic: Statistic::Floor,
        percent: 0.10,
        units: 8,
        why: "games over leave after --retain-finished, so the count rises and falls with the games in play; the quietest sample shows the lasting ones, and a game never let go raises it",
    },
    Limit {
        name: "game handles (games in memory)",
        read: |s| s.handles,
        statistic: Statistic::Floor,
        percent: 0.10,
        units: 8,
        why: "ended actors are forgotten every 5 s, so a sample may catch up to a few rounds' games; the quietest one shows the lasting ones",
    },
    Limit {
        name: "create_ids remembered",
        read: |s| s.create_ids,
        statistic: Statistic::Floor,
        percent: 0.10,
        units: 4,
        why: "one per game created with one, forgotten with the game; the quietest sample shows the lasting ones",
    },
    Limit {
        name: "limits' table entries",
        read: |s| s.limit_entries,
        statistic: Statistic::Floor,
        percent: 0.10,
        units: 8,
        why: "games over are forgotten every 5 s, so the count swings with the moment of the sample (7 to 46 in one CI run, medians 10 and 22 by the halves' luck); the quietest sample shows the lasting ones",
    },
    Limit {
        name: "data dir (KB)",
        read: |s| s.data_kb,
        statistic: Statistic::Peak,
        percent: 0.10,
        units: 2048,
        why: "sled grows its files by segments and reuses what --retain-finished frees",
    },
];

struct Soak {
    server: Server,
    _dir: tempfile::TempDir,
    metrics: u16,
    http: u16,
    client: Client,
    played: Vec<Played>,
    /// Games seen finished, newest last (some are deleted by --retain-finished meanwhile).
    finished: Vec<String>,
    /// Games that finished by their rules, all told.
    finished_count: usize,
    round: u64,
    games_created: u64,
    started: Instant,
}

impl Soak {
    async fn start() -> Soak {
        let dir = tempfile::tempdir().unwrap();
        let (metrics, http) = (free_port(), free_port());
        let server = Server::start_with(
            dir.path(),
            0,
            &[
                "--metrics",
                &format!("127.0.0.1:{metrics}"),
                "--http",
                &format!("127.0.0.1:{http}"),
                "--fill-timeout",
                "2s",
                "--idle-timeout",
                "3s",
                "--retain-finished",
                "3s",
                "--keep-finished-ms",
                "500",
            ],
        );
        let client = server.client().await;
        Soak {
            server,
            _dir: dir,
            metrics,
            http,
            client,
            played: Vec::new(),
            finished: Vec::new(),
            finished_count: 0,
            round: 0,
            games_created: 0,
            started: Instant::now(),
        }
    }

    fn request(&self, kind: &str, players: u32, pairs: &[(&str, &str)]) -> pb::CreateGameRequest {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        pb::CreateGameRequest {
            kind: kind.into(),
            options: Some(gangs_games::parse_options(kind, Some(players), &pairs).unwrap()),
            seed: Some(self.round),
            ..Default::default()
        }
    }

    async fn create(&mut self, mut request: pb::CreateGameRequest) -> String {
        // Every other round's games with a create_id, retried once: the directory remembers it.
        self.games_created += 1;
        if self.round.is_multiple_of(2) {
            request.create_id = format!("soak-{}", self.games_created);
        }
        let created = self
            .client
            .create_game(request.clone())
            .await
            .unwrap()
            .into_inner();
        if !request.create_id.is_empty() {
            let again = self.client.create_game(request).await.unwrap().into_inner();
            assert_eq!(again, created, "a retry gets its game");
        }
        created.game_id
    }

    async fn join_all(&mut self, game: &str, players: u32) -> Vec<String> {
        let mut tokens = Vec::new();
        for seat in 0..players {
            let join = pb::JoinGameRequest {
                game_id: game.to_string(),
                seat: Some(seat),
                ..Default::default()
            };
            tokens.push(
                self.client
                    .join_game(join)
                    .await
                    .unwrap()
                    .into_inner()
                    .token,
            );
        }
        tokens
    }

    fn bot(&self, game: &str, token: &str, seed: u64) -> Bot {
        Bot(Command::new(bin("gangs-bot-random"))
            .args(["--server", &self.server.url(), "--game", game])
            .args(["--token", token, "--seed", &seed.to_string()])
            .env("RUST_LOG", "error")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start gangs-bot-random"))
    }

    /// One round of everything the server lives through.
    async fn round(&mut self) {
        self.round += 1;
        // A game left waiting for its seats (abandoned after --fill-timeout), one where every
        // seat is taken and nobody acts (abandoned after --idle-timeout), one cancelled.
        let waiting = self.create(self.request("gang-of-four", 4, &[])).await;
        let idle = self.create(self.request("the-gang", 3, &[])).await;
        self.join_all(&idle, 3).await;
        let cancelled = self.create(self.request("gang-of-four", 3, &[])).await;
        self.join_all(&cancelled, 1).await;
        self.client
            .cancel_game(pb::CancelGameRequest {
                game_id: cancelled.clone(),
                reason: "soak".into(),
            })
            .await
            .unwrap();
        self.play();
        self.start_played().await;
        self.resume_a_bot();

        // The watch storm: read and unread streams on games in every state.
        let mut targets = vec![waiting.clone(), idle.clone(), cancelled.clone()];
        targets.extend(self.played.iter().map(|p| p.id.clone()));
        targets.extend(self.finished.iter().rev().take(2).cloned());
        let t = Instant::now();
        self.watch_storm(&targets).await;
        let storm = t.elapsed();
        // Pages of the games that stay (the finished ones may be deleted meanwhile).
        self.viewer_pages(&targets[..2]).await;
        let pages = t.elapsed();
        // Every stream of the pass just made is gone from the server, its game's list included.
        await_metric(self.metrics, "gangs_watchers", 0.0, RELEASE_DEADLINE).await;
        await_metric(self.metrics, "gangs_game_watchers", 0.0, RELEASE_DEADLINE).await;
        eprintln!(
            "round {}: storm {storm:?}, pages {pages:?}, released {:?}",
            self.round,
            t.elapsed()
        );
    }

    /// Starts bot games until PLAYED_AT_ONCE are in play.
    async fn start_played(&mut self) {
        while self.played.len() < PLAYED_AT_ONCE {
            let request = self.request("gang-of-four", 3, &[("target_score", "10")]);
            let id = self.create(request).await;
            let tokens = self.join_all(&id, 3).await;
            let bots = tokens
                .iter()
                .enumerate()
                .map(|(seat, token)| self.bot(&id, token, self.round * 10 + seat as u64))
                .collect();
            self.played.push(Played {
                id,
                tokens,
                bots,
                resumed: false,
            });
        }
    }

    /// Reaps the games whose bots are done.
    fn play(&mut self) {
        let mut still = Vec::new();
        for mut game in std::mem::take(&mut self.played) {
            let done = game
                .bots
                .iter_mut()
                .all(|b| b.try_wait().expect("try_wait").is_some());
            if done {
                self.finished.push(game.id);
                self.finished_count += 1;
            } else {
                still.push(game);
            }
        }
        self.played = still;
        let keep = self.finished.len().saturating_sub(8);
        self.finished.drain(..keep);
    }

    /// A bot disconnects abruptly (SIGKILL) and a new process resumes its seat with its token.
    fn resume_a_bot(&mut self) {
        let Some(index) = self.played.iter().position(|p| !p.resumed) else {
            return;
        };
        let seed = self.round * 10 + 7;
        let (id, token) = {
            let game = &mut self.played[index];
            game.resumed = true;
            let _ = game.bots[0].kill();
            let _ = game.bots[0].wait();
            (game.id.clone(), game.tokens[0].clone())
        };
        let bot = self.bot(&id, &token, seed);
        self.played[index].bots[0] = bot;
    }

    async fn watch_storm(&mut self, targets: &[String]) {
        // HTTP/2 flow control: by default a client connection buffers 5 MB of unread data, a
        // stream 2 MB. A few dozen unread catch-ups of finished games fill a connection's
        // window, and a stream opened on it later waits for its first update for ever (the
        // hour-long run stalled so once, at 1,648 s). The server is not at fault (it sends
        // what the client's windows allow); with 64 KB per stream, the unread streams hold a
        // few updates each and never the connection.
        let endpoint = gangs_proto::connect::endpoint(&self.server.url(), None)
            .expect("endpoint")
            .initial_stream_window_size(64 * 1024)
            .initial_connection_window_size(1 << 30);
        let mut connections = Vec::new();
        for _ in 0..CONNECTIONS {
            let channel = endpoint.connect().await.expect("connect to the server");
            connections.push(pb::games_client::GamesClient::new(channel));
        }
        let mut streams = Vec::new();
        for i in 0..STREAMS {
            let game = &targets[i % targets.len()];
            let connection = &mut connections[i % CONNECTIONS];
            let opened = connection
                .watch(pb::WatchRequest {
                    game_id: game.clone(),
                    ..Default::default()
                })
                .await;
            match opened {
                Ok(stream) => streams.push(stream.into_inner()),
                // A finished game deleted by --retain-finished meanwhile.
                Err(status) if status.code() == tonic::Code::NotFound => {}
                Err(status) => panic!("watch {game}: {status:?}"),
            }
        }
        // Half of them read an update; the others are never read.
        for stream in streams.iter_mut().step_by(2) {
            let first = tokio::time::timeout(Duration::from_secs(20), stream.message()).await;
            match first.expect("an update within 20 s") {
                Ok(_) => {}
                Err(status) => assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}"),
            }
        }
        drop(streams);
        drop(connections);
    }

    /// Opens the viewer's live page of a few games, reads its first event, and leaves.
    async fn viewer_pages(&self, targets: &[String]) {
        let http = self.http;
        let games: Vec<String> = targets.iter().take(PAGES).cloned().collect();
        tokio::task::spawn_blocking(move || {
            for game in games {
                let mut page = std::net::TcpStream::connect(("127.0.0.1", http)).unwrap();
                page.set_read_timeout(Some(Duration::from_secs(20)))
                    .unwrap();
                write!(
                    page,
                    "GET /api/games/{game}/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
                )
                .unwrap();
                let mut seen = Vec::new();
                let mut buffer = [0u8; 4096];
                while !String::from_utf8_lossy(&seen).contains("event: update") {
                    let n = page.read(&mut buffer).expect("the live page answers");
                    assert!(n > 0, "the live page ended before its first update");
                    seen.extend_from_slice(&buffer[..n]);
                }
                // The browser tab is closed.
            }
        })
        .await
        .unwrap();
    }

    async fn sample(&self) -> Sample {
        let pid = self.server.child.id();
        let metrics = self.metrics;
        let text = tokio::task::spawn_blocking(move || scrape(metrics))
            .await
            .unwrap();
        let gauge = |name: &str| metric(&text, name).unwrap_or_else(|| panic!("{name}")) as u64;
        let sockets = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
            })
            .count() as u64;
        let fds = open_fds(pid);
        Sample {
            seconds: self.started.elapsed().as_secs(),
            rss_kb: rss_kb(pid),
            files: fds.saturating_sub(sockets),
            sockets,
            threads: threads(pid),
            tasks: gauge("gangs_tasks"),
            live: gauge("gangs_live_games"),
            known: gauge("gangs_games_known"),
            handles: gauge("gangs_game_handles"),
            create_ids: gauge("gangs_create_ids"),
            limit_entries: gauge("gangs_limit_entries"),
            data_kb: dir_bytes(&self.server.data_dir) / 1024,
        }
    }

    /// SIGTERM: the server stops by itself, promptly and cleanly, then starts again.
    fn graceful_restart(&mut self) {
        self.server.terminate();
        self.server.restart();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_grows_without_bound() {
    let _alone = crate::the_machine().await;
    let seconds: u64 = std::env::var("GANGS_SOAK_SECONDS")
        .ok()
        .map(|s| s.parse().expect("GANGS_SOAK_SECONDS: a number of seconds"))
        .unwrap_or(150);
    let total = Duration::from_secs(seconds);
    let mut soak = Soak::start().await;
    // The first quarter with two restarts, the second to warm the last process up, the rest
    // measured.
    let restarts = [total / 12, total / 6];
    let mut restarted = 0;
    let measure_from = total / 2;
    let mut samples = Vec::new();
    eprintln!("round  s  rss_kb files sockets threads tasks live known handles create_ids limit_entries data_kb");
    while soak.started.elapsed() < total {
        if restarted < restarts.len() && soak.started.elapsed() >= restarts[restarted] {
            if restarted == 0 {
                soak.server.restart();
            } else {
                soak.graceful_restart();
            }
            soak.client = soak.server.client().await;
            restarted += 1;
        }
        soak.round().await;
        let sample = soak.sample().await;
        eprintln!(
            "{:>5} {:>3} {:>7} {:>5} {:>7} {:>7} {:>5} {:>4} {:>5} {:>7} {:>10} {:>13} {:>7}",
            soak.round,
            sample.seconds,
            sample.rss_kb,
            sample.files,
            sample.sockets,
            sample.threads,
            sample.tasks,
            sample.live,
            sample.known,
            sample.handles,
            sample.create_ids,
            sample.limit_entries,
            sample.data_kb
        );
        if soak.started.elapsed() >= measure_from {
            samples.push(sample);
        }
    }
    assert_eq!(restarted, restarts.len(), "both restarts happened");
    assert!(
        samples.len() >= 6,
        "only {} rounds measured: the rounds are too slow for {seconds} s",
        samples.len()
    );
    assert!(
        soak.finished_count > 0,
        "no game was played to its end by the bots"
    );
    let streams = soak.round as usize * STREAMS;
    eprintln!(
        "{} rounds, {streams} watch streams, {} games played to the end",
        soak.round, soak.finished_count
    );

    let (first, second) = samples.split_at(samples.len() / 2);
    let mut failures = Vec::new();
    for limit in LIMITS {
        let sum_up = |half: &[Sample]| limit.statistic.of(half.iter().map(limit.read).collect());
        let (before, after) = (sum_up(first), sum_up(second));
        let allowed = (before as f64 * (1.0 + limit.percent)) as u64 + limit.units;
        let statistic = limit.statistic.name();
        eprintln!(
            "{}: {statistic} {before} in the first half, {after} in the second (at most {allowed}: {})",
            limit.name, limit.why
        );
        if after > allowed {
            failures.push(format!(
                "{} grew from a {statistic} of {before} to {after} (allowed {allowed})",
                limit.name
            ));
        }
    }
    // Workers (one per core), the capped blocking pool, sled's threads and the server's own.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let ceiling = cores + SERVER_BLOCKING_THREADS + 16;
    let most_threads = samples.iter().map(|s| s.threads).max().unwrap_or(0);
    eprintln!("threads: at most {most_threads} (ceiling {ceiling})");
    if most_threads > ceiling {
        failures.push(format!(
            "{most_threads} threads, over the ceiling of {ceiling}: is the blocking pool capped?"
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("; "));
}
