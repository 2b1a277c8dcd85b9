//! Determinization: deals the cards this seat has not seen to the other seats (and the dead
//! hand with 3 players), consistently with everything public: each seat gets exactly its
//! card count, exchanged cards stay with the seat that received them unless played since,
//! and the loser of the previous deal holds nothing stronger than the card it had to give
//! (its strongest), except the card given back to it.

use rand::Rng;

use gangs_rules::gang_of_four::cards::{self, Mask};

use super::view::Situation;

/// What the public record says about the hidden hands.
#[derive(Clone, Debug)]
pub struct Constraints {
    pub seat: u8,
    /// Cards to deal: neither in this hand nor seen played.
    pub unseen: Mask,
    /// Cards each hidden hand must receive.
    pub need: [u8; 4],
    /// Cards known to be in a hand (exchanged to it, not played since).
    pub known: [Mask; 4],
    /// Cards a hand cannot hold.
    pub forbidden: [Mask; 4],
}

impl Constraints {
    /// From the situation and the cards this seat saw played this deal.
    pub fn new(situation: &Situation, played: Mask) -> Constraints {
        let me = situation.seat as usize;
        let unseen = !situation.hand & !played & !situation.trick_cards;
        let hidden = |s: usize| s != me && (s < situation.players() as usize || s == 3);
        let mut need = [0u8; 4];
        for (s, n) in need.iter_mut().enumerate() {
            if hidden(s) {
                *n = situation.counts[s];
            }
        }
        let mut known = [0u64; 4];
        let mut forbidden = [0u64; 4];
        for &(from, to, card, automatic) in &situation.exchange {
            let bit = 1u64 << card;
            // A card may come straight back (the loser's strongest card given back).
            for k in known.iter_mut() {
                *k &= !bit;
            }
            if (to as usize) < 4 && hidden(to as usize) && unseen & bit != 0 {
                known[to as usize] |= bit;
            }
            if automatic && (from as usize) < 4 && hidden(from as usize) {
                // Ids follow single strength: the loser held no card above the one it gave.
                forbidden[from as usize] |= !((bit << 1).wrapping_sub(1)) & !bit;
            }
        }
        // The card given back to the loser is exempt from the bound above.
        for s in 0..4 {
            forbidden[s] &= !known[s];
            if known[s].count_ones() > need[s] as u32 {
                known[s] = 0;
            }
        }
        Constraints {
            seat: situation.seat,
            unseen,
            need,
            known,
            forbidden,
        }
    }

    /// One random deal of the unseen cards; `hands[seat]` is left empty for the caller.
    /// Unseen cards beyond what the hands hold (plays missed after a reconnect) stay out.
    pub fn sample(&self, rng: &mut impl Rng) -> [Mask; 4] {
        let mut hands = self.known;
        let mut need = [0u32; 4];
        for s in 0..4 {
            need[s] = (self.need[s] as u32).saturating_sub(hands[s].count_ones());
        }
        let pool = self.unseen & !self.known.iter().fold(0, |a, &k| a | k);
        let mut ids = [0u8; 64];
        let mut n = 0;
        // Cards some seat may not hold go first, while every seat still has room.
        let constrained = self.forbidden.iter().fold(0, |a, &f| a | f) & pool;
        for id in cards::iter(constrained).chain(cards::iter(pool & !constrained)) {
            ids[n] = id;
            n += 1;
        }
        let split = constrained.count_ones() as usize;
        shuffle(&mut ids[..split], rng);
        shuffle(&mut ids[split..n], rng);
        let mut total_need: u32 = need.iter().sum();
        for &id in &ids[..n] {
            if total_need == 0 {
                break;
            }
            let bit = 1u64 << id;
            let allowed = |s: usize| need[s] > 0 && self.forbidden[s] & bit == 0;
            let room: u32 = (0..4).filter(|&s| allowed(s)).map(|s| need[s]).sum();
            let seat = if room > 0 {
                pick(&need, room, rng, allowed)
            } else {
                // Only when the constraints cannot all hold (a card missed in memory).
                pick(&need, total_need, rng, |s| need[s] > 0)
            };
            hands[seat] |= bit;
            need[seat] -= 1;
            total_need -= 1;
        }
        hands[self.seat as usize] = 0;
        hands
    }
}

fn shuffle(ids: &mut [u8], rng: &mut impl Rng) {
    for i in (1..ids.len()).rev() {
        let j = rng.random_range(0..=i);
        ids.swap(i, j);
    }
}

/// A seat among those `allowed`, with probability proportional to the cards it still needs.
fn pick(need: &[u32; 4], room: u32, rng: &mut impl Rng, allowed: impl Fn(usize) -> bool) -> usize {
    let mut r = rng.random_range(0..room);
    for (s, &n) in need.iter().enumerate() {
        if allowed(s) {
            if r < n {
                return s;
            }
            r -= n;
        }
    }
    unreachable!("room is the sum of the allowed needs")
}
