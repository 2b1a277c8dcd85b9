//! The contract's hygiene, checked on every CI run: the proto compiles (protox, as protoc
//! would) and follows buf-style lint rules, and it has no breaking change against the last
//! release tag (`v*`), when there is one; without a tag the test says so and compares nothing.
//!
//! Lint rules (buf's STANDARD names): PACKAGE_VERSION_SUFFIX, PACKAGE_SAME_DIRECTORY (one
//! package), the file options other generators need (go_package, java_package,
//! csharp_namespace), MESSAGE/ENUM/SERVICE/RPC_PASCAL_CASE, FIELD/ONEOF_LOWER_SNAKE_CASE,
//! ENUM_VALUE_UPPER_SNAKE_CASE, ENUM_VALUE_PREFIX, ENUM_ZERO_VALUE_SUFFIX (`_UNSPECIFIED`),
//! RPC_REQUEST_STANDARD_NAME, RPC_RESPONSE_STANDARD_NAME, RPC_REQUEST_RESPONSE_UNIQUE and
//! SERVICE_SUFFIX. The few names
//! that broke a rule before the rule was checked stay, listed in `GRANDFATHERED` with the
//! reason (renaming them would break generated code and JSON); nothing else may.
//!
//! Wire conventions (written at the top of gangs.proto): every field of a game's options message
//! has presence (`optional`; absent means the default), or is an enum whose zero value is the
//! default; within a game's proto a kind is an enum, and a string `kind` left from before the
//! enum is `[deprecated = true]` beside the enum that replaces it.
//!
//! Breaking changes (buf's WIRE_JSON idea): a message, enum, service or rpc removed; a field
//! number removed without being reserved, or changed in name, type or cardinality; an enum
//! value number removed without being reserved, or renamed; an rpc's types or streaming
//! changed.

use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorSet};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const FILES: [&str; 4] = [
    "gangs.proto",
    "gang_of_four.proto",
    "the_gang.proto",
    "ladder.proto",
];

/// Rule violations accepted because they predate the check: (rule, element, reason).
const GRANDFATHERED: [(&str, &str, &str); 7] = [
    (
        "ENUM_ZERO_VALUE_SUFFIX",
        "gangs.v1.TheGangMode.THE_GANG_MODE_BASIC",
        "zero is the default mode, basic, since v1; renaming breaks JSON and generated code",
    ),
    (
        "ENUM_ZERO_VALUE_SUFFIX",
        "gangs.v1.TheGangCard.Suit.SUIT_NONE",
        "zero means the suitless Jack, a real value; renaming breaks JSON",
    ),
    (
        "RPC_RESPONSE_STANDARD_NAME",
        "gangs.v1.Games.Watch",
        "streams Update messages, shared with the CLI's JSON output",
    ),
    (
        "RPC_RESPONSE_STANDARD_NAME",
        "gangs.v1.Games.GetLog",
        "streams LogRecord messages, the log's own type",
    ),
    (
        "SERVICE_SUFFIX",
        "gangs.v1.Games",
        "the service's name since v1; renaming changes every method path",
    ),
    (
        "SERVICE_SUFFIX",
        "gangs.v1.Ladders",
        "public name, the sibling of Games (one naming scheme for both)",
    ),
    (
        "RPC_RESPONSE_STANDARD_NAME",
        "gangs.v1.Ladders.Queue",
        "streams LadderEvent messages, the public name of a bot's events",
    ),
];

fn proto_dir() -> PathBuf {
    crate::common::repo_root().join("proto")
}

fn compile(dir: &Path, files: &[&str]) -> FileDescriptorSet {
    protox::compile(files, [dir]).unwrap_or_else(|e| panic!("the proto does not compile: {e:?}"))
}

// ---- lint ---------------------------------------------------------------------------------------

fn is_pascal(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric())
}

fn is_lower_snake(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
}

