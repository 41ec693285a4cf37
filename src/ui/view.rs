//! Drawing: a pure function of the app state into a frame. Nothing here
//! sends, reads the clock for decisions, or does IO; the clock is passed in.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::app::{Activity, App};
use super::cells::ToolState;
use super::{keys, theme, wrap::truncate};
use crate::tools::todo::TodoStatus;

pub const MIN_WIDTH: u16 = 40;
pub const MIN_HEIGHT: u16 = 12;
const LOG_WIDTH: u16 = 38;
const SPINNER: &[char] = &['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

pub fn draw(frame: &mut Frame, app: &mut App, now: Instant) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = truncate(
            &format!("hew needs at least {MIN_WIDTH}×{MIN_HEIGHT} (now {}×{})", area.width, area.height),
            area.width as usize,
        );
        frame.render_widget(Paragraph::new(Line::styled(text, theme::warn())), area);
        return;
    }
    if let Some(browser) = &app.browser {
        let lines = browser.lines(&app.transcript.tools, area.width as usize, area.height as usize);
        frame.render_widget(Paragraph::new(lines), area);
        return;
    }
    let input_height = app.composer.height() + 1;
    let review_height = match app.reviews.front() {
        None => 0,
        Some(review) => {
            let wanted = review.lines(area.width as usize, queued_calls(app)).0.len() as u16 + 2;
            wanted.clamp(5, (area.height * 3 / 5).max(5))
        }
    };
    let [main, review, input, status, hints] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(review_height),
        Constraint::Length(input_height),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let (chat, log) = if side_panel(app, area.width) {
        let [chat, log] = Layout::horizontal([Constraint::Min(40), Constraint::Length(LOG_WIDTH)]).areas(main);
        (chat, Some(log))
    } else {
        (main, None)
    };
    draw_chat(frame, app, chat, now);
    if let Some(log) = log {
        draw_log(frame, app, log, now);
    }
    if review_height > 0 {
        draw_review(frame, app, review);
    }
    draw_input(frame, app, input);
    frame.render_widget(Paragraph::new(status_line(app, now, status.width as usize)), status);
    frame.render_widget(Paragraph::new(hint_line(app)), hints);
}

/// The tool log shows beside the chat when wanted and when there is room.
fn side_panel(app: &App, width: u16) -> bool {
    app.show_log && width >= 100
}

fn draw_chat(frame: &mut Frame, app: &mut App, area: Rect, now: Instant) {
    let width = area.width.saturating_sub(1) as usize;
    let height = area.height as usize;
    app.chat_view = (width, height);
    let transcript = &app.transcript;
    if transcript.cells.is_empty() {
        let welcome = vec![
            Line::styled("hew", theme::accent().add_modifier(ratatui::style::Modifier::BOLD)),
            Line::styled(
                "Ask for a change. Every edit is shown as a diff for your approval before it lands.",
                theme::dim(),
            ),
            Line::styled("Enter sends · /help lists keys and commands", theme::dim()),
        ];
        frame.render_widget(Paragraph::new(welcome), area);
        return;
    }
    // Walk from the newest cell back, keeping only what can be seen.
    let total_needed = height + app.scroll;
    let mut taken: Vec<Line<'static>> = Vec::new();
    let mut seen = 0;
    for i in (0..transcript.cells.len()).rev() {
        let lines = transcript.lines(i, width, now);
        let h = lines.len();
        if seen + h > app.scroll {
            let skip_bottom = app.scroll.saturating_sub(seen);
            let keep = &lines[..h - skip_bottom.min(h)];
            let mut chunk: Vec<Line<'static>> = keep.to_vec();
            chunk.append(&mut taken);
            taken = chunk;
        }
        seen += h;
        if seen >= total_needed {
            break;
        }
    }
    // Scrolled past the top: clamp, so Home shows the first line.
    if seen < total_needed && app.scroll > 0 {
        app.scroll = seen.saturating_sub(height);
    }
    let start = taken.len().saturating_sub(height);
    let visible: Vec<Line<'static>> = taken.split_off(start);
    frame.render_widget(Paragraph::new(visible), area);
}

