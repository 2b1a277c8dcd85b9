//! `gangs watch GAME [--token T] [--from SEQ]`: prints a game's updates as they come, until it
//! ends. With a seat token: that seat's view; without: the spectator's. If the server restarts
//! or the connection breaks, it reconnects and resumes after the last seq shown.

use crate::client::{next_batch, Context};
use crate::error::CliError;
use crate::output::{is_finished, update_json, update_lines};
use clap::Args;

#[derive(Args)]
pub struct WatchArgs {
    /// The game id.
    game: String,

    /// A seat token: watch as that seat (omitted: as a spectator).
    #[arg(long)]
    token: Option<String>,

    /// Only updates after this seq (0: from the beginning).
    #[arg(long = "from", value_name = "SEQ", default_value_t = 0)]
    from_seq: u64,
}

pub async fn run(args: WatchArgs, context: &Context) -> Result<(), CliError> {
    // The client is kept alive beside its stream (the stream is all that is read).
    let mut _client = context.connect().await?;
    let token = args.token.unwrap_or_default();
    let mut stream = context
        .watch(&mut _client, &args.game, &token, args.from_seq)
        .await?;
    let mut last_seq = args.from_seq;
    loop {
        let batch = next_batch(&mut stream).await;
        for update in &batch.updates {
            context
                .out
                .emit(update_json(update), || update_lines(update).join("\n"));
            last_seq = update.seq;
            if is_finished(update) {
                return Ok(());
            }
        }
        if let Some(end) = batch.end {
            (_client, stream) = context
                .resume_watch(&args.game, &token, last_seq, end)
                .await?;
        }
    }
}
