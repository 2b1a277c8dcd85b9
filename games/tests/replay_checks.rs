//! The replay's own checks on a log's shape: seqs follow each other, a seat joins once, and
//! every seat has joined before `started`.

mod common;

use common::{joined, numbered as log, played_log};
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

fn started(players: u32) -> Record {
    let options = parse_options("gang-of-four", Some(players), &[]).unwrap();
    let mut game = new_game("gang-of-four", Some(&options), 5, None).unwrap();
    Record::Started(pb::Started {
        events: game.start(),
    })
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

// ---- skimmed records (a restart's replay: events checked as their stored bytes) -------------

use bytes::Bytes;
use gangs_games::replay::Replayer;
use gangs_games::skim::LoggedRecord;
use prost::Message;

fn skimmed(records: &[pb::LogRecord]) -> Vec<LoggedRecord> {
    records
        .iter()
        .map(|r| LoggedRecord::skim(Bytes::from(r.encode_to_vec())).unwrap())
        .collect()
}

fn replay_logged(records: &[LoggedRecord]) -> Result<Replayer, gangs_games::replay::ReplayError> {
    let mut replayer = Replayer::new();
    for record in records {
        replayer.apply_logged(record)?;
    }
    Ok(replayer)
}

#[test]
fn skimmed_records_replay_to_the_same_game_as_whole_ones() {
    for (kind, players) in [("gang-of-four", 4), ("the-gang", 3)] {
        let records = played_log(kind, players, 11);
        assert!(records.len() > 10, "{kind}: a real game");
        let whole = replay(&records).unwrap();
        let skim = replay_logged(&skimmed(&records)).unwrap();
        let (whole, skim) = (whole.game().unwrap(), skim.game().unwrap());
        assert!(whole.is_over() && skim.is_over(), "{kind}: played out");
        for seat in (0..players as usize).map(Some).chain([None]) {
            assert_eq!(
                whole.view(seat),
                skim.view(seat),
                "{kind}: seat {seat:?}'s view"
            );
        }
    }
}

/// A played Gang of Four log, skimmed, with the stored bytes of its deal's first event edited.
fn with_deal_event_edited(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<LoggedRecord> {
    let mut logged = skimmed(&played_log("gang-of-four", 4, 11));
    let started = logged
        .iter_mut()
        .find(|r| matches!(r.record.record, Some(Record::Started(_))))
        .unwrap();
    let events = started.stored_events.as_mut().unwrap();
    let mut bytes = events[0].to_vec();
    edit(&mut bytes);
    events[0] = Bytes::from(bytes);
    logged
}

#[test]
fn a_skimmed_record_whose_event_differs_is_refused() {
    // The deal's first event, one byte changed inside a card: a different deal.
    let logged = with_deal_event_edited(|bytes| *bytes.last_mut().unwrap() ^= 1);
    let e = replay_logged(&logged).err().unwrap();
    assert_eq!(e.seq, 6);
    assert!(
        e.message.contains("event 0 differs") || e.message.contains("event 0 is undecodable"),
        "{}",
        e.message
    );
    // One event fewer than the engine produced.
    let mut logged = skimmed(&played_log("gang-of-four", 4, 11));
    let acted = logged
        .iter_mut()
        .rfind(|r| r.stored_events.as_ref().is_some_and(|e| !e.is_empty()))
        .unwrap();
    acted.stored_events.as_mut().unwrap().pop();
    let e = replay_logged(&logged).err().unwrap();
    assert!(
        e.message.contains("events, the engine produced"),
        "{}",
        e.message
    );
}

#[test]
fn an_equal_event_stored_in_other_bytes_is_accepted() {
    // An unknown field appended (field 15, varint 1): other bytes, the same message.
    let logged = with_deal_event_edited(|bytes| bytes.extend([15 << 3, 1]));
    replay_logged(&logged).unwrap();
}

// ---- timeouts: the clock's own must be due; a hosted module's failure may come early ---------

/// A clocked game of `kind` started at unix ms 1000, then the first awaited seat's default
/// logged as `timed_out` at `at` with `cause`.
fn clocked_log_with_timeout(kind: &str, players: u32, at: i64, cause: &str) -> Vec<pb::LogRecord> {
    let options = parse_options(
        kind,
        Some(players),
        &[("turn_ms".to_string(), "1000".to_string())],
    )
    .unwrap();
    let mut game = new_game(kind, Some(&options), 7, None).unwrap();
    let mut records = vec![Record::Created(pb::Created {
        kind: kind.into(),
        options: Some(options),
        seed: Some(7),
        players,
        ..Default::default()
    })];
    records.extend((0..players).map(joined));
    records.push(Record::Started(pb::Started {
        events: game.start(),
    }));
    let seat = game.actors()[0];
    let action = game.default_action(seat).unwrap();
    let events = game.act(seat, &action).unwrap();
    records.push(Record::TimedOut(pb::TimedOut {
        seat: seat as u32,
        decision: "decision".into(),
        action: Some(action),
        events,
        used_ms: u64::try_from(at - 1000).unwrap(),
        absent: false,
        cause: cause.into(),
    }));
    let mut log = log(records);
    for record in &mut log {
        record.unix_ms = 1000;
    }
    log.last_mut().unwrap().unix_ms = at;
    log
}

#[test]
fn a_hosted_failure_logged_before_the_deadline_replays_in_both_games() {
    for (kind, players) in [("gang-of-four", 4), ("the-gang", 3)] {
        let records = clocked_log_with_timeout(kind, players, 1040, "fuel: out of fuel");
        replay(&records).unwrap_or_else(|e| panic!("{kind}: {e:?}"));
        let skimmed = skimmed(&records);
        replay_logged(&skimmed).unwrap_or_else(|e| panic!("{kind} skimmed: {e:?}"));
    }
}

#[test]
fn a_clock_timeout_logged_before_the_deadline_is_still_refused() {
    for (kind, players) in [("gang-of-four", 4), ("the-gang", 3)] {
        let records = clocked_log_with_timeout(kind, players, 1040, "");
        let e = replay(&records).err().unwrap();
        assert!(
            e.message.contains("before its clock ran out"),
            "{kind}: {}",
            e.message
        );
        let on_time = clocked_log_with_timeout(kind, players, 2000, "");
        replay(&on_time).unwrap_or_else(|e| panic!("{kind}: {e:?}"));
    }
}
