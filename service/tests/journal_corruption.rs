//! Random damage to a journal written by a real run (games played through the service until
//! the process dies): one flipped byte, one sector of zeros, or a cut, at random offsets. For
//! each, the server rebuilds without panicking; every game it serves as running has every
//! acknowledged record and no hole; a game that lost records is listed as damaged, readable
//! up to the damage. Only damage that reaches the journal's last entry may cost acknowledged
//! records unnoticed: it cannot be told from an entry torn by a crash mid-write.

mod common;

use common::journal::{appends_in, entry_starts, run_child_until_it_dies};
use common::Seated;
use gangs_proto::v1 as pb;
use gangs_service::actor::Settings;
use gangs_service::api::GamesService;
use gangs_service::registry::Registry;
use gangs_service::store::sled::SledStore;
use pb::games_server::Games;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use tonic::Request;

const GAMES: usize = 4;
const ACTIONS: usize = 480;
const TRIALS: usize = 36;

/// The child: plays `GAMES` games an action at a time, round robin, writing each action's
/// game and seq to `acks` once it is acknowledged; then aborts (no closing checkpoint: the
/// records are in the journal only, as a SIGKILL leaves them).
fn play_and_die(dir: &Path) -> ! {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (store, _closer) = SledStore::open(&dir.join("data")).unwrap();
        let registry = Registry::restore(store, Settings::default()).await.unwrap();
        let service = GamesService::new(registry, None);
        let mut acks = std::fs::File::create(dir.join("acks")).unwrap();
        let mut games = Vec::new();
        for n in 0..GAMES {
            games.push(Seated::gang_of_four(&service, 4, &[], 11 + n as u64).await);
        }
        for turn in 0..ACTIONS {
            let game = &mut games[turn % GAMES];
            let over =
                (0..game.replica.players()).all(|s| game.replica.legal_actions(s).is_empty());
            if over {
                continue;
            }
            let (seat, action) = game.next();
            let request = game.request(seat, action, "");
            let seq = service
                .act(Request::new(request))
                .await
                .unwrap()
                .into_inner()
                .seq;
            writeln!(acks, "{} {seq}", game.game_id).unwrap();
        }
    });
    std::process::abort()
}

/// Each game's last acknowledged seq.
fn acknowledged(dir: &Path) -> HashMap<String, u64> {
    let mut last = HashMap::new();
    for line in std::fs::read_to_string(dir.join("acks")).unwrap().lines() {
        let (id, seq) = line.split_once(' ').unwrap();
        let seq: u64 = seq.parse().unwrap();
        let known = last.entry(id.to_string()).or_insert(0);
        *known = seq.max(*known);
    }
    last
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Corruption {
    Flip(usize, u8),
    ZeroSector(usize),
    Cut(usize),
}

#[test]
fn random_damage_to_a_real_journal_never_panics_hides_a_hole_or_loses_an_acknowledged_record() {
    if let Some(dir) = std::env::var_os("GANGS_CORRUPTION_CHILD") {
        play_and_die(Path::new(&dir));
    }
    let run = tempfile::tempdir().unwrap();
    run_child_until_it_dies(
        "random_damage_to_a_real_journal_never_panics_hides_a_hole_or_loses_an_acknowledged_record",
        "GANGS_CORRUPTION_CHILD",
        run.path(),
    );
    let acked = acknowledged(run.path());
    assert_eq!(acked.len(), GAMES);
    let journal = std::fs::read(run.path().join("data/journal")).unwrap();
    let starts = entry_starts(&journal);
    let (last_start, end) = (starts[starts.len() - 2], starts[starts.len() - 1]);
    assert!(starts.len() > ACTIONS / 2, "{} entries", starts.len());
    // What each entry held: damage that reaches the last entry cannot be told from a write
    // torn by a crash, so what it covers may be lost unnoticed.
    let held: Vec<Vec<(String, u64)>> = starts[..starts.len() - 1]
        .iter()
        .map(|&start| {
            let appends = appends_in(&journal, start).into_iter();
            appends
                .filter_map(|(id, first)| Some((id, first?)))
                .collect()
        })
        .collect();

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(50);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut noticed_trials = 0;
    for trial in 0..TRIALS {
        let at = rng.random_range(0..end);
        let corruption = match trial % 3 {
            0 => Corruption::Flip(at, rng.random_range(1..=255)),
            1 => Corruption::ZeroSector(at - at % 512),
            _ => Corruption::Cut(at),
        };
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&run.path().join("data"), dir.path());
        let mut bytes = journal.clone();
        match corruption {
            Corruption::Flip(at, mask) => bytes[at] ^= mask,
            Corruption::ZeroSector(at) => {
                let to = (at + 512).min(bytes.len());
                bytes[at..to].fill(0)
            }
            Corruption::Cut(at) => bytes.truncate(at),
        }
        std::fs::write(dir.path().join("journal"), &bytes).unwrap();
        let (first_hit, last_hit) = match corruption {
            Corruption::Flip(at, _) => (at, at),
            Corruption::ZeroSector(at) => (at, at + 511),
            Corruption::Cut(at) => (at, end),
        };
        // Each game's first record the damage may take unnoticed (a torn tail's).
        let mut may_lose: HashMap<String, u64> = HashMap::new();
        if last_hit >= last_start {
            let first_touched = starts.iter().rposition(|&s| s <= first_hit).unwrap_or(0);
            for (id, first) in held[first_touched.min(held.len() - 1)..].iter().flatten() {
                let seq = may_lose.entry(id.clone()).or_insert(*first);
                *seq = (*seq).min(*first);
            }
        }
        runtime.block_on(async {
            let (store, closer) = SledStore::open(dir.path()).unwrap();
            let registry = Registry::restore(store.clone(), Settings::default())
                .await
                .unwrap();
            let listed: HashMap<String, pb::GameSummary> = registry
                .summaries()
                .into_iter()
                .map(|s| (s.game_id.clone(), s))
                .collect();
            let noticed = dir.path().join("journal.damaged-0").exists();
            noticed_trials += usize::from(noticed);
            for (id, &acked_seq) in &acked {
                let what = format!("trial {trial} ({corruption:?}), game {id}");
                let records = store.load_game(id).await.unwrap();
                let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
                assert_eq!(
                    seqs,
                    (1..=seqs.len() as u64).collect::<Vec<_>>(),
                    "{what}: a hole is served"
                );
                let Some(summary) = listed.get(id) else {
                    // Every trace of the game was in damage that cannot be read: only if the
                    // server noticed and kept the journal aside (and said so at ERROR).
                    assert!(noticed && seqs.is_empty(), "{what}: gone unnoticed");
                    continue;
                };
                if summary.damaged {
                    assert!(noticed, "{what}: damaged but the journal not kept");
                    continue;
                }
                let kept = seqs.len() as u64;
                let may_lose_from = may_lose.get(id);
                assert!(
                    kept >= acked_seq || may_lose_from.is_some_and(|&first| kept + 1 >= first),
                    "{what}: {kept} records served as whole, {acked_seq} acknowledged"
                );
                assert_eq!(summary.last_seq, kept, "{what}");
            }
            drop(registry);
            drop(store);
            tokio::task::spawn_blocking(move || closer.join())
                .await
                .unwrap();
        });
    }
    // Most damage lies in the middle of the journal: the server must have noticed it there.
    assert!(
        noticed_trials >= TRIALS / 2,
        "damage noticed in {noticed_trials} of {TRIALS} trials"
    );
}
