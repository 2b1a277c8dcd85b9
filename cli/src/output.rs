//! Printing: JSON for programs (`--json`, one object per line) or lines for humans, never
//! both. This file also fixes the JSON shapes of updates, log records and game summaries:
//! their keys are public interface.

use crate::error::CliError;
use gangs_games::{describe_action, describe_event, render_view};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use serde_json::{json, Value};
use std::io::Write;

/// Where and how results go.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub json: bool,
}

impl Output {
    pub fn new(json: bool) -> Self {
        Output { json }
    }

    /// One result: `value` with `--json`, else the human text (built only if needed).
    pub fn emit(&self, value: Value, human: impl FnOnce() -> String) {
        if self.json {
            print_line(&value.to_string());
        } else {
            print_line(&human());
        }
    }

    /// Human text only (nothing in JSON mode): hints, prompts, pictures.
    pub fn human(&self, text: impl FnOnce() -> String) {
        if !self.json {
            print_line(&text());
        }
    }

    /// The error on stderr, and with `--json` also as one object on stdout (unless the
    /// command's JSON result already holds it).
    pub fn error(&self, error: &CliError) {
        eprintln!("error: {error}");
        if self.json && !error.in_json_result {
            print_line(&error_json(error).to_string());
        }
    }

    /// A progress note (reconnecting…): on stderr in both modes, so stdout stays pure JSON.
    pub fn note(&self, text: &str) {
        eprintln!("{text}");
    }

    /// A non-fatal problem (a refused move in `gangs play`): on stderr for humans, as an error
    /// object on stdout with `--json`.
    pub fn warn(&self, error: &CliError) {
        if self.json {
            print_line(&error_json(error).to_string());
        } else {
            eprintln!("{error}");
        }
    }
}

