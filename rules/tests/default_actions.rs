//! The default actions of the engine contract (what a silent seat plays), each rule of the
//! engines' `contract` docs checked on the situations it names, over seeded random games and
//! in games played by defaults alone (which must end).

use gangs_rules::gang_of_four::{self as gof, cards, Action as GofAction, GangOfFour, Phase};
use gangs_rules::the_gang::{
    self as tg, Action as TgAction, Card, Category, Challenge, Config, GuessValue, Mode,
    PendingChoice, Specialist, Stage, TheGang,
};
use gangs_rules::Engine;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The contract's invariants: defaults exactly for the actors, and legal.
fn check_contract<E: Engine>(game: &E) {
    let actors = game.actors();
    for seat in 0..game.players() {
        let default = game.default_action(seat);
        assert_eq!(
            default.is_some(),
            actors.contains(&seat),
            "seat {seat}: a default exactly for the seats waited for"
        );
        if let Some(d) = default {
            assert!(
                game.legal_actions(seat).contains(&d),
                "seat {seat}: the default {d:?} is legal"
            );
        }
    }
    assert_eq!(game.is_terminal(), game.outcome().is_some());
    if game.is_terminal() {
        assert!(actors.is_empty());
    }
}

/// Plays every actor's default until the end; returns the number of actions.
fn play_defaults<E: Engine>(game: &mut E) -> usize {
    game.start();
    let mut steps = 0;
    while !game.is_terminal() {
        check_contract(game);
        let seat = *game.actors().first().expect("a live game waits for a seat");
        let action = game.default_action(seat).unwrap();
        game.apply(seat, action).expect("a default is accepted");
        steps += 1;
        assert!(steps < 200_000, "defaults alone end the game");
    }
    check_contract(game);
    steps
}

// ---- Gang of Four ----------------------------------------------------------------------------

fn gof_options(players: u8, manual: bool) -> gof::Options {
    gof::Options {
        players,
        target_score: 40,
        manual_last_card: manual,
        ..gof::Options::default()
    }
}

#[derive(Default, Debug)]
struct GofSeen {
    passes: usize,
    lead_singles: usize,
    constrained_forced: usize,
    give_backs: usize,
    announced: usize,
}

fn check_gof_default(game: &GangOfFour, seen: &mut GofSeen) {
    check_contract(game);
    let Some(seat) = game.to_act() else { return };
    let default = game.default_action(seat as usize).unwrap();
    let legal = game.legal_actions(seat);
    let hand = game.deal().hands[seat as usize];
    match game.phase() {
        Phase::GiveBack { .. } => {
            let lowest = cards::iter(hand).next().unwrap();
            assert_eq!(default, GofAction::GiveBack { card: lowest });
            seen.give_backs += 1;
        }
        Phase::Play => {
            if legal.contains(&GofAction::Pass) {
                assert_eq!(default, GofAction::Pass, "pass when passing is legal");
                seen.passes += 1;
                return;
            }
            let GofAction::Play {
                cards: play,
                announce,
            } = default
            else {
                panic!("a play when passing is not legal, got {default:?}")
            };
            let singles: Vec<u64> = legal
                .iter()
                .filter_map(|a| match a {
                    GofAction::Play { cards, .. } if cards.count_ones() == 1 => Some(*cards),
                    _ => None,
                })
                .collect();
            if let Some(&lowest) = singles.iter().min() {
                assert_eq!(play, lowest, "the lowest legal single");
                if game.deal().table.is_none() {
                    seen.lead_singles += 1;
                }
                if game.deal().is_constrained(seat) {
                    seen.constrained_forced += 1;
                    // The last-card rule: only the strongest single may be played alone.
                    assert_eq!(play, gof::deal::strongest_single(hand));
                }
            } else {
                let smallest = legal
                    .iter()
                    .filter_map(|a| match a {
                        GofAction::Play { cards, .. } => Some(cards.count_ones()),
                        _ => None,
                    })
                    .min()
                    .unwrap();
                assert_eq!(play.count_ones(), smallest, "the smallest legal play");
            }
            let leaves_one = (hand & !play).count_ones() == 1;
            assert_eq!(
                announce,
                game.options().manual_last_card && leaves_one,
                "a default leaving one card announces it under manual_last_card"
            );
            if announce {
                seen.announced += 1;
            }
        }
        Phase::NotStarted | Phase::Over => unreachable!("a seat to act"),
    }
}

