//! The bot loop: join (or resume with a token), watch the seat's updates, and whenever the
//! newest update lists legal actions, ask the policy and act. Connection failures lead to a
//! reconnect and a new watch from the last seq seen; the game's end ends the bot.

use crate::action_id::action_id;
use crate::decision::{decide, Decision};
use crate::error::is_transient;
use crate::reconnect::{Client, Reconnector};
use crate::{logging, BotArgs, BotError, Policy};
use gangs_games::{describe_action, describe_event};
use gangs_proto::code_name;
use gangs_proto::v1 as pb;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::future::Future;
use std::process::ExitCode;
use std::task::Poll;
use std::time::Duration;
use tonic::{Code, Status, Streaming};

/// How many times in a row the same action may fail for connection reasons before giving up.
const MAX_ACT_ATTEMPTS: u32 = 10;

/// How a finished game looked from the bot's seat.
#[derive(Debug, Clone)]
pub struct GameOver {
    pub game_id: String,
    pub seat: Option<u32>,
    pub seq: u64,
    pub outcome: Option<pb::Outcome>,
}

/// Logging and the bot's runtime; `None` (said on stderr) when the runtime cannot start.
fn start(quiet: bool) -> Option<tokio::runtime::Runtime> {
    logging::init(quiet);
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => Some(runtime),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            None
        }
    }
}