/// Writes one line to stdout. A closed stdout (`gangs log | head`) ends the program quietly.
fn print_line(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{text}")
        .and_then(|_| stdout.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

pub fn error_json(error: &CliError) -> Value {
    let mut value = json!({ "error": error.message, "code": error.code });
    if let Some(seq) = error.seq {
        value["seq"] = json!(seq);
    }
    value
}

/// `waiting`, `running`, `finished` (or `unspecified`).
pub fn status_name(status: i32) -> &'static str {
    match pb::GameStatus::try_from(status) {
        Ok(pb::GameStatus::Waiting) => "waiting",
        Ok(pb::GameStatus::Running) => "running",
        Ok(pb::GameStatus::Finished) => "finished",
        Ok(pb::GameStatus::Cancelled) => "cancelled",
        Ok(pb::GameStatus::Abandoned) => "abandoned",
        _ => "unspecified",
    }
}

/// Over: finished by its rules, cancelled or abandoned (the stream ends after this update).
pub fn is_finished(update: &pb::Update) -> bool {
    pb::GameStatus::is_over_code(update.status)
}

fn events_json(events: &[pb::GameEvent]) -> Vec<String> {
    events.iter().map(describe_event).collect()
}

pub fn outcome_json(outcome: &pb::Outcome) -> Value {
    json!({
        "summary": outcome.summary,
        "seats": outcome.seats.iter().map(|s| json!({
            "seat": s.seat,
            "rank": s.rank,
            "score": s.score,
            "won": s.won,
        })).collect::<Vec<_>>(),
    })
}

/// One update of `gangs watch` / `gangs play`.
pub fn update_json(update: &pb::Update) -> Value {
    json!({
        "seq": update.seq,
        "seat": update.seat,
        "actor": update.actor,
        "status": status_name(update.status),
        "seats_taken": update.seats_taken,
        "events": events_json(&update.events),
        "legal_actions": update.legal_actions.iter().map(describe_action).collect::<Vec<_>>(),
        "deadline_unix_ms": update.deadline_unix_ms,
        "clocks": update.clocks.iter().map(|c| json!({
            "seat": c.seat,
            "deadline_unix_ms": c.deadline_unix_ms,
            "bank_ms": c.bank_ms,
            "absent": c.absent,
        })).collect::<Vec<_>>(),
        "view_text": update.view.as_ref().map(render_view).unwrap_or_default(),
        "view": update
            .view
            .as_ref()
            .map(|v| gangs_proto::json::to_json(v, "gangs.v1.GameView")),
        "outcome": update.outcome.as_ref().map(outcome_json),
    })
}

/// The human lines of an update: its events prefixed with the seq, or what else happened.
pub fn update_lines(update: &pb::Update) -> Vec<String> {
    let seq = update.seq;
    let mut lines = Vec::new();
    let who = update
        .actor
        .map(|seat| format!("seat {seat}: "))
        .unwrap_or_default();
    for event in &update.events {
        lines.push(format!("{seq:>5}  {who}{}", describe_event(event)));
    }
    if update.events.is_empty() {
        let what = match pb::GameStatus::try_from(update.status) {
            Ok(pb::GameStatus::Waiting) => format!("{} seat(s) taken", update.seats_taken),
            _ => format!("{who}(nothing you may see)"),
        };
        lines.push(format!("{seq:>5}  {what}"));
    }
    if is_finished(update) {
        lines.push(format!("       game over: {}", over_summary(update)));
    } else {
        if !update.legal_actions.is_empty() {
            lines.push(format!(
                "       your turn ({} legal actions)",
                update.legal_actions.len()
            ));
        }
        if let Some(clocks) = clock_line(update, unix_now_ms()) {
            lines.push(format!("       {clocks}"));
        }
    }
    lines
}

/// How a game that is over ended, in words: its outcome's summary, else (a game cancelled or
/// abandoned, which has no outcome) what happened to it; never empty.
pub fn over_summary(update: &pb::Update) -> String {
    if let Some(summary) = update
        .outcome
        .as_ref()
        .map(|o| o.summary.trim())
        .filter(|s| !s.is_empty())
    {
        return summary.to_string();
    }
    match pb::GameStatus::try_from(update.status) {
        Ok(pb::GameStatus::Cancelled) => "cancelled (CancelGame): no outcome".into(),
        Ok(pb::GameStatus::Abandoned) => {
            "abandoned (its seats were not all taken in time, or nobody acted for too long): no outcome".into()
        }
        _ => "ended without an outcome".into(),
    }
}

/// "clock: seat 2 has 8.2 s (bank 3.0 s); seat 0 absent", for the seats the game waits for
/// and the absent ones; `None` in a game without clocks.
pub fn clock_line(update: &pb::Update, now_ms: i64) -> Option<String> {
    let parts: Vec<String> = update
        .clocks
        .iter()
        .filter_map(|c| match (c.deadline_unix_ms, c.absent) {
            (Some(at), _) => Some(format!(
                "seat {} has {:.1} s (bank {:.1} s){}",
                c.seat,
                (at - now_ms).max(0) as f64 / 1000.0,
                c.bank_ms as f64 / 1000.0,
                if c.absent { ", absent" } else { "" }
            )),
            (None, true) => Some(format!("seat {} absent", c.seat)),
            (None, false) => None,
        })
        .collect();
    (!parts.is_empty()).then(|| format!("clock: {}", parts.join("; ")))
}

fn unix_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `created`, `joined`, `started`, `acted`, `expired`, `timed_out`, `ended`.
pub fn record_type(record: &pb::LogRecord) -> &'static str {
    match &record.record {
        Some(Record::Created(_)) => "created",
        Some(Record::Joined(_)) => "joined",
        Some(Record::Started(_)) => "started",
        Some(Record::Acted(_)) => "acted",
        Some(Record::Expired(_)) => "expired",
        Some(Record::TimedOut(_)) => "timed_out",
        Some(Record::Ended(_)) => "ended",
        Some(Record::Ladder(_)) => "ladder",
        None => "empty",
    }
}

