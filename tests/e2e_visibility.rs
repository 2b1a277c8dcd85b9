//! End to end: over many random games played through the real server, no update sent to a
//! seat or a spectator ever holds a card that the receiver may not know. The truth comes from
//! the finished game's full log: every hand as dealt, and the engine's state after every
//! record, rebuilt in process. Every update of both games also goes through the leak walk of
//! the conformance suite (`games/tests/leak/`): every card-bearing field, found by
//! reflection, against the rules of "may see" and against that state.

use crate::common;
#[path = "../games/tests/leak/mod.rs"]
mod leak;

use common::*;
use gangs_games::gang_of_four::GangOfFourWire;
use gangs_games::the_gang::TheGangWire;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::HashSet;
use std::future::Future;
use tonic::transport::Channel;

async fn collect(
    mut client: GamesClient<Channel>,
    game_id: String,
    token: String,
) -> Vec<pb::Update> {
    let mut stream = client
        .watch(pb::WatchRequest {
            game_id,
            token,
            from_seq: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut updates = Vec::new();
    while let Some(update) = stream.message().await.unwrap() {
        updates.push(update);
    }
    updates
}

/// Plays a game with random legal actions, driven from the seats' own updates: each step, the
/// first seat in a shuffled order that may act plays one of its legal actions.
async fn play_randomly(
    client: &mut GamesClient<Channel>,
    game_id: &str,
    tokens: &[String],
    seed: u64,
) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    loop {
        let summary = status(client, game_id).await;
        if summary.status == pb::GameStatus::Finished as i32 {
            return;
        }
        let mut acted = false;
        let mut order: Vec<&String> = tokens.iter().collect();
        order.shuffle(&mut rng);
        for token in order {
            let mut stream = client
                .watch(pb::WatchRequest {
                    game_id: game_id.into(),
                    token: token.clone(),
                    from_seq: summary.last_seq - 1,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            let update = stream.message().await.unwrap().unwrap();
            if act_at_random(client, game_id, token, &update, &mut rng).await {
                acted = true;
                break;
            }
        }
        assert!(acted, "nobody could act in a running game");
    }
}

fn card_ids(cards: &[pb::GangOfFourCard]) -> impl Iterator<Item = u32> + '_ {
    cards.iter().map(|c| c.id)
}

/// Every card id an update shows, with where it was seen.
fn gang_of_four_cards(update: &pb::Update) -> (Vec<u32>, Vec<u32>) {
    // (cards in the receiver's own hand / dealt-to-someone lists, cards shown publicly)
    let mut private = Vec::new();
    let mut public = Vec::new();
    for event in &update.events {
        let Some(pb::game_event::Game::GangOfFour(e)) = &event.game else {
            panic!("not a gang-of-four event")
        };
        use pb::gang_of_four_event::Kind;
        match &e.kind {
            Some(Kind::Dealt(d)) => {
                for hand in &d.hands {
                    private.extend(card_ids(&hand.cards));
                }
            }
            Some(Kind::Exchanged(x)) => public.extend(x.card.iter().map(|c| c.id)),
            Some(Kind::Played(p)) => public.extend(card_ids(&p.cards)),
            _ => {}
        }
    }
    if let Some(pb::GameView {
        game: Some(pb::game_view::Game::GangOfFour(v)),
    }) = &update.view
    {
        private.extend(card_ids(&v.hand));
        for play in v.table.iter().chain(&v.trick) {
            public.extend(card_ids(&play.cards));
        }
        for x in &v.exchange {
            public.extend(x.card.iter().map(|c| c.id));
        }
    }
    (private, public)
}

/// Hands as dealt in each deal, from the full log of a finished game.
fn dealt_hands(records: &[pb::LogRecord]) -> Vec<Vec<HashSet<u32>>> {
    let mut deals = Vec::new();
    for record in records {
        let events = match &record.record {
            Some(pb::log_record::Record::Started(s)) => &s.events,
            Some(pb::log_record::Record::Acted(a)) => &a.events,
            _ => continue,
        };
        for event in events {
            if let Some(pb::game_event::Game::GangOfFour(pb::GangOfFourEvent {
                kind: Some(pb::gang_of_four_event::Kind::Dealt(d)),
            })) = &event.game
            {
                let mut hands = vec![HashSet::new(); 4];
                for hand in &d.hands {
                    hands[hand.seat as usize] = card_ids(&hand.cards).collect();
                }
                deals.push(hands);
            }
        }
    }
    deals
}

/// One random game, watched by every seat and a spectator; checks every update they received.
/// Takes every seat of `game_id` and starts a watcher for each seat and one for a spectator
/// (last); returns the seats' tokens and the watchers.
async fn seat_and_watch(
    client: &mut GamesClient<Channel>,
    game_id: &str,
    players: u32,
) -> (Vec<String>, Vec<tokio::task::JoinHandle<Vec<pb::Update>>>) {
    let mut tokens = Vec::new();
    for seat in 0..players {
        let join = pb::JoinGameRequest {
            game_id: game_id.to_string(),
            seat: Some(seat),
            name: String::new(),
            join_id: String::new(),
            ..Default::default()
        };
        tokens.push(client.join_game(join).await.unwrap().into_inner().token);
    }
    let watchers = tokens
        .iter()
        .cloned()
        .chain([String::new()])
        .map(|token| tokio::spawn(collect(client.clone(), game_id.to_string(), token)))
        .collect();
    (tokens, watchers)
}

/// Runs every update a watcher received through the leak walk, against the engine's state at
/// the update's seq. Returns the number of cards checked.
fn walk_updates<W: leak::Hidden>(
    states: &[W::Engine],
    updates: &[pb::Update],
    seat: Option<usize>,
) -> usize {
    updates
        .iter()
        .map(|update| {
            let state = &states[update.seq as usize - 1];
            leak::check_update::<W>(state, update, seat)
        })
        .sum()
}

async fn check_one_game(mut client: GamesClient<Channel>, seed: u64, players: u32, manual: &str) {
    let pairs = vec![
        ("target_score".to_string(), "10".to_string()),
        ("manual_last_card".to_string(), manual.to_string()),
    ];
    let options = gangs_games::parse_options("gang-of-four", Some(players), &pairs).unwrap();
    let game_id = create(&mut client, "gang-of-four", Some(options), seed).await;
    let (tokens, watchers) = seat_and_watch(&mut client, &game_id, players).await;
    play_randomly(&mut client, &game_id, &tokens, seed).await;
    let records = log(&mut client, &game_id).await;
    let deals = dealt_hands(&records);
    assert!(!deals.is_empty());
    let states = leak::states_from_log::<GangOfFourWire>(&records);
    for (who, watcher) in watchers.into_iter().enumerate() {
        let seat = (who < players as usize).then_some(who);
        let updates = watcher.await.unwrap();
        assert_eq!(
            updates.last().unwrap().status,
            pb::GameStatus::Finished as i32
        );
        assert!(walk_updates::<GangOfFourWire>(&states, &updates, seat) > 0);
        let mut deal = 0usize;
        let mut received: HashSet<u32> = HashSet::new();
        for update in &updates {
            if let Some(pb::GameView {
                game: Some(pb::game_view::Game::GangOfFour(v)),
            }) = &update.view
            {
                if v.deal_number as usize != deal {
                    deal = v.deal_number as usize;
                    received.clear();
                }
            }
            let (private, public) = gang_of_four_cards(update);
            received.extend(public);
            for id in private {
                let mine = seat.is_some_and(|s| deals[deal.max(1) - 1][s].contains(&id));
                assert!(
                    mine || received.contains(&id),
                    "seat {seat:?} was shown card {id} at seq {} (deal {deal}) that it may not know",
                    update.seq
                );
            }
        }
    }
}

/// Starts a server and runs one check per game on it, side by side (each waits for its own
/// flushes, group commit serves them all); returns their results.
async fn side_by_side<G, F: Future + Send + 'static>(
    games: Vec<G>,
    check: impl Fn(GamesClient<Channel>, G) -> F,
) -> Vec<F::Output>
where
    F::Output: Send,
{
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let client = server.client().await;
    let running: Vec<_> = games
        .into_iter()
        .map(|game| tokio::spawn(check(client.clone(), game)))
        .collect();
    let mut results = Vec::new();
    for game in running {
        results.push(game.await.expect("a game's check failed"));
    }
    drop(server);
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gang_of_four_updates_never_show_hidden_cards() {
    let games = vec![
        (1u64, 4u32, "false"),
        (2, 3, "true"),
        (3, 4, "true"),
        (4, 3, "false"),
    ];
    side_by_side(games, |client, (seed, players, manual)| {
        check_one_game(client, seed, players, manual)
    })
    .await;
}

/// One random game of The Gang, watched by every seat and a spectator: every update they
/// received passes the leak walk. Returns the number of cards checked.
async fn check_the_gang_game(
    mut client: GamesClient<Channel>,
    seed: u64,
    players: u32,
    mode: &str,
) -> usize {
    // A low move cap keeps the random game short; the modes bring challenges and specialists.
    let pairs = vec![
        ("mode".to_string(), mode.to_string()),
        ("max_moves_per_phase".to_string(), "2".to_string()),
    ];
    let options = gangs_games::parse_options("the-gang", Some(players), &pairs).unwrap();
    let game_id = create(&mut client, "the-gang", Some(options), seed).await;
    let (tokens, watchers) = seat_and_watch(&mut client, &game_id, players).await;
    play_randomly(&mut client, &game_id, &tokens, seed).await;
    let states = leak::states_from_log::<TheGangWire>(&log(&mut client, &game_id).await);
    let mut cards = 0;
    for (who, watcher) in watchers.into_iter().enumerate() {
        let seat = (who < players as usize).then_some(who);
        let updates = watcher.await.unwrap();
        assert_eq!(
            updates.last().unwrap().status,
            pb::GameStatus::Finished as i32
        );
        // Every record reached every watcher, in order.
        let seqs: Vec<u64> = updates.iter().map(|u| u.seq).collect();
        assert_eq!(seqs, (1..=states.len() as u64).collect::<Vec<_>>());
        cards += walk_updates::<TheGangWire>(&states, &updates, seat);
    }
    cards
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gang_updates_never_show_hidden_cards() {
    let games = vec![
        (11u64, 3u32, "advanced"),
        (12, 4, "pro"),
        (13, 5, "gangster"),
        (14, 6, "advanced"),
    ];
    let cards: usize = side_by_side(games, |client, (seed, players, mode)| {
        check_the_gang_game(client, seed, players, mode)
    })
    .await
    .into_iter()
    .sum();
    assert!(cards > 1_000, "only {cards} cards checked");
}
