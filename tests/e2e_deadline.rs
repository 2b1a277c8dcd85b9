//! End to end: The Gang's `phase_deadline_ms` is timed by the host. With nobody acting, every
//! chip phase closes by itself (chipless seats get the remaining chips), each expiry is logged
//! as an `expired` record, the timer is re-armed after a SIGKILL and restart, and the game
//! reaches its end on deadlines alone.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chip_phases_expire_on_their_deadline_even_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let mut client = server.client().await;
    let pairs = vec![("phase_deadline_ms".to_string(), "150".to_string())];
    let options = gangs_games::parse_options("the-gang", Some(3), &pairs).unwrap();
    let game_id = create(&mut client, "the-gang", Some(options), 77).await;
    for seat in 0..3 {
        let join = pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(seat),
            name: String::new(),
            join_id: String::new(),
            ..Default::default()
        };
        client.join_game(join).await.unwrap();
    }
    // The opening update announces when the white phase closes.
    let mut stream = client
        .watch(pb::WatchRequest {
            game_id: game_id.clone(),
            token: String::new(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut saw_deadline = false;
    let mut last_seq = 0;
    while let Ok(Some(update)) = tokio::time::timeout(Duration::from_secs(10), stream.message())
        .await
        .unwrap()
    {
        saw_deadline |= update.deadline_unix_ms.is_some();
        last_seq = update.seq;
        if update.seq >= 7 {
            break;
        }
    }
    assert!(
        saw_deadline,
        "a chip phase with a deadline shows it in the update"
    );
    assert!(last_seq >= 7, "the phases did not expire by themselves");
    drop(stream);

    server.restart();
    let mut client = server.client().await;
    let mut finished = false;
    for _ in 0..600 {
        if status(&mut client, &game_id).await.status == pb::GameStatus::Finished as i32 {
            finished = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        finished,
        "after the restart the deadlines did not carry the game to its end"
    );
    let records = log(&mut client, &game_id).await;
    let expiries = records
        .iter()
        .filter(|r| matches!(r.record, Some(pb::log_record::Record::Expired(_))))
        .count();
    assert!(
        expiries >= 12,
        "3 heists of 4 streets at least: only {expiries} expiries logged"
    );
    assert!(
        !records
            .iter()
            .any(|r| matches!(r.record, Some(pb::log_record::Record::Acted(_)))),
        "nobody acted"
    );
    gangs_games::replay::replay(&records).expect("expiries replay like actions");
}
