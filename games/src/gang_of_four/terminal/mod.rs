//! Gang of Four's terminal table: the screen's state (the hand cursor, the chosen cards, what
//! is being typed, the tab position, the last-card question) and what each key does.
//! `draw.rs` draws it, `selection.rs` turns chosen cards into the legal action they stand for
//! (or the engine's reason why none), `cards.rs` draws a card.

mod cards;
mod draw;
pub mod selection;

pub use cards::{gof_card, gof_cards, gof_style};

use crate::terminal::{send, Command, Feedback, Screen, Seen, Tone};
use gangs_proto::v1 as pb;
use pb::gang_of_four_action::Kind as GofAction;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::Frame;
use selection::Selection;

/// A question that takes the keys until it is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    /// Manual last card: this play leaves one card; announce it?
    AnnounceLastCard { cards: Selection },
}

#[derive(Debug, Default)]
pub struct GangOfFourScreen {
    pub cursor: usize,
    pub selection: Selection,
    pub typed: String,
    /// The position among the legal plays that `tab` reached.
    pub cycle: Option<usize>,
    pub prompt: Option<Prompt>,
}

/// The screen for a new table (the kind registry's constructor).
pub(crate) fn new_screen() -> Box<dyn Screen> {
    Box::<GangOfFourScreen>::default()
}

fn gof_view<'a>(seen: &Seen<'a>) -> Option<&'a pb::GangOfFourView> {
    match seen.view()?.game.as_ref()? {
        pb::game_view::Game::GangOfFour(v) => Some(v),
        _ => None,
    }
}

fn hand<'a>(seen: &Seen<'a>) -> &'a [pb::GangOfFourCard] {
    gof_view(seen).map_or(&[][..], |v| v.hand.as_slice())
}

impl Screen for GangOfFourScreen {
    fn on_update(&mut self, seen: &Seen, turn_starts: bool) {
        // A selection that no longer fits the hand is dropped.
        let held: Selection = hand(seen).iter().map(|c| c.id).collect();
        if !self.selection.is_subset(&held) || turn_starts {
            self.selection.retain(|id| held.contains(id));
            self.cycle = None;
        }
        if seen.legal().is_empty() {
            self.prompt = None;
        }
        self.cursor = self.cursor.min(hand(seen).len().saturating_sub(1));
    }

    fn on_key(&mut self, seen: &Seen, key: KeyEvent, feedback: &mut Feedback) -> Command {
        if let Some(prompt) = self.prompt.clone() {
            return self.on_prompt_key(seen, prompt, key, feedback);
        }
        let hand_len = hand(seen).len();
        match key.code {
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => {
                self.cursor = (self.cursor + 1).min(hand_len.saturating_sub(1));
            }
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = hand_len.saturating_sub(1),
            KeyCode::Char(' ') if self.typed.is_empty() => {
                if let Some(card) = hand(seen).get(self.cursor) {
                    let id = card.id;
                    if !self.selection.remove(&id) {
                        self.selection.insert(id);
                    }
                    self.cycle = None;
                    self.judge_selection(seen, feedback);
                }
            }
            KeyCode::Tab => self.cycle_legal(seen, 1, feedback),
            KeyCode::BackTab => self.cycle_legal(seen, -1, feedback),
            KeyCode::Esc => {
                self.selection.clear();
                self.typed.clear();
                self.cycle = None;
                *feedback = None;
            }
            KeyCode::Char('p') if self.typed.is_empty() => return self.pass(seen, feedback),
            KeyCode::Backspace => {
                self.typed.pop();
                self.apply_typed(seen, feedback);
            }
            KeyCode::Enter => return self.commit(seen, feedback),
            KeyCode::Char(c) if c.is_ascii_alphanumeric() || c == ' ' => {
                if self.typed.len() < 64 {
                    self.typed.push(c);
                }
                self.apply_typed(seen, feedback);
            }
            _ => {}
        }
        Command::None
    }

