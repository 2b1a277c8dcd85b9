//! Tracing to stderr. `RUST_LOG` decides what shows; without it, `info` (or `warn` with
//! `--quiet`). Stdout stays free for whatever a bot wants to print.

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

pub fn init(quiet: bool) {
    let default = if quiet { "warn" } else { "info" };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // A second init (tests, an arena embedding bots) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
