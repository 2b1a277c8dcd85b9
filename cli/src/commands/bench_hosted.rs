//! `gangs bench --hosted-beside FILE.wasm [--hosted-bots N]`: a hosted ladder playing beside
//! the measured games, so that the bench's ratio and Act p99 show what it costs the server.
//! Before the measurement the bench creates a ladder of its kind on its own server, submits N
//! copies of the module (bots `hosted-0` .. `hosted-{N-1}`, each a hosted entry the server
//! plays itself) and the house bot `random` (which every kind offers), and waits until a
//! hosted game is under way; the two phases then run as usual while the ladder keeps
//! matching. The report says how many of the ladder's games were played during the
//! measurement, finished, or voided, and the hosted entries' timeouts.
//!
//! Only with the bench's own server: it creates a ladder and submits bots, which a server
//! someone else runs should not get from a load tool.

use crate::client::Context;
use crate::error::CliError;
use gangs_proto::auth::KeyedLaddersClient;
use gangs_proto::v1 as pb;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Copies of the module at most.
pub const MAX_HOSTED_BOTS: usize = 64;
/// The house bot entered beside the copies: every kind offers it, and it thinks in no time.
const HOUSE_BOT: &str = "random";
/// How long the bench waits for the first hosted game to be under way.
const FIRST_GAME_WITHIN: Duration = Duration::from_secs(60);
/// A module file larger than this is refused before it is read (no server takes more).
const MAX_FILE: u64 = 256 << 20;

/// The hosted ladder playing beside the measurement.
pub struct HostedBeside {
    module: PathBuf,
    ladder: String,
    bots: usize,
}

/// What the hosted ladder did while the bench measured.
pub struct Played {
    module: PathBuf,
    ladder: String,
    bots: usize,
    /// Games under way at some time of the measurement.
    games_played: usize,
    /// Games that ended during the measurement, rated; and voided.
    games_finished: usize,
    games_void: usize,
    /// The hosted entries' timeouts over the whole run (their defaults played: a fault of the
    /// module, or a decision the host could not run in time).
    timeouts: u64,
}

/// Now, in ms since the Unix epoch (the ladder's games are timed so).
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Every game of `ladder`, newest first.
async fn ladder_games(
    admin: &mut KeyedLaddersClient,
    target: &Context,
    ladder: &str,
) -> Result<Vec<pb::LadderGame>, CliError> {
    let mut games = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = admin
            .ladder_games(pb::LadderGamesRequest {
                ladder: ladder.to_string(),
                page_size: 500,
                page_token,
                ..Default::default()
            })
            .await
            .map_err(|s| target.refused(s))?
            .into_inner();
        games.extend(page.games);
        if page.next_page_token.is_empty() {
            return Ok(games);
        }
        page_token = page.next_page_token;
    }
}

