//! The storage contract (`gangs_service::store::LogStore`), checked against both stores: the
//! embedded sled log and NATS JetStream (a real `nats-server` started here; never skipped).
//! Appends become durable in order and survive a reopen, ranged reads page through a game, every
//! game id is listed once in order, a deleted game is gone without touching others; on
//! JetStream, two writers racing on one game never fork its log, and the directory feed is the
//! same on every node.

#[path = "common/journal.rs"]
mod journal;
#[path = "../../tests/common/nats.rs"]
mod nats;

use gangs_proto::v1 as pb;
use gangs_service::store::jetstream::{JetStreamStore, NatsOptions};
use gangs_service::store::sled::SledStore;
use gangs_service::store::{Logs, Namespace, Store, StoreErrorKind, StoredLog, READ_CHUNK};
use rand::{Rng, SeedableRng};

fn record(seq: u64) -> pb::LogRecord {
    pb::LogRecord {
        seq,
        unix_ms: 1_700_000_000_000 + seq as i64,
        record: Some(pb::log_record::Record::Expired(pb::Expired {
            events: vec![],
        })),
    }
}

/// Record `seq` as written by `writer`: two writers' records of one seq differ.
fn record_by(seq: u64, writer: i64) -> pb::LogRecord {
    pb::LogRecord {
        unix_ms: 1_700_000_000_000 + seq as i64 + writer * 1_000_000,
        ..record(seq)
    }
}

async fn append(store: &Store, game_id: &str, seqs: std::ops::RangeInclusive<u64>) {
    store
        .append(game_id, seqs.map(record).collect())
        .await
        .expect("the store answered")
        .expect("durable");
}

/// Appends records `seqs` of `game_id`, each marked for the directory feed, and waits until
/// they are durable.
async fn append_marked(store: &Store, game_id: &str, seqs: std::ops::RangeInclusive<u64>) {
    let marks: Vec<u64> = seqs.clone().collect();
    store
        .append_marked(game_id, seqs.map(record).collect(), marks)
        .await
        .expect("the store answered")
        .expect("durable");
}

/// Drops the last handle on a sled store and waits until its flusher has finished (its
/// closing checkpoint made).
async fn close(store: Store, closer: gangs_service::store::StoreCloser) {
    drop(store);
    tokio::task::spawn_blocking(move || closer.join())
        .await
        .unwrap();
}

fn seqs(records: &[pb::LogRecord]) -> Vec<u64> {
    records.iter().map(|r| r.seq).collect()
}

const A: &str = "00000000000000aa";
const C: &str = "00000000000000cc";

/// Everything but durability across a reopen; leaves games A and C (1 and READ_CHUNK + 7
/// records) in the store.
async fn check_contract(store: &Store) {
    let (a, b, c) = (A, "00000000000000bb", C);
    // Appends made one after another without waiting: all durable, in order.
    let first = store.append(b, (1..=3).map(record).collect());
    let second = store.append(b, (4..=5).map(record).collect());
    first.await.unwrap().unwrap();
    second.await.unwrap().unwrap();
    append(store, a, 1..=1).await;
    let long = READ_CHUNK as u64 + 7;
    append(store, c, 1..=long).await;

    assert_eq!(store.game_ids().await.unwrap(), vec![a, b, c]);
    assert_eq!(
        seqs(&store.load_game(b).await.unwrap()),
        vec![1, 2, 3, 4, 5]
    );
    assert_eq!(
        store.load_game(c).await.unwrap().len() as u64,
        long,
        "a game longer than one chunk loads whole"
    );
    assert!(store
        .load_game("00000000000000dd")
        .await
        .unwrap()
        .is_empty());

    // Ranged reads: records after a seq, at most `limit`, fewer at the end.
    assert_eq!(seqs(&store.read_range(b, 0, 2).await.unwrap()), vec![1, 2]);
    assert_eq!(seqs(&store.read_range(b, 2, 2).await.unwrap()), vec![3, 4]);
    assert_eq!(seqs(&store.read_range(b, 4, 2).await.unwrap()), vec![5]);
    assert!(store.read_range(b, 5, 2).await.unwrap().is_empty());
    assert!(store.read_range(b, u64::MAX, 2).await.unwrap().is_empty());

    // Retention: one game deleted, the others untouched; deleting twice is fine.
    store.delete_game(b).await.unwrap();
    store.delete_game(b).await.unwrap();
    assert!(store.load_game(b).await.unwrap().is_empty());
    assert_eq!(store.game_ids().await.unwrap(), vec![a, c]);

    // Several games at once (retention's batches): each deleted, one result per id in order,
    // an unknown or already deleted game fine too; the others untouched.
    let (d, e) = ("00000000000000de", "00000000000000e0");
    append(store, d, 1..=2).await;
    append(store, e, 1..=3).await;
    let ids: Vec<String> = [d, b, e, "00000000000000ef"].map(String::from).to_vec();
    let results = store.delete_games(&ids).await;
    assert_eq!(results.len(), ids.len(), "one result per id");
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert!(store.load_game(d).await.unwrap().is_empty());
    assert!(store.load_game(e).await.unwrap().is_empty());
    assert_eq!(store.game_ids().await.unwrap(), vec![a, c]);
}

/// What a reopened store must still hold after `check_contract`.
async fn check_reopened(store: &Store) {
    assert_eq!(store.game_ids().await.unwrap(), vec![A, C]);
    assert_eq!(seqs(&store.load_game(A).await.unwrap()), vec![1]);
    assert_eq!(
        store.load_game(C).await.unwrap().len(),
        READ_CHUNK + 7,
        "every record survived"
    );
    let scanned = scan_all(store).await;
    assert_eq!(
        scanned
            .iter()
            .map(|(id, records)| (id.as_str(), records.len()))
            .collect::<Vec<_>>(),
        vec![(A, 1), (C, READ_CHUNK + 7)],
        "a restart's scan reads every game once, in order"
    );
    assert_eq!(scanned[1].1, store.load_game(C).await.unwrap());
}

/// Every game of a restart's scan (`store::scan`), in the order read. Where the store gives
/// the records' stored bytes, they must be exactly the records' encodings (the actor keeps
/// them as its records).
async fn scan_all(store: &Store) -> Vec<(String, Vec<pb::LogRecord>)> {
    use prost::Message;
    let mut scan = gangs_service::store::scan(store);
    let mut games = Vec::new();
    while let Some(batch) = scan.recv().await {
        for game in batch.expect("the scan reads the store") {
            let (id, log) = (game.id, game.log);
            let records = match log.expect("the store reads the game") {
                StoredLog::Decoded(records) => records,
                StoredLog::Encoded(encoded) => {
                    let records: Vec<pb::LogRecord> = encoded
                        .iter()
                        .map(|bytes| {
                            // Skimmed records made whole again are the records as appended.
                            gangs_service::store::skim_record(&id, bytes)
                                .expect("records skim")
                                .into_whole()
                                .expect("events decode")
                        })
                        .collect();
                    for (bytes, record) in encoded.iter().zip(&records) {
                        assert_eq!(&pb::LogRecord::decode(&bytes[..]).unwrap(), record);
                        assert_eq!(bytes[..], record.encode_to_vec()[..]);
                    }
                    records
                }
            };
            games.push((id, records));
        }
    }
    games
}

/// sled's one-pass scan hands games over in batches and gives the stored bytes: more games
/// than a batch holds come back once each, in id order, every record with its encoding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sled_scan_reads_every_game_once_with_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let count = 3 * gangs_service::store::SCAN_BATCH + 5;
    let ids: Vec<String> = (0..count).map(|n| format!("{n:016x}")).collect();
    let records_of = |n: usize| 1..=(1 + n as u64 % 4);
    // Every third game in sled's own files (written at the closing checkpoint), some of them
    // with more records pending since the reopen; the others pending only: the scan still
    // gives every game once, in id order, whole.
    {
        let (store, closer) = SledStore::open(dir.path()).unwrap();
        for id in ids.iter().step_by(3) {
            append(&store, id, 1..=1).await;
        }
        close(store, closer).await;
    }
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    for (n, id) in ids.iter().enumerate() {
        let from = if n % 3 == 0 { 2 } else { 1 };
        if from <= *records_of(n).end() {
            append(&store, id, from..=*records_of(n).end()).await;
        }
    }
    let scanned = scan_all(&store).await;
    assert_eq!(
        scanned.iter().map(|(id, _)| id).collect::<Vec<_>>(),
        ids.iter().collect::<Vec<_>>()
    );
    for (n, (id, records)) in scanned.iter().enumerate() {
        assert_eq!(seqs(records), records_of(n).collect::<Vec<_>>(), "{id}");
    }
    let mut scan = gangs_service::store::scan(&store);
    let first = scan.recv().await.unwrap().unwrap();
    assert!(
        first
            .iter()
            .all(|game| matches!(&game.log, Ok(StoredLog::Encoded(bytes)) if !bytes.is_empty())),
        "sled's scan gives the stored bytes, for the reader to decode"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sled_store_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (store, closer) = SledStore::open(dir.path()).unwrap();
        check_contract(&store).await;
        close(store, closer).await;
    }
    // Durable means it survives a reopen (deletions too).
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    check_reopened(&store).await;
}

