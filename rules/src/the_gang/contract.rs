//! The Gang under the engine contract ([`crate::Engine`]): its option schema, the seats the
//! game waits for, and their default actions.
//!
//! # Who the game waits for, and default actions (a silent seat)
//! - **Chip phase**, no proposal or choice pending: a seat **without a chip takes the lowest
//!   free one** (once the move cap is reached it can no longer take: it says **ready**); a seat
//!   holding a chip and not ready says **ready**. A seat holding a chip and ready is not waited
//!   for (the phase closes when everyone holds a chip and is ready).
//! - **Specialist proposal** open: every seat that has not voted **refuses**.
//! - **Pending specialist choice** (Informant show, Hacker or Valet discard): the chooser plays
//!   the same card the phase deadline would: the first card in hand order; the Hacker discards
//!   the card it drew; the Valet the first card that is not the suitless Jack.
//! - **Coordinator**: a seat that has not chosen passes its first card in hand order.
//! - **Team guess**: a guesser who has not voted votes the team's current answer (the most
//!   voted value, ties by the first voted), or the lowest value (rank 2, high card) when nobody
//!   voted yet.
//!
//! These are also what [`TheGang::expire`] plays for the silent seats of a Coordinator choice,
//! a pending choice and a team guess: one definition of "silent".

use super::cards::Card;
use super::challenges::{Challenge, GuessValue, Specialist};
use super::evaluator::Category;
use super::game::{team_answer, Action, Event, PendingChoice, Stage, TheGang};
use super::Mode;
use crate::engine::{Engine, OptionSpec, OptionType, Outcome, Refusal, Seat, SeatResult};

/// The options of §10, declared once (parsing, `gangs rules the-gang`, docs).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "players",
        kind: OptionType::Count { min: 3, max: 6 },
        default: "4",
        meaning: "seats at the table",
    },
    OptionSpec {
        key: "mode",
        kind: OptionType::Choice(&["basic", "advanced", "pro", "gangster"]),
        default: "basic",
        meaning: "basic: no challenge or specialist cards; advanced: one after each heist \
                  (challenge on success, specialist on failure); pro: advanced plus a permanent \
                  challenge; gangster: two active challenges, two alarms lose",
    },
    OptionSpec {
        key: "max_moves_per_phase",
        kind: OptionType::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: "6 × players",
        meaning: "takes and returns one chip phase accepts; after it only `ready` is, and \
                  chipless seats receive the remaining chips",
    },
    OptionSpec {
        key: "phase_deadline_ms",
        // 100 ms to 7 days (games' PHASE_DEADLINE_MS, which checks the wire the same way).
        kind: OptionType::Count {
            min: 100,
            max: 7 * 24 * 3600 * 1000,
        },
        default: "none",
        meaning: "how long a chip phase, a Coordinator choice or a team guess may last; at the \
                  deadline the silent seats' defaults are played and the phase closes",
    },
];

impl Mode {
    /// The mode's index in the `mode` option's words.
    pub fn from_index(index: usize) -> Option<Mode> {
        Mode::ALL.get(index).copied()
    }
}

impl TheGang {
    /// The card a seat that must choose one plays when silent (Coordinator pass, Informant
    /// show, Hacker or Valet discard); `None` when no choice is asked of it.
    pub(crate) fn default_choice(&self, seat: Seat) -> Option<Card> {
        let h = self.heist();
        let hand = h.private.get(seat)?;
        match self.stage() {
            Stage::Coordinating => h.coordinator_choices[seat]
                .is_none()
                .then(|| hand.first().copied())
                .flatten(),
            Stage::Chips(_) if h.proposal.is_none() => match h.pending? {
                pending if pending.chooser() != seat => None,
                // The Hacker's drawn card is the last in hand.
                PendingChoice::Discard {
                    specialist: Specialist::Hacker,
                    ..
                } => hand.last().copied(),
                // The first card the choice allows (the Valet keeps the suitless Jack).
                pending => hand.iter().copied().find(|&c| pending.allows(c)),
            },
            _ => None,
        }
    }

