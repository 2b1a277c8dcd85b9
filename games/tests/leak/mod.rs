//! The leak check shared by the in-process conformance suite (`games/tests/conformance.rs`)
//! and the end-to-end test over gRPC (`tests/e2e_visibility.rs`, which includes this file):
//! every card-bearing field of a message is found by reflection over the compiled descriptors
//! (`prost-reflect`), not from a list of known events, and checked against the rules of "may
//! see" written in the visibility modules and against what the engine's state hides from the
//! receiver. A card field that no rule covers fails the check: a new one needs a decision.

#![allow(dead_code)]

use gangs_games::bridge::{Bridge, Visibility};
use gangs_games::gang_of_four::GangOfFourWire;
use gangs_games::the_gang::TheGangWire;
use gangs_proto::v1 as pb;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage, Value};
use std::collections::HashSet;
use std::sync::OnceLock;

// ---- the rules of "may see", per card-bearing field ----------------------------------------

/// Who may see the cards of one field (see the visibility modules' docs).
#[derive(Clone, Copy, Debug)]
pub enum Rule {
    /// Everyone: played, exchanged, revealed cards.
    Public,
    /// Only the seat named by this field of the same message (and never a dead hand).
    Owner(&'static str),
    /// Only the two seats named by these fields.
    Pair(&'static str, &'static str),
    /// Only the seat the update is for (its view, its legal actions).
    Viewer,
    /// Nobody while the game runs (presets).
    Never,
}

/// Every card-bearing field of `gangs.v1`, with its rule. The walk finds the fields; this
/// table only says who may see each.
pub fn rule(message: &str, field: &str) -> Option<Rule> {
    use Rule::*;
    Some(match (message, field) {
        // Gang of Four.
        ("gangs.v1.GangOfFourEvent.Hand", "cards") => Owner("seat"),
        ("gangs.v1.GangOfFourEvent.Exchanged", "card") => Public,
        ("gangs.v1.GangOfFourEvent.Played", "cards") => Public,
        ("gangs.v1.GangOfFourView", "hand") => Viewer,
        ("gangs.v1.GangOfFourView.Play", "cards") => Public,
        ("gangs.v1.GangOfFourAction.Play", "card_ids" | "card_words") => Viewer,
        ("gangs.v1.GangOfFourAction.GiveBack", "card_id" | "card_word") => Viewer,
        ("gangs.v1.GangOfFourPreset.Hand", "card_ids") => Never,
        // The Gang.
        ("gangs.v1.TheGangEvent.Dealt", "cards") => Owner("seat"),
        ("gangs.v1.TheGangEvent.Swindled", "old_cards" | "new_cards") => Owner("seat"),
        ("gangs.v1.TheGangEvent.CardPassed", "card") => Pair("from_seat", "to_seat"),
        ("gangs.v1.TheGangEvent.HandReplaced", "discarded" | "drawn") => Owner("seat"),
        ("gangs.v1.TheGangEvent.CommunityRevealed", "cards") => Public,
        ("gangs.v1.TheGangEvent.CardShown", "card") => Pair("from_seat", "to_seat"),
        ("gangs.v1.TheGangEvent.CardDrawn", "card") => Owner("seat"),
        ("gangs.v1.TheGangEvent.CardDiscarded", "card") => Owner("seat"),
        ("gangs.v1.TheGangReveal", "cards") => Public,
        ("gangs.v1.TheGangView", "private_cards" | "remembered") => Viewer,
        ("gangs.v1.TheGangView", "community") => Public,
        ("gangs.v1.TheGangView.ShownCard", "card") => Viewer,
        ("gangs.v1.TheGangAction.ChooseCard", "card") => Viewer,
        ("gangs.v1.TheGangPreset.Hand", "cards") => Never,
        ("gangs.v1.TheGangPreset.Heist", "community" | "deck") => Never,
        _ => return None,
    })
}

const CARD_MESSAGES: [&str; 2] = ["gangs.v1.GangOfFourCard", "gangs.v1.TheGangCard"];

/// Scalar fields that name cards (Gang of Four actions and presets carry ids and words).
fn is_scalar_card_field(message: &str, field: &str) -> bool {
    matches!(
        (message, field),
        ("gangs.v1.GangOfFourAction.Play", "card_ids" | "card_words")
            | (
                "gangs.v1.GangOfFourAction.GiveBack",
                "card_id" | "card_word"
            )
            | ("gangs.v1.GangOfFourPreset.Hand", "card_ids")
    )
}

/// One card found by the walk.
#[derive(Debug)]
pub struct Found {
    pub path: String,
    pub rule: Rule,
    /// The message holding the field (to read `Owner`/`Pair` seats).
    pub holder: DynamicMessage,
    /// The card id (Gang of Four 0..63, The Gang's ids), when the field is a card message or
    /// an id.
    pub id: Option<u32>,
}

fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(gangs_proto::FILE_DESCRIPTOR_SET).expect("compiled descriptors")
    })
}

fn descriptor(name: &str) -> MessageDescriptor {
    pool().get_message_by_name(name).expect(name)
}

