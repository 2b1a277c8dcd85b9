//! Gang of Four by determinized Monte Carlo.
//!
//! A world deals the cards this seat cannot see to the other hands (and the dead hand with 3
//! players), consistently with its view: each hand gets exactly its card count, the cards on
//! the table and in this update's plays are out, a card exchanged to a seat stays there, and
//! the loser of the previous deal holds nothing stronger than the card it had to give. In each
//! world every candidate action is played, then the deal is finished with uniformly random
//! legal moves for every seat ([`DealState::random_playout`]); all candidates share the world,
//! so they are compared on the same cards. The outcome is the deal's penalties of the others
//! minus this seat's, with a bonus or malus when the deal ends the game with this seat first
//! or not. [`PLAYOUTS`] playouts per decision in all, shared evenly among the candidates.
//!
//! The give-back of the exchange is not searched: the bot gives its weakest card.

use crate::Choice;
use gangs_rules::gang_of_four::{cards, DealState, Direction, Mask, Move, Options, PlayList};
use rand::Rng;
use serde_json::Value;

/// Playouts per decision, all candidates together.
pub const PLAYOUTS: usize = 240;
/// Candidates searched at most; with more legal plays, the ones that shed the most cards and
/// the weakest ones are kept, and the pass.
pub const MAX_CANDIDATES: usize = 12;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Play(Mask),
    Pass,
    GiveBack(u8),
}

fn mask_of(cards: &Value) -> Mask {
    cards
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["id"].as_u64())
        .filter(|&id| id < 64)
        .fold(0, |m, id| m | (1u64 << id))
}

fn ids_mask(ids: &Value) -> Mask {
    ids.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
        .filter(|&id| id < 64)
        .fold(0, |m, id| m | (1u64 << id))
}

fn kind_of(action: &Value) -> Option<Kind> {
    let a = &action["gang_of_four"];
    if let Some(play) = a.get("play") {
        return Some(Kind::Play(ids_mask(&play["card_ids"])));
    }
    if a.get("pass").is_some() {
        return Some(Kind::Pass);
    }
    let id = a.get("give_back")?["card_id"].as_u64()?;
    (id < 64).then_some(Kind::GiveBack(id as u8))
}

pub fn choose(update: &Value, legal: &[Value], rng: &mut impl Rng) -> Choice {
    let kinds: Vec<Option<Kind>> = legal.iter().map(kind_of).collect();
    // The exchange's give-back: the weakest card (ids follow single strength).
    if let Some((index, _)) = kinds
        .iter()
        .enumerate()
        .filter_map(|(i, k)| match k {
            Some(Kind::GiveBack(id)) => Some((i, *id)),
            _ => None,
        })
        .min_by_key(|&(_, id)| id)
    {
        return Choice {
            index,
            why: "gives back its weakest card (not searched)".into(),
        };
    }
    let Some(situation) = Situation::read(update) else {
        return Choice {
            index: 0,
            why: "could not read its view: the first legal action".into(),
        };
    };
    let candidates = candidates(legal, &kinds);
    if candidates.len() == 1 {
        return Choice {
            index: candidates[0].0,
            why: "one distinct action".into(),
        };
    }
    let worlds = (PLAYOUTS / candidates.len()).max(1);
    let constraints = situation.constraints();
    let mut sums = vec![0.0f64; candidates.len()];
    let mut buffer = PlayList::new();
    let mut played = 0;
    for _ in 0..worlds {
        let mut hands = constraints.sample(rng);
        hands[situation.seat as usize] = situation.hand;
        let Some(world) = situation.deal(hands) else {
            break;
        };
        for (k, &(_, kind)) in candidates.iter().enumerate() {
            let mut state = world.clone();
            state.apply_unchecked(match kind {
                Kind::Play(cards) => Move::Play {
                    cards,
                    announce: true,
                },
                _ => Move::Pass,
            });
            state.random_playout(rng, &mut buffer);
            sums[k] += utility(&state, situation.seat, &situation.scores);
            played += 1;
        }
    }
    if played == 0 {
        return Choice {
            index: candidates[0].0,
            why: "its view admits no deal: the first candidate".into(),
        };
    }
    let mut best = 0;
    for k in 1..candidates.len() {
        if sums[k] > sums[best] {
            best = k;
        }
    }
    Choice {
        index: candidates[best].0,
        why: format!(
            "best mean outcome {:.2} of {} candidates, {played} random playouts",
            sums[best] / worlds as f64,
            candidates.len()
        ),
    }
}

