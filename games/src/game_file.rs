//! The portable game file (`gangs export`, `gangs import`, `gangs replay --file`, the web
//! viewer's download): one self-describing JSON Lines file per game.
//!
//! Line 1 is the header: `format` ("gangs-game"), `version`, `game_id`, `kind`, `players`,
//! `options` (`GameOptions`), `seed` (a string: 64 bits are exact in every JSON reader; `null`
//! while the game runs), `seats` (names by seat), `created_unix_ms`, `finished_unix_ms`,
//! `status`, `outcome` (`Outcome`, `null` until the game ends) and `records` (how many lines
//! follow). Every further line is one `LogRecord`. Messages are in the proto3 JSON mapping with
//! the proto's field names, 64-bit integers as strings.
//!
//! A finished game's file holds everything and is checked by replaying it through the engine
//! ([`GameFile::verify`]); a running game's file holds what a spectator may see so far (the
//! server's `GetLog` already redacts it), which the engine cannot replay until the seed is known.

use crate::replay::{ReplayError, Replayer};
use gangs_proto::json::{from_json, to_json_with, Int64};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use serde_json::{json, Value};
use std::io::{BufRead, Write};

/// The `format` of every game file's header.
pub const FORMAT: &str = "gangs-game";
/// The newest format version this code writes and reads.
pub const VERSION: u64 = 1;
/// Longest line read: a record is a few kB, a header with every name well under this.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// Most records read from one file: far more than the longest game has.
pub const MAX_RECORDS: usize = 100_000;

/// Why a game file cannot be read, or does not verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameFileError {
    /// Reading or writing failed.
    Io(String),
    /// Not a game file, or a line is malformed (`line` counts from 1).
    Malformed { line: usize, message: String },
    /// The records are a running game's public part: the seed is hidden, nothing to replay.
    NotFinished,
    /// The records do not replay through the engine.
    Diverged(ReplayError),
    /// The header says something the records do not.
    Header(String),
}

impl std::fmt::Display for GameFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GameFileError::Io(e) => f.write_str(e),
            GameFileError::Malformed { line, message } => write!(f, "line {line}: {message}"),
            GameFileError::NotFinished => f.write_str(
                "the game had not finished when it was exported: the file holds only its public records (no seed), which cannot be replayed",
            ),
            GameFileError::Diverged(e) => write!(f, "the records do not replay: {e}"),
            GameFileError::Header(e) => write!(f, "the header does not match the records: {e}"),
        }
    }
}

impl std::error::Error for GameFileError {}

/// What the header states; derived from the records by [`GameFile::from_log`].
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub version: u64,
    pub game_id: String,
    pub kind: String,
    pub players: u32,
    pub options: Option<pb::GameOptions>,
    /// Hidden (`None`) while the game runs.
    pub seed: Option<u64>,
    /// The name of each seat; empty for a seat nobody took.
    pub seats: Vec<String>,
    pub created_unix_ms: i64,
    pub finished_unix_ms: Option<i64>,
    pub status: pb::GameStatus,
    pub outcome: Option<pb::Outcome>,
    /// How many record lines follow the header.
    pub records: u64,
}

/// A game: its header and its log records in seq order.
#[derive(Debug, Clone, PartialEq)]
pub struct GameFile {
    pub header: Header,
    pub records: Vec<pb::LogRecord>,
}

fn created_of(records: &[pb::LogRecord]) -> Option<&pb::Created> {
    records.iter().find_map(|r| match &r.record {
        Some(Record::Created(c)) => Some(c),
        _ => None,
    })
}

