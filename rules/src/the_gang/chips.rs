//! One chip phase (one street) under the §4 protocol: anyone takes a chip from the centre or
//! from another player, returns theirs, or declares themselves ready; any take or return clears
//! every ready; the phase closes when everyone holds a chip and is ready. The move cap and the
//! deadline guarantee that a phase ends (see [`ChipPhase::try_close`]).

use super::Refusal;

/// The four streets and their chip colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Street {
    /// Pre-flop, white chips.
    White = 0,
    /// Flop, yellow chips.
    Yellow = 1,
    /// Turn, orange chips.
    Orange = 2,
    /// River, red chips.
    Red = 3,
}

impl Street {
    pub const ALL: [Street; 4] = [Street::White, Street::Yellow, Street::Orange, Street::Red];
    pub fn word(self) -> &'static str {
        ["white", "yellow", "orange", "red"][self as usize]
    }
}

/// One take or return, in the order the game's actor applied them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChipMove {
    /// 1-based position of the move in its phase (the "hesitation" clock).
    pub seq: u32,
    pub seat: usize,
    pub stars: u8,
    pub kind: ChipMoveKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChipMoveKind {
    /// Taken from the centre (`None`) or from that seat. The taker's previous chip, if any,
    /// went back to the centre in the same move.
    Take {
        from: Option<usize>,
    },
    Return,
}

/// The chips of one street: who holds which, who is ready, and the ordered moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChipPhase {
    pub street: Street,
    /// `holder[stars - 1]`: the seat holding that chip, `None` when it is in the centre.
    pub holder: Vec<Option<usize>>,
    pub ready: Vec<bool>,
    /// Takes and returns made so far.
    pub moves: u32,
    pub max_moves: u32,
    /// `locked[stars - 1]`: challenges 2 and 6; once taken the chip never changes owner again.
    pub locked: Vec<bool>,
    pub log: Vec<ChipMove>,
    pub closed: bool,
}

impl ChipPhase {
    pub fn new(street: Street, players: usize, max_moves: u32, locked_stars: &[u8]) -> Self {
        let mut locked = vec![false; players];
        for &s in locked_stars {
            locked[s as usize - 1] = true;
        }
        ChipPhase {
            street,
            holder: vec![None; players],
            ready: vec![false; players],
            moves: 0,
            max_moves,
            locked,
            log: Vec::new(),
            closed: false,
        }
    }

    pub fn players(&self) -> usize {
        self.ready.len()
    }

    /// The stars of the chip `seat` holds, if any.
    pub fn chip_of(&self, seat: usize) -> Option<u8> {
        self.holder
            .iter()
            .position(|h| *h == Some(seat))
            .map(|i| i as u8 + 1)
    }

    pub fn cap_reached(&self) -> bool {
        self.moves >= self.max_moves
    }

    fn holds_locked_chip(&self, seat: usize) -> bool {
        self.chip_of(seat)
            .is_some_and(|s| self.locked[s as usize - 1])
    }

    pub fn check_take(&self, seat: usize, stars: u8) -> Result<(), Refusal> {
        if stars == 0 || stars as usize > self.players() {
            return Err(Refusal::invalid(format!(
                "there is no {stars}-star chip: chips go from 1 to {}",
                self.players()
            )));
        }
        if self.cap_reached() {
            return Err(Refusal::not_now(
                "the move cap of this phase is reached: only `ready` is accepted",
            ));
        }
        let index = stars as usize - 1;
        match self.holder[index] {
            Some(h) if h == seat => {
                return Err(Refusal::not_now("you already hold this chip"));
            }
            Some(_) if self.locked[index] => {
                return Err(Refusal::not_now(
                    "this chip is locked: once taken it cannot change owner",
                ));
            }
            _ => {}
        }
        if self.holds_locked_chip(seat) {
            return Err(Refusal::not_now(
                "you hold a locked chip: it cannot be returned",
            ));
        }
        Ok(())
    }

    pub fn take(&mut self, seat: usize, stars: u8) -> Result<ChipMove, Refusal> {
        self.check_take(seat, stars)?;
        let index = stars as usize - 1;
        if let Some(own) = self.chip_of(seat) {
            self.holder[own as usize - 1] = None;
        }
        let from = self.holder[index];
        self.holder[index] = Some(seat);
        Ok(self.record(seat, stars, ChipMoveKind::Take { from }))
    }

    pub fn check_return(&self, seat: usize) -> Result<u8, Refusal> {
        if self.cap_reached() {
            return Err(Refusal::not_now(
                "the move cap of this phase is reached: only `ready` is accepted",
            ));
        }
        let stars = self
            .chip_of(seat)
            .ok_or_else(|| Refusal::not_now("you hold no chip of this colour"))?;
        if self.locked[stars as usize - 1] {
            return Err(Refusal::not_now(
                "this chip is locked: it cannot be returned",
            ));
        }
        Ok(stars)
    }

    pub fn return_chip(&mut self, seat: usize) -> Result<ChipMove, Refusal> {
        let stars = self.check_return(seat)?;
        self.holder[stars as usize - 1] = None;
        Ok(self.record(seat, stars, ChipMoveKind::Return))
    }

    fn record(&mut self, seat: usize, stars: u8, kind: ChipMoveKind) -> ChipMove {
        self.moves += 1;
        self.ready.iter_mut().for_each(|r| *r = false);
        let mv = ChipMove {
            seq: self.moves,
            seat,
            stars,
            kind,
        };
        self.log.push(mv);
        mv
    }

    pub fn check_ready(&self, seat: usize) -> Result<(), Refusal> {
        if self.ready[seat] {
            return Err(Refusal::not_now("you are already ready"));
        }
        Ok(())
    }

    pub fn set_ready(&mut self, seat: usize) -> Result<(), Refusal> {
        self.check_ready(seat)?;
        self.ready[seat] = true;
        Ok(())
    }

    /// Closes the phase if it may close now, returning the chips handed out to chipless players.
    ///
    /// Before the cap: closes when everyone holds a chip and everyone is ready. After the cap,
    /// chipless players can no longer take a chip, so their readiness does not matter: the phase
    /// closes once every chip holder is ready, and the chipless players receive the remaining
    /// chips in seat order (lowest seat gets the lowest remaining chip).
    pub fn try_close(&mut self) -> Option<Vec<(usize, u8)>> {
        let everyone_holds = (0..self.players()).all(|s| self.chip_of(s).is_some());
        let holders_ready = (0..self.players())
            .filter(|&s| self.chip_of(s).is_some())
            .all(|s| self.ready[s]);
        let all_ready = self.ready.iter().all(|&r| r);
        if (everyone_holds && all_ready) || (self.cap_reached() && holders_ready) {
            Some(self.force_close())
        } else {
            None
        }
    }

    /// Closes the phase now (the deadline passed): chipless players receive the remaining chips
    /// in seat order.
    pub fn force_close(&mut self) -> Vec<(usize, u8)> {
        let mut given = Vec::new();
        for seat in 0..self.players() {
            if self.chip_of(seat).is_none() {
                let free = self
                    .holder
                    .iter()
                    .position(|h| h.is_none())
                    .expect("as many chips as players");
                self.holder[free] = Some(seat);
                given.push((seat, free as u8 + 1));
            }
        }
        self.closed = true;
        given
    }
}