/// The legal actions worth searching, as (index into legal_actions, kind): one per distinct
/// play (under manual_last_card the announcing one: never forgetting "Card!" costs nothing),
/// at most [`MAX_CANDIDATES`], and the pass when it is legal.
fn candidates(legal: &[Value], kinds: &[Option<Kind>]) -> Vec<(usize, Kind)> {
    let mut plays: Vec<(usize, Mask)> = Vec::new();
    let mut pass = None;
    for (i, kind) in kinds.iter().enumerate() {
        match kind {
            Some(Kind::Play(cards)) => {
                let announce = legal[i]["gang_of_four"]["play"]["announce_last_card"] == true;
                match plays.iter_mut().find(|(_, c)| c == cards) {
                    Some(existing) if announce => existing.0 = i,
                    Some(_) => {}
                    None => plays.push((i, *cards)),
                }
            }
            Some(Kind::Pass) if pass.is_none() => pass = Some(i),
            _ => {}
        }
    }
    let top = |m: Mask| 64 - m.leading_zeros();
    if plays.len() > MAX_CANDIDATES {
        // Half the most shedding (weakest first), half the weakest (most cards first).
        let mut shedding = plays.clone();
        shedding.sort_by_key(|&(_, m)| (std::cmp::Reverse(m.count_ones()), top(m)));
        let mut weakest = plays.clone();
        weakest.sort_by_key(|&(_, m)| (top(m), std::cmp::Reverse(m.count_ones())));
        let mut kept: Vec<(usize, Mask)> = Vec::new();
        for (a, b) in shedding.into_iter().zip(weakest) {
            for p in [a, b] {
                if kept.len() < MAX_CANDIDATES && !kept.contains(&p) {
                    kept.push(p);
                }
            }
        }
        plays = kept;
    }
    let mut out: Vec<(usize, Kind)> = plays.into_iter().map(|(i, m)| (i, Kind::Play(m))).collect();
    if let Some(i) = pass {
        out.push((i, Kind::Pass));
    }
    if out.is_empty() {
        out.push((0, Kind::Pass));
    }
    out
}

/// What the end of a simulated deal is worth to `seat` (higher is better): the others' mean
/// penalty minus its own, in units of 20 points, plus 2 when the deal ends the game with this
/// seat alone first, minus 2 when it ends it with another seat ahead.
fn utility(state: &DealState, seat: u8, scores: &[u32; 4]) -> f64 {
    let n = state.players() as usize;
    let penalties = state.penalties();
    let mine = penalties[seat as usize] as f64;
    let others: f64 = (0..n)
        .filter(|&s| s != seat as usize)
        .map(|s| penalties[s] as f64)
        .sum::<f64>()
        / (n - 1) as f64;
    let mut u = (others - mine) / 20.0;
    let totals: Vec<u32> = (0..n).map(|s| scores[s] + penalties[s]).collect();
    if totals.iter().any(|&t| t >= state.options.target_score) {
        let me = totals[seat as usize];
        let best_other = (0..n)
            .filter(|&s| s != seat as usize)
            .map(|s| totals[s])
            .min()
            .unwrap_or(u32::MAX);
        if me < best_other {
            u += 2.0;
        } else if me > best_other {
            u -= 2.0;
        }
    }
    u
}

/// Everything the seat's view says about the deal in play, in engine terms.
struct Situation {
    options: Options,
    seat: u8,
    hand: Mask,
    /// Cards each seat holds; with 3 players index 3 is the dead hand (16).
    counts: [u8; 4],
    scores: [u32; 4],
    direction: Direction,
    turn: u8,
    table: Option<(Mask, u8)>,
    passes: u8,
    announced: u8,
    barred: u8,
    must_include: Mask,
    /// Cards seen played this deal: the current trick's, and those of this update's events.
    played: Mask,
    /// This deal's exchange: (from, to, card, automatic).
    exchange: Vec<(u8, u8, u8, bool)>,
}

impl Situation {
    fn read(update: &Value) -> Option<Situation> {
        let view = &update["view"]["gang_of_four"];
        let o = &view["options"];
        let flag = |k: &str| o[k].as_bool().unwrap_or(false);
        let options = Options {
            players: o["players"].as_u64().unwrap_or(4) as u8,
            target_score: o["target_score"].as_u64().unwrap_or(100) as u32,
            flush_by_sum: flag("flush_by_sum"),
            loser_tie_strongest_card: flag("loser_tie_strongest_card"),
            manual_last_card: flag("manual_last_card"),
        };
        let players = options.players as usize;
        if !(3..=4).contains(&players) {
            return None;
        }
        let seat = update["seat"].as_u64()? as usize;
        if seat >= players {
            return None;
        }
        let hand = mask_of(&view["hand"]);
        let mut counts = [0u8; 4];
        let mut scores = [0u32; 4];
        let mut announced = 0u8;
        let mut barred = 0u8;
        for s in view["seats"].as_array()? {
            let i = s["seat"].as_u64()? as usize;
            if i >= players {
                return None;
            }
            counts[i] = s["card_count"].as_u64().unwrap_or(0).min(17) as u8;
            scores[i] = s["score"].as_u64().unwrap_or(0) as u32;
            if s["announced_last_card"] == true {
                announced |= 1 << i;
            }
            if s["barred"] == true {
                barred |= 1 << i;
            }
        }
        if players == 3 {
            counts[3] = 16;
        }
        counts[seat] = hand.count_ones() as u8;
        let direction = match view["direction"].as_str() {
            Some("GANG_OF_FOUR_DIRECTION_CLOCKWISE") => Direction::Clockwise,
            _ => Direction::CounterClockwise,
        };
        let table = view
            .get("table")
            .filter(|t| !t.is_null())
            .map(|t| (mask_of(&t["cards"]), t["seat"].as_u64().unwrap_or(0) as u8));
        let trick = view["trick"].as_array().cloned().unwrap_or_default();
        let passes = trick.iter().rev().take_while(|p| p["pass"] == true).count() as u8;
        let mut played = trick.iter().fold(0, |m, p| m | mask_of(&p["cards"]));
        // This update's events may show earlier tricks of the deal (a deal that started within
        // them restarts the count).
        for event in update["events"].as_array().into_iter().flatten() {
            let e = &event["gang_of_four"];
            if e.get("dealt").is_some() {
                played = trick.iter().fold(0, |m, p| m | mask_of(&p["cards"]));
            } else if let Some(p) = e.get("played") {
                played |= mask_of(&p["cards"]);
            }
        }
        played &= !hand;
        let exchange = view["exchange"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| {
                let card = x["card"]["id"].as_u64()?;
                (card < 64).then_some((
                    x["from_seat"].as_u64()? as u8,
                    x["to_seat"].as_u64()? as u8,
                    card as u8,
                    x["automatic"] == true,
                ))
            })
            .collect();
        Some(Situation {
            options,
            seat: seat as u8,
            hand,
            counts,
            scores,
            direction,
            turn: view["turn"].as_u64().unwrap_or(seat as u64) as u8,
            table,
            passes,
            announced,
            barred,
            must_include: if view["must_play_multicolor_one"] == true {
                1 << cards::MULTICOLOR_ONE
            } else {
                0
            },
            played,
            exchange,
        })
    }

