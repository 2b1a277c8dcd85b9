//! What a damaged journal costs the sled log: which games may have lost acknowledged records,
//! what is kept of them, and the one message the server gives about it.
//!
//! The damaged bytes may hold game ids too, so the judgement is conservative. A game is
//! damaged when its records read back have a hole (some of its records were in the damaged
//! bytes and later ones were not), or when it had records before a damaged region (in the
//! journal, or legible in the damaged bytes themselves) and none after it: its last records
//! may have been there. Such a game keeps its records up to the hole; the rest stay in the
//! copy of the journal kept aside. Every other game keeps every record it had.

use super::journal::{Damage, JournaledAppend};
use super::StoreError;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// What to do when the journal is damaged (`--on-journal-damage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OnJournalDamage {
    /// Refuse to start: the data dir is left as it is, for an operator to look at.
    Refuse,
    /// List the games that may have lost records as damaged and serve the rest.
    #[default]
    Mark,
}

/// The games a damaged journal costs, each with why (what the listing shows).
pub type DamagedGames = BTreeMap<String, String>;

/// What [`assess`] found.
#[derive(Debug, Default)]
pub struct Assessment {
    pub games: DamagedGames,
    /// Offsets of regions that cannot be read whole (damaged lengths, a cut): a game whose
    /// only records since the last checkpoint were there cannot be named.
    pub unnamed: Vec<u64>,
}

/// Judges the damage and drops, from `appends`, each damaged game's records from its hole on
/// (and records already stored, which a crash mid-checkpoint may leave in the journal).
/// `last_stored` answers a game's last seq in sled's files (0: none).
///
/// A region read whole (one payload whose shape holds, each legible append following its
/// game's log) names its games exactly; any other region makes every game with journal
/// records before it and none after it a suspect too.
pub fn assess(
    appends: &mut [JournaledAppend],
    damage: &[Damage],
    mut last_stored: impl FnMut(&str) -> Result<u64, StoreError>,
) -> Result<Assessment, StoreError> {
    let mut found = Assessment::default();
    // Each game's next seq (from sled's files on first sight); `None` once cut at a hole.
    let mut next: HashMap<String, Option<u64>> = HashMap::new();
    let mut expected =
        |next: &mut HashMap<String, Option<u64>>, id: &str| -> Result<Option<u64>, StoreError> {
            if let Some(want) = next.get(id) {
                return Ok(*want);
            }
            let want = Some(last_stored(id)? + 1);
            next.insert(id.to_string(), want);
            Ok(want)
        };
    let mut regions = damage.iter().peekable();
    for index in 0..=appends.len() {
        while let Some(region) = regions.next_if(|r| r.appends_before <= index) {
            let mut precise = region.complete && !region.cut;
            let mut suspects: HashSet<String> = HashSet::new();
            for (id, first) in &region.legible {
                let want = expected(&mut next, id)?;
                precise &= want == Some(*first);
                // An id no record anywhere knows, whose records there do not start a game, is
                // a damaged id reading as a well-formed one: it names no game.
                if *first == 1 || want != Some(1) {
                    suspects.insert(id.clone());
                }
            }
            if !precise {
                found.unnamed.push(region.offset);
                suspects.extend(appends[..index].iter().map(|a| a.game_id.clone()));
            }
            for append in &appends[index..] {
                suspects.remove(&append.game_id);
            }
            for id in suspects {
                let why = if region.cut {
                    format!(
                        "the journal was cut at offset {}: its last records may have been after the cut",
                        region.offset
                    )
                } else {
                    format!(
                        "its last records may have been in the journal's damaged bytes at offset {}",
                        region.offset
                    )
                };
                found.games.entry(id).or_insert(why);
            }
        }
        let Some(append) = appends.get_mut(index) else {
            break;
        };
        let mut want = expected(&mut next, &append.game_id)?;
        let mut kept = Vec::with_capacity(append.records.len());
        for (seq, bytes) in std::mem::take(&mut append.records) {
            let Some(wanted) = want else { break };
            if seq < wanted {
                continue;
            }
            if seq > wanted {
                // Some region before this append held the missing records.
                let offset = damage
                    .iter()
                    .rev()
                    .find(|d| d.appends_before <= index)
                    .map_or(0, |d| d.offset);
                found.games.insert(
                    append.game_id.clone(),
                    format!(
                        "records {wanted} to {} are missing: they were in the journal's damaged bytes at offset {offset}",
                        seq - 1
                    ),
                );
                want = None;
                break;
            }
            kept.push((seq, bytes));
            want = Some(seq + 1);
        }
        next.insert(append.game_id.clone(), want);
        // Feed entries only for the records kept (consecutive seqs).
        let kept_seqs = kept
            .first()
            .zip(kept.last())
            .map(|((first, _), (last, _))| *first..=*last);
        append
            .marked
            .retain(|(seq, _)| kept_seqs.as_ref().is_some_and(|k| k.contains(seq)));
        append.records = kept;
    }
    Ok(found)
}