/// Hosted modules on sled: kept once per content under their SHA-256 (from either namespace's
/// handle), read back whole after a reopen; an unknown hash is none; a name that is not a
/// SHA-256 is refused; a damaged copy reads as an error, never as other bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sled_store_keeps_hosted_modules_by_content() {
    use gangs_hosted::compile::sha256_hex;
    let dir = tempfile::tempdir().unwrap();
    let module: Vec<u8> = (0..300_000u32).map(|i| (i % 7) as u8).collect();
    let sha = sha256_hex(&module);
    {
        let (logs, closer) = SledStore::open_logs(dir.path(), &Default::default()).unwrap();
        assert!(logs.ladders.keeps_modules());
        logs.ladders.put_module(&sha, &module).await.unwrap();
        // The same content again is the same entry.
        logs.ladders.put_module(&sha, &module).await.unwrap();
        assert!(logs.ladders.put_module("../x", &module).await.is_err());
        assert_eq!(
            logs.games.get_module(&sha).await.unwrap().as_deref(),
            Some(&module[..])
        );
        drop(logs);
        closer.join();
    }
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    assert_eq!(store.get_module(&sha).await.unwrap(), Some(module.clone()));
    assert_eq!(store.get_module(&sha256_hex(b"other")).await.unwrap(), None);
    // Stored under a hash its bytes do not have: an error, not a bot.
    let other = sha256_hex(b"another module");
    store.put_module(&other, &module).await.unwrap();
    assert!(store.get_module(&other).await.is_err());
}

/// Hosted modules on JetStream (the object store bucket `GANGS_MODULES`): kept once per
/// content, larger than one message may be, read back whole through another connection (another
/// node); an unknown hash is none; a name that is not a SHA-256 is refused; bytes kept under
/// another module's hash read as an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jetstream_store_keeps_hosted_modules_by_content() {
    use gangs_hosted::compile::sha256_hex;
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    // Past NATS's default message limit (1 MiB) even deflated: random bytes do not shrink.
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let module: Vec<u8> = (0..3_000_000).map(|_| rng.random::<u8>()).collect();
    let sha = sha256_hex(&module);
    {
        let store = open_nats(&node.url()).await;
        assert!(store.keeps_modules());
        store.put_module(&sha, &module).await.unwrap();
        store.put_module(&sha, &module).await.unwrap();
        assert!(store.put_module("../x", &module).await.is_err());
    }
    let store = open_nats(&node.url()).await;
    assert_eq!(store.get_module(&sha).await.unwrap(), Some(module.clone()));
    assert_eq!(store.get_module(&sha256_hex(b"other")).await.unwrap(), None);
    let other = sha256_hex(b"another module");
    store.put_module(&other, &module).await.unwrap();
    assert!(store.get_module(&other).await.is_err());
}

// ---------------------------------------------------------------------------------------------
// Namespaces, on both stores: the games' logs and the ladders' logs are apart (listing, reading,
// the sequence rule, takeover, deletion), even under the same id; the feed is one and names
// each entry's namespace.

/// An id used in both namespaces (the store keeps them apart whatever the ids look like), a
/// game's and a ladder's.
const BOTH: &str = "00000000000000b0";
const GAME: &str = "00000000000000f1";
const LADDER: &str = "ladder00000000f1";

