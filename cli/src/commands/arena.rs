//! `gangs arena --game KIND --bot CMD [--bot CMD]... --games N`: plays bot processes against
//! each other for many games and prints who wins how often (with 95% intervals) and a rating.
//!
//! The arena starts its own `gangs-server` on a free port with a temporary data dir, unless
//! `--server` (or GANGS_SERVER) is given. Per game it creates the game, starts one bot process
//! per seat (`CMD... --server URL --game GAME --seat S --seed X`, the bot contract of
//! `docs/bots.md`, with `GANGS_BOT_QUIET=1` in its environment), waits for them all
//! to exit, and reads the outcome as a spectator. Seats rotate between games; `--duplicate`
//! replays each deal sequence once per rotation. With `--out DIR` every game's file and the
//! results (`results.csv`, `results.jsonl`) stay in DIR. `arena/processes.rs` runs the
//! processes, `arena/stats.rs` does the arithmetic, `arena/results.rs` writes the results.

mod processes;
mod results;
mod stats;

use crate::client::{find_summary, Client, Context};
use crate::error::CliError;
use crate::output::status_name;
use clap::Args;

use gangs_proto::v1 as pb;
use indicatif::{ProgressBar, ProgressStyle};
pub(super) use processes::OwnServer;
use processes::{bot_slots, resolve_program, spawn_bot, wait_for_bots, BotCommand};
use results::{GameRow, SeatRow};
use serde_json::{json, Value};
use stats::{BotRow, GameResult, SeatResult, TeamResult, TeamTally};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;

/// How long reading a finished game's outcome may take.
const OUTCOME_TIMEOUT: Duration = Duration::from_secs(30);

pub const AFTER_HELP: &str = "\
Each --bot CMD is split as a shell would (`--bot \"gangs-bot-search --budget-ms 50\"`); with
fewer --bot than seats the last one fills the rest. Bare program names are looked for next to
`gangs`, then on PATH. Bots sharing one CMD are one row of the table, counted per seat and game.

Game g seats bot i at seat (i + g) mod players. `games` counts games; a bot in several seats of
one game counts once there, and its seats are counted apart as seat-games. Gang of Four: a win
is a seat-game at rank 1 in the outcome (a tie for first is a win for every tied seat); win share
= wins / seat-games with its 95% Wilson interval; mean penalty per seat-game (lower is better);
Elo (start 1500, K = 16) over every pair of seats held by different bots, in the order played,
with a 95% bootstrap interval (200 resamples of the games). The Gang (cooperative, every seat one
team, so no Elo and no per-bot wins): the team's heists (vaults + alarms), heist success rate
(vaults / heists) and games won/lost, shares with 95% Wilson intervals.

