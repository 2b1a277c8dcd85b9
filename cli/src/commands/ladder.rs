//! `gangs ladder ...`: the server's ladders (`gangs.v1.Ladders`): create one, register bots
//! (each gets its secret key, printed once), read the standings and the games, pause, resume
//! and retire bots, read a hosted bot's log. `--json` prints the proto's own messages in the
//! proto3 JSON mapping.

mod housekeeping;

use crate::client::Context;
use crate::commands::new::parse_key_value;
use crate::error::CliError;
use clap::{Args, Subcommand};
use gangs_proto::auth::KeyedLaddersClient;
use gangs_proto::json::to_json;
use gangs_proto::v1 as pb;

#[derive(Args)]
pub struct LadderArgs {
    #[command(subcommand)]
    command: LadderCommand,
}

#[derive(Subcommand)]
enum LadderCommand {
    /// Create a ladder (admin key): a kind of game, its seats and options, and its clocks.
    Create {
        /// The ladder's name: letters, digits, '-', '_' and '.'.
        name: String,
        #[arg(long, help = format!("The game: {}.", gangs_games::kind_names_help()))]
        kind: String,
        /// Seats per game (omitted: the game's default).
        #[arg(long)]
        players: Option<u32>,
        /// A game option, `key=value`; repeat for several (`gangs rules KIND` lists the keys).
        #[arg(long = "option", value_name = "KEY=VALUE", value_parser = parse_key_value)]
        options: Vec<(String, String)>,
        /// Time per decision, ms (default 2000): clocks are mandatory on a ladder.
        #[arg(long)]
        turn_ms: Option<u64>,
        /// Time bank per seat and game, ms (default 0).
        #[arg(long)]
        bank_ms: Option<u64>,
        /// Timeouts in a row after which a seat is absent and its bot paused (default 3).
        #[arg(long)]
        absent_after: Option<u32>,
        /// Play each deal once per seat rotation with the same group, rated on the aggregate.
        #[arg(long)]
        duplicate: bool,
        /// Enter one of the server's own bots (a shipped policy that plays the ladder's game:
        /// `random` for every game, and the game's own; the server names them if BOT is not one)
        /// as `house-NAME@1`; repeat for several.
        #[arg(long = "house", value_name = "BOT")]
        house_bots: Vec<String>,
        /// When the first season ends, an RFC 3339 time (2026-12-18T17:00:00Z); omitted: when
        /// you end it (`gangs ladder season NAME --end`).
        #[arg(long, value_name = "AT")]
        season_ends: Option<String>,
        /// Hosted bots' fuel per decision, about one unit per WebAssembly instruction
        /// (default 300000000).
        #[arg(long, value_name = "UNITS")]
        hosted_fuel: Option<u64>,
        /// Hosted bots' memory per instance, bytes (default 67108864, 64 MiB).
        #[arg(long, value_name = "BYTES")]
        hosted_memory_bytes: Option<u64>,
        /// Hosted bots' largest module, bytes (default 8388608, 8 MiB; at most the server's
        /// --max-module-bytes).
        #[arg(long, value_name = "BYTES")]
        hosted_module_bytes: Option<u64>,
    },
    /// Upload a hosted bot (a WebAssembly module, WASI preview 1: docs/hosted-bots.md): the
    /// server checks it, enters it as a new version of BOT and plays it for you. Needs the
    /// admin key, a key of one of BOT's versions (--bot-key), or, on a server with
    /// --open-registration, no key for a new bot. Prints the version's key, once.
    Submit {
        /// The ladder.
        name: String,
        /// The bot's name: letters, digits, '-', '_' and '.'.
        bot: String,
        /// The module or component (.wasm): a WASI command module, or a component of the
        /// world gangs:bot/bot (a Python bot built with componentize-py).
        #[arg(long, value_name = "FILE")]
        wasm: std::path::PathBuf,
        /// The new version (default: the next number after the bot's versions).
        #[arg(long)]
        version: Option<String>,
        /// A key of one of the bot's versions, sent instead of --api-key.
        #[arg(long, env = "GANGS_BOT_KEY", hide_env_values = true)]
        bot_key: Option<String>,
    },
    /// A hosted bot's log: what its module wrote on stderr in each decision of its recent games
    /// (seq, seat, fuel, the cause of a failed decision), newest game first. The server keeps
    /// it in memory since it started: each version's newest 32 games, 64 KiB per game. Needs
    /// the admin key or a key of one of BOT's versions (--bot-key).
    BotLog {
        /// The ladder.
        name: String,
        /// The bot: `BOT@VERSION`, or `BOT` for all its hosted versions.
        bot: String,
        /// Only this game.
        #[arg(long, value_name = "GAME_ID")]
        game: Option<String>,
        /// A key of one of the bot's versions, sent instead of --api-key.
        #[arg(long, env = "GANGS_BOT_KEY", hide_env_values = true)]
        bot_key: Option<String>,
    },
    /// Register a bot's version on a ladder (admin key); prints its bot key, once.
    Register {
        /// The ladder.
        name: String,
        /// The bot's name: letters, digits, '-', '_' and '.'.
        bot: String,
        /// The bot's version (default 1): each version is rated on its own.
        #[arg(long)]
        version: Option<String>,
    },
    /// The leaderboard: rating (μ, σ, μ−3σ), games, wins with a 95% interval, timeouts.
    Standings {
        /// The ladder.
        name: String,
        /// Also fit Plackett-Luce over every result at once (order-independent), with 95%
        /// bootstrap intervals and tiers of bots whose intervals overlap (not for team games).
        #[arg(long)]
        fit: bool,
        /// A season's standings (frozen once it is over); omitted: the current season.
        #[arg(long, value_name = "N")]
        season: Option<u32>,
        /// Print the table as CSV (RFC 4180, a header row): the columns of the viewer's CSV
        /// download.
        #[arg(long, conflicts_with = "fit")]
        csv: bool,
    },
    /// The ladder's games, newest first, with their results.
    Games {
        /// The ladder.
        name: String,
        /// At most this many games (at most 500).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Continue a listing: the `next_page_token` a previous call printed.
        #[arg(long)]
        page_token: Option<String>,
        /// Only the games matched in this season; omitted: every season's.
        #[arg(long, value_name = "N")]
        season: Option<u32>,
        /// Only this bot's games: `BOT@VERSION` (`BOT` alone: version 1).
        #[arg(long, value_name = "BOT@VERSION")]
        bot: Option<String>,
    },
    /// The server's ladders.
    List,
    /// Stop matching a bot's version (admin key); `--resume` matches it again.
    Pause {
        /// The ladder.
        name: String,
        bot: String,
        #[arg(long)]
        version: Option<String>,
        #[arg(long)]
        resume: bool,
    },
    /// Retire a bot's version for good (admin key): never matched again, kept in the standings.
    /// Asks for confirmation on a terminal.
    Retire {
        /// The ladder.
        name: String,
        bot: String,
        #[arg(long)]
        version: Option<String>,
        /// Do not ask (needed when no terminal can answer, e.g. in a script).
        #[arg(long)]
        yes: bool,
    },
    /// Recompute the leaderboard from the games' own logs (admin key) and compare it with the
    /// kept one: exit code 1 (`RERATE_DIFFERS`) when they differ. Changes nothing.
    Rerate {
        /// The ladder.
        name: String,
        /// Recompute this season's standings (a season over: its frozen table); omitted: the
        /// current season.
        #[arg(long, value_name = "N")]
        season: Option<u32>,
    },
    /// Delete a ladder (admin key): it leaves the lists and its name is free again. Refused
    /// while its games are in play unless `--force`, which cancels them.
    Delete {
        /// The ladder.
        name: String,
        /// Cancel the ladder's games in play.
        #[arg(long)]
        force: bool,
    },
    /// Rename a ladder (admin key): its standings, games and links follow the new name; its
    /// bots queue again with the new name.
    Rename {
        /// The ladder.
        name: String,
        /// Its new name: letters, digits, '-', '_' and '.'.
        new_name: String,
    },
    /// Give a bot's version a new key (admin key), printed once; the rating stays. The old
    /// key plays the games it is seated in to their end; queueing needs the new key.
    Rekey {
        /// The ladder.
        name: String,
        /// The bot, as BOT@VERSION (or BOT: version 1).
        bot: String,
        #[arg(long)]
        version: Option<String>,
        /// Cut the old key off at once, its games in play included (a leaked key).
        #[arg(long)]
        now: bool,
    },
    /// End the current season now (`--end`) or set when it ends (`--ends AT`): its standings
    /// are frozen and the next season starts every bot from the initial rating (admin key).
    Season {
        /// The ladder.
        name: String,
        /// End the current season now.
        #[arg(long)]
        end: bool,
        /// When the current season ends (with --end: the next one), an RFC 3339 time.
        #[arg(long, value_name = "AT", conflicts_with = "no_end")]
        ends: Option<String>,
        /// The current season has no planned end any more.
        #[arg(long)]
        no_end: bool,
    },
}

