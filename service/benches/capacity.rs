//! Capacity benchmark: `cargo bench -p gangs-service --bench capacity`.
//!
//! Runs the real `gangs-server` binary (the bench profile's) as a child process on a free port
//! with a temporary data dir, and measures what an operator sizes a machine by:
//! - memory per live game: the server's RSS (`/proc/PID/status`) when empty, then with
//!   `GAMES` Gang of Four games with their four seats joined (dealt, mid-deal, nobody watching,
//!   idle), then after a few actions in every game; the difference divided by the games;
//! - restart: the server is SIGKILLed and started again on the same data dir; the time from
//!   spawning it to its "listening" line (printed once every game is rebuilt from its log,
//!   process start included) gives the log records replayed per second; and its RSS then;
//! - restart of a log of whole games, the shape bots leave behind: `PLAYED` games played to
//!   their end with random legal actions (thousands of records each) on a fresh data dir, the
//!   server SIGKILLed and started again; the same figure. The first restart is dominated by what
//!   each game costs (its actor, its channels, its summary), this one by what each record costs
//!   (skimming it, the engine applying it, its events checked).
//!
//! `GANGS_CAPACITY_GAMES` overrides the number of games (default 10000), `GANGS_CAPACITY_PLAYED`
//! the number of whole games (default 64); `GANGS_CAPACITY_KEEP_DIR` keeps both logs in that
//! directory (`idle/` and `played/`, to profile a restart on them).

use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tonic::transport::Channel;

/// Actions played in every game after the deal, so that the log passes 100k records.
const ACTIONS_PER_GAME: usize = 5;
/// Client tasks creating and playing games at once.
const CONCURRENCY: usize = 64;
/// Whole games played for the second restart, one client task each (`GANGS_CAPACITY_PLAYED`).
const PLAYED: usize = 64;
/// A Gang of Four game's records before its first action: created, 4 joined, started.
const RECORDS_BEFORE_PLAY: usize = 6;
/// Time for the allocator and the store's caches to settle before RSS is read.
const SETTLE: Duration = Duration::from_secs(2);

mod common;
use common::{listening_url, print_machine, rss, Process};

struct ServerProcess {
    process: Process,
    url: String,
}

