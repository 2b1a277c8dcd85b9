//! The Gang of Four table: every seat with its card count, score and last-card state, the
//! trick with who played what, the hand as coloured cards grouped by value with the cursor
//! and the selection, and the give-back and last-card prompts.

use super::cards::{gof_card, gof_cards};
use super::{GangOfFourScreen, Prompt};
use crate::terminal::Seen;
use gangs_proto::v1 as pb;
use pb::gang_of_four_view::Phase;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

pub(super) fn draw(frame: &mut Frame, area: Rect, screen: &GangOfFourScreen, seen: &Seen) {
    let Some(view) = super::gof_view(seen) else {
        frame.render_widget(
            Paragraph::new("waiting for the deal…").block(Block::bordered()),
            area,
        );
        return;
    };
    let hand_height = if seen.seat.is_some() { 6 } else { 0 };
    let [table, hand] =
        Layout::vertical([Constraint::Min(6), Constraint::Length(hand_height)]).areas(area);
    draw_table(frame, table, seen, view);
    if seen.seat.is_some() {
        draw_hand(frame, hand, screen, seen, view);
    }
    if let Some(Prompt::AnnounceLastCard { .. }) = &screen.prompt {
        let text = vec![
            Line::from("This play leaves you one card."),
            Line::from(""),
            Line::from(vec![
                Span::styled("y", Style::new().add_modifier(Modifier::BOLD)),
                Span::raw(" announce it (\"Card!\")   "),
                Span::styled("n", Style::new().add_modifier(Modifier::BOLD)),
                Span::raw(" play without   Esc back"),
            ]),
        ];
        crate::terminal::dialog(frame, area, "Last card", text);
    }
}

fn draw_table(frame: &mut Frame, area: Rect, seen: &Seen, view: &pb::GangOfFourView) {
    let direction = match pb::GangOfFourDirection::try_from(view.direction) {
        Ok(pb::GangOfFourDirection::Clockwise) => "clockwise",
        _ => "counter-clockwise",
    };
    let target = view
        .options
        .as_ref()
        .and_then(|o| o.target_score)
        .unwrap_or(100);
    let mut lines = vec![Line::from(vec![
        Span::styled(
            format!("Deal {}", view.deal_number),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(
            "  ·  play goes {direction}  ·  game to {target} points"
        )),
    ])];
    lines.push(Line::from(""));
    for s in &view.seats {
        let mut spans = vec![Span::raw(format!(
            "{:<15} {:>2} card{}  {:>3} points",
            seen.seat_name(s.seat),
            s.card_count,
            if s.card_count == 1 { " " } else { "s" },
            s.score
        ))];
        if view.turn == Some(s.seat) {
            spans.push(Span::styled(
                "  ◀ to play",
                Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            ));
        }
        if s.announced_last_card {
            spans.push(Span::styled(
                "  CARD! (last card)",
                Style::new()
                    .fg(Color::White)
                    .bg(Color::Red)
                    .add_modifier(Modifier::BOLD),
            ));
        }
        if s.barred {
            spans.push(Span::styled(
                "  barred: forgot Card!",
                Style::new().fg(Color::Red),
            ));
        }
        lines.push(Line::from(spans));
    }
    if view.last_card_rule_applies {
        lines.push(Line::styled(
            "The next seat holds one card: play your strongest single, or a combination.",
            Style::new().fg(Color::Red),
        ));
    }
    lines.push(Line::from(""));
    match Phase::try_from(view.phase).unwrap_or(Phase::Unspecified) {
        Phase::GiveBack => {
            lines.push(Line::from("The exchange:"));
            for x in &view.exchange {
                let mut spans = vec![Span::raw(format!(
                    "  seat {} gives seat {} ",
                    x.from_seat, x.to_seat
                ))];
                if let Some(card) = &x.card {
                    spans.push(gof_card(card));
                }
                spans.push(Span::raw(if x.automatic {
                    " (its strongest card)"
                } else {
                    " (chosen)"
                }));
                lines.push(Line::from(spans));
            }
        }
        Phase::Over => {
            lines.push(Line::styled(
                "Game over",
                Style::new().add_modifier(Modifier::BOLD),
            ));
            for r in &view.ranking {
                lines.push(Line::from(format!(
                    "  {}. {}  {} points",
                    r.rank,
                    seen.seat_name(r.seat),
                    r.total
                )));
            }
        }
        _ => {
            if view.trick.is_empty() {
                let leader = view.turn.map(|s| seen.seat_name(s)).unwrap_or_default();
                lines.push(Line::from(format!("The table is empty: {leader} leads.")));
                if view.must_play_multicolor_one {
                    lines.push(Line::from(vec![
                        Span::raw("The first play of the game must contain the "),
                        gof_card(&crate::gang_of_four::card(6)),
                    ]));
                }
            } else {
                lines.push(Line::from("The trick:"));
                for play in &view.trick {
                    let mut spans =
                        vec![Span::raw(format!("  {:<15} ", seen.seat_name(play.seat)))];
                    if play.pass {
                        spans.push(Span::styled("passes", Style::new().fg(Color::DarkGray)));
                    } else {
                        spans.extend(gof_cards(&play.cards));
                        spans.push(Span::raw(kind_name(play.kind)));
                    }
                    lines.push(Line::from(spans));
                }
            }
        }
    }
    let block = Block::bordered().title(" Gang of Four ");
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn kind_name(kind: i32) -> &'static str {
    use pb::GangOfFourKind as K;
    match K::try_from(kind).unwrap_or(K::Unspecified) {
        K::Single => "single",
        K::Pair => "pair",
        K::Triple => "triple",
        K::Straight => "straight",
        K::Flush => "flush",
        K::FullHouse => "full house",
        K::StraightFlush => "straight flush",
        K::Gang => "gang",
        K::Unspecified => "",
    }
}

