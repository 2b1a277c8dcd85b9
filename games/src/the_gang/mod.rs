//! The Gang in the bridge: [`wire`] (options, presets, actions, events of `gangs.v1`),
//! [`visibility`] (the one place that decides what a seat may see) and [`words`] (the CLI's
//! words, descriptions and terminal picture).

pub mod summary;
#[cfg(feature = "terminal")]
pub mod terminal;
pub mod visibility;
pub mod wire;
pub mod words;

pub use wire::{
    action_from_pb, action_to_pb, card_from_pb, card_to_pb, config_from_pb, event_to_pb,
    new_engine, preset_from_pb, TheGangWire,
};
pub use words::{
    describe_action, describe_event, parse_action, parse_options, render_view, ACTION_HELP,
};

use crate::bridge::Bridge;
use crate::kinds::KindInfo;
use crate::Refusal;
use gangs_proto::v1 as pb;

/// A live game of The Gang behind the host's `Game` trait.
pub type TheGangGame = Bridge<TheGangWire>;

impl Bridge<TheGangWire> {
    /// A game from wire options (defaults when omitted), a seed and preset heists.
    pub fn new(
        options: Option<&pb::TheGangOptions>,
        seed: u64,
        preset: Option<&pb::TheGangPreset>,
    ) -> Result<Self, Refusal> {
        let wrapped = pb::GameOptions {
            game: options.cloned().map(pb::game_options::Game::TheGang),
        };
        Bridge::from_engine(new_engine(options, seed, preset)?).with_clock_of(wrapped)
    }
}

/// The Gang in the kind registry ([`crate::kinds`]).
pub const KIND: KindInfo = KindInfo {
    title: "The Gang",
    name: "the-gang",
    engine_options: gangs_rules::the_gang::contract::OPTIONS,
    action_help: ACTION_HELP,
    team_game: true,
    round: "heist",
    score_words: "vaults opened, higher is better",
    json_key: "the_gang",
    private_view_fields: &["private_cards", "shown_to_me", "received", "remembered"],
    web_renderer: include_str!("web.js"),
    web_style: include_str!("web.css"),
    short_games: &[
        &[("mode", "basic"), ("phase_deadline_ms", "1000")],
        &[("mode", "advanced"), ("phase_deadline_ms", "1000")],
        &[("mode", "pro"), ("phase_deadline_ms", "1000")],
        &[("mode", "gangster"), ("phase_deadline_ms", "1000")],
    ],
    new_game: |options, seed, preset| {
        use pb::{game_options::Game as O, preset_deals::Game as P};
        let options = match options.and_then(|o| o.game.as_ref()) {
            None => None,
            Some(O::TheGang(o)) => Some(o),
            Some(_) => return Err(Refusal::invalid("options are not the-gang options")),
        };
        let preset = match preset.and_then(|p| p.game.as_ref()) {
            None => None,
            Some(P::TheGang(p)) => Some(p),
            Some(_) => return Err(Refusal::invalid("preset deals are not the-gang deals")),
        };
        Ok(Box::new(TheGangGame::new(options, seed, preset)?))
    },
    parse_options: |players, pairs| {
        Ok(pb::GameOptions {
            game: Some(pb::game_options::Game::TheGang(parse_options(
                players, pairs,
            )?)),
        })
    },
    parse_action,
    describe_action: |action| match &action.game {
        Some(pb::game_action::Game::TheGang(a)) => Some(describe_action(a)),
        _ => None,
    },
    describe_event: |event| match &event.game {
        Some(pb::game_event::Game::TheGang(e)) => Some(describe_event(e)),
        _ => None,
    },
    render_view: |view| match &view.game {
        Some(pb::game_view::Game::TheGang(v)) => Some(render_view(v)),
        _ => None,
    },
    decision_key: |view| match &view.game {
        Some(pb::game_view::Game::TheGang(v)) => Some(format!(
            "heist {} stage {} street {} proposal {:?} choice {:?} guess {}",
            v.heist,
            v.stage,
            v.street,
            v.proposal.as_ref().map(|p| p.proposer),
            v.pending_choice.as_ref().map(|c| c.seat),
            v.guess.is_some()
        )),
        _ => None,
    },
    team_rounds: |view| match &view.game {
        Some(pb::game_view::Game::TheGang(v)) => Some(crate::kinds::TeamRounds {
            won_rounds: v.vaults,
            lost_rounds: v.alarms,
            won: v.won,
        }),
        _ => None,
    },
    #[cfg(feature = "terminal")]
    new_screen: terminal::new_screen,
    round_start: summary::round_start,
    summarize: summary::table,
};
