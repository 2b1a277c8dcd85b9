//! Deadlines on tokio's paused time, in process: a phase deadline, a seat's clock (then its
//! absence), the fill timeout and the idle timeout each fire exactly when due, not a
//! millisecond sooner, however long they are (an hour, a day: the paused clock jumps there).
//! The record each one writes carries its time, which says when it fired. The end-to-end
//! tests keep one real-time case of each (`tests/e2e_deadline.rs`, `tests/e2e_clocks.rs`,
//! `tests/e2e_lifecycle.rs`).
//!
//! The store is in memory (`common::MemoryStore`): a store with threads of its own would let
//! the paused clock run ahead while the runtime waits for them.

mod common;

use common::{log_of, MemoryStore};
use gangs_proto::v1 as pb;
use gangs_service::actor::Settings;
use gangs_service::api::GamesService;
use gangs_service::registry::Registry;
use pb::games_server::Games;
use pb::log_record::Record;
use std::sync::Arc;
use std::time::Duration;
use tonic::Request;

async fn service(settings: Settings) -> GamesService {
    let store: gangs_service::store::Store = Arc::new(MemoryStore::default());
    let registry = Registry::restore(store, settings).await.unwrap();
    GamesService::new(registry, None)
}

/// A game of `kind` with `players` seats, the first `seated` taken; its id.
async fn game(
    service: &GamesService,
    kind: &str,
    players: u32,
    seated: u32,
    options: &[(&str, &str)],
) -> String {
    common::create_and_seat(service, kind, players, seated, options, 7)
        .await
        .0
}

/// The first record of `log` that `pick` accepts, with its time.
fn first(log: &[pb::LogRecord], pick: impl Fn(&Record) -> bool) -> Option<&pb::LogRecord> {
    log.iter().find(|r| r.record.as_ref().is_some_and(&pick))
}

fn started(log: &[pb::LogRecord]) -> &pb::LogRecord {
    first(log, |r| matches!(r, Record::Started(_))).expect("the game started")
}

/// Sleeps on the paused clock until just before `at` (unix ms, as the records carry it), then
/// past it: what `due` finds in the log just before must be nothing, just after something.
async fn across<T: std::fmt::Debug>(at: i64, mut due: impl AsyncFnMut() -> Option<T>) -> T {
    let now = gangs_service::actor::unix_ms();
    assert!(
        at > now + 1,
        "the deadline is still ahead: {at} vs now {now}"
    );
    tokio::time::sleep(Duration::from_millis((at - now - 1) as u64)).await;
    assert!(
        due().await.is_none(),
        "fired a millisecond or more before it was due"
    );
    tokio::time::sleep(Duration::from_millis(2)).await;
    due().await.expect("fired once due")
}

#[tokio::test(start_paused = true)]
async fn a_phase_deadline_expires_the_phase_exactly_when_due() {
    let service = service(Settings::default()).await;
    let kind = gangs_games::the_gang::KIND.name;
    let options = [("mode", "basic"), ("phase_deadline_ms", "5000")];
    let game_id = game(&service, kind, 3, 3, &options).await;
    let opened = started(&log_of(&service, &game_id).await).unix_ms;
    let expired = across(opened + 5000, async || {
        let log = log_of(&service, &game_id).await;
        first(&log, |r| matches!(r, Record::Expired(_))).cloned()
    })
    .await;
    assert_eq!(expired.unix_ms, opened + 5000);
}