--out DIR keeps every finished game's file (`GAME_ID.jsonl`, as `gangs export` writes it: `gangs
replay --file`, `gangs import`) and the results, one row per game: `results.jsonl` and
`results.csv` (game, game id, seed, per seat: bot, rank, score, won, timeouts; The Gang: vaults,
alarms, won; the outcome; the file). Without --out, the games stay on --server, or go with the
arena's own temporary server; the report lists their ids either way.

Without --server (or GANGS_SERVER) the arena starts its own gangs-server (found next to `gangs`,
then on PATH) on a free port with a temporary data dir. Without clocks (--turn-ms 0) a bot exiting non-zero or a game
passing --game-timeout-secs is an error for that game: listed, counted in `errors`, and the exit code
is 1. With clocks (--turn-ms, on by default) a bot that exits early is not an error: its seat
plays default actions until the game ends, the arena says so under `notes`, and every seat's
timeouts are counted per bot.";

#[derive(Args)]
pub struct ArenaArgs {
    /// The game: `gang-of-four` or `the-gang`.
    #[arg(long = "game", value_name = "KIND")]
    kind: String,

    /// A bot command, e.g. `gangs-bot-random` or "gangs-bot-search --budget-ms 50"; repeat
    /// for several (at most one per seat; the last fills the remaining seats).
    #[arg(long = "bot", value_name = "CMD", required = true)]
    bots: Vec<String>,

    /// How many games to play (with --duplicate: rounded up to whole groups of rotations).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    games: u64,

    /// Number of seats (omitted: the game's default).
    #[arg(long)]
    players: Option<u32>,

    /// A game option, `key=value`; repeat for several (`gangs rules KIND` lists the keys).
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = super::new::parse_key_value)]
    options: Vec<(String, String)>,

    /// How many games run at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    parallel: u64,

    /// Play each deal sequence once per rotation of the seats (one seed for each group of
    /// `players` games), so that the luck of the deal cancels. Meant for Gang of Four.
    #[arg(long)]
    duplicate: bool,

    /// Seed of the whole arena (every game's deals and every bot's --seed derive from it);
    /// omitted: random, printed with the results.
    #[arg(long)]
    seed: Option<u64>,

    /// A game whose bots have not all exited after this many seconds is killed and counted as
    /// an error.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    game_timeout_secs: u64,

    /// Seat clocks for every game: each decision may take MS (the `turn_ms` option; an
    /// explicit `--option turn_ms=...` wins; 0: no clocks). A bot that crashes or hangs then
    /// costs only its seat's timeouts: its defaults are played and the game goes on.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    turn_ms: u64,

    /// Keep every game's file and the results (`results.csv`, `results.jsonl`) in this
    /// directory (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// What every game task needs.
struct Arena {
    kind: String,
    options: pb::GameOptions,
    players: usize,
    slots: Vec<BotCommand>,
    programs: Vec<PathBuf>,
    base_seed: u64,
    duplicate: bool,
    timeout: Duration,
    /// Seats have clocks (`turn_ms`): a bot exiting early is a note, not an error.
    clocks: bool,
    server: String,
    /// `--ca` for an external `https://` server, passed on to every bot.
    ca: Option<PathBuf>,
    client: Client,
    log_dir: PathBuf,
    /// `--out`: where game files go.
    out: Option<PathBuf>,
}

/// A finished game: what the table counts and the row of the results.
struct Finished {
    result: GameResult,
    row: GameRow,
}

/// A game that produced no result.
struct Failure {
    game: u64,
    seed: u64,
    error: String,
}

