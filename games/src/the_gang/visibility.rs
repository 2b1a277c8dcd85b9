//! What a seat may see of The Gang: **the one place that decides it** (views, events, logged
//! actions). Every event kind is matched without a catch-all arm, and every card-bearing event
//! is destructured field by field: a new event or field does not compile until it has a
//! decision here.
//!
//! # May see (§9)
//! - **Private cards**: a seat sees its own (dealt, drawn, received, swapped in), the cards it
//!   held earlier this heist (passed, swindled away, discarded, replaced), a card the Informant
//!   showed it and the Coordinator's card passed to it. Nobody else's: other seats' copies of
//!   `Dealt`, `Swindled`, `CardPassed`, `HandReplaced`, `CardShown`, `CardDrawn` and
//!   `CardDiscarded` keep who did what and drop the cards. A spectator sees no private card.
//! - **Revealed**: the community cards once turned, and every hand at the showdown
//!   (`Showdown.reveals`, the view's `last_showdown`). The suitless Jack taken with the Valet is
//!   public (the card is known to everyone).
//! - **Never while the game runs**: the deck, the piles, the community cards to come.
//! - **Blackout** (challenge 10): the chips of earlier streets are hidden from the view; only
//!   the open street's chips show.
//! - **Logged actions** (`GetLog`): hidden while the game runs (a `choose` names a private
//!   card), shown once it is over.

use super::wire::{
    announcement_to_pb, card_to_pb, cards_to_pb, chip_move_to_pb, guess_to_pb, mode_to_pb,
    reveal_to_pb, street_to_pb, use_to_pb, TheGangWire,
};
use crate::bridge::Visibility;
use crate::Seat;
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::{Challenge, PendingChoice, Stage, TheGang};
use pb::the_gang_event as ev;
use pb::the_gang_view as vw;

