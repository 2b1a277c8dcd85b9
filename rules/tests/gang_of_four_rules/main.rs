//! Gang of Four: one test per [D] decision of docs/rules/gang-of-four.md and per row of its
//! combination, comparison and scoring tables.

mod cards_and_combinations;
mod deals_and_tricks;
mod last_card_scoring_end;

use gangs_rules::gang_of_four::cards::{self, Mask};
use gangs_rules::gang_of_four::scoring::{choose_loser, game_is_over, penalty, ranking};
use gangs_rules::gang_of_four::{
    beats, Action, Combination, DealState, Direction, Event, GangOfFour, Kind, Move, Options,
    Phase, PlayList, Refusal,
};

/// The cards named by `words`, a repeated word taking the next copy.
fn set(words: &str) -> Mask {
    let mut mask = 0;
    for w in words.split_whitespace() {
        let ids = cards::ids_of_word(w).unwrap_or_else(|| panic!("bad word {w}")) & !mask;
        assert!(ids != 0, "no copy of {w} left");
        mask |= 1 << ids.trailing_zeros();
    }
    mask
}

fn combo(words: &str) -> Combination {
    Combination::classify(set(words)).unwrap_or_else(|| panic!("{words} is no combination"))
}

fn kind_of(words: &str) -> Option<Kind> {
    Combination::classify(set(words)).map(|c| c.kind)
}

fn opts() -> Options {
    Options::default()
}

fn wins(a: &str, b: &str) -> bool {
    beats(&combo(a), &combo(b), &opts())
}

fn four_seat_deal(hands: [&str; 4], leader: u8) -> DealState {
    let masks: [Mask; 4] = std::array::from_fn(|i| set(hands[i]));
    DealState::new(opts(), masks, Direction::CounterClockwise, leader, 0)
}
