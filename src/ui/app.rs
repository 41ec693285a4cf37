//! The application state and how events change it. Keys and agent events
//! come in; [`UserOp`]s and approval decisions go out; drawing (in
//! [`super::view`]) only reads this state.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc::UnboundedSender;

use super::browser::Browser;
use super::cells::{Cell, ToolEntry, ToolState, Transcript};
use super::composer::{self, Composer};
use super::review::{self, Review};
use crate::agent::{AgentEvent, CallStatus, Decision, Outcome, UserOp};
use crate::config::{ApprovalMode, ModelInfo};
use crate::provider::Usage;

/// What the front end should do after an event.
#[derive(Debug, PartialEq)]
pub enum Control {
    Continue,
    Quit,
    /// Open $EDITOR on the prompt being written.
    EditPrompt,
    /// Open $EDITOR on the proposed content of the file change under review.
    EditProposal,
    /// Turn mouse capture on or off.
    Mouse(bool),
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
}

/// What the status line knows.
#[derive(Debug, Clone)]
pub struct Status {
    pub provider: String,
    pub model: String,
    pub approval: ApprovalMode,
    pub sandbox: bool,
    pub usage: Usage,
    /// The prompt size of the latest request, for "context left".
    pub last_input: u64,
    pub info: ModelInfo,
    /// The session's transcript file, and where sessions live.
    pub session_path: std::path::PathBuf,
    pub workspace: std::path::PathBuf,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Activity {
    Thinking(Instant),
    Running { what: String, since: Instant },
    Retrying { reason: String },
}

pub struct App {
    pub transcript: Transcript,
    pub composer: Composer,
    pub reviews: VecDeque<Review>,
    pub browser: Option<Browser>,
    pub busy: Option<Activity>,
    pub status: Status,
    /// Lines hidden below the bottom of the chat; 0 follows new output.
    pub scroll: usize,
    pub show_log: bool,
    pub log_selected: Option<usize>,
    pub mouse: bool,
    /// A one-line message above the input (`press Ctrl-C again to quit`).
    pub flash: Option<String>,
    ops: UnboundedSender<UserOp>,
    streaming: Option<usize>,
    last_ctrl_c: Option<Instant>,
    /// Chat geometry from the last frame, for scrolling to a tool call.
    pub chat_view: (usize, usize),
    /// The model's task list, from its latest `todo` call.
    pub todos: Vec<crate::tools::todo::TodoItem>,
}

impl App {
    pub fn new(ops: UnboundedSender<UserOp>, composer: Composer, status: Status) -> Self {
        App {
            transcript: Transcript::default(),
            composer,
            reviews: VecDeque::new(),
            browser: None,
            busy: None,
            status,
            scroll: 0,
            show_log: true,
            log_selected: None,
            mouse: false,
            flash: None,
            ops,
            streaming: None,
            last_ctrl_c: None,
            chat_view: (80, 20),
            todos: Vec::new(),
        }
    }

    /// Shows a resumed session's history: messages, and every tool call
    /// with its result, decision and output.
    pub fn load_records(&mut self, records: &[crate::session::Record]) {
        use crate::session::Record;
        for record in records {
            match record {
                Record::User { text, .. } => {
                    self.transcript.push(Cell::User(text.clone()));
                }
                Record::Assistant { message, .. } => {
                    let text = message.text();
                    if !text.trim().is_empty() {
                        self.transcript.push(Cell::Assistant { text, streaming: false });
                    }
                    for call in message.tool_calls() {
                        let info = crate::agent::CallInfo {
                            id: call.id.clone(),
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                        };
                        self.transcript.tools.push(ToolEntry::new(info));
                        let index = self.transcript.tools.len() - 1;
                        self.transcript.push(Cell::Tool(index));
                    }
                }
                Record::Decision { call_id, decision, .. } => {
                    if let Some(t) = self.transcript.find_tool(call_id) {
                        self.transcript.tools[t].decision = Some(decision.clone());
                    }
                }
                Record::ToolResult {
                    call_id, status, content, full, is_error, summary, target, duration_ms, ..
                } => {
                    if let Some(t) = self.transcript.find_tool(call_id) {
                        let call = self.transcript.tools[t].call.clone();
                        self.take_todos(&call.name, &call.arguments, *status);
                        let entry = &mut self.transcript.tools[t];
                        entry.state = ToolState::Done(*status);
                        entry.target = target.clone();
                        entry.duration = Some(Duration::from_millis(*duration_ms));
                        entry.output = Some(crate::tools::ToolOutput {
                            content: content.clone(),
                            full: full.clone(),
                            is_error: *is_error,
                            summary: summary.clone(),
                        });
                    }
                }
                Record::Usage { usage, .. } => self.status.usage.add(*usage),
                Record::Error { message, .. } => self.notice(message.clone(), true),
                _ => {}
            }
        }
        for entry in &mut self.transcript.tools {
            if !matches!(entry.state, ToolState::Done(_)) {
                entry.state = ToolState::Done(CallStatus::Interrupted);
            }
        }
    }

