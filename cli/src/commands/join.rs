//! `gangs join GAME [--seat N] [--name NAME] [--invitation X]`: takes a seat and prints its
//! token.

use crate::client::Context;
use crate::error::CliError;
use clap::Args;
use serde_json::json;

#[derive(Args)]
pub struct JoinArgs {
    /// The game id (see `gangs games`).
    game: String,

    /// The seat to take (omitted: the first free seat).
    #[arg(long)]
    seat: Option<u32>,

    /// Your name as others see it (omitted: your login name).
    #[arg(long)]
    name: Option<String>,

    /// The seat's invitation, for a game created with --reserve-seats (it decides the seat).
    #[arg(long)]
    invitation: Option<String>,
}

/// The name to join with when none is given.
pub fn default_name() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "player".into())
}

pub async fn run(args: JoinArgs, context: &Context) -> Result<(), CliError> {
    let mut client = context.connect().await?;
    let name = args.name.unwrap_or_else(default_name);
    let joined = context
        .join(
            &mut client,
            &args.game,
            args.seat,
            &name,
            args.invitation.as_deref(),
        )
        .await?;
    context.out.emit(
        json!({ "game_id": args.game, "seat": joined.seat, "token": joined.token }),
        || {
            format!(
                "joined game {} as seat {}\ntoken: {}\n(keep it secret; play with `gangs play {} --token {}`)",
                args.game, joined.seat, joined.token, args.game, joined.token
            )
        },
    );
    Ok(())
}