pub async fn run(args: ArenaArgs, context: &Context) -> Result<(), CliError> {
    let Ok(kind) = gangs_games::kind(&args.kind) else {
        return Err(CliError::invalid(format!(
            "unknown game kind {:?}: use --game with one of {}",
            args.kind,
            gangs_games::kind_names().join(", ")
        )));
    };
    // A team game's seats share one result: no per-bot ranking, the team's rounds instead.
    let team_game = kind.team_game;
    let mut pairs = args.options.clone();
    if args.turn_ms > 0 && !pairs.iter().any(|(key, _)| key == "turn_ms") {
        pairs.push(("turn_ms".to_string(), args.turn_ms.to_string()));
    }
    let options = gangs_games::parse_options(&args.kind, args.players, &pairs)
        .map_err(|e| CliError::invalid(e.to_string()))?;
    // Building the game locally checks the options, tells the number of seats and whether
    // seats have clocks.
    let local = gangs_games::new_game(&args.kind, Some(&options), 0, None)
        .map_err(|e| CliError::invalid(e.to_string()))?;
    let clocks = local.clock().enabled();
    let players = local.players();
    let slots = bot_slots(&args.bots, players)?;
    let programs = slots
        .iter()
        .map(|bot| resolve_program(&bot.program))
        .collect::<Result<Vec<_>, _>>()?;
    let (names, slot_entry) = entries(&slots);
    let base_seed = args.seed.unwrap_or_else(rand::random);
    let total = stats::planned_games(args.games, players, args.duplicate);
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)
            .map_err(|e| CliError::local(format!("cannot create --out {}: {e}", out.display())))?;
    }

    let dir = tempfile::Builder::new()
        .prefix("gangs-arena-")
        .tempdir()
        .map_err(|e| CliError::local(format!("cannot create a temporary directory: {e}")))?;
    let own_server = if context.server_given {
        None
    } else {
        Some(OwnServer::start(dir.path(), &[]).await?)
    };
    let server = own_server
        .as_ref()
        .map_or_else(|| context.server.clone(), |s| s.url.clone());
    // The own server speaks plain http and has no keys: --ca and --api-key are for an
    // external server only.
    let ca = context.ca.clone().filter(|_| own_server.is_none());
    let mut server_context = Context::new(server.clone(), context.out);
    server_context.ca = ca.clone();
    if own_server.is_none() {
        server_context.api_key = context.api_key.clone();
    }
    let client = server_context.connect().await?;
    let arena = Arc::new(Arena {
        kind: args.kind.clone(),
        options,
        players,
        slots,
        programs,
        base_seed,
        duplicate: args.duplicate,
        timeout: Duration::from_secs(args.game_timeout_secs),
        clocks,
        server: server.clone(),
        ca,
        client,
        log_dir: dir.path().to_path_buf(),
        out: args.out.clone(),
    });

    let bar = progress_bar(total, context.out.json);
    let mut results = Vec::new();
    let mut failures = Vec::new();
    let mut tasks = JoinSet::new();
    let mut next = 0;
    while next < total || !tasks.is_empty() {
        while next < total && (tasks.len() as u64) < args.parallel {
            let arena = Arc::clone(&arena);
            let game = next;
            tasks.spawn(async move { (game, play_game(&arena, game).await) });
            next += 1;
        }
        let joined = tokio::select! {
            joined = tasks.join_next() => joined,
            _ = tokio::signal::ctrl_c() => {
                // The bots sit in process groups of their own, out of the terminal's reach:
                // aborting the games drops (and so kills) them.
                tasks.shutdown().await;
                bar.finish_and_clear();
                if let Some(server) = own_server {
                    server.stop().await;
                }
                return Err(CliError::new(
                    "CANCELLED",
                    format!("interrupted after {} of {total} games", results.len() + failures.len()),
                ));
            }
        };
        let Some(joined) = joined else {
            break;
        };
        let (game, outcome) =
            joined.map_err(|e| CliError::local(format!("a game task failed unexpectedly: {e}")))?;
        match outcome {
            Ok(finished) => results.push(finished),
            Err(error) => {
                let seed = stats::game_seed(base_seed, game, players, args.duplicate);
                bar.suspend(|| eprintln!("game {game} (seed {seed}): {error}"));
                failures.push(Failure { game, seed, error });
                bar.set_message(format!("{} error(s)", failures.len()));
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(server) = own_server {
        server.stop().await;
    }
    // The data dir and the bots' logs go only now that the server is gone.
    drop(dir);

    failures.sort_by_key(|f| f.game);
    results.sort_by_key(|f| f.result.game);
    let game_rows: Vec<GameRow> = results.iter().map(|f| f.row.clone()).collect();
    let results: Vec<GameResult> = results.into_iter().map(|f| f.result).collect();
    if let Some(out) = &args.out {
        results::write(out, players, team_game, &game_rows).map_err(CliError::local)?;
    }
    let notes: Vec<String> = results.iter().flat_map(|r| r.notes.clone()).collect();
    let rows = stats::tally(&names, &slot_entry, &results, base_seed);
    let team = team_game.then(|| stats::team_tally(&results));
    let report = Report {
        kind: &args.kind,
        players,
        planned: total,
        completed: results.len() as u64,
        seed: base_seed,
        duplicate: args.duplicate,
        server: if context.server_given {
            Some(server.as_str())
        } else {
            None
        },
        rows: &rows,
        team: team.as_ref(),
        failures: &failures,
        notes: &notes,
        game_ids: game_rows.iter().map(|r| r.game_id.clone()).collect(),
        out: args.out.as_deref(),
    };
    context
        .out
        .emit(report.json(), || report.lines().join("\n"));
    if failures.is_empty() {
        Ok(())
    } else {
        Err(CliError::new(
            "GAMES_FAILED",
            format!(
                "{} of {total} games failed (listed above): the table counts only the {} that finished",
                failures.len(),
                results.len()
            ),
        )
        .in_json_result())
    }
}

/// The table's rows (distinct `--bot` texts, in order of appearance) and each slot's row.
fn entries(slots: &[BotCommand]) -> (Vec<String>, Vec<usize>) {
    let mut names: Vec<String> = Vec::new();
    let slot_entry = slots
        .iter()
        .map(|bot| match names.iter().position(|n| *n == bot.name) {
            Some(i) => i,
            None => {
                names.push(bot.name.clone());
                names.len() - 1
            }
        })
        .collect();
    (names, slot_entry)
}

/// A bar on stderr when a person watches it; hidden for --json or a redirected stderr.
fn progress_bar(total: u64, json: bool) -> ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} games  {elapsed} (eta {eta})  {msg}")
    {
        bar.set_style(style);
    }
    bar
}

