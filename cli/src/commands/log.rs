//! `gangs log GAME [--from SEQ]`: prints a game's log records, one per line. While the game
//! runs the server sends only what everyone may see; after it ends, everything.

use crate::client::Context;
use crate::error::CliError;
use crate::output::{log_record_json, log_record_lines};
use clap::Args;

#[derive(Args)]
pub struct LogArgs {
    /// The game id.
    game: String,

    /// Only records after this seq (0: all).
    #[arg(long = "from", value_name = "SEQ", default_value_t = 0)]
    from_seq: u64,
}

pub async fn run(args: LogArgs, context: &Context) -> Result<(), CliError> {
    let mut client = context.connect().await?;
    crate::client::read_log(&mut client, &args.game, args.from_seq, |record| {
        context.out.emit(log_record_json(&record), || {
            log_record_lines(&record).join("\n")
        });
    })
    .await
    .map_err(|s| context.refused(s))
}
