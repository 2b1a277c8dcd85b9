//! A storage failure costs retries, not the game: the callers whose records were not saved are
//! refused (UNAVAILABLE, nothing acknowledged), the game's streams end, and once the store
//! works again the next call reloads the game from the log and play goes on from there, a
//! retried action (same action_id) included. Before, a failed append left the game out of
//! service until the process restarted; on a cluster that stalled a game for good when a NATS
//! outage outlasted the append's retry budget.

mod common;

use common::{Seated, TestStore};
use gangs_proto::v1 as pb;
use gangs_service::actor::Settings;
use gangs_service::api::GamesService;
use gangs_service::registry::Registry;
use gangs_service::store::sled::SledStore;
use gangs_service::store::Store;
use pb::games_server::Games;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio_stream::StreamExt;
use tonic::{Code, Request};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_comes_back_from_the_log_after_a_storage_outage() {
    let dir = tempfile::tempdir().unwrap();
    let (sled, _closer) = SledStore::open(dir.path()).unwrap();
    let outage = Arc::new(TestStore::over(sled));
    let store: Store = outage.clone();
    let registry = Registry::restore(store, Settings::default()).await.unwrap();
    let service = GamesService::new(registry.clone(), None);
    let mut game = Seated::gang_of_four(&service, 3, &[], 5).await;
    for _ in 0..3 {
        game.play_next(&service).await;
    }
    let saved = registry.summaries()[0].last_seq;
    let mut spectator = service
        .watch(Request::new(pb::WatchRequest {
            game_id: game.game_id.clone(),
            token: String::new(),
            from_seq: saved,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();

    // The disk goes: the action is refused as unavailable.
    outage.failing.store(true, Ordering::SeqCst);
    let (seat, action) = game.next();
    let request = game.request(seat, action, "during");
    let refused = service
        .act(Request::new(request.clone()))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert!(refused.message().contains("not saved"), "{refused:?}");
    // The spectator's stream ends (its game left memory) without showing the unsaved record.
    while let Some(update) = spectator.next().await {
        assert!(
            update.is_err(),
            "an unsaved record reached a spectator: {update:?}"
        );
    }

    // The disk is back: the same action, retried at once with the same id, is applied once, at
    // the seq after the last saved record.
    outage.failing.store(false, Ordering::SeqCst);
    let answer = service
        .act(Request::new(request))
        .await
        .expect("the game came back from the log")
        .into_inner();
    assert_eq!(answer.seq, saved + 1);
    for _ in 0..3 {
        game.play_next(&service).await;
    }
    let log: Vec<pb::LogRecord> = service
        .get_log(Request::new(pb::GetLogRequest {
            game_id: game.game_id.clone(),
            from_seq: 0,
        }))
        .await
        .unwrap()
        .into_inner()
        .map(|r| r.unwrap())
        .collect()
        .await;
    let seqs: Vec<u64> = log.iter().map(|r| r.seq).collect();
    assert_eq!(
        seqs,
        (1..=saved + 4).collect::<Vec<_>>(),
        "a gap or a repeat"
    );
}