/// Plays game `game` from creation to outcome (and keeps its file with `--out`); the error
/// says what went wrong.
async fn play_game(arena: &Arena, game: u64) -> Result<Finished, String> {
    let seed = stats::game_seed(arena.base_seed, game, arena.players, arena.duplicate);
    let refused = |what: &str, status: tonic::Status| {
        format!(
            "{what}: {}",
            CliError::from_status(&arena.server, &status).message
        )
    };
    let mut client = arena.client.clone();
    let request = pb::CreateGameRequest {
        kind: arena.kind.clone(),
        options: Some(arena.options),
        seed: Some(seed),
        ..Default::default()
    };
    let game_id = client
        .create_game(request)
        .await
        .map_err(|s| refused("cannot create the game", s))?
        .into_inner()
        .game_id;

    let mut bots = Vec::with_capacity(arena.players);
    for (slot, bot) in arena.slots.iter().enumerate() {
        let seat = stats::seat_of(slot, game, arena.players);
        let log = arena.log_dir.join(format!("game-{game}-seat-{seat}.log"));
        bots.push(spawn_bot(
            &arena.programs[slot],
            bot,
            &arena.server,
            arena.ca.as_deref(),
            &game_id,
            seat,
            stats::bot_seed(arena.base_seed, game, slot),
            log,
        )?);
    }
    // With clocks a bot that exits early is not the game's end: its seat plays defaults.
    let notes = wait_for_bots(bots, arena.timeout, arena.clocks)
        .await
        .map_err(|e| format!("game {game_id}: {e}"))?;

    let update = tokio::time::timeout(OUTCOME_TIMEOUT, final_update(&mut client, &game_id))
        .await
        .map_err(|_| {
            format!(
                "game {game_id}: no outcome within {}s of the bots' exit",
                OUTCOME_TIMEOUT.as_secs()
            )
        })?
        // Without an outcome, the bots that exited early are the likely cause: say so.
        .map_err(|e| {
            let mut error = format!("game {game_id}: {e}");
            for note in &notes {
                error.push_str("; ");
                error.push_str(note);
            }
            error
        })?;
    let mut result =
        read_result(arena, game, &update).map_err(|e| format!("game {game_id}: {e}"))?;
    let timeouts = timeouts_per_seat(&mut client, &game_id, arena.players)
        .await
        .map_err(|e| format!("game {game_id}: {e}"))?;
    for seat in &mut result.seats {
        seat.timeouts = timeouts[stats::seat_of(seat.slot, game, arena.players)];
    }
    result.notes = notes
        .into_iter()
        .map(|note| format!("game {game_id}: {note}"))
        .collect();
    let file = match &arena.out {
        Some(out) => Some(keep_file(arena, &mut client, &game_id, out).await?),
        None => None,
    };
    // By seat: the outcome may list the seats in any order.
    let mut seats: Vec<(usize, SeatRow)> = result
        .seats
        .iter()
        .map(|s| {
            let seat = stats::seat_of(s.slot, game, arena.players);
            let row = SeatRow {
                bot: arena.slots[s.slot].name.clone(),
                rank: s.rank,
                score: s.score,
                won: s.won,
                timeouts: u64::from(s.timeouts),
            };
            (seat, row)
        })
        .collect();
    seats.sort_by_key(|(seat, _)| *seat);
    let row = GameRow {
        game,
        game_id,
        seed,
        seats: seats.into_iter().map(|(_, row)| row).collect(),
        outcome: update
            .outcome
            .as_ref()
            .map(|o| o.summary.clone())
            .unwrap_or_default(),
        team: result.team,
        file,
    };
    Ok(Finished { result, row })
}

