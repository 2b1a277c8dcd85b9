//! A ladder's event-sourced records and the state they fold into.
//!
//! Each ladder has its own log in the ladders' namespace of the store (`store/mod.rs`,
//! `Namespace::Ladders`: never listed with the games), under an id of the same width as a
//! game's (16 characters) that starts with `ladder`, which every store (sled's fixed-width keys,
//! JetStream's subjects) takes as it is. Each record is a `LogRecord` whose `ladder` field holds an encoded `LadderRecord`.
//! The state ([`LadderState`]) is only ever changed by [`LadderState::apply`], live (after the
//! record is durable) and at a restart (record by record), so both reach the same standings.

use super::rating;
use gangs_proto::v1 as pb;
use pb::ladder_event::paused::Reason;
use pb::ladder_record::Record as Lr;
use prost::Message;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

/// Ratings kept per entry for the leaderboard's trend (`Standing.trend`).
pub const TREND_LEN: usize = 20;
/// Pauses and caps kept per entry for its page (`BotReport`): the newest this many.
pub const KEEP_STATE_CHANGES: usize = 50;

/// Matches kept in memory: the newest this many, and besides them every match not over and
/// every match of the last hour (the hourly cap counts those). Older ones stay in the log only
/// (`LadderGames` reads them from there); the entries' totals keep what they counted.
pub const KEEP_MATCHES: usize = 10_000;
const HOUR_MS: i64 = 3_600_000;

/// Every ladder's log id starts with this (never a game id: those are hex).
pub const LOG_PREFIX: &str = "ladder";

/// A new ladder's log id: the prefix and 10 random hex characters (16 in all, like a game id).
pub fn new_log_id() -> String {
    let id = format!(
        "{LOG_PREFIX}{:010x}",
        rand::random::<u64>() & 0xff_ffff_ffff
    );
    debug_assert_eq!(id.len(), crate::store::GAME_ID_LEN);
    id
}

/// `record` as the log's record number `seq`.
pub fn to_log(seq: u64, unix_ms: i64, record: Lr) -> pb::LogRecord {
    let ladder = pb::LadderRecord {
        record: Some(record),
    };
    pb::LogRecord {
        seq,
        unix_ms,
        record: Some(pb::log_record::Record::Ladder(ladder.encode_to_vec())),
    }
}

/// The ladder record a log record holds.
pub fn from_log(record: &pb::LogRecord) -> Result<Lr, String> {
    let Some(pb::log_record::Record::Ladder(bytes)) = &record.record else {
        return Err(format!("record {} is not a ladder record", record.seq));
    };
    pb::LadderRecord::decode(&bytes[..])
        .map_err(|e| format!("record {} does not decode: {e}", record.seq))?
        .record
        .ok_or_else(|| format!("record {} is empty", record.seq))
}

/// A version as given (empty: "1"); its bounds were checked in front.
pub(super) fn version_of(version: &str) -> String {
    if version.is_empty() { "1" } else { version }.to_string()
}

/// "bot@version": an entry's name, at its table and on the leaderboard.
pub fn entry_name(bot: &str, version: &str) -> String {
    format!("{bot}@{version}")
}

/// One bot version on the ladder.
#[derive(Debug, Clone)]
pub struct Entry {
    pub bot: String,
    pub version: String,
    pub key_sha256: String,
    pub rating: pb::Rating,
    pub games: u32,
    pub wins: u32,
    pub score_sum: i64,
    pub timeouts: u32,
    /// Timeouts in a row up to now, carried from game to game until the bot acts.
    pub timeouts_in_a_row: u32,
    pub paused: Option<(Reason, String)>,
    /// When the current pause began (the pause record's time; 0 when not paused).
    pub paused_unix_ms: i64,
    pub retired: bool,
    /// Games matched and not yet over.
    pub playing: u32,
    /// Its conservative rating after each of its last rated games, oldest first.
    pub trend: VecDeque<f64>,
    /// Its pauses, their lifting and its retirement, as logged, oldest first (the newest
    /// [`KEEP_STATE_CHANGES`]).
    pub pauses: VecDeque<pb::BotPause>,
    /// Each time it reached a cap, as logged, oldest first (the newest [`KEEP_STATE_CHANGES`]).
    pub caps: VecDeque<pb::BotCap>,
    /// A hosted bot's module (SubmitBot): the server makes its decisions.
    pub hosted: Option<Arc<HostedModule>>,
    /// Keys replaced by a rekey without `now` (SHA-256, the last match matched before): each
    /// still plays its games of those matches to their end, and nothing else. The newest few.
    pub replaced_keys: VecDeque<(String, u64)>,
}

