//! The `gangs-server` binary's command line: its flags and its refusal to start on a taken
//! address. (Having an integration test also makes `cargo test --workspace` build the binary
//! that the root package's end-to-end tests start.)

use std::process::Command;

const SERVER: &str = env!("CARGO_BIN_EXE_gangs-server");

#[test]
fn help_names_every_flag_and_its_env_var() {
    let output = Command::new(SERVER).arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "--listen",
        "--data-dir",
        "--api-key",
        "--watch-buffer",
        "--keep-finished-ms",
        "GANGS_KEEP_FINISHED_MS",
        "GANGS_LISTEN",
        "GANGS_DATA_DIR",
        "127.0.0.1:50051",
        "./gangs-data",
        "--store",
        "GANGS_STORE",
        "--nats-replicas",
        "--nats-creds",
        "--nats-user",
        "--nats-password",
        "migrate",
    ] {
        assert!(
            help.contains(needle),
            "--help does not mention {needle}:\n{help}"
        );
    }
}

#[test]
fn a_taken_address_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = std::env::temp_dir().join(format!("gangs-flags-{}", std::process::id()));
    let output = Command::new(SERVER)
        .args(["--listen", &addr, "--data-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot listen") && stderr.contains(&addr),
        "unclear error: {stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
