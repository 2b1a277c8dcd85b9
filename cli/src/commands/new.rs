//! `gangs new KIND [--players N] [--seed S] [--option key=value]... [--reserve-seats]`:
//! creates a game.

use crate::client::Context;
use crate::error::CliError;
use clap::Args;

use gangs_proto::v1 as pb;
use serde_json::json;

#[derive(Args)]
pub struct NewArgs {
    #[arg(help = format!("The game: {}.", gangs_games::kind_names_help()))]
    kind: String,

    /// Number of seats (omitted: the game's default).
    #[arg(long)]
    players: Option<u32>,

    /// Seed of every shuffle (omitted: random, revealed in the log once the game ends).
    #[arg(long)]
    seed: Option<u64>,

    /// A game option, `key=value`; repeat for several (`gangs rules KIND` lists the keys).
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    options: Vec<(String, String)>,

    /// One secret invitation per seat (printed): each seat can be joined only with its own.
    #[arg(long)]
    reserve_seats: bool,
}

/// `key=value` → (key, value); the value may contain `=`.
pub fn parse_key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("expected key=value, got {text:?}")),
    }
}

pub async fn run(args: NewArgs, context: &Context) -> Result<(), CliError> {
    if gangs_games::kind(&args.kind).is_err() {
        return Err(CliError::invalid(format!(
            "unknown game kind {:?}: use one of {}",
            args.kind,
            gangs_games::kind_names().join(", ")
        )));
    }
    let options = if args.players.is_none() && args.options.is_empty() {
        None
    } else {
        Some(
            gangs_games::parse_options(&args.kind, args.players, &args.options)
                .map_err(|e| CliError::invalid(e.to_string()))?,
        )
    };
    let request = pb::CreateGameRequest {
        kind: args.kind.clone(),
        options,
        seed: args.seed,
        preset: None,
        reserve_seats: args.reserve_seats,
        create_id: String::new(),
    };
    let mut client = context.connect().await?;
    let created = client
        .create_game(request)
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let mut answer =
        json!({ "game_id": created.game_id, "kind": args.kind, "players": created.players });
    if args.reserve_seats {
        answer["invitations"] = json!(created.invitations);
    }
    context.out.emit(answer, || {
        if !args.reserve_seats {
            return format!(
                "created {} game {} for {} players: `gangs join {}` takes a seat",
                args.kind, created.game_id, created.players, created.game_id
            );
        }
        let mut lines = vec![format!(
            "created {} game {} for {} players, seats reserved; hand each player its invitation (`gangs join {} --invitation X`):",
            args.kind, created.game_id, created.players, created.game_id
        )];
        for (seat, invitation) in created.invitations.iter().enumerate() {
            lines.push(format!("  seat {seat}: {invitation}"));
        }
        lines.join("\n")
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        new: NewArgs,
    }

    #[test]
    fn key_value_pairs() {
        assert_eq!(
            parse_key_value("flush_by_sum=true"),
            Ok(("flush_by_sum".into(), "true".into()))
        );
        assert_eq!(parse_key_value("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert_eq!(parse_key_value(" k = v "), Ok(("k".into(), "v".into())));
        assert_eq!(parse_key_value("empty="), Ok(("empty".into(), "".into())));
        assert!(parse_key_value("no_equals").is_err());
        assert!(parse_key_value("=value").is_err());
    }

    #[test]
    fn repeated_options_keep_their_order() {
        let cli = Cli::try_parse_from([
            "new",
            "the-gang",
            "--players",
            "3",
            "--option",
            "a=1",
            "--option",
            "b=2",
            "--seed",
            "9",
        ])
        .unwrap();
        assert_eq!(cli.new.kind, "the-gang");
        assert_eq!(cli.new.players, Some(3));
        assert_eq!(cli.new.seed, Some(9));
        assert_eq!(
            cli.new.options,
            [
                ("a".to_string(), "1".to_string()),
                ("b".to_string(), "2".to_string())
            ]
        );
    }

    #[test]
    fn a_malformed_option_is_a_usage_error() {
        assert!(Cli::try_parse_from(["new", "the-gang", "--option", "oops"]).is_err());
    }
}
