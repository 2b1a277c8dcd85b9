//! Gang of Four on the wire: options, presets, actions and complete events of `gangs.v1`.
//! Pure translation; what a seat may see is decided in [`super::visibility`].
//!
//! A `play` action carries card ids (what `legal_actions` lists) or card words (what the CLI
//! sends); words are resolved against the acting seat's hand, each word taking a distinct held
//! card, lowest id first.

use crate::bridge::{ClockFields, Wire};
use crate::{Refusal, Seat};
use gangs_proto::v1 as pb;
use gangs_rules::gang_of_four::{
    self as engine, cards, Action, Combination, Event, GangOfFour, Kind, Mask, Options,
};

use pb::gang_of_four_action::Kind as ActionKind;
use pb::gang_of_four_event::Kind as EventKind;

/// Gang of Four's place in the generic bridge ([`crate::bridge::Bridge`]).
pub struct GangOfFourWire;

/// The engine options from wire options, defaults filled in.
pub fn engine_options(options: Option<&pb::GangOfFourOptions>) -> Result<Options, Refusal> {
    let d = Options::default();
    let o = options.cloned().unwrap_or_default();
    let players = o.players.unwrap_or(d.players as u32);
    if !(3..=4).contains(&players) {
        return Err(Refusal::invalid(format!(
            "players must be 3 or 4, not {players}"
        )));
    }
    let options = Options {
        players: players as u8,
        target_score: o.target_score.unwrap_or(d.target_score),
        flush_by_sum: o.flush_by_sum.unwrap_or(d.flush_by_sum),
        loser_tie_strongest_card: o
            .loser_tie_strongest_card
            .unwrap_or(d.loser_tie_strongest_card),
        manual_last_card: o.manual_last_card.unwrap_or(d.manual_last_card),
    };
    options.validate()?;
    Ok(options)
}

pub(super) fn wire_options(o: &Options) -> pb::GangOfFourOptions {
    pb::GangOfFourOptions {
        players: Some(o.players as u32),
        target_score: Some(o.target_score),
        flush_by_sum: Some(o.flush_by_sum),
        loser_tie_strongest_card: Some(o.loser_tie_strongest_card),
        manual_last_card: Some(o.manual_last_card),
        // The clock is the host's: the bridge fills these in (`Bridge::options`).
        turn_ms: None,
        bank_ms: None,
        absent_after: None,
    }
}

fn card_mask(ids: &[u32], what: &str) -> Result<Mask, Refusal> {
    let mut mask = 0u64;
    for &id in ids {
        if id >= 64 {
            return Err(Refusal::invalid(format!(
                "{what}: card {id} does not exist (ids are 0..63)"
            )));
        }
        if mask & (1 << id) != 0 {
            return Err(Refusal::invalid(format!(
                "{what}: card {id} is listed twice"
            )));
        }
        mask |= 1 << id;
    }
    Ok(mask)
}

/// The engine for wire options, a seed and preset deals.
pub fn new_engine(
    options: Option<&pb::GangOfFourOptions>,
    seed: u64,
    preset: Option<&pb::GangOfFourPreset>,
) -> Result<GangOfFour, Refusal> {
    let options = engine_options(options)?;
    let mut deals = Vec::new();
    for (i, deal) in preset
        .map(|p| p.deals.as_slice())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        if deal.hands.len() != 4 {
            return Err(Refusal::invalid(format!(
                "preset deal {}: give 4 hands (with 3 players the 4th is the dead hand), not {}",
                i + 1,
                deal.hands.len()
            )));
        }
        let mut hands = [0u64; 4];
        for (h, hand) in deal.hands.iter().enumerate() {
            hands[h] = card_mask(&hand.card_ids, &format!("preset deal {} hand {h}", i + 1))?;
        }
        deals.push(hands);
    }
    GangOfFour::new(options, seed, deals)
}

