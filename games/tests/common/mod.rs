//! What the games' integration tests share: a game's log built by playing it.

use gangs_games::{new_game, parse_options};
use gangs_proto::v1 as pb;
use pb::log_record::Record;

/// `seat` joined, as its record.
pub fn joined(seat: u32) -> Record {
    Record::Joined(pb::Joined {
        seat,
        name: format!("bot{seat}"),
        ..Default::default()
    })
}

/// A whole game of `kind` dealt from `seed`, played with the first legal action of the first
/// seat that may act, as its log (every record at unix ms 0).
pub fn played_log(kind: &str, players: u32, seed: u64) -> Vec<pb::LogRecord> {
    let options = parse_options(kind, Some(players), &[]).unwrap();
    let mut game = new_game(kind, Some(&options), seed, None).unwrap();
    let mut records = vec![Record::Created(pb::Created {
        kind: kind.into(),
        options: Some(options),
        seed: Some(seed),
        players,
        ..Default::default()
    })];
    records.extend((0..players).map(joined));
    records.push(Record::Started(pb::Started {
        events: game.start(),
    }));
    while !game.is_over() {
        let Some((seat, action)) = (0..game.players())
            .find_map(|s| game.legal_actions(s).into_iter().next().map(|a| (s, a)))
        else {
            break;
        };
        let events = game.act(seat, &action).unwrap();
        records.push(Record::Acted(pb::Acted {
            seat: seat as u32,
            action: Some(action),
            action_id: String::new(),
            events,
        }));
    }
    numbered(records)
}

/// `records` as a log: seqs from 1, every record at unix ms 0.
pub fn numbered(records: Vec<Record>) -> Vec<pb::LogRecord> {
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
