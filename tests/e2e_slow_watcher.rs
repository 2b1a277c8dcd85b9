//! End to end: a watcher that stops reading never stalls the game. Once it falls more than
//! `--watch-buffer` updates behind it is cut off with RESOURCE_EXHAUSTED and a message saying
//! how to resume, and resuming from its last seq continues with no gap.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use rand::{Rng, SeedableRng};
use tonic::transport::Endpoint;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_watcher_is_cut_off_and_resumes_by_seq() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(dir.path(), 0, &["--watch-buffer", "4"]);
    let mut client = server.client().await;
    let pairs = vec![("target_score".to_string(), "1000".to_string())];
    let options = gangs_games::parse_options("gang-of-four", Some(4), &pairs).unwrap();
    let game_id = create(&mut client, "gang-of-four", Some(options), 3).await;
    let mut tokens = Vec::new();
    for seat in 0..4 {
        let join = pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(seat),
            name: String::new(),
            join_id: String::new(),
            ..Default::default()
        };
        tokens.push(client.join_game(join).await.unwrap().into_inner().token);
    }

    // A spectator on its own connection with a small flow-control window, which stops reading.
    let channel = Endpoint::from_shared(server.url())
        .unwrap()
        .initial_stream_window_size(Some(4096))
        .connect()
        .await
        .unwrap();
    let mut stuck = GamesClient::new(channel)
        .watch(pb::WatchRequest {
            game_id: game_id.clone(),
            token: String::new(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let first = stuck.message().await.unwrap().unwrap();
    assert_eq!(first.seq, 1);

    // Play on, choosing random legal actions from a local replica of the game: every action is
    // answered although the spectator reads nothing.
    let mut replica = gangs_games::new_game("gang-of-four", Some(&options), 3, None).unwrap();
    replica.start();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for _ in 0..2500 {
        if replica.is_over() {
            break;
        }
        let (seat, actions) = (0..4)
            .map(|s| (s, replica.legal_actions(s)))
            .find(|(_, a)| !a.is_empty())
            .unwrap();
        let action = actions[rng.random_range(0..actions.len())].clone();
        replica.act(seat, &action).unwrap();
        let request = pb::ActRequest {
            game_id: game_id.clone(),
            token: tokens[seat].clone(),
            action: Some(action),
            expected_seq: None,
            action_id: String::new(),
        };
        client
            .act(request)
            .await
            .expect("the game never waits for a watcher");
    }

    // The stuck spectator gets what was buffered, then the status that tells it what to do.
    let mut last_seq = first.seq;
    let status = loop {
        match stuck.message().await {
            Ok(Some(update)) => {
                assert_eq!(update.seq, last_seq + 1, "gap before the cut-off");
                last_seq = update.seq;
            }
            Ok(None) => panic!("the stream ended without saying why (after seq {last_seq})"),
            Err(status) => break status,
        }
    };
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().contains("from_seq"),
        "{}",
        status.message()
    );
    let total = status_of(&mut client, &game_id).await;
    assert!(last_seq < total, "the watcher was cut off before the end");

    // Resuming from the last seq received continues with no gap and no duplicate.
    let mut resumed = client
        .watch(pb::WatchRequest {
            game_id: game_id.clone(),
            token: String::new(),
            from_seq: last_seq,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let next = resumed.message().await.unwrap().unwrap();
    assert_eq!(next.seq, last_seq + 1);
}

async fn status_of(client: &mut GamesClient<tonic::transport::Channel>, game_id: &str) -> u64 {
    status(client, game_id).await.last_seq
}
