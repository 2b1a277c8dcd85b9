//! The Gang heist by heist, from a log's public events (chip moves, showdowns, heist
//! results): its rows of `gangs replay --summary` and of the web viewer's replay chart.

use crate::summary::{RoundRow, RoundTable};
use crate::the_gang::words::{cards_words, category_word, street_word};
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::{Challenge, Specialist};
use pb::the_gang_event::Kind as Tg;

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

impl HeistRow {
    /// The row as JSON: `gangs replay --summary --json` and the web viewer's rounds.
    pub fn to_json(&self) -> serde_json::Value {
        let chips: Vec<serde_json::Value> = self
            .chips
            .iter()
            .map(|(street, stars)| serde_json::json!({ "street": street, "stars": stars }))
            .collect();
        serde_json::json!({
            "heist": self.heist,
            "mode": self.mode,
            "challenges": self.challenges,
            "specialist": self.specialist,
            "chips": chips,
            "hands": self.hands,
            "success": self.success,
            "vaults": self.vaults,
            "alarms": self.alarms,
        })
    }
}

/// Every finished heist among `events` (a log's events, in order) of a game created by `created`.
pub fn heist_rows<'a>(
    created: &pb::Created,
    events: impl IntoIterator<Item = &'a pb::GameEvent>,
) -> Vec<HeistRow> {
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
    heists(
        created.players as usize,
        &mode,
        events.into_iter().filter_map(|e| match &e.game {
            Some(pb::game_event::Game::TheGang(e)) => e.kind.as_ref(),
            _ => None,
        }),
    )
}

/// The registry's summary: one row per finished heist.
pub(crate) fn table(created: &pb::Created, events: &[&pb::GameEvent]) -> RoundTable {
    let header = [
        "heist",
        "mode",
        "challenges",
        "specialist",
        "chips",
        "hands",
        "success",
        "vaults",
        "alarms",
    ]
    .map(String::from)
    .to_vec();
    let chips_text = |chips: &[(String, Vec<u32>)]| {
        chips
            .iter()
            .map(|(street, stars)| {
                let stars: Vec<String> = stars.iter().map(u32::to_string).collect();
                format!("{street} {}", stars.join("/"))
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let rows = heist_rows(created, events.iter().copied())
        .iter()
        .map(|r| RoundRow {
            number: r.heist,
            cells: vec![
                r.heist.to_string(),
                r.mode.clone(),
                r.challenges.join("; "),
                r.specialist.clone().unwrap_or_default(),
                chips_text(&r.chips),
                r.hands
                    .iter()
                    .enumerate()
                    .map(|(seat, h)| format!("{seat}: {h}"))
                    .collect::<Vec<_>>()
                    .join("; "),
                if r.success { "success" } else { "failure" }.to_string(),
                r.vaults.to_string(),
                r.alarms.to_string(),
            ],
            json: r.to_json(),
        })
        .collect();
    RoundTable { header, rows }
}

/// The number of the heist `event` opens.
pub(crate) fn round_start(event: &pb::GameEvent) -> Option<u32> {
    match &event.game {
        Some(pb::game_event::Game::TheGang(e)) => match &e.kind {
            Some(Tg::HeistStarted(started)) => Some(started.heist),
            _ => None,
        },
        _ => None,
    }
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
