//! The fast default policy the search plays every seat with to the end of a deal: a cheap
//! imitation of a sensible player (lead the lowest card in the biggest combination holding it,
//! follow with the weakest play that beats, keep gangs and top cards for later, block a seat
//! that is about to go out), with a little randomness so that playouts differ.

use rand::Rng;

use gangs_rules::gang_of_four::cards::{self, Mask, VALUE_MASKS};
use gangs_rules::gang_of_four::{Combination, DealState, Kind, Move, PlayList};

/// Plays `state` to the end of the deal with [`choose`] for every seat; returns the moves made.
pub fn playout(state: &mut DealState, rng: &mut impl Rng, list: &mut PlayList) -> u32 {
    let mut steps = 0;
    while !state.over {
        let mv = choose(state, rng, list);
        state.apply_unchecked(mv);
        steps += 1;
        if steps > 2000 {
            // Cannot happen (every trick ends, every deal has finitely many cards), but a
            // playout must never spin.
            break;
        }
    }
    steps
}

fn fewest_opponent_cards(state: &DealState) -> u32 {
    (0..state.players())
        .filter(|&s| s != state.turn)
        .map(|s| state.hands[s as usize].count_ones())
        .min()
        .unwrap_or(16)
}

/// Strength order of plays of one size: five-card kind first, then the key.
fn order(c: &Combination) -> (u8, u32) {
    (c.kind.five_card_rank(), c.key)
}

/// The default move of the seat to act.
pub fn choose(state: &DealState, rng: &mut impl Rng, list: &mut PlayList) -> Move {
    state.legal_plays(list);
    let play = |cards: Mask| Move::Play {
        cards,
        announce: true,
    };
    if list.is_empty() {
        return Move::Pass;
    }
    let hand = state.hands[state.turn as usize];
    let plays = list.as_slice();
    if plays.contains(&hand) {
        return play(hand);
    }
    let danger = fewest_opponent_cards(state);
    match state.table {
        None => {
            let low = hand & hand.wrapping_neg();
            if danger == 1 {
                // Someone goes out on any single it can beat: lead a combination if possible,
                // else the strongest single.
                if let Some(&p) = plays
                    .iter()
                    .filter(|p| p.count_ones() > 1)
                    .min_by_key(|&&p| (p & low == 0, 63 - p.leading_zeros()))
                {
                    return play(p);
                }
                return play(*plays.iter().max().expect("non-empty"));
            }
            let mut best = plays[0];
            let mut best_key = (0u32, 0u32);
            for &p in plays {
                let size = p.count_ones();
                let gang = is_same_value(p);
                // Bigger combinations holding the lowest card first, then the lowest top card.
                let holds_low = p & low != 0;
                let key = (
                    (holds_low as u32) * 16 + if gang { 0 } else { size },
                    p.leading_zeros(),
                );
                if key > best_key {
                    best_key = key;
                    best = p;
                }
            }
            play(best)
        }
        Some(table) => {
            let mut best: Option<(Combination, Mask)> = None;
            let mut gang: Option<Mask> = None;
            for &p in plays {
                let Some(c) = Combination::classify(p) else {
                    continue;
                };
                if c.kind == Kind::Gang && table.kind != Kind::Gang {
                    if gang.is_none_or(|g| p < g) {
                        gang = Some(p);
                    }
                    continue;
                }
                if best.is_none_or(|(b, _)| order(&c) < order(&b)) {
                    best = Some((c, p));
                }
            }
            let size = hand.count_ones();
            let Some((c, p)) = best else {
                // Only gangs beat it: bomb when someone is close to going out or to go out
                // soon ourselves.
                return match gang {
                    Some(g) if danger <= 3 || size <= g.count_ones() + 3 => play(g),
                    _ if list.can_pass => Move::Pass,
                    Some(g) => play(g),
                    None => Move::Pass,
                };
            };
            if !list.can_pass {
                return play(p);
            }
            if danger <= 2 && c.kind == Kind::Single {
                // Block: the strongest single, not the weakest.
                return play(
                    *plays
                        .iter()
                        .filter(|p| p.count_ones() == 1)
                        .max()
                        .unwrap_or(&p),
                );
            }
            if danger <= 2 {
                return play(p);
            }
            // Splitting a pair or triple for a single, or spending a top card early, is
            // usually worse than passing.
            let breaks = c.kind == Kind::Single
                && c.cards & cards::NUMBER_CARDS != 0
                && (hand & VALUE_MASKS[cards::value(p.trailing_zeros() as u8) as usize])
                    .count_ones()
                    > 1;
            let top = p & !cards::NUMBER_CARDS != 0;
            let pass_chance = if breaks || top && size > 6 { 0.6 } else { 0.12 };
            if rng.random_bool(pass_chance) {
                Move::Pass
            } else {
                play(p)
            }
        }
    }
}

fn is_same_value(p: Mask) -> bool {
    p.count_ones() >= 4 && VALUE_MASKS[1..=10].iter().any(|&v| p & v == p)
}