pub async fn run(args: LadderArgs, context: &Context) -> Result<(), CliError> {
    let mut client = context.api_key.ladders(context.channel().await?);
    match args.command {
        LadderCommand::Create {
            name,
            kind,
            players,
            options,
            turn_ms,
            bank_ms,
            absent_after,
            duplicate,
            house_bots,
            season_ends,
            hosted_fuel,
            hosted_memory_bytes,
            hosted_module_bytes,
        } => {
            let season_ends_unix_ms = season_ends
                .as_deref()
                .map(housekeeping::parse_time)
                .transpose()?;
            let request = pb::CreateLadderRequest {
                name,
                kind,
                players,
                options: options.into_iter().collect(),
                turn_ms,
                bank_ms,
                absent_after,
                duplicate,
                house_bots,
                season_ends_unix_ms,
                hosted_fuel,
                hosted_memory_bytes,
                hosted_module_bytes,
            };
            create(&mut client, context, request).await?;
        }
        LadderCommand::Submit {
            name,
            bot,
            wasm,
            version,
            bot_key,
        } => submit(context, name, bot, wasm, version, bot_key).await?,
        LadderCommand::BotLog {
            name,
            bot,
            game,
            bot_key,
        } => bot_log(context, name, bot, game, bot_key).await?,
        LadderCommand::Register { name, bot, version } => {
            register(&mut client, context, name, bot, version).await?;
        }
        LadderCommand::Standings {
            name,
            fit,
            season,
            csv,
        } => {
            let request = pb::StandingsRequest {
                ladder: name,
                fit,
                season: season.unwrap_or(0),
            };
            standings(&mut client, context, request, csv).await?;
        }
        LadderCommand::Games {
            name,
            limit,
            page_token,
            season,
            bot,
        } => {
            let (bot, version) = match &bot {
                Some(bot) => housekeeping::bot_and_version(bot, None)?,
                None => Default::default(),
            };
            let request = pb::LadderGamesRequest {
                ladder: name,
                page_size: limit,
                page_token: page_token.unwrap_or_default(),
                season: season.unwrap_or(0),
                bot,
                version,
            };
            games(&mut client, context, request).await?;
        }
        LadderCommand::List => list(&mut client, context).await?,
        LadderCommand::Pause {
            name,
            bot,
            version,
            resume,
        } => {
            let request = pb::PauseBotRequest {
                ladder: name,
                bot,
                version: version.unwrap_or_default(),
                resume,
            };
            pause(&mut client, context, request).await?;
        }
        LadderCommand::Rerate { name, season } => {
            rerate(&mut client, context, name, season).await?;
        }
        LadderCommand::Retire {
            name,
            bot,
            version,
            yes,
        } => retire(&mut client, context, name, bot, version, yes).await?,
        LadderCommand::Delete { name, force } => {
            housekeeping::delete(&mut client, context, name, force).await?;
        }
        LadderCommand::Rename { name, new_name } => {
            housekeeping::rename(&mut client, context, name, new_name).await?;
        }
        LadderCommand::Rekey {
            name,
            bot,
            version,
            now,
        } => {
            housekeeping::rekey(&mut client, context, name, bot, version, now).await?;
        }
        LadderCommand::Season {
            name,
            end,
            ends,
            no_end,
        } => {
            housekeeping::season(&mut client, context, name, end, ends, no_end).await?;
        }
    }
    Ok(())
}

