//! Gang of Four in the bridge: [`wire`] (options, presets, actions, events of `gangs.v1`),
//! [`visibility`] (the one place that decides what a seat may see) and [`words`] (the CLI's
//! words, descriptions and terminal picture).

pub mod summary;
#[cfg(feature = "terminal")]
pub mod terminal;
pub mod visibility;
pub mod wire;
pub mod words;

pub use wire::{card, engine_options, new_engine, GangOfFourWire};
pub use words::{
    describe_action, describe_event, parse_action, parse_options, render_view, ACTION_HELP,
};

use crate::bridge::Bridge;
use crate::kinds::KindInfo;
use crate::Refusal;
use gangs_proto::v1 as pb;

/// A live game of Gang of Four behind the host's `Game` trait.
pub type GangOfFourGame = Bridge<GangOfFourWire>;

impl Bridge<GangOfFourWire> {
    /// A game from wire options (defaults when omitted), a seed and preset deals.
    pub fn new(
        options: Option<&pb::GangOfFourOptions>,
        seed: u64,
        preset: Option<&pb::GangOfFourPreset>,
    ) -> Result<Self, Refusal> {
        let wrapped = pb::GameOptions {
            game: options.cloned().map(pb::game_options::Game::GangOfFour),
        };
        Bridge::from_engine(new_engine(options, seed, preset)?).with_clock_of(wrapped)
    }
}

/// Gang of Four in the kind registry ([`crate::kinds`]).
pub const KIND: KindInfo = KindInfo {
    title: "Gang of Four",
    name: "gang-of-four",
    engine_options: gangs_rules::gang_of_four::contract::OPTIONS,
    action_help: ACTION_HELP,
    team_game: false,
    round: "deal",
    score_words: "penalty points, lower is better",
    json_key: "gang_of_four",
    private_view_fields: &["hand"],
    web_renderer: include_str!("web.js"),
    web_style: include_str!("web.css"),
    short_games: &[
        &[("target_score", "12"), ("manual_last_card", "true")],
        &[("target_score", "12"), ("manual_last_card", "false")],
        &[("target_score", "12"), ("manual_last_card", "false")],
    ],
    new_game: |options, seed, preset| {
        use pb::{game_options::Game as O, preset_deals::Game as P};
        let options = match options.and_then(|o| o.game.as_ref()) {
            None => None,
            Some(O::GangOfFour(o)) => Some(o),
            Some(_) => return Err(Refusal::invalid("options are not gang-of-four options")),
        };
        let preset = match preset.and_then(|p| p.game.as_ref()) {
            None => None,
            Some(P::GangOfFour(p)) => Some(p),
            Some(_) => return Err(Refusal::invalid("preset deals are not gang-of-four deals")),
        };
        Ok(Box::new(GangOfFourGame::new(options, seed, preset)?))
    },
    parse_options: |players, pairs| {
        Ok(pb::GameOptions {
            game: Some(pb::game_options::Game::GangOfFour(parse_options(
                players, pairs,
            )?)),
        })
    },
    parse_action,
    describe_action: |action| match &action.game {
        Some(pb::game_action::Game::GangOfFour(a)) => Some(describe_action(a)),
        _ => None,
    },
    describe_event: |event| match &event.game {
        Some(pb::game_event::Game::GangOfFour(e)) => Some(describe_event(e)),
        _ => None,
    },
    render_view: |view| match &view.game {
        Some(pb::game_view::Game::GangOfFour(v)) => Some(render_view(v)),
        _ => None,
    },
    decision_key: |_| None,
    team_rounds: |_| None,
    #[cfg(feature = "terminal")]
    new_screen: terminal::new_screen,
    round_start: summary::round_start,
    summarize: summary::table,
};
