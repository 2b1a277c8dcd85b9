//! `gangs bench --hosted-beside FILE.wasm [--hosted-bots N]`: a hosted ladder playing beside
//! the measured games, so that the bench's ratio and Act p99 show what it costs the server.
//! Before the measurement the bench creates a ladder of its kind on its own server, submits N
//! copies of the module (bots `hosted-0` .. `hosted-{N-1}`, each a hosted entry the server
//! plays itself) and the house bot `random` (which every kind offers), and waits until a
//! hosted game is under way; the two phases then run as usual while the ladder keeps
//! matching. The report says how many of the ladder's games were played during the
//! measurement, finished, or voided, and the hosted entries' timeouts.
//!
//! With `--hosted-heavy FILE.wasm [--hosted-heavy-bots N]`, N copies of a heavy module join
//! the same ladder (`heavy-0` ..), and the report adds what fairness is about: the void share
//! of the games with no heavy bot at the table, and the hosted decisions' wait for a thread
//! (p50, p99, from the server's histogram over the measurement) and rate.
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
    /// `--hosted-heavy`'s module and copies.
    heavy: Option<(PathBuf, usize)>,
    /// The own server's metrics address, and the hosted series read there as the measurement
    /// began.
    metrics: Option<(String, HostedSeries)>,
}

/// The hosted series of the server's metrics at one moment.
#[derive(Clone, Default)]
struct HostedSeries {
    decisions: f64,
    /// `gangs_hosted_queue_wait_seconds`' cumulative buckets: (upper bound, count).
    waits: Vec<(f64, f64)>,
}

impl HostedSeries {
    /// Reads the series from the metrics endpoint at `address` (plain HTTP, one GET).
    fn read(address: &str) -> Result<HostedSeries, CliError> {
        use std::io::{Read, Write};
        let failed = |e: std::io::Error| {
            CliError::new(
                "UNAVAILABLE",
                format!("the server's metrics at {address}: {e}"),
            )
        };
        let mut stream = std::net::TcpStream::connect(address).map_err(failed)?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(failed)?;
        write!(stream, "GET /metrics HTTP/1.0\r\nHost: {address}\r\n\r\n").map_err(failed)?;
        let mut text = String::new();
        stream.read_to_string(&mut text).map_err(failed)?;
        let mut series = HostedSeries::default();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((name, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(value) = value.trim().parse::<f64>() else {
                continue;
            };
            if name.starts_with("gangs_hosted_decisions_total") {
                series.decisions += value;
            } else if let Some(le) = name
                .strip_prefix("gangs_hosted_queue_wait_seconds_bucket{le=\"")
                .and_then(|rest| rest.strip_suffix("\"}"))
            {
                let bound = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().unwrap_or(f64::INFINITY)
                };
                series.waits.push((bound, value));
            }
        }
        series.waits.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(series)
    }

    /// The bucket bound under which `quantile` of the waits between `earlier` and `self` fell
    /// (None when no decision waited in between).
    fn wait_quantile(&self, earlier: &HostedSeries, quantile: f64) -> Option<f64> {
        let before = |bound: f64| {
            earlier
                .waits
                .iter()
                .find(|(b, _)| *b == bound)
                .map_or(0.0, |(_, c)| *c)
        };
        let counts: Vec<(f64, f64)> = self
            .waits
            .iter()
            .map(|(b, c)| (*b, c - before(*b)))
            .collect();
        let total = counts.last()?.1;
        if total <= 0.0 {
            return None;
        }
        counts
            .iter()
            .find(|(_, c)| *c >= total * quantile)
            .map(|(b, _)| *b)
    }
}

/// A free loopback address for the own server's metrics endpoint.
pub fn free_local_address() -> Result<String, CliError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| CliError::local(format!("no free local port: {e}")))?;
    let address = listener
        .local_addr()
        .map_err(|e| CliError::local(format!("no free local port: {e}")))?;
    Ok(address.to_string())
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
    /// With heavy bots: the games that ended during the measurement with none at the table,
    /// and how many of them were void.
    heavy: Option<HeavyShare>,
    /// From the server's metrics over the measurement: hosted decisions per second, and their
    /// wait for a thread at p50 and p99 (a histogram bucket's bound, seconds).
    decisions_per_second: Option<f64>,
    wait_p50: Option<f64>,
    wait_p99: Option<f64>,
}

