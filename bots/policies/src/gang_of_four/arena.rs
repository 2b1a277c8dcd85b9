//! An in-process table for evaluating policies without a server: a game from
//! `gangs_games::new_game`, driven through the `Game` trait, each seat's policy fed the same
//! `pb::Update` shape the server sends (its view, its legal actions, the latest events as
//! that seat may see them). Used by the tests and the `gang_of_four_arena` example.

use gangs_games::new_game;
use gangs_proto::v1 as pb;

use crate::Policy;

/// Actions after which a game is declared stuck (a real game needs a few thousand at most).
const MAX_ACTIONS: u64 = 200_000;

/// Wire options for a Gang of Four game.
pub fn options(players: u32, target_score: u32) -> pb::GameOptions {
    pb::GameOptions {
        game: Some(pb::game_options::Game::GangOfFour(pb::GangOfFourOptions {
            players: Some(players),
            target_score: Some(target_score),
            ..Default::default()
        })),
    }
}

/// Plays one whole game, seat `i` played by `policies[i]`; returns the outcome. Fails if a
/// policy returns nothing or an action outside its legal actions, or the game does not end.
pub fn play_game(
    options: &pb::GameOptions,
    seed: u64,
    policies: &mut [Box<dyn Policy>],
) -> Result<pb::Outcome, String> {
    let mut game = new_game(
        gangs_games::gang_of_four::KIND.name,
        Some(options),
        seed,
        None,
    )
    .map_err(|e| e.to_string())?;
    if policies.len() != game.players() {
        return Err(format!(
            "{} policies for {} seats",
            policies.len(),
            game.players()
        ));
    }
    let mut events = game.start();
    let mut seq = 1u64;
    while !game.is_over() {
        let Some(seat) = (0..game.players()).find(|&s| !game.legal_actions(s).is_empty()) else {
            return Err("nobody may act in a running game".to_string());
        };
        let legal = game.legal_actions(seat);
        let update = gangs_games::update::in_process_update(&*game, seat, seq, &events);
        let action = policies[seat]
            .choose(&update)
            .ok_or_else(|| format!("seat {seat} chose nothing at seq {seq}"))?;
        if !legal.contains(&action) {
            return Err(format!(
                "seat {seat} chose an illegal action at seq {seq}: {action:?}"
            ));
        }
        events = game.act(seat, &action).map_err(|e| e.to_string())?;
        seq += 1;
        if seq > MAX_ACTIONS {
            return Err("the game does not end".to_string());
        }
    }
    game.outcome()
        .ok_or_else(|| "over without an outcome".to_string())
}

/// The rank (1 is best) of `seat` in `outcome`.
pub fn rank_of(outcome: &pb::Outcome, seat: usize) -> u32 {
    outcome
        .seats
        .iter()
        .find(|s| s.seat as usize == seat)
        .map(|s| s.rank)
        .unwrap_or(u32::MAX)
}
