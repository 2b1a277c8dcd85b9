//! The kind registry: **the one list of games**. Everything that differs between games and is
//! not the engine's business lives in a [`KindInfo`], declared by the game's own module
//! (`<game>/mod.rs`, `KIND`): its name and options, its words, whether its seats play as one
//! team, what a round is and how one is summarized, which fields of a seat's view are private,
//! and its web renderer and style. The host, the viewer, the CLI and the ladder ask the registry; none of
//! them names a game. Adding a game adds one line to [`KIND_LIST`].

use crate::summary::RoundTable;
use crate::{Game, OptionSpec, Refusal};
use gangs_proto::v1 as pb;

/// The games this build knows, in the order `gangs rules`, errors and menus list them.
static KIND_LIST: &[&KindInfo] = &[&crate::gang_of_four::KIND, &crate::the_gang::KIND];

/// One kind of game. Built only by the game's own module; read through its methods and fields.
pub struct KindInfo {
    /// The game's name for people (its title in menus and help).
    pub title: &'static str,
    /// The `kind` of `CreateGame`: lowercase words joined by `-`.
    pub name: &'static str,
    /// The engine's option schema (key, type, default, range, meaning); [`KindInfo::options`]
    /// adds the clock options every game takes.
    pub engine_options: &'static [OptionSpec],
    /// The CLI's action words, for `gangs act --help`.
    pub action_help: &'static str,
    /// The seats play as one team against the game (every seat shares the result), rather than
    /// each seat for itself. Ratings and reports treat a team game's seats as one.
    pub team_game: bool,
    /// What one round of the game is called ("deal", "heist"): the summary's first column.
    pub round: &'static str,
    /// What a seat's score is, and which way is better (a leaderboard's mean score): "penalty
    /// points, lower is better".
    pub score_words: &'static str,
    /// The game's field in the proto3 JSON of a `GameView`, `GameEvent`, ...: its module's
    /// name (the kind with `_` for `-`).
    pub json_key: &'static str,
    /// The fields of a seat's view (in its JSON) that only that seat may see: what a replay of
    /// a game that is over shows of every seat.
    pub private_view_fields: &'static [&'static str],
    /// The web viewer's renderer of this game's table (a script that registers itself with
    /// `gangs.register(name, {...})`; see `service/web/app.js`).
    pub web_renderer: &'static str,
    /// The web viewer's style for this game's table (its cards' look): served with every
    /// kind's as `/assets/games.css`, after the viewer's own `style.css`.
    pub web_style: &'static str,
    /// Option sets (key, value) that make short games which still reach every rule (a low
    /// target, each mode, a deadline): what the conformance suite and the leak checks play,
    /// one set after the other, so that a new game is checked with options of its own choosing.
    pub short_games: &'static [&'static [(&'static str, &'static str)]],
    pub(crate) new_game: NewGame,
    pub(crate) parse_options: ParseOptions,
    pub(crate) parse_action: fn(&[String]) -> Result<pb::GameAction, Refusal>,
    /// `None` when the action, event or view is another game's.
    pub(crate) describe_action: fn(&pb::GameAction) -> Option<String>,
    pub(crate) describe_event: fn(&pb::GameEvent) -> Option<String>,
    pub(crate) render_view: fn(&pb::GameView) -> Option<String>,
    /// The game's part of the terminal table (`gangs play`, `gangs watch`).
    #[cfg(feature = "terminal")]
    pub(crate) new_screen: fn() -> Box<dyn crate::terminal::Screen>,
    /// What makes a new decision for a seat in `view` worth announcing to a person playing in
    /// a pipe (`gangs play --plain`); `None`: every update that offers actions is one.
    pub(crate) decision_key: fn(&pb::GameView) -> Option<String>,
    /// A team game's result from its final view; `None` for other games (and other views).
    pub(crate) team_rounds: fn(&pb::GameView) -> Option<TeamRounds>,
    /// The number of the round `event` opens, if it opens one.
    pub(crate) round_start: fn(&pb::GameEvent) -> Option<u32>,
    /// The rounds of a log that are over, from its public events (`created` is its first record).
    pub(crate) summarize: fn(&pb::Created, &[&pb::GameEvent]) -> RoundTable,
}

/// How a team game went for the team: rounds won and lost (The Gang: vaults opened, alarms
/// rung) and the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamRounds {
    pub won_rounds: u32,
    pub lost_rounds: u32,
    pub won: bool,
}

pub(crate) type ParseOptions =
    fn(Option<u32>, &[(String, String)]) -> Result<pb::GameOptions, Refusal>;
pub(crate) type NewGame =
    fn(Option<&pb::GameOptions>, u64, Option<&pb::PresetDeals>) -> Result<Box<dyn Game>, Refusal>;

