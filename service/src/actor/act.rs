//! A seat's action: checked against the game's state, applied by the engine, logged. A retry
//! (same seat and `action_id`) gets the first answer and applies nothing.

use super::durability::PendingReply;
use super::{GameActor, HostedDecision, HostedReport, Reply};
use crate::error::{HostError, HostResult};
use gangs_games::update::record_events;
use gangs_proto::quoted;
use gangs_proto::v1 as pb;
use pb::log_record::Record;

impl GameActor {
    pub(super) fn act(&mut self, request: pb::ActRequest, reply: Reply<pb::ActResponse>) {
        let seat = match self.seat_of(&request.token) {
            Ok(seat) => seat,
            Err(error) => return drop(reply.send(Err(error))),
        };
        // A retry: answer as the first time, apply nothing; the same id for another action is
        // a client bug, which must not look like success.
        if !request.action_id.is_empty() {
            if let Some(&seq) = self
                .seating
                .action_ids
                .get(&(seat, request.action_id.clone()))
            {
                if let Err(error) = self.same_action(seq, &request) {
                    return drop(reply.send(Err(error)));
                }
                return self.answer_when_durable(seq, reply, |actor| {
                    actor.act_response(&actor.records.get(seq), seat)
                });
            }
        }
        match self.apply_action(seat, request) {
            Ok((records, response)) => {
                self.submit(records, PendingReply::Act(vec![reply], response))
            }
            Err(error) => drop(reply.send(Err(error))),
        }
    }

    /// A hosted bot's report on the decision of its seat (`HostedDecision`): running (the
    /// seat's clock starts now), or failed (the seat plays its default action, logged as
    /// `timed_out` with the cause). Refused unless the game still awaits that decision.
    pub(super) fn hosted(&mut self, report: HostedReport) -> HostResult<()> {
        let HostedReport {
            token,
            expected_seq,
            decision,
        } = report;
        let seat = self.seat_of(&token)?;
        if self.is_over() || self.seating.start_seq.is_none() {
            return Err(HostError::NotNow("the game is not running".into()));
        }
        if expected_seq != self.last_seq() {
            return Err(HostError::StaleSeq(format!(
                "stale expected_seq {expected_seq}: the game is at seq {}",
                self.last_seq()
            )));
        }
        if self.game.decision(seat).is_none() {
            return Err(HostError::NotNow(format!(
                "seat {seat} has no decision to make now"
            )));
        }
        let now = super::unix_ms();
        match decision {
            HostedDecision::Running => {
                if let Some(clocks) = &mut self.timers.clocks {
                    clocks.started_running(seat, now);
                }
                Ok(())
            }
            HostedDecision::Failed(cause) => {
                self.time_out(seat, now, cause).map_err(HostError::Internal)
            }
        }
    }

    /// Whether a request reusing the action_id of record `seq` asks for the same thing.
    fn same_action(&self, seq: u64, request: &pb::ActRequest) -> HostResult<()> {
        let Some(Record::Acted(first)) = self.records.get(seq).record else {
            return Ok(());
        };
        let same_seq = request.expected_seq.is_none_or(|e| e + 1 == seq);
        if first.action == request.action && same_seq {
            return Ok(());
        }
        Err(HostError::Invalid(format!(
            "action_id {} was already used for a different action (seq {seq}): draw a new action_id for a new action",
            quoted(&request.action_id)
        )))
    }

    fn apply_action(
        &mut self,
        seat: usize,
        request: pb::ActRequest,
    ) -> HostResult<(Vec<pb::LogRecord>, pb::ActResponse)> {
        // Precedence (documented in the proto): over, then not started, then a stale seq.
        if self.is_over() {
            return Err(HostError::NotNow(match self.ended {
                None => "the game is over".to_string(),
                Some(_) => format!("the game is over: it was {}", self.over_word()),
            }));
        }
        if self.seating.start_seq.is_none() {
            let missing = self.seating.seats.len() as u32 - self.seats_taken();
            return Err(HostError::NotNow(format!(
                "the game has not started: waiting for {missing} more player(s) to join"
            )));
        }
        if let Some(expected) = request.expected_seq {
            if expected != self.last_seq() {
                return Err(HostError::StaleSeq(format!(
                    "stale expected_seq {expected}: the game is at seq {}; act on the newest update",
                    self.last_seq()
                )));
            }
        }
        let action = request
            .action
            .ok_or_else(|| HostError::Invalid("the request has no action".into()))?;
        let events = self.game.act(seat, &action)?;
        crate::metrics::action_accepted(self.game.kind());
        let acted = pb::Acted {
            seat: seat as u32,
            action: Some(action),
            action_id: request.action_id.clone(),
            events,
        };
        let record = self.push_record(Record::Acted(acted));
        if !request.action_id.is_empty() {
            self.seating
                .action_ids
                .insert((seat, request.action_id), record.seq);
        }
        let response = self.act_response(&record, seat);
        Ok((vec![record], response))
    }

    /// The answer to an action: its seq and its events as the acting seat may see them.
    fn act_response(&self, record: &pb::LogRecord, seat: usize) -> pb::ActResponse {
        let events = record_events(record)
            .iter()
            .filter_map(|e| self.game.redact(e, Some(seat)))
            .collect();
        pb::ActResponse {
            seq: record.seq,
            events,
        }
    }
}
