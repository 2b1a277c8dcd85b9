//! The heist engine: modes, the deal, the streets, specialist proposals, team guesses, the
//! showdown, vaults and alarms. Pure and deterministic: the same config, seed, preset and
//! sequence of `act`/`expire` calls give the same events.
//!
//! # Decisions where the rules are silent
//! - **Ending random playouts** (§4): a phase accepts at most `max_moves_per_phase` takes and
//!   returns; after that only `ready` (and specialist proposals, votes and choices, which are
//!   bounded) is accepted. After the cap the phase closes as soon as every chip holder is
//!   ready; chipless players then get the remaining chips in seat order.
//! - **When specialists act**: 3 Shareholder and 8 Numbers genius are automatic (their text
//!   says so). 6 Coordinator and 9 Swindler are also automatic, right after the deal and
//!   before the white chips: their text fixes the moment ("after the deal") and involves every
//!   player at once, so there is nothing left for a proposal to decide. The Coordinator opens
//!   a simultaneous choice (every player `choose`s a card; when all have chosen, seat i's card
//!   goes to seat i+1); the Swindler gathers, shuffles (seeded) and redeals at once. The other
//!   six (1, 2, 4, 5, 7, 10) are proposed, with their parameters, during any open chip phase.
//! - **Proposals and chips**: while a proposal is open only votes are accepted (the team is
//!   deciding); while an accepted use waits for its acting player's choice (Informant: card to
//!   show; Hacker, Valet: card to discard) only that choice is accepted. An applied specialist
//!   clears every `ready` (the team learned something) but is not a chip move. The proposer
//!   counts as accepting. A deadline drops an open proposal and makes a pending choice by
//!   default (the first card in seat's hand order; the Hacker's drawn card).
//! - **Deadlines beyond the chip phases**: §4 gives chip phases a deadline; with
//!   `phase_deadline_ms` set, the two other stages that wait for players get the same one, so
//!   that a silent seat can never stall a game. At the Coordinator's deadline every seat that
//!   has not chosen passes its first card in hand order. At a team guess's deadline every
//!   silent guesser votes the team's current answer (the most voted value, ties by the first
//!   voted), or the lowest value (rank 2, high card) if nobody voted; the guess then resolves
//!   as usual. The votes cast this way are ordinary `GuessCast` events.
//! - **Team guesses** (4, 9): open after the red phase closes, before the showdown; no chip
//!   moves remain. If both are active, the rank guess (4) comes first. The guessers are every
//!   player but the holder of the highest red chip.
//! - **Muscle** goes to the player named in the accepted proposal.
//! - **Challenges 3 and 7** replace the player's private cards with as many new ones as they
//!   held (3 under challenge 10, since "every player gets 3 private cards").
//! - **Discarded cards** go to a face-down discard pile, never back to the deck.
//! - **Pro**: the permanent challenge is taken out of the pile. **Gangster**: the discarded
//!   lower-numbered card goes under the pile.
//! - **Presets**: a preset heist gives each seat's private cards and the five community cards;
//!   the rest of the deck follows the preset `deck` order, then the seeded shuffle. If a heist
//!   needs more private cards than the preset gives (challenge 10) the extra ones come from the
//!   deck; extra preset cards beyond the need go back on top of the deck.
//!
//! # Layout, by stage of a heist
//! This module holds the types and the state with its read-only accessors; the engine's steps
//! are split by stage: `setup.rs` (new game, dealing a heist), `streets.rs` (chip phases,
//! community cards, challenges 3 and 7, the showdown), `acting.rs` (`act` and `expire`: one
//! entry point per call), `specialists.rs` (every specialist, proposals and votes, pending
//! choices), `guesses.rs` (team guesses of challenges 4 and 9) and `legal.rs` (the legal actions).

mod acting;
mod guesses;
mod legal;
mod setup;
mod specialists;
mod streets;

pub use guesses::team_answer;
pub use streets::compare_with_muscle;