    /// A successful `todo` call replaces the task list.
    fn take_todos(&mut self, name: &str, arguments: &str, status: CallStatus) {
        if name != "todo" || status != CallStatus::Ok {
            return;
        }
        if let Some(items) = serde_json::from_str(arguments).ok().and_then(|v| crate::tools::todo::parse(&v)) {
            self.todos = items;
        }
    }

    pub fn notice(&mut self, text: impl Into<String>, error: bool) {
        self.transcript.push(Cell::Notice { text: text.into(), error });
    }

    pub(super) fn send(&self, op: UserOp) {
        let _ = self.ops.send(op);
    }

    pub fn agent(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::TurnStarted { .. } | AgentEvent::RequestStarted { .. } => {
                self.busy = Some(Activity::Thinking(Instant::now()));
            }
            AgentEvent::TextDelta(text) => {
                let cell = match self.streaming {
                    Some(cell) => cell,
                    None => {
                        let cell = self.transcript.push(Cell::Assistant { text: String::new(), streaming: true });
                        self.streaming = Some(cell);
                        cell
                    }
                };
                let slot = &mut self.transcript.cells[cell];
                if let Cell::Assistant { text: existing, .. } = &mut slot.cell {
                    existing.push_str(&text);
                }
                slot.invalidate();
            }
            AgentEvent::Retrying { reason, delay, .. } => {
                if let Some(cell) = self.streaming.take() {
                    self.transcript.cells.remove(cell);
                }
                self.busy =
                    Some(Activity::Retrying { reason: format!("{reason}; retrying in {:.0}s", delay.as_secs_f64()) });
            }
            AgentEvent::AssistantText(text) => match self.streaming.take() {
                Some(cell) => {
                    let slot = &mut self.transcript.cells[cell];
                    slot.cell = Cell::Assistant { text: text.clone(), streaming: false };
                    slot.invalidate();
                    if text.trim().is_empty() {
                        self.transcript.cells.remove(cell);
                    }
                }
                None if !text.trim().is_empty() => {
                    self.transcript.push(Cell::Assistant { text, streaming: false });
                }
                None => {}
            },
            AgentEvent::ToolCall { call } => {
                self.transcript.tools.push(ToolEntry::new(call));
                let index = self.transcript.tools.len() - 1;
                self.transcript.push(Cell::Tool(index));
            }
            AgentEvent::ApprovalRequest(request) => {
                if let Some(t) = self.transcript.find_tool(&request.call.id) {
                    let entry = &mut self.transcript.tools[t];
                    entry.state = ToolState::Pending;
                    entry.target = Some(request.plan.target.clone());
                    self.refresh_tool(t);
                }
                self.reviews.push_back(Review::new(request));
            }
            AgentEvent::ToolStarted { id, target } => {
                if let Some(t) = self.transcript.find_tool(&id) {
                    let entry = &mut self.transcript.tools[t];
                    entry.state = ToolState::Running(Instant::now());
                    entry.target = Some(target.clone());
                    let what = format!("{} {}", entry.call.name, target);
                    self.busy = Some(Activity::Running { what, since: Instant::now() });
                }
            }
            AgentEvent::ToolFinished { call, target, status, output, duration, change } => {
                self.take_todos(&call.name, &call.arguments, status);
                if let Some(t) = self.transcript.find_tool(&call.id) {
                    let entry = &mut self.transcript.tools[t];
                    entry.state = ToolState::Done(status);
                    entry.target = target.or(entry.target.take());
                    entry.output = Some(output);
                    entry.duration = Some(duration);
                    entry.change = change;
                    self.refresh_tool(t);
                }
                self.busy = Some(Activity::Thinking(Instant::now()));
            }
            AgentEvent::Usage { request, total } => {
                self.status.usage = total;
                self.status.last_input = request.input_tokens + request.output_tokens;
            }
            AgentEvent::Notice(text) => self.notice(text, false),
            AgentEvent::TurnFinished(outcome) => {
                self.busy = None;
                if let Some(cell) = self.streaming.take()
                    && let Cell::Assistant { streaming, .. } = &mut self.transcript.cells[cell].cell
                {
                    *streaming = false;
                    self.transcript.cells[cell].invalidate();
                }
                match outcome {
                    Outcome::Done { .. } => {}
                    Outcome::Failed { message } => self.notice(message, true),
                    Outcome::MaxTurns { limit } => self.notice(
                        format!("stopped after {limit} model round-trips (--max-turns); send a message to go on"),
                        true,
                    ),
                    Outcome::BudgetReached { spent, limit } => self.notice(
                        format!("stopped: the next request would take spending past ${limit:.2} (spent ${spent:.4})"),
                        true,
                    ),
                    Outcome::Interrupted => self.notice("interrupted", false),
                }
                // Calls the agent never got to are shown as interrupted.
                for t in 0..self.transcript.tools.len() {
                    if matches!(
                        self.transcript.tools[t].state,
                        ToolState::Queued | ToolState::Pending | ToolState::Running(_)
                    ) {
                        self.transcript.tools[t].state = ToolState::Done(CallStatus::Interrupted);
                        self.refresh_tool(t);
                    }
                }
            }
        }
    }

