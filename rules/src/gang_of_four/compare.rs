//! Which combination beats which (§3 of the rules).

use super::combination::{Combination, Kind};
use super::Options;

/// True when `play` may be played on `table`: same size and strictly stronger, or a gang
/// that outranks it. Identical strength never beats.
pub fn beats(play: &Combination, table: &Combination, options: &Options) -> bool {
    match (play.kind == Kind::Gang, table.kind == Kind::Gang) {
        // Any gang beats any non-gang; between gangs the key orders size, then value, then colors.
        (true, false) => true,
        (true, true) => play.key > table.key,
        (false, true) => false,
        (false, false) => {
            if play.size() != table.size() {
                return false;
            }
            if play.kind != table.kind {
                // Same size, different kinds: only five-card kinds differ by more than size.
                return play.kind.five_card_rank() > table.kind.five_card_rank();
            }
            if play.kind == Kind::Flush && options.flush_by_sum && play.sum != table.sum {
                return play.sum > table.sum;
            }
            play.key > table.key
        }
    }
}

/// Why `play` does not beat `table`, for a bot author; `None` when it does.
pub fn why_not_beats(play: &Combination, table: &Combination, options: &Options) -> Option<String> {
    if beats(play, table, options) {
        return None;
    }
    if table.kind == Kind::Gang && play.kind != Kind::Gang {
        return Some(format!(
            "only a stronger gang beats the {}",
            table.describe()
        ));
    }
    if play.size() != table.size() && play.kind != Kind::Gang {
        return Some(format!(
            "{} cards on a {} of {} ({})",
            play.size(),
            table.kind.name(),
            table.size(),
            table.describe()
        ));
    }
    Some(format!(
        "the {} does not beat the {}",
        play.describe(),
        table.describe()
    ))
}