impl GameFile {
    /// The file of game `game_id` from its log as `GetLog` gives it. A finished game is
    /// replayed through the engine for its outcome; a log that does not replay is an error.
    pub fn from_log(game_id: &str, records: Vec<pb::LogRecord>) -> Result<GameFile, GameFileError> {
        let created = created_of(&records)
            .ok_or_else(|| GameFileError::Header("the log has no `created` record".into()))?;
        let mut seats = vec![String::new(); created.players as usize];
        for record in &records {
            if let Some(Record::Joined(j)) = &record.record {
                if let Some(name) = seats.get_mut(j.seat as usize) {
                    name.clone_from(&j.name);
                }
            }
        }
        let started = records
            .iter()
            .any(|r| matches!(r.record, Some(Record::Started(_))));
        let mut header = Header {
            version: VERSION,
            game_id: game_id.to_string(),
            kind: created.kind.clone(),
            players: created.players,
            options: created.options,
            seed: created.seed,
            seats,
            created_unix_ms: records.first().map(|r| r.unix_ms).unwrap_or_default(),
            finished_unix_ms: None,
            status: if started {
                pb::GameStatus::Running
            } else {
                pb::GameStatus::Waiting
            },
            outcome: None,
            records: records.len() as u64,
        };
        if created.seed.is_some() {
            let replayer = crate::replay::replay(&records).map_err(GameFileError::Diverged)?;
            if let Some(game) = replayer.game().filter(|g| g.is_over()) {
                header.status = pb::GameStatus::Finished;
                header.outcome = game.outcome();
                header.finished_unix_ms = records.last().map(|r| r.unix_ms);
            }
        }
        Ok(GameFile { header, records })
    }

    /// Writes the header line and one line per record.
    pub fn write(&self, out: &mut impl Write) -> Result<(), GameFileError> {
        let io = |e: std::io::Error| GameFileError::Io(format!("cannot write the game file: {e}"));
        writeln!(out, "{}", self.header.to_json()).map_err(io)?;
        for record in &self.records {
            let line = to_json_with(record, "gangs.v1.LogRecord", Int64::Strings);
            writeln!(out, "{line}").map_err(io)?;
        }
        out.flush().map_err(io)
    }

    /// The whole file as a string (what `write` writes).
    pub fn to_jsonl(&self) -> String {
        let mut bytes = Vec::new();
        self.write(&mut bytes)
            .expect("writing to memory does not fail");
        String::from_utf8(bytes).expect("JSON is UTF-8")
    }

    /// Reads a file: the header, then exactly the number of records it announces. Blank lines
    /// are skipped. Nothing is checked against the engine here: see [`GameFile::verify`].
    pub fn read(input: impl BufRead) -> Result<GameFile, GameFileError> {
        let mut header = None;
        let mut records = Vec::new();
        for (index, line) in input.split(b'\n').enumerate() {
            let line_no = index + 1;
            let malformed = |message: String| GameFileError::Malformed {
                line: line_no,
                message,
            };
            let line =
                line.map_err(|e| GameFileError::Io(format!("cannot read the game file: {e}")))?;
            if line.len() > MAX_LINE_BYTES {
                return Err(malformed(format!(
                    "longer than {MAX_LINE_BYTES} bytes: not a game file line"
                )));
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let value: Value =
                serde_json::from_slice(&line).map_err(|e| malformed(format!("not JSON: {e}")))?;
            match &header {
                None => header = Some(Header::from_json(&value).map_err(malformed)?),
                Some(_) => {
                    if records.len() == MAX_RECORDS {
                        return Err(malformed(format!(
                            "more than {MAX_RECORDS} records: not a game file"
                        )));
                    }
                    records.push(from_json(value, "gangs.v1.LogRecord").map_err(malformed)?);
                }
            }
        }
        let header = header.ok_or_else(|| GameFileError::Malformed {
            line: 1,
            message: "the file is empty: a game file starts with its header".into(),
        })?;
        if header.records != records.len() as u64 {
            return Err(GameFileError::Header(format!(
                "it announces {} records, the file holds {} (truncated?)",
                header.records,
                records.len()
            )));
        }
        Ok(GameFile { header, records })
    }

    /// Replays every record through the engine (the same check as the server's restart and
    /// `gangs replay --verify`) and checks that the header says what the records say. Returns
    /// the replayed game, at its end.
    pub fn verify(&self) -> Result<Replayer, GameFileError> {
        let created = created_of(&self.records)
            .ok_or_else(|| GameFileError::Header("the file has no `created` record".into()))?;
        if created.seed.is_none() {
            return Err(GameFileError::NotFinished);
        }
        let replayer = crate::replay::replay(&self.records).map_err(GameFileError::Diverged)?;
        let game = replayer
            .game()
            .expect("a replayed log with `created` has a game");
        if !game.is_over() {
            return Err(GameFileError::Header(format!(
                "the records end at seq {} before the game does (truncated?)",
                replayer.last_seq()
            )));
        }
        let derived = GameFile::from_log(&self.header.game_id, self.records.clone())?.header;
        let h = &self.header;
        let mismatch = |what: &str| Err(GameFileError::Header(format!("its {what} differs")));
        if h.kind != derived.kind {
            return mismatch("kind");
        }
        if h.players != derived.players {
            return mismatch("number of players");
        }
        if h.options != derived.options {
            return mismatch("options");
        }
        if h.seed != derived.seed {
            return mismatch("seed");
        }
        if h.seats != derived.seats {
            return mismatch("seat names");
        }
        if h.status != derived.status {
            return mismatch("status");
        }
        if h.outcome != derived.outcome {
            return mismatch("outcome");
        }
        if h.created_unix_ms != derived.created_unix_ms
            || h.finished_unix_ms != derived.finished_unix_ms
        {
            return mismatch("created or finished time");
        }
        Ok(replayer)
    }
}

impl Header {
    pub fn to_json(&self) -> Value {
        json!({
            "format": FORMAT,
            "version": self.version,
            "game_id": self.game_id,
            "kind": self.kind,
            "players": self.players,
            "options": self
                .options
                .as_ref()
                .map(|o| to_json_with(o, "gangs.v1.GameOptions", Int64::Strings)),
            "seed": self.seed.map(|s| s.to_string()),
            "seats": self.seats,
            "created_unix_ms": self.created_unix_ms,
            "finished_unix_ms": self.finished_unix_ms,
            "status": self.status.as_str_name(),
            "outcome": self
                .outcome
                .as_ref()
                .map(|o| to_json_with(o, "gangs.v1.Outcome", Int64::Strings)),
            "records": self.records,
        })
    }

