//! The Gang by determinized Monte Carlo, for the chips.
//!
//! A chip says where the seat's hand will stand at the showdown (more stars, stronger), and
//! only the final ranking decides the heist. So each sample deals the cards this seat cannot
//! see, consistently with its view (every other hand gets its size, the cards the informant
//! showed this seat stay in the shower's hand, its own earlier cards and the community are
//! out), turns up the rest of the community to five cards and evaluates every hand with the
//! rules engine's evaluator: the ranks this seat's hand may take there (a range when hands
//! tie). The outcome of `take N`, or of `ready` with N stars in front of it, is whether N
//! falls in that range; the action with the best mean over [`SAMPLES`] samples is played. A
//! chip held by another seat scores a little less (taking it moves a teammate's chip) and the
//! chip already held a little more (the phase closes only once everyone stops moving).
//!
//! The other decisions are not searched, and say so in the log: the bot accepts every
//! specialist proposal and never proposes one, guesses and chooses cards at random, and never
//! returns a chip. The Valet's suitless Jack is never dealt to a hidden hand.

use crate::Choice;
use gangs_rules::the_gang::{evaluator::evaluate_general, Card};
use rand::Rng;
use serde_json::Value;

/// Samples per decision, shared by every candidate (each is judged on the same samples).
pub const SAMPLES: usize = 1000;
/// Score taken off a chip another seat holds, and added to the chip this seat holds.
const MOVE_COST: f64 = 0.05;

fn card(value: &Value) -> Option<Card> {
    Card::from_id(value["id"].as_u64()? as u32)
}

fn cards(list: &Value) -> Vec<Card> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(card)
        .collect()
}

pub fn choose(update: &Value, legal: &[Value], rng: &mut impl Rng) -> Choice {
    let inner = |i: usize| &legal[i]["the_gang"];
    let with = |key: &str| -> Vec<usize> {
        (0..legal.len())
            .filter(|&i| inner(i).get(key).is_some())
            .collect()
    };
    if let Some(&index) = with("vote")
        .iter()
        .find(|&&i| inner(i)["vote"]["accept"] == true)
    {
        return Choice {
            index,
            why: "accepts the proposal (not searched)".into(),
        };
    }
    let picks: Vec<usize> = with("guess")
        .into_iter()
        .chain(with("choose_card"))
        .collect();
    if !picks.is_empty() {
        return Choice {
            index: picks[rng.random_range(0..picks.len())],
            why: "guesses or chooses at random (not searched)".into(),
        };
    }
    let takes: Vec<(usize, u64)> = with("take")
        .into_iter()
        .filter_map(|i| Some((i, inner(i)["take"]["stars"].as_u64()?)))
        .collect();
    let ready = with("ready").first().copied();
    if takes.is_empty() {
        let index = ready
            .or_else(|| (0..legal.len()).find(|&i| inner(i).get("propose").is_none()))
            .unwrap_or(0);
        return Choice {
            index,
            why: "no chip to take: ready, or the first action that is no proposal".into(),
        };
    }
    let view = &update["view"]["the_gang"];
    let seat = update["seat"].as_u64().unwrap_or(0) as usize;
    let Some(table) = Table::read(view, seat) else {
        return Choice {
            index: takes[0].0,
            why: "could not read its view: the first chip".into(),
        };
    };
    // Who holds which chip of the open street (stars by seat, 0: none).
    let held: Vec<u64> = view["chips"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["street"] == view["street"])
        .flat_map(|c| c["stars_by_seat"].as_array().cloned().unwrap_or_default())
        .map(|s| s.as_u64().unwrap_or(0))
        .collect();
    let mine = held.get(seat).copied().unwrap_or(0);
    // Candidates: (index, stars, bias); `ready` stands for keeping the chip held.
    let mut candidates: Vec<(usize, u64, f64)> = takes
        .iter()
        .map(|&(i, stars)| {
            let taken = held
                .iter()
                .enumerate()
                .any(|(s, &h)| s != seat && h == stars);
            (i, stars, if taken { -MOVE_COST } else { 0.0 })
        })
        .collect();
    if let (Some(i), true) = (ready, mine > 0) {
        candidates.push((i, mine, MOVE_COST));
    }
    let mut hits = vec![0u32; candidates.len()];
    for _ in 0..SAMPLES {
        let (low, high) = table.sample_ranks(rng);
        for (k, &(_, stars, _)) in candidates.iter().enumerate() {
            if (low..=high).contains(&stars) {
                hits[k] += 1;
            }
        }
    }
    let score = |k: usize| hits[k] as f64 / SAMPLES as f64 + candidates[k].2;
    let best = (1..candidates.len()).fold(0, |b, k| if score(k) > score(b) { k } else { b });
    let (index, stars, _) = candidates[best];
    let what = if Some(index) == ready {
        "keeps its chip"
    } else {
        "takes"
    };
    Choice {
        index,
        why: format!(
            "{what} {stars} stars: right in {:.0}% of {SAMPLES} sampled showdowns",
            hits[best] as f64 * 100.0 / SAMPLES as f64
        ),
    }
}

