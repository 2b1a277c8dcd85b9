//! End to end: a ladder term's features where they meet, on the real binaries, for both games.
//!
//! - A hosted module that fails in play (it traps on every real decision) has its seat's
//!   default logged as an early `timed_out` with the cause: every such game stays whole across
//!   SIGKILL restarts (no game listed damaged), `rerate` agrees for every ladder, and the bot's
//!   pause holds across the restarts and a rename (only an admin or a new version lifts it).
//! - SIGTERM with ladders playing (house, hosted and connected bots) stops the server within
//!   5 s, and nothing times out from the moment the shutdown begins.
//! - A rename: the connected bots hear the new name and play on without a restart; the old
//!   name answers Queue as the new one (with `renamed` first). A Queue call with a playing
//!   bot's key takes its queue over: the bot finishes the game it is seated in, then stops.
//! - A rekey lets the old key finish the game it is seated in; `--now` cuts it off.

use crate::common;

use common::hosted::keyed_server;
use common::ladder::{in_play, ladder_games, rust_ladder_bot, standings};
use common::*;
use gangs_proto::auth::{ApiKey, KeyedClient, KeyedLaddersClient};
use gangs_proto::v1 as pb;
use pb::ladder_event::paused::Reason;
use std::process::Child;
use std::time::{Duration, Instant};
use tonic::Code;

const ADMIN: &str = "admin-secret-holds-1";
const PLAYER: &str = "player-secret-holds-2";

fn ladders(server: &Server) -> KeyedLaddersClient {
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .expect("endpoint")
        .connect_lazy();
    ApiKey::new(Some(ADMIN)).unwrap().ladders(channel)
}

