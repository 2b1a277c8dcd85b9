//! The Gang rules on preset deals: the chip protocol (§4), the showdown (§3, §5), every
//! challenge card (§6), every specialist card (§7), every mode (§8), and every **[D]** decision
//! of the rules file (tests named `d_...`) and of the engine's own decisions (`decision_...`).

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

// ---- §4 the chip protocol ------------------------------------------------------------------------

#[test]
fn d_chip_phase_take_from_centre_or_from_a_player_and_never_two_chips() {
    let (mut g, _) = started(new_game(Mode::Basic, vec![standard_heist()], &[], &[]));
    assert_eq!(g.stage(), Stage::Chips(Street::White));
    let e = act(&mut g, 0, Action::Take(2));
    assert_eq!(
        e,
        vec![Event::ChipMoved(gangs_rules::the_gang::ChipMove {
            seq: 1,
            seat: 0,
            stars: 2,
            kind: ChipMoveKind::Take { from: None }
        })]
    );
    // Seat 1 takes it from seat 0.
    let e = act(&mut g, 1, Action::Take(2));
    assert!(matches!(
        e[0],
        Event::ChipMoved(m) if m.kind == ChipMoveKind::Take { from: Some(0) } && m.seq == 2
    ));
    let phase = g.heist().open_phase().unwrap();
    assert_eq!(phase.chip_of(0), None);
    assert_eq!(phase.chip_of(1), Some(2));
    // Taking another chip puts one's own back in the centre in the same move.
    act(&mut g, 1, Action::Take(3));
    let phase = g.heist().open_phase().unwrap();
    assert_eq!(phase.chip_of(1), Some(3));
    assert_eq!(
        phase.holder[1], None,
        "the 2-star chip went back to the centre"
    );
    assert_eq!(phase.moves, 3, "one move, not two");
    // Retaking one's own chip and returning nothing are refused.
    assert!(matches!(g.act(1, Action::Take(3)), Err(Refusal::NotNow(_))));
    assert!(matches!(g.act(0, Action::Return), Err(Refusal::NotNow(_))));
    assert!(matches!(
        g.act(0, Action::Take(4)),
        Err(Refusal::Invalid(_))
    ));
    act(&mut g, 1, Action::Return);
    assert_eq!(g.heist().open_phase().unwrap().chip_of(1), None);
}

#[test]
fn d_every_take_or_return_clears_every_ready_and_the_phase_closes_when_all_hold_and_are_ready() {
    let (mut g, _) = started(new_game(Mode::Basic, vec![standard_heist()], &[], &[]));
    act(&mut g, 0, Action::Take(1));
    act(&mut g, 1, Action::Take(2));
    act(&mut g, 0, Action::Ready);
    act(&mut g, 1, Action::Ready);
    assert_eq!(
        g.heist().open_phase().unwrap().ready,
        vec![true, true, false]
    );
    act(&mut g, 2, Action::Take(3));
    assert_eq!(
        g.heist().open_phase().unwrap().ready,
        vec![false, false, false]
    );
    act(&mut g, 0, Action::Ready);
    act(&mut g, 1, Action::Ready);
    assert_eq!(
        g.stage(),
        Stage::Chips(Street::White),
        "seat 2 is not ready yet"
    );
    let e = act(&mut g, 2, Action::Ready);
    assert!(e.contains(&Event::PhaseClosed {
        street: Street::White,
        expired: false
    }));
    assert!(e.contains(&Event::CommunityRevealed {
        street: Street::Yellow,
        cards: cards("Kc 7d 5h")
    }));
    assert_eq!(g.stage(), Stage::Chips(Street::Yellow));
    // Everyone ready but one player chipless: the phase stays open.
    act(&mut g, 0, Action::Take(1));
    act(&mut g, 1, Action::Take(2));
    for s in 0..3 {
        act(&mut g, s, Action::Ready);
    }
    assert_eq!(g.stage(), Stage::Chips(Street::Yellow));
    assert!(
        matches!(g.act(0, Action::Ready), Err(Refusal::NotNow(_))),
        "already ready"
    );
}

#[test]
fn d_move_cap_then_only_ready_and_chipless_players_get_the_remaining_chips_in_seat_order() {
    let mut config = Config::new(4, Mode::Basic);
    config.max_moves_per_phase = 3;
    let mut g = TheGang::new(config, 5, None).unwrap();
    g.start();
    act(&mut g, 3, Action::Take(2));
    act(&mut g, 1, Action::Take(4));
    act(&mut g, 3, Action::Take(1));
    // Cap reached: no take, no return; ready still accepted.
    assert!(matches!(g.act(0, Action::Take(3)), Err(Refusal::NotNow(_))));
    assert!(matches!(g.act(1, Action::Return), Err(Refusal::NotNow(_))));
    assert_eq!(g.legal_actions(0), vec![Action::Ready]);
    act(&mut g, 1, Action::Ready);
    assert_eq!(g.stage(), Stage::Chips(Street::White));
    let e = act(&mut g, 3, Action::Ready);
    // Seats 0 and 2 are chipless: remaining chips 2 and 3 in seat order.
    assert_eq!(e[1], Event::ChipGiven { seat: 0, stars: 2 });
    assert_eq!(e[2], Event::ChipGiven { seat: 2, stars: 3 });
    assert_eq!(
        e[3],
        Event::PhaseClosed {
            street: Street::White,
            expired: false
        }
    );
    let white = g.heist().phase(Street::White).unwrap();
    assert_eq!(white.holder, vec![Some(3), Some(0), Some(2), Some(1)]);
}

