//! `gangs play GAME [--seat N] [--name NAME] [--token T] [--plain]`: play a seat yourself.
//!
//! In a terminal: the full-screen table (`crate::tui`); `q` leaves and prints how to come back.
//! Outside one (a pipe, `--plain`, `--json`): lines. The events as they come, each once; when
//! a turn starts (for The Gang: when a street, stage or proposal starts) your view and the
//! numbered legal actions, then a line is read: a number picks a listed action, anything else
//! is read as action words. `view` shows your view again, `quit` leaves (the seat stays
//! yours: resume with --token).

use crate::client::{next_batch, Client, Context};
use crate::commands::act::parse_words;
use crate::commands::join::default_name;
use crate::error::CliError;
use crate::output::{is_finished, update_json, update_lines};
use crate::tui::{self, app::App, Ending, Table};
use clap::Args;
use gangs_games::{describe_action, render_view};
use gangs_proto::v1 as pb;
use serde_json::json;
use std::io::BufRead;
use tonic::Code;

#[derive(Args)]
pub struct PlayArgs {
    /// The game id.
    game: String,

    /// The seat to take (omitted: the first free seat).
    #[arg(long)]
    seat: Option<u32>,

    /// Your name as others see it (omitted: your login name).
    #[arg(long)]
    name: Option<String>,

    /// Resume a seat joined earlier instead of joining.
    #[arg(long)]
    token: Option<String>,

    /// Lines instead of the full-screen table, even in a terminal.
    #[arg(long)]
    plain: bool,
}

/// What a line typed at the prompt asks for.
#[derive(Debug, PartialEq)]
pub enum Choice {
    Act(pb::GameAction),
    ShowView,
    Quit,
    Nothing,
}

/// Reads a line typed at the prompt against the legal actions of the current update.
pub fn parse_choice(kind: &str, line: &str, legal: &[pb::GameAction]) -> Result<Choice, CliError> {
    let line = line.trim();
    match line {
        "" => return Ok(Choice::Nothing),
        "view" | "v" | "?" | "help" => return Ok(Choice::ShowView),
        "quit" | "exit" | "q" => return Ok(Choice::Quit),
        _ => {}
    }
    if let Ok(number) = line.parse::<usize>() {
        return match number.checked_sub(1).and_then(|i| legal.get(i)) {
            Some(action) => Ok(Choice::Act(action.clone())),
            None => Err(CliError::invalid(format!(
                "no action number {number}: pick 1 to {}",
                legal.len()
            ))),
        };
    }
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    parse_words(kind, &words).map(Choice::Act)
}

/// The view, the numbered legal actions and the prompt.
pub fn prompt_text(update: &pb::Update) -> String {
    let mut lines = Vec::new();
    if let Some(view) = &update.view {
        lines.push(render_view(view));
    }
    lines.push(format!("your turn (seq {}):", update.seq));
    for (i, action) in update.legal_actions.iter().enumerate() {
        lines.push(format!("  {:>2}. {}", i + 1, describe_action(action)));
    }
    lines.push("a number, action words, `view` or `quit`:".into());
    lines.join("\n")
}

pub async fn run(args: PlayArgs, context: &Context) -> Result<(), CliError> {
    let mut client = context.connect().await?;
    let kind = context.find_game(&mut client, &args.game).await?.kind;
    let mut seat = args.seat;
    let (token, from_seq) = match args.token {
        Some(token) => (token, 0),
        None => {
            let name = args.name.unwrap_or_else(default_name);
            let joined = context
                .join(&mut client, &args.game, args.seat, &name, None)
                .await?;
            context.out.emit(
                json!({ "game_id": args.game, "seat": joined.seat, "token": joined.token }),
                || {
                    format!(
                        "joined game {} as seat {} (resume later with `gangs play {} --token {}`)",
                        args.game, joined.seat, args.game, joined.token
                    )
                },
            );
            seat = Some(joined.seat);
            (joined.token, joined.seq.saturating_sub(1))
        }
    };
    if let Some(game_kind) = gangs_games::kind(&kind)
        .ok()
        .filter(|_| tui::wanted(args.plain, context.out.json))
    {
        let table = Table {
            context,
            client,
            app: App::new(game_kind, args.game.clone(), seat, true),
            token: token.clone(),
            from_seq,
        };
        match tui::run(table).await? {
            Ending::Finished { summary } => println!("game {} is over: {summary}", args.game),
            Ending::Quit => println!(
                "left game {}; your seat is kept: `gangs play {} --token {token}` takes it back",
                args.game, args.game
            ),
        }
        return Ok(());
    }
    let mut session = Session {
        context,
        client,
        game_id: args.game,
        kind,
        token,
        turn: None,
        shown: None,
    };
    session.play(from_seq).await
}

