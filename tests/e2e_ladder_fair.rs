//! End to end: a ladder is fair when things go wrong.
//! - The server is SIGKILLed with games in play and restarted seconds later: the downtime is
//!   the host's, so no seat of any game times out for it (every game's log has no `timed_out`
//!   record, the bots being quick), and every game finishes and is rated once.
//! - Every shipped bot and the Python example, sent SIGTERM with games in play, leave cleanly:
//!   no new game, their games played to the end without a timeout of theirs, exit 0.
//! - A bot that reaches `--ladder-games-per-hour` logs it once and waits; the standings say it
//!   is capped, until when and by which flag, as the `capped` event on its Queue stream does.
//! - With the default caps, a keyed ladder of one-second games runs ten minutes with six bots
//!   and starves nobody: every bot gets games every minute, nobody is capped, the games per bot
//!   roughly even.

use crate::common;
use crate::e2e_ladder::{create_ladder, ladder_games, ladders, register, until, LADDER};

use common::*;
use gangs_proto::v1 as pb;
use pb::ladders_client::LaddersClient;
use pb::log_record::Record;
use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::time::Duration;
use tonic::transport::Channel;

/// A random bot playing the ladder with `args` (its games and concurrency).
fn ladder_bot_with(server: &Server, key: &str, args: &[&str], seed: u64) -> Bot {
    spawn_ladder_bot(
        "gangs-bot-random",
        server,
        key,
        args,
        seed,
        Stdio::inherit(),
    )
}

/// `binary` playing the ladder with `args`, its stderr (the log) to `stderr`.
fn spawn_ladder_bot(
    binary: &str,
    server: &Server,
    key: &str,
    args: &[&str],
    seed: u64,
    stderr: Stdio,
) -> Bot {
    let mut command = Command::new(bin(binary));
    command
        .args([
            "--server",
            &server.url(),
            "--ladder",
            LADDER,
            "--bot-key",
            key,
        ])
        .args(args)
        .args(["--seed", &seed.to_string()])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(stderr);
    Bot(command
        .spawn()
        .unwrap_or_else(|e| panic!("start {binary}: {e}")))
}