use super::cards::Card;
use super::challenges::{Announcement, Challenge, GuessValue, Specialist, SpecialistUse};
use super::chips::{ChipMove, ChipPhase, Street};
use super::evaluator::HandValue;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Basic,
    Advanced,
    Pro,
    Gangster,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Basic, Mode::Advanced, Mode::Pro, Mode::Gangster];
    pub fn word(self) -> &'static str {
        ["basic", "advanced", "pro", "gangster"][self as usize]
    }
    pub fn parse(word: &str) -> Option<Mode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.word() == word.trim().to_ascii_lowercase())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    pub players: usize,
    pub mode: Mode,
    pub max_moves_per_phase: u32,
    pub phase_deadline_ms: Option<u64>,
}

impl Config {
    /// Defaults of §10: 4 players, basic, 6 × players moves, no deadline.
    pub fn new(players: usize, mode: Mode) -> Config {
        Config {
            players,
            mode,
            max_moves_per_phase: 6 * players as u32,
            phase_deadline_ms: None,
        }
    }
    pub fn alarms_to_lose(&self) -> u32 {
        if self.mode == Mode::Gangster {
            2
        } else {
            3
        }
    }
}

/// Explicit cards for one heist.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeistPreset {
    pub private: Vec<Vec<Card>>,
    pub community: Vec<Card>,
    /// The top of the draw pile, in draw order (the rest follows from the seed).
    pub deck: Vec<Card>,
}

/// Explicit deals: heists beyond `heists` come from the seed; empty pile orders too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preset {
    pub heists: Vec<HeistPreset>,
    /// The challenge pile, top first, after the mode's removals (pro and gangster reveal from
    /// the top at the start).
    pub challenge_order: Vec<Challenge>,
    /// The specialist pile, top first.
    pub specialist_order: Vec<Specialist>,
}

/// What a player may do. `expire` is not an action: the host calls [`TheGang::expire`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Take(u8),
    Return,
    Ready,
    Propose(SpecialistUse),
    Accept,
    Refuse,
    Guess(GuessValue),
    /// Coordinator pass, Informant show, Hacker or Valet discard.
    Choose(Card),
}

/// One revealed hand at the showdown, in red-chip order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reveal {
    pub seat: usize,
    pub stars: u8,
    pub cards: Vec<Card>,
    pub value: HandValue,
    /// This reveal is weaker than the one before it (the mistake that rings the alarm).
    pub out_of_order: bool,
}

/// Everything that happens, complete (the bridge redacts it per seat).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    HeistStarted {
        heist: u32,
        challenges: Vec<Challenge>,
        specialist: Option<Specialist>,
    },
    /// Private to `seat`.
    Dealt {
        seat: usize,
        cards: Vec<Card>,
    },
    Announced {
        seat: usize,
        specialist: Specialist,
        announcement: Announcement,
    },
    /// Swindler: private to `seat`.
    Swindled {
        seat: usize,
        old: Vec<Card>,
        new: Vec<Card>,
    },
    /// Coordinator: `seat` chose its card (public: the card itself is not).
    CardChosen {
        seat: usize,
    },
    /// Coordinator: private to `from` and `to`.
    CardPassed {
        from: usize,
        to: usize,
        card: Card,
    },
    /// Challenges 3 and 7: private to `seat` (others see that it happened).
    HandReplaced {
        seat: usize,
        challenge: Challenge,
        discarded: Vec<Card>,
        drawn: Vec<Card>,
    },
    PhaseOpened {
        street: Street,
        phase_id: u64,
    },
    ChipMoved(ChipMove),
    Ready {
        seat: usize,
    },
    /// Move cap or deadline: a chipless player receives a chip.
    ChipGiven {
        seat: usize,
        stars: u8,
    },
    PhaseClosed {
        street: Street,
        expired: bool,
    },
    CommunityRevealed {
        street: Street,
        cards: Vec<Card>,
    },
    Proposed {
        proposer: usize,
        use_: SpecialistUse,
    },
    Voted {
        seat: usize,
        accept: bool,
    },
    ProposalClosed {
        accepted: bool,
        expired: bool,
    },
    /// Informant: private to `from` and `to`.
    CardShown {
        from: usize,
        to: usize,
        card: Card,
    },
    /// Hacker: private to `seat`.
    CardDrawn {
        seat: usize,
        card: Card,
    },
    SuitlessJackTaken {
        seat: usize,
    },
    /// Hacker, Valet: private to `seat` (others see that one card went).
    CardDiscarded {
        seat: usize,
        card: Card,
    },
    MuscleTaken {
        seat: usize,
    },
    GuessOpened {
        challenge: Challenge,
        target: usize,
    },
    GuessCast {
        seat: usize,
        guess: GuessValue,
    },
    GuessResolved {
        challenge: Challenge,
        answer: GuessValue,
        correct: bool,
    },
    Showdown {
        reveals: Vec<Reveal>,
        muscle: Option<usize>,
        guesses_correct: bool,
        success: bool,
    },
    HeistEnded {
        success: bool,
        vaults: u32,
        alarms: u32,
    },
    GameOver {
        won: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    NotStarted,
    /// Coordinator: every player chooses the card to pass.
    Coordinating,
    Chips(Street),
    /// Challenge 4 or 9 after the red phase.
    Guessing,
    GameOver,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub proposer: usize,
    pub use_: SpecialistUse,
    /// Per seat: `Some(true)` accepted (the proposer at once), `Some(false)` refused.
    pub votes: Vec<Option<bool>>,
}

