//! Gang of Four under the engine contract ([`crate::Engine`]): its option schema and its
//! default actions.
//!
//! # Default actions (a silent seat: its clock ran out, it is absent)
//! - **Following** (a combination is on the table) when passing is legal: **pass**.
//! - **Leading**, or following when the last-card rule forbids passing: the **lowest legal
//!   single** (the legal plays already obey the last-card rule, so a constrained seat plays its
//!   strongest single, and the first lead of the game plays the multicolor 1). When the
//!   last-card rule allows only combinations of two or more cards, the smallest legal play
//!   (fewest cards, then lowest cards).
//! - **Give-back**: the lowest card the winner holds.
//! - Under `manual_last_card`, a default play that leaves one card **announces** it ("Card!"):
//!   the default never bars the seat.

use super::cards::{self, Mask};
use super::game::{Action, Event, GangOfFour, Phase};
use super::legal::PlayList;
use super::Options;
use crate::engine::{Engine, OptionSpec, OptionType, Outcome, Refusal, Seat, SeatResult};

/// The options of §10, declared once (parsing, `gangs rules gang-of-four`, docs).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "players",
        kind: OptionType::Count { min: 3, max: 4 },
        default: "4",
        meaning: "seats at the table; with 3, a dead hand of 16 cards is dealt out of play",
    },
    OptionSpec {
        key: "target_score",
        kind: OptionType::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: "100",
        meaning: "penalty points that end the game; the lowest total wins",
    },
    OptionSpec {
        key: "flush_by_sum",
        kind: OptionType::Bool,
        default: "false",
        meaning: "flushes compare by the sum of their values first",
    },
    OptionSpec {
        key: "loser_tie_strongest_card",
        kind: OptionType::Bool,
        default: "false",
        meaning: "a tie for the deal's loser goes to the seat holding the strongest single card",
    },
    OptionSpec {
        key: "manual_last_card",
        kind: OptionType::Bool,
        default: "false",
        meaning: "seats announce their last card themselves (\"Card!\"); forgetting bars them \
                  from playing until the deal ends",
    },
];

/// The number of seats the options allow.
pub fn seat_count(options: &Options) -> usize {
    options.players as usize
}

/// A seat of the contract as the engine's own seat number, if it exists.
fn own_seat(game: &GangOfFour, seat: Seat) -> Option<u8> {
    (seat < game.options().players as usize).then_some(seat as u8)
}

/// The smallest play of `plays`: a single with the lowest card if there is one, else the
/// fewest cards, then the lowest cards.
fn lowest_play(plays: &[Mask]) -> Option<Mask> {
    plays.iter().copied().min_by_key(|&p| (p.count_ones(), p))
}

impl GangOfFour {
    /// The action a silent `seat` plays (see the module's doc), `None` when it is not its turn.
    pub fn default_action(&self, seat: Seat) -> Option<Action> {
        let own = own_seat(self, seat)?;
        if self.to_act() != Some(own) {
            return None;
        }
        match self.phase() {
            Phase::GiveBack { .. } => {
                let card = cards::iter(self.deal().hands[seat]).next()?;
                Some(Action::GiveBack { card })
            }
            Phase::Play => {
                let mut list = PlayList::new();
                self.deal().legal_plays(&mut list);
                if list.can_pass {
                    return Some(Action::Pass);
                }
                let play = lowest_play(list.as_slice())?;
                let leaves_one = (self.deal().hands[seat] & !play).count_ones() == 1;
                Some(Action::Play {
                    cards: play,
                    announce: self.options().manual_last_card && leaves_one,
                })
            }
            Phase::NotStarted | Phase::Over => None,
        }
    }
}

impl Engine for GangOfFour {
    type Action = Action;
    type Event = Event;

    fn option_schema() -> &'static [OptionSpec] {
        OPTIONS
    }

    fn players(&self) -> usize {
        seat_count(self.options())
    }

    fn start(&mut self) -> Vec<Event> {
        GangOfFour::start(self)
    }

    fn actors(&self) -> Vec<Seat> {
        self.to_act().map(usize::from).into_iter().collect()
    }

    fn legal_actions(&self, seat: Seat) -> Vec<Action> {
        match own_seat(self, seat) {
            Some(own) => GangOfFour::legal_actions(self, own),
            None => Vec::new(),
        }
    }

    fn apply(&mut self, seat: Seat, action: Action) -> Result<Vec<Event>, Refusal> {
        let own = own_seat(self, seat).ok_or_else(|| {
            Refusal::invalid(format!(
                "seat {seat} does not exist with {} players",
                self.options().players
            ))
        })?;
        self.act(own, action)
    }

    fn default_action(&self, seat: Seat) -> Option<Action> {
        GangOfFour::default_action(self, seat)
    }

    fn is_terminal(&self) -> bool {
        self.is_over()
    }

    fn outcome(&self) -> Option<Outcome> {
        let ranking = self.ranking()?;
        let winner = ranking.first()?;
        Some(Outcome {
            seats: ranking
                .iter()
                .map(|r| SeatResult {
                    seat: r.seat as usize,
                    rank: r.rank as u32,
                    score: r.total as i64,
                    won: r.rank == 1,
                })
                .collect(),
            summary: format!("seat {} wins with {} points", winner.seat, winner.total),
        })
    }

    fn expire(&mut self) -> Result<Vec<Event>, Refusal> {
        Err(Refusal::not_now("gang-of-four has no deadlines"))
    }
}
