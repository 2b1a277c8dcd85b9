//! The `gangs` command line as a user first meets it: `--help` lists every command, and
//! `gangs act --help` lists the action words of both games. (Having an integration test also
//! makes `cargo test --workspace` build the binary that the end-to-end tests run.)

use std::process::Command;

const GANGS: &str = env!("CARGO_BIN_EXE_gangs");

fn help(args: &[&str]) -> String {
    let output = Command::new(GANGS).args(args).output().unwrap();
    assert!(output.status.success(), "gangs {args:?} failed");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn help_lists_every_command() {
    let text = help(&["--help"]);
    for command in [
        "new", "join", "watch", "act", "games", "log", "replay", "play", "arena",
    ] {
        assert!(
            text.contains(command),
            "`gangs --help` does not list {command}:\n{text}"
        );
    }
}

#[test]
fn act_help_lists_the_action_words_of_both_games() {
    let text = help(&["act", "--help"]);
    for word in ["play", "pass", "give", "take", "return", "ready", "guess"] {
        assert!(
            text.contains(word),
            "`gangs act --help` does not mention {word}:\n{text}"
        );
    }
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    let output = Command::new(GANGS)
        .args(["--server", "http://127.0.0.1:1", "games"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("127.0.0.1:1"),
        "the error should name the server: {stderr}"
    );
}
