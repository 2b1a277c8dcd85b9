//! What a start pays for a log of finished games: only their records. Replaying a finished
//! game of either kind builds nothing that a bot's hot loop needs (The Gang's fast evaluator
//! tables took most of a second to build and sat on every start's path). Its own test binary:
//! nothing else in this process builds the tables first.

mod common;

use common::played_log;
use gangs_games::replay::replay;

#[test]
fn replaying_finished_games_of_both_kinds_builds_no_evaluator_tables() {
    for (kind, players) in [("the-gang", 3), ("the-gang", 6), ("gang-of-four", 4)] {
        for seed in 0..5 {
            let log = played_log(kind, players, seed);
            let replayed = replay(&log).unwrap();
            assert!(
                replayed.game().is_some_and(|g| g.is_over()),
                "{kind} seed {seed}"
            );
        }
    }
    assert!(
        !gangs_rules::the_gang::fast_tables_built(),
        "a replay built The Gang's fast evaluator tables: that cost is on every start's path"
    );
    // The check can fail: a bot's evaluator builds them.
    let _ = gangs_rules::the_gang::Evaluator::new();
    assert!(gangs_rules::the_gang::fast_tables_built());
}
