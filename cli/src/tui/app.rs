//! The state of the table on screen and what a key does to it. Pure: updates and keys go in,
//! a [`Command`] (send this action, leave) comes out; the driver in `mod.rs` does the I/O.
//! The middle of the screen is the game's own ([`Screen`], from the kind registry): this file
//! keeps what every game shares — the update, the log, the connection status, the feedback line.

use crate::output::{is_finished, over_summary};
use gangs_games::describe_event;
pub use gangs_games::terminal::{Command, Tone};
use gangs_games::terminal::{Feedback, Screen, Seen};
use gangs_games::KindInfo;
use gangs_proto::v1 as pb;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::VecDeque;

/// Lines the log pane keeps.
const LOG_LINES: usize = 200;

pub struct App {
    pub kind: &'static KindInfo,
    pub game_id: String,
    /// The seat played or watched; `None` for a spectator.
    pub seat: Option<u32>,
    /// Keys may send actions (`gangs play`), or only look (`gangs watch`).
    pub interactive: bool,
    /// The newest update.
    pub update: Option<pb::Update>,
    /// The last events in words, oldest first.
    pub log: VecDeque<String>,
    /// Connection state: empty while all is well.
    pub status: String,
    pub feedback: Feedback,
    /// Now, in unix ms, for the clocks (set by the driver's tick).
    pub now_ms: i64,
    /// The game's part of the screen.
    pub screen: Box<dyn Screen>,
}

impl App {
    pub fn new(
        kind: &'static KindInfo,
        game_id: String,
        seat: Option<u32>,
        interactive: bool,
    ) -> App {
        App {
            kind,
            game_id,
            seat,
            interactive,
            update: None,
            log: VecDeque::new(),
            status: String::new(),
            feedback: None,
            now_ms: 0,
            screen: kind.screen(),
        }
    }

    /// What the game's screen may read.
    pub fn seen(&self) -> Seen<'_> {
        Seen {
            game_id: &self.game_id,
            seat: self.seat,
            interactive: self.interactive,
            update: self.update.as_ref(),
        }
    }

    pub fn legal(&self) -> &[pb::GameAction] {
        self.update
            .as_ref()
            .map_or(&[][..], |u| u.legal_actions.as_slice())
    }

    pub fn finished(&self) -> bool {
        self.update.as_ref().is_some_and(is_finished)
    }

    /// Takes in one update: its events go to the log, it becomes the state shown.
    pub fn on_update(&mut self, update: pb::Update) {
        for event in &update.events {
            self.push_log(format!("{:>4}  {}", update.seq, describe_event(event)));
        }
        if update.events.is_empty() && update.status == pb::GameStatus::Waiting as i32 {
            self.push_log(format!(
                "{:>4}  {} seat(s) taken",
                update.seq, update.seats_taken
            ));
        }
        if is_finished(&update) {
            self.push_log(format!("      game over: {}", over_summary(&update)));
        }
        if update.seat.is_some() {
            self.seat = update.seat;
        }
        let was_my_turn = !self.legal().is_empty();
        let turn_starts = !was_my_turn && !update.legal_actions.is_empty();
        self.update = Some(update);
        let seen = Seen {
            game_id: &self.game_id,
            seat: self.seat,
            interactive: self.interactive,
            update: self.update.as_ref(),
        };
        self.screen.on_update(&seen, turn_starts);
    }

    pub fn push_log(&mut self, line: String) {
        if self.log.len() == LOG_LINES {
            self.log.pop_front();
        }
        self.log.push_back(line);
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Command {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Command::Quit;
        }
        let held = self.screen.holds_keys();
        if !held && key.code == KeyCode::Char('q') {
            return Command::Quit;
        }
        if !held && (!self.interactive || self.finished()) {
            return Command::None;
        }
        let seen = Seen {
            game_id: &self.game_id,
            seat: self.seat,
            interactive: self.interactive,
            update: self.update.as_ref(),
        };
        self.screen.on_key(&seen, key, &mut self.feedback)
    }

    /// The driver's answer to an action: sent (`Ok`), or refused with the server's words.
    pub fn on_act_result(&mut self, result: Result<String, String>) {
        match result {
            Ok(words) => {
                self.screen.on_sent();
                self.feedback = Some((Tone::Good, format!("played `{words}`")));
            }
            Err(why) => self.feedback = Some((Tone::Bad, why)),
        }
    }

    /// The milliseconds left before the next deadline that concerns this screen: this seat's
    /// clock (or, for a spectator, the earliest seat clock) and the phase deadline, whichever
    /// comes first; `None` in a game without either.
    pub fn deadline_left_ms(&self) -> Option<i64> {
        let update = self.update.as_ref()?;
        let own = update
            .seat
            .and_then(|seat| update.clocks.iter().find(|c| c.seat == seat))
            .and_then(|c| c.deadline_unix_ms);
        let earliest = update
            .clocks
            .iter()
            .filter_map(|c| c.deadline_unix_ms)
            .min();
        let clock = if update.seat.is_some() { own } else { earliest };
        let deadline = [clock, update.deadline_unix_ms]
            .into_iter()
            .flatten()
            .min()?;
        Some((deadline - self.now_ms).max(0))
    }
}
