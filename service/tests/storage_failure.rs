//! A storage failure costs retries, not the game: the callers whose records were not saved are
//! refused (UNAVAILABLE, nothing acknowledged), the game's streams end, and once the store
//! works again the next call reloads the game from the log and play goes on from there, a
//! retried action (same action_id) included. Before, a failed append left the game out of
//! service until the process restarted; on a cluster that stalled a game for good when a NATS
//! outage outlasted the append's retry budget.

use gangs_proto::v1 as pb;
use gangs_service::actor::Settings;
use gangs_service::api::GamesService;
use gangs_service::registry::Registry;
use gangs_service::store::sled::SledStore;
use gangs_service::store::{Durable, LogStore, Store, StoreError};
use pb::games_server::Games;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio_stream::StreamExt;
use tonic::{Code, Request};

/// The sled log, whose appends fail while `failing` is set (a disk or network outage).
struct Outage {
    inner: Store,
    failing: AtomicBool,
}

#[async_trait::async_trait]
impl LogStore for Outage {
    fn append(&self, game_id: &str, records: Vec<pb::LogRecord>) -> Durable {
        if self.failing.load(Ordering::SeqCst) {
            let (done, rx) = tokio::sync::oneshot::channel();
            let _ = done.send(Err(StoreError::unavailable(
                "the disk is gone (test outage)",
            )));
            return rx;
        }
        self.inner.append(game_id, records)
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

fn act_request(game_id: &str, token: &str, action: &pb::GameAction, id: &str) -> pb::ActRequest {
    pb::ActRequest {
        game_id: game_id.to_string(),
        token: token.to_string(),
        action: Some(action.clone()),
        expected_seq: None,
        action_id: id.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_comes_back_from_the_log_after_a_storage_outage() {
    let dir = tempfile::tempdir().unwrap();
    let (sled, _closer) = SledStore::open(dir.path()).unwrap();
    let outage = Arc::new(Outage {
        inner: sled,
        failing: AtomicBool::new(false),
    });
    let store: Store = outage.clone();
    let registry = Registry::restore(store, Settings::default()).await.unwrap();
    let service = GamesService::new(registry.clone(), None);

    let options = gangs_games::parse_options("gang-of-four", Some(3), &[]).unwrap();
    let game_id = service
        .create_game(Request::new(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            options: Some(options),
            seed: Some(5),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .game_id;
    let mut tokens = Vec::new();
    for seat in 0..3 {
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
    let mut replica = gangs_games::new_game("gang-of-four", Some(&options), 5, None).unwrap();
    replica.start();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut next = |replica: &dyn gangs_games::Game| {
        let (seat, legal) = (0..3)
            .map(|s| (s, replica.legal_actions(s)))
            .find(|(_, a)| !a.is_empty())
            .unwrap();
        (seat, legal[rng.random_range(0..legal.len())].clone())
    };
    for i in 0..3 {
        let (seat, action) = next(&*replica);
        replica.act(seat, &action).unwrap();
        let request = act_request(&game_id, &tokens[seat], &action, &format!("a{i}"));
        service.act(Request::new(request)).await.unwrap();
    }
    let saved = registry.summaries()[0].last_seq;
    let mut spectator = service
        .watch(Request::new(pb::WatchRequest {
            game_id: game_id.clone(),
            token: String::new(),
            from_seq: saved,
        }))
        .await
        .unwrap()
        .into_inner();

    // The disk goes: the action is refused as unavailable, and so is its retry meanwhile.
    outage.failing.store(true, Ordering::SeqCst);
    let (seat, action) = next(&*replica);
    let request = act_request(&game_id, &tokens[seat], &action, "during");
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

    // The disk is back: the same action, retried with the same id, is applied once, at the
    // seq after the last saved record.
    outage.failing.store(false, Ordering::SeqCst);
    let answer = service
        .act(Request::new(request))
        .await
        .expect("the game came back from the log")
        .into_inner();
    assert_eq!(answer.seq, saved + 1);
    replica.act(seat, &action).unwrap();
    for i in 0..3 {
        let (seat, action) = next(&*replica);
        replica.act(seat, &action).unwrap();
        let request = act_request(&game_id, &tokens[seat], &action, &format!("b{i}"));
        service.act(Request::new(request)).await.unwrap();
    }
    let log: Vec<pb::LogRecord> = service
        .get_log(Request::new(pb::GetLogRequest {
            game_id: game_id.clone(),
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