/// Writes the finished game's file into `out` as `GAME_ID.jsonl`; returns its name.
async fn keep_file(
    arena: &Arena,
    client: &mut Client,
    game_id: &str,
    out: &std::path::Path,
) -> Result<String, String> {
    let file = super::export::fetch(client, &arena.server, game_id)
        .await
        .map_err(|e| format!("game {game_id}: {}", e.message))?;
    let name = format!("{game_id}.jsonl");
    super::export::write_file(&file, &out.join(&name)).map_err(|e| e.message)?;
    Ok(name)
}

/// How many times each seat's clock ran out (`timed_out` records of the finished game's log).
async fn timeouts_per_seat(
    client: &mut Client,
    game_id: &str,
    players: usize,
) -> Result<Vec<u32>, String> {
    let mut stream = client
        .get_log(pb::GetLogRequest {
            game_id: game_id.to_string(),
            from_seq: 0,
        })
        .await
        .map_err(|s| format!("cannot read the log: {}", s.message()))?
        .into_inner();
    let mut timeouts = vec![0u32; players];
    while let Some(record) = stream
        .message()
        .await
        .map_err(|s| format!("reading the log: {}", s.message()))?
    {
        if let Some(pb::log_record::Record::TimedOut(t)) = &record.record {
            if let Some(count) = timeouts.get_mut(t.seat as usize) {
                *count += 1;
            }
        }
    }
    Ok(timeouts)
}

