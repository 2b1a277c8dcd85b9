//! Shared by the service's in-process tests: a Gang of Four game seated through the service with
//! a local replica that picks random legal actions, a log store whose appends a test can make
//! fail (an outage) or wait (a slow disk), and a log store in memory.

#![allow(dead_code)]

pub mod journal;
pub mod ladder_host;

use gangs_proto::v1 as pb;
use gangs_service::api::GamesService;
use gangs_service::store::{Durable, EncodedRecord, LogStore, Store, StoreError};
use pb::games_server::Games;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::watch;
use tokio_stream::StreamExt;
use tonic::Request;

/// A Gang of Four game created and fully seated through `service`, with the replica the test
/// plays it with.
pub struct Seated {
    pub game_id: String,
    pub tokens: Vec<String>,
    pub replica: Box<dyn gangs_games::Game>,
    rng: rand_chacha::ChaCha8Rng,
}

impl Seated {
    /// `options` as `--option` pairs (`target_score=20`).
    pub async fn gang_of_four(
        service: &GamesService,
        players: usize,
        options: &[(&str, &str)],
        seed: u64,
    ) -> Seated {
        let players = players as u32;
        let (game_id, options, tokens) =
            create_and_seat(service, "gang-of-four", players, players, options, seed).await;
        let mut replica =
            gangs_games::new_game("gang-of-four", Some(&options), seed, None).unwrap();
        replica.start();
        Seated {
            game_id,
            tokens,
            replica,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// A random legal action of the seat that may act, applied to the replica.
    pub fn next(&mut self) -> (usize, pb::GameAction) {
        let (seat, legal) = (0..self.replica.players())
            .map(|s| (s, self.replica.legal_actions(s)))
            .find(|(_, a)| !a.is_empty())
            .expect("someone may act");
        let action = legal[self.rng.random_range(0..legal.len())].clone();
        self.replica.act(seat, &action).unwrap();
        (seat, action)
    }

    /// The `Act` request of `seat` playing `action`.
    pub fn request(&self, seat: usize, action: pb::GameAction, action_id: &str) -> pb::ActRequest {
        pb::ActRequest {
            game_id: self.game_id.clone(),
            token: self.tokens[seat].clone(),
            action: Some(action),
            expected_seq: None,
            action_id: action_id.to_string(),
        }
    }

    /// Plays the replica's next action through `service`; its seq.
    pub async fn play_next(&mut self, service: &GamesService) -> u64 {
        let (seat, action) = self.next();
        let request = self.request(seat, action, "");
        service
            .act(Request::new(request))
            .await
            .unwrap()
            .into_inner()
            .seq
    }
}

/// A game of `kind` created through `service` with `options` (`--option` pairs, e.g.
/// `target_score=20`), `players` seats and `seed`, of which the first `seated` are taken (named
/// `p0`, `p1`, …): its id, its options as parsed, and the taken seats' tokens.
pub async fn create_and_seat(
    service: &GamesService,
    kind: &str,
    players: u32,
    seated: u32,
    options: &[(&str, &str)],
    seed: u64,
) -> (String, pb::GameOptions, Vec<String>) {
    let pairs: Vec<(String, String)> = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let options = gangs_games::parse_options(kind, Some(players), &pairs).unwrap();
    let game_id = service
        .create_game(Request::new(pb::CreateGameRequest {
            kind: kind.into(),
            options: Some(options),
            seed: Some(seed),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .game_id;
    let mut tokens = Vec::new();
    for seat in 0..seated {
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
    (game_id, options, tokens)
}

/// A game's whole log, read through `service` (`GetLog` from the start).
pub async fn log_of(service: &GamesService, game_id: &str) -> Vec<pb::LogRecord> {
    let request = Request::new(pb::GetLogRequest {
        game_id: game_id.to_string(),
        from_seq: 0,
    });
    let stream = service.get_log(request).await.unwrap().into_inner();
    stream.map(|r| r.unwrap()).collect().await
}

/// A log store over another whose appends fail while `failing` is set (a disk or network
/// outage) and wait while the gate is shut (a slow disk), counted as they come.
pub struct TestStore {
    inner: Store,
    pub failing: AtomicBool,
    pub open: watch::Sender<bool>,
    pub appends: AtomicUsize,
}

impl TestStore {
    pub fn over(inner: Store) -> TestStore {
        TestStore {
            inner,
            failing: AtomicBool::new(false),
            open: watch::channel(true).0,
            appends: AtomicUsize::new(0),
        }
    }
}

#[async_trait::async_trait]
impl LogStore for TestStore {
    fn append_encoded(
        &self,
        game_id: &str,
        records: Vec<EncodedRecord>,
        marked: Vec<u64>,
    ) -> Durable {
        self.appends.fetch_add(1, Ordering::SeqCst);
        if !self.failing.load(Ordering::SeqCst) && *self.open.borrow() {
            return self.inner.append_encoded(game_id, records, marked);
        }
        let (done, rx) = tokio::sync::oneshot::channel();
        if self.failing.load(Ordering::SeqCst) {
            let _ = done.send(Err(StoreError::unavailable(
                "the disk is gone (test outage)",
            )));
            return rx;
        }
        // Shut: released when the gate opens (in no set order: shut it for one append at a time).
        let (inner, game_id) = (self.inner.clone(), game_id.to_string());
        let mut open = self.open.subscribe();
        tokio::spawn(async move {
            let _ = open.wait_for(|&open| open).await;
            let result = match inner.append_encoded(&game_id, records, marked).await {
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

    /// Forwarded: the store takes a game's appends again after a failure only once it is
    /// loaded to be written.
    async fn load_to_write(&self, game_id: &str) -> Result<Vec<pb::LogRecord>, StoreError> {
        self.inner.load_to_write(game_id).await
    }

    async fn delete_game(&self, game_id: &str) -> Result<(), StoreError> {
        self.inner.delete_game(game_id).await
    }

    async fn delete_games(&self, game_ids: &[String]) -> Vec<Result<(), StoreError>> {
        self.inner.delete_games(game_ids).await
    }
}

/// A log store in memory: an append is durable at once, on no thread of its own. For tests on
/// tokio's paused time, where a store's own threads (sled's flusher) would let the paused clock
/// jump ahead to the next timer while the runtime waits for them.
///
/// Each handle may be cut ([`MemoryStore::cut`]), as a process killed: from then on nothing
/// given to that handle becomes durable and nothing is read through it (every call waits
/// forever), while another handle on the same logs ([`MemoryStore::reopened`]) serves the
/// next incarnation.
#[derive(Default)]
pub struct MemoryStore {
    games: std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, Vec<pb::LogRecord>>>>,
    cut: AtomicBool,
}

impl MemoryStore {
    /// Another handle on the same logs, not cut.
    pub fn reopened(&self) -> MemoryStore {
        MemoryStore {
            games: self.games.clone(),
            cut: AtomicBool::new(false),
        }
    }

    /// Cuts this handle: what it is given from now on is lost, what it is asked never answers.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
    }

    /// Waits forever once this handle is cut.
    async fn alive(&self) {
        if self.cut.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
    }
}

#[async_trait::async_trait]
impl LogStore for MemoryStore {
    fn append_encoded(
        &self,
        game_id: &str,
        records: Vec<EncodedRecord>,
        _marked: Vec<u64>,
    ) -> Durable {
        let (done, rx) = tokio::sync::oneshot::channel();
        if self.cut.load(Ordering::SeqCst) {
            // Never durable, never refused: the process that asked is gone.
            std::mem::forget(done);
            return rx;
        }
        self.games
            .lock()
            .unwrap()
            .entry(game_id.to_string())
            .or_default()
            .extend(records.into_iter().map(|r| r.record));
        let _ = done.send(Ok(()));
        rx
    }

    async fn read_range(
        &self,
        game_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<pb::LogRecord>, StoreError> {
        self.alive().await;
        let games = self.games.lock().unwrap();
        Ok(games
            .get(game_id)
            .map(|log| {
                log.iter()
                    .filter(|r| r.seq > after_seq)
                    .take(limit)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn game_ids(&self) -> Result<Vec<String>, StoreError> {
        self.alive().await;
        Ok(self.games.lock().unwrap().keys().cloned().collect())
    }

    async fn delete_game(&self, game_id: &str) -> Result<(), StoreError> {
        self.alive().await;
        self.games.lock().unwrap().remove(game_id);
        Ok(())
    }
}
