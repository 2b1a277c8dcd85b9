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

/// The subcommands clap lists in `gangs ARGS --help` (its "Commands:" section), without `help`.
fn subcommands(args: &[&str]) -> Vec<String> {
    let mut all = args.to_vec();
    all.push("--help");
    let text = help(&all);
    text.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// ARCHITECTURE.md's table of commands is clap's: a row `| \`gangs NAME\` |` for every command,
/// naming each of its subcommands, and no row for a command that does not exist.
#[test]
fn architecture_lists_every_command() {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md beside the workspace's manifest");
    let commands = subcommands(&[]);
    assert!(
        commands.len() > 10 && commands.iter().any(|c| c == "ladder"),
        "clap's list looks wrong: {commands:?}"
    );
    let row = |command: &str| {
        let start = format!("| `gangs {command}` |");
        page.lines()
            .find(|l| l.starts_with(&start))
            .map(str::to_string)
    };
    let mut problems = Vec::new();
    for command in &commands {
        let Some(line) = row(command) else {
            problems.push(format!("no row for `gangs {command}`"));
            continue;
        };
        for sub in subcommands(&[command.as_str()]) {
            if !line.contains(&format!("`{sub}`"))
                && !line.contains(&format!("`gangs {command} {sub}`"))
            {
                problems.push(format!(
                    "the row of `gangs {command}` does not name `{sub}`"
                ));
            }
        }
    }
    for line in page.lines().filter(|l| l.starts_with("| `gangs ")) {
        let name = line["| `gangs ".len()..].split('`').next().unwrap_or("");
        if !commands.iter().any(|c| c == name) {
            problems.push(format!(
                "a row for `gangs {name}`, which clap does not list"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md's commands:\n{}",
        problems.join("\n")
    );
}

/// The help texts that name the games take them from the registry: every kind there, in the
/// commands that take one, and every title in the program's description.
#[test]
fn help_texts_name_every_kind_of_the_registry() {
    let about = help(&["--help"]);
    for kind in gangs_games::kinds() {
        assert!(
            about.contains(kind.title),
            "`gangs --help` misses {}:\n{about}",
            kind.title
        );
    }
    for args in [
        &["new", "--help"][..],
        &["rules", "--help"],
        &["arena", "--help"],
        &["games", "--help"],
        &["ladder", "create", "--help"],
    ] {
        let text = help(args);
        for kind in gangs_games::kinds() {
            assert!(
                text.contains(&format!("`{}`", kind.name)),
                "`gangs {}` misses {}:\n{text}",
                args.join(" "),
                kind.name
            );
        }
    }
}
