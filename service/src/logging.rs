//! The server's logs on stderr: `--log-format text` (default) for people, `--log-format json`
//! (one JSON object per line, tracing-subscriber's JSON layer) for log collectors. `RUST_LOG`
//! chooses what shows (default `info`). Colours only when stderr is a terminal, so a log file
//! or a container log never holds ANSI escape codes.

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line: timestamp, level, target, fields, span.
    Json,
}

/// Installs the global subscriber (once; a second call keeps the first).
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().with_ansi(false).try_init(),
    };
}
