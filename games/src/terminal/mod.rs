//! The contract of a game's terminal table (`gangs play`, `gangs watch`; feature `terminal`):
//! the CLI owns the terminal, the stream, the header, the log pane and the feedback line; a
//! game owns the middle of the screen through a [`Screen`] — what it draws from the seat's
//! update, and what its keys do. Each game's screen lives in its own module
//! (`<game>/terminal/`) and is found through the kind registry (`KindInfo::screen`), so the
//! CLI names no game.
//!
//! A screen is pure: updates and keys go in, a [`Command`] comes out, and it may set the
//! feedback line. Legality always comes from the update's `legal_actions` (the server's), never
//! from the screen's own reading of the rules; a screen may ask its game's engine *why* a
//! choice is refused, to say it in the engine's words before anything is sent.

use gangs_proto::v1 as pb;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;

/// What the driver should do after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    None,
    Act(pb::GameAction),
    Quit,
}

/// How the feedback line reads: fine (green), refused (red), plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Good,
    Bad,
    Info,
}

/// The line under the table: what a key did, or why a choice is refused.
pub type Feedback = Option<(Tone, String)>;

/// What a screen may read of the table: the game, who is looking, and the newest update.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub game_id: &'a str,
    /// The seat played or watched; `None` for a spectator.
    pub seat: Option<u32>,
    /// Keys may send actions (`gangs play`), or only look (`gangs watch`).
    pub interactive: bool,
    pub update: Option<&'a pb::Update>,
}

impl<'a> Seen<'a> {
    /// What this seat may do now (empty when it may not act).
    pub fn legal(&self) -> &'a [pb::GameAction] {
        self.update.map_or(&[][..], |u| u.legal_actions.as_slice())
    }

    pub fn view(&self) -> Option<&'a pb::GameView> {
        self.update?.view.as_ref()
    }

    /// `seat N (you)` for the seat on screen, `seat N` for the others.
    pub fn seat_name(&self, seat: u32) -> String {
        if self.seat == Some(seat) {
            format!("seat {seat} (you)")
        } else {
            format!("seat {seat}")
        }
    }
}

/// One game's part of the table. Implementations keep only the screen's own state (a cursor,
/// a selection, a menu); everything known about the game comes from [`Seen`].
pub trait Screen: Send {
    /// A new update is on screen. `turn_starts`: this seat may act now and could not before
    /// (a choice in progress from an earlier turn may be dropped).
    fn on_update(&mut self, seen: &Seen, turn_starts: bool);
    /// A key, when the seat may act (interactive, game not over) or while
    /// [`Screen::holds_keys`]. May set the feedback line.
    fn on_key(&mut self, seen: &Seen, key: KeyEvent, feedback: &mut Feedback) -> Command;
    /// The action last sent was accepted: clear what was chosen for it.
    fn on_sent(&mut self);
    /// A question or typing takes every key (`q` is then not "leave").
    fn holds_keys(&self) -> bool;
    /// The game's part of the screen, in `area`.
    fn draw(&self, frame: &mut Frame, area: Rect, seen: &Seen);
}

/// Says that `action` is being sent, and sends it.
pub fn send(feedback: &mut Feedback, action: pb::GameAction) -> Command {
    *feedback = Some((
        Tone::Info,
        format!("sending `{}`…", crate::describe_action(&action)),
    ));
    Command::Act(action)
}

/// A bordered box in the middle of `area`, over what is there.
pub fn dialog(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line>) {
    let width = area.width.clamp(20, 64);
    let height = (lines.len() as u16 + 2).min(area.height);
    let [row] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(area);
    let [cell] = Layout::horizontal([Constraint::Length(width)])
        .flex(Flex::Center)
        .areas(row);
    frame.render_widget(Clear, cell);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(format!(" {title} "))),
        cell,
    );
}
