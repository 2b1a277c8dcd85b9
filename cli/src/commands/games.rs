//! `gangs games [--status S] [--kind K] [--limit N] [--page-token T]`: lists the server's
//! games, oldest first, a page at a time (`--status damaged`: the games the store damaged). `--follow` prints the directory's events instead, as
//! they happen (`follow.rs`).

use crate::client::Context;
use crate::error::CliError;
use crate::output::{summary_json, summary_line};
use clap::{Args, ValueEnum};
use gangs_proto::v1 as pb;
use serde_json::json;

#[derive(Args)]
pub struct GamesArgs {
    /// Only the games in this status; `damaged`: the games that lost records to damage in the
    /// store (readable up to the damage, refusing actions), whatever their status.
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
    Damaged,
}

impl StatusFilter {
    /// The game status this filter asks for; None for `damaged`, which is not a status.
    fn wire(self) -> Option<pb::GameStatus> {
        match self {
            StatusFilter::Waiting => Some(pb::GameStatus::Waiting),
            StatusFilter::Running => Some(pb::GameStatus::Running),
            StatusFilter::Finished => Some(pb::GameStatus::Finished),
            StatusFilter::Cancelled => Some(pb::GameStatus::Cancelled),
            StatusFilter::Abandoned => Some(pb::GameStatus::Abandoned),
            StatusFilter::Damaged => None,
        }
    }
}

pub async fn run(args: GamesArgs, context: &Context) -> Result<(), CliError> {
    let damaged_only = matches!(args.status, Some(StatusFilter::Damaged));
    if args.follow {
        if damaged_only {
            return Err(CliError::invalid(
                "--status damaged lists the damaged games; it cannot be followed (damage is \
                 found when the server reads its store, not as an event)",
            ));
        }
        let follow = super::follow::Follow {
            kind: args.kind.unwrap_or_default(),
            statuses: args
                .status
                .and_then(StatusFilter::wire)
                .into_iter()
                .collect(),
            from_cursor: args.from_cursor.unwrap_or_default(),
        };
        return super::follow::run(follow, context).await;
    }
    // The filters again, for the hint that continues the listing (a page token is only
    // valid with the filters it was made with).
    let mut filters = String::new();
    if let Some(status) = args.status {
        let name = status.to_possible_value().expect("not skipped");
        filters.push_str(&format!(" --status {}", name.get_name()));
    }
    if let Some(kind) = &args.kind {
        filters.push_str(&format!(" --kind {kind}"));
    }
    let mut client = context.connect().await?;
    let page = client
        .list_games(pb::ListGamesRequest {
            page_size: args.limit,
            page_token: args.page_token.unwrap_or_default(),
            kind: args.kind.unwrap_or_default(),
            status: args
                .status
                .and_then(StatusFilter::wire)
                .unwrap_or(pb::GameStatus::Unspecified) as i32,
            damaged_only,
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
                lines.push(format!("more: `gangs games{filters} --page-token {next}`"));
            }
            lines.join("\n")
        },
    );
    Ok(())
}
