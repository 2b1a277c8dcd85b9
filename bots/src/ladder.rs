//! Playing a ladder (`--ladder NAME --bot-key KEY [--games N] [--concurrent C]`): queue with the
//! bot's key, and play every game the server matches the bot to with the ordinary per-game
//! runner ([`crate::play`], resuming with the seat's token), up to C at once, until N games
//! are over (forever without --games).
//!
//! A dropped Queue stream (a restart, a network cut) is resumed like the games are: reconnect
//! within the outage budget and queue again, listing the games already being played so that
//! only the others come back as `matched`. A pause for timeouts is lifted by queueing again; a
//! pause by the organizer keeps the stream open until it is lifted; a retired bot stops; a
//! renamed ladder (`renamed`) is queued on by its new name, the games in play going on.
//!
//! Leaving: on SIGTERM or Ctrl-C the bot queues once more with `drain` (no new game; the games
//! it was matched to come back if it did not know them yet), plays every game it is in to the
//! end and exits 0; a second signal exits at once (130). A game whose seat the server refuses
//! for the bot's credentials (PERMISSION_DENIED, UNAUTHENTICATED) stops the bot at once with
//! the server's message: every next game would be refused the same way.

use crate::reconnect::Reconnector;
use crate::{BotArgs, BotError, Policy};
use gangs_proto::v1 as pb;
use pb::ladder_event::{paused::Reason, Event};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tonic::Code;

/// Exit code after a second signal: the games in play are abandoned to their clocks.
const INTERRUPTED: i32 = 130;