impl KindInfo {
    /// Every option of this kind: the engine's, then the clock options ([`crate::clock::OPTIONS`]).
    pub fn options(&self) -> Vec<OptionSpec> {
        self.engine_options
            .iter()
            .chain(crate::clock::OPTIONS)
            .copied()
            .collect()
    }

    /// A new terminal screen for a table of this game.
    #[cfg(feature = "terminal")]
    pub fn screen(&self) -> Box<dyn crate::terminal::Screen> {
        (self.new_screen)()
    }

    /// What identifies the decision a seat faces in `view` (`None`: each update that offers
    /// actions is a new one). The Gang: every seat may act all through a street, so a new
    /// street, stage, proposal, choice or guess is a new decision, the chip moves between not.
    pub fn decision_key(&self, view: &pb::GameView) -> Option<String> {
        (self.decision_key)(view)
    }

    /// The team's result in a team game's final `view`; `None` for a game that is not a team
    /// game.
    pub fn team_rounds(&self, view: &pb::GameView) -> Option<TeamRounds> {
        (self.team_rounds)(view)
    }

    /// The number of the round (deal, heist) that `event` opens, if it opens one.
    pub fn round_start(&self, event: &pb::GameEvent) -> Option<u32> {
        (self.round_start)(event)
    }

    /// The private fields of one seat's view, out of the view's proto3 JSON (`null` for a
    /// field the view does not have).
    pub fn private_cards(
        &self,
        view_json: &serde_json::Value,
    ) -> serde_json::Map<String, serde_json::Value> {
        self.private_view_fields
            .iter()
            .map(|field| {
                let value = view_json[self.json_key]
                    .get(*field)
                    .cloned()
                    .unwrap_or(serde_json::Value::Null);
                ((*field).to_string(), value)
            })
            .collect()
    }
}

/// Every kind of game, in registry order.
pub fn kinds() -> &'static [&'static KindInfo] {
    KIND_LIST
}

/// The names of every kind, in registry order.
pub fn kind_names() -> Vec<&'static str> {
    KIND_LIST.iter().map(|k| k.name).collect()
}

/// The kind called `name`; the error lists the kinds.
pub fn kind(name: &str) -> Result<&'static KindInfo, Refusal> {
    KIND_LIST
        .iter()
        .copied()
        .find(|k| k.name == name)
        .ok_or_else(|| {
            Refusal::invalid(format!(
                "unknown game kind {}: use one of {}",
                gangs_proto::quoted(name),
                kind_names().join(", ")
            ))
        })
}

/// `items` as a sentence lists them: "a", "a or b", "a, b or c" (`last` is "or" or "and").
fn in_words(items: &[String], last: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., final_one] => format!("{} {last} {final_one}", rest.join(", ")),
    }
}

/// The kinds' names as a help text offers them: "`a` or `b`" (`gangs new --help`, ...).
pub fn kind_names_help() -> String {
    let names: Vec<String> = KIND_LIST.iter().map(|k| format!("`{}`", k.name)).collect();
    in_words(&names, "or")
}

/// The kinds' titles for people: "A and B" (the programs' `--help`).
pub fn kind_titles() -> String {
    let titles: Vec<String> = KIND_LIST.iter().map(|k| k.title.to_string()).collect();
    in_words(&titles, "and")
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

/// The kind whose view `view` is; `None` for an empty view.
pub fn kind_of_view(view: &pb::GameView) -> Option<&'static str> {
    KIND_LIST
        .iter()
        .find(|k| (k.render_view)(view).is_some())
        .map(|k| k.name)
}

/// Parses the CLI's action words (`play r7 y7`, `pass`, `take 3`, `ready`, ...) for `kind`.
pub fn parse_action(kind: &str, words: &[String]) -> Result<pb::GameAction, Refusal> {
    (self::kind(kind)?.parse_action)(words)
}

/// One line in action words, the inverse of [`parse_action`].
pub fn describe_action(action: &pb::GameAction) -> String {
    KIND_LIST
        .iter()
        .find_map(|k| (k.describe_action)(action))
        .unwrap_or_else(|| "(empty action)".to_string())
}

/// One line per event, for humans (CLI watch, log and replay).
pub fn describe_event(event: &pb::GameEvent) -> String {
    KIND_LIST
        .iter()
        .find_map(|k| (k.describe_event)(event))
        .unwrap_or_else(|| "(empty event)".to_string())
}

/// A multi-line picture of a view, for a human playing in the terminal.
pub fn render_view(view: &pb::GameView) -> String {
    KIND_LIST
        .iter()
        .find_map(|k| (k.render_view)(view))
        .unwrap_or_else(|| "(no view yet)".to_string())
}

/// The action words each game accepts, for `gangs act --help`.
pub fn action_help() -> String {
    KIND_LIST
        .iter()
        .map(|k| format!("{}:\n{}", k.name, k.action_help))
        .collect::<Vec<_>>()
        .join("\n")
}
