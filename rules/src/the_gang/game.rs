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

use super::cards::Card;
use super::challenges::{
    card_points, is_face, Announcement, Challenge, GuessValue, Specialist, SpecialistUse,
};
use super::chips::{ChipMove, ChipPhase, Street};
use super::evaluator::{evaluate, Category, HandValue};
use super::Refusal;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;
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
}

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

fn empty_heist(players: usize) -> Heist {
    Heist {
        number: 0,
        challenges: Vec::new(),
        specialist: None,
        specialist_used: false,
        private: vec![Vec::new(); players],
        community: Vec::new(),
        board_to_come: VecDeque::new(),
        draw_pile: VecDeque::new(),
        discards: Vec::new(),
        remembered: vec![Vec::new(); players],
        shown_to: vec![Vec::new(); players],
        received: vec![None; players],
        phases: Vec::new(),
        proposal: None,
        proposed_this_street: vec![false; players],
        pending: None,
        coordinator_choices: vec![None; players],
        guess: None,
        guesses_correct: true,
        muscle: None,
        announcements: Vec::new(),
        showdown: None,
    }
}

fn check_permutation<T: PartialEq + Copy + std::fmt::Debug>(
    order: &[T],
    expected: &[T],
    what: &str,
) -> Result<(), Refusal> {
    if order.len() != expected.len()
        || expected.iter().any(|e| !order.contains(e))
        || order.iter().any(|o| !expected.contains(o))
    {
        return Err(Refusal::invalid(format!(
            "the preset {what} order must hold each of {expected:?} once"
        )));
    }
    Ok(())
}