    /// The header from its line of a game file (what `ImportGame` carries).
    pub fn from_line(line: &str) -> Result<Header, String> {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        Header::from_json(&value)
    }

    pub fn from_json(value: &Value) -> Result<Header, String> {
        if value["format"] != FORMAT {
            return Err(format!(
                "not a gangs game file: the first line must be a header with \"format\": \"{FORMAT}\""
            ));
        }
        let version = value["version"]
            .as_u64()
            .ok_or("the header has no numeric `version`")?;
        if version > VERSION {
            return Err(format!(
                "format version {version} is newer than this gangs reads ({VERSION}): update gangs"
            ));
        }
        let text = |key: &str| -> Result<String, String> {
            value[key]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("the header's `{key}` must be a string"))
        };
        let optional_int = |key: &str| -> Result<Option<i64>, String> {
            match &value[key] {
                Value::Null => Ok(None),
                v => v
                    .as_i64()
                    .map(Some)
                    .ok_or_else(|| format!("the header's `{key}` must be a number or null")),
            }
        };
        let message = |key: &str, name: &str| -> Result<Option<Value>, String> {
            match &value[key] {
                Value::Null => Ok(None),
                v if v.is_object() => Ok(Some(v.clone())),
                _ => Err(format!(
                    "the header's `{key}` must be a {name} object or null"
                )),
            }
        };
        let seed = match &value["seed"] {
            Value::Null => None,
            Value::String(s) => Some(
                s.parse::<u64>()
                    .map_err(|_| "the header's `seed` must be a decimal 64-bit number")?,
            ),
            v => Some(
                v.as_u64()
                    .ok_or("the header's `seed` must be a string, a number or null")?,
            ),
        };
        let seats = value["seats"]
            .as_array()
            .ok_or("the header's `seats` must be a list of names")?
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or("the header's `seats` must be a list of names")?;
        let status_name = text("status")?;
        let status = pb::GameStatus::from_str_name(&status_name)
            .ok_or_else(|| format!("unknown status {status_name:?}"))?;
        Ok(Header {
            version,
            game_id: text("game_id")?,
            kind: text("kind")?,
            players: value["players"]
                .as_u64()
                .and_then(|p| u32::try_from(p).ok())
                .ok_or("the header's `players` must be a number")?,
            options: message("options", "GameOptions")?
                .map(|v| from_json(v, "gangs.v1.GameOptions"))
                .transpose()?,
            seed,
            seats,
            created_unix_ms: optional_int("created_unix_ms")?.unwrap_or_default(),
            finished_unix_ms: optional_int("finished_unix_ms")?,
            status,
            outcome: message("outcome", "Outcome")?
                .map(|v| from_json(v, "gangs.v1.Outcome"))
                .transpose()?,
            records: value["records"]
                .as_u64()
                .ok_or("the header's `records` must be a number")?,
        })
    }
}
