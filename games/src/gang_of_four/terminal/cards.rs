//! Gang of Four cards in the terminal: each card its value (or `M1`, `Ph`, `Dr`) on its
//! colour. Styled spans, so the screen lays them out and tests can assert the colours cell by
//! cell.

use gangs_proto::v1 as pb;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;

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

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};

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
}
