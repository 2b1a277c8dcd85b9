//! The ladder state's tests: records applied one by one, seasons, rekeys, renames and what
//! memory keeps.

use super::*;

fn ladder() -> pb::Ladder {
    pb::Ladder {
        name: "class".into(),
        kind: "gang-of-four".into(),
        players: 2,
        ..Default::default()
    }
}

fn register(bot: &str) -> Lr {
    Lr::Registered(pb::ladder_record::BotRegistered {
        bot: bot.into(),
        version: "1".into(),
        key_sha256: format!("hash-{bot}"),
    })
}

#[test]
fn summaries_name_the_bots() {
    let names = vec!["bob@1".to_string(), "alice@2".to_string()];
    assert_eq!(
        named_summary("seat 1 wins with 2 points", &names),
        "alice@2 wins with 2 points"
    );
    assert_eq!(
        named_summary("seat 0 and seat 1", &names),
        "bob@1 and alice@2"
    );
    assert_eq!(named_summary("seat 7 wins", &names), "seat 7 wins");
    assert_eq!(named_summary("the crew wins", &names), "the crew wins");
    assert_eq!(named_summary("seat x", &names), "seat x");
}

#[test]
fn ids_never_collide_with_game_ids() {
    let id = new_log_id();
    assert_eq!(id.len(), crate::store::GAME_ID_LEN, "{id}");
    assert!(id.starts_with(LOG_PREFIX), "{id}");
    assert!(!id.chars().all(|c| c.is_ascii_hexdigit()));
    // A store written before namespaces tells ladders' logs by this format when it
    // rearranges them (`store/mod.rs`).
    assert!(crate::store::legacy_ladder_id(&id), "{id}");
    assert!(!crate::store::legacy_ladder_id("0123456789abcdef"));
}

#[test]
fn a_log_rebuilds_to_the_state_it_was_applied_to() {
    let mut live = LadderState::new("ladder0000000001".into(), ladder());
    let mut records = vec![to_log(1, 0, Lr::Created(ladder()))];
    live.last_seq = 1;
    let outcome = pb::Outcome {
        seats: vec![
            pb::SeatOutcome {
                seat: 0,
                rank: 2,
                score: 30,
                won: false,
            },
            pb::SeatOutcome {
                seat: 1,
                rank: 1,
                score: 0,
                won: true,
            },
        ],
        summary: String::new(),
    };
    let rated = pb::ladder_record::GameRated {
        r#match: 1,
        game: 0,
        game_id: "00000000000000aa".into(),
        outcome: Some(outcome),
        timeouts: vec![2, 0],
        trailing_timeouts: vec![2, 0],
        acted: vec![false, true],
        ratings_after: vec![rating::initial(), rating::initial()],
        ..Default::default()
    };
    let steps = vec![
        register("a"),
        register("b"),
        Lr::Matched(pb::ladder_record::MatchMade {
            r#match: 1,
            entries: vec!["a@1".into(), "b@1".into()],
            seed: 7,
            games: 1,
        }),
        Lr::Rated(rated.clone()),
    ];
    for (i, step) in steps.into_iter().enumerate() {
        let seq = i as u64 + 2;
        records.push(to_log(seq, 5, step.clone()));
        live.apply(seq, 5, step).unwrap();
    }
    let rebuilt = LadderState::rebuild("ladder0000000001", &records).unwrap();
    for state in [&live, &rebuilt] {
        // Match 1 seats entries rotated by one: b@1 at seat 0, a@1 at seat 1.
        let (a, b) = (&state.entries[0], &state.entries[1]);
        assert_eq!((a.games, a.wins, a.score_sum, a.playing), (1, 1, 0, 0));
        assert_eq!((b.games, b.wins, b.score_sum, b.timeouts), (1, 0, 30, 2));
        assert_eq!(b.timeouts_in_a_row, 2);
        assert_eq!(state.info.games, 1);
        assert_eq!(a.trend, [rating::conservative(&rating::initial())]);
    }
    // A game is rated once: the same record again is refused.
    assert!(live.apply(6, 5, Lr::Rated(rated)).is_err());
}

