//! Choosing a Gang of Four play by its cards: the cards typed as ranks or words (`7 7`,
//! `r7 y7`, `gp yp`), the legal action a selection stands for, and, when it stands for none,
//! why not in the engine's own words. The engine is called in-process on a deal rebuilt from
//! the view (the other hands are unknown, but the refusal only ever depends on this seat's
//! hand and the public situation), so the player is told before anything is sent.

use gangs_proto::v1 as pb;
use gangs_rules::gang_of_four::{cards, Combination, DealState, Direction, Mask, Move};
use pb::gang_of_four_action::Kind as ActionKind;
use std::collections::BTreeSet;

/// The card ids of a selection, in id order (the hand's order).
pub type Selection = BTreeSet<u32>;

pub fn mask_of(ids: impl IntoIterator<Item = u32>) -> Mask {
    ids.into_iter()
        .filter(|&id| id < 64)
        .fold(0, |mask, id| mask | (1u64 << id))
}

/// The cards of `hand` that the typed words name. A colour word (`r7`, `m1`, `gp`, `dr`)
/// takes a held card with that word; a bare value (`7`, `10`) takes any held card of that
/// value, the lowest id first; each card is taken once.
pub fn resolve_typed(hand: &[pb::GangOfFourCard], typed: &str) -> Result<Selection, String> {
    let mut picked = Selection::new();
    for word in typed.split_whitespace() {
        let word = word.to_ascii_lowercase();
        let matches = |card: &&pb::GangOfFourCard| match word.parse::<u32>() {
            Ok(value) => card.value == value && value <= 10,
            Err(_) => card.word == word,
        };
        let known = word.parse::<u32>().is_ok_and(|v| (1..=10).contains(&v))
            || cards::ids_of_word(&word).is_some();
        if !known {
            return Err(format!(
                "`{}` is no card: type values like `7 7` or words like `r7 y7`, `m1`, `gp`, `dr`",
                shorten(&word)
            ));
        }
        match hand
            .iter()
            .filter(matches)
            .find(|card| !picked.contains(&card.id))
        {
            Some(card) => {
                picked.insert(card.id);
            }
            None => return Err(format!("you hold no (more) {word}")),
        }
    }
    Ok(picked)
}

/// At most 20 characters of what was typed, for a message.
fn shorten(text: &str) -> String {
    text.chars().take(20).collect()
}

/// The legal play (or give-back) with exactly these cards, if any. With the manual last-card
/// announcement both variants are legal; `announce` picks one.
pub fn matching_action(
    legal: &[pb::GameAction],
    selection: &Selection,
    announce: bool,
) -> Option<pb::GameAction> {
    legal
        .iter()
        .find(|action| match gof_kind(action) {
            Some(ActionKind::Play(play)) => {
                play.announce_last_card == announce
                    && play.card_ids.len() == selection.len()
                    && play.card_ids.iter().all(|id| selection.contains(id))
            }
            Some(ActionKind::GiveBack(give)) => {
                !announce
                    && selection.len() == 1
                    && give.card_id.is_some_and(|id| selection.contains(&id))
            }
            _ => false,
        })
        .cloned()
}

/// Whether a play of these cards may carry the last-card announcement now.
pub fn announce_possible(legal: &[pb::GameAction], selection: &Selection) -> bool {
    matching_action(legal, selection, true).is_some()
}

pub fn gof_kind(action: &pb::GameAction) -> Option<&ActionKind> {
    match &action.game {
        Some(pb::game_action::Game::GangOfFour(a)) => a.kind.as_ref(),
        _ => None,
    }
}

/// The cards a legal play or give-back uses (empty for a pass).
pub fn action_cards(action: &pb::GameAction) -> Selection {
    match gof_kind(action) {
        Some(ActionKind::Play(play)) => play.card_ids.iter().copied().collect(),
        Some(ActionKind::GiveBack(give)) => give.card_id.into_iter().collect(),
        _ => Selection::new(),
    }
}

/// `pair`, `full house`… for a set of cards that forms a combination.
pub fn combination_name(selection: &Selection) -> Option<&'static str> {
    Combination::classify(mask_of(selection.iter().copied())).map(|c| c.kind.name())
}

/// Why the engine refuses this move for `seat` in the deal the view shows (`None`: it
/// accepts it). `selection` empty means a pass.
pub fn engine_refusal(
    view: &pb::GangOfFourView,
    seat: u32,
    selection: &Selection,
    announce: bool,
) -> Option<String> {
    let state = match rebuild_deal(view, seat) {
        Ok(state) => state,
        Err(why) => return Some(why),
    };
    let mv = if selection.is_empty() {
        Move::Pass
    } else {
        Move::Play {
            cards: mask_of(selection.iter().copied()),
            announce,
        }
    };
    state
        .check(seat as u8, mv)
        .err()
        .map(|refusal| refusal.to_string())
}

