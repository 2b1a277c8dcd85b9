//! The crew policy for The Gang: a cooperative strategy meant to fill every seat of a team.
//!
//! - **Chips**: before the river each seat estimates its strength among the players by Monte
//!   Carlo (the rules library's evaluator); on the river it knows its place exactly on a public
//!   scale (the rank of its hand among every holding the board allows). The team then sorts
//!   itself with the chip convention of [`protocol`]: one seat moves at a time, each move
//!   touching a chip says one base-N digit, colliding seats say more digits, and finally every
//!   seat takes the chip of its place and says `ready`. Under a tight move cap (fewer than three
//!   moves per player) the seats instead claim one chip each in seat order. Streets with locked
//!   chips (challenges 2 and 6) and streets where someone left the convention fall back to a
//!   plain claim: take the free chip nearest to one's own estimate, then `ready`.
//! - **Team guesses** (challenges 4 and 9): on the river the future top seat spells a rank of
//!   its cards and its category in chip digits; the guessers vote what it said. Without that
//!   signal they vote the most likely answer by Monte Carlo over deals where the target's hand
//!   is the strongest, following a vote already cast so the team agrees.
//! - **Specialists**: proposed at the start of the first street, before any chip move: Hacker,
//!   Valet and Muscle for oneself with a weak hand, Driver, Brains and Informant about oneself
//!   with an ambiguous one. Proposals are accepted, except those that would change a hand in
//!   the middle of the river's sort. Cards to pass or discard are those whose absence keeps the
//!   hand best; the Informant shows the highest card.
//!
//! Every decision reads only the update's view (plus caches), so the bot survives restarts.

use super::hand::{self, STREET_SCALE};
use super::protocol::{self, digit_of, LoggedMove, Params, Schedule};
use crate::Policy;
use gangs_games::the_gang::{action_from_pb, card_from_pb};
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::{
    evaluate, Action, Card, Category, GuessValue, HandValue, SpecialistUse,
};
use rand_chacha::ChaCha8Rng;

/// Monte Carlo samples for a street's strength estimate.
const STRENGTH_SAMPLES: u32 = 400;
/// Samples for the guess inference without a signal.
const GUESS_SAMPLES: u32 = 4000;

const RETINAL_SCAN: u32 = 4;
const FINGERPRINT_READER: u32 = 9;

/// A street's strength estimate is valid for (heist, street, own cards, board).
type StreetKey = (u32, i32, Vec<Card>, Vec<Card>);
/// A river table is valid for (board, cards per player).
type RiverKey = (Vec<Card>, usize);

pub struct CrewPolicy {
    rng: ChaCha8Rng,
    /// (heist, street, own cards, board) → strength.
    strength_cache: Option<(StreetKey, f64)>,
    /// (board, cards per player) → the river table.
    river_cache: Option<(RiverKey, Vec<HandValue>)>,
}

fn cards_of(list: &[pb::TheGangCard]) -> Vec<Card> {
    list.iter().filter_map(|c| card_from_pb(c).ok()).collect()
}

/// The legal actions as engine actions, each with its wire form.
fn legal_of(update: &pb::Update) -> Vec<(Action, pb::GameAction)> {
    update
        .legal_actions
        .iter()
        .filter_map(|g| match &g.game {
            Some(pb::game_action::Game::TheGang(a)) => {
                action_from_pb(a).ok().map(|x| (x, g.clone()))
            }
            _ => None,
        })
        .collect()
}

fn pick(legal: &[(Action, pb::GameAction)], want: Action) -> Option<pb::GameAction> {
    legal
        .iter()
        .find(|(a, _)| *a == want)
        .map(|(_, g)| g.clone())
}

/// The current street's chip moves, in order, as the convention reads them.
fn logged_moves(v: &pb::TheGangView) -> Vec<LoggedMove> {
    v.moves
        .iter()
        .map(|m| LoggedMove {
            seat: m.seat as usize,
            stars: m.stars as u8,
            returned: m.returned,
        })
        .collect()
}

/// Cards this seat knows are not in the unseen pool: remembered and shown cards.
fn known_elsewhere(v: &pb::TheGangView, own: &[Card]) -> Vec<Card> {
    let mut known = cards_of(&v.remembered);
    known.extend(
        v.shown_to_me
            .iter()
            .filter_map(|s| s.card.as_ref())
            .filter_map(|c| card_from_pb(c).ok()),
    );
    known.retain(|c| *c != Card::SUITLESS_JACK && !own.contains(c));
    known.sort();
    known.dedup();
    known
}

