//! Joining is safe to retry: the same `join_id` gets the first answer back (same seat, same
//! token), before and after a server crash, and adds nothing to the log; another id cannot take
//! the seat; the id never appears in the public log.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use tonic::Code;

fn join(game_id: &str, seat: Option<u32>, join_id: &str) -> pb::JoinGameRequest {
    pb::JoinGameRequest {
        game_id: game_id.to_string(),
        seat,
        name: "retrying bot".into(),
        join_id: join_id.to_string(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_retried_with_its_join_id_gets_the_first_answer_even_after_a_crash() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path());
    let mut client = server.client().await;
    let game_id = create(&mut client, "gang-of-four", None, 5).await;

    let first = client
        .join_game(join(&game_id, Some(1), "5f1c0ffee"))
        .await
        .expect("join")
        .into_inner();
    assert_eq!(first.seat, 1);
    let log_len = log(&mut client, &game_id).await.len();

    // The answer was "lost": the retry (here without the seat) gets it again, nothing new.
    let again = client
        .join_game(join(&game_id, None, "5f1c0ffee"))
        .await
        .expect("retry")
        .into_inner();
    assert_eq!(again, first);
    assert_eq!(log(&mut client, &game_id).await.len(), log_len);

    // Anyone else asking for that seat is refused.
    let taken = client
        .join_game(join(&game_id, Some(1), "another-client"))
        .await
        .expect_err("seat 1 is taken");
    assert_eq!(taken.code(), Code::FailedPrecondition);
    let too_long = client
        .join_game(join(&game_id, None, &"x".repeat(200)))
        .await
        .expect_err("an oversized join_id");
    assert_eq!(too_long.code(), Code::InvalidArgument);
    assert!(
        too_long.message().contains("join_id"),
        "{}",
        too_long.message()
    );

    // After a crash the server still knows the id.
    server.kill9();
    server.restart();
    let mut client = server.client().await;
    let after = client
        .join_game(join(&game_id, Some(1), "5f1c0ffee"))
        .await
        .expect("retry after the restart")
        .into_inner();
    assert_eq!(after, first);

    // The public log shows the join, never its token or join_id.
    let records = log(&mut client, &game_id).await;
    assert_eq!(records.len(), log_len);
    for record in records {
        if let Some(pb::log_record::Record::Joined(j)) = record.record {
            assert!(j.token.is_empty() && j.join_id.is_empty(), "{j:?}");
        }
    }
}
