//! One arena game, start to end: create it with its seed, start the bots on their rotated
//! seats, wait for them, read the result from the server, count each seat's timeouts and keep
//! the game file.

use super::*;

/// Plays game `game` from creation to outcome (and keeps its file with `--out`); the error
/// says what went wrong.
pub(super) async fn play_game(arena: &Arena, game: u64) -> Result<Finished, String> {
    let seed = stats::game_seed(arena.base_seed, game, arena.players, arena.duplicate);
    let refused = |what: &str, status: tonic::Status| {
        format!(
            "{what}: {}",
            CliError::from_status(&arena.server, &status).message
        )
    };
    let mut client = arena.client.clone();
    let request = pb::CreateGameRequest {
        kind: arena.kind.clone(),
        options: Some(arena.options),
        seed: Some(seed),
        ..Default::default()
    };
    let game_id = client
        .create_game(request)
        .await
        .map_err(|s| refused("cannot create the game", s))?
        .into_inner()
        .game_id;

    let mut bots = Vec::with_capacity(arena.players);
    for (slot, bot) in arena.slots.iter().enumerate() {
        let seat = stats::seat_of(slot, game, arena.players);
        let log = arena.log_dir.join(format!("game-{game}-seat-{seat}.log"));
        bots.push(spawn_bot(
            &arena.programs[slot],
            bot,
            &arena.server,
            arena.ca.as_deref(),
            &game_id,
            seat,
            stats::bot_seed(arena.base_seed, game, slot),
            log,
        )?);
    }
    // With clocks a bot that exits early is not the game's end: its seat plays defaults.
    let notes = wait_for_bots(bots, arena.timeout, arena.clocks)
        .await
        .map_err(|e| format!("game {game_id}: {e}"))?;

    let update = tokio::time::timeout(OUTCOME_TIMEOUT, final_update(&mut client, &game_id))
        .await
        .map_err(|_| {
            format!(
                "game {game_id}: no outcome within {}s of the bots' exit",
                OUTCOME_TIMEOUT.as_secs()
            )
        })?
        // Without an outcome, the bots that exited early are the likely cause: say so.
        .map_err(|e| {
            let mut error = format!("game {game_id}: {e}");
            for note in &notes {
                error.push_str("; ");
                error.push_str(note);
            }
            error
        })?;
    let mut result =
        read_result(arena, game, &update).map_err(|e| format!("game {game_id}: {e}"))?;
    let timeouts = timeouts_per_seat(&mut client, &game_id, arena.players)
        .await
        .map_err(|e| format!("game {game_id}: {e}"))?;
    for seat in &mut result.seats {
        seat.timeouts = timeouts[stats::seat_of(seat.slot, game, arena.players)];
    }
    result.notes = notes
        .into_iter()
        .map(|note| format!("game {game_id}: {note}"))
        .collect();
    let file = match &arena.out {
        Some(out) => Some(keep_file(arena, &mut client, &game_id, out).await?),
        None => None,
    };
    // By seat: the outcome may list the seats in any order.
    let mut seats: Vec<(usize, SeatRow)> = result
        .seats
        .iter()
        .map(|s| {
            let seat = stats::seat_of(s.slot, game, arena.players);
            let row = SeatRow {
                bot: arena.slots[s.slot].name.clone(),
                rank: s.rank,
                score: s.score,
                won: s.won,
                timeouts: u64::from(s.timeouts),
            };
            (seat, row)
        })
        .collect();
    seats.sort_by_key(|(seat, _)| *seat);
    let row = GameRow {
        game,
        game_id,
        seed,
        seats: seats.into_iter().map(|(_, row)| row).collect(),
        outcome: update
            .outcome
            .as_ref()
            .map(|o| o.summary.clone())
            .unwrap_or_default(),
        team: result.team,
        file,
    };
    Ok(Finished { result, row })
}

/// Writes the finished game's file into `out` as `GAME_ID.jsonl`; returns its name.
async fn keep_file(
    arena: &Arena,
    client: &mut Client,
    game_id: &str,
    out: &std::path::Path,
) -> Result<String, String> {
    let file = crate::commands::export::fetch(client, &arena.server, game_id)
        .await
        .map_err(|e| format!("game {game_id}: {}", e.message))?;
    let name = format!("{game_id}.jsonl");
    crate::commands::export::write_file(&file, &out.join(&name)).map_err(|e| e.message)?;
    Ok(name)
}