/// Game ids the message names at most.
const NAMED: usize = 50;

/// The one line the server says about a damaged journal (at ERROR, or as its reason not to
/// start): the journal, each damaged region, the games and what became of them.
pub fn message(
    journal: &Path,
    generation: u64,
    damage: &[Damage],
    found: &Assessment,
    kept_in: Option<&Path>,
) -> String {
    let regions: Vec<String> = damage
        .iter()
        .map(|d| {
            if d.cut {
                format!(
                    "the file is cut at offset {} ({} bytes left of an entry)",
                    d.offset, d.len
                )
            } else {
                format!("{} bytes at offset {} do not read back", d.len, d.offset)
            }
        })
        .collect();
    let games = if found.games.is_empty() {
        "no game is known to have lost a record".to_string()
    } else {
        // Bounded: a cut journal may name every game it held (all are listed as damaged).
        let mut ids: Vec<&str> = found.games.keys().take(NAMED).map(String::as_str).collect();
        let more = found.games.len().saturating_sub(NAMED);
        let more = format!("and {more} more");
        if found.games.len() > NAMED {
            ids.push(&more);
        }
        format!(
            "games {} may have lost acknowledged records and are listed as damaged (readable up to the damage, not playable); every other game keeps all its records",
            ids.join(", ")
        )
    };
    let unnamed = if found.unnamed.is_empty() {
        String::new()
    } else {
        let offsets: Vec<String> = found.unnamed.iter().map(u64::to_string).collect();
        format!(
            " (the damage at offset {} cannot be read whole: a game whose only records since the last checkpoint were there cannot be named)",
            offsets.join(", ")
        )
    };
    let kept = kept_in.map_or(String::new(), |copy| {
        format!("; the journal as it was is kept in {}", copy.display())
    });
    format!(
        "the journal {} is damaged (generation {generation}): {}; {games}{unnamed}{kept}",
        journal.display(),
        regions.join(", ")
    )
}