#[test]
fn d_deadline_gives_remaining_chips_in_seat_order_and_closes_the_phase() {
    let mut config = Config::new(3, Mode::Basic);
    config.phase_deadline_ms = Some(2500);
    let mut g = TheGang::new(config, 9, None).unwrap();
    assert_eq!(g.phase_deadline_ms(), None, "no phase before the start");
    g.start();
    assert_eq!(g.phase_deadline_ms(), Some(2500));
    let first_phase = g.phase_id();
    act(&mut g, 1, Action::Take(1));
    let e = g.expire().unwrap();
    assert_eq!(e[0], Event::ChipGiven { seat: 0, stars: 2 });
    assert_eq!(e[1], Event::ChipGiven { seat: 2, stars: 3 });
    assert_eq!(
        e[2],
        Event::PhaseClosed {
            street: Street::White,
            expired: true
        }
    );
    assert_eq!(g.stage(), Stage::Chips(Street::Yellow));
    assert_ne!(g.phase_id(), first_phase, "a new phase has a new id");
    // No deadline option: no deadline.
    let (g, _) = started(TheGang::new(Config::new(3, Mode::Basic), 9, None).unwrap());
    assert_eq!(g.phase_deadline_ms(), None);
}

#[test]
fn d_chip_moves_are_public_ordered_and_earlier_streets_stay_visible() {
    let (mut g, _) = started(new_game(Mode::Basic, vec![standard_heist()], &[], &[]));
    settle(&mut g, &[1, 2, 3]);
    act(&mut g, 2, Action::Take(1));
    act(&mut g, 0, Action::Take(1));
    let yellow = g.heist().open_phase().unwrap();
    let seqs: Vec<(u32, usize)> = yellow.log.iter().map(|m| (m.seq, m.seat)).collect();
    assert_eq!(seqs, vec![(1, 2), (2, 0)]);
    let white = g.heist().phase(Street::White).unwrap();
    assert_eq!(white.holder, vec![Some(0), Some(1), Some(2)]);
}

// ---- §3 showdown, §2 the end -------------------------------------------------------------------

#[test]
fn showdown_in_red_chip_order_succeeds_and_a_wrong_order_rings_one_alarm() {
    let (mut g, _) = started(new_game(Mode::Basic, vec![standard_heist(); 2], &[], &[]));
    assert!(play_heist(&mut g, true));
    assert_eq!((g.vaults(), g.alarms()), (1, 0));
    let (reveals, success) = g.last_showdown().unwrap();
    let order: Vec<usize> = reveals.iter().map(|r| r.seat).collect();
    assert!(*success);
    assert_eq!(order, vec![0, 1, 2]);
    assert!(
        !play_heist(&mut g, false),
        "reversed: two mistakes, one alarm"
    );
    assert_eq!((g.vaults(), g.alarms()), (1, 1));
}

#[test]
fn showdown_equal_hands_may_stand_in_either_order() {
    // Seats 0 and 1 both play the board's straight: a perfect tie.
    let tie = heist(&["2c 3d", "2h 3s", "Ah Ad"], "9c Td Jh Qs Kc", "");
    for (first, second) in [(0usize, 1usize), (1, 0)] {
        let (mut g, _) = started(new_game(Mode::Basic, vec![tie.clone()], &[], &[]));
        for street in 0..4 {
            let mut stars = [0u8; 3];
            stars[first] = 1;
            stars[second] = 2;
            stars[2] = 3;
            let e = settle(&mut g, &stars);
            if street == 3 {
                assert!(showdown(&e).0, "tie in order {first},{second} succeeds");
            }
        }
    }
}

#[test]
fn three_vaults_win_and_three_alarms_lose() {
    let (mut g, _) = started(new_game(Mode::Basic, vec![standard_heist(); 5], &[], &[]));
    for _ in 0..3 {
        play_heist(&mut g, true);
    }
    assert_eq!(g.result(), Some(true));
    assert!(g.act(0, Action::Ready).is_err());
    let (mut g, _) = started(new_game(Mode::Basic, vec![standard_heist(); 5], &[], &[]));
    play_heist(&mut g, false);
    play_heist(&mut g, true);
    play_heist(&mut g, false);
    assert!(!g.is_over());
    play_heist(&mut g, false);
    assert_eq!(g.result(), Some(false));
    assert_eq!((g.vaults(), g.alarms()), (1, 3));
}

// ---- §8 modes ----------------------------------------------------------------------------------

#[test]
fn mode_basic_has_no_cards() {
    let (mut g, e) = started(new_game(Mode::Basic, vec![standard_heist(); 3], &[], &[]));
    assert_eq!(
        e[0],
        Event::HeistStarted {
            heist: 1,
            challenges: vec![],
            specialist: None
        }
    );
    play_heist(&mut g, false);
    assert!(g.heist().challenges.is_empty() && g.heist().specialist.is_none());
}

#[test]
fn mode_advanced_first_heist_plain_then_challenge_after_success_specialist_after_failure() {
    let pile = pile_with_top(Mode::Advanced, &[5, 8]);
    let specialists = specialist_pile_with_top(2);
    let (mut g, e) = started(new_game(
        Mode::Advanced,
        vec![standard_heist(); 5],
        &pile,
        &specialists,
    ));
    assert_eq!(
        e[0],
        Event::HeistStarted {
            heist: 1,
            challenges: vec![],
            specialist: None
        }
    );
    play_heist(&mut g, true);
    assert_eq!(g.heist().challenges, vec![Challenge::HastyEscape]);
    assert_eq!(g.heist().specialist, None);
    play_heist(&mut g, false);
    assert_eq!(g.heist().challenges, vec![]);
    assert_eq!(g.heist().specialist, Some(Specialist::Driver));
    play_heist(&mut g, true);
    assert_eq!(g.heist().challenges, vec![Challenge::Blackout]);
    // Used cards went under their piles.
    let (challenges, specialists) = g.piles();
    assert_eq!(challenges.last(), Some(&Challenge::HastyEscape));
    assert_eq!(specialists.last(), Some(&Specialist::Driver));
    assert_eq!(challenges.len(), 9, "the active one is out of the pile");
}