fn resolve(
    engine: &GangOfFour,
    seat: Seat,
    action: &pb::GangOfFourAction,
) -> Result<Action, Refusal> {
    let hand = engine.deal().hands.get(seat).copied().unwrap_or(0);
    match &action.kind {
        None => Err(Refusal::invalid(
            "empty action: use play, pass or give_back",
        )),
        Some(ActionKind::Pass(_)) => Ok(Action::Pass),
        Some(ActionKind::Play(play)) => {
            let cards = match (play.card_ids.is_empty(), play.card_words.is_empty()) {
                (false, false) => {
                    return Err(Refusal::invalid("give card_ids or card_words, not both"));
                }
                (true, true) => return Err(Refusal::invalid("a play needs at least one card")),
                (false, true) => card_mask(&play.card_ids, "play")?,
                (true, false) => {
                    let mut taken = 0u64;
                    for word in &play.card_words {
                        taken |= 1 << resolve_word(word, hand & !taken)?;
                    }
                    taken
                }
            };
            Ok(Action::Play {
                cards,
                announce: play.announce_last_card,
            })
        }
        Some(ActionKind::GiveBack(give)) => {
            let card = match (give.card_id, give.card_word.is_empty()) {
                (Some(_), false) => {
                    return Err(Refusal::invalid("give card_id or card_word, not both"))
                }
                (None, true) => return Err(Refusal::invalid("give_back needs a card")),
                (Some(id), true) => {
                    if id >= 64 {
                        return Err(Refusal::invalid(format!(
                            "card {id} does not exist (ids are 0..63)"
                        )));
                    }
                    id as u8
                }
                (None, false) => resolve_word(&give.card_word, hand)?,
            };
            Ok(Action::GiveBack { card })
        }
    }
}

/// The lowest held card carrying `word`.
fn resolve_word(word: &str, available: Mask) -> Result<u8, Refusal> {
    let ids = cards::ids_of_word(word).ok_or_else(|| {
        Refusal::invalid(format!(
            "unknown card word {}: use g5 y5 r5 (color + 1..10), m1, gp, yp, dr",
            gangs_proto::quoted(word)
        ))
    })?;
    cards::iter(ids & available).next().ok_or_else(|| {
        Refusal::invalid(format!(
            "{word} is not in your hand (or is named more often than you hold it)"
        ))
    })
}

pub fn card(id: u8) -> pb::GangOfFourCard {
    let color = match cards::color(id) {
        engine::Color::Green => pb::GangOfFourColor::Green,
        engine::Color::Yellow => pb::GangOfFourColor::Yellow,
        engine::Color::Red => pb::GangOfFourColor::Red,
        engine::Color::Multicolor => pb::GangOfFourColor::Multicolor,
        engine::Color::Colorless => pb::GangOfFourColor::None,
    };
    pb::GangOfFourCard {
        id: id as u32,
        value: cards::value(id) as u32,
        color: color as i32,
        word: cards::word(id).to_string(),
    }
}

pub(super) fn card_list(mask: Mask) -> Vec<pb::GangOfFourCard> {
    cards::iter(mask).map(card).collect()
}

/// Each card's `GangOfFourCard` encoding, made once per process.
fn encoded_cards() -> &'static [Vec<u8>] {
    use prost::Message;
    static ENCODED: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    ENCODED.get_or_init(|| {
        (0..cards::CARD_COUNT as u8)
            .map(|id| card(id).encode_to_vec())
            .collect()
    })
}

/// The bytes [`encode_card_list`] writes for `mask` as field `field`.
pub(super) fn encoded_card_list_len(field: u32, mask: Mask) -> usize {
    let encoded = encoded_cards();
    cards::iter(mask)
        .map(|id| proto_write::message_len(field, encoded[id as usize].len()))
        .sum()
}

/// Writes the cards of `mask` as the repeated `GangOfFourCard` field `field`, the bytes prost
/// writes for [`card_list`]`(mask)` (tested), without building a message (and its word's
/// `String`) per card.
pub(super) fn encode_card_list(field: u32, mask: Mask, out: &mut Vec<u8>) {
    let encoded = encoded_cards();
    for id in cards::iter(mask) {
        let card = &encoded[id as usize];
        proto_write::message_head(field, card.len(), out);
        out.extend_from_slice(card);
    }
}

