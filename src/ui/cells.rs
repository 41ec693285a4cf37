//! The transcript as a list of cells (user message, assistant message, tool
//! call, notice), each turning its data into styled lines for a width. Tool
//! calls live once, in [`Transcript::tools`]; the chat, the tool log and
//! the transcript browser are views of that one list.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{diff, highlight, markdown, theme, wrap::wrap};
use crate::agent::{CallInfo, CallStatus};
use crate::tools::{FileChange, ToolOutput};

#[derive(Debug, Clone, PartialEq)]
pub enum ToolState {
    /// Waiting for the person's decision.
    Pending,
    Running(Instant),
    Done(CallStatus),
    /// Asked for, not yet judged.
    Queued,
}

#[derive(Debug, Clone)]
pub struct ToolEntry {
    pub call: CallInfo,
    pub target: Option<String>,
    pub state: ToolState,
    pub output: Option<ToolOutput>,
    pub duration: Option<Duration>,
    pub change: Option<FileChange>,
    /// What the person decided, when they were asked.
    pub decision: Option<String>,
    pub expanded: bool,
}

impl ToolEntry {
    pub fn new(call: CallInfo) -> Self {
        ToolEntry {
            call,
            target: None,
            state: ToolState::Queued,
            output: None,
            duration: None,
            change: None,
            decision: None,
            expanded: false,
        }
    }

    /// `edit_file src/main.rs (+3 −1)`, `bash cargo test → exit 0, 2.1s`.
    pub fn summary(&self, now: Instant) -> String {
        let target = self.target.clone().unwrap_or_else(|| guess_target(&self.call));
        let mut text = format!("{} {}", self.call.name, target);
        match &self.state {
            ToolState::Queued => {}
            ToolState::Pending => text.push_str(" — waiting for approval"),
            ToolState::Running(since) => {
                text.push_str(&format!(" — running {}s", now.duration_since(*since).as_secs()))
            }
            ToolState::Done(_) => {
                if let Some(change) = &self.change {
                    text.push_str(&format!(" ({})", change.summary()));
                } else if let Some(output) = &self.output {
                    text.push_str(&format!(" → {}", output.summary));
                }
            }
        }
        text
    }

    pub fn status_mark(&self) -> Span<'static> {
        match &self.state {
            ToolState::Queued => Span::styled("○", theme::dim()),
            ToolState::Pending => Span::styled("?", theme::warn()),
            ToolState::Running(_) => Span::styled("◐", theme::hint()),
            ToolState::Done(CallStatus::Ok) => Span::styled("●", theme::ok()),
            ToolState::Done(CallStatus::Error) => Span::styled("✗", theme::error()),
            ToolState::Done(CallStatus::Refused) => Span::styled("⊘", theme::warn()),
            ToolState::Done(CallStatus::Interrupted) => Span::styled("◌", theme::dim()),
        }
    }

    pub fn status_word(&self) -> &'static str {
        match &self.state {
            ToolState::Queued => "queued",
            ToolState::Pending => "pending approval",
            ToolState::Running(_) => "running",
            ToolState::Done(CallStatus::Ok) => "ok",
            ToolState::Done(CallStatus::Error) => "error",
            ToolState::Done(CallStatus::Refused) => "refused",
            ToolState::Done(CallStatus::Interrupted) => "interrupted",
        }
    }

    /// Everything about the call: arguments, decision, diff, full output.
    pub fn detail_lines(&self, width: usize) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        let label = |t: &str| Line::styled(t.to_owned(), theme::dim());
        out.push(label("arguments"));
        let args = serde_json::from_str::<Value>(&self.call.arguments)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| self.call.arguments.clone());
        for line in args.lines() {
            out.extend(wrap(Line::raw(format!("  {line}")), width, &[Span::raw("  ")]));
        }
        if let Some(decision) = &self.decision {
            out.push(Line::from(vec![Span::styled("decision ", theme::dim()), Span::raw(decision.clone())]));
        }
        if let Some(duration) = self.duration {
            out.push(Line::from(vec![
                Span::styled("took ", theme::dim()),
                Span::raw(format!("{:.1}s", duration.as_secs_f64())),
            ]));
        }
        if let Some(change) = &self.change {
            out.push(label("diff"));
            let hunks = crate::hunks::hunks(change.old.as_deref().unwrap_or(""), &change.new);
            out.extend(diff::render(&change.path, &hunks, width, None).0);
        }
        if let Some(output) = &self.output {
            out.push(label("output"));
            let text = output.full.as_deref().unwrap_or(&output.content);
            let style = if output.is_error { theme::error() } else { ratatui::style::Style::new() };
            for line in text.lines() {
                out.extend(wrap(
                    Line::styled(format!("  {}", line.replace('\t', "    ")), style),
                    width,
                    &[Span::raw("  ")],
                ));
            }
        }
        out
    }
}

/// A short target for display before the agent has judged the call.
fn guess_target(call: &CallInfo) -> String {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    ["path", "command", "pattern"]
        .iter()
        .find_map(|k| args.get(k).and_then(Value::as_str))
        .map(|s| s.lines().next().unwrap_or("").chars().take(80).collect())
        .unwrap_or_default()
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    User(String),
    Assistant {
        text: String,
        streaming: bool,
    },
    /// An index into [`Transcript::tools`].
    Tool(usize),
    Notice {
        text: String,
        error: bool,
    },
}

/// A cell with its wrapped lines cached per width.
#[derive(Debug)]
pub struct Slot {
    pub cell: Cell,
    cache: RefCell<Option<(usize, u64, Vec<Line<'static>>)>>,
}

impl Slot {
    pub fn new(cell: Cell) -> Self {
        Slot { cell, cache: RefCell::new(None) }
    }

