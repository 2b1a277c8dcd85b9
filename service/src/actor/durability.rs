//! Durability: records go to the store, and only once the store says they are durable are
//! callers answered and watchers told (in log order). A retried request whose first answer
//! is still being saved waits for the same flush (`answer_when_durable`). A storage failure
//! fails every pending caller and ends the actor (memory may be ahead of the log); the next
//! call reloads the game from the log, so an outage that heals costs retries, not the game.

use super::{GameActor, Reply};
use crate::error::HostError;
use crate::store::{Durable, EncodedRecord};
use gangs_proto::v1 as pb;
use std::collections::VecDeque;

/// What to do once a batch of records is durable.
pub(super) struct Pending {
    pub(super) last_seq: u64,
    /// One entry per record (seq `last_seq - len + 1 ..`): the update of each seat (index =
    /// seat) and, last, the spectator's, encoded; built only for the audiences watched when the
    /// record was applied (empty for the others: see `watch.rs`).
    pub(super) updates: Vec<Vec<super::watch::Built>>,
    pub(super) reply: PendingReply,
}

pub(super) enum PendingReply {
    None,
    Created(Reply<()>),
    /// Several replies when a retry (same join_id) came while the join was being saved.
    Join(Vec<Reply<pb::JoinGameResponse>>, pb::JoinGameResponse),
    Act(Vec<Reply<pb::ActResponse>>, pb::ActResponse),
    Cancel(Vec<Reply<pb::CancelGameResponse>>, pb::CancelGameResponse),
}

/// An answer a retried request can wait for: where its waiting callers are in a pending batch.
pub(super) trait Retried: Sized {
    fn waiters(reply: &mut PendingReply) -> Option<&mut Vec<Reply<Self>>>;
}

impl Retried for pb::JoinGameResponse {
    fn waiters(reply: &mut PendingReply) -> Option<&mut Vec<Reply<Self>>> {
        match reply {
            PendingReply::Join(replies, _) => Some(replies),
            _ => None,
        }
    }
}

impl Retried for pb::ActResponse {
    fn waiters(reply: &mut PendingReply) -> Option<&mut Vec<Reply<Self>>> {
        match reply {
            PendingReply::Act(replies, _) => Some(replies),
            _ => None,
        }
    }
}

impl Retried for pb::CancelGameResponse {
    fn waiters(reply: &mut PendingReply) -> Option<&mut Vec<Reply<Self>>> {
        match reply {
            PendingReply::Cancel(replies, _) => Some(replies),
            _ => None,
        }
    }
}

/// The seqs of `records` that change the game's place in the directory (the store's feed,
/// read by `WatchGames` and the webhooks): created, a seat taken, started, ended (cancelled or
/// abandoned) and, once the game is `over` by its rules, the batch's last record (nothing is
/// played after the record that finished a game, so that one is it).
pub(crate) fn directory_marks(records: &[pb::LogRecord], over: bool) -> Vec<u64> {
    use pb::log_record::Record;
    let mut marks: Vec<u64> = records
        .iter()
        .filter(|r| {
            matches!(
                r.record,
                Some(
                    Record::Created(_) | Record::Joined(_) | Record::Started(_) | Record::Ended(_)
                )
            )
        })
        .map(|r| r.seq)
        .collect();
    if let Some(last) = records.last() {
        let played = matches!(
            last.record,
            Some(Record::Acted(_) | Record::TimedOut(_) | Record::Expired(_))
        );
        if over && played {
            marks.push(last.seq);
        }
    }
    marks
}

/// Answers every caller waiting for one batch.
fn answer_all<T: Clone>(replies: Vec<Reply<T>>, answer: Result<T, HostError>) {
    for reply in replies {
        let _ = reply.send(answer.clone());
    }
}

/// The durability part of a game's state: what was handed to the store and who waits for it.
pub(super) struct Durability {
    /// The last durable seq; catch-up tasks subscribe to wait for records still being saved.
    pub(super) durable: tokio::sync::watch::Sender<u64>,
    /// Answers and updates waiting for their records to be durable, oldest first.
    pub(super) pending: VecDeque<Pending>,
    /// Appends handed to the store, oldest first, each with its last seq: the actor awaits
    /// the oldest itself (a game's appends become durable in order), no task in between.
    pub(super) in_flight: VecDeque<(u64, Durable)>,
    /// Set when the store failed: the state in memory may be ahead of the disk.
    pub(super) broken: Option<String>,
}

impl Default for Durability {
    fn default() -> Self {
        Durability {
            durable: tokio::sync::watch::channel(0).0,
            pending: VecDeque::new(),
            in_flight: VecDeque::new(),
            broken: None,
        }
    }
}

