//! One arena game, start to end: create it with its seed, start the bots on their rotated
//! seats, take the result from the server as soon as the game is over (the bots get a grace
//! period to exit, then the ones still running are killed and named), count each seat's
//! timeouts and keep the game file.

use super::*;

/// How often a game's bots are checked for having exited.
const POLL_INTERVAL: Duration = Duration::from_millis(25);

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
    let (update, notes, killed) = supervise(arena, &mut client, &game_id, Bots::new(bots))
        .await
        .map_err(|e| format!("game {game_id}: {e}"))?;
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
    let killed = killed
        .into_iter()
        .map(|(bot, seat)| Killed {
            game_id: row.game_id.clone(),
            seat,
            bot,
        })
        .collect();
    Ok(Finished {
        result,
        row,
        killed,
    })
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
    let mut timeouts = vec![0u32; players];
    crate::client::read_log(client, game_id, 0, |record| {
        if let Some(pb::log_record::Record::TimedOut(t)) = &record.record {
            if let Some(count) = timeouts.get_mut(t.seat as usize) {
                *count += 1;
            }
        }
    })
    .await
    .map_err(|s| format!("cannot read the log: {}", s.message()))?;
    Ok(timeouts)
}

/// Runs the game's bots while the server plays the game, and returns the game's final update
/// (as soon as the server says it is over), notes on bots that failed while their seat played
/// on, and the bots that had to be killed because they were still running `arena.grace` after
/// the game ended (names and seats).
///
/// The server's word decides that the game is over, not the bots' exits: a bot that hangs
/// after it stopped playing (its seat played by its clock) neither holds the arena up until
/// `--game-timeout-secs` nor loses the game's result. Without clocks a bot that fails before
/// the game is over fails the game (nobody else can play its seat).
async fn supervise(
    arena: &Arena,
    client: &mut Client,
    game_id: &str,
    mut bots: Bots,
) -> Result<(pb::Update, Vec<String>, Vec<(String, usize)>), String> {
    let deadline = tokio::time::Instant::now() + arena.timeout;
    let over = watch_until_over(client.clone(), game_id.to_string());
    tokio::pin!(over);
    let mut notes = Vec::new();
    let mut outcome: Option<pb::Update> = None;
    let mut grace_end = None;
    loop {
        for exit in bots.reap() {
            let Err(failure) = exit else { continue };
            match (&outcome, arena.clocks) {
                (Some(_), _) => notes.push(format!("{failure} after the game ended")),
                (None, true) => notes.push(format!(
                    "{failure}: its seat played default actions from then on"
                )),
                // Dropping `bots` on return kills the others: they could never finish.
                (None, false) => return Err(failure),
            }
        }
        if bots.all_exited() {
            break;
        }
        let now = tokio::time::Instant::now();
        if grace_end.is_some_and(|end| now >= end) {
            let killed = bots.kill_running().await;
            for (bot, seat) in &killed {
                notes.push(format!(
                    "bot {bot:?} at seat {seat} was still running {}s after the game ended: killed",
                    arena.grace.as_secs_f64()
                ));
            }
            let update = outcome.expect("the grace period starts with the outcome");
            return Ok((update, notes, killed));
        }
        if outcome.is_none() && now >= deadline {
            return Err(not_finished(arena, &notes));
        }
        tokio::select! {
            ended = &mut over, if outcome.is_none() => {
                outcome = Some(ended?);
                grace_end = Some(tokio::time::Instant::now() + arena.grace);
            }
            _ = tokio::time::sleep(POLL_INTERVAL) => {}
        }
    }
    if let Some(update) = outcome {
        return Ok((update, notes, Vec::new()));
    }
    // Every bot exited before the server said the game is over. With clocks the seats of the
    // bots that left play on by their clocks until the game ends; without, the end is only
    // moments away (the last action's update reached the bots first) or never comes.
    let wait = if arena.clocks {
        deadline.saturating_duration_since(tokio::time::Instant::now())
    } else {
        OUTCOME_TIMEOUT
    };
    match tokio::time::timeout(wait, over).await {
        Ok(ended) => Ok((ended?, notes, Vec::new())),
        Err(_) if arena.clocks => Err(not_finished(arena, &notes)),
        Err(_) => Err(format!(
            "every bot exited, but the game was not over {}s later{}",
            OUTCOME_TIMEOUT.as_secs(),
            notes.iter().map(|n| format!("; {n}")).collect::<String>()
        )),
    }
}

/// The game outlived --game-timeout-secs; the bots that failed meanwhile are the likely cause.
fn not_finished(arena: &Arena, notes: &[String]) -> String {
    let mut error = format!(
        "the game did not finish within {}s (raise --game-timeout-secs if the bots are slow)",
        arena.timeout.as_secs()
    );
    for note in notes {
        error.push_str("; ");
        error.push_str(note);
    }
    error
}

/// Watches the game as a spectator until an update says it is over, resuming a broken stream
/// where it stopped; that update, which must carry the outcome of a finished game.
async fn watch_until_over(mut client: Client, game_id: String) -> Result<pb::Update, String> {
    let mut from_seq = 0;
    let mut backoff = gangs_proto::retry::Backoff::default();
    let mut outage: Option<tokio::time::Instant> = None;
    loop {
        let failure = match client
            .watch(pb::WatchRequest {
                game_id: game_id.clone(),
                token: String::new(),
                from_seq,
                ..Default::default()
            })
            .await
        {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                loop {
                    match stream.message().await {
                        Ok(Some(update)) => {
                            from_seq = from_seq.max(update.seq);
                            backoff = Default::default();
                            outage = None;
                            if pb::GameStatus::is_over_code(update.status) {
                                return over(update);
                            }
                        }
                        Ok(None) => break tonic::Status::unavailable("the stream ended"),
                        Err(status) => break status,
                    }
                }
            }
            Err(status) => status,
        };
        let since = *outage.get_or_insert_with(tokio::time::Instant::now);
        if !gangs_proto::retry::is_transient(&failure)
            || since.elapsed() > gangs_proto::retry::OUTAGE_BUDGET
        {
            return Err(format!("cannot watch the game: {}", failure.message()));
        }
        tokio::time::sleep(backoff.next_delay()).await;
    }
}

/// The update that ended the game, if it is a finished game's.
fn over(update: pb::Update) -> Result<pb::Update, String> {
    if update.status != pb::GameStatus::Finished as i32 {
        return Err(format!(
            "the game ended {} at seq {}",
            status_name(update.status),
            update.seq
        ));
    }
    if update.outcome.is_none() {
        return Err("the finished game's last update has no outcome".into());
    }
    Ok(update)
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
