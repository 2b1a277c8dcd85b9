//! Gang of Four deal by deal, from a log's public events (deal scores): its rows of
//! `gangs replay --summary` and of the web viewer's replay chart.

use crate::summary::{RoundRow, RoundTable};
use gangs_proto::v1 as pb;
use pb::gang_of_four_event::Kind as Gof;

/// One Gang of Four deal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DealRow {
    pub deal: u32,
    /// The seat that led the deal's first trick.
    pub leader: u32,
    /// The seat that went out first (absent when every seat was barred).
    pub went_out: Option<u32>,
    /// The seat with the most penalty this deal.
    pub loser: u32,
    /// Per seat, in seat order.
    pub seats: Vec<DealSeat>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DealSeat {
    pub cards_left: u32,
    /// Penalty points of this deal.
    pub penalty: u32,
    /// Running total after this deal.
    pub total: u32,
}

impl DealRow {
    /// The row as JSON: `gangs replay --summary --json` and the web viewer's rounds.
    pub fn to_json(&self) -> serde_json::Value {
        let seats: Vec<serde_json::Value> = self
            .seats
            .iter()
            .enumerate()
            .map(|(seat, s)| {
                serde_json::json!({
                    "seat": seat,
                    "cards_left": s.cards_left,
                    "penalty": s.penalty,
                    "total": s.total,
                })
            })
            .collect();
        serde_json::json!({
            "deal": self.deal,
            "leader": self.leader,
            "went_out": self.went_out,
            "loser": self.loser,
            "seats": seats,
        })
    }
}

/// Every finished deal among `events` (a log's events, in order).
pub fn deal_rows<'a>(events: impl IntoIterator<Item = &'a pb::GameEvent>) -> Vec<DealRow> {
    deals(events.into_iter().filter_map(|e| match &e.game {
        Some(pb::game_event::Game::GangOfFour(e)) => e.kind.as_ref(),
        _ => None,
    }))
}

/// The registry's summary: one row per finished deal.
pub(crate) fn table(created: &pb::Created, events: &[&pb::GameEvent]) -> RoundTable {
    let rows = deal_rows(events.iter().copied());
    let players = created.players as usize;
    let mut header: Vec<String> = ["deal", "leader", "went_out", "loser"]
        .map(String::from)
        .to_vec();
    for seat in 0..players {
        header.push(format!("seat{seat}_cards_left"));
        header.push(format!("seat{seat}_penalty"));
        header.push(format!("seat{seat}_total"));
    }
    let rows = rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                r.deal.to_string(),
                r.leader.to_string(),
                r.went_out.map_or(String::new(), |s| s.to_string()),
                r.loser.to_string(),
            ];
            for s in &r.seats {
                cells.extend([s.cards_left, s.penalty, s.total].map(|n| n.to_string()));
            }
            RoundRow {
                number: r.deal,
                cells,
                json: r.to_json(),
            }
        })
        .collect();
    RoundTable { header, rows }
}

/// The number of the deal `event` opens.
pub(crate) fn round_start(event: &pb::GameEvent) -> Option<u32> {
    match &event.game {
        Some(pb::game_event::Game::GangOfFour(e)) => match &e.kind {
            Some(Gof::Dealt(dealt)) => Some(dealt.deal_number),
            _ => None,
        },
        _ => None,
    }
}

fn deals<'a>(events: impl Iterator<Item = &'a Gof>) -> Vec<DealRow> {
    let mut rows = Vec::new();
    let mut leader = 0;
    for event in events {
        match event {
            Gof::Dealt(d) => leader = d.leader,
            Gof::DealScored(s) => rows.push(DealRow {
                deal: s.deal_number,
                leader,
                went_out: s.winner,
                loser: s.loser,
                seats: {
                    let mut seats = s.seats.clone();
                    seats.sort_by_key(|s| s.seat);
                    seats
                        .iter()
                        .map(|s| DealSeat {
                            cards_left: s.cards_left,
                            penalty: s.points,
                            total: s.total,
                        })
                        .collect()
                },
            }),
            _ => {}
        }
    }
    rows
}
