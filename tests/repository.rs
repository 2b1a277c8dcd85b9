//! The repository stands alone: no tracked file points outside it (the rules once lived in a
//! sibling `shared/` folder that a fresh clone does not have), and every relative link in the
//! Markdown files leads to a file that exists in the repository.

use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    crate::common::repo_root()
}

/// Every tracked file, as paths relative to the root (falls back to a walk when git is absent,
/// e.g. in a source tarball, so the check never silently covers nothing).
fn tracked_files() -> Vec<PathBuf> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output();
    if let Ok(out) = out {
        if out.status.success() && !out.stdout.is_empty() {
            return out
                .stdout
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
                .collect();
        }
    }
    let mut files = Vec::new();
    walk(&root(), Path::new(""), &mut files);
    files
}

fn walk(root: &Path, rel: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(root.join(rel)).unwrap().flatten() {
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        if name_str.starts_with('.') && name_str != ".ci" || name_str == "target" {
            continue;
        }
        let rel = rel.join(&name);
        if entry.file_type().unwrap().is_dir() {
            walk(root, &rel, files);
        } else {
            files.push(rel);
        }
    }
}

/// The tracked Rust sources, as (path relative to the root with `/`, text).
pub(crate) fn tracked_rust_sources() -> Vec<(String, String)> {
    text_files()
        .into_iter()
        .map(|(path, text)| (path.to_string_lossy().replace('\\', "/"), text))
        .filter(|(path, _)| path.ends_with(".rs"))
        .collect()
}

/// The text files among the tracked ones (binary files and lock files are skipped).
fn text_files() -> Vec<(PathBuf, String)> {
    let files = tracked_files();
    assert!(files.len() > 20, "found only {} files", files.len());
    files
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "Cargo.lock"))
        .filter_map(|p| {
            let text = std::fs::read_to_string(root().join(&p)).ok()?;
            Some((p, text))
        })
        .collect()
}