/// Copies the journal aside (`journal.damaged-GENERATION` beside it) and makes the copy
/// durable, before anything writes over the damaged bytes.
pub fn keep_aside(journal: &Path, generation: u64) -> std::io::Result<std::path::PathBuf> {
    let copy = journal.with_file_name(format!(
        "{}.damaged-{generation}",
        super::journal::FILE_NAME
    ));
    std::fs::copy(journal, &copy)?;
    std::fs::File::open(&copy)?.sync_all()?;
    if let Some(dir) = copy.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: &str = "00000000000000aa";
    const Y: &str = "00000000000000bb";
    const Z: &str = "00000000000000cc";

    fn append(id: &str, seqs: std::ops::RangeInclusive<u64>) -> JournaledAppend {
        JournaledAppend {
            game_id: id.to_string(),
            records: seqs.map(|s| (s, vec![s as u8].into())).collect(),
            marked: vec![],
        }
    }

    /// A region read in part (lengths damaged): its legible appends name some games only.
    fn region(appends_before: usize, legible: &[(&str, u64)]) -> Damage {
        Damage {
            offset: 100,
            len: 50,
            appends_before,
            legible: legible.iter().map(|(id, s)| (id.to_string(), *s)).collect(),
            complete: false,
            cut: false,
        }
    }

    fn seqs(appends: &[JournaledAppend], id: &str) -> Vec<u64> {
        appends
            .iter()
            .filter(|a| a.game_id == id)
            .flat_map(|a| a.records.iter().map(|(s, _)| *s))
            .collect()
    }

    #[test]
    fn a_hole_cuts_the_game_there_and_a_game_silent_after_the_damage_is_damaged_whole() {
        // X: 1-2, [damaged: X 3, Y 1-2?], X 4-5; Y 1 before and nothing after; Z unaffected
        // with records in sled up to 9.
        let mut appends = vec![
            append(X, 1..=2),
            append(Y, 1..=1),
            append(Z, 10..=10),
            append(X, 4..=5),
            append(Z, 11..=11),
        ];
        let found = assess(&mut appends, &[region(3, &[])], |id| {
            Ok(if id == Z { 9 } else { 0 })
        })
        .unwrap()
        .games;
        assert_eq!(found.keys().collect::<Vec<_>>(), vec![X, Y]);
        assert!(
            found[X].contains("records 3 to 3 are missing"),
            "{}",
            found[X]
        );
        assert!(
            found[Y].contains("last records may have been"),
            "{}",
            found[Y]
        );
        assert_eq!(
            seqs(&appends, X),
            vec![1, 2],
            "X is readable up to its hole"
        );
        assert_eq!(seqs(&appends, Y), vec![1]);
        assert_eq!(seqs(&appends, Z), vec![10, 11], "Z keeps every record");
    }

    #[test]
    fn ids_legible_in_the_damage_count_and_a_hole_against_sled_counts() {
        // Z's first journaled records (after sled's 9) were in the damage; W only there.
        let w = "00000000000000dd";
        let mut appends = vec![append(X, 1..=1), append(Z, 12..=12), append(X, 2..=2)];
        let found = assess(&mut appends, &[region(1, &[(w, 1), (X, 2)])], |id| {
            Ok(if id == Z { 9 } else { 0 })
        })
        .unwrap()
        .games;
        assert_eq!(found.keys().collect::<Vec<_>>(), vec![Z, w]);
        assert!(seqs(&appends, Z).is_empty());
        assert_eq!(seqs(&appends, X), vec![1, 2]);
    }

    #[test]
    fn records_already_in_sled_are_dropped_not_counted_as_a_hole() {
        let mut appends = vec![append(X, 3..=6)];
        let found = assess(&mut appends, &[], |_| Ok(4)).unwrap();
        assert!(found.games.is_empty());
        assert_eq!(seqs(&appends, X), vec![5, 6]);
    }

    /// A region read whole names its games exactly: a game silent after it but not in it
    /// lost nothing there; one whose legible append does not follow its log (a damaged id
    /// reading as another) makes the judgement conservative again.
    #[test]
    fn a_region_read_whole_names_exactly_the_games_in_it() {
        let whole = |legible: &[(&str, u64)]| Damage {
            complete: true,
            ..region(2, legible)
        };
        let batch = || vec![append(X, 1..=2), append(Y, 1..=1), append(Z, 1..=1)];
        let mut appends = batch();
        let found = assess(&mut appends, &[whole(&[(Y, 2)])], |_| Ok(0)).unwrap();
        assert_eq!(found.games.keys().collect::<Vec<_>>(), vec![Y]);
        assert!(found.unnamed.is_empty());
        // Y's append reads as seq 5: not Y's next record, so the id may be a damaged one.
        let mut appends = batch();
        let found = assess(&mut appends, &[whole(&[(Y, 5)])], |_| Ok(0)).unwrap();
        assert_eq!(found.games.keys().collect::<Vec<_>>(), vec![X, Y]);
        assert_eq!(found.unnamed, vec![100]);
    }

    #[test]
    fn the_message_names_the_journal_the_offsets_and_the_games() {
        let mut games = DamagedGames::new();
        games.insert(X.to_string(), "why".to_string());
        games.insert(Y.to_string(), "why".to_string());
        let games = Assessment {
            games,
            unnamed: vec![],
        };
        let text = message(
            Path::new("/data/journal"),
            3,
            &[region(0, &[])],
            &games,
            Some(Path::new("/data/journal.damaged-3")),
        );
        assert!(text.contains("/data/journal is damaged"), "{text}");
        assert!(text.contains("50 bytes at offset 100"), "{text}");
        assert!(text.contains(&format!("games {X}, {Y}")), "{text}");
        assert!(text.contains("kept in /data/journal.damaged-3"), "{text}");
    }
}
