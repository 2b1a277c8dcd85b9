//! The crew's chip convention for one street: a turn-based sort spoken in chip moves.
//!
//! Every crew seat holds a private number `x` on a public scale `0..scale` (higher = stronger
//! hand) and the team must end with the chips in the order of those numbers. Chips are the only
//! channel, so the convention turns each chip move into one base-N digit: a move that *touches*
//! the chip of `s` stars (takes it from the centre or from a player, or returns it when the
//! mover already holds it) says digit `s - 1`. Any chip can always be touched on a street
//! without locked chips, so every digit can always be said.
//!
//! The street then runs in three stages, all decided by public information only (the ordered
//! move log, the player count, the move cap), so every crew seat computes the same schedule and
//! exactly one seat is expected to move at any time — which makes it immune to the races of a
//! simultaneous phase (the others wait):
//! 1. **Sort rounds**: round 0, every seat in seat order says the first digit of its `x`;
//!    round r + 1, only the seats whose digits so far equal another seat's say their next digit
//!    (a seat with a unique prefix is already placed). Rounds stop when nobody is ambiguous,
//!    the digits run out (an exact tie, which may stand in either order) or the next round would
//!    not leave enough moves for the later stages.
//! 2. **Signal** (river with a team guess): the seat that will hold the top chip spells the
//!    answer (a rank of one of its cards, its hand category) in base-N digits.
//! 3. **Placement**: the order is the digits read so far (seat order between unresolved
//!    seats); while some seat does not hold its target chip, the lowest such seat takes it.
//!    Then everyone says `ready`.
//!
//! A move cap too tight for a sort worth having (fewer than `3 × N` moves) leaves no room for
//! digits: each seat then makes one **claim** in seat order, taking the free chip it thinks
//! fits ([`Schedule::Claim`]); later seats see the earlier claims.
//!
//! A move that does not follow the schedule (a seat that is not crew, a lost update) makes the
//! street [`Schedule::Broken`]: the policy then plays a plain heuristic instead.

/// Under this many moves per player the sort has too little room to separate the seats that
/// collide on their first digit, and claims do better (in-process, basic mode, 4 players:
/// claims open 36-38% of heists at caps 4 to 11, the sort 27% at a cap of 8, 30% at 10, 84% at 12,
/// 99% at 16).
const CLAIMS_BELOW_MOVES_PER_PLAYER: u64 = 3;

/// One chip move as the view lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedMove {
    pub seat: usize,
    pub stars: u8,
    pub returned: bool,
}

/// The public parameters of a street.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub players: usize,
    /// Private numbers are in `0..scale`.
    pub scale: u64,
    /// Takes and returns the phase accepts.
    pub max_moves: u32,
    /// Digits the top seat spells after sorting (0 without a team guess).
    pub signal_digits: usize,
}

impl Params {
    /// Base-N digits needed to say any number of `0..scale`.
    pub fn digits(&self) -> usize {
        digits_for(self.scale, self.players)
    }
}

/// Digits of base `base` needed for values `0..count`.
pub fn digits_for(count: u64, base: usize) -> usize {
    let mut reach = 1u64;
    let mut d = 0;
    while reach < count {
        reach = reach.saturating_mul(base as u64);
        d += 1;
    }
    d.max(1)
}

/// Digit `index` (most significant first) of `value` written with `digits` base-`base` digits.
pub fn digit_of(value: u64, index: usize, digits: usize, base: usize) -> u8 {
    let shift = (base as u64).pow((digits - 1 - index) as u32);
    ((value / shift) % base as u64) as u8
}

/// The number spelled by `digits` (most significant first).
pub fn number_of(digits: &[u8], base: usize) -> u64 {
    digits
        .iter()
        .fold(0u64, |acc, &d| acc * base as u64 + d as u64)
}

/// What the convention expects next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// `seat` says digit `round` of its private number.
    Digit { seat: usize, round: usize },
    /// `seat` (the future top) says digit `index` of the signal.
    Signal { seat: usize, index: usize },
    /// `seat` takes its target chip.
    Place { seat: usize, stars: u8 },
    /// Tight cap: `seat` takes the free chip of its choice.
    Claim { seat: usize },
    /// Every seat holds its target: say `ready`.
    Done,
    /// Someone left the convention this street.
    Broken,
}

/// The schedule after replaying the log, with what the moves said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub next: Schedule,
    /// Digits each seat said in the sort rounds.
    pub prefixes: Vec<Vec<u8>>,
    /// Seats weakest first, as the digits read so far order them (seat order between equals).
    pub order: Vec<usize>,
    /// The signal digits said so far.
    pub signal: Vec<u8>,
    /// The seat the signal is about (the future top), once the sort rounds are over.
    pub signaller: Option<usize>,
}

fn order_of(prefixes: &[Vec<u8>]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..prefixes.len()).collect();
    // Stable sort: seats with equal prefixes stay in seat order.
    order.sort_by(|&a, &b| prefixes[a].cmp(&prefixes[b]));
    order
}

