//! Updates are built only for the audiences someone watches. The hard case: a watcher arrives
//! for a seat nobody watched while a record is still being saved (applied, not durable): it
//! must still get that record, once durable, with the view it had then, then every later
//! record live, in order, without a gap or a repeat; and the same updates a watcher replaying
//! the whole game from the log gets.

use gangs_proto::v1 as pb;
use gangs_service::actor::Settings;
use gangs_service::api::GamesService;
use gangs_service::registry::Registry;
use gangs_service::store::sled::SledStore;
use gangs_service::store::{Durable, LogStore, Store, StoreError};
use pb::games_server::Games;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::watch;
use tokio_stream::StreamExt;
use tonic::Request;

/// The sled log, whose appends wait while the gate is shut (a slow disk), counted as they come.
struct Gated {
    inner: Store,
    open: watch::Sender<bool>,
    appends: AtomicUsize,
}

#[async_trait::async_trait]
impl LogStore for Gated {
    fn append(&self, game_id: &str, records: Vec<pb::LogRecord>) -> Durable {
        self.appends.fetch_add(1, Ordering::SeqCst);
        let (done, rx) = tokio::sync::oneshot::channel();
        let (inner, game_id, mut open) = (
            self.inner.clone(),
            game_id.to_string(),
            self.open.subscribe(),
        );
        tokio::spawn(async move {
            let _ = open.wait_for(|&open| open).await;
            let result = match inner.append(&game_id, records).await {
                Ok(result) => result,
                Err(_) => Err(StoreError::unavailable("the store stopped")),
            };
            let _ = done.send(result);
        });
        rx
    }

    async fn read_range(
        &self,
        game_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<pb::LogRecord>, StoreError> {
        self.inner.read_range(game_id, after_seq, limit).await
    }

    async fn game_ids(&self) -> Result<Vec<String>, StoreError> {
        self.inner.game_ids().await
    }

    async fn delete_game(&self, game_id: &str) -> Result<(), StoreError> {
        self.inner.delete_game(game_id).await
    }
}

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
        }))
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_arriving_while_a_record_is_saved_gets_it_and_all_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (sled, _closer) = SledStore::open(dir.path()).unwrap();
    let gated = Arc::new(Gated {
        inner: sled,
        open: watch::channel(true).0,
        appends: AtomicUsize::new(0),
    });
    let store: Store = gated.clone();
    // The late watchers are read after the game's end: room for all of it.
    let settings = Settings {
        watcher_buffer: 10_000,
        ..Settings::default()
    };
    let registry = Registry::restore(store, settings).await.unwrap();
    let service = Arc::new(GamesService::new(registry.clone(), None));

    let options = gangs_games::parse_options("gang-of-four", Some(4), &[]).unwrap();
    let game_id = service
        .create_game(Request::new(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            options: Some(options),
            seed: Some(8),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .game_id;
    let mut tokens = Vec::new();
    for seat in 0..4 {
        let joined = service
            .join_game(Request::new(pb::JoinGameRequest {
                game_id: game_id.clone(),
                seat: Some(seat),
                name: format!("p{seat}"),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        tokens.push(joined.token);
    }
    let mut replica = gangs_games::new_game("gang-of-four", Some(&options), 8, None).unwrap();
    replica.start();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
    let mut next = |replica: &dyn gangs_games::Game| {
        let (seat, legal) = (0..4)
            .map(|s| (s, replica.legal_actions(s)))
            .find(|(_, a)| !a.is_empty())
            .unwrap();
        (seat, legal[rng.random_range(0..legal.len())].clone())
    };
    let act = |seat: usize, action: pb::GameAction| {
        let (service, game_id, token) = (service.clone(), game_id.clone(), tokens[seat].clone());
        tokio::spawn(async move {
            let request = pb::ActRequest {
                game_id,
                token,
                action: Some(action),
                ..Default::default()
            };
            service
                .act(Request::new(request))
                .await
                .unwrap()
                .into_inner()
                .seq
        })
    };
    // Nobody watches: a few actions.
    for _ in 0..3 {
        let (seat, action) = next(&*replica);
        replica.act(seat, &action).unwrap();
        act(seat, action).await.unwrap();
    }
    let saved = registry.summaries()[0].last_seq;

    // The disk stalls with the next action applied, not durable; then a seat nobody watched
    // and a spectator start watching from the last durable seq.
    gated.open.send_replace(false);
    let before = gated.appends.load(Ordering::SeqCst);
    let (seat, action) = next(&*replica);
    replica.act(seat, &action).unwrap();
    let in_flight = act(seat, action);
    while gated.appends.load(Ordering::SeqCst) == before {
        tokio::task::yield_now().await;
    }
    let watched_seat = (seat + 1) % 4;
    let mut late_seat = watch_from(&service, &game_id, &tokens[watched_seat], saved).await;
    let mut late_spectator = watch_from(&service, &game_id, "", saved).await;
    gated.open.send_replace(true);
    assert_eq!(in_flight.await.unwrap(), saved + 1);

    // And the game goes on to its end.
    while !replica.is_over() {
        let (seat, action) = next(&*replica);
        replica.act(seat, &action).unwrap();
        act(seat, action).await.unwrap();
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
