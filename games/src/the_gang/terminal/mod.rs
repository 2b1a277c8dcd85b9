//! The Gang's terminal table: the screen's state (the highlighted entry of the action menu)
//! and what each key does — digits take a chip, `r` returns it, `d` says ready, `y`/`n` vote,
//! ↑↓ and Enter pick any legal action. `draw.rs` draws it, `cards.rs` draws a card or a chip.

mod cards;
mod draw;

pub use cards::{chip, poker_card, ORANGE};

use crate::terminal::{send, Command, Feedback, Screen, Seen, Tone};
use gangs_proto::v1 as pb;
use pb::the_gang_action::Kind as GangAction;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::Frame;

#[derive(Debug, Default)]
pub struct TheGangScreen {
    /// The highlighted entry of the action menu.
    pub menu: usize,
}

/// The screen for a new table (the kind registry's constructor).
pub(crate) fn new_screen() -> Box<dyn Screen> {
    Box::<TheGangScreen>::default()
}

fn gang_view<'a>(seen: &Seen<'a>) -> Option<&'a pb::TheGangView> {
    match seen.view()?.game.as_ref()? {
        pb::game_view::Game::TheGang(v) => Some(v),
        _ => None,
    }
}

fn gang_kind(action: &pb::GameAction) -> Option<&GangAction> {
    match &action.game {
        Some(pb::game_action::Game::TheGang(a)) => a.kind.as_ref(),
        _ => None,
    }
}

impl Screen for TheGangScreen {
    fn on_update(&mut self, seen: &Seen, _turn_starts: bool) {
        self.menu = self.menu.min(seen.legal().len().saturating_sub(1));
    }

    fn on_key(&mut self, seen: &Seen, key: KeyEvent, feedback: &mut Feedback) -> Command {
        let legal = seen.legal();
        let voting = legal
            .iter()
            .any(|a| matches!(gang_kind(a), Some(GangAction::Vote(_))));
        let pick =
            |feedback: &mut Feedback, wanted: &dyn Fn(&GangAction) -> bool, refusal: String| {
                match legal.iter().find(|a| gang_kind(a).is_some_and(wanted)) {
                    Some(action) => send(feedback, action.clone()),
                    None => {
                        *feedback = Some((Tone::Bad, refusal));
                        Command::None
                    }
                }
            };
        match key.code {
            KeyCode::Up => self.menu = self.menu.saturating_sub(1),
            KeyCode::Down => self.menu = (self.menu + 1).min(legal.len().saturating_sub(1)),
            KeyCode::Enter => {
                if let Some(action) = legal.get(self.menu) {
                    return send(feedback, action.clone());
                }
                *feedback = Some((Tone::Info, "nothing to do now: wait for the others".into()));
            }
            KeyCode::Char(c @ '1'..='9') => {
                let stars = c.to_digit(10).unwrap_or(0);
                return pick(
                    feedback,
                    &|a| matches!(a, GangAction::Take(t) if t.stars == stars),
                    format!("you cannot take ★{stars} now"),
                );
            }
            KeyCode::Char('r') => {
                return pick(
                    feedback,
                    &|a| matches!(a, GangAction::ReturnChip(_)),
                    "you hold no chip of this street to return".into(),
                )
            }
            KeyCode::Char('d') => {
                return pick(
                    feedback,
                    &|a| matches!(a, GangAction::Ready(_)),
                    "you cannot declare ready now".into(),
                )
            }
            KeyCode::Char(c @ ('y' | 'n')) if voting => {
                let accept = c == 'y';
                return pick(
                    feedback,
                    &|a| matches!(a, GangAction::Vote(v) if v.accept == accept),
                    "no proposal waits for your vote".into(),
                );
            }
            _ => {}
        }
        Command::None
    }

    fn on_sent(&mut self) {}

    fn holds_keys(&self) -> bool {
        false
    }

    fn draw(&self, frame: &mut Frame, area: Rect, seen: &Seen) {
        draw::draw(frame, area, self, seen);
    }
}