/// The lines typed on stdin, read on a thread of its own. Not tokio's stdin: its read sits
/// on the runtime's blocking pool, and the runtime waits for it at exit, so the command would
/// hang after the game's end until another line came. A plain thread dies with the process.
fn stdin_lines() -> tokio::sync::mpsc::UnboundedReceiver<std::io::Result<String>> {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let failed = line.is_err();
            if sender.send(line).is_err() || failed {
                break;
            }
        }
    });
    receiver
}

struct Session<'a> {
    context: &'a Context,
    client: Client,
    game_id: String,
    kind: String,
    token: String,
    /// The newest update, while it offers actions.
    turn: Option<pb::Update>,
    /// The turn whose view and numbered actions were printed last (numbers pick from it).
    shown: Option<(String, Vec<pb::GameAction>)>,
}

/// What makes a new prompt worth printing: the decision the seat faces, as its game defines
/// it (`KindInfo::decision_key`; The Gang: a new street, stage, proposal, choice or guess, the
/// chip moves in between printed as events, once each), else every update that offers actions.
pub fn turn_key(update: &pb::Update) -> String {
    update
        .view
        .as_ref()
        .and_then(|view| {
            gangs_games::kinds()
                .iter()
                .find_map(|kind| kind.decision_key(view))
        })
        .unwrap_or_else(|| format!("seq {}", update.seq))
}

