//! What the ladder tests share: a bot started on a ladder with its bot key (a Rust bot binary
//! or the Python example), and a ladder's standings and games read through any client (one
//! without a key, or one sending the admin, player or a bot's key).

use super::{bin, Server};
use gangs_proto::v1 as pb;
use pb::ladders_client::LaddersClient;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tonic::codegen::{Body, Bytes, StdError};

/// `command` given the flags of a bot on `ladder` of `server` with the bot key `key`
/// (`--server URL --ladder LADDER --bot-key KEY`: the Rust bots' and the Python example's).
pub fn on_ladder<'a>(
    command: &'a mut Command,
    server: &Server,
    ladder: &str,
    key: &str,
) -> &'a mut Command {
    command.args([
        "--server",
        &server.url(),
        "--ladder",
        ladder,
        "--bot-key",
        key,
    ])
}

/// The Rust bot `binary` on `ladder` with its bot key, logging its warnings to the test's
/// stderr; the caller adds its own flags (`--seed`, `--concurrent`, `--games`) and spawns it.
pub fn rust_ladder_bot(binary: &str, server: &Server, ladder: &str, key: &str) -> Command {
    let mut command = Command::new(bin(binary));
    on_ladder(&mut command, server, ladder, key)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    command
}

/// The Python example `script` (`examples/python/bot.py`) run by `python.0` with the gRPC stubs
/// of `python.1` on `ladder` with its bot key, quiet but for its errors; the caller adds its own
/// flags and spawns it.
pub fn python_ladder_bot(
    python: &(PathBuf, PathBuf),
    script: &Path,
    server: &Server,
    ladder: &str,
    key: &str,
) -> Command {
    let (python, stubs) = python;
    let mut command = Command::new(python);
    command.arg(script);
    on_ladder(&mut command, server, ladder, key)
        .env("PYTHONPATH", stubs)
        .env("GANGS_BOT_QUIET", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    command
}

/// The standings of `ladder` (without the fit).
pub async fn standings<T>(client: &mut LaddersClient<T>, ladder: &str) -> pb::StandingsResponse
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<StdError>,
    T::ResponseBody: Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as Body>::Error: Into<StdError> + Send,
{
    client
        .standings(pb::StandingsRequest {
            ladder: ladder.into(),
            fit: false,
            ..Default::default()
        })
        .await
        .expect("standings")
        .into_inner()
}

/// Every game of `ladder`, newest first, read `page_size` at a time through every page.
pub async fn ladder_games<T>(
    client: &mut LaddersClient<T>,
    ladder: &str,
    page_size: u32,
) -> Vec<pb::LadderGame>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<StdError>,
    T::ResponseBody: Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as Body>::Error: Into<StdError> + Send,
{
    let mut games = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = client
            .ladder_games(pb::LadderGamesRequest {
                ladder: ladder.into(),
                page_size,
                page_token,
                ..Default::default()
            })
            .await
            .expect("ladder games")
            .into_inner();
        games.extend(page.games);
        if page.next_page_token.is_empty() {
            return games;
        }
        page_token = page.next_page_token;
    }
}

/// A ladder game created and not over yet (a match whose game is still being created is
/// listed without an id: nothing can be looked up by it).
pub fn in_play(game: &pb::LadderGame) -> bool {
    !game.game_id.is_empty() && game.finished_unix_ms.is_none()
}
