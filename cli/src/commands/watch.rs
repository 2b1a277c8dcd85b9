//! `gangs watch GAME [--seat N --token T] [--from SEQ] [--plain]`: follows a game until it
//! ends. With a seat token: that seat's view; without: the spectator's (no private cards).
//! In a terminal: the full-screen table, read-only (`q` leaves). Outside one (a pipe,
//! `--plain`, `--json`): each update's events as lines, once each. If the server restarts or
//! the connection breaks, it reconnects and resumes after the last seq shown.

use crate::client::{next_batch, Context};
use crate::error::CliError;
use crate::output::{is_finished, update_json, update_lines};
use crate::tui::{self, app::App, Ending, Table};
use clap::Args;

#[derive(Args)]
pub struct WatchArgs {
    /// The game id.
    game: String,

    /// A seat token: watch as that seat (omitted: as a spectator).
    #[arg(long)]
    token: Option<String>,

    /// The seat the token is for; checked against the server's answer.
    #[arg(long, requires = "token")]
    seat: Option<u32>,

    /// Only updates after this seq (0: from the beginning).
    #[arg(long = "from", value_name = "SEQ", default_value_t = 0)]
    from_seq: u64,

    /// Lines instead of the full-screen table, even in a terminal.
    #[arg(long)]
    plain: bool,
}

pub async fn run(args: WatchArgs, context: &Context) -> Result<(), CliError> {
    // The client is kept alive beside its stream (the stream is all that is read).
    let mut _client = context.connect().await?;
    let token = args.token.unwrap_or_default();
    if let Some(seat) = args.seat {
        check_seat(context, &mut _client, &args.game, &token, seat).await?;
    }
    if tui::wanted(args.plain, context.out.json) {
        let kind = context.find_game(&mut _client, &args.game).await?.kind;
        if let Ok(kind) = gangs_games::kind(&kind) {
            let table = Table {
                context,
                client: _client,
                app: App::new(kind, args.game.clone(), args.seat, false),
                token,
                from_seq: args.from_seq,
            };
            if let Ending::Finished { summary } = tui::run(table).await? {
                println!("game {} is over: {summary}", args.game);
            }
            return Ok(());
        }
    }
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

/// `--seat N`: the token must be that seat's (its first update says whose it is).
async fn check_seat(
    context: &Context,
    client: &mut crate::client::Client,
    game: &str,
    token: &str,
    seat: u32,
) -> Result<(), CliError> {
    let mut stream = context.watch(client, game, token, 0).await?;
    let first = stream
        .message()
        .await
        .map_err(|s| context.refused(s))?
        .ok_or_else(|| context.stream_ended(Ok(())))?;
    match first.seat {
        Some(actual) if actual == seat => Ok(()),
        actual => Err(CliError::new(
            "PERMISSION_DENIED",
            format!(
                "this token is for {}, not seat {seat}",
                actual.map_or("no seat".to_string(), |s| format!("seat {s}"))
            ),
        )),
    }
}