/// The spectator's update of a finished game's last record: its outcome and final view.
async fn final_update(client: &mut Client, game_id: &str) -> Result<pb::Update, String> {
    // With clocks the seats of exited bots play defaults: the game may need a moment more.
    let summary = loop {
        let summary = find_summary(client, game_id)
            .await
            .map_err(|s| format!("cannot list the games: {}", s.message()))?
            .ok_or("the server no longer lists the game")?;
        if summary.status != pb::GameStatus::Running as i32 {
            break summary;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    if summary.status != pb::GameStatus::Finished as i32 {
        return Err(format!(
            "every bot exited, but the game is {} at seq {}",
            status_name(summary.status),
            summary.last_seq
        ));
    }
    // Watching from the record before the last gives just the final update; read on until
    // an update carries the outcome in case the server sends more.
    let mut stream = client
        .watch(pb::WatchRequest {
            game_id: game_id.to_string(),
            token: String::new(),
            from_seq: summary.last_seq.saturating_sub(1),
        })
        .await
        .map_err(|s| format!("cannot watch the finished game: {}", s.message()))?
        .into_inner();
    loop {
        match stream.message().await {
            Ok(Some(update)) if update.outcome.is_some() => return Ok(update),
            Ok(Some(_)) => {}
            Ok(None) => return Err("the finished game's stream ended without an outcome".into()),
            Err(s) => return Err(format!("watching the finished game: {}", s.message())),
        }
    }
}

/// The seats' ranks and scores (and The Gang's vaults and alarms) from the final update.
fn read_result(arena: &Arena, game: u64, update: &pb::Update) -> Result<GameResult, String> {
    let outcome = update
        .outcome
        .as_ref()
        .ok_or("the final update has no outcome")?;
    if outcome.seats.len() != arena.players {
        return Err(format!(
            "the outcome lists {} seats for a {}-player game",
            outcome.seats.len(),
            arena.players
        ));
    }
    let mut seats = Vec::with_capacity(arena.players);
    for seat in &outcome.seats {
        if seat.seat as usize >= arena.players {
            return Err(format!("the outcome names seat {}", seat.seat));
        }
        seats.push(SeatResult {
            slot: stats::slot_at(seat.seat as usize, game, arena.players),
            rank: seat.rank,
            score: seat.score,
            won: seat.won,
            timeouts: 0,
        });
    }
    let kind = gangs_games::kind(&arena.kind).map_err(|e| e.to_string())?;
    let team = if kind.team_game {
        let view = update
            .view
            .as_ref()
            .ok_or("the final update carries no view")?;
        let rounds = kind
            .team_rounds(view)
            .ok_or_else(|| format!("the final update carries no {} view", kind.name))?;
        Some(TeamResult {
            vaults: rounds.won_rounds,
            alarms: rounds.lost_rounds,
            won: rounds.won,
        })
    } else {
        None
    };
    Ok(GameResult {
        game,
        seats,
        team,
        notes: Vec::new(),
    })
}

/// Everything the arena prints, as JSON or as a table.
struct Report<'a> {
    kind: &'a str,
    players: usize,
    planned: u64,
    completed: u64,
    seed: u64,
    duplicate: bool,
    /// The external server used, if any.
    server: Option<&'a str>,
    rows: &'a [BotRow],
    team: Option<&'a TeamTally>,
    failures: &'a [Failure],
    /// Bots that exited early while clocks kept their games going.
    notes: &'a [String],
    /// The finished games' ids, in game order.
    game_ids: Vec<String>,
    /// `--out`, where the files and results are.
    out: Option<&'a std::path::Path>,
}

impl Report<'_> {
    fn json(&self) -> Value {
        let mut value = json!({
            "kind": self.kind,
            "players": self.players,
            "games": self.completed,
            "games_planned": self.planned,
            "errors": self.failures.len(),
            "failed_games": self.failures.iter().map(|f| json!({
                "game": f.game,
                "seed": f.seed,
                "error": f.error,
            })).collect::<Vec<_>>(),
            "seed": self.seed,
            "duplicate": self.duplicate,
            "server": self.server,
            "game_ids": self.game_ids,
            "out": self.out.map(|o| o.display().to_string()),
            "bots": self.rows.iter().map(|r| self.bot_json(r)).collect::<Vec<_>>(),
            "notes": self.notes,
        });
        if let Some(team) = self.team {
            let (success_low, success_high) = stats::wilson(team.heist_successes, team.heists);
            let (won_low, won_high) = stats::wilson(team.games_won, team.games);
            let (per_game, per_game_low, per_game_high) = team.heists_per_game;
            value["heists"] = json!(team.heists);
            value["heists_per_game"] = json!(per_game);
            value["heists_per_game_low"] = json!(per_game_low);
            value["heists_per_game_high"] = json!(per_game_high);
            value["heist_successes"] = json!(team.heist_successes);
            value["heist_success_share"] = json!(stats::share(team.heist_successes, team.heists));
            value["heist_success_low"] = json!(success_low);
            value["heist_success_high"] = json!(success_high);
            value["games_won"] = json!(team.games_won);
            value["games_lost"] = json!(team.games_lost);
            value["games_won_share"] = json!(stats::share(team.games_won, team.games));
            value["games_won_low"] = json!(won_low);
            value["games_won_high"] = json!(won_high);
        }
        value
    }

    /// A bot's row: Gang of Four with wins, penalty and Elo; The Gang only how much it played
    /// (the team's numbers say how it went: every seat shares them).
    fn bot_json(&self, r: &BotRow) -> Value {
        let mut row = json!({
            "name": r.name,
            "games": r.games,
            "seat_games": r.seat_games,
            "timeouts": r.timeouts,
        });
        if self.team.is_none() {
            row["seat_game_wins"] = json!(r.seat_game_wins);
            row["win_share"] = json!(r.win_share);
            row["win_share_low"] = json!(r.win_share_low);
            row["win_share_high"] = json!(r.win_share_high);
            row["mean_penalty"] = json!(r.mean_score);
            row["elo"] = json!(r.rating);
            row["elo_low"] = json!(r.rating_low);
            row["elo_high"] = json!(r.rating_high);
        }
        row
    }

    fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{} arena: {} of {} games finished, {} players, seed {}{}{}",
            self.kind,
            self.completed,
            self.planned,
            self.players,
            self.seed,
            if self.duplicate { ", duplicate" } else { "" },
            self.server
                .map(|s| format!(", server {s}"))
                .unwrap_or_default()
        )];
        let width = self
            .rows
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(3);
        if self.team.is_some() {
            lines.push(format!(
                "{:<width$}  {:>6}  {:>10}  {:>8}",
                "bot", "games", "seat-games", "timeouts"
            ));
            for row in self.rows {
                lines.push(format!(
                    "{:<width$}  {:>6}  {:>10}  {:>8}",
                    row.name, row.games, row.seat_games, row.timeouts
                ));
            }
        } else {
            lines.push(format!(
                "{:<width$}  {:>6}  {:>10}  {:>9}  {:>21}  {:>12}  {:>16}  {:>8}",
                "bot",
                "games",
                "seat-games",
                "wins",
                "win share (95%)",
                "mean penalty",
                "Elo (95%)",
                "timeouts"
            ));
            for row in self.rows {
                lines.push(format!(
                    "{:<width$}  {:>6}  {:>10}  {:>9}  {:>21}  {:>12.1}  {:>16}  {:>8}",
                    row.name,
                    row.games,
                    row.seat_games,
                    row.seat_game_wins,
                    share_text(row.win_share, row.win_share_low, row.win_share_high),
                    row.mean_score,
                    format!(
                        "{:.0} ({:.0}–{:.0})",
                        row.rating, row.rating_low, row.rating_high
                    ),
                    row.timeouts
                ));
            }
            lines.push("(wins, win share and mean penalty are per seat-game)".into());
        }
        if let Some(team) = self.team {
            let (mean, low, high) = team.heists_per_game;
            let (s_low, s_high) = stats::wilson(team.heist_successes, team.heists);
            let (w_low, w_high) = stats::wilson(team.games_won, team.games);
            lines.push(format!(
                "team: {} heists ({mean:.1} per game, 95% {low:.1}–{high:.1})",
                team.heists
            ));
            lines.push(format!(
                "      {} successful heists (vaults): {}",
                team.heist_successes,
                share_text(
                    stats::share(team.heist_successes, team.heists),
                    s_low,
                    s_high
                )
            ));
            lines.push(format!(
                "      {} games won, {} lost: {} won",
                team.games_won,
                team.games_lost,
                share_text(stats::share(team.games_won, team.games), w_low, w_high)
            ));
        }
        if !self.notes.is_empty() {
            lines.push(format!("{} note(s):", self.notes.len()));
            for note in self.notes {
                lines.push(format!("  {note}"));
            }
        }
        lines.push(self.where_games_are());
        if !self.failures.is_empty() {
            lines.push(format!("{} error(s):", self.failures.len()));
            for f in self.failures {
                lines.push(format!("  game {} (seed {}): {}", f.game, f.seed, f.error));
            }
        }
        lines
    }
}