/// One record of `gangs log` / `gangs replay`. Every record has `seq`, `unix_ms`, `type`,
/// `seat`, `action` and `events` (as words), and `record`: the whole `LogRecord` in the proto3
/// JSON mapping, for scripts that want every field; some add their own fields.
pub fn log_record_json(record: &pb::LogRecord) -> Value {
    let mut value = json!({
        "seq": record.seq,
        "unix_ms": record.unix_ms,
        "type": record_type(record),
        "seat": null,
        "action": null,
        "events": [],
        "record": gangs_proto::json::to_json(record, "gangs.v1.LogRecord"),
    });
    match &record.record {
        Some(Record::Created(c)) => {
            value["kind"] = json!(c.kind);
            value["players"] = json!(c.players);
            value["seed"] = json!(c.seed);
            value["preset"] = json!(c.preset.is_some());
        }
        Some(Record::Joined(j)) => {
            value["seat"] = json!(j.seat);
            value["name"] = json!(j.name);
        }
        Some(Record::Started(s)) => value["events"] = json!(events_json(&s.events)),
        Some(Record::Acted(a)) => {
            value["seat"] = json!(a.seat);
            value["action"] = json!(a.action.as_ref().map(describe_action));
            value["action_id"] = json!(a.action_id);
            value["events"] = json!(events_json(&a.events));
        }
        Some(Record::Expired(e)) => value["events"] = json!(events_json(&e.events)),
        Some(Record::TimedOut(t)) => {
            value["seat"] = json!(t.seat);
            value["action"] = json!(t.action.as_ref().map(describe_action));
            value["decision"] = json!(t.decision);
            value["used_ms"] = json!(t.used_ms);
            value["absent"] = json!(t.absent);
            value["events"] = json!(events_json(&t.events));
        }
        Some(Record::Ended(e)) => {
            value["reason"] = json!(ended_word(e));
            value["detail"] = json!(e.detail);
        }
        Some(Record::Ladder(_)) | None => {}
    }
    value
}

/// The human lines of a log record: a header line, then one indented line per event.
pub fn log_record_lines(record: &pb::LogRecord) -> Vec<String> {
    let seq = record.seq;
    let (header, events): (String, &[pb::GameEvent]) = match &record.record {
        Some(Record::Created(c)) => {
            let seed = c
                .seed
                .map(|s| format!("seed {s}"))
                .unwrap_or_else(|| "seed hidden until the game ends".into());
            let preset = if c.preset.is_some() {
                ", preset deals"
            } else {
                ""
            };
            (
                format!("created {}, {} players, {seed}{preset}", c.kind, c.players),
                &[],
            )
        }
        Some(Record::Joined(j)) => (format!("joined  seat {} ({})", j.seat, j.name), &[]),
        Some(Record::Started(s)) => ("started".into(), &s.events),
        Some(Record::Acted(a)) => {
            let action = a
                .action
                .as_ref()
                .map(describe_action)
                .unwrap_or_else(|| "(no action)".into());
            (format!("acted   seat {}: {action}", a.seat), &a.events)
        }
        Some(Record::Expired(e)) => ("expired (the phase deadline passed)".into(), &e.events),
        Some(Record::TimedOut(t)) => {
            let action = t
                .action
                .as_ref()
                .map(describe_action)
                .unwrap_or_else(|| "(hidden until the game ends)".into());
            // A hosted bot's failed decision says why it failed; else its clock ran out.
            let why = if t.absent {
                "absent: default played at once".to_string()
            } else if !t.cause.is_empty() {
                format!("its module failed: {} (after {} ms)", t.cause, t.used_ms)
            } else {
                format!("clock ran out after {} ms", t.used_ms)
            };
            (
                format!("timeout seat {} ({}; {why}): {action}", t.seat, t.decision),
                &t.events,
            )
        }
        Some(Record::Ended(e)) => (format!("ended   {}: {}", ended_word(e), e.detail), &[]),
        Some(Record::Ladder(_)) => ("(a ladder's record)".into(), &[]),
        None => ("(empty record)".into(), &[]),
    };
    let mut lines = vec![format!("{seq:>5}  {header}")];
    lines.extend(
        events
            .iter()
            .map(|e| format!("         {}", describe_event(e))),
    );
    lines
}

/// One game of `gangs games`.
/// "cancelled" or "abandoned".
pub fn ended_word(ended: &pb::Ended) -> &'static str {
    match ended.reason() {
        pb::ended::Reason::Abandoned => "abandoned",
        _ => "cancelled",
    }
}

pub fn summary_json(game: &pb::GameSummary) -> Value {
    json!({
        "game_id": game.game_id,
        "kind": game.kind,
        "players": game.players,
        "seats_taken": game.seats_taken,
        "status": status_name(game.status),
        "names": game.names,
        "last_seq": game.last_seq,
        "created_unix_ms": game.created_unix_ms,
        "finished_unix_ms": game.finished_unix_ms,
        "outcome": game.outcome.as_ref().map(outcome_json),
        "imported": game.imported,
        "damaged": game.damaged,
        "damage_reason": game.damage_reason,
    })
}

