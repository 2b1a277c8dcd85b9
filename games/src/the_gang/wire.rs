//! The Gang on the wire: options, presets, actions and complete events of `gangs.v1`. Pure
//! translation; what a seat may see is decided in [`super::visibility`].

use crate::bridge::{ClockFields, Wire};
use crate::{Refusal, Seat};
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::{
    self as engine, Action, Announcement, Card, Category, Challenge, ChipMoveKind, Config, Event,
    GuessValue, HeistPreset, Mode, Preset, Specialist, SpecialistUse, Street, Suit, TheGang,
};
use pb::the_gang_action as act;
use pb::the_gang_event as ev;

/// The Gang's place in the generic bridge ([`crate::bridge::Bridge`]).
pub struct TheGangWire;

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

pub(super) fn cards_to_pb(cards: &[Card]) -> Vec<pb::TheGangCard> {
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

pub(super) fn category_from_pb(c: i32) -> Result<Category, Refusal> {
    // Checked: a wire value of i32::MIN must be refused, not overflow.
    c.checked_sub(1)
        .and_then(|c| u32::try_from(c).ok())
        .and_then(Category::from_index)
        .ok_or_else(|| Refusal::invalid("unknown hand category"))
}

pub(super) fn street_to_pb(s: Street) -> i32 {
    s as i32 + 1
}

pub(super) fn street_from_pb(s: i32) -> Option<Street> {
    let index = usize::try_from(s.checked_sub(1)?).ok()?;
    Street::ALL.get(index).copied()
}

pub(super) fn face(rank: u8) -> u32 {
    engine::cards::rank_face(rank) as u32
}

pub(super) fn rank_from_face(face: u32) -> Result<u8, Refusal> {
    if (2..=14).contains(&face) {
        Ok(face as u8 - 2)
    } else {
        Err(Refusal::invalid("a rank is a face value 2..14"))
    }
}

pub(super) fn guess_to_pb(g: GuessValue) -> pb::TheGangGuessValue {
    use pb::the_gang_guess_value::Value;
    pb::TheGangGuessValue {
        value: Some(match g {
            GuessValue::Rank(r) => Value::Rank(face(r)),
            GuessValue::Category(c) => Value::Category(category_to_pb(c)),
        }),
    }
}

pub(super) fn guess_from_pb(g: Option<&pb::TheGangGuessValue>) -> Result<GuessValue, Refusal> {
    use pb::the_gang_guess_value::Value;
    match g.and_then(|g| g.value) {
        Some(Value::Rank(face)) => Ok(GuessValue::Rank(rank_from_face(face)?)),
        Some(Value::Category(c)) => Ok(GuessValue::Category(category_from_pb(c)?)),
        None => Err(Refusal::invalid("a guess needs a rank or a category")),
    }
}

pub(super) fn use_to_pb(u: SpecialistUse) -> pb::TheGangSpecialistUse {
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

pub(super) fn use_from_pb(u: Option<&pb::TheGangSpecialistUse>) -> Result<SpecialistUse, Refusal> {
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

pub(super) fn announcement_to_pb(
    seat: usize,
    s: Specialist,
    a: Announcement,
) -> pb::TheGangAnnouncement {
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

pub(super) fn reveal_to_pb(r: &engine::Reveal) -> pb::TheGangReveal {
    pb::TheGangReveal {
        seat: r.seat as u32,
        stars: r.stars as u32,
        cards: cards_to_pb(&r.cards),
        category: category_to_pb(r.value.category()),
        value: r.value.0,
        out_of_order: r.out_of_order,
    }
}

pub(super) fn chip_move_to_pb(m: &engine::ChipMove) -> pb::TheGangChipMove {
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

pub(super) fn wrap_action(a: pb::TheGangAction) -> pb::GameAction {
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

// ---- options and preset ------------------------------------------------------------------------

pub(super) fn mode_from_pb(m: i32) -> Result<Mode, Refusal> {
    match pb::TheGangMode::try_from(m) {
        Ok(pb::TheGangMode::Basic) => Ok(Mode::Basic),
        Ok(pb::TheGangMode::Advanced) => Ok(Mode::Advanced),
        Ok(pb::TheGangMode::Pro) => Ok(Mode::Pro),
        Ok(pb::TheGangMode::Gangster) => Ok(Mode::Gangster),
        Err(_) => Err(Refusal::invalid("unknown mode")),
    }
}

pub(super) fn mode_to_pb(m: Mode) -> pb::TheGangMode {
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
    // Absent means the default; so does 0, what clients built before the fields had presence
    // sent for it (see the_gang.proto).
    let players = o.players.filter(|&n| n != 0).unwrap_or(4) as usize;
    if !(3..=6).contains(&players) {
        return Err(Refusal::invalid("players must be 3 to 6"));
    }
    let mut config = Config::new(players, mode_from_pb(o.mode)?);
    if let Some(moves) = o.max_moves_per_phase.filter(|&n| n != 0) {
        config.max_moves_per_phase = moves;
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

pub(super) fn config_to_pb(c: &Config) -> pb::TheGangOptions {
    pb::TheGangOptions {
        players: Some(c.players as u32),
        mode: mode_to_pb(c.mode) as i32,
        max_moves_per_phase: Some(c.max_moves_per_phase),
        phase_deadline_ms: c.phase_deadline_ms,
        // The clock is the host's: the bridge fills these in (`Bridge::options`).
        turn_ms: None,
        bank_ms: None,
        absent_after: None,
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

/// The engine for wire options (defaults when omitted), a seed and preset heists.
pub fn new_engine(
    options: Option<&pb::TheGangOptions>,
    seed: u64,
    preset: Option<&pb::TheGangPreset>,
) -> Result<TheGang, Refusal> {
    let config = config_from_pb(options)?;
    let preset = preset.map(preset_from_pb).transpose()?;
    TheGang::new(config, seed, preset)
}

impl Wire for TheGangWire {
    type Engine = TheGang;
    type PbEvent = pb::TheGangEvent;
    type PbView = pb::TheGangView;
    const VIEW_FIELD: u32 = 2;
    const KIND: &'static str = super::KIND.name;

    fn unwrap_event(event: &pb::GameEvent) -> Option<&pb::TheGangEvent> {
        match &event.game {
            Some(pb::game_event::Game::TheGang(e)) => Some(e),
            _ => None,
        }
    }

    fn wrap_event(event: pb::TheGangEvent) -> pb::GameEvent {
        pb::GameEvent {
            game: Some(pb::game_event::Game::TheGang(event)),
        }
    }

    fn wrap_view(view: pb::TheGangView) -> pb::GameView {
        pb::GameView {
            game: Some(pb::game_view::Game::TheGang(view)),
        }
    }

    fn options(engine: &TheGang) -> pb::GameOptions {
        pb::GameOptions {
            game: Some(pb::game_options::Game::TheGang(config_to_pb(
                engine.config(),
            ))),
        }
    }

    fn action_from_pb(
        _engine: &TheGang,
        _seat: Seat,
        action: &pb::GameAction,
    ) -> Result<Action, Refusal> {
        match &action.game {
            Some(pb::game_action::Game::TheGang(a)) => action_from_pb(a),
            _ => Err(Refusal::invalid("not a the-gang action")),
        }
    }

    fn action_to_pb(action: &Action) -> pb::GameAction {
        wrap_action(action_to_pb(*action))
    }

    fn decision(action: &Action) -> &'static str {
        match action {
            Action::Take(_) | Action::Return | Action::Ready => "chip move",
            Action::Propose(_) => "specialist proposal",
            Action::Accept | Action::Refuse => "proposal answer",
            Action::Guess(_) => "team guess",
            Action::Choose(_) => "card choice",
        }
    }

    fn clock_fields(options: &mut pb::GameOptions) -> Option<ClockFields<'_>> {
        match &mut options.game {
            Some(pb::game_options::Game::TheGang(o)) => Some(ClockFields {
                turn_ms: &mut o.turn_ms,
                bank_ms: &mut o.bank_ms,
                absent_after: &mut o.absent_after,
            }),
            _ => None,
        }
    }

    fn event_to_pb(_engine: &TheGang, event: &Event) -> pb::GameEvent {
        pb::GameEvent {
            game: Some(pb::game_event::Game::TheGang(event_to_pb(event))),
        }
    }
}
