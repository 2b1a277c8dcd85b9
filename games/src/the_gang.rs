//! The Gang on the wire: options, presets, actions, events and views of `gangs.v1`, and **the
//! one place that decides what a seat may see** for The Gang ([`TheGangGame::view`] via
//! `Game::view`, and `Game::redact`).
//!
//! Visibility (§9): a seat sees its own private cards, the cards it held earlier this heist
//! (passed, swindled away, discarded), a card the Informant showed it, and the Coordinator's
//! card passed to it. Everything else about hands stays hidden until the showdown: dealt,
//! drawn, discarded, passed, shown and swindled cards are cleared from other seats' copies of
//! the events (who did what stays public). The deck, the piles and the faces to come are never
//! shown.
//!
//! Action words (CLI): see [`ACTION_HELP`].

use crate::Refusal;
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::{
    self as engine, Action, Announcement, Card, Category, Challenge, ChipMoveKind, Config, Event,
    GuessValue, HeistPreset, Mode, PendingChoice, Preset, Specialist, SpecialistUse, Stage, Street,
    Suit, TheGang,
};
use pb::the_gang_action as act;
use pb::the_gang_event as ev;
use pb::the_gang_view as vw;

pub const ACTION_HELP: &str = "\
  take N                      take the N-star chip of the current colour (from the centre or a player)
  return                      put your chip of the current colour back in the centre
  ready                       content with the current chips (any take/return clears every ready)
  propose informant seat=S to=T   S shows one private card to T (S then: choose <card>)
  propose driver seat=S       S announces their best current hand category
  propose brains seat=S rank=R    S announces how many cards of rank R (2..9, T, J, Q, K, A) they hold
  propose hacker seat=S       S draws a card, then discards one (S then: choose <card>)
  propose valet seat=S        S takes the suitless Jack J*, then discards another card (choose <card>)
  propose muscle seat=S       S takes the Muscle: beats every hand of the same category
  accept | refuse             vote on the open proposal
  guess R | guess CATEGORY    team guess: a rank (retinal scan) or high-card, pair, two-pair,
                              three-of-a-kind, straight, flush, full-house, four-of-a-kind,
                              straight-flush (fingerprint reader)
  choose CARD                 coordinator pass / informant show / hacker or valet discard
  cards: Ah Td 7c 10s, the suitless Jack J*";

// ---- conversions -------------------------------------------------------------------------------

pub fn card_to_pb(card: Card) -> pb::TheGangCard {
    let suit = match card.suit() {
        None => pb::the_gang_card::Suit::None,
        Some(Suit::Clubs) => pb::the_gang_card::Suit::Clubs,
        Some(Suit::Diamonds) => pb::the_gang_card::Suit::Diamonds,
        Some(Suit::Hearts) => pb::the_gang_card::Suit::Hearts,
        Some(Suit::Spades) => pb::the_gang_card::Suit::Spades,
    };
    pb::TheGangCard {
        id: card.id(),
        rank: engine::cards::rank_face(card.rank()) as u32,
        suit: suit as i32,
    }
}

fn cards_to_pb(cards: &[Card]) -> Vec<pb::TheGangCard> {
    cards.iter().map(|&c| card_to_pb(c)).collect()
}

/// A wire card, by id (rank and suit must agree when given).
pub fn card_from_pb(card: &pb::TheGangCard) -> Result<Card, Refusal> {
    let c = Card::from_id(card.id)
        .ok_or_else(|| Refusal::invalid(format!("unknown card id {}", card.id)))?;
    let full = card_to_pb(c);
    if (card.rank != 0 && card.rank != full.rank) || (card.suit != 0 && card.suit != full.suit) {
        return Err(Refusal::invalid(format!(
            "card id {} is {c}: rank/suit disagree",
            card.id
        )));
    }
    Ok(c)
}

fn category_to_pb(c: Category) -> i32 {
    c as i32 + 1
}

fn category_from_pb(c: i32) -> Result<Category, Refusal> {
    // Checked: a wire value of i32::MIN must be refused, not overflow.
    c.checked_sub(1)
        .and_then(|c| u32::try_from(c).ok())
        .and_then(Category::from_index)
        .ok_or_else(|| Refusal::invalid("unknown hand category"))
}

fn street_to_pb(s: Street) -> i32 {
    s as i32 + 1
}

fn street_from_pb(s: i32) -> Option<Street> {
    let index = usize::try_from(s.checked_sub(1)?).ok()?;
    Street::ALL.get(index).copied()
}

fn face(rank: u8) -> u32 {
    engine::cards::rank_face(rank) as u32
}

fn rank_from_face(face: u32) -> Result<u8, Refusal> {
    if (2..=14).contains(&face) {
        Ok(face as u8 - 2)
    } else {
        Err(Refusal::invalid("a rank is a face value 2..14"))
    }
}

fn guess_to_pb(g: GuessValue) -> pb::TheGangGuessValue {
    use pb::the_gang_guess_value::Value;
    pb::TheGangGuessValue {
        value: Some(match g {
            GuessValue::Rank(r) => Value::Rank(face(r)),
            GuessValue::Category(c) => Value::Category(category_to_pb(c)),
        }),
    }
}