/// Every feed entry after `after`, once there are at least `count` (a JetStream node's feed
/// follows the stream a moment behind).
async fn feed_entries(
    store: &Store,
    after: u64,
    count: usize,
) -> Vec<gangs_service::store::FeedEntry> {
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let entries = store.feed_after(after, 100).await.unwrap();
            if entries.len() >= count {
                return entries;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the feed shows every entry")
}

/// Leaves GAME (1 record) and BOTH (4 records) in the games' namespace, LADDER and BOTH (2
/// records, `record_by(_, 8)`) in the ladders'.
async fn check_namespaces(logs: &Logs) {
    let (games, ladders) = (&logs.games, &logs.ladders);
    let head = games.feed_head().map_or(0, |h| *h.borrow());
    append_marked(games, GAME, 1..=1).await;
    append(games, BOTH, 1..=3).await;
    ladders
        .append_marked(LADDER, vec![record(1), record(2)], vec![2])
        .await
        .unwrap()
        .unwrap();
    ladders
        .append(BOTH, vec![record_by(1, 7), record_by(2, 7)])
        .await
        .unwrap()
        .unwrap();
    // Listed apart: no listing of one sees the other's logs.
    assert_eq!(games.game_ids().await.unwrap(), vec![BOTH, GAME]);
    assert_eq!(ladders.game_ids().await.unwrap(), vec![BOTH, LADDER]);
    assert!(games.load_game(LADDER).await.unwrap().is_empty());
    assert!(ladders.load_game(GAME).await.unwrap().is_empty());
    assert!(games.read_range(LADDER, 0, 10).await.unwrap().is_empty());
    // The same id in both: two logs, each with its own records and its own sequence.
    assert_eq!(seqs(&games.load_game(BOTH).await.unwrap()), vec![1, 2, 3]);
    assert_eq!(
        ladders.load_game(BOTH).await.unwrap(),
        vec![record_by(1, 7), record_by(2, 7)]
    );
    // The sequence rule per log: record 3 follows the ladders' BOTH (2 records) whatever the
    // games' BOTH holds, and a hole there is refused.
    let hole = ladders.append(BOTH, vec![record(5)]).await.unwrap();
    assert_eq!(hole.unwrap_err().kind, StoreErrorKind::Conflict);
    let behind = games.append(BOTH, vec![record_by(3, 9)]).await.unwrap();
    assert_eq!(
        behind.unwrap_err().kind,
        StoreErrorKind::Conflict,
        "the games' BOTH has 3"
    );
    // Taking one over (a fence on JetStream) leaves the other's writer alone.
    assert_eq!(ladders.load_to_write(BOTH).await.unwrap().len(), 2);
    append(games, BOTH, 4..=4).await;
    ladders
        .append(BOTH, vec![record_by(3, 7)])
        .await
        .unwrap()
        .unwrap();
    // The scan of a restart reads the games only.
    let scanned: Vec<String> = scan_all(games)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(scanned, vec![BOTH, GAME]);
    // One feed: both namespaces' marked records, in order, each naming its namespace; either
    // handle reads an entry's record from the entry's namespace.
    let entries = feed_entries(games, head, 2).await;
    let named: Vec<(Namespace, &str, u64)> = entries
        .iter()
        .map(|e| (e.namespace, e.game_id.as_str(), e.seq))
        .collect();
    assert_eq!(
        named,
        vec![(Namespace::Games, GAME, 1), (Namespace::Ladders, LADDER, 2)]
    );
    for store in [games, ladders] {
        assert_eq!(
            store.feed_record(&entries[0]).await.unwrap(),
            Some(record(1))
        );
        assert_eq!(
            store.feed_record(&entries[1]).await.unwrap(),
            Some(record(2))
        );
    }
    // Deleting one leaves the other's log of the same id.
    ladders.delete_game(BOTH).await.unwrap();
    assert!(ladders.load_game(BOTH).await.unwrap().is_empty());
    assert_eq!(
        seqs(&games.load_game(BOTH).await.unwrap()),
        vec![1, 2, 3, 4]
    );
    // Made again (other records: JetStream would take the same ones, within its dedup window,
    // for retries of the deleted ones).
    ladders
        .append(BOTH, vec![record_by(1, 8), record_by(2, 8)])
        .await
        .unwrap()
        .unwrap();
    games
        .delete_games(&[GAME.to_string()])
        .await
        .pop()
        .unwrap()
        .unwrap();
    assert_eq!(games.game_ids().await.unwrap(), vec![BOTH]);
    assert_eq!(ladders.game_ids().await.unwrap(), vec![BOTH, LADDER]);
    games
        .append_marked(GAME, vec![record_by(1, 8)], vec![1])
        .await
        .unwrap()
        .unwrap();
}

/// What a reopened store holds after `check_namespaces`.
async fn check_namespaces_reopened(logs: &Logs) {
    let (games, ladders) = (&logs.games, &logs.ladders);
    assert_eq!(games.game_ids().await.unwrap(), vec![BOTH, GAME]);
    assert_eq!(ladders.game_ids().await.unwrap(), vec![BOTH, LADDER]);
    assert_eq!(
        seqs(&games.load_game(BOTH).await.unwrap()),
        vec![1, 2, 3, 4]
    );
    assert_eq!(
        ladders.load_game(BOTH).await.unwrap(),
        vec![record_by(1, 8), record_by(2, 8)]
    );
    assert_eq!(seqs(&ladders.load_game(LADDER).await.unwrap()), vec![1, 2]);
    let scanned: Vec<String> = scan_all(games)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(scanned, vec![BOTH, GAME]);
    let ladder_entries: Vec<(String, u64)> = feed_entries(games, 0, 1)
        .await
        .into_iter()
        .filter(|e| e.namespace == Namespace::Ladders)
        .map(|e| (e.game_id, e.seq))
        .collect();
    assert_eq!(ladder_entries, vec![(LADDER.to_string(), 2)]);
    // Appends go on in each namespace after its own last record.
    append(games, BOTH, 5..=5).await;
    ladders
        .append(BOTH, vec![record(3)])
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sled_store_keeps_its_namespaces_apart() {
    let dir = tempfile::tempdir().unwrap();
    let options = gangs_service::store::sled::SledOptions::default();
    {
        let (logs, closer) = SledStore::open_logs(dir.path(), &options).unwrap();
        check_namespaces(&logs).await;
        let Logs { games, ladders } = logs;
        drop(ladders);
        close(games, closer).await;
    }
    // Crashed after appends (no closing checkpoint): the journal gives each log back to its
    // namespace too.
    let (logs, closer) = SledStore::open_logs(dir.path(), &options).unwrap();
    check_namespaces_reopened(&logs).await;
    ladder_and_game_survive_a_journal_replay(dir.path(), logs, closer).await;
}

/// Appends to both namespaces, then drops the store without its closing checkpoint (the
/// flusher thread is left behind: what it journaled is all the next open has), and reopens.
async fn ladder_and_game_survive_a_journal_replay(
    dir: &std::path::Path,
    logs: Logs,
    closer: gangs_service::store::StoreCloser,
) {
    append(&logs.games, BOTH, 6..=6).await;
    logs.ladders
        .append(BOTH, vec![record(4)])
        .await
        .unwrap()
        .unwrap();
    // The records are journaled (durable); sled's files may not have them. A copy of the data
    // dir now is what a crash leaves.
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), copy.path().join(entry.file_name())).unwrap();
        } else {
            let sub = copy.path().join(entry.file_name());
            std::fs::create_dir_all(&sub).unwrap();
            for inner in std::fs::read_dir(entry.path()).unwrap() {
                let inner = inner.unwrap();
                std::fs::copy(inner.path(), sub.join(inner.file_name())).unwrap();
            }
        }
    }
    let Logs { games, ladders } = logs;
    drop(ladders);
    close(games, closer).await;
    let (logs, _closer) = SledStore::open_logs(copy.path(), &Default::default()).unwrap();
    assert_eq!(
        seqs(&logs.games.load_game(BOTH).await.unwrap()),
        (1..=6).collect::<Vec<_>>()
    );
    assert_eq!(
        seqs(&logs.ladders.load_game(BOTH).await.unwrap()),
        vec![1, 2, 3, 4]
    );
    assert_eq!(logs.games.game_ids().await.unwrap(), vec![BOTH, GAME]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jetstream_store_keeps_its_namespaces_apart() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let options = NatsOptions {
        url: node.url(),
        replicas: 1,
        ..Default::default()
    };
    {
        let logs = JetStreamStore::open_logs(&options).await.unwrap();
        check_namespaces(&logs).await;
    }
    // Another connection (another node) reads the same namespaces.
    let logs = JetStreamStore::open_logs(&options).await.unwrap();
    check_namespaces_reopened(&logs).await;
}

/// sled: deleting a game (retention) deletes its feed entries too (readers skip them anyway;
/// kept, they pinned sled's segments and the data dir grew without bound under churn), except
/// the feed's newest entry, so that a reopened store never gives a position twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_game_leaves_the_sled_feed_but_positions_are_never_reused() {
    let dir = tempfile::tempdir().unwrap();
    let (g, h) = ("00000000000000a1", "00000000000000b2");
    {
        let (store, closer) = SledStore::open(dir.path()).unwrap();
        append_marked(&store, g, 1..=3).await;
        append_marked(&store, h, 1..=2).await;
        append_marked(&store, g, 4..=4).await;
        let all = store.feed_after(0, 100).await.unwrap();
        assert_eq!(all.len(), 6);
        // g holds the newest entry (position 6): all of g's other entries go.
        store.delete_game(g).await.unwrap();
        let left: Vec<(u64, String)> = store
            .feed_after(0, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.position, e.game_id))
            .collect();
        assert_eq!(
            left,
            vec![(4, h.to_string()), (5, h.to_string()), (6, g.to_string())]
        );
        close(store, closer).await;
    }
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    append_marked(&store, h, 3..=3).await;
    let newest = store.feed_after(6, 10).await.unwrap();
    assert_eq!(newest.len(), 1);
    assert_eq!(
        (newest[0].position, newest[0].seq),
        (7, 3),
        "position 7, never 6 again"
    );
    store.delete_game(h).await.unwrap();
    assert_eq!(
        store
            .feed_after(0, 100)
            .await
            .unwrap()
            .iter()
            .map(|e| e.position)
            .collect::<Vec<_>>(),
        vec![6, 7],
        "h's entries gone but the newest; g's last one was never indexed away"
    );
}

async fn open_nats(url: &str) -> Store {
    JetStreamStore::open(&NatsOptions {
        url: url.to_string(),
        replicas: 1,
        ..Default::default()
    })
    .await
    .expect("open the JetStream store")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jetstream_store_keeps_the_contract() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    {
        let store = open_nats(&node.url()).await;
        check_contract(&store).await;
    }
    // Another connection (another node) reads the same log.
    let store = open_nats(&node.url()).await;
    check_reopened(&store).await;
}

// ---------------------------------------------------------------------------------------------
// The sequence rule, on both stores: every record follows the log's last one, whoever wrote
// it; a lost race, a hole, a duplicate or a stale writer's record is refused, never stored.

