//! `gangs games [--status S] [--kind K] [--limit N] [--page-token T]`: lists the server's
//! games, oldest first, a page at a time. `--follow` prints the directory's events instead, as
//! they happen (`follow.rs`).

use crate::client::Context;
use crate::error::CliError;
use crate::output::{summary_json, summary_line};
use clap::{Args, ValueEnum};
use gangs_proto::v1 as pb;
use serde_json::json;

#[derive(Args)]
pub struct GamesArgs {
    /// Only the games in this status.
    #[arg(long, value_enum)]
    status: Option<StatusFilter>,

    #[arg(long, help = format!("Only the games of this kind ({}).", gangs_games::kind_names_help()))]
    kind: Option<String>,

    /// At most this many games (the server's page; at most 1000).
    #[arg(long, default_value_t = 100)]
    limit: u32,

    /// Continue a listing: the `next_page_token` a previous `gangs games` printed.
    #[arg(long, conflicts_with = "follow")]
    page_token: Option<String>,

    /// Follow the directory instead: print each game created, seat taken, game started,
    /// finished, cancelled or abandoned as it happens (with --status/--kind as filters), until
    /// interrupted.
    #[arg(long)]
    follow: bool,

    /// With --follow: start after this event's cursor (each event prints its own); "0": from
    /// the first event the server keeps. Default: only new events.
    #[arg(long, requires = "follow")]
    from_cursor: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum StatusFilter {
    Waiting,
    Running,
    Finished,
    Cancelled,
    Abandoned,
}

impl StatusFilter {
    fn wire(self) -> pb::GameStatus {
        match self {
            StatusFilter::Waiting => pb::GameStatus::Waiting,
            StatusFilter::Running => pb::GameStatus::Running,
            StatusFilter::Finished => pb::GameStatus::Finished,
            StatusFilter::Cancelled => pb::GameStatus::Cancelled,
            StatusFilter::Abandoned => pb::GameStatus::Abandoned,
        }
    }
}

pub async fn run(args: GamesArgs, context: &Context) -> Result<(), CliError> {
    if args.follow {
        let follow = super::follow::Follow {
            kind: args.kind.unwrap_or_default(),
            statuses: args.status.map(StatusFilter::wire).into_iter().collect(),
            from_cursor: args.from_cursor.unwrap_or_default(),
        };
        return super::follow::run(follow, context).await;
    }
    let mut client = context.connect().await?;
    let page = client
        .list_games(pb::ListGamesRequest {
            page_size: args.limit,
            page_token: args.page_token.unwrap_or_default(),
            kind: args.kind.unwrap_or_default(),
            status: args
                .status
                .map_or(pb::GameStatus::Unspecified, StatusFilter::wire) as i32,
            ..Default::default()
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let games = page.games;
    let next = page.next_page_token;
    context.out.emit(
        json!({
            "games": games.iter().map(summary_json).collect::<Vec<_>>(),
            "next_page_token": next,
        }),
        || {
            let mut lines: Vec<String> = games.iter().map(summary_line).collect();
            if lines.is_empty() {
                lines.push(format!(
                    "no games match: `gangs new {}` creates one",
                    gangs_games::kinds()[0].name
                ));
            }
            if !next.is_empty() {
                lines.push(format!("more: `gangs games --page-token {next}`"));
            }
            lines.join("\n")
        },
    );
    Ok(())
}