/// A rated result of match `no` (one game, two seats): seat 0 wins.
fn result(state: &LadderState, no: u64) -> Lr {
    let m = &state.matches[&no];
    let outcome = pb::Outcome {
        seats: vec![
            pb::SeatOutcome {
                seat: 0,
                rank: 1,
                score: 0,
                won: true,
            },
            pb::SeatOutcome {
                seat: 1,
                rank: 2,
                score: 9,
                won: false,
            },
        ],
        summary: String::new(),
    };
    let timeouts = vec![super::super::play::SeatTimeouts::default(); 2];
    Lr::Rated(super::super::play::rate_game(
        state,
        m,
        0,
        format!("{no:016x}"),
        Some(outcome),
        &timeouts,
    ))
}

#[test]
fn a_season_freezes_its_table_and_the_next_starts_afresh() {
    let mut live = LadderState::new("ladder0000000003".into(), ladder());
    live.last_seq = 1;
    let mut records = vec![to_log(1, 0, Lr::Created(ladder()))];
    let mut seq = 1;
    let mut step = |live: &mut LadderState, at: i64, record: Lr| {
        seq += 1;
        records.push(to_log(seq, at, record.clone()));
        live.apply(seq, at, record).unwrap();
    };
    let matched = |no: u64| {
        Lr::Matched(pb::ladder_record::MatchMade {
            r#match: no,
            entries: vec!["a@1".into(), "b@1".into()],
            seed: no,
            games: 1,
        })
    };
    step(&mut live, 0, register("a"));
    step(&mut live, 0, register("b"));
    // Season 1: matches 1 and 2 made, only match 1 over when the season ends.
    step(&mut live, 10, matched(1));
    let rated = result(&live, 1);
    step(&mut live, 11, rated);
    step(&mut live, 12, matched(2));
    assert_eq!(live.info.season, 1);
    let ended = Lr::SeasonEnded(pb::ladder_record::SeasonEnded {
        season: 1,
        last_match: 2,
    });
    step(&mut live, 20, ended.clone());
    assert_eq!(
        (live.info.season, live.info.season_started_unix_ms),
        (2, 20)
    );
    // The new season starts every entry from the initial rating.
    for e in &live.entries {
        assert_eq!((e.rating, e.games, e.wins), (rating::initial(), 0, 0));
    }
    let frozen = live.as_of_season(1).unwrap();
    let one_game: Vec<u32> = frozen.entries.iter().map(|e| e.games).collect();
    assert_eq!(one_game, [1, 1]);
    // Match 2, matched in season 1, ends in season 2: rated in season 1.
    let rated = result(&live, 2);
    step(&mut live, 30, rated);
    let after_straggler = live.as_of_season(1).unwrap();
    let season_one: Vec<(u32, pb::Rating)> = after_straggler
        .entries
        .iter()
        .map(|e| (e.games, e.rating))
        .collect();
    assert_eq!(season_one.iter().map(|e| e.0).collect::<Vec<_>>(), [2, 2]);
    assert!(live.entries.iter().all(|e| e.games == 0));
    // Games of season 2 leave season 1's table as it was.
    for no in 3..=5 {
        step(&mut live, 40 + no as i64, matched(no));
        let rated = result(&live, no);
        step(&mut live, 41 + no as i64, rated);
    }
    let later: Vec<(u32, pb::Rating)> = live
        .as_of_season(1)
        .unwrap()
        .entries
        .iter()
        .map(|e| (e.games, e.rating))
        .collect();
    assert_eq!(later, season_one);
    // An entry registered in season 2 is not in season 1's table.
    step(&mut live, 60, register("c"));
    let frozen = live.as_of_season(1).unwrap();
    assert_eq!(frozen.entries.len(), 2);
    assert!(!frozen.by_name.keys().any(|name| name.starts_with('c')));
    assert_eq!(live.entries.len(), 3);
    assert_eq!(live.entries[0].games, 3);
    assert_eq!(live.matches[&4].season, 2);
    // A restart rebuilds both tables the same.
    let rebuilt = LadderState::rebuild("ladder0000000003", &records).unwrap();
    assert_eq!(rebuilt.info.season, 2);
    let rebuilt_one: Vec<(u32, pb::Rating)> = rebuilt
        .as_of_season(1)
        .unwrap()
        .entries
        .iter()
        .map(|e| (e.games, e.rating))
        .collect();
    assert_eq!(rebuilt_one, season_one);
    for (a, b) in rebuilt.entries.iter().zip(&live.entries) {
        assert_eq!((a.games, a.rating, &a.trend), (b.games, b.rating, &b.trend));
    }
    assert_eq!(rebuilt.season_info(1).unwrap().ended_unix_ms, Some(20));
    assert!(rebuilt.as_of_season(2).is_none());
    // A season is ended once.
    assert!(live.apply(seq + 1, 50, ended).is_err());
}

