//! The input box: multi-line editing (ratatui-textarea), prompt history
//! kept across sessions, and slash commands with completion.

use std::io::Write;
use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Style;
use ratatui_textarea::TextArea;

use super::theme;

/// The slash commands, with what they do.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "show keys and commands"),
    ("/model", "show the model and provider"),
    ("/approval", "show or set the approval mode: /approval read-only|ask|auto-edit|full-auto"),
    ("/clear", "start a fresh conversation"),
    ("/compact", "shrink the conversation now: old outputs shortened, older turns summarised"),
    ("/undo", "put back the files the latest turn changed (shown as diffs to approve)"),
    ("/rewind", "go back to before an earlier message, files and conversation: /rewind N"),
    ("/cost", "show tokens and spending"),
    ("/sessions", "list the saved sessions of this folder"),
    ("/export", "write this session's transcript as Markdown: /export [FILE]"),
    ("/copy", "copy the last answer (/copy code: its last code block) to the clipboard"),
    ("/quit", "leave hew"),
];

pub enum Action {
    None,
    Submit(String),
    /// Ctrl-G: edit the prompt in $EDITOR.
    Editor,
}

pub struct Composer {
    area: TextArea<'static>,
    history: Vec<String>,
    /// Position while walking the history with Up/Down.
    browsing: Option<usize>,
    history_file: Option<PathBuf>,
}

const HISTORY_LIMIT: usize = 500;

impl Composer {
    pub fn new(history_file: Option<PathBuf>) -> Self {
        let history = history_file.as_ref().map(load_history).unwrap_or_default();
        let mut composer = Composer { area: TextArea::default(), history, browsing: None, history_file };
        composer.reset("");
        composer
    }

    fn reset(&mut self, text: &str) {
        let lines: Vec<String> =
            if text.is_empty() { vec![String::new()] } else { text.lines().map(str::to_owned).collect() };
        self.area = TextArea::new(lines);
        self.area.set_cursor_line_style(Style::new());
        self.area.set_placeholder_text("Ask hew to change something…  (/help for commands)");
        self.area.set_placeholder_style(theme::dim());
        self.area.move_cursor(ratatui_textarea::CursorMove::Bottom);
        self.area.move_cursor(ratatui_textarea::CursorMove::End);
    }

    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    pub fn set_text(&mut self, text: &str) {
        self.reset(text);
    }

    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(|l| l.is_empty())
    }

    pub fn widget(&self) -> &TextArea<'static> {
        &self.area
    }

    /// Rows the box wants: its lines, between 1 and 8.
    pub fn height(&self) -> u16 {
        self.area.lines().len().clamp(1, 8) as u16
    }

    pub fn paste(&mut self, text: &str) {
        self.browsing = None;
        // Carriage returns from terminals become newlines; the text is kept whole.
        self.area.insert_str(text.replace("\r\n", "\n").replace('\r', "\n"));
    }

    pub fn key(&mut self, key: KeyEvent) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let newline = key.modifiers.intersects(KeyModifiers::SHIFT | KeyModifiers::ALT);
        match key.code {
            KeyCode::Enter if newline => {
                self.area.insert_newline();
            }
            KeyCode::Char('j') if ctrl => {
                self.area.insert_newline();
            }
            KeyCode::Char('g') if ctrl => return Action::Editor,
            KeyCode::Enter => {
                let text = self.text();
                if text.trim().is_empty() {
                    return Action::None;
                }
                self.remember(&text);
                self.reset("");
                return Action::Submit(text);
            }
            KeyCode::Tab if self.text().starts_with('/') => {
                let text = self.text();
                let matches: Vec<&str> =
                    COMMANDS.iter().map(|(c, _)| *c).filter(|c| c.starts_with(text.trim())).collect();
                if let [only] = matches.as_slice() {
                    self.reset(&format!("{only} "));
                }
            }
            KeyCode::Up if self.is_empty() || self.browsing.is_some() => self.walk(-1),
            KeyCode::Down if self.browsing.is_some() => self.walk(1),
            _ => {
                self.browsing = None;
                self.area.input(key);
            }
        }
        Action::None
    }

    /// Up/Down through earlier prompts, newest first.
    fn walk(&mut self, step: isize) {
        if self.history.is_empty() {
            return;
        }
        let last = self.history.len() - 1;
        let next = match (self.browsing, step) {
            (None, _) => Some(last),
            (Some(0), -1) => Some(0),
            (Some(i), -1) => Some(i - 1),
            (Some(i), _) if i >= last => None,
            (Some(i), _) => Some(i + 1),
        };
        self.browsing = next;
        let text = next.map(|i| self.history[i].clone()).unwrap_or_default();
        self.reset(&text);
    }

    fn remember(&mut self, text: &str) {
        self.browsing = None;
        if self.history.last().map(String::as_str) != Some(text) {
            self.history.push(text.to_owned());
            if self.history.len() > HISTORY_LIMIT {
                self.history.remove(0);
            }
            if let Some(path) = &self.history_file
                && let Err(e) = append_history(path, text)
            {
                tracing::warn!("cannot save prompt history: {e}");
            }
        }
    }

    /// Completions for a partly typed slash command.
    pub fn suggestions(&self) -> Vec<(&'static str, &'static str)> {
        let text = self.text();
        if !text.starts_with('/') || text.contains(' ') || text.contains('\n') {
            return Vec::new();
        }
        COMMANDS.iter().copied().filter(|(c, _)| c.starts_with(text.as_str())).collect()
    }
}

/// One JSON string per line, so prompts with newlines survive.
fn load_history(path: &PathBuf) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let mut out: Vec<String> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let excess = out.len().saturating_sub(HISTORY_LIMIT);
    out.drain(..excess);
    out
}

fn append_history(path: &PathBuf, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(path)?;
    writeln!(file, "{}", serde_json::Value::String(text.to_owned()))
}