fn guess_from_pb(g: Option<&pb::TheGangGuessValue>) -> Result<GuessValue, Refusal> {
    use pb::the_gang_guess_value::Value;
    match g.and_then(|g| g.value) {
        Some(Value::Rank(face)) => Ok(GuessValue::Rank(rank_from_face(face)?)),
        Some(Value::Category(c)) => Ok(GuessValue::Category(category_from_pb(c)?)),
        None => Err(Refusal::invalid("a guess needs a rank or a category")),
    }
}

fn use_to_pb(u: SpecialistUse) -> pb::TheGangSpecialistUse {
    let mut m = pb::TheGangSpecialistUse {
        specialist: u.specialist().number(),
        seat: u.seat() as u32,
        to_seat: 0,
        rank: 0,
    };
    match u {
        SpecialistUse::Informant { to, .. } => m.to_seat = to as u32,
        SpecialistUse::Brains { rank, .. } => m.rank = face(rank),
        _ => {}
    }
    m
}

fn use_from_pb(u: Option<&pb::TheGangSpecialistUse>) -> Result<SpecialistUse, Refusal> {
    let u = u.ok_or_else(|| Refusal::invalid("a proposal needs a specialist use"))?;
    let seat = u.seat as usize;
    Ok(match Specialist::from_number(u.specialist) {
        Some(Specialist::Informant) => SpecialistUse::Informant {
            from: seat,
            to: u.to_seat as usize,
        },
        Some(Specialist::Driver) => SpecialistUse::Driver { seat },
        Some(Specialist::Brains) => SpecialistUse::Brains {
            seat,
            rank: rank_from_face(u.rank)?,
        },
        Some(Specialist::Hacker) => SpecialistUse::Hacker { seat },
        Some(Specialist::Valet) => SpecialistUse::Valet { seat },
        Some(Specialist::Muscle) => SpecialistUse::Muscle { seat },
        Some(other) => {
            return Err(Refusal::invalid(format!(
                "{} acts by itself after the deal: it is never proposed",
                other.name()
            )))
        }
        None => return Err(Refusal::invalid("a specialist is numbered 1..10")),
    })
}

fn announcement_to_pb(seat: usize, s: Specialist, a: Announcement) -> pb::TheGangAnnouncement {
    use pb::the_gang_announcement::{RankCount, Value};
    pb::TheGangAnnouncement {
        seat: seat as u32,
        specialist: s.number(),
        value: Some(match a {
            Announcement::FaceCards(n) => Value::FaceCards(n),
            Announcement::CardSum(n) => Value::CardSum(n),
            Announcement::BestCategory(c) => Value::BestCategory(category_to_pb(c)),
            Announcement::RankCount { rank, count } => Value::RankCount(RankCount {
                rank: face(rank),
                count,
            }),
        }),
    }
}

fn reveal_to_pb(r: &engine::Reveal) -> pb::TheGangReveal {
    pb::TheGangReveal {
        seat: r.seat as u32,
        stars: r.stars as u32,
        cards: cards_to_pb(&r.cards),
        category: category_to_pb(r.value.category()),
        value: r.value.0,
        out_of_order: r.out_of_order,
    }
}

fn chip_move_to_pb(m: &engine::ChipMove) -> pb::TheGangChipMove {
    let (returned, from_seat) = match m.kind {
        ChipMoveKind::Take { from } => (false, from.map(|s| s as u32)),
        ChipMoveKind::Return => (true, None),
    };
    pb::TheGangChipMove {
        seq: m.seq,
        seat: m.seat as u32,
        stars: m.stars as u32,
        returned,
        from_seat,
    }
}

pub fn action_to_pb(a: Action) -> pb::TheGangAction {
    let kind = match a {
        Action::Take(stars) => act::Kind::Take(act::Take {
            stars: stars as u32,
        }),
        Action::Return => act::Kind::ReturnChip(act::Return {}),
        Action::Ready => act::Kind::Ready(act::Ready {}),
        Action::Propose(u) => act::Kind::Propose(act::Propose {
            specialist_use: Some(use_to_pb(u)),
        }),
        Action::Accept => act::Kind::Vote(act::Vote { accept: true }),
        Action::Refuse => act::Kind::Vote(act::Vote { accept: false }),
        Action::Guess(g) => act::Kind::Guess(act::Guess {
            value: Some(guess_to_pb(g)),
        }),
        Action::Choose(c) => act::Kind::ChooseCard(act::ChooseCard {
            card: Some(card_to_pb(c)),
        }),
    };
    pb::TheGangAction { kind: Some(kind) }
}

pub fn action_from_pb(a: &pb::TheGangAction) -> Result<Action, Refusal> {
    Ok(match &a.kind {
        None => return Err(Refusal::invalid("empty action")),
        Some(act::Kind::Take(t)) => {
            Action::Take(u8::try_from(t.stars).map_err(|_| Refusal::invalid("no such chip"))?)
        }
        Some(act::Kind::ReturnChip(_)) => Action::Return,
        Some(act::Kind::Ready(_)) => Action::Ready,
        Some(act::Kind::Propose(p)) => Action::Propose(use_from_pb(p.specialist_use.as_ref())?),
        Some(act::Kind::Vote(v)) => {
            if v.accept {
                Action::Accept
            } else {
                Action::Refuse
            }
        }
        Some(act::Kind::Guess(g)) => Action::Guess(guess_from_pb(g.value.as_ref())?),
        Some(act::Kind::ChooseCard(c)) => Action::Choose(card_from_pb(
            c.card
                .as_ref()
                .ok_or_else(|| Refusal::invalid("choose needs a card"))?,
        )?),
    })
}

