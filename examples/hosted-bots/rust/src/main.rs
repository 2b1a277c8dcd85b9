//! A hosted gangs bot in Rust, for both games (docs/hosted-bots.md).
//!
//! The server runs this module once per decision: it reads the seat's Update, one line of JSON
//! on stdin, and prints one line on stdout, the 0-based index of the legal action it plays. A
//! line on stderr says what it chose; the server keeps it as the bot's log.
//!
//! The policies are those of the Python and C examples:
//! - Gang of Four: give back the weakest card; otherwise play the combination that sheds the
//!   most cards, weakest first (card ids are ordered by single-card strength); pass only when
//!   nothing else is legal.
//! - The Gang: take the chip whose stars match a rough estimate of the hand (more stars for a
//!   stronger hand), preferring chips nobody holds, then say `ready`; accept every specialist
//!   proposal, never propose one; guess and choose cards at random.
//!
//! Random draws come from WASI's `random_get`, called directly (no crate needed), which the host
//! answers from the game's seed: a rerun of the decision draws the same numbers.

use serde_json::Value;
use std::io::{Read, Write};

fn main() {
    let mut input = String::new();
    let update: Value = match std::io::stdin().read_to_string(&mut input) {
        Ok(_) => serde_json::from_str(&input).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    let legal = update["legal_actions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let (choice, why) = if legal.is_empty() {
        (0, "could not read its update")
    } else if legal[0].get("gang_of_four").is_some() {
        gang_of_four(&legal)
    } else if legal[0].get("the_gang").is_some() {
        the_gang(&update, &legal)
    } else {
        (
            random_below(legal.len()),
            "plays a random legal action (a game it does not know)",
        )
    };
    // The log first: the decision ends as soon as the answer's line reaches stdout.
    eprintln!(
        "rust-bot: seq {} seat {}: {} legal, chose {choice}: {why}",
        update["seq"],
        update["seat"],
        legal.len()
    );
    println!("{choice}");
    let _ = std::io::stdout().flush();
}

/// A number below `n` drawn from the host's `random_get`.
fn random_below(n: usize) -> usize {
    let mut bytes = [0u8; 4];
    // SAFETY: random_get writes exactly `bytes.len()` bytes into the buffer it is given.
    let drawn = unsafe { wasi_random_get(bytes.as_mut_ptr(), bytes.len()) };
    let r = if drawn == 0 {
        u32::from_le_bytes(bytes) as usize
    } else {
        0
    };
    if n == 0 {
        0
    } else {
        r % n
    }
}

#[cfg(target_os = "wasi")]
unsafe fn wasi_random_get(buf: *mut u8, len: usize) -> i32 {
    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    extern "C" {
        fn random_get(buf: *mut u8, len: usize) -> i32;
    }
    random_get(buf, len)
}

/// Off WASI (a `cargo run` on the desktop to try the policy): no draws, always 0.
#[cfg(not(target_os = "wasi"))]
unsafe fn wasi_random_get(_buf: *mut u8, _len: usize) -> i32 {
    1
}

fn gang_of_four(legal: &[Value]) -> (usize, &'static str) {
    let inner = |a: &Value| a["gang_of_four"].clone();
    let give_back = legal
        .iter()
        .enumerate()
        .filter(|(_, a)| inner(a).get("give_back").is_some())
        .min_by_key(|(_, a)| {
            inner(a)["give_back"]["card_id"]
                .as_u64()
                .unwrap_or(u64::MAX)
        });
    if let Some((i, _)) = give_back {
        return (i, "gives back its weakest card");
    }
    let play = legal
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let ids = inner(a)["play"]["card_ids"].as_array()?.clone();
            let top = ids.iter().filter_map(Value::as_u64).max().unwrap_or(0);
            // Most cards first, then the weakest top card; the first among equals.
            Some((std::cmp::Reverse(ids.len()), top, i))
        })
        .min();
    match play {
        Some((_, _, i)) => (i, "sheds the most cards, weakest first"),
        None => (0, "passes"),
    }
}

