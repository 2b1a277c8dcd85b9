//! `gangs games`: lists the server's games.

use crate::client::Context;
use crate::error::CliError;
use crate::output::{summary_json, summary_line};
use clap::Args;
use gangs_proto::v1 as pb;
use serde_json::json;

#[derive(Args)]
pub struct GamesArgs {}

pub async fn run(_args: GamesArgs, context: &Context) -> Result<(), CliError> {
    let mut client = context.connect().await?;
    let games = client
        .list_games(pb::ListGamesRequest {})
        .await
        .map_err(|s| context.refused(s))?
        .into_inner()
        .games;
    context.out.emit(
        json!({ "games": games.iter().map(summary_json).collect::<Vec<_>>() }),
        || {
            if games.is_empty() {
                "no games yet: `gangs new gang-of-four` creates one".to_string()
            } else {
                games
                    .iter()
                    .map(summary_line)
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        },
    );
    Ok(())
}