/// The heavy bots and the games without them.
struct HeavyShare {
    module: PathBuf,
    bots: usize,
    games_without: usize,
    void_without: usize,
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

/// The module file `path` (`flag`'s), refused past any server's limit before it is read.
fn read_module(path: &Path, flag: &str) -> Result<Vec<u8>, CliError> {
    let unreadable =
        |e: std::io::Error| CliError::invalid(format!("{flag} {}: {e}", path.display()));
    let size = std::fs::metadata(path).map_err(unreadable)?.len();
    if size > MAX_FILE {
        return Err(CliError::invalid(format!(
            "{flag} {}: {size} bytes, more than any server takes ({MAX_FILE})",
            path.display()
        )));
    }
    std::fs::read(path).map_err(unreadable)
}

impl HostedBeside {
    /// Creates the ladder on `target` (the bench's own server), submits `bots` copies of
    /// `module` and the house bot, and waits until a hosted game is under way.
    pub async fn start(
        target: &Context,
        kind: &str,
        (module, bots, heavy): (&Path, usize, Option<(&Path, usize)>),
        metrics: Option<String>,
    ) -> Result<HostedBeside, CliError> {
        if !(1..=MAX_HOSTED_BOTS).contains(&bots) {
            return Err(CliError::invalid(format!(
                "--hosted-bots must be 1 to {MAX_HOSTED_BOTS}, not {bots}"
            )));
        }
        let bytes = read_module(module, "--hosted-beside")?;
        let heavy_bytes = match heavy {
            Some((heavy, copies)) => {
                if !(1..=MAX_HOSTED_BOTS).contains(&copies) {
                    return Err(CliError::invalid(format!(
                        "--hosted-heavy-bots must be 1 to {MAX_HOSTED_BOTS}, not {copies}"
                    )));
                }
                Some((read_module(heavy, "--hosted-heavy")?, copies))
            }
            None => None,
        };
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
        let mut entries: Vec<(String, &[u8], &Path, &str)> = (0..bots)
            .map(|i| (format!("hosted-{i}"), &bytes[..], module, "--hosted-beside"))
            .collect();
        if let (Some((heavy_bytes, copies)), Some((heavy, _))) = (&heavy_bytes, heavy) {
            entries.extend((0..*copies).map(|i| {
                (
                    format!("heavy-{i}"),
                    &heavy_bytes[..],
                    heavy,
                    "--hosted-heavy",
                )
            }));
        }
        for (bot, module_bytes, file, flag) in entries {
            admin
                .submit_bot(pb::SubmitBotRequest {
                    ladder: ladder.clone(),
                    bot,
                    version: String::new(),
                    module: module_bytes.to_vec(),
                })
                .await
                .map_err(|s| {
                    let mut refused = target.refused(s);
                    refused.message = format!(
                        "{flag} {}: the server refused the module: {}",
                        file.display(),
                        refused.message
                    );
                    refused
                })?;
        }
        let beside = HostedBeside {
            module: module.to_path_buf(),
            ladder,
            bots,
            heavy: heavy.map(|(heavy, copies)| (heavy.to_path_buf(), copies)),
            metrics: None,
        };
        let waited = Instant::now();
        loop {
            let games = ladder_games(&mut admin, target, &beside.ladder).await?;
            // A game matched: hosted seats are deciding (or, for a quick module, have decided).
            if !games.is_empty() {
                let metrics = match metrics {
                    Some(address) => Some((address.clone(), HostedSeries::read(&address)?)),
                    None => None,
                };
                return Ok(HostedBeside { metrics, ..beside });
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
        let heavy = self.heavy.map(|(module, bots)| {
            let without: Vec<&pb::LadderGame> = games
                .iter()
                .filter(during)
                .filter(ended)
                .filter(|g| !g.names.iter().any(|n| n.starts_with("heavy-")))
                .collect();
            HeavyShare {
                module,
                bots,
                games_without: without.len(),
                void_without: without.iter().filter(|g| g.void).count(),
            }
        });
        let (mut decisions_per_second, mut wait_p50, mut wait_p99) = (None, None, None);
        if let Some((address, at_start)) = &self.metrics {
            let at_end = HostedSeries::read(address)?;
            let seconds = ((to - from) as f64 / 1000.0).max(0.001);
            decisions_per_second = Some((at_end.decisions - at_start.decisions) / seconds);
            wait_p50 = at_end.wait_quantile(at_start, 0.5);
            wait_p99 = at_end.wait_quantile(at_start, 0.99);
        }
        Ok(Played {
            module: self.module,
            ladder: self.ladder,
            bots: self.bots,
            games_played,
            games_finished,
            games_void,
            timeouts,
            heavy,
            decisions_per_second,
            wait_p50,
            wait_p99,
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
            "heavy": self.heavy.as_ref().map(|h| json!({
                "module": h.module.display().to_string(),
                "bots": h.bots,
                "games_without_heavy": h.games_without,
                "void_without_heavy": h.void_without,
            })),
            "decisions_per_second": self.decisions_per_second,
            "queue_wait_p50_seconds": self.wait_p50,
            "queue_wait_p99_seconds": self.wait_p99,
        })
    }

    pub fn line(&self) -> String {
        let mut line = self.ladder_line();
        if let Some(h) = &self.heavy {
            line.push_str(&format!(
                "\nheavy beside: {} copies of {}: {} games ended without one at the table, {} of them void",
                h.bots,
                h.module.display(),
                h.games_without,
                h.void_without
            ));
        }
        if let Some(rate) = self.decisions_per_second {
            let bound = |q: Option<f64>| q.map_or("-".to_string(), |s| format!("<= {:.3} s", s));
            line.push_str(&format!(
                "\nhosted decisions: {rate:.0}/s; their wait for a thread: p50 {}, p99 {}",
                bound(self.wait_p50),
                bound(self.wait_p99)
            ));
        }
        line
    }

    fn ladder_line(&self) -> String {
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
