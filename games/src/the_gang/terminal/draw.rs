//! The Gang's table: vaults and alarms, the stage and street, the challenge and specialist
//! cards in play with their text, the community and private cards, every street's chips per
//! player in their colours, this street's moves, announcements, the last showdown, the action
//! menu, and the proposal / vote dialog.

use super::cards::{chip, poker_cards, rank_word, street_color, street_name};
use super::{gang_kind, gang_view, TheGangScreen};
use crate::describe_action;
use crate::terminal::Seen;
use gangs_proto::v1 as pb;
use gangs_rules::the_gang::{Challenge, Specialist};
use pb::the_gang_action::Kind as GangAction;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

/// What a challenge card does, in one line (the rules crate's words).
fn challenge_text(n: u32) -> &'static str {
    Challenge::from_number(n).map_or("", |c| c.text())
}

/// What a specialist card does, in one line (the rules crate's words).
fn specialist_text(n: u32) -> &'static str {
    Specialist::from_number(n).map_or("", |s| s.text())
}

fn challenge_name(n: u32) -> &'static str {
    Challenge::from_number(n).map_or("?", |c| c.name())
}

fn specialist_name(n: u32) -> &'static str {
    Specialist::from_number(n).map_or("?", |s| s.name())
}

fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub(super) fn draw(frame: &mut Frame, area: Rect, screen: &TheGangScreen, seen: &Seen) {
    let Some(view) = gang_view(seen) else {
        frame.render_widget(
            Paragraph::new("waiting for the heist…").block(Block::bordered()),
            area,
        );
        return;
    };
    let menu_width = if seen.interactive && seen.seat.is_some() {
        34
    } else {
        0
    };
    let [table, menu] =
        Layout::horizontal([Constraint::Min(40), Constraint::Length(menu_width)]).areas(area);
    draw_table(frame, table, seen, view);
    if menu_width > 0 {
        draw_menu(frame, menu, seen, screen.menu);
    }
    draw_dialog(frame, area, seen, view);
}

fn stage_words(view: &pb::TheGangView) -> String {
    use pb::TheGangStage as S;
    match S::try_from(view.stage).unwrap_or(S::Unspecified) {
        S::Coordinating => "coordinator: everyone chooses the card to pass left".into(),
        S::Chips => format!("{} chips", street_name(view.street)),
        S::Guessing => "the team guess".into(),
        S::GameOver => "game over".into(),
        S::Unspecified => "-".into(),
    }
}

