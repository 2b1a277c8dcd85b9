//! A The Gang ladder separates its bots from their partners' luck: two copies of the crew bot,
//! two random bots and the house bots (a crew and a random one) play 420 real games (the
//! engine, the shipped policies) in crews the ladder's matchmaker makes (seeded: partners
//! rotate), and the crews' fit rates them. The two copies come out alike (their bootstrap
//! intervals overlap) and both above each random bot. In-process rather than through the
//! binaries: 420 crew games over gRPC take too long on a small machine; the matchmaker and the
//! fit are the ladder's own functions, and what the server adds (seating, clocks, rating
//! records) is tested end to end elsewhere.

use gangs_proto::v1 as pb;
use gangs_service::ladder::fit::{self, CrewGame};
use gangs_service::ladder::matchmaker::{self, Candidate, Together};
use rand::SeedableRng;

const PLAYERS: usize = 3;
const GAMES: usize = 420;
/// The entries: (name, policy).
const ENTRIES: [(&str, &str); 6] = [
    ("crew-a", "crew"),
    ("crew-b", "crew"),
    ("random-a", "random"),
    ("random-b", "random"),
    ("house-crew", "crew"),
    ("house-random", "random"),
];

/// Plays one game of The Gang with `crew` (entries, by seat); whether the crew won.
fn play(crew: &[usize], seed: u64) -> bool {
    let options =
        gangs_games::parse_options("the-gang", Some(PLAYERS as u32), &[]).expect("options");
    let mut game = gangs_games::new_game("the-gang", Some(&options), seed, None).expect("a game");
    let mut policies: Vec<_> = crew
        .iter()
        .enumerate()
        .map(|(seat, &e)| {
            let rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed * 10 + seat as u64);
            gangs_policies::by_name(ENTRIES[e].1, rng, std::time::Duration::ZERO)
                .expect("a shipped policy")
        })
        .collect();
    game.start();
    for _ in 0..100_000 {
        if game.is_over() {
            let outcome = game.outcome().expect("an outcome");
            return outcome.seats.iter().any(|s| s.won);
        }
        let mut acted = false;
        for seat in game.actors() {
            let update = pb::Update {
                view: Some(game.view(Some(seat))),
                legal_actions: game.legal_actions(seat),
                seat: Some(seat as u32),
                status: pb::GameStatus::Running as i32,
                ..Default::default()
            };
            if update.legal_actions.is_empty() {
                continue;
            }
            if let Some(action) = policies[seat].choose(&update) {
                game.act(seat, &action).expect("a legal action");
                acted = true;
                break;
            }
        }
        if !acted {
            // Every awaited seat lets the moment pass: its clock would run out.
            let seat = game.actors()[0];
            let action = game.default_action(seat).expect("a default action");
            game.act(seat, &action).expect("the default action");
        }
    }
    panic!("a game that does not end");
}

#[test]
fn crews_of_rotating_partners_separate_the_bots() {
    let mut together = Together::new();
    let mut waiting = [0i64; 6];
    let mut games: Vec<CrewGame> = Vec::new();
    let mut clock = 0i64;
    let mut round = 0u64;
    while games.len() < GAMES {
        round += 1;
        // Every bot queued with one game at a time, as the ladder hands them over.
        let candidates: Vec<Candidate> = (0..ENTRIES.len())
            .map(|entry| Candidate {
                entry,
                mu: 25.0,
                sigma: 25.0 / 3.0,
                free_slots: 1,
                waiting_since: waiting[entry],
            })
            .collect();
        let crews = matchmaker::make_crews(candidates, PLAYERS, &together, 0x5eed ^ round);
        assert!(!crews.is_empty());
        for crew in crews {
            clock += 1;
            for (k, &a) in crew.iter().enumerate() {
                waiting[a] = clock;
                for &b in &crew[k + 1..] {
                    *together.entry(matchmaker::pair(a, b)).or_default() += 1;
                }
            }
            let won = play(&crew, games.len() as u64 + 1);
            games.push(CrewGame { crew, won });
        }
    }
    // Every pair of bots played together.
    assert_eq!(together.len(), 15, "{together:?}");
    assert!(together.values().all(|&n| n >= 20), "{together:?}");

    let fitted = fit::fit_crews(ENTRIES.len(), &games);
    let f: Vec<&fit::Fitted> = fitted.iter().map(|f| f.as_ref().expect("played")).collect();
    let report: Vec<String> = ENTRIES
        .iter()
        .zip(&f)
        .map(|((name, _), x)| format!("{name} {:.2} [{:.2}, {:.2}]", x.strength, x.low, x.high))
        .collect();
    let wins = games.iter().filter(|g| g.won).count();
    eprintln!("{wins}/{} crew wins; {report:?}", games.len());
    let (a, b) = (f[0], f[1]);
    assert!(
        a.low <= b.high && b.low <= a.high,
        "the two copies of the crew bot do not overlap: {report:?}"
    );
    for copy in [a, b] {
        for random in [f[2], f[3]] {
            assert!(
                copy.strength > random.strength,
                "a crew copy below a random bot: {report:?}"
            );
        }
    }
}
