//! The replay's own checks on a log's shape: seqs follow each other, a seat joins once, and
//! every seat has joined before `started`.

use gangs_games::replay::replay;
use gangs_games::{new_game, parse_options};
use gangs_proto::v1 as pb;
use pb::log_record::Record;

fn created(players: u32) -> Record {
    let options = parse_options("gang-of-four", Some(players), &[]).unwrap();
    Record::Created(pb::Created {
        kind: "gang-of-four".into(),
        options: Some(options),
        seed: Some(5),
        preset: None,
        players,
        ..Default::default()
    })
}

fn joined(seat: u32) -> Record {
    Record::Joined(pb::Joined {
        seat,
        name: format!("bot{seat}"),
        ..Default::default()
    })
}

fn started(players: u32) -> Record {
    let options = parse_options("gang-of-four", Some(players), &[]).unwrap();
    let mut game = new_game("gang-of-four", Some(&options), 5, None).unwrap();
    Record::Started(pb::Started {
        events: game.start(),
    })
}

fn log(records: Vec<Record>) -> Vec<pb::LogRecord> {
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
fn a_full_table_replays() {
    let records = log(vec![
        created(3),
        joined(0),
        joined(2),
        joined(1),
        started(3),
    ]);
    replay(&records).unwrap();
}

#[test]
fn a_seat_joining_twice_is_refused() {
    let records = log(vec![created(3), joined(0), joined(1), joined(1)]);
    let e = replay(&records).err().unwrap();
    assert_eq!((e.seq, e.message.as_str()), (4, "seat 1 joins twice"));
}

#[test]
fn started_before_the_table_is_full_is_refused() {
    let records = log(vec![created(3), joined(0), joined(1), started(3)]);
    let e = replay(&records).err().unwrap();
    assert_eq!(e.seq, 4);
    assert!(e.message.contains("2 of 3 seats"), "{}", e.message);
}

#[test]
fn a_join_after_started_is_refused() {
    let mut records = vec![created(3), joined(0), joined(1), joined(2), started(3)];
    records.push(joined(1));
    let e = replay(&log(records)).err().unwrap();
    assert_eq!(e.seq, 6);
}