/// `check` again every 200 ms until it gives a value; fails past `within`.
async fn until<T, F, Fut>(within: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(start.elapsed() < within, "not within {within:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn games(server: &Server) -> KeyedClient {
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .expect("endpoint")
        .connect_lazy();
    ApiKey::new(Some(ADMIN)).unwrap().client(channel)
}

/// The ladders of this file: (name, kind, house bots).
const LADDERS: [(&str, &str, &[&str]); 2] = [
    ("holds-gof", "gang-of-four", &["random", "greedy"]),
    ("holds-gang", "the-gang", &["random", "crew"]),
];

fn create(name: &str, kind: &str, house: &[&str]) -> pb::CreateLadderRequest {
    let options = match kind {
        "gang-of-four" => [("target_score".to_string(), "1".to_string())].into(),
        _ => Default::default(),
    };
    pb::CreateLadderRequest {
        name: name.into(),
        kind: kind.into(),
        players: Some(3),
        options,
        turn_ms: Some(3000),
        house_bots: house.iter().map(|h| h.to_string()).collect(),
        ..Default::default()
    }
}

/// A module that answers SubmitBot's sample decision and traps on every real decision.
fn traps_in_play() -> Vec<u8> {
    common::hosted::sample_only("unreachable")
}

/// The standing of `bot` (BOT@V) on `ladder`.
async fn standing(server: &Server, ladder: &str, bot: &str) -> pb::Standing {
    let rows = standings(&mut ladders(server), ladder).await.standings;
    rows.into_iter()
        .find(|r| format!("{}@{}", r.bot, r.version) == bot)
        .unwrap_or_else(|| panic!("{bot} is not on ladder {ladder}"))
}

/// Games of the server listed as damaged.
async fn damaged_games(server: &Server) -> Vec<pb::GameSummary> {
    games(server)
        .list_games(pb::ListGamesRequest {
            damaged_only: true,
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("list damaged games")
        .into_inner()
        .games
}

/// Asserts that `rerate` of every season of `ladder` agrees with the kept standings.
async fn rerate_agrees(server: &Server, ladder: &str, seasons: u32) {
    for season in 1..=seasons {
        let rerated = ladders(server)
            .rerate_ladder(pb::RerateLadderRequest {
                ladder: ladder.into(),
                season: if season == seasons { 0 } else { season },
            })
            .await
            .unwrap_or_else(|s| panic!("rerate {ladder} season {season}: {s:?}"))
            .into_inner();
        assert!(
            rerated.same,
            "rerate of {ladder} season {season} differs: {:?}",
            rerated.differences
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_failure_keeps_finished_games_whole_and_its_pause_across_restarts_and_a_rename() {
    let _alone = crate::the_machine().await;
    let dir = tempfile::tempdir().unwrap();
    let mut server = keyed_server(dir.path(), ADMIN, PLAYER);
    for (name, kind, house) in LADDERS {
        ladders(&server)
            .create_ladder(create(name, kind, house))
            .await
            .unwrap_or_else(|s| panic!("create {name}: {s:?}"));
        ladders(&server)
            .submit_bot(pb::SubmitBotRequest {
                ladder: name.into(),
                bot: "traps".into(),
                version: String::new(),
                module: traps_in_play(),
            })
            .await
            .unwrap_or_else(|s| panic!("submit to {name}: {s:?}"));
    }
    // Each ladder's hosted bot fails in play: its seat's default is logged early with the
    // cause, the game is void and the bot paused for its module's failure.
    for (name, _, _) in LADDERS {
        let paused = until(Duration::from_secs(120), || async {
            let traps = standing(&server, name, "traps@1").await;
            let void = ladder_games(&mut ladders(&server), name, 100)
                .await
                .into_iter()
                .any(|g| g.void && g.names.iter().any(|n| n == "traps@1"));
            (traps.paused && void).then_some(traps)
        })
        .await;
        assert_eq!(paused.pause_reason(), Reason::NoFirstAction, "{paused:?}");
        assert!(
            paused.state_reason.contains("trap"),
            "the pause quotes the module's cause: {}",
            paused.state_reason
        );
    }
    let paused_since: Vec<i64> = {
        let mut since = Vec::new();
        for (name, _, _) in LADDERS {
            since.push(
                standing(&server, name, "traps@1")
                    .await
                    .paused_since_unix_ms,
            );
        }
        since
    };
    for round in 0..2 {
        server.restart();
        assert_eq!(
            damaged_games(&server).await,
            [],
            "after restart {round}: a finished game turned damaged"
        );
        for ((name, _, _), since) in LADDERS.iter().zip(&paused_since) {
            rerate_agrees(&server, name, 1).await;
            // The server queues its hosted bot again at the start: the pause holds.
            tokio::time::sleep(Duration::from_secs(2)).await;
            let traps = standing(&server, name, "traps@1").await;
            assert!(traps.paused, "restart {round}: {name}: {traps:?}");
            assert_eq!(
                traps.paused_since_unix_ms, *since,
                "restart {round}: {name}: the pause was lifted and taken again"
            );
        }
    }
    // A rename runs the ladder again under its new name: the pause holds there too.
    ladders(&server)
        .rename_ladder(pb::RenameLadderRequest {
            ladder: "holds-gof".into(),
            new_name: "holds-gof-2".into(),
        })
        .await
        .expect("rename");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let traps = standing(&server, "holds-gof-2", "traps@1").await;
    assert!(traps.paused, "{traps:?}");
    assert_eq!(
        traps.paused_since_unix_ms, paused_since[0],
        "lifted by the rename"
    );
    rerate_agrees(&server, "holds-gof-2", 1).await;
    // An admin's resume lifts it.
    ladders(&server)
        .pause_bot(pb::PauseBotRequest {
            ladder: "holds-gof-2".into(),
            bot: "traps".into(),
            version: "1".into(),
            resume: true,
        })
        .await
        .expect("resume");
    let lifted = standing(&server, "holds-gof-2", "traps@1").await;
    assert!(!lifted.paused, "{lifted:?}");

    // The season ends (through the CLI); a new version submitted after it is not in its
    // frozen table, and rerate agrees for both seasons, also after a restart.
    let (code, out) = gangs_cli(
        &server,
        &[
            "--api-key",
            ADMIN,
            "ladder",
            "season",
            "holds-gof-2",
            "--end",
        ],
    );
    assert_eq!(code, 0, "{out}");
    ladders(&server)
        .submit_bot(pb::SubmitBotRequest {
            ladder: "holds-gof-2".into(),
            bot: "traps".into(),
            version: String::new(),
            module: traps_in_play(),
        })
        .await
        .expect("a new version");
    server.restart();
    let (code, out) = gangs_cli(
        &server,
        &[
            "--api-key",
            ADMIN,
            "ladder",
            "standings",
            "holds-gof-2",
            "--season",
            "1",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let frozen: serde_json::Value = serde_json::from_str(&out).expect("standings JSON");
    let names: Vec<String> = frozen["standings"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            format!(
                "{}@{}",
                r["bot"].as_str().unwrap(),
                r["version"].as_str().unwrap()
            )
        })
        .collect();
    assert!(names.contains(&"traps@1".to_string()), "{names:?}");
    assert!(
        !names.contains(&"traps@2".to_string()),
        "a version submitted after the season's end is in its table: {names:?}"
    );
    rerate_agrees(&server, "holds-gof-2", 2).await;
    rerate_agrees(&server, "holds-gang", 1).await;
    assert_eq!(damaged_games(&server).await, []);
}

/// A connected bot on `ladder` with `key`, playing until stopped.
fn connected(server: &Server, binary: &str, ladder: &str, key: &str, seed: u64) -> Bot {
    let child: Child = rust_ladder_bot(binary, server, ladder, key)
        .args(["--seed", &seed.to_string()])
        .spawn()
        .expect("start a ladder bot");
    Bot(child)
}

async fn register(server: &Server, ladder: &str, bot: &str) -> String {
    ladders(server)
        .register_bot(pb::RegisterBotRequest {
            ladder: ladder.into(),
            bot: bot.into(),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|s| panic!("register {bot}: {s:?}"))
        .into_inner()
        .bot_key
}

/// A game of `ladder` in play with `entry` (BOT@V) at the table, waited for up to a minute.
async fn seated_game(server: &Server, ladder: &str, entry: &str) -> pb::LadderGame {
    until(Duration::from_secs(60), || async {
        ladder_games(&mut ladders(server), ladder, 100)
            .await
            .into_iter()
            .find(|g| in_play(g) && g.names.iter().any(|n| n == entry))
    })
    .await
}

/// Timeouts of every row of `ladder`, by BOT@V.
async fn timeouts(server: &Server, ladder: &str) -> Vec<(String, u32)> {
    let mut rows: Vec<(String, u32)> = standings(&mut ladders(server), ladder)
        .await
        .standings
        .into_iter()
        .map(|r| (format!("{}@{}", r.bot, r.version), r.timeouts))
        .collect();
    rows.sort();
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_a_playing_ladder_within_seconds_and_charges_nobody() {
    let _alone = crate::the_machine().await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let mut server = Server::start_logged(
        dir.path(),
        &[
            "--api-key",
            ADMIN,
            "--player-key",
            PLAYER,
            "--hosted-bot-threads",
            "1",
        ],
        &log,
    );
    let mut bots = Vec::new();
    for (name, kind, house) in LADDERS {
        let mut request = create(name, kind, house);
        request.turn_ms = Some(2000);
        ladders(&server)
            .create_ladder(request)
            .await
            .expect("create");
        ladders(&server)
            .submit_bot(pb::SubmitBotRequest {
                ladder: name.into(),
                bot: "first".into(),
                version: String::new(),
                module: common::hosted::first_action_bot(1000),
            })
            .await
            .expect("submit");
        let binary = match kind {
            "gang-of-four" => "gangs-bot-greedy",
            _ => "gangs-bot-crew",
        };
        let key = register(&server, name, "connected").await;
        bots.push(connected(&server, binary, name, &key, 3));
    }
    // Play until every ladder has rated games and games in play.
    for (name, _, _) in LADDERS {
        until(Duration::from_secs(120), || async {
            let games = ladder_games(&mut ladders(&server), name, 100).await;
            let rated = games.iter().filter(|g| g.outcome.is_some()).count();
            (rated >= 2 && games.iter().any(in_play)).then_some(())
        })
        .await;
    }
    let in_play: Vec<Vec<String>> = {
        let mut all = Vec::new();
        for (name, _, _) in LADDERS {
            let games = ladder_games(&mut ladders(&server), name, 100).await;
            all.push(
                games
                    .into_iter()
                    .filter(in_play)
                    .map(|g| g.game_id)
                    .collect(),
            );
        }
        all
    };
    let before: Vec<Vec<(String, u32)>> = {
        let mut all = Vec::new();
        for (name, _, _) in LADDERS {
            all.push(timeouts(&server, name).await);
        }
        all
    };
    let logged_before = std::fs::read_to_string(&log).unwrap_or_default().len();
    let pid = server.child.id().to_string();
    let sent = Instant::now();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let status = wait_with_timeout(&mut server.child, Duration::from_secs(20));
    let took = sent.elapsed();
    assert!(status.success(), "the server stopped with {status}");
    assert!(
        took < Duration::from_secs(5),
        "SIGTERM took {took:?} with ladders playing"
    );
    let after_signal = std::fs::read_to_string(&log).unwrap_or_default();
    let shutdown = &after_signal[logged_before..];
    assert!(
        !shutdown.contains("seat timed out"),
        "a seat timed out during the shutdown:\n{shutdown}"
    );
    // The next start: the games in play resume with the grace; nobody was charged for it.
    server.restart();
    for ((name, _, _), before) in LADDERS.iter().zip(&before) {
        let now = timeouts(&server, name).await;
        for ((bot, was), (_, is)) in before.iter().zip(&now) {
            assert_eq!(
                was, is,
                "{name}: {bot} was charged a timeout by the shutdown"
            );
        }
        let first = standing(&server, name, "first@1").await;
        assert!(!first.paused, "{name}: {first:?}");
    }
    // Every game in play at the shutdown is played to its end after the start (hosted seats
    // decide again), none void, nobody charged a timeout.
    for (((name, _, _), in_play), before) in LADDERS.iter().zip(&in_play).zip(&before) {
        let finished = until(Duration::from_secs(180), || async {
            let games = ladder_games(&mut ladders(&server), name, 100).await;
            let over: Vec<pb::LadderGame> = games
                .into_iter()
                .filter(|g| in_play.contains(&g.game_id) && g.finished_unix_ms.is_some())
                .collect();
            (over.len() == in_play.len()).then_some(over)
        })
        .await;
        for game in finished {
            assert!(
                !game.void,
                "{name}: a game in play at the shutdown: {game:?}"
            );
        }
        let now = timeouts(&server, name).await;
        for ((bot, was), (_, is)) in before.iter().zip(&now) {
            assert_eq!(was, is, "{name}: {bot} timed out after the start");
        }
    }
    assert_eq!(damaged_games(&server).await, []);
    drop(bots);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connected_bots_follow_a_rename_and_an_old_key_finishes_its_game_after_a_rekey() {
    let _alone = crate::the_machine().await;
    let dir = tempfile::tempdir().unwrap();
    let server = keyed_server(dir.path(), ADMIN, PLAYER);
    let (name, kind, _) = LADDERS[0];
    let mut request = create(name, kind, &[]);
    request.options.insert("target_score".into(), "5".into());
    ladders(&server)
        .create_ladder(request)
        .await
        .expect("create");
    let mut keys = Vec::new();
    let mut bots = Vec::new();
    // Four bots for three seats: the games go on after b0, then b1, leave.
    for (i, binary) in [
        "gangs-bot-random",
        "gangs-bot-greedy",
        "gangs-bot-random",
        "gangs-bot-greedy",
    ]
    .iter()
    .enumerate()
    {
        let key = register(&server, name, &format!("b{i}")).await;
        bots.push(connected(&server, binary, name, &key, i as u64 + 1));
        keys.push(key);
    }
    let playing = until(Duration::from_secs(60), || async {
        ladder_games(&mut ladders(&server), name, 100)
            .await
            .into_iter()
            .find(in_play)
    })
    .await;
    ladders(&server)
        .rename_ladder(pb::RenameLadderRequest {
            ladder: name.into(),
            new_name: "holds-renamed".into(),
        })
        .await
        .expect("rename");
    // The game in play goes on and is rated; the bots queue on the new name and play more.
    until(Duration::from_secs(120), || async {
        let games = ladder_games(&mut ladders(&server), "holds-renamed", 100).await;
        let first = games.iter().find(|g| g.game_id == playing.game_id)?;
        let later = games.iter().filter(|g| g.r#match > playing.r#match).count();
        (first.outcome.is_some() && later >= 1).then_some(())
    })
    .await;
    for (i, bot) in bots.iter_mut().enumerate() {
        assert!(
            bot.0.try_wait().unwrap().is_none(),
            "bot b{i} stopped after the rename"
        );
    }
    assert!(
        ladder_games(&mut ladders(&server), "holds-renamed", 100)
            .await
            .iter()
            .all(|g| !g.void),
        "a game went void across the rename"
    );
    // The old name answers Queue as the new one, saying so first. The stream is b0's, taken
    // while b0 is seated: it takes b0's queue over, and b0's process finishes the game it is
    // seated in, then stops (two players of one bot would fight), charged nothing.
    let b0_seated = seated_game(&server, "holds-renamed", "b0@1").await;
    let b0_before = timeouts(&server, "holds-renamed").await;
    let mut stream = ladders(&server)
        .queue(pb::QueueRequest {
            ladder: name.into(),
            bot_key: keys[0].clone(),
            drain: true,
            ..Default::default()
        })
        .await
        .expect("queue on the former name")
        .into_inner();
    let first = stream.message().await.expect("an event").expect("an event");
    match first.event {
        Some(pb::ladder_event::Event::Renamed(renamed)) => {
            assert_eq!(
                (renamed.name.as_str(), renamed.was.as_str()),
                ("holds-renamed", name)
            )
        }
        other => panic!("expected `renamed` first, got {other:?}"),
    }
    drop(stream);
    let status = wait_with_timeout(&mut bots[0].0, Duration::from_secs(150));
    assert!(
        !status.success(),
        "b0 after its queue was taken over: {status:?}"
    );
    let b0_game = ladder_games(&mut ladders(&server), "holds-renamed", 100)
        .await
        .into_iter()
        .find(|g| g.game_id == b0_seated.game_id)
        .expect("b0's game is listed");
    assert!(
        b0_game.outcome.is_some() && !b0_game.void,
        "the game b0 was seated in when its queue was taken over: {b0_game:?}"
    );
    let b0 = |rows: &[(String, u32)]| rows.iter().find(|r| r.0 == "b0@1").unwrap().1;
    assert_eq!(
        b0(&timeouts(&server, "holds-renamed").await),
        b0(&b0_before),
        "b0 timed out in the game it was finishing after the takeover"
    );

    // A rekey: b1's old key finishes the game it is seated in; nothing is void or timed out.
    let seated = seated_game(&server, "holds-renamed", "b1@1").await;
    let before = timeouts(&server, "holds-renamed").await;
    let rekeyed = ladders(&server)
        .rekey_bot(pb::RekeyBotRequest {
            ladder: "holds-renamed".into(),
            bot: "b1".into(),
            ..Default::default()
        })
        .await
        .expect("rekey")
        .into_inner();
    let finished = until(Duration::from_secs(120), || async {
        ladder_games(&mut ladders(&server), "holds-renamed", 100)
            .await
            .into_iter()
            .find(|g| g.game_id == seated.game_id && g.finished_unix_ms.is_some())
    })
    .await;
    assert!(
        finished.outcome.is_some() && !finished.void,
        "the old key's game: {finished:?}"
    );
    let b1 = |rows: &[(String, u32)]| rows.iter().find(|r| r.0 == "b1@1").unwrap().1;
    assert_eq!(
        b1(&timeouts(&server, "holds-renamed").await),
        b1(&before),
        "b1 timed out in the game its old key was finishing"
    );
    // Queueing needs the new key; the old one is refused, saying why.
    let refused = ladders(&server)
        .queue(pb::QueueRequest {
            ladder: "holds-renamed".into(),
            bot_key: keys[1].clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    assert!(refused.message().contains("replaced"), "{refused:?}");
    // The old key's bot stops by itself once its game is over (its Queue is refused).
    let status = wait_with_timeout(&mut bots[1].0, Duration::from_secs(60));
    assert!(!status.success(), "{status:?}");
    // --now: the new key is cut off at once.
    let now = ladders(&server)
        .rekey_bot(pb::RekeyBotRequest {
            ladder: "holds-renamed".into(),
            bot: "b1".into(),
            now: true,
            ..Default::default()
        })
        .await
        .expect("rekey --now")
        .into_inner();
    assert_ne!(now.bot_key, rekeyed.bot_key);
    let refused = ladders(&server)
        .queue(pb::QueueRequest {
            ladder: "holds-renamed".into(),
            bot_key: rekeyed.bot_key.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
}
