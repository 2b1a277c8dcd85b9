//! End to end, in a real browser: `gangs-server --http` serves the viewer; bots play a game of
//! Gang of Four and one of The Gang; headless Chromium (over chromedriver) opens the list, each
//! replay, steps through it with the arrow keys and checks the drawn state against the engine
//! (mid-game hands) and the server's outcome (final scores), and follows a running game live
//! without ever drawing a hidden card. Screenshots go to `target/screenshots/`.

use crate::common;
use crate::web;

use common::*;
use fantoccini::key::Key;
use gangs_games::replay::Replayer;
use gangs_proto::v1 as pb;
use pb::games_client::GamesClient;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;
use tonic::transport::Channel;
use web::*;

fn options(kind: &str, players: u32, pairs: &[(&str, &str)]) -> pb::GameOptions {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    gangs_games::parse_options(kind, Some(players), &pairs).unwrap()
}

/// The spectator's last update of a game (what `Watch` without a token ends with).
async fn spectator_now(client: &mut GamesClient<Channel>, game_id: &str) -> pb::Update {
    let last = status(client, game_id).await.last_seq;
    seat_now(client, game_id, "", last).await
}

async fn seat_now(
    client: &mut GamesClient<Channel>,
    game_id: &str,
    token: &str,
    last: u64,
) -> pb::Update {
    client
        .watch(pb::WatchRequest {
            game_id: game_id.into(),
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

/// The engine's game after the records up to `seq` (the test's own replay of the log).
fn engine_at(records: &[pb::LogRecord], seq: u64) -> Replayer {
    let mut replayer = Replayer::new();
    for record in records.iter().take_while(|r| r.seq <= seq) {
        replayer.apply(record).unwrap();
    }
    replayer
}

fn seat_view(replayer: &Replayer, seat: usize) -> pb::GameView {
    replayer.game().unwrap().view(Some(seat))
}

/// Card ids drawn in a seat's hand on the page, as numbers.
async fn drawn_hand(browser: &Browser, seat: usize) -> Vec<u32> {
    let ids = browser
        .eval(&format!(
            "[...document.querySelectorAll('.seat[data-seat=\"{seat}\"] .hand > .cards > .card')].map(c => Number(c.dataset.id))"
        ))
        .await;
    serde_json::from_value(ids).unwrap()
}

/// Steps `count` times with the right arrow key and waits for step `expected`.
async fn step_right(browser: &Browser, count: u64, expected: u64) {
    let keys: String = std::iter::repeat_n(char::from(Key::Right), count as usize).collect();
    browser.press(&keys).await;
    wait_for_step(browser, expected).await;
}

async fn wait_for_step(browser: &Browser, seq: u64) {
    browser
        .wait_until(
            &format!(
                "document.getElementById('app').dataset.seq === '{seq}' && document.getElementById('app').dataset.state === 'ready'"
            ),
            &format!("step {seq}"),
        )
        .await;
}

async fn check_gang_of_four_replay(
    browser: &Browser,
    http: &str,
    client: &mut GamesClient<Channel>,
    game_id: &str,
) {
    let records = log(client, game_id).await;
    let last = records.last().unwrap().seq;
    let end = spectator_now(client, game_id).await;
    let outcome = end.outcome.clone().expect("a finished game's outcome");

    browser.open(&format!("{http}/games/{game_id}")).await;
    assert_eq!(
        browser
            .eval("document.getElementById('mode').textContent")
            .await,
        "replay"
    );
    browser.press(&char::from(Key::Home).to_string()).await;
    wait_for_step(browser, 1).await;

    // Mid-game: a step inside the second deal, where every hand is part played.
    let second_deal = browser
        .eval("Number(document.querySelectorAll('.jump')[1].dataset.seq)")
        .await
        .as_u64()
        .expect("at least two deals");
    let mid = (second_deal + 9).min(last - 1);
    step_right(browser, mid - 1, mid).await;
    let engine = engine_at(&records, mid);
    for seat in 0..4 {
        let Some(pb::game_view::Game::GangOfFour(view)) = seat_view(&engine, seat).game else {
            panic!("not a gang-of-four view")
        };
        let expected: Vec<u32> = view.hand.iter().map(|c| c.id).collect();
        assert!(!expected.is_empty());
        assert_eq!(
            drawn_hand(browser, seat).await,
            expected,
            "seat {seat}'s hand at step {mid}"
        );
    }
    // Cards are drawn as cards in their colour with their value, not as ids.
    let first_card = browser
        .eval("(c => [c.className, c.textContent, c.dataset.word])(document.querySelector('.seat .hand .card'))")
        .await;
    let class = first_card[0].as_str().unwrap();
    assert!(
        ["green", "yellow", "red", "multicolor", "none"]
            .iter()
            .any(|c| class.split(' ').any(|w| w == *c)),
        "a card's colour class: {first_card}"
    );
    let word = first_card[2].as_str().unwrap();
    let face = first_card[1].as_str().unwrap();
    assert!(
        word.ends_with(face)
            || (face == "P" && word.ends_with('p'))
            || (face == "D" && word == "dr"),
        "a card shows its value: {first_card}"
    );
    assert_eq!(
        browser
            .eval("document.getElementById('step').textContent")
            .await,
        format!("step {mid} / {last}")
    );
    browser.screenshot("replay-gang-of-four-mid").await;

    // To the end with the arrow key: the final scores are the server's outcome.
    step_right(browser, last - mid, last).await;
    let drawn: Value = browser
        .eval("[...document.querySelectorAll('#scores tr[data-seat]')].map(r => [Number(r.dataset.seat), Number(r.querySelector('.score').textContent)])")
        .await;
    let mut expected: Vec<(u32, i64)> = outcome.seats.iter().map(|s| (s.seat, s.score)).collect();
    expected.sort();
    assert_eq!(drawn, json!(expected), "final scores");
    assert_eq!(
        browser
            .eval("document.getElementById('outcome').textContent")
            .await,
        outcome.summary
    );
    let deals = browser
        .eval("document.querySelectorAll('.jump').length")
        .await;
    assert_eq!(
        browser
            .eval("document.querySelectorAll('#chart circle').length")
            .await,
        json!(deals.as_u64().unwrap() * 4),
        "one point per seat and deal"
    );
    browser.screenshot("replay-gang-of-four").await;

    // PageUp jumps to the start of the last deal; a deal's button to that deal.
    browser.press(&char::from(Key::PageUp).to_string()).await;
    let last_deal = browser
        .eval("Number([...document.querySelectorAll('.jump')].pop().dataset.seq)")
        .await
        .as_u64()
        .unwrap();
    wait_for_step(browser, last_deal).await;
    browser
        .eval("(document.querySelectorAll('.jump')[1].click(), true)")
        .await;
    wait_for_step(browser, second_deal).await;

    // The download link gives the game file.
    let href = browser
        .eval("document.getElementById('download').getAttribute('href')")
        .await;
    assert_eq!(href, format!("/api/games/{game_id}/file"));
    let (code, file) = get(http, href.as_str().unwrap()).await;
    assert_eq!(code, 200);
    let mut lines = file.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["game_id"], game_id);
    assert_eq!(lines.count(), records.len(), "one line per log record");
}

async fn check_the_gang_replay(
    browser: &Browser,
    http: &str,
    client: &mut GamesClient<Channel>,
    game_id: &str,
    players: usize,
) {
    let records = log(client, game_id).await;
    let last = records.last().unwrap().seq;
    let end = spectator_now(client, game_id).await;
    let Some(pb::game_view::Game::TheGang(final_view)) = end.view.and_then(|v| v.game) else {
        panic!("not a the-gang view")
    };

    browser.open(&format!("{http}/games/{game_id}")).await;
    browser.press(&char::from(Key::Home).to_string()).await;
    wait_for_step(browser, 1).await;
    let mid = last / 2;
    step_right(browser, mid - 1, mid).await;
    let engine = engine_at(&records, mid);
    for seat in 0..players {
        let Some(pb::game_view::Game::TheGang(view)) = seat_view(&engine, seat).game else {
            panic!("not a the-gang view")
        };
        let expected: Vec<u32> = view.private_cards.iter().map(|c| c.id).collect();
        assert_eq!(
            drawn_hand(browser, seat).await,
            expected,
            "seat {seat}'s cards at step {mid}"
        );
    }
    let Some(pb::game_view::Game::TheGang(public)) = engine.game().unwrap().view(None).game else {
        unreachable!()
    };
    let board: Vec<u32> = serde_json::from_value(
        browser
            .eval("[...document.querySelectorAll('.board .card')].map(c => Number(c.dataset.id))")
            .await,
    )
    .unwrap();
    assert_eq!(
        board,
        public.community.iter().map(|c| c.id).collect::<Vec<_>>()
    );
    browser.screenshot("replay-the-gang-mid").await;

    step_right(browser, last - mid, last).await;
    let score =
        |key: &str| format!("document.querySelector('#scores td[data-key=\"{key}\"]').textContent");
    assert_eq!(
        browser.eval(&score("vaults")).await,
        final_view.vaults.to_string()
    );
    assert_eq!(
        browser.eval(&score("alarms")).await,
        final_view.alarms.to_string()
    );
    assert_eq!(
        browser.eval(&score("result")).await,
        if final_view.won { "won" } else { "lost" }
    );
    let heists = browser
        .eval("document.querySelectorAll('.jump').length")
        .await;
    assert_eq!(
        browser
            .eval("document.querySelectorAll('#chart rect').length")
            .await,
        heists,
        "one bar per heist"
    );
    browser.screenshot("replay-the-gang").await;
}

/// One random legal action by whichever seat may act; returns the new last seq.
async fn act_once(
    client: &mut GamesClient<Channel>,
    game_id: &str,
    tokens: &[String],
    rng: &mut impl Rng,
) -> u64 {
    let last = status(client, game_id).await.last_seq;
    for token in tokens {
        let update = seat_now(client, game_id, token, last).await;
        if update.legal_actions.is_empty() {
            continue;
        }
        let action = update.legal_actions[rng.random_range(0..update.legal_actions.len())].clone();
        return client
            .act(pb::ActRequest {
                game_id: game_id.into(),
                token: token.clone(),
                action: Some(action),
                expected_seq: Some(update.seq),
                action_id: String::new(),
            })
            .await
            .unwrap()
            .into_inner()
            .seq;
    }
    panic!("nobody may act");
}

async fn check_live_page(browser: &Browser, http: &str, client: &mut GamesClient<Channel>) {
    let game_id = create(
        client,
        "gang-of-four",
        Some(options("gang-of-four", 4, &[])),
        9,
    )
    .await;
    let mut tokens = Vec::new();
    for seat in 0..4 {
        let join = pb::JoinGameRequest {
            game_id: game_id.clone(),
            seat: Some(seat),
            name: format!("player {seat}"),
            join_id: String::new(),
            ..Default::default()
        };
        tokens.push(client.join_game(join).await.unwrap().into_inner().token);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let mut seq = 0;
    for _ in 0..12 {
        seq = act_once(client, &game_id, &tokens, &mut rng).await;
    }
    browser.open(&format!("{http}/games/{game_id}")).await;
    assert_eq!(
        browser
            .eval("document.getElementById('mode').textContent")
            .await,
        "live"
    );
    for _ in 0..3 {
        wait_for_step(browser, seq).await;
        // No card of any hand is drawn: the seats show card backs, as many as they hold.
        let mut hidden = HashSet::new();
        let mut held = 0;
        for token in &tokens {
            let update = seat_now(client, &game_id, token, seq).await;
            let Some(pb::game_view::Game::GangOfFour(view)) = update.view.and_then(|v| v.game)
            else {
                panic!("not a gang-of-four view")
            };
            held += view.hand.len();
            hidden.extend(view.hand.iter().map(|c| c.id));
        }
        let drawn: Vec<u32> = serde_json::from_value(
            browser
                .eval("[...document.querySelectorAll('.card[data-id]')].map(c => Number(c.dataset.id))")
                .await,
        )
        .unwrap();
        assert!(
            drawn.iter().all(|id| !hidden.contains(id)),
            "the live page draws a hidden card: {drawn:?}"
        );
        assert_eq!(
            browser
                .eval("document.querySelectorAll('.seat .card.back').length")
                .await,
            json!(held)
        );
        // The page follows the game as it goes.
        seq = act_once(client, &game_id, &tokens, &mut rng).await;
    }
    wait_for_step(browser, seq).await;
    browser.screenshot("live-gang-of-four").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewer_lists_replays_and_follows_games_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let (server, http) = start_viewer(dir.path());
    let mut client = server.client().await;

    let four = create(
        &mut client,
        "gang-of-four",
        Some(options("gang-of-four", 4, &[])),
        7,
    )
    .await;
    let gang = create(
        &mut client,
        "the-gang",
        Some(options("the-gang", 3, &[("mode", "advanced")])),
        8,
    )
    .await;
    let mut bots = Vec::new();
    for seat in 0..4 {
        bots.push(spawn_bot(
            "gangs-bot-greedy",
            &server,
            &four,
            Some(seat),
            70 + seat as u64,
        ));
    }
    for seat in 0..3 {
        bots.push(spawn_bot(
            "gangs-bot-random",
            &server,
            &gang,
            Some(seat),
            80 + seat as u64,
        ));
    }
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(300)).success());
    }

    let browser = Browser::start().await;
    browser.open(&format!("{http}/")).await;
    let listed: Vec<String> = serde_json::from_value(
        browser
            .eval("[...document.querySelectorAll('tr[data-game]')].map(r => r.dataset.game)")
            .await,
    )
    .unwrap();
    assert!(
        listed.contains(&four) && listed.contains(&gang),
        "listed: {listed:?}"
    );
    browser.screenshot("list").await;

    check_gang_of_four_replay(&browser, &http, &mut client, &four).await;
    check_the_gang_replay(&browser, &http, &mut client, &gang, 3).await;
    check_live_page(&browser, &http, &mut client).await;
    browser.close().await;
}