fn draw_table(frame: &mut Frame, area: Rect, seen: &Seen, view: &pb::TheGangView) {
    let mut lines = Vec::new();
    lines.push(tally_line(view));
    if view.game_over {
        lines.push(Line::styled(
            if view.won {
                "The gang wins: three vaults are open."
            } else {
                "The gang loses: the alarms ring."
            },
            bold().fg(if view.won { Color::Green } else { Color::Red }),
        ));
    }
    for &n in &view.active_challenges {
        let permanent = if view.permanent_challenge == Some(n) {
            " (every heist)"
        } else {
            ""
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("Challenge {n} {}{permanent}: ", challenge_name(n)),
                bold().fg(Color::Magenta),
            ),
            Span::raw(challenge_text(n)),
        ]));
    }
    if let Some(n) = view.active_specialist {
        let used = if view.specialist_used { " (used)" } else { "" };
        lines.push(Line::from(vec![
            Span::styled(
                format!("Specialist {n} {}{used}: ", specialist_name(n)),
                bold().fg(Color::Cyan),
            ),
            Span::raw(specialist_text(n)),
        ]));
    }
    lines.push(Line::from(""));
    let mut community = vec![Span::raw("Community   ")];
    community.extend(poker_cards(&view.community, 5));
    lines.push(Line::from(community));
    if seen.seat.is_some() {
        let mut own = vec![Span::raw("Your cards  ")];
        own.extend(poker_cards(&view.private_cards, view.private_cards.len()));
        if let Some(received) = &view.received {
            own.push(Span::raw(format!("  from seat {}: ", received.from_seat)));
            own.extend(poker_cards(received.card.as_slice(), 1));
        }
        for shown in &view.shown_to_me {
            own.push(Span::raw(format!("  seat {} shows: ", shown.from_seat)));
            own.extend(poker_cards(shown.card.as_slice(), 1));
        }
        lines.push(Line::from(own));
    }
    lines.push(Line::from(""));
    lines.extend(chip_rows(seen, view));
    if !view.moves.is_empty() {
        let moves: Vec<String> = view
            .moves
            .iter()
            .map(|m| {
                let what = if m.returned {
                    format!("seat {} returns ★{}", m.seat, m.stars)
                } else {
                    match m.from_seat {
                        Some(from) => {
                            format!("seat {} takes ★{} from seat {from}", m.seat, m.stars)
                        }
                        None => format!("seat {} takes ★{}", m.seat, m.stars),
                    }
                };
                format!("{}. {what}", m.seq)
            })
            .collect();
        lines.push(Line::from(format!("This street: {}", moves.join("  "))));
    }
    for a in &view.announcements {
        lines.push(Line::from(format!("Announced: {}", announcement_text(a))));
    }
    if let Some(guess) = &view.guess {
        let what = if guess.challenge == 4 {
            "a rank"
        } else {
            "the hand category"
        };
        let votes: Vec<String> = guess
            .votes
            .iter()
            .map(|v| format!("seat {}: {}", v.seat, guess_text(v.value.as_ref())))
            .collect();
        lines.push(Line::from(format!(
            "Guess: name {what} of seat {}'s hand. Votes: {}",
            guess.target,
            if votes.is_empty() {
                "none yet".into()
            } else {
                votes.join(", ")
            }
        )));
    }
    if !view.last_showdown.is_empty() {
        let mut spans = vec![Span::raw(format!(
            "Last showdown ({}): ",
            if view.last_heist_success {
                "vault"
            } else {
                "alarm"
            }
        ))];
        for r in &view.last_showdown {
            spans.push(Span::raw(format!("seat {} ", r.seat)));
            spans.push(chip(pb::TheGangStreet::Red as i32, r.stars));
            spans.push(Span::raw(format!(" {}  ", category_text(r.category))));
        }
        lines.push(Line::from(spans));
    }
    let block = Block::bordered().title(" The Gang ");
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        area,
    );
}

/// The heist, the mode, the vaults and alarms (a box each), the stage and the moves made.
fn tally_line(view: &pb::TheGangView) -> Line<'static> {
    let mode = match pb::TheGangMode::try_from(view.mode).unwrap_or(pb::TheGangMode::Basic) {
        pb::TheGangMode::Basic => "basic",
        pb::TheGangMode::Advanced => "advanced",
        pb::TheGangMode::Pro => "pro",
        pb::TheGangMode::Gangster => "gangster",
    };
    let mut tally = vec![
        Span::styled(format!("Heist {}", view.heist), bold()),
        Span::raw(format!("  ·  {mode}  ·  vaults ")),
    ];
    for i in 0..3 {
        tally.push(if i < view.vaults {
            Span::styled("■", Style::new().fg(Color::Green))
        } else {
            Span::styled("□", Style::new().fg(Color::DarkGray))
        });
    }
    tally.push(Span::raw(format!(" {}/3  alarms ", view.vaults)));
    for i in 0..view.alarms_to_lose {
        tally.push(if i < view.alarms {
            Span::styled("■", Style::new().fg(Color::Red))
        } else {
            Span::styled("□", Style::new().fg(Color::DarkGray))
        });
    }
    tally.push(Span::raw(format!(
        " {}/{}  ·  {}",
        view.alarms,
        view.alarms_to_lose,
        stage_words(view)
    )));
    if view.stage == pb::TheGangStage::Chips as i32 {
        tally.push(Span::raw(format!(
            "  ·  moves {}/{}",
            view.moves_made, view.max_moves
        )));
    }
    Line::from(tally)
}