/// The Python example playing the ladder.
fn python_ladder_bot(server: &Server, key: &str) -> Bot {
    let (python, stubs) = crate::e2e_python_bot::python();
    let child = Command::new(python)
        .arg(crate::e2e_python_bot::bot_script())
        .args([
            "--server",
            &server.url(),
            "--ladder",
            LADDER,
            "--bot-key",
            key,
        ])
        .env("PYTHONPATH", stubs)
        .env("GANGS_BOT_QUIET", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the Python bot");
    Bot(child)
}

fn sigterm(bot: &Bot) {
    let sent = Command::new("kill")
        .args(["-TERM", &bot.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
}

/// Waits until each of `names` ("bot@1") has a game in play.
async fn until_playing(client: &LaddersClient<Channel>, names: &[&str]) {
    until("every bot in a game", 180, || {
        let mut client = client.clone();
        async move {
            let table = crate::e2e_ladder::standings(&mut client).await.standings;
            names.iter().all(|name| {
                table
                    .iter()
                    .any(|r| format!("{}@{}", r.bot, r.version) == *name && r.playing > 0)
            })
        }
    })
    .await;
}

/// Every game `name` sat in is over and rated, and its seat never timed out.
async fn played_to_the_end_without_a_timeout(server: &Server, name: &str) -> usize {
    let mut ladders = ladders(server).await;
    let mut client = server.client().await;
    let mine: Vec<pb::LadderGame> = ladder_games(&mut ladders)
        .await
        .into_iter()
        .filter(|g| g.names.iter().any(|n| n == name))
        .collect();
    assert!(!mine.is_empty(), "{name} played no game");
    for game in &mine {
        assert!(
            game.outcome.is_some() && !game.void,
            "{name}'s game was not played to its end: {game:?}"
        );
        let seat = game.names.iter().position(|n| n == name).expect("its seat") as u32;
        let records = log(&mut client, &game.game_id).await;
        let timeouts = records
            .iter()
            .filter(|r| matches!(&r.record, Some(Record::TimedOut(t)) if t.seat == seat))
            .count();
        assert_eq!(timeouts, 0, "{name} timed out in game {}", game.game_id);
    }
    mine.len()
}

/// Each shipped Gang of Four bot and the Python example, with games in play, get SIGTERM:
/// they finish those games (no timeout of theirs, every game rated) and exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shipped_bots_leave_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (code, out) = create_ladder(
        &server,
        "gang-of-four",
        &[
            "--option",
            "target_score=30",
            "--turn-ms",
            "3000",
            "--house",
            "random",
            "--house",
            "greedy",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let bots = [
        ("gangs-bot-random", "random"),
        ("gangs-bot-greedy", "greedy"),
        ("gangs-bot-search", "search"),
    ];
    let mut running: Vec<(String, Bot)> = bots
        .iter()
        .enumerate()
        .map(|(i, (binary, name))| {
            let key = register(&server, name);
            let bot = spawn_ladder_bot(
                binary,
                &server,
                &key,
                &["--concurrent", "2"],
                i as u64 + 1,
                Stdio::inherit(),
            );
            (format!("{name}@1"), bot)
        })
        .collect();
    let key = register(&server, "python");
    running.push(("python@1".into(), python_ladder_bot(&server, &key)));
    let client = ladders(&server).await;
    let names: Vec<&str> = running.iter().map(|(n, _)| n.as_str()).collect();
    until_playing(&client, &names).await;
    for (_, bot) in &running {
        sigterm(bot);
    }
    for (name, bot) in &mut running {
        let status = wait_with_timeout(bot, Duration::from_secs(240));
        assert!(status.success(), "{name} did not leave cleanly: {status:?}");
    }
    crate::e2e_ladder::every_game_over(&client, 120).await;
    for (name, _) in &running {
        played_to_the_end_without_a_timeout(&server, name).await;
    }
    // They left: nobody is queued any more.
    let mut client = client.clone();
    let table = crate::e2e_ladder::standings(&mut client).await.standings;
    for (name, _) in &running {
        let row = table
            .iter()
            .find(|r| format!("{}@{}", r.bot, r.version) == *name)
            .expect("its row");
        assert_eq!(row.state, pb::BotState::Idle as i32, "{row:?}");
        assert_eq!(row.timeouts, 0, "{row:?}");
    }
}

/// The crew bot on a The Gang ladder, with games in play, gets SIGTERM: it finishes them and
/// exits 0; a second signal would stop it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crew_bot_leaves_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (code, out) = create_ladder(
        &server,
        "the-gang",
        &[
            "--players",
            "3",
            "--turn-ms",
            "3000",
            "--house",
            "crew",
            "--house",
            "random",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let key = register(&server, "crew");
    let mut bot = spawn_ladder_bot(
        "gangs-bot-crew",
        &server,
        &key,
        &["--concurrent", "2"],
        5,
        Stdio::inherit(),
    );
    let client = ladders(&server).await;
    until_playing(&client, &["crew@1"]).await;
    sigterm(&bot);
    let status = wait_with_timeout(&mut bot, Duration::from_secs(240));
    assert!(
        status.success(),
        "the crew bot did not leave cleanly: {status:?}"
    );
    crate::e2e_ladder::every_game_over(&client, 120).await;
    played_to_the_end_without_a_timeout(&server, "crew@1").await;
}

/// With `--ladder-games-per-hour 1`, three bots play their one game; each logs the cap once
/// (not once a second) and waits; the standings say capped, until when, by which flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capped_bot_is_told_once_and_waits() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(dir.path(), 0, &["--ladder-games-per-hour", "1"]);
    let (code, out) = create_ladder(
        &server,
        "gang-of-four",
        &["--players", "3", "--option", "target_score=1"],
    );
    assert_eq!(code, 0, "{out}");
    let logs = tempfile::tempdir().unwrap();
    let mut keys = Vec::new();
    let mut bots: Vec<(String, std::path::PathBuf, Bot)> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let key = register(&server, name);
            keys.push(key.clone());
            let path = logs.path().join(format!("{name}.log"));
            let file = std::fs::File::create(&path).expect("log file");
            let bot = spawn_ladder_bot(
                "gangs-bot-random",
                &server,
                &key,
                &["--concurrent", "1"],
                i as u64 + 1,
                Stdio::from(file),
            );
            (format!("{name}@1"), path, bot)
        })
        .collect();
    let mut client = ladders(&server).await;
    until("the hour's one game rated", 120, || {
        let mut client = client.clone();
        async move { crate::e2e_ladder::rated(&mut client).await >= 1 }
    })
    .await;
    // A window of matchmaker rounds, told by an event: a fourth bot (never matched: the others
    // are capped) queues and waits for its stream's first heartbeat, five seconds of rounds
    // in which a bot that retried once a second would log each time.
    let witness = register(&server, "witness");
    let mut heartbeats = client
        .queue(pb::QueueRequest {
            ladder: LADDER.into(),
            bot_key: witness,
            max_concurrent: 1,
            ..Default::default()
        })
        .await
        .expect("the witness queues")
        .into_inner();
    loop {
        let event = heartbeats.message().await.expect("stream").expect("open");
        match event.event {
            Some(pb::ladder_event::Event::Heartbeat(_)) => break,
            Some(pb::ladder_event::Event::Matched(m)) => panic!("matched past a cap: {m:?}"),
            _ => {}
        }
    }
    drop(heartbeats);
    let table = crate::e2e_ladder::standings(&mut client).await.standings;
    for row in table.iter().filter(|r| r.bot != "witness") {
        assert_eq!(row.state, pb::BotState::Capped as i32, "{row:?}");
        assert!(
            row.state_reason.contains("--ladder-games-per-hour"),
            "{row:?}"
        );
        assert!(row.capped_until_unix_ms > 0, "{row:?}");
    }
    assert_eq!(
        ladder_games(&mut client).await.len(),
        1,
        "one game in the hour"
    );
    for (name, path, bot) in &mut bots {
        let _ = bot.kill();
        let _ = bot.wait();
        let text = std::fs::read_to_string(path).expect("the bot's log");
        let lines = text.matches("capped by the server").count();
        assert_eq!(lines, 1, "{name} logged the cap {lines} times:\n{text}");
        assert!(text.contains("--ladder-games-per-hour"), "{text}");
    }
    // The event itself, as any bot's Queue stream gets it: which cap, its flag and limit, and
    // until when (the standings' time).
    let until_ms = table
        .iter()
        .find(|r| r.bot == "a")
        .expect("a's row")
        .capped_until_unix_ms;
    let mut events = client
        .queue(pb::QueueRequest {
            ladder: LADDER.into(),
            bot_key: keys[0].clone(),
            max_concurrent: 1,
            ..Default::default()
        })
        .await
        .expect("queue")
        .into_inner();
    let capped = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let event = events.message().await.expect("stream").expect("open");
            match event.event {
                Some(pb::ladder_event::Event::Capped(c)) => return c,
                Some(pb::ladder_event::Event::Matched(m)) => panic!("matched past its cap: {m:?}"),
                _ => {}
            }
        }
    })
    .await
    .expect("a capped event on opening the stream");
    assert_eq!(capped.cap, "games per hour", "{capped:?}");
    assert_eq!(capped.flag, "--ladder-games-per-hour", "{capped:?}");
    assert_eq!(capped.limit, 1, "{capped:?}");
    assert_eq!(capped.until_unix_ms, until_ms, "{capped:?}");
    assert!(capped.detail.contains("a@1"), "{capped:?}");
}

