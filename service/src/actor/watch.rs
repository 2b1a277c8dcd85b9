//! What each seat (or a spectator) sees: the update of each record, the watchers it is fanned
//! out to (a slow one is cut off, never waited for), the catch-up of a watcher joining late,
//! and the log as `GetLog` shows it.
//!
//! An update is built, when a record is applied, only for the audiences (a seat, or the
//! spectators) someone watches then: most bots watch only their own seat, and a game nobody
//! watches builds none. A watcher that arrives while records are still being saved, for an
//! audience nobody watched when they were applied, gets those records from its catch-up, which
//! waits until they are durable and replays them from the log (the state has moved on by then);
//! its live updates start after them (`Watcher::after`).
//!
//! A stream its client drops (cancelled, connection gone) leaves its game's list at once,
//! whatever the game is doing: the stream's live part wakes the actor when dropped
//! (`LiveUpdates`), and the actor forgets every watcher whose stream is gone. Without that, a
//! game that writes nothing (waiting for seats, or running with nobody acting) kept every
//! cancelled spectator until its next record: memory anyone could grow without a token.
//!
//! Updates travel **encoded** (`Bytes`, the `pb::Update` message as it goes on the wire): each
//! audience's update is encoded once and the same bytes are shared by every stream of that
//! audience (a clone is a reference count), rather than a message cloned per watcher and
//! encoded again per stream. `watch_route.rs` passes them to the wire as they are.
//!
//! A stream may ask for views only when needed (`WatchViews::WhenNeeded`): its updates carry
//! the view only when the seat may act, in its first update and in the one that ends the game
//! (see `needs_view`). Such an audience may need two encodings of one update, with and without
//! the view; each is made at most once, and only when a watcher needs it.

use super::{GameActor, UpdateStream};
use crate::error::{HostError, HostResult};
use crate::store::Store;
use bytes::Bytes;
use gangs_games::clock::Clocks;
use gangs_games::replay::Replayer;
use gangs_games::update::{
    build_update, needs_view, update_without_view, wants_view, UpdateContext, WithView,
};
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use prost::Message;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::{mpsc, Notify};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};

/// An update as it goes on the wire: one gRPC message, its 5-byte prefix (not compressed, then
/// the length) and the encoded `pb::Update`, shared by every stream of its audience. The
/// `Watch` route hands these bytes to HTTP/2 as they are (`watch_route.rs`): neither copied nor
/// prefixed again per stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded(Bytes);

/// gRPC's message prefix: a compression flag byte and a big-endian u32 length.
const GRPC_PREFIX: usize = 5;

/// `Update.view`'s field number; the fields numbered below it are `seq`, `events`, `actor`.
const UPDATE_VIEW_FIELD: u32 = 4;

impl Encoded {
    /// `update` encoded once, as a gRPC message.
    pub fn of(update: &pb::Update) -> Encoded {
        // The length is known: `encode` would work it out again, walking the whole update.
        Encoded::message_of(update.encoded_len(), |frame| update.encode_raw(frame))
    }

    /// A gRPC message of `len` bytes, which `write` appends after the prefix.
    fn message_of(len: usize, write: impl FnOnce(&mut Vec<u8>)) -> Encoded {
        let mut frame = Vec::with_capacity(GRPC_PREFIX + len);
        frame.push(0);
        frame.extend_from_slice(
            &u32::try_from(len)
                .expect("an update under 4 GB")
                .to_be_bytes(),
        );
        write(&mut frame);
        debug_assert_eq!(frame.len(), GRPC_PREFIX + len, "the length written");
        Encoded(Bytes::from(frame))
    }

