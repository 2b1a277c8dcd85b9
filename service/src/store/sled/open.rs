//! Opening a data dir: sled's lock waited for, the trees, the damage notes, the journal read
//! back (and judged when damaged), and a data dir of an earlier layout moved to this one.

use super::*;

/// Opens the tree `name` (`what` names it in the error).
pub(super) fn tree(db: &sled::Db, name: &str, what: &str) -> Result<sled::Tree, StoreError> {
    db.open_tree(name)
        .map_err(|e| StoreError::unavailable(format!("cannot open {what}: {e}")))
}

/// The games listed as damaged in the tree `damaged`, id -> why.
pub(super) fn damage_notes(
    damaged_tree: &sled::Tree,
) -> Result<HashMap<String, String>, StoreError> {
    let mut damaged = HashMap::new();
    for entry in damaged_tree.iter() {
        let (id, reason) = entry.map_err(read_error)?;
        damaged.insert(
            String::from_utf8_lossy(&id).into_owned(),
            String::from_utf8_lossy(&reason).into_owned(),
        );
    }
    Ok(damaged)
}

/// Opens the journal and reads its batches back: the journal, the batches acknowledged since
/// the last checkpoint, and whether damage was found (and judged) in it now. Damage stops the
/// start under `--on-journal-damage refuse`; otherwise the journal is copied aside and the
/// games that had records there are listed as damaged (`damaged`, in memory and in its tree).
pub(super) fn recover_journal(
    dir: &Path,
    options: &SledOptions,
    db: &sled::Db,
    log_trees: &LogTrees,
    damaged_tree: &sled::Tree,
    damaged: &mut HashMap<String, String>,
) -> Result<(Journal, Vec<JournaledAppend>, bool), StoreError> {
    let journal_failed =
        |e: std::io::Error| StoreError::unavailable(format!("cannot read the journal: {e}"));
    let generation = match db.get(JOURNAL_GENERATION).map_err(read_error)? {
        None => 0,
        Some(value) => u64_of(&value, "journal generation")?,
    };
    let journal_path = dir.join(crate::store::journal::FILE_NAME);
    let (journal, replayed) = Journal::open(dir, generation).map_err(journal_failed)?;
    tracing::debug!(direct = journal.writes_directly(), "journal opened");
    if let Some((offset, len)) = replayed.torn {
        tracing::warn!(
            "the journal {} ends with a torn entry at offset {offset} ({len} bytes): written when the server stopped, never acknowledged; dropped",
            journal_path.display()
        );
    }
    let mut recovered = replayed.appends;
    let newly_damaged = !replayed.damage.is_empty();
    if newly_damaged {
        let games = journal_damage::assess(&mut recovered, &replayed.damage, |name| {
            log_trees.last_stored_seq(name)
        })?;
        let say = |kept: Option<&Path>| {
            journal_damage::message(&journal_path, generation, &replayed.damage, &games, kept)
        };
        if options.on_journal_damage == OnJournalDamage::Refuse {
            let refused = format!(
                "{}; not starting (--on-journal-damage refuse): nothing was changed in {}; --on-journal-damage mark serves every other game",
                say(None),
                dir.display()
            );
            tracing::error!("{refused}");
            return Err(StoreError::corrupt(refused));
        }
        // Kept before anything is written over it: the next entry goes to offset 0.
        let copy = journal_damage::keep_aside(&journal_path, generation).map_err(|e| {
            StoreError::unavailable(format!(
                "{}; cannot keep a copy of the journal before writing over it: {e}",
                say(None)
            ))
        })?;
        tracing::error!("{}", say(Some(&copy)));
        for (id, reason) in &games.games {
            damaged_tree
                .insert(id.as_bytes(), reason.as_bytes())
                .map_err(|e| StoreError::unavailable(format!("cannot list a damaged game: {e}")))?;
            damaged.insert(id.clone(), reason.clone());
        }
    }
    Ok((journal, recovered, newly_damaged))
}

/// A data dir of an earlier layout moved to this one ([`move_legacy_ladders`]); every record
/// is first written into sled's files when the journal gave some back (`checkpoint_first`).
pub(super) fn upgrade_layout(
    db: &sled::Db,
    trees: &mut Trees,
    log_trees: &LogTrees,
    (feed, feed_index): (&sled::Tree, &sled::Tree),
    damaged_tree: &sled::Tree,
    checkpoint_first: bool,
) -> Result<(), StoreError> {
    if layout_of(db)? == LAYOUT_NAMESPACES {
        return Ok(());
    }
    // Every record in sled's files first (an older journal names ladders' logs by their bare
    // ids, which a checkpoint writes into `log` with the rest), then moved.
    if checkpoint_first {
        trees.checkpoint().map_err(StoreError::unavailable)?;
    }
    let moved = move_legacy_ladders(db, log_trees, feed, feed_index, damaged_tree)?;
    // The damage notes under their new names.
    let notes = damage_notes(damaged_tree)?;
    *trees.damaged.write().expect("damaged lock") = notes;
    if moved > 0 {
        tracing::info!(
            ladders = moved,
            "moved the ladders' logs out of the games' tree into their own (once: data dir of an earlier version)"
        );
    }
    Ok(())
}

