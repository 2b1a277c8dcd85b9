//! Stores written before namespaces (every ladder's log among the games' logs) open with
//! everything in its place, once: a real sled data dir written by the server of that layout
//! (`tests/fixtures/data-dir-before-namespaces.tar.gz`: a Gang of Four ladder of three house
//! bots with 121 games' results, records both in sled's files and in the journal, and two plain
//! games), and a JetStream stream written as that layout wrote it (subjects `gangs.log.<id>`
//! for both, fences and feed marks included).

#[path = "../../tests/common/nats.rs"]
mod nats;

use async_nats::jetstream::{self, kv, stream};
use gangs_proto::v1 as pb;
use gangs_service::store::jetstream::{JetStreamStore, NatsOptions, FENCE_HEADER, MARK_HEADER};
use gangs_service::store::sled::SledStore;
use gangs_service::store::{Logs, Namespace, Store, StoreCloser};
use prost::Message;

/// The fixture's plain games (the ladder's games are listed too, by the hundred).
const WAITING_GAMES: [&str; 2] = ["6f0ea73a59178235", "6905d78c20394b9b"];

/// The fixture unpacked into a fresh temp dir (its data dir).
fn unpacked_fixture() -> tempfile::TempDir {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/data-dir-before-namespaces.tar.gz");
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("tar")
        .arg("xzf")
        .arg(&fixture)
        .arg("-C")
        .arg(dir.path())
        .status()
        .expect("run tar");
    assert!(status.success(), "unpacking {}", fixture.display());
    dir
}

async fn close(logs: Logs, closer: StoreCloser) {
    drop(logs);
    tokio::task::spawn_blocking(move || closer.join())
        .await
        .unwrap();
}

/// The ladder record a log record holds.
fn ladder_record(record: &pb::LogRecord) -> pb::ladder_record::Record {
    let Some(pb::log_record::Record::Ladder(bytes)) = &record.record else {
        panic!("record {} is not a ladder's", record.seq);
    };
    pb::LadderRecord::decode(&bytes[..])
        .unwrap()
        .record
        .expect("a ladder record")
}

/// Games (by id) and records of the games' namespace, the ladder's log id and records.
struct Found {
    game_ids: Vec<String>,
    ladder_id: String,
    ladder_log: Vec<pb::LogRecord>,
    /// Games' results, and those of them rated (not void).
    results: usize,
    rated: usize,
}