pub fn dynamic(name: &str, message: &impl Message) -> DynamicMessage {
    DynamicMessage::decode(descriptor(name), message.encode_to_vec().as_slice()).unwrap()
}

/// Every card-bearing field set in `message`, at any depth.
pub fn walk(message: &DynamicMessage, path: &str, out: &mut Vec<Found>) {
    let holder_name = message.descriptor().full_name().to_string();
    for (field, value) in message.fields() {
        let here = format!("{path}.{}", field.name());
        let values: Vec<&Value> = match value {
            Value::List(items) => items.iter().collect(),
            other => vec![other],
        };
        for value in values {
            match value {
                Value::Message(child) => {
                    let child_name = child.descriptor().full_name().to_string();
                    if CARD_MESSAGES.contains(&child_name.as_str()) {
                        let rule = rule(&holder_name, field.name()).unwrap_or_else(|| {
                            panic!(
                                "{here}: card field {holder_name}.{} has no visibility rule",
                                field.name()
                            )
                        });
                        let id = child.get_field_by_name("id").and_then(|v| v.as_u32());
                        out.push(Found {
                            path: here.clone(),
                            rule,
                            holder: message.clone(),
                            id,
                        });
                    } else {
                        walk(child, &here, out);
                    }
                }
                other if is_scalar_card_field(&holder_name, field.name()) => {
                    let rule = rule(&holder_name, field.name()).expect("scalar card rule");
                    out.push(Found {
                        path: here.clone(),
                        rule,
                        holder: message.clone(),
                        id: other.as_u32(),
                    });
                }
                _ => {}
            }
        }
    }
}

fn seat_field(holder: &DynamicMessage, name: &str) -> usize {
    holder
        .get_field_by_name(name)
        .and_then(|v| v.as_u32())
        .unwrap_or_else(|| panic!("{} has a seat field {name}", holder.descriptor().name()))
        as usize
}

/// Checks every card of `found` against its rule for `viewer` (`None`: a spectator, or the
/// public log of a running game).
pub fn check_rules(found: &[Found], viewer: Option<usize>, what: &str) {
    for f in found {
        let allowed = match f.rule {
            Rule::Public => true,
            Rule::Never => false,
            Rule::Viewer => viewer.is_some(),
            Rule::Owner(field) => {
                let dead = f
                    .holder
                    .get_field_by_name("dead")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false);
                !dead && viewer == Some(seat_field(&f.holder, field))
            }
            Rule::Pair(a, b) => {
                viewer == Some(seat_field(&f.holder, a)) || viewer == Some(seat_field(&f.holder, b))
            }
        };
        assert!(
            allowed,
            "{what}: {:?} sees card {:?} at {} ({:?})",
            viewer, f.id, f.path, f.rule
        );
    }
}

// ---- what each seat may hold or know, from the engine state ---------------------------------

/// Per game: the card ids hidden from `viewer` now (other hands, the deck, faces to come),
/// minus what the rules showed it; and whether a view path is checked against that state
/// (paths about earlier heists are not: the cards were reshuffled since).
pub trait Hidden: Visibility + Sized {
    fn hidden_from(engine: &Self::Engine, viewer: Option<usize>) -> HashSet<u32>;
    fn own_cards(engine: &Self::Engine, seat: usize) -> HashSet<u32>;
    fn state_checked(path: &str) -> bool;
    /// The game a `created` record describes (options, seed, preset), not started.
    fn from_created(created: &pb::Created) -> Bridge<Self>;
}

impl Hidden for GangOfFourWire {
    fn hidden_from(engine: &Self::Engine, viewer: Option<usize>) -> HashSet<u32> {
        let exchanged: HashSet<u32> = engine.exchange().iter().map(|x| x.card as u32).collect();
        let hands = engine.deal().hands;
        (0..4)
            .filter(|&s| Some(s) != viewer || s >= engine.options().players as usize)
            .flat_map(|s| gangs_rules::gang_of_four::cards::iter(hands[s]).map(u32::from))
            .filter(|c| !exchanged.contains(c))
            .collect()
    }
    fn own_cards(engine: &Self::Engine, seat: usize) -> HashSet<u32> {
        gangs_rules::gang_of_four::cards::iter(engine.deal().hands[seat])
            .map(u32::from)
            .collect()
    }
    fn state_checked(_path: &str) -> bool {
        true
    }
    fn from_created(created: &pb::Created) -> Bridge<Self> {
        let options = match created.options.as_ref().and_then(|o| o.game.as_ref()) {
            Some(pb::game_options::Game::GangOfFour(o)) => Some(o),
            None => None,
            Some(other) => panic!("the log's options are another game's: {other:?}"),
        };
        let preset = match created.preset.as_ref().and_then(|p| p.game.as_ref()) {
            Some(pb::preset_deals::Game::GangOfFour(p)) => Some(p),
            None => None,
            Some(other) => panic!("the log's preset is another game's: {other:?}"),
        };
        Bridge::<GangOfFourWire>::new(options, created.seed.expect("a complete log"), preset)
            .expect("the logged options make a game")
    }
}

