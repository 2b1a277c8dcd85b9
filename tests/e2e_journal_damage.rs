//! End to end: the real server, games played by the shipped random bots, SIGKILLed, one byte of
//! a middle entry of its journal flipped (as a bad sector would), restarted. The games that had
//! records in that entry are listed as damaged (gRPC and `gangs games`), the others resume with
//! every acknowledged action, and one ERROR line names the journal, the offset and the damaged
//! games. With `--on-journal-damage refuse` the same damage stops the start: exit code 1, the
//! message on stderr.

use crate::common;

use common::*;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "../service/tests/common/journal.rs"]
mod journal;

use journal::HEADER;

/// Each whole entry of the journal: its offset and the ids of the games it holds.
fn journal_entries(bytes: &[u8]) -> Vec<(usize, BTreeSet<String>)> {
    let starts = journal::entry_starts(bytes);
    starts[..starts.len() - 1]
        .iter()
        .map(|&at| {
            let appends = journal::appends_in(bytes, at).into_iter();
            (at, appends.map(|(id, _)| id).collect())
        })
        .collect()
}

/// Flips a byte of the payload of an entry in the middle of the journal, one with records of
/// a single game where there is one; answers the entry's offset and its games.
fn damage_a_middle_entry(data_dir: &Path) -> (usize, BTreeSet<String>) {
    let path = data_dir.join("journal");
    let mut bytes = std::fs::read(&path).unwrap();
    let entries = journal_entries(&bytes);
    assert!(entries.len() > 30, "{} entries", entries.len());
    let middle = &entries[entries.len() / 3..2 * entries.len() / 3];
    let (at, games) = middle
        .iter()
        .find(|(_, games)| games.len() == 1)
        .unwrap_or(&middle[0])
        .clone();
    // Past the header, the append count, the first id's length and the id itself.
    bytes[at + HEADER + 4 + 2 + 16 + 4 + 8 + 4 + 1] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    (at, games)
}

/// Starts four random bots on a new Gang of Four game.
fn bots_on(server: &Server, game: &str, seed: u64) -> Vec<Bot> {
    (0..4)
        .map(|seat| {
            spawn_bot(
                "gangs-bot-random",
                server,
                game,
                Some(seat),
                seed + seat as u64,
            )
        })
        .collect()
}

/// Waits until every game's log holds at least `seqs` records; answers each game's last seq.
async fn played(server: &Server, games: &[String], seqs: u64) -> HashMap<String, u64> {
    let mut client = server.client().await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let listed = listed_games(&mut client).await;
        let last: HashMap<String, u64> = listed
            .iter()
            .filter(|g| games.contains(&g.game_id))
            .map(|g| (g.game_id.clone(), g.last_seq))
            .collect();
        if last.len() == games.len() && last.values().all(|&s| s >= seqs) {
            return last;
        }
        assert!(
            Instant::now() < deadline,
            "the bots played too slowly: {last:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_journal_entry_costs_only_its_games_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let stderr_log = dir.path().join("server.log");
    let mut server = Server::start_logged(&data_dir, &[], &stderr_log);
    let mut client = server.client().await;
    let mut games = Vec::new();
    let mut bots = Vec::new();
    for seed in 0..3u64 {
        let game = create(&mut client, "gang-of-four", None, 100 + seed).await;
        bots.extend(bots_on(&server, &game, 10 * seed));
        games.push(game);
    }
    let acknowledged = played(&server, &games, 60).await;
    server.kill9();
    drop(bots);
    let (offset, hit) = damage_a_middle_entry(&data_dir);

    server.restart();
    let mut client = server.client().await;
    let listed = listed_games(&mut client).await;
    for game in &games {
        let summary = listed
            .iter()
            .find(|g| &g.game_id == game)
            .expect("every game is listed");
        if hit.contains(game) {
            assert!(summary.damaged, "{game} had records in the damaged entry");
            assert!(summary.damage_reason.contains("journal"), "{summary:?}");
        } else {
            assert!(!summary.damaged, "{game}: {summary:?}");
            assert!(
                summary.last_seq >= acknowledged[game],
                "{game} lost acknowledged actions: {} < {}",
                summary.last_seq,
                acknowledged[game]
            );
        }
    }
    let log = server.stderr_text();
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("ERROR") && l.contains("is damaged (generation"))
        .collect();
    assert_eq!(errors.len(), 1, "one ERROR line about the journal:\n{log}");
    assert!(
        errors[0].contains(&format!("at offset {offset}")),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains(&data_dir.join("journal").display().to_string()));
    for game in &games {
        assert_eq!(
            errors[0].contains(game.as_str()),
            hit.contains(game),
            "{}",
            errors[0]
        );
    }
    let (code, out) = gangs_cli(&server, &["games"]);
    assert_eq!(code, 0, "{out}");
    for game in &hit {
        let line = out.lines().find(|l| l.contains(game.as_str())).expect(game);
        assert!(line.contains("damaged"), "{line}");
    }
    // `--status damaged` lists exactly the damaged games.
    let (code, out) = gangs_cli(&server, &["--json", "games", "--status", "damaged"]);
    assert_eq!(code, 0, "{out}");
    let only: serde_json::Value = serde_json::from_str(&out).expect(&out);
    let mut listed_damaged: Vec<&str> = only["games"]
        .as_array()
        .expect(&out)
        .iter()
        .map(|g| g["game_id"].as_str().expect("game_id"))
        .collect();
    listed_damaged.sort_unstable();
    let mut expected: Vec<&str> = hit.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(listed_damaged, expected, "{out}");
    assert!(
        data_dir.join("journal.damaged-0").exists(),
        "the journal kept aside"
    );

    // Refused: new damage, and the server told to refuse does not start.
    let game = create(&mut client, "gang-of-four", None, 200).await;
    let bots = bots_on(&server, &game, 40);
    played(&server, std::slice::from_ref(&game), 60).await;
    server.kill9();
    drop(bots);
    let (offset, _) = damage_a_middle_entry(&data_dir);
    let before = std::fs::read(data_dir.join("journal")).unwrap();
    let mut refusing = std::process::Command::new(bin("gangs-server"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--on-journal-damage",
            "refuse",
            "--data-dir",
        ])
        .arg(&data_dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_with_timeout(&mut refusing, Duration::from_secs(30));
    let mut stderr = String::new();
    std::io::Read::read_to_string(refusing.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("at offset {offset}")), "{stderr}");
    assert!(stderr.contains("--on-journal-damage refuse"), "{stderr}");
    assert_eq!(
        std::fs::read(data_dir.join("journal")).unwrap(),
        before,
        "nothing changed"
    );
}