/// Replaced keys an entry keeps playing their games (older ones stop).
pub const KEEP_REPLACED_KEYS: usize = 4;

/// A hosted entry's module, as submitted.
#[derive(Debug)]
pub struct HostedModule {
    pub module: Arc<[u8]>,
    pub module_sha256: String,
    /// The engine it was submitted for (`gangs_hosted::ENGINE`).
    pub engine: String,
}

/// Appends `item`, dropping the oldest past [`KEEP_STATE_CHANGES`].
fn keep_newest<T>(list: &mut VecDeque<T>, item: T) {
    if list.len() == KEEP_STATE_CHANGES {
        list.pop_front();
    }
    list.push_back(item);
}

impl Entry {
    pub fn name(&self) -> String {
        entry_name(&self.bot, &self.version)
    }

    /// Swaps its season's figures (rating, totals, trend) with `stats`.
    fn swap_stats(&mut self, stats: &mut Stats) {
        std::mem::swap(&mut self.rating, &mut stats.rating);
        std::mem::swap(&mut self.games, &mut stats.games);
        std::mem::swap(&mut self.wins, &mut stats.wins);
        std::mem::swap(&mut self.score_sum, &mut stats.score_sum);
        std::mem::swap(&mut self.timeouts, &mut stats.timeouts);
        std::mem::swap(&mut self.trend, &mut stats.trend);
    }
}

/// An entry's (or the house's) figures in one season: what a season's end freezes and the next
/// season starts afresh.
#[derive(Debug, Clone)]
pub struct Stats {
    pub rating: pb::Rating,
    pub games: u32,
    pub wins: u32,
    pub score_sum: i64,
    pub timeouts: u32,
    pub trend: VecDeque<f64>,
}

impl Stats {
    /// A season's start: the initial rating, nothing played.
    pub fn fresh() -> Stats {
        Stats {
            rating: rating::initial(),
            games: 0,
            wins: 0,
            score_sum: 0,
            timeouts: 0,
            trend: VecDeque::new(),
        }
    }
}

/// A season that is over: its frozen figures, by entry (entries registered later have none),
/// and the house's.
#[derive(Debug, Clone)]
pub struct PastSeason {
    pub number: u32,
    pub started_unix_ms: i64,
    pub ended_unix_ms: i64,
    /// Matches up to this number were matched in it.
    pub last_match: u64,
    pub entries: Vec<Stats>,
    pub house: Stats,
}

/// One game of a match.
#[derive(Debug, Clone, Default)]
pub struct MatchGame {
    /// Known once the game is created (again, after a restart).
    pub game_id: Option<String>,
    /// Each seat's token, by seat (known once joined).
    pub tokens: Vec<String>,
    pub result: Option<pb::ladder_record::GameRated>,
    pub finished_unix_ms: Option<i64>,
}

/// A match: one game, or one per seat rotation (duplicate).
#[derive(Debug, Clone)]
pub struct Match {
    pub no: u64,
    /// Entry indexes, the first game's seat order.
    pub entries: Vec<usize>,
    pub seed: u64,
    pub games: Vec<MatchGame>,
    pub matched_unix_ms: i64,
    /// The season it was matched in: its games are rated there, even once it is over.
    pub season: u32,
}

impl Match {
    pub fn is_over(&self) -> bool {
        self.games.iter().all(|g| g.result.is_some())
    }
}