#[test]
fn gang_of_four_defaults_follow_their_rules_in_random_games() {
    let mut seen = GofSeen::default();
    for seed in 0..120u64 {
        let players = 3 + (seed % 2) as u8;
        let mut game =
            GangOfFour::new(gof_options(players, seed % 3 == 0), seed, Vec::new()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        game.start();
        while !game.is_over() {
            check_gof_default(&game, &mut seen);
            let seat = game.to_act().unwrap();
            let legal = game.legal_actions(seat);
            let action = legal[rng.random_range(0..legal.len())];
            game.act(seat, action).unwrap();
        }
        check_contract(&game);
    }
    assert!(seen.passes > 100, "{seen:?}");
    assert!(seen.lead_singles > 100, "{seen:?}");
    assert!(seen.give_backs > 20, "{seen:?}");
    assert!(seen.constrained_forced > 0, "{seen:?}");
    assert!(seen.announced > 0, "{seen:?}");
}

#[test]
fn gang_of_four_first_lead_defaults_to_the_multicolor_one() {
    let mut game = GangOfFour::new(gof_options(4, false), 7, Vec::new()).unwrap();
    game.start();
    let leader = game.to_act().unwrap();
    assert_eq!(
        game.default_action(leader as usize),
        Some(GofAction::Play {
            cards: 1 << gof::cards::MULTICOLOR_ONE,
            announce: false
        })
    );
    // Only the seat to act is waited for.
    assert_eq!(Engine::actors(&game), vec![leader as usize]);
    for other in (0..4).filter(|&s| s != leader as usize) {
        assert_eq!(game.default_action(other), None);
    }
}

#[test]
fn gang_of_four_games_of_defaults_end() {
    for (seed, players, manual) in [(1, 4, false), (2, 3, false), (3, 4, true), (4, 3, true)] {
        let mut game = GangOfFour::new(gof_options(players, manual), seed, Vec::new()).unwrap();
        play_defaults(&mut game);
        assert!(game.ranking().is_some());
    }
}

// ---- The Gang --------------------------------------------------------------------------------

#[derive(Default, Debug)]
struct TgSeen {
    takes: usize,
    readies: usize,
    refusals: usize,
    choices: usize,
    coordinator: usize,
    guesses_voted: usize,
    guesses_empty: usize,
}

fn check_tg_default(game: &TheGang, seen: &mut TgSeen) {
    check_contract(game);
    let h = game.heist();
    for seat in 0..game.config().players {
        let default = game.default_action(seat);
        match game.stage() {
            Stage::Chips(_) if h.proposal.is_some() => {
                let p = h.proposal.as_ref().unwrap();
                let expected = p.votes[seat].is_none().then_some(TgAction::Refuse);
                assert_eq!(default, expected, "an unvoted seat refuses");
                seen.refusals += expected.is_some() as usize;
            }
            Stage::Chips(_) if h.pending.is_some() => {
                let hand = &h.private[seat];
                let expected = match h.pending.unwrap() {
                    PendingChoice::Show { from, .. } if from == seat => Some(hand[0]),
                    PendingChoice::Discard {
                        seat: who,
                        specialist: Specialist::Hacker,
                    } if who == seat => hand.last().copied(),
                    PendingChoice::Discard { seat: who, .. } if who == seat => {
                        hand.iter().copied().find(|&c| c != Card::SUITLESS_JACK)
                    }
                    _ => None,
                };
                assert_eq!(default, expected.map(TgAction::Choose));
                seen.choices += expected.is_some() as usize;
            }
            Stage::Chips(_) => {
                let phase = h.phases.last().unwrap();
                let expected = match phase.chip_of(seat) {
                    None if !phase.cap_reached() => {
                        let lowest_free = (1..=game.config().players as u8)
                            .find(|&s| phase.holder[s as usize - 1].is_none())
                            .unwrap();
                        seen.takes += 1;
                        Some(TgAction::Take(lowest_free))
                    }
                    _ if phase.ready[seat] => None,
                    _ => {
                        seen.readies += 1;
                        Some(TgAction::Ready)
                    }
                };
                assert_eq!(default, expected, "seat {seat} in a chip phase");
            }
            Stage::Coordinating => {
                let expected = h.coordinator_choices[seat]
                    .is_none()
                    .then(|| TgAction::Choose(h.private[seat][0]));
                assert_eq!(default, expected);
                seen.coordinator += expected.is_some() as usize;
            }
            Stage::Guessing => {
                let g = h.guess.as_ref().unwrap();
                let silent = g.target != seat && !g.votes.iter().any(|(s, _)| *s == seat);
                if !silent {
                    assert_eq!(default, None);
                    continue;
                }
                // The most voted value, ties by the first voted; the lowest value without votes.
                let expected = if g.votes.is_empty() {
                    seen.guesses_empty += 1;
                    if g.challenge == Challenge::RetinalScan {
                        GuessValue::Rank(0)
                    } else {
                        GuessValue::Category(Category::HighCard)
                    }
                } else {
                    seen.guesses_voted += 1;
                    let count = |v: &GuessValue| g.votes.iter().filter(|(_, x)| x == v).count();
                    let best = g.votes.iter().map(|(_, v)| count(v)).max().unwrap();
                    g.votes.iter().find(|(_, v)| count(v) == best).unwrap().1
                };
                assert_eq!(default, Some(TgAction::Guess(expected)));
            }
            Stage::NotStarted | Stage::GameOver => assert_eq!(default, None),
        }
    }
}

#[test]
fn the_gang_defaults_follow_their_rules_in_random_games() {
    let mut seen = TgSeen::default();
    for seed in 0..160u64 {
        let mode = Mode::ALL[(seed % 4) as usize];
        let players = 3 + (seed % 4) as usize;
        let mut config = Config::new(players, mode);
        config.max_moves_per_phase = 2 * players as u32;
        let mut game = TheGang::new(config, seed, None).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        game.start();
        let mut steps = 0;
        while !game.is_over() && steps < 4000 {
            check_tg_default(&game, &mut seen);
            // Mostly random moves, sometimes a seat's default (to reach every situation).
            let seat = rng.random_range(0..players);
            let legal = game.legal_actions(seat);
            if legal.is_empty() {
                continue;
            }
            let action = match game.default_action(seat) {
                Some(d) if rng.random_bool(0.4) => d,
                _ => legal[rng.random_range(0..legal.len())],
            };
            game.act(seat, action).unwrap();
            steps += 1;
        }
    }
    for (what, n) in [
        ("takes", seen.takes),
        ("readies", seen.readies),
        ("refusals", seen.refusals),
        ("choices", seen.choices),
        ("coordinator", seen.coordinator),
        ("guesses with votes", seen.guesses_voted),
        ("guesses without votes", seen.guesses_empty),
    ] {
        assert!(n > 0, "no {what} seen: {seen:?}");
    }
}

#[test]
fn the_gang_chipless_seats_take_the_lowest_free_chip_then_everyone_is_ready() {
    let mut game = TheGang::new(Config::new(4, Mode::Basic), 11, None).unwrap();
    game.start();
    assert_eq!(game.default_action(2), Some(TgAction::Take(1)));
    game.act(2, TgAction::Take(1)).unwrap();
    assert_eq!(game.default_action(2), Some(TgAction::Ready));
    assert_eq!(game.default_action(0), Some(TgAction::Take(2)));
    game.act(0, TgAction::Take(3)).unwrap();
    assert_eq!(game.default_action(1), Some(TgAction::Take(2)));
    game.act(2, TgAction::Ready).unwrap();
    assert_eq!(
        game.default_action(2),
        None,
        "a ready chip holder is not waited for"
    );
    assert!(!Engine::actors(&game).contains(&2));
}

#[test]
fn the_gang_games_of_defaults_end() {
    for (seed, players, mode) in [
        (1, 3, Mode::Basic),
        (2, 4, Mode::Advanced),
        (3, 5, Mode::Pro),
        (4, 6, Mode::Gangster),
    ] {
        let mut game = TheGang::new(Config::new(players, mode), seed, None).unwrap();
        play_defaults(&mut game);
        assert!(game.result().is_some());
    }
}

#[test]
fn the_gang_expiry_plays_the_same_defaults_as_the_contract() {
    // A Coordinator heist: the deadline passes every silent seat's default card.
    let config = Config {
        phase_deadline_ms: Some(1000),
        ..Config::new(3, Mode::Advanced)
    };
    for seed in 0..400u64 {
        let mut game = TheGang::new(config, seed, None).unwrap();
        game.start();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        while !game.is_over() && game.stage() != Stage::Coordinating {
            let seat = rng.random_range(0..3);
            match game.default_action(seat) {
                Some(d) => {
                    game.act(seat, d).unwrap();
                }
                None => continue,
            }
        }
        if game.is_over() {
            continue;
        }
        let expected: Vec<_> = (0..3).map(|s| game.default_action(s)).collect();
        let events = game.expire().unwrap();
        let passed: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                tg::Event::CardPassed { from, card, .. } => Some((*from, *card)),
                _ => None,
            })
            .collect();
        assert_eq!(passed.len(), 3);
        for (from, card) in passed {
            assert_eq!(expected[from], Some(TgAction::Choose(card)));
        }
        return;
    }
    panic!("no Coordinator heist reached in 400 seeds");
}