fn draw_log(frame: &mut Frame, app: &App, area: Rect, now: Instant) {
    let block = Block::default()
        .borders(Borders::LEFT)
        .border_style(theme::dim())
        .title(Span::styled(" tool log ", theme::dim()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let tools = &app.transcript.tools;
    let mut lines = Vec::new();
    if !app.todos.is_empty() {
        let done = app.todos.iter().filter(|t| t.status == TodoStatus::Done).count();
        lines.push(Line::styled(format!("tasks {done}/{}", app.todos.len()), theme::bold()));
        for item in app.todos.iter().take(12) {
            let (mark, style) = match item.status {
                TodoStatus::Done => ("✓ ", theme::dim()),
                TodoStatus::InProgress => ("▶ ", theme::hint()),
                TodoStatus::Pending => ("· ", ratatui::style::Style::new()),
            };
            let text = truncate(&item.content, (inner.width as usize).saturating_sub(2));
            lines.push(Line::from(vec![Span::styled(mark, style), Span::styled(text, style)]));
        }
        lines.push(Line::styled("─".repeat(inner.width as usize), theme::dim()));
    }
    let rows = (inner.height as usize).saturating_sub(lines.len());
    let selected = app.log_selected.unwrap_or(tools.len().saturating_sub(1));
    let first =
        if tools.len() <= rows { 0 } else { selected.saturating_sub(rows.saturating_sub(1)).min(tools.len() - rows) };
    for (i, entry) in tools.iter().enumerate().skip(first).take(rows) {
        let when = match &entry.state {
            ToolState::Running(since) => format!(" {}s", now.duration_since(*since).as_secs()),
            ToolState::Pending => " ?".into(),
            _ => entry.duration.map(|d| format!(" {:.1}s", d.as_secs_f64())).unwrap_or_default(),
        };
        let target = entry.target.clone().unwrap_or_default();
        let room = (inner.width as usize).saturating_sub(3 + entry.call.name.len() + when.len());
        let text = format!("{} {}", entry.call.name, truncate(&target, room));
        let style = if app.log_selected == Some(i) { theme::selected() } else { ratatui::style::Style::new() };
        lines.push(Line::from(vec![
            entry.status_mark(),
            Span::raw(" "),
            Span::styled(text, style),
            Span::styled(when, theme::dim()),
        ]));
    }
    if tools.is_empty() {
        lines.push(Line::styled("no tool calls yet", theme::dim()));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Calls waiting behind the one under review.
fn queued_calls(app: &App) -> usize {
    app.transcript.tools.iter().filter(|t| t.state == ToolState::Queued).count() + app.reviews.len().saturating_sub(1)
}

fn draw_review(frame: &mut Frame, app: &App, area: Rect) {
    let Some(review) = app.reviews.front() else { return };
    let block = Block::default().borders(Borders::TOP).border_style(theme::warn());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let queued = queued_calls(app);
    let width = inner.width as usize;
    let (lines, focus) = review.lines(width, queued);
    let body = inner.height.saturating_sub(1) as usize;
    // Keep the focused hunk in view, then apply the person's own scrolling.
    let base = focus.map(|f| f.saturating_sub(1)).unwrap_or(0);
    let max_start = lines.len().saturating_sub(body);
    let start = (base + review.scroll).min(max_start);
    let mut shown: Vec<Line<'static>> = vec![lines[0].clone()];
    shown.extend(lines.iter().skip(1 + start).take(body.saturating_sub(1)).cloned());
    shown.resize(body, Line::default());
    shown.push(review.hints());
    frame.render_widget(Paragraph::new(shown), inner);
}

fn draw_input(frame: &mut Frame, app: &App, area: Rect) {
    let [top, field] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let top_line = match (&app.flash, app.composer.suggestions().as_slice()) {
        (Some(flash), _) => Line::styled(flash.clone(), theme::warn()),
        // Without the side panel, the task list shows here in one line.
        (None, []) if !app.todos.is_empty() && !side_panel(app, area.width) => {
            let done = app.todos.iter().filter(|t| t.status == TodoStatus::Done).count();
            let current = app
                .todos
                .iter()
                .find(|t| t.status == TodoStatus::InProgress)
                .map(|t| format!(" · ▶ {}", t.content))
                .unwrap_or_default();
            Line::styled(
                truncate(&format!("tasks {done}/{}{current}", app.todos.len()), top.width as usize),
                theme::hint(),
            )
        }
        (None, []) => Line::styled("─".repeat(top.width as usize), theme::dim()),
        (None, suggestions) => {
            let text: Vec<String> = suggestions.iter().map(|(c, what)| format!("{c} {what}")).collect();
            Line::styled(truncate(&text.join("  ·  "), top.width as usize), theme::hint())
        }
    };
    frame.render_widget(Paragraph::new(top_line), top);
    if app.reviews.is_empty() && app.browser.is_none() {
        frame.render_widget(app.composer.widget(), field);
    } else {
        frame.render_widget(Paragraph::new(Line::styled(app.composer.text(), theme::dim())), field);
    }
}

pub fn status_line(app: &App, now: Instant, width: usize) -> Line<'static> {
    let s = &app.status;
    let mut parts = vec![
        Span::styled(s.model.clone(), theme::accent()),
        Span::styled(format!(" · {}", s.approval.as_str()), theme::dim()),
        Span::styled(if s.sandbox { " · sandbox on" } else { " · sandbox off" }, theme::dim()),
    ];
    let used = s.usage.input_tokens + s.usage.output_tokens;
    if used > 0 {
        let left = 100u64.saturating_sub(s.last_input * 100 / s.info.context_window.max(1));
        parts.push(Span::styled(format!(" · {} tokens · {left}% context left", compact(used)), theme::dim()));
        let cost = crate::agent::cost(s.usage, &s.info)
            .map(|c| format!(" · ${c:.2}"))
            .unwrap_or_else(|| " · price unknown".into());
        parts.push(Span::styled(cost, theme::dim()));
    }
    if let Some(activity) = &app.busy {
        let since = match activity {
            Activity::Thinking(since) | Activity::Running { since, .. } => Some(*since),
            Activity::Retrying { .. } => None,
        };
        let tick = since.map_or(0, |s| now.duration_since(s).as_millis() / 100) as usize;
        let spin = SPINNER[tick % SPINNER.len()];
        let what = match activity {
            _ if !app.reviews.is_empty() => "waiting for your approval".to_owned(),
            Activity::Thinking(since) => format!("thinking {}s", now.duration_since(*since).as_secs()),
            Activity::Running { what, since } => {
                format!("running {} {}s", truncate(what, 40), now.duration_since(*since).as_secs())
            }
            Activity::Retrying { reason } => truncate(reason, 60),
        };
        parts.push(Span::styled(format!("  {spin} {what}"), theme::hint()));
    }
    let text: String = parts.iter().map(|p| p.content.as_ref()).collect();
    if unicode_width::UnicodeWidthStr::width(text.as_str()) > width {
        return Line::styled(truncate(&text, width), theme::dim());
    }
    Line::from(parts)
}

fn hint_line(app: &App) -> Line<'static> {
    if let Some(review) = app.reviews.front() {
        return review.hints();
    }
    let mut line = keys::hint_line(if app.busy.is_some() { keys::BUSY } else { keys::IDLE });
    line.spans.push(Span::styled(if app.mouse { " · F2 mouse off" } else { " · F2 mouse" }, theme::dim()));
    line
}

fn compact(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}
