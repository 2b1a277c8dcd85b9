//! The streets: opening each chip phase (with its locked chips), revealing the community
//! cards, challenges 3 and 7 after the flop, moving on when a phase closes, and the showdown
//! that ends a heist (vaults, alarms, the next heist or the end of the game).

use super::{Mode, Reveal, Stage, TheGang};
use crate::the_gang::cards::Card;
use crate::the_gang::challenges::{is_face, Challenge};
use crate::the_gang::chips::{ChipPhase, Street};
use crate::the_gang::evaluator::{evaluate, HandValue};
use crate::the_gang::Event;
use std::cmp::Ordering;

/// Compares two revealed hands, the Muscle's holder beating every hand of its category.
pub fn compare_with_muscle(
    a: (usize, HandValue),
    b: (usize, HandValue),
    muscle: Option<usize>,
) -> Ordering {
    if a.1.category() == b.1.category() {
        if muscle == Some(a.0) && muscle != Some(b.0) {
            return Ordering::Greater;
        }
        if muscle == Some(b.0) && muscle != Some(a.0) {
            return Ordering::Less;
        }
    }
    a.1.cmp(&b.1)
}

impl TheGang {
    pub(super) fn open_first_street(&mut self, events: &mut Vec<Event>) {
        if self.heist.is_active(Challenge::EasyOpening) {
            self.reveal(Street::Yellow, events);
            self.after_flop(events);
        } else {
            self.open_street(Street::White, events);
        }
    }

    fn open_street(&mut self, street: Street, events: &mut Vec<Event>) {
        let n = self.config.players as u8;
        let mut locked = Vec::new();
        if street != Street::Red {
            if self.heist.is_active(Challenge::NoiseSensors) {
                locked.push(1);
            }
            if self.heist.is_active(Challenge::AirVent) {
                locked.push(n);
            }
        }
        self.heist.phases.push(ChipPhase::new(
            street,
            self.config.players,
            self.config.max_moves_per_phase,
            &locked,
        ));
        self.heist.proposed_this_street = vec![false; self.config.players];
        self.phase_counter += 1;
        self.stage = Stage::Chips(street);
        events.push(Event::PhaseOpened {
            street,
            phase_id: self.phase_counter,
        });
    }

    /// Reveals the community cards of `street` (3 for the flop, 1 otherwise).
    fn reveal(&mut self, street: Street, events: &mut Vec<Event>) {
        let count = if street == Street::Yellow { 3 } else { 1 };
        let cards: Vec<Card> = (0..count)
            .map(|_| self.heist.board_to_come.pop_front().expect("5 board cards"))
            .collect();
        self.heist.community.extend(&cards);
        events.push(Event::CommunityRevealed { street, cards });
    }

    /// Challenges 3 and 7, then the yellow chips.
    fn after_flop(&mut self, events: &mut Vec<Event>) {
        let face_on_flop = self.heist.community.iter().any(|&c| is_face(c));
        let white = self.heist.phase(Street::White);
        let n = self.config.players as u8;
        let mut victims = Vec::new();
        if face_on_flop && self.heist.is_active(Challenge::MotionDetectors) {
            if let Some(seat) = white.and_then(|p| p.holder[0]) {
                victims.push((seat, Challenge::MotionDetectors));
            }
        }
        if !face_on_flop && self.heist.is_active(Challenge::PhotoelectricBarriers) {
            if let Some(seat) = white.and_then(|p| p.holder[n as usize - 1]) {
                victims.push((seat, Challenge::PhotoelectricBarriers));
            }
        }
        for (seat, challenge) in victims {
            let discarded = std::mem::take(&mut self.heist.private[seat]);
            let drawn: Vec<Card> = (0..discarded.len())
                .map(|_| self.heist.draw_pile.pop_front().expect("enough cards"))
                .collect();
            self.heist.discards.extend(&discarded);
            self.heist.remembered[seat].extend(&discarded);
            self.heist.private[seat] = drawn.clone();
            events.push(Event::HandReplaced {
                seat,
                challenge,
                discarded,
                drawn,
            });
        }
        self.open_street(Street::Yellow, events);
    }

    /// The open phase closed: reveal and open the next street, or go to guesses/showdown.
    pub(super) fn after_phase(&mut self, street: Street, events: &mut Vec<Event>) {
        match street {
            Street::White => {
                self.reveal(Street::Yellow, events);
                self.after_flop(events);
            }
            Street::Yellow => {
                self.reveal(Street::Orange, events);
                if self.heist.is_active(Challenge::HastyEscape) {
                    self.reveal(Street::Red, events);
                    self.open_street(Street::Red, events);
                } else {
                    self.open_street(Street::Orange, events);
                }
            }
            Street::Orange => {
                self.reveal(Street::Red, events);
                self.open_street(Street::Red, events);
            }
            Street::Red => self.next_guess_or_showdown(events),
        }
    }

    pub(super) fn showdown(&mut self, events: &mut Vec<Event>) {
        let red = self
            .heist
            .phase(Street::Red)
            .expect("red phase played")
            .clone();
        let muscle = self.heist.muscle;
        let mut reveals: Vec<Reveal> = Vec::new();
        let mut in_order = true;
        for (index, holder) in red.holder.iter().enumerate() {
            let seat = holder.expect("every red chip is held at showdown");
            let mut hand = self.heist.private[seat].clone();
            hand.extend(&self.heist.community);
            let value = evaluate(&hand);
            let out_of_order = reveals.last().is_some_and(|prev| {
                compare_with_muscle((seat, value), (prev.seat, prev.value), muscle)
                    == Ordering::Less
            });
            in_order &= !out_of_order;
            reveals.push(Reveal {
                seat,
                stars: index as u8 + 1,
                cards: self.heist.private[seat].clone(),
                value,
                out_of_order,
            });
        }
        let guesses_correct = self.heist.guesses_correct;
        let success = in_order && guesses_correct;
        self.heist.showdown = Some(reveals.clone());
        self.last_showdown = Some((reveals.clone(), success));
        events.push(Event::Showdown {
            reveals,
            muscle,
            guesses_correct,
            success,
        });
        if success {
            self.vaults += 1;
        } else {
            self.alarms += 1;
        }
        events.push(Event::HeistEnded {
            success,
            vaults: self.vaults,
            alarms: self.alarms,
        });
        // The heist's own revealed cards go under their piles.
        if let Some(c) = self
            .next_challenge
            .take()
            .filter(|c| self.heist.challenges.contains(c))
        {
            self.challenge_pile.push_back(c);
        }
        if let Some(s) = self.next_specialist.take() {
            self.specialist_pile.push_back(s);
        }
        if self.vaults >= 3 || self.alarms >= self.config.alarms_to_lose() {
            let won = self.vaults >= 3;
            self.won = Some(won);
            self.stage = Stage::GameOver;
            events.push(Event::GameOver { won });
            return;
        }
        if matches!(self.config.mode, Mode::Advanced | Mode::Pro) {
            if success {
                self.next_challenge = self.challenge_pile.pop_front();
            } else {
                self.next_specialist = self.specialist_pile.pop_front();
            }
        }
        self.start_heist(events);
    }
}