/// Two writers racing on one game (two handles: two nodes on JetStream; on sled, one handle,
/// the store's only writer): at every seq exactly one wins, the other gets a Conflict, and the
/// log is never forked nor holed.
async fn case_two_writers_racing_never_fork_a_log(one: &Store, two: &Store, game: &str) {
    append(one, game, 1..=1).await;
    let mut won = [0, 0];
    for seq in 2..=40u64 {
        // Both write the same seq at once, each its own record.
        let (a, b) = tokio::join!(
            one.append(game, vec![record_by(seq, 1)]),
            two.append(game, vec![record_by(seq, 2)])
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        match (&a, &b) {
            (Ok(()), Err(e)) | (Err(e), Ok(())) => {
                assert_eq!(
                    e.kind,
                    StoreErrorKind::Conflict,
                    "a lost race is a conflict: {e}"
                )
            }
            _ => panic!("seq {seq}: exactly one writer must win, got {a:?} and {b:?}"),
        }
        won[usize::from(a.is_err())] += 1;
        let stored = one.load_game(game).await.unwrap();
        assert_eq!(
            seqs(&stored),
            (1..=seq).collect::<Vec<_>>(),
            "forked or holed log"
        );
        let winner = if a.is_ok() { 1 } else { 2 };
        assert_eq!(
            stored.last().unwrap(),
            &record_by(seq, winner),
            "the winner's record is stored"
        );
    }
    assert!(won[0] + won[1] == 39);
}

/// A record that would leave a hole, a second record of a stored seq, and a stale writer's
/// record arriving after a newer writer's: each refused (Conflict), nothing of it stored; the
/// next record that follows the log is taken.
async fn case_holes_duplicates_and_stale_writers_are_refused(store: &Store, game: &str) {
    append(store, game, 1..=5).await;
    for (what, seq) in [("a hole", 7), ("a second record 5", 5), ("a record 1", 1)] {
        let refused = store
            .append(game, vec![record_by(seq, 9)])
            .await
            .unwrap()
            .expect_err(what);
        assert_eq!(refused.kind, StoreErrorKind::Conflict, "{what}: {refused}");
    }
    // Both handed over before either is durable, as an old actor's and its successor's were.
    let newer = store.append(game, vec![record_by(6, 1)]);
    let stale = store.append(game, vec![record_by(6, 2)]);
    newer.await.unwrap().expect("the first record 6 is stored");
    let refused = stale
        .await
        .unwrap()
        .expect_err("the stale writer's record 6 is refused");
    assert_eq!(refused.kind, StoreErrorKind::Conflict, "{refused}");
    let stored = store.load_game(game).await.unwrap();
    assert_eq!(seqs(&stored), vec![1, 2, 3, 4, 5, 6], "forked or holed log");
    assert_eq!(stored[5], record_by(6, 1));
    store
        .append(game, vec![record_by(7, 1)])
        .await
        .unwrap()
        .expect("record 7 follows");
}

/// What a storage failure leaves, in the order the two-actor race takes: the failed writer's
/// append fails, its next one (made before it learnt of the failure, decided after) is refused
/// too, so no later record of it leaves a hole; the game reloaded to be written, its new
/// writer goes on from the log's end, and the failed writer's record of that seq, arriving
/// late, is refused: no hole, no duplicate. `outage` makes the store fail; `heal` ends it.
async fn case_failure_then_reload<F, H>(store: &Store, game: &str, outage: F, heal: H)
where
    F: std::future::Future<Output = ()>,
    H: std::future::Future<Output = ()>,
{
    append(store, game, 1..=5).await;
    outage.await;
    let failed = store.append(game, (6..=7).map(|s| record_by(s, 1)).collect());
    failed
        .await
        .unwrap()
        .expect_err("the append during the outage fails");
    heal.await;
    let after = store
        .append(game, vec![record_by(8, 1)])
        .await
        .unwrap()
        .expect_err("the failed writer's next append is refused, not stored after a hole");
    assert_ne!(after.kind, StoreErrorKind::Corrupt, "{after}");
    // The log as it is: on JetStream the failed records may have landed after all (see
    // `jetstream_failure_then_reload…`); never with a hole.
    let reloaded = seqs(&store.load_to_write(game).await.unwrap());
    let end = *reloaded.last().unwrap();
    assert_eq!(reloaded, (1..=end).collect::<Vec<_>>(), "a hole");
    assert!(end >= 5);
    let next = end + 1;
    store
        .append(game, vec![record_by(next, 2)])
        .await
        .unwrap()
        .expect("the new writer goes on from the log");
    let late = store
        .append(game, vec![record_by(next, 1)])
        .await
        .unwrap()
        .expect_err("the failed writer's record of that seq, arriving late, is refused");
    assert_eq!(late.kind, StoreErrorKind::Conflict, "{late}");
    let stored = store.load_game(game).await.unwrap();
    assert_eq!(seqs(&stored), (1..=next).collect::<Vec<_>>());
    assert_eq!(stored.last().unwrap(), &record_by(next, 2));
}

/// A sled store with failures on demand.
fn open_sled_with_faults(
    dir: &std::path::Path,
) -> (
    Store,
    gangs_service::store::StoreCloser,
    std::sync::Arc<gangs_service::store::sled::WriteFaults>,
) {
    let faults = std::sync::Arc::new(gangs_service::store::sled::WriteFaults::default());
    let options = gangs_service::store::sled::SledOptions {
        faults: Some(faults.clone()),
        ..Default::default()
    };
    let (store, closer) = SledStore::open_with(dir, &options).unwrap();
    (store, closer, faults)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_two_writers_racing_never_fork_a_log_one_handle_is_both_writers() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    case_two_writers_racing_never_fork_a_log(&store, &store, "0000000000000abc").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jetstream_two_writers_racing_never_fork_a_log() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let (one, two) = (open_nats(&node.url()).await, open_nats(&node.url()).await);
    case_two_writers_racing_never_fork_a_log(&one, &two, "0000000000000abc").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_holes_duplicates_and_stale_writers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, closer) = SledStore::open(dir.path()).unwrap();
    case_holes_duplicates_and_stale_writers_are_refused(&store, "0000000000000f0a").await;
    close(store, closer).await;
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    assert_eq!(
        seqs(&store.load_game("0000000000000f0a").await.unwrap()),
        (1..=7).collect::<Vec<_>>(),
        "nothing refused was written"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jetstream_holes_duplicates_and_stale_writers_are_refused() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let store = open_nats(&node.url()).await;
    case_holes_duplicates_and_stale_writers_are_refused(&store, "0000000000000f0a").await;
}

/// sled: an append's records must follow one another too; a retried copy of the last record
/// is refused like any second record of its seq (sled never loses an answer, so nothing is
/// ever retried; JetStream answers such a retry as stored: see the next test).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_refuses_a_retried_copy_of_the_last_record_it_never_loses_an_answer_to_retry() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    let game = "0000000000000f0d";
    append(&store, game, 1..=3).await;
    let gap = store
        .append(game, vec![record(4), record(6)])
        .await
        .unwrap()
        .expect_err("4 then 6 in one append");
    assert_eq!(gap.kind, StoreErrorKind::Conflict);
    let again = store
        .append(game, vec![record(3)])
        .await
        .unwrap()
        .expect_err("a copy of record 3");
    assert_eq!(again.kind, StoreErrorKind::Conflict);
    assert_eq!(seqs(&store.load_game(game).await.unwrap()), vec![1, 2, 3]);
}

/// JetStream: a retried append (same record: an ack lost in a NATS failover) is not stored
/// twice, from either node, and is answered as stored (sled has no lost acks: see above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jetstream_answers_a_retried_copy_of_the_last_record_as_stored_an_ack_may_be_lost() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let (one, two) = (open_nats(&node.url()).await, open_nats(&node.url()).await);
    let game = "0000000000000f0d";
    append(&one, game, 1..=3).await;
    let last = one.load_game(game).await.unwrap().last().unwrap().clone();
    one.append(game, vec![last.clone()])
        .await
        .unwrap()
        .expect("a retry is answered as stored");
    two.append(game, vec![last])
        .await
        .unwrap()
        .expect("a retry is answered as stored");
    assert_eq!(one.load_game(game).await.unwrap().len(), 3);
}

/// The two-actor race after a storage failure, made deterministic by a failure injected in
/// the flusher: the failed batch, then the failed writer's next append in a batch of its own
/// (which a store deciding each batch alone stored after the hole).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_failure_then_reload_leaves_no_hole_and_no_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let (store, closer, faults) = open_sled_with_faults(dir.path());
    let game = "0000000000000fa1";
    case_failure_then_reload(&store, game, async { faults.fail_next(1) }, async {}).await;
    // On sled "not saved" means not stored: the new writer's record 6 follows 5.
    let stored = store.load_game(game).await.unwrap();
    assert_eq!(stored[5], record_by(6, 2));
    // Another game was never refused: the failure is the failed game's alone.
    append(&store, "0000000000000fa2", 1..=2).await;
    close(store, closer).await;
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    assert_eq!(
        seqs(&store.load_game(game).await.unwrap()),
        vec![1, 2, 3, 4, 5, 6]
    );
}

/// JetStream: no failure can be injected inside the store, so the outage is its server killed
/// (the append fails once its outage budget is spent) and started again. The NATS client may
/// still deliver the failed append's publish once the server is back: the log may then hold
/// it, whole and in order, never with a hole or a second record of a seq.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jetstream_failure_then_reload_leaves_no_hole_and_no_duplicate_the_outage_is_a_killed_server(
) {
    let node = std::sync::Arc::new(std::sync::Mutex::new(
        tokio::task::spawn_blocking(nats::single).await.unwrap(),
    ));
    let url = node.lock().unwrap().url();
    let store = open_nats(&url).await;
    let (down, up) = (node.clone(), node.clone());
    case_failure_then_reload(
        &store,
        "0000000000000fa1",
        async move { down.lock().unwrap().kill9() },
        async move {
            tokio::task::spawn_blocking(move || up.lock().unwrap().restart())
                .await
                .unwrap();
        },
    )
    .await;
}

