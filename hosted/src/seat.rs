//! A hosted bot in a game: the line a seat's update becomes on the module's stdin, and the
//! action its answer names. The server's ladder, `gangs arena --bot FILE.wasm` and `gangs
//! replay --check-decisions` all decide through [`decide`], so they agree byte for byte.

use crate::{Bot, Budget, Decision, Fault, Outcome, Runner};
use gangs_proto::v1 as pb;

/// `update` as the module reads it: the proto3 JSON mapping of `gangs.v1.Update`, compact,
/// without the wall-clock fields (deadlines, clocks, the record's time) so that a rerun of the
/// decision reads the same bytes.
pub fn input_line(update: &pb::Update) -> Vec<u8> {
    let mut update = update.clone();
    update.deadline_unix_ms = None;
    update.clocks.clear();
    update.unix_ms = 0;
    let json = gangs_proto::json::to_json(&update, "gangs.v1.Update");
    serde_json::to_vec(&json).expect("a JSON value serializes")
}

/// The legal action `line` names: a 0-based index into `update.legal_actions`, or the action
/// in the words `gangs act` takes.
pub fn action_of(kind: &str, update: &pb::Update, line: &str) -> Result<pb::GameAction, String> {
    let line = line.trim();
    let legal = &update.legal_actions;
    if let Ok(index) = line.parse::<usize>() {
        return legal.get(index).cloned().ok_or_else(|| {
            format!(
                "printed {index}: there are {} legal actions (0 to {})",
                legal.len(),
                legal.len().saturating_sub(1)
            )
        });
    }
    let shown: String = line.chars().take(80).collect();
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if words.is_empty() {
        return Err("printed an empty line: print an index into legal_actions".into());
    }
    let action = gangs_games::kinds::parse_action(kind, &words)
        .map_err(|refusal| format!("printed {shown:?}: {refusal}"))?;
    // Words name an action in any card order: compare as the engine describes them.
    let described = gangs_games::kinds::describe_action(&action);
    legal
        .iter()
        .find(|a| **a == action || gangs_games::kinds::describe_action(a) == described)
        .cloned()
        .ok_or_else(|| format!("printed {shown:?}, which is not a legal action now"))
}

/// One seat's decision by a hosted bot.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// The action, or why the seat plays its default instead.
    pub action: Result<pb::GameAction, Fault>,
    pub outcome: Outcome,
}

/// Everything a hosted decision depends on besides the module and the budget.
#[derive(Debug, Clone, Copy)]
pub struct SeatDecision<'a> {
    pub kind: &'a str,
    pub update: &'a pb::Update,
    /// When the record the update follows was logged (`Update.unix_ms`, the log's `unix_ms`).
    pub record_unix_ms: i64,
    pub seed: u64,
    /// `BOT@VERSION`.
    pub bot: &'a str,
}

/// Runs `bot` on `decision` within `budget`: the action it chose, or the fault.
pub fn decide(runner: &Runner, bot: &Bot, budget: &Budget, decision: SeatDecision<'_>) -> Decided {
    let input = input_line(decision.update);
    let clock_ns = u64::try_from(decision.record_unix_ms)
        .unwrap_or(0)
        .saturating_mul(1_000_000);
    let outcome = runner.decide(
        bot,
        &Decision {
            input: &input,
            clock_ns,
            seed: decision.seed,
            bot: decision.bot,
            seat: decision.update.seat.unwrap_or(0),
            seq: decision.update.seq,
        },
        budget,
    );
    let action = match &outcome.answer {
        Ok(line) => action_of(decision.kind, decision.update, line).map_err(Fault::BadOutput),
        Err(fault) => Err(fault.clone()),
    };
    Decided { action, outcome }
}