fn wrap_action(a: pb::TheGangAction) -> pb::GameAction {
    pb::GameAction {
        game: Some(pb::game_action::Game::TheGang(a)),
    }
}

pub fn event_to_pb(e: &Event) -> pb::TheGangEvent {
    let kind = match e {
        Event::HeistStarted {
            heist,
            challenges,
            specialist,
        } => ev::Kind::HeistStarted(ev::HeistStarted {
            heist: *heist,
            challenges: challenges.iter().map(|c| c.number()).collect(),
            specialist: specialist.map(|s| s.number()),
        }),
        Event::Dealt { seat, cards } => ev::Kind::Dealt(ev::Dealt {
            seat: *seat as u32,
            cards: cards_to_pb(cards),
            card_count: cards.len() as u32,
        }),
        Event::Announced {
            seat,
            specialist,
            announcement,
        } => ev::Kind::Announced(ev::Announced {
            announcement: Some(announcement_to_pb(*seat, *specialist, *announcement)),
        }),
        Event::Swindled { seat, old, new } => ev::Kind::Swindled(ev::Swindled {
            seat: *seat as u32,
            old_cards: cards_to_pb(old),
            new_cards: cards_to_pb(new),
        }),
        Event::CardChosen { seat } => ev::Kind::CardChosen(ev::CardChosen { seat: *seat as u32 }),
        Event::CardPassed { from, to, card } => ev::Kind::CardPassed(ev::CardPassed {
            from_seat: *from as u32,
            to_seat: *to as u32,
            card: Some(card_to_pb(*card)),
        }),
        Event::HandReplaced {
            seat,
            challenge,
            discarded,
            drawn,
        } => ev::Kind::HandReplaced(ev::HandReplaced {
            seat: *seat as u32,
            challenge: challenge.number(),
            discarded: cards_to_pb(discarded),
            drawn: cards_to_pb(drawn),
        }),
        Event::PhaseOpened { street, phase_id } => ev::Kind::PhaseOpened(ev::PhaseOpened {
            street: street_to_pb(*street),
            phase_id: *phase_id,
        }),
        Event::ChipMoved(m) => ev::Kind::ChipMoved(chip_move_to_pb(m)),
        Event::Ready { seat } => ev::Kind::Ready(ev::Ready { seat: *seat as u32 }),
        Event::ChipGiven { seat, stars } => ev::Kind::ChipGiven(ev::ChipGiven {
            seat: *seat as u32,
            stars: *stars as u32,
        }),
        Event::PhaseClosed { street, expired } => ev::Kind::PhaseClosed(ev::PhaseClosed {
            street: street_to_pb(*street),
            expired: *expired,
        }),
        Event::CommunityRevealed { street, cards } => {
            ev::Kind::CommunityRevealed(ev::CommunityRevealed {
                street: street_to_pb(*street),
                cards: cards_to_pb(cards),
            })
        }
        Event::Proposed { proposer, use_ } => ev::Kind::Proposed(ev::Proposed {
            proposer: *proposer as u32,
            specialist_use: Some(use_to_pb(*use_)),
        }),
        Event::Voted { seat, accept } => ev::Kind::Voted(ev::Voted {
            seat: *seat as u32,
            accept: *accept,
        }),
        Event::ProposalClosed { accepted, expired } => {
            ev::Kind::ProposalClosed(ev::ProposalClosed {
                accepted: *accepted,
                expired: *expired,
            })
        }
        Event::CardShown { from, to, card } => ev::Kind::CardShown(ev::CardShown {
            from_seat: *from as u32,
            to_seat: *to as u32,
            card: Some(card_to_pb(*card)),
        }),
        Event::CardDrawn { seat, card } => ev::Kind::CardDrawn(ev::CardDrawn {
            seat: *seat as u32,
            card: Some(card_to_pb(*card)),
        }),
        Event::SuitlessJackTaken { seat } => {
            ev::Kind::SuitlessJackTaken(ev::SuitlessJackTaken { seat: *seat as u32 })
        }
        Event::CardDiscarded { seat, card } => ev::Kind::CardDiscarded(ev::CardDiscarded {
            seat: *seat as u32,
            card: Some(card_to_pb(*card)),
        }),
        Event::MuscleTaken { seat } => {
            ev::Kind::MuscleTaken(ev::MuscleTaken { seat: *seat as u32 })
        }
        Event::GuessOpened { challenge, target } => ev::Kind::GuessOpened(ev::GuessOpened {
            challenge: challenge.number(),
            target: *target as u32,
        }),
        Event::GuessCast { seat, guess } => ev::Kind::GuessCast(ev::GuessCast {
            seat: *seat as u32,
            value: Some(guess_to_pb(*guess)),
        }),
        Event::GuessResolved {
            challenge,
            answer,
            correct,
        } => ev::Kind::GuessResolved(ev::GuessResolved {
            challenge: challenge.number(),
            answer: Some(guess_to_pb(*answer)),
            correct: *correct,
        }),
        Event::Showdown {
            reveals,
            muscle,
            guesses_correct,
            success,
        } => ev::Kind::Showdown(ev::Showdown {
            reveals: reveals.iter().map(reveal_to_pb).collect(),
            muscle_seat: muscle.map(|s| s as u32),
            guesses_correct: *guesses_correct,
            success: *success,
        }),
        Event::HeistEnded {
            success,
            vaults,
            alarms,
        } => ev::Kind::HeistEnded(ev::HeistEnded {
            success: *success,
            vaults: *vaults,
            alarms: *alarms,
        }),
        Event::GameOver { won } => ev::Kind::GameOver(ev::GameOver { won: *won }),
    };
    pb::TheGangEvent { kind: Some(kind) }
}

