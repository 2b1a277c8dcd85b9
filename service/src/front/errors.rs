//! The one place errors become gRPC statuses. Games, ladders, the cluster and the store speak
//! [`HostError`]; a handler returns it with `?` and it is mapped here, its message cut to
//! [`MAX_MESSAGE_BYTES`] so that no message can outgrow gRPC's metadata limit. Besides this
//! module only `front/` and the transport layers (`server.rs`, `grpc_web.rs`, `watch_route.rs`)
//! construct a `tonic::Status`; a test below reads every source file and keeps it so.

use crate::bounds::MAX_MESSAGE_BYTES;
use crate::error::HostError;
use tonic::{Code, Status};

impl HostError {
    /// The gRPC code this error is answered with.
    pub fn code(&self) -> Code {
        match self {
            HostError::NotFound(_) => Code::NotFound,
            HostError::Invalid(_) => Code::InvalidArgument,
            HostError::NotNow(_) => Code::FailedPrecondition,
            HostError::Permission(_) => Code::PermissionDenied,
            HostError::Unauthenticated(_) => Code::Unauthenticated,
            HostError::StaleSeq(_) => Code::Aborted,
            HostError::OutOfRange(_) => Code::OutOfRange,
            HostError::Exhausted(_) => Code::ResourceExhausted,
            HostError::Storage(_) | HostError::Unavailable(_) => Code::Unavailable,
            HostError::Internal(_) => Code::Internal,
            HostError::Exists(_) => Code::AlreadyExists,
        }
    }
}

impl From<HostError> for Status {
    fn from(error: HostError) -> Status {
        let code = error.code();
        let message = error.message().to_string();
        Status::new(code, bounded_message(message))
    }
}

/// A status made elsewhere (another node's answer to a forwarded call, the front's refusal)
/// as the host's error it is: each code back to the variant that makes it. The codes the host
/// never makes are a call that broke off (cancelled, past its deadline, unknown: retry, as
/// UNAVAILABLE) or a fault (unimplemented, data loss: INTERNAL).
impl From<Status> for HostError {
    fn from(status: Status) -> HostError {
        let message = status.message().to_string();
        match status.code() {
            Code::NotFound => HostError::NotFound(message),
            Code::InvalidArgument => HostError::Invalid(message),
            Code::FailedPrecondition => HostError::NotNow(message),
            Code::PermissionDenied => HostError::Permission(message),
            Code::Unauthenticated => HostError::Unauthenticated(message),
            Code::Aborted => HostError::StaleSeq(message),
            Code::OutOfRange => HostError::OutOfRange(message),
            Code::ResourceExhausted => HostError::Exhausted(message),
            Code::AlreadyExists => HostError::Exists(message),
            Code::Unavailable | Code::Cancelled | Code::DeadlineExceeded | Code::Unknown => {
                HostError::Unavailable(message)
            }
            Code::Internal | Code::Unimplemented | Code::DataLoss | Code::Ok => {
                HostError::Internal(message)
            }
        }
    }
}

/// The same status with its message cut to [`MAX_MESSAGE_BYTES`] (on a character boundary): a
/// last guard on a status a lower layer made (another node's answer).
pub fn bounded(status: Status) -> Status {
    if status.message().len() <= MAX_MESSAGE_BYTES {
        return status;
    }
    Status::new(status.code(), bounded_message(status.message().to_string()))
}

fn bounded_message(message: String) -> String {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message;
    }
    let mut end = MAX_MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &message[..end])
}

