//! End to end: a Gang of Four ladder on the real binaries. The CLI creates it and
//! registers four bots (greedy and three random), each a real bot binary run with `--ladder
//! --bot-key --games 20 --concurrent 2`. The server is SIGKILLed and restarted mid-ladder; the
//! bots ride it out and finish their games. Then: every bot played its games and exited 0;
//! every ladder game is over, has clocks and replays (`gangs replay --verify`); no game was
//! lost (every game listed before the kill is rated after) or rated twice (each rated game
//! counts once per seat in the standings). A bot that queues and never plays is paused for its
//! timeouts (its Queue stream says why) while the others keep playing. Bad input gets its
//! status.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use pb::ladders_client::LaddersClient;
use std::collections::{HashMap, HashSet};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tonic::transport::Channel;
use tonic::Code;

pub(crate) const LADDER: &str = "class";
const GAMES_PER_BOT: u32 = 20;

pub(crate) async fn ladders(server: &Server) -> LaddersClient<Channel> {
    for _ in 0..100 {
        let endpoint = gangs_proto::connect::endpoint(&server.url(), None).expect("endpoint");
        if let Ok(channel) = endpoint.connect().await {
            return LaddersClient::new(channel);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("cannot connect to {}", server.url());
}

pub(crate) fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// `gangs ladder create LADDER --kind KIND` and `args`: the CLI's exit code and output.
pub(crate) fn create_ladder(server: &Server, kind: &str, args: &[&str]) -> (i32, String) {
    let mut all = vec!["ladder", "create", LADDER, "--kind", kind];
    all.extend_from_slice(args);
    gangs_cli(server, &all)
}

/// Registers `bot` with the CLI; its key.
pub(crate) fn register(server: &Server, bot: &str) -> String {
    let (code, out) = gangs_cli(server, &["ladder", "register", LADDER, bot, "--json"]);
    assert_eq!(code, 0, "register {bot}: {out}");
    let value = json(&out);
    assert_eq!(value["bot"], bot);
    assert_eq!(value["version"], "1");
    value["bot_key"].as_str().expect("bot_key").to_string()
}

/// A bot binary playing the ladder.
pub(crate) fn ladder_bot(
    binary: &str,
    server: &Server,
    key: &str,
    games: Option<u32>,
    seed: u64,
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
        .args(["--concurrent", "2", "--seed", &seed.to_string()])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if let Some(games) = games {
        command.args(["--games", &games.to_string()]);
    }
    Bot(command
        .spawn()
        .unwrap_or_else(|e| panic!("start {binary}: {e}")))
}

pub(crate) async fn standings(client: &mut LaddersClient<Channel>) -> pb::StandingsResponse {
    client
        .standings(pb::StandingsRequest {
            ladder: LADDER.into(),
            fit: false,
            season: 0,
        })
        .await
        .expect("standings")
        .into_inner()
}

/// Every game of the ladder, newest first, through every page (7 a page: several pages).
pub(crate) async fn ladder_games(client: &mut LaddersClient<Channel>) -> Vec<pb::LadderGame> {
    common::ladder::ladder_games(client, LADDER, 7).await
}

pub(crate) async fn rated(client: &mut LaddersClient<Channel>) -> usize {
    ladder_games(client)
        .await
        .iter()
        .filter(|g| g.outcome.is_some())
        .count()
}

/// Every game of `games` is over and rated (not void), was created with a clock of `turn_ms`
/// per decision, and replays (`gangs replay --verify`).
pub(crate) async fn every_game_has_clocks_and_replays(
    server: &Server,
    games: &[pb::LadderGame],
    turn_ms: u64,
) {
    let mut games_client = server.client().await;
    for game in games {
        assert!(!game.void, "a void game: {game:?}");
        let records = log(&mut games_client, &game.game_id).await;
        let Some(pb::log_record::Record::Created(created)) = &records[0].record else {
            panic!("{}: no created record", game.game_id);
        };
        let replica = gangs_games::new_game(&created.kind, created.options.as_ref(), 0, None)
            .unwrap_or_else(|e| panic!("{}: its options do not make a game: {e}", game.game_id));
        assert_eq!(
            replica.clock().turn_ms,
            turn_ms,
            "{}: no clock",
            game.game_id
        );
        let (code, out) = gangs_cli(server, &["replay", &game.game_id, "--verify"]);
        assert_eq!(code, 0, "{}: replay --verify failed: {out}", game.game_id);
    }
}

/// The organizer pauses every bot of `names`; waits until every game in play is over.
pub(crate) async fn pause_all_until_games_end(
    server: &Server,
    client: &LaddersClient<Channel>,
    names: &[&str],
) {
    for name in names {
        let (code, out) = gangs_cli(server, &["ladder", "pause", LADDER, name]);
        assert_eq!(code, 0, "{out}");
    }
    every_game_over(client, 300).await;
}

/// Waits until every game of the ladder is over; panics after `secs`.
pub(crate) async fn every_game_over(client: &LaddersClient<Channel>, secs: u64) {
    until("every ladder game over", secs, || {
        let mut client = client.clone();
        async move {
            ladder_games(&mut client)
                .await
                .iter()
                .all(|g| g.finished_unix_ms.is_some())
        }
    })
    .await;
}

/// Waits until `check` holds, polling; panics after `secs`.
pub(crate) async fn until<F, Fut>(what: &str, secs: u64, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "{what}: not within {secs} s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gang_of_four_ladder_plays_rates_and_survives_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let (code, out) = create_ladder(
        &server,
        "gang-of-four",
        &["--option", "target_score=1", "--turn-ms", "300", "--json"],
    );
    assert_eq!(code, 0, "{out}");
    let created = json(&out);
    assert_eq!(
        (created["players"].as_u64(), created["turn_ms"].as_u64()),
        (Some(4), Some(300))
    );
    assert_eq!(created["absent_after"], 3);

    let mut client = ladders(&server).await;
    bad_input_is_refused(&server, &mut client).await;

    let names = ["greedy", "random-a", "random-b", "random-c"];
    let keys: Vec<String> = names.iter().map(|n| register(&server, n)).collect();
    let binary = |name: &str| {
        if name == "greedy" {
            "gangs-bot-greedy"
        } else {
            "gangs-bot-random"
        }
    };
    let mut bots: Vec<Bot> = names
        .iter()
        .zip(&keys)
        .enumerate()
        .map(|(i, (name, key))| {
            ladder_bot(
                binary(name),
                &server,
                key,
                Some(GAMES_PER_BOT),
                i as u64 + 1,
            )
        })
        .collect();

    // Mid-ladder: a few games rated, more running.
    until("six rated games", 120, || {
        let mut client = client.clone();
        async move { rated(&mut client).await >= 6 }
    })
    .await;
    let before_kill = ladder_games(&mut client).await;
    server.restart();
    let mut client = ladders(&server).await;

    for bot in &mut bots {
        let status = wait_with_timeout(bot, Duration::from_secs(240));
        assert!(status.success(), "a ladder bot failed: {status:?}");
    }
    // Games matched to a bot that had played its share are played on its clock: all end.
    every_game_over(&client, 120).await;

    let games = ladder_games(&mut client).await;
    let ids: HashSet<&str> = games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids.len(), games.len(), "a game listed twice");
    assert!(
        games.len() >= GAMES_PER_BOT as usize,
        "{} games",
        games.len()
    );
    assert!(
        games.iter().all(|g| !g.void && g.outcome.is_some()),
        "a void game: {games:?}"
    );
    for game in &before_kill {
        let after = games
            .iter()
            .find(|g| g.r#match == game.r#match)
            .unwrap_or_else(|| panic!("match {} was lost in the restart", game.r#match));
        assert!(after.outcome.is_some());
        if !game.game_id.is_empty() {
            assert_eq!(after.game_id, game.game_id);
        }
    }

    // Each rated game counts once per seat: none rated twice, none missing.
    let table = standings(&mut client).await;
    let mut seats: HashMap<String, u32> = HashMap::new();
    for game in &games {
        assert_eq!(game.names.len(), 4);
        let distinct: HashSet<&String> = game.names.iter().collect();
        assert_eq!(
            distinct.len(),
            4,
            "a bot twice at one table: {:?}",
            game.names
        );
        for name in &game.names {
            *seats.entry(name.clone()).or_default() += 1;
        }
    }
    // "twice" was registered and retired before the ladder started: listed, never played.
    let retired: Vec<_> = table.standings.iter().filter(|r| r.retired).collect();
    assert_eq!(retired.len(), 1);
    assert_eq!((retired[0].bot.as_str(), retired[0].games), ("twice", 0));
    let table_rows: Vec<_> = table.standings.iter().filter(|r| !r.retired).collect();
    assert_eq!(table_rows.len(), 4);
    for row in table_rows {
        let name = format!("{}@{}", row.bot, row.version);
        assert_eq!(row.games, seats[&name], "{name}: {row:?}");
        assert!(
            row.games >= GAMES_PER_BOT,
            "{name} played {} games",
            row.games
        );
        assert_eq!(row.playing, 0);
        let rating = row.rating.unwrap();
        assert!(rating.sigma < 25.0 / 3.0, "{name}: sigma never moved");
        assert!((row.conservative - (rating.mu - 3.0 * rating.sigma)).abs() < 1e-9);
        assert!(row.win_share_low <= row.win_share && row.win_share <= row.win_share_high);
    }
    let sorted: Vec<f64> = table.standings.iter().map(|r| r.conservative).collect();
    assert!(sorted.windows(2).all(|w| w[0] >= w[1]), "{sorted:?}");
    assert_eq!(table.ladder.unwrap().games, games.len() as u64);

    every_game_has_clocks_and_replays(&server, &games, 300).await;

    // The CLI shows the same table.
    let (code, out) = gangs_cli(&server, &["ladder", "standings", LADDER, "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(json(&out)["standings"].as_array().map(Vec::len), Some(5));
    let (code, out) = gangs_cli(&server, &["ladder", "standings", LADDER]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("greedy@1") && out.contains("random-c@1"),
        "{out}"
    );
    // Recomputed from the games' own logs after the SIGKILL: the same table.
    let (code, out) = gangs_cli(&server, &["ladder", "rerate", LADDER, "--json"]);
    assert_eq!(code, 0, "{out}");
    let rerated = json(&out);
    assert_eq!(rerated["same"], true, "{out}");
    assert_eq!(rerated["games"].as_u64(), Some(games.len() as u64), "{out}");
    let kept = json(&gangs_cli(&server, &["ladder", "standings", LADDER, "--json"]).1);
    assert_eq!(rerated["standings"], kept["standings"], "{out}");
    let (code, out) = gangs_cli(&server, &["ladder", "rerate", LADDER]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("the same as the kept standings"), "{out}");
    let (code, out) = gangs_cli(&server, &["ladder", "rerate", "no-such-ladder"]);
    assert_ne!(code, 0, "{out}");
    let (code, out) = gangs_cli(&server, &["ladder", "list"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(LADDER) && out.contains("gang-of-four"),
        "{out}"
    );
    let (code, out) = gangs_cli(
        &server,
        &["ladder", "games", LADDER, "--json", "--limit", "500"],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        json(&out)["games"].as_array().map(Vec::len),
        Some(games.len())
    );

    a_silent_bot_is_paused_and_the_others_play_on(&server, &mut client, &keys).await;
}

/// A bot that queues and never plays: its first decision times out before it acted, so its
/// game is aborted at once (void, with the reason, not rated) and the bot paused with the
/// reason (its Queue stream and the standings say why); the others keep playing.
async fn a_silent_bot_is_paused_and_the_others_play_on(
    server: &Server,
    client: &mut LaddersClient<Channel>,
    keys: &[String],
) {
    let silent_key = register(server, "silent");
    let _bots: Vec<Bot> = [
        "gangs-bot-greedy",
        "gangs-bot-random",
        "gangs-bot-random",
        "gangs-bot-random",
    ]
    .iter()
    .zip(keys)
    .enumerate()
    .map(|(i, (binary, key))| ladder_bot(binary, server, key, None, 100 + i as u64))
    .collect();
    let mut events = client
        .queue(pb::QueueRequest {
            ladder: LADDER.into(),
            bot_key: silent_key,
            max_concurrent: 1,
            ..Default::default()
        })
        .await
        .expect("queue")
        .into_inner();
    let mut matched = None;
    let paused = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let event = events.message().await.expect("queue stream").expect("open");
            match event.event.expect("an event") {
                pb::ladder_event::Event::Matched(m) => matched = Some(m.game_id),
                pb::ladder_event::Event::Paused(p) => return p,
                _ => {}
            }
        }
    })
    .await
    .expect("the silent bot was not paused within 120 s");
    assert_eq!(
        paused.reason,
        pb::ladder_event::paused::Reason::NoFirstAction as i32
    );
    assert!(
        paused.detail.contains("first decision"),
        "{}",
        paused.detail
    );
    let game = matched.expect("the silent bot was matched before its pause");
    let row = standings(client)
        .await
        .standings
        .into_iter()
        .find(|r| r.bot == "silent")
        .expect("silent in the standings");
    assert!(row.paused && row.games == 0, "{row:?}");
    assert_eq!(row.state, pb::BotState::Paused as i32, "{row:?}");
    assert_eq!(
        row.pause_reason,
        pb::ladder_event::paused::Reason::NoFirstAction as i32
    );
    assert_eq!(row.state_reason, paused.detail);
    assert!(row.paused_since_unix_ms > 0, "{row:?}");
    let its = until_over(client, &game).await;
    assert!(its.void, "its game is void: {its:?}");
    assert!(
        its.void_reason.contains("first decision") && its.void_reason.contains("silent@1"),
        "{its:?}"
    );
    // Nobody at its table was rated for it.
    // Its stream hears the game void, its rating untouched.
    let finished = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let event = events.message().await.expect("queue stream").expect("open");
            if let Some(pb::ladder_event::Event::Finished(f)) = event.event {
                if f.game_id == game {
                    return f;
                }
            }
        }
    })
    .await
    .expect("the void game's finished event");
    assert!(
        finished.void && finished.void_reason == its.void_reason,
        "{finished:?}"
    );
    assert_eq!(finished.rating_before, finished.rating_after);
    let (code, out) = gangs_cli(server, &["ladder", "games", LADDER]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("void (not rated): aborted"), "{out}");
    // The four others play on without it.
    let rated_then = rated(client).await;
    until("games rated after the pause", 120, || {
        let mut client = client.clone();
        async move { rated(&mut client).await >= rated_then + 2 }
    })
    .await;
    let last = ladder_games(client).await;
    assert!(
        last[0].names.iter().all(|n| n != "silent@1"),
        "{:?}",
        last[0]
    );
}

