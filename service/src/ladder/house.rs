//! House bots: the server's own entries on a ladder (`CreateLadder.house_bots`), so that a
//! ladder has opponents from its first minute and a newcomer has a boss to beat. Each is the
//! policy of a shipped bot (`gangs_policies::playing` lists those of each kind) entered
//! as `house-NAME@1`, rated like any other entry.
//!
//! A house bot plays exactly as an outside bot does, only without the network: it queues on
//! the ladder (its entry, not a key: its key is drawn at registration and never kept), and for
//! each `matched` game watches its seat and acts with the seat's token through the host's own
//! typed API (`GamesService::watch_as`, `act_as`, as "the ladder NAME"), so clocks, legality and
//! durability are those of every seat. Its policy decides on a
//! blocking thread (the search policy thinks for `SEARCH_BUDGET`). After a restart each house
//! bot queues again and is sent the games it was playing.

use super::hosted::{HostedBot, Step};
use super::records::entry_name;
use super::Ladder;
use crate::actor::HostedDecision;
use crate::error::HostError;
use gangs_policies::Policy;
use gangs_proto::v1 as pb;
use pb::ladder_event::{paused::Reason, Event};
use rand::SeedableRng;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_stream::StreamExt;

/// Every house entry's bot name starts with this; no outside bot may register such a name.
pub const HOUSE_PREFIX: &str = "house-";
/// The house search bot's thinking time per move (the shipped binary's default is 200 ms):
/// it runs on the server's own cores.
pub const SEARCH_BUDGET: Duration = Duration::from_millis(100);
/// Games a house bot plays at once.
const HOUSE_CONCURRENT: u32 = 2;
/// Waits before queueing again after the stream ended or failed.
const REQUEUE_AFTER: Duration = Duration::from_secs(1);

type BoxedPolicy = Box<dyn Policy + Send>;

/// Who decides for an in-process entry.
#[derive(Clone)]
pub enum Player {
    /// A house bot's policy, by name (`random`, `greedy`, ...).
    House(String),
    /// A hosted bot's module (`hosted.rs`).
    Hosted(Arc<HostedBot>),
}

/// A seat's decider for one game.
enum Decider {
    /// Moved to a blocking thread for each decision, and back.
    Policy(Option<BoxedPolicy>),
    /// With the game's seed (its random bytes are drawn from it).
    Hosted(Arc<HostedBot>, u64),
}

/// Checks a CreateLadder's `house_bots` (few, `bounds.rs`) for `kind`: known to the kind,
/// each once.
pub fn check(kind: &str, names: &[String]) -> Result<(), HostError> {
    let offered = gangs_policies::playing(kind);
    let mut seen = HashSet::new();
    for name in names {
        if !offered.contains(&name.as_str()) {
            return Err(HostError::invalid_argument(format!(
                "house bot {} does not play {kind}: choose among {}",
                gangs_proto::quoted(name),
                offered.join(", ")
            )));
        }
        if !seen.insert(name) {
            return Err(HostError::invalid_argument(format!(
                "house bot {name} is listed twice: each enters once"
            )));
        }
    }
    Ok(())
}

fn policy(name: &str, seed: u64) -> Option<BoxedPolicy> {
    let rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    gangs_policies::by_name(name, rng, SEARCH_BUDGET)
}

/// Registers the ladder's house entries that are not yet (a new ladder, or a crash between
/// its creation and their registration), then plays each until the server stops.
pub async fn run(ladder: Arc<Ladder>) {
    let names = ladder.state.lock().await.info.house_bots.clone();
    for name in names {
        let index = loop {
            match ensure_entry(&ladder, &name).await {
                Ok(index) => break index,
                Err(status) => {
                    tracing::warn!(ladder = %ladder.name, house = %name, "registering a house bot: {} (retrying)", status.message());
                    if !ladder.pause(REQUEUE_AFTER).await {
                        return;
                    }
                }
            }
        };
        let label = format!("{HOUSE_PREFIX}{name}");
        tokio::spawn(play(ladder.clone(), Player::House(name), label, index));
    }
}

async fn ensure_entry(ladder: &Ladder, name: &str) -> Result<usize, HostError> {
    let bot = format!("{HOUSE_PREFIX}{name}");
    let entry = entry_name(&bot, "1");
    let mut state = ladder.state.lock().await;
    if let Some(&index) = state.by_name.get(&entry) {
        return Ok(index);
    }
    // Its key is dropped: the house queues by its entry.
    ladder.register(&mut state, bot, "1".into()).await?;
    Ok(state.by_name[&entry])
}

/// One in-process entry (a house bot, a hosted bot, named `name` in the logs): queued, playing
/// its games, queued again when its stream ends.
pub async fn play(ladder: Arc<Ladder>, player: Player, name: String, index: usize) {
    let playing: Arc<Mutex<HashSet<String>>> = Arc::default();
    loop {
        let acknowledged: Vec<String> = playing.lock().expect("playing").iter().cloned().collect();
        let request = pb::QueueRequest {
            max_concurrent: HOUSE_CONCURRENT,
            acknowledged_game_ids: acknowledged,
            ..Default::default()
        };
        match ladder.queue_entry(index, &request).await {
            Ok(mut events) => {
                let mut stop = ladder.stop.clone();
                loop {
                    let event = tokio::select! {
                        _ = stop.wait_for(|s| *s) => return,
                        event = events.recv() => event,
                    };
                    match event {
                        Some(Ok(pb::LadderEvent {
                            event: Some(Event::Matched(matched)),
                        })) => {
                            if playing
                                .lock()
                                .expect("playing")
                                .insert(matched.game_id.clone())
                            {
                                let seed = rand::random();
                                tokio::spawn(play_seat(
                                    ladder.clone(),
                                    player.clone(),
                                    matched,
                                    seed,
                                    playing.clone(),
                                ));
                            }
                        }
                        Some(Ok(pb::LadderEvent {
                            event: Some(Event::Paused(paused)),
                        })) => match paused.reason() {
                            Reason::Retired => return,
                            // Queueing again lifts a pause for timeouts: a house bot does; a
                            // hosted bot waits until the admin lifts it (its module would
                            // fail the same way) or a new version is submitted.
                            Reason::Timeouts | Reason::NoFirstAction => {
                                if matches!(player, Player::Hosted(_))
                                    && !ladder.wait_unpaused(index).await
                                {
                                    return;
                                }
                                break;
                            }
                            _ => {}
                        },
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => break,
                    }
                }
            }
            Err(HostError::NotNow(_)) => return,
            Err(status) => {
                tracing::warn!(ladder = %ladder.name, bot = %name, "queueing an in-process bot: {}", status.message());
            }
        }
        if !ladder.pause(REQUEUE_AFTER).await {
            return;
        }
    }
}

