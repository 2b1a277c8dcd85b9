//! Gang of Four for humans: the CLI's option and action words, one-line event descriptions
//! and the terminal picture of a view.
//!
//! Card words: `g5 y5 r5` (green/yellow/red and value), `m1`, `gp yp` (Phoenixes), `dr`
//! (Dragon), case-insensitive.

use super::wire::{engine_options, wire_options};
use crate::Refusal;
use gangs_proto::v1 as pb;
use gangs_rules::gang_of_four::cards;

use pb::gang_of_four_action::Kind as ActionKind;
use pb::gang_of_four_event::Kind as EventKind;

pub const ACTION_HELP: &str = "  play <cards...> [card]   play these cards, e.g. `play r7 y7`, `play g3 g4 y5 r6 g7`;
                           words: g5 y5 r5 (green/yellow/red + value 1..10), m1, gp yp (Phoenixes), dr (Dragon)
                           add `card` (or `--card`) to announce your last card under manual_last_card
  pass                     pass (not when leading, nor when the last-card rule forces your strongest single)
  give <card>              after a deal: the winner gives one card back to the loser, e.g. `give y3`";

/// `--option key=value` pairs, checked against the engine's option schema
/// ([`engine::contract::OPTIONS`]), with the number of players; every default filled in.
pub fn parse_options(
    players: Option<u32>,
    pairs: &[(String, String)],
) -> Result<pb::GangOfFourOptions, Refusal> {
    use gangs_rules::engine::{option_spec, OptionValue as V};
    let mut o = pb::GangOfFourOptions {
        players,
        ..Default::default()
    };
    let schema = super::KIND.options();
    let mut clock = crate::clock::WireClock::default();
    for (key, value) in pairs {
        let spec = option_spec(super::KIND.name, &schema, key)?;
        if clock.parse_option(spec.key, value)? {
            continue;
        }
        match (spec.key, spec.parse(value)?) {
            // The schema's ranges bound every count to u32.
            ("players", V::Count(n)) => o.players = Some(n as u32),
            ("target_score", V::Count(n)) => o.target_score = Some(n as u32),
            ("flush_by_sum", V::Bool(b)) => o.flush_by_sum = Some(b),
            ("loser_tie_strongest_card", V::Bool(b)) => o.loser_tie_strongest_card = Some(b),
            ("manual_last_card", V::Bool(b)) => o.manual_last_card = Some(b),
            (key, value) => unreachable!("schema option {key} = {value:?} has no wire field"),
        }
    }
    let filled = engine_options(Some(&o))?;
    let clock = crate::clock::ClockSettings::from_wire(clock)?.to_wire();
    Ok(pb::GangOfFourOptions {
        turn_ms: clock.turn_ms,
        bank_ms: clock.bank_ms,
        absent_after: clock.absent_after,
        ..wire_options(&filled)
    })
}

/// `play r7 y7 [card]`, `pass`, `give y3`.
pub fn parse_action(words: &[String]) -> Result<pb::GameAction, Refusal> {
    let (verb, rest) = words
        .split_first()
        .ok_or_else(|| Refusal::invalid("say play, pass or give"))?;
    let kind = match verb.to_ascii_lowercase().as_str() {
        "pass" if rest.is_empty() => ActionKind::Pass(pb::gang_of_four_action::Pass {}),
        "pass" => return Err(Refusal::invalid("pass takes no cards")),
        "play" => {
            let mut announce = false;
            let mut card_words = Vec::new();
            for w in rest {
                let lw = w.to_ascii_lowercase();
                if lw == "card" || lw == "--card" || lw == "card!" {
                    announce = true;
                } else if cards::ids_of_word(&lw).is_some() {
                    card_words.push(lw);
                } else {
                    return Err(Refusal::invalid(format!(
                        "unknown card word {w:?}: use g5 y5 r5 (color + 1..10), m1, gp, yp, dr"
                    )));
                }
            }
            if card_words.is_empty() {
                return Err(Refusal::invalid("play needs cards, e.g. `play r7 y7`"));
            }
            ActionKind::Play(pb::gang_of_four_action::Play {
                card_ids: Vec::new(),
                card_words,
                announce_last_card: announce,
            })
        }
        "give" => match rest {
            [w] if cards::ids_of_word(w).is_some() => {
                ActionKind::GiveBack(pb::gang_of_four_action::GiveBack {
                    card_id: None,
                    card_word: w.to_ascii_lowercase(),
                })
            }
            _ => return Err(Refusal::invalid("give takes one card word, e.g. `give y3`")),
        },
        other => {
            return Err(Refusal::invalid(format!(
                "unknown action {other:?}: say play, pass or give"
            )))
        }
    };
    Ok(pb::GameAction {
        game: Some(pb::game_action::Game::GangOfFour(pb::GangOfFourAction {
            kind: Some(kind),
        })),
    })
}