    /// `update`, built without its view, holding `view` (an encoded `GameView`): the bytes
    /// [`Encoded::of`] makes of the update with that view, the view spliced in as it is.
    pub fn with_view(mut update: pb::Update, view: &[u8]) -> Encoded {
        use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};
        debug_assert!(update.view.is_none(), "the view comes as bytes");
        // prost writes fields in number order: those before the view, the view, the rest.
        let before = pb::Update {
            seq: std::mem::take(&mut update.seq),
            events: std::mem::take(&mut update.events),
            actor: update.actor.take(),
            ..Default::default()
        };
        let after = update;
        let view_len = view.len() as u64;
        let len = before.encoded_len()
            + key_len(UPDATE_VIEW_FIELD)
            + encoded_len_varint(view_len)
            + view.len()
            + after.encoded_len();
        Encoded::message_of(len, |frame| {
            before.encode_raw(frame);
            encode_key(UPDATE_VIEW_FIELD, WireType::LengthDelimited, frame);
            encode_varint(view_len, frame);
            frame.extend_from_slice(view);
            after.encode_raw(frame);
        })
    }

    /// The encoded `pb::Update` alone.
    pub fn message(&self) -> &[u8] {
        &self.0[GRPC_PREFIX..]
    }

    /// The gRPC message, prefix included, as it goes in an HTTP/2 DATA frame.
    pub fn into_grpc_message(self) -> Bytes {
        self.0
    }
}

/// One record's update for one audience, encoded: with its view (`full`) and, for streams
/// that want views only when needed, without it (`light`; the same bytes as `full` when the
/// update needs its view). `None`: no watcher of the audience needed that form when the record
/// was applied.
#[derive(Debug, Clone, Default)]
pub(super) struct Built {
    full: Option<Encoded>,
    light: Option<Encoded>,
}

impl Built {
    /// Whether a new watcher with `views` finds every form it may be sent.
    fn serves(&self, views: WithView) -> bool {
        match views {
            WithView::Always => self.full.is_some(),
            WithView::WhenNeeded => self.full.is_some() && self.light.is_some(),
        }
    }
}

/// Encodes `update` (built without its view) in the forms asked for, each once; `view`, the
/// encoded view, when the full form carries one.
fn encode(update: pb::Update, view: Option<Vec<u8>>, full: bool, light: bool) -> Built {
    let Some(view) = view else {
        // No view (the game has not started, or only light streams and not needed): one form.
        let bytes = Encoded::of(&update);
        return Built {
            full: full.then(|| bytes.clone()),
            light: light.then_some(bytes),
        };
    };
    let needed = needs_view(&update);
    let without = (light && !needed).then(|| Encoded::of(&update));
    let with = Encoded::with_view(update, &view);
    Built {
        full: full.then(|| with.clone()),
        light: if needed {
            light.then_some(with)
        } else {
            without
        },
    }
}

/// A watched audience's update for one record, before its view is added.
struct Planned {
    seat: Option<usize>,
    /// Built without the view.
    update: pb::Update,
    /// The forms its watchers need (see [`Built`]).
    full: bool,
    light: bool,
    /// The full form carries the view.
    viewed: bool,
}

pub(super) struct Watcher {
    seat: Option<usize>,
    views: WithView,
    /// Nothing sent yet: the first update of a stream carries the view whatever `views` says.
    fresh: bool,
    /// Records up to this seq reach this watcher through its catch-up, not live.
    after: u64,
    updates: mpsc::Sender<HostResult<Encoded>>,
}

impl Watcher {
    fn new(
        seat: Option<usize>,
        views: WithView,
        fresh: bool,
        after: u64,
        updates: mpsc::Sender<HostResult<Encoded>>,
    ) -> Self {
        crate::metrics::game_watchers(1.0);
        Watcher {
            seat,
            views,
            fresh,
            after,
            updates,
        }
    }

    /// Ends this watcher's stream with `error` (a full buffer drops it: the stream ends
    /// either way once the watcher is dropped).
    pub(super) fn end(self, error: HostError) {
        let _ = self.updates.try_send(Err(error));
    }

    /// The form of an update this watcher is sent next.
    fn wants_full(&self) -> bool {
        self.views == WithView::Always || self.fresh
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        crate::metrics::game_watchers(-1.0);
    }
}

