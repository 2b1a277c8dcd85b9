//! A game deal by deal (Gang of Four) or heist by heist (The Gang), read from its log's events:
//! `gangs replay --summary`. Only public events are read (deal scores, showdowns, chip moves),
//! so a running game's public log summarizes too, up to its last finished deal or heist.

use crate::the_gang::words::{cards_words, category_word, street_word};
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::{Challenge, Specialist};
use pb::gang_of_four_event::Kind as Gof;
use pb::log_record::Record;
use pb::the_gang_event::Kind as Tg;

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

/// One heist of The Gang.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeistRow {
    pub heist: u32,
    /// "basic", "advanced", "pro" or "gangster".
    pub mode: String,
    /// Active challenge cards, by name.
    pub challenges: Vec<String>,
    /// The active specialist card, by name.
    pub specialist: Option<String>,
    /// Each street that had a chip phase, with its final stars by seat (0: no chip).
    pub chips: Vec<(String, Vec<u32>)>,
    /// Each seat's showdown hand: cards and category, in seat order.
    pub hands: Vec<String>,
    pub success: bool,
    /// Vaults opened and alarms rung so far, after this heist.
    pub vaults: u32,
    pub alarms: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Summary {
    GangOfFour(Vec<DealRow>),
    TheGang(Vec<HeistRow>),
}

/// Every finished deal or heist of the log (`records` as `GetLog` or a game file gives them).
pub fn summarize(records: &[pb::LogRecord]) -> Result<Summary, String> {
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
        .filter_map(|e| e.game.as_ref());
    match created.kind.as_str() {
        crate::GANG_OF_FOUR => Ok(Summary::GangOfFour(deals(events.filter_map(|e| match e {
            pb::game_event::Game::GangOfFour(e) => e.kind.as_ref(),
            _ => None,
        })))),
        crate::THE_GANG => {
            let mode = match created.options.as_ref().and_then(|o| o.game.as_ref()) {
                Some(pb::game_options::Game::TheGang(o)) => o.mode,
                _ => 0,
            };
            let mode = pb::TheGangMode::try_from(mode)
                .map(|m| {
                    m.as_str_name()
                        .trim_start_matches("THE_GANG_MODE_")
                        .to_lowercase()
                })
                .unwrap_or_else(|_| "?".into());
            Ok(Summary::TheGang(heists(
                created.players as usize,
                &mode,
                events.filter_map(|e| match e {
                    pb::game_event::Game::TheGang(e) => e.kind.as_ref(),
                    _ => None,
                }),
            )))
        }
        other => Err(format!("unknown game kind {other:?}")),
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

fn heists<'a>(players: usize, mode: &str, events: impl Iterator<Item = &'a Tg>) -> Vec<HeistRow> {
    let mut rows = Vec::new();
    let mut current: Option<HeistRow> = None;
    // The open street's chips: stars held by each seat.
    let mut street: Option<(i32, Vec<u32>)> = None;
    for event in events {
        match event {
            Tg::HeistStarted(h) => {
                current = Some(HeistRow {
                    heist: h.heist,
                    mode: mode.to_string(),
                    challenges: h
                        .challenges
                        .iter()
                        .map(|&c| {
                            Challenge::from_number(c)
                                .map_or("?", |c| c.name())
                                .to_string()
                        })
                        .collect(),
                    specialist: h.specialist.map(|s| {
                        Specialist::from_number(s)
                            .map_or("?", |s| s.name())
                            .to_string()
                    }),
                    chips: Vec::new(),
                    hands: vec![String::new(); players],
                    success: false,
                    vaults: 0,
                    alarms: 0,
                });
            }
            Tg::PhaseOpened(p) => street = Some((p.street, vec![0; players])),
            Tg::ChipMoved(m) => {
                if let Some((_, held)) = &mut street {
                    let seat = m.seat as usize;
                    if seat < players {
                        held[seat] = if m.returned { 0 } else { m.stars };
                    }
                    if let Some(from) = m.from_seat.filter(|&f| (f as usize) < players) {
                        held[from as usize] = 0;
                    }
                }
            }
            Tg::ChipGiven(g) => {
                if let Some((_, held)) = &mut street {
                    if let Some(h) = held.get_mut(g.seat as usize) {
                        *h = g.stars;
                    }
                }
            }
            Tg::PhaseClosed(c) => {
                if let (Some(row), Some((open, held))) = (&mut current, street.take()) {
                    if open == c.street {
                        row.chips.push((street_word(c.street).to_string(), held));
                    }
                }
            }
            Tg::Showdown(s) => {
                if let Some(row) = &mut current {
                    for r in &s.reveals {
                        if let Some(hand) = row.hands.get_mut(r.seat as usize) {
                            *hand = format!(
                                "{} ({})",
                                cards_words(&r.cards),
                                category_word(r.category)
                            );
                        }
                    }
                }
            }
            Tg::HeistEnded(e) => {
                if let Some(mut row) = current.take() {
                    row.success = e.success;
                    row.vaults = e.vaults;
                    row.alarms = e.alarms;
                    rows.push(row);
                }
            }
            _ => {}
        }
    }
    rows
}