#[test]
fn mode_pro_removes_challenge_1_and_a_permanent_challenge_acts_in_every_heist() {
    let pile = pile_with_top(Mode::Pro, &[8, 5]);
    assert!(
        TheGang::new(
            Config::new(3, Mode::Pro),
            1,
            Some(Preset {
                challenge_order: (1..=10)
                    .map(|n| Challenge::from_number(n).unwrap())
                    .collect(),
                ..Default::default()
            })
        )
        .is_err(),
        "challenge 1 is not in the pro pile"
    );
    let (mut g, e) = started(new_game(
        Mode::Pro,
        vec![standard_heist(); 5],
        &pile,
        &specialist_pile_with_top(10),
    ));
    assert_eq!(g.permanent_challenge(), Some(Challenge::Blackout));
    assert_eq!(
        e[0],
        Event::HeistStarted {
            heist: 1,
            challenges: vec![Challenge::Blackout],
            specialist: None
        }
    );
    play_heist(&mut g, true);
    assert_eq!(
        g.heist().challenges,
        vec![Challenge::Blackout, Challenge::HastyEscape]
    );
    play_heist(&mut g, false);
    assert_eq!(g.heist().challenges, vec![Challenge::Blackout]);
    assert_eq!(g.heist().specialist, Some(Specialist::Muscle));
    // Random piles never hold challenge 1 in pro.
    for seed in 0..50 {
        let g = TheGang::new(Config::new(3, Mode::Pro), seed, None).unwrap();
        assert!(!g.piles().0.contains(&Challenge::EasyOpening));
        assert_ne!(g.permanent_challenge(), Some(Challenge::EasyOpening));
    }
}

#[test]
fn mode_gangster_two_rotating_challenges_no_specialists_two_alarms_lose() {
    let pile = pile_with_top(Mode::Gangster, &[8, 3, 5, 2]);
    let (mut g, e) = started(new_game(
        Mode::Gangster,
        vec![standard_heist(); 5],
        &pile,
        &[],
    ));
    assert_eq!(
        e[0],
        Event::HeistStarted {
            heist: 1,
            challenges: vec![Challenge::Blackout, Challenge::MotionDetectors],
            specialist: None
        }
    );
    play_heist(&mut g, false);
    // The lower-numbered (3) is discarded, 5 revealed.
    assert_eq!(
        g.heist().challenges,
        vec![Challenge::Blackout, Challenge::HastyEscape]
    );
    assert_eq!(
        g.heist().specialist,
        None,
        "no specialist cards in gangster"
    );
    play_heist(&mut g, true);
    assert_eq!(
        g.heist().challenges,
        vec![Challenge::Blackout, Challenge::NoiseSensors]
    );
    play_heist(&mut g, false);
    assert_eq!(g.result(), Some(false), "two alarms lose in gangster");
    for seed in 0..50 {
        let g = TheGang::new(Config::new(4, Mode::Gangster), seed, None).unwrap();
        assert!(!g.piles().0.contains(&Challenge::EasyOpening));
    }
}

// ---- §6 challenges -----------------------------------------------------------------------------

fn with_challenge(n: u32, h: HeistPreset) -> (TheGang, Vec<Event>) {
    // Advanced: heist 1 plain (a preset success), heist 2 with challenge `n`.
    let (mut g, _) = started(new_game(
        Mode::Advanced,
        vec![standard_heist(), h],
        &pile_with_top(Mode::Advanced, &[n]),
        &[],
    ));
    let number = g.heist().number;
    // Play heist 1 in order; collect heist 2's opening events.
    let events = settle_streets_in_true_order(&mut g);
    assert_eq!(g.heist().number, number + 1);
    let start = events
        .iter()
        .position(|e| matches!(e, Event::HeistStarted { .. }))
        .unwrap();
    (g, events[start..].to_vec())
}

#[test]
fn challenge_1_easy_opening_skips_the_white_chips() {
    let (g, e) = with_challenge(1, standard_heist());
    assert_eq!(phases_opened(&e), vec![Street::Yellow]);
    assert_eq!(g.heist().community, cards("Kc 7d 5h"));
}

#[test]
fn challenge_2_noise_sensors_lock_the_1_star_chips_of_white_yellow_orange() {
    let (mut g, _) = with_challenge(2, standard_heist());
    act(&mut g, 0, Action::Take(1));
    assert!(g.act(1, Action::Take(1)).is_err(), "cannot change owner");
    assert!(g.act(0, Action::Return).is_err(), "cannot be returned");
    assert!(
        g.act(0, Action::Take(2)).is_err(),
        "the holder cannot swap it away"
    );
    act(&mut g, 1, Action::Take(2));
    act(&mut g, 2, Action::Take(2));
    assert_eq!(
        g.heist().open_phase().unwrap().locked,
        vec![true, false, false]
    );
    act(&mut g, 1, Action::Take(3));
    settle(&mut g, &[1, 3, 2]);
    settle(&mut g, &[1, 2, 3]);
    settle(&mut g, &[1, 2, 3]);
    assert_eq!(g.stage(), Stage::Chips(Street::Red));
    assert_eq!(
        g.heist().open_phase().unwrap().locked,
        vec![false, false, false],
        "red is free"
    );
}

#[test]
fn challenge_3_motion_detectors_replace_the_white_1_star_hand_when_the_flop_has_a_face() {
    let (mut g, _) = with_challenge(3, heist(&[WEAK, MIDDLE, STRONG], FACE_BOARD, "6c 6d"));
    let e = settle(&mut g, &[2, 1, 3]);
    assert!(e.contains(&Event::HandReplaced {
        seat: 1,
        challenge: Challenge::MotionDetectors,
        discarded: cards(MIDDLE),
        drawn: cards("6c 6d"),
    }));
    assert_eq!(g.heist().private[1], cards("6c 6d"));
    // No face on the flop: nothing happens.
    let (mut g, _) = with_challenge(3, heist(&[WEAK, MIDDLE, STRONG], PLAIN_BOARD, "6c 6d"));
    let e = settle(&mut g, &[2, 1, 3]);
    assert!(!e.iter().any(|e| matches!(e, Event::HandReplaced { .. })));
}