#[test]
fn a_new_key_replaces_the_old_one_and_the_rating_stays() {
    let mut state = LadderState::new("ladder0000000004".into(), ladder());
    state.last_seq = 1;
    state.apply(2, 0, register("a")).unwrap();
    state.entries[0].rating.mu = 30.0;
    let rekeyed = Lr::Rekeyed(pb::ladder_record::BotRekeyed {
        bot: "a".into(),
        version: "1".into(),
        key_sha256: "new-hash".into(),
        now: false,
        last_match: 9,
    });
    state.apply(3, 0, rekeyed).unwrap();
    assert_eq!(
        state.entries[0].replaced_keys,
        [("hash-a".to_string(), 9)],
        "the old key plays the games matched before the rekey"
    );
    assert!(!state.by_key.contains_key("hash-a"));
    assert_eq!(state.by_key.get("new-hash"), Some(&0));
    assert_eq!(state.entries[0].rating.mu, 30.0);
    let renamed = Lr::Renamed(pb::ladder_record::LadderRenamed {
        name: "term-2".into(),
    });
    state.apply(4, 77, renamed).unwrap();
    assert_eq!(state.info.name, "term-2");
    assert_eq!(state.former_names, [(ladder().name, 77)]);
    state
        .apply(
            5,
            0,
            Lr::Deleted(pb::ladder_record::LadderDeleted::default()),
        )
        .unwrap();
    assert!(state.deleted);
}

#[test]
fn old_matches_leave_memory_but_not_the_totals_nor_the_log() {
    let hour = 3_600_000;
    let mut live = LadderState::new("ladder0000000002".into(), ladder());
    live.keep_matches = 3;
    live.last_seq = 1;
    let mut records = vec![to_log(1, 0, Lr::Created(ladder()))];
    let mut seq = 1;
    let mut step = |live: &mut LadderState, at: i64, record: Lr| {
        seq += 1;
        records.push(to_log(seq, at, record.clone()));
        live.apply(seq, at, record).unwrap();
    };
    step(&mut live, 0, register("a"));
    step(&mut live, 0, register("b"));
    for no in 1..=10u64 {
        // Two hours apart: each older match is out of the hourly window.
        let at = no as i64 * 2 * hour;
        let matched = pb::ladder_record::MatchMade {
            r#match: no,
            entries: vec!["a@1".into(), "b@1".into()],
            seed: no,
            games: 1,
        };
        step(&mut live, at, Lr::Matched(matched));
        let rated = pb::ladder_record::GameRated {
            r#match: no,
            game: 0,
            game_id: format!("{no:016x}"),
            outcome: Some(pb::Outcome {
                seats: vec![
                    pb::SeatOutcome {
                        seat: 0,
                        rank: 1,
                        score: 0,
                        won: true,
                    },
                    pb::SeatOutcome {
                        seat: 1,
                        rank: 2,
                        score: 5,
                        won: false,
                    },
                ],
                summary: String::new(),
            }),
            timeouts: vec![0, 0],
            trailing_timeouts: vec![0, 0],
            acted: vec![true, true],
            ratings_after: vec![rating::initial(), rating::initial()],
            ..Default::default()
        };
        step(&mut live, at + 1000, Lr::Rated(rated));
    }
    assert_eq!(
        live.matches.keys().copied().collect::<Vec<_>>(),
        vec![8, 9, 10]
    );
    assert_eq!((live.forgotten, live.next_match_no()), (7, 11));
    assert_eq!(live.entries[0].games + live.entries[1].games, 20);
    let rebuilt = LadderState::rebuild_keeping("ladder0000000002", &records, 3).unwrap();
    assert_eq!(
        rebuilt.matches.keys().collect::<Vec<_>>(),
        live.matches.keys().collect::<Vec<_>>()
    );
    assert_eq!(rebuilt.forgotten, 7);
    let history = LadderState::rebuild_with_history("ladder0000000002", &records).unwrap();
    assert_eq!((history.matches.len(), history.forgotten), (10, 0));
    assert_eq!(history.entries[0].games, live.entries[0].games);
    // A match number already used (forgotten or not) is refused.
    let again = pb::ladder_record::MatchMade {
        r#match: 2,
        entries: vec!["a@1".into(), "b@1".into()],
        seed: 1,
        games: 1,
    };
    assert!(live.apply(seq + 1, 0, Lr::Matched(again)).is_err());
}