impl Report<'_> {
    /// Where the finished games can be found afterwards.
    fn where_games_are(&self) -> String {
        let ids = if self.game_ids.is_empty() {
            "none finished".to_string()
        } else {
            self.game_ids.join(" ")
        };
        match (self.out, self.server) {
            (Some(out), _) => format!(
                "games: {} (files and results.csv, results.jsonl in {})",
                ids,
                out.display()
            ),
            (None, Some(server)) => format!("games on {server}: {ids}"),
            (None, None) => format!(
                "games: {ids}, on the arena's own server, gone with it (--out DIR keeps them)"
            ),
        }
    }
}

/// "25.0% (8.9–53.2%)".
fn share_text(share: f64, low: f64, high: f64) -> String {
    format!(
        "{:.1}% ({:.1}–{:.1}%)",
        share * 100.0,
        low * 100.0,
        high * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        arena: ArenaArgs,
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from([
            "arena",
            "--game",
            "gang-of-four",
            "--bot",
            "gangs-bot-greedy",
            "--bot",
            "gangs-bot-search --iterations 50",
            "--games",
            "8",
            "--option",
            "target_score=20",
            "--parallel",
            "2",
            "--duplicate",
        ])
        .unwrap();
        let args = cli.arena;
        assert_eq!(args.kind, "gang-of-four");
        assert_eq!(args.bots.len(), 2);
        assert_eq!(args.games, 8);
        assert_eq!(args.parallel, 2);
        assert!(args.duplicate);
        assert_eq!(args.game_timeout_secs, 600);
        assert_eq!(args.options, [("target_score".into(), "20".into())]);
        // --bot and --games are required; --games and --parallel must be at least 1.
        assert!(Cli::try_parse_from(["arena", "--game", "the-gang", "--games", "1"]).is_err());
        assert!(Cli::try_parse_from(["arena", "--game", "the-gang", "--bot", "b"]).is_err());
        for bad in [["--games", "0"], ["--parallel", "0"]] {
            let mut argv = vec!["arena", "--game", "the-gang", "--bot", "b", "--games", "2"];
            argv.extend(bad);
            assert!(Cli::try_parse_from(argv).is_err());
        }
    }

    #[test]
    fn one_row_per_distinct_command() {
        let slots = bot_slots(&["a".into(), "b x".into()], 4).unwrap();
        let (names, slot_entry) = entries(&slots);
        assert_eq!(names, ["a", "b x"]);
        assert_eq!(slot_entry, [0, 1, 1, 1]);
    }

    #[test]
    fn report_shapes() {
        let rows = stats::tally(
            &["r".to_string()],
            &[0, 0, 0],
            &[GameResult {
                game: 0,
                seats: (0..3)
                    .map(|slot| SeatResult {
                        slot,
                        rank: 1,
                        score: 2,
                        won: false,
                        timeouts: 1,
                    })
                    .collect(),
                team: Some(TeamResult {
                    vaults: 2,
                    alarms: 3,
                    won: false,
                }),
                notes: Vec::new(),
            }],
            7,
        );
        let team = TeamTally {
            games: 1,
            heists: 5,
            heist_successes: 2,
            games_won: 0,
            games_lost: 1,
            heists_per_game: (5.0, 5.0, 5.0),
        };
        let failures = [Failure {
            game: 1,
            seed: 9,
            error: "bot \"r\" at seat 0 exited with exit status: 1".into(),
        }];
        let report = Report {
            kind: "the-gang",
            players: 3,
            planned: 2,
            completed: 1,
            seed: 7,
            duplicate: false,
            server: None,
            rows: &rows,
            team: Some(&team),
            failures: &failures,
            notes: &["game 00aa: bot \"r\" at seat 1 exited early (exit status: 1); its seat played defaults".into()],
            game_ids: vec!["00aa".into()],
            out: None,
        };
        let value = report.json();
        assert_eq!(value["games"], 1);
        assert_eq!(value["errors"], 1);
        assert_eq!(value["failed_games"][0]["game"], 1);
        assert_eq!(value["bots"][0]["name"], "r");
        // One command in three seats of one game: one game, three seat-games.
        assert_eq!(value["bots"][0]["games"], 1);
        assert_eq!(value["bots"][0]["seat_games"], 3);
        // One timeout in each of its three seats.
        assert_eq!(value["bots"][0]["timeouts"], 3);
        // Every seat is one team: no per-bot wins, no Elo.
        for key in ["seat_game_wins", "win_share", "elo", "mean_penalty"] {
            assert!(value["bots"][0].get(key).is_none(), "{key}");
        }
        assert_eq!(value["heists"], 5);
        assert_eq!(value["heist_successes"], 2);
        assert_eq!(value["games_won"], 0);
        assert_eq!(value["games_lost"], 1);
        assert_eq!(value["game_ids"][0], "00aa");
        let text = report.lines().join("\n");
        assert!(text.contains("1 of 2 games finished"), "{text}");
        assert!(text.contains("5 heists"), "{text}");
        assert!(text.contains("0 games won, 1 lost"), "{text}");
        assert!(!text.contains("Elo"), "{text}");
        assert!(text.contains("game 1 (seed 9)"), "{text}");
        assert!(text.contains("00aa, on the arena's own server"), "{text}");
        assert!(text.contains("1 note(s):\n  game 00aa: bot"), "{text}");
        assert_eq!(value["notes"].as_array().map(Vec::len), Some(1));
        // Gang of Four: wins per seat-game, penalty and Elo with its interval.
        let report = Report {
            kind: "gang-of-four",
            team: None,
            ..report
        };
        let value = report.json();
        for key in [
            "seat_game_wins",
            "win_share_low",
            "win_share_high",
            "mean_penalty",
            "elo",
            "elo_low",
            "elo_high",
        ] {
            assert!(value["bots"][0][key].is_number(), "{key}");
        }
        assert!(report.lines().join("\n").contains("Elo (95%)"));
        assert_eq!(share_text(0.25, 0.089, 0.532), "25.0% (8.9–53.2%)");
    }
}