fn wrap_events(events: Vec<Event>) -> Vec<pb::GameEvent> {
    events
        .iter()
        .map(|e| pb::GameEvent {
            game: Some(pb::game_event::Game::TheGang(event_to_pb(e))),
        })
        .collect()
}

// ---- options and preset ------------------------------------------------------------------------

fn mode_from_pb(m: i32) -> Result<Mode, Refusal> {
    match pb::TheGangMode::try_from(m) {
        Ok(pb::TheGangMode::Basic) => Ok(Mode::Basic),
        Ok(pb::TheGangMode::Advanced) => Ok(Mode::Advanced),
        Ok(pb::TheGangMode::Pro) => Ok(Mode::Pro),
        Ok(pb::TheGangMode::Gangster) => Ok(Mode::Gangster),
        Err(_) => Err(Refusal::invalid("unknown mode")),
    }
}

fn mode_to_pb(m: Mode) -> pb::TheGangMode {
    match m {
        Mode::Basic => pb::TheGangMode::Basic,
        Mode::Advanced => pb::TheGangMode::Advanced,
        Mode::Pro => pb::TheGangMode::Pro,
        Mode::Gangster => pb::TheGangMode::Gangster,
    }
}

/// The accepted `phase_deadline_ms`: long enough for a bot to answer, short enough that every
/// deadline stays far inside the clocks' range (no overflow in `now + deadline`).
pub const PHASE_DEADLINE_MS: std::ops::RangeInclusive<u64> = 100..=7 * 24 * 3600 * 1000;

/// The engine config for wire options, every default filled in.
pub fn config_from_pb(options: Option<&pb::TheGangOptions>) -> Result<Config, Refusal> {
    let o = options.cloned().unwrap_or_default();
    let players = if o.players == 0 {
        4
    } else {
        o.players as usize
    };
    if !(3..=6).contains(&players) {
        return Err(Refusal::invalid("players must be 3 to 6"));
    }
    let mut config = Config::new(players, mode_from_pb(o.mode)?);
    if o.max_moves_per_phase != 0 {
        config.max_moves_per_phase = o.max_moves_per_phase;
    }
    if let Some(ms) = o.phase_deadline_ms {
        if !PHASE_DEADLINE_MS.contains(&ms) {
            return Err(Refusal::invalid(format!(
                "phase_deadline_ms must be {} to {} (100 ms to 7 days), not {ms}",
                PHASE_DEADLINE_MS.start(),
                PHASE_DEADLINE_MS.end()
            )));
        }
    }
    config.phase_deadline_ms = o.phase_deadline_ms;
    Ok(config)
}

fn config_to_pb(c: &Config) -> pb::TheGangOptions {
    pb::TheGangOptions {
        players: c.players as u32,
        mode: mode_to_pb(c.mode) as i32,
        max_moves_per_phase: c.max_moves_per_phase,
        phase_deadline_ms: c.phase_deadline_ms,
    }
}

pub fn preset_from_pb(p: &pb::TheGangPreset) -> Result<Preset, Refusal> {
    let cards = |list: &[pb::TheGangCard]| -> Result<Vec<Card>, Refusal> {
        list.iter().map(card_from_pb).collect()
    };
    let mut preset = Preset::default();
    for h in &p.heists {
        preset.heists.push(HeistPreset {
            private: h
                .private_cards
                .iter()
                .map(|hand| cards(&hand.cards))
                .collect::<Result<_, _>>()?,
            community: cards(&h.community)?,
            deck: cards(&h.deck)?,
        });
    }
    preset.challenge_order = p
        .challenge_order
        .iter()
        .map(|&n| Challenge::from_number(n).ok_or_else(|| Refusal::invalid("challenge 1..10")))
        .collect::<Result<_, _>>()?;
    preset.specialist_order = p
        .specialist_order
        .iter()
        .map(|&n| Specialist::from_number(n).ok_or_else(|| Refusal::invalid("specialist 1..10")))
        .collect::<Result<_, _>>()?;
    Ok(preset)
}

// ---- the game ----------------------------------------------------------------------------------

pub struct TheGangGame {
    engine: TheGang,
}

