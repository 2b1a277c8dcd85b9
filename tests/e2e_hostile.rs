//! End to end, as an attacker would try from outside: huge ids and words, oversized requests,
//! out-of-range time options and extreme enum values. Each gets a clear status naming the field
//! or limit, with a short message (never tonic's "metadata size exceeds hard limit"), and the
//! server goes on serving.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use tonic::Code;

/// The message is short: it quotes at most ~80 bytes of what was sent.
fn assert_clear(status: &tonic::Status, code: Code, needle: &str) {
    assert_eq!(status.code(), code, "{:?}", status.message());
    assert!(
        status.message().contains(needle),
        "{:?} should mention {needle:?}",
        status.message()
    );
    assert!(
        status.message().len() < 400,
        "a {} byte message",
        status.message().len()
    );
}

fn the_gang_options(deadline: Option<u64>) -> pb::GameOptions {
    pb::GameOptions {
        game: Some(pb::game_options::Game::TheGang(pb::TheGangOptions {
            players: Some(3),
            phase_deadline_ms: deadline,
            ..Default::default()
        })),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn huge_ids_and_words_get_a_clear_status() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let huge = "g".repeat(60_000);

    let status = client
        .join_game(pb::JoinGameRequest {
            game_id: huge.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_clear(&status, Code::InvalidArgument, "game_id is 60000 bytes");
    let status = client
        .watch(pb::WatchRequest {
            game_id: huge.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_clear(&status, Code::InvalidArgument, "game_id");
    let status = client
        .get_log(pb::GetLogRequest {
            game_id: huge[..20_000].to_string(),
            from_seq: 0,
        })
        .await
        .unwrap_err();
    assert_clear(&status, Code::InvalidArgument, "game_id");
    let status = client
        .act(pb::ActRequest {
            game_id: "0123456789abcdef".into(),
            token: huge.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_clear(&status, Code::InvalidArgument, "token");
    // A plausible id that is no game's: NOT_FOUND, quoting it.
    let status = client
        .join_game(pb::JoinGameRequest {
            game_id: "0123456789abcdef".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_clear(&status, Code::NotFound, "0123456789abcdef");

    // A real game, a seat, and action words of 2 KB and 20 KB.
    let game_id = create(&mut client, "gang-of-four", None, 5).await;
    let joined = client
        .join_game(pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(0),
            ..Default::default()
        })
        .await
        .expect("join")
        .into_inner();
    let give = |word: String| pb::GameAction {
        game: Some(pb::game_action::Game::GangOfFour(pb::GangOfFourAction {
            kind: Some(pb::gang_of_four_action::Kind::GiveBack(
                pb::gang_of_four_action::GiveBack {
                    card_id: None,
                    card_word: word,
                },
            )),
        })),
    };
    let status = client
        .act(pb::ActRequest {
            game_id: game_id.clone(),
            token: joined.token.clone(),
            action: Some(give("w".repeat(20_000))),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_clear(&status, Code::InvalidArgument, "action is");
    let status = client
        .act(pb::ActRequest {
            game_id: game_id.clone(),
            token: joined.token.clone(),
            action_id: "a".repeat(5_000),
            action: Some(give("y3".into())),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_clear(&status, Code::InvalidArgument, "action_id");
    let status = client
        .join_game(pb::JoinGameRequest {
            game_id: game_id.clone(),
            name: "n".repeat(30_000),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_clear(&status, Code::InvalidArgument, "name");
    // Nothing changed: one seat taken, two records (created, joined).
    let summary = status_of(&mut client, &game_id).await;
    assert_eq!((summary.seats_taken, summary.last_seq), (1, 2));
}

async fn status_of(
    client: &mut pb::games_client::GamesClient<tonic::transport::Channel>,
    game_id: &str,
) -> pb::GameSummary {
    status(client, game_id).await
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_requests_are_refused_naming_the_limit_and_its_flag() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_with(dir.path(), 0, &["--max-request-bytes", "2048"]);
    let mut client = server.client().await;
    let status = client
        .join_game(pb::JoinGameRequest {
            game_id: "0123456789abcdef".into(),
            name: "n".repeat(3_000),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_clear(&status, Code::ResourceExhausted, "--max-request-bytes");
    assert!(status.message().contains("2048"), "{}", status.message());
    // The connection and the server still serve.
    let game_id = create(&mut client, "gang-of-four", None, 1).await;
    assert_eq!(status_of(&mut client, &game_id).await.last_seq, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn time_options_outside_their_range_and_extreme_enums_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    for bad in [0, 1 << 63, u64::MAX] {
        let status = client
            .create_game(pb::CreateGameRequest {
                kind: "the-gang".into(),
                options: Some(the_gang_options(Some(bad))),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_clear(&status, Code::InvalidArgument, "phase_deadline_ms must be");
    }
    assert!(client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .games
        .is_empty());

    // A running The Gang game, and a guess whose category is i32::MIN: refused, the game's
    // actor alive (a debug build panics on overflow, which would kill it).
    let game_id = create(&mut client, "the-gang", Some(the_gang_options(None)), 3).await;
    let mut tokens = Vec::new();
    for seat in 0..3 {
        let joined = client
            .join_game(pb::JoinGameRequest {
                game_id: game_id.clone(),
                seat: Some(seat),
                ..Default::default()
            })
            .await
            .expect("join")
            .into_inner();
        tokens.push(joined.token);
    }
    let guess = pb::GameAction {
        game: Some(pb::game_action::Game::TheGang(pb::TheGangAction {
            kind: Some(pb::the_gang_action::Kind::Guess(
                pb::the_gang_action::Guess {
                    value: Some(pb::TheGangGuessValue {
                        value: Some(pb::the_gang_guess_value::Value::Category(i32::MIN)),
                    }),
                },
            )),
        })),
    };
    let before = status_of(&mut client, &game_id).await.last_seq;
    for token in &tokens {
        let status = client
            .act(pb::ActRequest {
                game_id: game_id.clone(),
                token: token.clone(),
                action: Some(guess.clone()),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    }
    // The actor still answers, and nothing was logged.
    let mut stream = client
        .watch(pb::WatchRequest {
            game_id: game_id.clone(),
            token: tokens[0].clone(),
            from_seq: before - 1,
            ..Default::default()
        })
        .await
        .expect("the game still answers")
        .into_inner();
    let update = stream.message().await.expect("update").expect("one");
    assert_eq!(update.seq, before);
    assert_eq!(status_of(&mut client, &game_id).await.last_seq, before);
}