/// The data dir's layout ([`LAYOUT`]; 1: written before namespaces, or new).
fn layout_of(db: &sled::Db) -> Result<u64, StoreError> {
    match db.get(LAYOUT).map_err(read_error)? {
        None => Ok(1),
        Some(value) => u64_of(&value, "layout"),
    }
}

/// Moves the ladders' logs of a data dir written before namespaces (every record in sled's
/// files: the caller checkpointed) to their own tree and names: their keys from `log` to
/// `ladders`, their feed entries, feed index keys and damage notes from bare ids to log
/// names. Everything is written in its new place and flushed before the old is removed, and
/// the layout is stored last: a crash on the way leaves both, and the next open does it again
/// (the same keys and values). Returns how many ladders' logs were moved.
fn move_legacy_ladders(
    db: &sled::Db,
    logs: &LogTrees,
    feed: &sled::Tree,
    feed_index: &sled::Tree,
    damaged: &sled::Tree,
) -> Result<usize, StoreError> {
    let failed = |e: sled::Error| {
        StoreError::unavailable(format!(
            "cannot move the ladders' logs into their own tree: {e}"
        ))
    };
    let legacy = |name: &[u8]| std::str::from_utf8(name).is_ok_and(crate::store::legacy_ladder_id);
    let prefix = crate::store::LEGACY_LADDER_PREFIX.as_bytes();
    // The logs: copied, flushed, then removed from the games' tree.
    let mut moved_keys = Vec::new();
    let mut ladders = std::collections::HashSet::new();
    for entry in logs.games.scan_prefix(prefix) {
        let (key, value) = entry.map_err(read_error)?;
        let id = game_id_of(&key)?;
        if !legacy(id) {
            continue;
        }
        ladders.insert(id.to_vec());
        logs.ladders.insert(&key, value).map_err(failed)?;
        moved_keys.push(key);
    }
    // The feed: entries valued by a bare ladder id get its log name (in place).
    for entry in feed.iter() {
        let (position, value) = entry.map_err(read_error)?;
        let Some(name) = value.len().checked_sub(8).map(|n| &value[..n]) else {
            continue;
        };
        if legacy(name) {
            let mut renamed = LADDERS_NAME.as_bytes().to_vec();
            renamed.extend_from_slice(&value);
            feed.insert(position, renamed).map_err(failed)?;
        }
    }
    let mut old_index = Vec::new();
    for key in feed_index.scan_prefix(prefix).keys() {
        let key = key.map_err(read_error)?;
        if key.len() == GAME_ID_LEN + 8 && legacy(&key[..GAME_ID_LEN]) {
            let mut renamed = LADDERS_NAME.as_bytes().to_vec();
            renamed.extend_from_slice(&key);
            feed_index.insert(renamed, &[]).map_err(failed)?;
            old_index.push(key);
        }
    }
    let mut old_damaged = Vec::new();
    for entry in damaged.scan_prefix(prefix) {
        let (name, reason) = entry.map_err(read_error)?;
        if legacy(&name[..]) {
            let renamed = log_name(Namespace::Ladders, &String::from_utf8_lossy(&name));
            damaged.insert(renamed.as_bytes(), reason).map_err(failed)?;
            old_damaged.push(name);
        }
    }
    db.flush().map_err(failed)?;
    for key in moved_keys {
        logs.games.remove(key).map_err(failed)?;
    }
    for key in old_index {
        feed_index.remove(key).map_err(failed)?;
    }
    for name in old_damaged {
        damaged.remove(name).map_err(failed)?;
    }
    db.flush().map_err(failed)?;
    db.insert(LAYOUT, &LAYOUT_NAMESPACES.to_be_bytes())
        .map_err(failed)?;
    db.flush().map_err(failed)?;
    Ok(ladders.len())
}

/// How long opening waits for another holder of the data dir to let go of it: sled's IO
/// threads hold it for a moment after a store in the same process closed (tests reopen one).
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

pub(super) fn open_db(dir: &Path) -> Result<sled::Db, StoreError> {
    let deadline = std::time::Instant::now() + LOCK_PATIENCE;
    loop {
        // sled's own periodic flusher is off: the flusher thread below flushes at checkpoints.
        let opened = sled::Config::new()
            .path(dir)
            .flush_every_ms(None)
            // The log is written far more than read (reads: startup, reloading a finished
            // game), so a small page cache will do; sled's default would grow to 1 GB.
            .cache_capacity(CACHE_BYTES)
            .open();
        return match opened {
            Ok(db) => Ok(db),
            // sled locks its `db` file: another process holds the data dir.
            Err(sled::Error::Io(io)) if io.to_string().contains("could not acquire lock") => {
                if std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                }
                Err(StoreError::unavailable(format!(
                    "the data dir {} is in use by another gangs-server (choose another --data-dir or stop that server)",
                    dir.display()
                )))
            }
            Err(e) => Err(StoreError::unavailable(format!(
                "cannot open the data dir {}: {e}",
                dir.display()
            ))),
        };
    }
}