/// How many times each seat's clock ran out (`timed_out` records of the finished game's log).
async fn timeouts_per_seat(
    client: &mut Client,
    game_id: &str,
    players: usize,
) -> Result<Vec<u32>, String> {
    let mut stream = client
        .get_log(pb::GetLogRequest {
            game_id: game_id.to_string(),
            from_seq: 0,
        })
        .await
        .map_err(|s| format!("cannot read the log: {}", s.message()))?
        .into_inner();
    let mut timeouts = vec![0u32; players];
    while let Some(record) = stream
        .message()
        .await
        .map_err(|s| format!("reading the log: {}", s.message()))?
    {
        if let Some(pb::log_record::Record::TimedOut(t)) = &record.record {
            if let Some(count) = timeouts.get_mut(t.seat as usize) {
                *count += 1;
            }
        }
    }
    Ok(timeouts)
}

/// The spectator's update of a finished game's last record: its outcome and final view.
async fn final_update(client: &mut Client, game_id: &str) -> Result<pb::Update, String> {
    // With clocks the seats of exited bots play defaults: the game may need a moment more.
    let summary = loop {
        let summary = find_summary(client, game_id)
            .await
            .map_err(|s| format!("cannot list the games: {}", s.message()))?
            .ok_or("the server no longer lists the game")?;
        if summary.status != pb::GameStatus::Running as i32 {
            break summary;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    if summary.status != pb::GameStatus::Finished as i32 {
        return Err(format!(
            "every bot exited, but the game is {} at seq {}",
            status_name(summary.status),
            summary.last_seq
        ));
    }
    // Watching from the record before the last gives just the final update; read on until
    // an update carries the outcome in case the server sends more.
    let mut stream = client
        .watch(pb::WatchRequest {
            game_id: game_id.to_string(),
            token: String::new(),
            from_seq: summary.last_seq.saturating_sub(1),
        })
        .await
        .map_err(|s| format!("cannot watch the finished game: {}", s.message()))?
        .into_inner();
    loop {
        match stream.message().await {
            Ok(Some(update)) if update.outcome.is_some() => return Ok(update),
            Ok(Some(_)) => {}
            Ok(None) => return Err("the finished game's stream ended without an outcome".into()),
            Err(s) => return Err(format!("watching the finished game: {}", s.message())),
        }
    }
}

/// The seats' ranks and scores (and The Gang's vaults and alarms) from the final update.
fn read_result(arena: &Arena, game: u64, update: &pb::Update) -> Result<GameResult, String> {
    let outcome = update
        .outcome
        .as_ref()
        .ok_or("the final update has no outcome")?;
    if outcome.seats.len() != arena.players {
        return Err(format!(
            "the outcome lists {} seats for a {}-player game",
            outcome.seats.len(),
            arena.players
        ));
    }
    let mut seats = Vec::with_capacity(arena.players);
    for seat in &outcome.seats {
        if seat.seat as usize >= arena.players {
            return Err(format!("the outcome names seat {}", seat.seat));
        }
        seats.push(SeatResult {
            slot: stats::slot_at(seat.seat as usize, game, arena.players),
            rank: seat.rank,
            score: seat.score,
            won: seat.won,
            timeouts: 0,
        });
    }
    let kind = gangs_games::kind(&arena.kind).map_err(|e| e.to_string())?;
    let team = if kind.team_game {
        let view = update
            .view
            .as_ref()
            .ok_or("the final update carries no view")?;
        let rounds = kind
            .team_rounds(view)
            .ok_or_else(|| format!("the final update carries no {} view", kind.name))?;
        Some(TeamResult {
            vaults: rounds.won_rounds,
            alarms: rounds.lost_rounds,
            won: rounds.won,
        })
    } else {
        None
    };
    Ok(GameResult {
        game,
        seats,
        team,
        notes: Vec::new(),
    })
}
