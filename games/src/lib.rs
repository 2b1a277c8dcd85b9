//! The bridge between the pure rules engines (`gangs-rules`) and the wire (`gangs-proto`).
//!
//! The host drives every game through the [`Game`] trait and never looks inside a game.
//! [`bridge::Bridge`] implements it once over the engine contract ([`gangs_rules::Engine`]);
//! each game adds only `<game>/wire.rs` (engine ↔ `gangs.v1`), `<game>/visibility.rs` (**the one
//! place that decides what a seat may see**: views, event redaction, logged actions) and
//! `<game>/words.rs` (the CLI's words). [`visibility`] holds the record-level rules of the
//! public log. [`kinds`] is the one list of games.

pub mod bridge;
pub mod clock;
pub mod game_file;
pub mod gang_of_four;
pub mod replay;
pub mod summary;
pub mod the_gang;
pub mod update;
pub mod visibility;

use gangs_proto::v1 as pb;

pub const GANG_OF_FOUR: &str = "gang-of-four";
pub const THE_GANG: &str = "the-gang";
pub const KINDS: [&str; 2] = [GANG_OF_FOUR, THE_GANG];

/// Why an action or a request was refused: the engines' one refusal type. The host maps its
/// kind to a gRPC status (`Invalid` → INVALID_ARGUMENT, `NotNow` → FAILED_PRECONDITION).
pub use gangs_rules::{OptionSpec, OptionType, Refusal, RefusalKind, Seat};

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
    fn act(&mut self, seat: usize, action: &pb::GameAction) -> Result<Vec<pb::GameEvent>, Refusal>;
    /// How long the current phase may last from the moment it opened, if it has a deadline
    /// (The Gang's `phase_deadline_ms`). The host times it and calls [`Game::expire`].
    fn phase_deadline_ms(&self) -> Option<u64>;
    /// A number that changes whenever a new timed phase opens, so the host knows to restart
    /// its timer. Games without deadlines return 0.
    fn phase_id(&self) -> u64;
    /// The deadline of the current phase passed.
    fn expire(&mut self) -> Result<Vec<pb::GameEvent>, Refusal>;
    /// What `seat` (or a spectator, `None`) may see now. The one place that decides it.
    fn view(&self, seat: Option<usize>) -> pb::GameView;
    /// `event` as `seat` (or a spectator) may see it; `None` if it must not see it at all.
    fn redact(&self, event: &pb::GameEvent, seat: Option<usize>) -> Option<pb::GameEvent>;
    /// `record` as `GetLog` shows it: tokens never; while the game runs (`finished` false)
    /// nothing hidden (no seed, no preset, no actions, events as a spectator sees them).
    fn public_record(&self, record: &pb::LogRecord, finished: bool) -> pb::LogRecord;
    /// Every distinct action `seat` may take now (empty when it may not act).
    fn legal_actions(&self, seat: usize) -> Vec<pb::GameAction>;
    /// The seats the game is waiting for now (a clock runs for them), in seat order.
    fn actors(&self) -> Vec<Seat>;
    /// The clock options (`turn_ms`, `bank_ms`, `absent_after`); disabled without `turn_ms`.
    fn clock(&self) -> clock::ClockSettings;
    /// The decision `seat` faces now, in words ("play or pass", "chip move"), for the log's
    /// `timed_out` records; `None` when the game does not wait for it.
    fn decision(&self, seat: Seat) -> Option<&'static str>;
    /// What `seat` plays when silent (its clock ran out, it is absent), one of its legal
    /// actions; `None` when the game is not waiting for it. The defaults are documented in
    /// each engine's `contract` module.
    fn default_action(&self, seat: Seat) -> Option<pb::GameAction>;
    /// The game is over.
    fn is_over(&self) -> bool;
    /// The result, once the game is over.
    fn outcome(&self) -> Option<pb::Outcome>;
}

/// One kind of game: its name, its options (declared once in the engine) and how the bridge
/// builds it. The one list of kinds: adding a game adds an entry here.
pub struct KindInfo {
    /// "gang-of-four", "the-gang": the `kind` of `CreateGame`.
    pub name: &'static str,
    /// The engine's option schema (key, type, default, range, meaning); [`KindInfo::options`]
    /// adds the clock options every game takes.
    pub engine_options: &'static [OptionSpec],
    /// The CLI's action words, for `gangs act --help`.
    pub action_help: &'static str,
    /// The seats play as one team against the game (The Gang: every seat shares the result),
    /// rather than each seat for itself. Ratings and reports treat a team game's seats as one.
    pub team_game: bool,
    new_game: NewGame,
    parse_options: ParseOptions,
    parse_action: fn(&[String]) -> Result<pb::GameAction, Refusal>,
}

