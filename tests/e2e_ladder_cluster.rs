//! End to end: a ladder on a cluster (`--store nats://`). Two real `gangs-server`
//! nodes on one real `nats-server`:
//! - a ladder created through A is listed by B at once (no restart), and its name is refused
//!   through B;
//! - A runs the ladder (its matchmaker's gauge is on A, not on B);
//! - four bots, two queued through each node, are matched together: every game of four seats
//!   needs the bots of both nodes, so B's bots reach A's matchmaker through B (forwarded);
//!   bots registered through B are A's entries; the standings read the same through both;
//! - A is SIGKILLed with ladder games in play while every bot queues through B: B takes the
//!   ladder's turn once A's lease is over, runs its unfinished games and matches on; every bot
//!   finishes its games, no game is lost or rated twice, every game replays, and rerating the
//!   ladder from the games' logs gives the kept standings.

use crate::common;
use crate::e2e_ladder::{
    create_ladder, every_game_over, ladder_bot, ladder_games, ladders, register, standings, until,
    LADDER,
};
use crate::e2e_nats_cluster::wait_for_health;

use common::observe::{free_port, scrape};
use common::*;
use gangs_proto::v1 as pb;
use std::time::Duration;
use tonic_health::pb::health_check_response::ServingStatus;

const QUEUED: &str = "gangs_ladder_bots_queued{ladder=\"class\"}";

fn node(store: &str, dir: &std::path::Path, metrics_port: u16) -> Server {
    let metrics = format!("127.0.0.1:{metrics_port}");
    Server::start_with(dir, 0, &["--store", store, "--metrics", metrics.as_str()])
}

/// Waits until every bot exited 0.
fn all_succeed(bots: &mut [Bot], secs: u64) {
    for bot in bots {
        let status = wait_with_timeout(bot, Duration::from_secs(secs));
        assert!(status.success(), "a ladder bot failed: {status:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ladder_runs_on_one_node_and_is_played_through_every_node() {
    let nats = tokio::task::spawn_blocking(common::nats::single)
        .await
        .unwrap();
    let store = common::nats::store_url(std::slice::from_ref(&nats));
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let ports = [free_port(), free_port()];
    let mut a = node(&store, dirs[0].path(), ports[0]);
    let b = node(&store, dirs[1].path(), ports[1]);

    let (code, out) = create_ladder(
        &a,
        "gang-of-four",
        &["--option", "target_score=1", "--turn-ms", "300"],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = gangs_cli(&b, &["ladder", "list", "--json"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("\"{LADDER}\"")),
        "B lists the ladder made through A at once: {out}"
    );
    let (code, out) = create_ladder(&b, "the-gang", &[]);
    assert_ne!(
        code, 0,
        "a second ladder of the same name was made through B"
    );
    assert!(out.contains("exists already"), "{out}");

    let names = ["greedy", "random-a", "random-b", "random-c"];
    let keys: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, name)| register(if i < 2 { &a } else { &b }, name))
        .collect();
    let binary = |i: usize| {
        if i == 0 {
            "gangs-bot-greedy"
        } else {
            "gangs-bot-random"
        }
    };

    // Two bots through each node: every game seats bots of both.
    let mut bots: Vec<Bot> = (0..4)
        .map(|i| {
            let via = if i < 2 { &a } else { &b };
            ladder_bot(binary(i), via, &keys[i], Some(3), i as u64 + 1)
        })
        .collect();
    // A runs the ladder: its matchmaker reports the queued bots on A.
    until("A's matchmaker reports the queued bots", 60, || {
        let port = ports[0];
        async move { scrape(port).contains(QUEUED) }
    })
    .await;
    all_succeed(&mut bots, 180);
    // B ran no matchmaker of the ladder in all that time (a gauge once set stays in the
    // scrape). Read now, judged below once B shows it reports the gauge when it runs one.
    let b_while_a_ran_it = scrape(ports[1]);

    let mut on_a = ladders(&a).await;
    let mut on_b = ladders(&b).await;
    let first = standings(&mut on_a).await;
    assert_eq!(first.standings, standings(&mut on_b).await.standings);
    for row in &first.standings {
        assert_eq!(row.games, 3, "{row:?}");
    }
    assert_eq!(ladder_games(&mut on_b).await.len(), 3);

    // Every bot through B; A dies with games in play.
    let mut bots: Vec<Bot> = (0..4)
        .map(|i| ladder_bot(binary(i), &b, &keys[i], Some(6), i as u64 + 11))
        .collect();
    until("two more games rated", 120, || {
        let mut on_b = on_b.clone();
        async move {
            ladder_games(&mut on_b)
                .await
                .iter()
                .filter(|g| g.outcome.is_some())
                .count()
                >= 5
        }
    })
    .await;
    a.kill9();
    all_succeed(&mut bots, 240);
    // B takes the ladder over once A's turn expires (the bots may have finished before A
    // died: fast games on a quiet machine).
    until("B runs the ladder now", 60, || {
        let port = ports[1];
        async move { scrape(port).contains(QUEUED) }
    })
    .await;
    assert!(
        !b_while_a_ran_it.contains(QUEUED),
        "B ran a matchmaker of the ladder while A held it"
    );

    a.restart();
    // A serves once it holds its share again (B has handed shards back): before, calls for
    // the games of a shard in hand-over answer UNAVAILABLE ("changing hands"), and the CLI
    // below does not retry.
    wait_for_health(&a, ServingStatus::Serving).await;
    wait_for_health(&b, ServingStatus::Serving).await;
    let mut on_a = ladders(&a).await;
    // A game matched to bots that were done is played on its clocks: give it time.
    every_game_over(&on_b, 300).await;
    // A game is rated as it ends, and the last may end just now: wait until the table counts
    // every game listed (a game counted twice would keep it waiting, and fail below).
    until("every game counted in the table", 60, || {
        let mut on_b = on_b.clone();
        async move {
            let games = ladder_games(&mut on_b).await;
            let table = standings(&mut on_b).await.standings;
            games.iter().all(|g| g.finished_unix_ms.is_some())
                && table.iter().all(|row| row.games as usize == games.len())
        }
    })
    .await;
    let games = ladder_games(&mut on_a).await;
    assert_eq!(games, ladder_games(&mut on_b).await);
    // 3 + 6 games each; a game matched while a stream broke may come on top (played on the
    // clock once its bots are done).
    assert!((9..=12).contains(&games.len()), "{games:?}");
    let last = standings(&mut on_b).await;
    assert_eq!(last.standings, standings(&mut on_a).await.standings);
    for row in &last.standings {
        assert_eq!(
            row.games as usize,
            games.len(),
            "each game rated once: {row:?}"
        );
    }
    for game in &games {
        assert!(!game.void, "{game:?}");
        let (code, out) = gangs_cli(&b, &["replay", &game.game_id, "--verify"]);
        assert_eq!(code, 0, "{}: {out}", game.game_id);
    }
    let (code, out) = gangs_cli(&a, &["ladder", "rerate", LADDER]);
    assert_eq!(code, 0, "{out}");

    // B, running the ladder now, stops cleanly (its forwarded and own streams end) and A takes
    // the ladder over.
    let mut b = b;
    b.terminate();
    until("A runs the ladder after B stopped", 60, || {
        let mut on_a = on_a.clone();
        let want = last.standings.clone();
        async move {
            on_a.standings(pb::StandingsRequest {
                ladder: LADDER.into(),
                fit: false,
                season: 0,
            })
            .await
            .is_ok_and(|s| s.into_inner().standings == want)
        }
    })
    .await;
}