/// tonic refuses a request over `max_decoding_message_size` with OUT_OF_RANGE and a message
/// that names no flag; a client should get RESOURCE_EXHAUSTED naming the limit and the flag that
/// sets it (gRPC's code for a message too large). Such a refusal is a trailers-only response, so
/// its status is in the headers.
pub fn request_size_status(
    mut response: http::Response<tonic::body::Body>,
    limit: usize,
    flag: &str,
) -> http::Response<tonic::body::Body> {
    let too_large = tonic::Status::from_header_map(response.headers()).is_some_and(|status| {
        status.code() == tonic::Code::OutOfRange
            && status
                .message()
                .contains("decoded message length too large")
    });
    if too_large {
        let status = tonic::Status::resource_exhausted(format!(
            "the request is larger than this server's limit of {limit} bytes ({flag})"
        ));
        let _ = status.add_header(response.headers_mut());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let status = Status::from(HostError::not_found("é".repeat(5_000)));
        assert_eq!(status.code(), Code::NotFound);
        assert!(status.message().len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
        assert!(status.message().ends_with('…'));
        let status = bounded(Status::unavailable("é".repeat(5_000)));
        assert_eq!(status.code(), Code::Unavailable);
        assert!(status.message().ends_with('…'));
    }

    #[test]
    fn a_status_made_elsewhere_becomes_the_error_that_makes_its_code() {
        for code in [
            Code::NotFound,
            Code::InvalidArgument,
            Code::FailedPrecondition,
            Code::PermissionDenied,
            Code::Unauthenticated,
            Code::Aborted,
            Code::OutOfRange,
            Code::ResourceExhausted,
            Code::AlreadyExists,
            Code::Unavailable,
            Code::Internal,
        ] {
            let error = HostError::from(Status::new(code, "words"));
            assert_eq!((error.code(), error.message()), (code, "words"));
        }
        assert!(HostError::from(Status::deadline_exceeded("late")).is_unavailable());
    }

    #[test]
    fn every_error_keeps_its_code_and_its_words() {
        let cases = [
            (HostError::invalid_argument("a"), Code::InvalidArgument),
            (
                HostError::failed_precondition("a"),
                Code::FailedPrecondition,
            ),
            (HostError::aborted("a"), Code::Aborted),
            (HostError::already_exists("a"), Code::AlreadyExists),
            (HostError::Storage("a".into()), Code::Unavailable),
            (HostError::from(Status::cancelled("a")), Code::Unavailable),
        ];
        for (error, code) in cases {
            let status = Status::from(error);
            assert_eq!((status.code(), status.message()), (code, "a"));
        }
    }

    /// Where a status may be made: the edge (`front/`) and the transport layers.
    const EDGE: &[&str] = &["front/", "server.rs", "grpc_web.rs", "watch_route.rs"];

    fn sources(dir: &Path, files: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("service/src reads") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                sources(&path, files);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }

    /// The lines of `text` outside its `#[cfg(test)]` items (a test module, or a test-only
    /// function), by brace depth: (line number, line).
    fn outside_tests(text: &str) -> Vec<(usize, &str)> {
        let mut kept = Vec::new();
        // The depth at which a test item started, while inside it.
        let mut skipping: Option<i64> = None;
        let mut armed = false;
        let mut depth: i64 = 0;
        for (index, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if skipping.is_none() && code.trim_start().starts_with("#[cfg(test)]") {
                armed = true;
            }
            if armed && skipping.is_none() && code.contains('{') {
                skipping = Some(depth);
                armed = false;
            } else if armed && code.trim_end().ends_with(';') {
                // `#[cfg(test)] use …;` or `mod tests;` (a file of its own: skipped below).
                armed = false;
                continue;
            }
            let was_skipping = skipping.is_some() || armed;
            for c in code.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if let Some(start) = skipping {
                if depth <= start {
                    skipping = None;
                }
                continue;
            }
            if !was_skipping {
                kept.push((index + 1, line));
            }
        }
        kept
    }

    /// A `Status::<constructor>(` in `line` (not `GameStatus::…`, not the mapping's `from`).
    fn constructs_a_status(line: &str) -> bool {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("Status::") {
            let before = rest[..at].chars().next_back();
            let after = &rest[at + "Status::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let called = after[name.len()..].starts_with('(');
            let word_start = !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            let constructor = name.starts_with(|c: char| c.is_ascii_lowercase())
                && name != "from"
                && name != "from_header_map";
            if word_start && called && constructor {
                return true;
            }
            rest = &after[name.len()..];
        }
        false
    }

    #[test]
    fn only_the_edge_constructs_a_status() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&root, &mut files);
        assert!(files.len() > 20, "service/src has its files: {files:?}");
        let mut found = Vec::new();
        for file in files {
            let relative = file
                .strip_prefix(&root)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            // Test files of their own (`tests.rs`) are test modules.
            if EDGE.iter().any(|edge| relative.starts_with(edge)) || relative.ends_with("/tests.rs")
            {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("a source file reads");
            for (line_no, line) in outside_tests(&text) {
                if constructs_a_status(line) {
                    found.push(format!("service/src/{relative}:{line_no}: {}", line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "a tonic::Status is constructed outside front/ and the transport layers (return a HostError; front/errors.rs maps it):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn the_guard_sees_constructions_and_skips_tests() {
        assert!(constructs_a_status("Err(Status::invalid_argument(\"x\"))"));
        assert!(constructs_a_status("tonic::Status::new(code, m)"));
        assert!(!constructs_a_status("pb::GameStatus::try_from(1)"));
        assert!(!constructs_a_status(".map_err(Status::from)"));
        assert!(!constructs_a_status("// Status::internal(\"x\")"));
        let text = "fn a() { Status::internal(\"x\") }\n#[cfg(test)]\nmod tests {\n    fn b() {\n        Status::internal(\"y\");\n    }\n}\nfn c() { Status::ok(\"\") }\n";
        let kept: Vec<usize> = outside_tests(text)
            .into_iter()
            .filter(|(_, line)| constructs_a_status(line))
            .map(|(n, _)| n)
            .collect();
        assert_eq!(kept, vec![1, 8]);
    }
}
