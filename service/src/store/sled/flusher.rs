//! The flusher thread: group commit. Appends that arrived during the previous write go to the
//! journal with one sync, to the readers (`pending`) and the feed, then each appender is told;
//! checkpoints write the journal's records into sled and start the journal over.

use super::*;

/// What the flusher writes to: the log, the directory feed and its next position, the journal.
pub(super) struct Trees {
    pub(super) db: sled::Db,
    /// Shared with the readers (`LogTree`).
    pub(super) pending: Arc<Mutex<Pending>>,
    pub(super) logs: LogTrees,
    pub(super) feed: sled::Tree,
    pub(super) feed_index: sled::Tree,
    pub(super) next_position: u64,
    pub(super) head: tokio::sync::watch::Sender<u64>,
    pub(super) journal: Journal,
    /// Shared with the readers; the flusher refuses appends to these games.
    pub(super) damaged: DamagedIds,
    /// Games with an append that failed: their later appends are refused until the game is
    /// reloaded from the log (`Job::Reload`), so that a failed append is never followed by
    /// one of its successors (a hole) nor by a record built on it.
    pub(super) failed: std::collections::HashSet<String>,
    pub(super) faults: Option<Arc<WriteFaults>>,
}

/// A game's last seq in sled's files (0: none), records not yet checkpointed aside.
pub(super) fn last_stored_seq(tree: &sled::Tree, game_id: &str) -> Result<u64, StoreError> {
    let Some(entry) = tree
        .range(log_key(game_id, 0)..=log_key(game_id, u64::MAX))
        .next_back()
    else {
        return Ok(0);
    };
    let (key, value) = entry.map_err(read_error)?;
    let first = seq_of(&key)?;
    let records = chunks::records_in(first, &value)
        .map_err(|e| StoreError::corrupt(format!("game {game_id}: {e}")))?;
    Ok(records.last().map_or(first, |(seq, _)| *seq))
}

pub(super) fn flusher(mut trees: Trees, rx: std_mpsc::Receiver<Job>) {
    let mut batch: Vec<Append> = Vec::new();
    let mut checkpoints: Vec<oneshot::Sender<Result<(), StoreError>>> = Vec::new();
    // `recv` fails once every sender is gone: the server is shutting down.
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(job) = next.take() {
            match job {
                Job::Append(append) => batch.push(append),
                Job::Checkpoint { forget, done } => {
                    for id in forget {
                        trees.failed.remove(&id);
                    }
                    checkpoints.push(done);
                }
                Job::Reload(game_id, done) => {
                    // What was queued before the reload is decided first: the reloaded log
                    // holds it or it failed.
                    trees.commit(&mut batch);
                    trees.failed.remove(&game_id);
                    let _ = done.send(());
                }
            }
            if batch.len() < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        trees.commit(&mut batch);
        if !checkpoints.is_empty() || trees.journal.len() >= CHECKPOINT_AT {
            let result = trees.checkpoint();
            if let Err(e) = &result {
                tracing::error!("cannot flush the log at a checkpoint: {e}");
            }
            for done in checkpoints.drain(..) {
                let _ = done.send(result.clone().map_err(StoreError::unavailable));
            }
        }
    }
    // Everything journaled goes into sled's files: the next start has nothing to write again.
    if let Err(e) = trees.checkpoint() {
        tracing::error!("cannot flush the log at shutdown: {e}");
    }
}

impl Trees {
    /// Writes a batch and answers each appender.
    fn commit(&mut self, batch: &mut Vec<Append>) {
        if batch.is_empty() {
            return;
        }
        let outcomes = self.write_batch(batch);
        for (append, outcome) in batch.drain(..).zip(outcomes) {
            let _ = append.done.send(outcome);
        }
    }