impl CrewPolicy {
    pub fn new(rng: ChaCha8Rng) -> Self {
        CrewPolicy {
            rng,
            strength_cache: None,
            river_cache: None,
        }
    }

    /// The strength estimate of this street, cached: the policy is asked on every update.
    fn street_strength(&mut self, v: &pb::TheGangView, own: &[Card]) -> f64 {
        let community = cards_of(&v.community);
        let key = (v.heist, v.street, own.to_vec(), community.clone());
        if let Some((k, s)) = &self.strength_cache {
            if *k == key {
                return *s;
            }
        }
        let known = known_elsewhere(v, own);
        let others = (v.players as usize).saturating_sub(1);
        let s = hand::strength(
            own,
            &community,
            &known,
            others,
            own.len().max(1),
            STRENGTH_SAMPLES,
            &mut self.rng,
        );
        self.strength_cache = Some((key, s));
        s
    }

    fn river_table(&mut self, community: &[Card], per_player: usize) -> &[HandValue] {
        let key = (community.to_vec(), per_player);
        if self.river_cache.as_ref().is_none_or(|(k, _)| *k != key) {
            let table = hand::river_table(community, per_player);
            self.river_cache = Some((key, table));
        }
        &self.river_cache.as_ref().expect("just filled").1
    }

    /// The river sort's public parameters (the table's size depends on public cards only).
    fn river_params(&mut self, v: &pb::TheGangView, per_player: usize) -> Params {
        let community = cards_of(&v.community);
        let n = v.players as usize;
        let scale = hand::river_scale(self.river_table(&community, per_player));
        Params {
            players: n,
            scale,
            max_moves: v.max_moves,
            signal_digits: signal_digits(v, n),
        }
    }

    fn choose_in_chips(
        &mut self,
        v: &pb::TheGangView,
        me: usize,
        legal: &[(Action, pb::GameAction)],
    ) -> Option<pb::GameAction> {
        let own = cards_of(&v.private_cards);
        let log = logged_moves(v);

        // A proposal to vote on: accept, unless it changes a hand mid-way through the river sort.
        if pick(legal, Action::Accept).is_some() {
            let disruptive = v
                .proposal
                .as_ref()
                .and_then(|p| p.specialist_use.as_ref())
                .is_some_and(|u| matches!(u.specialist, 5 | 7 | 10))
                && v.street == pb::TheGangStreet::Red as i32
                && !log.is_empty();
            return pick(
                legal,
                if disruptive {
                    Action::Refuse
                } else {
                    Action::Accept
                },
            );
        }
        // A card to choose after an accepted specialist.
        if let Some(pc) = &v.pending_choice {
            return self.choose_card(v, me, &own, pc, legal);
        }

        let n = v.players as usize;
        let street = v.street;
        let is_river = street == pb::TheGangStreet::Red as i32;
        let strength = if is_river {
            None
        } else {
            Some(self.street_strength(v, &own))
        };

        if log.is_empty() {
            if let Some(p) = self.proposal(v, me, &own, strength, legal) {
                return Some(p);
            }
        }

        let holders: Vec<u32> = v
            .chips
            .iter()
            .find(|c| c.street == street)
            .map(|c| c.stars_by_seat.clone())
            .unwrap_or_else(|| vec![0; n]);
        let mine = holders.get(me).copied().unwrap_or(0) as u8;

        if !v.locked_stars.is_empty() {
            return claim(v, me, mine, &holders, strength.unwrap_or(0.5), legal);
        }

        // The convention: my private number and the public schedule.
        let (params, number, signal) = if is_river {
            let per_player = own.len().max(1);
            let params = self.river_params(v, per_player);
            let community = cards_of(&v.community);
            let mut all = own.clone();
            all.extend(&community);
            let value = evaluate(&all);
            let muscle = v.muscle_seat == Some(me as u32);
            let number =
                hand::river_number(self.river_table(&community, per_player), value, muscle);
            (params, number, signal_values(v, &own, value, n))
        } else {
            let params = Params {
                players: n,
                scale: STREET_SCALE,
                max_moves: v.max_moves,
                signal_digits: 0,
            };
            (
                params,
                hand::street_number(strength.unwrap_or(0.5)),
                Vec::new(),
            )
        };
        let replay = protocol::replay(&params, &log);
        let touch = |stars: u8| {
            if mine == stars {
                Action::Return
            } else {
                Action::Take(stars)
            }
        };
        let wanted = match replay.next {
            Schedule::Digit { seat, round } if seat == me => {
                Some(touch(digit_of(number, round, params.digits(), n) + 1))
            }
            Schedule::Signal { seat, index } if seat == me => {
                Some(touch(signal.get(index).copied().unwrap_or(0) + 1))
            }
            Schedule::Place { seat, stars } if seat == me => Some(Action::Take(stars)),
            Schedule::Claim { seat } if seat == me => {
                let s = match strength {
                    Some(s) => s,
                    None => number as f64 / (params.scale.max(2) - 1) as f64,
                };
                claim_in_turn(n, me, &holders, s).map(Action::Take)
            }
            Schedule::Done => {
                let ready = v.ready.get(me).copied().unwrap_or(false);
                // A chipless seat may only be ready once the cap hands it a chip.
                let placed = mine != 0 || v.moves_made >= v.max_moves;
                (!ready && placed).then_some(Action::Ready)
            }
            Schedule::Broken => {
                let s = match strength {
                    Some(s) => s,
                    None => self.street_strength(v, &own),
                };
                return claim(v, me, mine, &holders, s, legal);
            }
            _ => None,
        };
        match wanted {
            Some(a) => pick(legal, a).or_else(|| {
                // The convention's move is not allowed (cap, deadline): settle for `ready`.
                let ready = v.ready.get(me).copied().unwrap_or(false);
                if ready {
                    None
                } else {
                    pick(legal, Action::Ready)
                }
            }),
            None => None,
        }
    }