/// The game as `seat` (or a spectator, `None`) may see it now.
fn the_gang_view(g: &TheGang, seat: Option<Seat>) -> pb::TheGangView {
    let h = g.heist();
    let config = g.config();
    let blackout = h.is_active(Challenge::Blackout);
    let mut v = pb::TheGangView {
        players: config.players as u32,
        mode: mode_to_pb(config.mode) as i32,
        seat: seat.map(|s| s as u32),
        heist: h.number,
        vaults: g.vaults(),
        alarms: g.alarms(),
        alarms_to_lose: config.alarms_to_lose(),
        stage: match g.stage() {
            Stage::NotStarted => pb::TheGangStage::Unspecified,
            Stage::Coordinating => pb::TheGangStage::Coordinating,
            Stage::Chips(_) => pb::TheGangStage::Chips,
            Stage::Guessing => pb::TheGangStage::Guessing,
            Stage::GameOver => pb::TheGangStage::GameOver,
        } as i32,
        street: match g.stage() {
            Stage::Chips(s) => street_to_pb(s),
            _ => 0,
        },
        hand_sizes: h.private.iter().map(|p| p.len() as u32).collect(),
        community: cards_to_pb(&h.community),
        active_challenges: h.challenges.iter().map(|c| c.number()).collect(),
        active_specialist: h.specialist.map(|s| s.number()),
        specialist_used: h.specialist_used,
        permanent_challenge: g.permanent_challenge().map(|c| c.number()),
        announcements: h
            .announcements
            .iter()
            .map(|&(s, sp, a)| announcement_to_pb(s, sp, a))
            .collect(),
        muscle_seat: h.muscle.map(|s| s as u32),
        chosen_seats: (0..config.players)
            .filter(|&s| h.coordinator_choices[s].is_some())
            .map(|s| s as u32)
            .collect(),
        game_over: g.is_over(),
        won: g.result() == Some(true),
        ..Default::default()
    };
    if let Some(seat) = seat {
        v.private_cards = cards_to_pb(&h.private[seat]);
        v.remembered = cards_to_pb(&h.remembered[seat]);
        v.shown_to_me = h.shown_to[seat]
            .iter()
            .map(|&(from, card)| vw::ShownCard {
                from_seat: from as u32,
                card: Some(card_to_pb(card)),
            })
            .collect();
        v.received = h.received[seat].map(|(from, card)| vw::ShownCard {
            from_seat: from as u32,
            card: Some(card_to_pb(card)),
        });
    }
    let visible_phases = if blackout {
        &h.phases[h.phases.len().saturating_sub(1)..]
    } else {
        &h.phases[..]
    };
    v.chips = visible_phases
        .iter()
        .map(|p| vw::StreetChips {
            street: street_to_pb(p.street),
            stars_by_seat: (0..config.players)
                .map(|s| p.chip_of(s).map_or(0, |c| c as u32))
                .collect(),
        })
        .collect();
    if let Some(p) = h.phases.last() {
        v.moves = p.log.iter().map(chip_move_to_pb).collect();
        v.ready = p.ready.clone();
        v.moves_made = p.moves;
        v.max_moves = p.max_moves;
        v.locked_stars = (0..p.locked.len())
            .filter(|&i| p.locked[i])
            .map(|i| i as u32 + 1)
            .collect();
    }
    v.proposal = h.proposal.as_ref().map(|p| vw::Proposal {
        proposer: p.proposer as u32,
        specialist_use: Some(use_to_pb(p.use_)),
        accepted_seats: (0..config.players)
            .filter(|&s| p.votes[s] == Some(true))
            .map(|s| s as u32)
            .collect(),
    });
    v.pending_choice = h.pending.map(|p| {
        let (choice_kind, word, seat, to_seat) = match p {
            PendingChoice::Show { from, to } => {
                (pb::TheGangChoiceKind::Show, "show", from, Some(to as u32))
            }
            PendingChoice::Discard { seat, .. } => {
                (pb::TheGangChoiceKind::Discard, "discard", seat, None)
            }
        };
        // `kind` is `choice_kind` as a word, deprecated but still filled for older clients.
        #[allow(deprecated)]
        let choice = vw::PendingChoice {
            kind: word.into(),
            seat: seat as u32,
            to_seat,
            choice_kind: choice_kind as i32,
        };
        choice
    });
    v.guess = h
        .guess
        .as_ref()
        .filter(|_| g.stage() == Stage::Guessing)
        .map(|gs| vw::Guess {
            challenge: gs.challenge.number(),
            target: gs.target as u32,
            votes: gs
                .votes
                .iter()
                .map(|&(s, value)| ev::GuessCast {
                    seat: s as u32,
                    value: Some(guess_to_pb(value)),
                })
                .collect(),
        });
    if let Some((reveals, success)) = g.last_showdown() {
        v.last_showdown = reveals.iter().map(reveal_to_pb).collect();
        v.last_heist_success = *success;
    }
    v
}

/// `cards` if `visible`, else none.
fn shown(visible: bool, cards: &[pb::TheGangCard]) -> Vec<pb::TheGangCard> {
    if visible {
        cards.to_vec()
    } else {
        Vec::new()
    }
}

