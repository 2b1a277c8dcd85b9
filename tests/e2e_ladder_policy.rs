//! End to end: a ladder server's policy flags. `--open-registration` lets anyone
//! register a bot (no key, or the player key) while creating ladders still needs the admin key;
//! `--ladder-games-per-hour` caps the games one bot key is matched to per sliding hour: once a
//! bot has had its share, its Queue stream says so once (`capped`: which cap, its flag and
//! limit, until when), the standings mark it capped with the reason, and it is not matched
//! again; a Queue call then opens a stream that says the same at once.

use crate::common;

use common::*;
use gangs_proto::auth::ApiKey;
use gangs_proto::v1 as pb;
use pb::ladders_client::LaddersClient;
use std::time::Duration;
use tonic::Code;

const ADMIN: &str = "admin-secret-policy-1";
const PLAYER: &str = "player-secret-policy-2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_registration_and_the_hourly_cap() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with_env(
        dir.path(),
        &[
            "--api-key",
            ADMIN,
            "--player-key",
            PLAYER,
            "--open-registration",
            "--ladder-games-per-hour",
            "1",
        ],
        &[],
    );
    let channel = gangs_proto::connect::endpoint(&server.url(), None)
        .unwrap()
        .connect_lazy();
    let mut admin =
        LaddersClient::with_interceptor(channel.clone(), ApiKey::new(Some(ADMIN)).unwrap());
    let mut player =
        LaddersClient::with_interceptor(channel.clone(), ApiKey::new(Some(PLAYER)).unwrap());
    let mut anyone = LaddersClient::new(channel);
    let create = pb::CreateLadderRequest {
        name: "open".into(),
        kind: "gang-of-four".into(),
        players: Some(3),
        // Nobody here plays: long turns keep the game from being aborted while the test looks.
        turn_ms: Some(60_000),
        ..Default::default()
    };
    // Creating a ladder still needs the admin key.
    let refused = player
        .create_ladder(create.clone())
        .await
        .expect_err("refused");
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    admin
        .create_ladder(create)
        .await
        .expect("create the ladder");

    // Anyone registers: without a key, with the player key.
    let mut keys = Vec::new();
    for (i, bot) in ["a", "b", "c"].iter().enumerate() {
        let request = pb::RegisterBotRequest {
            ladder: "open".into(),
            bot: bot.to_string(),
            version: String::new(),
        };
        let answer = if i == 0 {
            anyone.register_bot(request).await
        } else {
            player.register_bot(request).await
        };
        keys.push(answer.expect("open registration").into_inner().bot_key);
    }

    // Three bots queue: one game each, which is the hour's share.
    let mut streams = Vec::new();
    for key in &keys {
        let stream = anyone
            .queue(pb::QueueRequest {
                ladder: "open".into(),
                bot_key: key.clone(),
                max_concurrent: 2,
                ..Default::default()
            })
            .await
            .expect("queue")
            .into_inner();
        streams.push(stream);
    }
    let mut matched = Vec::new();
    for stream in &mut streams {
        let game = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let event = stream.message().await.expect("event").expect("open stream");
                if let Some(pb::ladder_event::Event::Matched(m)) = event.event {
                    return m.game_id;
                }
            }
        })
        .await
        .expect("matched within 30 s");
        matched.push(game);
    }
    assert!(matched.windows(2).all(|w| w[0] == w[1]), "{matched:?}");

    // Each open stream hears once that its bot reached the cap, and until when.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    for stream in &mut streams {
        let capped = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let event = stream.message().await.expect("event").expect("open stream");
                if let Some(pb::ladder_event::Event::Capped(c)) = event.event {
                    return c;
                }
            }
        })
        .await
        .expect("the capped event within 30 s");
        assert_eq!(
            (capped.cap.as_str(), capped.flag.as_str(), capped.limit),
            ("games per hour", "--ladder-games-per-hour", 1)
        );
        assert!(
            capped.until_unix_ms > now + 3_500_000 && capped.until_unix_ms <= now + 3_600_000,
            "until the match is an hour old: {capped:?}"
        );
        assert!(
            capped.detail.contains("--ladder-games-per-hour"),
            "{capped:?}"
        );
    }
    // The standings say it too.
    let table = player
        .standings(pb::StandingsRequest {
            ladder: "open".into(),
            fit: false,
            season: 0,
        })
        .await
        .unwrap()
        .into_inner();
    for row in &table.standings {
        assert_eq!(row.state, pb::BotState::Capped as i32, "{row:?}");
        assert!(
            row.state_reason.contains("--ladder-games-per-hour"),
            "{row:?}"
        );
        assert!(row.capped_until_unix_ms > now, "{row:?}");
        assert!(!row.paused, "a cap is not a pause: {row:?}");
    }
    // A new Queue call (it replaces the first stream) opens, and says at once that it is capped.
    let mut again = anyone
        .queue(pb::QueueRequest {
            ladder: "open".into(),
            bot_key: keys[0].clone(),
            ..Default::default()
        })
        .await
        .expect("a capped bot's Queue opens")
        .into_inner();
    // Its game in play comes again first (not acknowledged), then the cap.
    let capped = loop {
        let event = again.message().await.expect("event").expect("open stream");
        match event.event {
            Some(pb::ladder_event::Event::Capped(c)) => break c,
            Some(pb::ladder_event::Event::Matched(m)) => assert_eq!(m.game_id, matched[0]),
            other => panic!("the cap comes at once: {other:?}"),
        }
    };
    assert_eq!(capped.flag, "--ladder-games-per-hour");
    // No second game within the hour: the stream's next event is its heartbeat (five seconds
    // of matchmaker rounds, one a second), not a match.
    loop {
        let next = again.message().await.expect("event").expect("open stream");
        match next.event {
            Some(pb::ladder_event::Event::Heartbeat(_)) => break,
            Some(pb::ladder_event::Event::Matched(m)) => {
                panic!("a capped bot was matched again: {m:?}")
            }
            _ => {}
        }
    }
    let games = player
        .ladder_games(pb::LadderGamesRequest {
            ladder: "open".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .games;
    assert_eq!(games.len(), 1, "{games:?}");
}