/// A node taking a game over fences its log: the old owner's appends, prepared against the log
/// as it was (its writer's tail), are refused even though nobody appended a record since (a
/// paused owner once answered OK for a record the new owner did not serve). Readers do
/// not see the fence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jetstream_a_takeover_fences_out_the_old_owner() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let (old, new) = (open_nats(&node.url()).await, open_nats(&node.url()).await);
    let game = "0000000000000f0b";
    append(&old, game, 1..=3).await;
    let taken = new.load_to_write(game).await.expect("load to write");
    assert_eq!(seqs(&taken), vec![1, 2, 3]);
    let refused = old
        .append(game, vec![record_by(4, 1)])
        .await
        .unwrap()
        .expect_err("the old owner's append after the takeover");
    assert_eq!(refused.kind, StoreErrorKind::Conflict, "{refused}");
    new.append(game, vec![record_by(4, 2)])
        .await
        .unwrap()
        .expect("the new owner appends");
    // Taken back (a second fence): the previous owner is refused in turn.
    let again = old.load_to_write(game).await.unwrap();
    assert_eq!(again.last(), Some(&record_by(4, 2)));
    let refused = new
        .append(game, vec![record_by(5, 2)])
        .await
        .unwrap()
        .expect_err("refused after being fenced out");
    assert_eq!(refused.kind, StoreErrorKind::Conflict);
    old.append(game, vec![record_by(5, 1)])
        .await
        .unwrap()
        .expect("appends after its own fence");
    // Fences are invisible to every read, whole or ranged, from any handle.
    for store in [&old, &new] {
        assert_eq!(
            seqs(&store.load_game(game).await.unwrap()),
            vec![1, 2, 3, 4, 5]
        );
        assert_eq!(
            seqs(&store.read_range(game, 0, 10).await.unwrap()),
            vec![1, 2, 3, 4, 5]
        );
        assert_eq!(seqs(&store.read_range(game, 3, 1).await.unwrap()), vec![4]);
        assert_eq!(seqs(&store.read_range(game, 4, 1).await.unwrap()), vec![5]);
        assert!(store.read_range(game, 5, 1).await.unwrap().is_empty());
    }
    // An unknown game loads empty and writes no fence (its first record expects nothing).
    assert!(new
        .load_to_write("0000000000000f0c")
        .await
        .unwrap()
        .is_empty());
    append(&new, "0000000000000f0c", 1..=1).await;
}

/// sled: one process, one handle, so there is no old owner to fence: taking a game over
/// (`load_to_write`) decides every append made before it first, so the log it answers holds
/// each of them that was stored and none that failed, and appends after it follow that log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_a_takeover_decides_every_append_made_before_it_one_handle_has_no_old_owner() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _closer, faults) = open_sled_with_faults(dir.path());
    let game = "0000000000000f0b";
    append(&store, game, 1..=3).await;
    let in_flight = store.append(game, vec![record_by(4, 1)]);
    let taken = store.load_to_write(game).await.unwrap();
    assert_eq!(seqs(&taken), vec![1, 2, 3, 4]);
    in_flight
        .await
        .unwrap()
        .expect("stored, so in the log taken");
    faults.fail_next(1);
    let in_flight = store.append(game, vec![record_by(5, 1)]);
    let taken = store.load_to_write(game).await.unwrap();
    assert_eq!(seqs(&taken), vec![1, 2, 3, 4]);
    in_flight
        .await
        .unwrap()
        .expect_err("failed, so not in the log taken");
    store
        .append(game, vec![record_by(5, 2)])
        .await
        .unwrap()
        .expect("the taker goes on from the log it read");
}

/// Watchers' catch-ups read ranges through the stream leader without a consumer: however many
/// readers come and go, the stream's consumer count stays where it was (one per node: the
/// directory feed's follower, `store/jetstream_feed.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranged_reads_open_no_consumer() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let store = open_nats(&node.url()).await;
    let game = "0000000000000f0d";
    append(&store, game, 1..=200).await;
    let reads: Vec<_> = (0..50u64)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut after = i;
                while let Ok(chunk) = store.read_range(game, after, 64).await {
                    let Some(last) = chunk.last() else { break };
                    assert_eq!(chunk[0].seq, after + 1, "a gap in a ranged read");
                    after = last.seq;
                }
                after
            })
        })
        .collect();
    let mut ends = Vec::new();
    for read in reads {
        ends.push(read.await.unwrap());
    }
    assert!(ends.iter().all(|&end| end == 200), "{ends:?}");
    let client = async_nats::connect(node.url()).await.unwrap();
    let mut stream = async_nats::jetstream::new(client)
        .get_stream("GANGS_LOG")
        .await
        .unwrap();
    assert_eq!(stream.info().await.unwrap().state.consumer_count, 1);
}

/// The directory feed on JetStream: marked records become entries at their stream sequence,
/// unmarked ones and fences never do; another node (another store handle) reads the same
/// entries, from memory near the head and from the stream's headers further back, and sees
/// its head move; reader marks only move forward.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jetstream_feed_is_the_same_on_every_node_and_marks_move_forward() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let (one, two) = (open_nats(&node.url()).await, open_nats(&node.url()).await);
    let mut head = two.feed_head().expect("JetStream keeps the feed");
    let (g, h) = ("00000000000000e1", "00000000000000e2");
    one.append_marked(g, (1..=3).map(record).collect(), vec![1, 3])
        .await
        .unwrap()
        .unwrap();
    // Another node takes game h over (a fence) and writes it: the fence is no entry.
    assert!(two.load_to_write(h).await.unwrap().is_empty());
    two.append_marked(h, (1..=2).map(record).collect(), vec![2])
        .await
        .unwrap()
        .unwrap();
    one.append_marked(g, vec![record(4)], vec![4])
        .await
        .unwrap()
        .unwrap();
    let entries = |store: Store| async move {
        let mut all = Vec::new();
        let mut after = 0;
        loop {
            let chunk = store.feed_after(after, 2).await.unwrap();
            let Some(last) = chunk.last() else { break };
            after = last.position;
            all.extend(chunk);
        }
        all
    };
    // The followers announce the newest entry.
    let want = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let all = entries(two.clone()).await;
            if all.len() == 4 {
                return all;
            }
            let _ = head.changed().await;
        }
    })
    .await
    .expect("the other node sees every entry");
    let got: Vec<(&str, u64)> = want.iter().map(|e| (e.game_id.as_str(), e.seq)).collect();
    assert_eq!(got, vec![(g, 1), (g, 3), (h, 2), (g, 4)]);
    assert!(want.windows(2).all(|w| w[0].position < w[1].position));
    // The writing node's own follower announces it too; once it does, it gives the same.
    let newest = want.last().unwrap().position;
    let mut one_head = one.feed_head().unwrap();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        one_head.wait_for(|&h| h >= newest),
    )
    .await
    .expect("the writing node's head reaches the newest entry")
    .unwrap();
    assert_eq!(
        entries(one.clone())
            .await
            .iter()
            .map(|e| e.position)
            .collect::<Vec<_>>(),
        want.iter().map(|e| e.position).collect::<Vec<_>>(),
        "both nodes give the same positions"
    );
    // Resuming after an entry gives exactly the rest; an entry's record is read by position.
    let rest = two.feed_after(want[1].position, 10).await.unwrap();
    assert_eq!(rest, want[2..].to_vec());
    let third = two
        .feed_record(&want[2])
        .await
        .unwrap()
        .expect("the record");
    assert_eq!(third, record(2));
    // A node opened now starts behind every entry: it reads them from the stream's headers.
    let three = open_nats(&node.url()).await;
    assert_eq!(three.feed_after(0, 10).await.unwrap(), want);
    // Marks: saved, read by any node, never moved back.
    assert_eq!(one.load_mark("webhook http://x/h").await.unwrap(), None);
    one.save_mark("webhook http://x/h", 5).await.unwrap();
    two.save_mark("webhook http://x/h", 3).await.unwrap();
    assert_eq!(
        three.load_mark("webhook http://x/h").await.unwrap(),
        Some(5)
    );
    two.save_mark("webhook http://x/h", 9).await.unwrap();
    assert_eq!(one.load_mark("webhook http://x/h").await.unwrap(), Some(9));
}

