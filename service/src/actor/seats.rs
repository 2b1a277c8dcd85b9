//! Seats: joining a game, the secret token each seat gets, join retries (same `join_id`), and
//! reserved seats (a game created with `reserve_seats`: each seat is joined only with its own
//! invitation, which also gets its holder the seat's answer again). The game starts (a
//! `started` record) when the last seat is taken.

use super::durability::PendingReply;
use super::{GameActor, Reply};
use crate::error::{HostError, HostResult};
use crate::secret::constant_time_eq;
use gangs_proto::quoted;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use std::collections::HashMap;

pub(super) struct Seat {
    pub(super) name: String,
    pub(super) token: String,
    /// The request's join_id (may be empty): a retry with it gets this seat's answer again.
    pub(super) join_id: String,
    /// Seq of the `joined` record.
    pub(super) joined_seq: u64,
}

impl Seat {
    fn join_answer(&self, seat: usize) -> pb::JoinGameResponse {
        pb::JoinGameResponse {
            seat: seat as u32,
            token: self.token.clone(),
            seq: self.joined_seq,
        }
    }
}

/// The seats' part of a game's state: who sits where (by token), when the game started, and
/// every action id a seat sent (a retry is answered as the first time).
pub(super) struct Seating {
    pub(super) seats: Vec<Option<Seat>>,
    pub(super) tokens: HashMap<String, usize>,
    /// Seq of the `started` record: the game started once every seat was taken.
    pub(super) start_seq: Option<u64>,
    /// (seat, action id) -> seq of the record that applied it.
    pub(super) action_ids: HashMap<(usize, String), u64>,
}

impl Seating {
    pub(super) fn new(players: usize) -> Seating {
        Seating {
            seats: (0..players).map(|_| None).collect(),
            tokens: HashMap::new(),
            start_seq: None,
            action_ids: HashMap::new(),
        }
    }
}

impl GameActor {
    pub(super) fn seats_taken(&self) -> u32 {
        self.seating.seats.iter().filter(|s| s.is_some()).count() as u32
    }

    /// The seat a token holds.
    pub(super) fn seat_of(&self, token: &str) -> HostResult<usize> {
        if token.is_empty() {
            return Err(HostError::Invalid(
                "a seat token is required: JoinGame returns it".into(),
            ));
        }
        self.seating.tokens.get(token).copied().ok_or_else(|| {
            HostError::Permission(format!("this token holds no seat in game {}", self.id))
        })
    }

    /// A join: a retry (same join_id, or a reserved seat's invitation) gets the first answer
    /// once it is durable; a new join takes a seat and answers once its record is durable.
    pub(super) fn join(
        &mut self,
        seat: Option<u32>,
        name: String,
        join_id: String,
        invitation: String,
        reply: Reply<pb::JoinGameResponse>,
    ) {
        if let Some((index, first)) = self.seat_joined_with(&join_id) {
            if let Err(error) = self.same_join(index, seat, &name, &invitation, &join_id) {
                return drop(reply.send(Err(error)));
            }
            let seq = first.seq;
            return self.answer_when_durable(seq, reply, |_| first);
        }
        if invitation.is_empty() && self.created.create_id.starts_with("ladder:") {
            // A ladder seats its bots itself, running or over.
            let error = HostError::Permission(format!(
                "game {} is a ladder game: a ladder bot never joins; it queues with its bot key (Ladders.Queue; bots take --ladder NAME --bot-key KEY) and plays the seat the `matched` event gives it (Watch and Act with that token)",
                self.id
            ));
            return drop(reply.send(Err(error)));
        }
        if self.is_over() {
            let error = HostError::NotNow(format!(
                "game {} is over ({}): no seat can be taken",
                self.id,
                self.over_word()
            ));
            return drop(reply.send(Err(error)));
        }
        let seat = match self.invited_seat(seat, &invitation) {
            Ok(Some(index)) => match &self.seating.seats[index] {
                // The invitation's holder joins again: its seat's answer.
                Some(taken) => {
                    let first = taken.join_answer(index);
                    return self.answer_when_durable(first.seq, reply, |_| first);
                }
                None => Some(index as u32),
            },
            Ok(None) => seat,
            Err(error) => return drop(reply.send(Err(error))),
        };
        match self.take_seat(seat, name, join_id) {
            Ok((records, response)) => {
                self.submit(records, PendingReply::Join(vec![reply], response))
            }
            Err(error) => drop(reply.send(Err(error))),
        }
    }

