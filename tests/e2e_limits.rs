//! End to end: each limit of `gangs-server` reached over gRPC. A call past a limit is refused
//! with RESOURCE_EXHAUSTED naming the flag, changes nothing, and the limit frees up when what it
//! counts goes away (a game cancelled, a stream closed).

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use tonic::Code;

type Client = pb::games_client::GamesClient<tonic::transport::Channel>;

async fn try_create(client: &mut Client) -> Result<String, tonic::Status> {
    client
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner().game_id)
}

fn assert_exhausted(result: Result<impl std::fmt::Debug, tonic::Status>, flag: &str) {
    let status = result.expect_err("past the limit");
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains(flag), "{flag}: {status:?}");
}

async fn live_games(client: &mut Client) -> usize {
    let games = listed_games(client).await;
    games
        .iter()
        .filter(|g| g.status == pb::GameStatus::Waiting as i32)
        .count()
}

async fn spectate(
    client: &mut Client,
    game_id: &str,
) -> Result<tonic::Streaming<pb::Update>, tonic::Status> {
    client
        .watch(pb::WatchRequest {
            game_id: game_id.into(),
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner())
}

#[tokio::test]
async fn live_games_per_client_and_per_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        0,
        &["--max-live-games", "3", "--max-live-games-per-key", "2"],
    );
    let mut client = server.client().await;
    let first = try_create(&mut client).await.unwrap();
    try_create(&mut client).await.unwrap();
    // Without keys a client is its address: this one has its two.
    assert_exhausted(try_create(&mut client).await, "--max-live-games-per-key");
    assert_eq!(live_games(&mut client).await, 2, "nothing created");
    // A game over frees its place.
    client
        .cancel_game(pb::CancelGameRequest {
            game_id: first,
            reason: String::new(),
        })
        .await
        .unwrap();
    try_create(&mut client).await.unwrap();

    // With a key, the key is the client: the server's own limit comes first here.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        0,
        &["--max-live-games", "2", "--api-key", "adm1n"],
    );
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let key = gangs_proto::auth::ApiKey::new(Some("adm1n")).unwrap();
    let mut keyed = key.client(channel);
    for _ in 0..2 {
        keyed
            .create_game(pb::CreateGameRequest {
                kind: "the-gang".into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let status = keyed
        .create_game(pb::CreateGameRequest {
            kind: "the-gang".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().contains("(--max-live-games)"),
        "{status:?}"
    );
    assert!(
        !status.message().contains("adm1n"),
        "never the key: {status:?}"
    );
}

#[tokio::test]
async fn create_rate_per_client() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(dir.path(), 0, &["--create-rate", "2"]);
    let mut client = server.client().await;
    try_create(&mut client).await.unwrap();
    try_create(&mut client).await.unwrap();
    let result = try_create(&mut client).await;
    assert_exhausted(result, "--create-rate");
    assert_eq!(live_games(&mut client).await, 2, "nothing created");
}

#[tokio::test]
async fn watchers_per_game_and_per_connection() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        0,
        &[
            "--max-watchers-per-game",
            "2",
            "--max-watchers-per-connection",
            "3",
        ],
    );
    let mut client = server.client().await;
    let game = try_create(&mut client).await.unwrap();
    let other = try_create(&mut client).await.unwrap();
    let first = spectate(&mut client, &game).await.unwrap();
    let _second = spectate(&mut client, &game).await.unwrap();
    assert_exhausted(
        spectate(&mut client, &game).await,
        "--max-watchers-per-game",
    );
    // A closed stream frees its slot (the server sees the reset a moment later).
    drop(first);
    let mut reopened = None;
    for _ in 0..50 {
        match spectate(&mut client, &game).await {
            Ok(stream) => {
                reopened = Some(stream);
                break;
            }
            Err(status) => assert_eq!(status.code(), Code::ResourceExhausted),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let _reopened = reopened.expect("the closed stream's slot came back");
    let _third_on_connection = spectate(&mut client, &other).await.unwrap();
    assert_exhausted(
        spectate(&mut client, &other).await,
        "--max-watchers-per-connection",
    );
    // Another connection has its own count.
    let mut second_connection = server.client().await;
    spectate(&mut second_connection, &other).await.unwrap();
}

/// `--max-live-games-per-key` counts what exists after a restart: the live games each key
/// created, read back from the log. A CreateGame retried with its create_id at the limit is
/// answered with its game (it creates nothing), before and after the restart.
#[tokio::test]
async fn per_key_counts_survive_a_restart_and_retries_are_answered_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start_with(
        dir.path(),
        0,
        &["--api-key", "adm1n", "--max-live-games-per-key", "2"],
    );
    let key = gangs_proto::auth::ApiKey::new(Some("adm1n")).unwrap();
    let connect = |server: &Server| {
        let url = server.url();
        let key = key.clone();
        async move {
            let channel = gangs_proto::connect::endpoint(&url, None)
                .unwrap()
                .connect()
                .await
                .unwrap();
            key.client(channel)
        }
    };
    let request = |create_id: &str| pb::CreateGameRequest {
        kind: "gang-of-four".into(),
        create_id: create_id.into(),
        ..Default::default()
    };
    let mut keyed = connect(&server).await;
    let first = keyed.create_game(request("c1")).await.unwrap().into_inner();
    let second = keyed.create_game(request("")).await.unwrap().into_inner();
    assert_exhausted(
        keyed.create_game(request("c2")).await,
        "--max-live-games-per-key",
    );
    // The retry of a creation that succeeded: its game, not a refusal.
    let again = keyed.create_game(request("c1")).await.unwrap().into_inner();
    assert_eq!(again, first);

    server.restart();
    let mut keyed = connect(&server).await;
    assert_exhausted(
        keyed.create_game(request("c3")).await,
        "--max-live-games-per-key",
    );
    let again = keyed.create_game(request("c1")).await.unwrap().into_inner();
    assert_eq!(again, first, "the same game after the restart");
    // A create_id reused for another game is still refused as such.
    let other = keyed
        .create_game(pb::CreateGameRequest {
            kind: "the-gang".into(),
            create_id: "c1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(other.code(), Code::InvalidArgument, "{other:?}");
    // A game over frees its place, as before the restart.
    keyed
        .cancel_game(pb::CancelGameRequest {
            game_id: second.game_id,
            reason: String::new(),
        })
        .await
        .unwrap();
    keyed.create_game(request("c4")).await.unwrap();
    assert_exhausted(
        keyed.create_game(request("c5")).await,
        "--max-live-games-per-key",
    );
}
