//! End to end, property: while a game runs, nothing the web viewer serves carries a card the
//! spectator may not see. Over several seeded games of both kinds, played step by step with
//! random legal actions, at every step:
//! - each server-sent event of the live view is exactly the update `Watch` without a token
//!   sends for that seq (the same JSON), and so is the latest update of `GET /api/games/{id}`;
//! - neither holds a card that is in some seat's hand now (the truth comes from each seat's own
//!   view), apart from the cards the rules show to everyone (a Gang of Four exchange, a showdown);
//! - the replay (every hand) is refused, and the game file (checked every few steps) holds no
//!   card of a hand either.

use crate::common;
use crate::web;

use common::*;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::collections::HashSet;
use tonic::transport::Channel;
use web::*;

/// Card ids anywhere in `value`: objects with an `id` that are cards (a `word`: Gang of Four;
/// a `suit`: The Gang).
fn card_ids(value: &Value, out: &mut Vec<u64>) {
    match value {
        Value::Object(map) => {
            if let Some(id) = map.get("id").and_then(Value::as_u64) {
                if map.contains_key("word") || map.contains_key("suit") {
                    out.push(id);
                }
            }
            for v in map.values() {
                card_ids(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| card_ids(v, out)),
        _ => {}
    }
}

/// The event's kind within its game (`dealt`, `played`, `showdown`, ...).
fn event_kind(event: &Value) -> &str {
    event
        .as_object()
        .and_then(|e| e.values().find_map(|game| game.as_object()))
        .and_then(|game| {
            game.iter()
                .find(|(_, v)| !v.is_null())
                .map(|(k, _)| k.as_str())
        })
        .unwrap_or("")
}

/// The cards of these events that could still be in a hand: those after the last deal (or
/// heist) began, less the ones the rules show to everyone.
fn current_event_cards(events: &[Value], out: &mut Vec<u64>) {
    let start = events
        .iter()
        .rposition(|e| matches!(event_kind(e), "dealt" | "heist_started"))
        .unwrap_or(0);
    for event in &events[start..] {
        if !matches!(event_kind(event), "exchanged" | "showdown") {
            card_ids(event, out);
        }
    }
}

/// The cards an update (proto3 JSON) shows that could be in a hand now.
fn update_cards(update: &Value) -> Vec<u64> {
    let mut out = Vec::new();
    if let Some(view) = update["view"].as_object() {
        for (game, fields) in view {
            for (name, field) in fields.as_object().into_iter().flatten() {
                // Shown to everyone by the rules: this deal's exchange, the last showdown.
                let public = matches!(
                    (game.as_str(), name.as_str()),
                    ("gang_of_four", "exchange") | ("the_gang", "last_showdown")
                );
                if !public {
                    card_ids(field, &mut out);
                }
            }
        }
    }
    current_event_cards(update["events"].as_array().map_or(&[], |v| v), &mut out);
    out
}

/// What the seats hold now, by their own views, less what everyone was shown.
fn hidden_now(seat_updates: &[pb::Update]) -> HashSet<u64> {
    let mut hidden = HashSet::new();
    let mut public = HashSet::new();
    for update in seat_updates {
        match update.view.as_ref().and_then(|v| v.game.as_ref()) {
            Some(pb::game_view::Game::GangOfFour(v)) => {
                hidden.extend(v.hand.iter().map(|c| c.id as u64));
                public.extend(
                    v.exchange
                        .iter()
                        .filter_map(|x| x.card.as_ref())
                        .map(|c| c.id as u64),
                );
            }
            Some(pb::game_view::Game::TheGang(v)) => {
                hidden.extend(v.private_cards.iter().map(|c| c.id as u64));
            }
            None => {}
        }
    }
    &hidden - &public
}

fn assert_hides(what: &str, seq: u64, cards: &[u64], hidden: &HashSet<u64>) {
    let leaked: Vec<_> = cards.iter().filter(|id| hidden.contains(id)).collect();
    assert!(
        leaked.is_empty(),
        "{what} at seq {seq} carries cards held in a hand: {leaked:?}"
    );
}

async fn seat_now(
    client: &mut GamesClient<Channel>,
    game: &str,
    token: &str,
    last: u64,
) -> pb::Update {
    client
        .watch(pb::WatchRequest {
            game_id: game.into(),
            token: token.into(),
            from_seq: last - 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap()
        .unwrap()
}

async fn check_game(
    http: String,
    mut client: GamesClient<Channel>,
    kind: &'static str,
    players: u32,
    pairs: &[(&str, &str)],
    seed: u64,
    max_steps: usize,
) -> usize {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let options = gangs_games::parse_options(kind, Some(players), &pairs).unwrap();
    let game = create(&mut client, kind, Some(options), seed).await;
    let mut live = SseStream::open(&http, &format!("/api/games/{game}/live?from_seq=0"), &[]).await;
    let mut spectator = client
        .watch(pb::WatchRequest {
            game_id: game.clone(),
            token: String::new(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut tokens = Vec::new();
    for seat in 0..players {
        let join = pb::JoinGameRequest {
            game_id: game.clone(),
            seat: Some(seat),
            name: format!("seat{seat}"),
            join_id: String::new(),
            ..Default::default()
        };
        tokens.push(client.join_game(join).await.unwrap().into_inner().token);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut seen = 0;
    let mut steps = 0;
    loop {
        let summary = status(&mut client, &game).await;
        let last = summary.last_seq;
        let mut seat_updates = Vec::new();
        for token in &tokens {
            seat_updates.push(seat_now(&mut client, &game, token, last).await);
        }
        let hidden = hidden_now(&seat_updates);

        // Every update up to now, from both streams: the same JSON, seq by seq.
        while seen < last {
            let expected = spectator
                .message()
                .await
                .unwrap()
                .expect("a spectator update");
            let event = live.next().await.expect("a live event");
            assert_eq!(event.event, "update", "{}", event.data);
            assert_eq!(event.id, Some(expected.seq.to_string()));
            let sent: Value = serde_json::from_str(&event.data).unwrap();
            assert_eq!(
                sent["update"],
                gangs_proto::json::to_json(&expected, "gangs.v1.Update"),
                "the live view differs from Watch at seq {}",
                expected.seq
            );
            seen = expected.seq;
            if seen == last {
                assert_hides(
                    "the live view",
                    seen,
                    &update_cards(&sent["update"]),
                    &hidden,
                );
            }
        }
        let now = get_json(&http, &format!("/api/games/{game}")).await;
        assert_eq!(now["latest"]["update"]["seq"], last);
        assert_hides(
            "GET /api/games/{id}",
            last,
            &update_cards(&now["latest"]["update"]),
            &hidden,
        );

        if summary.status == pb::GameStatus::Finished as i32 {
            return steps;
        }
        // Hands are for the replay of a finished game only.
        for path in ["replay", "steps?from=1"] {
            let (code, body) = get(&http, &format!("/api/games/{game}/{path}")).await;
            assert_eq!(code, 409, "{path} of a running game: {body}");
        }
        if steps % 25 == 0 {
            let (code, file) = get(&http, &format!("/api/games/{game}/file")).await;
            assert_eq!(code, 200);
            let records: Vec<Value> = file
                .lines()
                .skip(1)
                .map(|line| serde_json::from_str(line).unwrap())
                .collect();
            let mut events = Vec::new();
            for record in &records {
                for kind in ["started", "acted", "expired", "timed_out"] {
                    if let Some(list) = record[kind]["events"].as_array() {
                        events.extend(list.iter().cloned());
                    }
                }
            }
            let mut cards = Vec::new();
            current_event_cards(&events, &mut cards);
            assert_hides("the game file", last, &cards, &hidden);
        }
        if steps == max_steps {
            return steps;
        }

        let movers: Vec<usize> = (0..tokens.len())
            .filter(|&s| !seat_updates[s].legal_actions.is_empty())
            .collect();
        assert!(!movers.is_empty(), "nobody may act at seq {last}");
        let seat = movers[rng.random_range(0..movers.len())];
        let actions = &seat_updates[seat].legal_actions;
        let action = actions[rng.random_range(0..actions.len())].clone();
        client
            .act(pb::ActRequest {
                game_id: game.clone(),
                token: tokens[seat].clone(),
                action: Some(action),
                expected_seq: Some(last),
                action_id: String::new(),
            })
            .await
            .expect("a listed legal action is accepted");
        steps += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewer_never_shows_a_running_games_hidden_cards() {
    let dir = tempfile::tempdir().unwrap();
    let (server, http) = start_viewer(dir.path());
    let client = server.client().await;
    let games = [
        ("gang-of-four", 4, &[("target_score", "40")][..], 41u64),
        ("gang-of-four", 4, &[("target_score", "40")][..], 42),
        ("the-gang", 3, &[("mode", "basic")][..], 43),
        ("the-gang", 4, &[("mode", "pro")][..], 44),
    ];
    let checks: Vec<_> = games
        .into_iter()
        .map(|(kind, players, pairs, seed)| {
            tokio::spawn(check_game(
                http.clone(),
                client.clone(),
                kind,
                players,
                pairs,
                seed,
                700,
            ))
        })
        .collect();
    for check in checks {
        let steps = check.await.expect("a game's check failed");
        assert!(steps > 20, "a game ended after {steps} steps");
    }
}