pub(super) fn kind(k: Kind) -> pb::GangOfFourKind {
    match k {
        Kind::Single => pb::GangOfFourKind::Single,
        Kind::Pair => pb::GangOfFourKind::Pair,
        Kind::Triple => pb::GangOfFourKind::Triple,
        Kind::Straight => pb::GangOfFourKind::Straight,
        Kind::Flush => pb::GangOfFourKind::Flush,
        Kind::FullHouse => pb::GangOfFourKind::FullHouse,
        Kind::StraightFlush => pb::GangOfFourKind::StraightFlush,
        Kind::Gang => pb::GangOfFourKind::Gang,
    }
}

pub(super) fn direction(d: engine::Direction) -> pb::GangOfFourDirection {
    match d {
        engine::Direction::Clockwise => pb::GangOfFourDirection::Clockwise,
        engine::Direction::CounterClockwise => pb::GangOfFourDirection::CounterClockwise,
    }
}

pub(super) fn exchanged(e: &engine::ExchangedCard) -> pb::gang_of_four_event::Exchanged {
    pb::gang_of_four_event::Exchanged {
        from_seat: e.from as u32,
        to_seat: e.to as u32,
        card: Some(card(e.card)),
        automatic: e.automatic,
    }
}

pub(super) fn deal_scored(
    s: &engine::DealScore,
    players: u8,
) -> pb::gang_of_four_event::DealScored {
    pb::gang_of_four_event::DealScored {
        deal_number: s.deal_number,
        winner: s.winner.map(u32::from),
        loser: s.loser as u32,
        seats: (0..players as usize)
            .map(|seat| pb::GangOfFourSeatScore {
                seat: seat as u32,
                cards_left: s.cards_left[seat] as u32,
                points: s.points[seat],
                total: s.totals[seat],
            })
            .collect(),
    }
}

pub(super) fn ranking(r: &[engine::Ranked]) -> Vec<pb::GangOfFourRank> {
    r.iter()
        .map(|r| pb::GangOfFourRank {
            seat: r.seat as u32,
            rank: r.rank as u32,
            total: r.total,
        })
        .collect()
}

fn wire_event(e: &Event, players: u8) -> pb::GameEvent {
    let kind = match e {
        Event::Dealt {
            deal_number,
            hands,
            direction: d,
            leader,
            must_include,
        } => EventKind::Dealt(pb::gang_of_four_event::Dealt {
            deal_number: *deal_number,
            hands: hands
                .iter()
                .enumerate()
                .map(|(seat, &h)| pb::gang_of_four_event::Hand {
                    seat: seat as u32,
                    cards: card_list(h),
                    card_count: h.count_ones(),
                    dead: seat >= players as usize,
                })
                .collect(),
            direction: direction(*d) as i32,
            leader: *leader as u32,
            must_play_multicolor_one: *must_include != 0,
        }),
        Event::Exchanged(x) => EventKind::Exchanged(exchanged(x)),
        Event::Played {
            seat,
            combination,
            cards_left,
            announced,
            forgot,
        } => EventKind::Played(pb::gang_of_four_event::Played {
            seat: *seat as u32,
            cards: card_list(combination.cards),
            kind: kind(combination.kind) as i32,
            cards_left: *cards_left as u32,
            announced_last_card: *announced,
            forgot_last_card: *forgot,
        }),
        Event::Passed { seat } => {
            EventKind::Passed(pb::gang_of_four_event::Passed { seat: *seat as u32 })
        }
        Event::TrickWon { seat } => {
            EventKind::TrickWon(pb::gang_of_four_event::TrickWon { seat: *seat as u32 })
        }
        Event::DealScored(s) => EventKind::DealScored(deal_scored(s, players)),
        Event::GameOver { ranking: r } => EventKind::GameOver(pb::gang_of_four_event::GameOver {
            ranking: ranking(r),
        }),
    };
    pb::GameEvent {
        game: Some(pb::game_event::Game::GangOfFour(pb::GangOfFourEvent {
            kind: Some(kind),
        })),
    }
}