impl TheGang {
    pub fn new(config: Config, seed: u64, preset: Option<Preset>) -> Result<TheGang, Refusal> {
        if !(3..=6).contains(&config.players) {
            return Err(Refusal::invalid("players must be 3 to 6"));
        }
        if config.max_moves_per_phase == 0 {
            return Err(Refusal::invalid("max_moves_per_phase must be at least 1"));
        }
        let preset = preset.unwrap_or_default();
        for (i, h) in preset.heists.iter().enumerate() {
            let mut all: Vec<Card> = h.private.iter().flatten().copied().collect();
            all.extend(&h.community);
            all.extend(&h.deck);
            if h.private.len() != config.players {
                return Err(Refusal::invalid(format!(
                    "preset heist {}: private cards for {} seats, expected {}",
                    i + 1,
                    h.private.len(),
                    config.players
                )));
            }
            if h.private.iter().any(|p| p.len() > 3) || h.community.len() != 5 {
                return Err(Refusal::invalid(format!(
                    "preset heist {}: at most 3 private cards per seat and exactly 5 community cards",
                    i + 1
                )));
            }
            let mut sorted = all.clone();
            sorted.sort();
            sorted.dedup();
            if sorted.len() != all.len() || all.contains(&Card::SUITLESS_JACK) {
                return Err(Refusal::invalid(format!(
                    "preset heist {}: a card appears twice or is not a suited card",
                    i + 1
                )));
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut challenges: Vec<Challenge> = Challenge::ALL.to_vec();
        if matches!(config.mode, Mode::Pro | Mode::Gangster) {
            challenges.retain(|&c| c != Challenge::EasyOpening);
        }
        let mut specialists: Vec<Specialist> = Specialist::ALL.to_vec();
        challenges.shuffle(&mut rng);
        specialists.shuffle(&mut rng);
        if !preset.challenge_order.is_empty() {
            check_permutation(&preset.challenge_order, &challenges, "challenge")?;
            challenges = preset.challenge_order.clone();
        }
        if !preset.specialist_order.is_empty() {
            check_permutation(&preset.specialist_order, &specialists, "specialist")?;
            specialists = preset.specialist_order.clone();
        }
        let mut game = TheGang {
            config,
            rng,
            preset,
            challenge_pile: challenges.into(),
            specialist_pile: specialists.into(),
            permanent: None,
            gangster_pair: Vec::new(),
            next_challenge: None,
            next_specialist: None,
            vaults: 0,
            alarms: 0,
            heist: empty_heist(config.players),
            stage: Stage::NotStarted,
            phase_counter: 0,
            won: None,
            last_showdown: None,
        };
        match config.mode {
            Mode::Basic | Mode::Advanced => {}
            Mode::Pro => game.permanent = game.challenge_pile.pop_front(),
            Mode::Gangster => {
                let first = game.challenge_pile.pop_front().expect("9 challenges");
                let second = game.challenge_pile.pop_front().expect("9 challenges");
                game.gangster_pair = vec![first, second];
            }
        }
        Ok(game)
    }

    // ---- read-only state -------------------------------------------------------------------

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

    // ---- the heist flow --------------------------------------------------------------------

    /// Deals the first heist.
    pub fn start(&mut self) -> Vec<Event> {
        assert_eq!(self.stage, Stage::NotStarted, "start is called once");
        let mut events = Vec::new();
        self.start_heist(&mut events);
        events
    }

    fn active_cards_for_next_heist(&mut self) -> (Vec<Challenge>, Option<Specialist>) {
        match self.config.mode {
            Mode::Basic => (Vec::new(), None),
            Mode::Advanced => (
                self.next_challenge.into_iter().collect(),
                self.next_specialist,
            ),
            Mode::Pro => {
                let mut c: Vec<Challenge> = self.permanent.into_iter().collect();
                c.extend(self.next_challenge);
                (c, self.next_specialist)
            }
            Mode::Gangster => {
                if self.heist.number >= 1 {
                    // Discard the lower-numbered card (under the pile), reveal a new one.
                    let lower = *self.gangster_pair.iter().min().expect("two cards");
                    self.gangster_pair.retain(|&c| c != lower);
                    self.challenge_pile.push_back(lower);
                    let new = self.challenge_pile.pop_front().expect("pile never empty");
                    self.gangster_pair.push(new);
                }
                (self.gangster_pair.clone(), None)
            }
        }
    }

    fn start_heist(&mut self, events: &mut Vec<Event>) {
        let number = self.heist.number + 1;
        let (challenges, specialist) = self.active_cards_for_next_heist();
        let players = self.config.players;
        let mut heist = empty_heist(players);
        heist.number = number;
        heist.challenges = challenges.clone();
        heist.specialist = specialist;
        let per_player = if challenges.contains(&Challenge::SurveillanceCameras) {
            3
        } else {
            2
        };
        // Build the deal: preset cards first, the seeded shuffle for the rest.
        let preset = self.preset.heists.get(number as usize - 1).cloned();
        let mut shuffled = Card::deck();
        shuffled.shuffle(&mut self.rng);
        match preset {
            Some(p) => {
                let used: Vec<Card> = p
                    .private
                    .iter()
                    .flatten()
                    .chain(&p.community)
                    .chain(&p.deck)
                    .copied()
                    .collect();
                let mut deck: VecDeque<Card> = p.deck.iter().copied().collect();
                deck.extend(shuffled.into_iter().filter(|c| !used.contains(c)));
                for (seat, cards) in p.private.iter().enumerate() {
                    let mut hand: Vec<Card> = cards.iter().take(per_player).copied().collect();
                    for &extra in cards.iter().skip(per_player).rev() {
                        deck.push_front(extra);
                    }
                    while hand.len() < per_player {
                        hand.push(deck.pop_front().expect("enough cards"));
                    }
                    heist.private[seat] = hand;
                }
                heist.board_to_come = p.community.iter().copied().collect();
                heist.draw_pile = deck;
            }
            None => {
                let mut deck: VecDeque<Card> = shuffled.into();
                for seat in 0..players {
                    heist.private[seat] = (0..per_player)
                        .map(|_| deck.pop_front().expect("enough cards"))
                        .collect();
                }
                heist.board_to_come = (0..5).map(|_| deck.pop_front().expect("5")).collect();
                heist.draw_pile = deck;
            }
        }
        self.heist = heist;
        events.push(Event::HeistStarted {
            heist: number,
            challenges,
            specialist,
        });
        for seat in 0..players {
            events.push(Event::Dealt {
                seat,
                cards: self.heist.private[seat].clone(),
            });
        }
        self.after_deal(events);
    }

    /// Automatic specialists (3, 6, 8, 9), then the first chip phase.
    fn after_deal(&mut self, events: &mut Vec<Event>) {
        match self.heist.specialist {
            Some(Specialist::Swindler) => {
                let players = self.config.players;
                let old = self.heist.private.clone();
                let mut gathered: Vec<Card> = old.iter().flatten().copied().collect();
                gathered.shuffle(&mut self.rng);
                let mut it = gathered.into_iter();
                for (seat, old_hand) in old.iter().enumerate().take(players) {
                    let new: Vec<Card> = it.by_ref().take(old_hand.len()).collect();
                    self.heist.remembered[seat]
                        .extend(old_hand.iter().filter(|c| !new.contains(c)));
                    self.heist.private[seat] = new.clone();
                    events.push(Event::Swindled {
                        seat,
                        old: old_hand.clone(),
                        new,
                    });
                }
                self.heist.specialist_used = true;
            }
            Some(Specialist::Shareholder) => {
                for seat in 0..self.config.players {
                    let count = self.heist.private[seat]
                        .iter()
                        .filter(|&&c| is_face(c))
                        .count();
                    self.announce(
                        seat,
                        Specialist::Shareholder,
                        Announcement::FaceCards(count as u32),
                        events,
                    );
                }
                self.heist.specialist_used = true;
            }
            Some(Specialist::NumbersGenius) => {
                for seat in 0..self.config.players {
                    let sum = self.heist.private[seat]
                        .iter()
                        .map(|&c| card_points(c))
                        .sum();
                    self.announce(
                        seat,
                        Specialist::NumbersGenius,
                        Announcement::CardSum(sum),
                        events,
                    );
                }
                self.heist.specialist_used = true;
            }
            Some(Specialist::Coordinator) => {
                self.stage = Stage::Coordinating;
                return;
            }
            _ => {}
        }
        self.open_first_street(events);
    }

    fn announce(
        &mut self,
        seat: usize,
        specialist: Specialist,
        announcement: Announcement,
        events: &mut Vec<Event>,
    ) {
        self.heist
            .announcements
            .push((seat, specialist, announcement));
        events.push(Event::Announced {
            seat,
            specialist,
            announcement,
        });
    }

    fn open_first_street(&mut self, events: &mut Vec<Event>) {
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
    fn after_phase(&mut self, street: Street, events: &mut Vec<Event>) {
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

    fn red_top_holder(&self) -> usize {
        let red = self.heist.phase(Street::Red).expect("red phase played");
        red.holder[self.config.players - 1].expect("all red chips held")
    }

    fn next_guess_or_showdown(&mut self, events: &mut Vec<Event>) {
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

    fn showdown(&mut self, events: &mut Vec<Event>) {
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

    // ---- actions ---------------------------------------------------------------------------

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
    /// for them (see the decisions above).
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
            let seat = match pending {
                PendingChoice::Show { from, .. } => from,
                PendingChoice::Discard { seat, .. } => seat,
            };
            let card = self.default_choice(seat).expect("the chooser holds a card");
            self.choose(seat, card, events)?;
        }
        self.try_close_phase(true, events);
        Ok(())
    }

    fn check_propose(&self, seat: usize, use_: SpecialistUse) -> Result<(), Refusal> {
        let h = &self.heist;
        let Some(specialist) = h.specialist else {
            return Err(Refusal::not_now("no specialist card is active"));
        };
        if use_.specialist() != specialist {
            return Err(Refusal::invalid(format!(
                "the active specialist is {}",
                specialist.name()
            )));
        }
        if h.specialist_used {
            return Err(Refusal::not_now("the specialist was already used"));
        }
        if !matches!(self.stage, Stage::Chips(_)) {
            return Err(Refusal::not_now(
                "specialists are proposed during a chip phase",
            ));
        }
        if h.proposal.is_some() || h.pending.is_some() {
            return Err(Refusal::not_now("a proposal is already open"));
        }
        if h.proposed_this_street[seat] {
            return Err(Refusal::not_now("one proposal per player per street"));
        }
        let n = self.config.players;
        if use_.seat() >= n {
            return Err(Refusal::invalid("no such seat"));
        }
        match use_ {
            SpecialistUse::Informant { from, to } if to >= n || to == from => Err(
                Refusal::invalid("the informant shows a card to one other player"),
            ),
            SpecialistUse::Brains { rank, .. } if rank > 12 => {
                Err(Refusal::invalid("a rank is 2..A"))
            }
            SpecialistUse::Valet { seat: who } if h.private[who].contains(&Card::SUITLESS_JACK) => {
                Err(Refusal::not_now(
                    "that player already has the suitless Jack",
                ))
            }
            _ => Ok(()),
        }
    }

    fn propose(
        &mut self,
        seat: usize,
        use_: SpecialistUse,
        events: &mut Vec<Event>,
    ) -> Result<(), Refusal> {
        self.check_propose(seat, use_)?;
        let mut votes = vec![None; self.config.players];
        votes[seat] = Some(true);
        self.heist.proposed_this_street[seat] = true;
        self.heist.proposal = Some(Proposal {
            proposer: seat,
            use_,
            votes,
        });
        events.push(Event::Proposed {
            proposer: seat,
            use_,
        });
        Ok(())
    }

    fn vote(&mut self, seat: usize, accept: bool, events: &mut Vec<Event>) -> Result<(), Refusal> {
        let proposal = self
            .heist
            .proposal
            .as_mut()
            .ok_or_else(|| Refusal::not_now("no proposal is open"))?;
        if proposal.votes[seat].is_some() {
            return Err(Refusal::not_now("you already voted on this proposal"));
        }
        proposal.votes[seat] = Some(accept);
        events.push(Event::Voted { seat, accept });
        if !accept {
            self.heist.proposal = None;
            events.push(Event::ProposalClosed {
                accepted: false,
                expired: false,
            });
        } else if proposal.votes.iter().all(|v| *v == Some(true)) {
            let use_ = proposal.use_;
            self.heist.proposal = None;
            events.push(Event::ProposalClosed {
                accepted: true,
                expired: false,
            });
            self.apply_specialist(use_, events);
        }
        Ok(())
    }

    fn apply_specialist(&mut self, use_: SpecialistUse, events: &mut Vec<Event>) {
        self.heist.specialist_used = true;
        if let Some(phase) = self.heist.phases.last_mut() {
            phase.ready.iter_mut().for_each(|r| *r = false);
        }
        match use_ {
            SpecialistUse::Informant { from, to } => {
                self.heist.pending = Some(PendingChoice::Show { from, to });
            }
            SpecialistUse::Driver { seat } => {
                let mut hand = self.heist.private[seat].clone();
                hand.extend(&self.heist.community);
                let category = evaluate(&hand).category();
                self.announce(
                    seat,
                    Specialist::Driver,
                    Announcement::BestCategory(category),
                    events,
                );
            }
            SpecialistUse::Brains { seat, rank } => {
                let count = self.heist.private[seat]
                    .iter()
                    .filter(|c| c.rank() == rank)
                    .count() as u32;
                self.announce(
                    seat,
                    Specialist::Brains,
                    Announcement::RankCount { rank, count },
                    events,
                );
            }
            SpecialistUse::Hacker { seat } => {
                let card = self
                    .heist
                    .draw_pile
                    .pop_front()
                    .expect("cards left to draw");
                self.heist.private[seat].push(card);
                events.push(Event::CardDrawn { seat, card });
                self.heist.pending = Some(PendingChoice::Discard {
                    seat,
                    specialist: Specialist::Hacker,
                });
            }
            SpecialistUse::Valet { seat } => {
                self.heist.private[seat].push(Card::SUITLESS_JACK);
                events.push(Event::SuitlessJackTaken { seat });
                self.heist.pending = Some(PendingChoice::Discard {
                    seat,
                    specialist: Specialist::Valet,
                });
            }
            SpecialistUse::Muscle { seat } => {
                self.heist.muscle = Some(seat);
                events.push(Event::MuscleTaken { seat });
            }
        }
    }

    fn choose(&mut self, seat: usize, card: Card, events: &mut Vec<Event>) -> Result<(), Refusal> {
        if !self.heist.private[seat].contains(&card) {
            return Err(Refusal::invalid(format!("{card} is not in your hand")));
        }
        if self.stage == Stage::Coordinating {
            if self.heist.coordinator_choices[seat].is_some() {
                return Err(Refusal::not_now("you already chose your card"));
            }
            self.heist.coordinator_choices[seat] = Some(card);
            events.push(Event::CardChosen { seat });
            if self.heist.coordinator_choices.iter().all(|c| c.is_some()) {
                let n = self.config.players;
                let chosen: Vec<Card> = self
                    .heist
                    .coordinator_choices
                    .iter()
                    .map(|c| c.expect("all chose"))
                    .collect();
                for (from, &card) in chosen.iter().enumerate() {
                    let to = (from + 1) % n;
                    self.heist.private[from].retain(|&c| c != card);
                    self.heist.remembered[from].push(card);
                    self.heist.received[to] = Some((from, card));
                }
                for (from, &card) in chosen.iter().enumerate() {
                    let to = (from + 1) % n;
                    self.heist.private[to].push(card);
                    events.push(Event::CardPassed { from, to, card });
                }
                self.heist.specialist_used = true;
                self.open_first_street(events);
            }
            return Ok(());
        }
        match self.heist.pending {
            Some(PendingChoice::Show { from, to }) if from == seat => {
                self.heist.shown_to[to].push((from, card));
                self.heist.pending = None;
                events.push(Event::CardShown { from, to, card });
                Ok(())
            }
            Some(PendingChoice::Discard {
                seat: who,
                specialist,
            }) if who == seat => {
                if specialist == Specialist::Valet && card == Card::SUITLESS_JACK {
                    return Err(Refusal::invalid(
                        "the Valet discards another card than the suitless Jack",
                    ));
                }
                self.heist.private[seat].retain(|&c| c != card);
                self.heist.discards.push(card);
                if card != Card::SUITLESS_JACK {
                    self.heist.remembered[seat].push(card);
                }
                self.heist.pending = None;
                events.push(Event::CardDiscarded { seat, card });
                Ok(())
            }
            _ => Err(Refusal::not_now("there is no card for you to choose now")),
        }
    }

    fn guess(
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

    // ---- legal actions ---------------------------------------------------------------------

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
                    match pending {
                        PendingChoice::Show { from, .. } if from == seat => {
                            actions.extend(h.private[seat].iter().map(|&c| Action::Choose(c)));
                        }
                        PendingChoice::Discard {
                            seat: who,
                            specialist,
                        } if who == seat => {
                            actions.extend(
                                h.private[seat]
                                    .iter()
                                    .filter(|&&c| {
                                        specialist != Specialist::Valet || c != Card::SUITLESS_JACK
                                    })
                                    .map(|&c| Action::Choose(c)),
                            );
                        }
                        _ => {}
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

    fn all_uses(&self) -> Vec<SpecialistUse> {
        let n = self.config.players;
        let Some(s) = self
            .heist
            .specialist
            .filter(|_| !self.heist.specialist_used)
        else {
            return Vec::new();
        };
        let mut uses = Vec::new();
        for seat in 0..n {
            match s {
                Specialist::Informant => uses.extend(
                    (0..n)
                        .filter(|&to| to != seat)
                        .map(|to| SpecialistUse::Informant { from: seat, to }),
                ),
                Specialist::Driver => uses.push(SpecialistUse::Driver { seat }),
                Specialist::Brains => {
                    uses.extend((0..13).map(|rank| SpecialistUse::Brains { seat, rank }))
                }
                Specialist::Hacker => uses.push(SpecialistUse::Hacker { seat }),
                Specialist::Valet => uses.push(SpecialistUse::Valet { seat }),
                Specialist::Muscle => uses.push(SpecialistUse::Muscle { seat }),
                _ => {}
            }
        }
        uses
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
