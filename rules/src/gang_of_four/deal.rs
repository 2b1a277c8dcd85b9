//! One deal in play (§4–§6): the hands, whose turn, the trick on the table, the last-card
//! announcements, and the moves. This is the state bots search over: it can be built from
//! explicit hands plus the public situation ([`DealState::from_parts`]), lists its legal plays
//! into a reusable [`PlayList`], applies moves with or without validation and plays random
//! playouts to the end of the deal.

use rand::Rng;

use super::cards::{self, CardId, Mask};
use super::combination::{Combination, Kind};
use super::compare::why_not_beats;
use super::legal::{generate, PlayList, Target};
use super::scoring::penalty;
use super::{Options, Refusal};

/// Seats are numbered clockwise; counter-clockwise play goes from seat i to seat i-1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    Clockwise,
    CounterClockwise,
}

impl Direction {
    /// The first deal is counter-clockwise, and the direction reverses every deal.
    pub fn of_deal(deal_number: u32) -> Direction {
        if deal_number % 2 == 1 {
            Direction::CounterClockwise
        } else {
            Direction::Clockwise
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Direction::Clockwise => "clockwise",
            Direction::CounterClockwise => "counter-clockwise",
        }
    }
}

/// A move within a deal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// Play these cards. `announce` is the "Card!" flag; it matters only under
    /// `manual_last_card` (otherwise the engine announces for the seat).
    Play {
        cards: Mask,
        announce: bool,
    },
    Pass,
}

/// What a move did, beyond the state change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepOutcome {
    /// The combination played, for a play.
    pub played: Option<Combination>,
    /// The play left one card and the seat announced it (automatically or with the flag).
    pub announced: bool,
    /// Under `manual_last_card`: the play left one card without the announcement.
    pub forgot: bool,
    /// Every other seat passed after this seat's play: it leads the next trick.
    pub trick_won_by: Option<u8>,
    /// The deal is over (a hand emptied, or every seat is barred from playing).
    pub deal_over: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DealState {
    pub options: Options,
    /// Hands by seat; with 3 players `hands[3]` is the dead hand, out of play.
    pub hands: [Mask; 4],
    pub direction: Direction,
    /// The seat to move.
    pub turn: u8,
    /// The combination to beat, `None` when the seat to move leads.
    pub table: Option<Combination>,
    /// Who played the table combination.
    pub table_seat: u8,
    /// Passes in a row since the table combination was played.
    pub passes: u8,
    /// Bit per seat: announced its last card (and still holds one card).
    pub announced: u8,
    /// Bit per seat: under `manual_last_card`, forgot to announce and must pass until the deal ends.
    pub barred: u8,
    /// Cards the next play must contain: the multicolor 1 on the first lead of the game.
    pub must_include: Mask,
    /// The seat that went out, once the deal is over.
    pub winner: Option<u8>,
    pub over: bool,
}

impl DealState {
    /// A deal about to be led by `leader` with full hands.
    pub fn new(
        options: Options,
        hands: [Mask; 4],
        direction: Direction,
        leader: u8,
        must_include: Mask,
    ) -> Self {
        DealState {
            options,
            hands,
            direction,
            turn: leader,
            table: None,
            table_seat: leader,
            passes: 0,
            announced: 0,
            barred: 0,
            must_include,
            winner: None,
            over: false,
        }
    }

