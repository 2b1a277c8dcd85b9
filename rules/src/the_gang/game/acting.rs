//! The two entry points that change a game in progress: `act` (a seat's action, dispatched to
//! its stage) and `expire` (a deadline passed: the silent seats' part is played), and closing
//! a chip phase after either.

use super::{Action, Stage, TheGang};
use crate::the_gang::chips::ChipPhase;
use crate::the_gang::{Event, Refusal};

impl TheGang {
    /// Applies `action` for `seat`. On error nothing changed.
    pub fn act(&mut self, seat: usize, action: Action) -> Result<Vec<Event>, Refusal> {
        if seat >= self.config.players {
            return Err(Refusal::invalid(format!("there is no seat {seat}")));
        }
        if self.is_over() {
            return Err(Refusal::not_now("the game is over"));
        }
        let mut events = Vec::new();
        match action {
            Action::Take(stars) => {
                let phase = self.chip_phase_for_moves()?;
                let mv = phase.take(seat, stars)?;
                events.push(Event::ChipMoved(mv));
            }
            Action::Return => {
                let phase = self.chip_phase_for_moves()?;
                let mv = phase.return_chip(seat)?;
                events.push(Event::ChipMoved(mv));
            }
            Action::Ready => {
                let phase = self.chip_phase_for_moves()?;
                phase.set_ready(seat)?;
                events.push(Event::Ready { seat });
            }
            Action::Propose(use_) => self.propose(seat, use_, &mut events)?,
            Action::Accept | Action::Refuse => {
                self.vote(seat, action == Action::Accept, &mut events)?
            }
            Action::Guess(value) => self.guess(seat, value, &mut events)?,
            Action::Choose(card) => self.choose(seat, card, &mut events)?,
        }
        self.try_close_phase(false, &mut events);
        Ok(events)
    }

    /// The open chip phase, if chip moves are accepted now.
    fn chip_phase_for_moves(&mut self) -> Result<&mut ChipPhase, Refusal> {
        if self.heist.proposal.is_some() {
            return Err(Refusal::not_now(
                "a specialist proposal is open: vote first",
            ));
        }
        if self.heist.pending.is_some() {
            return Err(Refusal::not_now("waiting for a specialist choice"));
        }
        match self.stage {
            Stage::Chips(_) => Ok(self.heist.phases.last_mut().expect("open phase")),
            _ => Err(Refusal::not_now("no chip phase is open")),
        }
    }

    fn try_close_phase(&mut self, expired: bool, events: &mut Vec<Event>) {
        let Stage::Chips(street) = self.stage else {
            return;
        };
        if self.heist.proposal.is_some() || self.heist.pending.is_some() {
            return;
        }
        let phase = self.heist.phases.last_mut().expect("open phase");
        let given = if expired {
            Some(phase.force_close())
        } else {
            phase.try_close()
        };
        if let Some(given) = given {
            for (seat, stars) in given {
                events.push(Event::ChipGiven { seat, stars });
            }
            events.push(Event::PhaseClosed { street, expired });
            self.after_phase(street, events);
        }
    }

    /// The deadline of the stage waiting for players passed. A chip phase: an open proposal is
    /// dropped, a pending choice is made by default, chipless players get the remaining chips,
    /// the phase closes. A Coordinator choice or a team guess: the silent seats' part is played
    /// for them (see the decisions in the module's doc).
    pub fn expire(&mut self) -> Result<Vec<Event>, Refusal> {
        if self.is_over() {
            return Err(Refusal::not_now("the game is over"));
        }
        let mut events = Vec::new();
        match self.stage {
            Stage::Chips(_) => self.expire_chip_phase(&mut events)?,
            Stage::Coordinating => self.expire_coordinator(&mut events)?,
            Stage::Guessing => self.expire_guess(&mut events)?,
            Stage::NotStarted | Stage::GameOver => {
                return Err(Refusal::not_now("nothing is waiting for a deadline"))
            }
        }
        Ok(events)
    }

    /// Every seat that has not chosen passes its first card.
    fn expire_coordinator(&mut self, events: &mut Vec<Event>) -> Result<(), Refusal> {
        for seat in 0..self.config.players {
            if let Some(card) = self.default_choice(seat) {
                self.choose(seat, card, events)?;
            }
        }
        Ok(())
    }

    /// Every silent guesser votes the team's current answer, or the lowest value.
    fn expire_guess(&mut self, events: &mut Vec<Event>) -> Result<(), Refusal> {
        let guess = self.heist.guess.as_ref().expect("a guess is open");
        let silent: Vec<usize> = (0..self.config.players)
            .filter(|&s| s != guess.target && !guess.votes.iter().any(|(v, _)| *v == s))
            .collect();
        let value = self.default_guess().expect("a guess is open");
        for seat in silent {
            self.guess(seat, value, events)?;
        }
        Ok(())
    }

    fn expire_chip_phase(&mut self, events: &mut Vec<Event>) -> Result<(), Refusal> {
        if self.heist.proposal.take().is_some() {
            events.push(Event::ProposalClosed {
                accepted: false,
                expired: true,
            });
        }
        if let Some(pending) = self.heist.pending {
            let seat = pending.chooser();
            let card = self.default_choice(seat).expect("the chooser holds a card");
            self.choose(seat, card, events)?;
        }
        self.try_close_phase(true, events);
        Ok(())
    }
}