/// Plays one seat to the game's end: watch with the seat's token, act on every update that
/// lists legal actions; a dropped stream is watched again from the last seq seen.
async fn play_seat(
    ladder: Arc<Ladder>,
    player: Player,
    matched: pb::ladder_event::Matched,
    seed: u64,
    playing: Arc<Mutex<HashSet<String>>>,
) {
    let game_id = matched.game_id.clone();
    let decider = match player {
        Player::House(name) => policy(&name, seed).map(|p| Decider::Policy(Some(p))),
        Player::Hosted(bot) => ladder
            .seed_of(&game_id)
            .await
            .map(|game_seed| Decider::Hosted(bot, game_seed)),
    };
    if let Some(decider) = decider {
        play_to_end(&ladder, decider, &matched).await;
    }
    playing.lock().expect("playing").remove(&game_id);
}

async fn play_to_end(ladder: &Ladder, mut decider: Decider, matched: &pb::ladder_event::Matched) {
    let mut from_seq = 0;
    let mut stop = ladder.stop.clone();
    loop {
        let request = pb::WatchRequest {
            game_id: matched.game_id.clone(),
            token: matched.token.clone(),
            from_seq,
            // The policy reads the view only when the seat may act.
            views: pb::WatchViews::WhenNeeded as i32,
        };
        if let Ok(mut stream) = ladder.ctx.games.watch_as(ladder.principal(), request).await {
            loop {
                let next = tokio::select! {
                    _ = stop.wait_for(|s| *s) => return,
                    next = stream.next() => next,
                };
                let Some(Ok(update)) = next else { break };
                from_seq = from_seq.max(update.seq);
                if pb::GameStatus::is_over_code(update.status) {
                    return;
                }
                if update.legal_actions.is_empty() || decided_already(&update) {
                    continue;
                }
                let seq = update.seq;
                let step = match &mut decider {
                    Decider::Policy(slot) => {
                        let Some(mut policy) = slot.take() else {
                            return;
                        };
                        let decided = tokio::task::spawn_blocking(move || {
                            let action = policy.choose(&update);
                            (policy, action)
                        })
                        .await;
                        let Ok((returned, action)) = decided else {
                            tracing::error!(game = %matched.game_id, "a house bot's policy panicked");
                            return;
                        };
                        *slot = Some(returned);
                        match action {
                            Some(action) => Step::Act(action),
                            None => Step::Wait,
                        }
                    }
                    Decider::Hosted(bot, game_seed) => {
                        let running = report(ladder, matched, seq, HostedDecision::Running);
                        bot.decide(&matched.game_id, *game_seed, update, running)
                            .await
                    }
                };
                let action = match step {
                    Step::Act(action) => action,
                    Step::Wait => continue,
                    Step::Forfeit(cause) => {
                        report(ladder, matched, seq, HostedDecision::Failed(cause)).await;
                        continue;
                    }
                };
                let act = pb::ActRequest {
                    game_id: matched.game_id.clone(),
                    token: matched.token.clone(),
                    action: Some(action),
                    expected_seq: Some(seq),
                    ..Default::default()
                };
                // Refused because the game moved on (a clock, the end): the next update tells.
                if let Err(status) = ladder.ctx.games.act_as(ladder.principal(), act).await {
                    tracing::debug!(game = %matched.game_id, "house bot act: {}", status.message());
                }
            }
        }
        if !ladder.pause(REQUEUE_AFTER / 4).await {
            return;
        }
    }
}

/// Whether `update` shows a decision of the seat that is over already: a catch-up (the stream
/// watched again from the start, after a restart) replays every past decision of the seat
/// with the clocks of its time, whose deadline has passed (the seat acted or timed out then).
/// Deciding those would spend the host's threads on the past while the seat's present
/// decision waits: after a restart, hosted seats' decisions queued behind hundreds of stale
/// ones and their games went void. Only the update whose deadline is ahead is decided.
fn decided_already(update: &pb::Update) -> bool {
    let now = crate::actor::unix_ms();
    update
        .clocks
        .iter()
        .find(|clock| Some(clock.seat) == update.seat)
        .and_then(|clock| clock.deadline_unix_ms)
        .is_some_and(|deadline| deadline < now)
}

/// Tells the game what a hosted seat's decision awaited at `seq` is doing. A refusal means the
/// game moved on (a clock, the end): the next update tells.
async fn report(
    ladder: &Ladder,
    matched: &pb::ladder_event::Matched,
    seq: u64,
    decision: HostedDecision,
) {
    let reported = ladder
        .ctx
        .games
        .hosted_decision(&matched.game_id, matched.token.clone(), seq, decision)
        .await;
    if let Err(error) = reported {
        tracing::debug!(game = %matched.game_id, "a hosted bot's report: {error}");
    }
}
