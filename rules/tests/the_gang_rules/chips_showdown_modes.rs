//! §4 the chip protocol, §3 the showdown and §2 the end, §8 the modes.

use super::*;

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