pub(super) fn table_play(seat: u8, c: &Combination) -> pb::gang_of_four_view::Play {
    pb::gang_of_four_view::Play {
        seat: seat as u32,
        cards: card_list(c.cards),
        kind: kind(c.kind) as i32,
        pass: false,
    }
}

fn wire_action(a: &Action) -> pb::GameAction {
    let kind = match *a {
        Action::Play { cards: c, announce } => ActionKind::Play(pb::gang_of_four_action::Play {
            card_ids: cards::iter(c).map(u32::from).collect(),
            card_words: Vec::new(),
            announce_last_card: announce,
        }),
        Action::Pass => ActionKind::Pass(pb::gang_of_four_action::Pass {}),
        Action::GiveBack { card } => ActionKind::GiveBack(pb::gang_of_four_action::GiveBack {
            card_id: Some(card as u32),
            card_word: String::new(),
        }),
    };
    pb::GameAction {
        game: Some(pb::game_action::Game::GangOfFour(pb::GangOfFourAction {
            kind: Some(kind),
        })),
    }
}

impl Wire for GangOfFourWire {
    type Engine = GangOfFour;
    type PbEvent = pb::GangOfFourEvent;
    type PbView = pb::GangOfFourView;
    const VIEW_FIELD: u32 = 1;
    const KIND: &'static str = super::KIND.name;

    fn unwrap_event(event: &pb::GameEvent) -> Option<&pb::GangOfFourEvent> {
        match &event.game {
            Some(pb::game_event::Game::GangOfFour(e)) => Some(e),
            _ => None,
        }
    }

    fn wrap_event(event: pb::GangOfFourEvent) -> pb::GameEvent {
        pb::GameEvent {
            game: Some(pb::game_event::Game::GangOfFour(event)),
        }
    }

    fn wrap_view(view: pb::GangOfFourView) -> pb::GameView {
        pb::GameView {
            game: Some(pb::game_view::Game::GangOfFour(view)),
        }
    }

    fn options(engine: &GangOfFour) -> pb::GameOptions {
        pb::GameOptions {
            game: Some(pb::game_options::Game::GangOfFour(wire_options(
                engine.options(),
            ))),
        }
    }

    fn action_from_pb(
        engine: &GangOfFour,
        seat: Seat,
        action: &pb::GameAction,
    ) -> Result<Action, Refusal> {
        let Some(pb::game_action::Game::GangOfFour(action)) = &action.game else {
            return Err(Refusal::invalid("not a gang-of-four action"));
        };
        if engine.to_act() != Some(seat as u8) {
            // Say why the seat may not act before looking at its cards.
            engine.check(seat as u8, Action::Pass)?;
        }
        resolve(engine, seat, action)
    }

    fn action_to_pb(action: &Action) -> pb::GameAction {
        wire_action(action)
    }

    fn decision(action: &Action) -> &'static str {
        match action {
            Action::Pass => "play or pass",
            Action::Play { .. } => "lead",
            Action::GiveBack { .. } => "give back a card",
        }
    }

    fn clock_fields(options: &mut pb::GameOptions) -> Option<ClockFields<'_>> {
        match &mut options.game {
            Some(pb::game_options::Game::GangOfFour(o)) => Some(ClockFields {
                turn_ms: &mut o.turn_ms,
                bank_ms: &mut o.bank_ms,
                absent_after: &mut o.absent_after,
            }),
            _ => None,
        }
    }

    fn event_to_pb(engine: &GangOfFour, event: &Event) -> pb::GameEvent {
        wire_event(event, engine.options().players)
    }

    fn encode_event(engine: &GangOfFour, event: &Event, out: &mut Vec<u8>) {
        encode_event(event, engine.options().players, out)
    }
}

