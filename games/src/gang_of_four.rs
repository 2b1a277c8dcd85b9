//! Gang of Four on the wire: turns `GangOfFourAction`s into engine actions, engine events and
//! state into `GangOfFourEvent`s and `GangOfFourView`s, and is the one place that decides what
//! a seat may see: its own hand only; other hands and the dead hand never while the game runs;
//! plays, passes, the exchanged cards, counts, scores and announcements are public.
//! Spectators (`None`) see no hand.
//!
//! Card words (CLI, logs): `g5 y5 r5` (green/yellow/red and value), `m1`, `gp yp` (Phoenixes),
//! `dr` (Dragon), case-insensitive. A `play` action carries card ids (what `legal_actions`
//! lists) or card words (what the CLI sends); words are resolved against the acting seat's
//! hand in `act`, each word taking a distinct held card, lowest id first.
use crate::Refusal;
use gangs_proto::v1 as pb;
use gangs_rules::gang_of_four::{
    self as engine, cards, Action, Combination, Event, GangOfFour, Kind, Mask, Options, Phase,
};

use pb::gang_of_four_action::Kind as ActionKind;
use pb::gang_of_four_event::Kind as EventKind;

pub const ACTION_HELP: &str = "  play <cards...> [card]   play these cards, e.g. `play r7 y7`, `play g3 g4 y5 r6 g7`;
                           words: g5 y5 r5 (green/yellow/red + value 1..10), m1, gp yp (Phoenixes), dr (Dragon)
                           add `card` (or `--card`) to announce your last card under manual_last_card
  pass                     pass (not when leading, nor when the last-card rule forces your strongest single)
  give <card>              after a deal: the winner gives one card back to the loser, e.g. `give y3`";

pub struct GangOfFourGame {
    engine: GangOfFour,
    options: pb::GangOfFourOptions,
}

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

