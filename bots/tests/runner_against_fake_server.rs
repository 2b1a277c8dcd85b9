//! The bot runner against a scripted in-process gRPC server (no rules, no real host): it must
//! act once on the newest update of a burst, with `expected_seq` and a deterministic action
//! id; retry the same action id after the connection breaks; retry a join with the same join
//! id; stop loudly on refusals and on a policy that cheats.

use gangs_bots::{play, BotArgs, BotError, Policy};
use gangs_proto::v1 as pb;
use pb::games_server::{Games, GamesServer};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tonic::{Request, Response, Status};

const GAME: &str = "g1";
const SEAT: u32 = 1;

/// Two distinct actions (the per-game messages do not matter here).
fn action(n: usize) -> pb::GameAction {
    use pb::game_action::Game;
    pb::GameAction {
        game: Some(if n == 0 {
            Game::GangOfFour(Default::default())
        } else {
            Game::TheGang(Default::default())
        }),
    }
}

fn update(seq: u64, legal: Vec<pb::GameAction>, status: pb::GameStatus) -> pb::Update {
    pb::Update {
        seq,
        legal_actions: legal,
        status: status as i32,
        seat: Some(SEAT),
        seats_taken: 2,
        ..Default::default()
    }
}

#[derive(Default)]
struct Script {
    /// Every update of the seat so far.
    history: Vec<pb::Update>,
    /// Open watch streams.
    watchers: Vec<mpsc::Sender<Result<pb::Update, Status>>>,
    /// How the next `Act` calls answer (Ok when empty).
    act_answers: VecDeque<Status>,
    /// Every `Act` received.
    acts: Vec<pb::ActRequest>,
    /// Every `from_seq` watched from.
    watches: Vec<u64>,
    join_error: Option<Status>,
    /// How the next `JoinGame` calls answer after recording the join (Ok when empty): a lost
    /// answer to a join the server did make.
    join_answers: VecDeque<Status>,
    /// Every `JoinGame` received.
    joins: Vec<pb::JoinGameRequest>,
}

#[derive(Clone, Default)]
struct FakeServer(Arc<Mutex<Script>>);

impl FakeServer {
    fn publish(script: &mut Script, update: pb::Update) {
        script.history.push(update.clone());
        for watcher in &script.watchers {
            let _ = watcher.try_send(Ok(update.clone()));
        }
    }
}

#[tonic::async_trait]
impl Games for FakeServer {
    async fn create_game(
        &self,
        _: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        Err(Status::unimplemented("fake"))
    }

    async fn join_game(
        &self,
        request: Request<pb::JoinGameRequest>,
    ) -> Result<Response<pb::JoinGameResponse>, Status> {
        let mut script = self.0.lock().unwrap();
        if let Some(error) = &script.join_error {
            return Err(error.clone());
        }
        assert_eq!(request.get_ref().game_id, GAME);
        script.joins.push(request.get_ref().clone());
        if let Some(lost) = script.join_answers.pop_front() {
            return Err(lost);
        }
        Ok(Response::new(pb::JoinGameResponse {
            seat: SEAT,
            token: "secret".into(),
            seq: 2,
        }))
    }

    type WatchStream = ReceiverStream<Result<pb::Update, Status>>;

    async fn watch(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let request = request.into_inner();
        assert_eq!(request.token, "secret");
        let (sender, receiver) = mpsc::channel(64);
        let mut script = self.0.lock().unwrap();
        script.watches.push(request.from_seq);
        for update in script.history.iter().filter(|u| u.seq > request.from_seq) {
            sender.try_send(Ok(update.clone())).unwrap();
        }
        script.watchers.push(sender);
        Ok(Response::new(ReceiverStream::new(receiver)))
    }

    async fn act(
        &self,
        request: Request<pb::ActRequest>,
    ) -> Result<Response<pb::ActResponse>, Status> {
        let mut script = self.0.lock().unwrap();
        script.acts.push(request.into_inner());
        if let Some(error) = script.act_answers.pop_front() {
            if error.code() == tonic::Code::Unavailable {
                // A "restart": every stream is cut.
                script.watchers.clear();
            } else {
                // Someone else moved first: a newer update offers actions again.
                let seq = script.history.last().map_or(0, |u| u.seq) + 1;
                FakeServer::publish(
                    &mut script,
                    update(seq, vec![action(0)], pb::GameStatus::Running),
                );
            }
            return Err(error);
        }
        let seq = script.history.last().map_or(0, |u| u.seq) + 1;
        FakeServer::publish(&mut script, update(seq, vec![], pb::GameStatus::Finished));
        Ok(Response::new(pb::ActResponse {
            seq,
            events: vec![],
        }))
    }

    type GetLogStream = ReceiverStream<Result<pb::LogRecord, Status>>;

    async fn get_log(
        &self,
        _: Request<pb::GetLogRequest>,
    ) -> Result<Response<Self::GetLogStream>, Status> {
        Err(Status::unimplemented("fake"))
    }

    async fn list_games(
        &self,
        _: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        Err(Status::unimplemented("fake"))
    }

    type WatchGamesStream = ReceiverStream<Result<pb::WatchGamesResponse, Status>>;

    async fn watch_games(
        &self,
        _: Request<pb::WatchGamesRequest>,
    ) -> Result<Response<Self::WatchGamesStream>, Status> {
        Err(Status::unimplemented("fake"))
    }

    async fn import_game(
        &self,
        _: Request<tonic::Streaming<pb::ImportGameRequest>>,
    ) -> Result<Response<pb::ImportGameResponse>, Status> {
        Err(Status::unimplemented("fake"))
    }

    async fn cancel_game(
        &self,
        _: Request<pb::CancelGameRequest>,
    ) -> Result<Response<pb::CancelGameResponse>, Status> {
        Err(Status::unimplemented("fake"))
    }
}

