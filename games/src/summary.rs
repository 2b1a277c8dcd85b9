//! A game round by round (Gang of Four: deal by deal; The Gang: heist by heist), read from its
//! log's public events: `gangs replay --summary` and the web viewer's replay chart. Only public
//! events are read, so a running game's public log summarizes too, up to its last finished
//! round. What a round is and what its row holds is each game's (`<game>/summary.rs`), found
//! through the kind registry.

use gangs_proto::v1 as pb;
use pb::log_record::Record;

/// The rounds of one game: text cells under a header (the CLI's columns and CSV) and, per row,
/// the same figures as JSON (`--json`, the viewer).
#[derive(Debug, Clone, PartialEq)]
pub struct RoundTable {
    pub header: Vec<String>,
    pub rows: Vec<RoundRow>,
}

/// One round that is over.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundRow {
    /// The round's number (1 for the first deal or heist).
    pub number: u32,
    /// One cell per header column.
    pub cells: Vec<String>,
    pub json: serde_json::Value,
}

/// The log's `created` record and every event of the log, in order.
pub fn public_events(
    records: &[pb::LogRecord],
) -> Result<(&pb::Created, Vec<&pb::GameEvent>), String> {
    let created = records
        .iter()
        .find_map(|r| match &r.record {
            Some(Record::Created(c)) => Some(c),
            _ => None,
        })
        .ok_or("the log has no `created` record")?;
    let events = records
        .iter()
        .flat_map(|r| crate::update::record_events(r).iter())
        .collect();
    Ok((created, events))
}

/// Every finished round of the log (`records` as `GetLog` or a game file gives them).
pub fn summarize(records: &[pb::LogRecord]) -> Result<RoundTable, String> {
    let (created, events) = public_events(records)?;
    let kind = crate::kind(&created.kind).map_err(|e| e.to_string())?;
    Ok((kind.summarize)(created, &events))
}
