//! The Gang rules on preset deals: the chip protocol (§4), the showdown (§3, §5), every
//! challenge card (§6), every specialist card (§7), every mode (§8), and every **[D]** decision
//! of the rules file (tests named `d_...`) and of the engine's own decisions (`decision_...`).

mod challenges;
mod chips_showdown_modes;
mod engine_decisions;
mod specialists;

use gangs_rules::the_gang::{
    cards, evaluate, Action, Announcement, Card, Category, Challenge, ChipMoveKind, Config, Event,
    GuessValue, HeistPreset, Mode, PendingChoice, Preset, Refusal, Specialist, SpecialistUse,
    Stage, Street, TheGang,
};

// ---- helpers -----------------------------------------------------------------------------------

/// Seat 0 high card, seat 1 a pair of nines, seat 2 a pair of aces (flop has a King).
const WEAK: &str = "2c 3d";
const MIDDLE: &str = "9h 9s";
const STRONG: &str = "Ah Ad";
const FACE_BOARD: &str = "Kc 7d 5h Js 4c";
const PLAIN_BOARD: &str = "8c 7d 5h Js 4c";

fn heist(private: &[&str], board: &str, deck: &str) -> HeistPreset {
    HeistPreset {
        private: private.iter().map(|p| cards(p)).collect(),
        community: cards(board),
        deck: cards(deck),
    }
}

fn standard_heist() -> HeistPreset {
    heist(&[WEAK, MIDDLE, STRONG], FACE_BOARD, "6c 6d Tc Td Qc Qd")
}

fn new_game(
    mode: Mode,
    heists: Vec<HeistPreset>,
    challenges: &[u32],
    specialists: &[u32],
) -> TheGang {
    new_timed_game(mode, heists, challenges, specialists, None)
}

/// As `new_game`, with the `phase_deadline_ms` option.
fn new_timed_game(
    mode: Mode,
    heists: Vec<HeistPreset>,
    challenges: &[u32],
    specialists: &[u32],
    deadline_ms: Option<u64>,
) -> TheGang {
    let players = heists.first().map_or(3, |h| h.private.len());
    let preset = Preset {
        heists,
        challenge_order: challenges
            .iter()
            .map(|&n| Challenge::from_number(n).unwrap())
            .collect(),
        specialist_order: specialists
            .iter()
            .map(|&n| Specialist::from_number(n).unwrap())
            .collect(),
    };
    let mut config = Config::new(players, mode);
    config.phase_deadline_ms = deadline_ms;
    TheGang::new(config, 1, Some(preset)).unwrap()
}

/// The whole challenge pile, `first` cards on top (in that order), the rest in number order.
fn pile_with_top(mode: Mode, first: &[u32]) -> Vec<u32> {
    let mut pile: Vec<u32> = first.to_vec();
    let skip_one = mode == Mode::Pro || mode == Mode::Gangster;
    let removed = |n: &u32| first.contains(n) || (skip_one && *n == 1);
    pile.extend((1..=10).filter(|n| !removed(n)));
    pile
}

fn specialist_pile_with_top(first: u32) -> Vec<u32> {
    let mut pile = vec![first];
    pile.extend((1..=10).filter(|&n| n != first));
    pile
}

fn act(g: &mut TheGang, seat: usize, action: Action) -> Vec<Event> {
    g.act(seat, action)
        .unwrap_or_else(|e| panic!("seat {seat} {action:?}: {e}"))
}

/// Each seat takes `stars[seat]`, then everyone declares ready.
fn settle(g: &mut TheGang, stars: &[u8]) -> Vec<Event> {
    let mut events = Vec::new();
    for (seat, &s) in stars.iter().enumerate() {
        if g.heist().open_phase().unwrap().chip_of(seat) != Some(s) {
            events.extend(act(g, seat, Action::Take(s)));
        }
    }
    for seat in 0..stars.len() {
        events.extend(act(g, seat, Action::Ready));
    }
    events
}

fn final_value(g: &TheGang, seat: usize) -> (gangs_rules::the_gang::HandValue, usize) {
    let h = g.heist();
    let mut hand = h.private[seat].clone();
    hand.extend(&h.community);
    hand.extend(h.board_to_come.iter());
    (evaluate(&hand), seat)
}

