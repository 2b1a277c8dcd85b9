//! What a start pays for a log of finished games: only their records. Replaying a finished
//! game of either kind builds nothing that a bot's hot loop needs (The Gang's fast evaluator
//! tables took most of a second to build and sat on every start's path). Its own test binary:
//! nothing else in this process builds the tables first.

use gangs_games::replay::replay;
use gangs_games::{new_game, parse_options};
use gangs_proto::v1 as pb;
use pb::log_record::Record;

/// A whole game of `kind`, every seat playing its first legal action, as its log.
fn finished_log(kind: &str, players: u32, seed: u64) -> Vec<pb::LogRecord> {
    let options = parse_options(kind, Some(players), &[]).unwrap();
    let mut game = new_game(kind, Some(&options), seed, None).unwrap();
    let mut records = vec![Record::Created(pb::Created {
        kind: kind.into(),
        options: Some(options),
        seed: Some(seed),
        players,
        ..Default::default()
    })];
    records.extend((0..players).map(|seat| {
        Record::Joined(pb::Joined {
            seat,
            name: format!("bot{seat}"),
            ..Default::default()
        })
    }));
    records.push(Record::Started(pb::Started {
        events: game.start(),
    }));
    while !game.is_over() {
        let (seat, action) = (0..game.players())
            .find_map(|s| game.legal_actions(s).into_iter().next().map(|a| (s, a)))
            .expect("a running game awaits some seat");
        let events = game.act(seat, &action).unwrap();
        records.push(Record::Acted(pb::Acted {
            seat: seat as u32,
            action: Some(action),
            action_id: String::new(),
            events,
        }));
    }
    records
        .into_iter()
        .enumerate()
        .map(|(i, record)| pb::LogRecord {
            seq: i as u64 + 1,
            unix_ms: 0,
            record: Some(record),
        })
        .collect()
}

#[test]
fn replaying_finished_games_of_both_kinds_builds_no_evaluator_tables() {
    for (kind, players) in [("the-gang", 3), ("the-gang", 6), ("gang-of-four", 4)] {
        for seed in 0..5 {
            let log = finished_log(kind, players, seed);
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
