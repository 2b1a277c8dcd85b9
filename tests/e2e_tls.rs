//! End to end over TLS: a server with a certificate made in the test (`--tls-cert`/`--tls-key`),
//! a whole game created with the CLI, played by bot processes and followed with `gangs watch`,
//! all on `https://` with `--ca`; then the log replays. Clients that do not trust the
//! certificate, or that speak plain http to it, are refused with a clear error. The
//! certificates people make work as they are: the self-signed one of `openssl req -x509`
//! (`CA:TRUE`, pinned by `--ca`) and the one `gangs cert` writes.

use crate::common;

use common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn a_whole_game_over_tls_with_the_cli_and_bots() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tls = TlsFiles::generate(dir.path());
    let data = dir.path().join("data");
    let server = Server::start_tls(&data, &tls, &[]);
    assert!(server.url().starts_with("https://"));

    let (code, out) = gangs_cli(
        &server,
        &[
            "new",
            "gang-of-four",
            "--players",
            "3",
            "--seed",
            "11",
            "--option",
            "target_score=30",
            "--json",
        ],
    );
    assert_eq!(code, 0, "gangs new over TLS: {out}");
    let created: serde_json::Value =
        serde_json::from_str(out.lines().next().expect("one line")).expect("json");
    let game_id = created["game_id"].as_str().expect("game_id").to_string();

    let mut bots: Vec<_> = (0..3u32)
        .map(|seat| {
            spawn_bot(
                "gangs-bot-greedy",
                &server,
                &game_id,
                Some(seat),
                seat as u64,
            )
        })
        .collect();
    // The CLI follows the game to its end as a spectator, over TLS too.
    let (code, out) = gangs_cli(&server, &["watch", &game_id, "--json"]);
    assert_eq!(code, 0, "gangs watch over TLS: {out}");
    let last: serde_json::Value =
        serde_json::from_str(out.lines().last().expect("updates")).expect("json");
    assert_eq!(last["status"], "finished", "the last update: {last}");
    for bot in &mut bots {
        let status = wait_with_timeout(bot, Duration::from_secs(120));
        assert!(status.success(), "a bot failed over TLS: {status:?}");
    }

    let mut client = server.client().await;
    let records = log(&mut client, &game_id).await;
    gangs_games::replay::replay(&records).expect("the log replays");
    let (code, out) = gangs_cli(&server, &["replay", &game_id, "--verify", "--json"]);
    assert_eq!(code, 0, "gangs replay --verify over TLS: {out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_that_do_not_trust_the_certificate_or_speak_plain_http_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tls = TlsFiles::generate(dir.path());
    let server = Server::start_tls(&dir.path().join("data"), &tls, &[]);
    let https = server.url();
    let http = format!("http://{}", server.addr);

    // No --ca: the system roots do not know a self-signed certificate.
    let output = std::process::Command::new(bin("gangs"))
        .args(["--server", &https, "games"])
        .output()
        .expect("run gangs");
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "an untrusted certificate was accepted"
    );
    assert!(
        text.to_lowercase().contains("certificate"),
        "the error should say the certificate is the problem: {text}"
    );

    // Plain http to a TLS port: refused, nothing hangs.
    let output = std::process::Command::new(bin("gangs"))
        .args(["--server", &http, "games"])
        .output()
        .expect("run gangs");
    assert!(
        !output.status.success(),
        "plain http to a TLS server worked"
    );

    // --ca with an http:// URL: the user meant TLS and is told so.
    let output = std::process::Command::new(bin("gangs"))
        .args(["--server", &http, "--ca"])
        .arg(&tls.cert)
        .arg("games")
        .output()
        .expect("run gangs");
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(text.contains("https://"), "{text}");

    // A bot without --ca stops with the same clear reason instead of retrying for a minute.
    let mut bot = std::process::Command::new(bin("gangs-bot-random"))
        .args(["--server", &https, "--game", "0123456789abcdef"])
        .env_remove("GANGS_CA")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the bot");
    let status = wait_with_timeout(&mut bot, Duration::from_secs(90));
    assert!(!status.success());
}

