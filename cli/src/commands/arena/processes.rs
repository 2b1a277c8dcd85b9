//! The arena's child processes: finding `gangs-server` and the bot programs, splitting `--bot`
//! commands as a shell would, starting the arena's own server on a free port with a temporary
//! data dir, and one game's bot processes (started, reaped, killed with their process groups).

use crate::error::CliError;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long the own server may take to print its address.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);

/// One `--bot` command, split into its program and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotCommand {
    /// The `--bot` text as given: the bot's name in the table.
    pub name: String,
    pub program: String,
    pub args: Vec<String>,
}

/// Splits every `--bot` command as a shell would and gives one per seat: with fewer commands
/// than seats the last one fills the rest. More commands than seats is an error.
pub fn bot_slots(commands: &[String], players: usize) -> Result<Vec<BotCommand>, CliError> {
    if commands.is_empty() {
        return Err(CliError::invalid(
            "no bot given: add --bot CMD (e.g. --bot gangs-bot-random)",
        ));
    }
    if commands.len() > players {
        return Err(CliError::invalid(format!(
            "{} --bot commands for {players} seats: give at most one per seat (or raise --players)",
            commands.len()
        )));
    }
    let mut parsed = Vec::with_capacity(commands.len());
    for command in commands {
        let words = shlex::split(command).ok_or_else(|| {
            CliError::invalid(format!(
                "cannot split --bot {command:?} into words (an unclosed quote or a trailing backslash?)"
            ))
        })?;
        let Some((program, args)) = words.split_first() else {
            return Err(CliError::invalid(
                "an empty --bot command: give the bot program, e.g. --bot gangs-bot-random",
            ));
        };
        // A hosted bot's module plays through `gangs-bot-wasm`, the server's own runner.
        let (program, args) = if program.ends_with(".wasm") {
            let mut with_module = vec!["--wasm".to_string(), program.clone()];
            with_module.extend_from_slice(args);
            ("gangs-bot-wasm".to_string(), with_module)
        } else {
            (program.clone(), args.to_vec())
        };
        parsed.push(BotCommand {
            name: command.clone(),
            program,
            args,
        });
    }
    let last = parsed.last().expect("checked non-empty").clone();
    parsed.resize(players, last);
    Ok(parsed)
}

