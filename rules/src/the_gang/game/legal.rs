//! The legal actions: every distinct action a seat may take now, derived from the same checks
//! `act` applies (so a listed action is accepted and an unlisted one refused).

use super::{Action, Stage, TheGang};
use crate::the_gang::challenges::{Challenge, GuessValue};
use crate::the_gang::evaluator::Category;

impl TheGang {
    /// Every distinct action `seat` may take now.
    pub fn legal_actions(&self, seat: usize) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.is_over() || seat >= self.config.players {
            return actions;
        }
        let h = &self.heist;
        match self.stage {
            Stage::Coordinating => {
                if h.coordinator_choices[seat].is_none() {
                    actions.extend(h.private[seat].iter().map(|&c| Action::Choose(c)));
                }
            }
            Stage::Guessing => {
                let g = h.guess.as_ref().expect("open guess");
                if g.target != seat && !g.votes.iter().any(|(s, _)| *s == seat) {
                    if g.challenge == Challenge::RetinalScan {
                        actions.extend((0..13).map(|r| Action::Guess(GuessValue::Rank(r))));
                    } else {
                        actions.extend(
                            Category::ALL
                                .into_iter()
                                .map(|c| Action::Guess(GuessValue::Category(c))),
                        );
                    }
                }
            }
            Stage::Chips(_) => {
                if let Some(p) = &h.proposal {
                    if p.votes[seat].is_none() {
                        actions.push(Action::Accept);
                        actions.push(Action::Refuse);
                    }
                    return actions;
                }
                if let Some(pending) = h.pending {
                    if pending.chooser() == seat {
                        actions.extend(
                            h.private[seat]
                                .iter()
                                .filter(|&&c| pending.allows(c))
                                .map(|&c| Action::Choose(c)),
                        );
                    }
                    return actions;
                }
                let phase = h.phases.last().expect("open phase");
                for stars in 1..=self.config.players as u8 {
                    if phase.check_take(seat, stars).is_ok() {
                        actions.push(Action::Take(stars));
                    }
                }
                if phase.check_return(seat).is_ok() {
                    actions.push(Action::Return);
                }
                if phase.check_ready(seat).is_ok() {
                    actions.push(Action::Ready);
                }
                for use_ in self.all_uses() {
                    if self.check_propose(seat, use_).is_ok() {
                        actions.push(Action::Propose(use_));
                    }
                }
            }
            Stage::NotStarted | Stage::GameOver => {}
        }
        actions
    }
}