/// On a server with keys and the default caps, a ladder of one-second games (one deal of
/// Gang of Four) runs ten minutes with six random bots, each with only its bot key: nobody is
/// starved by a default. Every bot gets games in every minute of the run, nobody is capped
/// (no `capped` event in any bot's log, no capped state in the standings), and the games per
/// bot are roughly even.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ladder_of_one_second_games_runs_ten_minutes_and_starves_nobody() {
    use gangs_proto::auth::ApiKey;
    const ADMIN: &str = "admin-secret-ten-minutes-1";
    const PLAYERS: &str = "player-secret-ten-minutes-2";
    const MINUTES: usize = 10;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        0,
        &["--api-key", ADMIN, "--player-key", PLAYERS],
    );
    let admin = |args: &[&str]| {
        let mut all = vec!["--api-key", ADMIN];
        all.extend_from_slice(args);
        let (code, out) = gangs_cli(&server, &all);
        assert_eq!(code, 0, "gangs {args:?}: {out}");
        out
    };
    admin(&[
        "ladder",
        "create",
        LADDER,
        "--kind",
        "gang-of-four",
        "--option",
        "target_score=1",
        "--turn-ms",
        "3000",
    ]);
    let logs = tempfile::tempdir().unwrap();
    let names = ["a", "b", "c", "d", "e", "f"];
    let mut bots: Vec<(std::path::PathBuf, Bot)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let out = admin(&["ladder", "register", LADDER, name, "--json"]);
            let key = crate::e2e_ladder::json(&out)["bot_key"]
                .as_str()
                .expect("bot_key")
                .to_string();
            let path = logs.path().join(format!("{name}.log"));
            let file = std::fs::File::create(&path).expect("log file");
            let bot = spawn_ladder_bot(
                "gangs-bot-random",
                &server,
                &key,
                &["--concurrent", "1"],
                i as u64 + 1,
                Stdio::from(file),
            );
            (path, bot)
        })
        .collect();
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .expect("endpoint")
        .connect_lazy();
    let mut player = ApiKey::new(Some(PLAYERS)).expect("key").ladders(channel);
    let games_by_bot = |table: &[pb::Standing]| -> Vec<u32> {
        names
            .iter()
            .map(|name| {
                let row = table.iter().find(|r| r.bot == *name);
                row.map_or(0, |r| r.games)
            })
            .collect()
    };
    let mut last = vec![0; names.len()];
    for minute in 1..=MINUTES {
        tokio::time::sleep(Duration::from_secs(60)).await;
        let table = common::ladder::standings(&mut player, LADDER)
            .await
            .standings;
        for row in &table {
            assert_ne!(
                row.state,
                pb::BotState::Capped as i32,
                "minute {minute}: capped by a default: {row:?}"
            );
            assert!(!row.paused, "minute {minute}: {row:?}");
        }
        let now = games_by_bot(&table);
        for (i, name) in names.iter().enumerate() {
            assert!(
                now[i] > last[i],
                "minute {minute}: {name} got no game ({} then, {} now): {table:?}",
                last[i],
                now[i]
            );
        }
        eprintln!("ladder of one-second games, minute {minute}: games per bot {now:?}");
        last = now;
    }
    for (path, bot) in &mut bots {
        assert!(
            bot.try_wait().expect("try_wait").is_none(),
            "a bot exited: {:?}",
            bot.try_wait()
        );
        let _ = bot.kill();
        let _ = bot.wait();
        let text = std::fs::read_to_string(&*path).expect("the bot's log");
        assert!(
            !text.contains("capped by the server"),
            "a bot was capped: {text}"
        );
    }
    // Roughly even: four seats a game among six bots, none left out much more than another.
    let (least, most) = (
        *last.iter().min().expect("bots"),
        *last.iter().max().expect("bots"),
    );
    assert!(
        least * 3 >= most * 2,
        "games per bot uneven: {last:?} (least {least}, most {most})"
    );
}