/// One row per player: the chips of every street in that street's column, the chip count of
/// private cards and whether the player is ready; then the chips still in the centre.
fn chip_rows(seen: &Seen, view: &pb::TheGangView) -> Vec<Line<'static>> {
    let streets = [
        pb::TheGangStreet::White,
        pb::TheGangStreet::Yellow,
        pb::TheGangStreet::Orange,
        pb::TheGangStreet::Red,
    ];
    let mut header = vec![Span::raw(format!("{:<16}", "Chips"))];
    for street in streets {
        header.push(Span::styled(
            format!("{:<8}", street_name(street as i32)),
            Style::new().fg(street_color(street as i32)),
        ));
    }
    header.push(Span::raw("ready"));
    let mut lines = vec![Line::from(header)];
    for seat in 0..view.players {
        let mut spans = vec![Span::raw(format!("{:<16}", seen.seat_name(seat)))];
        for street in streets {
            let stars = view
                .chips
                .iter()
                .find(|c| c.street == street as i32)
                .and_then(|c| c.stars_by_seat.get(seat as usize).copied())
                .unwrap_or(0);
            if stars > 0 {
                spans.push(chip(street as i32, stars));
                spans.push(Span::raw("      "));
            } else {
                spans.push(Span::styled("·       ", Style::new().fg(Color::DarkGray)));
            }
        }
        if view.ready.get(seat as usize).copied().unwrap_or(false) {
            spans.push(Span::styled("✓ ready", Style::new().fg(Color::Green)));
        }
        if view.muscle_seat == Some(seat) {
            spans.push(Span::raw("  (muscle)"));
        }
        lines.push(Line::from(spans));
    }
    if view.stage == pb::TheGangStage::Chips as i32 {
        let held: Vec<u32> = view
            .chips
            .iter()
            .find(|c| c.street == view.street)
            .map(|c| c.stars_by_seat.clone())
            .unwrap_or_default();
        if let Some(me) = seen.seat {
            let street = street_name(view.street);
            lines.push(match held.get(me as usize).copied().filter(|&s| s > 0) {
                Some(stars) => Line::from(vec![
                    Span::raw(format!("Your {street} chip: ")),
                    chip(view.street, stars),
                    Span::raw(if view.ready.get(me as usize).copied().unwrap_or(false) {
                        "  (you are ready)"
                    } else {
                        "  (d: ready)"
                    }),
                ]),
                None => Line::styled(
                    format!("You have no {street} chip yet: press its number to take one"),
                    Style::new().fg(Color::Cyan),
                ),
            });
        }
        let mut centre = vec![Span::raw(format!("{:<16}", "centre"))];
        for stars in 1..=view.players {
            if !held.contains(&stars) {
                centre.push(chip(view.street, stars));
                centre.push(Span::raw(" "));
            }
        }
        lines.push(Line::from(centre));
    }
    lines
}

fn category_text(category: i32) -> &'static str {
    use pb::TheGangCategory as C;
    match C::try_from(category).unwrap_or(C::Unspecified) {
        C::HighCard => "high card",
        C::Pair => "pair",
        C::TwoPair => "two pair",
        C::ThreeOfAKind => "three of a kind",
        C::Straight => "straight",
        C::Flush => "flush",
        C::FullHouse => "full house",
        C::FourOfAKind => "four of a kind",
        C::StraightFlush => "straight flush",
        C::Unspecified => "?",
    }
}

fn guess_text(value: Option<&pb::TheGangGuessValue>) -> String {
    use pb::the_gang_guess_value::Value;
    match value.and_then(|v| v.value) {
        Some(Value::Rank(r)) => rank_word(r),
        Some(Value::Category(c)) => category_text(c).into(),
        None => "?".into(),
    }
}