    /// The card this seat chooses for an accepted specialist: the highest to show, else the
    /// one whose loss costs the hand least.
    fn choose_card(
        &mut self,
        v: &pb::TheGangView,
        me: usize,
        own: &[Card],
        pc: &pb::the_gang_view::PendingChoice,
        legal: &[(Action, pb::GameAction)],
    ) -> Option<pb::GameAction> {
        if pc.seat as usize != me {
            return None;
        }
        let allowed: Vec<Card> = legal
            .iter()
            .filter_map(|(a, _)| match a {
                Action::Choose(c) => Some(*c),
                _ => None,
            })
            .collect();
        let card = if pc.choice_kind() == pb::TheGangChoiceKind::Show {
            allowed.iter().copied().max_by_key(|c| c.rank())
        } else {
            let community = cards_of(&v.community);
            let known = known_elsewhere(v, own);
            hand::card_to_drop(
                own,
                &allowed,
                &community,
                &known,
                (v.players as usize).saturating_sub(1),
                &mut self.rng,
            )
        }?;
        pick(legal, Action::Choose(card))
    }

    /// A specialist proposal worth making now, if any.
    fn proposal(
        &mut self,
        v: &pb::TheGangView,
        me: usize,
        own: &[Card],
        strength: Option<f64>,
        legal: &[(Action, pb::GameAction)],
    ) -> Option<pb::GameAction> {
        // Only on the heist's first street: hands change before any sorting starts.
        if v.chips.len() > 1 || v.proposal.is_some() {
            return None;
        }
        let s = strength?;
        let n = v.players as usize;
        let top_rank = own.iter().map(|c| c.rank()).max().unwrap_or(12);
        let weak = s < 0.3;
        let ambiguous = (0.4..0.6).contains(&s);
        let wanted = match v.active_specialist? {
            5 if weak => SpecialistUse::Hacker { seat: me },
            7 if weak => SpecialistUse::Valet { seat: me },
            10 if weak => SpecialistUse::Muscle { seat: me },
            2 if ambiguous => SpecialistUse::Driver { seat: me },
            4 if ambiguous => SpecialistUse::Brains {
                seat: me,
                rank: top_rank,
            },
            1 if ambiguous => SpecialistUse::Informant {
                from: me,
                to: (me + 1) % n,
            },
            _ => return None,
        };
        pick(legal, Action::Propose(wanted))
    }