/// Timed-out records per game id, from each game's log.
async fn timeouts_by_game(server: &Server, games: &[pb::LadderGame]) -> Vec<(String, usize)> {
    let mut client = server.client().await;
    let mut all = Vec::new();
    for game in games.iter().filter(|g| !g.game_id.is_empty()) {
        let records = log(&mut client, &game.game_id).await;
        let timeouts = records
            .iter()
            .filter(|r| matches!(r.record, Some(Record::TimedOut(_))))
            .count();
        all.push((game.game_id.clone(), timeouts));
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_down_with_games_in_play_costs_no_seat_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    // Several deals a game: games are in play when the server goes down.
    let (code, out) = create_ladder(
        &server,
        "gang-of-four",
        &["--option", "target_score=60", "--turn-ms", "2000"],
    );
    assert_eq!(code, 0, "{out}");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let keys: Vec<String> = names.iter().map(|n| register(&server, n)).collect();
    // Eight bots, each up to four games at once: up to eight games in play.
    let mut bots: Vec<Bot> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            ladder_bot_with(
                &server,
                key,
                &["--concurrent", "4", "--games", "8"],
                i as u64 + 1,
            )
        })
        .collect();
    let mut client = ladders(&server).await;
    until("six games in play", 120, || {
        let mut client = client.clone();
        async move {
            ladder_games(&mut client)
                .await
                .iter()
                .filter(|g| !g.game_id.is_empty() && g.finished_unix_ms.is_none())
                .count()
                >= 6
        }
    })
    .await;
    let in_play: Vec<pb::LadderGame> = ladder_games(&mut client)
        .await
        .into_iter()
        .filter(|g| !g.game_id.is_empty() && g.finished_unix_ms.is_none())
        .collect();
    // Down for 5 s: past every seat's 2 s turn.
    server.kill9();
    std::thread::sleep(Duration::from_secs(5));
    server.restart();
    let mut client = ladders(&server).await;

    for bot in &mut bots {
        let status = wait_with_timeout(bot, Duration::from_secs(300));
        assert!(status.success(), "a ladder bot failed: {status:?}");
    }
    let games = ladder_games(&mut client).await;
    for game in &in_play {
        let after = games
            .iter()
            .find(|g| g.game_id == game.game_id)
            .unwrap_or_else(|| panic!("game {} lost in the restart", game.game_id));
        assert!(
            after.outcome.is_some() && !after.void,
            "a game in play at the kill finished and was rated: {after:?}"
        );
    }
    let ids: HashSet<&str> = games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids.len(), games.len(), "a game listed twice");
    for (game, timeouts) in timeouts_by_game(&server, &games).await {
        assert_eq!(timeouts, 0, "game {game}: a seat timed out");
    }
    let table = crate::e2e_ladder::standings(&mut client).await;
    for row in &table.standings {
        assert_eq!(row.timeouts, 0, "{row:?}");
        assert!(!row.paused, "{row:?}");
    }
}