/// The deal as far as `seat` knows it: its own hand, the table, the passes since, who
/// announced or is barred. The other hands are filled with cards this seat does not hold
/// (their sizes are right; which cards they are never matters to a refusal).
fn rebuild_deal(view: &pb::GangOfFourView, seat: u32) -> Result<DealState, String> {
    let options = crate::gang_of_four::engine_options(view.options.as_ref())
        .map_err(|e| e.message().to_string())?;
    let players = options.players as usize;
    let hand = mask_of(view.hand.iter().map(|c| c.id));
    let table = view
        .table
        .as_ref()
        .map(|t| (mask_of(t.cards.iter().map(|c| c.id)), t.seat as u8));
    let mut free = !hand & !table.map_or(0, |(cards, _)| cards);
    let mut hands = [0u64; 4];
    let mut announced = 0u8;
    let mut barred = 0u8;
    hands[seat as usize % 4] = hand;
    for s in &view.seats {
        let i = s.seat as usize;
        if i >= players {
            continue;
        }
        if s.announced_last_card {
            announced |= 1 << i;
        }
        if s.barred {
            barred |= 1 << i;
        }
        if i == seat as usize {
            continue;
        }
        for _ in 0..s.card_count.min(16) {
            let lowest = free & free.wrapping_neg();
            hands[i] |= lowest;
            free &= !lowest;
        }
    }
    let direction = match pb::GangOfFourDirection::try_from(view.direction) {
        Ok(pb::GangOfFourDirection::Clockwise) => Direction::Clockwise,
        _ => Direction::CounterClockwise,
    };
    let passes = view.trick.iter().rev().take_while(|p| p.pass).count() as u8;
    let mut state = DealState::from_parts(
        options, hands, direction, seat as u8, table, passes, announced, barred,
    )
    .map_err(|e| e.to_string())?;
    if view.must_play_multicolor_one {
        state.must_include = 1 << cards::MULTICOLOR_ONE;
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(id: u32) -> pb::GangOfFourCard {
        crate::gang_of_four::card(id as u8)
    }

    fn hand() -> Vec<pb::GangOfFourCard> {
        // g1 m1 g7 y7 r7 gp dr
        [0, 6, 37, 39, 41, 61, 63].into_iter().map(card).collect()
    }

    #[test]
    fn typed_values_and_words_pick_held_cards() {
        let hand = hand();
        assert_eq!(
            resolve_typed(&hand, "7 7").unwrap(),
            Selection::from([37, 39])
        );
        assert_eq!(
            resolve_typed(&hand, "r7 Y7").unwrap(),
            Selection::from([39, 41])
        );
        assert_eq!(
            resolve_typed(&hand, "1 1").unwrap(),
            Selection::from([0, 6])
        );
        assert_eq!(
            resolve_typed(&hand, "gp dr").unwrap(),
            Selection::from([61, 63])
        );
        assert_eq!(resolve_typed(&hand, "").unwrap(), Selection::new());
        assert_eq!(
            resolve_typed(&hand, "7 7 7 7").unwrap_err(),
            "you hold no (more) 7"
        );
        assert!(resolve_typed(&hand, "x9")
            .unwrap_err()
            .contains("`x9` is no card"));
        assert!(resolve_typed(&hand, "11")
            .unwrap_err()
            .contains("is no card"));
    }

    fn play(ids: &[u32], announce: bool) -> pb::GameAction {
        pb::GameAction {
            game: Some(pb::game_action::Game::GangOfFour(pb::GangOfFourAction {
                kind: Some(ActionKind::Play(pb::gang_of_four_action::Play {
                    card_ids: ids.to_vec(),
                    card_words: vec![],
                    announce_last_card: announce,
                })),
            })),
        }
    }

    #[test]
    fn a_selection_matches_the_legal_play_with_the_same_cards() {
        let legal = vec![
            play(&[37], false),
            play(&[37, 39], false),
            play(&[37, 39], true),
        ];
        assert_eq!(
            matching_action(&legal, &Selection::from([39, 37]), false),
            Some(legal[1].clone())
        );
        assert_eq!(
            matching_action(&legal, &Selection::from([37, 39]), true),
            Some(legal[2].clone())
        );
        assert!(announce_possible(&legal, &Selection::from([37, 39])));
        assert!(!announce_possible(&legal, &Selection::from([37])));
        assert_eq!(matching_action(&legal, &Selection::from([39]), false), None);
        assert_eq!(combination_name(&Selection::from([37, 39])), Some("pair"));
        assert_eq!(combination_name(&Selection::from([0, 37])), None);
    }

    fn view_leading(hand: Vec<pb::GangOfFourCard>) -> pb::GangOfFourView {
        pb::GangOfFourView {
            hand,
            seats: (0..4)
                .map(|seat| pb::gang_of_four_view::Seat {
                    seat,
                    card_count: if seat == 0 { 7 } else { 16 },
                    ..Default::default()
                })
                .collect(),
            deal_number: 1,
            turn: Some(0),
            phase: pb::gang_of_four_view::Phase::Play as i32,
            ..Default::default()
        }
    }

    #[test]
    fn the_engine_says_why_a_selection_is_refused() {
        let mut view = view_leading(hand());
        let refusal = engine_refusal(&view, 0, &Selection::from([0, 37]), false).unwrap();
        assert!(
            refusal.contains("a pair needs two cards of the same value"),
            "{refusal}"
        );
        assert_eq!(
            engine_refusal(&view, 0, &Selection::from([37, 39]), false),
            None
        );
        let pass = engine_refusal(&view, 0, &Selection::new(), false).unwrap();
        assert!(pass.contains("a leader may not pass"), "{pass}");
        // A pair of 7s on the table: a single does not beat it.
        view.table = Some(pb::gang_of_four_view::Play {
            seat: 3,
            cards: vec![card(43), card(44)],
            kind: pb::GangOfFourKind::Pair as i32,
            pass: false,
        });
        assert!(engine_refusal(&view, 0, &Selection::from([63]), false).is_some());
        assert_eq!(engine_refusal(&view, 0, &Selection::new(), false), None);
        view.must_play_multicolor_one = true;
        view.table = None;
        let first = engine_refusal(&view, 0, &Selection::from([37, 39]), false).unwrap();
        assert!(first.contains("multicolor 1"), "{first}");
    }
}
