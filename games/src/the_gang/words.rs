//! The Gang for humans: the CLI's option and action words, one-line event descriptions and
//! the terminal picture of a view.

use super::wire::{
    action_to_pb, card_from_pb, category_from_pb, config_from_pb, mode_to_pb, street_from_pb,
    wrap_action,
};
use crate::Refusal;
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::{
    self as engine, Action, Card, Category, Challenge, GuessValue, Mode, Specialist, SpecialistUse,
};
use pb::the_gang_action as act;
use pb::the_gang_event as ev;

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

// ---- words -------------------------------------------------------------------------------------

/// `--option key=value` pairs, checked against the engine's option schema
/// ([`engine::contract::OPTIONS`]), with the number of players.
pub fn parse_options(
    players: Option<u32>,
    pairs: &[(String, String)],
) -> Result<pb::TheGangOptions, Refusal> {
    use gangs_rules::engine::{option_spec, OptionValue as V};
    let mut o = pb::TheGangOptions {
        players: Some(players.unwrap_or(4)),
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
            // The schema's ranges bound these counts to u32.
            ("players", V::Count(n)) => o.players = Some(n as u32),
            ("max_moves_per_phase", V::Count(n)) => o.max_moves_per_phase = Some(n as u32),
            ("phase_deadline_ms", V::Count(n)) => o.phase_deadline_ms = Some(n),
            ("mode", V::Choice(i)) => {
                let mode = Mode::from_index(i).expect("the schema lists the modes in order");
                o.mode = mode_to_pb(mode) as i32;
            }
            (key, value) => unreachable!("schema option {key} = {value:?} has no wire field"),
        }
    }
    config_from_pb(Some(&o))?;
    let clock = crate::clock::ClockSettings::from_wire(clock)?.to_wire();
    Ok(pb::TheGangOptions {
        turn_ms: clock.turn_ms,
        bank_ms: clock.bank_ms,
        absent_after: clock.absent_after,
        ..o
    })
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

pub(crate) fn cards_words(cards: &[pb::TheGangCard]) -> String {
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

pub(crate) fn category_word(c: i32) -> String {
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

pub(crate) fn street_word(s: i32) -> &'static str {
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
        Some(ev::Kind::ChipMoved(m)) => chip_moved_words(m),
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
        Some(ev::Kind::Showdown(s)) => showdown_words(s),
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

/// A chip taken (from the middle or from a seat) or returned.
fn chip_moved_words(m: &pb::TheGangChipMove) -> String {
    if m.returned {
        return format!("#{} seat {} returns {}", m.seq, m.seat, m.stars);
    }
    match m.from_seat {
        Some(from) => format!(
            "#{} seat {} takes {} from seat {from}",
            m.seq, m.seat, m.stars
        ),
        None => format!("#{} seat {} takes {}", m.seq, m.seat, m.stars),
    }
}

/// Every seat's reveal in order, and whether the heist succeeded.
fn showdown_words(s: &ev::Showdown) -> String {
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
        let purpose = match p.choice_kind() {
            pb::TheGangChoiceKind::Show => "show",
            pb::TheGangChoiceKind::Discard => "discard",
            pb::TheGangChoiceKind::Unspecified => "choose",
        };
        out.push(format!(
            "waiting for seat {} to choose a card to {purpose}",
            p.seat
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