    /// The engine's deal for one world (`hands` holds every seat's cards).
    fn deal(&self, hands: [Mask; 4]) -> Option<DealState> {
        let mut state = DealState::from_parts(
            self.options,
            hands,
            self.direction,
            self.turn,
            self.table,
            self.passes,
            self.announced,
            self.barred,
        )
        .ok()?;
        state.must_include = self.must_include;
        Some(state)
    }

    /// What the view says about the hidden hands.
    fn constraints(&self) -> Constraints {
        let me = self.seat as usize;
        let players = self.options.players as usize;
        let unseen = !self.hand & !self.played;
        let hidden = |s: usize| s != me && (s < players || s == 3);
        let mut need = [0u8; 4];
        for (s, n) in need.iter_mut().enumerate() {
            if hidden(s) {
                *n = self.counts[s];
            }
        }
        let mut known = [0u64; 4];
        let mut forbidden = [0u64; 4];
        for &(from, to, card, automatic) in &self.exchange {
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
                forbidden[from as usize] |= !((bit << 1).wrapping_sub(1));
            }
        }
        for s in 0..4 {
            // The card given back to the loser is exempt from the bound above.
            forbidden[s] &= !known[s];
            if known[s].count_ones() > need[s] as u32 {
                known[s] = 0;
            }
        }
        Constraints {
            seat: self.seat,
            unseen,
            need,
            known,
            forbidden,
        }
    }
}

/// The hidden hands' constraints, and random deals that keep them.
struct Constraints {
    seat: u8,
    /// Cards to deal: neither in this hand nor seen played. Cards played in earlier tricks
    /// the view no longer shows are among them: a deal leaves the surplus out.
    unseen: Mask,
    /// Cards each hidden hand must receive.
    need: [u8; 4],
    /// Cards known to be in a hand (exchanged to it).
    known: [Mask; 4],
    /// Cards a hand cannot hold.
    forbidden: [Mask; 4],
}

impl Constraints {
    /// One random deal of the unseen cards; `hands[seat]` is left empty for the caller.
    fn sample(&self, rng: &mut impl Rng) -> [Mask; 4] {
        let mut hands = self.known;
        let mut need = [0u32; 4];
        for s in 0..4 {
            need[s] = (self.need[s] as u32).saturating_sub(hands[s].count_ones());
        }
        let pool = self.unseen & !self.known.iter().fold(0, |a, &k| a | k);
        let constrained = self.forbidden.iter().fold(0, |a, &f| a | f) & pool;
        // Cards some seat may not hold go first, while every seat still has room.
        let mut first: Vec<u8> = cards::iter(constrained).collect();
        let mut rest: Vec<u8> = cards::iter(pool & !constrained).collect();
        shuffle(&mut first, rng);
        shuffle(&mut rest, rng);
        let mut total: u32 = need.iter().sum();
        for id in first.into_iter().chain(rest) {
            if total == 0 {
                break;
            }
            let bit = 1u64 << id;
            let allowed = |s: usize| need[s] > 0 && self.forbidden[s] & bit == 0;
            let room: u32 = (0..4).filter(|&s| allowed(s)).map(|s| need[s]).sum();
            let seat = if room > 0 {
                pick(&need, room, rng, allowed)
            } else {
                // Only when the constraints cannot all hold.
                pick(&need, total, rng, |s| need[s] > 0)
            };
            hands[seat] |= bit;
            need[seat] -= 1;
            total -= 1;
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
    0
}
