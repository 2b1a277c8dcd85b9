//! Test harness for the end-to-end tests: runs the real `gangs-server` binary on a free port
//! with a temporary data dir, the real bot binaries and the real `gangs` CLI.
//!
//! The binaries come from the same target dir and profile as the test: the first [`bin`] call
//! of a test process builds every binary of the workspace (`cargo build --workspace --bins
//! --tests`, a no-op after `cargo test --workspace`), so `cargo test --test e2e e2e_x::` on a clean or
//! stale target runs the binaries of the code under test, never missing or old ones.
//!
//! The servers log warnings only; `GANGS_TEST_SERVER_LOG=info,gangs_service::cluster=debug`
//! (a `RUST_LOG` filter) says more when a test needs explaining.

#![allow(dead_code)]

pub mod hosted;
pub mod ladder;
pub mod nats;
pub mod observe;

use gangs_proto::v1 as pb;
use gangs_proto::v1::games_client::GamesClient;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};
use tonic::transport::Channel;

/// The repository's root (the workspace), where the tests' crate (`tests/`) sits.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository")
        .to_path_buf()
}

/// Path of a workspace binary in the test's own target dir, built first (once per process).
pub fn bin(name: &str) -> PathBuf {
    static BUILT: Once = Once::new();
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test> -> target/<profile>
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    BUILT.call_once(|| build_workspace_binaries(dir));
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing after `cargo build --workspace --bins --tests`",
        path.display()
    );
    path
}

/// Runs `cargo build --workspace --bins --tests` with the profile and target dir the test was
/// built with (read from where the test executable sits), and fails the test if the build
/// fails. `--tests` beside `--bins`: with test targets in the build, the dependencies' features
/// are those `cargo test --workspace` resolved (dev-dependencies' features included), so the
/// binaries it built are fresh; `--bins` alone resolved other features and rebuilt a large
/// part of the dependencies and every binary a second time.
fn build_workspace_binaries(profile_dir: &Path) {
    // `cargo test` sets CARGO for the test process; the build-time value covers running the
    // test executable by hand.
    let cargo = std::env::var_os("CARGO")
        .or_else(|| option_env!("CARGO").map(Into::into))
        .unwrap_or_else(|| "cargo".into());
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => panic!("no profile dir above {}", profile_dir.display()),
    };
    let target_dir = profile_dir
        .parent()
        .expect("a target dir above the profile dir");
    let manifest = repo_root().join("Cargo.toml");
    let mut command = Command::new(&cargo);
    // What `cargo test` sets for the test process describes the test's crate, not this build:
    // left in, build scripts that watch such a variable (ring's watches CARGO_MANIFEST_DIR) see
    // it change and everything above them is rebuilt, here and again by the next `cargo build`.
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let per_crate = [
            "CARGO_MANIFEST_DIR",
            "CARGO_MANIFEST_PATH",
            "CARGO_MANIFEST_LINKS",
            "CARGO_CRATE_NAME",
            "CARGO_BIN_NAME",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
            "OUT_DIR",
        ];
        if per_crate.contains(&name)
            || name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_EXE_")
        {
            command.env_remove(name);
        }
    }
    let output = command
        .args([
            "build",
            "--workspace",
            "--bins",
            "--tests",
            "--profile",
            profile,
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running {cargo:?} build: {e}"));
    assert!(
        output.status.success(),
        "`cargo build --workspace --bins --tests --profile {profile}` failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A running `gangs-server` process.
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub data_dir: PathBuf,
    /// The flags it was started with (a restart keeps them).
    pub flags: Vec<String>,
    /// Set when it serves TLS: the certificate clients trust (`--ca`); URLs are then https://.
    pub ca: Option<PathBuf>,
    /// Set by `start_logged`: the file its stderr goes to (appended across restarts).
    pub stderr_log: Option<PathBuf>,
    /// Extra environment variables (a restart keeps them): `start_with_env`.
    pub env: Vec<(String, String)>,
}

/// A self-signed certificate for 127.0.0.1 and localhost, made for the test, in `dir`.
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TlsFiles {
    /// The self-signed certificate most guides make (`openssl req -x509`: it says `CA:TRUE`),
    /// for 127.0.0.1 and localhost, in `dir` (checked to say `CA:TRUE`).
    pub fn openssl(dir: &Path) -> TlsFiles {
        let files = TlsFiles {
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
        };
        let output = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30",
            ])
            .args(["-subj", "/CN=localhost"])
            .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
            .arg("-keyout")
            .arg(&files.key)
            .arg("-out")
            .arg(&files.cert)
            .output()
            .expect("run openssl (`apt-get install -y openssl`; .ci/run does it)");
        assert!(
            output.status.success(),
            "openssl req failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = Command::new("openssl")
            .args(["x509", "-noout", "-text", "-in"])
            .arg(&files.cert)
            .output()
            .expect("run openssl x509");
        assert!(
            String::from_utf8_lossy(&text.stdout).contains("CA:TRUE"),
            "the certificate must say CA:TRUE, as the guides' does"
        );
        files
    }

    pub fn generate(dir: &Path) -> TlsFiles {
        let certified =
            rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string(), "localhost".into()])
                .expect("generate a certificate");
        let cert = dir.join("cert.pem");
        let key = dir.join("key.pem");
        std::fs::write(&cert, certified.cert.pem()).expect("write cert.pem");
        std::fs::write(&key, certified.signing_key.serialize_pem()).expect("write key.pem");
        TlsFiles { cert, key }
    }
}

