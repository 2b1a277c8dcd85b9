//! §6 every challenge card, and the [D] team guesses.

use super::*;

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
