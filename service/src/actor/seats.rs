//! Seats: joining a game, the secret token each seat gets, and join retries (same `join_id`).
//! The game starts (a `started` record) when the last seat is taken.

use super::durability::PendingReply;
use super::{GameActor, Reply, MAX_ACTION_ID_LEN, MAX_NAME_LEN};
use crate::error::{HostError, HostResult};
use gangs_proto::v1 as pb;
use pb::log_record::Record;

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

impl GameActor {
    pub(super) fn seats_taken(&self) -> u32 {
        self.seats.iter().filter(|s| s.is_some()).count() as u32
    }

    /// The seat a token holds.
    pub(super) fn seat_of(&self, token: &str) -> HostResult<usize> {
        if token.is_empty() {
            return Err(HostError::Invalid(
                "a seat token is required: JoinGame returns it".into(),
            ));
        }
        self.tokens.get(token).copied().ok_or_else(|| {
            HostError::Permission(format!("this token holds no seat in game {}", self.id))
        })
    }

    /// A join: a retry (same join_id) gets the first answer once it is durable; a new join
    /// takes a seat and answers once its record is durable.
    pub(super) fn join(
        &mut self,
        seat: Option<u32>,
        name: String,
        join_id: String,
        reply: Reply<pb::JoinGameResponse>,
    ) {
        if let Some(first) = self.seat_joined_with(&join_id) {
            let seq = first.seq;
            return self.answer_when_durable(seq, reply, |_| first);
        }
        match self.take_seat(seat, name, join_id) {
            Ok((records, response)) => {
                self.submit(records, PendingReply::Join(vec![reply], response))
            }
            Err(error) => drop(reply.send(Err(error))),
        }
    }

    /// The answer of the join made with `join_id`, if any (an empty id never matches).
    fn seat_joined_with(&self, join_id: &str) -> Option<pb::JoinGameResponse> {
        self.seats.iter().enumerate().find_map(|(seat, s)| {
            s.as_ref()
                .filter(|s| !join_id.is_empty() && s.join_id == join_id)
                .map(|s| s.join_answer(seat))
        })
    }

    fn take_seat(
        &mut self,
        seat: Option<u32>,
        name: String,
        join_id: String,
    ) -> HostResult<(Vec<pb::LogRecord>, pb::JoinGameResponse)> {
        if name.chars().count() > MAX_NAME_LEN {
            return Err(HostError::Invalid(format!(
                "name is longer than {MAX_NAME_LEN} characters"
            )));
        }
        if join_id.len() > MAX_ACTION_ID_LEN {
            return Err(HostError::Invalid(format!(
                "join_id is longer than {MAX_ACTION_ID_LEN} bytes"
            )));
        }
        let players = self.seats.len();
        let seat =
            match seat {
                Some(s) if s as usize >= players => {
                    return Err(HostError::Invalid(format!(
                        "seat {s} does not exist: this game has seats 0 to {}",
                        players - 1
                    )))
                }
                Some(s) if self.seats[s as usize].is_some() => {
                    return Err(HostError::NotNow(format!("seat {s} is already taken")))
                }
                Some(s) => s as usize,
                None => self.seats.iter().position(|s| s.is_none()).ok_or_else(|| {
                    HostError::NotNow("the game is full: every seat is taken".into())
                })?,
            };
        let name = if name.is_empty() {
            format!("seat {seat}")
        } else {
            name
        };
        // 128 random bits from the OS-seeded CSPRNG: unguessable.
        let token = format!("{:032x}", rand::random::<u128>());
        self.tokens.insert(token.clone(), seat);
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
        self.seats[seat] = Some(taken);
        if self.seats.iter().all(|s| s.is_some()) {
            let events = self.game.start();
            let record = self.push_record(Record::Started(pb::Started { events }));
            self.start_seq = Some(record.seq);
            records.push(record);
        }
        Ok((records, response))
    }
}
