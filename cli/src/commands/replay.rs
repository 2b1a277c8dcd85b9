//! `gangs replay (GAME | --file FILE)`: rebuilds a finished game with the rules engine, record by
//! record (the same replayer the server uses at restart), from the server's log or from a game
//! file with no server at all.
//!
//! - no mode flag: prints the game as it replays, then the verdict;
//! - `--verify`: only the verdict (a game file's header is checked against its records too);
//! - `--at SEQ [--seat N | --spectator]`: the state right after record SEQ: every seat's view
//!   (omniscient), or exactly the update seat N or a spectator received live;
//! - `--summary [--csv]`: one row per deal (Gang of Four) or per heist (The Gang).
//!
//! Any divergence names the seq and exits 1.

use crate::client::Context;
use crate::error::CliError;
use crate::output::{
    ended_word, log_record_json, log_record_lines, outcome_json, update_json, update_lines,
};
use clap::{ArgGroup, Args};
use gangs_games::game_file::{GameFile, GameFileError};
use gangs_games::render_view;
use gangs_games::replay::{ReplayError, Replayer};
use gangs_games::summary::{summarize, RoundTable};
use gangs_games::update::{build_update, UpdateContext};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use serde_json::{json, Value};
use std::path::PathBuf;

#[derive(Args)]
#[command(group(ArgGroup::new("source").required(true).args(["game", "file"])))]
#[command(group(ArgGroup::new("mode").args(["verify", "at", "summary", "check_decisions"])))]
pub struct ReplayArgs {
    /// The game id (on the server).
    game: Option<String>,

    /// Read the game from a game file (`gangs export`) instead of a server.
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,

    /// Only check that the game replays identically; print the verdict.
    #[arg(long)]
    verify: bool,

    /// Show the state right after this record: every seat's view (a finished game), or what
    /// --seat N or --spectator received then.
    #[arg(long, value_name = "SEQ")]
    at: Option<u64>,

    /// With --at: exactly the update this seat received. With --check-decisions: the seat the
    /// hosted bot played.
    #[arg(long, value_name = "N", conflicts_with = "spectator")]
    seat: Option<u32>,

    /// With --at: exactly the update a spectator received.
    #[arg(long, requires = "at")]
    spectator: bool,

    /// One row per deal (Gang of Four) or per heist (The Gang).
    #[arg(long)]
    summary: bool,

    /// With --summary: CSV with a header row.
    #[arg(long, requires = "summary")]
    csv: bool,

    /// A hosted bot's module (.wasm), for --check-decisions.
    #[arg(long, value_name = "FILE.wasm", requires = "check_decisions")]
    bot: Option<PathBuf>,

    /// Rerun every decision the hosted bot --bot made at --seat in the game (with the ladder's
    /// budget: --fuel, --memory-bytes) and say whether each is identical to the logged one.
    #[arg(long, requires_all = ["bot", "seat"])]
    check_decisions: bool,

    /// With --check-decisions: the ladder's fuel per decision.
    #[arg(long, default_value_t = gangs_hosted::DEFAULT_FUEL, requires = "check_decisions")]
    fuel: u64,

    /// With --check-decisions: the ladder's memory per instance, bytes.
    #[arg(long, default_value_t = gangs_hosted::DEFAULT_MEMORY_BYTES, requires = "check_decisions")]
    memory_bytes: u64,

    /// With --check-decisions: print what each rerun decision wrote on stderr (the bot's log,
    /// as the server ran it).
    #[arg(long, requires = "check_decisions")]
    stderr: bool,
}

/// What `--check-decisions` reruns.
fn args_for_check(args: &ReplayArgs) -> Result<super::check_decisions::Check, CliError> {
    let path = args.bot.clone().expect("clap requires --bot");
    let module = std::fs::read(&path)
        .map_err(|e| CliError::invalid(format!("--bot {}: {e}", path.display())))?;
    Ok(super::check_decisions::Check {
        module,
        seat: args.seat.expect("clap requires --seat"),
        stderr: args.stderr,
        budget: gangs_hosted::Budget {
            fuel: args.fuel,
            memory_bytes: args.memory_bytes,
            ..Default::default()
        },
    })
}

/// Where the records came from, for messages.
struct Source {
    game_id: String,
    /// "game X" or "the file F".
    name: String,
    records: Vec<pb::LogRecord>,
    /// The file, when read from one (its header is verified too).
    file: Option<GameFile>,
}

pub async fn run(args: ReplayArgs, context: &Context) -> Result<(), CliError> {
    let source = load(&args, context).await?;
    if args.summary {
        return summary(&args, &source, context);
    }
    if let Some(seq) = args.at {
        return at(&args, &source, seq, context).await;
    }
    if args.check_decisions {
        return super::check_decisions::run(
            &args_for_check(&args)?,
            &source.records,
            &source.name,
            context,
        );
    }
    if args.seat.is_some() {
        return Err(CliError::invalid(
            "--seat goes with --at or --check-decisions",
        ));
    }
    replay_all(&args, &source, context)
}