/// The ladder game `game_id` once it is over (rated or void).
async fn until_over(client: &mut LaddersClient<Channel>, game_id: &str) -> pb::LadderGame {
    let start = Instant::now();
    loop {
        let games = ladder_games(client).await;
        if let Some(g) = games
            .into_iter()
            .find(|g| g.game_id == game_id && g.finished_unix_ms.is_some())
        {
            return g;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "game {game_id} not over"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn bad_input_is_refused(server: &Server, client: &mut LaddersClient<Channel>) {
    let status = client
        .standings(pb::StandingsRequest {
            ladder: "nope".into(),
            fit: false,
            season: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let status = client
        .queue(pb::QueueRequest {
            ladder: LADDER.into(),
            bot_key: "not-a-key".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    let status = client
        .create_ladder(pb::CreateLadderRequest {
            name: LADDER.into(),
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::AlreadyExists, "{status:?}");
    let status = client
        .create_ladder(pb::CreateLadderRequest {
            name: "bad name!".into(),
            kind: "gang-of-four".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let (code, out) = gangs_cli(server, &["ladder", "register", LADDER, "twice"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = gangs_cli(server, &["ladder", "register", LADDER, "twice"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("ALREADY_EXISTS") || out.contains("already"),
        "{out}"
    );
    // Retired: it never plays, and its key is refused.
    let (code, out) = gangs_cli(server, &["ladder", "retire", LADDER, "twice", "--yes"]);
    assert_eq!(code, 0, "{out}");
}
