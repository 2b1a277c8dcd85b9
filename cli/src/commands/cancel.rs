//! `gangs cancel GAME [--reason TEXT]`: ends a waiting or running game as cancelled.

use crate::client::Context;
use crate::error::CliError;
use clap::Args;
use gangs_proto::v1 as pb;
use serde_json::json;

#[derive(Args)]
pub struct CancelArgs {
    /// The game id (see `gangs games`).
    game: String,

    /// Why, kept in the game's log.
    #[arg(long, default_value = "")]
    reason: String,
}

pub async fn run(args: CancelArgs, context: &Context) -> Result<(), CliError> {
    let mut client = context.connect().await?;
    let cancelled = client
        .cancel_game(pb::CancelGameRequest {
            game_id: args.game.clone(),
            reason: args.reason,
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    context.out.emit(
        json!({ "game_id": args.game, "status": "cancelled", "seq": cancelled.seq }),
        || format!("cancelled game {} (seq {})", args.game, cancelled.seq),
    );
    Ok(())
}
