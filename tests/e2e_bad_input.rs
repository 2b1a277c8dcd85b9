//! End to end: every kind of bad input is refused with its own gRPC status and a message a
//! bot author understands, and the game is left exactly as it was.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use prost::Message;
use tonic::transport::Channel;
use tonic::Code;

/// Deal 1 of the preset: seat 0 holds ids 0..16 (all the 1s, the multicolor 1 among them),
/// seat 1 ids 16..32, seat 2 ids 32..48, seat 3 ids 48..64 (8s to 10s, Phoenixes, Dragon).
fn preset() -> pb::PresetDeals {
    let hand = |start: u32| pb::gang_of_four_preset::Hand {
        card_ids: (start..start + 16).collect(),
    };
    pb::PresetDeals {
        game: Some(pb::preset_deals::Game::GangOfFour(pb::GangOfFourPreset {
            deals: vec![pb::gang_of_four_preset::Deal {
                hands: vec![hand(0), hand(16), hand(32), hand(48)],
            }],
        })),
    }
}

fn play(ids: &[u32]) -> pb::GameAction {
    pb::GameAction {
        game: Some(pb::game_action::Game::GangOfFour(pb::GangOfFourAction {
            kind: Some(pb::gang_of_four_action::Kind::Play(
                pb::gang_of_four_action::Play {
                    card_ids: ids.to_vec(),
                    ..Default::default()
                },
            )),
        })),
    }
}

fn act(game_id: &str, token: &str, action: pb::GameAction) -> pb::ActRequest {
    pb::ActRequest {
        game_id: game_id.into(),
        token: token.into(),
        action: Some(action),
        expected_seq: None,
        action_id: String::new(),
    }
}