    /// The seat and answer of the join made with `join_id`, if any (an empty id never matches).
    fn seat_joined_with(&self, join_id: &str) -> Option<(usize, pb::JoinGameResponse)> {
        self.seating.seats.iter().enumerate().find_map(|(seat, s)| {
            s.as_ref()
                .filter(|s| !join_id.is_empty() && s.join_id == join_id)
                .map(|s| (seat, s.join_answer(seat)))
        })
    }

    /// Whether a join reusing the join_id of seat `index` asks for the same thing.
    fn same_join(
        &self,
        index: usize,
        seat: Option<u32>,
        name: &str,
        invitation: &str,
        join_id: &str,
    ) -> HostResult<()> {
        let first = self.seating.seats[index].as_ref().expect("a joined seat");
        let same_seat = seat.is_none_or(|s| s as usize == index);
        let same_name = first.name == seat_name(name, index);
        let same_invitation = match self.created.invitations.get(index) {
            Some(expected) if self.created.reserve_seats => expected == invitation,
            _ => invitation.is_empty(),
        };
        if same_seat && same_name && same_invitation {
            return Ok(());
        }
        Err(HostError::Invalid(format!(
            "join_id {} was already used for a different join (seat {index} as {}): draw a new join_id for a new join",
            quoted(join_id),
            quoted(&first.name)
        )))
    }

    /// For a game with reserved seats, the seat `invitation` opens (refused without one, with
    /// a wrong one, or with another seat asked for); for an open game, none (and no
    /// invitation may be sent).
    fn invited_seat(&self, seat: Option<u32>, invitation: &str) -> HostResult<Option<usize>> {
        if !self.created.reserve_seats {
            if invitation.is_empty() {
                return Ok(None);
            }
            return Err(HostError::Invalid(format!(
                "game {} does not reserve its seats: join without an invitation",
                self.id
            )));
        }
        if invitation.is_empty() {
            return Err(HostError::Permission(format!(
                "game {} reserves its seats: send the seat's invitation (CreateGame returned one per seat; `gangs join GAME --invitation X`, bots take --invitation X)",
                self.id
            )));
        }
        let index = self
            .created
            .invitations
            .iter()
            .position(|i| constant_time_eq(i.as_bytes(), invitation.as_bytes()))
            .ok_or_else(|| {
                HostError::Permission(format!("this invitation opens no seat of game {}", self.id))
            })?;
        match seat {
            Some(s) if s as usize != index => Err(HostError::Invalid(format!(
                "this invitation is for seat {index}, not seat {s}: omit the seat or ask for {index}"
            ))),
            _ => Ok(Some(index)),
        }
    }

    fn take_seat(
        &mut self,
        seat: Option<u32>,
        name: String,
        join_id: String,
    ) -> HostResult<(Vec<pb::LogRecord>, pb::JoinGameResponse)> {
        let players = self.seating.seats.len();
        let seat = match seat {
            Some(s) if s as usize >= players => {
                return Err(HostError::Invalid(format!(
                    "seat {s} does not exist: this game has seats 0 to {}",
                    players - 1
                )))
            }
            Some(s) if self.seating.seats[s as usize].is_some() => {
                return Err(HostError::NotNow(format!("seat {s} is already taken")))
            }
            Some(s) => s as usize,
            None => self
                .seating
                .seats
                .iter()
                .position(|s| s.is_none())
                .ok_or_else(|| HostError::NotNow("the game is full: every seat is taken".into()))?,
        };
        let name = seat_name(&name, seat);
        // 128 random bits from the OS-seeded CSPRNG: unguessable.
        let token = format!("{:032x}", rand::random::<u128>());
        self.seating.tokens.insert(token.clone(), seat);
        let joined = pb::Joined {
            seat: seat as u32,
            name: name.clone(),
            token: token.clone(),
            join_id: join_id.clone(),
        };
        let mut records = vec![self.push_record(Record::Joined(joined))];
        let taken = Seat {
            name,
            token,
            join_id,
            joined_seq: records[0].seq,
        };
        let response = taken.join_answer(seat);
        self.seating.seats[seat] = Some(taken);
        if self.seating.seats.iter().all(|s| s.is_some()) {
            let events = self.game.start();
            let record = self.push_record(Record::Started(pb::Started { events }));
            self.seating.start_seq = Some(record.seq);
            records.push(record);
        }
        Ok((records, response))
    }
}

/// The name a seat is shown with: the one its bot gave, or "seat N".
fn seat_name(given: &str, seat: usize) -> String {
    if given.is_empty() {
        format!("seat {seat}")
    } else {
        given.to_string()
    }
}