/// Settles the four streets with the chips in the order of the hands' final strength (the
/// heist succeeds unless a challenge says otherwise); returns the last street's events.
fn settle_streets_in_true_order(g: &mut TheGang) -> Vec<Event> {
    let players = g.config().players;
    let mut events = Vec::new();
    for _ in 0..4 {
        let mut order: Vec<_> = (0..players).map(|s| final_value(g, s)).collect();
        order.sort();
        let mut stars = vec![0u8; players];
        for (i, (_, seat)) in order.iter().enumerate() {
            stars[*seat] = i as u8 + 1;
        }
        events = settle(g, &stars);
    }
    events
}

/// Plays the current heist to its end: chips by true final strength (reversed to fail),
/// correct team guesses, the Coordinator passes each seat's first card.
fn play_heist(g: &mut TheGang, succeed: bool) -> bool {
    let number = g.heist().number;
    let players = g.config().players;
    let mut events = Vec::new();
    while g.heist().number == number && !g.is_over() {
        match g.stage() {
            Stage::Coordinating => {
                for seat in 0..players {
                    if g.heist().coordinator_choices[seat].is_none() {
                        let card = g.heist().private[seat][0];
                        events.extend(act(g, seat, Action::Choose(card)));
                    }
                }
            }
            Stage::Chips(_) => {
                let mut order: Vec<_> = (0..players).map(|s| final_value(g, s)).collect();
                order.sort();
                if !succeed {
                    order.reverse();
                }
                let mut stars = vec![0u8; players];
                for (i, (_, seat)) in order.iter().enumerate() {
                    stars[*seat] = i as u8 + 1;
                }
                events.extend(settle(g, &stars));
            }
            Stage::Guessing => {
                let guess = g.heist().guess.clone().unwrap();
                let target = guess.target;
                let value = match guess.challenge {
                    Challenge::RetinalScan => GuessValue::Rank(g.heist().private[target][0].rank()),
                    _ => {
                        let mut hand = g.heist().private[target].clone();
                        hand.extend(&g.heist().community);
                        GuessValue::Category(evaluate(&hand).category())
                    }
                };
                for seat in (0..players).filter(|&s| s != target) {
                    events.extend(act(g, seat, Action::Guess(value)));
                }
            }
            Stage::NotStarted | Stage::GameOver => unreachable!(),
        }
    }
    events
        .iter()
        .find_map(|e| match e {
            Event::HeistEnded { success, .. } => Some(*success),
            _ => None,
        })
        .expect("the heist ended")
}

fn phases_opened(events: &[Event]) -> Vec<Street> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::PhaseOpened { street, .. } => Some(*street),
            _ => None,
        })
        .collect()
}

fn showdown(events: &[Event]) -> (bool, Vec<usize>) {
    events
        .iter()
        .find_map(|e| match e {
            Event::Showdown {
                success, reveals, ..
            } => Some((*success, reveals.iter().map(|r| r.seat).collect())),
            _ => None,
        })
        .expect("a showdown")
}

fn started(mut g: TheGang) -> (TheGang, Vec<Event>) {
    let events = g.start();
    (g, events)
}

/// Advanced game whose heist 2 has specialist `n` (heist 1 fails on purpose).
fn with_specialist(n: u32, h: HeistPreset) -> (TheGang, Vec<Event>) {
    let players = h.private.len();
    let first = heist(
        &[WEAK, MIDDLE, STRONG, "Kh Ks", "Qh Qs", "Jh Jd"][..players],
        FACE_BOARD,
        "",
    );
    let (mut g, _) = started(new_game(
        Mode::Advanced,
        vec![first, h],
        &pile_with_top(Mode::Advanced, &[]),
        &specialist_pile_with_top(n),
    ));
    let mut events = Vec::new();
    for _ in 0..4 {
        let stars: Vec<u8> = (0..players).map(|s| (players - s) as u8).collect();
        events = settle(&mut g, &stars);
    }
    assert_eq!(g.heist().number, 2);
    assert_eq!(g.heist().specialist, Specialist::from_number(n));
    let start = events
        .iter()
        .position(|e| matches!(e, Event::HeistStarted { .. }))
        .unwrap();
    (g, events[start..].to_vec())
}

fn propose_and_accept(g: &mut TheGang, proposer: usize, use_: SpecialistUse) -> Vec<Event> {
    let mut events = act(g, proposer, Action::Propose(use_));
    for seat in (0..g.config().players).filter(|&s| s != proposer) {
        events.extend(act(g, seat, Action::Accept));
    }
    events
}
