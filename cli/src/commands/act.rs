//! `gangs act GAME --token T ACTION...`: plays one action for the seat of the token, in the
//! game's action words (`play r7 y7`, `pass`, `take 3`, `ready`...).

use crate::client::Context;
use crate::error::CliError;
use clap::Args;
use gangs_games::describe_event;
use gangs_proto::v1 as pb;
use serde_json::json;

#[derive(Args)]
pub struct ActArgs {
    /// The game id.
    game: String,

    /// The seat token `gangs join` printed.
    #[arg(long)]
    token: String,

    /// Refuse (ABORTED) unless the game's last seq is still this one.
    #[arg(long)]
    expected_seq: Option<u64>,

    /// An idempotency key: a retry with the same id applies nothing twice.
    #[arg(long)]
    action_id: Option<String>,

    /// The action, in the game's words (listed below).
    #[arg(required = true, value_name = "ACTION")]
    words: Vec<String>,
}

pub async fn run(args: ActArgs, context: &Context) -> Result<(), CliError> {
    let mut client = context.connect().await?;
    let kind = context.find_game(&mut client, &args.game).await?.kind;
    let action = parse_words(&kind, &args.words)?;
    let acted = client
        .act(pb::ActRequest {
            game_id: args.game.clone(),
            token: args.token.clone(),
            action: Some(action),
            expected_seq: args.expected_seq,
            action_id: args.action_id.clone().unwrap_or_default(),
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let events: Vec<String> = acted.events.iter().map(describe_event).collect();
    context
        .out
        .emit(json!({ "seq": acted.seq, "events": events }), || {
            let mut lines = vec![format!("done at seq {}", acted.seq)];
            lines.extend(events.iter().map(|e| format!("  {e}")));
            lines.join("\n")
        });
    Ok(())
}

/// The action words for a game of `kind`, or an error that points at the help.
pub fn parse_words(kind: &str, words: &[String]) -> Result<pb::GameAction, CliError> {
    gangs_games::parse_action(kind, words).map_err(|e| {
        CliError::invalid(format!(
            "{} (`gangs act --help` lists the action words of {kind})",
            e.message()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        act: ActArgs,
    }

    #[test]
    fn action_words_are_collected_in_order() {
        let cli = Cli::try_parse_from([
            "act",
            "g1",
            "--token",
            "t",
            "--expected-seq",
            "4",
            "play",
            "r7",
            "y7",
        ])
        .unwrap();
        assert_eq!(cli.act.game, "g1");
        assert_eq!(cli.act.expected_seq, Some(4));
        assert_eq!(cli.act.words, ["play", "r7", "y7"]);
    }

    #[test]
    fn flags_after_the_action_words_are_flags() {
        let cli = Cli::try_parse_from(["act", "g1", "pass", "--token", "t"]).unwrap();
        assert_eq!(cli.act.words, ["pass"]);
        assert_eq!(cli.act.token, "t");
    }

    #[test]
    fn an_action_is_required() {
        assert!(Cli::try_parse_from(["act", "g1", "--token", "t"]).is_err());
    }

    #[test]
    fn unknown_kind_is_an_invalid_argument() {
        let e = parse_words("chess", &["pass".into()]).unwrap_err();
        assert_eq!(e.code, "INVALID_ARGUMENT");
        assert!(e.message.contains("gangs act --help"));
    }
}