#[tokio::test(start_paused = true)]
async fn a_silent_seat_times_out_when_its_turn_and_bank_are_spent_then_is_absent() {
    let service = service(Settings::default()).await;
    let kind = gangs_games::gang_of_four::KIND.name;
    let options = [
        ("turn_ms", "2000"),
        ("bank_ms", "3000"),
        ("absent_after", "1"),
    ];
    let game_id = game(&service, kind, 4, 4, &options).await;
    let opened = started(&log_of(&service, &game_id).await).unix_ms;
    // Nobody acts: the seat to act has its turn, then its bank, then its default is played.
    let timed_out = across(opened + 5000, async || {
        let log = log_of(&service, &game_id).await;
        first(&log, |r| matches!(r, Record::TimedOut(_))).cloned()
    })
    .await;
    assert_eq!(timed_out.unix_ms, opened + 5000);
    let Some(Record::TimedOut(first_timeout)) = &timed_out.record else {
        unreachable!()
    };
    assert_eq!(first_timeout.used_ms, 5000);
    assert!(!first_timeout.absent);
    // One timeout makes that seat absent (absent_after 1): the next time it must decide, its
    // default is played as its decision opens, not after its turn.
    let seat = first_timeout.seat;
    tokio::time::sleep(Duration::from_secs(120)).await;
    let log = log_of(&service, &game_id).await;
    let again: Vec<&pb::TimedOut> = log
        .iter()
        .filter_map(|r| match &r.record {
            Some(Record::TimedOut(t)) if t.seat == seat && t.absent => Some(t),
            _ => None,
        })
        .collect();
    assert!(
        !again.is_empty(),
        "the absent seat was never played for again"
    );
    assert!(
        again.iter().all(|t| t.used_ms == 0),
        "an absent seat's default waits for nothing: {again:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_hosted_seat_s_clock_starts_when_its_decision_starts_running() {
    let service = service(Settings::default()).await;
    let kind = gangs_games::gang_of_four::KIND.name;
    let options = [("turn_ms", "2000"), ("bank_ms", "0")];
    let (game_id, _, tokens) = common::create_and_seat(&service, kind, 4, 4, &options, 7).await;
    let log = log_of(&service, &game_id).await;
    let opened = started(&log).unix_ms;
    let seq = log.len() as u64;
    // The decision waits 1.5 s in the host's queue, then runs: only the awaited seat's report
    // is taken, and its turn counts from then.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut taken = 0;
    for token in &tokens {
        let running = gangs_service::actor::HostedDecision::Running;
        match service
            .hosted_decision(&game_id, token.clone(), seq, running)
            .await
        {
            Ok(()) => taken += 1,
            Err(e) => assert!(e.message().contains("no decision to make now"), "{e:?}"),
        }
    }
    assert_eq!(taken, 1, "one seat is awaited");
    let stale = gangs_service::actor::HostedDecision::Running;
    let refused = service
        .hosted_decision(&game_id, tokens[0].clone(), seq + 1, stale)
        .await
        .unwrap_err();
    assert!(
        refused.message().contains("stale expected_seq"),
        "{refused:?}"
    );
    let timed_out = across(opened + 3500, async || {
        let log = log_of(&service, &game_id).await;
        first(&log, |r| matches!(r, Record::TimedOut(_))).cloned()
    })
    .await;
    assert_eq!(timed_out.unix_ms, opened + 3500);
    let Some(Record::TimedOut(timeout)) = &timed_out.record else {
        unreachable!()
    };
    assert_eq!(timeout.used_ms, 2000, "its turn, counted from when it ran");
}

#[tokio::test(start_paused = true)]
async fn an_unfilled_game_is_abandoned_exactly_at_the_fill_timeout() {
    let settings = Settings {
        fill_timeout: Duration::from_secs(3600),
        ..Settings::default()
    };
    let service = service(settings).await;
    let kind = gangs_games::gang_of_four::KIND.name;
    let game_id = game(&service, kind, 4, 1, &[]).await;
    let created = log_of(&service, &game_id).await[0].unix_ms;
    let ended = across(created + 3_600_000, async || {
        let log = log_of(&service, &game_id).await;
        first(&log, |r| matches!(r, Record::Ended(_))).cloned()
    })
    .await;
    assert_eq!(ended.unix_ms, created + 3_600_000);
    let Some(Record::Ended(end)) = &ended.record else {
        unreachable!()
    };
    assert_eq!(end.reason(), pb::ended::Reason::Abandoned);
    assert!(end.detail.contains("fill timeout"), "{}", end.detail);
    // And no seat can be taken any more.
    let late = service
        .join_game(Request::new(pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(3),
            name: "late".into(),
            ..Default::default()
        }))
        .await
        .expect_err("a seat of an abandoned game");
    assert_eq!(late.code(), tonic::Code::FailedPrecondition, "{late}");
}

#[tokio::test(start_paused = true)]
async fn a_game_nobody_plays_is_abandoned_exactly_at_the_idle_timeout() {
    let settings = Settings {
        idle_timeout: Duration::from_secs(24 * 3600),
        ..Settings::default()
    };
    let service = service(settings).await;
    let kind = gangs_games::gang_of_four::KIND.name;
    let game_id = game(&service, kind, 4, 4, &[]).await;
    let last = started(&log_of(&service, &game_id).await).unix_ms;
    let ended = across(last + 86_400_000, async || {
        let log = log_of(&service, &game_id).await;
        first(&log, |r| matches!(r, Record::Ended(_))).cloned()
    })
    .await;
    assert_eq!(ended.unix_ms, last + 86_400_000);
    let Some(Record::Ended(end)) = &ended.record else {
        unreachable!()
    };
    assert_eq!(end.reason(), pb::ended::Reason::Abandoned);
    assert!(end.detail.contains("idle timeout"), "{}", end.detail);
}
