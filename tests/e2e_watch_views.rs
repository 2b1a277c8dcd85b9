//! End to end: `WatchRequest.views = WATCH_VIEWS_WHEN_NEEDED`. A seat watching that way is
//! played by its updates alone: each update that lists legal actions carries the view, as does
//! the first update of every stream (a resume) and the one that ends the game; every other
//! update is exactly the default stream's update without its view, so it never shows a card
//! the default stream does not (whose updates `e2e_visibility` walks for leaks). A value that is
//! not a `WatchViews` is refused.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use rand::SeedableRng;
use tonic::transport::Channel;
use tonic::{Code, Streaming};

/// Actions played before the game is cancelled (the end of a game is tested by the cancel).
const ACTIONS: usize = 40;

async fn watch(
    client: &mut GamesClient<Channel>,
    game_id: &str,
    token: &str,
    from_seq: u64,
    views: pb::WatchViews,
) -> Streaming<pb::Update> {
    client
        .watch(pb::WatchRequest {
            game_id: game_id.into(),
            token: token.into(),
            from_seq,
            views: views as i32,
        })
        .await
        .expect("watch")
        .into_inner()
}

/// Every update of a stream, until the server ends it (the game is over).
fn collect(mut stream: Streaming<pb::Update>) -> tokio::task::JoinHandle<Vec<pb::Update>> {
    tokio::spawn(async move {
        let mut updates = Vec::new();
        while let Some(update) = stream.message().await.expect("update") {
            updates.push(update);
        }
        updates
    })
}

/// Checks a views-when-needed stream against the default stream of the same audience, update
/// by update: the same updates, the view kept exactly where it is needed. (Before the game
/// starts no update has a view.)
fn assert_when_needed(light: &[pb::Update], full: &[pb::Update], who: &str) {
    assert_eq!(
        light.iter().map(|u| u.seq).collect::<Vec<_>>(),
        full.iter().map(|u| u.seq).collect::<Vec<_>>(),
        "{who}: both streams carry the same updates"
    );
    let mut left_out = 0;
    for (i, (light, full)) in light.iter().zip(full).enumerate() {
        let over = pb::GameStatus::is_over_code(full.status);
        if i == 0 || over || !full.legal_actions.is_empty() {
            assert_eq!(light, full, "{who}: seq {} needs its view", full.seq);
        } else {
            let mut without_view = full.clone();
            without_view.view = None;
            assert_eq!(
                light, &without_view,
                "{who}: seq {} is the update without its view",
                full.seq
            );
            left_out += usize::from(full.view.is_some());
        }
    }
    assert!(left_out > 0, "{who}: some update went without its view");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_watching_views_when_needed_has_its_view_to_act_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let game_id = create(&mut client, "gang-of-four", None, 11).await;

    // Not a WatchViews value: refused, naming the field.
    let refused = client
        .watch(pb::WatchRequest {
            game_id: game_id.clone(),
            views: 7,
            ..Default::default()
        })
        .await
        .expect_err("views 7 is not a value");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("views 7"), "{refused:?}");

    let mut tokens = Vec::new();
    for seat in 0..4 {
        let join = pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(seat),
            ..Default::default()
        };
        tokens.push(client.join_game(join).await.unwrap().into_inner().token);
    }
    // Each seat and the spectator, both ways, from the start to the end.
    let mut streams = Vec::new();
    for token in tokens.iter().map(String::as_str).chain([""]) {
        let light = watch(&mut client, &game_id, token, 0, pb::WatchViews::WhenNeeded).await;
        let full = watch(&mut client, &game_id, token, 0, pb::WatchViews::Unspecified).await;
        streams.push((collect(light), collect(full)));
    }

    // Played from views-when-needed resumes only: each step, every seat watches again from the
    // newest update (which must then carry its view) and the one with legal actions plays.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut late = None;
    for step in 0..ACTIONS {
        let last_seq = status(&mut client, &game_id).await.last_seq;
        if step == ACTIONS / 2 {
            // A spectator arriving now, with nothing to catch up: its first update is the
            // next record's, and carries the view.
            late = Some(
                watch(
                    &mut client,
                    &game_id,
                    "",
                    last_seq,
                    pb::WatchViews::WhenNeeded,
                )
                .await,
            );
        }
        let mut acted = false;
        for token in &tokens {
            let mut resumed = watch(
                &mut client,
                &game_id,
                token,
                last_seq - 1,
                pb::WatchViews::WhenNeeded,
            )
            .await;
            let update = resumed.message().await.unwrap().expect("the newest update");
            assert_eq!(update.seq, last_seq);
            assert!(update.view.is_some(), "a resume starts with the view");
            if act_at_random(&mut client, &game_id, token, &update, &mut rng).await {
                acted = true;
                break;
            }
        }
        assert!(acted, "nobody could act at seq {last_seq}");
    }
    client
        .cancel_game(pb::CancelGameRequest {
            game_id: game_id.clone(),
            reason: "enough".into(),
        })
        .await
        .expect("cancel");

    for (who, (light, full)) in streams.into_iter().enumerate() {
        let who = if who < 4 {
            format!("seat {who}")
        } else {
            "spectator".into()
        };
        let (light, full) = (light.await.unwrap(), full.await.unwrap());
        assert!(
            pb::GameStatus::is_over_code(light.last().expect("updates").status),
            "{who}: the stream ends with the game"
        );
        assert_when_needed(&light, &full, &who);
        // A seat acts on its light stream alone: every update listing actions has its view.
        for update in light.iter().filter(|u| !u.legal_actions.is_empty()) {
            assert!(
                update.view.is_some(),
                "{who}: seq {} lists actions without the view",
                update.seq
            );
        }
    }

    // The late spectator: its first update has the view, the next ones do not until the end.
    let mut late = late.expect("opened halfway");
    let first = late.message().await.unwrap().expect("first update");
    assert!(
        first.view.is_some(),
        "the first update of a stream has the view"
    );
    let second = late.message().await.unwrap().expect("second update");
    assert!(
        second.view.is_none(),
        "a spectator's later update goes without the view"
    );

    // A catch-up from the middle of the finished game: its first update has the view, and the
    // rest follow the rule (checked against the default stream's catch-up).
    let from = (ACTIONS / 2) as u64;
    let light = collect(
        watch(
            &mut client,
            &game_id,
            &tokens[0],
            from,
            pb::WatchViews::WhenNeeded,
        )
        .await,
    );
    let full = collect(
        watch(
            &mut client,
            &game_id,
            &tokens[0],
            from,
            pb::WatchViews::EveryUpdate,
        )
        .await,
    );
    let (light, full) = (light.await.unwrap(), full.await.unwrap());
    assert_eq!(light.first().map(|u| u.seq), Some(from + 1));
    assert_when_needed(&light, &full, "seat 0's catch-up");
}