async fn load(args: &ReplayArgs, context: &Context) -> Result<Source, CliError> {
    if let Some(path) = &args.file {
        let name = format!("the file {}", path.display());
        let handle = std::fs::File::open(path)
            .map_err(|e| CliError::invalid(format!("cannot open {}: {e}", path.display())))?;
        let file =
            GameFile::read(std::io::BufReader::new(handle)).map_err(|e| file_error(&name, e))?;
        return Ok(Source {
            game_id: file.header.game_id.clone(),
            name,
            records: file.records.clone(),
            file: Some(file),
        });
    }
    let game_id = args.game.clone().expect("clap requires a game or a file");
    let mut client = context.connect().await?;
    let file = super::export::fetch(&mut client, &context.server, &game_id).await?;
    Ok(Source {
        name: format!("game {game_id}"),
        game_id,
        records: file.records,
        file: None,
    })
}

/// A game file's error as the command reports it.
fn file_error(name: &str, e: GameFileError) -> CliError {
    match e {
        GameFileError::Diverged(e) => diverged(name, e),
        GameFileError::NotFinished => CliError::new(
            "FAILED_PRECONDITION",
            format!("{name} holds a game that had not finished when it was exported: only its public records, no seed, so it cannot be replayed (export it again once it is over)"),
        ),
        GameFileError::Malformed { line, message } => {
            CliError::invalid(format!("{name}, line {line}: {message}"))
        }
        GameFileError::Header(message) => {
            CliError::new("DATA_LOSS", format!("{name} does not verify: {message}"))
        }
        GameFileError::Io(message) => CliError::local(format!("{name}: {message}")),
    }
}

fn diverged(name: &str, e: ReplayError) -> CliError {
    CliError::new(
        "REPLAY_DIVERGED",
        format!("{name} does not replay: {}", e.message),
    )
    .with_seq(e.seq)
}

fn seed_hidden(records: &[pb::LogRecord]) -> bool {
    records.iter().any(|r| match &r.record {
        Some(Record::Created(c)) => c.seed.is_none(),
        _ => false,
    })
}

/// A log replays only once the game is over: before, the `created` record hides the seed.
fn check_replayable(source: &Source) -> Result<(), CliError> {
    let name = &source.name;
    if !source
        .records
        .iter()
        .any(|r| matches!(r.record, Some(Record::Created(_))))
    {
        return Err(CliError::new(
            "DATA_LOSS",
            format!("the log of {name} has no `created` record"),
        ));
    }
    if seed_hidden(&source.records) {
        let hint = if source.file.is_some() {
            "export it again once it is over".to_string()
        } else {
            format!("`gangs log {}` shows the public records", source.game_id)
        };
        return Err(CliError::new(
            "FAILED_PRECONDITION",
            format!(
                "{name} has not finished: its log hides the seed until the game ends, so it cannot be replayed yet ({hint})"
            ),
        ));
    }
    Ok(())
}

fn replay_all(args: &ReplayArgs, source: &Source, context: &Context) -> Result<(), CliError> {
    check_replayable(source)?;
    let mut replayer = Replayer::new();
    for record in &source.records {
        if !args.verify {
            context.out.emit(log_record_json(record), || {
                log_record_lines(record).join("\n")
            });
        }
        replayer
            .apply(record)
            .map_err(|e| diverged(&source.name, e))?;
    }
    if let Some(file) = &source.file {
        file.verify().map_err(|e| file_error(&source.name, e))?;
    }
    let game = replayer.game();
    let outcome = game.and_then(|g| g.outcome());
    let ended = source.records.iter().find_map(|r| match &r.record {
        Some(Record::Ended(e)) => Some(e),
        _ => None,
    });
    let count = source.records.len();
    context.out.emit(
        json!({
            "verified": true,
            "game_id": source.game_id,
            "records": count,
            "outcome": outcome.as_ref().map(outcome_json),
            "ended": ended.map(ended_word),
        }),
        || {
            let mut lines = Vec::new();
            if !args.verify {
                if let Some(game) = game {
                    lines.push(render_view(&game.view(None)));
                }
                if let Some(outcome) = &outcome {
                    lines.push(format!("game over: {}", outcome.summary));
                }
                if let Some(ended) = ended {
                    lines.push(format!("game {}: {}", ended_word(ended), ended.detail));
                }
            }
            lines.push(format!(
                "verified: all {count} records of {} replay identically",
                source.name
            ));
            lines.join("\n")
        },
    );
    Ok(())
}

