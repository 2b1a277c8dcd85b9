//! Setting up: a new game (options, presets, the challenge and specialist piles by mode) and
//! dealing each heist (the active cards, private and community cards, the draw pile).

use super::{Config, Heist, Mode, Preset, Stage, TheGang};
use crate::the_gang::cards::Card;
use crate::the_gang::challenges::{Challenge, Specialist};
use crate::the_gang::{Event, Refusal};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

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

    pub(super) fn start_heist(&mut self, events: &mut Vec<Event>) {
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
}
