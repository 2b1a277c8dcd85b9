//! The shape of the code, kept: no production file over 900 lines, no function over 150 (a
//! longer one is named steps), and inside the host (`service/src/`) every import runs down
//! the stages declared in [`HOST_STAGES`], never up. The files are read as the other
//! repository guards read them (`repository::readable_lines`: test modules and plain comments
//! left out).

use crate::repository::{readable_lines, tracked_rust_sources};

/// Most lines of a production source file.
const MAX_FILE_LINES: usize = 900;
/// Most lines of one function, its signature and closing brace included.
const MAX_FUNCTION_LINES: usize = 150;

/// The host's top-level modules, from the ground up: each may import only the ones listed
/// before it (its own files aside). A module added to the host gets its place here.
const HOST_STAGES: &[&str] = &[
    // Leaves: nothing of the host.
    "error",
    "secret",
    "durations",
    "write_coalescing",
    "grpc_web",
    "logging",
    "allocator",
    // What every stage reports through, and the bounds of what clients send.
    "metrics",
    "bounds",
    "limits",
    // The log, and the connections of every port.
    "store",
    "connections",
    // One game: its actor; the directory of games; several nodes on one log.
    "actor",
    "registry",
    "cluster",
    // Who may call what, the live directory feed, the typed API and its gRPC adapters.
    "front",
    "directory",
    "api",
    "watch_route",
    // Ladders over the typed API; what reads both.
    "ladder",
    "webhooks",
    "viewer",
    // The wiring.
    "server",
];

/// A production Rust source: under a crate's `src/`, not a test, bench or example.
fn is_production(path: &str) -> bool {
    path.ends_with(".rs")
        && path.contains("src/")
        && !path.starts_with("tests/")
        && !["/tests/", "/benches/", "/examples/"]
            .iter()
            .any(|dir| path.contains(dir))
}

/// The functions of `lines` longer than `limit` lines, as `(first line, name, lines)`: a
/// function runs from its `fn` line to the first line at its indentation that closes it.
fn long_functions(lines: &[String], limit: usize) -> Vec<(usize, String, usize)> {
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let signature = code
            .trim_start_matches("pub ")
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("const ")
            .trim_start_matches("async ")
            .trim_start_matches("unsafe ");
        let Some(rest) = signature.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // A declaration without a body (in a trait) ends at its `;`.
        let end = lines[i..]
            .iter()
            .position(|l| {
                l.starts_with(indent) && {
                    let after = &l[indent.len()..];
                    after.starts_with('}') || (after == code && code.ends_with(';'))
                }
            })
            .map_or(lines.len(), |k| i + k);
        let length = end - i + 1;
        if length > limit {
            long.push((i + 1, name, length));
        }
    }
    long
}

#[test]
fn the_long_function_reader_measures_functions_and_skips_declarations() {
    let mut text = String::from("fn short() {\n    a();\n}\n    fn declared(&self);\n");
    text.push_str("pub async fn long() {\n");
    for _ in 0..5 {
        text.push_str("    if x {\n        y();\n    }\n");
    }
    text.push_str("}\n");
    let lines: Vec<String> = text.lines().map(String::from).collect();
    assert_eq!(
        long_functions(&lines, 10),
        vec![(5, "long".to_string(), 17)],
        "{text}"
    );
    assert!(long_functions(&lines, 17).is_empty());
}

#[test]
fn no_production_file_or_function_outgrows_its_limit() {
    let sources = tracked_rust_sources();
    let production: Vec<_> = sources
        .iter()
        .filter(|(path, _)| is_production(path))
        .collect();
    // The walk found the code (a wrong root or filter would pass vacuously).
    for expected in [
        "service/src/server.rs",
        "bots/policies/src/lib.rs",
        "cli/src/main.rs",
    ] {
        assert!(
            production.iter().any(|(p, _)| p == expected),
            "{expected} not read"
        );
    }
    let mut over = Vec::new();
    for (path, text) in production {
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            over.push(format!(
                "{path}: {lines} lines (at most {MAX_FILE_LINES}: split it by role)"
            ));
        }
        let readable: Vec<String> = readable_lines(text, "rs");
        for (line, name, length) in long_functions(&readable, MAX_FUNCTION_LINES) {
            over.push(format!(
                "{path}:{line}: fn {name} is {length} lines (at most {MAX_FUNCTION_LINES}: name its steps)"
            ));
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

/// The host's top-level module a source file of `service/src/` belongs to.
fn host_module(path: &str) -> Option<&str> {
    let rel = path.strip_prefix("service/src/")?;
    let top = rel.split('/').next()?;
    Some(top.strip_suffix(".rs").unwrap_or(top))
}

/// The host's modules that `text` names with `crate::`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let before = rest[..at].chars().last();
        // `gangs_service::crate::…` does not exist; `some_crate::x` is another name.
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
        rest = after;
    }
    names
}

#[test]
fn the_host_imports_only_down_its_stages() {
    let sources = tracked_rust_sources();
    let mut up = Vec::new();
    let mut unplaced = Vec::new();
    let mut read = 0;
    for (path, text) in &sources {
        let Some(module) = host_module(path) else {
            continue;
        };
        if ["lib", "main"].contains(&module) {
            continue;
        }
        read += 1;
        let Some(own) = HOST_STAGES.iter().position(|m| *m == module) else {
            unplaced.push(module.to_string());
            continue;
        };
        let code = readable_lines(text, "rs").join("\n");
        for name in crate_paths(&code) {
            if name == module {
                continue;
            }
            match HOST_STAGES.iter().position(|m| *m == name) {
                Some(stage) if stage < own => {}
                Some(_) => up.push(format!(
                    "{path} imports crate::{name}, a stage above {module}"
                )),
                None => unplaced.push(name),
            }
        }
    }
    assert!(read > 50, "only {read} host files read");
    unplaced.sort();
    unplaced.dedup();
    assert!(
        unplaced.is_empty(),
        "host modules with no place in HOST_STAGES: {unplaced:?}"
    );
    up.sort();
    up.dedup();
    assert!(up.is_empty(), "{}", up.join("\n"));
}

#[test]
fn the_stage_reader_finds_crate_paths_and_only_them() {
    assert_eq!(
        crate_paths("use crate::store::Logs; x = crate::actor::unix_ms(); other_crate::no;"),
        vec!["store".to_string(), "actor".to_string()]
    );
    assert_eq!(host_module("service/src/ladder/play.rs"), Some("ladder"));
    assert_eq!(host_module("service/src/bounds.rs"), Some("bounds"));
    assert_eq!(host_module("cli/src/main.rs"), None);
}
