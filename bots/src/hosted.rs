//! A hosted bot's module as a policy: `gangs-bot-wasm --wasm FILE` plays a seat, or a ladder,
//! with the runner the server uses for hosted bots (`gangs_hosted`), so a module can be tried
//! against any server before it is submitted, and `gangs arena --bot FILE.wasm` plays it.
//! Its random bytes are keyed by the bot's `--seed` (a client never sees the game's seed).

use crate::Policy;
use gangs_hosted::seat::{self, SeatDecision};
use gangs_hosted::{Bot, Budget, Runner};
use gangs_proto::v1 as pb;

pub struct WasmPolicy {
    runner: Runner,
    bot: Bot,
    budget: Budget,
    /// The name it joins with and its random bytes are drawn for (the file's stem).
    name: String,
    seed: u64,
}

impl WasmPolicy {
    /// The module in `bytes`, compiled and checked as SubmitBot checks it.
    pub fn new(
        bytes: &[u8],
        name: String,
        budget: Budget,
        seed: u64,
    ) -> Result<WasmPolicy, String> {
        let runner = Runner::new();
        let bot = runner
            .compile(bytes, u64::MAX, &budget)
            .map_err(|refusal| refusal.0)?;
        Ok(WasmPolicy {
            runner,
            bot,
            budget,
            name,
            seed,
        })
    }
}

/// The game an update is of, by its view.
fn kind_of(update: &pb::Update) -> Option<&'static str> {
    gangs_games::kinds::kind_of_view(update.view.as_ref()?)
}

impl Policy for WasmPolicy {
    fn name(&self) -> &str {
        &self.name
    }

    fn choose(&mut self, update: &pb::Update) -> Option<pb::GameAction> {
        let kind = kind_of(update)?;
        let decided = seat::decide(
            &self.runner,
            &self.bot,
            &self.budget,
            SeatDecision {
                kind,
                update,
                record_unix_ms: update.unix_ms,
                seed: self.seed,
                bot: &self.name,
            },
        );
        let stderr = String::from_utf8_lossy(&decided.outcome.stderr);
        for line in stderr.lines() {
            eprintln!("[module] {line}");
        }
        match decided.action {
            Ok(action) => Some(action),
            Err(fault) => {
                eprintln!(
                    "decision at seq {} failed: {fault}; the seat's clock decides",
                    update.seq
                );
                None
            }
        }
    }
}