/// The bytes prost writes for [`wire_event`]`(event, players)`. The events that carry cards (a
/// deal: 64 of them; a play) are written from the cards' encodings, without a message (and
/// its word's `String`) per card; the others are built and encoded.
fn encode_event(event: &Event, players: u8, out: &mut Vec<u8>) {
    use proto_write::{message, varint};
    // `GameEvent.gang_of_four` is field 1; in `GangOfFourEvent`, `dealt` is 1 and `played` 3.
    match event {
        Event::Dealt {
            deal_number,
            hands,
            direction: d,
            leader,
            must_include,
        } => message(1, out, |out| {
            message(1, out, |out| {
                varint(1, *deal_number as u64, out);
                for (seat, &hand) in hands.iter().enumerate() {
                    message(2, out, |out| {
                        varint(1, seat as u64, out);
                        encode_card_list(2, hand, out);
                        varint(3, hand.count_ones() as u64, out);
                        varint(4, (seat >= players as usize) as u64, out);
                    });
                }
                varint(3, direction(*d) as u64, out);
                varint(4, *leader as u64, out);
                varint(5, (*must_include != 0) as u64, out);
            })
        }),
        Event::Played {
            seat,
            combination,
            cards_left,
            announced,
            forgot,
        } => message(1, out, |out| {
            message(3, out, |out| {
                varint(1, *seat as u64, out);
                encode_card_list(2, combination.cards, out);
                varint(3, kind(combination.kind) as u64, out);
                varint(4, *cards_left as u64, out);
                varint(5, *announced as u64, out);
                varint(6, *forgot as u64, out);
            })
        }),
        _ => {
            use prost::Message;
            wire_event(event, players).encode_raw(out);
        }
    }
}

/// The few steps of protobuf's wire format that events written directly need, each writing
/// what prost writes for a proto3 field.
mod proto_write {
    use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};

    /// Varint field `field` holding `value` (an integer, an enum, a bool): nothing for 0,
    /// proto3's default.
    pub fn varint(field: u32, value: u64, out: &mut Vec<u8>) {
        if value != 0 {
            encode_key(field, WireType::Varint, out);
            encode_varint(value, out);
        }
    }

    /// The bytes of message field `field` whose message is `len` bytes long.
    pub fn message_len(field: u32, len: usize) -> usize {
        key_len(field) + encoded_len_varint(len as u64) + len
    }

    /// The key and length of message field `field`, before its `len` bytes.
    pub fn message_head(field: u32, len: usize, out: &mut impl prost::bytes::BufMut) {
        encode_key(field, WireType::LengthDelimited, out);
        encode_varint(len as u64, out);
    }

    /// Message field `field`, whose message `write` appends to `out`. The message is written
    /// first and its key and length put before it once its length is known (a length's varint
    /// takes 1 to 10 bytes): one short move of the message, against computing every nested
    /// message's length before writing it.
    pub fn message(field: u32, out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
        /// A key of 5 bytes at most, a length's varint of 10 at most.
        const HEAD_MAX: usize = 15;
        let start = out.len();
        write(out);
        let mut head = [0u8; HEAD_MAX];
        let mut free = &mut head[..];
        message_head(field, out.len() - start, &mut free);
        let written = HEAD_MAX - free.len();
        out.splice(start..start, head[..written].iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn a_card_list_written_from_its_mask_is_prosts_encoding_of_it() {
        // Every card alone, no card, the whole deck, and masks scattered over it.
        let mut masks: Vec<Mask> = (0..cards::CARD_COUNT).map(|id| 1 << id).collect();
        masks.extend([
            0,
            cards::ALL_CARDS,
            0x5555_5555_5555_5555,
            0x8000_0000_0000_0001,
        ]);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            masks.push(x);
        }
        for mask in masks {
            let mut written = Vec::new();
            encode_card_list(1, mask, &mut written);
            assert_eq!(written.len(), encoded_card_list_len(1, mask));
            let view = pb::GangOfFourView {
                hand: card_list(mask),
                ..Default::default()
            };
            assert_eq!(written, view.encode_to_vec(), "mask {mask:#x}");
        }
    }
}