impl TheGangGame {
    pub fn new(
        options: Option<&pb::TheGangOptions>,
        seed: u64,
        preset: Option<&pb::TheGangPreset>,
    ) -> Result<Self, Refusal> {
        let config = config_from_pb(options)?;
        let preset = preset.map(preset_from_pb).transpose()?;
        let engine = TheGang::new(config, seed, preset)?;
        Ok(TheGangGame { engine })
    }

    /// The engine, read-only (bots and tests).
    pub fn engine(&self) -> &TheGang {
        &self.engine
    }

    fn the_gang_view(&self, seat: Option<usize>) -> pb::TheGangView {
        let g = &self.engine;
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
        v.pending_choice = h.pending.map(|p| match p {
            PendingChoice::Show { from, to } => vw::PendingChoice {
                kind: "show".into(),
                seat: from as u32,
                to_seat: Some(to as u32),
            },
            PendingChoice::Discard { seat, .. } => vw::PendingChoice {
                kind: "discard".into(),
                seat: seat as u32,
                to_seat: None,
            },
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
}

/// Clears what `seat` may not see from a complete event.
pub fn redact_event(e: &pb::TheGangEvent, seat: Option<usize>) -> pb::TheGangEvent {
    let is = |s: u32| seat == Some(s as usize);
    let mut e = e.clone();
    match &mut e.kind {
        Some(ev::Kind::Dealt(d)) if !is(d.seat) => d.cards.clear(),
        Some(ev::Kind::Swindled(d)) if !is(d.seat) => {
            d.old_cards.clear();
            d.new_cards.clear();
        }
        Some(ev::Kind::CardPassed(d)) if !is(d.from_seat) && !is(d.to_seat) => d.card = None,
        Some(ev::Kind::HandReplaced(d)) if !is(d.seat) => {
            d.discarded.clear();
            d.drawn.clear();
        }
        Some(ev::Kind::CardShown(d)) if !is(d.from_seat) && !is(d.to_seat) => d.card = None,
        Some(ev::Kind::CardDrawn(d)) if !is(d.seat) => d.card = None,
        Some(ev::Kind::CardDiscarded(d)) if !is(d.seat) => d.card = None,
        _ => {}
    }
    e
}

impl crate::Game for TheGangGame {
    fn kind(&self) -> &'static str {
        crate::THE_GANG
    }
    fn players(&self) -> usize {
        self.engine.config().players
    }
    fn options(&self) -> pb::GameOptions {
        pb::GameOptions {
            game: Some(pb::game_options::Game::TheGang(config_to_pb(
                self.engine.config(),
            ))),
        }
    }
    fn start(&mut self) -> Vec<pb::GameEvent> {
        wrap_events(self.engine.start())
    }
    fn act(&mut self, seat: usize, action: &pb::GameAction) -> Result<Vec<pb::GameEvent>, Refusal> {
        let a = match &action.game {
            Some(pb::game_action::Game::TheGang(a)) => action_from_pb(a)?,
            _ => return Err(Refusal::invalid("not a the-gang action")),
        };
        self.engine.act(seat, a).map(wrap_events)
    }
    fn phase_deadline_ms(&self) -> Option<u64> {
        self.engine.phase_deadline_ms()
    }
    fn phase_id(&self) -> u64 {
        self.engine.phase_id()
    }
    fn expire(&mut self) -> Result<Vec<pb::GameEvent>, Refusal> {
        self.engine.expire().map(wrap_events)
    }
    fn view(&self, seat: Option<usize>) -> pb::GameView {
        pb::GameView {
            game: Some(pb::game_view::Game::TheGang(
                self.the_gang_view(seat.filter(|&s| s < self.players())),
            )),
        }
    }
    fn redact(&self, event: &pb::GameEvent, seat: Option<usize>) -> Option<pb::GameEvent> {
        match &event.game {
            Some(pb::game_event::Game::TheGang(e)) => Some(pb::GameEvent {
                game: Some(pb::game_event::Game::TheGang(redact_event(e, seat))),
            }),
            _ => None,
        }
    }
    fn legal_actions(&self, seat: usize) -> Vec<pb::GameAction> {
        self.engine
            .legal_actions(seat)
            .into_iter()
            .map(|a| wrap_action(action_to_pb(a)))
            .collect()
    }
    fn actors(&self) -> Vec<crate::Seat> {
        gangs_rules::Engine::actors(&self.engine)
    }
    fn default_action(&self, seat: crate::Seat) -> Option<pb::GameAction> {
        self.engine
            .default_action(seat)
            .map(|a| wrap_action(action_to_pb(a)))
    }
    fn is_over(&self) -> bool {
        self.engine.is_over()
    }
    fn outcome(&self) -> Option<pb::Outcome> {
        let won = self.engine.result()?;
        let vaults = self.engine.vaults();
        Some(pb::Outcome {
            seats: (0..self.players())
                .map(|seat| pb::SeatOutcome {
                    seat: seat as u32,
                    rank: 1,
                    score: vaults as i64,
                    won,
                })
                .collect(),
            summary: if won {
                format!("the gang wins: {vaults} vaults opened")
            } else {
                format!(
                    "the gang loses: {} alarms rang ({vaults} vaults opened)",
                    self.engine.alarms()
                )
            },
        })
    }
}

// ---- words -------------------------------------------------------------------------------------

/// `--option key=value` pairs, checked against the engine's option schema
/// ([`engine::contract::OPTIONS`]), with the number of players.
pub fn parse_options(
    players: Option<u32>,
    pairs: &[(String, String)],
) -> Result<pb::TheGangOptions, Refusal> {
    use gangs_rules::engine::{option_spec, OptionValue as V};
    let mut o = pb::TheGangOptions {
        players: players.unwrap_or(4),
        ..Default::default()
    };
    for (key, value) in pairs {
        let spec = option_spec(crate::THE_GANG, engine::contract::OPTIONS, key)?;
        match (spec.key, spec.parse(value)?) {
            // The schema's ranges bound these counts to u32.
            ("players", V::Count(n)) => o.players = n as u32,
            ("max_moves_per_phase", V::Count(n)) => o.max_moves_per_phase = n as u32,
            ("phase_deadline_ms", V::Count(n)) => o.phase_deadline_ms = Some(n),
            ("mode", V::Choice(i)) => {
                let mode = Mode::from_index(i).expect("the schema lists the modes in order");
                o.mode = mode_to_pb(mode) as i32;
            }
            (key, value) => unreachable!("schema option {key} = {value:?} has no wire field"),
        }
    }
    config_from_pb(Some(&o))?;
    Ok(o)
}

fn parse_card_word(w: &str) -> Result<Card, Refusal> {
    Card::parse(w).ok_or_else(|| Refusal::invalid(format!("bad card {w:?}: e.g. Ah Td 7c J*")))
}

pub fn parse_action(words: &[String]) -> Result<pb::GameAction, Refusal> {
    let word = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    let action = match word(0) {
        "take" => Action::Take(
            word(1)
                .parse()
                .map_err(|_| Refusal::invalid("take N: the chip's stars"))?,
        ),
        "return" => Action::Return,
        "ready" => Action::Ready,
        "accept" => Action::Accept,
        "refuse" => Action::Refuse,
        "choose" => Action::Choose(parse_card_word(word(1))?),
        "guess" => {
            let w = word(1);
            if let Some(r) = engine::parse_rank(w) {
                Action::Guess(GuessValue::Rank(r))
            } else if let Some(c) = Category::parse(w) {
                Action::Guess(GuessValue::Category(c))
            } else {
                return Err(Refusal::invalid(format!(
                    "guess: a rank (2..A) or a category, got {w:?}"
                )));
            }
        }
        "propose" => {
            let specialist = Specialist::parse(word(1)).ok_or_else(|| {
                Refusal::invalid("propose: informant, driver, brains, hacker, valet or muscle")
            })?;
            let mut seat = None;
            let mut to = None;
            let mut rank = None;
            for kv in &words[2.min(words.len())..] {
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| Refusal::invalid(format!("expected key=value, got {kv:?}")))?;
                let n = || {
                    v.parse::<usize>()
                        .map_err(|_| Refusal::invalid(format!("{k}: a seat number")))
                };
                match k {
                    "seat" => seat = Some(n()?),
                    "to" => to = Some(n()?),
                    "rank" => {
                        rank = Some(
                            engine::parse_rank(v)
                                .ok_or_else(|| Refusal::invalid("rank: 2..9, T, J, Q, K, A"))?,
                        )
                    }
                    other => return Err(Refusal::invalid(format!("unknown key {other:?}"))),
                }
            }
            let seat = seat.ok_or_else(|| Refusal::invalid("propose needs seat=S"))?;
            Action::Propose(match specialist {
                Specialist::Informant => SpecialistUse::Informant {
                    from: seat,
                    to: to.ok_or_else(|| Refusal::invalid("informant needs to=T"))?,
                },
                Specialist::Driver => SpecialistUse::Driver { seat },
                Specialist::Brains => SpecialistUse::Brains {
                    seat,
                    rank: rank.ok_or_else(|| Refusal::invalid("brains needs rank=R"))?,
                },
                Specialist::Hacker => SpecialistUse::Hacker { seat },
                Specialist::Valet => SpecialistUse::Valet { seat },
                Specialist::Muscle => SpecialistUse::Muscle { seat },
                other => {
                    return Err(Refusal::invalid(format!(
                        "{} acts by itself after the deal",
                        other.name()
                    )))
                }
            })
        }
        other => {
            return Err(Refusal::invalid(format!(
                "unknown action {other:?}:\n{ACTION_HELP}"
            )))
        }
    };
    Ok(wrap_action(action_to_pb(action)))
}

fn card_word(c: Option<&pb::TheGangCard>) -> String {
    c.and_then(|c| card_from_pb(c).ok())
        .map_or_else(|| "a card".to_string(), |c| c.to_string())
}

/// Private cards in an event: absent when the reader may not see them.
fn private_words(cards: &[pb::TheGangCard]) -> String {
    if cards.is_empty() {
        "(hidden)".to_string()
    } else {
        cards_words(cards)
    }
}

fn cards_words(cards: &[pb::TheGangCard]) -> String {
    cards
        .iter()
        .map(|c| card_word(Some(c)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn rank_word(face: u32) -> String {
    engine::RANK_LETTERS
        .get((face as usize).wrapping_sub(2))
        .map_or("?".to_string(), |c| c.to_string())
}

fn category_word(c: i32) -> String {
    category_from_pb(c).map_or("?".to_string(), |c| c.word().to_string())
}

fn guess_word(g: Option<&pb::TheGangGuessValue>) -> String {
    use pb::the_gang_guess_value::Value;
    match g.and_then(|g| g.value) {
        Some(Value::Rank(r)) => rank_word(r),
        Some(Value::Category(c)) => category_word(c),
        None => "?".into(),
    }
}

fn use_words(u: Option<&pb::TheGangSpecialistUse>) -> String {
    let Some(u) = u else {
        return "?".into();
    };
    let name = Specialist::from_number(u.specialist).map_or("?", |s| s.name());
    match Specialist::from_number(u.specialist) {
        Some(Specialist::Informant) => format!("{name} seat={} to={}", u.seat, u.to_seat),
        Some(Specialist::Brains) => format!("{name} seat={} rank={}", u.seat, rank_word(u.rank)),
        _ => format!("{name} seat={}", u.seat),
    }
}

pub fn describe_action(a: &pb::TheGangAction) -> String {
    match &a.kind {
        None => "(empty)".into(),
        Some(act::Kind::Take(t)) => format!("take {}", t.stars),
        Some(act::Kind::ReturnChip(_)) => "return".into(),
        Some(act::Kind::Ready(_)) => "ready".into(),
        Some(act::Kind::Propose(p)) => format!("propose {}", use_words(p.specialist_use.as_ref())),
        Some(act::Kind::Vote(v)) => if v.accept { "accept" } else { "refuse" }.into(),
        Some(act::Kind::Guess(g)) => format!("guess {}", guess_word(g.value.as_ref())),
        Some(act::Kind::ChooseCard(c)) => format!("choose {}", card_word(c.card.as_ref())),
    }
}

fn street_word(s: i32) -> &'static str {
    street_from_pb(s).map_or("?", |s| s.word())
}

fn announcement_words(a: Option<&pb::TheGangAnnouncement>) -> String {
    use pb::the_gang_announcement::Value;
    let Some(a) = a else {
        return "?".into();
    };
    let what = match &a.value {
        Some(Value::FaceCards(n)) => format!("holds {n} J/Q/K"),
        Some(Value::CardSum(n)) => format!("private cards sum to {n}"),
        Some(Value::BestCategory(c)) => format!("best hand is {}", category_word(*c)),
        Some(Value::RankCount(rc)) => format!("holds {} of rank {}", rc.count, rank_word(rc.rank)),
        None => "?".into(),
    };
    format!("seat {} {what}", a.seat)
}

pub fn describe_event(e: &pb::TheGangEvent) -> String {
    let challenge_name = |n: u32| Challenge::from_number(n).map_or("?", |c| c.name());
    match &e.kind {
        None => "(empty event)".into(),
        Some(ev::Kind::HeistStarted(h)) => format!(
            "heist {} starts; challenges [{}]; specialist {}",
            h.heist,
            h.challenges
                .iter()
                .map(|&c| challenge_name(c))
                .collect::<Vec<_>>()
                .join(", "),
            h.specialist
                .and_then(Specialist::from_number)
                .map_or("none", |s| s.name())
        ),
        Some(ev::Kind::Dealt(d)) => format!(
            "seat {} is dealt {} cards {}",
            d.seat,
            d.card_count,
            private_words(&d.cards)
        ),
        Some(ev::Kind::Announced(a)) => announcement_words(a.announcement.as_ref()),
        Some(ev::Kind::Swindled(s)) => format!(
            "swindler: seat {} gets new cards {} (had {})",
            s.seat,
            private_words(&s.new_cards),
            private_words(&s.old_cards)
        ),
        Some(ev::Kind::CardChosen(c)) => format!("seat {} chose the card to pass", c.seat),
        Some(ev::Kind::CardPassed(p)) => format!(
            "seat {} passes {} to seat {}",
            p.from_seat,
            card_word(p.card.as_ref()),
            p.to_seat
        ),
        Some(ev::Kind::HandReplaced(r)) => format!(
            "{}: seat {} discards {} and draws {}",
            challenge_name(r.challenge),
            r.seat,
            private_words(&r.discarded),
            private_words(&r.drawn)
        ),
        Some(ev::Kind::PhaseOpened(p)) => format!("{} chips open", street_word(p.street)),
        Some(ev::Kind::ChipMoved(m)) => {
            if m.returned {
                format!("#{} seat {} returns {}", m.seq, m.seat, m.stars)
            } else {
                match m.from_seat {
                    Some(from) => format!(
                        "#{} seat {} takes {} from seat {from}",
                        m.seq, m.seat, m.stars
                    ),
                    None => format!("#{} seat {} takes {}", m.seq, m.seat, m.stars),
                }
            }
        }
        Some(ev::Kind::Ready(r)) => format!("seat {} is ready", r.seat),
        Some(ev::Kind::ChipGiven(g)) => format!("seat {} is given chip {}", g.seat, g.stars),
        Some(ev::Kind::PhaseClosed(p)) => format!(
            "{} chips closed{}",
            street_word(p.street),
            if p.expired { " (deadline)" } else { "" }
        ),
        Some(ev::Kind::CommunityRevealed(c)) => format!("board: {}", cards_words(&c.cards)),
        Some(ev::Kind::Proposed(p)) => format!(
            "seat {} proposes {}",
            p.proposer,
            use_words(p.specialist_use.as_ref())
        ),
        Some(ev::Kind::Voted(v)) => format!(
            "seat {} {}",
            v.seat,
            if v.accept { "accepts" } else { "refuses" }
        ),
        Some(ev::Kind::ProposalClosed(p)) => format!(
            "proposal {}",
            if p.accepted {
                "accepted"
            } else if p.expired {
                "dropped (deadline)"
            } else {
                "refused"
            }
        ),
        Some(ev::Kind::CardShown(s)) => format!(
            "seat {} shows {} to seat {}",
            s.from_seat,
            card_word(s.card.as_ref()),
            s.to_seat
        ),
        Some(ev::Kind::CardDrawn(d)) => {
            format!("seat {} draws {}", d.seat, card_word(d.card.as_ref()))
        }
        Some(ev::Kind::SuitlessJackTaken(s)) => format!("seat {} takes the suitless Jack", s.seat),
        Some(ev::Kind::CardDiscarded(d)) => {
            format!("seat {} discards {}", d.seat, card_word(d.card.as_ref()))
        }
        Some(ev::Kind::MuscleTaken(m)) => format!("seat {} takes the muscle", m.seat),
        Some(ev::Kind::GuessOpened(g)) => format!(
            "{}: guess about seat {}",
            challenge_name(g.challenge),
            g.target
        ),
        Some(ev::Kind::GuessCast(g)) => {
            format!("seat {} guesses {}", g.seat, guess_word(g.value.as_ref()))
        }
        Some(ev::Kind::GuessResolved(g)) => format!(
            "team answer {}: {}",
            guess_word(g.answer.as_ref()),
            if g.correct { "right" } else { "wrong" }
        ),
        Some(ev::Kind::Showdown(s)) => {
            let reveals: Vec<String> = s
                .reveals
                .iter()
                .map(|r| {
                    format!(
                        "{}* seat {} {} ({}){}",
                        r.stars,
                        r.seat,
                        cards_words(&r.cards),
                        category_word(r.category),
                        if r.out_of_order { " OUT OF ORDER" } else { "" }
                    )
                })
                .collect();
            format!(
                "showdown: {}; {}",
                reveals.join(", "),
                if s.success { "success" } else { "failure" }
            )
        }
        Some(ev::Kind::HeistEnded(h)) => format!(
            "{}: {} vaults, {} alarms",
            if h.success {
                "vault opens"
            } else {
                "alarm rings"
            },
            h.vaults,
            h.alarms
        ),
        Some(ev::Kind::GameOver(g)) => {
            if g.won {
                "the gang wins".into()
            } else {
                "the gang loses".into()
            }
        }
    }
}

pub fn render_view(v: &pb::TheGangView) -> String {
    let mut out = Vec::new();
    out.push(format!(
        "heist {} | vaults {}/3 | alarms {}/{} | challenges {:?} | specialist {}{}",
        v.heist,
        v.vaults,
        v.alarms,
        v.alarms_to_lose,
        v.active_challenges,
        v.active_specialist
            .and_then(Specialist::from_number)
            .map_or("none", |s| s.name()),
        if v.specialist_used { " (used)" } else { "" }
    ));
    if let Some(seat) = v.seat {
        out.push(format!(
            "you are seat {seat}: {}",
            cards_words(&v.private_cards)
        ));
    }
    for s in &v.shown_to_me {
        out.push(format!(
            "seat {} showed you {}",
            s.from_seat,
            card_word(s.card.as_ref())
        ));
    }
    if let Some(r) = &v.received {
        out.push(format!(
            "seat {} passed you {}",
            r.from_seat,
            card_word(r.card.as_ref())
        ));
    }
    if !v.remembered.is_empty() {
        out.push(format!("you held earlier: {}", cards_words(&v.remembered)));
    }
    out.push(format!("board: {}", cards_words(&v.community)));
    for c in &v.chips {
        out.push(format!(
            "{:>6}: {:?}",
            street_word(c.street),
            c.stars_by_seat
        ));
    }
    if !v.moves.is_empty() {
        out.push(format!(
            "moves {}/{}; ready {:?}; locked {:?}",
            v.moves_made, v.max_moves, v.ready, v.locked_stars
        ));
    }
    for a in &v.announcements {
        out.push(announcement_words(Some(a)));
    }
    if let Some(p) = &v.proposal {
        out.push(format!(
            "open proposal by seat {}: {} (accepted by {:?})",
            p.proposer,
            use_words(p.specialist_use.as_ref()),
            p.accepted_seats
        ));
    }
    if let Some(p) = &v.pending_choice {
        out.push(format!(
            "waiting for seat {} to choose a card to {}",
            p.seat, p.kind
        ));
    }
    if let Some(g) = &v.guess {
        out.push(format!(
            "team guess about seat {}: {} votes",
            g.target,
            g.votes.len()
        ));
    }
    if v.game_over {
        out.push(
            if v.won {
                "the gang won"
            } else {
                "the gang lost"
            }
            .into(),
        );
    }
    out.join("\n")
}
