//! End to end: a Gang of Four ladder ranks its bots (issue 23). Greedy, search, three random
//! bots and the Python example (`bot.py --ladder --bot-key`) queue on one ladder (one deal a
//! game, clocks on); once 60 games are rated, the leaderboard must say what everyone knows:
//! greedy and search rank above every random bot, with rating intervals (μ ± 3σ, as the viewer
//! shows them) that do not overlap any random bot's; every bot played, none was paused. Then the
//! organizer pauses every bot, the games in play end, and each of the ladder's games has its
//! clocks and replays (`gangs replay --verify`); `gangs ladder rerate` gets the same table.

use crate::common;
use crate::e2e_ladder::{
    json, ladder_bot, ladder_games, ladders, rated, register, standings, until, LADDER,
};
use crate::e2e_python_bot::{bot_script, python};

use common::*;
use gangs_proto::v1 as pb;
use std::collections::HashMap;
use std::process::{Command, Stdio};

/// Games rated before the leaderboard is read.
const RATED: usize = 60;
const RANDOMS: [&str; 3] = ["random-a", "random-b", "random-c"];

fn search_bot(server: &Server, key: &str) -> Bot {
    let mut command = Command::new(bin("gangs-bot-search"));
    command
        .args(["--server", &server.url(), "--ladder", LADDER, "--bot-key", key])
        .args(["--concurrent", "2", "--seed", "11", "--budget-ms", "40"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    Bot(command.spawn().expect("start gangs-bot-search"))
}

fn python_bot(server: &Server, key: &str) -> Bot {
    let (python, stubs) = python();
    let mut command = Command::new(python);
    command
        .arg(bot_script())
        .args(["--server", &server.url(), "--ladder", LADDER, "--bot-key", key])
        .args(["--seed", "5"])
        .env("PYTHONPATH", stubs)
        .env("GANGS_BOT_QUIET", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    Bot(command.spawn().expect("start the Python bot"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn greedy_and_search_climb_above_the_random_bots() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (code, out) = gangs_cli(
        &server,
        &[
            "ladder",
            "create",
            LADDER,
            "--kind",
            "gang-of-four",
            "--option",
            "target_score=1",
            "--turn-ms",
            "1500",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{out}");

    let mut names = vec!["greedy", "search", "python"];
    names.extend(RANDOMS);
    let keys: HashMap<&str, String> = names.iter().map(|&n| (n, register(&server, n))).collect();
    let mut bots = vec![
        ladder_bot("gangs-bot-greedy", &server, &keys["greedy"], None, 1),
        search_bot(&server, &keys["search"]),
        python_bot(&server, &keys["python"]),
    ];
    for (i, random) in RANDOMS.iter().enumerate() {
        bots.push(ladder_bot(
            "gangs-bot-random",
            &server,
            &keys[random],
            None,
            i as u64 + 2,
        ));
    }

    let mut client = ladders(&server).await;
    until("60 rated games", 900, || {
        let mut client = client.clone();
        async move { rated(&mut client).await >= RATED }
    })
    .await;
    let table = standings(&mut client).await;
    let row = |name: &str| {
        table
            .standings
            .iter()
            .find(|r| r.bot == name)
            .unwrap_or_else(|| panic!("{name} is not on the leaderboard: {table:?}"))
    };
    let interval = |name: &str| {
        let rating = row(name).rating.unwrap();
        (rating.mu - 3.0 * rating.sigma, rating.mu + 3.0 * rating.sigma)
    };
    let leaderboard: Vec<String> = table
        .standings
        .iter()
        .map(|r| {
            let rating = r.rating.unwrap();
            format!(
                "{} mu {:.1} sigma {:.2} games {} wins {} timeouts {}",
                r.bot, rating.mu, rating.sigma, r.games, r.wins, r.timeouts
            )
        })
        .collect();
    eprintln!("the leaderboard after {RATED} games:\n{}", leaderboard.join("\n"));
    for name in &names {
        let r = row(name);
        assert!(r.games >= 10, "{name} played {} games: {leaderboard:?}", r.games);
        assert!(!r.paused, "{name} was paused: {leaderboard:?}");
    }
    for good in ["greedy", "search"] {
        for random in RANDOMS {
            assert!(
                row(good).conservative > row(random).conservative,
                "{good} does not rank above {random}: {leaderboard:?}"
            );
            let (good_low, _) = interval(good);
            let (_, random_high) = interval(random);
            assert!(
                good_low > random_high,
                "{good}'s interval overlaps {random}'s: {leaderboard:?}"
            );
        }
    }

    // The organizer pauses everyone; the games in play end; then the bots go.
    for name in &names {
        let (code, out) = gangs_cli(&server, &["ladder", "pause", LADDER, name]);
        assert_eq!(code, 0, "{out}");
    }
    until("every ladder game over", 300, || {
        let mut client = client.clone();
        async move {
            ladder_games(&mut client)
                .await
                .iter()
                .all(|g| g.finished_unix_ms.is_some())
        }
    })
    .await;
    drop(bots);

    let games = ladder_games(&mut client).await;
    let mut games_client = server.client().await;
    for game in &games {
        assert!(!game.void, "a void game: {game:?}");
        let records = log(&mut games_client, &game.game_id).await;
        let Some(pb::log_record::Record::Created(created)) = &records[0].record else {
            panic!("{}: no created record", game.game_id);
        };
        let Some(pb::game_options::Game::GangOfFour(options)) =
            created.options.as_ref().and_then(|o| o.game.as_ref())
        else {
            panic!("{}: not gang-of-four options", game.game_id);
        };
        assert_eq!(options.turn_ms, Some(1500), "{}: no clock", game.game_id);
        let (code, out) = gangs_cli(&server, &["replay", &game.game_id, "--verify"]);
        assert_eq!(code, 0, "{}: replay --verify failed: {out}", game.game_id);
    }
    let (code, out) = gangs_cli(&server, &["ladder", "rerate", LADDER, "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(json(&out)["same"], true, "{out}");
}