impl GameActor {
    /// The answer to a retry of the request that wrote record `seq`: now if that record is
    /// durable (`answer` computes it), else with the first caller once its flush is done.
    pub(super) fn answer_when_durable<T: Retried>(
        &mut self,
        seq: u64,
        reply: Reply<T>,
        answer: impl FnOnce(&GameActor) -> T,
    ) {
        if seq <= self.durable_seq() {
            let _ = reply.send(Ok(answer(self)));
        } else if let Some(waiters) = self
            .durability
            .pending
            .iter_mut()
            .find(|p| p.last_seq >= seq)
            .and_then(|p| T::waiters(&mut p.reply))
        {
            waiters.push(reply);
        } else {
            // Neither durable nor in a batch being saved that answers this kind of request:
            // nothing would answer it later, so say so now (a dropped reply reads as the game's
            // actor gone). Not expected: a retry's record is in the batch of the request that
            // wrote it, and a broken store is answered before any command gets here.
            tracing::error!(game = %self.id, seq, "a retried request's record is neither durable nor being saved");
            let _ = reply.send(Err(HostError::Internal(format!(
                "record {seq} of game {} is neither saved nor being saved",
                self.id
            ))));
        }
    }

    /// Sends records to the store; what follows happens in `on_durable`.
    pub(super) fn submit(&mut self, records: Vec<pb::LogRecord>, reply: PendingReply) {
        self.arm_timer();
        let last_seq = records.last().map(|r| r.seq).unwrap_or(self.last_seq());
        let updates = records
            .iter()
            .map(|r| self.updates_for_watched(r))
            .collect();
        self.durability.pending.push_back(Pending {
            last_seq,
            updates,
            reply,
        });
        let marked = directory_marks(&records, self.is_over());
        // With the bytes the actor keeps (`push_record` encoded them): the store writes them
        // as they are, without encoding the records again.
        let records = records
            .into_iter()
            .map(|record| {
                let bytes = self.records.bytes(record.seq);
                debug_assert_eq!(
                    <pb::LogRecord as prost::Message>::decode(&bytes[..]).as_ref(),
                    Ok(&record),
                    "the bytes kept are the submitted record's encoding"
                );
                EncodedRecord { record, bytes }
            })
            .collect();
        let done = self.store.append_encoded(&self.id, records, marked);
        self.durability.in_flight.push_back((last_seq, done));
    }

    pub(super) fn on_durable(&mut self, seq: u64, result: Result<(), String>) {
        if let Err(reason) = result {
            tracing::error!(game = %self.id, seq, "storage failure: {reason}");
            self.durability.broken = Some(format!("storage failure: {reason}"));
            let error = HostError::Storage(format!("not saved: {reason}"));
            for pending in self.durability.pending.drain(..) {
                match pending.reply {
                    PendingReply::None => {}
                    PendingReply::Created(r) => drop(r.send(Err(error.clone()))),
                    PendingReply::Join(rs, _) => answer_all(rs, Err(error.clone())),
                    PendingReply::Act(rs, _) => answer_all(rs, Err(error.clone())),
                    PendingReply::Cancel(rs, _) => answer_all(rs, Err(error.clone())),
                }
            }
            self.watchers.list.clear();
            return;
        }
        // The flusher writes batches in order: everything up to `seq` is durable.
        self.durability.durable.send_if_modified(|durable| {
            let newer = seq > *durable;
            *durable = (*durable).max(seq);
            newer
        });
        // Before anyone is answered: a caller that lists games next must see this seq.
        self.publish_summary();
        while self
            .durability
            .pending
            .front()
            .is_some_and(|p| p.last_seq <= self.durable_seq())
        {
            let pending = self.durability.pending.pop_front().expect("checked above");
            match pending.reply {
                PendingReply::None => {}
                PendingReply::Created(r) => drop(r.send(Ok(()))),
                PendingReply::Join(rs, response) => answer_all(rs, Ok(response)),
                PendingReply::Act(rs, response) => answer_all(rs, Ok(response)),
                PendingReply::Cancel(rs, response) => answer_all(rs, Ok(response)),
            }
            let first_seq = pending.last_seq + 1 - pending.updates.len() as u64;
            for (seq, updates) in (first_seq..).zip(pending.updates) {
                self.fan_out(seq, &updates);
            }
        }
        if self.is_over() && self.durability.pending.is_empty() {
            // The final update is out: end every stream.
            self.watchers.list.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actor::{Settings, Summaries};

    #[tokio::test]
    async fn a_retry_whose_record_nobody_is_saving_gets_an_answer() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _closer) = crate::store::sled::SledStore::open(dir.path()).unwrap();
        let kind = gangs_games::kinds()[0].name;
        let created = pb::Created {
            kind: kind.into(),
            seed: Some(1),
            ..Default::default()
        };
        let (game, created) = GameActor::new_game(created).unwrap();
        let mut actor = GameActor::empty(
            "0123456789abcdef".to_string(),
            store,
            Summaries::default(),
            Settings::default(),
            game,
            created,
        );
        let (reply, answer) = tokio::sync::oneshot::channel();
        actor.answer_when_durable::<pb::ActResponse>(actor.durable_seq() + 5, reply, |_| {
            unreachable!("the record is not durable")
        });
        match answer.await {
            Ok(Err(HostError::Internal(message))) => assert!(message.contains("neither saved")),
            other => panic!("expected an internal error, got {other:?}"),
        }
    }
}