/// Where a program named on the command line is: a name with a `/` is a path as given;
/// a bare name is looked for next to the running `gangs` executable, then on PATH.
pub fn resolve_program(name: &str) -> Result<PathBuf, CliError> {
    let given = Path::new(name);
    if given.components().count() > 1 || given.is_absolute() {
        if given.is_file() {
            return Ok(given.to_path_buf());
        }
        return Err(CliError::invalid(format!(
            "{name} does not exist or is not a file: check the path"
        )));
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let path_dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    for dir in beside.iter().chain(path_dirs.iter()) {
        let candidate = dir.join(name);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    let beside = beside
        .map(|d| format!(" ({})", d.display()))
        .unwrap_or_default();
    Err(CliError::invalid(format!(
        "cannot find `{name}` next to `gangs`{beside} or on PATH: build it (`cargo build --workspace`), put it on PATH, or give its path"
    )))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// The last `lines` lines of a log file, for an error message ("" if unreadable or empty).
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}

/// The arena's own `gangs-server`: a free port, a data dir under the arena's temporary dir.
/// Killed when dropped (or by [`OwnServer::stop`]).
pub struct OwnServer {
    child: Child,
    pub url: String,
}

impl OwnServer {
    /// Starts `gangs-server --listen 127.0.0.1:0 --data-dir DIR/data EXTRA_ARGS...` with its
    /// log in `DIR/server.log`, and waits for the address it prints on its first stdout line.
    pub async fn start(dir: &Path, extra_args: &[&str]) -> Result<OwnServer, CliError> {
        let program = resolve_program("gangs-server")?;
        let log_path = dir.join("server.log");
        let log = std::fs::File::create(&log_path)
            .map_err(|e| CliError::local(format!("cannot create {}: {e}", log_path.display())))?;
        let mut child = Command::new(&program)
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--data-dir")
            .arg(dir.join("data"))
            .args(extra_args)
            // The own server must not pick up a key or an address meant for another server.
            .env_remove("GANGS_API_KEY")
            .env_remove("GANGS_PLAYER_KEY")
            .env_remove("GANGS_LISTEN")
            .env_remove("GANGS_DATA_DIR")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| CliError::local(format!("cannot start {}: {e}", program.display())))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut lines = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(SERVER_START_TIMEOUT, lines.next_line()).await;
        let failed = |what: String| {
            let tail = log_tail(&log_path, 5);
            CliError::local(format!(
                "{} {what}{}",
                program.display(),
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(": {tail}")
                }
            ))
        };
        let line = match first {
            Ok(Ok(Some(line))) => line,
            Ok(Ok(None)) | Ok(Err(_)) => return Err(failed("exited before listening".into())),
            Err(_) => {
                return Err(failed(format!(
                    "printed no address within {}s",
                    SERVER_START_TIMEOUT.as_secs()
                )))
            }
        };
        let Some(addr) = line.trim().strip_prefix("gangs-server listening on ") else {
            return Err(failed(format!(
                "printed {line:?} instead of its address (is it a gangs-server?)"
            )));
        };
        let url = format!("http://{addr}");
        // Keep reading stdout so that a later line cannot fill the pipe or hit a closed one.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(OwnServer { child, url })
    }

    /// The server's process id (None once it was reaped).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Kills the server and waits for it, so that its data dir can be removed.
    pub async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// One bot process of a game, in a process group of its own so that a wrapper's children
/// (`--bot "sh -c '...'"`, a script starting an interpreter) die with it. Killed with its
/// group when dropped, so an interrupted or timed-out arena leaves nothing running.
pub struct BotProcess {
    pub seat: usize,
    pub name: String,
    pub log: PathBuf,
    child: Child,
    /// The process (and group) id, kept because `Child::id` forgets it once reaped.
    pid: Option<u32>,
}

impl BotProcess {
    /// Kills the bot's process group, then reaps the bot.
    async fn kill(&mut self) {
        kill_group(self.pid);
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        // The bot itself may have exited while its children live on: the group goes anyway.
        kill_group(self.pid);
    }
}

#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) with a negative pid signals the process group `pid`, which the bot
        // leads (process_group(0) at spawn); it touches no memory. A group already gone
        // gives ESRCH, which is fine.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: Option<u32>) {}

/// The environment variable that asks a bot to log only warnings and errors (bot contract).
pub const QUIET_ENV: &str = "GANGS_BOT_QUIET";

/// Starts `PROGRAM ARGS... --server URL [--ca FILE] --game GAME --seat S --seed X` with its
/// stderr in `log`: the arguments of the bot contract (`docs/bots.md`; `--ca` only when the
/// arena itself was given `--ca`), so a bot with a strict argument parser plays too. The wish
/// for quiet logs travels in the environment (`GANGS_BOT_QUIET=1`). Killed when dropped.
#[allow(clippy::too_many_arguments)]
pub fn spawn_bot(
    program: &Path,
    bot: &BotCommand,
    server: &str,
    ca: Option<&Path>,
    game_id: &str,
    seat: usize,
    seed: u64,
    log: PathBuf,
) -> Result<BotProcess, String> {
    let log_file =
        std::fs::File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut command = Command::new(program);
    #[cfg(unix)]
    command.process_group(0);
    command.args(&bot.args).args(["--server", server]);
    if let Some(ca) = ca {
        command.arg("--ca").arg(ca);
    }
    let child = command
        .args(["--game", game_id, "--seat"])
        .arg(seat.to_string())
        .arg("--seed")
        .arg(seed.to_string())
        .env(QUIET_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start bot {:?} for seat {seat}: {e}", bot.name))?;
    Ok(BotProcess {
        seat,
        name: bot.name.clone(),
        log,
        pid: child.id(),
        child,
    })
}

/// One game's bot processes while the game is played: which have exited, how, and the
/// killing of those still running once the game no longer needs them.
pub struct Bots {
    bots: Vec<BotProcess>,
    /// Indices into `bots` of the processes not yet reaped.
    running: Vec<usize>,
}

impl Bots {
    pub fn new(bots: Vec<BotProcess>) -> Bots {
        Bots {
            running: (0..bots.len()).collect(),
            bots,
        }
    }

    /// Reaps the bots that exited since the last call: `Err` for each that failed (its exit
    /// status and the tail of its log, said for a person).
    pub fn reap(&mut self) -> Vec<Result<(), String>> {
        let mut exits = Vec::new();
        let bots = &mut self.bots;
        self.running.retain(|&i| match bots[i].child.try_wait() {
            Ok(None) => true,
            Ok(Some(status)) if status.success() => {
                exits.push(Ok(()));
                false
            }
            Ok(Some(status)) => {
                exits.push(Err(bot_failed(&bots[i], status)));
                false
            }
            Err(e) => {
                exits.push(Err(format!(
                    "cannot wait for bot {:?} at seat {}: {e}",
                    bots[i].name, bots[i].seat
                )));
                false
            }
        });
        exits
    }

    /// Every bot has exited.
    pub fn all_exited(&self) -> bool {
        self.running.is_empty()
    }

    /// Kills the bots still running (each with its process group) and reaps them; their names
    /// and seats, by seat.
    pub async fn kill_running(&mut self) -> Vec<(String, usize)> {
        let mut killed = Vec::with_capacity(self.running.len());
        for i in std::mem::take(&mut self.running) {
            let bot = &mut self.bots[i];
            bot.kill().await;
            killed.push((bot.name.clone(), bot.seat));
        }
        killed.sort_by_key(|(_, seat)| *seat);
        killed
    }
}

fn bot_failed(bot: &BotProcess, status: ExitStatus) -> String {
    let tail = log_tail(&bot.log, 3);
    format!(
        "bot {:?} at seat {} exited with {status}{}",
        bot.name,
        bot.seat,
        if tail.is_empty() {
            String::new()
        } else {
            format!(": {tail}")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(bot: &BotCommand) -> Vec<&str> {
        std::iter::once(bot.program.as_str())
            .chain(bot.args.iter().map(String::as_str))
            .collect()
    }

    #[test]
    fn commands_split_as_a_shell_would() {
        let slots = bot_slots(
            &[
                "gangs-bot-search --iterations 200".to_string(),
                r#"my-bot --name "two words" 'x y'"#.to_string(),
            ],
            2,
        )
        .unwrap();
        assert_eq!(
            words(&slots[0]),
            ["gangs-bot-search", "--iterations", "200"]
        );
        assert_eq!(slots[0].name, "gangs-bot-search --iterations 200");
        assert_eq!(words(&slots[1]), ["my-bot", "--name", "two words", "x y"]);
    }

    #[test]
    fn the_last_bot_fills_the_rest() {
        let slots = bot_slots(&["a".to_string(), "b".to_string()], 4).unwrap();
        let names: Vec<&str> = slots.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "b", "b"]);
        assert_eq!(bot_slots(&["a".to_string()], 3).unwrap().len(), 3);
    }

    #[test]
    fn bad_bot_lists_are_refused() {
        assert!(bot_slots(&[], 4).is_err());
        assert!(bot_slots(&["a".into(), "b".into(), "c".into()], 2).is_err());
        assert!(bot_slots(&["  ".into()], 2).is_err());
        assert!(bot_slots(&["bot 'unclosed".into()], 2).is_err());
    }

    #[test]
    fn programs_resolve_by_path_or_name() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-bot");
        let e = resolve_program(missing.to_str().unwrap()).unwrap_err();
        assert!(e.message.contains("does not exist"), "{}", e.message);
        let e = resolve_program("gangs-no-such-program-anywhere").unwrap_err();
        assert!(e.message.contains("or on PATH"), "{}", e.message);
        // `sh` is on PATH on every unix this runs on.
        #[cfg(unix)]
        assert!(resolve_program("sh").unwrap().is_absolute());
    }

    #[test]
    fn log_tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bot.log");
        std::fs::write(&path, "one\n\ntwo\nthree\n").unwrap();
        assert_eq!(log_tail(&path, 2), "two | three");
        assert_eq!(log_tail(&dir.path().join("none"), 2), "");
    }
}
