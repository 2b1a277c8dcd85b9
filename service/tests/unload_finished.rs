//! A finished game leaves memory after a quiet spell (and is not loaded at startup), and comes
//! back from the log on demand: its log, its seats' streams and its refusals are the same as
//! before it left.

mod common;

use common::{log_of, Seated};
use gangs_proto::v1 as pb;
use gangs_service::actor::Settings;
use gangs_service::api::GamesService;
use gangs_service::registry::{ListQuery, Registry};
use gangs_service::store::sled::SledStore;
use pb::games_server::Games;
use std::time::Duration;
use tokio_stream::StreamExt;
use tonic::{Code, Request};

const QUIET: Duration = Duration::from_millis(150);

async fn wait_unloaded(registry: &Registry) {
    for _ in 0..100 {
        if registry.loaded_games() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the finished game stayed in memory");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_is_unloaded_then_served_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _closer) = SledStore::open(dir.path()).unwrap();
    let settings = Settings {
        watcher_buffer: 64,
        keep_finished: QUIET,
        ..Settings::default()
    };
    let registry = Registry::restore(store.clone(), settings).await.unwrap();
    let service = GamesService::new(registry.clone(), None);

    // A short Gang of Four game, played to the end with random legal actions.
    let mut game = Seated::gang_of_four(&service, 3, &[("target_score", "20")], 3).await;
    while !game.replica.is_over() {
        game.play_next(&service).await;
    }
    let (game_id, tokens) = (game.game_id.clone(), game.tokens.clone());
    let log_before = log_of(&service, &game_id).await;
    assert_eq!(registry.loaded_games(), 1);

    // Quiet: the game leaves memory, but stays listed; its ended actor's handle leaves the
    // directory too (what the server's housekeeping does every few seconds).
    wait_unloaded(&registry).await;
    let listed = registry.list(&ListQuery::default()).unwrap().0;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].status, pb::GameStatus::Finished as i32);
    let sizes = registry.sizes_reader();
    assert_eq!(
        sizes().handles,
        1,
        "the ended actor's handle, until forgotten"
    );
    registry.forget_unloaded();
    assert_eq!((sizes().handles, sizes().known), (0, 1));

    // Asked again: the same log, from disk.
    assert_eq!(log_of(&service, &game_id).await, log_before);
    assert_eq!(registry.loaded_games(), 1, "reloaded on demand");
    wait_unloaded(&registry).await;
    registry.forget_unloaded();

    // A seat's stream: every update, then the end; its token still works.
    let stream = service
        .watch(Request::new(pb::WatchRequest {
            game_id: game_id.clone(),
            token: tokens[1].clone(),
            from_seq: 0,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let updates: Vec<_> = stream.map(|u| u.unwrap()).collect().await;
    assert_eq!(updates.len(), log_before.len());
    assert_eq!(
        updates.last().unwrap().status,
        pb::GameStatus::Finished as i32
    );
    wait_unloaded(&registry).await;

    // And the game still refuses what a finished game refuses.
    let refused = service
        .act(Request::new(pb::ActRequest {
            game_id: game_id.clone(),
            token: tokens[0].clone(),
            action: Some(pb::GameAction::default()),
            expected_seq: None,
            action_id: String::new(),
        }))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(refused.message().contains("over"), "{}", refused.message());

    // A restart (a new directory over the same log) lists the finished game without loading
    // it, and serves it on demand.
    let restarted = Registry::restore(store, settings).await.unwrap();
    assert_eq!(
        restarted.loaded_games(),
        0,
        "finished games stay on disk at startup"
    );
    let sizes = restarted.sizes_reader();
    assert_eq!(
        (sizes().handles, sizes().known),
        (0, 1),
        "no handle for them either"
    );
    assert_eq!(
        restarted.list(&ListQuery::default()).unwrap(),
        registry.list(&ListQuery::default()).unwrap()
    );
    let service = GamesService::new(restarted.clone(), None);
    assert_eq!(log_of(&service, &game_id).await, log_before);
    assert_eq!(restarted.loaded_games(), 1);
}
