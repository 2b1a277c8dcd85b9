//! Rendering tests on ratatui's test backend: both game screens at a fixed seed, compared
//! with the text snapshots in `snapshots/`, colours asserted cell by cell. The same buffers
//! make the README's screenshots (`docs/images/*.svg`), so those stay true to the screens.
//! After a deliberate change to a screen: `UPDATE_SNAPSHOTS=1 cargo test -p gangs-cli snapshots`.

use super::app::App;
use gangs_proto::v1 as pb;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use ratatui::Terminal;
use std::fmt::Write as _;
use std::path::PathBuf;

const WIDTH: u16 = 110;
const HEIGHT: u16 = 34;

fn gof_view(app: &App) -> Option<&pb::GangOfFourView> {
    match app.update.as_ref()?.view.as_ref()?.game.as_ref()? {
        pb::game_view::Game::GangOfFour(v) => Some(v),
        _ => None,
    }
}

fn render(app: &App) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test terminal");
    terminal
        .draw(|frame| super::draw(frame, app))
        .expect("draw");
    terminal.backend().buffer().clone()
}

fn text_of(buffer: &Buffer) -> String {
    let mut text = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        for x in 0..buffer.area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// Compares `actual` with the committed file, or rewrites it under UPDATE_SNAPSHOTS=1.
fn check_file(path: PathBuf, actual: &str) {
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("snapshot dir");
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (UPDATE_SNAPSHOTS=1 writes it)\nactual:\n{actual}",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs from the screen (UPDATE_SNAPSHOTS=1 rewrites it after a deliberate change)\nactual:\n{actual}",
        path.display()
    );
}

fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/tui/snapshots")
        .join(name)
}

fn screenshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/images")
        .join(name)
}

/// The update a seat would get now from an in-process game.
fn update_for(
    game: &dyn gangs_games::Game,
    seat: u32,
    seq: u64,
    events: Vec<pb::GameEvent>,
) -> pb::Update {
    pb::Update {
        seq,
        events: events
            .iter()
            .filter_map(|e| game.redact(e, Some(seat as usize)))
            .collect(),
        actor: None,
        view: Some(game.view(Some(seat as usize))),
        legal_actions: game.legal_actions(seat as usize),
        deadline_unix_ms: None,
        status: pb::GameStatus::Running as i32,
        outcome: None,
        seat: Some(seat),
        seats_taken: game.players() as u32,
        clocks: Vec::new(),
        unix_ms: 0,
    }
}

/// Seed 7, four players: seat 0 leads with the multicoloured 1; three plays later it is
/// seat 0's turn again, a pair chosen by typing `7 7`-style words.
fn gang_of_four_app() -> App {
    let mut game = gangs_games::new_game("gang-of-four", None, 7, None).expect("a game");
    let mut app = App::new(
        gangs_games::kind(gangs_games::gang_of_four::KIND.name).unwrap(),
        "g-7".into(),
        Some(0),
        true,
    );
    let mut seq = 5;
    let opening = game.start();
    app.on_update(update_for(game.as_ref(), 0, seq, opening));
    // Whoever is to act plays its first legal action until seat 0 may act with a table.
    for _ in 0..12 {
        let Some(actor) = (0..4).find(|&s| !game.legal_actions(s).is_empty()) else {
            break;
        };
        if actor == 0 && gof_view(&app).is_some_and(|v| v.table.is_some()) {
            break;
        }
        let action = game.legal_actions(actor)[0].clone();
        let events = game.act(actor, &action).expect("a legal action");
        seq += 1;
        let mut update = update_for(game.as_ref(), 0, seq, events);
        update.actor = Some(actor as u32);
        app.on_update(update);
    }
    app
}