/// SIGTERM and Ctrl-C (SIGINT), as one stream.
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Signals {
        Signals {
            #[cfg(unix)]
            term: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok(),
        }
    }

    /// The next SIGTERM or Ctrl-C.
    async fn next(&mut self) {
        #[cfg(unix)]
        {
            let term = async {
                match &mut self.term {
                    Some(term) => {
                        term.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = term => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// A second signal while leaving: stop now.
fn stop_now() -> ! {
    eprintln!(
        "ladder bot: a second signal: stopping now, leaving the games in play to their clocks"
    );
    std::process::exit(INTERRUPTED)
}

/// Whether a game's failure is the server refusing the bot's credentials: every next game
/// would fail the same way.
fn refused_credentials(error: &BotError) -> bool {
    matches!(error, BotError::Refused { status, .. }
        if matches!(status.code(), Code::PermissionDenied | Code::Unauthenticated))
}

/// Waits until no game is in play (the bot is leaving); a refused credential or a second
/// signal stops it sooner.
async fn finish_games(
    playing: &Rc<RefCell<HashSet<String>>>,
    done_rx: &mut UnboundedReceiver<()>,
    fatal_rx: &mut UnboundedReceiver<BotError>,
    signals: &mut Signals,
) -> Result<(), BotError> {
    while !playing.borrow().is_empty() {
        tokio::select! {
            done = done_rx.recv() => {
                if done.is_none() {
                    return Ok(());
                }
            }
            Some(e) = fatal_rx.recv() => return Err(e),
            () = signals.next() => stop_now(),
        }
    }
    Ok(())
}

/// A signal while nothing new would be matched: the games in play are played to their end.
async fn leave(
    playing: &Rc<RefCell<HashSet<String>>>,
    done_rx: &mut UnboundedReceiver<()>,
    fatal_rx: &mut UnboundedReceiver<BotError>,
    signals: &mut Signals,
) -> Result<(), BotError> {
    tracing::warn!("signal: leaving the ladder once the games in play are over");
    finish_games(playing, done_rx, fatal_rx, signals).await
}

/// Every game still wanted is being played: waits for one to end. True when the run is over
/// (every game task gone, or a signal: the games in play were finished).
async fn wait_for_a_game(
    playing: &Rc<RefCell<HashSet<String>>>,
    done_rx: &mut UnboundedReceiver<()>,
    fatal_rx: &mut UnboundedReceiver<BotError>,
    signals: &mut Signals,
) -> Result<bool, BotError> {
    tokio::select! {
        done = done_rx.recv() => Ok(done.is_none()),
        Some(e) = fatal_rx.recv() => Err(e),
        () = signals.next() => {
            leave(playing, done_rx, fatal_rx, signals).await?;
            Ok(true)
        }
    }
}

/// Queue refused for good (e.g. a key replaced by a rekey, which still plays the games it is
/// seated in): the games in play are played to their end first; the error that stops the run.
async fn queue_refused(
    status: tonic::Status,
    playing: &Rc<RefCell<HashSet<String>>>,
    (done_rx, fatal_rx, signals): (
        &mut UnboundedReceiver<()>,
        &mut UnboundedReceiver<BotError>,
        &mut Signals,
    ),
) -> BotError {
    if !playing.borrow().is_empty() {
        tracing::warn!(
            "Queue refused ({}): finishing the games in play, then stopping",
            status.message()
        );
        if let Err(e) = finish_games(playing, done_rx, fatal_rx, signals).await {
            return e;
        }
    }
    BotError::Refused {
        what: "queue on the ladder",
        status,
    }
}

/// What a ladder run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LadderRun {
    /// Games played to their end.
    pub games: u32,
    /// Games whose runner stopped with an error (counted in `games` too).
    pub failed: u32,
}

/// Plays the ladder's games until `--games` are over. Call inside a `LocalSet` (the policies
/// need not be `Send`; each game is a local task).
pub async fn play_ladder<P: Policy + 'static>(
    args: BotArgs,
    mut make_policy: impl FnMut() -> P,
) -> Result<LadderRun, BotError> {
    // Follows a rename (the `renamed` event): the bot queues on the new name from then on.
    let mut ladder = args.ladder.ladder.clone().unwrap_or_default();
    let key = args.ladder.bot_key.clone().unwrap_or_default();
    let target = args.ladder.games;
    let concurrent = args.ladder.concurrent.max(1);
    // On a server with keys, the bot key is a credential of its own: it watches and acts in
    // the games its ladder matched it to. --api-key (a player key) wins when both are given.
    let credential: Option<String> = args.api_key.clone().or_else(|| Some(key.clone()));
    let mut reconnector =
        Reconnector::new(&args.server, args.ca.as_deref(), credential.as_deref())?;
    // Game ids being played now, and the run's tally; shared with the game tasks.
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let (fatal_tx, mut fatal_rx): (UnboundedSender<BotError>, _) =
        tokio::sync::mpsc::unbounded_channel();
    let tasks = GameTasks {
        playing: Rc::default(),
        played: Rc::default(),
        run: Rc::default(),
        done: done_tx,
        fatal: fatal_tx,
    };
    let GameTasks { playing, run, .. } = tasks.clone();
    let mut signals = Signals::new();
    let mut draining = false;
    let mut why = "first connection".to_string();
    loop {
        let finished = |run: &LadderRun| target.is_some_and(|n| run.games >= n);
        if finished(&run.borrow()) {
            return Ok(run.borrow().clone());
        }
        let mut client = tokio::select! {
            client = reconnector.connect_ladders(&why) => client?,
            () = signals.next() => {
                if draining {
                    stop_now();
                }
                // Not connected: nothing new can be matched; finish what is in play.
                leave(&playing, &mut done_rx, &mut fatal_rx, &mut signals).await?;
                return Ok(run.borrow().clone());
            }
        };
        let in_flight = playing.borrow().len() as u32;
        let max_games = target.map_or(0, |n| {
            n.saturating_sub(run.borrow().games)
                .saturating_sub(in_flight)
        });
        if target.is_some() && max_games == 0 && !draining {
            // Every game still wanted is being played: wait for one to end.
            if wait_for_a_game(&playing, &mut done_rx, &mut fatal_rx, &mut signals).await? {
                return Ok(run.borrow().clone());
            }
            continue;
        }
        let request = pb::QueueRequest {
            ladder: ladder.clone(),
            bot_key: key.clone(),
            max_concurrent: concurrent,
            max_games,
            acknowledged_game_ids: playing.borrow().iter().cloned().collect(),
            drain: draining,
        };
        let mut stream = match client.queue(request).await {
            Ok(stream) => stream.into_inner(),
            Err(status) if crate::error::is_transient(&status) => {
                why = format!("Queue: {}", status.message());
                continue;
            }
            Err(status) => {
                let waits = (&mut done_rx, &mut fatal_rx, &mut signals);
                return Err(queue_refused(status, &playing, waits).await);
            }
        };
        reconnector.healthy();
        if draining {
            tracing::info!(%ladder, playing = playing.borrow().len(), "leaving: no new game, finishing the games in play");
        } else {
            tracing::info!(%ladder, concurrent, max_games, "queued");
        }
        loop {
            let event = tokio::select! {
                event = stream.message() => event,
                Some(()) = done_rx.recv() => {
                    if finished(&run.borrow()) {
                        return Ok(run.borrow().clone());
                    }
                    continue;
                }
                Some(e) = fatal_rx.recv() => return Err(e),
                () = signals.next() => {
                    if draining {
                        stop_now();
                    }
                    tracing::warn!("signal: leaving the ladder once the games in play are over (a second signal stops now)");
                    draining = true;
                    why = "leaving the ladder".into();
                    break;
                }
            };
            match event {
                Ok(Some(pb::LadderEvent { event: Some(event) })) => match event {
                    Event::Matched(matched) => {
                        tasks.start(&args, &credential, matched, &mut make_policy)
                    }
                    Event::Finished(f) => log_rated(&f),
                    Event::Paused(p) => {
                        if queue_again_after(p)? {
                            break;
                        }
                    }
                    // Sent once each time the cap is reached: the stream stays open and the
                    // server matches the bot again once the cap frees.
                    Event::Capped(c) => {
                        tracing::warn!(cap = %c.cap, flag = %c.flag, limit = c.limit, until_unix_ms = c.until_unix_ms, "capped by the server, waiting: {}", c.detail);
                    }
                    Event::Heartbeat(_) => {}
                    // Queue on the new name from now on; the games in play go on as they are.
                    Event::Renamed(renamed) => {
                        tracing::warn!(was = %ladder, now = %renamed.name, "the ladder was renamed: queueing on its new name");
                        ladder = renamed.name;
                        why = "the ladder was renamed".into();
                        break;
                    }
                },
                Ok(Some(pb::LadderEvent { event: None })) => {}
                // The stream ended: every game asked for was matched and is over (leaving:
                // every game the server had for the bot is over; the local runners finish).
                Ok(None) => {
                    if draining {
                        finish_games(&playing, &mut done_rx, &mut fatal_rx, &mut signals).await?;
                        tracing::info!("left the ladder: every game played to its end");
                        return Ok(run.borrow().clone());
                    }
                    why = "the Queue stream ended".into();
                    break;
                }
                Err(status) => {
                    let waits = (&mut done_rx, &mut fatal_rx, &mut signals);
                    why = queue_lost(status, &playing, waits).await?;
                    break;
                }
            }
        }
    }
}

/// The game tasks of a ladder run: the games being played and played, the run's tally, and
/// how a task tells its end (or a refused credential, which stops the run).
#[derive(Clone)]
struct GameTasks {
    /// Game ids being played now.
    playing: Rc<RefCell<HashSet<String>>>,
    /// Games this run has played to their end: a ladder that changed nodes may send one again
    /// (it resends what it does not know was acknowledged), and counting it twice would end
    /// the run a game early.
    played: Rc<RefCell<HashSet<String>>>,
    run: Rc<RefCell<LadderRun>>,
    done: UnboundedSender<()>,
    fatal: UnboundedSender<BotError>,
}

impl GameTasks {
    /// Plays a game the ladder matched the bot to, unless it is played already or was (a
    /// ladder that changed nodes resends what it does not know was acknowledged).
    fn start<P: Policy + 'static>(
        &self,
        args: &BotArgs,
        credential: &Option<String>,
        matched: pb::ladder_event::Matched,
        make_policy: &mut impl FnMut() -> P,
    ) {
        if self.played.borrow().contains(&matched.game_id)
            || !self.playing.borrow_mut().insert(matched.game_id.clone())
        {
            return;
        }
        tracing::info!(game = %matched.game_id, seat = matched.seat, table = ?matched.names, "matched");
        self.spawn_game(args, credential, matched, make_policy());
    }

    /// Plays the matched game in a local task, with the queue's credential.
    fn spawn_game<P: Policy + 'static>(
        &self,
        args: &BotArgs,
        credential: &Option<String>,
        matched: pb::ladder_event::Matched,
        policy: P,
    ) {
        let mut game_args = args.clone();
        game_args.game = Some(matched.game_id.clone());
        game_args.seat = Some(matched.seat);
        game_args.token = Some(matched.token);
        game_args.matched = true;
        game_args.ladder = Default::default();
        game_args.api_key.clone_from(credential);
        let tasks = self.clone();
        tokio::task::spawn_local(async move {
            let result = crate::play(game_args, policy).await;
            let mut tally = tasks.run.borrow_mut();
            tally.games += 1;
            match result {
                Ok(over) => {
                    tracing::info!(game = %over.game_id, "game over: {}", over.outcome.map_or_else(|| "no outcome (cancelled or abandoned)".to_string(), |o| o.summary))
                }
                Err(e) if refused_credentials(&e) => {
                    tally.failed += 1;
                    let _ = tasks.fatal.send(e);
                }
                Err(e) => {
                    tally.failed += 1;
                    tracing::warn!(game = %matched.game_id, "the game's runner stopped: {e}");
                }
            }
            tasks.playing.borrow_mut().remove(&matched.game_id);
            tasks.played.borrow_mut().insert(matched.game_id.clone());
            let _ = tasks.done.send(());
        });
    }
}

/// A rated game, as the bot's log says it.
fn log_rated(f: &pb::ladder_event::Finished) {
    let (before, after) = (
        f.rating_before.unwrap_or_default(),
        f.rating_after.unwrap_or_default(),
    );
    tracing::info!(game = %f.game_id, rank = f.rank, score = f.score, void = f.void, "rated: mu {:.2} -> {:.2}, sigma {:.2} -> {:.2}", before.mu, after.mu, before.sigma, after.sigma);
}

/// The Queue stream failed: why to queue again (a transient failure), or the error that stops
/// the run (another process queued with this key: two players of one bot would fight; anything
/// else refused for good), once the games in play are over: they are still the bot's own.
async fn queue_lost(
    status: tonic::Status,
    playing: &Rc<RefCell<HashSet<String>>>,
    waits: (
        &mut UnboundedReceiver<()>,
        &mut UnboundedReceiver<BotError>,
        &mut Signals,
    ),
) -> Result<String, BotError> {
    if status.code() != Code::Aborted && crate::error::is_transient(&status) {
        tracing::warn!(
            "lost the Queue stream ({}): queueing again",
            status.message()
        );
        return Ok(format!("Queue: {}", status.message()));
    }
    Err(queue_refused(status, playing, waits).await)
}

/// A pause the ladder sent: whether queueing again lifts it (timeouts, no first action), or
/// the error that stops the run (the bot was retired).
fn queue_again_after(p: pb::ladder_event::Paused) -> Result<bool, BotError> {
    let reason = Reason::try_from(p.reason).unwrap_or(Reason::Unspecified);
    tracing::warn!(?reason, "paused by the ladder: {}", p.detail);
    match reason {
        Reason::Retired => Err(BotError::Refused {
            what: "play on the ladder",
            status: tonic::Status::failed_precondition(p.detail),
        }),
        Reason::Timeouts | Reason::NoFirstAction => Ok(true),
        _ => Ok(false),
    }
}
