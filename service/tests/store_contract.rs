//! The storage contract (`gangs_service::store::LogStore`), checked against the embedded sled
//! log: appends become durable in order and survive a reopen, ranged reads page through a game,
//! every game id is listed once in order, and a deleted game is gone without touching others.

use gangs_proto::v1 as pb;
use gangs_service::store::sled::SledStore;
use gangs_service::store::{Store, READ_CHUNK};

fn record(seq: u64) -> pb::LogRecord {
    pb::LogRecord {
        seq,
        unix_ms: 1_700_000_000_000 + seq as i64,
        record: Some(pb::log_record::Record::Expired(pb::Expired {
            events: vec![],
        })),
    }
}

async fn append(store: &Store, game_id: &str, seqs: std::ops::RangeInclusive<u64>) {
    store
        .append(game_id, seqs.map(record).collect())
        .await
        .expect("the store answered")
        .expect("durable");
}

fn seqs(records: &[pb::LogRecord]) -> Vec<u64> {
    records.iter().map(|r| r.seq).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sled_store_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = ("00000000000000aa", "00000000000000bb", "00000000000000cc");
    {
        let (store, closer) = SledStore::open(dir.path()).unwrap();
        // Appends made one after another without waiting: all durable, in order.
        let first = store.append(b, (1..=3).map(record).collect());
        let second = store.append(b, (4..=5).map(record).collect());
        first.await.unwrap().unwrap();
        second.await.unwrap().unwrap();
        append(&store, a, 1..=1).await;
        let long = READ_CHUNK as u64 + 7;
        append(&store, c, 1..=long).await;

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
        drop(store);
        tokio::task::spawn_blocking(move || closer.join())
            .await
            .unwrap();
    }
    // Durable means it survives a reopen (deletions too).
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    assert_eq!(store.game_ids().await.unwrap(), vec![a, c]);
    assert_eq!(seqs(&store.load_game(a).await.unwrap()), vec![1]);
}