/// A watcher's live updates as its client holds them. Dropped, it closes its channel, then
/// wakes its actor (`GameActor::forget_gone_watchers`).
///
/// Why a shared `Notify` rather than a command per dropped stream or a future per watcher: a
/// command (`Unwatch`) needs a free slot in the game's channel, which a flood of actions may
/// have filled, exactly when it matters; awaiting every watcher's `Sender::closed()` costs the
/// actor a future and a waker per watcher, rebuilt as the list changes. One `Notify` per game
/// never fails, costs one small allocation per game, and coalesces a burst of cancels (one
/// stored permit) into one or two scans of the list, which `--max-watchers-per-game` bounds.
struct LiveUpdates {
    updates: ReceiverStream<HostResult<Encoded>>,
    gone: Arc<Notify>,
}

impl Stream for LiveUpdates {
    type Item = HostResult<Encoded>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.updates).poll_next(cx)
    }
}

impl Drop for LiveUpdates {
    fn drop(&mut self) {
        // Closed before the actor is woken: it must see this sender closed when it looks.
        self.updates.close();
        self.gone.notify_one();
    }
}

/// The watchers' part of a game's state: the open streams, and the signal a dropped stream
/// gives so that it leaves at once (whatever the game is doing).
#[derive(Default)]
pub(super) struct Watchers {
    pub(super) list: Vec<Watcher>,
    /// Woken when a watcher's stream is dropped.
    pub(super) gone: Arc<tokio::sync::Notify>,
}

impl GameActor {
    /// Forgets the watchers whose client dropped its stream (woken by `LiveUpdates::drop`).
    pub(super) fn forget_gone_watchers(&mut self) {
        self.watchers.list.retain(|w| !w.updates.is_closed());
    }

    /// Sends the durable record `seq`'s updates (one per audience, see `updates_for_watched`)
    /// to its watchers.
    pub(super) fn fan_out(&mut self, seq: u64, updates: &[Built]) {
        let spectator = updates.len() - 1;
        let id = &self.id;
        let buffer = self.settings.watcher_buffer;
        self.watchers.list.retain_mut(|w| {
            if seq <= w.after {
                return true;
            }
            let built = &updates[w.seat.unwrap_or(spectator)];
            let form = if w.wants_full() {
                &built.full
            } else {
                &built.light
            };
            let Some(update) = form else {
                // Cannot happen (a watcher registered after this record's apply starts after
                // it); were it to, a resume by seq beats a silent gap.
                let _ = w.updates.try_send(Err(HostError::Internal(format!(
                    "update {seq} of game {id} was not built for this stream: watch again from seq {}",
                    seq - 1
                ))));
                return false;
            };
            // The last free slot is kept for the status that tells a slow watcher it was cut off.
            if w.updates.capacity() <= 1 {
                tracing::info!(game = %id, seat = ?w.seat, "cutting off a watcher that fell behind");
                crate::metrics::watcher_cut_off();
                let _ = w.updates.try_send(Err(HostError::Exhausted(format!(
                    "you fell more than {buffer} updates behind game {id}: watch again with from_seq = the last seq you received"
                ))));
                return false;
            }
            w.fresh = false;
            w.updates.try_send(Ok(update.clone())).is_ok()
        });
    }

    /// The update of `record` for each seat and, last, the spectators, computed when the record
    /// is applied (the state moves on before the record is durable), for the audiences watched
    /// now only, each encoded once in the forms its watchers need. The views of all of them
    /// are made together (`Game::encoded_views`: what they share is encoded once).
    pub(super) fn updates_for_watched(&self, record: &pb::LogRecord) -> Vec<Built> {
        let audiences = (0..self.seating.seats.len()).map(Some).chain([None]);
        if self.watchers.list.is_empty() {
            // Nobody watches (bots that only act, a game between its players' streams): not
            // even the context is worked out.
            return audiences.map(|_| Built::default()).collect();
        }
        let context = self.update_context(record);
        let planned: Vec<Option<Planned>> = audiences
            .map(|seat| {
                let (mut full, mut light) = (false, false);
                for w in self.watchers.list.iter().filter(|w| w.seat == seat) {
                    // A fresh watcher wants the full form first, the light one after.
                    full |= w.wants_full();
                    light |= w.views == WithView::WhenNeeded;
                }
                if !(full || light) {
                    return None;
                }
                let update = update_without_view(&*self.game, record, seat, &context);
                // Only light streams: the view is made only if the update needs it.
                let with_view = if full {
                    WithView::Always
                } else {
                    WithView::WhenNeeded
                };
                Some(Planned {
                    seat,
                    viewed: wants_view(&update, &context, with_view),
                    update,
                    full,
                    light,
                })
            })
            .collect();
        let viewers: Vec<Option<usize>> = planned
            .iter()
            .flatten()
            .filter(|plan| plan.viewed)
            .map(|plan| plan.seat)
            .collect();
        let mut views = self.game.encoded_views(&viewers).into_iter();
        planned
            .into_iter()
            .map(|plan| match plan {
                None => Built::default(),
                Some(plan) => {
                    let view = if plan.viewed { views.next() } else { None };
                    encode(plan.update, view, plan.full, plan.light)
                }
            })
            .collect()
    }