#[test]
fn challenge_4_retinal_scan_team_names_a_rank_of_the_top_red_holder() {
    for (guess, success) in [(12u8, true), (11u8, false)] {
        let (mut g, _) = with_challenge(4, standard_heist());
        for _ in 0..4 {
            settle(&mut g, &[1, 2, 3]);
        }
        assert_eq!(g.stage(), Stage::Guessing);
        let target = g.heist().guess.as_ref().unwrap().target;
        assert_eq!(target, 2, "the holder of the highest red chip");
        assert!(
            g.act(2, Action::Guess(GuessValue::Rank(12))).is_err(),
            "the target does not guess"
        );
        assert!(
            g.act(0, Action::Take(1)).is_err(),
            "no chip moves during the guess"
        );
        act(&mut g, 0, Action::Guess(GuessValue::Rank(guess)));
        let e = act(&mut g, 1, Action::Guess(GuessValue::Rank(guess)));
        assert!(e.contains(&Event::GuessResolved {
            challenge: Challenge::RetinalScan,
            answer: GuessValue::Rank(guess),
            correct: success
        }));
        assert_eq!(
            showdown(&e).0,
            success,
            "a wrong guess fails a well-ordered heist"
        );
    }
}

#[test]
fn challenge_5_hasty_escape_skips_the_orange_chips() {
    let (mut g, _) = with_challenge(5, standard_heist());
    settle(&mut g, &[1, 2, 3]);
    let e = settle(&mut g, &[1, 2, 3]);
    assert_eq!(phases_opened(&e), vec![Street::Red]);
    assert_eq!(g.heist().community.len(), 5);
    assert!(g.heist().phase(Street::Orange).is_none());
}

#[test]
fn challenge_6_air_vent_locks_the_highest_chips_of_white_yellow_orange() {
    let (mut g, _) = with_challenge(6, standard_heist());
    assert_eq!(
        g.heist().open_phase().unwrap().locked,
        vec![false, false, true]
    );
    act(&mut g, 0, Action::Take(3));
    assert!(g.act(2, Action::Take(3)).is_err());
    assert!(g.act(0, Action::Return).is_err());
    settle(&mut g, &[3, 1, 2]);
    settle(&mut g, &[1, 2, 3]);
    settle(&mut g, &[1, 2, 3]);
    assert_eq!(
        g.heist().open_phase().unwrap().locked,
        vec![false, false, false]
    );
}

#[test]
fn challenge_7_photoelectric_barriers_replace_the_highest_white_hand_without_a_face_on_the_flop() {
    let (mut g, _) = with_challenge(7, heist(&[WEAK, MIDDLE, STRONG], PLAIN_BOARD, "6c 6d"));
    let e = settle(&mut g, &[3, 1, 2]);
    assert!(e.contains(&Event::HandReplaced {
        seat: 0,
        challenge: Challenge::PhotoelectricBarriers,
        discarded: cards(WEAK),
        drawn: cards("6c 6d"),
    }));
    let (mut g, _) = with_challenge(7, heist(&[WEAK, MIDDLE, STRONG], FACE_BOARD, "6c 6d"));
    let e = settle(&mut g, &[3, 1, 2]);
    assert!(!e.iter().any(|e| matches!(e, Event::HandReplaced { .. })));
}

#[test]
fn challenge_8_blackout_is_active_for_the_views() {
    // The engine keeps every street (the bridge hides earlier ones: tested in gangs-games).
    let (g, e) = with_challenge(8, standard_heist());
    assert!(
        matches!(&e[0], Event::HeistStarted { challenges, .. } if challenges == &vec![Challenge::Blackout])
    );
    assert!(g.heist().is_active(Challenge::Blackout));
    // The white chips are on the table during the white street only.
    let (mut g, _) = with_challenge(8, standard_heist());
    assert_eq!(g.heist().chips_on_table().len(), 1);
    settle(&mut g, &[1, 2, 3]);
    let on_table = g.heist().chips_on_table();
    assert_eq!(on_table.len(), 1, "the white chips are removed");
    assert_eq!(on_table[0].street, Street::Yellow);
    assert!(on_table[0].holder.iter().all(|h| h.is_none()));
    // The engine still knows them (the showdown and challenges 3 and 7 read them).
    assert_eq!(g.heist().phase(Street::White).unwrap().chip_of(0), Some(1));
    // Without the blackout every street stays on the table.
    let (mut g, _) = with_challenge(2, standard_heist());
    settle(&mut g, &[2, 3, 1]);
    assert_eq!(g.heist().chips_on_table().len(), 2);
}

#[test]
fn challenge_9_fingerprint_reader_team_names_the_top_red_hand_category() {
    for (guess, success) in [(Category::Pair, true), (Category::TwoPair, false)] {
        let (mut g, _) = with_challenge(9, standard_heist());
        for _ in 0..4 {
            settle(&mut g, &[1, 2, 3]);
        }
        act(&mut g, 0, Action::Guess(GuessValue::Category(guess)));
        assert!(
            g.act(0, Action::Guess(GuessValue::Category(guess)))
                .is_err(),
            "final once cast"
        );
        assert!(
            g.act(1, Action::Guess(GuessValue::Rank(3))).is_err(),
            "a category is expected"
        );
        let e = act(&mut g, 1, Action::Guess(GuessValue::Category(guess)));
        assert_eq!(showdown(&e).0, success);
    }
}