impl Server {
    /// Starts the server on `127.0.0.1:port` (0: a free port) and waits until it serves.
    pub fn start_on(data_dir: &Path, port: u16) -> Server {
        Server::start_with(data_dir, port, &[])
    }

    /// As `start_on`, with extra flags.
    pub fn start_with(data_dir: &Path, port: u16, flags: &[&str]) -> Server {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        Server::spawn(data_dir, port, flags, None, None)
    }

    /// As `start_with` on a free port, with extra environment variables (a test-only fail
    /// point, for one).
    pub fn start_with_env(data_dir: &Path, flags: &[&str], env: &[(&str, &str)]) -> Server {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Server::spawn_env(data_dir, 0, flags, None, None, env)
    }

    /// As `start_with` on a free port, its stderr (the tracing log) appended to `stderr_log`
    /// so that a test can read what the server logged (`stderr_text`).
    pub fn start_logged(data_dir: &Path, flags: &[&str], stderr_log: &Path) -> Server {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        Server::spawn(data_dir, 0, flags, None, Some(stderr_log.to_path_buf()))
    }

    /// As `start_logged`, with extra environment variables (`RUST_LOG=info` to read what the
    /// server logs below warnings).
    pub fn start_logged_with_env(
        data_dir: &Path,
        flags: &[&str],
        stderr_log: &Path,
        env: &[(&str, &str)],
    ) -> Server {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let log = Some(stderr_log.to_path_buf());
        Server::spawn_env(data_dir, 0, flags, None, log, env)
    }

    /// What the server wrote to stderr so far (`start_logged` only).
    pub fn stderr_text(&self) -> String {
        let path = self
            .stderr_log
            .as_ref()
            .expect("a server started with start_logged");
        std::fs::read_to_string(path).unwrap_or_default()
    }

    /// A server speaking TLS with `tls` (clients trust its certificate through `--ca`).
    pub fn start_tls(data_dir: &Path, tls: &TlsFiles, flags: &[&str]) -> Server {
        let mut all = vec![
            "--tls-cert".to_string(),
            tls.cert.display().to_string(),
            "--tls-key".to_string(),
            tls.key.display().to_string(),
        ];
        all.extend(flags.iter().map(|f| f.to_string()));
        Server::spawn(data_dir, 0, all, Some(tls.cert.clone()), None)
    }

    fn spawn(
        data_dir: &Path,
        port: u16,
        flags: Vec<String>,
        ca: Option<PathBuf>,
        stderr_log: Option<PathBuf>,
    ) -> Server {
        Server::spawn_env(data_dir, port, flags, ca, stderr_log, Vec::new())
    }