    /// What every audience's update of `record` says beside the record and the state.
    fn update_context(&self, record: &pb::LogRecord) -> UpdateContext {
        let (started, seats_taken) = self.progress_at(record.seq);
        UpdateContext {
            started,
            seats_taken,
            deadline_unix_ms: self.timers.phase.as_ref().map(|t| t.unix_ms),
            clocks: self
                .timers
                .clocks
                .as_ref()
                .map(Clocks::to_pb)
                .unwrap_or_default(),
        }
    }

    /// Whether the game had started at `seq`, and how many seats were taken then.
    fn progress_at(&self, seq: u64) -> (bool, u32) {
        if self.seating.start_seq.is_some_and(|start| start <= seq) {
            return (true, self.seating.seats.len() as u32);
        }
        // Each seat knows the seq of its `joined` record: no record is decoded for this.
        let taken = self
            .seating
            .seats
            .iter()
            .flatten()
            .filter(|s| s.joined_seq <= seq)
            .count() as u32;
        (false, taken)
    }

    pub(super) fn watch(
        &mut self,
        token: &str,
        from_seq: u64,
        views: WithView,
    ) -> HostResult<UpdateStream> {
        let seat = if token.is_empty() {
            None
        } else {
            Some(self.seat_of(token)?)
        };
        if from_seq > self.last_seq() {
            return Err(HostError::OutOfRange(format!(
                "from_seq {from_seq} is beyond the game's last seq {}",
                self.last_seq()
            )));
        }
        // The records being saved reach this watcher live if their updates were built for its
        // audience; if not, its catch-up covers them once durable.
        let audience = seat.unwrap_or(self.seating.seats.len());
        let built = self
            .durability
            .pending
            .iter()
            .all(|p| p.updates.iter().all(|u| u[audience].serves(views)));
        let through = if built {
            self.durable_seq()
        } else {
            self.last_seq()
        };
        // Live updates after `through`, registered now so that none is missed. A finished
        // game's stream ends after the catch-up.
        let live = if self.is_over() && self.durability.pending.is_empty() {
            None
        } else {
            let (tx, rx) = mpsc::channel(self.settings.watcher_buffer + 1);
            // With no catch-up, its first live update is its first.
            let fresh = from_seq >= through;
            self.watchers
                .list
                .push(Watcher::new(seat, views, fresh, through, tx));
            Some(LiveUpdates {
                updates: ReceiverStream::new(rx),
                gone: self.watchers.gone.clone(),
            })
        };
        let catch_up: UpdateStream = if from_seq >= through {
            Box::pin(tokio_stream::empty())
        } else if from_seq + 1 == through && self.durability.pending.is_empty() {
            // The usual resume asks for the newest record only: the current state is its state.
            let record = self.records.get(through);
            // The first update of the stream: with its view.
            let context = self.update_context(&record);
            let update = build_update(&*self.game, &record, seat, &context, WithView::Always);
            Box::pin(tokio_stream::once(Ok(Encoded::of(&update))))
        } else {
            // Replayed from the log by a task as fast as the client reads: a client that never
            // reads holds a few updates, not the whole game, and the actor is not busy meanwhile.
            let (tx, rx) = mpsc::channel(CATCH_UP_BUFFER);
            let catch_up = CatchUp {
                store: self.store.clone(),
                durable: self.durability.durable.subscribe(),
                game_id: self.id.clone(),
                seat,
                views,
                from_seq,
                through,
                last_deadline: self.timers.phase.as_ref().map(|t| t.unix_ms),
                last_clocks: self.timers.clocks.as_ref().map(Clocks::to_pb),
            };
            tokio::spawn(catch_up.send_to(tx));
            Box::pin(ReceiverStream::new(rx))
        };
        Ok(match live {
            None => catch_up,
            Some(live) => Box::pin(catch_up.chain(live)),
        })
    }