    fn on_sent(&mut self) {
        self.selection.clear();
        self.typed.clear();
        self.cycle = None;
    }

    fn holds_keys(&self) -> bool {
        self.prompt.is_some() || !self.typed.is_empty()
    }

    fn draw(&self, frame: &mut Frame, area: Rect, seen: &Seen) {
        draw::draw(frame, area, self, seen);
    }
}

impl GangOfFourScreen {
    fn on_prompt_key(
        &mut self,
        seen: &Seen,
        prompt: Prompt,
        key: KeyEvent,
        feedback: &mut Feedback,
    ) -> Command {
        match prompt {
            Prompt::AnnounceLastCard { cards } => {
                let announce = match key.code {
                    KeyCode::Char('y') | KeyCode::Char('c') => true,
                    KeyCode::Char('n') => false,
                    KeyCode::Esc => {
                        self.prompt = None;
                        return Command::None;
                    }
                    _ => return Command::None,
                };
                self.prompt = None;
                match selection::matching_action(seen.legal(), &cards, announce) {
                    Some(action) => send(feedback, action),
                    None => {
                        *feedback = Some((Tone::Bad, "that play is no longer legal".into()));
                        Command::None
                    }
                }
            }
        }
    }

    fn apply_typed(&mut self, seen: &Seen, feedback: &mut Feedback) {
        match selection::resolve_typed(hand(seen), &self.typed) {
            Ok(picked) => {
                self.selection = picked;
                self.cycle = None;
                self.judge_selection(seen, feedback);
            }
            Err(why) => *feedback = Some((Tone::Bad, why)),
        }
    }

    /// The verdict on the current selection, shown before anything is sent.
    pub fn judge_selection(&self, seen: &Seen, feedback: &mut Feedback) {
        if self.selection.is_empty() {
            *feedback = None;
            return;
        }
        *feedback = Some(match self.selection_verdict(seen) {
            Ok(text) => (Tone::Good, text),
            Err(text) => (Tone::Bad, text),
        });
    }

    /// `Ok(what it is)` if the selection is a legal move now, else why not.
    fn selection_verdict(&self, seen: &Seen) -> Result<String, String> {
        let legal = seen.legal();
        if legal.is_empty() {
            return Err("not your turn".into());
        }
        let give_back = legal
            .iter()
            .any(|a| matches!(selection::gof_kind(a), Some(GofAction::GiveBack(_))));
        if give_back {
            return match selection::matching_action(legal, &self.selection, false) {
                Some(action) => Ok(format!(
                    "{}: Enter gives it",
                    crate::describe_action(&action)
                )),
                None => Err("give back exactly one card of your hand".into()),
            };
        }
        let legal_play = selection::matching_action(legal, &self.selection, false)
            .or_else(|| selection::matching_action(legal, &self.selection, true));
        if legal_play.is_some() {
            let name = selection::combination_name(&self.selection).unwrap_or("play");
            return Ok(format!("legal {name}: Enter plays it"));
        }
        let (Some(view), Some(seat)) = (gof_view(seen), seen.seat) else {
            return Err("not a legal play now".into());
        };
        Err(
            selection::engine_refusal(view, seat, &self.selection, false)
                .unwrap_or_else(|| "not among the legal plays now".into()),
        )
    }

    fn cycle_legal(&mut self, seen: &Seen, step: isize, feedback: &mut Feedback) {
        let plays: Vec<Selection> = seen
            .legal()
            .iter()
            .map(selection::action_cards)
            .filter(|cards| !cards.is_empty())
            .fold(Vec::new(), |mut distinct, cards| {
                if !distinct.contains(&cards) {
                    distinct.push(cards);
                }
                distinct
            });
        if plays.is_empty() {
            *feedback = Some((Tone::Info, "no play to choose: `p` passes".into()));
            return;
        }
        let n = plays.len() as isize;
        let next = match self.cycle {
            Some(i) => (i as isize + step).rem_euclid(n),
            None if step > 0 => 0,
            None => n - 1,
        } as usize;
        self.cycle = Some(next);
        self.selection = plays[next].clone();
        self.typed.clear();
        if let Some(first) = self.selection.first() {
            if let Some(at) = hand(seen).iter().position(|c| c.id == *first) {
                self.cursor = at;
            }
        }
        self.judge_selection(seen, feedback);
        if let Some((tone, text)) = feedback.take() {
            *feedback = Some((tone, format!("{text} ({}/{n} by tab)", next + 1)));
        }
    }

