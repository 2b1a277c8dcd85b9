//! Gang of Four property tests over thousands of seeded random games, every option and both
//! player counts: cards are conserved, every game ends, scores follow the table, the loser
//! gives its strongest card, replays reproduce the game, and the legal list is exactly the set
//! of accepted plays.

use gangs_rules::gang_of_four::cards::{self, Mask};
use gangs_rules::gang_of_four::{Action, DealState, Event, GangOfFour, Move, Options, Phase};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn all_options() -> Vec<Options> {
    let mut out = Vec::new();
    for players in [3u8, 4] {
        for bits in 0..8u8 {
            out.push(Options {
                players,
                target_score: 60,
                flush_by_sum: bits & 1 != 0,
                loser_tie_strongest_card: bits & 2 != 0,
                manual_last_card: bits & 4 != 0,
            });
        }
    }
    out
}

/// Penalty per the §7 table, written out row by row.
fn table_points(cards_left: u32) -> u32 {
    const ROWS: [(u32, u32, u32); 5] =
        [(1, 7, 1), (8, 10, 2), (11, 13, 3), (14, 15, 4), (16, 16, 5)];
    ROWS.iter()
        .find(|(lo, hi, _)| (*lo..=*hi).contains(&cards_left))
        .map_or(0, |r| r.2 * cards_left)
}