#[test]
fn challenge_10_surveillance_cameras_three_private_cards_best_five_of_eight() {
    let three = heist(&["2c 3d 6s", "9h 9s 9d", "Ah Ad 8h"], FACE_BOARD, "");
    let (mut g, e) = with_challenge(10, three);
    assert!(e.contains(&Event::Dealt {
        seat: 1,
        cards: cards("9h 9s 9d")
    }));
    // Seat 0 makes a straight 3-4-5-6-7 with its third card: now the strongest.
    for _ in 0..4 {
        settle(&mut g, &[3, 2, 1]);
    }
    let (reveals, success) = g.last_showdown().unwrap();
    assert!(*success);
    assert_eq!(reveals[2].value.category(), Category::Straight);
    assert_eq!(
        reveals[0].value.category(),
        Category::Pair,
        "aces with 8 cards"
    );
    assert_eq!(reveals[1].value.category(), Category::ThreeOfAKind);
}

/// Gangster: the first heist has challenges 10 and `other` (3 or 7) active at once.
fn with_challenge_10_and(other: u32, board: &str) -> (TheGang, Vec<Event>) {
    let three_cards = heist(&["2c 3d 4s", "9h 9s 8d", "Ah Ad 8h"], board, "6c 6d 6h 2s");
    started(new_game(
        Mode::Gangster,
        vec![three_cards; 5],
        &pile_with_top(Mode::Gangster, &[10, other]),
        &[],
    ))
}

#[test]
fn d_challenge_10_with_3_redraws_as_many_private_cards_as_were_discarded() {
    let (mut g, e) = with_challenge_10_and(3, FACE_BOARD);
    assert!(matches!(&e[0], Event::HeistStarted { challenges, .. }
        if challenges.contains(&Challenge::SurveillanceCameras)
            && challenges.contains(&Challenge::MotionDetectors)));
    // Seat 1 takes the 1-star white chip; the flop shows a King.
    let e = settle(&mut g, &[2, 1, 3]);
    assert!(e.contains(&Event::HandReplaced {
        seat: 1,
        challenge: Challenge::MotionDetectors,
        discarded: cards("9h 9s 8d"),
        drawn: cards("6c 6d 6h"),
    }));
    assert_eq!(g.heist().private[1], cards("6c 6d 6h"));
    assert!(g.heist().private.iter().all(|p| p.len() == 3));
}

#[test]
fn d_challenge_10_with_7_redraws_as_many_private_cards_as_were_discarded() {
    let (mut g, _) = with_challenge_10_and(7, PLAIN_BOARD);
    // Seat 0 takes the highest (3-star) white chip; the flop shows no face.
    let e = settle(&mut g, &[3, 1, 2]);
    assert!(e.contains(&Event::HandReplaced {
        seat: 0,
        challenge: Challenge::PhotoelectricBarriers,
        discarded: cards("2c 3d 4s"),
        drawn: cards("6c 6d 6h"),
    }));
    assert!(g.heist().private.iter().all(|p| p.len() == 3));
}

// ---- §6 [D] team guesses -----------------------------------------------------------------------

#[test]
fn d_team_guess_most_voted_value_ties_broken_by_the_value_voted_first() {
    let four = heist(&[WEAK, MIDDLE, "4h 6s", STRONG], FACE_BOARD, "");
    let run = |votes: [u8; 3]| {
        let (mut g, _) = started(new_game(
            Mode::Advanced,
            vec![
                heist(&[WEAK, MIDDLE, "4h 6s", STRONG], FACE_BOARD, ""),
                four.clone(),
            ],
            &pile_with_top(Mode::Advanced, &[4]),
            &[],
        ));
        play_heist(&mut g, true);
        settle_streets_in_true_order(&mut g);
        let target = g.heist().guess.as_ref().unwrap().target;
        assert_eq!(target, 3);
        let mut e = Vec::new();
        for (seat, rank) in votes.iter().enumerate() {
            e = act(&mut g, seat, Action::Guess(GuessValue::Rank(*rank)));
        }
        e.into_iter()
            .find_map(|e| match e {
                Event::GuessResolved { answer, .. } => Some(answer),
                _ => None,
            })
            .unwrap()
    };
    // Majority: K, K, A -> K.
    assert_eq!(run([11, 12, 11]), GuessValue::Rank(11));
    // Three-way tie: the first voted wins.
    assert_eq!(run([5, 12, 11]), GuessValue::Rank(5));
    assert_eq!(run([12, 5, 11]), GuessValue::Rank(12));
}

#[test]
fn decision_a_team_guess_deadline_makes_silent_guessers_vote_the_team_answer() {
    // Heist 2 carries challenge 4 (retinal scan); the red chips in true order make seat 3 the
    // target, so seats 0, 1 and 2 guess.
    let guessing = |votes: &[(usize, u8)]| {
        let (mut g, _) = started(new_timed_game(
            Mode::Advanced,
            vec![
                heist(&[WEAK, MIDDLE, "4h 6s", STRONG], FACE_BOARD, ""),
                heist(&[WEAK, MIDDLE, "4h 6s", STRONG], FACE_BOARD, ""),
            ],
            &pile_with_top(Mode::Advanced, &[4]),
            &[],
            Some(1500),
        ));
        play_heist(&mut g, true);
        settle_streets_in_true_order(&mut g);
        assert_eq!(g.stage(), Stage::Guessing);
        assert_eq!(
            g.phase_deadline_ms(),
            Some(1500),
            "a guess waits under the deadline"
        );
        let id = g.phase_id();
        for &(seat, rank) in votes {
            act(&mut g, seat, Action::Guess(GuessValue::Rank(rank)));
        }
        assert_eq!(g.phase_id(), id, "votes do not restart the deadline");
        let events = g.expire().unwrap();
        assert_ne!(g.stage(), Stage::Guessing, "the guess is resolved");
        events
    };
    // Seat 0 said K: the silent seats 1 and 2 follow the team's answer.
    let e = guessing(&[(0, 11)]);
    let cast: Vec<_> = e
        .iter()
        .filter_map(|e| match e {
            Event::GuessCast { seat, guess } => Some((*seat, *guess)),
            _ => None,
        })
        .collect();
    assert_eq!(
        cast,
        vec![(1, GuessValue::Rank(11)), (2, GuessValue::Rank(11))]
    );
    assert!(e.iter().any(|e| matches!(
        e,
        Event::GuessResolved {
            answer: GuessValue::Rank(11),
            correct: false,
            ..
        }
    )));
    // Nobody voted: everyone votes the lowest rank (a 2); seat 3's aces hold none.
    let e = guessing(&[]);
    assert!(e.iter().any(|e| matches!(
        e,
        Event::GuessResolved {
            answer: GuessValue::Rank(0),
            correct: false,
            ..
        }
    )));
}

