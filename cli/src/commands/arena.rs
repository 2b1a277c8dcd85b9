//! `gangs arena --game KIND --bot CMD [--bot CMD]... --games N`: plays bot processes against
//! each other for many games and prints who wins how often (with 95% intervals) and a rating.
//!
//! The arena starts its own `gangs-server` on a free port with a temporary data dir, unless
//! `--server` (or GANGS_SERVER) is given. Per game it creates the game, starts one bot process
//! per seat (`CMD... --server URL --game GAME --seat S --seed X`, the bot contract of
//! `docs/bots.md`, with `GANGS_BOT_QUIET=1` in its environment) and watches the game as a
//! spectator: the server's final update is the result, as soon as the game is over; bots still
//! running `--exit-grace-ms` later are killed and named in the report. Seats rotate between games; `--duplicate`
//! replays each deal sequence once per rotation. With `--out DIR` every game's file and the
//! results (`results.csv`, `results.jsonl`) stay in DIR. `arena/processes.rs` runs the
//! processes, `arena/stats.rs` does the arithmetic, `arena/results.rs` writes the results.

mod game;
mod processes;
mod report;
mod results;
mod stats;

use crate::client::{Client, Context};
use crate::error::CliError;
use crate::output::status_name;
use clap::Args;

use game::play_game;
use gangs_proto::v1 as pb;
use indicatif::{ProgressBar, ProgressStyle};
pub(super) use processes::OwnServer;
use processes::{bot_slots, resolve_program, spawn_bot, BotCommand, Bots};
use report::Report;
use results::{GameRow, SeatRow};
use serde_json::{json, Value};
use stats::{BotRow, GameResult, SeatResult, TeamResult, TeamTally};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;

/// Without clocks, how long after every bot exited the server may take to say the game is over.
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
timeouts are counted per bot.

A game's result is the server's: the arena watches each game and takes its outcome as soon as
the game is over. The bots then have --exit-grace-ms to exit; a bot still running after that
is killed (with its process group), the game counts all the same, and the report names the
bot and its seat under `killed` (and in `notes`).";

#[derive(Args)]
pub struct ArenaArgs {
    #[arg(long = "game", value_name = "KIND", help = format!("The game: {}.", gangs_games::kind_names_help()))]
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

    /// Once a game is over on the server, how long its bots may take to exit before the ones
    /// still running are killed (the game's result is kept; the report names them).
    #[arg(long, value_name = "MS", default_value_t = 3000)]
    exit_grace_ms: u64,

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
    /// `--exit-grace-ms`: how long bots may linger after their game is over.
    grace: Duration,
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
    /// Its bots that were still running after the grace period.
    killed: Vec<Killed>,
}

/// A bot process killed because it had not exited `--exit-grace-ms` after its game was over.
struct Killed {
    game_id: String,
    seat: usize,
    /// The `--bot` command.
    bot: String,
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
        grace: Duration::from_millis(args.exit_grace_ms),
        clocks,
        server: server.clone(),
        ca,
        client,
        log_dir: dir.path().to_path_buf(),
        out: args.out.clone(),
    });

    let played = play_all(&arena, total, args.parallel, context.out.json).await;
    if let Some(server) = own_server {
        server.stop().await;
    }
    // The data dir and the bots' logs go only now that the server is gone.
    drop(dir);
    let (mut results, mut failures) = played?;
    failures.sort_by_key(|f| f.game);
    results.sort_by_key(|f| f.result.game);
    let game_rows: Vec<GameRow> = results.iter().map(|f| f.row.clone()).collect();
    let killed: Vec<Killed> = results
        .iter_mut()
        .flat_map(|f| f.killed.drain(..))
        .collect();
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
        killed: &killed,
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

/// Plays the arena's `total` games, `parallel` at a time, with a progress bar: the games
/// that finished and those that failed (each said on stderr as it fails). Ctrl-C aborts the
/// games (and so kills their bots, which sit in process groups of their own, out of the
/// terminal's reach).
async fn play_all(
    arena: &Arc<Arena>,
    total: u64,
    parallel: u64,
    json: bool,
) -> Result<(Vec<Finished>, Vec<Failure>), CliError> {
    let bar = progress_bar(total, json);
    let mut results = Vec::new();
    let mut failures = Vec::new();
    let mut tasks = JoinSet::new();
    let mut next = 0;
    while next < total || !tasks.is_empty() {
        while next < total && (tasks.len() as u64) < parallel {
            let arena = Arc::clone(arena);
            let game = next;
            tasks.spawn(async move { (game, play_game(&arena, game).await) });
            next += 1;
        }
        let joined = tokio::select! {
            joined = tasks.join_next() => joined,
            _ = tokio::signal::ctrl_c() => {
                tasks.shutdown().await;
                bar.finish_and_clear();
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
                let seed = stats::game_seed(arena.base_seed, game, arena.players, arena.duplicate);
                bar.suspend(|| eprintln!("game {game} (seed {seed}): {error}"));
                failures.push(Failure { game, seed, error });
                bar.set_message(format!("{} error(s)", failures.len()));
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok((results, failures))
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
        assert_eq!(args.exit_grace_ms, 3000);
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
            killed: &[Killed {
                game_id: "00aa".into(),
                seat: 2,
                bot: "r".into(),
            }],
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
        assert_eq!(value["killed"][0]["game_id"], "00aa");
        assert_eq!(value["killed"][0]["seat"], 2);
        assert_eq!(value["killed"][0]["bot"], "r");
        assert!(
            text.contains(
                "1 bot(s) killed, still running after their game ended:\n  game 00aa seat 2: r"
            ),
            "{text}"
        );
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
        assert_eq!(report::share_text(0.25, 0.089, 0.532), "25.0% (8.9–53.2%)");
    }
}