fn words_of(list: &[pb::GangOfFourCard]) -> String {
    list.iter()
        .map(|c| c.word.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn id_words(ids: &[u32]) -> String {
    ids.iter()
        .map(|&id| {
            if id < 64 {
                cards::word(id as u8).to_string()
            } else {
                format!("#{id}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn describe_action(a: &pb::GangOfFourAction) -> String {
    match &a.kind {
        Some(ActionKind::Play(p)) => {
            let cards = if p.card_words.is_empty() {
                id_words(&p.card_ids)
            } else {
                p.card_words.join(" ")
            };
            format!(
                "play {cards}{}",
                if p.announce_last_card { " card" } else { "" }
            )
        }
        Some(ActionKind::Pass(_)) => "pass".to_string(),
        Some(ActionKind::GiveBack(g)) => match g.card_id {
            Some(id) => format!("give {}", id_words(&[id])),
            None => format!("give {}", g.card_word),
        },
        None => "(empty action)".to_string(),
    }
}

fn kind_name(k: i32) -> &'static str {
    match pb::GangOfFourKind::try_from(k).unwrap_or(pb::GangOfFourKind::Unspecified) {
        pb::GangOfFourKind::Single => "single",
        pb::GangOfFourKind::Pair => "pair",
        pb::GangOfFourKind::Triple => "triple",
        pb::GangOfFourKind::Straight => "straight",
        pb::GangOfFourKind::Flush => "flush",
        pb::GangOfFourKind::FullHouse => "full house",
        pb::GangOfFourKind::StraightFlush => "straight flush",
        pb::GangOfFourKind::Gang => "gang",
        pb::GangOfFourKind::Unspecified => "?",
    }
}

fn direction_name(d: i32) -> &'static str {
    match pb::GangOfFourDirection::try_from(d).unwrap_or(pb::GangOfFourDirection::Unspecified) {
        pb::GangOfFourDirection::Clockwise => "clockwise",
        pb::GangOfFourDirection::CounterClockwise => "counter-clockwise",
        pb::GangOfFourDirection::Unspecified => "?",
    }
}

pub fn describe_event(e: &pb::GangOfFourEvent) -> String {
    match &e.kind {
        Some(EventKind::Dealt(d)) => {
            let mut line = format!(
                "deal {} dealt, played {}; seat {} leads{}",
                d.deal_number,
                direction_name(d.direction),
                d.leader,
                if d.must_play_multicolor_one {
                    " with m1"
                } else {
                    ""
                }
            );
            for h in d.hands.iter().filter(|h| !h.cards.is_empty()) {
                let who = if h.dead {
                    "dead hand".to_string()
                } else {
                    format!("seat {}", h.seat)
                };
                line.push_str(&format!("; {who}: {}", words_of(&h.cards)));
            }
            line
        }
        Some(EventKind::Exchanged(x)) => format!(
            "seat {} gives {} to seat {}{}",
            x.from_seat,
            x.card.as_ref().map(|c| c.word.as_str()).unwrap_or("?"),
            x.to_seat,
            if x.automatic {
                " (its strongest card, automatic)"
            } else {
                " (chosen)"
            }
        ),
        Some(EventKind::Played(p)) => format!(
            "seat {} plays {} {} ({} left){}",
            p.seat,
            kind_name(p.kind),
            words_of(&p.cards),
            p.cards_left,
            if p.announced_last_card {
                " Card!"
            } else if p.forgot_last_card {
                " forgot to announce: must pass until the deal ends"
            } else {
                ""
            }
        ),
        Some(EventKind::Passed(p)) => format!("seat {} passes", p.seat),
        Some(EventKind::TrickWon(t)) => format!("seat {} wins the trick and leads", t.seat),
        Some(EventKind::DealScored(s)) => {
            let winner = match s.winner {
                Some(w) => format!("seat {w} went out"),
                None => "every seat was barred".to_string(),
            };
            let seats: Vec<String> = s
                .seats
                .iter()
                .map(|x| {
                    format!(
                        "seat {}: {} cards, +{} = {}",
                        x.seat, x.cards_left, x.points, x.total
                    )
                })
                .collect();
            format!(
                "deal {} scored: {winner}, seat {} loses; {}",
                s.deal_number,
                s.loser,
                seats.join("; ")
            )
        }
        Some(EventKind::GameOver(g)) => {
            let seats: Vec<String> = g
                .ranking
                .iter()
                .map(|r| format!("{}. seat {} ({} points)", r.rank, r.seat, r.total))
                .collect();
            format!("game over: {}", seats.join(", "))
        }
        None => "(empty event)".to_string(),
    }
}

pub fn render_view(v: &pb::GangOfFourView) -> String {
    let mut out = format!(
        "deal {}, played {}",
        v.deal_number,
        direction_name(v.direction)
    );
    if let Some(turn) = v.turn {
        out.push_str(&format!(", seat {turn} to act"));
    }
    out.push('\n');
    for s in &v.seats {
        out.push_str(&format!(
            "  seat {}: {} cards, {} points{}{}\n",
            s.seat,
            s.card_count,
            s.score,
            if s.announced_last_card { ", Card!" } else { "" },
            if s.barred {
                ", barred (forgot Card!)"
            } else {
                ""
            }
        ));
    }
    for x in &v.exchange {
        out.push_str(&format!(
            "  exchange: seat {} gave {} to seat {}\n",
            x.from_seat,
            x.card.as_ref().map(|c| c.word.as_str()).unwrap_or("?"),
            x.to_seat
        ));
    }
    match &v.table {
        Some(t) => out.push_str(&format!(
            "  table: {} {} by seat {}\n",
            kind_name(t.kind),
            words_of(&t.cards),
            t.seat
        )),
        None => out.push_str("  table: empty (the seat to act leads)\n"),
    }
    if !v.trick.is_empty() {
        let plays: Vec<String> = v
            .trick
            .iter()
            .map(|p| {
                if p.pass {
                    format!("{} pass", p.seat)
                } else {
                    format!("{} {}", p.seat, words_of(&p.cards))
                }
            })
            .collect();
        out.push_str(&format!("  trick: {}\n", plays.join(", ")));
    }
    if v.must_play_multicolor_one {
        out.push_str("  the first play must contain m1\n");
    }
    if v.last_card_rule_applies {
        out.push_str("  last-card rule: the next seat holds one card\n");
    }
    if !v.hand.is_empty() {
        out.push_str(&format!("  your hand: {}\n", words_of(&v.hand)));
    }
    for r in &v.ranking {
        out.push_str(&format!(
            "  {}. seat {} ({} points)\n",
            r.rank, r.seat, r.total
        ));
    }
    out
}