#[test]
fn gang_of_four_screen() {
    let mut app = gang_of_four_app();
    app.now_ms = 0;
    // Choose the first legal play by tab, so the hand shows a selection and a verdict.
    app.on_key(key(ratatui::crossterm::event::KeyCode::Tab));
    let buffer = render(&app);
    let text = text_of(&buffer);
    check_file(snapshot_path("gang_of_four.txt"), &text);
    check_file(screenshot_path("gang-of-four.svg"), &svg_of(&buffer));
    assert!(text.contains("Deal 1"), "{text}");
    assert!(text.contains("seat 0 (you)"), "{text}");
    // Every card of the hand carries its colour.
    let view = gof_view(&app).expect("a view").clone();
    let hand_row = find_row(&buffer, "Your hand") + 1;
    let mut x = 1;
    for card in &view.hand {
        while buffer[(x, hand_row)].bg == Color::Reset {
            x += 1;
        }
        assert_eq!(
            buffer[(x, hand_row)].bg,
            gangs_games::gang_of_four::terminal::gof_style(card)
                .bg
                .expect("a card colour"),
            "card {} at column {x}",
            card.word
        );
        x += 4;
    }
    assert!(view
        .hand
        .iter()
        .any(|c| c.color == pb::GangOfFourColor::Red as i32));
}

#[test]
fn the_gang_screen() {
    let options = gangs_games::parse_options(
        "the-gang",
        Some(3),
        &[("mode".to_string(), "advanced".to_string())],
    )
    .expect("options");
    let mut game = gangs_games::new_game("the-gang", Some(&options), 11, None).expect("a game");
    let mut app = App::new(
        gangs_games::kind(gangs_games::the_gang::KIND.name).unwrap(),
        "g-11".into(),
        Some(0),
        true,
    );
    let mut seq = 4;
    let opening = game.start();
    app.on_update(update_for(game.as_ref(), 0, seq, opening));
    // White: seats 0, 1, 2 take 3, 1, 2 stars and are ready; yellow: seat 2 takes 2, seat 0
    // takes 3.
    let take = |stars: u32| pb::GameAction {
        game: Some(pb::game_action::Game::TheGang(pb::TheGangAction {
            kind: Some(pb::the_gang_action::Kind::Take(pb::the_gang_action::Take {
                stars,
            })),
        })),
    };
    let ready = pb::GameAction {
        game: Some(pb::game_action::Game::TheGang(pb::TheGangAction {
            kind: Some(pb::the_gang_action::Kind::Ready(
                pb::the_gang_action::Ready {},
            )),
        })),
    };
    let moves = [
        (0, take(3)),
        (1, take(1)),
        (2, take(2)),
        (0, ready.clone()),
        (1, ready.clone()),
        (2, ready),
        (2, take(2)),
        (0, take(3)),
    ];
    for (seat, action) in moves {
        let events = game.act(seat, &action).expect("a legal chip move");
        seq += 1;
        let mut update = update_for(game.as_ref(), 0, seq, events);
        update.actor = Some(seat as u32);
        app.on_update(update);
    }
    let buffer = render(&app);
    let text = text_of(&buffer);
    check_file(snapshot_path("the_gang.txt"), &text);
    check_file(screenshot_path("the-gang.svg"), &svg_of(&buffer));
    assert!(text.contains("Heist 1"), "{text}");
    assert!(text.contains("yellow chips"), "{text}");
    // Seat 0's white chip is ★3 on white, its yellow chip ★3 on yellow.
    let row = find_row(&buffer, "seat 0 (you)");
    let white = find_in_row(&buffer, row, "★3");
    assert_eq!(buffer[(white, row)].bg, Color::White);
    let yellow = find_in_row_from(&buffer, row, "★3", white + 2);
    assert_eq!(buffer[(yellow, row)].bg, Color::Yellow);
    // Three community cards on white, face-down places for the other two.
    let community = find_row(&buffer, "Community");
    assert_eq!(
        text.lines()
            .nth(community as usize)
            .unwrap()
            .matches('░')
            .count(),
        4
    );
}

fn key(code: ratatui::crossterm::event::KeyCode) -> ratatui::crossterm::event::KeyEvent {
    ratatui::crossterm::event::KeyEvent::new(code, ratatui::crossterm::event::KeyModifiers::NONE)
}

fn row_text(buffer: &Buffer, y: u16) -> String {
    (0..buffer.area.width)
        .map(|x| buffer[(x, y)].symbol().to_string())
        .collect()
}