impl Hidden for TheGangWire {
    fn hidden_from(engine: &Self::Engine, viewer: Option<usize>) -> HashSet<u32> {
        let h = engine.heist();
        let mut hidden: HashSet<u32> = (0..h.private.len())
            .filter(|&s| Some(s) != viewer)
            .flat_map(|s| h.private[s].iter().map(|c| c.id()))
            .collect();
        hidden.extend(h.board_to_come.iter().map(|c| c.id()));
        hidden.extend(h.draw_pile.iter().map(|c| c.id()));
        hidden.extend(h.discards.iter().map(|c| c.id()));
        // The suitless Jack is one known card (public who holds it).
        hidden.remove(&gangs_rules::the_gang::Card::SUITLESS_JACK.id());
        if let Some(s) = viewer {
            for c in &h.remembered[s] {
                hidden.remove(&c.id());
            }
            for (_, c) in &h.shown_to[s] {
                hidden.remove(&c.id());
            }
            if let Some((_, c)) = h.received[s] {
                hidden.remove(&c.id());
            }
        }
        hidden
    }
    fn own_cards(engine: &Self::Engine, seat: usize) -> HashSet<u32> {
        engine.heist().private[seat]
            .iter()
            .map(|c| c.id())
            .collect()
    }
    fn state_checked(path: &str) -> bool {
        !path.contains("last_showdown")
    }
    fn from_created(created: &pb::Created) -> Bridge<Self> {
        let options = match created.options.as_ref().and_then(|o| o.game.as_ref()) {
            Some(pb::game_options::Game::TheGang(o)) => Some(o),
            None => None,
            Some(other) => panic!("the log's options are another game's: {other:?}"),
        };
        let preset = match created.preset.as_ref().and_then(|p| p.game.as_ref()) {
            Some(pb::preset_deals::Game::TheGang(p)) => Some(p),
            None => None,
            Some(other) => panic!("the log's preset is another game's: {other:?}"),
        };
        Bridge::<TheGangWire>::new(options, created.seed.expect("a complete log"), preset)
            .expect("the logged options make a game")
    }
}

/// Checks one update sent to `viewer` (`None`: a spectator) when the game was in the state of
/// `engine`: every card field against its rule, every card of the view against what the state
/// hides from the viewer, and that a seat's view does show its own cards (redacting everything
/// would not pass). Returns the number of cards checked.
pub fn check_update<W: Hidden>(
    engine: &W::Engine,
    update: &pb::Update,
    viewer: Option<usize>,
) -> usize {
    let mut found = Vec::new();
    walk(&dynamic("gangs.v1.Update", update), "update", &mut found);
    check_rules(&found, viewer, &format!("update {}", update.seq));
    let hidden = W::hidden_from(engine, viewer);
    for f in &found {
        if f.path.starts_with("update.view") && W::state_checked(&f.path) {
            if let Some(id) = f.id {
                assert!(
                    !hidden.contains(&id),
                    "update {}: {viewer:?} sees hidden card {id} at {}",
                    update.seq,
                    f.path
                );
            }
        }
    }
    if let Some(s) = viewer {
        let own = W::own_cards(engine, s);
        let in_view: HashSet<u32> = found
            .iter()
            .filter(|f| matches!(f.rule, Rule::Viewer) && f.path.starts_with("update.view"))
            .filter_map(|f| f.id)
            .collect();
        assert!(
            own.is_subset(&in_view),
            "update {}: seat {s} sees its own cards",
            update.seq
        );
    }
    found.len()
}

/// Every state of a game from its complete log (a finished game's `GetLog`): the engine after
/// each record, by seq (index `seq - 1`), built in process from the `created` record's kind,
/// options and seed and the logged actions.
pub fn states_from_log<W: Hidden>(log: &[pb::LogRecord]) -> Vec<W::Engine>
where
    Bridge<W>: gangs_games::Game,
{
    use gangs_games::Game;
    use pb::log_record::Record;
    let Some(Record::Created(created)) = log.first().and_then(|r| r.record.as_ref()) else {
        panic!("a log opens with its created record")
    };
    let mut game = W::from_created(created);
    let mut states = Vec::with_capacity(log.len());
    for record in log {
        match &record.record {
            Some(Record::Started(_)) => {
                game.start();
            }
            Some(Record::Acted(a)) => {
                let action = a.action.as_ref().expect("a complete log has its actions");
                game.act(a.seat as usize, action).unwrap_or_else(|e| {
                    panic!("seq {}: the logged action replays: {e}", record.seq)
                });
            }
            Some(Record::TimedOut(t)) => {
                // The seat's default action, played for it by its clock.
                let action = t.action.as_ref().expect("a complete log has its actions");
                game.act(t.seat as usize, action).unwrap_or_else(|e| {
                    panic!("seq {}: the logged default action replays: {e}", record.seq)
                });
            }
            Some(Record::Expired(_)) => {
                game.expire().unwrap_or_else(|e| {
                    panic!("seq {}: the logged expiry replays: {e}", record.seq)
                });
            }
            Some(Record::Created(_))
            | Some(Record::Joined(_))
            | Some(Record::Ended(_))
            | Some(Record::Ladder(_))
            | None => {}
        }
        states.push(game.engine().clone());
    }
    states
}
