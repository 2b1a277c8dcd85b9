//! End to end: timers are not starved. Two clients flood one game with actions the
//! game refuses (a pass out of turn, a card nobody holds, a stale seq: each one a command its
//! actor must answer) while no seat plays, so every decision ends by its seat's clock. Every
//! `timed_out` record in the log says how long its decision was open (`used_ms`, measured by the
//! server against the record before it); the clock allowed `turn_ms`, so `used_ms - turn_ms` is
//! how late the deadline fired. It must stay within 100 ms.
//! One client plays a card nobody holds (refused by the engine), the other passes with a
//! stale `expected_seq` (refused before the engine).

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

type Client = pb::games_client::GamesClient<tonic::transport::Channel>;

const TURN_MS: u64 = 250;
/// The bound: a deadline fires within 100 ms of its time, flood or not.
const LATE_MS: u64 = 100;
/// Timeouts measured: each one a deadline that fired under the flood.
const TIMEOUTS: u64 = 10;
/// Requests each flooding client keeps in flight.
const IN_FLIGHT: usize = 32;

fn pass() -> pb::GameAction {
    use pb::gang_of_four_action::{Kind, Pass};
    pb::GameAction {
        game: Some(pb::game_action::Game::GangOfFour(pb::GangOfFourAction {
            kind: Some(Kind::Pass(Pass {})),
        })),
    }
}

fn play_unheld_card() -> pb::GameAction {
    use pb::gang_of_four_action::{Kind, Play};
    pb::GameAction {
        game: Some(pb::game_action::Game::GangOfFour(pb::GangOfFourAction {
            kind: Some(Kind::Play(Play {
                card_ids: vec![9_999],
                ..Default::default()
            })),
        })),
    }
}

/// One flooding client: `IN_FLIGHT` loops, each acting with the seats' tokens in turn until
/// `stop`; every answer must be a refusal (nothing this client sends may be played).
fn flood(
    client: Client,
    game_id: String,
    tokens: Vec<String>,
    stale: bool,
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicU64>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..IN_FLIGHT)
        .map(|lane| {
            let mut client = client.clone();
            let (game_id, tokens) = (game_id.clone(), tokens.clone());
            let (stop, answered) = (stop.clone(), answered.clone());
            tokio::spawn(async move {
                let mut n = lane;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let request = pb::ActRequest {
                        game_id: game_id.clone(),
                        token: tokens[n % tokens.len()].clone(),
                        // A pass may be legal: only with a stale seq, never played.
                        action: Some(if stale { pass() } else { play_unheld_card() }),
                        // A seq the game never reaches: refused as stale before the engine.
                        expected_seq: stale.then_some(u64::MAX),
                        ..Default::default()
                    };
                    match client.act(request).await {
                        Ok(answer) => panic!("a flooding act was played: {answer:?}"),
                        Err(status) => assert!(
                            matches!(
                                status.code(),
                                tonic::Code::InvalidArgument
                                    | tonic::Code::FailedPrecondition
                                    | tonic::Code::Aborted
                            ),
                            "unexpected answer to a refused act: {status:?}"
                        ),
                    }
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_deadline_fires_on_time_while_two_clients_flood_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    // absent_after=0: a seat is never marked absent, so each timeout waits its whole turn.
    let pairs = [
        ("turn_ms", TURN_MS.to_string()),
        ("absent_after", "0".into()),
    ]
    .map(|(k, v)| (k.to_string(), v));
    let options = gangs_games::parse_options("gang-of-four", Some(4), &pairs).unwrap();
    let game_id = create(&mut client, "gang-of-four", Some(options), 26).await;
    let mut tokens = Vec::new();
    for seat in 0..4 {
        let join = pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(seat),
            ..Default::default()
        };
        tokens.push(
            client
                .join_game(join)
                .await
                .expect("join")
                .into_inner()
                .token,
        );
    }
    let started_seq = status(&mut client, &game_id).await.last_seq;

    // Two clients, each on its own connection.
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let mut lanes = Vec::new();
    for stale in [false, true] {
        let flooder = server.client().await;
        lanes.extend(flood(
            flooder,
            game_id.clone(),
            tokens.clone(),
            stale,
            stop.clone(),
            answered.clone(),
        ));
    }

    // Await the timeouts (nobody else writes to this game: each record after the start is one).
    let timed_out = async {
        while status(&mut client, &game_id).await.last_seq < started_seq + TIMEOUTS {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let budget = Duration::from_millis(TIMEOUTS * TURN_MS * 20);
    tokio::time::timeout(budget, timed_out)
        .await
        .expect("the seats' clocks did not run out under the flood");
    stop.store(true, Ordering::Relaxed);
    for lane in lanes {
        lane.await.expect("a flooding lane failed");
    }
    let answered = answered.load(Ordering::Relaxed);

    let records = log(&mut client, &game_id).await;
    let lateness: Vec<i64> = records
        .iter()
        .filter_map(|r| match &r.record {
            Some(Record::TimedOut(t)) => Some(t.used_ms as i64 - TURN_MS as i64),
            Some(Record::Acted(a)) => panic!("a flooding act was played: {a:?}"),
            _ => None,
        })
        .collect();
    println!(
        "{answered} refused acts answered during {} timeouts; lateness (ms): {lateness:?}",
        lateness.len()
    );
    assert!(lateness.len() as u64 >= TIMEOUTS, "{lateness:?}");
    // The flood reached the game: far more refusals than decisions.
    assert!(
        answered >= 20 * lateness.len() as u64,
        "only {answered} acts answered: no flood"
    );
    for (i, late) in lateness.iter().enumerate() {
        assert!(*late >= 0, "timeout {i} fired {} ms early", -late);
        assert!(
            *late <= LATE_MS as i64,
            "timeout {i} fired {late} ms after its deadline (bound {LATE_MS} ms); all: {lateness:?}"
        );
    }
}