    /// Which appends of a batch may be written: each must follow its game's log (its first
    /// seq the game's last durable seq + 1, its seqs consecutive), its game neither damaged
    /// nor refused since a failure. `None` for those that may; the refusal for the others,
    /// logged (never written: the log keeps no hole and no second record of a seq).
    fn check_sequence(&self, batch: &[Append]) -> Vec<Option<Result<(), StoreError>>> {
        let damaged = self.damaged.read().expect("damaged lock");
        let pending = self.pending.lock().expect("pending lock");
        // Each game's next seq after the appends of it this batch accepted so far.
        let mut accepted: HashMap<&str, u64> = HashMap::new();
        batch
            .iter()
            .map(|append| {
                let id = &append.game_id;
                if let Some(why) = damaged.get(id) {
                    return Some(Err(StoreError::corrupt(format!(
                        "game {id} is damaged ({why}): not written"
                    ))));
                }
                // An append without records (feed marks alone) follows anything.
                let &(first, _) = append.records.first()?;
                let next = accepted.entry(id.as_str());
                let want = match &next {
                    Entry::Occupied(next) => *next.get(),
                    // The game's first append in the batch: its last durable record (pending,
                    // else sled's files).
                    Entry::Vacant(_) => {
                        let want = match pending.last_seq(id) {
                            Some(last) => last + 1,
                            None => match self.logs.last_stored_seq(id) {
                                Ok(last) => last + 1,
                                Err(e) => return Some(Err(e)),
                            },
                        };
                        // A game with no record yet has nothing to protect: its creation,
                        // made again after a failed one, is taken.
                        if want > 1 && self.failed.contains(id) {
                            return Some(Err(StoreError::unavailable(format!(
                                "not saved: an earlier append of game {id} failed; the game is reloaded from the log before it is written again"
                            ))));
                        }
                        want
                    }
                };
                let consecutive = append
                    .records
                    .iter()
                    .enumerate()
                    .all(|(i, (seq, _))| *seq == first + i as u64);
                if first != want || !consecutive {
                    let refused = StoreError::conflict(format!(
                        "game {id}: record {first} does not follow the log's last record {} (another writer appended to it, or an earlier append failed): not written",
                        want - 1
                    ));
                    tracing::warn!("{refused}");
                    return Some(Err(refused));
                }
                *next.or_default() = first + append.records.len() as u64;
                None
            })
            .collect()
    }

    /// Makes the appends of a batch that keep the sequence rule durable (one journal entry and
    /// one sync), hands them to the readers, and answers each append. An append is reported
    /// failed only if nothing of it was written: once its entry is synced, it is durable (a
    /// restart reads it back), so it is handed to the readers and reported stored.
    fn write_batch(&mut self, batch: &mut [Append]) -> Vec<Result<(), StoreError>> {
        let started = std::time::Instant::now();
        let mut outcomes = self.check_sequence(batch);
        let accepted: Vec<usize> = (0..batch.len())
            .filter(|&i| outcomes[i].is_none())
            .collect();
        // Positions are taken even if the write fails: never reused, so never seen twice.
        let mut position = self.next_position;
        let writes: Vec<JournaledAppend> = accepted
            .iter()
            .map(|&i| {
                let append = &mut batch[i];
                JournaledAppend {
                    game_id: std::mem::take(&mut append.game_id),
                    records: std::mem::take(&mut append.records),
                    marked: append
                        .marked
                        .iter()
                        .map(|&seq| {
                            position += 1;
                            (seq, position - 1)
                        })
                        .collect(),
                }
            })
            .collect();
        self.next_position = position;
        let journaled = self.journal_writes(&writes);
        let synced = started.elapsed();
        let mut durable = Vec::with_capacity(writes.len());
        for ((i, write), result) in accepted.into_iter().zip(writes).zip(journaled) {
            outcomes[i] = Some(match result {
                Ok(()) => {
                    if write.records.first().is_some_and(|(seq, _)| *seq == 1) {
                        // A game created again after its creation failed: taken from now on.
                        self.failed.remove(&write.game_id);
                    }
                    durable.push(write);
                    Ok(())
                }
                Err(e) => {
                    self.failed.insert(write.game_id);
                    Err(StoreError::unavailable(e))
                }
            });
        }
        let records = durable.iter().map(|a| a.records.len()).sum();
        let head = durable
            .iter()
            .flat_map(|a| a.marked.iter().map(|(_, position)| *position))
            .max();
        if !durable.is_empty() {
            self.hand_to_readers(durable);
            // Batches that stored nothing (a full disk) are not counted as commits.
            crate::metrics::log_committed(records, started.elapsed() - synced, synced);
        }
        if let Some(head) = head {
            self.head.send_replace(head);
        }
        outcomes
            .into_iter()
            .map(|outcome| outcome.expect("every append decided"))
            .collect()
    }

