//! End to end: on a server with keys (`--api-key`, `--player-key`), a ladder bot needs its bot
//! key and nothing else. Four Rust bots and the Python example, each given only its bot key
//! (no GANGS_API_KEY in their environment; the greedy bot started from the line `gangs ladder
//! register` printed, as printed), play a Gang of Four ladder to 24+ rated games without
//! timing out their seats. A bot key used beyond its games is refused with PERMISSION_DENIED
//! naming why, and nothing changes: CreateGame, ListGames, JoinGame, a game it was not matched
//! to (Watch, Act), and, once its bot is retired, its own games. A bot whose key the server
//! refuses stops at once with a non-zero exit code and the server's reason.

use crate::common;
use crate::e2e_ladder::{json, until, LADDER};
use crate::e2e_python_bot::{bot_script, python};

use common::ladder::{ladder_games, on_ladder, python_ladder_bot, standings};
use common::*;
use gangs_proto::auth::{ApiKey, KeyedClient, KeyedLaddersClient};
use gangs_proto::v1 as pb;
use std::process::{Command, Stdio};
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::Code;

const ADMIN: &str = "admin-secret-bot-keys-1";
const PLAYERS: &str = "player-secret-bot-keys-2";
const RATED: usize = 24;

fn channel(server: &Server) -> Channel {
    gangs_proto::connect::endpoint(&server.url(), None)
        .expect("endpoint")
        .connect_lazy()
}

fn games(server: &Server, key: &str) -> KeyedClient {
    ApiKey::new(Some(key)).expect("key").client(channel(server))
}

fn ladders(server: &Server, key: &str) -> KeyedLaddersClient {
    ApiKey::new(Some(key))
        .expect("key")
        .ladders(channel(server))
}

/// `gangs --api-key ADMIN ARGS…`: the exit code and output.
fn admin_cli(server: &Server, args: &[&str]) -> (i32, String) {
    let mut all = vec!["--api-key", ADMIN];
    all.extend_from_slice(args);
    gangs_cli(server, &all)
}

/// A Rust bot binary on the ladder with only its bot key.
fn rust_bot(binary: &str, server: &Server, key: &str, seed: u64) -> Bot {
    only_its_key(
        on_ladder(&mut Command::new(bin(binary)), server, LADDER, key),
        seed,
    )
}

fn only_its_key(command: &mut Command, seed: u64) -> Bot {
    command
        .args(["--concurrent", "2", "--seed", &seed.to_string()])
        .env_remove("GANGS_API_KEY")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    Bot(command.spawn().expect("start a ladder bot"))
}

