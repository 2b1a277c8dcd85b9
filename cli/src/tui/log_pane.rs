//! The frame around both game screens: the header (game, seat, seq, clock, connection
//! status), the log pane of the last events in words, and the feedback line that says what a
//! key did or why a selection is refused.

use super::app::{App, Tone};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

pub fn draw_header(frame: &mut Frame, area: Rect, app: &App) {
    let who = match (app.seat, app.interactive) {
        (Some(seat), true) => format!("playing seat {seat}"),
        (Some(seat), false) => format!("watching as seat {seat}"),
        (None, _) => "spectator".to_string(),
    };
    let kind = app.kind.title;
    let seq = app.update.as_ref().map_or(0, |u| u.seq);
    let mut spans = vec![Span::styled(
        format!(" {kind} "),
        Style::new()
            .fg(Color::Black)
            .bg(Color::Cyan)
            .add_modifier(Modifier::BOLD),
    )];
    // The connection's state comes first, so a narrow terminal still shows it.
    if !app.status.is_empty() {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            format!(" {} ", app.status),
            Style::new().fg(Color::Black).bg(Color::Yellow),
        ));
    }
    spans.push(Span::raw(format!(
        " game {}  ·  {who}  ·  seq {seq}",
        app.game_id
    )));
    if let Some(left) = app.deadline_left_ms() {
        let style = if left < 10_000 {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(Color::Yellow)
        };
        spans.push(Span::raw("  ·  "));
        spans.push(Span::styled(format!("⏱ {}", clock_text(left)), style));
    }
    if app.finished() {
        spans.push(Span::styled(
            "  ·  game over (q leaves)",
            Style::new().add_modifier(Modifier::BOLD),
        ));
    } else if app
        .update
        .as_ref()
        .is_some_and(|u| u.status == gangs_proto::v1::GameStatus::Waiting as i32)
    {
        spans.push(Span::raw("  ·  waiting for players"));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `1:05`, `0:09` for a count of milliseconds left (rounded up: 0:00 only at the deadline).
pub fn clock_text(ms: i64) -> String {
    let seconds = (ms.max(0) + 999) / 1000;
    format!("{}:{:02}", seconds / 60, seconds % 60)
}

pub fn draw_log(frame: &mut Frame, area: Rect, app: &App) {
    let rows = area.height.saturating_sub(2) as usize;
    let lines: Vec<Line> = app
        .log
        .iter()
        .skip(app.log.len().saturating_sub(rows))
        .map(|line| Line::from(line.clone()))
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" Log ")),
        area,
    );
}

pub fn draw_feedback(frame: &mut Frame, area: Rect, app: &App) {
    let line = match &app.feedback {
        Some((tone, text)) => {
            let style = match tone {
                Tone::Good => Style::new().fg(Color::Green),
                Tone::Bad => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
                Tone::Info => Style::new(),
            };
            Line::styled(format!(" {text}"), style)
        }
        None => Line::from(""),
    };
    frame.render_widget(Paragraph::new(line), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_count_whole_seconds_up() {
        assert_eq!(clock_text(65_000), "1:05");
        assert_eq!(clock_text(8_001), "0:09");
        assert_eq!(clock_text(0), "0:00");
        assert_eq!(clock_text(-5), "0:00");
    }
}