fn wire_options(o: &Options) -> pb::GangOfFourOptions {
    pb::GangOfFourOptions {
        players: Some(o.players as u32),
        target_score: Some(o.target_score),
        flush_by_sum: Some(o.flush_by_sum),
        loser_tie_strongest_card: Some(o.loser_tie_strongest_card),
        manual_last_card: Some(o.manual_last_card),
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

impl GangOfFourGame {
    pub fn new(
        options: Option<&pb::GangOfFourOptions>,
        seed: u64,
        preset: Option<&pb::GangOfFourPreset>,
    ) -> Result<Self, Refusal> {
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
        let engine = GangOfFour::new(options, seed, deals)?;
        Ok(GangOfFourGame {
            engine,
            options: wire_options(&options),
        })
    }

    /// The engine, with every hand: for tests and for bots that know the truth.
    pub fn engine(&self) -> &GangOfFour {
        &self.engine
    }

    fn resolve(&self, seat: usize, action: &pb::GangOfFourAction) -> Result<Action, Refusal> {
        let hand = self.engine.deal().hands.get(seat).copied().unwrap_or(0);
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
        word: cards::word(id),
    }
}

fn card_list(mask: Mask) -> Vec<pb::GangOfFourCard> {
    cards::iter(mask).map(card).collect()
}

fn kind(k: Kind) -> pb::GangOfFourKind {
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

fn direction(d: engine::Direction) -> pb::GangOfFourDirection {
    match d {
        engine::Direction::Clockwise => pb::GangOfFourDirection::Clockwise,
        engine::Direction::CounterClockwise => pb::GangOfFourDirection::CounterClockwise,
    }
}

fn exchanged(e: &engine::ExchangedCard) -> pb::gang_of_four_event::Exchanged {
    pb::gang_of_four_event::Exchanged {
        from_seat: e.from as u32,
        to_seat: e.to as u32,
        card: Some(card(e.card)),
        automatic: e.automatic,
    }
}

fn deal_scored(s: &engine::DealScore, players: u8) -> pb::gang_of_four_event::DealScored {
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

fn ranking(r: &[engine::Ranked]) -> Vec<pb::GangOfFourRank> {
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

fn table_play(seat: u8, c: &Combination) -> pb::gang_of_four_view::Play {
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

impl crate::Game for GangOfFourGame {
    fn kind(&self) -> &'static str {
        crate::GANG_OF_FOUR
    }

    fn players(&self) -> usize {
        self.engine.options().players as usize
    }

    fn options(&self) -> pb::GameOptions {
        pb::GameOptions {
            game: Some(pb::game_options::Game::GangOfFour(self.options)),
        }
    }

    fn start(&mut self) -> Vec<pb::GameEvent> {
        let players = self.engine.options().players;
        self.engine
            .start()
            .iter()
            .map(|e| wire_event(e, players))
            .collect()
    }

    fn act(&mut self, seat: usize, action: &pb::GameAction) -> Result<Vec<pb::GameEvent>, Refusal> {
        let Some(pb::game_action::Game::GangOfFour(action)) = &action.game else {
            return Err(Refusal::invalid("not a gang-of-four action"));
        };
        if seat >= self.players() {
            return Err(Refusal::invalid(format!("seat {seat} does not exist")));
        }
        if self.engine.to_act() != Some(seat as u8) {
            // Say why the seat may not act before looking at its cards.
            self.engine.check(seat as u8, Action::Pass)?;
        }
        let action = self.resolve(seat, action)?;
        let players = self.engine.options().players;
        let events = self.engine.act(seat as u8, action)?;
        Ok(events.iter().map(|e| wire_event(e, players)).collect())
    }

    fn phase_deadline_ms(&self) -> Option<u64> {
        None
    }

    fn phase_id(&self) -> u64 {
        0
    }

    fn expire(&mut self) -> Result<Vec<pb::GameEvent>, Refusal> {
        Err(Refusal::not_now("gang-of-four has no deadlines"))
    }

    fn view(&self, seat: Option<usize>) -> pb::GameView {
        let e = &self.engine;
        let deal = e.deal();
        let players = e.options().players;
        let totals = e.totals();
        let seat = seat.filter(|&s| s < players as usize);
        let hand = match (seat, e.phase()) {
            (Some(s), phase) if phase != Phase::NotStarted => card_list(deal.hands[s]),
            _ => Vec::new(),
        };
        let phase = match e.phase() {
            Phase::NotStarted => pb::gang_of_four_view::Phase::Unspecified,
            Phase::GiveBack { .. } => pb::gang_of_four_view::Phase::GiveBack,
            Phase::Play => pb::gang_of_four_view::Phase::Play,
            Phase::Over => pb::gang_of_four_view::Phase::Over,
        };
        let in_play = e.phase() == Phase::Play;
        let view = pb::GangOfFourView {
            hand,
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
            options: Some(self.options),
            ranking: e.ranking().map(ranking).unwrap_or_default(),
            last_card_rule_applies: in_play && seat.is_some_and(|s| deal.is_constrained(s as u8)),
        };
        pb::GameView {
            game: Some(pb::game_view::Game::GangOfFour(view)),
        }
    }

    fn redact(&self, event: &pb::GameEvent, seat: Option<usize>) -> Option<pb::GameEvent> {
        let Some(pb::game_event::Game::GangOfFour(ev)) = &event.game else {
            return None;
        };
        let mut ev = ev.clone();
        if let Some(EventKind::Dealt(dealt)) = &mut ev.kind {
            for hand in &mut dealt.hands {
                if hand.dead || Some(hand.seat as usize) != seat {
                    hand.cards.clear();
                }
            }
        }
        Some(pb::GameEvent {
            game: Some(pb::game_event::Game::GangOfFour(ev)),
        })
    }

    fn legal_actions(&self, seat: usize) -> Vec<pb::GameAction> {
        if seat >= self.players() {
            return Vec::new();
        }
        self.engine
            .legal_actions(seat as u8)
            .iter()
            .map(wire_action)
            .collect()
    }

    fn actors(&self) -> Vec<crate::Seat> {
        gangs_rules::Engine::actors(&self.engine)
    }

    fn default_action(&self, seat: crate::Seat) -> Option<pb::GameAction> {
        self.engine.default_action(seat).map(|a| wire_action(&a))
    }

    fn is_over(&self) -> bool {
        self.engine.is_over()
    }

    fn outcome(&self) -> Option<pb::Outcome> {
        let ranking = self.engine.ranking()?;
        let winner = ranking.first()?;
        Some(pb::Outcome {
            seats: ranking
                .iter()
                .map(|r| pb::SeatOutcome {
                    seat: r.seat as u32,
                    rank: r.rank as u32,
                    score: r.total as i64,
                    won: r.rank == 1,
                })
                .collect(),
            summary: format!("seat {} wins with {} points", winner.seat, winner.total),
        })
    }
}

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
    for (key, value) in pairs {
        let spec = option_spec(crate::GANG_OF_FOUR, engine::contract::OPTIONS, key)?;
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
    Ok(wire_options(&filled))
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
                cards::word(id as u8)
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