    fn spawn_env(
        data_dir: &Path,
        port: u16,
        flags: Vec<String>,
        ca: Option<PathBuf>,
        stderr_log: Option<PathBuf>,
        env: Vec<(String, String)>,
    ) -> Server {
        let stderr = match &stderr_log {
            Some(path) => Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .expect("open the server's stderr log"),
            ),
            None => Stdio::inherit(),
        };
        let mut child = Command::new(bin("gangs-server"))
            .args(&flags)
            .args(["--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
            .arg(data_dir)
            .env(
                "RUST_LOG",
                std::env::var("GANGS_TEST_SERVER_LOG").unwrap_or("warn".into()),
            )
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start gangs-server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the server's first line");
        let Some(addr) = line.trim().strip_prefix("gangs-server listening on ") else {
            // Nothing read: the server exited on its way up (its reason is on its stderr).
            let status = if line.is_empty() {
                child.wait().ok()
            } else {
                None
            };
            panic!("gangs-server did not start: first line {line:?}, exit status {status:?}");
        };
        let addr = addr.to_string();
        Server {
            child,
            addr,
            data_dir: data_dir.to_path_buf(),
            flags,
            ca,
            stderr_log,
            env,
        }
    }

    pub fn start(data_dir: &Path) -> Server {
        Server::start_on(data_dir, 0)
    }

    pub fn url(&self) -> String {
        let scheme = if self.ca.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// `--ca FILE` for a client of this server (nothing when it speaks plain http).
    pub fn ca_args(&self) -> Vec<std::ffi::OsString> {
        match &self.ca {
            Some(ca) => vec!["--ca".into(), ca.clone().into_os_string()],
            None => Vec::new(),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// SIGKILL: no graceful shutdown, no last flush.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM: waits until the server stopped by itself (within 30 s) and asserts it stopped
    /// cleanly.
    pub fn terminate(&mut self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        let status = wait_with_timeout(&mut self.child, Duration::from_secs(30));
        assert!(
            status.success(),
            "the server stopped on SIGTERM with {status}"
        );
    }

    /// A new process on the same port and data dir. Started once: a server that exits on its
    /// way up fails the test (a retry here once hid a node that exited after a NATS node's
    /// death, docs/deployment.md); only the port is waited for, in case the OS still holds it.
    pub fn restart(&mut self) {
        self.kill9();
        let port = self.port();
        let deadline = Instant::now() + Duration::from_secs(5);
        // Bound and dropped at once, as the server binds it (SO_REUSEADDR on both sides).
        while std::net::TcpListener::bind(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "port {port} still taken 5 s after the server's SIGKILL"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // The old process is already reaped; dropping it is harmless.
        *self = Server::spawn_env(
            &self.data_dir,
            port,
            self.flags.clone(),
            self.ca.clone(),
            self.stderr_log.clone(),
            self.env.clone(),
        );
    }

    pub async fn client(&self) -> GamesClient<Channel> {
        for _ in 0..100 {
            let endpoint =
                gangs_proto::connect::endpoint(&self.url(), self.ca.as_deref()).expect("endpoint");
            if let Ok(channel) = endpoint.connect().await {
                return GamesClient::new(channel);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("cannot connect to {}", self.url());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A bot process, killed when dropped: a test that fails mid-game must not leave bots
/// retrying a dead server for a minute (their noise lands in the next tests' output).
pub struct Bot(pub Child);

impl std::ops::Deref for Bot {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Bot {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        // Nothing to do for a bot that ended; otherwise it ends now.
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Starts a bot process for `game` (it joins the first free seat, or `seat`). `bot` is a
/// workspace binary name, optionally followed by its own arguments (`gangs-bot-search --budget-ms 20`).
pub fn spawn_bot(bot: &str, server: &Server, game: &str, seat: Option<u32>, seed: u64) -> Bot {
    let mut words = bot.split_whitespace();
    let mut command = Command::new(bin(words.next().expect("a bot name")));
    command.args(words);
    command
        .args([
            "--server",
            &server.url(),
            "--game",
            game,
            "--seed",
            &seed.to_string(),
        ])
        .args(server.ca_args())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if let Some(seat) = seat {
        command.args(["--seat", &seat.to_string()]);
    }
    Bot(command
        .spawn()
        .unwrap_or_else(|e| panic!("start {bot}: {e}")))
}

/// Waits for a child with a timeout; panics (killing it) if it does not end in time.
pub fn wait_with_timeout(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            panic!("process {} did not finish within {timeout:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs the `gangs` CLI and returns (exit code, stdout).
pub fn gangs_cli(server: &Server, args: &[&str]) -> (i32, String) {
    let output = Command::new(bin("gangs"))
        .arg("--server")
        .arg(server.url())
        .args(server.ca_args())
        .args(args)
        .output()
        .expect("run gangs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

pub async fn create(
    client: &mut GamesClient<Channel>,
    kind: &str,
    options: Option<pb::GameOptions>,
    seed: u64,
) -> String {
    client
        .create_game(pb::CreateGameRequest {
            kind: kind.into(),
            options,
            seed: Some(seed),
            preset: None,
            ..Default::default()
        })
        .await
        .expect("create game")
        .into_inner()
        .game_id
}

/// The whole log of a game.
/// Plays one of `update`'s legal actions, chosen by `rng`, as the seat of `token` (the listed
/// action must be accepted); false when the seat may not act.
pub async fn act_at_random(
    client: &mut GamesClient<Channel>,
    game_id: &str,
    token: &str,
    update: &pb::Update,
    rng: &mut impl rand::Rng,
) -> bool {
    if update.legal_actions.is_empty() {
        return false;
    }
    let action = update.legal_actions[rng.random_range(0..update.legal_actions.len())].clone();
    client
        .act(pb::ActRequest {
            game_id: game_id.into(),
            token: token.into(),
            action: Some(action),
            expected_seq: Some(update.seq),
            action_id: String::new(),
        })
        .await
        .expect("a listed legal action is accepted");
    true
}

pub async fn log(client: &mut GamesClient<Channel>, game_id: &str) -> Vec<pb::LogRecord> {
    let mut stream = client
        .get_log(pb::GetLogRequest {
            game_id: game_id.into(),
            from_seq: 0,
        })
        .await
        .expect("get log")
        .into_inner();
    let mut records = Vec::new();
    while let Some(record) = stream.message().await.expect("log record") {
        records.push(record);
    }
    records
}

/// The first page of the games the server lists (the default filters).
pub async fn listed_games(client: &mut GamesClient<Channel>) -> Vec<pb::GameSummary> {
    client
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect("list")
        .into_inner()
        .games
}

pub async fn status(client: &mut GamesClient<Channel>, game_id: &str) -> pb::GameSummary {
    listed_games(client)
        .await
        .into_iter()
        .find(|g| g.game_id == game_id)
        .expect("game listed")
}