    /// The team's current answer to the open guess, or its lowest value if nobody voted.
    pub(crate) fn default_guess(&self) -> Option<GuessValue> {
        let guess = self.heist().guess.as_ref()?;
        Some(if guess.votes.is_empty() {
            match guess.challenge {
                Challenge::RetinalScan => GuessValue::Rank(0),
                _ => GuessValue::Category(Category::HighCard),
            }
        } else {
            team_answer(&guess.votes)
        })
    }

    /// What a silent `seat` plays (see the module's doc); `None` when the game is not waiting
    /// for it.
    pub fn default_action(&self, seat: Seat) -> Option<Action> {
        if self.is_over() || seat >= self.config().players {
            return None;
        }
        let h = self.heist();
        match self.stage() {
            Stage::Coordinating => self.default_choice(seat).map(Action::Choose),
            Stage::Guessing => {
                let g = h.guess.as_ref()?;
                let silent = g.target != seat && !g.votes.iter().any(|(s, _)| *s == seat);
                silent.then(|| self.default_guess().map(Action::Guess))?
            }
            Stage::Chips(_) => {
                if let Some(p) = &h.proposal {
                    return p.votes[seat].is_none().then_some(Action::Refuse);
                }
                if h.pending.is_some() {
                    return self.default_choice(seat).map(Action::Choose);
                }
                let phase = h.open_phase()?;
                match phase.chip_of(seat) {
                    None if !phase.cap_reached() => {
                        let free = phase.holder.iter().position(|h| h.is_none())?;
                        Some(Action::Take(free as u8 + 1))
                    }
                    _ => (!phase.ready[seat]).then_some(Action::Ready),
                }
            }
            Stage::NotStarted | Stage::GameOver => None,
        }
    }
}

impl Engine for TheGang {
    type Action = Action;
    type Event = Event;

    fn option_schema() -> &'static [OptionSpec] {
        OPTIONS
    }

    fn players(&self) -> usize {
        self.config().players
    }

    fn start(&mut self) -> Vec<Event> {
        TheGang::start(self)
    }

    fn actors(&self) -> Vec<Seat> {
        (0..self.config().players)
            .filter(|&s| TheGang::default_action(self, s).is_some())
            .collect()
    }

    fn legal_actions(&self, seat: Seat) -> Vec<Action> {
        TheGang::legal_actions(self, seat)
    }

    fn apply(&mut self, seat: Seat, action: Action) -> Result<Vec<Event>, Refusal> {
        self.act(seat, action)
    }

    fn default_action(&self, seat: Seat) -> Option<Action> {
        TheGang::default_action(self, seat)
    }

    fn is_terminal(&self) -> bool {
        self.is_over()
    }

    fn outcome(&self) -> Option<Outcome> {
        let won = self.result()?;
        let vaults = self.vaults();
        Some(Outcome {
            seats: (0..self.config().players)
                .map(|seat| SeatResult {
                    seat,
                    rank: 1,
                    score: vaults as i64,
                    won,
                })
                .collect(),
            summary: if won {
                format!("the gang wins: {vaults} vaults opened")
            } else {
                format!(
                    "the gang loses: {} alarms rang ({vaults} vaults opened)",
                    self.alarms()
                )
            },
        })
    }

    fn phase_deadline_ms(&self) -> Option<u64> {
        TheGang::phase_deadline_ms(self)
    }

    fn phase_id(&self) -> u64 {
        TheGang::phase_id(self)
    }

    fn expire(&mut self) -> Result<Vec<Event>, Refusal> {
        TheGang::expire(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_option_lists_the_modes_in_order() {
        let OptionType::Choice(words) = OPTIONS[1].kind else {
            panic!("mode is a choice")
        };
        let modes: Vec<&str> = Mode::ALL.iter().map(|m| m.word()).collect();
        assert_eq!(words, modes.as_slice());
    }
}