/// The child half of [`acknowledged_appends_survive_a_crash_and_deleted_games_stay_deleted`]:
/// run by the test binary itself with `GANGS_CRASH_DIR` set; aborts (no destructor runs, no
/// flush: what a SIGKILL leaves) once its appends are acknowledged.
fn crash_child(dir: &std::path::Path, again: bool) -> ! {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (store, _closer) = SledStore::open(dir).unwrap();
        if again {
            // Started on the journal of the first crash (its records pending, not yet in
            // sled): the journal goes on after them, and a second crash loses nothing either.
            append(&store, CRASH_KEPT, 42..=49).await;
            append_marked(&store, CRASH_KEPT, 50..=50).await;
            append(&store, CRASH_AGAIN, 1..=2).await;
            std::process::abort()
        }
        append_marked(&store, CRASH_DELETED, 1..=2).await;
        append_marked(&store, CRASH_KEPT, 1..=1).await;
        // Retention deletes games (two at once, as its batches do): a journal replayed after
        // the crash must not bring either back.
        append(&store, CRASH_DELETED_TOO, 1..=3).await;
        let deleted = [CRASH_DELETED, CRASH_DELETED_TOO].map(String::from);
        for result in store.delete_games(&deleted).await {
            result.unwrap();
        }
        append(&store, CRASH_KEPT, 2..=40).await;
        append_marked(&store, CRASH_KEPT, 41..=41).await;
        for n in 0..200u64 {
            append(&store, &format!("{:016x}", 0xc0000 + n), 1..=3).await;
        }
    });
    std::process::abort()
}

const CRASH_DELETED: &str = "00000000000000d1";
const CRASH_DELETED_TOO: &str = "00000000000000d0";
const CRASH_AGAIN: &str = "00000000000000d3";
const CRASH_KEPT: &str = "00000000000000d2";

/// sled is flushed only at checkpoints; between them an acknowledged batch is durable in the
/// journal alone. After a crash that lost what sled had not synced, and a second crash of a
/// store started on that journal, the reopened store has every acknowledged record and feed
/// entry, the deleted game stays deleted (its records, journaled before the deletion, are not
/// read back), and the feed's positions go on after the last one given.
#[test]
fn acknowledged_appends_survive_a_crash_and_deleted_games_stay_deleted() {
    if let Some(dir) = std::env::var_os("GANGS_CRASH_DIR") {
        crash_child(
            std::path::Path::new(&dir),
            std::env::var_os("GANGS_CRASH_AGAIN").is_some(),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let crash = |again: bool| {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "acknowledged_appends_survive_a_crash_and_deleted_games_stay_deleted",
                "--exact",
                "--test-threads=1",
            ])
            .env("GANGS_CRASH_DIR", dir.path());
        if again {
            child.env("GANGS_CRASH_AGAIN", "1");
        }
        let child = child.output().unwrap();
        assert!(
            !child.status.success(),
            "the child aborts after its appends: {}",
            String::from_utf8_lossy(&child.stderr)
        );
    };
    crash(false);
    // A process's death keeps what sled wrote without syncing, a power cut would not: take
    // out of sled's files whatever it kept of what it was never asked to sync (everything
    // after the deletion's checkpoint). The journal alone must bring it back.
    {
        let db = sled::open(dir.path()).unwrap();
        let (log, feed, index) = (
            db.open_tree("log").unwrap(),
            db.open_tree("directory").unwrap(),
            db.open_tree("directory_by_game").unwrap(),
        );
        let mut lost = 0;
        for key in log.iter().keys() {
            let key = key.unwrap();
            let seq = u64::from_be_bytes(key[16..].try_into().unwrap());
            if &key[..16] != CRASH_KEPT.as_bytes() || seq >= 2 {
                log.remove(&key).unwrap();
                lost += 1;
            }
        }
        // (sled writes its buffers only when they fill or it is flushed: usually none.)
        assert!(lost <= 40 + 600, "{lost} records taken out");
        feed.remove(4u64.to_be_bytes()).unwrap();
        let mut by_game = CRASH_KEPT.as_bytes().to_vec();
        by_game.extend_from_slice(&4u64.to_be_bytes());
        index.remove(by_game).unwrap();
        db.flush().unwrap();
    }
    crash(true);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (store, _closer) = SledStore::open(dir.path()).unwrap();
        assert_eq!(
            seqs(&store.load_game(CRASH_KEPT).await.unwrap()),
            (1..=50).collect::<Vec<_>>()
        );
        assert_eq!(
            seqs(&store.load_game(CRASH_AGAIN).await.unwrap()),
            vec![1, 2]
        );
        assert!(store.load_game(CRASH_DELETED).await.unwrap().is_empty());
        assert!(store.load_game(CRASH_DELETED_TOO).await.unwrap().is_empty());
        for n in 0..200u64 {
            let id = format!("{:016x}", 0xc0000 + n);
            assert_eq!(seqs(&store.load_game(&id).await.unwrap()), vec![1, 2, 3]);
        }
        let feed: Vec<(u64, String, u64)> = store
            .feed_after(0, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.position, e.game_id, e.seq))
            .collect();
        assert_eq!(
            feed,
            vec![
                (3, CRASH_KEPT.into(), 1),
                (4, CRASH_KEPT.into(), 41),
                (5, CRASH_KEPT.into(), 50)
            ],
            "the deleted game's entries stay gone; the kept game's survive both crashes"
        );
        append_marked(&store, CRASH_KEPT, 51..=51).await;
        let newest = store.feed_after(5, 10).await.unwrap();
        assert_eq!((newest[0].position, newest[0].seq), (6, 51));
    });
}

/// sled: a game's records live in values of one record (data dirs written before chunks), in
/// chunks written at checkpoints (a deletion makes one), and in the journal's pending records
/// since; every ranged read sees them as one log, also after a reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranged_reads_see_records_of_every_format_as_one_log() {
    use prost::Message;
    let dir = tempfile::tempdir().unwrap();
    let game = "00000000000000e1";
    {
        // Records 1..=3 as the store wrote them before chunks: one value each.
        let db = sled::open(dir.path()).unwrap();
        let log = db.open_tree("log").unwrap();
        for seq in 1..=3u64 {
            let mut key = game.as_bytes().to_vec();
            key.extend_from_slice(&seq.to_be_bytes());
            log.insert(key, record(seq).encode_to_vec()).unwrap();
        }
        db.flush().unwrap();
    }
    let expect_all = |store: Store, last: u64| async move {
        for after in 0..=last {
            for limit in [1, 2, 5, 100] {
                let read = store.read_range(game, after, limit).await.unwrap();
                let want: Vec<u64> = (after + 1..=last).take(limit).collect();
                assert_eq!(seqs(&read), want, "after {after}, limit {limit}");
                assert_eq!(read, want.iter().map(|&s| record(s)).collect::<Vec<_>>());
            }
        }
        assert_eq!(
            seqs(&store.load_game(game).await.unwrap()),
            (1..=last).collect::<Vec<_>>()
        );
    };
    {
        let (store, closer) = SledStore::open(dir.path()).unwrap();
        append(&store, game, 4..=6).await;
        append(&store, game, 7..=7).await;
        // A deletion checkpoints first: 4..=7 become one chunk.
        append(&store, "00000000000000f1", 1..=1).await;
        store.delete_game("00000000000000f1").await.unwrap();
        append(&store, game, 8..=10).await;
        store.delete_game("00000000000000f1").await.unwrap();
        // Pending only: 11..=12.
        append(&store, game, 11..=12).await;
        expect_all(store.clone(), 12).await;
        assert_eq!(store.game_ids().await.unwrap(), vec![game.to_string()]);
        close(store, closer).await;
    }
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    expect_all(store.clone(), 12).await;
    let scanned = scan_all(&store).await;
    assert_eq!(scanned.len(), 1);
    assert_eq!(seqs(&scanned[0].1), (1..=12).collect::<Vec<_>>());
}

