//! A Monte Carlo hosted gangs bot, for both games (docs/hosted-bots.md).
//!
//! The server runs this module once per decision: it reads the seat's Update, one line of JSON
//! on stdin, and prints one line on stdout, the 0-based index of the legal action it plays. A
//! line on stderr says what it chose and on how many playouts; the server keeps it as the
//! bot's log.
//!
//! Both games are searched the same way, by determinization: deal the cards this seat cannot
//! see at random, consistently with everything its view shows, then play each legal action out
//! to the end of the deal (Gang of Four) or the heist's showdown (The Gang) and keep the action
//! with the best mean outcome. The playouts run the repository's own rules engines
//! (gangs-rules), so they follow the real rules. The number of playouts per decision is fixed
//! ([`gang_of_four::PLAYOUTS`], [`the_gang::SAMPLES`]), not timed: a decision costs about the
//! same fuel every time, and a rerun plays the same playouts.
//!
//! Random draws come from a ChaCha generator seeded by WASI's `random_get`, which the host
//! answers from the game's seed: a rerun of the decision draws the same numbers.

mod gang_of_four;
mod the_gang;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::io::{Read, Write};

/// What a game's policy chose: the index into `legal_actions`, and why, for the log.
pub struct Choice {
    pub index: usize,
    pub why: String,
}

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
    let mut rng = ChaCha8Rng::from_seed(host_seed());
    let choice = if legal.is_empty() {
        Choice {
            index: 0,
            why: "could not read its update".into(),
        }
    } else if legal.len() == 1 {
        Choice {
            index: 0,
            why: "the only legal action".into(),
        }
    } else if legal[0].get("gang_of_four").is_some() {
        gang_of_four::choose(&update, &legal, &mut rng)
    } else if legal[0].get("the_gang").is_some() {
        the_gang::choose(&update, &legal, &mut rng)
    } else {
        Choice {
            index: 0,
            why: "the first legal action (a game it does not know)".into(),
        }
    };
    // The log first: the decision ends as soon as the answer's line reaches stdout.
    eprintln!(
        "mc-bot: seq {} seat {}: {} legal, chose {}: {}",
        update["seq"],
        update["seat"],
        legal.len(),
        choice.index,
        choice.why
    );
    println!("{}", choice.index);
    let _ = std::io::stdout().flush();
}

/// 32 bytes from the host's `random_get`: the seed of every draw of this decision.
fn host_seed() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    // SAFETY: random_get writes exactly `bytes.len()` bytes into the buffer it is given.
    unsafe { wasi_random_get(bytes.as_mut_ptr(), bytes.len()) };
    bytes
}

#[cfg(target_os = "wasi")]
unsafe fn wasi_random_get(buf: *mut u8, len: usize) -> i32 {
    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    extern "C" {
        fn random_get(buf: *mut u8, len: usize) -> i32;
    }
    random_get(buf, len)
}

/// Off WASI (a `cargo run` on the desktop to try the policy): a zero seed.
#[cfg(not(target_os = "wasi"))]
unsafe fn wasi_random_get(_buf: *mut u8, _len: usize) -> i32 {
    1
}