/// The state right after record `seq`.
async fn at(
    args: &ReplayArgs,
    source: &Source,
    seq: u64,
    context: &Context,
) -> Result<(), CliError> {
    let last = source.records.len() as u64;
    if seq == 0 || seq > last {
        return Err(CliError::invalid(format!(
            "--at {seq} is not a record of {}: its records are 1 to {last}",
            source.name
        )));
    }
    if seed_hidden(&source.records) && source.file.is_none() && args.seat.is_none() {
        // A running game: the server replays it for the spectator (Watch from that seq).
        return spectator_of_running_game(source, seq, context).await;
    }
    if seed_hidden(&source.records) && args.seat.is_some() {
        return Err(CliError::new(
            "FAILED_PRECONDITION",
            format!("{} has not finished: a seat's view stays private until the game ends (without --seat: the spectator's view)", source.name),
        ));
    }
    check_replayable(source)?;
    let records = &source.records[..seq as usize];
    let replayer = gangs_games::replay::replay(records).map_err(|e| diverged(&source.name, e))?;
    let game = replayer.game().expect("the first record is `created`");
    let players = game.players();
    if let Some(seat) = args.seat.filter(|&s| s as usize >= players) {
        return Err(CliError::invalid(format!(
            "seat {seat} does not exist: this game has seats 0 to {}",
            players - 1
        )));
    }
    let started = records
        .iter()
        .any(|r| matches!(r.record, Some(Record::Started(_))));
    let seats_taken = if started {
        players as u32
    } else {
        records
            .iter()
            .filter(|r| matches!(r.record, Some(Record::Joined(_))))
            .count() as u32
    };
    let record = &records[seq as usize - 1];
    let update_context = UpdateContext {
        started,
        seats_taken,
        deadline_unix_ms: None,
        clocks: replayer
            .clocks()
            .map(gangs_games::clock::Clocks::to_pb)
            .unwrap_or_default(),
    };
    let update = |seat: Option<usize>| {
        build_update(
            game,
            record,
            seat,
            &update_context,
            gangs_games::update::WithView::Always,
        )
    };
    if args.seat.is_some() || args.spectator {
        let update = update(args.seat.map(|s| s as usize));
        context
            .out
            .emit(update_json(&update), || update_text(&update));
        return Ok(());
    }
    // Omniscient: what the spectator saw, and every seat's own view.
    let spectator = update(None);
    let seat_updates: Vec<pb::Update> = (0..players).map(|s| update(Some(s))).collect();
    let mut value = update_json(&spectator);
    value["seat_views"] = Value::Array(
        seat_updates
            .iter()
            .map(|u| {
                u.view
                    .as_ref()
                    .map(|v| gangs_proto::json::to_json(v, "gangs.v1.GameView"))
                    .unwrap_or(Value::Null)
            })
            .collect(),
    );
    context.out.emit(value, || {
        let mut text = update_text(&spectator);
        for (seat, u) in seat_updates.iter().enumerate() {
            if let Some(view) = &u.view {
                text.push_str(&format!("\n--- seat {seat} sees:\n{}", render_view(view)));
            }
        }
        text
    });
    Ok(())
}

fn update_text(update: &pb::Update) -> String {
    let mut lines = update_lines(update);
    if let Some(view) = &update.view {
        lines.push(render_view(view));
    }
    lines.join("\n")
}

async fn spectator_of_running_game(
    source: &Source,
    seq: u64,
    context: &Context,
) -> Result<(), CliError> {
    let mut client = context.connect().await?;
    let mut stream = context
        .watch(&mut client, &source.game_id, "", seq - 1)
        .await?;
    let update = stream
        .message()
        .await
        .map_err(|s| context.refused(s))?
        .ok_or_else(|| {
            CliError::new(
                "UNAVAILABLE",
                format!("the server sent no update for seq {seq} of {}", source.name),
            )
        })?;
    context
        .out
        .emit(update_json(&update), || update_text(&update));
    Ok(())
}

fn summary(args: &ReplayArgs, source: &Source, context: &Context) -> Result<(), CliError> {
    // A finished game is checked first: a summary of records that do not replay means nothing.
    if !seed_hidden(&source.records) {
        match &source.file {
            Some(file) => drop(file.verify().map_err(|e| file_error(&source.name, e))?),
            None => drop(
                gangs_games::replay::replay(&source.records)
                    .map_err(|e| diverged(&source.name, e))?,
            ),
        }
    }
    let summary = summarize(&source.records)
        .map_err(|e| CliError::new("DATA_LOSS", format!("{}: {e}", source.name)))?;
    let table = summary_table(summary);
    if args.csv {
        let mut out = String::new();
        for row in std::iter::once(&table.header).chain(&table.rows) {
            out.push_str(
                &row.iter()
                    .map(|c| csv_field(c))
                    .collect::<Vec<_>>()
                    .join(","),
            );
            out.push('\n');
        }
        print!("{out}");
        return Ok(());
    }
    if context.out.json {
        for json in &table.json {
            context.out.emit(json.clone(), String::new);
        }
        return Ok(());
    }
    // Columns padded to their widest cell.
    let lines = std::iter::once(&table.header).chain(&table.rows);
    let mut widths = vec![0; table.header.len()];
    for row in lines.clone() {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let text: Vec<String> = lines
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, &w)| format!("{cell:<w$}"))
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect();
    context.out.human(|| text.join("\n"));
    Ok(())
}

/// A summary as text cells (human lines and CSV) and as JSON objects (one per row): the
/// columns are the game's own (its summary module, through the kind registry).
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    json: Vec<Value>,
}

fn summary_table(summary: RoundTable) -> Table {
    let (rows, json) = summary
        .rows
        .into_iter()
        .map(|row| (row.cells, row.json))
        .unzip();
    Table {
        header: summary.header,
        rows,
        json,
    }
}

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("12"), "12");
        assert_eq!(csv_field("a, b"), "\"a, b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
