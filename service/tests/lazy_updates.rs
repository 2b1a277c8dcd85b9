//! Updates are built only for the audiences someone watches. The hard case: a watcher arrives
//! for a seat nobody watched while a record is still being saved (applied, not durable): it
//! must still get that record, once durable, with the view it had then, then every later
//! record live, in order, without a gap or a repeat; and the same updates a watcher replaying
//! the whole game from the log gets.

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
use tonic::Request;

async fn watch_from(
    service: &GamesService,
    game_id: &str,
    token: &str,
    from_seq: u64,
) -> <GamesService as Games>::WatchStream {
    service
        .watch(Request::new(pb::WatchRequest {
            game_id: game_id.to_string(),
            token: token.to_string(),
            from_seq,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_arriving_while_a_record_is_saved_gets_it_and_all_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (sled, _closer) = SledStore::open(dir.path()).unwrap();
    let gated = Arc::new(TestStore::over(sled));
    let store: Store = gated.clone();
    // The late watchers are read after the game's end: room for all of it.
    let settings = Settings {
        watcher_buffer: 10_000,
        ..Settings::default()
    };
    let registry = Registry::restore(store, settings).await.unwrap();
    let service = Arc::new(GamesService::new(registry.clone(), None));
    let mut game = Seated::gang_of_four(&service, 4, &[], 8).await;
    // Nobody watches: a few actions.
    for _ in 0..3 {
        game.play_next(&service).await;
    }
    let saved = registry.summaries()[0].last_seq;

    // The disk stalls with the next action applied, not durable; then a seat nobody watched
    // and a spectator start watching from the last durable seq.
    gated.open.send_replace(false);
    let before = gated.appends.load(Ordering::SeqCst);
    let (seat, action) = game.next();
    let in_flight = {
        let (service, request) = (service.clone(), game.request(seat, action, ""));
        tokio::spawn(async move {
            service
                .act(Request::new(request))
                .await
                .unwrap()
                .into_inner()
                .seq
        })
    };
    while gated.appends.load(Ordering::SeqCst) == before {
        tokio::task::yield_now().await;
    }
    let watched_seat = (seat + 1) % 4;
    let (game_id, tokens) = (game.game_id.clone(), game.tokens.clone());
    let mut late_seat = watch_from(&service, &game_id, &tokens[watched_seat], saved).await;
    let mut late_spectator = watch_from(&service, &game_id, "", saved).await;
    gated.open.send_replace(true);
    assert_eq!(in_flight.await.unwrap(), saved + 1);

    // And the game goes on to its end.
    while !game.replica.is_over() {
        game.play_next(&service).await;
    }
    let last = registry.summaries()[0].last_seq;

    for (token, late) in [
        (&tokens[watched_seat], &mut late_seat),
        (&String::new(), &mut late_spectator),
    ] {
        let live: Vec<pb::Update> = late.map(|u| u.unwrap()).collect().await;
        let seqs: Vec<u64> = live.iter().map(|u| u.seq).collect();
        assert_eq!(
            seqs,
            (saved + 1..=last).collect::<Vec<_>>(),
            "a gap or a repeat"
        );
        // The same updates as a stream replaying the finished game from the log.
        let replayed: Vec<pb::Update> = watch_from(&service, &game_id, token, saved)
            .await
            .map(|u| u.unwrap())
            .collect()
            .await;
        assert_eq!(live, replayed, "a live update differs from the log's");
    }
}
