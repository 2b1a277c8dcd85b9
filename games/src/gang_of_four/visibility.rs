//! What a seat may see of Gang of Four: **the one place that decides it** (views, events,
//! logged actions). Every event kind and every field that carries cards is matched without a
//! catch-all arm: a new one does not compile until it has a decision here.
//!
//! # May see
//! - **Hands**: a seat sees its own hand only (in the view, and in its copy of `Dealt`); other
//!   seats' hands and the dead hand (3 players) never while the game runs; a spectator sees no
//!   hand. Card *counts* are public.
//! - **Public**: plays (they are on the table), passes, tricks, the exchange (both cards change
//!   hands face up, §4), the last-card announcements and bars, scores, the ranking.
//! - **Logged actions** (`GetLog`): hidden while the game runs, shown once it is over (as
//!   every event is complete then).

use super::wire::{
    card_list, deal_scored, direction, encode_card_list, encoded_card_list_len, exchanged, ranking,
    table_play, wire_options, GangOfFourWire,
};
use crate::bridge::Visibility;
use crate::Seat;
use gangs_proto::v1 as pb;
use gangs_rules::gang_of_four::{GangOfFour, Mask, Phase};
use pb::gang_of_four_event::Kind as EventKind;
use prost::Message;

/// The game as `seat` (or a spectator, `None`) may see it now: what every audience sees, with
/// what only `seat` sees.
pub(super) fn view(engine: &GangOfFour, seat: Option<Seat>) -> pb::GangOfFourView {
    let (hand, last_card_rule_applies) = own_part(engine, seat);
    pb::GangOfFourView {
        hand: card_list(hand),
        last_card_rule_applies,
        ..public_view(engine)
    }
}

/// What only `seat` sees (nothing for a spectator): its hand's cards, and whether the
/// last-card rule binds it. They are the view's first and last fields (1 and 14), which
/// [`encoded_views`] relies on.
fn own_part(engine: &GangOfFour, seat: Option<Seat>) -> (Mask, bool) {
    let deal = engine.deal();
    let seat = seat.filter(|&s| s < engine.options().players as usize);
    let hand = match (seat, engine.phase()) {
        (Some(s), phase) if phase != Phase::NotStarted => deal.hands[s],
        _ => 0,
    };
    let in_play = engine.phase() == Phase::Play;
    (
        hand,
        in_play && seat.is_some_and(|s| deal.is_constrained(s as u8)),
    )
}

/// `GangOfFourView.hand`'s field number.
const HAND_FIELD: u32 = 1;

/// Several audiences' views of one state, encoded: the public part built and encoded once,
/// each audience's own part (its hand first, its last-card flag last, as prost orders fields
/// by number) around it. The same bytes as encoding each [`view`] (tested).
fn encoded_views(engine: &GangOfFour, audiences: &[Option<Seat>]) -> Vec<Vec<u8>> {
    let public = public_view(engine).encode_to_vec();
    audiences
        .iter()
        .map(|&seat| {
            let (hand, last_card_rule_applies) = own_part(engine, seat);
            let flag = pb::GangOfFourView {
                last_card_rule_applies,
                ..Default::default()
            };
            let mut bytes = Vec::with_capacity(
                encoded_card_list_len(HAND_FIELD, hand) + public.len() + flag.encoded_len(),
            );
            encode_card_list(HAND_FIELD, hand, &mut bytes);
            bytes.extend_from_slice(&public);
            flag.encode_raw(&mut bytes);
            bytes
        })
        .collect()
}