/// `gangs ladder retire`: after a confirmation (or `--yes`).
async fn retire(
    client: &mut KeyedLaddersClient,
    context: &Context,
    name: String,
    bot: String,
    version: Option<String>,
    yes: bool,
) -> Result<(), CliError> {
    let refused = |s| context.refused(s);
    let what = format!(
        "{bot}@{} from ladder {name}",
        version.as_deref().unwrap_or("1")
    );
    housekeeping::confirm_retire(&what, yes)?;
    client
        .retire_bot(pb::RetireBotRequest {
            ladder: name,
            bot: bot.clone(),
            version: version.unwrap_or_default(),
        })
        .await
        .map_err(refused)?;
    context
        .out
        .emit(serde_json::json!({ "bot": bot, "retired": true }), || {
            format!("{bot} retired")
        });
    Ok(())
}

/// `gangs ladder standings`: the table (or CSV), with the season's header.
async fn standings(
    client: &mut KeyedLaddersClient,
    context: &Context,
    request: pb::StandingsRequest,
    csv: bool,
) -> Result<(), CliError> {
    let refused = |s| context.refused(s);
    let standings = client
        .standings(request)
        .await
        .map_err(refused)?
        .into_inner();
    if csv {
        print!("{}", gangs_proto::csv::standings_csv(&standings.standings));
        return Ok(());
    }
    context
        .out
        .emit(to_json(&standings, "gangs.v1.StandingsResponse"), || {
            let table = standings_lines(&standings);
            match &standings.season {
                Some(season) => format!("{}\n{table}", housekeeping::season_header(season)),
                None => table,
            }
        });
    Ok(())
}