/// The newest update of a seat, and the game's last seq.
async fn snapshot(client: &mut GamesClient<Channel>, game_id: &str, token: &str) -> (u64, Vec<u8>) {
    let last_seq = status(client, game_id).await.last_seq;
    let mut stream = client
        .watch(pb::WatchRequest {
            game_id: game_id.into(),
            token: token.into(),
            from_seq: last_seq - 1,
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    let update = stream.message().await.expect("update").expect("one update");
    assert_eq!(update.seq, last_seq);
    (last_seq, update.view.expect("view").encode_to_vec())
}

fn assert_refused<T: std::fmt::Debug>(result: Result<T, tonic::Status>, code: Code, needle: &str) {
    let status = result.expect_err("the request must be refused");
    assert_eq!(status.code(), code, "wrong code for {:?}", status.message());
    assert!(
        status
            .message()
            .to_lowercase()
            .contains(&needle.to_lowercase()),
        "the message {:?} should mention {needle:?}",
        status.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let mut client = server.client().await;

    // Creating: unknown kind, options out of range, options of the other game.
    assert_refused(
        client
            .create_game(pb::CreateGameRequest {
                kind: "chess".into(),
                ..Default::default()
            })
            .await,
        Code::InvalidArgument,
        "chess",
    );
    let seven = pb::GameOptions {
        game: Some(pb::game_options::Game::GangOfFour(pb::GangOfFourOptions {
            players: Some(7),
            ..Default::default()
        })),
    };
    assert_refused(
        client
            .create_game(pb::CreateGameRequest {
                kind: "gang-of-four".into(),
                options: Some(seven),
                ..Default::default()
            })
            .await,
        Code::InvalidArgument,
        "players",
    );
    let gang_options = gangs_games::parse_options("the-gang", Some(4), &[]).unwrap();
    assert_refused(
        client
            .create_game(pb::CreateGameRequest {
                kind: "gang-of-four".into(),
                options: Some(gang_options),
                ..Default::default()
            })
            .await,
        Code::InvalidArgument,
        "options",
    );
    assert!(client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .games
        .is_empty());

    let game_id = client
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            seed: Some(5),
            preset: Some(preset()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .game_id;

    // Unknown game, everywhere.
    assert_refused(
        client
            .join_game(pb::JoinGameRequest {
                game_id: "nope".into(),
                ..Default::default()
            })
            .await,
        Code::NotFound,
        "nope",
    );
    assert_refused(
        client.act(act("nope", "t", play(&[6]))).await,
        Code::NotFound,
        "nope",
    );
    assert_refused(
        client
            .watch(pb::WatchRequest {
                game_id: "nope".into(),
                ..Default::default()
            })
            .await,
        Code::NotFound,
        "nope",
    );
    assert_refused(
        client
            .get_log(pb::GetLogRequest {
                game_id: "nope".into(),
                from_seq: 0,
            })
            .await,
        Code::NotFound,
        "nope",
    );

    // Joining: a seat that does not exist, a name too long, then a taken seat.
    let join = |seat: Option<u32>, name: &str| pb::JoinGameRequest {
        game_id: game_id.clone(),
        seat,
        name: name.into(),
        join_id: String::new(),
        ..Default::default()
    };
    assert_refused(
        client.join_game(join(Some(4), "x")).await,
        Code::InvalidArgument,
        "seat 4",
    );
    assert_refused(
        client.join_game(join(None, &"x".repeat(65))).await,
        Code::InvalidArgument,
        "name",
    );
    let mut tokens = Vec::new();
    tokens.push(
        client
            .join_game(join(Some(0), "zero"))
            .await
            .unwrap()
            .into_inner()
            .token,
    );
    assert_refused(
        client.join_game(join(Some(0), "again")).await,
        Code::FailedPrecondition,
        "taken",
    );
    assert_refused(
        client.act(act(&game_id, &tokens[0], play(&[6]))).await,
        Code::FailedPrecondition,
        "not started",
    );
    for seat in 1..4 {
        let token = client
            .join_game(join(Some(seat), "p"))
            .await
            .unwrap()
            .into_inner()
            .token;
        assert_eq!(token.len(), 32, "a token carries 128 bits");
        tokens.push(token);
    }
    assert_refused(
        client.join_game(join(None, "late")).await,
        Code::FailedPrecondition,
        "full",
    );

    let before = snapshot(&mut client, &game_id, &tokens[0]).await;

    // Tokens: missing, wrong, and one of another game.
    assert_refused(
        client.act(act(&game_id, "", play(&[6]))).await,
        Code::InvalidArgument,
        "token",
    );
    assert_refused(
        client.act(act(&game_id, "0123", play(&[6]))).await,
        Code::PermissionDenied,
        "token",
    );
    let other = create(&mut client, "gang-of-four", None, 9).await;
    let other_token = client
        .join_game(pb::JoinGameRequest {
            game_id: other.clone(),
            seat: Some(0),
            name: "o".into(),
            join_id: String::new(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .token;
    assert_refused(
        client.act(act(&game_id, &other_token, play(&[6]))).await,
        Code::PermissionDenied,
        "token",
    );
    assert_refused(
        client
            .watch(pb::WatchRequest {
                game_id: game_id.clone(),
                token: other_token,
                from_seq: 0,
                ..Default::default()
            })
            .await,
        Code::PermissionDenied,
        "token",
    );

    // Out of turn: seat 1 is not the leader (seat 0 holds the multicolor 1).
    assert_refused(
        client.act(act(&game_id, &tokens[1], play(&[16]))).await,
        Code::FailedPrecondition,
        "turn",
    );
    // The first lead must contain the multicolor 1.
    assert_refused(
        client.act(act(&game_id, &tokens[0], play(&[7]))).await,
        Code::InvalidArgument,
        "multicolor",
    );
    // Unknown card ids, a card the seat does not hold, an empty action, a stale seq.
    assert_refused(
        client.act(act(&game_id, &tokens[0], play(&[99]))).await,
        Code::InvalidArgument,
        "99",
    );
    assert_refused(
        client.act(act(&game_id, &tokens[0], play(&[6, 40]))).await,
        Code::InvalidArgument,
        "40",
    );
    assert_refused(
        client
            .act(pb::ActRequest {
                action: None,
                ..act(&game_id, &tokens[0], play(&[6]))
            })
            .await,
        Code::InvalidArgument,
        "action",
    );
    assert_refused(
        client
            .act(pb::ActRequest {
                expected_seq: Some(before.0 - 1),
                ..act(&game_id, &tokens[0], play(&[6]))
            })
            .await,
        Code::Aborted,
        "seq",
    );
    // An oversized request.
    let huge = play(&vec![6; 100_000]);
    let result = client.act(act(&game_id, &tokens[0], huge)).await;
    assert!(result.is_err(), "an oversized request must be refused");
    assert_eq!(
        snapshot(&mut client, &game_id, &tokens[0]).await,
        before,
        "refusals changed the game"
    );

    // Legal: seat 0 leads the multicolor 1; play goes counter-clockwise to seat 3.
    let seq = client
        .act(pb::ActRequest {
            expected_seq: Some(before.0),
            ..act(&game_id, &tokens[0], play(&[6]))
        })
        .await
        .expect("the multicolor 1 leads")
        .into_inner()
        .seq;
    assert_eq!(seq, before.0 + 1);
    let before = snapshot(&mut client, &game_id, &tokens[3]).await;
    assert_refused(
        client.act(act(&game_id, &tokens[3], play(&[49, 50]))).await,
        Code::InvalidArgument,
        "single",
    );
    client
        .act(act(&game_id, &tokens[3], play(&[48])))
        .await
        .expect("r8 beats the multicolor 1");
    let before_two = snapshot(&mut client, &game_id, &tokens[2]).await;
    assert!(before_two.0 > before.0);
    // Seat 2 tries a green 6 on the red 8.
    assert_refused(
        client.act(act(&game_id, &tokens[2], play(&[32]))).await,
        Code::InvalidArgument,
        "beat",
    );
    assert_eq!(
        snapshot(&mut client, &game_id, &tokens[2]).await,
        before_two,
        "refusals changed the game"
    );

    // A retry with the same action id is applied once and answered the same.
    let pass = pb::GameAction {
        game: Some(pb::game_action::Game::GangOfFour(pb::GangOfFourAction {
            kind: Some(pb::gang_of_four_action::Kind::Pass(
                pb::gang_of_four_action::Pass {},
            )),
        })),
    };
    let first = client
        .act(pb::ActRequest {
            action_id: "pass-1".into(),
            ..act(&game_id, &tokens[2], pass.clone())
        })
        .await
        .unwrap()
        .into_inner();
    let again = client
        .act(pb::ActRequest {
            action_id: "pass-1".into(),
            ..act(&game_id, &tokens[2], pass)
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first, again);
    assert_eq!(
        status(&mut client, &game_id).await.last_seq,
        first.seq,
        "the retry was applied twice"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_key_guards_game_creation() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(bin("gangs-server"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--api-key",
            "s3cret",
            "--data-dir",
        ])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let addr = line.trim().rsplit(' ').next().unwrap().to_string();
    let mut client = GamesClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let request = || pb::CreateGameRequest {
        kind: "gang-of-four".into(),
        ..Default::default()
    };
    assert_refused(
        client.create_game(request()).await,
        Code::Unauthenticated,
        "requires a key to create games",
    );
    let mut wrong = tonic::Request::new(request());
    wrong
        .metadata_mut()
        .insert("authorization", "Bearer nope".parse().unwrap());
    assert_refused(
        client.create_game(wrong).await,
        Code::PermissionDenied,
        "wrong key",
    );
    let mut right = tonic::Request::new(request());
    right
        .metadata_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    assert!(client.create_game(right).await.is_ok());
    let _ = child.kill();
    let _ = child.wait();
}