#[test]
fn no_tracked_file_points_to_the_shared_folder_outside_the_repository() {
    // Spelled in pieces so that this file does not match itself.
    let patterns = [
        format!("../{}/", "shared"),
        format!("{}/{}", "shared", "rules"),
        format!("../{}/", "seeds"),
    ];
    let mut found = Vec::new();
    for (path, text) in text_files() {
        for (n, line) in text.lines().enumerate() {
            for p in &patterns {
                if line.contains(p.as_str()) {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "links out of the repository (the rules are in docs/rules/):\n{}",
        found.join("\n")
    );
}

/// `](target)` link targets of a Markdown text.
fn markdown_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            links.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    links
}

/// Resolves `link` relative to the folder of `file`; `None` if it climbs above the root.
fn resolve(file: &Path, link: &str) -> Option<PathBuf> {
    let mut parts: Vec<Component> = file
        .parent()
        .unwrap_or(Path::new(""))
        .components()
        .collect();
    for c in Path::new(link).components() {
        match c {
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            other => parts.push(other),
        }
    }
    Some(parts.iter().collect())
}

#[test]
fn every_relative_markdown_link_leads_to_a_file_in_the_repository() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for (path, text) in text_files() {
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        for link in markdown_links(&text) {
            let target = link.split('#').next().unwrap_or("").trim();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            match resolve(&path, target) {
                Some(p) if root().join(&p).exists() => {}
                Some(p) => broken.push(format!(
                    "{}: {link} ({} is missing)",
                    path.display(),
                    p.display()
                )),
                None => broken.push(format!("{}: {link} leaves the repository", path.display())),
            }
        }
    }
    assert!(
        checked >= 3,
        "only {checked} links checked: is the README there?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// "1.88" or "1.88.0" as comparable numbers.
fn version(text: &str) -> Vec<u64> {
    let mut v: Vec<u64> = text.split('.').map(|p| p.parse().unwrap()).collect();
    v.resize(3, 0);
    v
}

#[test]
fn the_declared_rust_version_is_what_the_dependencies_need() {
    // The workspace's `rust-version`, read from the manifest itself.
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let declared = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("rust-version in [workspace.package]")
        .trim_matches('"')
        .to_string();
    // The platform being built (Linux in CI and in the image): other platforms' crates (the
    // windows-* family) may need a newer Rust, which `rust-version` does not promise.
    let rustc = Command::new("rustc").arg("-vV").output().unwrap();
    let rustc = String::from_utf8_lossy(&rustc.stdout).into_owned();
    let host = rustc
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host");
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--filter-platform", host])
        .current_dir(root())
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut needs: Vec<(Vec<u64>, String)> = Vec::new();
    // With --filter-platform, `packages` still lists every platform's; `resolve` does not.
    let used: std::collections::HashSet<&str> = metadata["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    for package in metadata["packages"].as_array().unwrap() {
        if !used.contains(package["id"].as_str().unwrap()) {
            continue;
        }
        let name = package["name"].as_str().unwrap();
        match package["rust_version"].as_str() {
            Some(v) if name.starts_with("gangs") => {
                assert_eq!(
                    v, declared,
                    "{name} must inherit the workspace's rust-version"
                )
            }
            Some(v) => needs.push((version(v), format!("{name} {}", package["version"]))),
            None => {}
        }
    }
    let (most, who) = needs
        .iter()
        .max()
        .expect("dependencies declare rust versions");
    assert!(
        version(&declared) >= *most,
        "rust-version is {declared}, but {who} needs {most:?}: raise rust-version"
    );
    // And the toolchain running the tests is at least as new.
    let running = rustc
        .lines()
        .find_map(|l| l.strip_prefix("release: "))
        .expect("rustc -vV names its release")
        .split('-')
        .next()
        .unwrap();
    assert!(
        version(running) >= version(&declared),
        "rustc {running} is older than {declared}"
    );
}

/// The option table of a rules page: rows of (key, type, default, range), `\|` unescaped.
fn option_table(page: &str) -> Vec<[String; 4]> {
    let start = page
        .find("| key | type | default | range | meaning |")
        .expect("an option table");
    page[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|line| {
            let cells: Vec<String> = line
                .replace("\\|", "\u{0}")
                .split('|')
                .map(|c| c.trim().replace('\u{0}', "|"))
                .collect();
            // cells[0] is the empty text before the first `|`.
            [
                cells[1].trim_matches('`').to_string(),
                cells[2].clone(),
                cells[3].clone(),
                cells[4].clone(),
            ]
        })
        .collect()
}

#[test]
fn the_rules_pages_list_exactly_the_options_of_the_engines_schemas() {
    for kind in gangs_games::kinds() {
        let path = root().join(format!("docs/rules/{}.md", kind.name));
        let page =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let documented = option_table(&page);
        let declared: Vec<[String; 4]> = kind
            .options()
            .iter()
            .map(|spec| {
                [
                    spec.key.to_string(),
                    spec.kind.name().to_string(),
                    spec.default.to_string(),
                    spec.accepts(),
                ]
            })
            .collect();
        for row in &declared {
            assert!(
                documented.contains(row),
                "{}: the engine declares {row:?}, the page's table does not have that row",
                path.display()
            );
        }
        for row in &documented {
            assert!(
                declared.contains(row),
                "{}: the table has {row:?}, the engine declares no such option",
                path.display()
            );
        }
    }
}

/// ARCHITECTURE.md's "Adding a game": the places that are a game's own (a `<game>` path per
/// item) and, per shared file, the entries a game adds there (its backticked `<game>` texts).
/// The guard below allows exactly these, so the page and the guard cannot drift apart.
struct AddingAGame {
    own: Vec<String>,
    shared: Vec<(String, Vec<String>)>,
}

fn adding_a_game() -> AddingAGame {
    let page = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = page
        .find("## Adding a game")
        .expect("a section \"Adding a game\"");
    let section = &page[start + 3..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let (own, shared) = section
        .split_once("One entry in each of these shared files:")
        .expect(
            "the section lists the shared files after \"One entry in each of these shared files:\"",
        );
    let items = |part: &str| -> Vec<Vec<String>> {
        part.lines()
            .filter(|l| l.starts_with("- `"))
            .map(|l| {
                l.split('`')
                    .skip(1)
                    .step_by(2)
                    .map(str::to_string)
                    .collect()
            })
            .collect()
    };
    let own: Vec<String> = items(own).into_iter().map(|t| t[0].clone()).collect();
    let shared: Vec<(String, Vec<String>)> = items(shared)
        .into_iter()
        .map(|t| {
            let entries = t[1..]
                .iter()
                .filter(|e| e.contains("<game>"))
                .cloned()
                .collect();
            (t[0].clone(), entries)
        })
        .collect();
    assert!(
        own.iter().all(|p| p.contains("<game>")) && own.len() >= 4 && shared.len() >= 4,
        "the section \"Adding a game\" reads wrong: own {own:?}, shared {shared:?}"
    );
    AddingAGame { own, shared }
}

/// `text` with what the guard does not read blanked out, line for line (numbers stay right):
/// test modules (`#[cfg(test)] mod … { … }`) and comments that are not doc comments (`//`,
/// `/* … */`, `<!-- … -->`). Doc comments (`///`, `//!`: also clap's `--help` texts) are read,
/// as is everything else, a `#[cfg(test)]` helper outside a test module included.
pub(crate) fn readable_lines(text: &str, ext: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut test_block: Option<i64> = None;
    let mut block_comment: Option<&str> = None;
    let mut after_cfg_test = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(depth) = test_block.as_mut() {
            *depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
            if *depth <= 0 {
                test_block = None;
            }
            out.push(String::new());
            continue;
        }
        if let Some(end) = block_comment {
            if t.contains(end) {
                block_comment = None;
            }
            out.push(String::new());
            continue;
        }
        let is_mod_block = ["mod ", "pub mod ", "pub(crate) mod "]
            .iter()
            .any(|p| t.starts_with(p))
            && t.ends_with('{');
        if ext == "rs" && after_cfg_test && is_mod_block {
            test_block = Some(line.matches('{').count() as i64 - line.matches('}').count() as i64);
            out.push(String::new());
            continue;
        }
        if !t.is_empty() {
            after_cfg_test = t == "#[cfg(test)]";
        }
        let (open, close) = if ext == "html" {
            ("<!--", "-->")
        } else {
            ("/*", "*/")
        };
        if ext != "rs" && t.starts_with(open) {
            if !t[open.len()..].contains(close) {
                block_comment = Some(close);
            }
            out.push(String::new());
            continue;
        }
        let plain_comment = t.starts_with("//") && !t.starts_with("///") && !t.starts_with("//!");
        out.push(if plain_comment {
            String::new()
        } else {
            line.to_string()
        });
    }
    out
}

#[test]
fn the_guard_reads_doc_comments_and_helpers_and_skips_test_modules_and_comments() {
    let text = "/// doc A\n// plain B\nfn c() {}\n#[cfg(test)]\nfn helper_d() {}\n#[cfg(test)]\nmod tests {\n    fn e() { if x { } }\n}\nfn f() {}\n";
    let read = readable_lines(text, "rs").join("\n");
    for kept in ["doc A", "fn c", "helper_d", "fn f"] {
        assert!(read.contains(kept), "{kept} not read: {read}");
    }
    for skipped in ["plain B", "fn e"] {
        assert!(!read.contains(skipped), "{skipped} read: {read}");
    }
    let css = readable_lines("/* a\n b */\n.c { }\n", "css").join("\n");
    assert!(!css.contains('b') && css.contains(".c"), "{css}");
    let html = readable_lines("<!-- a\n b -->\n<p>c</p>\n", "html").join("\n");
    assert!(!html.contains(" b") && html.contains("<p>c"), "{html}");
}

/// The files declared as test modules (`#[cfg(test)] mod NAME;`) among `sources`: a test
/// module in a file of its own, skipped whole like a `mod tests { … }` block.
fn test_module_files(sources: &[(String, String)]) -> Vec<String> {
    let mut files = Vec::new();
    for (path, text) in sources.iter().filter(|(p, _)| p.ends_with(".rs")) {
        let (dir, file) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
        let module_dir = match file {
            "mod.rs" | "lib.rs" | "main.rs" => dir.to_string(),
            other => format!("{dir}/{}", other.trim_end_matches(".rs")),
        };
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            let name = ["mod ", "pub mod ", "pub(crate) mod "]
                .iter()
                .find_map(|p| pair[1].strip_prefix(p))
                .and_then(|rest| rest.strip_suffix(';'));
            if let (true, Some(name)) = (pair[0] == "#[cfg(test)]", name) {
                files.push(format!("{module_dir}/{name}.rs"));
                files.push(format!("{module_dir}/{name}/"));
            }
        }
    }
    files
}

/// Whether `rel` is one of `places`: a file named whole, or under a folder (ending in `/`).
fn covers(places: &[String], rel: &str) -> bool {
    places
        .iter()
        .any(|p| rel == p || (p.ends_with('/') && rel.starts_with(p.as_str())))
}

/// The files that serve every game, as the guard reads them: Rust, scripts, styles and pages
/// of the host, the viewer, the CLI, the bots, the proto helpers and the games crate's shared
/// code; less each game's own places ([`adding_a_game`]) and test modules.
fn generic_sources(adding: &AddingAGame) -> Vec<(PathBuf, String)> {
    let generic_dirs = [
        "service/src/",
        "service/web/",
        "cli/src/",
        "bots/src/",
        "bots/policies/src/",
        "proto/",
        "games/src/",
    ];
    let own: Vec<String> = adding
        .own
        .iter()
        .flat_map(|place| {
            gangs_games::kinds().iter().flat_map(move |k| {
                [
                    place.replace("<game>", k.json_key),
                    place.replace("<game>", k.name),
                ]
            })
        })
        .collect();
    let candidates: Vec<(String, String)> = text_files()
        .into_iter()
        .filter_map(|(path, text)| {
            let rel = path.to_string_lossy().replace('\\', "/");
            let ext = path.extension()?.to_str()?;
            let generic = matches!(ext, "rs" | "js" | "css" | "html")
                && generic_dirs.iter().any(|d| rel.starts_with(d))
                && !covers(&own, &rel);
            generic.then_some((rel, text))
        })
        .collect();
    let tests = test_module_files(&candidates);
    candidates
        .into_iter()
        .filter(|(rel, _)| !covers(&tests, rel))
        .map(|(rel, text)| (PathBuf::from(rel), text))
        .collect()
}

/// The ways code names a game: its kind (`gang-of-four`), its module and JSON key
/// (`gang_of_four`), its proto messages (`GangOfFour…`), a constant (`GANG_OF_FOUR`).
fn names_of_games() -> Vec<String> {
    gangs_games::kinds()
        .iter()
        .flat_map(|k| {
            let camel: String = k
                .json_key
                .split('_')
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                })
                .collect();
            [
                k.name.to_string(),
                k.json_key.to_string(),
                camel,
                k.json_key.to_ascii_uppercase(),
            ]
        })
        .collect()
}