/// `gangs ladder list`: every ladder, one line each.
async fn list(client: &mut KeyedLaddersClient, context: &Context) -> Result<(), CliError> {
    let refused = |s| context.refused(s);
    let list = client
        .list_ladders(pb::ListLaddersRequest {})
        .await
        .map_err(refused)?
        .into_inner();
    context
        .out
        .emit(to_json(&list, "gangs.v1.ListLaddersResponse"), || {
            if list.ladders.is_empty() {
                return format!(
                    "no ladders: `gangs ladder create NAME --kind {}` creates one",
                    gangs_games::kinds()[0].name
                );
            }
            list.ladders
                .iter()
                .map(|l| format!("{}  {}", l.name, ladder_line(l)))
                .collect::<Vec<_>>()
                .join("\n")
        });
    Ok(())
}

/// `gangs ladder pause` (and `--resume`).
async fn pause(
    client: &mut KeyedLaddersClient,
    context: &Context,
    request: pb::PauseBotRequest,
) -> Result<(), CliError> {
    let refused = |s| context.refused(s);
    let (bot, resume) = (request.bot.clone(), request.resume);
    client.pause_bot(request).await.map_err(refused)?;
    let word = if resume { "resumed" } else { "paused" };
    context
        .out
        .emit(serde_json::json!({ "bot": bot, "paused": !resume }), || {
            format!("{bot} {word}")
        });
    Ok(())
}

/// `gangs ladder create`: the ladder as the server made it, and how to register a bot.
async fn create(
    client: &mut KeyedLaddersClient,
    context: &Context,
    request: pb::CreateLadderRequest,
) -> Result<(), CliError> {
    let refused = |s| context.refused(s);
    let created = client
        .create_ladder(request)
        .await
        .map_err(refused)?
        .into_inner();
    let ladder = created.ladder.unwrap_or_default();
    context.out.emit(to_json(&ladder, "gangs.v1.Ladder"), || {
        format!(
            "ladder {} created: {}\nregister bots: `gangs ladder register {} BOT`",
            ladder.name,
            ladder_line(&ladder),
            ladder.name
        )
    });
    Ok(())
}