    pub fn invalidate(&self) {
        self.cache.replace(None);
    }
}

#[derive(Debug, Default)]
pub struct Transcript {
    pub cells: Vec<Slot>,
    pub tools: Vec<ToolEntry>,
}

impl Transcript {
    pub fn push(&mut self, cell: Cell) -> usize {
        self.cells.push(Slot::new(cell));
        self.cells.len() - 1
    }

    pub fn tool_cell(&self, tool: usize) -> Option<usize> {
        self.cells.iter().position(|s| s.cell == Cell::Tool(tool))
    }

    pub fn find_tool(&self, id: &str) -> Option<usize> {
        self.tools.iter().rposition(|t| t.call.id == id)
    }

    /// The lines of cell `i` at `width`, from the cache when it is current.
    /// Running tool calls show a clock, so they are never cached.
    pub fn lines(&self, i: usize, width: usize, now: Instant) -> std::cell::Ref<'_, Vec<Line<'static>>> {
        let slot = &self.cells[i];
        let generation = highlight::generation();
        let live = matches!(slot.cell, Cell::Tool(t) if matches!(self.tools[t].state, ToolState::Running(_)));
        let fresh = matches!(&*slot.cache.borrow(), Some((w, g, _)) if *w == width && *g == generation) && !live;
        if !fresh {
            let lines = self.render(&slot.cell, width, now);
            slot.cache.replace(Some((width, generation, lines)));
        }
        std::cell::Ref::map(slot.cache.borrow(), |c| match c {
            Some((_, _, lines)) => lines,
            None => unreachable_empty(),
        })
    }

    pub fn height(&self, i: usize, width: usize, now: Instant) -> usize {
        self.lines(i, width, now).len()
    }

    fn render(&self, cell: &Cell, width: usize, now: Instant) -> Vec<Line<'static>> {
        let mut out = match cell {
            Cell::User(text) => {
                let mut lines = Vec::new();
                for (n, line) in text.lines().enumerate() {
                    let prefix = if n == 0 { Span::styled("› ", theme::user()) } else { Span::raw("  ") };
                    lines.extend(wrap(
                        Line::from(vec![prefix, Span::styled(line.to_owned(), theme::bold())]),
                        width,
                        &[Span::raw("  ")],
                    ));
                }
                lines
            }
            Cell::Assistant { text, streaming } => {
                let mut lines = markdown::render(text, width.saturating_sub(2));
                for line in &mut lines {
                    line.spans.insert(0, Span::raw("  "));
                }
                if let Some(first) = lines.first_mut() {
                    first.spans[0] = Span::styled("◆ ", theme::accent());
                }
                if *streaming {
                    lines.push(Line::styled("  ▍", theme::accent()));
                }
                lines
            }
            Cell::Tool(t) => {
                let entry = &self.tools[*t];
                let summary = Line::from(vec![
                    entry.status_mark(),
                    Span::raw(" "),
                    Span::styled(entry.summary(now), theme::bold()),
                ]);
                let mut lines = wrap(summary, width, &[Span::raw("  ")]);
                if entry.expanded {
                    for line in entry.detail_lines(width.saturating_sub(2)) {
                        let mut spans = vec![Span::styled("│ ", theme::dim())];
                        spans.extend(line.spans);
                        lines.push(Line::from(spans));
                    }
                } else if let (Some(change), ToolState::Done(CallStatus::Ok)) = (&entry.change, &entry.state) {
                    // Edits show their diff inline, capped; Ctrl-O shows all.
                    let hunks = crate::hunks::hunks(change.old.as_deref().unwrap_or(""), &change.new);
                    let (diff, _) = diff::render(&change.path, &hunks, width.saturating_sub(2), None);
                    let total = diff.len();
                    for line in diff.into_iter().take(12) {
                        let mut spans = vec![Span::raw("  ")];
                        spans.extend(line.spans);
                        lines.push(Line::from(spans));
                    }
                    if total > 12 {
                        lines.push(Line::styled(
                            format!("  … {} more (Ctrl-O to expand)", crate::tools::files::lines(total - 12)),
                            theme::dim(),
                        ));
                    }
                } else if let Some(output) = &entry.output {
                    // A glimpse of the output: the error, or the first lines of a command's.
                    let first = output.content.lines().next().unwrap_or_default();
                    if output.is_error && !first.starts_with(output.summary.trim_end_matches('…')) {
                        lines.extend(wrap(
                            Line::styled(format!("  {first}"), theme::error()),
                            width,
                            &[Span::raw("    ")],
                        ));
                    } else if !output.is_error && entry.call.name == "bash" && output.content != "(no output)" {
                        let total = output.content.lines().count();
                        for line in output.content.lines().take(3) {
                            let line = line.replace('\t', "    ");
                            lines.push(Line::styled(
                                format!("  {}", super::wrap::truncate(&line, width.saturating_sub(2))),
                                theme::dim(),
                            ));
                        }
                        if total > 3 {
                            lines.push(Line::styled(
                                format!("  … {} more (Ctrl-O to expand)", crate::tools::files::lines(total - 3)),
                                theme::dim(),
                            ));
                        }
                    }
                }
                lines
            }
            Cell::Notice { text, error } => {
                let style = if *error { theme::error() } else { theme::dim() };
                text.lines()
                    .flat_map(|l| wrap(Line::styled(format!("· {l}"), style), width, &[Span::raw("  ")]))
                    .collect()
            }
        };
        out.push(Line::default());
        out
    }
}

/// The cache is filled just above; this arm cannot be reached, and an empty
/// list is the harmless answer if it ever were.
fn unreachable_empty() -> &'static Vec<Line<'static>> {
    static EMPTY: Vec<Line<'static>> = Vec::new();
    &EMPTY
}
