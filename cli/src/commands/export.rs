//! `gangs export GAME [-o FILE]`: writes one game as a portable game file (JSON Lines: a header,
//! then every log record; `gangs_games::game_file`). A running game gives what a spectator may
//! see so far (the server's `GetLog` redacts it); a finished one, everything. Without `-o` the
//! file goes to stdout.

use crate::client::Context;
use crate::error::CliError;
use crate::output::status_name;
use clap::Args;
use gangs_games::game_file::GameFile;
use serde_json::json;
use std::path::PathBuf;

#[derive(Args)]
pub struct ExportArgs {
    /// The game id.
    game: String,

    /// Write the file here (default: stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

pub async fn run(args: ExportArgs, context: &Context) -> Result<(), CliError> {
    let mut client = context.connect().await?;
    let file = fetch(&mut client, &context.server, &args.game).await?;
    let Some(path) = &args.output else {
        let mut stdout = std::io::stdout().lock();
        return file
            .write(&mut stdout)
            .map_err(|e| CliError::local(e.to_string()));
    };
    write_file(&file, path)?;
    let header = &file.header;
    context.out.emit(
        json!({
            "game_id": header.game_id,
            "file": path.display().to_string(),
            "records": header.records,
            "status": status_name(header.status as i32),
        }),
        || {
            format!(
                "wrote {} records of game {} ({}) to {}",
                header.records,
                header.game_id,
                status_name(header.status as i32),
                path.display()
            )
        },
    );
    Ok(())
}

/// A game's file from the server's log.
pub async fn fetch(
    client: &mut crate::client::Client,
    server: &str,
    game_id: &str,
) -> Result<GameFile, CliError> {
    let mut records = Vec::new();
    crate::client::read_log(client, game_id, 0, |record| records.push(record))
        .await
        .map_err(|status| CliError::from_status(server, &status))?;
    GameFile::from_log(game_id, records).map_err(|e| {
        CliError::new(
            "DATA_LOSS",
            format!("the log of game {game_id} cannot be exported: {e}"),
        )
    })
}

/// Writes `file` to `path` (created or replaced).
pub fn write_file(file: &GameFile, path: &std::path::Path) -> Result<(), CliError> {
    let cannot = |e: String| CliError::local(format!("cannot write {}: {e}", path.display()));
    let handle = std::fs::File::create(path).map_err(|e| cannot(e.to_string()))?;
    let mut out = std::io::BufWriter::new(handle);
    file.write(&mut out).map_err(|e| cannot(e.to_string()))
}
