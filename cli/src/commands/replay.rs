//! `gangs replay GAME [--verify]`: fetches a finished game's whole log and runs it through the
//! rules engine record by record (the same replayer the server uses at restart). Without
//! `--verify` it prints the game as it replays; with it, only the verdict. Any divergence
//! names the seq and exits 1.

use crate::client::Context;
use crate::error::CliError;
use crate::output::{ended_word, log_record_json, log_record_lines, outcome_json};
use clap::Args;
use gangs_games::render_view;
use gangs_games::replay::Replayer;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use serde_json::json;

#[derive(Args)]
pub struct ReplayArgs {
    /// The game id.
    game: String,

    /// Only check that the log replays identically; print the verdict.
    #[arg(long)]
    verify: bool,
}

pub async fn run(args: ReplayArgs, context: &Context) -> Result<(), CliError> {
    let mut client = context.connect().await?;
    let mut stream = client
        .get_log(pb::GetLogRequest {
            game_id: args.game.clone(),
            from_seq: 0,
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let mut records = Vec::new();
    while let Some(record) = stream.message().await.map_err(|s| context.refused(s))? {
        records.push(record);
    }
    check_replayable(&args.game, &records)?;

    let mut replayer = Replayer::new();
    for record in &records {
        if !args.verify {
            context.out.emit(log_record_json(record), || {
                log_record_lines(record).join("\n")
            });
        }
        replayer.apply(record).map_err(|e| {
            CliError::new(
                "REPLAY_DIVERGED",
                format!(
                    "the log of game {} does not replay: {}",
                    args.game, e.message
                ),
            )
            .with_seq(e.seq)
        })?;
    }

    let game = replayer.game();
    let outcome = game.and_then(|g| g.outcome());
    let ended = records.iter().find_map(|r| match &r.record {
        Some(Record::Ended(e)) => Some(e),
        _ => None,
    });
    let count = records.len();
    context.out.emit(
        json!({
            "verified": true,
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
                "verified: all {count} records of game {} replay identically",
                args.game
            ));
            lines.join("\n")
        },
    );
    Ok(())
}

/// A log replays only once the game is over: before, the `created` record hides the seed.
fn check_replayable(game_id: &str, records: &[pb::LogRecord]) -> Result<(), CliError> {
    let created = records.iter().find_map(|r| match &r.record {
        Some(Record::Created(c)) => Some(c),
        _ => None,
    });
    match created {
        None => Err(CliError::new(
            "DATA_LOSS",
            format!("the log of game {game_id} has no `created` record"),
        )),
        Some(c) if c.seed.is_none() => Err(CliError::new(
            "FAILED_PRECONDITION",
            format!(
                "game {game_id} has not finished: its log hides the seed until the game ends, so it cannot be replayed yet (`gangs log {game_id}` shows the public records)"
            ),
        )),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created(seed: Option<u64>) -> pb::LogRecord {
        pb::LogRecord {
            seq: 1,
            unix_ms: 0,
            record: Some(Record::Created(pb::Created {
                kind: "the-gang".into(),
                seed,
                players: 3,
                ..Default::default()
            })),
        }
    }

    #[test]
    fn a_running_game_is_refused_clearly() {
        let e = check_replayable("g1", &[created(None)]).unwrap_err();
        assert_eq!(e.code, "FAILED_PRECONDITION");
        assert!(e.message.contains("has not finished"), "{}", e.message);
    }

    #[test]
    fn a_finished_game_replays() {
        assert!(check_replayable("g1", &[created(Some(3))]).is_ok());
    }

    #[test]
    fn an_empty_log_is_refused() {
        assert_eq!(check_replayable("g1", &[]).unwrap_err().code, "DATA_LOSS");
    }
}
