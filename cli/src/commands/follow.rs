//! `gangs games --follow`: the directory's events as they happen (`WatchGames`), one line each
//! (`--json`: one object per line, the event in the proto3 JSON mapping). Each line carries the
//! event's cursor; `--from-cursor C` resumes after it. A server restart is ridden out: the
//! stream is opened again from the last cursor shown (no gap, no duplicate), with the bots'
//! backoff for up to their outage budget.

use crate::client::Context;
use crate::error::CliError;
use crate::output::summary_json;
use gangs_proto::retry::{is_transient, Backoff, OUTAGE_BUDGET};
use gangs_proto::v1 as pb;
use std::time::Instant;

/// What to follow: the filters of `gangs games` and where to start.
pub struct Follow {
    pub kind: String,
    pub statuses: Vec<pb::GameStatus>,
    /// Empty: only events from now on; "0": every event the server keeps.
    pub from_cursor: String,
}

pub async fn run(follow: Follow, context: &Context) -> Result<(), CliError> {
    let mut cursor = follow.from_cursor.clone();
    let mut outage: Option<Instant> = None;
    let mut backoff = Backoff::default();
    loop {
        let end = match open(&follow, &cursor, context).await {
            Ok(mut stream) => {
                if outage.take().is_some() {
                    context
                        .out
                        .note(&format!("reconnected; resuming after cursor {cursor}"));
                    backoff = Backoff::default();
                }
                loop {
                    match stream.message().await {
                        Ok(Some(event)) => {
                            print(&event, context);
                            cursor = event.cursor;
                        }
                        Ok(None) => break Ok(()),
                        Err(status) => break Err(status),
                    }
                }
            }
            Err(status) => Err(status),
        };
        if let Err(status) = &end {
            if !is_transient(status) {
                return Err(context.refused(status.clone()));
            }
        }
        let started = *outage.get_or_insert_with(|| {
            context.out.note(&format!(
                "lost the directory stream; reconnecting to {} for up to {} s",
                context.server,
                OUTAGE_BUDGET.as_secs()
            ));
            Instant::now()
        });
        if started.elapsed() > OUTAGE_BUDGET {
            return Err(match end {
                Err(status) => context.refused(status),
                Ok(()) => CliError::unreachable(&context.server, "the stream ended"),
            });
        }
        tokio::time::sleep(backoff.next_delay()).await;
    }
}

/// The stream after `cursor`; a connection failure is UNAVAILABLE (transient).
async fn open(
    follow: &Follow,
    cursor: &str,
    context: &Context,
) -> Result<tonic::Streaming<pb::WatchGamesResponse>, tonic::Status> {
    let mut client = context.connect().await.map_err(|e| match e.code.as_str() {
        "UNAVAILABLE" => tonic::Status::unavailable(e.message),
        _ => tonic::Status::invalid_argument(e.message),
    })?;
    let request = pb::WatchGamesRequest {
        from_cursor: cursor.to_string(),
        kind: follow.kind.clone(),
        statuses: follow.statuses.iter().map(|s| *s as i32).collect(),
    };
    Ok(client.watch_games(request).await?.into_inner())
}

/// The event's word.
fn word(event: pb::DirectoryEvent) -> &'static str {
    match event {
        pb::DirectoryEvent::Created => "created",
        pb::DirectoryEvent::SeatTaken => "seat taken",
        pb::DirectoryEvent::Started => "started",
        pb::DirectoryEvent::Finished => "finished",
        pb::DirectoryEvent::Cancelled => "cancelled",
        pb::DirectoryEvent::Abandoned => "abandoned",
        pb::DirectoryEvent::Unspecified => "unknown",
    }
}

fn print(event: &pb::WatchGamesResponse, context: &Context) {
    let mut value = gangs_proto::json::to_json(event, "gangs.v1.WatchGamesResponse");
    if let Some(summary) = &event.summary {
        value["summary"] = summary_json(summary);
    }
    context.out.emit(value, || {
        let kind = event.summary.as_ref().map_or("", |s| s.kind.as_str());
        let mut line = format!(
            "{:>6}  {:<10} {} {kind} (seq {})",
            event.cursor,
            word(event.event()),
            event.game_id,
            event.seq
        );
        if let Some(seat) = event.seat {
            line.push_str(&format!(": seat {seat}"));
            if !event.name.is_empty() {
                line.push_str(&format!(" {}", gangs_proto::quoted(&event.name)));
            }
        }
        if !event.reason.is_empty() {
            line.push_str(&format!(": {}", event.reason));
        }
        if let Some(outcome) = event.outcome.as_ref().filter(|o| !o.summary.is_empty()) {
            line.push_str(&format!(": {}", outcome.summary));
        }
        line
    });
}