/// A complete event as `seat` may see it.
fn redact(event: &pb::TheGangEvent, seat: Option<Seat>) -> pb::TheGangEvent {
    let is = |s: u32| seat == Some(s as usize);
    let kind = match &event.kind {
        None => None,
        Some(ev::Kind::Dealt(ev::Dealt {
            seat: s,
            cards,
            card_count,
        })) => Some(ev::Kind::Dealt(ev::Dealt {
            seat: *s,
            cards: shown(is(*s), cards),
            card_count: *card_count,
        })),
        Some(ev::Kind::Swindled(ev::Swindled {
            seat: s,
            old_cards,
            new_cards,
        })) => Some(ev::Kind::Swindled(ev::Swindled {
            seat: *s,
            old_cards: shown(is(*s), old_cards),
            new_cards: shown(is(*s), new_cards),
        })),
        Some(ev::Kind::CardPassed(ev::CardPassed {
            from_seat,
            to_seat,
            card,
        })) => Some(ev::Kind::CardPassed(ev::CardPassed {
            from_seat: *from_seat,
            to_seat: *to_seat,
            card: card.filter(|_| is(*from_seat) || is(*to_seat)),
        })),
        Some(ev::Kind::HandReplaced(ev::HandReplaced {
            seat: s,
            challenge,
            discarded,
            drawn,
        })) => Some(ev::Kind::HandReplaced(ev::HandReplaced {
            seat: *s,
            challenge: *challenge,
            discarded: shown(is(*s), discarded),
            drawn: shown(is(*s), drawn),
        })),
        Some(ev::Kind::CardShown(ev::CardShown {
            from_seat,
            to_seat,
            card,
        })) => Some(ev::Kind::CardShown(ev::CardShown {
            from_seat: *from_seat,
            to_seat: *to_seat,
            card: card.filter(|_| is(*from_seat) || is(*to_seat)),
        })),
        Some(ev::Kind::CardDrawn(ev::CardDrawn { seat: s, card })) => {
            Some(ev::Kind::CardDrawn(ev::CardDrawn {
                seat: *s,
                card: card.filter(|_| is(*s)),
            }))
        }
        Some(ev::Kind::CardDiscarded(ev::CardDiscarded { seat: s, card })) => {
            Some(ev::Kind::CardDiscarded(ev::CardDiscarded {
                seat: *s,
                card: card.filter(|_| is(*s)),
            }))
        }
        // Turned face up for everyone.
        Some(ev::Kind::CommunityRevealed(e)) => Some(ev::Kind::CommunityRevealed(e.clone())),
        // Every hand is revealed at the showdown.
        Some(ev::Kind::Showdown(e)) => Some(ev::Kind::Showdown(e.clone())),
        // Public: no card, or only public facts about cards.
        Some(ev::Kind::HeistStarted(e)) => Some(ev::Kind::HeistStarted(e.clone())),
        Some(ev::Kind::Announced(e)) => Some(ev::Kind::Announced(*e)),
        Some(ev::Kind::CardChosen(e)) => Some(ev::Kind::CardChosen(*e)),
        Some(ev::Kind::PhaseOpened(e)) => Some(ev::Kind::PhaseOpened(*e)),
        Some(ev::Kind::ChipMoved(e)) => Some(ev::Kind::ChipMoved(*e)),
        Some(ev::Kind::Ready(e)) => Some(ev::Kind::Ready(*e)),
        Some(ev::Kind::ChipGiven(e)) => Some(ev::Kind::ChipGiven(*e)),
        Some(ev::Kind::PhaseClosed(e)) => Some(ev::Kind::PhaseClosed(*e)),
        Some(ev::Kind::Proposed(e)) => Some(ev::Kind::Proposed(*e)),
        Some(ev::Kind::Voted(e)) => Some(ev::Kind::Voted(*e)),
        Some(ev::Kind::ProposalClosed(e)) => Some(ev::Kind::ProposalClosed(*e)),
        // The suitless Jack is one known card: who takes it is public.
        Some(ev::Kind::SuitlessJackTaken(e)) => Some(ev::Kind::SuitlessJackTaken(*e)),
        Some(ev::Kind::MuscleTaken(e)) => Some(ev::Kind::MuscleTaken(*e)),
        Some(ev::Kind::GuessOpened(e)) => Some(ev::Kind::GuessOpened(*e)),
        Some(ev::Kind::GuessCast(e)) => Some(ev::Kind::GuessCast(*e)),
        Some(ev::Kind::GuessResolved(e)) => Some(ev::Kind::GuessResolved(*e)),
        Some(ev::Kind::HeistEnded(e)) => Some(ev::Kind::HeistEnded(*e)),
        Some(ev::Kind::GameOver(e)) => Some(ev::Kind::GameOver(*e)),
    };
    pb::TheGangEvent { kind }
}

impl Visibility for TheGangWire {
    fn view(engine: &TheGang, seat: Option<Seat>) -> pb::TheGangView {
        the_gang_view(engine, seat)
    }

    fn redact(event: &pb::TheGangEvent, seat: Option<Seat>) -> pb::TheGangEvent {
        redact(event, seat)
    }

    fn public_action(action: &pb::GameAction, finished: bool) -> Option<pb::GameAction> {
        finished.then(|| action.clone())
    }
}
