//! Per-seat clocks for untrusted bots: the options `turn_ms`, `bank_ms` and `absent_after`.
//!
//! Pure bookkeeping, no timers and no I/O. The host tells it, record by record, who acted,
//! whose deadline passed and which seats the game now waits for, each with the record's own
//! `unix_ms`; it answers with the next deadline. Replay and a restarted server feed it the same
//! records with the same times and so arrive at the same clocks: a wall-clock deadline survives
//! a restart, and a logged timeout can be checked against the clock that allowed it.
//!
//! The rules (also in docs/rules): each decision of a seat may take `turn_ms`; time past that
//! comes out of the seat's bank (`bank_ms`, once per game). When both are spent the seat's
//! default action is played for it (a timeout). After `absent_after` timeouts in a row the seat
//! is *absent*: its default is played as soon as its decision opens. Any action the seat sends
//! itself makes it present again. A phase deadline (The Gang's `phase_deadline_ms`) closes a
//! whole phase and is not a timeout of any seat: it does not count towards absence.

use crate::{Game, OptionSpec, OptionType, Refusal};
use gangs_proto::v1 as pb;
use pb::log_record::Record;

/// The clock options of a game. `turn_ms == 0` means the game has no clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockSettings {
    pub turn_ms: u64,
    pub bank_ms: u64,
    /// 0: a seat is never marked absent.
    pub absent_after: u32,
}

/// Accepted ranges, refused outside them when a game is created.
pub const TURN_MS_RANGE: std::ops::RangeInclusive<u64> = 50..=86_400_000;
pub const BANK_MS_RANGE: std::ops::RangeInclusive<u64> = 0..=86_400_000;
pub const ABSENT_AFTER_RANGE: std::ops::RangeInclusive<u32> = 0..=1_000;
/// Without `absent_after`, a seat is absent after this many timeouts in a row.
pub const DEFAULT_ABSENT_AFTER: u32 = 3;

/// The clock options every kind of game takes, declared once (parsing, `gangs rules`, docs).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "turn_ms",
        kind: OptionType::Count {
            min: *TURN_MS_RANGE.start(),
            max: *TURN_MS_RANGE.end(),
        },
        default: "none (no clocks)",
        meaning: "clocks: each decision of a seat may take this many ms, then its bank runs, then \
                  its default action is played for it (a timeout, logged)",
    },
    OptionSpec {
        key: "bank_ms",
        kind: OptionType::Count {
            min: *BANK_MS_RANGE.start(),
            max: *BANK_MS_RANGE.end(),
        },
        default: "0",
        meaning: "clocks: a time bank per seat and game (ms) for decisions longer than turn_ms; \
                  needs turn_ms",
    },
    OptionSpec {
        key: "absent_after",
        kind: OptionType::Count {
            min: *ABSENT_AFTER_RANGE.start() as u64,
            max: *ABSENT_AFTER_RANGE.end() as u64,
        },
        default: "3",
        meaning: "clocks: after this many timeouts in a row a seat is absent, its default played \
                  at once until it acts itself (0: never); needs turn_ms",
    },
];

/// The three clock fields of a game's wire options (`turn_ms`, `bank_ms`, `absent_after`),
/// as each game's options message carries them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireClock {
    pub turn_ms: Option<u64>,
    pub bank_ms: Option<u64>,
    pub absent_after: Option<u32>,
}

impl WireClock {
    /// Sets the CLI option `key` (`--option turn_ms=200`). `Ok(false)`: `key` is not a clock
    /// option.
    pub fn parse_option(&mut self, key: &str, value: &str) -> Result<bool, Refusal> {
        let Some(spec) = OPTIONS.iter().find(|s| s.key == key) else {
            return Ok(false);
        };
        let gangs_rules::engine::OptionValue::Count(n) = spec.parse(value)? else {
            unreachable!("clock options are counts")
        };
        match key {
            "turn_ms" => self.turn_ms = Some(n),
            "bank_ms" => self.bank_ms = Some(n),
            // The schema bounds it to ABSENT_AFTER_RANGE.
            _ => self.absent_after = Some(u32::try_from(n).unwrap_or(u32::MAX)),
        }
        Ok(true)
    }
}

impl ClockSettings {
    pub fn enabled(&self) -> bool {
        self.turn_ms > 0
    }