fn announcement_text(a: &pb::TheGangAnnouncement) -> String {
    use pb::the_gang_announcement::Value;
    let what = match &a.value {
        Some(Value::FaceCards(n)) => format!("holds {n} J/Q/K"),
        Some(Value::CardSum(n)) => format!("private cards sum to {n}"),
        Some(Value::BestCategory(c)) => format!("best hand is {}", category_text(*c)),
        Some(Value::RankCount(rc)) => {
            format!("holds {} of rank {}", rc.count, rank_word(rc.rank))
        }
        None => "?".into(),
    };
    format!("seat {} {what} ({})", a.seat, specialist_name(a.specialist))
}

fn draw_menu(frame: &mut Frame, area: Rect, seen: &Seen, menu: usize) {
    let legal = seen.legal();
    let mut lines = Vec::new();
    if legal.is_empty() {
        lines.push(Line::styled(
            "nothing to do: wait",
            Style::new().fg(Color::DarkGray),
        ));
    }
    for (i, action) in legal.iter().enumerate() {
        let words = describe_action(action);
        if i == menu {
            lines.push(Line::styled(
                format!("▶ {words}"),
                Style::new().fg(Color::Black).bg(Color::Cyan),
            ));
        } else {
            lines.push(Line::from(format!("  {words}")));
        }
    }
    lines.push(Line::from(""));
    lines.push(Line::styled(
        "↑↓ Enter · 1-6 take ★ · r return · d ready · q leave",
        Style::new().fg(Color::DarkGray),
    ));
    let style = if legal.is_empty() {
        Style::new()
    } else {
        Style::new().fg(Color::Cyan)
    };
    let block = Block::bordered().border_style(style).title(" Your move ");
    // Keep the highlighted entry in sight when the list is long.
    let visible = area.height.saturating_sub(4) as usize;
    let scroll = menu.saturating_sub(visible.saturating_sub(1)) as u16;
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(block),
        area,
    );
}

/// The open proposal as a dialog: who proposes what, what the card does, who accepted, and
/// the keys to answer when this seat's vote is awaited.
fn draw_dialog(frame: &mut Frame, area: Rect, seen: &Seen, view: &pb::TheGangView) {
    let Some(proposal) = &view.proposal else {
        return;
    };
    let Some(usage) = &proposal.specialist_use else {
        return;
    };
    let mut what = format!(
        "{} for seat {}",
        specialist_name(usage.specialist),
        usage.seat
    );
    match usage.specialist {
        1 => what.push_str(&format!(", shown to seat {}", usage.to_seat)),
        4 => what.push_str(&format!(", rank {}", rank_word(usage.rank))),
        _ => {}
    }
    let accepted: Vec<String> = proposal
        .accepted_seats
        .iter()
        .map(|s| format!("seat {s}"))
        .collect();
    let mut lines = vec![
        Line::from(vec![
            Span::styled(format!("Seat {} proposes: ", proposal.proposer), bold()),
            Span::raw(what),
        ]),
        Line::from(specialist_text(usage.specialist)),
        Line::from(format!(
            "Accepted so far: {}",
            if accepted.is_empty() {
                "nobody".into()
            } else {
                accepted.join(", ")
            }
        )),
        Line::from(""),
    ];
    let my_vote = seen
        .legal()
        .iter()
        .any(|a| matches!(gang_kind(a), Some(GangAction::Vote(_))));
    if my_vote && seen.interactive {
        lines.push(Line::from(vec![
            Span::styled("y", bold().fg(Color::Green)),
            Span::raw(" accept    "),
            Span::styled("n", bold().fg(Color::Red)),
            Span::raw(" refuse"),
        ]));
    } else {
        lines.push(Line::styled(
            "waiting for the votes",
            Style::new().fg(Color::DarkGray),
        ));
    }
    crate::terminal::dialog(frame, area, "Proposal", lines);
}
