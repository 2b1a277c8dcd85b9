//! The full-screen table of `gangs play` and `gangs watch` (ratatui on crossterm): one
//! screen redrawn in place, for a seat or a spectator. This file is the driver: it owns the
//! terminal, reads keys on a thread of their own, follows the update stream (riding out a
//! server restart with the client's resume logic), sends actions and ticks the clocks.
//!
//! Layout: `app.rs` the state every game shares and where keys go, `log_pane.rs` the header,
//! log and feedback line. The middle of the screen is the game's own `Screen`
//! (`gangs_games::terminal`, each game's `<game>/terminal/` in `gangs-games`), found through
//! the kind registry: nothing here names a game.

pub mod app;
mod log_pane;

use crate::client::{next_batch, Client, Context};
use crate::error::CliError;
use app::{App, Command};
use gangs_games::describe_action;
use gangs_proto::v1 as pb;
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::layout::{Constraint, Layout};
use ratatui::Frame;
use std::future::Future;
use std::io::IsTerminal;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tonic::Code;

/// Whether the full-screen table can run: both ends are a terminal and no plain output was
/// asked for.
pub fn wanted(plain: bool, json: bool) -> bool {
    !plain && !json && std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// How the table was left.
#[derive(Debug, PartialEq, Eq)]
pub enum Ending {
    /// The game is over (the final screen was shown until a key left it).
    Finished { summary: String },
    /// `q` before the end: the seat stays taken.
    Quit,
}

/// The whole screen: header, game, log, feedback.
pub fn draw(frame: &mut Frame, app: &App) {
    let log_height = (frame.area().height / 4).clamp(3, 10);
    let [header, body, log, feedback] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(log_height),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    log_pane::draw_header(frame, header, app);
    app.screen.draw(frame, body, &app.seen());
    log_pane::draw_log(frame, log, app);
    log_pane::draw_feedback(frame, feedback, app);
}

/// Everything the driver needs to follow (and play) one game.
pub struct Table<'a> {
    pub context: &'a Context,
    pub client: Client,
    pub app: App,
    /// The seat's token (empty for a spectator).
    pub token: String,
    pub from_seq: u64,
}

/// Runs the table until the game ends and a key is pressed, or `q`. The stream is opened
/// before the screen is taken over, so a bad game id or token is reported as plain text.
pub async fn run(table: Table<'_>) -> Result<Ending, CliError> {
    let Table {
        context,
        mut client,
        app,
        token,
        from_seq,
    } = table;
    let stream = context
        .watch(&mut client, &app.game_id, &token, from_seq)
        .await?;
    let mut terminal = ratatui::try_init()
        .map_err(|e| CliError::local(format!("cannot take over the terminal: {e}")))?;
    let stop = Arc::new(AtomicBool::new(false));
    let keys = read_keys(stop.clone());
    let driver = Driver {
        context,
        client,
        app,
        token,
        last_seq: from_seq,
    };
    let result = driver.drive(&mut terminal, stream, keys).await;
    stop.store(true, Ordering::Relaxed);
    ratatui::restore();
    result
}

/// Terminal events from a thread of their own (crossterm's reads block), until `stop`.
fn read_keys(stop: Arc<AtomicBool>) -> tokio::sync::mpsc::UnboundedReceiver<Event> {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match event::poll(Duration::from_millis(100)) {
                Ok(true) => match event::read() {
                    Ok(ev) => {
                        if sender.send(ev).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                },
                Ok(false) => {}
                Err(_) => break,
            }
        }
    });
    receiver
}

type Resumed<'a> =
    Pin<Box<dyn Future<Output = Result<(Client, tonic::Streaming<pb::Update>), CliError>> + 'a>>;