/// The whole life of a bot binary: logging, a runtime, [`play`], and the exit code (0 when the
/// game finished, 1 with the error on stderr otherwise).
pub fn run_bot(args: BotArgs, policy: impl Policy) -> ExitCode {
    let Some(runtime) = start(args.quiet) else {
        return ExitCode::FAILURE;
    };
    let name = policy.name().to_string();
    tracing::info!(
        bot = %name,
        game = ?args.game,
        ladder = ?args.ladder.ladder,
        server = %args.server,
        seed = ?args.seed,
        "starting"
    );
    match runtime.block_on(play(args, policy)) {
        Ok(over) => {
            let summary = over
                .outcome
                .as_ref()
                .map(|o| o.summary.as_str())
                .unwrap_or("no outcome given");
            tracing::info!(game = %over.game_id, seat = ?over.seat, "game over: {summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{name} bot: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// [`run_bot`] for a bot that can make a fresh policy for each game (from a seeded RNG): with
/// `--ladder` it plays the ladder's games, several at once ([`crate::ladder`]); else one game.
pub fn run_bot_with<P: Policy + 'static>(
    mut args: BotArgs,
    mut make_policy: impl FnMut(ChaCha8Rng) -> P,
) -> ExitCode {
    if args.ladder.ladder.is_none() {
        let policy = make_policy(args.rng());
        return run_bot(args, policy);
    }
    let Some(runtime) = start(args.quiet) else {
        return ExitCode::FAILURE;
    };
    // Game i's policy is seeded with seed + i: a run is reproducible from its logged seed.
    let seed = args.seed();
    let mut games = 0u64;
    let make = move || {
        games += 1;
        make_policy(ChaCha8Rng::seed_from_u64(seed.wrapping_add(games)))
    };
    tracing::info!(ladder = ?args.ladder.ladder, server = %args.server, seed, "starting on a ladder");
    let local = tokio::task::LocalSet::new();
    match runtime.block_on(local.run_until(crate::ladder::play_ladder(args, make))) {
        Ok(run) => {
            tracing::info!(games = run.games, failed = run.failed, "ladder games over");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ladder bot: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Plays one seat until the game is over.
pub async fn play(args: BotArgs, policy: impl Policy) -> Result<GameOver, BotError> {
    let mut reconnector =
        Reconnector::new(&args.server, args.ca.as_deref(), args.api_key.as_deref())?;
    let client = reconnector.connect("first connection").await?;
    let mut bot = Bot {
        name: args
            .name
            .clone()
            .unwrap_or_else(|| policy.name().to_string()),
        game_id: args.game.clone().unwrap_or_default(),
        seat: args.seat,
        token: args.token.clone().unwrap_or_default(),
        join_id: gangs_proto::retry::new_join_id(),
        invitation: args.invitation.clone().unwrap_or_default(),
        last_seq: 0,
        acted_at: None,
        sent: SentAction::default(),
        act_failures: (0, 0),
        policy,
        reconnector,
        client,
    };
    let mut from_seq = if bot.token.is_empty() {
        bot.join().await?
    } else {
        // A ladder's match is a new seat, not one being resumed: only `--token` resumes.
        if !args.matched {
            tracing::info!(game = %bot.game_id, "resuming with the given token");
        }
        0
    };
    loop {
        match bot.follow(from_seq).await? {
            Followed::Over(over) => return Ok(over),
            Followed::Interrupted(why) => {
                tracing::warn!(game = %bot.game_id, "lost the game's stream ({why}): reconnecting");
                bot.client = bot.reconnector.connect(&why).await?;
                // Watch again from just before the last update seen: the server re-sends it,
                // so an action interrupted by the outage is retried (with the same action id).
                from_seq = bot.last_seq.saturating_sub(1);
            }
        }
    }
}

struct Bot<P> {
    name: String,
    game_id: String,
    seat: Option<u32>,
    token: String,
    /// Sent with every join attempt: a retry after a lost answer gets the same seat and token.
    join_id: String,
    /// The seat's invitation (reserved seats), or empty.
    invitation: String,
    /// The newest seq received.
    last_seq: u64,
    /// The seq of the last update acted on successfully.
    acted_at: Option<u64>,
    /// The last action sent, for a retry of the same decision.
    sent: SentAction,
    /// (seq, consecutive transient failures acting at that seq).
    act_failures: (u64, u32),
    policy: P,
    reconnector: Reconnector,
    client: Client,
}

/// The last action sent and the seq of the update it answered. Acting on that update again
/// (a retry after an outage: the bot watches again from before it) sends the same action, not
/// a new choice: the retry carries the same action id (`action_id`), and the server refuses an
/// id reused for another action, so a policy that draws at random must not draw again.
#[derive(Default)]
struct SentAction(Option<(u64, pb::GameAction)>);

impl SentAction {
    /// The action for `update`: the one sent for it before if it is still legal, else `choose`'s.
    fn action_for(
        &self,
        update: &pb::Update,
        choose: impl FnOnce() -> Option<pb::GameAction>,
    ) -> Option<pb::GameAction> {
        match &self.0 {
            Some((seq, sent)) if *seq == update.seq && update.legal_actions.contains(sent) => {
                Some(sent.clone())
            }
            _ => choose(),
        }
    }

    fn note(&mut self, seq: u64, action: &pb::GameAction) {
        self.0 = Some((seq, action.clone()));
    }
}

/// How watching ended.
enum Followed {
    Over(GameOver),
    /// The stream broke or ended before the game did.
    Interrupted(String),
}

/// How an `Act` call went.
enum Acted {
    Done,
    /// Stale or not allowed any more: the next update will tell.
    Stale,
    Interrupted(String),
}

impl<P: Policy> Bot<P> {
    /// Takes a seat; returns the seq to watch from (just before our join, so that the first
    /// update shows the game as it is).
    async fn join(&mut self) -> Result<u64, BotError> {
        loop {
            let request = pb::JoinGameRequest {
                game_id: self.game_id.clone(),
                seat: self.seat,
                name: self.name.clone(),
                join_id: self.join_id.clone(),
                invitation: self.invitation.clone(),
            };
            match self.client.join_game(request).await {
                Ok(response) => {
                    let joined = response.into_inner();
                    tracing::info!(game = %self.game_id, seat = joined.seat, name = %self.name, "joined");
                    self.seat = Some(joined.seat);
                    self.token = joined.token;
                    self.reconnector.healthy();
                    return Ok(joined.seq.saturating_sub(1));
                }
                Err(status) if is_transient(&status) => {
                    let why = describe_status(&status);
                    self.client = self.reconnector.connect(&why).await?;
                }
                Err(status) => {
                    return Err(BotError::Refused {
                        what: "joining the game",
                        status,
                    })
                }
            }
        }
    }

    /// Watches from `from_seq` and plays until the game ends or the stream breaks.
    async fn follow(&mut self, from_seq: u64) -> Result<Followed, BotError> {
        let request = pb::WatchRequest {
            game_id: self.game_id.clone(),
            token: self.token.clone(),
            from_seq,
            // The policy reads the view only when the seat may act, and a resume (watching
            // again) gets it first: the other updates need only their events.
            views: pb::WatchViews::WhenNeeded as i32,
        };
        let mut stream = match self.client.watch(request).await {
            Ok(response) => response.into_inner(),
            Err(status) if is_transient(&status) => {
                return Ok(Followed::Interrupted(describe_status(&status)))
            }
            Err(status) => {
                return Err(BotError::Refused {
                    what: "watching the game",
                    status,
                })
            }
        };
        loop {
            let (batch, ended) = next_batch(&mut stream).await;
            if !batch.is_empty() {
                self.reconnector.healthy();
            }
            for update in &batch {
                self.note(update);
            }
            match decide(&batch, self.acted_at) {
                Decision::Finished(update) => {
                    return Ok(Followed::Over(GameOver {
                        game_id: self.game_id.clone(),
                        seat: self.seat,
                        seq: update.seq,
                        outcome: update.outcome.clone(),
                    }))
                }
                Decision::Act(update) => {
                    let update = update.clone();
                    match self.act(&update).await? {
                        Acted::Done => self.acted_at = Some(update.seq),
                        Acted::Stale => {}
                        Acted::Interrupted(why) => return Ok(Followed::Interrupted(why)),
                    }
                }
                Decision::Wait => {}
            }
            if let Some(why) = ended {
                return Ok(Followed::Interrupted(why));
            }
        }
    }

    /// Remembers what an update tells about the seat and logs its events.
    fn note(&mut self, update: &pb::Update) {
        self.last_seq = self.last_seq.max(update.seq);
        if let Some(seat) = update.seat {
            self.seat = Some(seat);
        }
        for event in &update.events {
            tracing::debug!(seq = update.seq, "{}", describe_event(event));
        }
    }

    async fn act(&mut self, update: &pb::Update) -> Result<Acted, BotError> {
        let policy = &mut self.policy;
        let Some(action) = self.sent.action_for(update, || policy.choose(update)) else {
            tracing::debug!(seq = update.seq, "the policy lets this update pass");
            return Ok(Acted::Stale);
        };
        if !update.legal_actions.contains(&action) {
            return Err(BotError::IllegalChoice {
                seq: update.seq,
                action: describe_action(&action),
            });
        }
        let seat = update.seat.or(self.seat).unwrap_or_default();
        let words = describe_action(&action);
        self.sent.note(update.seq, &action);
        let request = pb::ActRequest {
            game_id: self.game_id.clone(),
            token: self.token.clone(),
            action: Some(action),
            expected_seq: Some(update.seq),
            action_id: action_id(&self.game_id, seat, update.seq),
        };
        match self.client.act(request).await {
            Ok(response) => {
                let response = response.into_inner();
                tracing::debug!(seq = response.seq, seat, "played `{words}`");
                self.act_failures = (0, 0);
                Ok(Acted::Done)
            }
            Err(status) if matches!(status.code(), Code::Aborted | Code::FailedPrecondition) => {
                tracing::debug!(
                    seq = update.seq,
                    "`{words}` not taken ({}): waiting for the next update",
                    status.message()
                );
                Ok(Acted::Stale)
            }
            Err(status) if is_transient(&status) => {
                let (seq, count) = self.act_failures;
                let count = if seq == update.seq { count + 1 } else { 1 };
                self.act_failures = (update.seq, count);
                if count >= MAX_ACT_ATTEMPTS {
                    return Err(BotError::ActKeepsFailing {
                        seq: update.seq,
                        attempts: count,
                        last: status,
                    });
                }
                // Give a restarting server a moment before the reconnect loop starts.
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok(Acted::Interrupted(describe_status(&status)))
            }
            Err(status) => Err(BotError::Refused {
                what: "the action",
                status,
            }),
        }
    }
}

/// Waits for the next update, then takes every update already received behind it without
/// waiting, so that the decision is made on the newest one. The second value says why the
/// stream is over, if it is.
async fn next_batch(stream: &mut Streaming<pb::Update>) -> (Vec<pb::Update>, Option<String>) {
    let mut batch = Vec::new();
    match stream.message().await {
        Ok(Some(update)) => batch.push(update),
        Ok(None) => return (batch, Some("the server closed the stream".into())),
        Err(status) => return (batch, Some(describe_status(&status))),
    }
    loop {
        match ready_now(stream.message()).await {
            Some(Ok(Some(update))) => batch.push(update),
            Some(Ok(None)) => return (batch, Some("the server closed the stream".into())),
            Some(Err(status)) => return (batch, Some(describe_status(&status))),
            None => return (batch, None),
        }
    }
}

/// Polls `future` once: its output if it is ready now, else `None` (without yielding).
async fn ready_now<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|cx| match future.as_mut().poll(cx) {
        Poll::Ready(output) => Poll::Ready(Some(output)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}

fn describe_status(status: &Status) -> String {
    format!("{}: {}", code_name(status.code()), status.message())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(n: u32) -> pb::GameAction {
        use pb::the_gang_action::{Kind, Take};
        pb::GameAction {
            game: Some(pb::game_action::Game::TheGang(pb::TheGangAction {
                kind: Some(Kind::Take(Take { stars: n })),
            })),
        }
    }

    fn update(seq: u64, legal: &[u32]) -> pb::Update {
        pb::Update {
            seq,
            legal_actions: legal.iter().map(|&n| action(n)).collect(),
            ..Default::default()
        }
    }

    /// A random policy draws again on every call: a retry of the same update must not.
    #[test]
    fn a_retry_of_the_same_update_sends_the_same_action() {
        let mut sent = SentAction::default();
        let mut draws = [1, 2, 3].into_iter();
        let mut draw = || draws.next().map(action);
        let first = sent.action_for(&update(26, &[1, 2, 3]), &mut draw).unwrap();
        sent.note(26, &first);
        // The same update again (watched again after an outage): the same action, no draw.
        let again = sent.action_for(&update(26, &[1, 2, 3]), &mut draw).unwrap();
        assert_eq!(again, first);
        // A later update: a new choice.
        let later = sent.action_for(&update(30, &[1, 2, 3]), &mut draw).unwrap();
        assert_eq!(later, action(2));
        // The sent action no longer legal at that seq: a new choice too.
        let mut sent = SentAction::default();
        sent.note(40, &action(9));
        assert_eq!(
            sent.action_for(&update(40, &[1]), || Some(action(1))),
            Some(action(1))
        );
    }
}