    /// The durable records after `from_seq` as `GetLog` shows them.
    pub(super) fn log(&self, from_seq: u64) -> Vec<pb::LogRecord> {
        let finished = self.is_over();
        self.records
            .range(from_seq.saturating_add(1), self.durable_seq())
            .map(|r| self.game.public_record(&r, finished))
            .collect()
    }
}

/// Catch-up updates waiting for a slow reader: all a watcher that does not read costs.
const CATCH_UP_BUFFER: usize = 4;
/// Records a catch-up reads from the log at a time.
const CATCH_UP_CHUNK: usize = 64;

/// The updates of the durable records `from_seq + 1 ..= through` for one watcher, each with the
/// view as it was then: the game is replayed from the log, chunk by chunk, as the client reads.
struct CatchUp {
    store: Store,
    /// The game's durable seq: records up to `through` may still be being saved.
    durable: tokio::sync::watch::Receiver<u64>,
    game_id: String,
    seat: Option<usize>,
    views: WithView,
    from_seq: u64,
    through: u64,
    /// The phase deadline shown with the last record (the game's current one).
    last_deadline: Option<i64>,
    /// The seats' clocks shown with the last record: the actor's own, which after a rebuild
    /// give the host's gap back (the log alone does not know it).
    last_clocks: Option<Vec<pb::SeatClock>>,
}

impl CatchUp {
    async fn send_to(mut self, updates: mpsc::Sender<HostResult<Encoded>>) {
        if let Err(error) = self.run(&updates).await {
            if matches!(error, HostError::NotFound(_)) {
                tracing::info!(game = %self.game_id, "catch-up ended: {error}");
            } else {
                tracing::error!(game = %self.game_id, "catch-up failed: {error}");
            }
            let _ = updates.send(Err(error)).await;
        }
    }

