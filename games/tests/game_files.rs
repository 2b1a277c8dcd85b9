//! Game files (`game_file.rs`) for both games: written, read back identical, verified by the
//! engine; a tampered or truncated file is refused with the reason.

use gangs_games::game_file::{GameFile, GameFileError};
use gangs_games::{new_game, parse_options};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A whole game's log as the server writes it: random legal actions from seeded choices.
pub fn played_log(kind: &str, players: u32, seed: u64) -> Vec<pb::LogRecord> {
    let options = parse_options(kind, Some(players), &[]).unwrap();
    let mut game = new_game(kind, Some(&options), seed, None).unwrap();
    let mut records = Vec::new();
    let mut push = |record: Record| {
        let seq = records.len() as u64 + 1;
        records.push(pb::LogRecord {
            seq,
            unix_ms: 1_700_000_000_000 + seq as i64 * 10,
            record: Some(record),
        });
    };
    push(Record::Created(pb::Created {
        kind: kind.into(),
        options: Some(game.options()),
        seed: Some(seed),
        players,
        ..Default::default()
    }));
    for seat in 0..players {
        push(Record::Joined(pb::Joined {
            seat,
            name: format!("bot {seat}"),
            ..Default::default()
        }));
    }
    push(Record::Started(pb::Started {
        events: game.start(),
    }));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    while !game.is_over() {
        let movers: Vec<usize> = (0..players as usize)
            .filter(|&s| !game.legal_actions(s).is_empty())
            .collect();
        assert!(
            !movers.is_empty(),
            "a game without deadlines always has a mover"
        );
        let seat = movers[rng.random_range(0..movers.len())];
        let actions = game.legal_actions(seat);
        let action = actions[rng.random_range(0..actions.len())].clone();
        let events = game.act(seat, &action).unwrap();
        push(Record::Acted(pb::Acted {
            seat: seat as u32,
            action: Some(action),
            action_id: String::new(),
            events,
        }));
    }
    records
}

fn round_trip(kind: &str, players: u32, seed: u64) {
    let records = played_log(kind, players, seed);
    let file = GameFile::from_log("00000000000000aa", records.clone()).unwrap();
    assert_eq!(file.header.status, pb::GameStatus::Finished);
    assert_eq!(file.header.seed, Some(seed));
    assert_eq!(file.header.seats.len(), players as usize);
    assert_eq!(file.header.records, records.len() as u64);
    let outcome = file
        .header
        .outcome
        .clone()
        .expect("a finished game has an outcome");
    assert_eq!(outcome.seats.len(), players as usize);
    let text = file.to_jsonl();
    assert_eq!(text.lines().count(), records.len() + 1);
    let back = GameFile::read(text.as_bytes()).unwrap();
    assert_eq!(back, file);
    let replayed = back.verify().unwrap();
    assert_eq!(replayed.game().unwrap().outcome(), Some(outcome));
}

#[test]
fn gang_of_four_files_round_trip_and_verify() {
    round_trip("gang-of-four", 4, 11);
    round_trip("gang-of-four", 3, 12);
}

#[test]
fn the_gang_files_round_trip_and_verify() {
    round_trip("the-gang", 3, 21);
    round_trip("the-gang", 5, 22);
}

#[test]
fn the_header_is_self_describing() {
    let file = GameFile::from_log("00000000000000ab", played_log("the-gang", 4, 3)).unwrap();
    let text = file.to_jsonl();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["format"], "gangs-game");
    assert_eq!(header["version"], 1);
    assert_eq!(header["kind"], "the-gang");
    assert_eq!(header["seed"], "3");
    assert_eq!(header["seats"][2], "bot 2");
    assert_eq!(header["status"], "GAME_STATUS_FINISHED");
    assert!(header["options"]["the_gang"].is_object(), "{header}");
    assert!(header["outcome"]["seats"].is_array(), "{header}");
    assert!(
        header["finished_unix_ms"].as_i64().unwrap() > header["created_unix_ms"].as_i64().unwrap()
    );
    let record: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(record["seq"], "1");
    assert_eq!(record["created"]["kind"], "the-gang");
}

/// Changes one logged event of the file's text: the engine check must notice.
#[test]
fn a_tampered_event_fails_verification_with_its_seq() {
    let records = played_log("gang-of-four", 4, 5);
    let mut tampered = records.clone();
    // Seat 0 claims a different action than the one that produced the logged events.
    let index = tampered
        .iter()
        .position(|r| matches!(&r.record, Some(Record::Acted(_))))
        .unwrap();
    let seq = tampered[index].seq;
    let swapped = tampered
        .iter()
        .skip(index + 1)
        .find_map(|r| match &r.record {
            Some(Record::Acted(a)) => Some(a.events.clone()),
            _ => None,
        })
        .unwrap();
    if let Some(Record::Acted(a)) = &mut tampered[index].record {
        a.events = swapped;
    }
    let mut file = GameFile::from_log("00000000000000ac", records).unwrap();
    file.records = tampered;
    let back = GameFile::read(file.to_jsonl().as_bytes()).unwrap();
    match back.verify().err() {
        Some(GameFileError::Diverged(e)) => assert_eq!(e.seq, seq),
        other => panic!("expected a divergence at seq {seq}, got {other:?}"),
    }
}