    /// The settings of wire options, refused (naming the option and its range) outside the
    /// documented ranges. `bank_ms` and `absent_after` need `turn_ms`.
    pub fn from_wire(wire: WireClock) -> Result<ClockSettings, Refusal> {
        let Some(turn_ms) = wire.turn_ms else {
            if wire.bank_ms.is_some_and(|b| b > 0) || wire.absent_after.is_some() {
                return Err(Refusal::invalid(
                    "bank_ms and absent_after need turn_ms (the time of one decision): set turn_ms too, e.g. turn_ms=10000",
                ));
            }
            return Ok(ClockSettings::default());
        };
        let out_of = |key: &str, value: u64, range: (u64, u64)| {
            Refusal::invalid(format!(
                "{key} must be {} to {} ms, not {value}",
                range.0, range.1
            ))
        };
        if !TURN_MS_RANGE.contains(&turn_ms) {
            let range = (*TURN_MS_RANGE.start(), *TURN_MS_RANGE.end());
            return Err(out_of("turn_ms", turn_ms, range));
        }
        let bank_ms = wire.bank_ms.unwrap_or(0);
        if !BANK_MS_RANGE.contains(&bank_ms) {
            let range = (*BANK_MS_RANGE.start(), *BANK_MS_RANGE.end());
            return Err(out_of("bank_ms", bank_ms, range));
        }
        let absent_after = wire.absent_after.unwrap_or(DEFAULT_ABSENT_AFTER);
        if !ABSENT_AFTER_RANGE.contains(&absent_after) {
            return Err(Refusal::invalid(format!(
                "absent_after must be {} to {} timeouts in a row, not {absent_after}",
                ABSENT_AFTER_RANGE.start(),
                ABSENT_AFTER_RANGE.end()
            )));
        }
        Ok(ClockSettings {
            turn_ms,
            bank_ms,
            absent_after,
        })
    }

    /// The wire fields, every default filled in (all absent without clocks), for the log's
    /// `created` record.
    pub fn to_wire(&self) -> WireClock {
        if !self.enabled() {
            return WireClock::default();
        }
        WireClock {
            turn_ms: Some(self.turn_ms),
            bank_ms: Some(self.bank_ms),
            absent_after: Some(self.absent_after),
        }
    }
}

/// One seat's clock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct SeatClock {
    /// When the seat's current decision opened (unix ms); `None` while the game does not wait
    /// for this seat.
    decision_since: Option<i64>,
    bank_left_ms: u64,
    timeouts_in_a_row: u32,
    absent: bool,
}

/// The next deadline of a game: `seat`'s decision times out at `at_unix_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    pub seat: usize,
    pub at_unix_ms: i64,
}

/// What one seat's clock shows (the wire's `SeatClock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatClockView {
    pub seat: usize,
    pub deadline_unix_ms: Option<i64>,
    pub bank_ms: u64,
    pub absent: bool,
}

/// The clocks of every seat of one game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clocks {
    settings: ClockSettings,
    seats: Vec<SeatClock>,
}

impl Clocks {
    pub fn new(settings: ClockSettings, players: usize) -> Clocks {
        let seat = SeatClock {
            bank_left_ms: settings.bank_ms,
            ..SeatClock::default()
        };
        Clocks {
            settings,
            seats: vec![seat; players],
        }
    }

    /// The clocks of `game`, if it has the `turn_ms` option.
    pub fn of(game: &dyn Game) -> Option<Clocks> {
        let settings = game.clock();
        settings
            .enabled()
            .then(|| Clocks::new(settings, game.players()))
    }

    pub fn settings(&self) -> ClockSettings {
        self.settings
    }

    /// After `record` was applied: an action of a seat or a timeout, then the seats the game
    /// now waits for (`awaited`: empty before the start and once the game is over). The host
    /// and replay both feed every record through here, with the record's own time, so they
    /// reach the same clocks.
    pub fn feed(&mut self, record: &pb::LogRecord, awaited: &[usize]) {
        let now = record.unix_ms;
        match &record.record {
            Some(Record::Acted(acted)) => self.acted(acted.seat as usize, now),
            Some(Record::TimedOut(timed_out)) => {
                self.timed_out(timed_out.seat as usize, now);
            }
            _ => {}
        }
        self.awaiting(now, awaited);
    }

    /// How long `seat`'s current decision has been open at `now`, ms.
    pub fn open_ms(&self, seat: usize, now: i64) -> u64 {
        elapsed(self.seats.get(seat).and_then(|c| c.decision_since), now)
    }

    /// Every seat's clock as the wire shows it (`Update.clocks`).
    pub fn to_pb(&self) -> Vec<pb::SeatClock> {
        self.views()
            .into_iter()
            .map(|v| pb::SeatClock {
                seat: v.seat as u32,
                deadline_unix_ms: v.deadline_unix_ms,
                bank_ms: v.bank_ms,
                absent: v.absent,
            })
            .collect()
    }

