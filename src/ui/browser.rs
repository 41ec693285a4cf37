//! The transcript browser (Ctrl-T): every tool call of the session in
//! order, filterable by tool and status, one call in full on Enter.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::text::{Line, Span};

use super::cells::ToolEntry;
use super::{keys, theme, wrap::truncate};

const STATUSES: &[&str] = &["ok", "error", "refused", "interrupted", "pending approval", "running"];

#[derive(Debug, Default)]
pub struct Browser {
    pub selected: usize,
    pub tool: Option<String>,
    pub status: Option<&'static str>,
    pub detail: bool,
    pub scroll: usize,
}

impl Browser {
    /// Indexes of the entries the filters let through.
    pub fn visible(&self, tools: &[ToolEntry]) -> Vec<usize> {
        tools
            .iter()
            .enumerate()
            .filter(|(_, t)| self.tool.as_ref().is_none_or(|name| &t.call.name == name))
            .filter(|(_, t)| self.status.is_none_or(|s| t.status_word() == s))
            .map(|(i, _)| i)
            .collect()
    }

    /// Handles a key; true when the browser closes.
    pub fn key(&mut self, key: KeyEvent, tools: &[ToolEntry]) -> bool {
        let count = self.visible(tools).len();
        if self.detail {
            match key.code {
                KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => self.detail = false,
                KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
                KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
                KeyCode::PageDown => self.scroll += 20,
                KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(20),
                _ => {}
            }
            return false;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return true,
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(count.saturating_sub(1)),
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Enter if count > 0 => {
                self.detail = true;
                self.scroll = 0;
            }
            KeyCode::Char('t') => {
                let mut names: Vec<&str> = tools.iter().map(|t| t.call.name.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                self.tool = cycle(&names, self.tool.as_deref()).map(str::to_owned);
                self.selected = 0;
            }
            KeyCode::Char('s') => {
                self.status = cycle(STATUSES, self.status);
                self.selected = 0;
            }
            _ => {}
        }
        false
    }

    pub fn lines(&self, tools: &[ToolEntry], width: usize, height: usize) -> Vec<Line<'static>> {
        let visible = self.visible(tools);
        let mut out = vec![Line::from(vec![
            Span::styled("Transcript", theme::bold()),
            Span::styled(
                format!(
                    "  {} of {} tool calls · tool: {} · status: {}",
                    visible.len(),
                    tools.len(),
                    self.tool.as_deref().unwrap_or("all"),
                    self.status.unwrap_or("all")
                ),
                theme::dim(),
            ),
        ])];
        let body = height.saturating_sub(2);
        if self.detail
            && let Some(&i) = visible.get(self.selected)
        {
            let entry = &tools[i];
            out.push(Line::from(vec![
                entry.status_mark(),
                Span::raw(" "),
                Span::styled(entry.summary(std::time::Instant::now()), theme::bold()),
            ]));
            out.extend(entry.detail_lines(width).into_iter().skip(self.scroll).take(body.saturating_sub(1)));
            out.resize(height.saturating_sub(1), Line::default());
            out.push(keys::hint_line(&[("j/k", "scroll"), ("Esc", "back")]));
            return out;
        }
        let first = self.selected.saturating_sub(body.saturating_sub(1));
        for (row, &i) in visible.iter().enumerate().skip(first).take(body) {
            let entry = &tools[i];
            let took = entry.duration.map(|d| format!("{:.1}s", d.as_secs_f64())).unwrap_or_default();
            let text = truncate(
                &format!("{:>3}  {}  {}  {took}", i + 1, entry.summary(std::time::Instant::now()), entry.status_word()),
                width.saturating_sub(2),
            );
            let style = if row == self.selected { theme::selected() } else { ratatui::style::Style::new() };
            out.push(Line::from(vec![entry.status_mark(), Span::raw(" "), Span::styled(text, style)]));
        }
        if visible.is_empty() {
            out.push(Line::styled("no tool calls match", theme::dim()));
        }
        out.resize(height.saturating_sub(1), Line::default());
        out.push(keys::hint_line(&[
            ("j/k", "move"),
            ("Enter", "open"),
            ("t", "filter tool"),
            ("s", "filter status"),
            ("Esc", "close"),
        ]));
        out
    }
}

/// The next choice after `current` in `options`, then back to none.
fn cycle<'a>(options: &[&'a str], current: Option<&str>) -> Option<&'a str> {
    match current.and_then(|c| options.iter().position(|o| *o == c)) {
        None => options.first().copied(),
        Some(i) => options.get(i + 1).copied(),
    }
}