#[test]
fn no_generic_source_names_a_game() {
    let names = names_of_games();
    assert!(names.contains(&"GangOfFour".to_string()), "{names:?}");
    let adding = adding_a_game();
    let sources = generic_sources(&adding);
    // The walk found the generic code (a wrong root or filter would pass vacuously), and left
    // out what is a game's own or a test module.
    for expected in [
        "service/src/api/call.rs",
        "cli/src/tui/app.rs",
        "service/web/app.js",
        "service/web/style.css",
        "service/web/index.html",
        "bots/policies/src/lib.rs",
        "games/src/kinds.rs",
    ] {
        assert!(
            sources.iter().any(|(p, _)| p == Path::new(expected)),
            "{expected} not scanned"
        );
    }
    for left_out in ["cli/src/tui/snapshots.rs", "games/src/gang_of_four/wire.rs"] {
        assert!(
            !sources.iter().any(|(p, _)| p == Path::new(left_out)),
            "{left_out} scanned"
        );
    }
    let mut found = Vec::new();
    for (path, text) in &sources {
        let rel = path.to_string_lossy();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let entries: Vec<String> = adding
            .shared
            .iter()
            .filter(|(file, _)| *file == rel)
            .flat_map(|(_, entries)| entries.iter())
            .flat_map(|entry| {
                gangs_games::kinds()
                    .iter()
                    .map(move |k| entry.replace("<game>", k.json_key))
            })
            .collect();
        for (number, line) in readable_lines(text, ext).iter().enumerate() {
            let Some(name) = names.iter().find(|n| line.contains(n.as_str())) else {
                continue;
            };
            if entries.iter().any(|e| line.contains(e.as_str())) {
                continue;
            }
            found.push(format!("{rel}:{}: {name}: {}", number + 1, line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "code that serves every game names a game (ask the kind registry, games/src/kinds.rs, \
         or move it into the game's own places: ARCHITECTURE.md, \"Adding a game\"):\n{}",
        found.join("\n")
    );
}

/// The host's Rust sources, as the guards read them ([`readable_lines`]: test modules and
/// plain comments left out).
fn host_sources() -> Vec<(String, String)> {
    text_files()
        .into_iter()
        .filter_map(|(path, text)| {
            let rel = path.to_string_lossy().replace('\\', "/");
            if !rel.starts_with("service/src/") || !rel.ends_with(".rs") {
                return None;
            }
            Some((rel, readable_lines(&text, "rs").join("\n")))
        })
        .collect()
}

#[test]
fn the_host_builds_no_authorization_header_but_a_forwarded_callers_own() {
    // In-process callers (the ladders, the web viewer) call the host's typed API with their
    // principal (`GamesService::watch_as`…); the one header the host sets is a caller's own
    // key, passed on when its call is forwarded to another node (`api/mod.rs`'s `Credentials`).
    let sources = host_sources();
    assert!(
        sources.len() > 20,
        "found only {} host sources",
        sources.len()
    );
    for (path, code) in sources {
        let code: String = code.split_whitespace().collect();
        assert!(
            !code.contains("format!(\"Bearer"),
            "{path} makes a `Bearer` key of its own"
        );
        if path != "service/src/api/mod.rs" {
            assert!(
                !code.contains("insert(\"authorization\""),
                "{path} sets an `authorization` header"
            );
        }
    }
}

#[test]
fn in_process_callers_use_the_hosts_typed_api_not_the_grpc_traits() {
    // The ladders and the web viewer play and read through `GamesService::create_game_as`,
    // `watch_as`… and `LaddersService::standings_as`…, given their principal: only the files
    // that implement the gRPC traits name them (a trait method takes a tonic request, which
    // an in-process caller would have to make up).
    let implementers = ["service/src/api/grpc.rs", "service/src/ladder/api.rs"];
    let sources = host_sources();
    assert!(
        sources.len() > 20,
        "found only {} host sources",
        sources.len()
    );
    let names_trait = |code: &str, path: &str| {
        ["games_server::Games", "ladders_server::Ladders"]
            .iter()
            .any(|name| {
                code.match_indices(name).any(|(at, _)| {
                    let next = code[at + name.len()..].chars().next();
                    // `GamesServer`, `LaddersServer` (mounting a service) are not the trait.
                    !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                })
            })
            && !implementers.contains(&path)
    };
    for (path, code) in &sources {
        assert!(
            !names_trait(code, path),
            "{path} names a gRPC service trait: call the host's typed API (`GamesService::watch_as`…) with a principal"
        );
        assert!(
            !code.contains("InProcess"),
            "{path} makes up a request for an in-process caller: call the host's typed API"
        );
    }
    assert!(names_trait(
        "use pb::games_server::Games;",
        "service/src/viewer/api.rs"
    ));
    assert!(!names_trait(
        "use pb::games_server::GamesServer;",
        "service/src/server.rs"
    ));
}

/// The words that tell how the work was organised rather than what the product is: a
/// tracker's numbers, work periods and their ordinals. They mean nothing to a reader of the
/// repository. Spelled in pieces so that this file does not match itself. ("session" alone is
/// a product word: the viewer's login session.)
fn process_phrases() -> Vec<String> {
    let ordinals = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "last",
        "previous", "next", "earlier", "this", "that", "work",
    ];
    let mut phrases: Vec<String> = ordinals
        .iter()
        .map(|o| format!("{o} {}", "session"))
        .collect();
    for period in ["round", "morning", "afternoon", "evening", "wave"] {
        phrases.push(format!("this {period}"));
    }
    phrases.extend([
        format!("{} the day", "run of"),
        format!("the {} before", "session"),
        format!("{}'s last", "session"),
        format!("another {}", "engineer"),
        format!("lead {}", "engineer"),
        format!("{} engineer", "other"),
    ]);
    phrases
}

/// Where `text` (lowercase) cites a tracker's number: the tracker's word for an entry, then its
/// number, maybe after a space, a `#` or a `-`.
fn tracker_numbers(text: &str) -> Vec<usize> {
    let word = format!("{}{}", "iss", "ue");
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(&word) {
        let at = from + i;
        from = at + word.len();
        let starts_word = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        let mut j = at + word.len();
        while j < bytes.len() && matches!(bytes[j], b' ' | b'#' | b'-') {
            j += 1;
        }
        if starts_word && j > at + word.len() && j < bytes.len() && bytes[j].is_ascii_digit() {
            found.push(at);
        }
    }
    found
}

#[test]
fn no_file_speaks_of_how_the_work_was_organised() {
    let phrases = process_phrases();
    let mut found = Vec::new();
    let mut scanned = 0;
    for (path, text) in text_files() {
        scanned += 1;
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let hit = phrases.iter().find(|p| lower.contains(p.as_str())).cloned();
            let hit = hit.or_else(|| {
                (!tracker_numbers(&lower).is_empty()).then(|| "a tracker's number".to_string())
            });
            if let Some(what) = hit {
                found.push(format!(
                    "{}:{}: {what}: {}",
                    path.display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(scanned > 100, "only {scanned} files scanned");
    assert!(
        found.is_empty(),
        "text about how the work was organised (say what the product does, and why):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_process_word_check_catches_what_it_is_for() {
    // The check above passes vacuously if its matching is broken: each of these must match.
    let phrases = process_phrases();
    for sample in [
        format!("measured in the fifth {}", "session"),
        format!("as {} round showed", "this"),
        format!("the second {} the day", "run of"),
    ] {
        assert!(
            phrases.iter().any(|p| sample.contains(p.as_str())),
            "{sample:?} not caught"
        );
    }
    let word = format!("{}{}", "iss", "ue");
    for sample in [
        format!("see {word} 27"),
        format!("({word} #3)"),
        format!("{word}-24's fork"),
    ] {
        assert_eq!(tracker_numbers(&sample).len(), 1, "{sample:?}");
    }
    for sample in [
        format!("unknown{word}r 3"),
        format!("an {word} of 3 cards"),
        "the login session ends".to_string(),
    ] {
        let sample = sample.as_str();
        assert!(tracker_numbers(sample).is_empty(), "{sample:?}");
        assert!(
            !phrases.iter().any(|p| sample.contains(p.as_str())),
            "{sample:?}"
        );
    }
}

/// The paths ARCHITECTURE.md names in backticks: a token with a `/` (and no space or URL
/// scheme) is a path from the repository's root; a bare file name (`mod.rs`) must be some
/// tracked file's name. `<game>` stands for each game's module or kind name, `*` for any text.
fn architecture_paths(text: &str) -> Vec<String> {
    const EXTENSIONS: [&str; 9] = [
        ".rs", ".proto", ".md", ".js", ".css", ".html", ".toml", ".yaml", ".py",
    ];
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| !t.contains(char::is_whitespace) && !t.contains("://"))
        .filter(|t| t.contains('/') || EXTENSIONS.iter().any(|e| t.ends_with(e)))
        .map(str::to_string)
        .collect()
}

/// Whether `pattern` (with `*` for any text) matches `path` whole.
fn glob_matches(pattern: &str, path: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return pattern == path;
    }
    if !path.starts_with(first) || !path.ends_with(last) || path.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &path[first.len()..path.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

#[test]
fn architecture_names_only_paths_that_exist() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let files: Vec<String> = tracked_files()
        .iter()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .collect();
    let exists = |path: &str| -> bool {
        if path.contains('*') {
            files.iter().any(|f| glob_matches(path, f))
        } else if path.contains('/') {
            root().join(path.trim_end_matches('/')).exists()
        } else {
            files.iter().any(|f| f.rsplit('/').next() == Some(path))
        }
    };
    let paths = architecture_paths(&text);
    assert!(
        paths.len() > 50,
        "only {} paths found: is the page there?",
        paths.len()
    );
    let mut missing = Vec::new();
    for path in &paths {
        let ok = if path.contains("<game>") {
            // Every game has it, as its module (`gang_of_four`) or its kind (`gang-of-four`).
            gangs_games::kinds().iter().all(|k| {
                exists(&path.replace("<game>", k.json_key))
                    || exists(&path.replace("<game>", k.name))
            })
        } else {
            exists(path)
        };
        if !ok {
            missing.push(path.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist:\n{}",
        missing.join("\n")
    );
}
