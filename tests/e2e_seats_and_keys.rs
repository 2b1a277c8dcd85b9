//! Who may do what, end to end against the real server: reserved seats (each joined only with
//! its own invitation, a retry gets the same seat), the admin and player keys on every RPC
//! (health excepted), CreateGame's create_id (a retry gets the same game, also after a
//! restart), ids reused for a different request, and the status precedence of a game that
//! is over.

use crate::common;

use common::*;
use gangs_proto::auth::ApiKey;
use gangs_proto::v1 as pb;
use tonic::Code;

fn reserved(create_id: &str) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        kind: "gang-of-four".into(),
        seed: Some(11),
        reserve_seats: true,
        create_id: create_id.into(),
        ..Default::default()
    }
}

fn join(game_id: &str, invitation: &str, join_id: &str, name: &str) -> pb::JoinGameRequest {
    pb::JoinGameRequest {
        game_id: game_id.into(),
        name: name.into(),
        join_id: join_id.into(),
        invitation: invitation.into(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reserved_seats_need_their_invitation_and_a_retry_gets_the_same_seat() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let created = client
        .create_game(reserved(""))
        .await
        .expect("create")
        .into_inner();
    assert_eq!(created.invitations.len(), created.players as usize);
    let game = created.game_id.clone();

    let missing = client
        .join_game(join(&game, "", "", "sniper"))
        .await
        .expect_err("no invitation");
    assert_eq!(missing.code(), Code::PermissionDenied);
    assert!(
        missing.message().contains("invitation"),
        "{}",
        missing.message()
    );
    let wrong = client
        .join_game(join(
            &game,
            "0123456789abcdef0123456789abcdef",
            "",
            "sniper",
        ))
        .await
        .expect_err("a wrong invitation");
    assert_eq!(wrong.code(), Code::PermissionDenied);

    // Seat 2's invitation takes seat 2, whatever seat is free first.
    let first = client
        .join_game(join(&game, &created.invitations[2], "j2", "two"))
        .await
        .expect("join with the invitation")
        .into_inner();
    assert_eq!(first.seat, 2);
    // A retry with the same invitation (even a new join_id) gets the same seat and token.
    let again = client
        .join_game(join(&game, &created.invitations[2], "another", "two"))
        .await
        .expect("retry")
        .into_inner();
    assert_eq!(again, first);
    // The invitation of seat 2 does not open seat 0.
    let mut other_seat = join(&game, &created.invitations[2], "", "two");
    other_seat.seat = Some(0);
    let refused = client
        .join_game(other_seat)
        .await
        .expect_err("not its seat");
    assert_eq!(refused.code(), Code::InvalidArgument);
    // The join_id j2 reused for a different join is a client bug, refused by name.
    let reused = client
        .join_game(join(&game, &created.invitations[2], "j2", "someone else"))
        .await
        .expect_err("join_id reused");
    assert_eq!(reused.code(), Code::InvalidArgument);
    assert!(reused.message().contains("\"j2\""), "{}", reused.message());

    // The invitations never show in the log.
    let records = log(&mut client, &game).await;
    let Some(pb::log_record::Record::Created(c)) = &records[0].record else {
        panic!("created first")
    };
    assert!(c.invitations.is_empty() && c.reserve_seats);

    // An open game refuses an invitation instead of ignoring it.
    let open = create(&mut client, "gang-of-four", None, 1).await;
    let refused = client
        .join_game(join(&open, &created.invitations[0], "", "x"))
        .await
        .expect_err("an invitation for an open game");
    assert_eq!(refused.code(), Code::InvalidArgument);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_id_returns_the_same_game_also_after_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path());
    let mut client = server.client().await;
    let first = client
        .create_game(reserved("c-1"))
        .await
        .expect("create")
        .into_inner();
    let again = client
        .create_game(reserved("c-1"))
        .await
        .expect("retry")
        .into_inner();
    assert_eq!(again, first);
    let mut different = reserved("c-1");
    different.kind = "the-gang".into();
    let refused = client
        .create_game(different)
        .await
        .expect_err("a different game");
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert!(
        refused.message().contains("\"c-1\""),
        "{}",
        refused.message()
    );

    server.restart();
    let mut client = server.client().await;
    let after = client
        .create_game(reserved("c-1"))
        .await
        .expect("retry after a restart")
        .into_inner();
    assert_eq!(after, first);
    let games = client
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect("list")
        .into_inner()
        .games;
    assert_eq!(games.len(), 1, "one game, however many retries");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_id_reused_for_another_action_is_refused_and_over_beats_stale() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let game = create(&mut client, "gang-of-four", None, 4).await;
    let mut tokens = Vec::new();
    // Gang of Four has 4 seats by default: the game starts when the fourth is taken.
    for seat in 0..4 {
        let joined = client
            .join_game(pb::JoinGameRequest {
                game_id: game.clone(),
                seat: Some(seat),
                ..Default::default()
            })
            .await
            .expect("join")
            .into_inner();
        tokens.push(joined.token);
    }
    // Find the seat to move and two of its legal actions.
    let mut mover = None;
    for (seat, token) in tokens.iter().enumerate() {
        let mut stream = client
            .watch(pb::WatchRequest {
                game_id: game.clone(),
                token: token.clone(),
                from_seq: 0,
                ..Default::default()
            })
            .await
            .expect("watch")
            .into_inner();
        let mut last = None;
        while let Ok(Ok(Some(update))) =
            tokio::time::timeout(std::time::Duration::from_millis(300), stream.message()).await
        {
            last = Some(update);
        }
        let last = last.expect("an update");
        if last.legal_actions.len() >= 2 {
            mover = Some((seat, last));
        }
    }
    let (seat, update) = mover.expect("a seat to move with a choice");
    let act = |action: &pb::GameAction, expected: Option<u64>| pb::ActRequest {
        game_id: game.clone(),
        token: tokens[seat].clone(),
        action: Some(action.clone()),
        expected_seq: expected,
        action_id: "a-1".into(),
    };
    let done = client
        .act(act(&update.legal_actions[0], Some(update.seq)))
        .await
        .expect("act")
        .into_inner();
    let retry = client
        .act(act(&update.legal_actions[0], Some(update.seq)))
        .await
        .expect("retry")
        .into_inner();
    assert_eq!(retry, done);
    let reused = client
        .act(act(&update.legal_actions[1], Some(update.seq)))
        .await
        .expect_err("a-1 reused for another action");
    assert_eq!(reused.code(), Code::InvalidArgument);
    assert!(reused.message().contains("\"a-1\""), "{}", reused.message());

    // Over beats stale: once cancelled, an act with a stale expected_seq is FAILED_PRECONDITION.
    client
        .cancel_game(pb::CancelGameRequest {
            game_id: game.clone(),
            reason: String::new(),
        })
        .await
        .expect("cancel");
    let mut stale = act(&update.legal_actions[1], Some(1));
    stale.action_id.clear();
    let over = client.act(stale).await.expect_err("the game is over");
    assert_eq!(over.code(), Code::FailedPrecondition, "{}", over.message());
}

/// A client that sends `key` (or nothing) with every call.
async fn keyed(server: &Server, key: Option<&str>) -> gangs_proto::auth::KeyedClient {
    let channel = tonic::transport::Endpoint::from_shared(server.url())
        .unwrap()
        .connect()
        .await
        .expect("connect");
    ApiKey::new(key).unwrap().client(channel)
}

/// Every RPC of the service with `client`: the status code of each (Ok for success).
async fn every_rpc(
    client: &mut gangs_proto::auth::KeyedClient,
    game: &str,
) -> Vec<(&'static str, Code)> {
    let code = |r: Result<(), tonic::Status>| r.err().map_or(Code::Ok, |s| s.code());
    vec![
        (
            "create",
            code(
                client
                    .create_game(pb::CreateGameRequest {
                        kind: "gang-of-four".into(),
                        ..Default::default()
                    })
                    .await
                    .map(drop),
            ),
        ),
        (
            "list",
            code(
                client
                    .list_games(pb::ListGamesRequest::default())
                    .await
                    .map(drop),
            ),
        ),
        (
            "watch",
            code(
                client
                    .watch(pb::WatchRequest {
                        game_id: game.into(),
                        ..Default::default()
                    })
                    .await
                    .map(drop),
            ),
        ),
        (
            "log",
            code(
                client
                    .get_log(pb::GetLogRequest {
                        game_id: game.into(),
                        from_seq: 0,
                    })
                    .await
                    .map(drop),
            ),
        ),
        (
            "join",
            code(
                client
                    .join_game(pb::JoinGameRequest {
                        game_id: game.into(),
                        ..Default::default()
                    })
                    .await
                    .map(drop),
            ),
        ),
        (
            // No token: past the key check, the seat check refuses it.
            "act",
            code(
                client
                    .act(pb::ActRequest {
                        game_id: game.into(),
                        ..Default::default()
                    })
                    .await
                    .map(drop),
            ),
        ),
        (
            "cancel",
            code(
                client
                    .cancel_game(pb::CancelGameRequest {
                        game_id: game.into(),
                        reason: "test".into(),
                    })
                    .await
                    .map(drop),
            ),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_guard_every_rpc_but_health() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_with(
        dir.path(),
        0,
        &["--api-key", "admin-secret", "--player-key", "player-secret"],
    );
    let mut admin = keyed(&server, Some("admin-secret")).await;
    let game = admin
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .expect("the admin creates")
        .into_inner()
        .game_id;

    // No key: every RPC is UNAUTHENTICATED, and says which metadata is missing.
    let mut anonymous = keyed(&server, None).await;
    for (rpc, code) in every_rpc(&mut anonymous, &game).await {
        assert_eq!(code, Code::Unauthenticated, "{rpc} without a key");
    }
    let missing = anonymous
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect_err("no key");
    assert!(
        missing.message().contains("authorization"),
        "{}",
        missing.message()
    );
    // A wrong key: PERMISSION_DENIED everywhere.
    let mut wrong = keyed(&server, Some("guess")).await;
    for (rpc, code) in every_rpc(&mut wrong, &game).await {
        assert_eq!(code, Code::PermissionDenied, "{rpc} with a wrong key");
    }
    // The player key: joins, watches, acts (the seat token decides), lists, reads logs; it
    // neither creates nor cancels.
    let mut player = keyed(&server, Some("player-secret")).await;
    for (rpc, code) in every_rpc(&mut player, &game).await {
        match rpc {
            "create" | "cancel" => assert_eq!(code, Code::PermissionDenied, "{rpc}"),
            "act" => assert_eq!(code, Code::InvalidArgument, "act without a token"),
            _ => assert_eq!(code, Code::Ok, "{rpc} with the player key"),
        }
    }
    // The admin key may do everything (the cancel comes last: the game is then over).
    for (rpc, code) in every_rpc(&mut admin, &game).await {
        match rpc {
            "act" => assert_eq!(code, Code::InvalidArgument, "act without a token"),
            _ => assert_eq!(code, Code::Ok, "{rpc} with the admin key"),
        }
    }
    // Health needs no key.
    let channel = tonic::transport::Endpoint::from_shared(server.url())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let health = tonic_health::pb::health_client::HealthClient::new(channel)
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await;
    assert!(health.is_ok(), "{health:?}");
}