/// Replays the street's moves against the convention.
pub fn replay(params: &Params, log: &[LoggedMove]) -> Replay {
    let n = params.players;
    let digits = params.digits();
    let reserve = n as u64 + params.signal_digits as u64;
    let max = params.max_moves as u64;
    let mut holder: Vec<Option<usize>> = vec![None; n];
    let mut prefixes: Vec<Vec<u8>> = vec![Vec::new(); n];
    let mut signal = Vec::new();
    let mut used = 0usize;
    let broken = |prefixes: Vec<Vec<u8>>, signal: Vec<u8>| Replay {
        order: order_of(&prefixes),
        next: Schedule::Broken,
        prefixes,
        signal,
        signaller: None,
    };
    let apply = |holder: &mut Vec<Option<usize>>, m: &LoggedMove| {
        let index = m.stars as usize - 1;
        if m.returned {
            holder[index] = None;
        } else {
            for h in holder.iter_mut() {
                if *h == Some(m.seat) {
                    *h = None;
                }
            }
            holder[index] = Some(m.seat);
        }
    };
    for m in log {
        if m.seat >= n || m.stars == 0 || m.stars as usize > n {
            return broken(prefixes, signal);
        }
    }
    if max < CLAIMS_BELOW_MOVES_PER_PLAYER * n as u64 {
        return claims(n, max, log);
    }

    // 1. Sort rounds (round 0 always fits: the signal is dropped before it is).
    let mut participants: Vec<usize> = (0..n).collect();
    let mut round = 0;
    while round < digits
        && participants.len() >= if round == 0 { 1 } else { 2 }
        && used as u64 + participants.len() as u64 + if round == 0 { n as u64 } else { reserve }
            <= max
    {
        for &seat in &participants {
            let Some(m) = log.get(used) else {
                return Replay {
                    order: order_of(&prefixes),
                    next: Schedule::Digit { seat, round },
                    prefixes,
                    signal,
                    signaller: None,
                };
            };
            if m.seat != seat {
                return broken(prefixes, signal);
            }
            prefixes[seat].push(m.stars - 1);
            apply(&mut holder, m);
            used += 1;
        }
        participants = participants
            .iter()
            .copied()
            .filter(|&s| {
                participants
                    .iter()
                    .any(|&o| o != s && prefixes[o] == prefixes[s])
            })
            .collect();
        round += 1;
    }
    let order = order_of(&prefixes);
    let top = *order.last().expect("at least one player");

    // 2. Signal (only when the budget allows it and the placement after it).
    let signal_digits = if used as u64 + reserve <= max {
        params.signal_digits
    } else {
        0
    };
    for index in 0..signal_digits {
        let Some(m) = log.get(used) else {
            return Replay {
                next: Schedule::Signal { seat: top, index },
                prefixes,
                order,
                signal,
                signaller: Some(top),
            };
        };
        if m.seat != top {
            return broken(prefixes, signal);
        }
        signal.push(m.stars - 1);
        apply(&mut holder, m);
        used += 1;
    }

    // 3. Placement.
    let target = |seat: usize| order.iter().position(|&s| s == seat).expect("seat") + 1;
    loop {
        let misplaced = (0..n).find(|&s| holder[target(s) - 1] != Some(s));
        let next = match misplaced {
            None => Schedule::Done,
            Some(_) if used as u64 >= max => Schedule::Done,
            Some(seat) => Schedule::Place {
                seat,
                stars: target(seat) as u8,
            },
        };
        match (log.get(used), &next) {
            (None, _) => {
                return Replay {
                    next,
                    prefixes,
                    order,
                    signal,
                    signaller: Some(top),
                }
            }
            (Some(m), Schedule::Place { seat, stars })
                if m.seat == *seat && m.stars == *stars && !m.returned =>
            {
                apply(&mut holder, m);
                used += 1;
            }
            _ => return broken(prefixes, signal),
        }
    }
}

