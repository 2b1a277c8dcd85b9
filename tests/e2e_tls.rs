//! End to end over TLS: a server with a certificate made in the test (`--tls-cert`/`--tls-key`),
//! a whole game created with the CLI, played by bot processes and followed with `gangs watch`,
//! all on `https://` with `--ca`; then the log replays. Clients that do not trust the
//! certificate, or that speak plain http to it, are refused with a clear error.

mod common;

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