/// A bot that plays its first decisions and then falls silent is paused during the game, as
/// soon as its seat turns absent (`absent_after` timeouts in a row), with the reason; its game
/// plays on on its clock and is rated (it did play), and it gets no new match meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_falls_silent_is_paused_during_the_game() {
    use rand::{Rng, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (code, out) = create_ladder(
        &server,
        "gang-of-four",
        &[
            "--players",
            "3",
            "--option",
            "target_score=100",
            "--turn-ms",
            "1000",
            "--house",
            "random",
            "--house",
            "greedy",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let key = register(&server, "quitter");
    let mut ladders_client = ladders(&server).await;
    let mut events = ladders_client
        .queue(pb::QueueRequest {
            ladder: LADDER.into(),
            bot_key: key,
            max_concurrent: 1,
            ..Default::default()
        })
        .await
        .expect("queue")
        .into_inner();
    let matched = loop {
        let event = events.message().await.expect("stream").expect("open");
        if let Some(pb::ladder_event::Event::Matched(m)) = event.event {
            break m;
        }
    };
    // Two decisions of its own, then silence.
    let mut games = server.client().await;
    let mut watch = games
        .watch(pb::WatchRequest {
            game_id: matched.game_id.clone(),
            token: matched.token.clone(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut acted = 0;
    while acted < 2 {
        let update = watch.message().await.expect("watch").expect("open");
        if update.legal_actions.is_empty() {
            continue;
        }
        let pick = rng.random_range(0..update.legal_actions.len());
        let answer = games
            .act(pb::ActRequest {
                game_id: matched.game_id.clone(),
                token: matched.token.clone(),
                action: Some(update.legal_actions[pick].clone()),
                expected_seq: Some(update.seq),
                action_id: String::new(),
            })
            .await;
        // Refused when the update was stale (a catch-up): the next one tells.
        if answer.is_ok() {
            acted += 1;
        }
    }
    drop(watch);
    let paused = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let event = events.message().await.expect("stream").expect("open");
            match event.event {
                Some(pb::ladder_event::Event::Paused(p)) => return p,
                Some(pb::ladder_event::Event::Matched(m)) => {
                    panic!("a new match for a silent bot: {m:?}")
                }
                _ => {}
            }
        }
    })
    .await
    .expect("paused within 60 s");
    assert_eq!(
        paused.reason,
        pb::ladder_event::paused::Reason::Timeouts as i32
    );
    assert!(
        paused.detail.contains("3 times in a row"),
        "{}",
        paused.detail
    );
    // Paused during the game: it is still in play.
    let game = ladder_games(&mut ladders_client)
        .await
        .into_iter()
        .find(|g| g.game_id == matched.game_id)
        .expect("its game");
    assert!(
        game.finished_unix_ms.is_none(),
        "paused only after the game: {game:?}"
    );
    let row = crate::e2e_ladder::standings(&mut ladders_client)
        .await
        .standings
        .into_iter()
        .find(|r| r.bot == "quitter")
        .expect("its row");
    assert_eq!(row.state, pb::BotState::Paused as i32, "{row:?}");
    assert_eq!(row.state_reason, paused.detail);
    // The game plays on on its clock and is rated: the bot did play.
    until("its game over", 120, || {
        let mut client = ladders_client.clone();
        let id = matched.game_id.clone();
        async move {
            ladder_games(&mut client)
                .await
                .iter()
                .any(|g| g.game_id == id && g.finished_unix_ms.is_some())
        }
    })
    .await;
    let game = ladder_games(&mut ladders_client)
        .await
        .into_iter()
        .find(|g| g.game_id == matched.game_id)
        .expect("its game");
    assert!(game.outcome.is_some() && !game.void, "{game:?}");
}