type NewGame =
    fn(Option<&pb::GameOptions>, u64, Option<&pb::PresetDeals>) -> Result<Box<dyn Game>, Refusal>;
type ParseOptions = fn(Option<u32>, &[(String, String)]) -> Result<pb::GameOptions, Refusal>;

static KIND_LIST: [KindInfo; 2] = [
    KindInfo {
        name: GANG_OF_FOUR,
        engine_options: gangs_rules::gang_of_four::contract::OPTIONS,
        action_help: gang_of_four::ACTION_HELP,
        team_game: false,
        new_game: |options, seed, preset| {
            use pb::{game_options::Game as O, preset_deals::Game as P};
            let options = match options.and_then(|o| o.game.as_ref()) {
                None => None,
                Some(O::GangOfFour(o)) => Some(o),
                Some(_) => return Err(Refusal::invalid("options are not gang-of-four options")),
            };
            let preset = match preset.and_then(|p| p.game.as_ref()) {
                None => None,
                Some(P::GangOfFour(p)) => Some(p),
                Some(_) => return Err(Refusal::invalid("preset deals are not gang-of-four deals")),
            };
            Ok(Box::new(gang_of_four::GangOfFourGame::new(
                options, seed, preset,
            )?))
        },
        parse_options: |players, pairs| {
            let o = gang_of_four::parse_options(players, pairs)?;
            Ok(pb::GameOptions {
                game: Some(pb::game_options::Game::GangOfFour(o)),
            })
        },
        parse_action: gang_of_four::parse_action,
    },
    KindInfo {
        name: THE_GANG,
        engine_options: gangs_rules::the_gang::contract::OPTIONS,
        action_help: the_gang::ACTION_HELP,
        team_game: true,
        new_game: |options, seed, preset| {
            use pb::{game_options::Game as O, preset_deals::Game as P};
            let options = match options.and_then(|o| o.game.as_ref()) {
                None => None,
                Some(O::TheGang(o)) => Some(o),
                Some(_) => return Err(Refusal::invalid("options are not the-gang options")),
            };
            let preset = match preset.and_then(|p| p.game.as_ref()) {
                None => None,
                Some(P::TheGang(p)) => Some(p),
                Some(_) => return Err(Refusal::invalid("preset deals are not the-gang deals")),
            };
            Ok(Box::new(the_gang::TheGangGame::new(options, seed, preset)?))
        },
        parse_options: |players, pairs| {
            let o = the_gang::parse_options(players, pairs)?;
            Ok(pb::GameOptions {
                game: Some(pb::game_options::Game::TheGang(o)),
            })
        },
        parse_action: the_gang::parse_action,
    },
];

impl KindInfo {
    /// Every option of this kind: the engine's, then the clock options ([`clock::OPTIONS`]).
    pub fn options(&self) -> Vec<OptionSpec> {
        self.engine_options
            .iter()
            .chain(clock::OPTIONS)
            .copied()
            .collect()
    }
}

/// Every kind of game, in the order of [`KINDS`].
pub fn kinds() -> &'static [KindInfo] {
    &KIND_LIST
}

/// The kind called `name`; the error lists the kinds.
pub fn kind(name: &str) -> Result<&'static KindInfo, Refusal> {
    KIND_LIST.iter().find(|k| k.name == name).ok_or_else(|| {
        Refusal::invalid(format!(
            "unknown game kind {}: use one of {}",
            gangs_rules::engine::quote(name),
            KINDS.join(", ")
        ))
    })
}

/// Creates a game of `kind`. `options` omitted means defaults; the options must be for `kind`.
pub fn new_game(
    kind: &str,
    options: Option<&pb::GameOptions>,
    seed: u64,
    preset: Option<&pb::PresetDeals>,
) -> Result<Box<dyn Game>, Refusal> {
    (self::kind(kind)?.new_game)(options, seed, preset)
}

/// Parses `key=value` options as the CLI gives them (`--option flush_by_sum=true`), with the
/// number of players, into wire options for `kind`. Unknown keys and bad values are errors
/// that name the key and what it accepts (from the engine's option schema).
pub fn parse_options(
    kind: &str,
    players: Option<u32>,
    pairs: &[(String, String)],
) -> Result<pb::GameOptions, Refusal> {
    (self::kind(kind)?.parse_options)(players, pairs)
}

/// Parses the CLI's action words (`play r7 y7`, `pass`, `take 3`, `ready`, ...) for `kind`.
pub fn parse_action(kind: &str, words: &[String]) -> Result<pb::GameAction, Refusal> {
    (self::kind(kind)?.parse_action)(words)
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
    kinds()
        .iter()
        .map(|k| format!("{}:\n{}", k.name, k.action_help))
        .collect::<Vec<_>>()
        .join("\n")
}