/// `gangs ladder register`: the bot key, shown once, and the command that plays with it.
async fn register(
    client: &mut KeyedLaddersClient,
    context: &Context,
    name: String,
    bot: String,
    version: Option<String>,
) -> Result<(), CliError> {
    let refused = |s| context.refused(s);
    let registered = client
        .register_bot(pb::RegisterBotRequest {
            ladder: name.clone(),
            bot,
            version: version.unwrap_or_default(),
        })
        .await
        .map_err(refused)?
        .into_inner();
    let mut value = to_json(&registered, "gangs.v1.RegisterBotResponse");
    value["ladder"] = serde_json::json!(name);
    // The hint works as printed: the server, its CA and the key are all the bot needs
    // (the bot key is its credential on a server with keys too).
    let ca = context
        .ca
        .as_ref()
        .map(|ca| format!(" --ca {}", ca.display()))
        .unwrap_or_default();
    let play = format!(
        "gangs-bot-greedy --server {}{ca} --ladder {name} --bot-key {}",
        context.server, registered.bot_key
    );
    context.out.emit(value, || {
        format!(
            "{}@{} registered on ladder {name}\nbot key (shown once, keep it secret): {}\nplay: {play}",
            registered.bot, registered.version, registered.bot_key
        )
    });
    Ok(())
}

/// `gangs ladder games`: one page of the ladder's games, newest first.
async fn games(
    client: &mut KeyedLaddersClient,
    context: &Context,
    request: pb::LadderGamesRequest,
) -> Result<(), CliError> {
    let refused = |s| context.refused(s);
    let page = client
        .ladder_games(request)
        .await
        .map_err(refused)?
        .into_inner();
    context
        .out
        .emit(to_json(&page, "gangs.v1.LadderGamesResponse"), || {
            let mut lines: Vec<String> = page.games.iter().map(game_line).collect();
            if lines.is_empty() {
                lines.push("no games yet: bots play once they queue".into());
            }
            if !page.next_page_token.is_empty() {
                lines.push(format!("more: --page-token {}", page.next_page_token));
            }
            lines.join("\n")
        });
    Ok(())
}

/// `gangs ladder rerate`: the ratings the games' logs give, against the kept standings (an
/// error when they differ).
async fn rerate(
    client: &mut KeyedLaddersClient,
    context: &Context,
    name: String,
    season: Option<u32>,
) -> Result<(), CliError> {
    let refused = |s| context.refused(s);
    let rerated = client
        .rerate_ladder(pb::RerateLadderRequest {
            ladder: name.clone(),
            season: season.unwrap_or(0),
        })
        .await
        .map_err(refused)?
        .into_inner();
    let table = pb::StandingsResponse {
        ladder: None,
        standings: rerated.standings.clone(),
        season: None,
    };
    context
        .out
        .emit(to_json(&rerated, "gangs.v1.RerateLadderResponse"), || {
            let mut lines = vec![
                format!(
                    "ladder {name} rerated from the logs of its {} rated games:",
                    rerated.games
                ),
                standings_lines(&table),
            ];
            if rerated.same {
                lines.push("the same as the kept standings".into());
            } else {
                lines.push("DIFFERENT from the kept standings:".into());
                lines.extend(rerated.differences.iter().map(|d| format!("  {d}")));
            }
            lines.join("\n")
        });
    if !rerated.same {
        return Err(CliError::new(
            "RERATE_DIFFERS",
            format!("the standings of ladder {name} differ from the ratings its games' logs give"),
        )
        .in_json_result());
    }
    Ok(())
}

/// The largest file `gangs ladder submit` reads (the server's --max-module-bytes is at most
/// this too).
const MAX_WASM_FILE: u64 = 256 << 20;

