//! Hosted decisions per second on one core: the example bots of examples/hosted-bots/ (C,
//! Rust, Monte Carlo), built from source as the tests build them, each deciding real updates
//! of both games the way the server does (`seat::decide`: a fresh instance per decision, the
//! ladder's default budget), one decision after another on this thread. Prints decisions/s and
//! the mean fuel per decision of each bot and game; a module that could not be built is
//! reported with the reason, and a decision that faults is counted and shown, not hidden.
//! Run: `cargo bench -p gangs-hosted --bench decisions`.

#[path = "../tests/examples/mod.rs"]
mod examples;

use gangs_hosted::seat::{self, SeatDecision};
use gangs_hosted::{Budget, Runner, DEFAULT_MODULE_BYTES};
use gangs_proto::v1 as pb;
use std::time::{Duration, Instant};

/// How long each bot decides each game's updates.
const MEASURE: Duration = Duration::from_secs(3);
/// Updates collected per game.
const UPDATES: usize = 300;

/// The update a seat receives when it may act, as the server builds it (no clocks here).
fn update_for(game: &dyn gangs_games::Game, seat: usize, seq: u64) -> pb::Update {
    pb::Update {
        seq,
        view: Some(game.view(Some(seat))),
        legal_actions: game.legal_actions(seat),
        status: pb::GameStatus::Running as i32,
        seat: Some(seat as u32),
        seats_taken: game.players() as u32,
        ..Default::default()
    }
}

/// Up to [`UPDATES`] updates of `kind`, from whole games whose seats play a legal action
/// drawn from the seq (deterministic, varied), as (seed, update).
fn updates(kind: &str, options: &[(&str, &str)]) -> Vec<(u64, pb::Update)> {
    let pairs: Vec<(String, String)> = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let options = gangs_games::parse_options(kind, None, &pairs).unwrap();
    let mut out = Vec::new();
    for seed in 1.. {
        let mut game = gangs_games::new_game(kind, Some(&options), seed, None).unwrap();
        game.start();
        let mut seq = 0u64;
        while !game.is_over() && out.len() < UPDATES {
            seq += 1;
            let actors = game.actors();
            let seat = actors[seq as usize % actors.len()];
            let update = update_for(&*game, seat, seq);
            let pick = (seq.wrapping_mul(2_654_435_761) >> 8) as usize % update.legal_actions.len();
            game.act(seat, &update.legal_actions[pick]).unwrap();
            out.push((seed, update));
        }
        if out.len() >= UPDATES {
            return out;
        }
    }
    unreachable!("the loop returns")
}

fn main() {
    let runner = Runner::new();
    let budget = Budget::default();
    let games = [
        ("gang-of-four", updates("gang-of-four", &[])),
        ("the-gang", updates("the-gang", &[("mode", "advanced")])),
    ];
    let bots = [
        ("c", examples::c_example()),
        ("rust", examples::rust_example("rust", "gangs-hosted-bot")),
        (
            "monte-carlo",
            examples::rust_example("monte-carlo", "gangs-monte-carlo-bot"),
        ),
        (
            "python",
            examples::python_example(
                &std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-python.wasm"),
            ),
        ),
    ];
    let cache_dir = tempfile::tempdir().expect("a temp dir");
    let cache = gangs_hosted::compile::ArtefactCache::new(cache_dir.path());
    println!(
        "one core, a fresh instance per decision, fuel budget {} per decision, {} s per row",
        budget.fuel,
        MEASURE.as_secs()
    );
    for (name, module) in &bots {
        let module = match module {
            Ok(module) => module,
            Err(why) => {
                println!("{name}: not built, not measured: {why}");
                continue;
            }
        };
        // Compiled once into the cache, then loaded from it: what a submit and a restart cost.
        let sha = gangs_hosted::compile::sha256_hex(module);
        let compiling = Instant::now();
        let bot = match runner.compile_cached(
            module,
            DEFAULT_MODULE_BYTES,
            &budget,
            Some((&cache, &sha)),
        ) {
            Ok((bot, _)) => bot,
            Err(refusal) => {
                println!("{name}: refused, not measured: {refusal}");
                continue;
            }
        };
        let compiled = compiling.elapsed();
        let loading = Instant::now();
        let (_, used) = runner
            .compile_cached(module, DEFAULT_MODULE_BYTES, &budget, Some((&cache, &sha)))
            .expect("compiled once already");
        let loaded = loading.elapsed();
        println!(
            "{name:>11} {:.1} MiB, compiled in {:.1} s, loaded from the cache ({used:?}) in {:.0} ms",
            module.len() as f64 / (1 << 20) as f64,
            compiled.as_secs_f64(),
            loaded.as_secs_f64() * 1e3
        );
        for (kind, updates) in &games {
            let decide = |(seed, update): &(u64, pb::Update)| {
                seat::decide(
                    &runner,
                    &bot,
                    &budget,
                    SeatDecision {
                        kind,
                        update,
                        record_unix_ms: 1_700_000_000_000 + update.seq as i64,
                        seed: *seed,
                        bot: "bench@1",
                    },
                )
            };
            // One decision before the clock starts: the first instance pays for lazy set-up.
            decide(&updates[0]);
            let (mut decisions, mut fuel, mut faults) = (0u64, 0u64, 0u64);
            let mut first_fault = None;
            let start = Instant::now();
            while start.elapsed() < MEASURE {
                for update in updates {
                    let decided = decide(update);
                    decisions += 1;
                    fuel += decided.outcome.fuel_used;
                    if let Err(fault) = decided.action {
                        faults += 1;
                        first_fault.get_or_insert(fault);
                    }
                    if start.elapsed() >= MEASURE {
                        break;
                    }
                }
            }
            let secs = start.elapsed().as_secs_f64();
            let faulted = match first_fault {
                Some(fault) => format!(", {faults} faults (first: {fault})"),
                None => String::new(),
            };
            println!(
                "{name:>11} {kind:<12} {:>8.0} decisions/s  {:>7.2} M fuel per decision  ({decisions} decisions{faulted})",
                decisions as f64 / secs,
                fuel as f64 / decisions as f64 / 1e6
            );
        }
    }
}
