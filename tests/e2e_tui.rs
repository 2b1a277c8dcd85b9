//! `gangs play` as a person uses it: the full-screen table in a real pseudo-terminal (tmux),
//! driven by keys and read off the screen, against bot processes on a real server. Preset
//! deals make the games go the same way every time: a bad selection and its message, a pass,
//! a give-back, chip moves, and both games played to their end.
//!
//! tmux is installed by `.ci/run`; a machine without it fails here, saying so.

use crate::common;

use common::*;
use gangs_proto::v1 as pb;
use std::process::Command;
use std::time::{Duration, Instant};

/// One tmux server of our own (its own socket), one window running a command.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Runs `command` in a 120x40 terminal. After it exits the pane stays, so its last
    /// words can be read.
    fn start(command: &[String]) -> Tmux {
        let tmux_found = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            tmux_found,
            "tmux is needed for the terminal tests (.ci/run installs it)"
        );
        let socket = format!("gangs-e2e-{}-{}", std::process::id(), rand::random::<u32>());
        let line = command
            .iter()
            .map(|word| format!("'{}'", word.replace('\'', "'\\''")))
            .collect::<Vec<_>>()
            .join(" ");
        let script = format!("export RUST_BACKTRACE=0; {line}; echo \"[exit $?]\"; sleep 600");
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "main",
            ])
            .args(["-x", "120", "-y", "40", "sh", "-c", &script])
            .env("TERM", "xterm-256color")
            .status()
            .expect("run tmux");
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-t", "main"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "main"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Types text literally.
    fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "main", "-l", text]);
    }

    /// Waits until the screen satisfies `ready`; panics with the screen after `timeout`.
    fn wait_for(&self, what: &str, timeout: Duration, ready: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!("waited {timeout:?} for {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(40));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// The seq in the header (`· seq 12 ·`).
fn seq_of(screen: &str) -> Option<u64> {
    let rest = &screen[screen.find(" seq ")? + 5..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// After a key that sends an action: waits until the header's seq moved past `seq`.
fn wait_past(tmux: &Tmux, seq: Option<u64>) -> String {
    tmux.wait_for("the game to move on", Duration::from_secs(10), |s| {
        seq_of(s) > seq
    })
}

fn gangs_play(server: &Server, game: &str, seat: u32) -> Vec<String> {
    vec![
        bin("gangs").display().to_string(),
        "--server".into(),
        server.url(),
        "play".into(),
        game.into(),
        "--seat".into(),
        seat.to_string(),
        "--name".into(),
        "tester".into(),
    ]
}

/// Card id of a Gang of Four card: value 2..10, colour green 0 / yellow 1 / red 2, copy 0/1.
fn gof_id(value: u32, color: u32, copy: u32) -> u32 {
    7 + (value - 2) * 6 + color * 2 + copy
}

/// Seat 0 (the person) holds the six coloured 1s, the six 10s, both Phoenixes, the Dragon and
/// one red 9: two gangs no one can beat (nobody else holds four of a value). Seat 3 holds the
/// multicoloured 1 and leads deal 1, so seat 0 meets a table on its first turn.
fn gang_of_four_preset() -> pb::PresetDeals {
    let mut hands = vec![Vec::new(); 4];
    hands[0].extend(0..6);
    hands[0].extend((0..3).flat_map(|c| (0..2).map(move |k| gof_id(10, c, k))));
    hands[0].extend([61, 62, 63, gof_id(9, 2, 1)]);
    hands[3].push(6);
    for value in 2..=9 {
        for color in 0..3 {
            for copy in 0..2 {
                let id = gof_id(value, color, copy);
                if id != gof_id(9, 2, 1) {
                    hands[1 + color as usize].push(id);
                }
            }
        }
    }
    let deal = pb::gang_of_four_preset::Deal {
        hands: hands
            .into_iter()
            .map(|card_ids| pb::gang_of_four_preset::Hand { card_ids })
            .collect(),
    };
    pb::PresetDeals {
        game: Some(pb::preset_deals::Game::GangOfFour(pb::GangOfFourPreset {
            deals: vec![deal.clone(), deal.clone(), deal],
        })),
    }
}

/// How many cards the screen says seat 0 holds.
fn my_card_count(screen: &str) -> u32 {
    let line = screen
        .lines()
        .find(|l| l.contains("seat 0 (you)") && l.contains(" card"))
        .unwrap_or_else(|| panic!("no card count for seat 0:\n{screen}"));
    let after = &line[line.find("seat 0 (you)").unwrap() + 12..];
    after
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {line:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn gang_of_four_played_in_the_terminal_to_the_end() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let game = client
        .create_game(pb::CreateGameRequest {
            kind: "gang-of-four".into(),
            options: None,
            seed: Some(3),
            preset: Some(gang_of_four_preset()),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner()
        .game_id;
    let tmux = Tmux::start(&gangs_play(&server, &game, 0));
    tmux.wait_for("the table", Duration::from_secs(10), |s| {
        s.contains("Gang of Four")
    });
    let mut bots: Vec<_> = (1..4)
        .map(|seat| spawn_bot("gangs-bot-random", &server, &game, Some(seat), seat as u64))
        .collect();

    let (mut bad_selection_shown, mut passed, mut gave_back) = (false, false, false);
    let start = Instant::now();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the game took too long:\n{}",
            tmux.screen()
        );
        let screen = tmux.wait_for("my turn or the end", Duration::from_secs(20), |s| {
            s.contains("Your hand: your turn")
                || s.contains("give one card back")
                || s.contains("game over (q leaves)")
        });
        if screen.contains("game over (q leaves)") {
            break;
        }
        let seq = seq_of(&screen);
        if screen.contains("give one card back") {
            // The loser's strongest card came in (a 9, below seat 0's own red 9): give it back.
            tmux.type_text("9");
            tmux.wait_for("the give-back verdict", Duration::from_secs(5), |s| {
                s.contains("Enter gives it")
            });
            tmux.keys(&["Enter"]);
            wait_past(&tmux, seq);
            gave_back = true;
            continue;
        }
        let table = screen.contains("The trick:");
        if !bad_selection_shown {
            // g1 and g10 by cursor and space: no combination, and the engine says why.
            tmux.keys(&[
                "Space", "Right", "Right", "Right", "Right", "Right", "Right", "Right", "Space",
            ]);
            let shown = tmux.wait_for("the refusal", Duration::from_secs(5), |s| {
                s.contains("a pair needs two cards of the same value")
            });
            assert!(shown.contains("▲"), "the chosen cards are marked:\n{shown}");
            // Enter, then Escape as a barrier: the table handles keys in order and waits for
            // an action's answer before it reads the next key, so once Escape has cleared the
            // refusal, whatever Enter did has reached the server.
            tmux.keys(&["Enter", "Escape"]);
            tmux.wait_for("the selection cleared", Duration::from_secs(5), |s| {
                !s.contains("a pair needs two cards of the same value")
            });
            let last = log(&mut client, &game).await.last().map(|r| r.seq);
            assert_eq!(last, seq, "a refused selection sends nothing");
            tmux.keys(&["Tab"]);
            tmux.wait_for("a legal play by tab", Duration::from_secs(5), |s| {
                s.contains("by tab)")
            });
            tmux.keys(&["Escape"]);
            bad_selection_shown = true;
        }
        if table && !passed {
            tmux.keys(&["p"]);
            wait_past(&tmux, seq);
            // The header may be drawn before the log pane: a capture can fall between them.
            tmux.wait_for("the pass in the log", Duration::from_secs(5), |s| {
                s.contains("seat 0 passes")
            });
            passed = true;
            continue;
        }
        let words = if table {
            "1 1 1 1 1 1"
        } else {
            match my_card_count(&screen) {
                16 => "1 1 1 1 1 1",
                10 => "10 10 10 10 10 10",
                4 => "dr",
                3 => "gp yp",
                1 => "9",
                n => panic!("seat 0 leads with {n} cards, off the plan:\n{screen}"),
            }
        };
        tmux.type_text(words);
        tmux.wait_for("a legal verdict", Duration::from_secs(5), |s| {
            s.contains("Enter plays it")
        });
        tmux.keys(&["Enter"]);
        wait_past(&tmux, seq);
    }
    assert!(
        bad_selection_shown && passed && gave_back,
        "pass {passed}, give-back {gave_back}"
    );
    let end = tmux.screen();
    assert!(end.contains("Game over"), "{end}");
    tmux.keys(&["q"]);
    let left = tmux.wait_for("the exit", Duration::from_secs(5), |s| {
        s.contains("[exit 0]")
    });
    assert!(left.contains(&format!("game {game} is over")), "{left}");
    for bot in &mut bots {
        wait_with_timeout(bot, Duration::from_secs(10));
    }
    let summary = status(&mut client, &game).await;
    assert_eq!(summary.status, pb::GameStatus::Finished as i32);
}

#[tokio::test(flavor = "multi_thread")]
async fn q_leaves_the_table_and_the_token_takes_the_seat_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let game = create(&mut client, "gang-of-four", None, 5).await;
    let tmux = Tmux::start(&gangs_play(&server, &game, 2));
    tmux.wait_for("the table", Duration::from_secs(10), |s| {
        s.contains("waiting for players")
    });
    // A smaller terminal: the table is drawn again to its size.
    tmux.tmux(&["resize-window", "-t", "main", "-x", "80", "-y", "24"]);
    // Awaited whole: a capture may catch the redraw half done (its bottom border drawn at 80
    // columns, its title not yet), which failed a full run once.
    let small = tmux.wait_for("the table at 80x24", Duration::from_secs(5), |s| {
        s.lines().count() <= 24
            && s.lines()
                .any(|l| l.starts_with("└") && l.chars().count() == 80)
            && s.contains("playing seat 2")
    });
    assert!(small.contains("playing seat 2"), "{small}");
    tmux.keys(&["q"]);
    let left = tmux.wait_for("the exit", Duration::from_secs(5), |s| {
        s.contains("[exit 0]")
    });
    let token = left
        .split("--token ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("no token printed:\n{left}"))
        .to_string();
    let back = Tmux::start(&[
        bin("gangs").display().to_string(),
        "--server".into(),
        server.url(),
        "play".into(),
        game.clone(),
        "--token".into(),
        token,
    ]);
    let screen = back.wait_for("the seat again", Duration::from_secs(10), |s| {
        s.contains("playing seat 2")
    });
    assert!(screen.contains("1 seat(s) taken"), "{screen}");
    back.keys(&["q"]);
    back.wait_for("the exit", Duration::from_secs(5), |s| {
        s.contains("[exit 0]")
    });
}

/// A The Gang card by face value 2..14 and suit index clubs 0, diamonds 1, hearts 2, spades 3.
fn poker(rank: u32, suit: u32) -> pb::TheGangCard {
    pb::TheGangCard {
        id: (rank - 2) * 4 + suit,
        rank: 0,
        suit: 0,
    }
}

fn heist(private: [[(u32, u32); 2]; 3], community: [(u32, u32); 5]) -> pb::the_gang_preset::Heist {
    pb::the_gang_preset::Heist {
        private_cards: private
            .iter()
            .map(|hand| pb::the_gang_preset::Hand {
                cards: hand.iter().map(|&(r, s)| poker(r, s)).collect(),
            })
            .collect(),
        community: community.iter().map(|&(r, s)| poker(r, s)).collect(),
        deck: vec![],
    }
}

/// Heist 1: seat 0 holds the one best hand (a straight to the Jack), seats 1 and 2 tie on
/// the board's straight; seat 0 keeps a low red chip, so it reveals before a weaker hand and
/// the heist fails. The Driver is then the specialist of heist 2, where seats 1 and 2 hold
/// middling hands (J8, T7: about even against one other hand): the crew bots propose the
/// Driver for such a hand at the first street's start, before any chip move, so seat 0 waits
/// there for the proposal and answers it.
fn the_gang_preset() -> pb::PresetDeals {
    let (c, d, h, s) = (0, 1, 2, 3);
    pb::PresetDeals {
        game: Some(pb::preset_deals::Game::TheGang(pb::TheGangPreset {
            heists: vec![
                heist(
                    [[(10, h), (11, h)], [(2, d), (3, h)], [(2, s), (3, c)]],
                    [(5, c), (6, d), (7, h), (8, s), (9, c)],
                ),
                heist(
                    [[(14, s), (14, h)], [(11, c), (8, d)], [(10, d), (7, c)]],
                    [(13, s), (12, d), (9, h), (5, s), (4, c)],
                ),
            ],
            challenge_order: vec![],
            specialist_order: vec![2, 1, 3, 4, 5, 6, 7, 8, 9, 10],
        })),
    }
}

/// Waits up to `timeout` for the seq to move past `seq`; whether it did.
fn moved_past(tmux: &Tmux, seq: Option<u64>, timeout: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if seq_of(&tmux.screen()) > seq {
            return true;
        }
        std::thread::sleep(Duration::from_millis(40));
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gang_played_in_the_terminal_to_the_end() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    // A phase deadline far beyond the test's length: the clock shows, nothing expires.
    let options = gangs_games::parse_options(
        "the-gang",
        Some(3),
        &[
            ("mode".to_string(), "advanced".to_string()),
            ("phase_deadline_ms".to_string(), "600000".to_string()),
        ],
    )
    .expect("options");
    let game = client
        .create_game(pb::CreateGameRequest {
            kind: "the-gang".into(),
            options: Some(options),
            seed: Some(5),
            preset: Some(the_gang_preset()),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner()
        .game_id;
    let tmux = Tmux::start(&gangs_play(&server, &game, 0));
    tmux.wait_for("the table", Duration::from_secs(10), |s| {
        s.contains("The Gang")
    });
    let mut bots: Vec<_> = (1..3)
        .map(|seat| spawn_bot("gangs-bot-crew", &server, &game, Some(seat), seat as u64))
        .collect();

    let (mut took, mut answered, mut clock_seen) = (false, false, false);
    let start = Instant::now();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the game took too long:\n{}",
            tmux.screen()
        );
        let screen = tmux.screen();
        if screen.contains("game over (q leaves)") {
            break;
        }
        // The chip phase's deadline counts down in the header (10 minutes from its opening).
        clock_seen |= screen.contains("⏱ 10:00") || screen.contains("⏱ 9:5");
        let seq = seq_of(&screen);
        if screen.contains("Heist 2") && !answered {
            assert!(
                screen.contains("Specialist 2 driver"),
                "heist 1 was meant to fail and bring the Driver:\n{screen}"
            );
            // No chip move of seat 0 before the bots' proposal: wait for the dialog.
            let dialog = tmux.wait_for("a bot's Driver proposal", Duration::from_secs(15), |s| {
                s.contains("y accept")
            });
            assert!(dialog.contains("proposes: driver for seat"), "{dialog}");
            let seq = seq_of(&dialog);
            tmux.keys(&["y"]);
            wait_past(&tmux, seq);
            answered = true;
        } else if screen.contains("y accept") {
            assert!(screen.contains("proposes: "), "{screen}");
            tmux.keys(&["y"]);
            moved_past(&tmux, seq, Duration::from_secs(5));
        } else if screen.contains("chip yet: press its number") {
            tmux.keys(&["1"]);
            if moved_past(&tmux, seq, Duration::from_secs(2)) {
                took = true;
            } else {
                // No more chip moves this street: say ready and be given a chip.
                tmux.keys(&["d"]);
                moved_past(&tmux, seq, Duration::from_secs(2));
            }
        } else if screen.contains("(d: ready)") {
            tmux.keys(&["d"]);
            moved_past(&tmux, seq, Duration::from_secs(2));
        } else if screen.contains("▶ guess") || screen.contains("▶ choose") {
            tmux.keys(&["Enter"]);
            moved_past(&tmux, seq, Duration::from_secs(2));
        } else {
            std::thread::sleep(Duration::from_millis(40));
        }
    }
    let end = tmux.screen();
    assert!(took, "seat 0 took a chip");
    assert!(answered, "seat 0 answered a proposal");
    assert!(clock_seen, "the phase clock was never shown");
    assert!(
        end.contains("The gang wins") || end.contains("The gang loses"),
        "{end}"
    );
    tmux.keys(&["q"]);
    let left = tmux.wait_for("the exit", Duration::from_secs(5), |s| {
        s.contains("[exit 0]")
    });
    assert!(left.contains(&format!("game {game} is over")), "{left}");
    for bot in &mut bots {
        wait_with_timeout(bot, Duration::from_secs(10));
    }
    // The log holds seat 0's chip moves and its vote on the proposal.
    let records = log(&mut client, &game).await;
    let acted: Vec<String> = records
        .iter()
        .filter_map(|r| match &r.record {
            Some(pb::log_record::Record::Acted(a)) if a.seat == 0 => {
                a.action.as_ref().map(gangs_games::describe_action)
            }
            _ => None,
        })
        .collect();
    assert!(acted.iter().any(|a| a.starts_with("take ")), "{acted:?}");
    assert!(acted.iter().any(|a| a == "accept"), "{acted:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_status_line_follows_a_server_restart_and_plain_stays_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path());
    let mut client = server.client().await;
    let game = create(&mut client, "gang-of-four", None, 9).await;
    let tmux = Tmux::start(&gangs_play(&server, &game, 1));
    tmux.wait_for("the table", Duration::from_secs(10), |s| {
        s.contains("waiting for players")
    });
    server.kill9();
    let lost = tmux.wait_for("the reconnect status", Duration::from_secs(10), |s| {
        s.contains("connection lost: reconnecting")
    });
    assert!(lost.contains("playing seat 1"), "the table stays:\n{lost}");
    server.restart();
    let back = tmux.wait_for("the reconnection", Duration::from_secs(30), |s| {
        s.contains("reconnected; resuming after seq")
    });
    assert!(
        !back.contains("connection lost"),
        "the status line is cleared:\n{back}"
    );
    // Still the seat's table: a second seat joining shows up.
    let mut client = server.client().await;
    client
        .join_game(pb::JoinGameRequest {
            game_id: game.clone(),
            name: "other".into(),
            seat: Some(3),
            ..Default::default()
        })
        .await
        .expect("join");
    tmux.wait_for("the join after the restart", Duration::from_secs(10), |s| {
        s.contains("2 seat(s) taken")
    });
    tmux.keys(&["q"]);
    tmux.wait_for("the exit", Duration::from_secs(5), |s| {
        s.contains("[exit 0]")
    });

    // `--plain` in a terminal: the line interface, no full-screen table.
    let plain = Tmux::start(&[
        bin("gangs").display().to_string(),
        "--server".into(),
        server.url(),
        "watch".into(),
        game.clone(),
        "--plain".into(),
    ]);
    let lines = plain.wait_for("the lines", Duration::from_secs(10), |s| {
        s.contains("2 seat(s) taken")
    });
    assert!(
        lines.contains("1 seat(s) taken") && !lines.contains("spectator"),
        "{lines}"
    );
}

/// Parses an update line of the line interface (`{seq:>5}  words`) into its seq.
fn update_line_seq(line: &str) -> Option<u64> {
    if line.len() < 8 || line.get(5..7) != Some("  ") {
        return None;
    }
    line.get(..5)?.trim().parse().ok()
}

#[tokio::test(flavor = "multi_thread")]
async fn outside_a_terminal_play_prints_each_change_once() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    // Short phase deadlines: the streets close by themselves whatever seat 0 does.
    let options = gangs_games::parse_options(
        "the-gang",
        Some(3),
        &[("phase_deadline_ms".to_string(), "400".to_string())],
    )
    .expect("options");
    let game = create(&mut client, "the-gang", Some(options), 13).await;
    let mut play = Command::new(bin("gangs"))
        .args(["--server", &server.url(), "play", &game, "--seat", "0"])
        .args(["--name", "piped"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start gangs play");
    let mut stdin = play.stdin.take().expect("stdin");
    let stdout = play.stdout.take().expect("stdout");
    // A person at a pipe: at each prompt, the first listed action.
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.starts_with("a number, action words") {
                let _ = writeln!(stdin, "1");
            }
            lines.push(line);
        }
        lines
    });
    let mut bots: Vec<_> = (1..3)
        .map(|seat| spawn_bot("gangs-bot-crew", &server, &game, Some(seat), seat as u64))
        .collect();
    let exit = wait_with_timeout(&mut play, Duration::from_secs(90));
    let lines = reader.join().expect("the reader");
    let text = lines.join("\n");
    assert!(exit.success(), "gangs play failed:\n{text}");
    for bot in &mut bots {
        wait_with_timeout(bot, Duration::from_secs(10));
    }
    assert!(text.contains("game over: "), "{text}");

    // Each update once, in order: no seq comes back after a later one.
    let mut seqs: Vec<u64> = lines.iter().filter_map(|l| update_line_seq(l)).collect();
    seqs.dedup();
    assert!(seqs.len() > 20, "{text}");
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "an update was printed twice or out of order: {seqs:?}"
    );
    // The whole view only when a street starts (and once at the end), not per chip move.
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    let views = lines
        .iter()
        .filter(|l| l.starts_with("heist ") && l.contains(" | vaults "))
        .count();
    let prompts = count("your turn (seq ");
    let streets = lines.iter().filter(|l| l.ends_with(" chips open")).count();
    let turns = lines
        .iter()
        .filter(|l| l.starts_with("       your turn (") && l.ends_with(" legal actions)"))
        .count();
    assert!(prompts >= 4, "seat 0 was prompted:\n{text}");
    assert_eq!(views, prompts + 1, "a view per prompt and the final one");
    assert!(
        prompts <= streets,
        "{prompts} prompts for {streets} streets:\n{text}"
    );
    assert!(
        turns >= 2 * prompts,
        "{turns} updates offered actions, {prompts} prompts"
    );
    assert!(
        text.contains("you played `"),
        "seat 0's answers were sent:\n{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn gangs_watch_shows_the_table_to_a_spectator_and_to_a_seat() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    let mut client = server.client().await;
    let game = create(&mut client, "gang-of-four", None, 11).await;
    // Seat 0 is taken here and never plays: the game starts and waits on it at some point.
    let token = client
        .join_game(pb::JoinGameRequest {
            game_id: game.clone(),
            name: "held".into(),
            seat: Some(0),
            ..Default::default()
        })
        .await
        .expect("join")
        .into_inner()
        .token;
    let mut bots: Vec<_> = (1..4)
        .map(|seat| spawn_bot("gangs-bot-random", &server, &game, Some(seat), seat as u64))
        .collect();
    let watch = |extra: &[&str]| {
        let mut command = vec![
            bin("gangs").display().to_string(),
            "--server".into(),
            server.url(),
            "watch".into(),
            game.clone(),
        ];
        command.extend(extra.iter().map(|w| w.to_string()));
        Tmux::start(&command)
    };
    let spectator = watch(&[]);
    let seat = watch(&["--seat", "0", "--token", &token]);
    let seen = spectator.wait_for("the dealt table", Duration::from_secs(15), |s| {
        s.contains("spectator") && s.contains("Deal 1")
    });
    assert!(!seen.contains("Your hand"), "no private cards:\n{seen}");
    assert!(!seen.contains("waiting for players"), "{seen}");
    let mine = seat.wait_for("the seat's table", Duration::from_secs(15), |s| {
        s.contains("watching as seat 0") && s.contains("Your hand")
    });
    assert!(mine.contains("seat 0 (you)"), "{mine}");
    // Read-only: keys that would play do nothing but `q` leaves.
    let seq = seq_of(&mine);
    // `q` after the keys that would play: the table handles keys in order (an action would be
    // answered before the next key is read), so once it has left, nothing is still on its way.
    seat.keys(&["Tab", "Enter", "p", "q"]);
    seat.wait_for("the exit", Duration::from_secs(5), |s| {
        s.contains("[exit 0]")
    });
    let records = log(&mut client, &game).await;
    assert!(
        !records.iter().any(|r| matches!(
            &r.record,
            Some(pb::log_record::Record::Acted(a)) if a.seat == 0
        )),
        "watching sends no action (seq was {seq:?})"
    );
    spectator.keys(&["q"]);
    spectator.wait_for("the exit", Duration::from_secs(5), |s| {
        s.contains("[exit 0]")
    });
    for bot in &mut bots {
        let _ = bot.kill();
        let _ = bot.wait();
    }
}
