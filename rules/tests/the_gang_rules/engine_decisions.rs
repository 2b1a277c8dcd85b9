//! The engine's own decisions (`decision_...`) and legality against state.

use super::*;

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