    /// `seat` sent an action itself at `now`: the time it took past `turn_ms` comes out of its
    /// bank, and it is present again.
    pub fn acted(&mut self, seat: usize, now: i64) {
        let turn_ms = self.settings.turn_ms;
        let Some(clock) = self.seats.get_mut(seat) else {
            return;
        };
        let used = elapsed(clock.decision_since, now);
        clock.bank_left_ms = clock
            .bank_left_ms
            .saturating_sub(used.saturating_sub(turn_ms));
        clock.timeouts_in_a_row = 0;
        clock.absent = false;
        clock.decision_since = None;
    }

    /// `seat`'s deadline passed and its default was played at `now`. Returns the time its
    /// decision had been open. The bank is spent (unless the seat was already absent, whose
    /// defaults are played at once and cost nothing).
    pub fn timed_out(&mut self, seat: usize, now: i64) -> u64 {
        let settings = self.settings;
        let Some(clock) = self.seats.get_mut(seat) else {
            return 0;
        };
        let used = elapsed(clock.decision_since, now);
        if !clock.absent {
            clock.bank_left_ms = clock
                .bank_left_ms
                .saturating_sub(used.saturating_sub(settings.turn_ms));
        }
        clock.timeouts_in_a_row = clock.timeouts_in_a_row.saturating_add(1);
        if settings.absent_after > 0 && clock.timeouts_in_a_row >= settings.absent_after {
            clock.absent = true;
        }
        clock.decision_since = None;
        used
    }

    /// After a record applied at `now`: the seats the game waits for. A seat that was already
    /// awaited keeps its decision's start; a newly awaited one starts now; the others stop.
    pub fn awaiting(&mut self, now: i64, awaited: &[usize]) {
        for (seat, clock) in self.seats.iter_mut().enumerate() {
            if awaited.contains(&seat) {
                clock.decision_since.get_or_insert(now);
            } else {
                clock.decision_since = None;
            }
        }
    }

    /// The host started running `seat`'s decision at `now`, having held it meanwhile (a hosted
    /// bot's decision waits in the host's pool of threads before it runs): the decision counts
    /// as opened at `now`, so the wait comes out of neither its turn nor its bank. Only ever
    /// later: the log's clocks (which replay rebuilds) stay the earliest deadlines the host
    /// uses, as after a resume. Nothing when the seat is not awaited.
    pub fn started_running(&mut self, seat: usize, now: i64) {
        if let Some(since) = self
            .seats
            .get_mut(seat)
            .and_then(|c| c.decision_since.as_mut())
        {
            *since = (*since).max(now);
        }
    }

    /// No seat is awaited any more (the game ended or was cancelled).
    pub fn stop(&mut self) {
        self.awaiting(0, &[]);
    }

    /// When `seat`'s current decision times out, if the game waits for it.
    pub fn deadline_of(&self, seat: usize) -> Option<i64> {
        if !self.settings.enabled() {
            return None;
        }
        let clock = self.seats.get(seat)?;
        let since = clock.decision_since?;
        let allowance = if clock.absent {
            0
        } else {
            self.settings.turn_ms.saturating_add(clock.bank_left_ms)
        };
        Some(since.saturating_add(i64::try_from(allowance).unwrap_or(i64::MAX)))
    }

    /// The host resumes the game after a gap it caused (a restart, or the game changing hands
    /// on a cluster): each awaited seat's deadline moves to `moved(deadline)`, and its decision
    /// counts as opened that much later, so the gap is taken from no seat's bank either.
    /// Deadlines only move later.
    pub fn resume(&mut self, moved: impl Fn(i64) -> i64) {
        for seat in 0..self.seats.len() {
            let Some(deadline) = self.deadline_of(seat) else {
                continue;
            };
            let shift = moved(deadline).saturating_sub(deadline).max(0);
            if let Some(since) = &mut self.seats[seat].decision_since {
                *since = since.saturating_add(shift);
            }
        }
    }

    /// The earliest deadline of the game (the lowest seat among equal ones).
    pub fn next_deadline(&self) -> Option<Deadline> {
        (0..self.seats.len())
            .filter_map(|seat| {
                self.deadline_of(seat)
                    .map(|at_unix_ms| Deadline { seat, at_unix_ms })
            })
            .min_by_key(|d| (d.at_unix_ms, d.seat))
    }

    /// Whether a timeout of `seat` at `now` is allowed by its clock (replay's check of a
    /// logged timeout).
    pub fn is_due(&self, seat: usize, now: i64) -> bool {
        self.deadline_of(seat).is_some_and(|at| now >= at)
    }