/// A choice the engine waits for after an accepted specialist use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingChoice {
    /// `from` chooses the card it shows to `to`.
    Show { from: usize, to: usize },
    /// `seat` chooses a private card to discard (Hacker: any; Valet: not the suitless Jack).
    Discard { seat: usize, specialist: Specialist },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamGuess {
    pub challenge: Challenge,
    pub target: usize,
    /// In the order they arrived.
    pub votes: Vec<(usize, GuessValue)>,
}

/// The state of the heist in progress (or the last one, once the game is over).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heist {
    pub number: u32,
    pub challenges: Vec<Challenge>,
    pub specialist: Option<Specialist>,
    pub specialist_used: bool,
    pub private: Vec<Vec<Card>>,
    /// Revealed community cards.
    pub community: Vec<Card>,
    /// The community cards still face down, in reveal order.
    pub board_to_come: VecDeque<Card>,
    pub draw_pile: VecDeque<Card>,
    pub discards: Vec<Card>,
    /// Per seat: cards it held earlier this heist and no longer holds (passed, swindled,
    /// discarded). It still knows them.
    pub remembered: Vec<Vec<Card>>,
    /// Per seat: cards shown to it by the Informant, with who showed them.
    pub shown_to: Vec<Vec<(usize, Card)>>,
    /// Per seat: the card passed to it by the Coordinator, with who passed it.
    pub received: Vec<Option<(usize, Card)>>,
    /// Finished streets' chip phases, then the open one.
    pub phases: Vec<ChipPhase>,
    pub proposal: Option<Proposal>,
    pub proposed_this_street: Vec<bool>,
    pub pending: Option<PendingChoice>,
    /// Coordinator choices so far.
    pub coordinator_choices: Vec<Option<Card>>,
    pub guess: Option<TeamGuess>,
    pub guesses_correct: bool,
    pub muscle: Option<usize>,
    pub announcements: Vec<(usize, Specialist, Announcement)>,
    pub showdown: Option<Vec<Reveal>>,
}