    fn choose_guess(
        &mut self,
        v: &pb::TheGangView,
        me: usize,
        legal: &[(Action, pb::GameAction)],
    ) -> Option<pb::GameAction> {
        let g = v.guess.as_ref()?;
        let target = g.target as usize;
        let n = v.players as usize;
        let own = cards_of(&v.private_cards);
        // 1. What the top seat spelled on the river.
        let per_player = v.hand_sizes.get(target).copied().unwrap_or(2).max(1) as usize;
        let params = self.river_params(v, per_player);
        let log = logged_moves(v);
        let replay = protocol::replay(&params, &log);
        if replay.next == Schedule::Done
            && replay.signaller == Some(target)
            && replay.signal.len() == params.signal_digits
        {
            let rank_digits = protocol::digits_for(13, n);
            let mut rest: &[u8] = &replay.signal;
            let mut rank = None;
            if v.active_challenges.contains(&RETINAL_SCAN) {
                rank = Some(protocol::number_of(&rest[..rank_digits], n));
                rest = &rest[rank_digits..];
            }
            let category = v
                .active_challenges
                .contains(&FINGERPRINT_READER)
                .then(|| protocol::number_of(rest, n));
            let said = match g.challenge {
                RETINAL_SCAN => rank.filter(|&r| r < 13).map(|r| GuessValue::Rank(r as u8)),
                _ => category
                    .and_then(|c| Category::from_index(c as u32))
                    .map(GuessValue::Category),
            };
            if let Some(action) = said.and_then(|s| pick(legal, Action::Guess(s))) {
                return Some(action);
            }
        }
        // 2. Follow the team's current answer, so that the votes agree.
        let votes: Vec<GuessValue> = g
            .votes
            .iter()
            .filter_map(|c| c.value.as_ref())
            .filter_map(|value| {
                use pb::the_gang_guess_value::Value;
                match *value.value.as_ref()? {
                    Value::Rank(face) => (2..=14)
                        .contains(&face)
                        .then(|| GuessValue::Rank(face as u8 - 2)),
                    Value::Category(c) => u32::try_from(c - 1)
                        .ok()
                        .and_then(Category::from_index)
                        .map(GuessValue::Category),
                }
            })
            .collect();
        if let Some(leader) = votes
            .iter()
            .max_by_key(|x| {
                let count = votes.iter().filter(|y| y == x).count();
                let first = votes.iter().position(|y| y == *x).unwrap_or(0);
                (count, std::cmp::Reverse(first))
            })
            .copied()
        {
            if let Some(action) = pick(legal, Action::Guess(leader)) {
                return Some(action);
            }
        }
        // 3. The most likely answer given that the target's hand is the strongest.
        let community = cards_of(&v.community);
        let known = known_elsewhere(v, &own);
        let sizes: Vec<usize> = v.hand_sizes.iter().map(|&s| s as usize).collect();
        let inference = hand::infer_top(
            me,
            &own,
            target,
            &community,
            &known,
            &sizes,
            GUESS_SAMPLES,
            &mut self.rng,
        );
        let guess = if g.challenge == RETINAL_SCAN {
            GuessValue::Rank(inference.best_rank())
        } else {
            GuessValue::Category(inference.best_category())
        };
        pick(legal, Action::Guess(guess)).or_else(|| legal.first().map(|(_, g)| g.clone()))
    }
}

/// Digits the top seat spells on the river: a rank (challenge 4) and a category (9).
fn signal_digits(v: &pb::TheGangView, n: usize) -> usize {
    let mut d = 0;
    if v.active_challenges.contains(&RETINAL_SCAN) {
        d += protocol::digits_for(13, n);
    }
    if v.active_challenges.contains(&FINGERPRINT_READER) {
        d += protocol::digits_for(9, n);
    }
    d
}

/// What this seat would spell if it ends on top: its highest rank, then its category.
fn signal_values(v: &pb::TheGangView, own: &[Card], value: HandValue, n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    if v.active_challenges.contains(&RETINAL_SCAN) {
        let rank = own.iter().map(|c| c.rank()).max().unwrap_or(0) as u64;
        let d = protocol::digits_for(13, n);
        out.extend((0..d).map(|i| digit_of(rank, i, d, n)));
    }
    if v.active_challenges.contains(&FINGERPRINT_READER) {
        let category = value.category() as u64;
        let d = protocol::digits_for(9, n);
        out.extend((0..d).map(|i| digit_of(category, i, d, n)));
    }
    out
}

/// The plain claim: without a chip, take the free chip nearest to the expected place; with
/// one, say `ready`. It never takes a held chip, so it converges even with locked chips.
fn claim(
    v: &pb::TheGangView,
    me: usize,
    mine: u8,
    holders: &[u32],
    strength: f64,
    legal: &[(Action, pb::GameAction)],
) -> Option<pb::GameAction> {
    let n = v.players as usize;
    let ready = v.ready.get(me).copied().unwrap_or(false);
    if mine != 0 || v.moves_made >= v.max_moves {
        return if ready {
            None
        } else {
            pick(legal, Action::Ready)
        };
    }
    let desired = strength * (n - 1) as f64 + 1.0;
    let free = (1..=n as u8).filter(|s| !holders.contains(&(*s as u32)));
    let stars = free.min_by(|a, b| {
        let da = (*a as f64 - desired).abs();
        let db = (*b as f64 - desired).abs();
        da.total_cmp(&db)
    })?;
    pick(legal, Action::Take(stars)).or_else(|| pick(legal, Action::Ready).filter(|_| !ready))
}

