//! `gangs-server migrate --from DIR --to nats://...` end to end: a sled data dir with a finished
//! game and a game still waiting for players is copied into JetStream; a server on the NATS
//! store then serves both, byte for byte, and the waiting game goes on (its seat token still
//! works). Run twice, the migration copies nothing more.
//!
//! And a data dir written by the server of the layout before the store's namespaces (ladders'
//! logs among the games' logs; `tests/fixtures/data-dir-before-namespaces.tar.gz`) served by
//! this one: the ladder's standings as they were, its games listed and replayable, no ladder's
//! log among the games, the same after a restart and after `migrate` into JetStream.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use std::process::Command;
use std::time::Duration;

/// Runs `gangs-server migrate` and returns (exit code, stdout + stderr).
fn migrate(from: &std::path::Path, to: &str) -> (i32, String) {
    let output = Command::new(bin("gangs-server"))
        .args(["migrate", "--from"])
        .arg(from)
        .args(["--to", to])
        .env("RUST_LOG", "warn")
        .output()
        .expect("run gangs-server migrate");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sled_data_dir_moves_into_jetstream_and_plays_on() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sled");

    // On sled: one game played to its end by bots, one waiting with one seat taken.
    let mut sled = Server::start(&data);
    let mut client = sled.client().await;
    let finished = create(&mut client, "gang-of-four", None, 41).await;
    let mut bots: Vec<_> = (0..4)
        .map(|seat| {
            spawn_bot(
                "gangs-bot-random",
                &sled,
                &finished,
                Some(seat),
                7 + seat as u64,
            )
        })
        .collect();
    for bot in &mut bots {
        assert!(wait_with_timeout(bot, Duration::from_secs(120)).success());
    }
    assert_eq!(
        status(&mut client, &finished).await.status,
        pb::GameStatus::Finished as i32
    );
    let waiting = create(&mut client, "the-gang", None, 42).await;
    let join = |seat: u32| pb::JoinGameRequest {
        game_id: waiting.clone(),
        seat: Some(seat),
        name: format!("crew {seat}"),
        ..Default::default()
    };
    let token = client.join_game(join(0)).await.unwrap().into_inner().token;
    let finished_log = log(&mut client, &finished).await;
    let waiting_log = log(&mut client, &waiting).await;
    drop(client);
    sled.kill9();

    // A directory that is not a data dir is refused with one clear line.
    let nats = nats::single();
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, out) = migrate(&empty, &nats.url());
    assert_ne!(code, 0, "an empty dir is not a data dir: {out}");
    assert!(out.contains("not a gangs data dir"), "{out}");

    let (code, out) = migrate(&data, &nats.url());
    assert_eq!(code, 0, "migrate failed: {out}");
    assert!(out.contains("migrated 2 game(s)"), "{out}");
    let records = finished_log.len() + waiting_log.len();
    assert!(out.contains(&format!("{records} record(s)")), "{out}");
    // Again: nothing more is copied.
    let (code, out) = migrate(&data, &nats.url());
    assert_eq!(code, 0, "a second migrate failed: {out}");
    assert!(out.contains("2 log(s) were already there"), "{out}");

    // A server on JetStream (and an empty data dir) serves both games from the copied log.
    let store_dir = dir.path().join("unused");
    let server = Server::start_with(&store_dir, 0, &["--store", &nats.url()]);
    let mut client = server.client().await;
    assert_eq!(log(&mut client, &finished).await, finished_log);
    assert_eq!(log(&mut client, &waiting).await, waiting_log);
    assert_eq!(
        status(&mut client, &finished).await.status,
        pb::GameStatus::Finished as i32
    );
    let (code, out) = gangs_cli(&server, &["replay", &finished, "--verify"]);
    assert_eq!(code, 0, "replay --verify after the migration: {out}");

    // The waiting game fills and starts; the seat taken on sled keeps its token.
    for seat in 1..4 {
        client.join_game(join(seat)).await.unwrap();
    }
    let mut updates = client
        .watch(pb::WatchRequest {
            game_id: waiting.clone(),
            token: token.clone(),
            from_seq: 0,
            ..Default::default()
        })
        .await
        .expect("the migrated token watches its seat")
        .into_inner();
    let mut running = false;
    while let Some(update) = tokio::time::timeout(Duration::from_secs(10), updates.message())
        .await
        .expect("an update within 10 s")
        .expect("the stream stays up")
    {
        assert_eq!(update.seat, Some(0));
        if update.status == pb::GameStatus::Running as i32 {
            running = true;
            break;
        }
    }
    assert!(running, "the migrated game starts once every seat is taken");
}