impl Session<'_> {
    async fn play(&mut self, from_seq: u64) -> Result<(), CliError> {
        let out = self.context.out;
        let mut stream = self
            .context
            .watch(&mut self.client, &self.game_id, &self.token, from_seq)
            .await?;
        let mut last_seq = from_seq;
        let mut stdin = stdin_lines();
        loop {
            tokio::select! {
                batch = next_batch(&mut stream) => {
                    for update in &batch.updates {
                        out.emit(update_json(update), || update_lines(update).join("\n"));
                        last_seq = update.seq;
                        if is_finished(update) {
                            out.human(|| update.view.as_ref().map(render_view).unwrap_or_default());
                            return Ok(());
                        }
                    }
                    if let Some(latest) = batch.updates.last() {
                        self.turn = (!latest.legal_actions.is_empty()).then(|| latest.clone());
                        if let Some(turn) = self.turn.clone() {
                            let key = turn_key(&turn);
                            if self.shown.as_ref().is_none_or(|(shown, _)| *shown != key) {
                                self.show_prompt(&turn);
                            }
                        }
                    }
                    if let Some(end) = batch.end {
                        // The turn shown stays valid: everything shown was durable, and if the
                        // game moved on meanwhile the resumed stream says so (and a stale
                        // action is refused by its expected seq).
                        (self.client, stream) = self
                            .context
                            .resume_watch(&self.game_id, &self.token, last_seq, end)
                            .await?;
                        if let Some(turn) = self.turn.clone() {
                            self.show_prompt(&turn);
                        }
                    }
                }
                line = stdin.recv() => {
                    let Some(line) = line else {
                        return Err(self.left("stdin closed"));
                    };
                    let line = line.map_err(|e| CliError::local(format!("cannot read stdin: {e}")))?;
                    if self.on_line(&line).await? {
                        return Err(self.left("you quit"));
                    }
                }
            }
        }
    }

    /// Handles one typed line; `true` means the player quits.
    async fn on_line(&mut self, line: &str) -> Result<bool, CliError> {
        let out = self.context.out;
        let Some(turn) = self.turn.clone() else {
            if matches!(line.trim(), "quit" | "exit" | "q") {
                return Ok(true);
            }
            out.warn(&CliError::new(
                "FAILED_PRECONDITION",
                "not your turn: wait for your prompt",
            ));
            return Ok(false);
        };
        // Numbers pick from the list as printed; the game may have moved on since.
        let listed = self
            .shown
            .as_ref()
            .map_or(turn.legal_actions.clone(), |(_, listed)| listed.clone());
        let action = match parse_choice(&self.kind, line, &listed) {
            Ok(Choice::Act(action)) => {
                if line.trim().parse::<usize>().is_ok() && !turn.legal_actions.contains(&action) {
                    out.warn(&CliError::new(
                        "FAILED_PRECONDITION",
                        format!(
                            "`{}` is no longer legal: the game moved on (`view` lists the actions now)",
                            describe_action(&action)
                        ),
                    ));
                    return Ok(false);
                }
                action
            }
            Ok(Choice::ShowView) => {
                self.show_prompt(&turn);
                return Ok(false);
            }
            Ok(Choice::Quit) => return Ok(true),
            Ok(Choice::Nothing) => return Ok(false),
            Err(e) => {
                out.warn(&e);
                return Ok(false);
            }
        };
        let words = describe_action(&action);
        let request = pb::ActRequest {
            game_id: self.game_id.clone(),
            token: self.token.clone(),
            action: Some(action),
            expected_seq: Some(turn.seq),
            action_id: String::new(),
        };
        match self.client.act(request).await {
            Ok(response) => {
                let seq = response.into_inner().seq;
                self.turn = None;
                out.emit(json!({ "seq": seq, "played": words }), || {
                    format!("you played `{words}` (seq {seq})")
                });
            }
            Err(status) if status.code() == Code::Aborted => {
                self.turn = None;
                out.warn(&CliError::new(
                    "ABORTED",
                    "too late: the game moved on (see the updates above)",
                ));
            }
            Err(status)
                if matches!(
                    status.code(),
                    Code::InvalidArgument | Code::FailedPrecondition
                ) =>
            {
                out.warn(&self.context.refused(status));
            }
            // The server went away: the move may or may not have been saved. The stream
            // reconnects; the turn is kept so the move can be typed again.
            Err(status)
                if matches!(
                    status.code(),
                    Code::Unavailable | Code::Unknown | Code::Cancelled
                ) =>
            {
                out.warn(&CliError::new(
                    "UNAVAILABLE",
                    format!(
                        "no answer from the server for `{words}` ({}): once reconnected, type it again (a move already saved is refused as stale, and the updates show it)",
                        status.message()
                    ),
                ));
            }
            Err(status) => return Err(self.context.refused(status)),
        }
        Ok(false)
    }

    /// Prints the view and the numbered actions of `turn`, and remembers them.
    fn show_prompt(&mut self, turn: &pb::Update) {
        self.context.out.human(|| prompt_text(turn));
        self.shown = Some((turn_key(turn), turn.legal_actions.clone()));
    }

    /// Leaving before the end: the seat stays taken, here is how to come back.
    fn left(&self, why: &str) -> CliError {
        CliError::new(
            "CANCELLED",
            format!(
                "{why} before the game ended; your seat is kept: resume with `gangs play {} --token {}`",
                self.game_id, self.token
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::game_action::Game;

    fn legal() -> Vec<pb::GameAction> {
        vec![
            pb::GameAction {
                game: Some(Game::GangOfFour(Default::default())),
            },
            pb::GameAction {
                game: Some(Game::TheGang(Default::default())),
            },
        ]
    }

    #[test]
    fn a_number_picks_a_listed_action() {
        let legal = legal();
        assert_eq!(
            parse_choice("gang-of-four", " 2 ", &legal).unwrap(),
            Choice::Act(legal[1].clone())
        );
        assert_eq!(
            parse_choice("gang-of-four", "1", &legal).unwrap(),
            Choice::Act(legal[0].clone())
        );
    }

    #[test]
    fn a_number_out_of_range_says_the_range() {
        let e = parse_choice("gang-of-four", "3", &legal()).unwrap_err();
        assert_eq!(e.message, "no action number 3: pick 1 to 2");
        assert!(parse_choice("gang-of-four", "0", &legal()).is_err());
    }

    #[test]
    fn keywords() {
        assert_eq!(
            parse_choice("the-gang", "", &legal()).unwrap(),
            Choice::Nothing
        );
        assert_eq!(
            parse_choice("the-gang", "view", &legal()).unwrap(),
            Choice::ShowView
        );
        assert_eq!(
            parse_choice("the-gang", "quit", &legal()).unwrap(),
            Choice::Quit
        );
    }

    #[test]
    fn other_text_goes_to_the_action_words_parser() {
        // An unknown kind makes the words parser refuse, whatever the game modules accept.
        let e = parse_choice("chess", "play r7", &legal()).unwrap_err();
        assert_eq!(e.code, "INVALID_ARGUMENT");
    }

    fn gang_update(seq: u64, street: i32, moves_made: u32) -> pb::Update {
        pb::Update {
            seq,
            view: Some(pb::GameView {
                game: Some(pb::game_view::Game::TheGang(pb::TheGangView {
                    heist: 1,
                    stage: pb::TheGangStage::Chips as i32,
                    street,
                    moves_made,
                    ..Default::default()
                })),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_gang_prompts_once_per_street_not_per_chip_move() {
        let white = pb::TheGangStreet::White as i32;
        let yellow = pb::TheGangStreet::Yellow as i32;
        assert_eq!(
            turn_key(&gang_update(5, white, 1)),
            turn_key(&gang_update(6, white, 2))
        );
        assert_ne!(
            turn_key(&gang_update(6, white, 2)),
            turn_key(&gang_update(9, yellow, 0))
        );
        // Gang of Four: every update that offers actions is a new turn.
        let gof = |seq| pb::Update {
            seq,
            ..Default::default()
        };
        assert_ne!(turn_key(&gof(3)), turn_key(&gof(7)));
    }

    #[test]
    fn the_prompt_numbers_the_actions_from_one() {
        let update = pb::Update {
            seq: 4,
            legal_actions: legal(),
            ..Default::default()
        };
        let text = prompt_text(&update);
        assert!(text.contains("your turn (seq 4):"));
        assert!(text.contains("   1. "));
        assert!(text.contains("   2. "));
        assert!(!text.contains("   3. "));
    }
}