// ---- §7 specialists ----------------------------------------------------------------------------

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

#[test]
fn specialist_1_informant_shows_one_card_to_one_player() {
    let (mut g, _) = with_specialist(1, standard_heist());
    let e = propose_and_accept(&mut g, 0, SpecialistUse::Informant { from: 2, to: 1 });
    assert!(e.contains(&Event::ProposalClosed {
        accepted: true,
        expired: false
    }));
    assert_eq!(
        g.heist().pending,
        Some(PendingChoice::Show { from: 2, to: 1 })
    );
    assert!(
        g.act(0, Action::Take(1)).is_err(),
        "chips wait for the choice"
    );
    assert!(
        g.act(1, Action::Choose(cards("9h")[0])).is_err(),
        "only the informant chooses"
    );
    assert_eq!(
        g.legal_actions(2),
        vec![
            Action::Choose(cards("Ah")[0]),
            Action::Choose(cards("Ad")[0])
        ]
    );
    let e = act(&mut g, 2, Action::Choose(cards("Ad")[0]));
    assert_eq!(
        e,
        vec![Event::CardShown {
            from: 2,
            to: 1,
            card: cards("Ad")[0]
        }]
    );
    assert_eq!(g.heist().shown_to[1], vec![(2, cards("Ad")[0])]);
    assert!(g.heist().shown_to[0].is_empty());
    assert!(
        g.act(
            0,
            Action::Propose(SpecialistUse::Informant { from: 0, to: 1 })
        )
        .is_err(),
        "used once"
    );
}

#[test]
fn specialist_2_driver_announces_the_best_current_category() {
    let (mut g, _) = with_specialist(2, standard_heist());
    let e = propose_and_accept(&mut g, 1, SpecialistUse::Driver { seat: 2 });
    assert!(e.contains(&Event::Announced {
        seat: 2,
        specialist: Specialist::Driver,
        announcement: Announcement::BestCategory(Category::Pair)
    }));
}

#[test]
fn specialist_3_shareholder_announces_face_counts_after_the_deal() {
    let (_, e) = with_specialist(3, heist(&["Jc Qd", "9h Ks", "Ah Ad"], FACE_BOARD, ""));
    let counts: Vec<Announcement> = e
        .iter()
        .filter_map(|e| match e {
            Event::Announced {
                announcement,
                specialist: Specialist::Shareholder,
                ..
            } => Some(*announcement),
            _ => None,
        })
        .collect();
    assert_eq!(
        counts,
        vec![
            Announcement::FaceCards(2),
            Announcement::FaceCards(1),
            Announcement::FaceCards(0)
        ]
    );
}

#[test]
fn specialist_4_brains_the_team_names_a_rank_and_a_player_announces_how_many() {
    let (mut g, _) = with_specialist(4, standard_heist());
    let e = propose_and_accept(&mut g, 0, SpecialistUse::Brains { seat: 1, rank: 7 });
    assert!(e.contains(&Event::Announced {
        seat: 1,
        specialist: Specialist::Brains,
        announcement: Announcement::RankCount { rank: 7, count: 2 }
    }));
}

#[test]
fn specialist_5_hacker_draws_then_discards_any_private_card() {
    let (mut g, _) = with_specialist(5, heist(&[WEAK, MIDDLE, STRONG], FACE_BOARD, "Kd 6c"));
    let e = propose_and_accept(&mut g, 0, SpecialistUse::Hacker { seat: 0 });
    assert!(e.contains(&Event::CardDrawn {
        seat: 0,
        card: cards("Kd")[0]
    }));
    assert_eq!(g.heist().private[0], cards("2c 3d Kd"));
    act(&mut g, 0, Action::Choose(cards("2c")[0]));
    assert_eq!(g.heist().private[0], cards("3d Kd"));
    assert_eq!(g.heist().discards, cards("2c"));
    assert_eq!(g.heist().pending, None);
}

#[test]
fn specialist_6_coordinator_every_player_passes_a_card_to_the_left_at_once() {
    let (mut g, e) = with_specialist(6, standard_heist());
    assert_eq!(
        g.stage(),
        Stage::Coordinating,
        "automatic, before the white chips"
    );
    assert!(phases_opened(&e).is_empty());
    act(&mut g, 0, Action::Choose(cards("3d")[0]));
    assert!(
        g.act(0, Action::Choose(cards("2c")[0])).is_err(),
        "one card each"
    );
    act(&mut g, 1, Action::Choose(cards("9s")[0]));
    assert_eq!(
        g.heist().private[1],
        cards(MIDDLE),
        "nothing moves until all chose"
    );
    let e = act(&mut g, 2, Action::Choose(cards("Ah")[0]));
    assert!(e.contains(&Event::CardPassed {
        from: 0,
        to: 1,
        card: cards("3d")[0]
    }));
    assert!(e.contains(&Event::CardPassed {
        from: 2,
        to: 0,
        card: cards("Ah")[0]
    }));
    assert_eq!(g.heist().private[0], cards("2c Ah"));
    assert_eq!(g.heist().private[1], cards("9h 3d"));
    assert_eq!(g.heist().private[2], cards("Ad 9s"));
    assert_eq!(g.stage(), Stage::Chips(Street::White));
}