/// The hand: cards in id order (value, then colour), a wider gap between values; under them
/// `▲` marks the chosen cards and `^` the cursor.
fn draw_hand(
    frame: &mut Frame,
    area: Rect,
    screen: &GangOfFourScreen,
    seen: &Seen,
    view: &pb::GangOfFourView,
) {
    let mut cards = Vec::new();
    let mut marks = Vec::new();
    let mut previous_value = None;
    for (i, card) in view.hand.iter().enumerate() {
        if previous_value.is_some_and(|v| v != card.value) {
            cards.push(Span::raw("  "));
            marks.push(Span::raw("  "));
        }
        previous_value = Some(card.value);
        cards.push(gof_card(card));
        cards.push(Span::raw(" "));
        let chosen = screen.selection.contains(&card.id);
        let here = seen.interactive && i == screen.cursor;
        let mark = match (here, chosen) {
            (true, true) => "^▲^",
            (true, false) => " ^ ",
            (false, true) => " ▲ ",
            (false, false) => "   ",
        };
        marks.push(Span::styled(
            mark,
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        ));
        marks.push(Span::raw(" "));
    }
    let give_back = view.phase == Phase::GiveBack as i32 && !seen.legal().is_empty();
    let title = if give_back {
        " Your hand: you won the deal, give one card back (choose it, Enter) ".to_string()
    } else if !seen.legal().is_empty() {
        " Your hand: your turn ".to_string()
    } else {
        " Your hand ".to_string()
    };
    let typed = if screen.typed.is_empty() {
        Line::from(Span::styled(
            "←→ move  space choose  type 7 7 or r7 y7  tab legal plays  Enter play  p pass  Esc clear  q leave",
            Style::new().fg(Color::DarkGray),
        ))
    } else {
        Line::from(vec![
            Span::raw("typed: "),
            Span::styled(
                screen.typed.clone(),
                Style::new().add_modifier(Modifier::BOLD),
            ),
        ])
    };
    let style = if give_back || !seen.legal().is_empty() {
        Style::new().fg(Color::Cyan)
    } else {
        Style::new()
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(style)
        .title(title);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(vec![
            Line::from(cards),
            Line::from(marks),
            Line::from(""),
            typed,
        ])
        .block(block),
        area,
    );
}