fn is_upper_snake(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `TheGangCategory` -> `THE_GANG_CATEGORY`.
fn upper_snake(pascal: &str) -> String {
    let mut out = String::new();
    for (i, c) in pascal.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// (rule, element) pairs that break a rule.
fn lint(set: &FileDescriptorSet) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut flag = |rule: &str, element: String| found.push((rule.to_string(), element));
    let packages: std::collections::BTreeSet<&str> = set.file.iter().map(|f| f.package()).collect();
    if packages.len() != 1 {
        flag("PACKAGE_SAME_DIRECTORY", format!("{packages:?}"));
    }
    for file in &set.file {
        let package = file.package();
        let versioned = package
            .rsplit('.')
            .next()
            .and_then(|last| last.strip_prefix('v'))
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if !versioned {
            flag("PACKAGE_VERSION_SUFFIX", package.to_string());
        }
        let options = file.options.clone().unwrap_or_default();
        if options.go_package().is_empty() {
            flag("FILE_OPTION go_package", file.name().to_string());
        }
        if options.java_package().is_empty() {
            flag("FILE_OPTION java_package", file.name().to_string());
        }
        if options.csharp_namespace().is_empty() {
            flag("FILE_OPTION csharp_namespace", file.name().to_string());
        }
        for message in &file.message_type {
            lint_message(package, message, &mut flag);
        }
        for e in &file.enum_type {
            lint_enum(package, e, &mut flag);
        }
        for service in &file.service {
            let name = format!("{package}.{}", service.name());
            if !is_pascal(service.name()) {
                flag("SERVICE_PASCAL_CASE", name.clone());
            }
            if !service.name().ends_with("Service") {
                flag("SERVICE_SUFFIX", name.clone());
            }
            let mut seen_types = std::collections::BTreeSet::new();
            for rpc in &service.method {
                let rpc_name = format!("{name}.{}", rpc.name());
                if !is_pascal(rpc.name()) {
                    flag("RPC_PASCAL_CASE", rpc_name.clone());
                }
                let short = |t: &str| t.rsplit('.').next().unwrap_or("").to_string();
                if short(rpc.input_type()) != format!("{}Request", rpc.name()) {
                    flag("RPC_REQUEST_STANDARD_NAME", rpc_name.clone());
                }
                if short(rpc.output_type()) != format!("{}Response", rpc.name()) {
                    flag("RPC_RESPONSE_STANDARD_NAME", rpc_name.clone());
                }
                if !seen_types.insert(rpc.input_type().to_string())
                    | !seen_types.insert(rpc.output_type().to_string())
                    || rpc.input_type() == rpc.output_type()
                {
                    flag("RPC_REQUEST_RESPONSE_UNIQUE", rpc_name.clone());
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

fn lint_message(scope: &str, message: &DescriptorProto, flag: &mut impl FnMut(&str, String)) {
    let name = format!("{scope}.{}", message.name());
    if !is_pascal(message.name()) {
        flag("MESSAGE_PASCAL_CASE", name.clone());
    }
    for field in &message.field {
        if !is_lower_snake(field.name()) {
            flag("FIELD_LOWER_SNAKE_CASE", format!("{name}.{}", field.name()));
        }
    }
    for (index, oneof) in message.oneof_decl.iter().enumerate() {
        // proto3 `optional` fields sit in a synthetic oneof (`_name`): not written, not linted.
        let synthetic = message
            .field
            .iter()
            .filter(|f| f.oneof_index == Some(index as i32))
            .all(|f| f.proto3_optional());
        if !synthetic && !is_lower_snake(oneof.name()) {
            flag("ONEOF_LOWER_SNAKE_CASE", format!("{name}.{}", oneof.name()));
        }
    }
    for nested in &message.nested_type {
        if nested.options.as_ref().is_some_and(|o| o.map_entry()) {
            continue;
        }
        lint_message(&name, nested, flag);
    }
    for e in &message.enum_type {
        lint_enum(&name, e, flag);
    }
}

fn lint_enum(scope: &str, e: &EnumDescriptorProto, flag: &mut impl FnMut(&str, String)) {
    let name = format!("{scope}.{}", e.name());
    if !is_pascal(e.name()) {
        flag("ENUM_PASCAL_CASE", name.clone());
    }
    let prefix = format!("{}_", upper_snake(e.name()));
    for value in &e.value {
        let element = format!("{name}.{}", value.name());
        if !is_upper_snake(value.name()) {
            flag("ENUM_VALUE_UPPER_SNAKE_CASE", element.clone());
        }
        if !value.name().starts_with(&prefix) {
            flag("ENUM_VALUE_PREFIX", element.clone());
        }
        if value.number() == 0 && !value.name().ends_with("_UNSPECIFIED") {
            flag("ENUM_ZERO_VALUE_SUFFIX", element);
        }
    }
}

#[test]
fn the_proto_compiles_and_follows_the_lint_rules() {
    let set = compile(&proto_dir(), &FILES);
    assert_eq!(set.file.len(), FILES.len());
    let found = lint(&set);
    let accepted = |(rule, element): &(String, String)| {
        GRANDFATHERED
            .iter()
            .any(|(r, e, _)| r == rule && e == element)
    };
    let new: Vec<_> = found.iter().filter(|f| !accepted(f)).collect();
    assert!(new.is_empty(), "lint rules broken: {new:#?}");
    // The list stays honest: an exception that no longer occurs is removed from it.
    for (rule, element, _) in GRANDFATHERED {
        assert!(
            found.iter().any(|(r, e)| r == rule && e == element),
            "{rule} {element} no longer occurs: remove it from GRANDFATHERED"
        );
    }
}

#[test]
fn the_lint_catches_what_it_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.proto"),
        r#"syntax = "proto3";
package shop;
enum Color { RED = 0; COLOR_BLUE = 1; }
message item_thing { string Name = 1; }
message BuyRequest {}
message Receipt {}
service Shop { rpc Buy(BuyRequest) returns (Receipt); }
"#,
    )
    .unwrap();
    let found = lint(&compile(dir.path(), &["bad.proto"]));
    let rules: Vec<&str> = found.iter().map(|(r, _)| r.as_str()).collect();
    for rule in [
        "PACKAGE_VERSION_SUFFIX",
        "FILE_OPTION go_package",
        "FILE_OPTION java_package",
        "FILE_OPTION csharp_namespace",
        "ENUM_ZERO_VALUE_SUFFIX",
        "ENUM_VALUE_PREFIX",
        "MESSAGE_PASCAL_CASE",
        "FIELD_LOWER_SNAKE_CASE",
        "RPC_RESPONSE_STANDARD_NAME",
        "SERVICE_SUFFIX",
    ] {
        assert!(rules.contains(&rule), "{rule} not found in {found:?}");
    }
    assert!(!rules.contains(&"RPC_REQUEST_STANDARD_NAME"), "{found:?}");
}

// ---- wire conventions ---------------------------------------------------------------------------

/// The files of one game each (the contract's game-agnostic file, gangs.proto, names games by
/// their registry word, a string by design: the set of games is open).
const GAME_FILES: [&str; 2] = ["gang_of_four.proto", "the_gang.proto"];

/// Every message and enum of `set` by full name (`.pkg.Name`, as field type names are).
fn by_name(
    set: &FileDescriptorSet,
) -> (
    BTreeMap<String, &DescriptorProto>,
    BTreeMap<String, &EnumDescriptorProto>,
) {
    fn add<'a>(
        scope: &str,
        m: &'a DescriptorProto,
        messages: &mut BTreeMap<String, &'a DescriptorProto>,
        enums: &mut BTreeMap<String, &'a EnumDescriptorProto>,
    ) {
        let name = format!("{scope}.{}", m.name());
        for nested in &m.nested_type {
            add(&name, nested, messages, enums);
        }
        for e in &m.enum_type {
            enums.insert(format!("{name}.{}", e.name()), e);
        }
        messages.insert(name, m);
    }
    let (mut messages, mut enums) = (BTreeMap::new(), BTreeMap::new());
    for file in &set.file {
        let scope = format!(".{}", file.package());
        for m in &file.message_type {
            add(&scope, m, &mut messages, &mut enums);
        }
        for e in &file.enum_type {
            enums.insert(format!("{scope}.{}", e.name()), e);
        }
    }
    (messages, enums)
}

/// Fields that break the conventions, with the reason.
fn convention(set: &FileDescriptorSet) -> Vec<String> {
    let (messages, enums) = by_name(set);
    let mut found = Vec::new();
    // Presence: the options messages are the members of `GameOptions`.
    let game_options = messages
        .iter()
        .find(|(name, _)| name.ends_with(".GameOptions"))
        .map(|(_, m)| *m);
    for member in game_options.iter().flat_map(|m| &m.field) {
        let Some(options) = messages.get(member.type_name()) else {
            continue;
        };
        for field in &options.field {
            let name = format!("{}.{}", member.type_name(), field.name());
            let repeated = field.label() == Label::Repeated;
            let zero_is_default = field.r#type() == Type::Enum
                && enums.get(field.type_name()).is_some_and(|e| {
                    e.value
                        .iter()
                        .any(|v| v.number() == 0 && !v.name().ends_with("_UNSPECIFIED"))
                });
            if !repeated && !field.proto3_optional() && !zero_is_default {
                found.push(format!(
                    "{name}: an option without presence (make it `optional`: absent means \
                     the default)"
                ));
            }
        }
    }
    // Kinds: within a game's file, a string kind is deprecated beside its enum.
    for file in set.file.iter().filter(|f| GAME_FILES.contains(&f.name())) {
        let scope = format!(".{}", file.package());
        let mut stack: Vec<(String, &DescriptorProto)> = file
            .message_type
            .iter()
            .map(|m| (format!("{scope}.{}", m.name()), m))
            .collect();
        while let Some((name, message)) = stack.pop() {
            stack.extend(
                message
                    .nested_type
                    .iter()
                    .map(|m| (format!("{name}.{}", m.name()), m)),
            );
            let is_kind =
                |f: &FieldDescriptorProto| f.name() == "kind" || f.name().ends_with("_kind");
            for field in message
                .field
                .iter()
                .filter(|f| is_kind(f) && f.r#type() == Type::String)
            {
                let deprecated = field.options.as_ref().is_some_and(|o| o.deprecated());
                let has_enum = message
                    .field
                    .iter()
                    .any(|f| is_kind(f) && f.r#type() == Type::Enum);
                if !deprecated || !has_enum {
                    found.push(format!(
                        "{name}.{}: a kind as a string (use an enum; keep the string \
                         `[deprecated = true]` beside it for old clients)",
                        field.name()
                    ));
                }
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_wire_follows_one_presence_and_kind_convention() {
    let found = convention(&compile(&proto_dir(), &FILES));
    assert!(
        found.is_empty(),
        "wire conventions broken:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_convention_check_catches_what_it_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("the_gang.proto"),
        r#"syntax = "proto3"; package x.v1;
enum Level { LEVEL_UNSPECIFIED = 0; LEVEL_HIGH = 1; }
enum Mode { MODE_EASY = 0; MODE_HARD = 1; }
enum Shape { SHAPE_UNSPECIFIED = 0; SHAPE_ROUND = 1; }
message GameOptions { Opts opts = 1; }
message Opts {
  uint32 players = 1; optional uint32 rounds = 2; Level level = 3; Mode mode = 4;
  repeated uint32 order = 5;
}
message View {
  message Choice { string kind = 1; }
  message Piece { string kind = 1 [deprecated = true]; Shape shape_kind = 2; }
  message Old { string kind = 1 [deprecated = true]; }
}"#,
    )
    .unwrap();
    let found = convention(&compile(dir.path(), &["the_gang.proto"])).join("\n");
    for expected in [
        ".x.v1.Opts.players: an option without presence",
        ".x.v1.Opts.level: an option without presence",
        ".x.v1.View.Choice.kind: a kind as a string",
        ".x.v1.View.Old.kind: a kind as a string",
    ] {
        assert!(found.contains(expected), "{expected:?} not in:\n{found}");
    }
    for fine in ["rounds", ".mode:", ".order", "Piece"] {
        assert!(!found.contains(fine), "{fine:?} flagged:\n{found}");
    }
}

// ---- breaking changes ---------------------------------------------------------------------------

/// Everything a client may depend on, by full name: messages' fields by number, enums' values
/// by number, rpcs.
#[derive(Default)]
struct Surface {
    /// message -> number -> (name, type, cardinality)
    messages: BTreeMap<String, BTreeMap<i32, (String, String, i32)>>,
    /// message or enum -> reserved numbers (ranges, end exclusive)
    reserved: BTreeMap<String, Vec<(i32, i32)>>,
    /// enum -> number -> name
    enums: BTreeMap<String, BTreeMap<i32, String>>,
    /// service.rpc -> (input, output, client streaming, server streaming)
    rpcs: BTreeMap<String, (String, String, bool, bool)>,
}

fn surface(set: &FileDescriptorSet) -> Surface {
    let mut s = Surface::default();
    fn message(s: &mut Surface, scope: &str, m: &DescriptorProto) {
        let name = format!("{scope}.{}", m.name());
        let fields = m
            .field
            .iter()
            .map(|f| {
                let kind = if f.type_name().is_empty() {
                    format!("{:?}", f.r#type())
                } else {
                    f.type_name().to_string()
                };
                // proto3 `optional` is a synthetic oneof: presence, wire-compatible either way.
                let label = f.label.unwrap_or(Label::Optional as i32);
                (f.number(), (f.name().to_string(), kind, label))
            })
            .collect();
        s.messages.insert(name.clone(), fields);
        s.reserved.insert(
            name.clone(),
            m.reserved_range
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect(),
        );
        for nested in &m.nested_type {
            message(s, &name, nested);
        }
        for e in &m.enum_type {
            enumeration(s, &name, e);
        }
    }
    fn enumeration(s: &mut Surface, scope: &str, e: &EnumDescriptorProto) {
        let name = format!("{scope}.{}", e.name());
        s.enums.insert(
            name.clone(),
            e.value
                .iter()
                .map(|v| (v.number(), v.name().to_string()))
                .collect(),
        );
        // Enum reserved ranges are inclusive; stored end-exclusive like messages'.
        s.reserved.insert(
            name,
            e.reserved_range
                .iter()
                .map(|r| (r.start(), r.end() + 1))
                .collect(),
        );
    }
    for file in &set.file {
        let package = file.package();
        for m in &file.message_type {
            message(&mut s, package, m);
        }
        for e in &file.enum_type {
            enumeration(&mut s, package, e);
        }
        for service in &file.service {
            for rpc in &service.method {
                s.rpcs.insert(
                    format!("{package}.{}.{}", service.name(), rpc.name()),
                    (
                        rpc.input_type().to_string(),
                        rpc.output_type().to_string(),
                        rpc.client_streaming(),
                        rpc.server_streaming(),
                    ),
                );
            }
        }
    }
    s
}

fn breaking_changes(old: &FileDescriptorSet, new: &FileDescriptorSet) -> Vec<String> {
    let (old, new) = (surface(old), surface(new));
    let mut found = Vec::new();
    let reserved = |owner: &str, number: i32| {
        new.reserved
            .get(owner)
            .is_some_and(|ranges| ranges.iter().any(|&(a, b)| (a..b).contains(&number)))
    };
    for (name, fields) in &old.messages {
        let Some(now) = new.messages.get(name) else {
            found.push(format!("message {name} removed"));
            continue;
        };
        for (number, was) in fields {
            match now.get(number) {
                None if reserved(name, *number) => {}
                None => found.push(format!(
                    "{name}: field {number} ({}) removed without reserving its number",
                    was.0
                )),
                Some(is) if is != was => found.push(format!(
                    "{name}: field {number} changed from {was:?} to {is:?}"
                )),
                Some(_) => {}
            }
        }
    }
    for (name, values) in &old.enums {
        let Some(now) = new.enums.get(name) else {
            found.push(format!("enum {name} removed"));
            continue;
        };
        for (number, was) in values {
            match now.get(number) {
                None if reserved(name, *number) => {}
                None => found.push(format!("{name}: value {number} ({was}) removed")),
                Some(is) if is != was => {
                    found.push(format!("{name}: value {number} renamed {was} -> {is}"))
                }
                Some(_) => {}
            }
        }
    }
    for (name, was) in &old.rpcs {
        match new.rpcs.get(name) {
            None => found.push(format!("rpc {name} removed")),
            Some(is) if is != was => found.push(format!("rpc {name} changed: {was:?} -> {is:?}")),
            Some(_) => {}
        }
    }
    found
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(crate::common::repo_root())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn no_breaking_change_since_the_last_release_tag() {
    let tag = git(&["tag", "--list", "v*", "--sort=-v:refname"])
        .and_then(|tags| tags.lines().next().map(str::to_string));
    let Some(tag) = tag else {
        eprintln!(
            "proto breaking-change check: no release tag (v*) in this repository yet, so there \
             is nothing to compare against; the check runs once a tag exists"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for file in FILES {
        if let Some(text) = git(&["show", &format!("{tag}:proto/{file}")]) {
            std::fs::write(dir.path().join(file), text).unwrap();
            files.push(file);
        }
    }
    assert!(!files.is_empty(), "{tag} has no proto/ files");
    let old = compile(dir.path(), &files);
    let new = compile(&proto_dir(), &FILES);
    let found = breaking_changes(&old, &new);
    eprintln!(
        "proto breaking-change check against {tag}: {} finding(s)",
        found.len()
    );
    assert!(
        found.is_empty(),
        "breaking changes since {tag}:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_breaking_change_check_catches_what_it_names() {
    let compile_text = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.proto"), text).unwrap();
        compile(dir.path(), &["x.proto"])
    };
    let old = compile_text(
        r#"syntax = "proto3"; package x.v1;
enum E { E_UNSPECIFIED = 0; E_A = 1; E_B = 2; }
message M { string a = 1; uint32 b = 2; repeated string c = 3; uint32 e = 5; }
message Gone {}
service S { rpc Get(M) returns (M); rpc Old(M) returns (M); }"#,
    );
    // Compatible: a field removed with its number reserved, a field and a value added, a
    // scalar given presence (`optional`: the same bytes on the wire).
    let fine = compile_text(
        r#"syntax = "proto3"; package x.v1;
enum E { E_UNSPECIFIED = 0; E_A = 1; E_B = 2; E_C = 3; }
message M {
  reserved 2; string a = 1; repeated string c = 3; optional bool d = 4; optional uint32 e = 5;
}
message Gone {}
service S { rpc Get(M) returns (M); rpc Old(M) returns (M); }"#,
    );
    assert_eq!(breaking_changes(&old, &fine), Vec::<String>::new());
    let broken = compile_text(
        r#"syntax = "proto3"; package x.v1;
enum E { E_UNSPECIFIED = 0; E_A = 1; }
message M { int64 a = 1; string c = 3; uint32 e = 5; }
service S { rpc Get(M) returns (stream M); }"#,
    );
    let found = breaking_changes(&old, &broken).join("\n");
    for expected in [
        "field 1 changed",
        "field 2 (b) removed",
        "field 3 changed",
        "value 2 (E_B) removed",
        "message x.v1.Gone removed",
        "rpc x.v1.S.Old removed",
        "rpc x.v1.S.Get changed",
    ] {
        assert!(found.contains(expected), "{expected:?} not in:\n{found}");
    }
}
