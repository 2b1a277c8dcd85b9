//! `gangs webhook test --url URL --secret S`: sends a receiver one signed sample event, exactly
//! as the server's webhooks would (`gangs_proto::webhook`: the same body, headers and
//! signature), so a receiver can be checked before a server points at it. Exit code 0 when it
//! answered 2xx.

use crate::client::Context;
use crate::error::CliError;
use clap::{Args, Subcommand};
use gangs_proto::v1 as pb;
use serde_json::json;

#[derive(Args)]
pub struct WebhookArgs {
    #[command(subcommand)]
    command: WebhookCommand,
}

#[derive(Subcommand)]
enum WebhookCommand {
    /// POST a signed sample event (`type` "test": a cancelled game that never existed).
    Test {
        /// The receiver's URL (http:// or https://).
        #[arg(long)]
        url: String,
        /// The secret the server signs with (--webhook-secret).
        #[arg(long, env = "GANGS_WEBHOOK_SECRET", hide_env_values = true)]
        secret: String,
    },
}

pub async fn run(args: WebhookArgs, context: &Context) -> Result<(), CliError> {
    let WebhookCommand::Test { url, secret } = args.command;
    gangs_proto::webhook::check_url(&url).map_err(|e| CliError::invalid(e.0))?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut event = pb::WatchGamesResponse {
        cursor: "0".into(),
        game_id: "0000000000000000".into(),
        seq: 2,
        unix_ms: now_ms,
        reason: "a test event from `gangs webhook test`".into(),
        summary: Some(pb::GameSummary {
            game_id: "0000000000000000".into(),
            kind: gangs_games::kinds()[0].name.into(),
            players: 4,
            status: pb::GameStatus::Cancelled as i32,
            last_seq: 2,
            created_unix_ms: now_ms,
            finished_unix_ms: Some(now_ms),
            ..Default::default()
        }),
        ..Default::default()
    };
    event.set_event(pb::DirectoryEvent::Cancelled);
    let (id, body) = gangs_proto::webhook::event_body(&event, "test");
    let headers = gangs_proto::webhook::signed_headers(&secret, &id, &body);
    let status = gangs_proto::webhook::post(&url, &headers, body)
        .await
        .map_err(|e| CliError::new("UNAVAILABLE", format!("{url}: {e}")))?;
    context
        .out
        .emit(json!({ "url": url, "status": status, "id": id }), || {
            format!("{url} answered {status} to the signed test event {id}")
        });
    Ok(())
}