async fn all_games(admin: &mut KeyedClient) -> Vec<String> {
    let listed = admin
        .list_games(pb::ListGamesRequest {
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("list games")
        .into_inner();
    let mut ids: Vec<String> = listed.games.into_iter().map(|g| g.game_id).collect();
    ids.sort();
    ids
}

async fn log_of(
    client: &mut KeyedClient,
    game_id: &str,
) -> Result<Vec<pb::LogRecord>, tonic::Status> {
    let mut stream = client
        .get_log(pb::GetLogRequest {
            game_id: game_id.into(),
            from_seq: 0,
        })
        .await?
        .into_inner();
    let mut records = Vec::new();
    while let Some(record) = stream.next().await {
        records.push(record?);
    }
    Ok(records)
}

fn denied(status: &tonic::Status, why: &str) {
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    assert!(status.message().contains(why), "{why:?} not in {status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ladder_bots_play_with_only_their_bot_keys_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        0,
        &["--api-key", ADMIN, "--player-key", PLAYERS],
    );
    let (code, out) = admin_cli(
        &server,
        &[
            "ladder",
            "create",
            LADDER,
            "--kind",
            "gang-of-four",
            "--option",
            "target_score=1",
            // Bots answer in milliseconds; the room is for a slow start on a loaded machine
            // (the Python bot loading its stubs), whose first decision timed out would void
            // the game and pause the bot before it played a rated game.
            "--turn-ms",
            "5000",
        ],
    );
    assert_eq!(code, 0, "{out}");

    // The greedy bot starts from the hint, exactly as printed.
    let (code, out) = admin_cli(&server, &["ladder", "register", LADDER, "greedy"]);
    assert_eq!(code, 0, "{out}");
    let hint = out
        .lines()
        .find_map(|line| line.strip_prefix("play: "))
        .unwrap_or_else(|| panic!("no `play:` line: {out}"));
    let words: Vec<&str> = hint.split_whitespace().collect();
    assert_eq!(words[0], "gangs-bot-greedy", "{hint}");
    assert!(hint.contains(&server.url()), "no server URL in {hint}");
    let greedy_key = words[words
        .iter()
        .position(|w| *w == "--bot-key")
        .expect("--bot-key")
        + 1];
    let mut greedy = Command::new(bin(words[0]));
    greedy.args(&words[1..]);
    let mut bots = vec![only_its_key(&mut greedy, 1)];

    let register = |bot: &str| {
        let (code, out) = admin_cli(&server, &["ladder", "register", LADDER, bot, "--json"]);
        assert_eq!(code, 0, "{out}");
        json(&out)["bot_key"].as_str().expect("bot_key").to_string()
    };
    let random_keys: Vec<String> = ["random-a", "random-b", "random-c"]
        .iter()
        .map(|b| register(b))
        .collect();
    let python_key = register("python");
    for (i, key) in random_keys.iter().enumerate() {
        bots.push(rust_bot("gangs-bot-random", &server, key, i as u64 + 2));
    }
    let mut python_bot = python_ladder_bot(python(), &bot_script(), &server, LADDER, &python_key);
    python_bot.args(["--seed", "5"]).env_remove("GANGS_API_KEY");
    bots.push(Bot(python_bot.spawn().expect("start the Python bot")));

    let mut player = ladders(&server, PLAYERS);
    // Every bot in a rated game too: the Rust bots may rate many games before the Python bot
    // (an interpreter loading its stubs) plays its first.
    until(
        &format!("{RATED} rated games, and one of every bot"),
        600,
        || {
            let mut player = player.clone();
            async move {
                let rated = ladder_games(&mut player, LADDER, 100)
                    .await
                    .iter()
                    .filter(|g| g.outcome.is_some())
                    .count();
                let rows = standings(&mut player, LADDER).await.standings;
                rated >= RATED && rows.len() == 5 && rows.iter().all(|r| r.games > 0)
            }
        },
    )
    .await;
    // Every bot plays on: none gave up on a refusal.
    for bot in &mut bots {
        assert!(
            bot.try_wait().expect("try_wait").is_none(),
            "a ladder bot exited while its ladder played: {:?}",
            bot.try_wait()
        );
    }
    let standings = standings(&mut player, LADDER).await;
    for row in &standings.standings {
        // A bot that could not watch or act would time out every decision of every game.
        assert!(row.games > 0, "{} played no rated game: {row:?}", row.bot);
        assert!(
            row.timeouts <= row.games,
            "{} timed out {} times in {} games: its key did not let it play",
            row.bot,
            row.timeouts,
            row.games
        );
    }
    assert_eq!(standings.standings.len(), 5, "{standings:?}");

    // The ladder quieted: every bot paused and its games over, so that the games listed before
    // and after the refused calls below differ only by what those calls did.
    const BOTS: [&str; 5] = ["greedy", "random-a", "random-b", "random-c", "python"];
    for name in BOTS {
        let (code, out) = admin_cli(&server, &["ladder", "pause", LADDER, name]);
        assert_eq!(code, 0, "{out}");
    }
    until("the ladder's games over", 300, || {
        let mut player = player.clone();
        async move {
            ladder_games(&mut player, LADDER, 100)
                .await
                .iter()
                .all(|g| g.finished_unix_ms.is_some())
        }
    })
    .await;

    let mut admin = games(&server, ADMIN);
    let mut bot = games(&server, greedy_key);
    let played = ladder_games(&mut player, LADDER, 100).await;
    let greedy_game = played
        .iter()
        .filter(|g| g.outcome.is_some())
        .find(|g| g.names.iter().any(|n| n == "greedy@1"))
        .expect("a game of greedy")
        .game_id
        .clone();
    // Its own game: the log, as a spectator sees it.
    assert!(!log_of(&mut bot, &greedy_game)
        .await
        .expect("its own log")
        .is_empty());

    // Nothing else of the games service.
    let before = all_games(&mut admin).await;
    let refused = bot
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .expect_err("a bot key creates no game");
    denied(&refused, "plays only its ladder games");
    let refused = bot
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect_err("a bot key lists no games");
    denied(&refused, "plays only its ladder games");
    let refused = bot
        .join_game(pb::JoinGameRequest {
            game_id: greedy_game.clone(),
            name: "intruder".into(),
            ..Default::default()
        })
        .await
        .expect_err("a bot key joins nothing");
    denied(&refused, "plays only its ladder games");

    // A game its ladder did not match it to: no watch, no action, nothing changed.
    let outside = admin
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .expect("create a game")
        .into_inner()
        .game_id;
    let joined = admin
        .join_game(pb::JoinGameRequest {
            game_id: outside.clone(),
            name: "someone".into(),
            ..Default::default()
        })
        .await
        .expect("join")
        .into_inner();
    let outside_log = log_of(&mut admin, &outside).await.expect("log");
    let refused = bot
        .watch(pb::WatchRequest {
            game_id: outside.clone(),
            ..Default::default()
        })
        .await
        .expect_err("not its game");
    denied(&refused, "did not match");
    let refused = bot
        .act(pb::ActRequest {
            game_id: outside.clone(),
            token: joined.token.clone(),
            ..Default::default()
        })
        .await
        .expect_err("not its game");
    denied(&refused, "did not match");
    let refused = log_of(&mut bot, &outside).await.expect_err("not its game");
    denied(&refused, "did not match");
    assert_eq!(
        log_of(&mut admin, &outside).await.expect("log"),
        outside_log
    );
    let mut after = all_games(&mut admin).await;
    after.retain(|id| *id != outside);
    assert_eq!(after, before, "a refused call changed the games");

    // Retired: its key no longer reads or plays its own games.
    let (code, out) = admin_cli(&server, &["ladder", "retire", LADDER, "greedy", "--yes"]);
    assert_eq!(code, 0, "{out}");
    let refused = log_of(&mut bot, &greedy_game).await.expect_err("retired");
    denied(&refused, "retired");
    let refused = bot
        .watch(pb::WatchRequest {
            game_id: greedy_game.clone(),
            ..Default::default()
        })
        .await
        .expect_err("retired");
    denied(&refused, "retired");
    // The player key keeps its meaning.
    assert!(log_of(&mut games(&server, PLAYERS), &greedy_game)
        .await
        .is_ok());

    // A bot whose credentials the server refuses stops at once, non-zero, with the server's
    // words, instead of queueing again: a bot key the server does not know (its Queue is
    // refused), and a known bot key beside a wrong --api-key (which wins for the games: its
    // first matched game's Watch is refused).
    let (status, stderr) = refused_bot(&server, "not-a-bot-key", None).await;
    assert!(!status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("bot key"), "no reason given: {stderr}");
    // The others play again (greedy is retired), so that the next bot gets matched.
    for name in &BOTS[1..] {
        let (code, out) = admin_cli(&server, &["ladder", "pause", LADDER, name, "--resume"]);
        assert_eq!(code, 0, "{out}");
    }
    let mislaid_key = register("mislaid");
    let (status, stderr) = refused_bot(&server, &mislaid_key, Some("not-the-player-key")).await;
    assert!(!status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("wrong key"), "no reason given: {stderr}");
}

/// Runs `gangs-bot-random` on the ladder with `key` (and `--api-key api_key`) until it exits
/// by itself (at most 180 s: a refused bot must not queue on): how it exited, and its stderr.
async fn refused_bot(
    server: &Server,
    key: &str,
    api_key: Option<&str>,
) -> (std::process::ExitStatus, String) {
    let mut command = Command::new(bin("gangs-bot-random"));
    on_ladder(&mut command, server, LADDER, key);
    if let Some(api_key) = api_key {
        command.args(["--api-key", api_key]);
    }
    let mut child = command
        .env_remove("GANGS_API_KEY")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a ladder bot");
    tokio::task::spawn_blocking(move || {
        let status = wait_with_timeout(&mut child, std::time::Duration::from_secs(180));
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut stderr)
            .expect("the bot's stderr");
        (status, stderr)
    })
    .await
    .expect("the bot's wait")
}

/// A node of a keyed cluster on the NATS server `store`.
fn keyed_node(store: &str, dir: &std::path::Path) -> Server {
    Server::start_with(
        dir,
        0,
        &[
            "--store",
            store,
            "--api-key",
            ADMIN,
            "--player-key",
            PLAYERS,
        ],
    )
}

/// `gangs --api-key ADMIN ARGS…` through `node`, which must succeed: its output.
fn admin_ok(node: &Server, args: &[&str]) -> String {
    let (code, out) = admin_cli(node, args);
    assert_eq!(code, 0, "gangs {args:?}: {out}");
    out
}

/// Through `node`, with the bot key `key` whose own game is `own`: its own game's log reads,
/// and everything else is refused with PERMISSION_DENIED naming why, changing nothing.
async fn a_bot_key_plays_only_its_games(node: &Server, key: &str, own: &str) {
    let mut admin = games(node, ADMIN);
    let mut bot = games(node, key);
    assert!(!log_of(&mut bot, own).await.expect("its own log").is_empty());
    // Its own game as a spectator sees it.
    let mut watched = bot
        .watch(pb::WatchRequest {
            game_id: own.into(),
            ..Default::default()
        })
        .await
        .expect("watch its own game")
        .into_inner();
    let first = watched.next().await.expect("an update").expect("an update");
    assert!(first.seat.is_none(), "a spectator's view: {first:?}");
    let before = all_games(&mut admin).await;
    let refused = bot
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .expect_err("a bot key creates no game");
    denied(&refused, "plays only its ladder games");
    let refused = bot
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect_err("a bot key lists no games");
    denied(&refused, "plays only its ladder games");
    // A game its ladder did not match it to: no watch, no action, no log, nothing changed.
    let outside = admin
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .expect("create a game")
        .into_inner()
        .game_id;
    let joined = admin
        .join_game(pb::JoinGameRequest {
            game_id: outside.clone(),
            name: "someone".into(),
            ..Default::default()
        })
        .await
        .expect("join")
        .into_inner();
    let outside_log = log_of(&mut admin, &outside).await.expect("log");
    let refused = bot
        .watch(pb::WatchRequest {
            game_id: outside.clone(),
            ..Default::default()
        })
        .await
        .expect_err("not its game");
    denied(&refused, "did not match");
    let refused = bot
        .act(pb::ActRequest {
            game_id: outside.clone(),
            token: joined.token.clone(),
            ..Default::default()
        })
        .await
        .expect_err("not its game");
    denied(&refused, "did not match");
    let refused = log_of(&mut bot, &outside).await.expect_err("not its game");
    denied(&refused, "did not match");
    assert_eq!(
        log_of(&mut admin, &outside).await.expect("log"),
        outside_log
    );
    let mut after = all_games(&mut admin).await;
    after.retain(|id| *id != outside);
    assert_eq!(after, before, "a refused call changed the games");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ladder_bots_play_with_only_their_bot_keys_through_every_node_of_a_cluster() {
    let nats = tokio::task::spawn_blocking(common::nats::single)
        .await
        .unwrap();
    let store = common::nats::store_url(std::slice::from_ref(&nats));
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let nodes = [
        keyed_node(&store, dirs[0].path()),
        keyed_node(&store, dirs[1].path()),
    ];
    // One node runs the ladder; two bots queue through each node, so the bots of the other
    // node play with keys their node learnt from the cluster, in every game (four seats).
    admin_ok(
        &nodes[0],
        &[
            "ladder",
            "create",
            LADDER,
            "--kind",
            "gang-of-four",
            "--option",
            "target_score=1",
            "--turn-ms",
            "5000",
        ],
    );
    const BOTS: [&str; 4] = ["greedy", "random-a", "random-b", "random-c"];
    let mut keys = Vec::new();
    let mut bots = Vec::new();
    for (i, name) in BOTS.iter().enumerate() {
        let node = &nodes[i % 2];
        let out = admin_ok(node, &["ladder", "register", LADDER, name, "--json"]);
        let key = json(&out)["bot_key"].as_str().expect("bot_key").to_string();
        let binary = if i == 0 {
            "gangs-bot-greedy"
        } else {
            "gangs-bot-random"
        };
        bots.push(rust_bot(binary, node, &key, i as u64 + 1));
        keys.push(key);
    }

    let mut player = ladders(&nodes[1], PLAYERS);
    until(
        &format!("{RATED} rated games, and one of every bot"),
        600,
        || {
            // A bot refused by its node stops at once: fail then, not at the timeout.
            for bot in &mut bots {
                let exited = bot.try_wait().expect("try_wait");
                assert!(exited.is_none(), "a ladder bot exited: {exited:?}");
            }
            let mut player = player.clone();
            async move {
                let rated = ladder_games(&mut player, LADDER, 100)
                    .await
                    .iter()
                    .filter(|g| g.outcome.is_some())
                    .count();
                let rows = standings(&mut player, LADDER).await.standings;
                rated >= RATED && rows.len() == BOTS.len() && rows.iter().all(|r| r.games > 0)
            }
        },
    )
    .await;
    for bot in &mut bots {
        assert!(
            bot.try_wait().expect("try_wait").is_none(),
            "a ladder bot exited while its ladder played: {:?}",
            bot.try_wait()
        );
    }
    let table = standings(&mut player, LADDER).await;
    for row in &table.standings {
        // A bot its node refused could not watch or act: it would time out every decision.
        assert!(
            row.timeouts <= row.games,
            "{} timed out {} times in {} games: its key did not let it play",
            row.bot,
            row.timeouts,
            row.games
        );
    }

    // Quieted (every bot paused, its games over): the games listed around the refused calls
    // differ only by what those calls did.
    for name in BOTS {
        admin_ok(&nodes[0], &["ladder", "pause", LADDER, name]);
    }
    until("the ladder's games over", 300, || {
        let mut player = player.clone();
        async move {
            ladder_games(&mut player, LADDER, 100)
                .await
                .iter()
                .all(|g| g.finished_unix_ms.is_some())
        }
    })
    .await;
    let played = ladder_games(&mut player, LADDER, 100).await;
    let own_game = |bot: &str| {
        played
            .iter()
            .filter(|g| g.outcome.is_some())
            .find(|g| g.names.iter().any(|n| *n == format!("{bot}@1")))
            .unwrap_or_else(|| panic!("a rated game of {bot}"))
            .game_id
            .clone()
    };
    let greedy_game = own_game("greedy");
    for node in &nodes {
        for (i, name) in BOTS.iter().enumerate() {
            a_bot_key_plays_only_its_games(node, &keys[i], &own_game(name)).await;
        }
    }

    // Retired through one node: its key reads nothing more through any node.
    admin_ok(&nodes[1], &["ladder", "retire", LADDER, "greedy", "--yes"]);
    for node in &nodes {
        until("the retired key refused", 10, || {
            let mut bot = games(node, &keys[0]);
            let game = greedy_game.clone();
            async move {
                log_of(&mut bot, &game)
                    .await
                    .is_err_and(|s| s.code() == Code::PermissionDenied)
            }
        })
        .await;
        let mut bot = games(node, &keys[0]);
        let refused = log_of(&mut bot, &greedy_game).await.expect_err("retired");
        denied(&refused, "retired");
        let refused = bot
            .watch(pb::WatchRequest {
                game_id: greedy_game.clone(),
                ..Default::default()
            })
            .await
            .expect_err("retired");
        denied(&refused, "retired");
        // The others' keys and the player key keep their meaning.
        assert!(log_of(&mut games(node, PLAYERS), &greedy_game)
            .await
            .is_ok());
        assert!(log_of(&mut games(node, &keys[1]), &own_game(BOTS[1]))
            .await
            .is_ok());
    }
}
