//! The bridge between the pure rules engines (`gangs-rules`) and the wire (`gangs-proto`).
//!
//! The host drives every game through the [`Game`] trait and never looks inside a game. Each
//! game module turns wire actions into engine actions and engine events/views into wire
//! messages, and is the **one place that decides what a seat may see** for its game
//! ([`Game::view`] and [`Game::redact`]). The CLI and the bots use the same modules for card
//! words and action words.

pub mod game_file;
pub mod gang_of_four;
pub mod replay;
pub mod the_gang;

use gangs_proto::v1 as pb;

pub const GANG_OF_FOUR: &str = "gang-of-four";
pub const THE_GANG: &str = "the-gang";
pub const KINDS: [&str; 2] = [GANG_OF_FOUR, THE_GANG];

/// Why an action or a request was refused. The host maps the kind to a gRPC status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Malformed or impossible input: unknown card ids, cards not in hand, an option out of
    /// range, an illegal combination, a play that does not beat the table. (INVALID_ARGUMENT)
    Invalid,
    /// Well-formed, but not now: out of turn, the phase is closed, the game is over.
    /// (FAILED_PRECONDITION)
    NotNow,
}

impl RuleError {
    pub fn invalid(message: impl Into<String>) -> Self {
        RuleError {
            kind: ErrorKind::Invalid,
            message: message.into(),
        }
    }
    pub fn not_now(message: impl Into<String>) -> Self {
        RuleError {
            kind: ErrorKind::NotNow,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuleError {}

/// A live game as the host sees it. Every method is deterministic: the same creation
/// parameters and the same sequence of `start`/`act`/`expire` calls give the same events.
///
/// Events returned by `start`, `act` and `expire` are **complete** (nothing hidden): the host
/// logs them as they are and passes them through [`Game::redact`] for each watcher.
pub trait Game: Send + Sync + 'static {
    /// "gang-of-four" or "the-gang".
    fn kind(&self) -> &'static str;
    /// Number of seats.
    fn players(&self) -> usize;
    /// The game's options with every default filled in (logged in the `created` record).
    fn options(&self) -> pb::GameOptions;
    /// Every seat is taken: deal and return the opening events.
    fn start(&mut self) -> Vec<pb::GameEvent>;
    /// Applies `action` for `seat`. On error nothing changed.
    fn act(
        &mut self,
        seat: usize,
        action: &pb::GameAction,
    ) -> Result<Vec<pb::GameEvent>, RuleError>;
    /// How long the current phase may last from the moment it opened, if it has a deadline
    /// (The Gang's `phase_deadline_ms`). The host times it and calls [`Game::expire`].
    fn phase_deadline_ms(&self) -> Option<u64>;
    /// A number that changes whenever a new timed phase opens, so the host knows to restart
    /// its timer. Games without deadlines return 0.
    fn phase_id(&self) -> u64;
    /// The deadline of the current phase passed.
    fn expire(&mut self) -> Result<Vec<pb::GameEvent>, RuleError>;
    /// What `seat` (or a spectator, `None`) may see now. The one place that decides it.
    fn view(&self, seat: Option<usize>) -> pb::GameView;
    /// `event` as `seat` (or a spectator) may see it; `None` if it must not see it at all.
    fn redact(&self, event: &pb::GameEvent, seat: Option<usize>) -> Option<pb::GameEvent>;
    /// Every distinct action `seat` may take now (empty when it may not act).
    fn legal_actions(&self, seat: usize) -> Vec<pb::GameAction>;
    /// The game is over.
    fn is_over(&self) -> bool;
    /// The result, once the game is over.
    fn outcome(&self) -> Option<pb::Outcome>;
}

/// Creates a game of `kind`. `options` omitted means defaults; the options must be for `kind`.
pub fn new_game(
    kind: &str,
    options: Option<&pb::GameOptions>,
    seed: u64,
    preset: Option<&pb::PresetDeals>,
) -> Result<Box<dyn Game>, RuleError> {
    use pb::{game_options::Game as O, preset_deals::Game as P};
    let preset_game = preset.and_then(|p| p.game.as_ref());
    match kind {
        GANG_OF_FOUR => {
            let opts = match options.and_then(|o| o.game.as_ref()) {
                None => None,
                Some(O::GangOfFour(o)) => Some(o),
                Some(_) => return Err(RuleError::invalid("options are not gang-of-four options")),
            };
            let preset = match preset_game {
                None => None,
                Some(P::GangOfFour(p)) => Some(p),
                Some(_) => {
                    return Err(RuleError::invalid(
                        "preset deals are not gang-of-four deals",
                    ))
                }
            };
            Ok(Box::new(gang_of_four::GangOfFourGame::new(
                opts, seed, preset,
            )?))
        }
        THE_GANG => {
            let opts = match options.and_then(|o| o.game.as_ref()) {
                None => None,
                Some(O::TheGang(o)) => Some(o),
                Some(_) => return Err(RuleError::invalid("options are not the-gang options")),
            };
            let preset = match preset_game {
                None => None,
                Some(P::TheGang(p)) => Some(p),
                Some(_) => return Err(RuleError::invalid("preset deals are not the-gang deals")),
            };
            Ok(Box::new(the_gang::TheGangGame::new(opts, seed, preset)?))
        }
        other => Err(RuleError::invalid(format!(
            "unknown game kind {other:?}: use one of {}",
            KINDS.join(", ")
        ))),
    }
}

/// Parses `key=value` options as the CLI gives them (`--option flush_by_sum=true`), with the
/// number of players, into wire options for `kind`. Unknown keys and bad values are errors
/// that name the key and what it accepts.
pub fn parse_options(
    kind: &str,
    players: Option<u32>,
    pairs: &[(String, String)],
) -> Result<pb::GameOptions, RuleError> {
    let game = match kind {
        GANG_OF_FOUR => {
            pb::game_options::Game::GangOfFour(gang_of_four::parse_options(players, pairs)?)
        }
        THE_GANG => pb::game_options::Game::TheGang(the_gang::parse_options(players, pairs)?),
        other => {
            return Err(RuleError::invalid(format!(
                "unknown game kind {other:?}: use one of {}",
                KINDS.join(", ")
            )))
        }
    };
    Ok(pb::GameOptions { game: Some(game) })
}

/// Parses the CLI's action words (`play r7 y7`, `pass`, `take 3`, `ready`, ...) for `kind`.
pub fn parse_action(kind: &str, words: &[String]) -> Result<pb::GameAction, RuleError> {
    match kind {
        GANG_OF_FOUR => gang_of_four::parse_action(words),
        THE_GANG => the_gang::parse_action(words),
        other => Err(RuleError::invalid(format!("unknown game kind {other:?}"))),
    }
}

/// One line in action words, the inverse of [`parse_action`].
pub fn describe_action(action: &pb::GameAction) -> String {
    match &action.game {
        Some(pb::game_action::Game::GangOfFour(a)) => gang_of_four::describe_action(a),
        Some(pb::game_action::Game::TheGang(a)) => the_gang::describe_action(a),
        None => "(empty action)".to_string(),
    }
}

/// One line per event, for humans (CLI watch, log and replay).
pub fn describe_event(event: &pb::GameEvent) -> String {
    match &event.game {
        Some(pb::game_event::Game::GangOfFour(e)) => gang_of_four::describe_event(e),
        Some(pb::game_event::Game::TheGang(e)) => the_gang::describe_event(e),
        None => "(empty event)".to_string(),
    }
}

/// A multi-line picture of a view, for a human playing in the terminal.
pub fn render_view(view: &pb::GameView) -> String {
    match &view.game {
        Some(pb::game_view::Game::GangOfFour(v)) => gang_of_four::render_view(v),
        Some(pb::game_view::Game::TheGang(v)) => the_gang::render_view(v),
        None => "(no view yet)".to_string(),
    }
}

/// The action words each game accepts, for `gangs act --help`.
pub fn action_help() -> String {
    format!(
        "gang-of-four:\n{}\nthe-gang:\n{}",
        gang_of_four::ACTION_HELP,
        the_gang::ACTION_HELP
    )
}