/// Plays one random game, checking invariants at every step; returns the actions and events.
fn play_checked(options: Options, seed: u64) -> (Vec<(u8, Action)>, Vec<Event>) {
    let mut game = GangOfFour::new(options, seed, Vec::new()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut events = game.start();
    let mut actions = Vec::new();
    let mut played_this_deal: Mask = 0;
    let mut dealt: [Mask; 4] = match &events[0] {
        Event::Dealt { hands, .. } => *hands,
        _ => panic!("first event is the deal"),
    };
    let mut last_score: Option<(Option<u8>, u8)> = None;
    let mut checked = 0;
    for step in 0.. {
        assert!(step < 200_000, "game {seed} does not end");
        // Conservation: hands (dead hand included) and played cards partition the 64 cards.
        let hands = game.deal().hands;
        let mut seen = played_this_deal;
        for h in hands {
            assert_eq!(seen & h, 0, "a card is in two places");
            seen |= h;
        }
        assert_eq!(seen, u64::MAX, "cards lost");
        let Some(seat) = game.to_act() else { break };
        let legal = game.legal_actions(seat);
        assert!(!legal.is_empty(), "the seat to act has no action");
        for other in 0..options.players {
            if other != seat {
                assert!(game.legal_actions(other).is_empty());
            }
        }
        if checked < 40 {
            for a in &legal {
                assert!(game.check(seat, *a).is_ok(), "listed but refused: {a:?}");
            }
            checked += 1;
        }
        let action = legal[rng.random_range(0..legal.len())];
        let new_events = game.act(seat, action).unwrap();
        actions.push((seat, action));
        for e in &new_events {
            match e {
                Event::Played { combination, .. } => played_this_deal |= combination.cards,
                Event::Dealt { hands, .. } => {
                    dealt = *hands;
                    played_this_deal = 0;
                }
                Event::Exchanged(x) if x.automatic => {
                    let (winner, loser) = last_score.expect("an exchange follows a scored deal");
                    assert_eq!(x.from, loser);
                    if let Some(w) = winner {
                        assert_eq!(x.to, w);
                    }
                    assert_eq!(
                        Some(x.card),
                        cards::strongest(dealt[loser as usize]),
                        "the loser gives its strongest card"
                    );
                }
                Event::DealScored(s) => {
                    for seat in 0..options.players as usize {
                        assert_eq!(s.points[seat], table_points(s.cards_left[seat] as u32));
                    }
                    if let Some(w) = s.winner {
                        assert_eq!(s.cards_left[w as usize], 0);
                    } else {
                        assert!(options.manual_last_card);
                    }
                    let most = s.cards_left[..options.players as usize]
                        .iter()
                        .max()
                        .unwrap();
                    assert_eq!(
                        s.cards_left[s.loser as usize], *most,
                        "the loser holds the most cards"
                    );
                    last_score = Some((s.winner, s.loser));
                }
                _ => {}
            }
        }
        events.extend(new_events);
    }
    assert!(game.is_over());
    let totals = game.totals();
    let n = options.players as usize;
    assert!(totals[..n].iter().any(|&t| t >= options.target_score));
    let lowest = *totals[..n].iter().min().unwrap();
    assert_eq!(totals[..n].iter().filter(|&&t| t == lowest).count(), 1);
    let sums: u32 = game
        .history()
        .iter()
        .map(|s| s.points.iter().sum::<u32>())
        .sum();
    assert_eq!(sums, totals.iter().sum::<u32>());
    (actions, events)
}

#[test]
fn random_games_conserve_cards_end_score_by_the_table_and_replay() {
    let mut games = 0;
    for (i, options) in all_options().into_iter().enumerate() {
        for k in 0..130u64 {
            let seed = (i as u64) * 1000 + k;
            let (actions, events) = play_checked(options, seed);
            games += 1;
            if k % 4 == 0 {
                let mut replay = GangOfFour::new(options, seed, Vec::new()).unwrap();
                let mut again = replay.start();
                for (seat, a) in &actions {
                    again.extend(replay.act(*seat, *a).unwrap());
                }
                assert_eq!(again, events, "replay of game {seed} differs");
            }
        }
    }
    assert!(games >= 2000);
}

/// Every subset of the hand that the engine accepts, reduced to one entry per values and
/// colors, equals the legal list.
#[test]
fn legal_list_is_exactly_the_set_of_accepted_plays() {
    let mut positions = 0;
    let mut buffer = gangs_rules::gang_of_four::PlayList::new();
    for (i, options) in all_options().into_iter().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(i as u64);
        let mut game = GangOfFour::new(options, i as u64, Vec::new()).unwrap();
        game.start();
        while positions < (i + 1) * 12 && !game.is_over() {
            let seat = game.to_act().unwrap();
            let deal: &DealState = game.deal();
            let hand = deal.hands[seat as usize];
            if game.phase() == Phase::Play && hand.count_ones() <= 11 && rng.random_range(0..4) == 0
            {
                deal.legal_plays(&mut buffer);
                let mut listed: Vec<Mask> = buffer.as_slice().to_vec();
                listed.sort_unstable();
                let mut accepted = Vec::new();
                let mut sub = hand;
                while sub != 0 {
                    if deal
                        .check(
                            seat,
                            Move::Play {
                                cards: sub,
                                announce: false,
                            },
                        )
                        .is_ok()
                        && cards::is_canonical(sub, hand)
                    {
                        accepted.push(sub);
                    }
                    sub = (sub - 1) & hand;
                }
                accepted.sort_unstable();
                assert_eq!(listed, accepted, "hand {}", cards::words(hand));
                assert_eq!(buffer.can_pass, deal.check(seat, Move::Pass).is_ok());
                positions += 1;
            }
            let legal = game.legal_actions(seat);
            let a = legal[rng.random_range(0..legal.len())];
            game.act(seat, a).unwrap();
        }
    }
    assert!(positions >= 150, "{positions}");
}

#[test]
fn random_playouts_from_dealt_positions_end_with_one_winner() {
    let mut buffer = gangs_rules::gang_of_four::PlayList::new();
    for (i, options) in all_options().into_iter().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(100 + i as u64);
        for k in 0..50 {
            let mut game = GangOfFour::new(options, k, Vec::new()).unwrap();
            game.start();
            let mut deal = game.deal().clone();
            let steps = deal.random_playout(&mut rng, &mut buffer);
            assert!(steps > 0 && deal.over);
            let w = deal.winner.expect("random playouts always announce");
            assert_eq!(deal.hands[w as usize], 0);
            assert_eq!(deal.penalties()[w as usize], 0);
        }
    }
}
