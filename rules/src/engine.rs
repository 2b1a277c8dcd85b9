//! The one contract every rules engine implements, in the spirit of OpenSpiel's `State`: who
//! must act, what each seat may do, applying an action, the end and its outcome, and what a
//! silent seat does by default. The bridge in `gangs-games` is written once over this trait;
//! a new game implements it and nothing else of the host changes.
//!
//! Engines hold the complete state. *What a seat may see* is not decided here: the engines'
//! events are complete and the visibility modules of `gangs-games` are the one place that
//! redacts them (an engine-level observation would be a second place deciding it).

use std::fmt;

/// A seat at the table, `0..players`, the same integer type in every engine's contract.
pub type Seat = usize;

/// Why an engine refuses an action or a set of options. Nothing changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Malformed or impossible: an unknown card, cards not held, an option out of range, an
    /// illegal combination, a play that does not beat the table. (gRPC: INVALID_ARGUMENT)
    Invalid(String),
    /// Well formed but not allowed at this moment: out of turn, the phase is closed, the game
    /// is over. (gRPC: FAILED_PRECONDITION)
    NotNow(String),
}

/// The two kinds of [`Refusal`], for callers that map them (the host's statuses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefusalKind {
    Invalid,
    NotNow,
}

impl Refusal {
    pub fn invalid(reason: impl Into<String>) -> Self {
        Refusal::Invalid(reason.into())
    }
    pub fn not_now(reason: impl Into<String>) -> Self {
        Refusal::NotNow(reason.into())
    }
    pub fn kind(&self) -> RefusalKind {
        match self {
            Refusal::Invalid(_) => RefusalKind::Invalid,
            Refusal::NotNow(_) => RefusalKind::NotNow,
        }
    }
    /// The reason, written for a bot author.
    pub fn message(&self) -> &str {
        match self {
            Refusal::Invalid(m) | Refusal::NotNow(m) => m,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Refusal {}

/// One seat's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatResult {
    pub seat: Seat,
    /// 1 is best; equal ranks tie (every seat of a cooperative game shares rank 1).
    pub rank: u32,
    /// The game's own score: Gang of Four's penalty points, The Gang's vaults.
    pub score: i64,
    pub won: bool,
}

/// The result of a finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Every seat, best first.
    pub seats: Vec<SeatResult>,
    /// One line for humans.
    pub summary: String,
}

/// The type of one option's value, with the range the engine accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionType {
    /// `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`).
    Bool,
    /// A whole number in `min..=max`.
    Count { min: u64, max: u64 },
    /// One of these words (case-insensitive).
    Choice(&'static [&'static str]),
}

impl OptionType {
    /// The type as the docs and `gangs rules` name it: `boolean`, `integer` or `choice`.
    pub fn name(&self) -> &'static str {
        match self {
            OptionType::Bool => "boolean",
            OptionType::Count { .. } => "integer",
            OptionType::Choice(_) => "choice",
        }
    }
}

/// One option of a game, declared once in its engine: option parsing, the CLI's
/// `gangs rules KIND` and the docs read the same table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    /// The `--option` key and the proto field name.
    pub key: &'static str,
    pub kind: OptionType,
    /// The default, as a human reads it (`4`, `false`, `6 × players`, `none`).
    pub default: &'static str,
    /// What the option changes.
    pub meaning: &'static str,
}

/// A parsed option value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionValue {
    Bool(bool),
    Count(u64),
    /// Index into the [`OptionType::Choice`] words.
    Choice(usize),
}

impl OptionSpec {
    /// Parses `value` for this option; the error names the key and what it accepts.
    pub fn parse(&self, value: &str) -> Result<OptionValue, Refusal> {
        let shown = quote(value);
        match self.kind {
            OptionType::Bool => match value.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => Ok(OptionValue::Bool(true)),
                "false" | "0" | "no" | "off" => Ok(OptionValue::Bool(false)),
                _ => Err(Refusal::invalid(format!(
                    "{} takes true or false, not {shown}",
                    self.key
                ))),
            },
            OptionType::Count { min, max } => {
                let n: u64 = value.trim().parse().map_err(|_| {
                    Refusal::invalid(format!("{} takes a whole number, not {shown}", self.key))
                })?;
                if n < min || n > max {
                    return Err(Refusal::invalid(format!(
                        "{} must be {}, not {n}",
                        self.key,
                        range_words(min, max)
                    )));
                }
                Ok(OptionValue::Count(n))
            }
            OptionType::Choice(words) => {
                let v = value.trim().to_ascii_lowercase();
                words
                    .iter()
                    .position(|w| *w == v)
                    .map(OptionValue::Choice)
                    .ok_or_else(|| {
                        Refusal::invalid(format!(
                            "{} takes one of {}, not {shown}",
                            self.key,
                            words.join(", ")
                        ))
                    })
            }
        }
    }

    /// What the option accepts, for help texts (`3..=4`, `true|false`, `basic|advanced`).
    pub fn accepts(&self) -> String {
        match self.kind {
            OptionType::Bool => "true|false".to_string(),
            OptionType::Count { min, max } => range_words(min, max),
            OptionType::Choice(words) => words.join("|"),
        }
    }
}

