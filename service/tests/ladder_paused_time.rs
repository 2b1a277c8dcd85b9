//! A ladder on tokio's paused time, in process: the hourly cap, a planned season end and a
//! pause, each over hours or days of the ladder's own clock that the test moves, and each
//! across a restart (the host dropped and rebuilt from its logs). The logs are in memory
//! (`common::MemoryStore`): a store with threads of its own would let the paused clock run
//! ahead while the runtime waits for them. The house bots decide on tokio's blocking pool,
//! which holds the paused clock while they think (the search bot thinks in real time: the
//! hourly cap of one game keeps the real time of hours of play short).

mod common;

use common::ladder_host::{LadderHost, MemoryLogs};
use gangs_proto::v1 as pb;
use gangs_service::actor::unix_ms;
use pb::ladders_server::Ladders;
use std::time::Duration;
use tonic::Request;

const LADDER: &str = "paused";

/// The host over two logs in memory, as `gangs-server` wires it.
type Host = LadderHost;

impl LadderHost {
    async fn standings(&self, season: u32) -> pb::StandingsResponse {
        self.ladders
            .standings(Request::new(pb::StandingsRequest {
                ladder: LADDER.into(),
                fit: false,
                season,
            }))
            .await
            .expect("standings")
            .into_inner()
    }

    /// The ladder's games (a page holds them all here).
    async fn games(&self) -> Vec<pb::LadderGame> {
        self.ladders
            .ladder_games(Request::new(pb::LadderGamesRequest {
                ladder: LADDER.into(),
                page_size: 500,
                ..Default::default()
            }))
            .await
            .expect("games")
            .into_inner()
            .games
    }
}

/// A Gang of Four ladder of three seats and the three house bots the game ships (random,
/// greedy, search), one short deal a game.
async fn create(host: &Host, season_ends_unix_ms: Option<i64>) {
    host.ladders
        .create_ladder(Request::new(pb::CreateLadderRequest {
            name: LADDER.into(),
            kind: "gang-of-four".into(),
            players: Some(3),
            options: [("target_score".to_string(), "1".to_string())].into(),
            turn_ms: Some(1000),
            house_bots: vec!["random".into(), "greedy".into(), "search".into()],
            season_ends_unix_ms,
            ..Default::default()
        }))
        .await
        .expect("create");
}

fn logs() -> MemoryLogs {
    (Default::default(), Default::default())
}

#[tokio::test(start_paused = true)]
async fn the_hourly_cap_holds_every_entry_to_its_games_until_the_hour_has_passed() {
    let logs = logs();
    let host = Host::start(&logs, 1).await;
    let start = unix_ms();
    create(&host, None).await;
    // Ten minutes: one game, then every entry capped until its match is an hour old.
    tokio::time::sleep(Duration::from_secs(600)).await;
    let games = host.games().await;
    assert_eq!(games.len(), 1, "{games:?}");
    assert!(games[0].finished_unix_ms.is_some(), "{games:?}");
    let table = host.standings(0).await.standings;
    assert_eq!(table.len(), 3, "{table:?}");
    for row in &table {
        assert_eq!(row.state, pb::BotState::Capped as i32, "{row:?}");
        assert!(
            row.capped_until_unix_ms > start + 3_500_000
                && row.capped_until_unix_ms <= start + 3_601_000,
            "{row:?}"
        );
    }
    // A restart keeps the cap: it is counted from the log, not from memory.
    host.stop().await;
    let host = Host::start(&logs, 1).await;
    tokio::time::sleep(Duration::from_secs(40 * 60)).await;
    assert_eq!(host.games().await.len(), 1, "capped across a restart");
    // Past the hour: the next game.
    tokio::time::sleep(Duration::from_secs(15 * 60)).await;
    let mut games = host.games().await;
    assert_eq!(games.len(), 2, "{games:?}");
    games.sort_by_key(|g| g.matched_unix_ms);
    assert!(
        games[1].matched_unix_ms >= games[0].matched_unix_ms + 3_600_000,
        "matched again before the hour was over: {games:?}"
    );
    host.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_planned_season_ends_on_time_and_its_table_stays_frozen_across_a_restart() {
    let logs = logs();
    let host = Host::start(&logs, 1).await;
    let ends = unix_ms() + 3 * 3_600_000;
    create(&host, Some(ends)).await;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let during = host.standings(0).await;
    assert_eq!(during.season.as_ref().expect("season").number, 1);
    assert!(during.standings.iter().all(|r| r.games > 0), "{during:?}");
    // Three hours later the season is over: season 2 runs, season 1's table is frozen.
    tokio::time::sleep(Duration::from_secs(3 * 3600)).await;
    let now = host.standings(0).await;
    let season = now.season.as_ref().expect("season");
    assert_eq!(season.number, 2, "{now:?}");
    let frozen = host.standings(1).await;
    let ended = frozen
        .season
        .as_ref()
        .and_then(|s| s.ended_unix_ms)
        .expect("season 1 ended");
    assert!(
        (ends..ends + 2_000).contains(&ended),
        "ended at {ended}, planned {ends}"
    );
    host.stop().await;
    let host = Host::start(&logs, 1).await;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(host.standings(1).await.standings, frozen.standings);
    assert_eq!(
        host.standings(0).await.season.expect("season").number,
        2,
        "still season 2"
    );
    host.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_admin_pause_holds_across_a_restart_and_hours_of_play() {
    let logs = logs();
    let host = Host::start(&logs, 1).await;
    create(&host, None).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let table = host.standings(0).await.standings;
    assert_eq!(table.len(), 3, "{table:?}");
    let paused = table[0].clone();
    host.ladders
        .pause_bot(Request::new(pb::PauseBotRequest {
            ladder: LADDER.into(),
            bot: paused.bot.clone(),
            version: paused.version.clone(),
            resume: false,
        }))
        .await
        .expect("pause");
    // Its game in play ends; then it plays no more, across a restart and two hours.
    tokio::time::sleep(Duration::from_secs(60)).await;
    let games_then = standing(&host, &paused).await.games;
    host.stop().await;
    let host = Host::start(&logs, 1).await;
    tokio::time::sleep(Duration::from_secs(7200)).await;
    let row = standing(&host, &paused).await;
    assert!(row.paused, "{row:?}");
    assert_eq!(row.games, games_then, "a paused entry played: {row:?}");
    // Nobody else played either: with one of three entries paused no table can be made (a
    // pause lifted by the restart would have shown as a game once the hour's cap freed).
    let games = host.games().await;
    assert!(
        games.iter().all(|g| g.finished_unix_ms.is_some()),
        "{games:?}"
    );
    host.stop().await;
}

async fn standing(host: &Host, of: &pb::Standing) -> pb::Standing {
    host.standings(0)
        .await
        .standings
        .into_iter()
        .find(|r| r.bot == of.bot && r.version == of.version)
        .expect("the entry's row")
}
