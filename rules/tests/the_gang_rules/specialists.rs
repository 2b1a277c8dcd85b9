//! §7 every specialist card, and the [D] proposals.

use super::*;

// ---- §7 specialists ----------------------------------------------------------------------------

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