/// What every audience sees alike: the view of a spectator (no hand).
fn public_view(engine: &GangOfFour) -> pb::GangOfFourView {
    let e = engine;
    let deal = e.deal();
    let players = e.options().players;
    let totals = e.totals();
    let phase = match e.phase() {
        Phase::NotStarted => pb::gang_of_four_view::Phase::Unspecified,
        Phase::GiveBack { .. } => pb::gang_of_four_view::Phase::GiveBack,
        Phase::Play => pb::gang_of_four_view::Phase::Play,
        Phase::Over => pb::gang_of_four_view::Phase::Over,
    };
    let in_play = e.phase() == Phase::Play;
    pb::GangOfFourView {
        hand: Vec::new(),
        seats: (0..players)
            .map(|s| pb::gang_of_four_view::Seat {
                seat: s as u32,
                card_count: deal.hands[s as usize].count_ones(),
                score: totals[s as usize],
                announced_last_card: deal.announced & (1 << s) != 0,
                barred: deal.barred & (1 << s) != 0,
            })
            .collect(),
        table: deal
            .table
            .as_ref()
            .filter(|_| in_play)
            .map(|c| table_play(deal.table_seat, c)),
        trick: e
            .trick()
            .iter()
            .map(|t| match &t.play {
                Some(c) => table_play(t.seat, c),
                None => pb::gang_of_four_view::Play {
                    seat: t.seat as u32,
                    pass: true,
                    ..Default::default()
                },
            })
            .collect(),
        deal_number: e.deal_number(),
        direction: direction(deal.direction) as i32,
        turn: e.to_act().map(u32::from),
        phase: phase as i32,
        exchange: e.exchange().iter().map(exchanged).collect(),
        past_deals: e
            .history()
            .iter()
            .map(|s| deal_scored(s, players))
            .collect(),
        must_play_multicolor_one: in_play && deal.must_include != 0,
        options: Some(wire_options(e.options())),
        ranking: e.ranking().map(ranking).unwrap_or_default(),
        last_card_rule_applies: false,
    }
}

/// A complete event as `seat` may see it.
fn redact(event: &pb::GangOfFourEvent, seat: Option<Seat>) -> pb::GangOfFourEvent {
    let kind = match &event.kind {
        None => None,
        Some(EventKind::Dealt(pb::gang_of_four_event::Dealt {
            deal_number,
            hands,
            direction,
            leader,
            must_play_multicolor_one,
        })) => Some(EventKind::Dealt(pb::gang_of_four_event::Dealt {
            deal_number: *deal_number,
            hands: hands
                .iter()
                .map(
                    |pb::gang_of_four_event::Hand {
                         seat: hand_seat,
                         cards,
                         card_count,
                         dead,
                     }| {
                        let own = !*dead && Some(*hand_seat as usize) == seat;
                        pb::gang_of_four_event::Hand {
                            seat: *hand_seat,
                            cards: if own { cards.clone() } else { Vec::new() },
                            card_count: *card_count,
                            dead: *dead,
                        }
                    },
                )
                .collect(),
            direction: *direction,
            leader: *leader,
            must_play_multicolor_one: *must_play_multicolor_one,
        })),
        // The exchange is made face up (§4): both cards are public.
        Some(EventKind::Exchanged(x)) => Some(EventKind::Exchanged(x.clone())),
        // On the table for everyone.
        Some(EventKind::Played(p)) => Some(EventKind::Played(p.clone())),
        Some(EventKind::Passed(p)) => Some(EventKind::Passed(*p)),
        Some(EventKind::TrickWon(t)) => Some(EventKind::TrickWon(*t)),
        Some(EventKind::DealScored(s)) => Some(EventKind::DealScored(s.clone())),
        Some(EventKind::GameOver(g)) => Some(EventKind::GameOver(g.clone())),
    };
    pb::GangOfFourEvent { kind }
}

impl Visibility for GangOfFourWire {
    fn view(engine: &GangOfFour, seat: Option<Seat>) -> pb::GangOfFourView {
        view(engine, seat)
    }

    fn encoded_views(engine: &GangOfFour, audiences: &[Option<Seat>]) -> Vec<Vec<u8>> {
        encoded_views(engine, audiences)
    }

    fn redact(event: &pb::GangOfFourEvent, seat: Option<Seat>) -> pb::GangOfFourEvent {
        redact(event, seat)
    }

    fn public_action(action: &pb::GameAction, finished: bool) -> Option<pb::GameAction> {
        finished.then(|| action.clone())
    }
}
