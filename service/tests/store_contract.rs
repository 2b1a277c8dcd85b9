//! The storage contract (`gangs_service::store::LogStore`), checked against both stores: the
//! embedded sled log and NATS JetStream (a real `nats-server` started here; never skipped).
//! Appends become durable in order and survive a reopen, ranged reads page through a game, every
//! game id is listed once in order, a deleted game is gone without touching others; on
//! JetStream, two writers racing on one game never fork its log, and the directory feed is the
//! same on every node.

#[path = "../../tests/common/nats.rs"]
mod nats;

use gangs_proto::v1 as pb;
use gangs_service::store::jetstream::{JetStreamStore, NatsOptions};
use gangs_service::store::sled::SledStore;
use gangs_service::store::{Store, StoreErrorKind, StoredLog, READ_CHUNK};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_racing_on_one_game_never_fork_its_log() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let (one, two) = (open_nats(&node.url()).await, open_nats(&node.url()).await);
    let game = "0000000000000abc";
    append(&one, game, 1..=1).await;
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

    // A retried append (same record: an ack lost in a NATS failover) is not stored twice, from
    // either node.
    let last = one.load_game(game).await.unwrap().last().unwrap().clone();
    one.append(game, vec![last.clone()])
        .await
        .unwrap()
        .expect("a retry is answered as stored");
    two.append(game, vec![last])
        .await
        .unwrap()
        .expect("a retry is answered as stored");
    assert_eq!(one.load_game(game).await.unwrap().len(), 40);
}

/// A fork once seen: an actor rebuilt on the same node while the game's writer still had its
/// predecessor's record N in flight queued its own record N behind it; the writer's remembered
/// tail made the second N "follow" the first and the stream stored both. Every record must
/// follow the log's last record, whoever wrote it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_record_with_a_seq_in_flight_is_refused_not_stored() {
    let node = tokio::task::spawn_blocking(nats::single).await.unwrap();
    let store = open_nats(&node.url()).await;
    let game = "0000000000000f0a";
    append(&store, game, 1..=5).await;
    // Both handed over before either is durable, as the old actor's and the new one's were.
    let old = store.append(game, vec![record_by(6, 1)]);
    let new = store.append(game, vec![record_by(6, 2)]);
    old.await.unwrap().expect("the first record 6 is stored");
    let refused = new
        .await
        .unwrap()
        .expect_err("a second record 6 is refused");
    assert_eq!(refused.kind, StoreErrorKind::Conflict, "{refused}");
    let stored = store.load_game(game).await.unwrap();
    assert_eq!(seqs(&stored), vec![1, 2, 3, 4, 5, 6], "forked log");
    assert_eq!(stored[5], record_by(6, 1));
    // The next record follows the one stored.
    store
        .append(game, vec![record_by(7, 1)])
        .await
        .unwrap()
        .expect("record 7 follows");
}

/// A node taking a game over fences its log: the old owner's appends, prepared against the log
/// as it was (its writer's tail), are refused even though nobody appended a record since (a
/// paused owner once answered OK for a record the new owner did not serve). Readers do
/// not see the fence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_fences_out_the_old_owner() {
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