/// What the seat knows of the cards, and the cards it does not.
struct Table {
    seat: usize,
    /// Each seat's private cards known to this seat (its own; the ones shown to it), and how
    /// many it holds.
    known: Vec<Vec<Card>>,
    sizes: Vec<usize>,
    community: Vec<Card>,
    /// The cards that may be anywhere unseen.
    pool: Vec<Card>,
}

impl Table {
    fn read(view: &Value, seat: usize) -> Option<Table> {
        let players = view["players"].as_u64()? as usize;
        if seat >= players || players > 8 {
            return None;
        }
        let mut known = vec![Vec::new(); players];
        known[seat] = cards(&view["private_cards"]);
        for shown in view["shown_to_me"].as_array().into_iter().flatten() {
            let from = shown["from_seat"].as_u64()? as usize;
            if from < players && from != seat {
                if let Some(c) = card(&shown["card"]) {
                    known[from].push(c);
                }
            }
        }
        let mut sizes: Vec<usize> = (0..players)
            .map(|s| {
                view["hand_sizes"][s]
                    .as_u64()
                    .map_or(known[s].len(), |n| n as usize)
            })
            .collect();
        sizes[seat] = known[seat].len();
        let community = cards(&view["community"]);
        let mut out = [false; Card::COUNT];
        for c in known
            .iter()
            .flatten()
            .chain(&community)
            .chain(&cards(&view["remembered"]))
        {
            out[c.id() as usize] = true;
        }
        let pool = Card::deck()
            .into_iter()
            .filter(|c| !out[c.id() as usize])
            .collect();
        Some(Table {
            seat,
            known,
            sizes,
            community,
            pool,
        })
    }

    /// One random showdown: the lowest and highest stars this seat's hand would deserve there
    /// (equal hands may come in either order).
    fn sample_ranks(&self, rng: &mut impl Rng) -> (u64, u64) {
        let mut pool = self.pool.clone();
        let mut next = 0;
        let mut community = self.community.clone();
        while community.len() < 5 {
            match draw(&mut pool, &mut next, rng) {
                Some(c) => community.push(c),
                None => break,
            }
        }
        let mut values = Vec::with_capacity(self.known.len());
        for (s, known) in self.known.iter().enumerate() {
            let mut hand = known.clone();
            while hand.len() < self.sizes[s] {
                match draw(&mut pool, &mut next, rng) {
                    Some(c) => hand.push(c),
                    None => break,
                }
            }
            hand.extend_from_slice(&community);
            values.push(evaluate_general(&hand));
        }
        let mine = values[self.seat];
        let others = values
            .iter()
            .enumerate()
            .filter(|&(s, _)| s != self.seat)
            .map(|(_, v)| *v);
        let weaker = others.clone().filter(|v| *v < mine).count() as u64;
        let not_stronger = others.filter(|v| *v <= mine).count() as u64;
        (1 + weaker, 1 + not_stronger)
    }
}

/// The next card of a partial shuffle of `pool` (uniform among the cards not drawn yet), or
/// None once every card is drawn.
fn draw(pool: &mut [Card], next: &mut usize, rng: &mut impl Rng) -> Option<Card> {
    if *next >= pool.len() {
        return None;
    }
    let j = rng.random_range(*next..pool.len());
    pool.swap(*next, j);
    *next += 1;
    Some(pool[*next - 1])
}