    async fn run(&mut self, updates: &mpsc::Sender<HostResult<Encoded>>) -> HostResult<()> {
        let through = self.through;
        self.durable
            .wait_for(|&durable| durable >= through)
            .await
            .map_err(|_| {
                HostError::Storage(format!(
                "game {} stopped before its records up to seq {through} were saved: watch again",
                self.game_id
            ))
            })?;
        let mut replayer = Replayer::new();
        let (mut started, mut joined) = (false, 0u32);
        let mut after = 0;
        let mut first = true;
        while after < self.through {
            let limit = CATCH_UP_CHUNK.min((self.through - after) as usize);
            let chunk = self
                .store
                .read_range(&self.game_id, after, limit)
                .await
                .map_err(|e| HostError::Storage(format!("reading game {}: {e}", self.game_id)))?;
            if chunk.is_empty() {
                // Durable records gone: the game was deleted (`--retain-finished`) while this
                // stream was sent (found by the soak test): it no longer exists.
                return Err(HostError::NotFound(format!(
                    "game {} was deleted (--retain-finished) while its stream was sent: its log ends at seq {after}, before seq {}",
                    self.game_id, self.through
                )));
            }
            for record in chunk {
                after = record.seq;
                replayer.apply(&record).map_err(|e| {
                    HostError::Internal(format!("game {} does not replay: {e}", self.game_id))
                })?;
                match &record.record {
                    Some(Record::Started(_)) => started = true,
                    Some(Record::Joined(_)) => joined += 1,
                    _ => {}
                }
                if record.seq <= self.from_seq {
                    continue;
                }
                let game = replayer.game().expect("created is the first record");
                let context = UpdateContext {
                    started,
                    seats_taken: if started {
                        game.players() as u32
                    } else {
                        joined
                    },
                    deadline_unix_ms: (record.seq == self.through)
                        .then_some(self.last_deadline)
                        .flatten(),
                    clocks: match (&self.last_clocks, record.seq == self.through) {
                        (Some(clocks), true) => clocks.clone(),
                        _ => replayer.clocks().map(Clocks::to_pb).unwrap_or_default(),
                    },
                };
                // The first update of the stream carries the view, whatever `views` says.
                let with_view = if first { WithView::Always } else { self.views };
                first = false;
                let update = build_update(game, &record, self.seat, &context, with_view);
                if updates.send(Ok(Encoded::of(&update))).await.is_err() {
                    // The client went away: so does the catch-up, and its memory.
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An encoded update is one gRPC message as the generated server writes it: a zero
    /// compression flag, the message's length big-endian, then the message.
    #[test]
    fn an_encoded_update_is_a_whole_grpc_message() {
        let update = pb::Update {
            seq: 42,
            actor: Some(1),
            seat: Some(2),
            seats_taken: 4,
            status: pb::GameStatus::Running as i32,
            ..Default::default()
        };
        let encoded = Encoded::of(&update);
        assert_eq!(encoded.message(), update.encode_to_vec().as_slice());
        let wire = encoded.clone().into_grpc_message();
        assert_eq!(wire[0], 0, "not compressed");
        let len = u32::from_be_bytes(wire[1..GRPC_PREFIX].try_into().expect("4 bytes"));
        assert_eq!(len as usize, wire.len() - GRPC_PREFIX);
        assert_eq!(pb::Update::decode(encoded.message()), Ok(update));
        // An empty update (every field at its default) is a prefix alone.
        let empty = Encoded::of(&pb::Update::default()).into_grpc_message();
        assert_eq!(&empty[..], &[0, 0, 0, 0, 0]);
    }

    /// The live fan-out's updates (the views of all audiences made together, spliced into
    /// each update) are the bytes of the update built with its view, for every kind, seat and
    /// the spectator, over whole games.
    #[test]
    fn a_spliced_view_makes_the_same_bytes_as_the_update_with_its_view() {
        use rand::{Rng, SeedableRng};
        for kind in gangs_games::kind_names() {
            let mut game = gangs_games::new_game(kind, None, 11, None).expect("a default game");
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
            let events = game.start();
            let mut record = pb::LogRecord {
                seq: 6,
                unix_ms: 1,
                record: Some(Record::Started(pb::Started { events })),
            };
            let audiences: Vec<Option<usize>> =
                (0..game.players()).map(Some).chain([None]).collect();
            let context = UpdateContext {
                started: true,
                seats_taken: 4,
                deadline_unix_ms: Some(7),
                clocks: vec![pb::SeatClock {
                    seat: 1,
                    deadline_unix_ms: Some(99),
                    bank_ms: 5,
                    absent: true,
                }],
            };
            for seq in 6..66 {
                let views = game.encoded_views(&audiences);
                for (&seat, view) in audiences.iter().zip(&views) {
                    let without = update_without_view(&*game, &record, seat, &context);
                    let whole = build_update(&*game, &record, seat, &context, WithView::Always);
                    assert_eq!(
                        Encoded::with_view(without, view),
                        Encoded::of(&whole),
                        "{kind} seat {seat:?} seq {seq}"
                    );
                }
                let Some(&actor) = game.actors().first() else {
                    break;
                };
                let legal = game.legal_actions(actor);
                let action = legal[rng.random_range(0..legal.len())].clone();
                let events = game.act(actor, &action).expect("a legal action");
                record = pb::LogRecord {
                    seq: seq + 1,
                    unix_ms: 1,
                    record: Some(Record::Acted(pb::Acted {
                        seat: actor as u32,
                        action: Some(action),
                        action_id: String::new(),
                        events,
                    })),
                };
            }
        }
    }
}