struct Driver<'a> {
    context: &'a Context,
    client: Client,
    app: App,
    token: String,
    last_seq: u64,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl<'a> Driver<'a> {
    async fn drive(
        mut self,
        terminal: &mut ratatui::DefaultTerminal,
        stream: tonic::Streaming<pb::Update>,
        mut keys: tokio::sync::mpsc::UnboundedReceiver<Event>,
    ) -> Result<Ending, CliError> {
        let context = self.context;
        let game_id = self.app.game_id.clone();
        let token = self.token.clone();
        let mut stream = Some(stream);
        let mut resuming: Option<Resumed<'_>> = None;
        // When the stream was lost, for the status line's count while reconnecting.
        let mut lost_at: Option<std::time::Instant> = None;
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        let screen_error = |e: std::io::Error| CliError::local(format!("cannot draw: {e}"));
        loop {
            self.app.now_ms = now_ms();
            if let Some(lost_at) = lost_at {
                self.app.status = format!(
                    "connection lost: reconnecting… {} s (after seq {})",
                    lost_at.elapsed().as_secs(),
                    self.last_seq
                );
            }
            terminal
                .draw(|frame| draw(frame, &self.app))
                .map_err(screen_error)?;
            tokio::select! {
                // (A disabled branch's expression is still evaluated: the async block defers it.)
                batch = async { next_batch(stream.as_mut().expect("a stream")).await }, if stream.is_some() => {
                    for update in batch.updates {
                        self.last_seq = update.seq;
                        self.app.on_update(update);
                    }
                    if let Some(end) = batch.end {
                        stream = None;
                        if !self.app.finished() {
                            lost_at = Some(std::time::Instant::now());
                            let last_seq = self.last_seq;
                            let (game_id, token) = (game_id.as_str(), token.as_str());
                            resuming = Some(Box::pin(async move {
                                context.resume_watch_with(game_id, token, last_seq, end, &|_| {}).await
                            }));
                        }
                    }
                }
                resumed = async { resuming.as_mut().expect("a reconnect").await }, if resuming.is_some() => {
                    resuming = None;
                    lost_at = None;
                    let (client, resumed) = resumed?;
                    self.client = client;
                    stream = Some(resumed);
                    self.app.status.clear();
                    self.app.push_log(format!("      reconnected; resuming after seq {}", self.last_seq));
                }
                key = keys.recv() => {
                    let Some(key) = key else {
                        return Err(CliError::local("the terminal closed"));
                    };
                    let Event::Key(key) = key else { continue };
                    if key.kind != KeyEventKind::Press {
                        continue;
                    }
                    if self.app.finished() {
                        if matches!(key.code, event::KeyCode::Char('q') | event::KeyCode::Enter | event::KeyCode::Esc) {
                            let summary = self.app.update.as_ref().and_then(|u| u.outcome.as_ref()).map(|o| o.summary.clone()).unwrap_or_default();
                            return Ok(Ending::Finished { summary });
                        }
                        continue;
                    }
                    match self.app.on_key(key) {
                        Command::None => {}
                        Command::Quit => return Ok(Ending::Quit),
                        Command::Act(action) => {
                            let result = self.act(action).await;
                            self.app.on_act_result(result);
                        }
                    }
                }
                _ = tick.tick() => {}
            }
        }
    }

    /// Sends `action` against the seq on screen; the answer in words for the feedback line.
    async fn act(&mut self, action: pb::GameAction) -> Result<String, String> {
        let words = describe_action(&action);
        let request = pb::ActRequest {
            game_id: self.app.game_id.clone(),
            token: self.token.clone(),
            action: Some(action),
            expected_seq: self.app.update.as_ref().map(|u| u.seq),
            action_id: String::new(),
        };
        match self.client.act(request).await {
            Ok(_) => Ok(words),
            Err(status) => Err(match status.code() {
                Code::Aborted => "too late: the game moved on (see the table)".to_string(),
                Code::Unavailable | Code::Unknown | Code::Cancelled => format!(
                    "no answer from the server for `{words}`: once reconnected, try again (a move already saved is refused as stale)"
                ),
                _ => format!("refused: {}", status.message()),
            }),
        }
    }
}

#[cfg(test)]
mod snapshots;
