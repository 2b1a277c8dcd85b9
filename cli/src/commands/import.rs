//! `gangs import FILE`: loads a finished game from a game file (`gangs export`) into the server
//! under a new id, marked imported: it can then be watched, listed, exported and replayed there.
//! The file is verified here first (no upload of a file that cannot be imported); the server
//! verifies it again through the engine before it stores anything. The file is streamed in
//! parts that each stay well under the server's request size limit.

use crate::client::Context;
use crate::error::CliError;
use clap::Args;
use gangs_games::game_file::GameFile;
use gangs_proto::v1 as pb;
use prost::Message;
use serde_json::json;
use std::path::PathBuf;

/// Most bytes of records per message: under the server's default request limit (64 KiB).
const PART_BYTES: usize = 32 * 1024;

#[derive(Args)]
pub struct ImportArgs {
    /// The game file (`gangs export` writes one).
    file: PathBuf,

    /// The server's API key, if it runs with --api-key.
    #[arg(long, env = "GANGS_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
}

pub async fn run(args: ImportArgs, context: &Context) -> Result<(), CliError> {
    let name = args.file.display().to_string();
    let handle = std::fs::File::open(&args.file)
        .map_err(|e| CliError::invalid(format!("cannot open {name}: {e}")))?;
    let file = GameFile::read(std::io::BufReader::new(handle))
        .map_err(|e| CliError::invalid(format!("{name}: {e}")))?;
    file.verify()
        .map_err(|e| CliError::invalid(format!("{name} cannot be imported: {e}")))?;
    let from = file.header.game_id.clone();
    let mut request = tonic::Request::new(tokio_stream::iter(parts(file)));
    if let Some(key) = &args.api_key {
        let value = format!("Bearer {key}").parse().map_err(|_| {
            CliError::invalid("the API key holds characters not allowed in a header")
        })?;
        request.metadata_mut().insert("authorization", value);
    }
    let mut client = context.connect().await?;
    let imported = client
        .import_game(request)
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    context.out.emit(
        json!({
            "game_id": imported.game_id,
            "records": imported.records,
            "from_game_id": from,
        }),
        || {
            format!(
                "imported game {from} ({} records) as game {}: `gangs replay {}` studies it",
                imported.records, imported.game_id, imported.game_id
            )
        },
    );
    Ok(())
}

/// The messages of `ImportGame`: the header with the first records, then the rest in parts of
/// at most [`PART_BYTES`] (a record larger than that travels alone).
fn parts(file: GameFile) -> Vec<pb::ImportGameRequest> {
    let mut parts = Vec::new();
    let mut part = pb::ImportGameRequest {
        header: file.header.to_json().to_string(),
        records: Vec::new(),
    };
    let mut bytes = part.encoded_len();
    for record in file.records {
        let size = record.encoded_len() + 8;
        if bytes + size > PART_BYTES && !part.records.is_empty() {
            parts.push(std::mem::take(&mut part));
            bytes = 0;
        }
        bytes += size;
        part.records.push(record);
    }
    parts.push(part);
    parts
}