    fn refresh_tool(&self, t: usize) {
        if let Some(cell) = self.transcript.tool_cell(t) {
            self.transcript.cells[cell].invalidate();
        }
    }

    pub fn paste(&mut self, text: &str) {
        if let Some(review) = self.reviews.front_mut()
            && let Some(reason) = &mut review.reason
        {
            reason.push_str(text);
            return;
        }
        self.composer.paste(text);
    }

    pub fn key(&mut self, key: KeyEvent) -> Control {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c();
        }
        self.flash = None;
        match key.code {
            KeyCode::Char('t') if ctrl => {
                self.browser = match self.browser.take() {
                    Some(_) => None,
                    None => Some(Browser::default()),
                };
                return Control::Continue;
            }
            KeyCode::Char('l') if ctrl => {
                self.show_log = !self.show_log;
                return Control::Continue;
            }
            KeyCode::F(2) => {
                self.mouse = !self.mouse;
                return Control::Mouse(self.mouse);
            }
            _ => {}
        }
        if let Some(browser) = &mut self.browser {
            if browser.key(key, &self.transcript.tools) {
                self.browser = None;
            }
            return Control::Continue;
        }
        if let Some(review) = self.reviews.front_mut() {
            match review.key(key) {
                review::Outcome::Decided(decision) => self.decide(decision),
                review::Outcome::Edit => return Control::EditProposal,
                review::Outcome::Consumed => {}
                review::Outcome::Ignored => self.scroll_keys(key),
            }
            return Control::Continue;
        }
        match key.code {
            KeyCode::Esc if self.busy.is_some() => {
                self.send(UserOp::Interrupt);
                return Control::Continue;
            }
            KeyCode::Char('d') if ctrl && self.composer.is_empty() => return Control::Quit,
            KeyCode::Char('o') if ctrl => {
                self.toggle_expand();
                return Control::Continue;
            }
            KeyCode::Up | KeyCode::Down if key.modifiers.contains(KeyModifiers::ALT) => {
                self.select_tool(if key.code == KeyCode::Up { -1 } else { 1 });
                return Control::Continue;
            }
            KeyCode::PageUp | KeyCode::PageDown => {
                self.scroll_keys(key);
                return Control::Continue;
            }
            KeyCode::Home | KeyCode::End if self.composer.is_empty() => {
                self.scroll_keys(key);
                return Control::Continue;
            }
            _ => {}
        }
        match self.composer.key(key) {
            composer::Action::Submit(text) => self.submit(text),
            composer::Action::Editor => Control::EditPrompt,
            composer::Action::None => Control::Continue,
        }
    }

    fn ctrl_c(&mut self) -> Control {
        if !self.reviews.is_empty() {
            // Refuse everything queued; the first refusal stops the turn.
            while let Some(review) = self.reviews.pop_front() {
                self.record(&review, "refused (Ctrl-C)");
                let _ = review.request.reply.send(Decision::Stop);
            }
            return Control::Continue;
        }
        if self.busy.is_some() {
            self.send(UserOp::Interrupt);
            return Control::Continue;
        }
        if !self.composer.is_empty() {
            self.composer.set_text("");
            return Control::Continue;
        }
        let now = Instant::now();
        if self.last_ctrl_c.is_some_and(|t| now.duration_since(t) < Duration::from_secs(2)) {
            return Control::Quit;
        }
        self.last_ctrl_c = Some(now);
        self.flash = Some("press Ctrl-C again to quit".into());
        Control::Continue
    }

    /// Sends the decision on the front review and moves to the next one.
    pub fn decide(&mut self, decision: Decision) {
        let Some(review) = self.reviews.pop_front() else { return };
        let words = match &decision {
            Decision::Approve => "approved".to_owned(),
            Decision::AllowForSession => "approved, and allowed for the rest of the session".to_owned(),
            Decision::ApproveEdited { note, .. } => format!("approved with changes: {note}"),
            Decision::Refuse { reason: Some(r) } => format!("refused: {r}"),
            Decision::Refuse { reason: None } => "refused".to_owned(),
            Decision::Stop => "refused, and the turn stopped".to_owned(),
        };
        self.record(&review, &words);
        if decision == Decision::AllowForSession
            && !matches!(review.request.plan.effect, crate::tools::Effect::Command { .. })
            && self.status.approval == ApprovalMode::Ask
        {
            self.flash =
                Some(format!("{} will run without asking for the rest of the session", review.request.call.name));
        }
        let _ = review.request.reply.send(decision);
    }

    fn record(&mut self, review: &Review, words: &str) {
        if let Some(t) = self.transcript.find_tool(&review.request.call.id) {
            self.transcript.tools[t].decision = Some(words.to_owned());
            self.refresh_tool(t);
        }
    }

    fn submit(&mut self, text: String) -> Control {
        if let Some(command) = text.strip_prefix('/') {
            return self.command(command.trim());
        }
        self.transcript.push(Cell::User(text.clone()));
        self.scroll = 0;
        self.busy = Some(Activity::Thinking(Instant::now()));
        self.send(UserOp::Submit(text));
        Control::Continue
    }

    fn scroll_keys(&mut self, key: KeyEvent) {
        let page = self.chat_view.1.saturating_sub(2).max(1);
        if let Some(review) = self.reviews.front_mut() {
            match key.code {
                KeyCode::PageDown => review.scroll += page,
                KeyCode::PageUp => review.scroll = review.scroll.saturating_sub(page),
                _ => {}
            }
            return;
        }
        match key.code {
            KeyCode::PageUp => self.scroll += page,
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::Home => self.scroll = usize::MAX / 2,
            KeyCode::End => self.scroll = 0,
            _ => {}
        }
    }

    pub fn wheel(&mut self, up: bool) {
        if up {
            self.scroll += 3;
        } else {
            self.scroll = self.scroll.saturating_sub(3);
        }
    }

    /// A click at (`column`, `row`): on a tool call in the chat, it
    /// expands or collapses the call (with mouse capture on, F2).
    pub fn click(&mut self, column: u16, row: u16) {
        let (width, height) = self.chat_view;
        if self.browser.is_some() || column as usize > width || row as usize >= height || !self.reviews.is_empty() {
            return;
        }
        let now = Instant::now();
        let heights: Vec<usize> =
            (0..self.transcript.cells.len()).map(|i| self.transcript.height(i, width, now)).collect();
        let total: usize = heights.iter().sum();
        // The chat shows the last `height` lines above `scroll`; a short
        // transcript sits at the top.
        let line = if total <= height {
            row as usize
        } else {
            total.saturating_sub(height + self.scroll.min(total - height)) + row as usize
        };
        let mut start = 0;
        for (cell, h) in heights.iter().enumerate() {
            if line < start + h {
                if let Cell::Tool(tool) = self.transcript.cells[cell].cell {
                    self.log_selected = Some(tool);
                    let entry = &mut self.transcript.tools[tool];
                    entry.expanded = !entry.expanded;
                    self.refresh_tool(tool);
                }
                return;
            }
            start += h;
        }
    }

    fn select_tool(&mut self, step: isize) {
        let count = self.transcript.tools.len();
        if count == 0 {
            return;
        }
        let next = match self.log_selected {
            None => count - 1,
            Some(i) => (i as isize + step).clamp(0, count as isize - 1) as usize,
        };
        self.log_selected = Some(next);
        self.scroll_to_tool(next);
    }

    /// Scrolls the chat so the tool call's cell is at the top.
    pub fn scroll_to_tool(&mut self, tool: usize) {
        let Some(cell) = self.transcript.tool_cell(tool) else { return };
        let (width, height) = self.chat_view;
        let now = Instant::now();
        let below: usize = (cell..self.transcript.cells.len()).map(|i| self.transcript.height(i, width, now)).sum();
        self.scroll = below.saturating_sub(height);
    }

    fn toggle_expand(&mut self) {
        let Some(tool) = self.log_selected.or(self.transcript.tools.len().checked_sub(1)) else { return };
        let entry = &mut self.transcript.tools[tool];
        entry.expanded = !entry.expanded;
        self.refresh_tool(tool);
        self.scroll_to_tool(tool);
    }
}