fn range_words(min: u64, max: u64) -> String {
    if max == u64::MAX {
        format!("at least {min}")
    } else if max == min + 1 {
        format!("{min} or {max}")
    } else {
        format!("{min} to {max}")
    }
}

/// At most ~80 bytes of client input in a message, on a character boundary. The same quoting
/// as `gangs_proto::quoted`, which everything above the engines uses: the rules crate depends
/// on nothing, so it keeps this copy, and a test in `gangs-games` holds the two to one output.
pub fn quote(input: &str) -> String {
    const LIMIT: usize = 80;
    if input.len() <= LIMIT {
        return format!("{input:?}");
    }
    let mut end = LIMIT;
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}… ({} bytes)", &input[..end], input.len())
}

/// Finds `key` in `schema`; the error lists the keys the game knows.
pub fn option_spec<'a>(
    game: &str,
    schema: &'a [OptionSpec],
    key: &str,
) -> Result<&'a OptionSpec, Refusal> {
    schema.iter().find(|s| s.key == key).ok_or_else(|| {
        let keys: Vec<&str> = schema.iter().map(|s| s.key).collect();
        Refusal::invalid(format!(
            "unknown {game} option {}: use {}",
            quote(key),
            keys.join(", ")
        ))
    })
}

/// The contract of a rules engine. Pure and deterministic: the same construction (options,
/// seed, preset) and the same sequence of `start`/`apply`/`expire` calls give the same events.
///
/// Invariants every engine keeps (checked over every kind by `games/tests/conformance.rs`):
/// - `apply` accepts every action of `legal_actions(seat)` and refuses what is not in it;
///   a refusal changes nothing.
/// - `default_action(seat)` is `Some` exactly for the seats of `actors()`, and is one of
///   `legal_actions(seat)`; playing every actor's default repeatedly ends the game.
/// - `is_terminal()` once the game is over; then `actors()` is empty and `outcome()` is `Some`.
pub trait Engine: Clone + Send + Sync + 'static {
    type Action: Clone + fmt::Debug + PartialEq;
    /// Complete events (nothing hidden); the host logs them as they are.
    type Event: Clone + fmt::Debug;

    /// The options every game of this engine accepts.
    fn option_schema() -> &'static [OptionSpec];
    /// Number of seats.
    fn players(&self) -> usize;
    /// Every seat is taken: deal and return the opening events. Called once.
    fn start(&mut self) -> Vec<Self::Event>;
    /// The seats the game is waiting for now, in seat order: the ones a clock would run for.
    /// Other seats may still have legal actions (The Gang lets a ready seat move its chip).
    fn actors(&self) -> Vec<Seat>;
    /// Every distinct action `seat` may take now (empty when it may not act).
    fn legal_actions(&self, seat: Seat) -> Vec<Self::Action>;
    /// Applies `action` for `seat`. On refusal nothing changed.
    fn apply(&mut self, seat: Seat, action: Self::Action) -> Result<Vec<Self::Event>, Refusal>;
    /// What `seat` plays when it stays silent (its clock ran out, it is absent): `None` when
    /// the game is not waiting for it. Each engine documents its defaults.
    fn default_action(&self, seat: Seat) -> Option<Self::Action>;
    fn is_terminal(&self) -> bool;
    /// The result, once the game is over.
    fn outcome(&self) -> Option<Outcome>;
    /// How long the current phase may last from the moment it opened, if it has a deadline.
    fn phase_deadline_ms(&self) -> Option<u64> {
        None
    }
    /// Changes whenever a new timed phase opens (0 for engines without deadlines).
    fn phase_id(&self) -> u64 {
        0
    }
    /// The deadline of the current phase passed.
    fn expire(&mut self) -> Result<Vec<Self::Event>, Refusal> {
        Err(Refusal::not_now("this game has no deadlines"))
    }
}