/// sled: a long run of records is written as several chunks at a checkpoint; pages of any
/// size, from any seq, read across their edges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_read_across_the_edges_of_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let game = "00000000000000e2";
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    append(&store, game, 1..=1500).await;
    // A deletion checkpoints first: 1500 records of ~25 bytes make a few 8 KB chunks.
    append(&store, "00000000000000f2", 1..=1).await;
    store.delete_game("00000000000000f2").await.unwrap();
    append(&store, game, 1501..=1510).await;
    for after in (0..=1510).step_by(37) {
        for limit in [1, 50, 400, 2000] {
            let read = store.read_range(game, after, limit).await.unwrap();
            let want: Vec<u64> = (after + 1..=1510).take(limit).collect();
            assert_eq!(seqs(&read), want, "after {after}, limit {limit}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A damaged journal (sled): the entries after damage are read, the games it cost are listed as
// damaged, every other game keeps every acknowledged record; a torn last entry costs only what
// was never acknowledged.

const JA: &str = "00000000000000a1";
const JB: &str = "00000000000000b1";
const JC: &str = "00000000000000c1";
const JD: &str = "00000000000000d4";

/// What the journal child appends, one awaited append (one journal entry) per step.
const JOURNAL_STEPS: [(&str, u64, u64); 7] = [
    (JA, 1, 3),
    (JB, 1, 2),
    (JC, 1, 2),
    (JA, 4, 5),
    (JC, 3, 3),
    (JB, 3, 3),
    (JD, 1, 1),
];

/// The child half of the journal tests: run by the test binary itself with
/// `GANGS_JOURNAL_DIR` set; aborts once every append is acknowledged (what a SIGKILL leaves:
/// the records in the journal only).
async fn journal_child(dir: &std::path::Path) {
    let (store, _closer) = SledStore::open(dir).unwrap();
    for (game, first, last) in JOURNAL_STEPS {
        append(&store, game, first..=last).await;
    }
    std::process::abort()
}

/// A data dir whose journal holds [`JOURNAL_STEPS`], one entry each, written by a child
/// (`test`, which calls [`journal_child`]) that then died; the entries' offsets, the last
/// one's end included.
fn written_journal(test: &str) -> (tempfile::TempDir, Vec<usize>) {
    let dir = tempfile::tempdir().unwrap();
    journal::run_child_until_it_dies(test, "GANGS_JOURNAL_DIR", dir.path());
    let starts = journal::entry_starts(&std::fs::read(journal_of(&dir)).unwrap());
    assert_eq!(
        starts.len(),
        JOURNAL_STEPS.len() + 1,
        "one entry per append"
    );
    (dir, starts)
}

fn journal_of(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("journal")
}

/// Rewrites the journal with `change` applied to its bytes.
fn damage_journal(dir: &tempfile::TempDir, change: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = std::fs::read(journal_of(dir)).unwrap();
    change(&mut bytes);
    std::fs::write(journal_of(dir), &bytes).unwrap();
    bytes
}

/// Each game of a restart's scan: (id, seqs, why damaged).
async fn scanned_with_damage(store: &Store) -> Vec<(String, Vec<u64>, Option<String>)> {
    let mut scan = gangs_service::store::scan(store);
    let mut games = Vec::new();
    while let Some(batch) = scan.recv().await {
        for game in batch.expect("the scan reads the store") {
            let records = match game.log.expect("the store reads the game") {
                StoredLog::Decoded(records) => seqs(&records),
                StoredLog::Encoded(encoded) => encoded
                    .iter()
                    .map(|bytes| {
                        <pb::LogRecord as prost::Message>::decode(&bytes[..])
                            .unwrap()
                            .seq
                    })
                    .collect(),
            };
            games.push((game.id, records, game.damaged));
        }
    }
    games
}

fn game<'a>(
    games: &'a [(String, Vec<u64>, Option<String>)],
    id: &str,
) -> &'a (String, Vec<u64>, Option<String>) {
    games
        .iter()
        .find(|g| g.0 == id)
        .expect("the game is listed")
}

/// The offset of a byte inside the first record of the entry at `start` (one append, 16-byte
/// id): its count (4), id length (2), id (16), record count (4), seq (8), length (4), then
/// the record's bytes.
fn inside_first_record(start: usize) -> usize {
    start + 20 + 4 + 2 + 16 + 4 + 8 + 4 + 3
}

/// One flipped byte in the payload of a middle entry (A 4-5): A had records before it and
/// none after, so A is listed as damaged with records 1-3; B, C and D keep every record.
/// Appends to A are refused; the damage is kept in a copy of the journal and stays listed
/// after another restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_a_damaged_middle_entry_costs_only_the_games_in_it() {
    if let Some(dir) = std::env::var_os("GANGS_JOURNAL_DIR") {
        journal_child(std::path::Path::new(&dir)).await;
    }
    let (dir, starts) = written_journal("sled_a_damaged_middle_entry_costs_only_the_games_in_it");
    let damaged = damage_journal(&dir, |bytes| bytes[inside_first_record(starts[3])] ^= 0x5a);
    for restart in 0..2 {
        let (store, closer) = SledStore::open(dir.path()).unwrap();
        let games = scanned_with_damage(&store).await;
        let (_, a, why) = game(&games, JA);
        assert_eq!(
            a,
            &vec![1, 2, 3],
            "restart {restart}: A readable up to the damage"
        );
        let why = why.as_deref().expect("A is damaged");
        assert!(why.contains("offset"), "{why}");
        for (id, want) in [(JB, 3 + restart), (JC, 3), (JD, 1)] {
            let (_, records, why) = game(&games, id);
            assert_eq!(
                records,
                &(1..=want).collect::<Vec<_>>(),
                "{id} keeps every record"
            );
            assert_eq!(why, &None, "{id} is not damaged");
        }
        let refused = store.load_to_write(JA).await.unwrap_err();
        assert_eq!(refused.kind, StoreErrorKind::Corrupt, "{refused}");
        append(&store, JB, 4 + restart..=4 + restart).await;
        close(store, closer).await;
    }
    let kept = std::fs::read(dir.path().join("journal.damaged-0")).unwrap();
    assert_eq!(kept, damaged, "the damaged journal is kept as it was");
}

/// A damaged entry whose game has records after it: a hole, so the game is damaged and
/// readable up to the hole (B lost 1-2, so nothing of B is served); the others keep all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_a_hole_left_by_damage_marks_its_game_damaged() {
    if let Some(dir) = std::env::var_os("GANGS_JOURNAL_DIR") {
        journal_child(std::path::Path::new(&dir)).await;
    }
    let (dir, starts) = written_journal("sled_a_hole_left_by_damage_marks_its_game_damaged");
    // The entry's length damaged: found again by scanning for the next entry.
    damage_journal(&dir, |bytes| bytes[starts[1] + 15] = 0x40);
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    let games = scanned_with_damage(&store).await;
    let (_, b, why) = game(&games, JB);
    assert!(b.is_empty(), "{b:?}");
    assert!(
        why.as_deref()
            .unwrap()
            .contains("records 1 to 2 are missing"),
        "{why:?}"
    );
    for (id, want) in [(JA, 5), (JC, 3), (JD, 1)] {
        let (_, records, why) = game(&games, id);
        assert_eq!(records, &(1..=want).collect::<Vec<_>>(), "{id}");
        assert_eq!(why, &None, "{id}");
    }
}

/// A bad last entry is a torn tail (a crash mid-write looks the same): dropped, no game
/// damaged, the others whole; the next append goes in its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_a_torn_last_entry_costs_only_that_entry() {
    if let Some(dir) = std::env::var_os("GANGS_JOURNAL_DIR") {
        journal_child(std::path::Path::new(&dir)).await;
    }
    let (dir, starts) = written_journal("sled_a_torn_last_entry_costs_only_that_entry");
    damage_journal(&dir, |bytes| {
        bytes[inside_first_record(starts[6])..starts[7]].fill(0)
    });
    let (store, closer) = SledStore::open(dir.path()).unwrap();
    let games = scanned_with_damage(&store).await;
    assert!(games.iter().all(|g| g.2.is_none()), "{games:?}");
    assert!(games.iter().all(|g| g.0 != JD), "D's only entry was torn");
    for (id, want) in [(JA, 5), (JB, 3), (JC, 3)] {
        assert_eq!(game(&games, id).1, (1..=want).collect::<Vec<_>>(), "{id}");
    }
    append(&store, JD, 1..=1).await;
    close(store, closer).await;
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    assert_eq!(seqs(&store.load_game(JD).await.unwrap()), vec![1]);
    assert!(!dir.path().join("journal.damaged-0").exists());
}