#[test]
fn the_server_refuses_unreadable_or_wrong_tls_files_at_startup() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tls = TlsFiles::generate(dir.path());
    let run = |cert: &std::path::Path, key: &std::path::Path| {
        std::process::Command::new(bin("gangs-server"))
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path().join("data"))
            .arg("--tls-cert")
            .arg(cert)
            .arg("--tls-key")
            .arg(key)
            .output()
            .expect("run gangs-server")
    };
    let missing = dir.path().join("missing.pem");
    let output = run(&missing, &tls.key);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--tls-cert"));
    // The certificate given as the key.
    let output = run(&tls.cert, &tls.cert);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--tls-key"));
    // One without the other.
    let output = std::process::Command::new(bin("gangs-server"))
        .args(["--listen", "127.0.0.1:0", "--tls-cert"])
        .arg(&tls.cert)
        .output()
        .expect("run gangs-server");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--tls-key"));
}

/// Runs a set-up command, panicking with its output when it fails; returns its stdout.
fn run_ok(command: &mut std::process::Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `gangs new` and a bot's join over TLS with `--ca` set to the server's own certificate.
async fn create_and_join_over_tls(server: &Server) {
    let (code, out) = gangs_cli(server, &["new", "gang-of-four", "--json"]);
    assert_eq!(code, 0, "gangs new over TLS: {out}");
    let created: serde_json::Value =
        serde_json::from_str(out.lines().next().expect("one line")).expect("json");
    let game_id = created["game_id"].as_str().expect("game_id").to_string();
    // A bot (the bots' shared connect code) takes a seat over the same TLS.
    let _bot = spawn_bot("gangs-bot-random", server, &game_id, Some(0), 1);
    let mut client = server.client().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let games = client
            .list_games(gangs_proto::v1::ListGamesRequest::default())
            .await
            .expect("list games")
            .into_inner()
            .games;
        if games
            .iter()
            .any(|g| g.game_id == game_id && g.seats_taken == 1)
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the bot did not take its seat over TLS"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_certificates_people_make_work_with_ca() {
    let dir = tempfile::tempdir().expect("temp dir");

    // The command most guides give: a self-signed certificate with CA:TRUE.
    let made = dir.path().join("openssl");
    std::fs::create_dir_all(&made).expect("mkdir");
    let openssl = TlsFiles::openssl(&made);
    let server = Server::start_tls(&dir.path().join("data-openssl"), &openssl, &[]);
    create_and_join_over_tls(&server).await;

    // `gangs cert` writes a pair that works at once; it does not overwrite a key by accident.
    let out = dir.path().join("gangs-cert");
    let cert_command = || {
        let mut command = std::process::Command::new(bin("gangs"));
        command
            .args([
                "cert",
                "--host",
                "127.0.0.1",
                "--host",
                "localhost",
                "--out",
            ])
            .arg(&out);
        command
    };
    run_ok(&mut cert_command());
    let written = TlsFiles {
        cert: out.join("cert.pem"),
        key: out.join("key.pem"),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&written.key)
            .expect("key.pem")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "key.pem is readable by others: {mode:o}");
    }
    let again = cert_command().output().expect("run gangs cert");
    assert!(!again.status.success(), "gangs cert overwrote its key");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    let generated = Server::start_tls(&dir.path().join("data-gangs-cert"), &written, &[]);
    create_and_join_over_tls(&generated).await;

    // --ca trusts exactly its file: the openssl certificate does not vouch for the other server.
    let output = std::process::Command::new(bin("gangs"))
        .args(["--server", &generated.url(), "--ca"])
        .arg(&openssl.cert)
        .arg("games")
        .output()
        .expect("run gangs");
    assert!(
        !output.status.success(),
        "a certificate not in --ca was trusted"
    );
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(text.to_lowercase().contains("certificate"), "{text}");
}