/// Everything a ladder's log says.
#[derive(Debug, Clone)]
pub struct LadderState {
    pub log_id: String,
    pub info: pb::Ladder,
    pub entries: Vec<Entry>,
    pub by_name: HashMap<String, usize>,
    pub by_key: HashMap<String, usize>,
    /// The house's rating (team games).
    pub house: pb::Rating,
    pub house_games: u32,
    pub house_wins: u32,
    /// The house's conservative rating after each of its last rated games.
    pub house_trend: VecDeque<f64>,
    pub matches: BTreeMap<u64, Match>,
    /// Matches over and dropped from `matches` (older than the newest `keep_matches` and than an
    /// hour): their records are in the log.
    pub forgotten: u64,
    /// `KEEP_MATCHES`, or `usize::MAX` for a state that keeps the whole history.
    pub keep_matches: usize,
    /// The log's last seq.
    pub last_seq: u64,
    /// Games each pair of entries was matched to together (team ladders rotate partners).
    pub together: super::matchmaker::Together,
    /// The seasons that are over, oldest first (the current one is `info.season`).
    pub seasons: Vec<PastSeason>,
    /// The ladder was deleted (a restart leaves it out).
    pub deleted: bool,
    /// Its former names and when each was left (RenameLadder), oldest first.
    pub former_names: Vec<(String, i64)>,
}

impl LadderState {
    /// The state after the log's first record, which creates the ladder.
    pub fn new(log_id: String, mut info: pb::Ladder) -> LadderState {
        // A ladder created before seasons existed is in its first season since its creation.
        if info.season == 0 {
            info.season = 1;
            info.season_started_unix_ms = info.created_unix_ms;
        }
        LadderState {
            log_id,
            info,
            entries: Vec::new(),
            by_name: HashMap::new(),
            by_key: HashMap::new(),
            house: rating::initial(),
            house_games: 0,
            house_wins: 0,
            house_trend: VecDeque::new(),
            matches: BTreeMap::new(),
            forgotten: 0,
            keep_matches: KEEP_MATCHES,
            last_seq: 0,
            together: HashMap::new(),
            seasons: Vec::new(),
            deleted: false,
            former_names: Vec::new(),
        }
    }

    /// Rebuilds a ladder from its whole log (keeping in memory what the live state keeps).
    pub fn rebuild(log_id: &str, records: &[pb::LogRecord]) -> Result<LadderState, String> {
        Self::rebuild_keeping(log_id, records, KEEP_MATCHES)
    }

    /// Rebuilds a ladder from its whole log with every match in memory (old `LadderGames`
    /// pages).
    pub fn rebuild_with_history(
        log_id: &str,
        records: &[pb::LogRecord],
    ) -> Result<LadderState, String> {
        Self::rebuild_keeping(log_id, records, usize::MAX)
    }

    fn rebuild_keeping(
        log_id: &str,
        records: &[pb::LogRecord],
        keep_matches: usize,
    ) -> Result<LadderState, String> {
        let mut state: Option<LadderState> = None;
        for record in records {
            let ladder_record = from_log(record)?;
            match (&mut state, ladder_record) {
                (None, Lr::Created(info)) => {
                    let mut s = LadderState::new(log_id.to_string(), info);
                    s.keep_matches = keep_matches;
                    s.last_seq = record.seq;
                    state = Some(s);
                }
                (None, _) => return Err("the log does not start with the ladder's creation".into()),
                (Some(s), r) => s.apply(record.seq, record.unix_ms, r)?,
            }
        }
        state.ok_or_else(|| "the log is empty".to_string())
    }

    pub fn next_match_no(&self) -> u64 {
        self.matches
            .keys()
            .next_back()
            .map_or(self.forgotten + 1, |n| n + 1)
    }

    /// Drops the oldest matches that are over beyond `keep_matches`, except those of the hour
    /// before `now_ms` (the time of the record being applied: the live state and a rebuild
    /// drop the same ones).
    fn forget_old_matches(&mut self, now_ms: i64) {
        let excess = self.matches.len().saturating_sub(self.keep_matches);
        if excess == 0 {
            return;
        }
        let old: Vec<u64> = self
            .matches
            .values()
            .filter(|m| m.is_over() && m.matched_unix_ms < now_ms - HOUR_MS)
            .map(|m| m.no)
            .take(excess)
            .collect();
        for no in old {
            self.matches.remove(&no);
            self.forgotten += 1;
        }
    }