pub fn summary_line(game: &pb::GameSummary) -> String {
    let mut line = format!(
        "{:<24} {:<13} {}/{} seats  {:<9} {}{}",
        game.game_id,
        game.kind,
        game.seats_taken,
        game.players,
        if game.damaged {
            "damaged"
        } else {
            status_name(game.status)
        },
        if game.imported { "(imported) " } else { "" },
        game.names
            .iter()
            .map(|n| if n.is_empty() { "-" } else { n.as_str() })
            .collect::<Vec<_>>()
            .join(", ")
    );
    if game.damaged {
        line.push_str(&format!("  (damaged: {})", game.damage_reason));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_update() -> pb::Update {
        pb::Update {
            seq: 12,
            events: vec![pb::GameEvent::default()],
            actor: Some(1),
            view: Some(pb::GameView::default()),
            legal_actions: vec![pb::GameAction::default(), pb::GameAction::default()],
            deadline_unix_ms: None,
            status: pb::GameStatus::Running as i32,
            outcome: None,
            seat: Some(2),
            seats_taken: 4,
            clocks: Vec::new(),
            unix_ms: 0,
        }
    }

    #[test]
    fn update_json_shape() {
        let value = update_json(&sample_update());
        assert_eq!(value["seq"], 12);
        assert_eq!(value["seat"], 2);
        assert_eq!(value["actor"], 1);
        assert_eq!(value["status"], "running");
        assert_eq!(value["seats_taken"], 4);
        assert_eq!(value["events"], json!(["(empty event)"]));
        assert_eq!(
            value["legal_actions"],
            json!(["(empty action)", "(empty action)"])
        );
        assert_eq!(value["view_text"], "(no view yet)");
        assert!(value["deadline_unix_ms"].is_null());
        assert!(value["outcome"].is_null());
    }

    #[test]
    fn finished_update_carries_the_outcome() {
        let mut update = sample_update();
        update.status = pb::GameStatus::Finished as i32;
        update.legal_actions.clear();
        update.outcome = Some(pb::Outcome {
            seats: vec![pb::SeatOutcome {
                seat: 0,
                rank: 1,
                score: -3,
                won: true,
            }],
            summary: "seat 0 wins".into(),
        });
        let value = update_json(&update);
        assert_eq!(value["status"], "finished");
        assert_eq!(value["outcome"]["summary"], "seat 0 wins");
        assert_eq!(
            value["outcome"]["seats"],
            json!([{"seat": 0, "rank": 1, "score": -3, "won": true}])
        );
        let lines = update_lines(&update);
        assert_eq!(lines.last().unwrap(), "       game over: seat 0 wins");
    }

    #[test]
    fn update_lines_prefix_the_seq_and_say_whose_turn() {
        let lines = update_lines(&sample_update());
        assert_eq!(lines[0], "   12  seat 1: (empty event)");
        assert_eq!(lines[1], "       your turn (2 legal actions)");
    }

    #[test]
    fn log_record_json_shapes() {
        let created = pb::LogRecord {
            seq: 1,
            unix_ms: 1000,
            record: Some(Record::Created(pb::Created {
                kind: "the-gang".into(),
                options: None,
                seed: None,
                preset: None,
                players: 3,
                ..Default::default()
            })),
        };
        let value = log_record_json(&created);
        assert_eq!(value["seq"], 1);
        assert_eq!(value["type"], "created");
        assert_eq!(value["kind"], "the-gang");
        assert_eq!(value["players"], 3);
        assert!(value["seed"].is_null());
        assert!(value["seat"].is_null());
        assert!(value["action"].is_null());
        assert_eq!(value["events"], json!([]));

        let acted = pb::LogRecord {
            seq: 9,
            unix_ms: 2000,
            record: Some(Record::Acted(pb::Acted {
                seat: 2,
                action: Some(pb::GameAction::default()),
                action_id: "a1".into(),
                events: vec![pb::GameEvent::default()],
            })),
        };
        let value = log_record_json(&acted);
        assert_eq!(value["type"], "acted");
        assert_eq!(value["seat"], 2);
        assert_eq!(value["action"], "(empty action)");
        assert_eq!(value["events"], json!(["(empty event)"]));
        // The whole record, structured, with the proto's field names.
        assert_eq!(value["record"]["seq"], 9);
        assert_eq!(value["record"]["acted"]["seat"], 2);
        assert_eq!(value["record"]["acted"]["action_id"], "a1");

        let joined = pb::LogRecord {
            seq: 2,
            unix_ms: 0,
            record: Some(Record::Joined(pb::Joined {
                seat: 0,
                name: "ann".into(),
                token: String::new(),
                join_id: String::new(),
            })),
        };
        let value = log_record_json(&joined);
        assert_eq!(value["type"], "joined");
        assert_eq!(value["seat"], 0);
        assert_eq!(value["name"], "ann");

        for (record, kind) in [
            (Record::Started(pb::Started::default()), "started"),
            (Record::Expired(pb::Expired::default()), "expired"),
        ] {
            let value = log_record_json(&pb::LogRecord {
                seq: 3,
                unix_ms: 0,
                record: Some(record),
            });
            assert_eq!(value["type"], kind);
        }
    }

    #[test]
    fn log_record_lines_show_the_seed_state() {
        let created = pb::LogRecord {
            seq: 1,
            unix_ms: 0,
            record: Some(Record::Created(pb::Created {
                kind: "gang-of-four".into(),
                seed: Some(7),
                players: 4,
                ..Default::default()
            })),
        };
        assert_eq!(
            log_record_lines(&created),
            ["    1  created gang-of-four, 4 players, seed 7"]
        );
    }

    #[test]
    fn a_timeout_says_why_a_hosted_bots_decision_failed() {
        let timed_out = |cause: &str, absent: bool| pb::LogRecord {
            seq: 9,
            unix_ms: 0,
            record: Some(Record::TimedOut(pb::TimedOut {
                seat: 2,
                decision: "play or pass".into(),
                used_ms: 34,
                absent,
                cause: cause.into(),
                ..Default::default()
            })),
        };
        assert_eq!(
            log_record_lines(&timed_out("fuel: out of fuel", false))[0],
            "    9  timeout seat 2 (play or pass; its module failed: fuel: out of fuel (after 34 ms)): (hidden until the game ends)"
        );
        assert_eq!(
            log_record_lines(&timed_out("", false))[0],
            "    9  timeout seat 2 (play or pass; clock ran out after 34 ms): (hidden until the game ends)"
        );
        assert!(log_record_lines(&timed_out("", true))[0].contains("absent: default played"));
    }

    #[test]
    fn a_game_over_without_an_outcome_says_what_happened() {
        let mut update = sample_update();
        update.legal_actions.clear();
        update.status = pb::GameStatus::Cancelled as i32;
        let lines = update_lines(&update);
        assert_eq!(
            lines.last().unwrap(),
            "       game over: cancelled (CancelGame): no outcome"
        );
        update.status = pb::GameStatus::Abandoned as i32;
        assert!(over_summary(&update).starts_with("abandoned ("));
        // An outcome with an empty summary is as good as none.
        update.status = pb::GameStatus::Finished as i32;
        update.outcome = Some(pb::Outcome::default());
        assert_eq!(over_summary(&update), "ended without an outcome");
        for status in [
            pb::GameStatus::Cancelled,
            pb::GameStatus::Abandoned,
            pb::GameStatus::Finished,
        ] {
            update.status = status as i32;
            update.outcome = None;
            let summary = over_summary(&update);
            assert!(!summary.trim().is_empty(), "{status:?}");
            assert!(!update_lines(&update)
                .last()
                .unwrap()
                .ends_with("game over: "));
        }
    }

    #[test]
    fn summary_json_shape() {
        let game = pb::GameSummary {
            game_id: "g1".into(),
            kind: "gang-of-four".into(),
            players: 4,
            seats_taken: 2,
            status: pb::GameStatus::Waiting as i32,
            names: vec!["ann".into(), "bob".into()],
            last_seq: 3,
            created_unix_ms: 1000,
            ..Default::default()
        };
        assert_eq!(
            summary_json(&game),
            json!({
                "game_id": "g1", "kind": "gang-of-four", "players": 4, "seats_taken": 2,
                "status": "waiting", "names": ["ann", "bob"], "last_seq": 3,
                "created_unix_ms": 1000, "finished_unix_ms": null, "outcome": null,
                "imported": false, "damaged": false, "damage_reason": ""
            })
        );
    }

    #[test]
    fn error_json_shape() {
        let e = CliError::new("REPLAY_DIVERGED", "event 0 differs").with_seq(5);
        assert_eq!(
            error_json(&e),
            json!({"error": "event 0 differs", "code": "REPLAY_DIVERGED", "seq": 5})
        );
    }
}
