//! Hosted bots' logs (`GetBotLog`, docs/hosted-bots.md): what each decision of a hosted entry
//! wrote on stderr, with its seat, seq, fuel and the cause of a failure, kept in memory for its
//! owner to read. Bounded, since a module may write up to 16 KiB per decision for as long as it
//! plays: per entry its newest [`MAX_GAMES`] games, per game [`MAX_GAME_BYTES`] (over it the
//! game's oldest decisions go, counted). Not logged durably: the decisions themselves are
//! replayable exactly (`gangs replay --check-decisions --stderr`), so the durable log need not
//! carry megabytes of text per bot; the log here lives since the ladder's runtime started (the
//! server's start, or the ladder's rename).

use gangs_proto::v1 as pb;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Games kept per hosted entry (`BOT@VERSION`): its newest, by their first decision.
pub const MAX_GAMES: usize = 32;
/// Bytes kept per game: its decisions' stderr and causes, plus [`DECISION_OVERHEAD`] each.
/// With [`MAX_GAMES`], at most about 2 MiB per hosted entry.
pub const MAX_GAME_BYTES: usize = 64 << 10;
/// What a kept decision costs its game's budget besides its text (its numbers, the
/// allocations), so that many short lines are bounded too.
pub const DECISION_OVERHEAD: usize = 64;

// A game's budget holds at least its newest decision whole (its stderr, and a cause of up to
// 1 KiB): the budget drops old decisions, never cuts one.
const _: () = assert!(gangs_hosted::MAX_STDERR_BYTES + 1024 + DECISION_OVERHEAD <= MAX_GAME_BYTES);

/// One decision as the server ran it: kept as the wire shows it (an empty `cause` when it
/// answered a legal action; its stderr as lossy UTF-8).
pub type Decision = pb::BotLogDecision;

/// What a kept decision costs its game's budget.
fn cost(decision: &Decision) -> usize {
    decision.stderr.len() + decision.cause.len() + DECISION_OVERHEAD
}

/// One game of an entry's log.
#[derive(Debug)]
struct GameLog {
    game_id: String,
    /// Its first decision's place in the order of every game's first decision (newest first
    /// across an entry's versions).
    order: u64,
    first_unix_ms: i64,
    last_unix_ms: i64,
    decisions: VecDeque<Decision>,
    /// The kept decisions' cost.
    bytes: usize,
    quiet: u64,
    dropped: u64,
    dropped_bytes: u64,
}

impl GameLog {
    fn add(&mut self, decision: Decision, unix_ms: i64) {
        self.last_unix_ms = unix_ms;
        if decision.stderr.is_empty() && decision.cause.is_empty() {
            self.quiet += 1;
            return;
        }
        self.bytes += cost(&decision);
        self.decisions.push_back(decision);
        // The newest stays: the oldest go until the game fits.
        while self.bytes > MAX_GAME_BYTES && self.decisions.len() > 1 {
            let old = self.decisions.pop_front().expect("more than one");
            self.bytes -= cost(&old);
            self.dropped += 1;
            self.dropped_bytes += old.stderr.len() as u64;
        }
    }

    fn message(&self, entry: &str) -> pb::BotLogGame {
        pb::BotLogGame {
            game_id: self.game_id.clone(),
            entry: entry.to_string(),
            first_unix_ms: self.first_unix_ms,
            last_unix_ms: self.last_unix_ms,
            decisions: self.decisions.iter().cloned().collect(),
            quiet_decisions: self.quiet,
            dropped_decisions: self.dropped,
            dropped_bytes: self.dropped_bytes,
        }
    }
}

/// One entry's games, oldest first.
#[derive(Debug, Default)]
struct EntryLog {
    games: VecDeque<GameLog>,
}

/// A ladder's hosted entries' logs, by entry index.
#[derive(Debug, Default)]
pub struct BotLogs {
    inner: Mutex<Logs>,
}

#[derive(Debug, Default)]
struct Logs {
    entries: HashMap<usize, EntryLog>,
    /// Games begun so far (their `order`).
    begun: u64,
}

impl BotLogs {
    /// Keeps entry `index`'s `decision` in game `game_id`, run at `unix_ms`.
    pub fn record(&self, index: usize, game_id: &str, decision: Decision, unix_ms: i64) {
        let mut logs = self.inner.lock().expect("bot logs");
        let logs = &mut *logs;
        let entry = logs.entries.entry(index).or_default();
        // Its newest games are at the back: a game's later decisions find it there quickly.
        let at = entry.games.iter().rposition(|g| g.game_id == game_id);
        let game = match at {
            Some(at) => &mut entry.games[at],
            None => {
                if entry.games.len() == MAX_GAMES {
                    entry.games.pop_front();
                }
                logs.begun += 1;
                entry.games.push_back(GameLog {
                    game_id: game_id.to_string(),
                    order: logs.begun,
                    first_unix_ms: unix_ms,
                    last_unix_ms: unix_ms,
                    decisions: VecDeque::new(),
                    bytes: 0,
                    quiet: 0,
                    dropped: 0,
                    dropped_bytes: 0,
                });
                entry.games.back_mut().expect("pushed")
            }
        };
        game.add(decision, unix_ms);
    }