#[test]
fn a_header_that_lies_is_refused() {
    let mut file = GameFile::from_log("00000000000000ad", played_log("the-gang", 3, 8)).unwrap();
    let outcome = file.header.outcome.as_mut().unwrap();
    outcome.seats[0].won = !outcome.seats[0].won;
    match file.verify().err() {
        Some(GameFileError::Header(e)) => assert!(e.contains("outcome"), "{e}"),
        other => panic!("expected a header error, got {other:?}"),
    }
}

#[test]
fn truncated_and_foreign_files_are_refused() {
    let file = GameFile::from_log("00000000000000ae", played_log("gang-of-four", 3, 9)).unwrap();
    let text = file.to_jsonl();
    let cut: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
    assert!(matches!(
        GameFile::read(cut.as_bytes()),
        Err(GameFileError::Header(_))
    ));
    match GameFile::read("{\"hello\": 1}\n".as_bytes()) {
        Err(GameFileError::Malformed { line: 1, message }) => {
            assert!(message.contains("not a gangs game file"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    match GameFile::read(text.replacen("\"seq\":\"3\"", "\"seq\":[]", 1).as_bytes()) {
        Err(GameFileError::Malformed { line: 4, .. }) => {}
        other => panic!("{other:?}"),
    }
    let newer = text.replacen("\"version\":1", "\"version\":99", 1);
    match GameFile::read(newer.as_bytes()) {
        Err(GameFileError::Malformed { message, .. }) => {
            assert!(message.contains("newer"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_running_games_public_file_reads_but_does_not_verify() {
    let mut records = played_log("the-gang", 3, 4);
    records.truncate(10);
    if let Some(Record::Created(c)) = &mut records[0].record {
        c.seed = None;
    }
    let file = GameFile::from_log("00000000000000af", records).unwrap();
    assert_eq!(file.header.status, pb::GameStatus::Running);
    assert_eq!(file.header.outcome, None);
    let back = GameFile::read(file.to_jsonl().as_bytes()).unwrap();
    assert_eq!(back.verify().err(), Some(GameFileError::NotFinished));
}

/// The deal rows add up to the final scores: each seat's penalties sum to its total and to the
/// outcome's score.
#[test]
fn gang_of_four_summaries_add_up_to_the_final_scores() {
    use gangs_games::gang_of_four::summary::deal_rows;
    use gangs_games::summary::{public_events, summarize};
    for (players, seed) in [(4, 31), (3, 32)] {
        let records = played_log("gang-of-four", players, seed);
        let outcome = GameFile::from_log("x", records.clone())
            .unwrap()
            .header
            .outcome
            .unwrap();
        let rows = deal_rows(public_events(&records).unwrap().1);
        // The registry's table has a row per deal, numbered as the deals are.
        let table = summarize(&records).unwrap();
        assert_eq!(table.header[0], "deal");
        assert_eq!(
            table.rows.iter().map(|r| r.number).collect::<Vec<_>>(),
            rows.iter().map(|r| r.deal).collect::<Vec<_>>()
        );
        assert!(
            rows.len() > 1,
            "a game to the target score takes several deals"
        );
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row.deal as usize, i + 1);
            assert_eq!(row.seats.len(), players as usize);
        }
        for seat in 0..players as usize {
            let sum: u32 = rows.iter().map(|r| r.seats[seat].penalty).sum();
            assert_eq!(sum, rows.last().unwrap().seats[seat].total);
            let score = outcome
                .seats
                .iter()
                .find(|s| s.seat as usize == seat)
                .unwrap()
                .score;
            assert_eq!(sum as i64, score, "seat {seat}");
        }
    }
}

/// The heist rows add up to the final scores: successes are the vaults, failures the alarms.
#[test]
fn the_gang_summaries_add_up_to_the_final_scores() {
    use gangs_games::summary::{public_events, summarize};
    use gangs_games::the_gang::summary::heist_rows;
    for (players, seed) in [(3, 41), (6, 42), (4, 43)] {
        let records = played_log("the-gang", players, seed);
        let outcome = GameFile::from_log("x", records.clone())
            .unwrap()
            .header
            .outcome
            .unwrap();
        let (created, events) = public_events(&records).unwrap();
        let rows = heist_rows(created, events);
        let table = summarize(&records).unwrap();
        assert_eq!(table.header[0], "heist");
        assert_eq!(table.rows.len(), rows.len());
        let last = rows.last().expect("at least one heist");
        let vaults = rows.iter().filter(|r| r.success).count() as u32;
        let alarms = rows.iter().filter(|r| !r.success).count() as u32;
        assert_eq!((last.vaults, last.alarms), (vaults, alarms));
        for s in &outcome.seats {
            assert_eq!(s.score, vaults as i64);
        }
        for row in &rows {
            assert_eq!(row.mode, "basic");
            assert!(row.hands.iter().all(|h| !h.is_empty()), "{row:?}");
            for (street, stars) in &row.chips {
                // Every seat ends each chip phase with a different chip.
                let mut sorted = stars.clone();
                sorted.sort_unstable();
                assert_eq!(
                    sorted,
                    (1..=players).collect::<Vec<_>>(),
                    "{street}: {stars:?}"
                );
            }
            assert!(row.chips.iter().any(|(s, _)| s == "red"), "{row:?}");
        }
    }
}
