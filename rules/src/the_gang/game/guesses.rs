//! Team guesses (challenges 4 and 9): opened after the red phase, before the showdown; every
//! player but the holder of the highest red chip votes, and the team's answer decides.

use super::{Stage, TeamGuess, TheGang};
use crate::the_gang::challenges::{Challenge, GuessValue};
use crate::the_gang::chips::Street;
use crate::the_gang::evaluator::evaluate;
use crate::the_gang::{Event, Refusal};

impl TheGang {
    fn red_top_holder(&self) -> usize {
        let red = self.heist.phase(Street::Red).expect("red phase played");
        red.holder[self.config.players - 1].expect("all red chips held")
    }

    pub(super) fn next_guess_or_showdown(&mut self, events: &mut Vec<Event>) {
        // The rank guess (4) comes before the category guess (9) when both are active.
        let next = match self.heist.guess.as_ref().map(|g| g.challenge) {
            None => [Challenge::RetinalScan, Challenge::FingerprintReader]
                .into_iter()
                .find(|&c| self.heist.is_active(c)),
            Some(Challenge::RetinalScan) => {
                Some(Challenge::FingerprintReader).filter(|&c| self.heist.is_active(c))
            }
            Some(_) => None,
        };
        match next {
            Some(challenge) => {
                let target = self.red_top_holder();
                self.heist.guess = Some(TeamGuess {
                    challenge,
                    target,
                    votes: Vec::new(),
                });
                self.stage = Stage::Guessing;
                events.push(Event::GuessOpened { challenge, target });
            }
            None => self.showdown(events),
        }
    }

    pub(super) fn guess(
        &mut self,
        seat: usize,
        value: GuessValue,
        events: &mut Vec<Event>,
    ) -> Result<(), Refusal> {
        let n = self.config.players;
        let guess = match (&mut self.heist.guess, self.stage) {
            (Some(g), Stage::Guessing) => g,
            _ => return Err(Refusal::not_now("no team guess is open")),
        };
        if seat == guess.target {
            return Err(Refusal::not_now(
                "the player whose hand is guessed does not take part",
            ));
        }
        if guess.votes.iter().any(|(s, _)| *s == seat) {
            return Err(Refusal::not_now("your guess is already cast"));
        }
        match (guess.challenge, value) {
            (Challenge::RetinalScan, GuessValue::Rank(r)) if r <= 12 => {}
            (Challenge::FingerprintReader, GuessValue::Category(_)) => {}
            (Challenge::RetinalScan, _) => {
                return Err(Refusal::invalid("retinal scan: guess a rank (2..A)"))
            }
            _ => {
                return Err(Refusal::invalid(
                    "fingerprint reader: guess a hand category",
                ))
            }
        }
        guess.votes.push((seat, value));
        events.push(Event::GuessCast { seat, guess: value });
        if guess.votes.len() == n - 1 {
            let answer = team_answer(&guess.votes);
            let target = guess.target;
            let challenge = guess.challenge;
            let correct = match answer {
                GuessValue::Rank(r) => self.heist.private[target].iter().any(|c| c.rank() == r),
                GuessValue::Category(cat) => {
                    let mut hand = self.heist.private[target].clone();
                    hand.extend(&self.heist.community);
                    evaluate(&hand).category() == cat
                }
            };
            self.heist.guesses_correct &= correct;
            events.push(Event::GuessResolved {
                challenge,
                answer,
                correct,
            });
            self.next_guess_or_showdown(events);
        }
        Ok(())
    }
}

/// The team's answer: the most voted value, ties broken by the value voted first.
pub fn team_answer(votes: &[(usize, GuessValue)]) -> GuessValue {
    let mut best: Option<(usize, GuessValue)> = None;
    for (_, value) in votes {
        let count = votes.iter().filter(|(_, v)| v == value).count();
        if best.is_none_or(|(c, _)| count > c) {
            best = Some((count, *value));
        }
    }
    best.expect("at least one vote").1
}