/// The chip to claim in the tight-cap schedule, seeing the claims of the seats before: the free
/// chip under which the order is most likely right. Each earlier claim `c` is read as a
/// strength uniform on the slice of `0..=1` that makes `c` the nearest chip; each later seat is
/// below us with probability `strength`, so the free chips below ours must match their count.
fn claim_in_turn(n: usize, me: usize, holders: &[u32], strength: f64) -> Option<u8> {
    let taken: Vec<u32> = holders
        .iter()
        .enumerate()
        .filter(|&(seat, &stars)| seat != me && stars != 0)
        .map(|(_, &stars)| stars)
        .collect();
    let later = n - 1 - taken.len();
    let span = (n - 1).max(1) as f64;
    let below_claim = |stars: u32| {
        let low = ((stars as f64 - 1.5) / span).max(0.0);
        let high = ((stars as f64 - 0.5) / span).min(1.0);
        let certain = ((strength - low) / (high - low).max(1e-9)).clamp(0.0, 1.0);
        // Claims are noisy (made among the free chips, from an estimate): never certain.
        0.1 + 0.8 * certain
    };
    let free: Vec<u8> = (1..=n as u8)
        .filter(|s| !taken.contains(&(*s as u32)))
        .collect();
    free.iter().copied().max_by(|&a, &b| {
        let score = |stars: u8| {
            let claims: f64 = taken
                .iter()
                .map(|&t| {
                    if t < stars as u32 {
                        below_claim(t)
                    } else {
                        1.0 - below_claim(t)
                    }
                })
                .product();
            let free_below = free.iter().filter(|&&f| f < stars).count();
            claims * binomial(later, free_below, strength)
        };
        score(a).total_cmp(&score(b))
    })
}

/// P(k successes in n trials of probability p).
fn binomial(n: usize, k: usize, p: f64) -> f64 {
    if k > n {
        return 0.0;
    }
    let choose: f64 = (0..k).map(|i| (n - i) as f64 / (i + 1) as f64).product();
    choose * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32)
}

impl Policy for CrewPolicy {
    fn name(&self) -> &str {
        "crew"
    }

    fn choose(&mut self, update: &pb::Update) -> Option<pb::GameAction> {
        if update.legal_actions.is_empty() {
            return None;
        }
        let v = match update.view.as_ref()?.game.as_ref()? {
            pb::game_view::Game::TheGang(v) => v,
            _ => return None,
        };
        let me = v.seat.or(update.seat)? as usize;
        let legal = legal_of(update);
        match pb::TheGangStage::try_from(v.stage).ok()? {
            pb::TheGangStage::Coordinating => {
                let own = cards_of(&v.private_cards);
                let allowed: Vec<Card> = legal
                    .iter()
                    .filter_map(|(a, _)| match a {
                        Action::Choose(c) => Some(*c),
                        _ => None,
                    })
                    .collect();
                let known = known_elsewhere(v, &own);
                let card = hand::card_to_drop(
                    &own,
                    &allowed,
                    &[],
                    &known,
                    (v.players as usize).saturating_sub(1),
                    &mut self.rng,
                )?;
                pick(&legal, Action::Choose(card))
            }
            pb::TheGangStage::Chips => self.choose_in_chips(v, me, &legal),
            pb::TheGangStage::Guessing => self.choose_guess(v, me, &legal),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_claim_follows_the_estimate() {
        assert_eq!(claim_in_turn(4, 0, &[0, 0, 0, 0], 0.05), Some(1));
        assert_eq!(claim_in_turn(4, 0, &[0, 0, 0, 0], 0.95), Some(4));
    }

    #[test]
    fn later_claims_fit_around_the_earlier_ones() {
        // Seat 0 claimed the top: a strong hand settles just below it.
        assert_eq!(claim_in_turn(4, 1, &[4, 0, 0, 0], 0.9), Some(3));
        // Bottom and top are claimed; a rather weak hand with one seat to come takes the 2,
        // a rather strong one the 3.
        assert_eq!(claim_in_turn(4, 2, &[1, 4, 0, 0], 0.3), Some(2));
        assert_eq!(claim_in_turn(4, 2, &[1, 4, 0, 0], 0.7), Some(3));
        // The last seat takes what is left.
        assert_eq!(claim_in_turn(3, 2, &[3, 1, 0], 0.99), Some(2));
    }

    #[test]
    fn binomial_sums_to_one() {
        let total: f64 = (0..=5).map(|k| binomial(5, k, 0.3)).sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert_eq!(binomial(2, 3, 0.5), 0.0);
    }
}
