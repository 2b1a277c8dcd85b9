//! `gangs-bot-wasm --wasm FILE --game GAME [--seat N] [--seed S]` (or `--ladder NAME --bot-key
//! KEY`): plays a hosted bot's WebAssembly module (docs/hosted-bots.md) as a seat of any
//! game, with the same runner and budget the server gives hosted bots. Exits 0 when the game
//! ends; 2 when the module cannot be a hosted bot.

use clap::Parser;
use gangs_bots::hosted::WasmPolicy;
use gangs_bots::{run_bot_with, BotArgs};
use rand::RngCore;
use std::path::PathBuf;
use std::process::ExitCode;

/// Plays one seat with a hosted bot's module.
#[derive(Parser)]
#[command(name = "gangs-bot-wasm", version)]
struct Cli {
    /// The module (.wasm): a WASI preview 1 command reading one JSON line, printing one.
    #[arg(long, value_name = "FILE")]
    wasm: PathBuf,
    /// Fuel per decision (about one unit per WebAssembly instruction), as a ladder's budget.
    #[arg(long, default_value_t = gangs_hosted::DEFAULT_FUEL)]
    fuel: u64,
    /// Memory per instance, bytes.
    #[arg(long, default_value_t = gangs_hosted::DEFAULT_MEMORY_BYTES)]
    memory_bytes: u64,
    #[command(flatten)]
    bot: BotArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let bytes = match std::fs::read(&cli.wasm) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("gangs-bot-wasm: --wasm {}: {e}", cli.wasm.display());
            return ExitCode::from(2);
        }
    };
    let name = cli
        .wasm
        .file_stem()
        .map_or("wasm".into(), |s| s.to_string_lossy().into_owned());
    let budget = gangs_hosted::Budget {
        fuel: cli.fuel,
        memory_bytes: cli.memory_bytes,
        ..Default::default()
    };
    // Checked once up front, so a refused module stops here with its reason.
    if let Err(why) = WasmPolicy::new(&bytes, name.clone(), budget, 0) {
        eprintln!("gangs-bot-wasm: {}: {why}", cli.wasm.display());
        return ExitCode::from(2);
    }
    run_bot_with(cli.bot, |mut rng| {
        WasmPolicy::new(&bytes, name.clone(), budget, rng.next_u64())
            .expect("the module compiled a moment ago")
    })
}
