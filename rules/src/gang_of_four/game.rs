//! The whole game (§4, §7, §8): successive deals from the preset or the seed, the exchange
//! between the previous loser and winner, scoring, and the end. Produces complete events;
//! hiding what a seat may not see is the job of `gangs-games`.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::cards::{self, CardId, Mask, ALL_CARDS, MULTICOLOR_ONE};
use super::combination::Combination;
use super::deal::{DealState, Direction, Move};
use super::legal::PlayList;
use super::scoring::{self, Ranked};
use super::{Options, Refusal};

/// What a seat asks to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Play {
        cards: Mask,
        announce: bool,
    },
    Pass,
    /// The previous deal's winner gives one card back to the loser.
    GiveBack {
        card: CardId,
    },
}

/// One card changing hands in the exchange (public).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExchangedCard {
    pub from: u8,
    pub to: u8,
    pub card: CardId,
    /// True for the loser's strongest card (moved by the engine), false for the winner's choice.
    pub automatic: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DealScore {
    pub deal_number: u32,
    /// The seat that went out; `None` when every seat was barred (`manual_last_card`).
    pub winner: Option<u8>,
    pub loser: u8,
    pub cards_left: [u8; 4],
    pub points: [u32; 4],
    pub totals: [u32; 4],
}

/// Complete events (every hand shown).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    Dealt {
        deal_number: u32,
        hands: [Mask; 4],
        direction: Direction,
        leader: u8,
        must_include: Mask,
    },
    Exchanged(ExchangedCard),
    Played {
        seat: u8,
        combination: Combination,
        cards_left: u8,
        announced: bool,
        forgot: bool,
    },
    Passed {
        seat: u8,
    },
    TrickWon {
        seat: u8,
    },
    DealScored(DealScore),
    GameOver {
        ranking: Vec<Ranked>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    NotStarted,
    /// The previous winner must give a card back to the loser.
    GiveBack {
        winner: u8,
        loser: u8,
    },
    Play,
    Over,
}

/// A play or pass of the current trick, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TrickEntry {
    pub seat: u8,
    /// `None` for a pass.
    pub play: Option<Combination>,
}

#[derive(Clone, Debug)]
pub struct GangOfFour {
    options: Options,
    rng: ChaCha8Rng,
    preset: Vec<[Mask; 4]>,
    deal_number: u32,
    phase: Phase,
    deal: DealState,
    dealt_hands: [Mask; 4],
    exchange: Vec<ExchangedCard>,
    totals: [u32; 4],
    history: Vec<DealScore>,
    trick: Vec<TrickEntry>,
    /// (winner or stand-in, loser) of the last scored deal.
    previous: Option<(u8, u8)>,
    ranking: Option<Vec<Ranked>>,
}

impl GangOfFour {
    /// A game from validated options, a seed and preset deals (4 hands of 16 ids each, the
    /// 4th being the dead hand with 3 players). Deals past the preset are shuffled from the seed.
    pub fn new(options: Options, seed: u64, preset: Vec<[Mask; 4]>) -> Result<Self, Refusal> {
        options.validate()?;
        for (i, deal) in preset.iter().enumerate() {
            let mut seen = 0;
            for (h, &hand) in deal.iter().enumerate() {
                if hand.count_ones() != 16 {
                    return Err(Refusal::invalid(format!(
                        "preset deal {}: hand {h} has {} cards, not 16",
                        i + 1,
                        hand.count_ones()
                    )));
                }
                if hand & seen != 0 {
                    return Err(Refusal::invalid(format!(
                        "preset deal {}: hand {h} repeats a card",
                        i + 1
                    )));
                }
                seen |= hand;
            }
            debug_assert_eq!(seen, ALL_CARDS);
        }
        Ok(GangOfFour {
            options,
            rng: ChaCha8Rng::seed_from_u64(seed),
            preset,
            deal_number: 0,
            phase: Phase::NotStarted,
            deal: DealState::new(options, [0; 4], Direction::CounterClockwise, 0, 0),
            dealt_hands: [0; 4],
            exchange: Vec::new(),
            totals: [0; 4],
            history: Vec::new(),
            trick: Vec::new(),
            previous: None,
            ranking: None,
        })
    }

