//! In-process The Gang games for evaluating policies without a server: the engine behind the
//! `Game` trait, and every seat's policy fed the same `pb::Update` shape the server sends (the
//! seat's view and its legal actions). Seats are asked in turn, round and round, so that the
//! simultaneous chip phases interleave as they would over the network; a policy that returns
//! `None` waits. An action outside `legal_actions` is an error.

use crate::Policy;
use gangs_games::{new_game, Game};
use gangs_proto::v1 as pb;

/// One game's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameReport {
    pub heists: u32,
    pub successes: u32,
    pub won: bool,
    /// Times no seat wanted to act and the open phase had to be expired to go on.
    pub stalls: u32,
    pub actions: u64,
}

/// Options for a game of `players` seats in `mode` ("basic", "advanced", "pro", "gangster").
pub fn options(players: u32, mode: &str) -> pb::GameOptions {
    let mode = match mode {
        "advanced" => pb::TheGangMode::Advanced,
        "pro" => pb::TheGangMode::Pro,
        "gangster" => pb::TheGangMode::Gangster,
        _ => pb::TheGangMode::Basic,
    };
    pb::GameOptions {
        game: Some(pb::game_options::Game::TheGang(pb::TheGangOptions {
            players: Some(players),
            mode: mode as i32,
            ..Default::default()
        })),
    }
}

fn count_heists(events: &[pb::GameEvent], report: &mut GameReport) {
    for e in events {
        if let Some(pb::game_event::Game::TheGang(pb::TheGangEvent {
            kind: Some(pb::the_gang_event::Kind::HeistEnded(h)),
        })) = &e.game
        {
            report.heists += 1;
            report.successes += h.success as u32;
        }
    }
}

/// Plays one game to the end, `policies[seat]` in each seat. `max_actions` bounds a runaway.
pub fn play_game(
    options: &pb::GameOptions,
    seed: u64,
    policies: &mut [Box<dyn Policy>],
    max_actions: u64,
) -> Result<GameReport, String> {
    let mut game: Box<dyn Game> =
        new_game(gangs_games::the_gang::KIND.name, Some(options), seed, None)
            .map_err(|e| e.to_string())?;
    let players = game.players();
    if policies.len() != players {
        return Err(format!("{} policies for {players} seats", policies.len()));
    }
    let mut report = GameReport::default();
    let events = game.start();
    count_heists(&events, &mut report);
    let mut seq = 1u64;
    let mut seat = 0usize;
    let mut idle = 0usize;
    while !game.is_over() {
        if report.actions >= max_actions {
            return Err(format!("no end after {max_actions} actions"));
        }
        let legal = game.legal_actions(seat);
        let mut acted = false;
        if !legal.is_empty() {
            let update = gangs_games::update::in_process_update(&*game, seat, seq, &[]);
            if let Some(action) = policies[seat].choose(&update) {
                if !update.legal_actions.contains(&action) {
                    return Err(format!("seat {seat} chose an illegal action {action:?}"));
                }
                let events = game
                    .act(seat, &action)
                    .map_err(|e| format!("seat {seat}: {e}"))?;
                count_heists(&events, &mut report);
                seq += 1;
                report.actions += 1;
                acted = true;
            }
        }
        if acted {
            idle = 0;
        } else {
            idle += 1;
            if idle >= players {
                // Nobody wants to act: what a deadline would do on the server.
                let events = game.expire().map_err(|e| format!("stalled: {e}"))?;
                count_heists(&events, &mut report);
                report.stalls += 1;
                idle = 0;
            }
        }
        seat = (seat + 1) % players;
    }
    report.won = game
        .outcome()
        .is_some_and(|o| o.seats.first().is_some_and(|s| s.won));
    Ok(report)
}
