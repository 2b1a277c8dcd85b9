//! The 10 challenge cards (§6) and the 10 specialist cards (§7): numbers, names, and the
//! parameters of a proposed specialist use. Their effects live in the heist engine, at the
//! moment each one acts (specialists: `game/specialists.rs`).

use super::cards::Card;
use super::evaluator::Category;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Challenge {
    EasyOpening = 1,
    NoiseSensors = 2,
    MotionDetectors = 3,
    RetinalScan = 4,
    HastyEscape = 5,
    AirVent = 6,
    PhotoelectricBarriers = 7,
    Blackout = 8,
    FingerprintReader = 9,
    SurveillanceCameras = 10,
}

impl Challenge {
    pub const ALL: [Challenge; 10] = [
        Challenge::EasyOpening,
        Challenge::NoiseSensors,
        Challenge::MotionDetectors,
        Challenge::RetinalScan,
        Challenge::HastyEscape,
        Challenge::AirVent,
        Challenge::PhotoelectricBarriers,
        Challenge::Blackout,
        Challenge::FingerprintReader,
        Challenge::SurveillanceCameras,
    ];
    pub fn number(self) -> u32 {
        self as u32
    }
    pub fn from_number(n: u32) -> Option<Challenge> {
        Challenge::ALL.get((n as usize).wrapping_sub(1)).copied()
    }
    pub fn name(self) -> &'static str {
        [
            "easy opening",
            "noise sensors",
            "motion detectors",
            "retinal scan",
            "hasty escape",
            "air vent",
            "photoelectric barriers",
            "blackout",
            "fingerprint reader",
            "surveillance cameras",
        ][self as usize - 1]
    }
    /// What the card does (§6), in one line: what a player reads at the table.
    pub fn text(self) -> &'static str {
        [
            "no white chip phase this heist",
            "the 1-star chips of white, yellow and orange are locked once taken",
            "a J, Q or K on the flop: the white 1-star holder redraws their private cards",
            "before the top red chip reveals, the others name a rank they hold",
            "no orange chip phase: the turn card, then straight to the river",
            "the highest chips of white, yellow and orange are locked once taken",
            "no J, Q or K on the flop: the highest white chip redraws their private cards",
            "blackout: earlier streets' chips are removed; remember them",
            "before the top red chip reveals, the others name its hand category",
            "three private cards each; the best five of eight count",
        ][self as usize - 1]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Specialist {
    Informant = 1,
    Driver = 2,
    Shareholder = 3,
    Brains = 4,
    Hacker = 5,
    Coordinator = 6,
    Valet = 7,
    NumbersGenius = 8,
    Swindler = 9,
    Muscle = 10,
}

impl Specialist {
    pub const ALL: [Specialist; 10] = [
        Specialist::Informant,
        Specialist::Driver,
        Specialist::Shareholder,
        Specialist::Brains,
        Specialist::Hacker,
        Specialist::Coordinator,
        Specialist::Valet,
        Specialist::NumbersGenius,
        Specialist::Swindler,
        Specialist::Muscle,
    ];
    pub fn number(self) -> u32 {
        self as u32
    }
    pub fn from_number(n: u32) -> Option<Specialist> {
        Specialist::ALL.get((n as usize).wrapping_sub(1)).copied()
    }
    pub fn name(self) -> &'static str {
        [
            "informant",
            "driver",
            "shareholder",
            "brains",
            "hacker",
            "coordinator",
            "valet",
            "numbers-genius",
            "swindler",
            "muscle",
        ][self as usize - 1]
    }
    /// What the card does (§7), in one line: what a player reads at the table.
    pub fn text(self) -> &'static str {
        [
            "one player shows one private card to one other player",
            "one player announces their best current hand category",
            "after the deal, everyone announces how many J, Q, K they hold",
            "the team picks a rank; one player says how many of it they hold",
            "one player draws a card, then discards one private card",
            "after the deal, everyone passes one private card to the left",
            "one player takes the suitless Jack and discards a private card",
            "after the deal, everyone announces the sum of their private cards",
            "after the deal, all private cards are gathered and dealt again",
            "the holder beats every hand of the same category at showdown",
        ][self as usize - 1]
    }
    pub fn parse(word: &str) -> Option<Specialist> {
        let w = word.trim().to_ascii_lowercase().replace('_', "-");
        Specialist::ALL.into_iter().find(|s| s.name() == w)
    }
    /// Cards whose text fixes the moment ("after the deal"): they act by themselves when
    /// active and are never proposed. See the module docs of `game/mod.rs` for 6 and 9.
    pub fn is_automatic(self) -> bool {
        matches!(
            self,
            Specialist::Shareholder
                | Specialist::Coordinator
                | Specialist::NumbersGenius
                | Specialist::Swindler
        )
    }
}

/// A proposed use of the active specialist, with its parameters. The acting player later
/// chooses the card itself (Informant: which card to show; Hacker, Valet: which card to
/// discard), since only they can see their cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialistUse {
    /// `from` shows one of their private cards to `to` only.
    Informant { from: usize, to: usize },
    /// `seat` announces their best current hand category.
    Driver { seat: usize },
    /// `seat` announces how many cards of `rank` (index 0..=12) they hold.
    Brains { seat: usize, rank: u8 },
    /// `seat` draws a card, then discards one of their private cards.
    Hacker { seat: usize },
    /// `seat` takes the suitless Jack, then discards another private card.
    Valet { seat: usize },
    /// `seat` takes the Muscle card: beats every hand of the same category at showdown.
    Muscle { seat: usize },
}

impl SpecialistUse {
    pub fn specialist(&self) -> Specialist {
        match self {
            SpecialistUse::Informant { .. } => Specialist::Informant,
            SpecialistUse::Driver { .. } => Specialist::Driver,
            SpecialistUse::Brains { .. } => Specialist::Brains,
            SpecialistUse::Hacker { .. } => Specialist::Hacker,
            SpecialistUse::Valet { .. } => Specialist::Valet,
            SpecialistUse::Muscle { .. } => Specialist::Muscle,
        }
    }
    /// The player who acts or is named.
    pub fn seat(&self) -> usize {
        match *self {
            SpecialistUse::Informant { from, .. } => from,
            SpecialistUse::Driver { seat }
            | SpecialistUse::Brains { seat, .. }
            | SpecialistUse::Hacker { seat }
            | SpecialistUse::Valet { seat }
            | SpecialistUse::Muscle { seat } => seat,
        }
    }
}

/// A public announcement (specialists 2, 3, 4, 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announcement {
    /// Shareholder: how many J, Q, K the seat holds.
    FaceCards(u32),
    /// Numbers genius: the sum of the seat's private cards (2..10 face, J/Q/K 10, A 11).
    CardSum(u32),
    /// Driver: the seat's best current hand category.
    BestCategory(Category),
    /// Brains: how many cards of `rank` the seat holds.
    RankCount { rank: u8, count: u32 },
}

/// A team guess value: a rank (challenge 4) or a hand category (challenge 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GuessValue {
    Rank(u8),
    Category(Category),
}

/// Specialist 8's value of a card.
pub fn card_points(card: Card) -> u32 {
    match card.rank() {
        r @ 0..=8 => r as u32 + 2,
        12 => 11,
        _ => 10,
    }
}

/// J, Q or K (the suitless Jack included).
pub fn is_face(card: Card) -> bool {
    (9..=11).contains(&card.rank())
}