    /// A new entry `bot@version` (BotRegistered, BotSubmitted).
    fn enter(
        &mut self,
        seq: u64,
        bot: String,
        version: String,
        key_sha256: String,
        hosted: Option<Arc<HostedModule>>,
    ) -> Result<(), String> {
        let name = entry_name(&bot, &version);
        if self.by_name.contains_key(&name) {
            return Err(format!("record {seq} registers {name} again"));
        }
        let index = self.entries.len();
        self.by_name.insert(name, index);
        self.by_key.insert(key_sha256.clone(), index);
        self.entries.push(Entry {
            bot,
            version,
            key_sha256,
            rating: rating::initial(),
            games: 0,
            wins: 0,
            score_sum: 0,
            timeouts: 0,
            timeouts_in_a_row: 0,
            paused: None,
            paused_unix_ms: 0,
            retired: false,
            playing: 0,
            trend: VecDeque::new(),
            pauses: VecDeque::new(),
            caps: VecDeque::new(),
            hosted,
            replaced_keys: VecDeque::new(),
        });
        self.info.bots = self.entries.len() as u32;
        Ok(())
    }

    /// Applies one durable record (seq `seq`, after the creation).
    pub fn apply(&mut self, seq: u64, unix_ms: i64, record: Lr) -> Result<(), String> {
        if seq != self.last_seq + 1 {
            return Err(format!(
                "record {seq} does not follow record {}",
                self.last_seq
            ));
        }
        self.last_seq = seq;
        match record {
            Lr::Created(_) => return Err(format!("record {seq} creates the ladder again")),
            Lr::Registered(r) => self.enter(seq, r.bot, r.version, r.key_sha256, None)?,
            Lr::Submitted(r) => {
                let hosted = HostedModule {
                    module: r.module.into(),
                    module_sha256: r.module_sha256,
                    engine: r.engine,
                };
                self.enter(seq, r.bot, r.version, r.key_sha256, Some(Arc::new(hosted)))?
            }
            Lr::Paused(p) => self.apply_paused(seq, unix_ms, p)?,
            Lr::Matched(m) => self.apply_matched(seq, unix_ms, m)?,
            Lr::Rated(r) => {
                // A game of a season that is over is rated in that season's figures.
                let past = self.past_season_of(r.r#match);
                if let Some(i) = past {
                    self.swap_season(i);
                }
                let rated = self.apply_rated(seq, unix_ms, r);
                if let Some(i) = past {
                    self.swap_season(i);
                }
                rated?;
            }
            Lr::SeasonEnded(e) => self.apply_season_ended(seq, unix_ms, e)?,
            Lr::SeasonPlanned(p) => self.info.season_ends_unix_ms = p.ends_unix_ms,
            Lr::Rekeyed(k) => self.apply_rekeyed(seq, k)?,
            Lr::Renamed(r) => {
                let was = std::mem::replace(&mut self.info.name, r.name);
                self.former_names.push((was, unix_ms));
            }
            Lr::Deleted(_) => self.deleted = true,
            Lr::Capped(c) => {
                let index = self.entry_index(&c.bot, &c.version, seq)?;
                keep_newest(
                    &mut self.entries[index].caps,
                    pb::BotCap {
                        unix_ms,
                        cap: c.cap,
                        flag: c.flag,
                        limit: c.limit,
                        until_unix_ms: c.until_unix_ms,
                        detail: c.detail,
                    },
                );
            }
        }
        Ok(())
    }

    /// A pause, lifted or not: kept on the entry's page; retired for good.
    fn apply_paused(
        &mut self,
        seq: u64,
        unix_ms: i64,
        p: pb::ladder_record::BotPaused,
    ) -> Result<(), String> {
        let index = self.entry_index(&p.bot, &p.version, seq)?;
        let entry = &mut self.entries[index];
        let reason = p.reason();
        keep_newest(
            &mut entry.pauses,
            pb::BotPause {
                unix_ms,
                reason: p.reason,
                detail: p.detail.clone(),
                lifted: p.lifted,
            },
        );
        if reason == Reason::Retired {
            entry.retired = true;
            entry.paused = Some((reason, p.detail));
            entry.paused_unix_ms = unix_ms;
        } else if p.lifted {
            // Lifting a pause of one kind leaves the other kind's pause alone.
            if entry.paused.as_ref().is_some_and(|(r, _)| *r == reason) {
                entry.paused = None;
                entry.paused_unix_ms = 0;
            }
            if matches!(reason, Reason::Timeouts | Reason::NoFirstAction) {
                entry.timeouts_in_a_row = 0;
            }
        } else if !entry.retired {
            entry.paused = Some((reason, p.detail));
            entry.paused_unix_ms = unix_ms;
        }
        Ok(())
    }

    /// A match: its entries' games in play and how often each pair met.
    fn apply_matched(
        &mut self,
        seq: u64,
        unix_ms: i64,
        m: pb::ladder_record::MatchMade,
    ) -> Result<(), String> {
        let mut entries = Vec::with_capacity(m.entries.len());
        for name in &m.entries {
            let index = *self
                .by_name
                .get(name)
                .ok_or_else(|| format!("record {seq} matches unknown entry {name}"))?;
            entries.push(index);
        }
        if m.games == 0 || m.r#match < self.next_match_no() {
            return Err(format!("record {seq}: match {} is malformed", m.r#match));
        }
        for &index in &entries {
            self.entries[index].playing += m.games;
        }
        for (k, &a) in entries.iter().enumerate() {
            for &b in &entries[k + 1..] {
                *self
                    .together
                    .entry(super::matchmaker::pair(a, b))
                    .or_default() += m.games;
            }
        }
        self.matches.insert(
            m.r#match,
            Match {
                no: m.r#match,
                entries,
                seed: m.seed,
                games: vec![MatchGame::default(); m.games as usize],
                matched_unix_ms: unix_ms,
                season: self.info.season,
            },
        );
        Ok(())
    }

    /// A season's end: its figures frozen, every entry's fresh.
    fn apply_season_ended(
        &mut self,
        seq: u64,
        unix_ms: i64,
        e: pb::ladder_record::SeasonEnded,
    ) -> Result<(), String> {
        if e.season != self.info.season {
            return Err(format!(
                "record {seq} ends season {} during season {}",
                e.season, self.info.season
            ));
        }
        let entries = self
            .entries
            .iter_mut()
            .map(|entry| {
                let mut stats = Stats::fresh();
                entry.swap_stats(&mut stats);
                stats
            })
            .collect();
        let mut house = Stats::fresh();
        self.swap_house(&mut house);
        self.seasons.push(PastSeason {
            number: e.season,
            started_unix_ms: self.info.season_started_unix_ms,
            ended_unix_ms: unix_ms,
            last_match: e.last_match,
            entries,
            house,
        });
        self.info.season += 1;
        self.info.season_started_unix_ms = unix_ms;
        self.info.season_ends_unix_ms = None;
        Ok(())
    }

    /// A new key for an entry; the old one plays out its matches unless cut off `now`.
    fn apply_rekeyed(&mut self, seq: u64, k: pb::ladder_record::BotRekeyed) -> Result<(), String> {
        let index = self.entry_index(&k.bot, &k.version, seq)?;
        let old = std::mem::replace(&mut self.entries[index].key_sha256, k.key_sha256);
        let replaced = &mut self.entries[index].replaced_keys;
        if k.now {
            // A leaked key: it plays nothing more, its earlier grace included.
            replaced.clear();
        } else {
            if replaced.len() == KEEP_REPLACED_KEYS {
                replaced.pop_front();
            }
            replaced.push_back((old.clone(), k.last_match));
        }
        self.by_key.remove(&old);
        self.by_key
            .insert(self.entries[index].key_sha256.clone(), index);
        Ok(())
    }

    /// The index in `seasons` of the season that is over in which match `no` was matched.
    fn past_season_of(&self, no: u64) -> Option<usize> {
        let season = self.matches.get(&no)?.season;
        self.seasons.iter().position(|s| s.number == season)
    }

    /// Swaps the current season's figures with those of past season `i` (and back, called
    /// again).
    fn swap_season(&mut self, i: usize) {
        let mut past = std::mem::take(&mut self.seasons[i].entries);
        for (entry, stats) in self.entries.iter_mut().zip(past.iter_mut()) {
            entry.swap_stats(stats);
        }
        self.seasons[i].entries = past;
        let mut house = std::mem::replace(&mut self.seasons[i].house, Stats::fresh());
        self.swap_house(&mut house);
        self.seasons[i].house = house;
    }

    fn swap_house(&mut self, stats: &mut Stats) {
        std::mem::swap(&mut self.house, &mut stats.rating);
        std::mem::swap(&mut self.house_games, &mut stats.games);
        std::mem::swap(&mut self.house_wins, &mut stats.wins);
        std::mem::swap(&mut self.house_trend, &mut stats.trend);
    }

    /// The state as season `number` left it (its frozen figures in the entries' places), or
    /// None when that season is not over (the current one, or one not begun).
    pub fn as_of_season(&self, number: u32) -> Option<LadderState> {
        let i = self.seasons.iter().position(|s| s.number == number)?;
        let mut state = self.clone();
        state.swap_season(i);
        // Entries registered (or versions submitted) after the season ended are not in its
        // table: entries only ever append, so the season's entries are the first ones.
        let members = state.seasons[i].entries.len();
        state.entries.truncate(members);
        state.by_name.retain(|_, &mut index| index < members);
        state.by_key.retain(|_, &mut index| index < members);
        Some(state)
    }

    /// The ratings before match `m` is rated, in entry order, and the house's: those of the
    /// season it was matched in.
    pub fn ratings_for(&self, m: &Match) -> (Vec<pb::Rating>, pb::Rating) {
        match self.seasons.iter().find(|s| s.number == m.season) {
            Some(past) => (
                m.entries
                    .iter()
                    .map(|&e| past.entries.get(e).map_or(rating::initial(), |s| s.rating))
                    .collect(),
                past.house.rating,
            ),
            None => (
                m.entries.iter().map(|&e| self.entries[e].rating).collect(),
                self.house,
            ),
        }
    }

    /// What `Standings` says of season `number`: its number, start, end (once over) and
    /// planned end (the current one's).
    pub fn season_info(&self, number: u32) -> Option<pb::Season> {
        if number == self.info.season {
            return Some(pb::Season {
                number,
                started_unix_ms: self.info.season_started_unix_ms,
                ended_unix_ms: None,
                ends_unix_ms: self.info.season_ends_unix_ms,
            });
        }
        let past = self.seasons.iter().find(|s| s.number == number)?;
        Some(pb::Season {
            number,
            started_unix_ms: past.started_unix_ms,
            ended_unix_ms: Some(past.ended_unix_ms),
            ends_unix_ms: None,
        })
    }

    fn entry_index(&self, bot: &str, version: &str, seq: u64) -> Result<usize, String> {
        let name = entry_name(bot, version);
        self.by_name
            .get(&name)
            .copied()
            .ok_or_else(|| format!("record {seq} names unknown entry {name}"))
    }

    fn apply_rated(
        &mut self,
        seq: u64,
        unix_ms: i64,
        r: pb::ladder_record::GameRated,
    ) -> Result<(), String> {
        let team_game = self.team_game();
        let players = self.info.players as usize;
        let m = self
            .matches
            .get_mut(&r.r#match)
            .ok_or_else(|| format!("record {seq} rates unknown match {}", r.r#match))?;
        let slot = m
            .games
            .get_mut(r.game as usize)
            .ok_or_else(|| format!("record {seq} rates unknown game {}", r.game))?;
        if slot.result.is_some() {
            return Err(format!(
                "record {seq} rates game {} of match {} again",
                r.game, r.r#match
            ));
        }
        slot.game_id = Some(r.game_id.clone());
        slot.finished_unix_ms = Some(unix_ms);
        let seats = super::matchmaker::seating(&m.entries, m.no, r.game as usize);
        let entries = m.entries.clone();
        for (seat, &index) in seats.iter().enumerate().take(players) {
            let entry = &mut self.entries[index];
            entry.playing = entry.playing.saturating_sub(1);
            let timeouts = r.timeouts.get(seat).copied().unwrap_or(0);
            entry.timeouts += timeouts;
            let trailing = r.trailing_timeouts.get(seat).copied().unwrap_or(0);
            if r.acted.get(seat).copied().unwrap_or(false) {
                entry.timeouts_in_a_row = trailing;
            } else {
                entry.timeouts_in_a_row += trailing;
            }
            if r.void {
                continue;
            }
            if let Some(o) = r.outcome.as_ref().and_then(|o| seat_outcome(o, seat)) {
                entry.games += 1;
                entry.wins += u32::from(o.won);
                entry.score_sum += o.score;
            }
        }
        if team_game && !r.void {
            if let Some(o) = &r.outcome {
                self.house_games += 1;
                self.house_wins += u32::from(!o.seats.iter().any(|s| s.won));
            }
        }
        if !r.void {
            self.info.games += 1;
        }
        m.games[r.game as usize].result = Some(r.clone());
        for (&index, after) in entries.iter().zip(&r.ratings_after) {
            let entry = &mut self.entries[index];
            entry.rating = *after;
            if entry.trend.len() == TREND_LEN {
                entry.trend.pop_front();
            }
            entry.trend.push_back(rating::conservative(after));
        }
        if let Some(house) = r.house_after {
            self.house = house;
            if self.house_trend.len() == TREND_LEN {
                self.house_trend.pop_front();
            }
            self.house_trend.push_back(rating::conservative(&house));
        }
        self.forget_old_matches(unix_ms);
        Ok(())
    }

    pub fn team_game(&self) -> bool {
        gangs_games::kind(&self.info.kind).is_ok_and(|k| k.team_game)
    }

    /// The ranks of a match's rated games, for the rating (void games left out).
    pub fn match_ranks(&self, m: &Match) -> Vec<rating::GameRanks> {
        let team_game = self.team_game();
        m.games
            .iter()
            .enumerate()
            .filter_map(|(g, game)| {
                let result = game.result.as_ref().filter(|r| !r.void)?;
                let outcome = result.outcome.as_ref()?;
                if team_game {
                    return Some(rating::GameRanks::Crew {
                        won: outcome.seats.iter().any(|s| s.won),
                    });
                }
                // Ranks in entry order: entry i sat at the seat seating() gave it.
                let seats = super::matchmaker::seating(&m.entries, m.no, g);
                let ranks = m
                    .entries
                    .iter()
                    .map(|e| {
                        let seat = seats.iter().position(|s| s == e)?;
                        seat_outcome(outcome, seat).map(|o| o.rank)
                    })
                    .collect::<Option<Vec<u32>>>()?;
                Some(rating::GameRanks::Solo(ranks))
            })
            .collect()
    }
}

/// A game's summary with each "seat N" named by its entry ("seat 2 wins with 2 points" with
/// `names[2]` = "alice@2": "alice@2 wins with 2 points"); a seat without a name stays as it is.
pub fn named_summary(summary: &str, names: &[String]) -> String {
    let mut out = String::with_capacity(summary.len());
    let mut rest = summary;
    while let Some(at) = rest.find("seat ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 5..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let name = after[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|seat| names.get(seat));
        match name {
            Some(name) if digits > 0 => {
                out.push_str(name);
                rest = &after[digits..];
            }
            _ => {
                out.push_str("seat ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Seat `seat`'s line of an outcome.
pub fn seat_outcome(outcome: &pb::Outcome, seat: usize) -> Option<&pb::SeatOutcome> {
    outcome.seats.iter().find(|s| s.seat as usize == seat)
}

#[cfg(test)]
mod tests;