#[test]
fn decision_the_coordinator_deadline_passes_each_silent_seats_first_card() {
    let first = heist(&[WEAK, MIDDLE, STRONG], FACE_BOARD, "");
    let (mut g, _) = started(new_timed_game(
        Mode::Advanced,
        vec![first, standard_heist()],
        &pile_with_top(Mode::Advanced, &[]),
        &specialist_pile_with_top(6),
        Some(1000),
    ));
    play_heist(&mut g, false);
    assert_eq!(g.heist().number, 2);
    assert_eq!(g.stage(), Stage::Coordinating);
    assert_eq!(
        g.phase_deadline_ms(),
        Some(1000),
        "the choice waits under the deadline"
    );
    let id = g.phase_id();
    act(&mut g, 1, Action::Choose(cards("9s")[0]));
    let e = g.expire().unwrap();
    // Seat 0 (2c 3d) and seat 2 (Ah Ad) had not chosen: their first cards go.
    assert!(e.contains(&Event::CardPassed {
        from: 0,
        to: 1,
        card: cards("2c")[0]
    }));
    assert!(e.contains(&Event::CardPassed {
        from: 1,
        to: 2,
        card: cards("9s")[0]
    }));
    assert!(e.contains(&Event::CardPassed {
        from: 2,
        to: 0,
        card: cards("Ah")[0]
    }));
    assert_eq!(g.stage(), Stage::Chips(Street::White));
    assert_ne!(g.phase_id(), id, "the white phase has its own deadline");
}

#[test]
fn specialist_7_valet_takes_the_suitless_jack_and_discards_another_card() {
    let hearts = heist(&[WEAK, "9h 3h", STRONG], "Kh 7h 5h Js 4c", "");
    let (mut g, _) = with_specialist(7, hearts);
    let e = propose_and_accept(&mut g, 2, SpecialistUse::Valet { seat: 1 });
    assert!(e.contains(&Event::SuitlessJackTaken { seat: 1 }));
    assert!(
        g.act(1, Action::Choose(Card::SUITLESS_JACK)).is_err(),
        "another card"
    );
    act(&mut g, 1, Action::Choose(cards("9h")[0]));
    assert_eq!(
        g.heist().private[1],
        vec![cards("3h")[0], Card::SUITLESS_JACK]
    );
    // Hearts 3, K, 7, 5 + J*: no flush; a pair of Jacks with the board's Js.
    for _ in 0..4 {
        settle(&mut g, &[1, 2, 3]);
    }
    let (reveals, _) = g.last_showdown().unwrap();
    let seat1 = reveals.iter().find(|r| r.seat == 1).unwrap();
    assert_eq!(seat1.value.category(), Category::Pair);
}

#[test]
fn specialist_8_numbers_genius_announces_the_sums_after_the_deal() {
    let (_, e) = with_specialist(8, heist(&["Ac Kd", "9h 2s", "Th Jd"], FACE_BOARD, ""));
    let sums: Vec<Announcement> = e
        .iter()
        .filter_map(|e| match e {
            Event::Announced { announcement, .. } => Some(*announcement),
            _ => None,
        })
        .collect();
    assert_eq!(
        sums,
        vec![
            Announcement::CardSum(21),
            Announcement::CardSum(11),
            Announcement::CardSum(20)
        ]
    );
}