    /// A deal in progress from explicit hands (a bot's determinization) plus the public
    /// situation: the table combination and who played it (`None` if `turn` leads), the
    /// passes since that play, and the announced/barred seat bits. Announced seats must hold
    /// exactly one card.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        options: Options,
        hands: [Mask; 4],
        direction: Direction,
        turn: u8,
        table: Option<(Mask, u8)>,
        passes: u8,
        announced: u8,
        barred: u8,
    ) -> Result<Self, Refusal> {
        let n = options.players;
        if turn >= n {
            return Err(Refusal::invalid(format!(
                "seat {turn} does not exist with {n} players"
            )));
        }
        let mut seen = 0;
        for (seat, &hand) in hands.iter().enumerate() {
            if hand & seen != 0 {
                return Err(Refusal::invalid(format!(
                    "seat {seat}'s hand shares cards with another"
                )));
            }
            seen |= hand;
        }
        let table = match table {
            None => None,
            Some((cards, seat)) => {
                if cards & seen != 0 {
                    return Err(Refusal::invalid("the table shares cards with a hand"));
                }
                if seat >= n {
                    return Err(Refusal::invalid(format!("seat {seat} does not exist")));
                }
                let c = Combination::classify(cards).ok_or_else(|| {
                    Refusal::invalid(format!(
                        "the table {} is no combination",
                        cards::words(cards)
                    ))
                })?;
                Some((c, seat))
            }
        };
        for seat in 0..n {
            if announced & (1 << seat) != 0 && hands[seat as usize].count_ones() != 1 {
                return Err(Refusal::invalid(format!(
                    "seat {seat} announced a last card but holds another count"
                )));
            }
        }
        let mut state = DealState::new(options, hands, direction, turn, 0);
        if let Some((c, seat)) = table {
            state.table = Some(c);
            state.table_seat = seat;
            state.passes = passes;
        }
        state.announced = announced;
        state.barred = barred;
        Ok(state)
    }

    pub fn players(&self) -> u8 {
        self.options.players
    }

    /// The seat that plays after `seat` in this deal's direction.
    pub fn next_seat(&self, seat: u8) -> u8 {
        let n = self.options.players;
        match self.direction {
            Direction::Clockwise => (seat + 1) % n,
            Direction::CounterClockwise => (seat + n - 1) % n,
        }
    }

    /// The seat bound by the last-card rule: the next seat has announced its last card.
    pub fn is_constrained(&self, seat: u8) -> bool {
        self.announced & (1 << self.next_seat(seat)) != 0
    }

    pub fn is_barred(&self, seat: u8) -> bool {
        self.barred & (1 << seat) != 0
    }

    /// The cards still in the seats' hands (dead hand excluded).
    pub fn cards_in_play(&self) -> Mask {
        self.hands[..self.options.players as usize]
            .iter()
            .fold(0, |a, &h| a | h)
    }

    /// Fills `out` with the distinct legal plays of the seat to move (lowest ids for twin
    /// cards) and sets `out.can_pass`. Under `manual_last_card` a play that leaves one card
    /// may be made with or without the announcement; both are legal.
    pub fn legal_plays(&self, out: &mut PlayList) {
        out.clear();
        if self.over {
            return;
        }
        let seat = self.turn;
        if self.is_barred(seat) {
            out.can_pass = true;
            return;
        }
        let hand = self.hands[seat as usize];
        let constrained = self.is_constrained(seat);
        match &self.table {
            None => {
                generate(hand, Target::Any, &self.options, out);
                if self.must_include != 0 {
                    let must = self.must_include;
                    out.retain(|p| p & must == must);
                }
                if constrained {
                    if out.as_slice().iter().any(|p| p.count_ones() >= 2) {
                        out.retain(|p| p.count_ones() >= 2);
                    } else {
                        let strongest = strongest_single(hand);
                        out.retain(|p| p == strongest);
                    }
                }
            }
            Some(table) => {
                generate(hand, Target::Beat(table), &self.options, out);
                out.can_pass = true;
                if constrained && table.kind == Kind::Single {
                    let strongest = strongest_single(hand);
                    if single_beats(strongest, table) {
                        // Its strongest single, or a gang (the only other plays on a single).
                        out.retain(|p| p == strongest || p.count_ones() > 1);
                        out.can_pass = false;
                    }
                }
            }
        }
    }

    /// Checks `mv` for `seat` without changing anything; the error says why it is refused.
    pub fn check(&self, seat: u8, mv: Move) -> Result<(), Refusal> {
        if self.over {
            return Err(Refusal::not_now("the deal is over"));
        }
        if seat >= self.options.players {
            return Err(Refusal::invalid(format!("seat {seat} does not exist")));
        }
        if seat != self.turn {
            return Err(Refusal::not_now(format!(
                "not your turn: seat {} plays",
                self.turn
            )));
        }
        let hand = self.hands[seat as usize];
        let constrained_by = self.next_seat(seat);
        let constrained = self.is_constrained(seat);
        match mv {
            Move::Pass => {
                if self.is_barred(seat) {
                    return Ok(());
                }
                let Some(table) = &self.table else {
                    return Err(Refusal::invalid(
                        "you lead this trick: play a combination (a leader may not pass)",
                    ));
                };
                if constrained && table.kind == Kind::Single {
                    let strongest = strongest_single(hand);
                    if single_beats(strongest, table) {
                        return Err(Refusal::invalid(format!(
                            "seat {constrained_by} has announced its last card and your strongest single {} beats the table: play it (or a gang)",
                            cards::words(strongest)
                        )));
                    }
                }
                Ok(())
            }
            Move::Play {
                cards: play,
                announce,
            } => {
                if play == 0 {
                    return Err(Refusal::invalid("a play needs at least one card"));
                }
                if let Some(id) = cards::iter(play & !hand).next() {
                    return Err(Refusal::invalid(format!(
                        "card {id} ({}) is not in your hand",
                        cards::word(id)
                    )));
                }
                if self.is_barred(seat) {
                    return Err(Refusal::invalid(
                        "you did not announce your last card: you must pass until the deal ends",
                    ));
                }
                let left = (hand & !play).count_ones();
                if announce && !self.options.manual_last_card {
                    return Err(Refusal::invalid(
                        "the last-card announcement is automatic (set manual_last_card to announce yourself): leave the flag off",
                    ));
                }
                if announce && left != 1 {
                    return Err(Refusal::invalid(format!(
                        "announce your last card only with a play that leaves you one card (this one leaves {left})"
                    )));
                }
                let combination = Combination::classify(play)
                    .ok_or_else(|| Refusal::invalid(no_combination_reason(play)))?;
                if self.must_include & !play != 0 {
                    return Err(Refusal::invalid(format!(
                        "the first play of the game must contain the multicolor 1 ({})",
                        cards::words(self.must_include)
                    )));
                }
                match &self.table {
                    Some(table) => {
                        if let Some(reason) = why_not_beats(&combination, table, &self.options) {
                            return Err(Refusal::invalid(reason));
                        }
                        if constrained
                            && table.kind == Kind::Single
                            && combination.kind != Kind::Gang
                        {
                            let strongest = strongest_single(hand);
                            if single_beats(strongest, table)
                                && cards::single_strength(play.trailing_zeros() as u8)
                                    != cards::single_strength(strongest.trailing_zeros() as u8)
                            {
                                return Err(Refusal::invalid(format!(
                                    "seat {constrained_by} has announced its last card: play your strongest single {} (or a gang)",
                                    cards::words(strongest)
                                )));
                            }
                        }
                    }
                    None => {
                        if constrained {
                            let mut list = PlayList::new();
                            generate(hand, Target::Any, &self.options, &mut list);
                            let has_multi = list.as_slice().iter().any(|p| p.count_ones() >= 2);
                            let strongest = strongest_single(hand);
                            if has_multi && play.count_ones() == 1 {
                                return Err(Refusal::invalid(format!(
                                    "seat {constrained_by} has announced its last card: lead a combination of two or more cards"
                                )));
                            }
                            if !has_multi
                                && cards::single_strength(play.trailing_zeros() as u8)
                                    != cards::single_strength(strongest.trailing_zeros() as u8)
                            {
                                return Err(Refusal::invalid(format!(
                                    "seat {constrained_by} has announced its last card: lead your strongest single {}",
                                    cards::words(strongest)
                                )));
                            }
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// Checks and applies `mv` for `seat`.
    pub fn apply(&mut self, seat: u8, mv: Move) -> Result<StepOutcome, Refusal> {
        self.check(seat, mv)?;
        Ok(self.apply_unchecked(mv))
    }

    /// Applies a legal move of the seat to move without checking it (for searches and
    /// playouts that took it from [`DealState::legal_plays`]).
    pub fn apply_unchecked(&mut self, mv: Move) -> StepOutcome {
        let seat = self.turn;
        let n = self.options.players;
        let mut outcome = StepOutcome {
            played: None,
            announced: false,
            forgot: false,
            trick_won_by: None,
            deal_over: false,
        };
        match mv {
            Move::Pass => {
                if self.table.is_some() {
                    self.passes += 1;
                    if self.passes + 1 >= n {
                        // Everyone else passed: the last player leads a new trick.
                        self.table = None;
                        self.passes = 0;
                        self.turn = self.table_seat;
                        outcome.trick_won_by = Some(self.table_seat);
                        return outcome;
                    }
                }
                // A barred seat passing a lead hands the lead to the next seat.
                self.turn = self.next_seat(seat);
            }
            Move::Play {
                cards: play,
                announce,
            } => {
                let combination =
                    Combination::classify(play).expect("apply_unchecked takes a legal play");
                let hand = &mut self.hands[seat as usize];
                *hand &= !play;
                let left = hand.count_ones();
                self.table = Some(combination);
                self.table_seat = seat;
                self.passes = 0;
                self.must_include = 0;
                outcome.played = Some(combination);
                if left == 0 {
                    self.winner = Some(seat);
                    self.over = true;
                    outcome.deal_over = true;
                    return outcome;
                }
                if left == 1 {
                    if announce || !self.options.manual_last_card {
                        self.announced |= 1 << seat;
                        outcome.announced = true;
                    } else {
                        self.barred |= 1 << seat;
                        outcome.forgot = true;
                        if self.barred.count_ones() == n as u32 {
                            // Nobody may play any more: the deal ends without a winner.
                            self.over = true;
                            outcome.deal_over = true;
                            return outcome;
                        }
                    }
                }
                self.turn = self.next_seat(seat);
            }
        }
        outcome
    }

    /// Penalty points of each seat for the cards it holds (0 for the winner and the dead hand).
    pub fn penalties(&self) -> [u32; 4] {
        let seats = self.options.players as usize;
        std::array::from_fn(|seat| {
            if seat < seats {
                penalty(self.hands[seat].count_ones())
            } else {
                0
            }
        })
    }

    /// Plays uniformly random legal moves until the deal ends; returns the number of moves.
    /// Under `manual_last_card` the random player always announces.
    pub fn random_playout(&mut self, rng: &mut impl Rng, buffer: &mut PlayList) -> u32 {
        let mut steps = 0;
        while !self.over {
            self.random_step(rng, buffer);
            steps += 1;
        }
        steps
    }

    /// One uniformly random legal move (a pass counts as one more choice when allowed).
    pub fn random_step(&mut self, rng: &mut impl Rng, buffer: &mut PlayList) -> StepOutcome {
        self.legal_plays(buffer);
        let choices = buffer.len() + buffer.can_pass as usize;
        let pick = rng.random_range(0..choices);
        let mv = if pick < buffer.len() {
            Move::Play {
                cards: buffer.as_slice()[pick],
                announce: true,
            }
        } else {
            Move::Pass
        };
        self.apply_unchecked(mv)
    }
}

/// The strongest single of a hand as a one-card mask (the lower id of a twin pair).
pub fn strongest_single(hand: Mask) -> Mask {
    match cards::strongest(cards::distinct_faces(hand)) {
        Some(id) => 1 << id,
        None => 0,
    }
}

fn single_beats(single: Mask, table: &Combination) -> bool {
    single != 0
        && table.kind == Kind::Single
        && cards::single_strength(single.trailing_zeros() as CardId) > table.key
}

/// Why a set of cards is no combination, in the words of the rules.
pub fn no_combination_reason(play: Mask) -> String {
    let n = play.count_ones();
    let words = cards::words(play);
    if play & (1 << cards::DRAGON) != 0 {
        return format!("{words}: the Dragon is only ever played alone");
    }
    match n {
        2 => format!("{words}: a pair needs two cards of the same value (or the two Phoenixes)"),
        3 => format!("{words}: a triple needs three cards of the same value 1..10"),
        4 => format!("{words}: four cards must all have the same value (a gang); there is no two-pair"),
        5 => format!("{words}: five cards must form a straight, flush, full house, straight flush or gang (Phoenixes only as the pair of a full house; straights do not wrap)"),
        6 | 7 => format!("{words}: {n} cards must all have the same value (a gang)"),
        _ => format!("{words}: no combination has {n} cards"),
    }
}