async fn submit(
    context: &Context,
    name: String,
    bot: String,
    wasm: std::path::PathBuf,
    version: Option<String>,
    bot_key: Option<String>,
) -> Result<(), CliError> {
    let size = std::fs::metadata(&wasm)
        .map_err(|e| CliError::invalid(format!("--wasm {}: {e}", wasm.display())))?
        .len();
    if size > MAX_WASM_FILE {
        return Err(CliError::invalid(format!(
            "--wasm {}: {size} bytes, more than any server takes ({MAX_WASM_FILE})",
            wasm.display()
        )));
    }
    let module = std::fs::read(&wasm)
        .map_err(|e| CliError::invalid(format!("--wasm {}: {e}", wasm.display())))?;
    let key = match bot_key.as_deref() {
        Some(key) => gangs_proto::auth::ApiKey::new(Some(key)).map_err(CliError::invalid)?,
        None => context.api_key.clone(),
    };
    let submitted = key
        .ladders(context.channel().await?)
        .submit_bot(pb::SubmitBotRequest {
            ladder: name.clone(),
            bot,
            version: version.unwrap_or_default(),
            module,
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let mut value = to_json(&submitted, "gangs.v1.SubmitBotResponse");
    value["ladder"] = serde_json::json!(name);
    context.out.emit(value, || {
        format!(
            "{}@{} entered on ladder {name}: hosted ({}, module sha256 {}); the sample decision used {} fuel and answered {:?}\nbot key (shown once, keep it secret): {}\nthe server plays it now: `gangs ladder standings {name}`",
            submitted.bot,
            submitted.version,
            submitted.engine,
            submitted.module_sha256,
            submitted.sample_fuel,
            submitted.sample_answer,
            submitted.bot_key
        )
    });
    Ok(())
}

/// `gangs ladder bot-log LADDER BOT [--game ID]`.
async fn bot_log(
    context: &Context,
    name: String,
    bot: String,
    game: Option<String>,
    bot_key: Option<String>,
) -> Result<(), CliError> {
    let key = match bot_key.as_deref() {
        Some(key) => gangs_proto::auth::ApiKey::new(Some(key)).map_err(CliError::invalid)?,
        None => context.api_key.clone(),
    };
    let log = key
        .ladders(context.channel().await?)
        .get_bot_log(pb::GetBotLogRequest {
            ladder: name.clone(),
            bot,
            game_id: game.unwrap_or_default(),
        })
        .await
        .map_err(|s| context.refused(s))?
        .into_inner();
    let mut value = to_json(&log, "gangs.v1.GetBotLogResponse");
    value["ladder"] = serde_json::json!(name);
    context.out.emit(value, || bot_log_lines(&name, &log));
    Ok(())
}

/// A bot's log for people: a line per game, a line per decision, its stderr indented below.
fn bot_log_lines(ladder: &str, log: &pb::GetBotLogResponse) -> String {
    if log.games.is_empty() {
        return format!(
            "no log of {} on ladder {ladder} yet: the server keeps the stderr of each hosted version's newest {} games, since it started",
            log.bot, log.max_games
        );
    }
    let mut lines = Vec::new();
    for game in &log.games {
        let mut head = format!(
            "game {}  {}  {} decisions logged, {} quiet",
            game.game_id,
            game.entry,
            game.decisions.len(),
            game.quiet_decisions
        );
        if game.dropped_decisions > 0 {
            head.push_str(&format!(
                ", {} older dropped ({} bytes of stderr: a game keeps {} KiB)",
                game.dropped_decisions,
                game.dropped_bytes,
                log.max_game_bytes >> 10
            ));
        }
        lines.push(head);
        for decision in &game.decisions {
            let mut line = format!(
                "  seq {}  seat {}  fuel {}",
                decision.seq, decision.seat, decision.fuel
            );
            if !decision.cause.is_empty() {
                line.push_str(&format!("  failed: {}", decision.cause));
            }
            lines.push(line);
            lines.extend(decision.stderr.lines().map(|l| format!("    {l}")));
        }
    }
    lines.join("\n")
}

fn ladder_line(l: &pb::Ladder) -> String {
    let house = if l.house_bots.is_empty() {
        String::new()
    } else {
        format!(", house bots {}", l.house_bots.join(" "))
    };
    let hosted = if l.hosted_fuel == 0 {
        String::new()
    } else {
        format!(
            ", hosted bots {} fuel / {} MiB / {} KiB module",
            l.hosted_fuel,
            l.hosted_memory_bytes >> 20,
            l.hosted_module_bytes >> 10
        )
    };
    format!(
        "{} for {}, turn {} ms, absent after {}{}{house}{hosted}; {} bots, {} games rated; {}",
        l.kind,
        l.players,
        l.turn_ms,
        l.absent_after,
        if l.duplicate { ", duplicate" } else { "" },
        l.bots,
        l.games,
        housekeeping::season_line(l)
    )
}

/// A row's name in the table: `bot@version`, marked when retired or paused; the house entry of
/// a team game (the game itself as the opponent, not one of the house bots) says so.
fn row_name(row: &pb::Standing) -> String {
    if row.house {
        let players = row.version.trim_end_matches('p');
        return format!("(the game itself, {players} seats)");
    }
    let mut name = format!("{}@{}", row.bot, row.version);
    if row.retired {
        name.push_str(" (retired)");
    } else if row.state == pb::BotState::Capped as i32 {
        name.push_str(" (capped)");
    } else if row.paused {
        name.push_str(" (paused)");
    }
    name
}

fn standings_lines(s: &pb::StandingsResponse) -> String {
    let fitted = s.standings.iter().any(|r| r.fit.is_some());
    // As wide as the longest name (a 64-character bot name and its version fit).
    let width = s
        .standings
        .iter()
        .map(|r| row_name(r).chars().count())
        .max()
        .unwrap_or(0)
        .max(28);
    let mut header = format!(
        "{:>3}  {:<width$} {:>7} {:>6} {:>6} {:>6} {:>5} {:>17} {:>10} {:>8}",
        "#", "bot", "μ−3σ", "μ", "σ", "games", "wins", "win share (95%)", "mean score", "timeouts"
    );
    if fitted {
        header.push_str(&format!("  {:>22} {:>4}", "fit (95%)", "tier"));
    }
    let mut lines = vec![header];
    for (i, row) in s.standings.iter().enumerate() {
        let rating = row.rating.unwrap_or_default();
        let name = row_name(row);
        let fit = match row.fit {
            Some(fit) => format!(
                "  {fit:>6.2} [{:>6.2}, {:>6.2}] {:>4}",
                row.fit_low, row.fit_high, row.tier
            ),
            None if fitted => format!("  {:>22} {:>4}", "-", "-"),
            None => String::new(),
        };
        lines.push(format!(
            "{:>3}  {:<width$} {:>7.2} {:>6.2} {:>6.2} {:>6} {:>5} {:>5.2} [{:.2}, {:.2}] {:>10.2} {:>8}{fit}",
            i + 1,
            name,
            row.conservative,
            rating.mu,
            rating.sigma,
            row.games,
            row.wins,
            row.win_share,
            row.win_share_low,
            row.win_share_high,
            row.mean_score,
            row.timeouts
        ));
    }
    if s.standings.is_empty() {
        lines.push("no bots yet: `gangs ladder register LADDER BOT`".into());
    } else if let Some(kind) = s
        .ladder
        .as_ref()
        .and_then(|l| gangs_games::kind(&l.kind).ok())
    {
        lines.push(format!("mean score: {}", kind.score_words));
    }
    // Why each paused or capped bot is not matched.
    for row in &s.standings {
        if !row.state_reason.is_empty() && !row.retired {
            let what = if row.state == pb::BotState::Capped as i32 {
                "capped"
            } else {
                "paused"
            };
            lines.push(format!(
                "{}@{} {what}: {}",
                row.bot, row.version, row.state_reason
            ));
        }
    }
    lines.join("\n")
}

fn game_line(g: &pb::LadderGame) -> String {
    let result = match (&g.outcome, g.void, g.finished_unix_ms) {
        (_, true, _) if !g.void_reason.is_empty() => format!("void (not rated): {}", g.void_reason),
        (_, true, _) => "void (not rated)".to_string(),
        (Some(o), _, _) => o.summary.clone(),
        (None, _, None) => "playing".to_string(),
        (None, _, Some(_)) => "over".to_string(),
    };
    format!(
        "{}  match {}  {}  {}",
        if g.game_id.is_empty() {
            "-"
        } else {
            &g.game_id
        },
        g.r#match,
        g.names.join(", "),
        result
    )
}
