//! The state of the table on screen and what each key does to it. Pure: updates and keys go
//! in, a [`Command`] (send this action, leave) comes out; the driver in `mod.rs` does the I/O
//! and the screens in `gang_of_four.rs` / `the_gang.rs` draw it.

use super::selection::{self, Selection};
use crate::output::is_finished;
use gangs_games::{describe_action, describe_event};
use gangs_proto::v1 as pb;
use pb::gang_of_four_action::Kind as GofAction;
use pb::the_gang_action::Kind as GangAction;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::VecDeque;

/// Lines the log pane keeps.
const LOG_LINES: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameKind {
    GangOfFour,
    TheGang,
}

impl GameKind {
    pub fn from_name(kind: &str) -> Option<GameKind> {
        match kind {
            gangs_games::GANG_OF_FOUR => Some(GameKind::GangOfFour),
            gangs_games::THE_GANG => Some(GameKind::TheGang),
            _ => None,
        }
    }
}

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

/// A question that takes the keys until it is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    /// Gang of Four, manual last card: this play leaves one card; announce it?
    AnnounceLastCard { cards: Selection },
}

pub struct App {
    pub kind: GameKind,
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
    pub feedback: Option<(Tone, String)>,
    /// Now, in unix ms, for the clocks (set by the driver's tick).
    pub now_ms: i64,
    // Gang of Four: the hand cursor, the chosen cards, what is being typed, the tab position.
    pub cursor: usize,
    pub selection: Selection,
    pub typed: String,
    pub cycle: Option<usize>,
    pub prompt: Option<Prompt>,
    // The Gang: the highlighted entry of the action menu.
    pub menu: usize,
}

impl App {
    pub fn new(kind: GameKind, game_id: String, seat: Option<u32>, interactive: bool) -> App {
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
            cursor: 0,
            selection: Selection::new(),
            typed: String::new(),
            cycle: None,
            prompt: None,
            menu: 0,
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

    pub fn gof_view(&self) -> Option<&pb::GangOfFourView> {
        match self.update.as_ref()?.view.as_ref()?.game.as_ref()? {
            pb::game_view::Game::GangOfFour(v) => Some(v),
            _ => None,
        }
    }

    pub fn gang_view(&self) -> Option<&pb::TheGangView> {
        match self.update.as_ref()?.view.as_ref()?.game.as_ref()? {
            pb::game_view::Game::TheGang(v) => Some(v),
            _ => None,
        }
    }

    pub fn hand(&self) -> &[pb::GangOfFourCard] {
        self.gof_view().map_or(&[][..], |v| v.hand.as_slice())
    }

    /// Takes in one update: its events go to the log, it becomes the state shown. A
    /// selection that no longer fits the hand is dropped.
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
        if let Some(outcome) = update.outcome.as_ref().filter(|_| is_finished(&update)) {
            self.push_log(format!("      game over: {}", outcome.summary));
        }
        if update.seat.is_some() {
            self.seat = update.seat;
        }
        let was_my_turn = !self.legal().is_empty();
        let turn_starts = !was_my_turn && !update.legal_actions.is_empty();
        self.update = Some(update);
        let held: Selection = self.hand().iter().map(|c| c.id).collect();
        if !self.selection.is_subset(&held) || turn_starts {
            self.selection.retain(|id| held.contains(id));
            self.cycle = None;
        }
        if self.legal().is_empty() {
            self.prompt = None;
        }
        self.cursor = self.cursor.min(self.hand().len().saturating_sub(1));
        self.menu = self.menu.min(self.legal().len().saturating_sub(1));
    }

    pub fn push_log(&mut self, line: String) {
        if self.log.len() == LOG_LINES {
            self.log.pop_front();
        }
        self.log.push_back(line);
    }

    fn say(&mut self, tone: Tone, text: impl Into<String>) {
        self.feedback = Some((tone, text.into()));
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Command {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Command::Quit;
        }
        if let Some(prompt) = self.prompt.clone() {
            return self.on_prompt_key(prompt, key);
        }
        if self.typed.is_empty() && key.code == KeyCode::Char('q') {
            return Command::Quit;
        }
        if !self.interactive || self.finished() {
            return Command::None;
        }
        match self.kind {
            GameKind::GangOfFour => self.on_gof_key(key),
            GameKind::TheGang => self.on_gang_key(key),
        }
    }