    /// The games of `entries` (index, `bot@version`), newest first, at most [`MAX_GAMES`]; only
    /// game `game_id` when given.
    pub fn read(&self, entries: &[(usize, String)], game_id: Option<&str>) -> Vec<pb::BotLogGame> {
        let logs = self.inner.lock().expect("bot logs");
        let mut games: Vec<(u64, pb::BotLogGame)> = Vec::new();
        for (index, name) in entries {
            let Some(entry) = logs.entries.get(index) else {
                continue;
            };
            for game in &entry.games {
                if game_id.is_none_or(|id| id == game.game_id) {
                    games.push((game.order, game.message(name)));
                }
            }
        }
        games.sort_by_key(|g| std::cmp::Reverse(g.0));
        games.truncate(MAX_GAMES);
        games.into_iter().map(|(_, game)| game).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(seq: u64, text: &str) -> Decision {
        Decision {
            seq,
            seat: 1,
            fuel: 1000 + seq,
            cause: String::new(),
            stderr: text.to_string(),
        }
    }

    fn one(index: usize) -> Vec<(usize, String)> {
        vec![(index, format!("bot@{index}"))]
    }

    #[test]
    fn an_entry_keeps_its_newest_games_newest_first() {
        let logs = BotLogs::default();
        for g in 0..MAX_GAMES + 5 {
            logs.record(0, &format!("g{g}"), said(1, "line\n"), g as i64);
        }
        // Another entry's games are its own.
        logs.record(1, "other", said(1, "theirs\n"), 0);
        let games = logs.read(&one(0), None);
        assert_eq!(games.len(), MAX_GAMES);
        let ids: Vec<&str> = games.iter().map(|g| g.game_id.as_str()).collect();
        assert_eq!(ids[0], format!("g{}", MAX_GAMES + 4));
        assert_eq!(ids[MAX_GAMES - 1], "g5");
        assert!(!ids.contains(&"g4") && !ids.contains(&"other"), "{ids:?}");
        assert_eq!(games[0].entry, "bot@0");
        // One game by its id; an evicted one is gone.
        assert_eq!(logs.read(&one(0), Some("g7")).len(), 1);
        assert!(logs.read(&one(0), Some("g4")).is_empty());
        // A later decision of an older game stays in that game; the order is by first decision.
        logs.record(0, "g10", said(2, "later\n"), 99);
        let games = logs.read(&one(0), None);
        assert_eq!(games[0].game_id, format!("g{}", MAX_GAMES + 4));
        let g10 = logs.read(&one(0), Some("g10")).remove(0);
        let seqs: Vec<u64> = g10.decisions.iter().map(|d| d.seq).collect();
        assert_eq!(seqs, [1, 2]);
        assert_eq!((g10.first_unix_ms, g10.last_unix_ms), (10, 99));
    }

    #[test]
    fn versions_read_together_are_newest_first_and_bounded() {
        let logs = BotLogs::default();
        for g in 0..MAX_GAMES {
            logs.record(0, &format!("a{g}"), said(1, "a\n"), 0);
            logs.record(1, &format!("b{g}"), said(1, "b\n"), 0);
        }
        let both = vec![(0, "bot@1".to_string()), (1, "bot@2".to_string())];
        let games = logs.read(&both, None);
        assert_eq!(games.len(), MAX_GAMES);
        assert_eq!(games[0].game_id, format!("b{}", MAX_GAMES - 1));
        assert_eq!(games[0].entry, "bot@2");
        assert_eq!(games[1].game_id, format!("a{}", MAX_GAMES - 1));
        assert_eq!(games[1].entry, "bot@1");
    }

    #[test]
    fn a_game_keeps_its_newest_decisions_within_its_bytes_and_counts_the_rest() {
        let logs = BotLogs::default();
        let line = "x".repeat(10_000);
        let decisions = 20u64;
        for seq in 0..decisions {
            logs.record(0, "g", said(seq, &line), 0);
            // Silent, successful decisions are counted only.
            logs.record(0, "g", said(1000 + seq, ""), 0);
        }
        let game = logs.read(&one(0), None).remove(0);
        let kept = game.decisions.len() as u64;
        let per = line.len() + DECISION_OVERHEAD;
        assert_eq!(kept as usize, MAX_GAME_BYTES / per);
        assert_eq!(game.dropped_decisions, decisions - kept);
        assert_eq!(game.dropped_bytes, (decisions - kept) * line.len() as u64);
        assert_eq!(game.quiet_decisions, decisions);
        // The newest, in order.
        let seqs: Vec<u64> = game.decisions.iter().map(|d| d.seq).collect();
        let newest: Vec<u64> = (decisions - kept..decisions).collect();
        assert_eq!(seqs, newest);
        let bytes: usize = game
            .decisions
            .iter()
            .map(|d| d.stderr.len() + DECISION_OVERHEAD)
            .sum();
        assert!(bytes <= MAX_GAME_BYTES, "{bytes}");
    }

    #[test]
    fn a_failed_decision_is_kept_without_stderr() {
        let logs = BotLogs::default();
        let failed = Decision {
            cause: "fuel: out of fuel".into(),
            ..said(4, "")
        };
        logs.record(0, "g", failed.clone(), 0);
        let game = logs.read(&one(0), None).remove(0);
        assert_eq!(game.quiet_decisions, 0);
        assert_eq!(game.decisions.len(), 1);
        assert_eq!(game.decisions[0].cause, failed.cause);
        assert_eq!((game.decisions[0].seq, game.decisions[0].fuel), (4, 1004));
    }
}