    fn pass(&mut self, seen: &Seen, feedback: &mut Feedback) -> Command {
        let pass = seen
            .legal()
            .iter()
            .find(|a| matches!(selection::gof_kind(a), Some(GofAction::Pass(_))))
            .cloned();
        match pass {
            Some(action) => send(feedback, action),
            None => {
                let why = match (gof_view(seen), seen.seat) {
                    _ if seen.legal().is_empty() => "not your turn".to_string(),
                    (Some(view), Some(seat)) => {
                        selection::engine_refusal(view, seat, &Selection::new(), false)
                            .unwrap_or_else(|| "you may not pass now".into())
                    }
                    _ => "you may not pass now".into(),
                };
                *feedback = Some((Tone::Bad, why));
                Command::None
            }
        }
    }

    fn commit(&mut self, seen: &Seen, feedback: &mut Feedback) -> Command {
        if self.selection.is_empty() {
            *feedback = Some((
                Tone::Info,
                "choose cards first: ←→ and space, type values (7 7) or words (r7 y7), tab cycles the legal plays".into(),
            ));
            return Command::None;
        }
        match self.selection_verdict(seen) {
            Err(why) => {
                *feedback = Some((Tone::Bad, why));
                Command::None
            }
            Ok(_) => {
                let legal = seen.legal();
                if selection::announce_possible(legal, &self.selection) {
                    self.prompt = Some(Prompt::AnnounceLastCard {
                        cards: self.selection.clone(),
                    });
                    return Command::None;
                }
                match selection::matching_action(legal, &self.selection, false) {
                    Some(action) => send(feedback, action),
                    None => Command::None,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyEventKind, KeyEventState, KeyModifiers};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent {
            code,
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Press,
            state: KeyEventState::NONE,
        }
    }

    fn gof_play(ids: &[u32]) -> pb::GameAction {
        pb::GameAction {
            game: Some(pb::game_action::Game::GangOfFour(pb::GangOfFourAction {
                kind: Some(GofAction::Play(pb::gang_of_four_action::Play {
                    card_ids: ids.to_vec(),
                    ..Default::default()
                })),
            })),
        }
    }

    /// Seat 0 leads with 7 7 8 in hand; the legal plays are given.
    fn update(legal: Vec<pb::GameAction>) -> pb::Update {
        let hand: Vec<_> = [37u8, 39, 44]
            .into_iter()
            .map(crate::gang_of_four::card)
            .collect();
        let view = pb::GangOfFourView {
            hand,
            seats: (0..4)
                .map(|seat| pb::gang_of_four_view::Seat {
                    seat,
                    card_count: if seat == 0 { 3 } else { 16 },
                    ..Default::default()
                })
                .collect(),
            turn: Some(0),
            deal_number: 1,
            phase: pb::gang_of_four_view::Phase::Play as i32,
            ..Default::default()
        };
        pb::Update {
            seq: 5,
            view: Some(pb::GameView {
                game: Some(pb::game_view::Game::GangOfFour(view)),
            }),
            legal_actions: legal,
            status: pb::GameStatus::Running as i32,
            seat: Some(0),
            ..Default::default()
        }
    }

    fn seen(update: &pb::Update) -> Seen<'_> {
        Seen {
            game_id: "g",
            seat: Some(0),
            interactive: true,
            update: Some(update),
        }
    }

    struct Table {
        screen: GangOfFourScreen,
        update: pb::Update,
        feedback: Feedback,
    }

    impl Table {
        fn new(legal: Vec<pb::GameAction>) -> Table {
            let update = update(legal);
            let mut screen = GangOfFourScreen::default();
            screen.on_update(&seen(&update), true);
            Table {
                screen,
                update,
                feedback: None,
            }
        }

        fn key(&mut self, code: KeyCode) -> Command {
            self.screen
                .on_key(&seen(&self.update), key(code), &mut self.feedback)
        }
    }

    fn default_legal() -> Vec<pb::GameAction> {
        vec![gof_play(&[37]), gof_play(&[37, 39]), gof_play(&[44])]
    }

    #[test]
    fn space_selects_under_the_cursor_and_enter_plays_a_legal_selection() {
        let mut t = Table::new(default_legal());
        assert_eq!(t.key(KeyCode::Char(' ')), Command::None);
        t.key(KeyCode::Right);
        t.key(KeyCode::Char(' '));
        assert_eq!(t.screen.selection, Selection::from([37, 39]));
        assert_eq!(t.feedback.as_ref().unwrap().0, Tone::Good);
        assert_eq!(t.key(KeyCode::Enter), Command::Act(gof_play(&[37, 39])));
    }

    #[test]
    fn a_bad_selection_says_why_and_sends_nothing() {
        let mut t = Table::new(default_legal());
        for c in "7 8".chars() {
            t.key(KeyCode::Char(c));
        }
        assert_eq!(t.screen.selection, Selection::from([37, 44]));
        let (tone, text) = t.feedback.clone().unwrap();
        assert_eq!(tone, Tone::Bad);
        assert!(
            text.contains("a pair needs two cards of the same value"),
            "{text}"
        );
        assert!(t.screen.holds_keys(), "typing holds the keys");
        assert_eq!(t.key(KeyCode::Enter), Command::None);
        // A leader may not pass: `p` says so in the engine's words.
        t.key(KeyCode::Esc);
        assert!(!t.screen.holds_keys());
        assert_eq!(t.key(KeyCode::Char('p')), Command::None);
        assert!(t.feedback.unwrap().1.contains("may not pass"));
    }

    #[test]
    fn a_play_that_leaves_one_card_asks_about_the_announcement() {
        // Manual last card: the pair 7 7 leaves one card, so it comes with and without the flag.
        let announced = |ids: &[u32]| {
            let mut action = gof_play(ids);
            if let Some(pb::game_action::Game::GangOfFour(a)) = action.game.as_mut() {
                if let Some(GofAction::Play(p)) = a.kind.as_mut() {
                    p.announce_last_card = true;
                }
            }
            action
        };
        let mut t = Table::new(vec![gof_play(&[37, 39]), announced(&[37, 39])]);
        t.key(KeyCode::Tab);
        assert_eq!(t.key(KeyCode::Enter), Command::None);
        assert!(matches!(
            t.screen.prompt,
            Some(Prompt::AnnounceLastCard { .. })
        ));
        assert!(t.screen.holds_keys());
        // Other keys wait for the answer; `y` sends the play with the announcement.
        assert_eq!(t.key(KeyCode::Char('p')), Command::None);
        assert_eq!(
            t.key(KeyCode::Char('y')),
            Command::Act(announced(&[37, 39]))
        );
        assert_eq!(t.screen.prompt, None);
        // `n` sends it without.
        t.key(KeyCode::Enter);
        assert_eq!(t.key(KeyCode::Char('n')), Command::Act(gof_play(&[37, 39])));
    }

    #[test]
    fn tab_cycles_the_legal_plays() {
        let mut t = Table::new(default_legal());
        t.key(KeyCode::Tab);
        assert_eq!(t.screen.selection, Selection::from([37]));
        t.key(KeyCode::Tab);
        assert_eq!(t.screen.selection, Selection::from([37, 39]));
        t.key(KeyCode::BackTab);
        assert_eq!(t.screen.selection, Selection::from([37]));
    }
}