/// Starts `gangs-server` on DIR and returns it with the time it took to say "listening".
fn start(dir: &Path, games: usize) -> (ServerProcess, Duration) {
    let limit = (games * 2).to_string();
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangs-server"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .args(["--create-rate", "1000000000"])
        .args([
            "--max-live-games",
            &limit,
            "--max-live-games-per-key",
            &limit,
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start gangs-server");
    let url = listening_url(&mut child);
    let ready = started.elapsed();
    (
        ServerProcess {
            process: Process { child },
            url,
        },
        ready,
    )
}

/// SIGKILLs `server` (nothing is flushed on the way out) and starts it again on `dir`: the
/// restart rebuilds every game from its log.
fn kill_and_start(server: ServerProcess, dir: &Path, games: usize) -> (ServerProcess, Duration) {
    drop(server); // `Process` kills and reaps its child
    start(dir, games)
}

/// A count from the environment variable `name`, else `default`.
fn count_from_env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn connect(url: &str) -> GamesClient<Channel> {
    GamesClient::new(
        Channel::from_shared(url.to_string())
            .unwrap()
            .connect()
            .await
            .expect("connect"),
    )
}

/// A game created and joined by the bench: its id, seat tokens and a local replica.
struct Seated {
    id: String,
    tokens: Vec<String>,
    replica: Box<dyn gangs_games::Game>,
}

async fn create_and_join(client: &mut GamesClient<Channel>, seed: u64) -> Seated {
    let options = gangs_games::parse_options("gang-of-four", Some(4), &[]).expect("options");
    let id = client
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            options: Some(options),
            seed: Some(seed),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner()
        .game_id;
    let mut tokens = Vec::new();
    for seat in 0..4 {
        let join = pb::JoinGameRequest {
            game_id: id.clone(),
            seat: Some(seat),
            name: format!("seat{seat}"),
            ..Default::default()
        };
        tokens.push(
            client
                .join_game(join)
                .await
                .expect("join")
                .into_inner()
                .token,
        );
    }
    let mut replica =
        gangs_games::new_game("gang-of-four", Some(&options), seed, None).expect("replica");
    replica.start();
    Seated {
        id,
        tokens,
        replica,
    }
}

impl Seated {
    /// `seat` plays `action` on the replica and on the server.
    async fn act(
        &mut self,
        client: &mut GamesClient<Channel>,
        seat: usize,
        action: pb::GameAction,
    ) {
        self.replica.act(seat, &action).expect("legal");
        client
            .act(pb::ActRequest {
                game_id: self.id.clone(),
                token: self.tokens[seat].clone(),
                action: Some(action),
                ..Default::default()
            })
            .await
            .expect("act");
    }
}

/// Plays the first legal action of the seat that may act, `count` times.
async fn play(client: &mut GamesClient<Channel>, game: &mut Seated, count: usize) {
    for _ in 0..count {
        let (seat, actions) = (0..4)
            .map(|s| (s, game.replica.legal_actions(s)))
            .find(|(_, a)| !a.is_empty())
            .expect("someone may act");
        let action = actions[0].clone();
        game.act(client, seat, action).await;
    }
}

/// Plays random legal actions (of a random seat that may act) until the game is over; returns
/// the number of actions.
async fn play_to_end(client: &mut GamesClient<Channel>, game: &mut Seated, seed: u64) -> usize {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut actions = 0;
    while !game.replica.is_over() {
        let actors = game.replica.actors();
        assert!(!actors.is_empty(), "someone may act in a game not over");
        let seat = actors[rng.random_range(0..actors.len())];
        let mut legal = game.replica.legal_actions(seat);
        let action = legal.swap_remove(rng.random_range(0..legal.len()));
        game.act(client, seat, action).await;
        actions += 1;
    }
    actions
}

/// `games` whole games, each created, joined and played to its end by its own client task;
/// returns each game's id and its number of records (created, 4 joined, started, the actions).
async fn play_whole_games(url: &str, games: usize) -> Vec<(String, usize)> {
    let tasks: Vec<_> = (0..games)
        .map(|g| {
            let url = url.to_string();
            tokio::spawn(async move {
                let mut client = connect(&url).await;
                let seed = 1_000_000 + g as u64;
                let mut game = create_and_join(&mut client, seed).await;
                let actions = play_to_end(&mut client, &mut game, seed).await;
                (game.id, RECORDS_BEFORE_PLAY + actions)
            })
        })
        .collect();
    let mut played = Vec::with_capacity(games);
    for task in tasks {
        played.push(task.await.expect("play task"));
    }
    played
}

/// Runs `CONCURRENCY` tasks over `games` games, each task on its own share of the seeds.
async fn create_all(url: &str, games: usize) -> Vec<Seated> {
    let mut tasks = Vec::new();
    for t in 0..CONCURRENCY {
        let url = url.to_string();
        tasks.push(tokio::spawn(async move {
            let mut client = connect(&url).await;
            let mut mine = Vec::new();
            for g in (t..games).step_by(CONCURRENCY) {
                mine.push(create_and_join(&mut client, g as u64 + 1).await);
            }
            mine
        }));
    }
    let mut all = Vec::with_capacity(games);
    for task in tasks {
        all.extend(task.await.expect("create task"));
    }
    all
}

async fn play_all(url: &str, games: Vec<Seated>) {
    let mut shares: Vec<Vec<Seated>> = (0..CONCURRENCY).map(|_| Vec::new()).collect();
    for (i, game) in games.into_iter().enumerate() {
        shares[i % CONCURRENCY].push(game);
    }
    let mut tasks = Vec::new();
    for mut share in shares {
        let url = url.to_string();
        tasks.push(tokio::spawn(async move {
            let mut client = connect(&url).await;
            for game in &mut share {
                play(&mut client, game, ACTIONS_PER_GAME).await;
            }
        }));
    }
    for task in tasks {
        task.await.expect("play task");
    }
}

async fn log_len(url: &str, game_id: &str) -> usize {
    let mut client = connect(url).await;
    let mut stream = client
        .get_log(pb::GetLogRequest {
            game_id: game_id.to_string(),
            from_seq: 0,
        })
        .await
        .expect("log")
        .into_inner();
    let mut n = 0;
    while stream.message().await.expect("record").is_some() {
        n += 1;
    }
    n
}

fn kb(bytes: f64) -> String {
    format!("{:.1} KB", bytes / 1024.0)
}

#[tokio::main]
async fn main() {
    let games = count_from_env("GANGS_CAPACITY_GAMES", 10_000);
    let whole_games = count_from_env("GANGS_CAPACITY_PLAYED", PLAYED);
    // GANGS_CAPACITY_KEEP_DIR=DIR: the logs are written there and kept (to profile a restart).
    let temp = tempfile::tempdir().expect("temp dir");
    let kept = std::env::var_os("GANGS_CAPACITY_KEEP_DIR").map(std::path::PathBuf::from);
    let root = kept.as_deref().unwrap_or(temp.path());
    let dir = &root.join("idle");
    let (server, _) = start(dir, games);
    let pid = server.process.child.id();
    tokio::time::sleep(SETTLE).await;
    let empty = rss(pid);

    let t = Instant::now();
    let seated = create_all(&server.url, games).await;
    let created_in = t.elapsed();
    tokio::time::sleep(SETTLE).await;
    let dealt = rss(pid);

    let first = seated[0].id.clone();
    let t = Instant::now();
    play_all(&server.url, seated).await;
    let played_in = t.elapsed();
    tokio::time::sleep(SETTLE).await;
    let played = rss(pid);
    // Every game has the same records: created, 4 joined, started, the actions.
    let per_game = log_len(&server.url, &first).await;
    assert_eq!(
        per_game,
        RECORDS_BEFORE_PLAY + ACTIONS_PER_GAME,
        "records of one game"
    );
    let records = per_game * games;

    let (server, ready) = kill_and_start(server, dir, games);
    tokio::time::sleep(SETTLE).await;
    let restarted = rss(server.process.child.id());
    // The rebuilt games still answer.
    assert_eq!(log_len(&server.url, &first).await, per_game);

    drop(server);

    // A log of whole games: the restart's cost per record rather than per game.
    let dir = &root.join("played");
    let (server, _) = start(dir, whole_games);
    let t = Instant::now();
    let whole = play_whole_games(&server.url, whole_games).await;
    let whole_in = t.elapsed();
    let whole_records: usize = whole.iter().map(|(_, n)| n).sum();
    let (server, whole_ready) = kill_and_start(server, dir, whole_games);
    // Every game's log came back whole.
    for (id, records) in &whole {
        assert_eq!(log_len(&server.url, id).await, *records, "records of {id}");
    }
    drop(server);

    let per = |rss: u64| (rss as f64 - empty as f64) / games as f64;
    print_machine("");
    println!(
        "{games} Gang of Four games, 4 seats joined, created in {:.1} s; {ACTIONS_PER_GAME} actions each in {:.1} s",
        created_in.as_secs_f64(),
        played_in.as_secs_f64()
    );
    println!(
        "RSS empty server:                 {:>8.1} MB",
        empty as f64 / 1e6
    );
    println!(
        "RSS, games dealt (idle):          {:>8.1} MB  = {} per game above empty",
        dealt as f64 / 1e6,
        kb(per(dealt))
    );
    println!(
        "RSS, after {ACTIONS_PER_GAME} actions per game:      {:>8.1} MB  = {} per game",
        played as f64 / 1e6,
        kb(per(played))
    );
    println!(
        "restart: {records} records rebuilt, listening after {:.2} s (process start included) = {:.2}M records/s",
        ready.as_secs_f64(),
        records as f64 / ready.as_secs_f64() / 1e6
    );
    println!(
        "RSS after restart:                {:>8.1} MB  = {} per game",
        restarted as f64 / 1e6,
        kb(per(restarted))
    );
    println!(
        "{whole_games} Gang of Four games played to their end ({whole_records} records, {:.0} per game) in {:.1} s",
        whole_records as f64 / whole_games as f64,
        whole_in.as_secs_f64()
    );
    println!(
        "restart (whole games): {whole_records} records rebuilt, listening after {:.2} s (process start included) = {:.2}M records/s",
        whole_ready.as_secs_f64(),
        whole_records as f64 / whole_ready.as_secs_f64() / 1e6
    );
}
