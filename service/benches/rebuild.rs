//! Rebuild benchmark: `cargo bench -p gangs-service --bench rebuild`.
//!
//! What a start costs per record, for each kind of game: `GAMES` logs of each shape written
//! into a fresh sled data dir through the store, the store closed and opened again (as a new
//! process would), then `Registry::restore` timed, which is the start's rebuild: every game's
//! log read, replayed by its engine (events checked against the stored bytes), and the games
//! not over given an actor. Four logs: finished games (played to their end with random legal
//! actions) and dealt games (created, seats joined, started) of Gang of Four and The Gang.
//!
//! `GANGS_REBUILD_GAMES` overrides the games per log (default 10000).

use gangs_games::{new_game, parse_options};
use gangs_proto::v1 as pb;
use gangs_service::actor::Settings;
use gangs_service::registry::Registry;
use gangs_service::store::sled::SledStore;
use pb::log_record::Record;
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// A game of `kind` dealt from `seed`, its seats joined; played to its end with random legal
/// actions when `finished`. Its log.
fn game_log(kind: &str, players: u32, seed: u64, finished: bool) -> Vec<pb::LogRecord> {
    let options = parse_options(kind, Some(players), &[]).expect("options");
    let mut game = new_game(kind, Some(&options), seed, None).expect("game");
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
            token: format!("{seed:016x}{seat:016x}"),
            ..Default::default()
        })
    }));
    records.push(Record::Started(pb::Started {
        events: game.start(),
    }));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    while finished && !game.is_over() {
        let seats: Vec<usize> = (0..game.players())
            .filter(|&s| !game.legal_actions(s).is_empty())
            .collect();
        let seat = seats[rng.random_range(0..seats.len())];
        let legal = game.legal_actions(seat);
        let action = legal[rng.random_range(0..legal.len())].clone();
        let events = game.act(seat, &action).expect("a legal action");
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
            unix_ms: 1_700_000_000_000 + i as i64,
            record: Some(record),
        })
        .collect()
}

/// Writes `games` logs of one shape into a fresh data dir, then times the rebuild: (records,
/// seconds).
async fn measure(kind: &str, players: u32, finished: bool, games: usize) -> (usize, f64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, closer) = SledStore::open(dir.path()).expect("open the store");
    let mut records = 0;
    let mut pending = Vec::new();
    for i in 0..games {
        let log = game_log(kind, players, i as u64, finished);
        records += log.len();
        pending.push(store.append(&format!("{i:016x}"), log));
        if pending.len() == 256 {
            for durable in pending.drain(..) {
                durable.await.expect("written").expect("durable");
            }
        }
    }
    for durable in pending {
        durable.await.expect("written").expect("durable");
    }
    drop(store);
    tokio::task::spawn_blocking(move || closer.join())
        .await
        .expect("closed");

    let (store, closer) = SledStore::open(dir.path()).expect("open the store again");
    let started = Instant::now();
    let registry = Registry::restore(store, Settings::default())
        .await
        .expect("rebuilt");
    let took = started.elapsed().as_secs_f64();
    registry.close();
    drop(registry);
    tokio::task::spawn_blocking(move || closer.join())
        .await
        .expect("closed");
    (records, took)
}

#[tokio::main]
async fn main() {
    let games = std::env::var("GANGS_REBUILD_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    for (kind, players) in [("gang-of-four", 4), ("the-gang", 3)] {
        for finished in [true, false] {
            let (records, seconds) = measure(kind, players, finished, games).await;
            println!(
                "rebuild {kind} {games} {} games: {records} records in {:.2} s = {:.2}M records/s",
                if finished { "finished" } else { "dealt" },
                seconds,
                records as f64 / seconds / 1e6
            );
        }
    }
}