    pub fn is_absent(&self, seat: usize) -> bool {
        self.seats.get(seat).is_some_and(|c| c.absent)
    }

    pub fn views(&self) -> Vec<SeatClockView> {
        self.seats
            .iter()
            .enumerate()
            .map(|(seat, clock)| SeatClockView {
                seat,
                deadline_unix_ms: self.deadline_of(seat),
                bank_ms: clock.bank_left_ms,
                absent: clock.absent,
            })
            .collect()
    }
}

/// Milliseconds from `since` to `now`, 0 when not started or when the wall clock went back.
fn elapsed(since: Option<i64>, now: i64) -> u64 {
    since
        .map(|since| u64::try_from(now.saturating_sub(since)).unwrap_or(0))
        .unwrap_or(0)
}

/// The seats a game waits for, as the clocks count them: none before the start or once over.
pub fn awaited(game: &dyn Game, running: bool) -> Vec<usize> {
    if running && !game.is_over() {
        game.actors()
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_options_are_checked_and_filled() {
        assert_eq!(
            ClockSettings::from_wire(WireClock::default()).unwrap(),
            ClockSettings::default()
        );
        let on = ClockSettings::from_wire(WireClock {
            turn_ms: Some(200),
            ..WireClock::default()
        })
        .unwrap();
        assert_eq!(on.bank_ms, 0);
        assert_eq!(on.absent_after, DEFAULT_ABSENT_AFTER);
        assert_eq!(ClockSettings::from_wire(on.to_wire()).unwrap(), on);
        for bad in [0, 49, 86_400_001, u64::MAX] {
            let err = ClockSettings::from_wire(WireClock {
                turn_ms: Some(bad),
                ..WireClock::default()
            })
            .unwrap_err();
            assert!(
                err.message().contains("turn_ms must be 50 to 86400000"),
                "{err}"
            );
        }
        let err = ClockSettings::from_wire(WireClock {
            bank_ms: Some(5),
            ..WireClock::default()
        })
        .unwrap_err();
        assert!(err.message().contains("need turn_ms"), "{err}");
        let err = ClockSettings::from_wire(WireClock {
            turn_ms: Some(100),
            absent_after: Some(1001),
            ..WireClock::default()
        })
        .unwrap_err();
        assert!(
            err.message().contains("absent_after must be 0 to 1000"),
            "{err}"
        );
        let mut wire = WireClock::default();
        assert!(wire.parse_option("turn_ms", "250").unwrap());
        assert!(wire.parse_option("absent_after", "2").unwrap());
        assert!(!wire.parse_option("players", "4").unwrap());
        assert!(wire.parse_option("bank_ms", "-1").is_err());
        assert_eq!(wire.turn_ms, Some(250));
        assert_eq!(wire.absent_after, Some(2));
    }

    fn clocks(turn_ms: u64, bank_ms: u64, absent_after: u32) -> Clocks {
        Clocks::new(
            ClockSettings {
                turn_ms,
                bank_ms,
                absent_after,
            },
            3,
        )
    }

    #[test]
    fn a_decision_may_take_the_turn_plus_the_bank() {
        let mut c = clocks(200, 1_000, 2);
        c.awaiting(10_000, &[1]);
        assert_eq!(c.deadline_of(1), Some(11_200));
        assert_eq!(c.deadline_of(0), None);
        assert_eq!(
            c.next_deadline(),
            Some(Deadline {
                seat: 1,
                at_unix_ms: 11_200
            })
        );
    }

    #[test]
    fn time_past_the_turn_comes_out_of_the_bank() {
        let mut c = clocks(200, 1_000, 2);
        c.awaiting(0, &[0]);
        c.acted(0, 500); // 300 ms over the turn
        assert_eq!(c.views()[0].bank_ms, 700);
        c.awaiting(500, &[0]);
        c.acted(0, 600); // within the turn: the bank is untouched
        assert_eq!(c.views()[0].bank_ms, 700);
        c.awaiting(600, &[0]);
        assert_eq!(c.deadline_of(0), Some(600 + 200 + 700));
    }

    #[test]
    fn an_awaited_seat_keeps_its_start_while_others_move() {
        let mut c = clocks(200, 0, 0);
        c.awaiting(0, &[0, 1]);
        c.acted(1, 50);
        c.awaiting(50, &[0, 1]);
        assert_eq!(c.deadline_of(0), Some(200));
        assert_eq!(c.deadline_of(1), Some(250));
    }

    #[test]
    fn a_timeout_spends_the_bank_and_absence_comes_after_n_in_a_row() {
        let mut c = clocks(200, 300, 2);
        c.awaiting(0, &[2]);
        assert!(!c.is_due(2, 499));
        assert!(c.is_due(2, 500));
        assert_eq!(c.timed_out(2, 500), 500);
        assert_eq!(c.views()[2].bank_ms, 0);
        assert!(!c.is_absent(2));
        c.awaiting(500, &[2]);
        assert_eq!(c.deadline_of(2), Some(700), "an empty bank leaves the turn");
        c.timed_out(2, 700);
        assert!(c.is_absent(2));
        c.awaiting(700, &[2]);
        assert_eq!(
            c.deadline_of(2),
            Some(700),
            "an absent seat's default is played at once"
        );
        c.timed_out(2, 700);
        // Acting itself makes the seat present again.
        c.awaiting(700, &[2]);
        c.acted(2, 750);
        assert!(!c.is_absent(2));
        c.awaiting(750, &[2]);
        assert_eq!(c.deadline_of(2), Some(950));
    }

    #[test]
    fn a_resumed_game_moves_deadlines_and_spends_no_bank_on_the_gap() {
        let mut c = clocks(200, 1_000, 1);
        c.awaiting(0, &[0, 1]);
        c.timed_out(1, 1_200);
        assert!(c.is_absent(1));
        c.awaiting(1_200, &[0, 1]);
        assert_eq!(c.deadline_of(0), Some(1_200));
        assert_eq!(c.deadline_of(1), Some(1_200), "absent: at once");
        // Down from 1_200 to 50_000; 10 s of grace.
        c.resume(|at| 50_000 + 10_000 + (at - 1_200).max(0));
        assert_eq!(c.deadline_of(0), Some(60_000));
        assert_eq!(c.deadline_of(1), Some(60_000), "even an absent seat");
        assert_eq!(c.deadline_of(2), None, "a seat not awaited stays so");
        // Acting within the turn after the restart spends nothing of the bank.
        c.acted(0, 58_900);
        assert_eq!(c.views()[0].bank_ms, 1_000);
        // A deadline never moves earlier.
        c.awaiting(58_900, &[0]);
        c.resume(|at| at - 100);
        assert_eq!(c.deadline_of(0), Some(58_900 + 1_200));
    }

    #[test]
    fn a_decision_held_by_the_host_opens_when_it_starts_running() {
        let mut c = clocks(200, 1_000, 3);
        c.awaiting(0, &[0]);
        assert_eq!(c.deadline_of(0), Some(1_200));
        // Queued 700 ms in the host's pool, then running: turn and bank count from there.
        c.started_running(0, 700);
        assert_eq!(c.deadline_of(0), Some(1_900));
        // Answering within the turn after it started spends nothing of the bank.
        c.acted(0, 850);
        assert_eq!(c.views()[0].bank_ms, 1_000);
        // Never earlier; nothing for a seat not awaited.
        c.awaiting(2_000, &[0]);
        c.started_running(0, 1_500);
        assert_eq!(c.deadline_of(0), Some(3_200));
        c.started_running(1, 2_500);
        assert_eq!(c.deadline_of(1), None);
    }

    #[test]
    fn absent_after_zero_never_marks_a_seat_absent() {
        let mut c = clocks(100, 0, 0);
        for i in 0..10 {
            c.awaiting(i * 100, &[0]);
            c.timed_out(0, i * 100 + 100);
        }
        assert!(!c.is_absent(0));
    }

    #[test]
    fn no_clocks_no_deadlines() {
        let mut c = clocks(0, 0, 0);
        c.awaiting(0, &[0, 1, 2]);
        assert_eq!(c.next_deadline(), None);
    }

    #[test]
    fn arithmetic_saturates() {
        let mut c = Clocks::new(
            ClockSettings {
                turn_ms: u64::MAX,
                bank_ms: u64::MAX,
                absent_after: 1,
            },
            1,
        );
        c.awaiting(i64::MAX - 5, &[0]);
        assert_eq!(c.deadline_of(0), Some(i64::MAX));
        c.acted(0, i64::MIN);
        assert_eq!(
            c.views()[0].bank_ms,
            u64::MAX,
            "a clock going back costs nothing"
        );
    }

    #[test]
    fn the_same_records_give_the_same_clocks() {
        let feed = |c: &mut Clocks| {
            c.awaiting(0, &[0]);
            c.acted(0, 350);
            c.awaiting(350, &[1]);
            c.timed_out(1, 1_000);
            c.awaiting(1_000, &[2, 0]);
        };
        let (mut a, mut b) = (clocks(200, 500, 2), clocks(200, 500, 2));
        feed(&mut a);
        feed(&mut b);
        assert_eq!(a, b);
        assert_eq!(a.next_deadline(), b.next_deadline());
    }
}