impl HostedBeside {
    /// Creates the ladder on `target` (the bench's own server), submits `bots` copies of
    /// `module` and the house bot, and waits until a hosted game is under way.
    pub async fn start(
        target: &Context,
        kind: &str,
        module: &Path,
        bots: usize,
    ) -> Result<HostedBeside, CliError> {
        if !(1..=MAX_HOSTED_BOTS).contains(&bots) {
            return Err(CliError::invalid(format!(
                "--hosted-bots must be 1 to {MAX_HOSTED_BOTS}, not {bots}"
            )));
        }
        let unreadable = |e: std::io::Error| {
            CliError::invalid(format!("--hosted-beside {}: {e}", module.display()))
        };
        let size = std::fs::metadata(module).map_err(unreadable)?.len();
        if size > MAX_FILE {
            return Err(CliError::invalid(format!(
                "--hosted-beside {}: {size} bytes, more than any server takes ({MAX_FILE})",
                module.display()
            )));
        }
        let bytes = std::fs::read(module).map_err(unreadable)?;
        let mut admin = target.api_key.ladders(target.channel().await?);
        let ladder = format!("bench-hosted-{}", unix_ms());
        let created = admin
            .create_ladder(pb::CreateLadderRequest {
                name: ladder.clone(),
                kind: kind.to_string(),
                house_bots: vec![HOUSE_BOT.to_string()],
                ..Default::default()
            })
            .await
            .map_err(|s| target.refused(s))?
            .into_inner();
        let players = created.ladder.map_or(0, |l| l.players as usize);
        if bots + 1 < players {
            return Err(CliError::invalid(format!(
                "--hosted-bots {bots}: a game of {kind} seats {players}, and the ladder has only \
                 the copies and one house bot: enter at least {} copies",
                players - 1
            )));
        }
        for i in 0..bots {
            admin
                .submit_bot(pb::SubmitBotRequest {
                    ladder: ladder.clone(),
                    bot: format!("hosted-{i}"),
                    version: String::new(),
                    module: bytes.clone(),
                })
                .await
                .map_err(|s| {
                    let mut refused = target.refused(s);
                    refused.message = format!(
                        "--hosted-beside {}: the server refused the module: {}",
                        module.display(),
                        refused.message
                    );
                    refused
                })?;
        }
        let beside = HostedBeside {
            module: module.to_path_buf(),
            ladder,
            bots,
        };
        let waited = Instant::now();
        loop {
            let games = ladder_games(&mut admin, target, &beside.ladder).await?;
            // A game matched: hosted seats are deciding (or, for a quick module, have decided).
            if !games.is_empty() {
                return Ok(beside);
            }
            if waited.elapsed() > FIRST_GAME_WITHIN {
                return Err(CliError::new(
                    "UNAVAILABLE",
                    format!(
                        "--hosted-beside: no game of ladder {} started within {} s of submitting {bots} copies",
                        beside.ladder,
                        FIRST_GAME_WITHIN.as_secs()
                    ),
                ));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// What the ladder did between `from` and `to` (unix ms), read from the server.
    pub async fn played(self, target: &Context, from: i64, to: i64) -> Result<Played, CliError> {
        let mut admin = target.api_key.ladders(target.channel().await?);
        let games = ladder_games(&mut admin, target, &self.ladder).await?;
        let during = |g: &&pb::LadderGame| {
            g.matched_unix_ms <= to && g.finished_unix_ms.is_none_or(|end| end >= from)
        };
        let ended = |g: &&pb::LadderGame| g.finished_unix_ms.is_some_and(|end| end <= to);
        let games_played = games.iter().filter(during).count();
        let games_finished = games
            .iter()
            .filter(during)
            .filter(ended)
            .filter(|g| !g.void)
            .count();
        let games_void = games
            .iter()
            .filter(during)
            .filter(ended)
            .filter(|g| g.void)
            .count();
        let standings = admin
            .standings(pb::StandingsRequest {
                ladder: self.ladder.clone(),
                ..Default::default()
            })
            .await
            .map_err(|s| target.refused(s))?
            .into_inner();
        let timeouts = standings
            .standings
            .iter()
            .filter(|s| s.bot.starts_with("hosted-"))
            .map(|s| s.timeouts as u64)
            .sum();
        Ok(Played {
            module: self.module,
            ladder: self.ladder,
            bots: self.bots,
            games_played,
            games_finished,
            games_void,
            timeouts,
        })
    }
}

impl Played {
    pub fn json(&self) -> Value {
        json!({
            "module": self.module.display().to_string(),
            "ladder": self.ladder,
            "bots": self.bots,
            "games_played": self.games_played,
            "games_finished": self.games_finished,
            "games_void": self.games_void,
            "timeouts": self.timeouts,
        })
    }

    pub fn line(&self) -> String {
        format!(
            "hosted beside: {} copies of {} on ladder {}: {} games played during the measurement, \
             {} finished, {} void; {} timeouts of the hosted bots",
            self.bots,
            self.module.display(),
            self.ladder,
            self.games_played,
            self.games_finished,
            self.games_void,
            self.timeouts
        )
    }
}