async fn what_is_where(logs: &Logs) -> Found {
    let game_ids = logs.games.game_ids().await.unwrap();
    let ladder_ids = logs.ladders.game_ids().await.unwrap();
    assert_eq!(ladder_ids.len(), 1, "one ladder: {ladder_ids:?}");
    let ladder_id = ladder_ids[0].clone();
    assert!(
        !game_ids.contains(&ladder_id),
        "the games' namespace lists no ladder's log"
    );
    let ladder_log = logs.ladders.load_game(&ladder_id).await.unwrap();
    let results: Vec<pb::ladder_record::GameRated> = ladder_log
        .iter()
        .filter_map(|r| match ladder_record(r) {
            pb::ladder_record::Record::Rated(rated) => Some(rated),
            _ => None,
        })
        .collect();
    Found {
        game_ids,
        ladder_id,
        results: results.len(),
        rated: results.iter().filter(|r| !r.void).count(),
        ladder_log,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sled_data_dir_of_the_earlier_layout_opens_with_each_log_in_its_namespace_once() {
    let dir = unpacked_fixture();
    let options = gangs_service::store::sled::SledOptions::default();
    let (logs, closer) = SledStore::open_logs(dir.path(), &options).unwrap();
    let found = what_is_where(&logs).await;
    match ladder_record(&found.ladder_log[0]) {
        pb::ladder_record::Record::Created(ladder) => assert_eq!(ladder.name, "classic"),
        other => panic!("the ladder's log starts with {other:?}"),
    }
    // 121 results, 119 of them rated (2 void), the last of them after the last checkpoint
    // (in the journal).
    assert_eq!((found.results, found.rated), (121, 119));
    let seqs: Vec<u64> = found.ladder_log.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "whole");
    for id in WAITING_GAMES {
        assert!(found.game_ids.iter().any(|g| g == id), "{id} listed");
    }
    // Every game the ladder rated is a game of the games' namespace, its log whole.
    let mut ladder_games = 0;
    for record in &found.ladder_log {
        if let pb::ladder_record::Record::Rated(rated) = ladder_record(record) {
            assert!(found.game_ids.contains(&rated.game_id), "{}", rated.game_id);
            let log = logs.games.load_game(&rated.game_id).await.unwrap();
            assert!(
                log.len() > 3,
                "game {} has {} records",
                rated.game_id,
                log.len()
            );
            ladder_games += 1;
        }
    }
    assert_eq!(ladder_games, 121);
    // The restart's scan reads the games only.
    let mut scan = gangs_service::store::scan(&logs.games);
    let mut scanned = 0;
    while let Some(batch) = scan.recv().await {
        for game in batch.unwrap() {
            assert_ne!(game.id, found.ladder_id);
            assert!(game.damaged.is_none(), "{} damaged", game.id);
            scanned += 1;
        }
    }
    assert_eq!(scanned, found.game_ids.len());
    // The feed's ladder results name the ladders' namespace, and read from it.
    let mut ladder_entries = Vec::new();
    let mut after = 0;
    loop {
        let chunk = logs.games.feed_after(after, 512).await.unwrap();
        let Some(last) = chunk.last() else { break };
        after = last.position;
        ladder_entries.extend(
            chunk
                .into_iter()
                .filter(|e| e.namespace == Namespace::Ladders),
        );
    }
    assert_eq!(ladder_entries.len(), 121, "every result is in the feed");
    for entry in ladder_entries.iter().step_by(20) {
        assert_eq!(entry.game_id, found.ladder_id);
        let record = logs.games.feed_record(entry).await.unwrap().expect("read");
        assert!(matches!(
            ladder_record(&record),
            pb::ladder_record::Record::Rated(_)
        ));
    }
    // The ladder goes on in its namespace.
    let next = found.ladder_log.len() as u64 + 1;
    let paused = pb::LogRecord {
        seq: next,
        ..found.ladder_log.last().unwrap().clone()
    };
    logs.ladders
        .append(&found.ladder_id, vec![paused.clone()])
        .await
        .unwrap()
        .unwrap();
    // Once: a game whose id looks like a ladder's of the earlier layout is not moved by the
    // next open (the data dir says its layout is the current one).
    let lookalike = "ladderaaaaaaaaaa";
    logs.games
        .append(
            lookalike,
            vec![pb::LogRecord {
                seq: 1,
                ..Default::default()
            }],
        )
        .await
        .unwrap()
        .unwrap();
    close(logs, closer).await;

    let (logs, closer) = SledStore::open_logs(dir.path(), &options).unwrap();
    let again = what_is_where(&logs).await;
    assert_eq!(again.ladder_id, found.ladder_id);
    assert_eq!(again.ladder_log.len(), found.ladder_log.len() + 1);
    assert_eq!(again.ladder_log.last(), Some(&paused));
    assert!(
        again.game_ids.iter().any(|g| g == lookalike),
        "left in place"
    );
    assert_eq!(again.game_ids.len(), found.game_ids.len() + 1);
    close(logs, closer).await;
}

// ---------------------------------------------------------------------------------------------
// JetStream: a stream as the earlier layout wrote it.

const GAME: &str = "00000000000000a1";
const LADDER: &str = "ladder00000000a1";

fn record(seq: u64) -> pb::LogRecord {
    pb::LogRecord {
        seq,
        unix_ms: 1_700_000_000_000 + seq as i64,
        record: Some(pb::log_record::Record::Expired(pb::Expired {
            events: vec![],
        })),
    }
}

/// Publishes one message to `subject` as the earlier layout did (a record, maybe marked, or a
/// fence); its stream sequence.
async fn publish(
    js: &jetstream::Context,
    subject: &str,
    record: Option<&pb::LogRecord>,
    mark: bool,
) -> u64 {
    let mut headers = async_nats::HeaderMap::new();
    let payload = match record {
        Some(record) => {
            if mark {
                headers.insert(MARK_HEADER, record.seq.to_string().as_str());
            }
            record.encode_to_vec()
        }
        None => {
            headers.insert(FENCE_HEADER, "2");
            Vec::new()
        }
    };
    js.publish_with_headers(subject.to_string(), headers, payload.into())
        .await
        .unwrap()
        .await
        .unwrap()
        .sequence
}

async fn subjects(js: &jetstream::Context) -> Vec<(String, usize)> {
    use tokio_stream::StreamExt;
    let stream = js.get_stream("GANGS_LOG").await.unwrap();
    let mut found: Vec<(String, usize)> = stream
        .info_with_subjects(">")
        .await
        .unwrap()
        .map(|s| s.unwrap())
        .collect::<Vec<_>>()
        .await;
    found.sort();
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jetstream_stream_of_the_earlier_layout_opens_with_each_log_in_its_namespace_once() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let client = async_nats::connect(node.url()).await.unwrap();
    let js = jetstream::new(client);
    // The stream and the marks' bucket as the earlier version made them.
    js.create_stream(stream::Config {
        name: "GANGS_LOG".to_string(),
        subjects: vec!["gangs.log.*".to_string()],
        storage: stream::StorageType::File,
        ..Default::default()
    })
    .await
    .unwrap();
    let marks = js
        .create_key_value(kv::Config {
            bucket: "GANGS_MARKS".to_string(),
            history: 1,
            ..Default::default()
        })
        .await
        .unwrap();
    let (old_game, old_ladder) = (format!("gangs.log.{GAME}"), format!("gangs.log.{LADDER}"));
    publish(&js, &old_game, Some(&record(1)), true).await;
    publish(&js, &old_ladder, Some(&record(1)), false).await;
    let delivered = publish(&js, &old_ladder, Some(&record(2)), true).await;
    publish(&js, &old_ladder, None, false).await; // a takeover's fence after record 2
    publish(&js, &old_game, Some(&record(2)), false).await;
    let undelivered = publish(&js, &old_ladder, Some(&record(3)), true).await;
    // A webhook receiver delivered up to the ladder's record 2, not its record 3.
    marks
        .put("receiver", delivered.to_be_bytes().to_vec().into())
        .await
        .unwrap();
    assert!(undelivered > delivered);

    let options = NatsOptions {
        url: node.url(),
        replicas: 1,
        ..Default::default()
    };
    let logs = JetStreamStore::open_logs(&options).await.unwrap();
    assert_eq!(logs.games.game_ids().await.unwrap(), vec![GAME]);
    assert_eq!(logs.ladders.game_ids().await.unwrap(), vec![LADDER]);
    assert_eq!(
        logs.ladders.load_game(LADDER).await.unwrap(),
        vec![record(1), record(2), record(3)]
    );
    assert!(logs.games.load_game(LADDER).await.unwrap().is_empty());
    assert_eq!(
        logs.games.load_game(GAME).await.unwrap(),
        vec![record(1), record(2)]
    );
    let moved = subjects(&js).await;
    assert_eq!(
        moved,
        vec![
            (format!("gangs.ladders.{LADDER}"), 3),
            (old_game.clone(), 2)
        ],
        "the old subject is purged"
    );
    // The feed: the record no receiver had delivered is an entry again (after every earlier
    // one), the delivered one is not sent twice.
    let entries: Vec<(Namespace, String, u64)> = logs
        .games
        .feed_after(delivered, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.namespace, e.game_id, e.seq))
        .collect();
    assert_eq!(entries, vec![(Namespace::Ladders, LADDER.to_string(), 3)]);
    // The ladder goes on in its namespace, after a takeover too.
    let ladders: Store = logs.ladders.clone();
    assert_eq!(ladders.load_to_write(LADDER).await.unwrap().len(), 3);
    ladders
        .append(LADDER, vec![record(4)])
        .await
        .unwrap()
        .unwrap();
    let last = js
        .get_stream("GANGS_LOG")
        .await
        .unwrap()
        .info()
        .await
        .unwrap()
        .state
        .last_sequence;
    drop(logs);

    // Once: the next open (another node) moves nothing, and a game whose id looks like a
    // ladder's of the earlier layout stays a game.
    let lookalike = "ladderbbbbbbbbbb";
    publish(
        &js,
        &format!("gangs.log.{lookalike}"),
        Some(&record(1)),
        false,
    )
    .await;
    let logs = JetStreamStore::open_logs(&options).await.unwrap();
    assert_eq!(logs.games.game_ids().await.unwrap(), vec![GAME, lookalike]);
    assert_eq!(logs.ladders.game_ids().await.unwrap(), vec![LADDER]);
    assert_eq!(logs.ladders.load_game(LADDER).await.unwrap().len(), 4);
    let info = js
        .get_stream("GANGS_LOG")
        .await
        .unwrap()
        .info()
        .await
        .unwrap()
        .clone();
    assert_eq!(
        info.state.last_sequence,
        last + 1,
        "only the lookalike's record"
    );
}