/// The best poker category (0 high card .. 8 straight flush) among `cards` (rank 2..=14, suit
/// 0 for the suitless Jack), roughly, and the highest rank it involves.
fn category(cards: &[(usize, usize)]) -> (usize, usize) {
    let mut ranks = [0usize; 15];
    let mut in_suit = [[false; 15]; 5];
    let mut suits = [0usize; 5];
    let mut top = 2;
    for &(rank, suit) in cards.iter().filter(|(r, _)| (2..=14).contains(r)) {
        ranks[rank] += 1;
        top = top.max(rank);
        if suit > 0 && suit < 5 {
            suits[suit] += 1;
            in_suit[suit][rank] = true;
        }
    }
    // A straight ending at `high`; the Ace also counts as a 1.
    let run = |has: &dyn Fn(usize) -> bool, high: usize| {
        (0..5).all(|k| has(if high - k == 1 { 14 } else { high - k }))
    };
    let straight = (5..=14).any(|h| run(&|r| ranks[r] > 0, h));
    let flush = (1..5).any(|s| suits[s] >= 5);
    let straight_flush =
        (1..5).any(|s| suits[s] >= 5 && (5..=14).any(|h| run(&|r| in_suit[s][r], h)));
    let mut counts: Vec<usize> = ranks.to_vec();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let paired = (2..=14).rev().find(|&r| ranks[r] >= 2).unwrap_or(top);
    match (counts[0], counts[1]) {
        _ if straight_flush => (8, top),
        (4.., _) => (7, top),
        (3, 2..) => (6, top),
        _ if flush => (5, top),
        _ if straight => (4, top),
        (3, _) => (3, paired),
        (2, 2) => (2, paired),
        (2, _) => (1, paired),
        _ => (0, top),
    }
}

/// Where the hand probably stands among the players, as stars 1..=players.
fn wanted_stars(view: &Value) -> u64 {
    const SHARE: [u64; 9] = [5, 35, 60, 70, 80, 85, 90, 95, 95]; // percent, by category
    let suit = |s: &Value| match s.as_str() {
        Some("SUIT_CLUBS") => 1,
        Some("SUIT_DIAMONDS") => 2,
        Some("SUIT_HEARTS") => 3,
        Some("SUIT_SPADES") => 4,
        _ => 0,
    };
    let cards: Vec<(usize, usize)> = ["private_cards", "community"]
        .iter()
        .flat_map(|list| view[list].as_array().cloned().unwrap_or_default())
        .map(|c| (c["rank"].as_u64().unwrap_or(0) as usize, suit(&c["suit"])))
        .collect();
    let (cat, top) = category(&cards);
    let players = view["players"].as_u64().unwrap_or(1).max(1);
    let percent = (SHARE[cat] + top as u64 * 25 / 14).min(95);
    ((percent * players + 50) / 100).clamp(1, players)
}

fn the_gang(update: &Value, legal: &[Value]) -> (usize, &'static str) {
    let view = &update["view"]["the_gang"];
    let seat = update["seat"].as_u64().unwrap_or(0) as usize;
    let kind = |a: &Value, k: &str| a["the_gang"].get(k).is_some();
    if let Some(i) = legal
        .iter()
        .position(|a| a["the_gang"]["vote"]["accept"] == true)
    {
        return (i, "accepts the proposal");
    }
    let guesses: Vec<usize> = (0..legal.len())
        .filter(|&i| kind(&legal[i], "guess") || kind(&legal[i], "choose_card"))
        .collect();
    if !guesses.is_empty() {
        return (
            guesses[random_below(guesses.len())],
            "guesses or chooses at random",
        );
    }
    let ready = legal.iter().position(|a| kind(a, "ready"));
    // Who holds which chip of the open street (stars by seat, 0: none).
    let held: Vec<u64> = view["chips"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["street"] == view["street"])
        .flat_map(|c| c["stars_by_seat"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s.as_u64())
        .collect();
    let mine = held.get(seat).copied().unwrap_or(0);
    if let (true, Some(i)) = (mine > 0, ready) {
        return (i, "is content with its chip");
    }
    if mine == 0 {
        let want = wanted_stars(view);
        let take = legal
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let stars = a["the_gang"]["take"]["stars"].as_u64()?;
                let taken = held.contains(&stars);
                Some((stars.abs_diff(want) + if taken { 100 } else { 0 }, i))
            })
            .min();
        if let Some((_, i)) = take {
            return (i, "takes the chip its hand is worth");
        }
    }
    match ready {
        Some(i) => (i, "says ready"),
        None => (random_below(legal.len()), "plays a random legal action"),
    }
}