    pub fn options(&self) -> &Options {
        &self.options
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn deal(&self) -> &DealState {
        &self.deal
    }
    pub fn deal_number(&self) -> u32 {
        self.deal_number
    }
    /// The hands as dealt this deal (before the exchange).
    pub fn dealt_hands(&self) -> [Mask; 4] {
        self.dealt_hands
    }
    pub fn exchange(&self) -> &[ExchangedCard] {
        &self.exchange
    }
    pub fn totals(&self) -> [u32; 4] {
        self.totals
    }
    pub fn history(&self) -> &[DealScore] {
        &self.history
    }
    pub fn trick(&self) -> &[TrickEntry] {
        &self.trick
    }
    pub fn ranking(&self) -> Option<&[Ranked]> {
        self.ranking.as_deref()
    }
    pub fn is_over(&self) -> bool {
        self.phase == Phase::Over
    }
    /// Cards played this deal (public): neither in a seat's hand nor in the dead hand.
    pub fn played_cards(&self) -> Mask {
        !self.deal.hands.iter().fold(0, |a, &h| a | h)
    }

    /// The seat expected to act, if any.
    pub fn to_act(&self) -> Option<u8> {
        match self.phase {
            Phase::GiveBack { winner, .. } => Some(winner),
            Phase::Play => Some(self.deal.turn),
            Phase::NotStarted | Phase::Over => None,
        }
    }

    /// Deals the first deal.
    pub fn start(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        if self.phase == Phase::NotStarted {
            self.start_deal(&mut events);
        }
        events
    }

    fn start_deal(&mut self, events: &mut Vec<Event>) {
        self.deal_number += 1;
        let hands = match self.preset.get(self.deal_number as usize - 1) {
            Some(&hands) => hands,
            None => {
                let mut deck: Vec<CardId> = (0..64).collect();
                deck.shuffle(&mut self.rng);
                std::array::from_fn(|h| {
                    deck[h * 16..h * 16 + 16]
                        .iter()
                        .fold(0, |m, &id| m | (1u64 << id))
                })
            }
        };
        let direction = Direction::of_deal(self.deal_number);
        self.dealt_hands = hands;
        self.exchange.clear();
        self.trick.clear();
        let n = self.options.players;
        let (leader, must_include) = match self.previous {
            None => {
                let m1 = 1u64 << MULTICOLOR_ONE;
                match (0..n).find(|&s| hands[s as usize] & m1 != 0) {
                    Some(holder) => (holder, m1),
                    // The multicolor 1 is in the dead hand: the seat after the dealer (seat 0) leads.
                    None => (
                        DealState::new(self.options, hands, direction, 0, 0).next_seat(0),
                        0,
                    ),
                }
            }
            Some((winner, _)) => (winner, 0),
        };
        self.deal = DealState::new(self.options, hands, direction, leader, must_include);
        events.push(Event::Dealt {
            deal_number: self.deal_number,
            hands,
            direction,
            leader,
            must_include,
        });
        match self.previous {
            None => self.phase = Phase::Play,
            Some((winner, loser)) => {
                let card = cards::strongest(self.deal.hands[loser as usize]).expect("a full hand");
                self.move_card(loser, winner, card, true, events);
                self.phase = Phase::GiveBack { winner, loser };
            }
        }
    }

    fn move_card(
        &mut self,
        from: u8,
        to: u8,
        card: CardId,
        automatic: bool,
        events: &mut Vec<Event>,
    ) {
        self.deal.hands[from as usize] &= !(1u64 << card);
        self.deal.hands[to as usize] |= 1u64 << card;
        let exchanged = ExchangedCard {
            from,
            to,
            card,
            automatic,
        };
        self.exchange.push(exchanged);
        events.push(Event::Exchanged(exchanged));
    }

    /// Checks `action` for `seat` without applying it.
    pub fn check(&self, seat: u8, action: Action) -> Result<(), Refusal> {
        if seat >= self.options.players {
            return Err(Refusal::invalid(format!(
                "seat {seat} does not exist with {} players",
                self.options.players
            )));
        }
        match (self.phase, action) {
            (Phase::NotStarted, _) => Err(Refusal::not_now("the game has not started")),
            (Phase::Over, _) => Err(Refusal::not_now("the game is over")),
            (Phase::GiveBack { winner, loser }, Action::GiveBack { card }) => {
                if seat != winner {
                    return Err(Refusal::not_now(format!(
                        "not your turn: seat {winner} gives a card back to seat {loser}"
                    )));
                }
                if card >= 64 || self.deal.hands[seat as usize] & (1u64 << card) == 0 {
                    return Err(Refusal::invalid(format!("card {card} is not in your hand")));
                }
                Ok(())
            }
            (Phase::GiveBack { winner, loser }, _) => Err(Refusal::not_now(format!(
                "the exchange is not finished: seat {winner} gives a card back to seat {loser} first"
            ))),
            (Phase::Play, Action::GiveBack { .. }) => {
                Err(Refusal::not_now("there is no exchange now: the winner gives a card back only before play starts"))
            }
            (Phase::Play, Action::Pass) => self.deal.check(seat, Move::Pass),
            (Phase::Play, Action::Play { cards, announce }) => self.deal.check(seat, Move::Play { cards, announce }),
        }
    }

    /// Applies `action` for `seat`; on error nothing changed.
    pub fn act(&mut self, seat: u8, action: Action) -> Result<Vec<Event>, Refusal> {
        self.check(seat, action)?;
        let mut events = Vec::new();
        match action {
            Action::GiveBack { card } => {
                let Phase::GiveBack { winner, loser } = self.phase else {
                    unreachable!("checked")
                };
                self.move_card(winner, loser, card, false, &mut events);
                self.phase = Phase::Play;
                self.deal.turn = winner;
            }
            Action::Pass => {
                let outcome = self.deal.apply_unchecked(Move::Pass);
                events.push(Event::Passed { seat });
                self.trick.push(TrickEntry { seat, play: None });
                if let Some(leader) = outcome.trick_won_by {
                    events.push(Event::TrickWon { seat: leader });
                    self.trick.clear();
                }
            }
            Action::Play { cards, announce } => {
                let outcome = self.deal.apply_unchecked(Move::Play { cards, announce });
                let combination = outcome.played.expect("a play");
                events.push(Event::Played {
                    seat,
                    combination,
                    cards_left: self.deal.hands[seat as usize].count_ones() as u8,
                    announced: outcome.announced,
                    forgot: outcome.forgot,
                });
                self.trick.push(TrickEntry {
                    seat,
                    play: Some(combination),
                });
                if outcome.deal_over {
                    self.finish_deal(seat, &mut events);
                }
            }
        }
        Ok(events)
    }

    fn finish_deal(&mut self, last_player: u8, events: &mut Vec<Event>) {
        let points = self.deal.penalties();
        for (total, p) in self.totals.iter_mut().zip(points) {
            *total += p;
        }
        // Without a winner (every seat barred) the last player stands in for it.
        let reference = self.deal.winner.unwrap_or(last_player);
        let loser = scoring::choose_loser(&self.deal.hands, &self.totals, reference, &self.options);
        let seats = self.options.players as usize;
        let cards_left: [u8; 4] = std::array::from_fn(|seat| {
            if seat < seats {
                self.deal.hands[seat].count_ones() as u8
            } else {
                0
            }
        });
        let score = DealScore {
            deal_number: self.deal_number,
            winner: self.deal.winner,
            loser,
            cards_left,
            points,
            totals: self.totals,
        };
        self.history.push(score.clone());
        events.push(Event::DealScored(score));
        self.previous = Some((reference, loser));
        if scoring::game_is_over(&self.totals, &self.options) {
            let ranking = scoring::ranking(&self.totals, self.options.players);
            self.ranking = Some(ranking.clone());
            self.phase = Phase::Over;
            events.push(Event::GameOver { ranking });
        } else {
            self.start_deal(events);
        }
    }

    /// Every distinct legal action of `seat` now (empty if it may not act). Under
    /// `manual_last_card` a play leaving one card appears with and without the announcement.
    pub fn legal_actions(&self, seat: u8) -> Vec<Action> {
        let mut list = PlayList::new();
        self.legal_actions_into(seat, &mut list)
    }

    /// As [`GangOfFour::legal_actions`], reusing `buffer` for the play generation.
    pub fn legal_actions_into(&self, seat: u8, buffer: &mut PlayList) -> Vec<Action> {
        match self.phase {
            Phase::GiveBack { winner, .. } if winner == seat => {
                cards::iter(cards::distinct_faces(self.deal.hands[seat as usize]))
                    .map(|card| Action::GiveBack { card })
                    .collect()
            }
            Phase::Play if self.deal.turn == seat => {
                self.deal.legal_plays(buffer);
                let hand = self.deal.hands[seat as usize];
                let mut actions = Vec::with_capacity(buffer.len() * 2 + 1);
                for &play in buffer.as_slice() {
                    let leaves_one = (hand & !play).count_ones() == 1;
                    if self.options.manual_last_card && leaves_one {
                        actions.push(Action::Play {
                            cards: play,
                            announce: true,
                        });
                    }
                    actions.push(Action::Play {
                        cards: play,
                        announce: false,
                    });
                }
                if buffer.can_pass {
                    actions.push(Action::Pass);
                }
                actions
            }
            _ => Vec::new(),
        }
    }
}
