//! The Gang in the terminal: poker cards with their suits, chips in their street colours.
//! Styled spans, so the screen lays them out and tests can assert the colours cell by cell.

use gangs_proto::v1 as pb;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;

/// The orange of The Gang's third street (the 16 base colours have no orange).
pub const ORANGE: Color = Color::Indexed(208);

/// `A`, `K`, `10`, `2` for a face value 2..14.
pub fn rank_word(rank: u32) -> String {
    match rank {
        14 => "A".into(),
        13 => "K".into(),
        12 => "Q".into(),
        11 => "J".into(),
        n => n.to_string(),
    }
}

/// One poker card: `A♠` black on white, `Q♥` red on white; the suitless Jack `J·`.
pub fn poker_card(card: &pb::TheGangCard) -> Span<'static> {
    use pb::the_gang_card::Suit;
    let (symbol, fg) = match Suit::try_from(card.suit).unwrap_or(Suit::None) {
        Suit::Clubs => ("♣", Color::Black),
        Suit::Diamonds => ("♦", Color::Red),
        Suit::Hearts => ("♥", Color::Red),
        Suit::Spades => ("♠", Color::Black),
        Suit::None => ("·", Color::Blue),
    };
    Span::styled(
        format!("{:>2}{symbol} ", rank_word(card.rank)),
        Style::new()
            .bg(Color::White)
            .fg(fg)
            .add_modifier(Modifier::BOLD),
    )
}

/// A face-down card or an empty place: a grey block the width of a card.
pub fn card_back() -> Span<'static> {
    Span::styled(" ░░ ", Style::new().fg(Color::DarkGray))
}

/// Poker cards side by side, padded with face-down places up to `places`.
pub fn poker_cards(cards: &[pb::TheGangCard], places: usize) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for card in cards {
        spans.push(poker_card(card));
        spans.push(Span::raw(" "));
    }
    for _ in cards.len()..places {
        spans.push(card_back());
        spans.push(Span::raw(" "));
    }
    spans
}

/// The colour of a street's chips.
pub fn street_color(street: i32) -> Color {
    use pb::TheGangStreet as S;
    match S::try_from(street).unwrap_or(S::Unspecified) {
        S::White => Color::White,
        S::Yellow => Color::Yellow,
        S::Orange => ORANGE,
        S::Red => Color::Red,
        S::Unspecified => Color::Gray,
    }
}

pub fn street_name(street: i32) -> &'static str {
    use pb::TheGangStreet as S;
    match S::try_from(street).unwrap_or(S::Unspecified) {
        S::White => "white",
        S::Yellow => "yellow",
        S::Orange => "orange",
        S::Red => "red",
        S::Unspecified => "-",
    }
}

/// A chip: `★3` in its street's colour, reversed so it reads as a token.
pub fn chip(street: i32, stars: u32) -> Span<'static> {
    Span::styled(
        format!("★{stars}"),
        Style::new()
            .fg(Color::Black)
            .bg(street_color(street))
            .add_modifier(Modifier::BOLD),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poker_cards_show_rank_and_suit() {
        let ace = poker_card(&pb::TheGangCard {
            id: 51,
            rank: 14,
            suit: pb::the_gang_card::Suit::Spades as i32,
        });
        assert_eq!(ace.content, " A♠ ");
        let queen = poker_card(&pb::TheGangCard {
            id: 42,
            rank: 12,
            suit: pb::the_gang_card::Suit::Hearts as i32,
        });
        assert_eq!(
            (queen.content.as_ref(), queen.style.fg),
            (" Q♥ ", Some(Color::Red))
        );
    }

    #[test]
    fn chips_take_their_street_colour() {
        let c = chip(pb::TheGangStreet::Orange as i32, 3);
        assert_eq!((c.content.as_ref(), c.style.bg), ("★3", Some(ORANGE)));
    }
}
