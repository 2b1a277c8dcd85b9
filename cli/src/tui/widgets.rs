//! The small pictures both screens are made of: Gang of Four cards in their colours, poker
//! cards with their suits, The Gang's chips in their street colours. Each returns styled
//! spans, so screens lay them out and tests can assert the colours cell by cell.

use gangs_proto::v1 as pb;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;

/// The orange of The Gang's third street (the 16 base colours have no orange).
pub const ORANGE: Color = Color::Indexed(208);

/// The label a Gang of Four card shows: its value, or what it is for the special cards.
pub fn gof_label(card: &pb::GangOfFourCard) -> String {
    match card.word.as_str() {
        "m1" => "M1".into(),
        "gp" | "yp" => "Ph".into(),
        "dr" => "Dr".into(),
        _ => card.value.to_string(),
    }
}

/// Background and text colour of a Gang of Four card: green, yellow and red by colour; the
/// multicoloured 1 magenta, the Dragon white on black (it has no colour).
pub fn gof_style(card: &pb::GangOfFourCard) -> Style {
    use pb::GangOfFourColor as C;
    let style = match C::try_from(card.color).unwrap_or(C::Unspecified) {
        C::Green => Style::new().bg(Color::Green).fg(Color::Black),
        C::Yellow => Style::new().bg(Color::Yellow).fg(Color::Black),
        C::Red => Style::new().bg(Color::Red).fg(Color::White),
        C::Multicolor => Style::new().bg(Color::Magenta).fg(Color::White),
        C::None | C::Unspecified => Style::new().bg(Color::Black).fg(Color::White),
    };
    // The special cards stand out in bold: the multicoloured 1, the Phoenixes, the Dragon.
    if card.value == 1 && card.word == "m1" || card.value >= 11 {
        style.add_modifier(Modifier::BOLD)
    } else {
        style
    }
}

/// One Gang of Four card, four cells wide: ` 7 `, `10 `, `Ph `.
pub fn gof_card(card: &pb::GangOfFourCard) -> Span<'static> {
    Span::styled(format!("{:>2} ", gof_label(card)), gof_style(card))
}

/// Cards side by side with a space between them.
pub fn gof_cards(cards: &[pb::GangOfFourCard]) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for card in cards {
        spans.push(gof_card(card));
        spans.push(Span::raw(" "));
    }
    spans
}

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

    fn card(word: &str, value: u32, color: pb::GangOfFourColor) -> pb::GangOfFourCard {
        pb::GangOfFourCard {
            id: 0,
            value,
            color: color as i32,
            word: word.into(),
        }
    }

    #[test]
    fn gang_of_four_cards_carry_their_colour_and_the_specials_are_marked() {
        use pb::GangOfFourColor as C;
        let r7 = gof_card(&card("r7", 7, C::Red));
        assert_eq!(r7.content, " 7 ");
        assert_eq!(r7.style.bg, Some(Color::Red));
        assert_eq!(gof_card(&card("g10", 10, C::Green)).content, "10 ");
        let m1 = gof_card(&card("m1", 1, C::Multicolor));
        assert_eq!(
            (m1.content.as_ref(), m1.style.bg),
            ("M1 ", Some(Color::Magenta))
        );
        assert!(m1.style.add_modifier.contains(Modifier::BOLD));
        let yp = gof_card(&card("yp", 11, C::Yellow));
        assert_eq!(
            (yp.content.as_ref(), yp.style.bg),
            ("Ph ", Some(Color::Yellow))
        );
        let dr = gof_card(&card("dr", 12, C::None));
        assert_eq!(
            (dr.content.as_ref(), dr.style.bg),
            ("Dr ", Some(Color::Black))
        );
    }

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