/// The tight-cap schedule: seat 0, 1, … each take one free chip, as far as the cap allows.
fn claims(n: usize, max: u64, log: &[LoggedMove]) -> Replay {
    let mut holder: Vec<Option<usize>> = vec![None; n];
    let claims = n.min(max as usize);
    let broken = Replay {
        next: Schedule::Broken,
        prefixes: vec![Vec::new(); n],
        order: (0..n).collect(),
        signal: Vec::new(),
        signaller: None,
    };
    for (i, m) in log.iter().enumerate() {
        if i >= claims || m.seat != i || m.returned || holder[m.stars as usize - 1].is_some() {
            return broken;
        }
        holder[m.stars as usize - 1] = Some(m.seat);
    }
    // Weakest first: the holders of 1, 2, … stars, then the seats without a chip.
    let mut order: Vec<usize> = holder.iter().flatten().copied().collect();
    order.extend((0..n).filter(|s| !holder.contains(&Some(*s))));
    Replay {
        next: if log.len() < claims {
            Schedule::Claim { seat: log.len() }
        } else {
            Schedule::Done
        },
        prefixes: vec![Vec::new(); n],
        order,
        signal: Vec::new(),
        signaller: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays the convention to the end for private numbers `xs`, as the crew would.
    fn run(params: &Params, xs: &[u64], signal: &[u8]) -> (Vec<LoggedMove>, Replay) {
        let mut log: Vec<LoggedMove> = Vec::new();
        let mut holder: Vec<Option<usize>> = vec![None; params.players];
        loop {
            let r = replay(params, &log);
            let (seat, stars) = match r.next {
                Schedule::Digit { seat, round } => (
                    seat,
                    digit_of(xs[seat], round, params.digits(), params.players) + 1,
                ),
                Schedule::Signal { seat, index } => (seat, signal[index] + 1),
                Schedule::Place { seat, stars } => (seat, stars),
                Schedule::Claim { .. } | Schedule::Done | Schedule::Broken => return (log, r),
            };
            let returned = holder[stars as usize - 1] == Some(seat);
            for h in holder.iter_mut() {
                if *h == Some(seat) {
                    *h = None;
                }
            }
            if !returned {
                holder[stars as usize - 1] = Some(seat);
            }
            log.push(LoggedMove {
                seat,
                stars,
                returned,
            });
            assert!(log.len() as u32 <= params.max_moves, "cap exceeded");
        }
    }

    #[test]
    fn digits_round_trip() {
        assert_eq!(digits_for(1024, 4), 5);
        assert_eq!(digits_for(1025, 4), 6);
        assert_eq!(digits_for(13, 3), 3);
        for x in [0u64, 1, 77, 1023] {
            let d: Vec<u8> = (0..5).map(|i| digit_of(x, i, 5, 4)).collect();
            assert_eq!(number_of(&d, 4), x);
        }
    }

    #[test]
    fn sorts_distinct_numbers_and_ties_within_the_cap() {
        let params = Params {
            players: 4,
            scale: 2200,
            max_moves: 24,
            signal_digits: 0,
        };
        for xs in [
            vec![5u64, 2000, 1000, 1001],
            vec![0, 0, 7, 7],
            vec![1500, 3, 1499, 1498],
        ] {
            let (log, r) = run(&params, &xs, &[]);
            assert_eq!(r.next, Schedule::Done, "{xs:?}");
            for w in r.order.windows(2) {
                assert!(xs[w[0]] <= xs[w[1]], "{xs:?} gave {:?}", r.order);
            }
            assert!(log.len() <= 24);
        }
    }

    #[test]
    fn the_top_spells_its_signal() {
        let params = Params {
            players: 4,
            scale: 2200,
            max_moves: 24,
            signal_digits: 4,
        };
        let (_, r) = run(&params, &[10, 900, 40, 2100], &[3, 0, 2, 1]);
        assert_eq!(r.next, Schedule::Done);
        assert_eq!(r.signaller, Some(3));
        assert_eq!(r.signal, vec![3, 0, 2, 1]);
    }

    #[test]
    fn a_cap_of_three_times_the_players_sorts_before_it_signals() {
        // With a team guess pending, the signal gives way to the sort, not the other way round.
        let params = Params {
            players: 4,
            scale: 256,
            max_moves: 12,
            signal_digits: 9,
        };
        let (log, r) = run(&params, &[10, 200, 70, 140], &[1, 1, 1, 1]);
        assert_eq!(r.next, Schedule::Done);
        assert_eq!(r.order, vec![0, 2, 3, 1]);
        assert!(r.signal.is_empty());
        assert!(log.len() <= 12);
    }

    #[test]
    fn a_tight_cap_turns_the_street_into_claims_in_seat_order() {
        let params = Params {
            players: 4,
            scale: 256,
            max_moves: 5,
            signal_digits: 0,
        };
        let take = |seat, stars| LoggedMove {
            seat,
            stars,
            returned: false,
        };
        assert_eq!(replay(&params, &[]).next, Schedule::Claim { seat: 0 });
        let log = [take(0, 3), take(1, 1)];
        assert_eq!(replay(&params, &log).next, Schedule::Claim { seat: 2 });
        let log = [take(0, 3), take(1, 1), take(2, 4), take(3, 2)];
        let r = replay(&params, &log);
        assert_eq!(r.next, Schedule::Done);
        assert_eq!(r.order, vec![1, 3, 0, 2]);
        // Out of seat order, or a chip already claimed: the street leaves the convention.
        assert_eq!(replay(&params, &[take(1, 1)]).next, Schedule::Broken);
        assert_eq!(
            replay(&params, &[take(0, 3), take(1, 3)]).next,
            Schedule::Broken
        );
        // A cap below the player count: only the first seats claim.
        let params = Params {
            max_moves: 2,
            ..params
        };
        assert_eq!(
            replay(&params, &[take(0, 2), take(1, 1)]).next,
            Schedule::Done
        );
    }

    #[test]
    fn an_out_of_turn_move_breaks_the_street() {
        let params = Params {
            players: 3,
            scale: 100,
            max_moves: 18,
            signal_digits: 0,
        };
        let log = [LoggedMove {
            seat: 2,
            stars: 1,
            returned: false,
        }];
        assert_eq!(replay(&params, &log).next, Schedule::Broken);
    }
}