/// What the fixture's server showed before it was killed (`gangs ladder standings classic`):
/// each house bot's rated games and wins, all three paused by the organizer.
const FIXTURE_STANDINGS: [(&str, u32, u32); 3] = [
    ("house-search", 119, 57),
    ("house-greedy", 119, 57),
    ("house-random", 119, 5),
];
/// The fixture's two plain games, waiting for players when it was written.
const FIXTURE_GAMES: [&str; 2] = ["6f0ea73a59178235", "6905d78c20394b9b"];

/// Every game the server lists, through every page.
async fn every_listed_game(
    client: &mut pb::games_client::GamesClient<tonic::transport::Channel>,
) -> Vec<pb::GameSummary> {
    let mut games = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = client
            .list_games(pb::ListGamesRequest {
                page_token,
                ..Default::default()
            })
            .await
            .expect("list")
            .into_inner();
        games.extend(page.games);
        if page.next_page_token.is_empty() {
            return games;
        }
        page_token = page.next_page_token;
    }
}

/// The fixture's ladder as this server serves it: its standings, and its games, each listed
/// as a game (never a ladder's log) with a log that replays. `listed`: check the listing (a
/// cluster lists a copied game once a node ran it).
async fn check_fixture_served(server: &Server, listed: bool) {
    let mut ladders = crate::e2e_ladder::ladders(server).await;
    let standings = common::ladder::standings(&mut ladders, "classic").await;
    let mut got: Vec<(String, u32, u32, bool)> = standings
        .standings
        .iter()
        .map(|s| (s.bot.clone(), s.games, s.wins, s.paused))
        .collect();
    got.sort();
    let mut want: Vec<(String, u32, u32, bool)> = FIXTURE_STANDINGS
        .iter()
        .map(|(bot, games, wins)| (bot.to_string(), *games, *wins, true))
        .collect();
    want.sort();
    assert_eq!(got, want, "the standings the earlier server showed");
    let ladder_games = common::ladder::ladder_games(&mut ladders, "classic", 50).await;
    let rated = ladder_games
        .iter()
        .filter(|g| g.void_reason.is_empty())
        .count();
    assert_eq!(
        (ladder_games.len(), rated),
        (121, 119),
        "121 results, 2 void"
    );

    // A ladder game's log replays.
    let (code, out) = gangs_cli(server, &["replay", &ladder_games[0].game_id, "--verify"]);
    assert_eq!(code, 0, "replay --verify: {out}");
    if !listed {
        return;
    }
    let mut client = server.client().await;
    let listed = every_listed_game(&mut client).await;
    let ids: std::collections::HashSet<&str> = listed.iter().map(|g| g.game_id.as_str()).collect();
    for game in &listed {
        assert!(
            game.game_id.chars().all(|c| c.is_ascii_hexdigit()),
            "a ladder's log is listed as a game: {}",
            game.game_id
        );
    }
    for id in FIXTURE_GAMES {
        assert!(ids.contains(id), "{id} listed");
    }
    for game in &ladder_games {
        assert!(
            ids.contains(game.game_id.as_str()),
            "{} listed",
            game.game_id
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_dir_of_the_earlier_layout_serves_its_ladder_and_games() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let fixture = repo_root().join("tests/fixtures/data-dir-before-namespaces.tar.gz");
    let unpacked = Command::new("tar")
        .arg("xzf")
        .arg(&fixture)
        .arg("-C")
        .arg(&data)
        .status()
        .expect("run tar");
    assert!(unpacked.success(), "unpacking {}", fixture.display());

    let mut server = Server::start(&data);
    check_fixture_served(&server, true).await;
    // The second open finds everything where the first put it.
    server.restart();
    check_fixture_served(&server, true).await;
    server.kill9();

    // `migrate` copies each namespace into its own: the ladder is served from JetStream too.
    let nats = nats::single();
    let (code, out) = migrate(&data, &nats.url());
    assert_eq!(code, 0, "migrate failed: {out}");
    assert!(out.contains(", 1 ladder(s), "), "{out}");
    let server = Server::start_with(&dir.path().join("unused"), 0, &["--store", &nats.url()]);
    check_fixture_served(&server, false).await;
}