fn find_row(buffer: &Buffer, needle: &str) -> u16 {
    (0..buffer.area.height)
        .find(|&y| row_text(buffer, y).contains(needle))
        .unwrap_or_else(|| panic!("no row shows {needle:?}"))
}

fn find_in_row(buffer: &Buffer, y: u16, needle: &str) -> u16 {
    find_in_row_from(buffer, y, needle, 0)
}

/// The column (in cells) where `needle` starts in row `y`, at or after column `from`.
fn find_in_row_from(buffer: &Buffer, y: u16, needle: &str, from: u16) -> u16 {
    let first = needle.chars().next().expect("a needle");
    (from..buffer.area.width)
        .find(|&x| {
            buffer[(x, y)].symbol().starts_with(first)
                && (x..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .starts_with(needle)
        })
        .unwrap_or_else(|| panic!("{needle:?} not in row {y} from column {from}"))
}

/// The buffer as an SVG picture: one text cell per character, backgrounds as rectangles.
fn svg_of(buffer: &Buffer) -> String {
    const CELL_W: u32 = 9;
    const CELL_H: u32 = 18;
    let (w, h) = (buffer.area.width as u32, buffer.area.height as u32);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="15">"##,
        w * CELL_W,
        h * CELL_H
    );
    let _ = writeln!(
        svg,
        r##"<rect width="100%" height="100%" fill="#1e1e1e"/>"##
    );
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            let cell = &buffer[(x, y)];
            if cell.bg != Color::Reset {
                let _ = writeln!(
                    svg,
                    r##"<rect x="{}" y="{}" width="{CELL_W}" height="{CELL_H}" fill="{}"/>"##,
                    x as u32 * CELL_W,
                    y as u32 * CELL_H,
                    css(cell.bg, false)
                );
            }
        }
    }
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            let cell = &buffer[(x, y)];
            let symbol = cell.symbol();
            if symbol.trim().is_empty() {
                continue;
            }
            let escaped = symbol
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            let weight = if cell.modifier.contains(ratatui::style::Modifier::BOLD) {
                r#" font-weight="bold""#
            } else {
                ""
            };
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" fill="{}"{weight}>{escaped}</text>"##,
                x as u32 * CELL_W,
                y as u32 * CELL_H + 14,
                css(cell.fg, true)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

fn css(color: Color, foreground: bool) -> &'static str {
    match color {
        Color::Reset if foreground => "#d4d4d4",
        Color::Reset => "#1e1e1e",
        Color::Black => "#000000",
        Color::Red => "#cd3131",
        Color::Green => "#0dbc79",
        Color::Yellow => "#e5e510",
        Color::Blue => "#2472c8",
        Color::Magenta => "#bc3fbc",
        Color::Cyan => "#11a8cd",
        Color::Gray => "#b0b0b0",
        Color::DarkGray => "#666666",
        Color::White => "#f2f2f2",
        Color::Indexed(208) => "#ff8700",
        _ => "#d4d4d4",
    }
}

#[test]
fn the_clock_counts_down_and_the_status_line_shows_a_reconnect() {
    let mut app = gang_of_four_app();
    if let Some(update) = app.update.as_mut() {
        update.deadline_unix_ms = Some(70_000);
    }
    let header = |app: &App| row_text(&render(app), 0);
    app.now_ms = 4_500;
    assert!(header(&app).contains("⏱ 1:06"), "{}", header(&app));
    app.now_ms = 61_000;
    let buffer = render(&app);
    let clock = find_in_row(&buffer, 0, "⏱ 0:09");
    assert_eq!(buffer[(clock, 0)].fg, Color::Red, "under ten seconds: red");
    // Past the deadline the clock stops at zero.
    app.now_ms = 90_000;
    assert!(header(&app).contains("⏱ 0:00"), "{}", header(&app));
    app.status = "connection lost: reconnecting… 3 s (after seq 12)".into();
    assert!(
        header(&app).contains("connection lost: reconnecting… 3 s"),
        "{}",
        header(&app)
    );
}