/// Serves `fake` on a free port; returns its URL.
async fn serve(fake: FakeServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(GamesServer::new(fake))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    url
}

fn args(url: String) -> BotArgs {
    BotArgs {
        server: url,
        ca: None,
        game: Some(GAME.into()),
        seat: None,
        name: None,
        token: None,
        matched: false,
        seed: Some(1),
        quiet: true,
        invitation: None,
        api_key: None,
        ladder: Default::default(),
    }
}

/// Plays the last legal action, and counts the updates it was asked about.
#[derive(Default)]
struct LastAction {
    asked: Vec<u64>,
}

impl Policy for LastAction {
    fn name(&self) -> &str {
        "last"
    }
    fn choose(&mut self, update: &pb::Update) -> Option<pb::GameAction> {
        self.asked.push(update.seq);
        update.legal_actions.last().cloned()
    }
}

async fn run(fake: &FakeServer, policy: impl Policy) -> Result<gangs_bots::GameOver, BotError> {
    let url = serve(fake.clone()).await;
    tokio::time::timeout(Duration::from_secs(20), play(args(url), policy))
        .await
        .expect("the bot should finish within 20 s")
}

#[tokio::test]
async fn acts_once_on_the_newest_update_of_a_burst() {
    let fake = FakeServer::default();
    {
        let mut script = fake.0.lock().unwrap();
        // Catch-up: seq 1 offered actions, but seq 2 is the present.
        script
            .history
            .push(update(1, vec![action(0)], pb::GameStatus::Running));
        script.history.push(update(
            2,
            vec![action(0), action(1)],
            pb::GameStatus::Running,
        ));
    }
    let over = run(&fake, LastAction::default()).await.unwrap();
    assert_eq!(over.seq, 3);
    assert_eq!(over.seat, Some(SEAT));
    let script = fake.0.lock().unwrap();
    assert_eq!(script.watches, [1], "watch from just before the join's seq");
    assert_eq!(script.acts.len(), 1);
    let act = &script.acts[0];
    assert_eq!(act.expected_seq, Some(2));
    assert_eq!(act.action_id, "bot:g1:seat1:seq2");
    assert_eq!(act.action, Some(action(1)));
    assert_eq!(act.token, "secret");
}

#[tokio::test]
async fn retries_the_same_action_id_after_the_connection_breaks() {
    let fake = FakeServer::default();
    {
        let mut script = fake.0.lock().unwrap();
        script
            .history
            .push(update(2, vec![action(0)], pb::GameStatus::Running));
        script
            .act_answers
            .push_back(Status::unavailable("simulated restart"));
    }
    let over = run(&fake, LastAction::default()).await.unwrap();
    assert_eq!(over.seq, 3);
    let script = fake.0.lock().unwrap();
    assert_eq!(script.acts.len(), 2);
    assert_eq!(script.acts[0].action_id, script.acts[1].action_id);
    assert_eq!(script.acts[1].expected_seq, Some(2));
    // The second watch starts just before the last seq seen, so seq 2 comes again.
    assert_eq!(script.watches, [1, 1]);
}

#[tokio::test]
async fn retries_a_join_with_the_same_join_id_after_a_lost_answer() {
    let fake = FakeServer::default();
    {
        let mut script = fake.0.lock().unwrap();
        script
            .history
            .push(update(2, vec![action(0)], pb::GameStatus::Running));
        script.join_answers.push_back(Status::unavailable(
            "simulated crash after the join was saved",
        ));
    }
    run(&fake, LastAction::default()).await.unwrap();
    let script = fake.0.lock().unwrap();
    assert_eq!(script.joins.len(), 2);
    assert!(script.joins[0].join_id.len() >= 32, "a random join id");
    assert_eq!(script.joins[0].join_id, script.joins[1].join_id);
}

#[tokio::test]
async fn a_stale_action_waits_for_the_next_update() {
    let fake = FakeServer::default();
    {
        let mut script = fake.0.lock().unwrap();
        script
            .history
            .push(update(2, vec![action(0)], pb::GameStatus::Running));
        script.act_answers.push_back(Status::aborted("stale seq"));
    }
    let over = run(&fake, LastAction::default()).await.unwrap();
    assert_eq!(over.seq, 4);
    let script = fake.0.lock().unwrap();
    let expected: Vec<_> = script.acts.iter().map(|a| a.expected_seq).collect();
    assert_eq!(expected, [Some(2), Some(3)]);
    assert_eq!(script.watches, [1], "no reconnect for a stale action");
}

#[tokio::test]
async fn a_refused_join_is_an_error() {
    let fake = FakeServer::default();
    fake.0.lock().unwrap().join_error = Some(Status::not_found("no game g1"));
    let error = run(&fake, LastAction::default()).await.unwrap_err();
    assert!(matches!(error, BotError::Refused { .. }), "{error}");
    assert!(error.to_string().contains("no game g1"));
}

/// Plays something that was not offered.
struct Cheater;

impl Policy for Cheater {
    fn name(&self) -> &str {
        "cheater"
    }
    fn choose(&mut self, _: &pb::Update) -> Option<pb::GameAction> {
        Some(action(1))
    }
}

#[tokio::test]
async fn an_illegal_choice_is_a_loud_error() {
    let fake = FakeServer::default();
    fake.0
        .lock()
        .unwrap()
        .history
        .push(update(2, vec![action(0)], pb::GameStatus::Running));
    let error = run(&fake, Cheater).await.unwrap_err();
    assert!(
        matches!(error, BotError::IllegalChoice { seq: 2, .. }),
        "{error}"
    );
    assert!(fake.0.lock().unwrap().acts.is_empty());
}
