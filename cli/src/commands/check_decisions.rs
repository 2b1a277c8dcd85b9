//! `gangs replay GAME --bot FILE.wasm --check-decisions --seat N`: reruns every decision a
//! hosted bot made at seat N of a finished game — the same update rebuilt from the log, the
//! same virtual clock and random bytes (from the game's seed and the seat's name), the same
//! budget — and says whether each answer is identical to the logged one. For the same module,
//! engine and budget it must be; anything else exits 1 naming the first seq that differs.
//! With `--stderr`, each decision's stderr is printed too: the bot's log of the game, which the
//! server keeps only in memory (`gangs ladder bot-log`), rebuilt from the durable log.

use crate::client::Context;
use crate::error::CliError;
use gangs_games::replay::Replayer;
use gangs_games::update::{build_update, UpdateContext, WithView};
use gangs_hosted::seat::{self, SeatDecision};
use gangs_hosted::{Budget, Runner};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use serde_json::json;

pub struct Check {
    pub module: Vec<u8>,
    pub seat: u32,
    pub budget: Budget,
    /// Print each decision's stderr.
    pub stderr: bool,
}

/// What the log says a decision of the seat was.
fn logged(record: &pb::LogRecord, seat: u32) -> Option<Result<pb::GameAction, String>> {
    match &record.record {
        Some(Record::Acted(a)) if a.seat == seat => a.action.clone().map(Ok),
        // A timeout with a cause is a decision that failed; one without is the clock's.
        Some(Record::TimedOut(t)) if t.seat == seat && !t.cause.is_empty() => {
            Some(Err(t.cause.clone()))
        }
        _ => None,
    }
}

fn words(answer: &Result<pb::GameAction, String>) -> String {
    match answer {
        Ok(action) => gangs_games::describe_action(action),
        Err(cause) => format!("default ({cause})"),
    }
}

pub fn run(
    check: &Check,
    records: &[pb::LogRecord],
    name: &str,
    context: &Context,
) -> Result<(), CliError> {
    let created = records.iter().find_map(|r| match &r.record {
        Some(Record::Created(c)) => Some(c),
        _ => None,
    });
    let Some(created) = created else {
        return Err(CliError::new(
            "DATA_LOSS",
            format!("the log of {name} has no `created` record"),
        ));
    };
    let Some(seed) = created.seed else {
        return Err(CliError::new(
            "FAILED_PRECONDITION",
            format!("{name} has not finished: its log hides the seed (the key of the bot's random bytes) until it ends"),
        ));
    };
    let seat = check.seat;
    let Some(bot) = records.iter().find_map(|r| match &r.record {
        Some(Record::Joined(j)) if j.seat == seat => Some(j.name.clone()),
        _ => None,
    }) else {
        return Err(CliError::invalid(format!(
            "seat {seat} of {name} was never taken"
        )));
    };
    let runner = Runner::new();
    let module = runner
        .compile(&check.module, u64::MAX, &check.budget)
        .map_err(|refusal| CliError::invalid(format!("--bot: {refusal}")))?;
    let mut replayer = Replayer::new();
    let mut started = false;
    let mut decisions = Vec::new();
    let mut first_difference = None;
    for (i, record) in records.iter().enumerate() {
        if let (Some(was), Some(game), Some(before)) = (
            logged(record, seat),
            replayer.game(),
            i.checked_sub(1).map(|k| &records[k]),
        ) {
            let update = build_update(
                game,
                before,
                Some(seat as usize),
                &UpdateContext {
                    started,
                    seats_taken: game.players() as u32,
                    deadline_unix_ms: None,
                    clocks: Vec::new(),
                },
                WithView::WhenNeeded,
            );
            let decided = seat::decide(
                &runner,
                &module,
                &check.budget,
                SeatDecision {
                    kind: &created.kind,
                    update: &update,
                    record_unix_ms: before.unix_ms,
                    seed,
                    bot: &bot,
                },
            );
            let again = decided.action.map_err(|fault| fault.to_string());
            let identical = match (&was, &again) {
                (Ok(a), Ok(b)) => a == b,
                (Err(a), Err(b)) => a == b,
                _ => false,
            };
            if !identical && first_difference.is_none() {
                first_difference = Some(record.seq);
            }
            let mut decision = json!({
                "seq": record.seq,
                "identical": identical,
                "logged": words(&was),
                "rerun": words(&again),
                "fuel": decided.outcome.fuel_used,
            });
            if check.stderr {
                decision["stderr"] = json!(String::from_utf8_lossy(&decided.outcome.stderr));
            }
            decisions.push(decision);
        }
        started |= matches!(record.record, Some(Record::Started(_)));
        replayer.apply(record).map_err(|e| {
            CliError::new(
                "REPLAY_DIVERGED",
                format!("{name} does not replay: {}", e.message),
            )
            .with_seq(e.seq)
        })?;
    }
    let count = decisions.len();
    let same = decisions.iter().filter(|d| d["identical"] == true).count();
    let verdict = json!({
        "game": name,
        "seat": seat,
        "bot": bot,
        "engine": gangs_hosted::ENGINE,
        "decisions": decisions,
        "checked": count,
        "identical": same,
    });
    context.out.emit(verdict, || {
        let mut lines = decision_lines(&decisions);
        lines.push(format!(
            "{same} of {count} decisions of {bot} at seat {seat} in {name} rerun identically ({})",
            gangs_hosted::ENGINE
        ));
        lines.join("\n")
    });
    match first_difference {
        None if count > 0 => Ok(()),
        None => Err(CliError::new(
            "NOT_FOUND",
            format!("seat {seat} ({bot}) made no decision of its own in {name}: nothing to check"),
        )),
        Some(seq) => Err(CliError::new(
            "DECISIONS_DIFFER",
            format!(
                "{} of {count} decisions of {bot} differ from the log, the first at seq {seq}",
                count - same
            ),
        )
        .with_seq(seq)
        .in_json_result()),
    }
}

/// One line per decision (seq, same or DIFFERS, the logged action and the rerun's when they
/// differ), each followed by the rerun's stderr when it was asked for.
fn decision_lines(decisions: &[serde_json::Value]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for d in decisions {
        let same = d["identical"] == true;
        lines.push(format!(
            "{:>5}  {}  {}{}",
            d["seq"],
            if same { "same" } else { "DIFFERS" },
            d["logged"].as_str().unwrap_or_default(),
            if same {
                String::new()
            } else {
                format!(" (rerun: {})", d["rerun"].as_str().unwrap_or_default())
            }
        ));
        if let Some(text) = d["stderr"].as_str() {
            lines.extend(text.lines().map(|l| format!("         {l}")));
        }
    }
    lines
}