#[test]
fn specialist_9_swindler_gathers_shuffles_and_redeals_everyone_knowing_old_and_new() {
    let (g, e) = with_specialist(9, standard_heist());
    let swindled: Vec<(usize, Vec<Card>, Vec<Card>)> = e
        .iter()
        .filter_map(|e| match e {
            Event::Swindled { seat, old, new } => Some((*seat, old.clone(), new.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(swindled.len(), 3);
    let mut before: Vec<Card> = swindled.iter().flat_map(|s| s.1.clone()).collect();
    let mut after: Vec<Card> = swindled.iter().flat_map(|s| s.2.clone()).collect();
    assert_eq!(swindled[1].1, cards(MIDDLE));
    before.sort();
    after.sort();
    assert_eq!(before, after, "the same six cards, redealt");
    for (seat, old, new) in &swindled {
        assert_eq!(&g.heist().private[*seat], new);
        for c in old.iter().filter(|c| !new.contains(c)) {
            assert!(
                g.heist().remembered[*seat].contains(c),
                "seat {seat} remembers {c}"
            );
        }
    }
    assert_eq!(g.stage(), Stage::Chips(Street::White));
}

#[test]
fn specialist_10_muscle_beats_every_hand_of_the_same_category_only() {
    // Seat 0: pair of 2s, seat 2: pair of aces. With the Muscle, seat 0's pair beats aces.
    let pairs = heist(&["2c 2d", "9h 8s", "Ah Ad"], "Kc 7d 5h Js 4c", "");
    let (mut g, _) = with_specialist(10, pairs.clone());
    propose_and_accept(&mut g, 1, SpecialistUse::Muscle { seat: 0 });
    assert_eq!(g.heist().muscle, Some(0));
    for _ in 0..4 {
        settle(&mut g, &[3, 1, 2]);
    }
    assert!(
        g.last_showdown().unwrap().1,
        "pair of 2s with the Muscle tops the pair of aces"
    );
    // Only a higher category beats the Muscle: seat 1's high card still stands below.
    let (mut g, _) = with_specialist(10, pairs);
    propose_and_accept(&mut g, 1, SpecialistUse::Muscle { seat: 1 });
    for _ in 0..4 {
        settle(&mut g, &[2, 3, 1]);
    }
    assert!(
        !g.last_showdown().unwrap().1,
        "high card with the Muscle does not beat a pair"
    );
}

// ---- §7 [D] proposals --------------------------------------------------------------------------

#[test]
fn d_proposal_all_must_accept_one_refusal_drops_it_one_open_at_a_time_one_per_player_per_street() {
    let (mut g, _) = with_specialist(2, standard_heist());
    act(
        &mut g,
        0,
        Action::Propose(SpecialistUse::Driver { seat: 1 }),
    );
    assert!(
        g.act(1, Action::Propose(SpecialistUse::Driver { seat: 2 }))
            .is_err(),
        "one open at a time"
    );
    assert!(
        g.act(0, Action::Accept).is_err(),
        "the proposer already agrees"
    );
    assert_eq!(g.legal_actions(1), vec![Action::Accept, Action::Refuse]);
    act(&mut g, 1, Action::Accept);
    let e = act(&mut g, 2, Action::Refuse);
    assert!(e.contains(&Event::ProposalClosed {
        accepted: false,
        expired: false
    }));
    assert!(!g.heist().specialist_used);
    assert!(
        g.act(0, Action::Propose(SpecialistUse::Driver { seat: 1 }))
            .is_err(),
        "one per player per street"
    );
    // Another player may follow.
    propose_and_accept(&mut g, 1, SpecialistUse::Driver { seat: 1 });
    assert!(g.heist().specialist_used);
    // Parameters are checked; automatic cards are never proposed.
    let (mut g, _) = with_specialist(1, standard_heist());
    assert!(matches!(
        g.act(
            0,
            Action::Propose(SpecialistUse::Informant { from: 1, to: 1 })
        ),
        Err(Refusal::Invalid(_))
    ));
    assert!(
        g.act(0, Action::Propose(SpecialistUse::Muscle { seat: 1 }))
            .is_err(),
        "not the active card"
    );
}

#[test]
fn d_left_is_the_next_seat_clockwise_for_the_coordinator() {
    let four = heist(&[WEAK, MIDDLE, STRONG, "Kh Ks"], FACE_BOARD, "");
    let (mut g, _) = with_specialist(6, four);
    let mut e = Vec::new();
    for seat in 0..4 {
        let card = g.heist().private[seat][1];
        e = act(&mut g, seat, Action::Choose(card));
    }
    assert!(e.contains(&Event::CardPassed {
        from: 3,
        to: 0,
        card: cards("Ks")[0]
    }));
    assert!(e.contains(&Event::CardPassed {
        from: 0,
        to: 1,
        card: cards("3d")[0]
    }));
}

// ---- engine decisions --------------------------------------------------------------------------

#[test]
fn decision_an_open_proposal_blocks_chip_moves_and_a_deadline_drops_it() {
    let mut h = standard_heist();
    h.deck = cards("Kd");
    let (mut g, _) = with_specialist(5, h);
    act(&mut g, 0, Action::Take(1));
    act(
        &mut g,
        1,
        Action::Propose(SpecialistUse::Hacker { seat: 1 }),
    );
    assert!(g.act(2, Action::Take(2)).is_err());
    assert!(g.act(2, Action::Ready).is_err());
    let e = g.expire().unwrap();
    assert_eq!(
        e[0],
        Event::ProposalClosed {
            accepted: false,
            expired: true
        }
    );
    assert!(e.contains(&Event::PhaseClosed {
        street: Street::White,
        expired: true
    }));
    // A pending choice at a deadline is made by default: the hacker discards the drawn card.
    let (mut g, _) = with_specialist(5, heist(&[WEAK, MIDDLE, STRONG], FACE_BOARD, "Kd"));
    propose_and_accept(&mut g, 1, SpecialistUse::Hacker { seat: 1 });
    let e = g.expire().unwrap();
    assert_eq!(
        e[0],
        Event::CardDiscarded {
            seat: 1,
            card: cards("Kd")[0]
        }
    );
    assert_eq!(g.heist().private[1], cards(MIDDLE));
}

#[test]
fn decision_an_applied_specialist_clears_every_ready() {
    let (mut g, _) = with_specialist(10, standard_heist());
    act(&mut g, 0, Action::Take(1));
    act(&mut g, 0, Action::Ready);
    propose_and_accept(&mut g, 1, SpecialistUse::Muscle { seat: 2 });
    assert_eq!(
        g.heist().open_phase().unwrap().ready,
        vec![false, false, false]
    );
}

#[test]
fn decision_guesses_come_after_the_red_phase_rank_before_category() {
    let pile = pile_with_top(Mode::Gangster, &[4, 9]);
    let (mut g, _) = started(new_game(Mode::Gangster, vec![standard_heist()], &pile, &[]));
    for street in 0..4 {
        assert_eq!(g.stage(), Stage::Chips(Street::ALL[street]));
        settle(&mut g, &[1, 2, 3]);
    }
    assert_eq!(
        g.heist().guess.as_ref().unwrap().challenge,
        Challenge::RetinalScan
    );
    act(&mut g, 0, Action::Guess(GuessValue::Rank(12)));
    act(&mut g, 1, Action::Guess(GuessValue::Rank(12)));
    assert_eq!(
        g.heist().guess.as_ref().unwrap().challenge,
        Challenge::FingerprintReader
    );
    act(
        &mut g,
        0,
        Action::Guess(GuessValue::Category(Category::Pair)),
    );
    let e = act(
        &mut g,
        1,
        Action::Guess(GuessValue::Category(Category::Pair)),
    );
    assert!(showdown(&e).0);
}

#[test]
fn legal_actions_are_accepted_and_nothing_else_changes_state() {
    let (mut g, _) = with_specialist(1, standard_heist());
    for seat in 0..3 {
        for action in g.legal_actions(seat) {
            let mut copy = g.clone();
            copy.act(seat, action)
                .unwrap_or_else(|e| panic!("{action:?}: {e}"));
        }
    }
    let before = g.heist().clone();
    assert!(g.act(0, Action::Choose(cards("Ah")[0])).is_err());
    assert!(g.act(7, Action::Ready).is_err());
    assert_eq!(g.heist(), &before, "a refused action changes nothing");
}