    /// Journals `writes` (synced), one result per write. A batch the journal has no room
    /// left for waits for a checkpoint (nothing of it written or seen before), then goes into
    /// the emptied journal; one larger than the whole journal goes an append at a time (an
    /// append of a game after one of its that failed fails too).
    fn journal_writes(&mut self, writes: &[JournaledAppend]) -> Vec<Result<(), String>> {
        let all = |result: Result<(), String>| vec![result; writes.len()];
        if writes.is_empty() {
            return Vec::new();
        }
        match self.journal_entry(writes) {
            Ok(Ok(())) => return all(Ok(())),
            Err(e) => return all(Err(e)),
            Ok(Err(crate::store::journal::Full)) => {}
        }
        let mut failed: std::collections::HashSet<&str> = std::collections::HashSet::new();
        writes
            .iter()
            .map(|write| {
                let result = if failed.contains(write.game_id.as_str()) {
                    Err(format!(
                        "not saved: an earlier append of game {} failed",
                        write.game_id
                    ))
                } else {
                    match self.journal_entry(std::slice::from_ref(write)) {
                        Ok(Ok(())) => Ok(()),
                        Ok(Err(crate::store::journal::Full)) => Err(format!(
                            "not saved: an append of {} records is larger than the journal ({} bytes)",
                            write.records.len(),
                            crate::store::journal::CAPACITY
                        )),
                        Err(e) => Err(e),
                    }
                };
                if result.is_err() {
                    failed.insert(&write.game_id);
                }
                result
            })
            .collect()
    }

    /// One journal entry, synced; a checkpoint first if the journal is too full for it.
    /// `Full` only if it does not fit in an empty journal either.
    fn journal_entry(
        &mut self,
        writes: &[JournaledAppend],
    ) -> Result<Result<(), crate::store::journal::Full>, String> {
        let failed = |e: std::io::Error| format!("cannot write the journal: {e}");
        if self.faults.as_ref().is_some_and(|faults| faults.take()) {
            return Err(failed(std::io::Error::from_raw_os_error(libc::ENOSPC)));
        }
        match self.journal.write(writes).map_err(failed)? {
            Ok(()) => Ok(Ok(())),
            Err(crate::store::journal::Full) if self.journal.len() == 0 => {
                Ok(Err(crate::store::journal::Full))
            }
            Err(crate::store::journal::Full) => {
                self.checkpoint()?;
                self.journal.write(writes).map_err(failed)
            }
        }
    }

    /// Hands a durable batch to the readers: its records to `pending` (sled gets them at the
    /// next checkpoint, one value per game), its feed entries to sled's trees (one insert at a
    /// time: a `sled::Batch` or a transaction makes sled write and sync its IO buffer through
    /// its thread pool). After a crash, opening the store does this again for every journaled
    /// batch. Readers of the feed read only up to the durable head, sent after this.
    ///
    /// The batch is durable already (journaled): it is never reported failed from here. A feed
    /// entry sled refuses is logged; the journal brings it back at the next start.
    pub(super) fn hand_to_readers(&self, writes: Vec<JournaledAppend>) {
        let mut pending = self.pending.lock().expect("pending lock");
        for append in writes {
            for &(seq, position) in &append.marked {
                let inserted = self
                    .feed
                    .insert(position.to_be_bytes(), log_key(&append.game_id, seq))
                    .and_then(|_| {
                        self.feed_index
                            .insert(log_key(&append.game_id, position), &[])
                    });
                if let Err(e) = inserted {
                    tracing::error!(
                        game = %append.game_id,
                        seq,
                        position,
                        "cannot write the directory feed: {e} (the record is durable; the feed entry comes back from the journal at the next start)"
                    );
                }
            }
            pending.add(append.game_id, append.records);
        }
    }

    /// Flushes sled (every batch journaled so far is then in its files), then stores the
    /// journal's next generation and flushes again: from then on a restart skips the entries
    /// written so far, and the journal starts over.
    pub(super) fn checkpoint(&mut self) -> Result<(), String> {
        let started = std::time::Instant::now();
        let flush_failed = |e: sled::Error| format!("cannot flush the log: {e}");
        {
            // Into sled first, out of `pending` after, under its lock: see `LogTree`.
            let mut pending = self.pending.lock().expect("pending lock");
            for (name, records) in pending.games() {
                let (namespace, id) = name_parts(name);
                for run in chunks::runs(records) {
                    self.logs
                        .of(namespace)
                        .insert(log_key(id, run[0].0), chunks::encode_chunk(run))
                        .map_err(|e| format!("cannot write the log: {e}"))?;
                }
            }
            pending.clear();
        }
        self.db.flush().map_err(flush_failed)?;
        let next = self.journal.generation() + 1;
        self.db
            .insert(JOURNAL_GENERATION, &next.to_be_bytes())
            .map_err(flush_failed)?;
        self.db.flush().map_err(flush_failed)?;
        self.journal.start_over(next);
        crate::metrics::log_checkpointed(started.elapsed());
        Ok(())
    }
}