/// `--on-journal-damage refuse`: the store does not open, says why (the journal, the offset,
/// the games), and changes nothing; opened with `mark` afterwards, it serves the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_refuses_to_open_a_damaged_journal_when_told_to() {
    use gangs_service::store::sled::SledOptions;
    use gangs_service::store::OnJournalDamage;
    if let Some(dir) = std::env::var_os("GANGS_JOURNAL_DIR") {
        journal_child(std::path::Path::new(&dir)).await;
    }
    let (dir, starts) = written_journal("sled_refuses_to_open_a_damaged_journal_when_told_to");
    let damaged = damage_journal(&dir, |bytes| bytes[inside_first_record(starts[3])] ^= 0x01);
    let refuse = SledOptions {
        on_journal_damage: OnJournalDamage::Refuse,
        ..Default::default()
    };
    let refused = match SledStore::open_with(dir.path(), &refuse) {
        Err(e) => e,
        Ok(_) => panic!("a damaged journal opened with refuse"),
    };
    for part in [
        journal_of(&dir).display().to_string(),
        format!("at offset {}", starts[3]),
        format!("games {JA}"),
        "--on-journal-damage refuse".to_string(),
    ] {
        assert!(refused.message.contains(&part), "{part:?} in {refused}");
    }
    assert_eq!(
        std::fs::read(journal_of(&dir)).unwrap(),
        damaged,
        "nothing changed"
    );
    assert!(!dir.path().join("journal.damaged-0").exists());
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    let games = scanned_with_damage(&store).await;
    assert!(game(&games, JA).2.is_some());
}

/// A journal cut short by something outside (a length no write leaves) inside its entries:
/// what followed the cut is gone whoever it belonged to, so every game with records in the
/// journal is listed as damaged, readable up to what is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_a_cut_journal_marks_every_game_it_held() {
    if let Some(dir) = std::env::var_os("GANGS_JOURNAL_DIR") {
        journal_child(std::path::Path::new(&dir)).await;
    }
    let (dir, starts) = written_journal("sled_a_cut_journal_marks_every_game_it_held");
    damage_journal(&dir, |bytes| bytes.truncate(starts[5] + 7));
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    let games = scanned_with_damage(&store).await;
    for (id, want) in [(JA, 5), (JB, 2), (JC, 3)] {
        let (_, records, why) = game(&games, id);
        assert_eq!(records, &(1..=want).collect::<Vec<_>>(), "{id}");
        assert!(why.as_deref().unwrap().contains("cut"), "{why:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// A full disk, then space again.

/// sled: a full disk (ENOSPC injected at the journal's write) fails each append at once with
/// the disk's own words, stores nothing of it, and costs only the games written meanwhile: a
/// game created during it is created again, a running one is reloaded and goes on; after a
/// restart every acknowledged record is there and no refused one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_a_full_disk_fails_appends_at_once_and_recovers_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (store, closer, faults) = open_sled_with_faults(dir.path());
    let (running, created) = ("0000000000000e51", "0000000000000e52");
    append(&store, running, 1..=3).await;
    faults.fail_next(2);
    for (game, seq) in [(running, 4), (created, 1)] {
        let full = store
            .append(game, vec![record(seq)])
            .await
            .unwrap()
            .expect_err("the disk is full");
        assert_eq!(full.kind, StoreErrorKind::Unavailable);
        assert!(full.message.contains("No space left on device"), "{full}");
    }
    // Space again: the creation is made again, the running game reloaded first.
    append(&store, created, 1..=2).await;
    assert_eq!(
        seqs(&store.load_to_write(running).await.unwrap()),
        vec![1, 2, 3]
    );
    append(&store, running, 4..=5).await;
    close(store, closer).await;
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    assert_eq!(
        seqs(&store.load_game(running).await.unwrap()),
        vec![1, 2, 3, 4, 5]
    );
    assert_eq!(seqs(&store.load_game(created).await.unwrap()), vec![1, 2]);
}

/// JetStream: its server's disk cannot be filled from here, but its stream can: held at its
/// size (max_bytes, new messages refused), an append waits through its outage budget instead
/// of failing, and goes through, alone and whole, once the stream has room again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jetstream_a_full_stream_holds_appends_until_space_returns_a_disk_cannot_be_filled_here() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let store = open_nats(&node.url()).await;
    let game = "0000000000000e53";
    append(&store, game, 1..=3).await;
    let client = async_nats::connect(node.url()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream("GANGS_LOG").await.unwrap();
    let info = stream.info().await.unwrap().clone();
    let mut full = info.config.clone();
    full.max_bytes = info.state.bytes as i64;
    full.discard = async_nats::jetstream::stream::DiscardPolicy::New;
    js.update_stream(&full).await.unwrap();
    let waiting = store.append(game, vec![record(4)]);
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(
        seqs(&store.load_game(game).await.unwrap()),
        vec![1, 2, 3],
        "nothing stored while the stream is full"
    );
    js.update_stream(&info.config).await.unwrap();
    waiting.await.unwrap().expect("stored once there is room");
    let reopened = open_nats(&node.url()).await;
    assert_eq!(
        seqs(&reopened.load_game(game).await.unwrap()),
        vec![1, 2, 3, 4]
    );
}

// ---------------------------------------------------------------------------------------------
// Damage and torn writes on JetStream: it keeps no journal of its own (nats-server checks its
// own files), so its cases are a damaged record in a game's stream and a server killed
// mid-append.

/// JetStream: a record that does not decode in the middle of a game's log makes that game
/// corrupt for a restart's scan (listed as damaged), and no other game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jetstream_a_damaged_record_mid_log_costs_only_its_game_it_keeps_no_journal_to_damage() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let store = open_nats(&node.url()).await;
    let (hit, spared) = ("0000000000000d51", "0000000000000d52");
    append(&store, hit, 1..=3).await;
    append(&store, spared, 1..=2).await;
    let js = async_nats::jetstream::new(async_nats::connect(node.url()).await.unwrap());
    let subject = gangs_service::store::jetstream::subject(Namespace::Games, hit);
    js.publish(subject.clone(), vec![0xff, 0xff, 0xff].into())
        .await
        .unwrap()
        .await
        .unwrap();
    let after = <pb::LogRecord as prost::Message>::encode_to_vec(&record(4));
    js.publish(subject, after.into())
        .await
        .unwrap()
        .await
        .unwrap();
    append(&store, spared, 3..=3).await;
    let mut scan = gangs_service::store::scan(&store);
    let mut seen = Vec::new();
    while let Some(batch) = scan.recv().await {
        for game in batch.expect("the scan reads the store") {
            match game.log {
                Err(e) => {
                    assert_eq!(game.id, hit);
                    assert_eq!(e.kind, StoreErrorKind::Corrupt, "{e}");
                    seen.push((game.id, None));
                }
                Ok(StoredLog::Decoded(records)) => seen.push((game.id, Some(records.len()))),
                Ok(StoredLog::Encoded(records)) => seen.push((game.id, Some(records.len()))),
            }
        }
    }
    assert_eq!(
        seen,
        vec![(hit.to_string(), None), (spared.to_string(), Some(3))]
    );
}

/// JetStream: no torn entry can be written (a message is stored whole or not at all), so the
/// case is its server killed in the middle of a long append and started again: the log ends
/// with a whole prefix of the append (all of it if it was answered stored), never a hole, and
/// the game reloaded goes on from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jetstream_a_server_killed_mid_append_leaves_a_whole_prefix_a_message_is_never_torn() {
    let mut node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let store = open_nats(&node.url()).await;
    let game = "0000000000000d53";
    append(&store, game, 1..=1).await;
    let long = store.append(game, (2..=300).map(record).collect());
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let node = tokio::task::spawn_blocking(move || {
        node.restart();
        node
    })
    .await
    .unwrap();
    let answered = long.await.unwrap();
    let stored = seqs(&store.load_to_write(game).await.unwrap());
    let last = *stored.last().unwrap();
    assert_eq!(stored, (1..=last).collect::<Vec<_>>(), "a hole");
    if answered.is_ok() {
        assert_eq!(last, 300, "answered stored, so all of it is");
    }
    append(&store, game, last + 1..=last + 1).await;
    drop(node);
}