/// Two nodes of this version starting at once on a stream of the earlier layout: both open,
/// and each ladder's log is moved once (every record once, in order, the old subject gone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_opening_a_stream_of_the_earlier_layout_at_once_move_each_log_once() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let client = async_nats::connect(node.url()).await.unwrap();
    let js = jetstream::new(client);
    js.create_stream(stream::Config {
        name: "GANGS_LOG".to_string(),
        subjects: vec!["gangs.log.*".to_string()],
        storage: stream::StorageType::File,
        ..Default::default()
    })
    .await
    .unwrap();
    let ladders = ["ladder00000000b1", "ladder00000000b2", "ladder00000000b3"];
    for seq in 1..=40 {
        for ladder in ladders {
            let subject = format!("gangs.log.{ladder}");
            publish(&js, &subject, Some(&record(seq)), seq % 10 == 0).await;
        }
    }
    let options = NatsOptions {
        url: node.url(),
        replicas: 1,
        ..Default::default()
    };
    let (one, two) = tokio::join!(
        JetStreamStore::open_logs(&options),
        JetStreamStore::open_logs(&options)
    );
    let (one, two) = (one.unwrap(), two.unwrap());
    let want: Vec<pb::LogRecord> = (1..=40).map(record).collect();
    for logs in [&one, &two] {
        assert!(logs.games.game_ids().await.unwrap().is_empty());
        assert_eq!(logs.ladders.game_ids().await.unwrap(), ladders.to_vec());
        for ladder in ladders {
            assert_eq!(
                logs.ladders.load_game(ladder).await.unwrap(),
                want,
                "{ladder}"
            );
        }
    }
    let left: Vec<(String, usize)> = subjects(&js).await;
    assert_eq!(
        left,
        ladders
            .iter()
            .map(|l| (format!("gangs.ladders.{l}"), 40))
            .collect::<Vec<_>>(),
        "each record once, the old subjects purged"
    );
}