    fn on_prompt_key(&mut self, prompt: Prompt, key: KeyEvent) -> Command {
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
                match selection::matching_action(self.legal(), &cards, announce) {
                    Some(action) => self.send(action),
                    None => {
                        self.say(Tone::Bad, "that play is no longer legal");
                        Command::None
                    }
                }
            }
        }
    }

    fn send(&mut self, action: pb::GameAction) -> Command {
        self.say(
            Tone::Info,
            format!("sending `{}`…", describe_action(&action)),
        );
        Command::Act(action)
    }

    /// The driver's answer to an action: sent (`Ok`), or refused with the server's words.
    pub fn on_act_result(&mut self, result: Result<String, String>) {
        match result {
            Ok(words) => {
                self.selection.clear();
                self.typed.clear();
                self.cycle = None;
                self.say(Tone::Good, format!("played `{words}`"));
            }
            Err(why) => self.say(Tone::Bad, why),
        }
    }

    // ---- Gang of Four ----

    fn on_gof_key(&mut self, key: KeyEvent) -> Command {
        let hand_len = self.hand().len();
        match key.code {
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => {
                self.cursor = (self.cursor + 1).min(hand_len.saturating_sub(1));
            }
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = hand_len.saturating_sub(1),
            KeyCode::Char(' ') if self.typed.is_empty() => {
                if let Some(card) = self.hand().get(self.cursor) {
                    let id = card.id;
                    if !self.selection.remove(&id) {
                        self.selection.insert(id);
                    }
                    self.cycle = None;
                    self.judge_selection();
                }
            }
            KeyCode::Tab => self.cycle_legal(1),
            KeyCode::BackTab => self.cycle_legal(-1),
            KeyCode::Esc => {
                self.selection.clear();
                self.typed.clear();
                self.cycle = None;
                self.feedback = None;
            }
            KeyCode::Char('p') if self.typed.is_empty() => return self.gof_pass(),
            KeyCode::Backspace => {
                self.typed.pop();
                self.apply_typed();
            }
            KeyCode::Enter => return self.gof_commit(),
            KeyCode::Char(c) if c.is_ascii_alphanumeric() || c == ' ' => {
                if self.typed.len() < 64 {
                    self.typed.push(c);
                }
                self.apply_typed();
            }
            _ => {}
        }
        Command::None
    }

    fn apply_typed(&mut self) {
        match selection::resolve_typed(self.hand(), &self.typed) {
            Ok(picked) => {
                self.selection = picked;
                self.cycle = None;
                self.judge_selection();
            }
            Err(why) => self.say(Tone::Bad, why),
        }
    }

    /// The verdict on the current selection, shown before anything is sent.
    pub fn judge_selection(&mut self) {
        if self.selection.is_empty() {
            self.feedback = None;
            return;
        }
        let verdict = self.selection_verdict();
        match verdict {
            Ok(text) => self.say(Tone::Good, text),
            Err(text) => self.say(Tone::Bad, text),
        }
    }

    /// `Ok(what it is)` if the selection is a legal move now, else why not.
    fn selection_verdict(&self) -> Result<String, String> {
        let legal = self.legal();
        if legal.is_empty() {
            return Err("not your turn".into());
        }
        let give_back = legal
            .iter()
            .any(|a| matches!(selection::gof_kind(a), Some(GofAction::GiveBack(_))));
        if give_back {
            return match selection::matching_action(legal, &self.selection, false) {
                Some(action) => Ok(format!("{}: Enter gives it", describe_action(&action))),
                None => Err("give back exactly one card of your hand".into()),
            };
        }
        let legal_play = selection::matching_action(legal, &self.selection, false)
            .or_else(|| selection::matching_action(legal, &self.selection, true));
        if legal_play.is_some() {
            let name = selection::combination_name(&self.selection).unwrap_or("play");
            return Ok(format!("legal {name}: Enter plays it"));
        }
        let (Some(view), Some(seat)) = (self.gof_view(), self.seat) else {
            return Err("not a legal play now".into());
        };
        Err(
            selection::engine_refusal(view, seat, &self.selection, false)
                .unwrap_or_else(|| "not among the legal plays now".into()),
        )
    }

    fn cycle_legal(&mut self, step: isize) {
        let plays: Vec<Selection> = self
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
            self.say(Tone::Info, "no play to choose: `p` passes");
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
            if let Some(at) = self.hand().iter().position(|c| c.id == *first) {
                self.cursor = at;
            }
        }
        self.judge_selection();
        if let Some((tone, text)) = self.feedback.take() {
            self.feedback = Some((tone, format!("{text} ({}/{n} by tab)", next + 1)));
        }
    }

    fn gof_pass(&mut self) -> Command {
        let pass = self
            .legal()
            .iter()
            .find(|a| matches!(selection::gof_kind(a), Some(GofAction::Pass(_))))
            .cloned();
        match pass {
            Some(action) => self.send(action),
            None => {
                let why = match (self.gof_view(), self.seat) {
                    _ if self.legal().is_empty() => "not your turn".to_string(),
                    (Some(view), Some(seat)) => {
                        selection::engine_refusal(view, seat, &Selection::new(), false)
                            .unwrap_or_else(|| "you may not pass now".into())
                    }
                    _ => "you may not pass now".into(),
                };
                self.say(Tone::Bad, why);
                Command::None
            }
        }
    }

    fn gof_commit(&mut self) -> Command {
        if self.selection.is_empty() {
            self.say(
                Tone::Info,
                "choose cards first: ←→ and space, type values (7 7) or words (r7 y7), tab cycles the legal plays",
            );
            return Command::None;
        }
        match self.selection_verdict() {
            Err(why) => {
                self.say(Tone::Bad, why);
                Command::None
            }
            Ok(_) => {
                let legal = self.legal();
                if selection::announce_possible(legal, &self.selection) {
                    self.prompt = Some(Prompt::AnnounceLastCard {
                        cards: self.selection.clone(),
                    });
                    return Command::None;
                }
                match selection::matching_action(legal, &self.selection, false) {
                    Some(action) => self.send(action),
                    None => Command::None,
                }
            }
        }
    }

    // ---- The Gang ----

    fn on_gang_key(&mut self, key: KeyEvent) -> Command {
        let n = self.legal().len();
        let voting = self
            .legal()
            .iter()
            .any(|a| matches!(gang_kind(a), Some(GangAction::Vote(_))));
        match key.code {
            KeyCode::Up => self.menu = self.menu.saturating_sub(1),
            KeyCode::Down => self.menu = (self.menu + 1).min(n.saturating_sub(1)),
            KeyCode::Enter => {
                if let Some(action) = self.legal().get(self.menu).cloned() {
                    return self.send(action);
                }
                self.say(Tone::Info, "nothing to do now: wait for the others");
            }
            KeyCode::Char(c @ '1'..='9') => {
                let stars = c.to_digit(10).unwrap_or(0);
                return self.gang_pick(
                    |a| matches!(a, GangAction::Take(t) if t.stars == stars),
                    format!("you cannot take ★{stars} now"),
                );
            }
            KeyCode::Char('r') => {
                return self.gang_pick(
                    |a| matches!(a, GangAction::ReturnChip(_)),
                    "you hold no chip of this street to return".into(),
                )
            }
            KeyCode::Char('d') => {
                return self.gang_pick(
                    |a| matches!(a, GangAction::Ready(_)),
                    "you cannot declare ready now".into(),
                )
            }
            KeyCode::Char(c @ ('y' | 'n')) if voting => {
                let accept = c == 'y';
                return self.gang_pick(
                    |a| matches!(a, GangAction::Vote(v) if v.accept == accept),
                    "no proposal waits for your vote".into(),
                );
            }
            _ => {}
        }
        Command::None
    }

    fn gang_pick(&mut self, wanted: impl Fn(&GangAction) -> bool, refusal: String) -> Command {
        let found = self
            .legal()
            .iter()
            .find(|a| gang_kind(a).is_some_and(&wanted))
            .cloned();
        match found {
            Some(action) => self.send(action),
            None => {
                self.say(Tone::Bad, refusal);
                Command::None
            }
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

pub fn gang_kind(action: &pb::GameAction) -> Option<&GangAction> {
    match &action.game {
        Some(pb::game_action::Game::TheGang(a)) => a.kind.as_ref(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyEventKind;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent {
            code,
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Press,
            state: ratatui::crossterm::event::KeyEventState::NONE,
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

    fn gof_app() -> App {
        let mut app = App::new(GameKind::GangOfFour, "g".into(), Some(0), true);
        let hand: Vec<_> = [37u8, 39, 44]
            .into_iter()
            .map(gangs_games::gang_of_four::card)
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
        app.on_update(pb::Update {
            seq: 5,
            view: Some(pb::GameView {
                game: Some(pb::game_view::Game::GangOfFour(view)),
            }),
            legal_actions: vec![gof_play(&[37]), gof_play(&[37, 39]), gof_play(&[44])],
            status: pb::GameStatus::Running as i32,
            seat: Some(0),
            ..Default::default()
        });
        app
    }

    #[test]
    fn space_selects_under_the_cursor_and_enter_plays_a_legal_selection() {
        let mut app = gof_app();
        assert_eq!(app.on_key(key(KeyCode::Char(' '))), Command::None);
        app.on_key(key(KeyCode::Right));
        app.on_key(key(KeyCode::Char(' ')));
        assert_eq!(app.selection, Selection::from([37, 39]));
        assert_eq!(app.feedback.as_ref().unwrap().0, Tone::Good);
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            Command::Act(gof_play(&[37, 39]))
        );
    }

    #[test]
    fn a_bad_selection_says_why_and_sends_nothing() {
        let mut app = gof_app();
        for c in "7 8".chars() {
            app.on_key(key(KeyCode::Char(c)));
        }
        assert_eq!(app.selection, Selection::from([37, 44]));
        let (tone, text) = app.feedback.clone().unwrap();
        assert_eq!(tone, Tone::Bad);
        assert!(
            text.contains("a pair needs two cards of the same value"),
            "{text}"
        );
        assert_eq!(app.on_key(key(KeyCode::Enter)), Command::None);
        // A leader may not pass: `p` says so in the engine's words.
        app.on_key(key(KeyCode::Esc));
        assert_eq!(app.on_key(key(KeyCode::Char('p'))), Command::None);
        assert!(app.feedback.unwrap().1.contains("may not pass"));
    }

    #[test]
    fn a_play_that_leaves_one_card_asks_about_the_announcement() {
        let mut app = gof_app();
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
        if let Some(update) = app.update.as_mut() {
            update.legal_actions = vec![gof_play(&[37, 39]), announced(&[37, 39])];
        }
        app.on_key(key(KeyCode::Tab));
        assert_eq!(app.on_key(key(KeyCode::Enter)), Command::None);
        assert!(matches!(app.prompt, Some(Prompt::AnnounceLastCard { .. })));
        // Other keys wait for the answer; `y` sends the play with the announcement.
        assert_eq!(app.on_key(key(KeyCode::Char('p'))), Command::None);
        assert_eq!(
            app.on_key(key(KeyCode::Char('y'))),
            Command::Act(announced(&[37, 39]))
        );
        assert_eq!(app.prompt, None);
        // `n` sends it without.
        app.on_key(key(KeyCode::Enter));
        assert_eq!(
            app.on_key(key(KeyCode::Char('n'))),
            Command::Act(gof_play(&[37, 39]))
        );
    }

    #[test]
    fn tab_cycles_the_legal_plays() {
        let mut app = gof_app();
        app.on_key(key(KeyCode::Tab));
        assert_eq!(app.selection, Selection::from([37]));
        app.on_key(key(KeyCode::Tab));
        assert_eq!(app.selection, Selection::from([37, 39]));
        app.on_key(key(KeyCode::BackTab));
        assert_eq!(app.selection, Selection::from([37]));
        assert_eq!(app.on_key(key(KeyCode::Char('q'))), Command::Quit);
    }
}