impl Heist {
    pub fn is_active(&self, challenge: Challenge) -> bool {
        self.challenges.contains(&challenge)
    }
    pub fn open_phase(&self) -> Option<&ChipPhase> {
        self.phases.last().filter(|p| !p.closed)
    }
    pub fn phase(&self, street: Street) -> Option<&ChipPhase> {
        self.phases.iter().find(|p| p.street == street)
    }
    /// The chip phases whose chips are still on the table: every street's, or under Blackout
    /// (challenge 8) only the current street's, since "at the start of each street, the
    /// previous street's chips are removed: players must remember them". The engine keeps
    /// every phase (the showdown and challenges 3 and 7 read them); views show only these.
    pub fn chips_on_table(&self) -> &[ChipPhase] {
        if self.is_active(Challenge::Blackout) {
            &self.phases[self.phases.len().saturating_sub(1)..]
        } else {
            &self.phases[..]
        }
    }
}

/// The whole game.
#[derive(Debug, Clone)]
pub struct TheGang {
    config: Config,
    rng: ChaCha8Rng,
    preset: Preset,
    challenge_pile: VecDeque<Challenge>,
    specialist_pile: VecDeque<Specialist>,
    permanent: Option<Challenge>,
    /// Gangster: the two active challenges.
    gangster_pair: Vec<Challenge>,
    /// Advanced/pro: the card revealed after the last heist, for the next one.
    next_challenge: Option<Challenge>,
    next_specialist: Option<Specialist>,
    vaults: u32,
    alarms: u32,
    heist: Heist,
    stage: Stage,
    phase_counter: u64,
    won: Option<bool>,
    /// The last showdown's reveals and result (the next heist starts at once).
    last_showdown: Option<(Vec<Reveal>, bool)>,
}

impl TheGang {
    pub fn config(&self) -> &Config {
        &self.config
    }
    pub fn heist(&self) -> &Heist {
        &self.heist
    }
    pub fn stage(&self) -> Stage {
        self.stage
    }
    pub fn vaults(&self) -> u32 {
        self.vaults
    }
    pub fn alarms(&self) -> u32 {
        self.alarms
    }
    /// Pro mode's permanent challenge.
    pub fn permanent_challenge(&self) -> Option<Challenge> {
        self.permanent
    }
    /// `Some(true)` once the team won, `Some(false)` once it lost.
    pub fn result(&self) -> Option<bool> {
        self.won
    }
    pub fn is_over(&self) -> bool {
        self.won.is_some()
    }
    /// The reveals and result of the last showdown.
    pub fn last_showdown(&self) -> Option<&(Vec<Reveal>, bool)> {
        self.last_showdown.as_ref()
    }
    /// Changes whenever a stage with a deadline opens: a chip phase, a Coordinator choice, a
    /// team guess. (The chip phases' own counter, in `PhaseOpened`, is the high part.)
    pub fn phase_id(&self) -> u64 {
        let stage = match self.stage {
            Stage::Coordinating => 1,
            Stage::Guessing => 2 + self.heist.guess.as_ref().map_or(0, |g| g.challenge as u64),
            _ => 0,
        };
        (self.phase_counter << 8) | stage
    }
    /// The deadline of the stage waiting for players (a chip phase, a Coordinator choice, a
    /// team guess), if the game has one.
    pub fn phase_deadline_ms(&self) -> Option<u64> {
        let waiting = match self.stage {
            Stage::Coordinating | Stage::Guessing => true,
            Stage::Chips(_) => self.heist.open_phase().is_some(),
            Stage::NotStarted | Stage::GameOver => false,
        };
        self.config
            .phase_deadline_ms
            .filter(|_| waiting && !self.is_over())
    }
    /// The challenge and specialist piles, top first (hidden information).
    pub fn piles(&self) -> (Vec<Challenge>, Vec<Specialist>) {
        (
            self.challenge_pile.iter().copied().collect(),
            self.specialist_pile.iter().copied().collect(),
        )
    }
    /// Every card of the heist, wherever it is (hands, board, deck, discards), for
    /// conservation checks.
    pub fn all_cards(&self) -> Vec<Card> {
        let h = &self.heist;
        let mut all: Vec<Card> = h.private.iter().flatten().copied().collect();
        all.extend(&h.community);
        all.extend(&h.board_to_come);
        all.extend(&h.draw_pile);
        all.extend(&h.discards);
        all
    }
}
