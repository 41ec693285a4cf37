//! The review panel: one approval request at a time, with the tool, its
//! arguments and, for file changes, the diff with per-hunk selection. It
//! turns keys into a [`Decision`] and hands it back through the request's
//! oneshot; the app records the decision and moves to the next request.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};

use super::{diff, theme, wrap::wrap};
use crate::agent::{ApprovalRequest, Decision};
use crate::hunks::{self, Hunk};
use crate::tools::Effect;

pub struct Review {
    pub request: ApprovalRequest,
    pub hunks: Vec<Hunk>,
    pub selected: Vec<bool>,
    pub focus: usize,
    pub scroll: usize,
    /// Typing a reason for a refusal (`r`).
    pub reason: Option<String>,
    /// The rendered panel for the last width, selection and focus: drawing
    /// happens every frame, highlighting a big diff should not.
    cache: std::cell::RefCell<Option<(RenderKey, Rendered)>>,
}

type RenderKey = (usize, usize, Vec<bool>, usize, u64);
type Rendered = (Vec<Line<'static>>, Option<usize>);

/// What a key did to the panel.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// The key was used; the panel stays.
    Consumed,
    /// A decision; the panel is done.
    Decided(Decision),
    /// `e`: the person wants to edit the proposed content in $EDITOR.
    Edit,
    Ignored,
}

impl Review {
    pub fn new(request: ApprovalRequest) -> Self {
        let hunks = match &request.plan.effect {
            Effect::Write { change } => hunks::hunks(change.old.as_deref().unwrap_or(""), &change.new),
            _ => Vec::new(),
        };
        let selected = vec![true; hunks.len()];
        Review { request, hunks, selected, focus: 0, scroll: 0, reason: None, cache: Default::default() }
    }

    pub fn is_edit(&self) -> bool {
        matches!(self.request.plan.effect, Effect::Write { .. })
    }

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        if let Some(reason) = &mut self.reason {
            match key.code {
                KeyCode::Enter => {
                    let reason = std::mem::take(reason);
                    self.reason = None;
                    return Outcome::Decided(Decision::Refuse { reason: Some(reason) });
                }
                KeyCode::Esc => self.reason = None,
                KeyCode::Backspace => {
                    reason.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => reason.push(c),
                _ => {}
            }
            return Outcome::Consumed;
        }
        match key.code {
            KeyCode::Char('y') => Outcome::Decided(self.approval()),
            KeyCode::Char('n') => Outcome::Decided(Decision::Refuse { reason: None }),
            KeyCode::Char('r') => {
                self.reason = Some(String::new());
                Outcome::Consumed
            }
            KeyCode::Char('a') => Outcome::Decided(Decision::AllowForSession),
            KeyCode::Char('e') if self.is_edit() => Outcome::Edit,
            KeyCode::Esc => Outcome::Decided(Decision::Stop),
            KeyCode::Char('j') | KeyCode::Down if !self.hunks.is_empty() => {
                self.focus = (self.focus + 1).min(self.hunks.len() - 1);
                Outcome::Consumed
            }
            KeyCode::Char('k') | KeyCode::Up => {
                self.focus = self.focus.saturating_sub(1);
                Outcome::Consumed
            }
            KeyCode::Char(' ') if !self.hunks.is_empty() => {
                self.selected[self.focus] = !self.selected[self.focus];
                Outcome::Consumed
            }
            KeyCode::PageDown => {
                self.scroll += 10;
                Outcome::Consumed
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(10);
                Outcome::Consumed
            }
            _ => Outcome::Ignored,
        }
    }

    /// `y`: everything, or only the selected hunks.
    fn approval(&self) -> Decision {
        let Effect::Write { change } = &self.request.plan.effect else { return Decision::Approve };
        if self.selected.iter().all(|s| *s) {
            return Decision::Approve;
        }
        if self.selected.iter().all(|s| !*s) {
            return Decision::Refuse { reason: Some("the user deselected every hunk of this change".into()) };
        }
        let old = change.old.as_deref().unwrap_or("");
        Decision::ApproveEdited {
            content: hunks::apply_selected(old, &change.new, &self.hunks, &self.selected),
            note: hunks::describe_selection(&self.hunks, &self.selected),
        }
    }

    /// The panel's lines for a width: title, arguments or diff, and hints.
    pub fn lines(&self, width: usize, queued: usize) -> Rendered {
        let key = (width, queued, self.selected.clone(), self.focus, super::highlight::generation());
        if let Some((cached, rendered)) = &*self.cache.borrow()
            && *cached == key
        {
            return rendered.clone();
        }
        let rendered = self.render(width, queued);
        self.cache.replace(Some((key, rendered.clone())));
        rendered
    }

    fn render(&self, width: usize, queued: usize) -> Rendered {
        let mut out = Vec::new();
        let call = &self.request.call;
        let more = if queued > 0 { format!("  (+{queued} more waiting)") } else { String::new() };
        out.push(Line::from(vec![
            Span::styled("Approve ", theme::warn().add_modifier(ratatui::style::Modifier::BOLD)),
            Span::styled(call.name.clone(), theme::bold()),
            Span::raw(format!(" {}", self.request.plan.target)),
            Span::styled(more, theme::dim()),
        ]));
        let mut focus_line = None;
        match &self.request.plan.effect {
            Effect::Write { change } => {
                let (lines, starts) = diff::render(
                    &change.path,
                    &self.hunks,
                    width,
                    Some(diff::Selection { selected: &self.selected, focus: self.focus }),
                );
                focus_line = starts.get(self.focus).map(|s| s + out.len());
                out.extend(lines);
            }
            Effect::Command { command } => {
                for line in command.lines() {
                    out.extend(wrap(Line::styled(format!("$ {line}"), theme::code()), width, &[Span::raw("  ")]));
                }
            }
            Effect::Read => out.push(Line::raw(call.arguments.clone())),
        }
        (out, focus_line)
    }

    /// The hint line at the bottom of the panel.
    pub fn hints(&self) -> Line<'static> {
        if let Some(reason) = &self.reason {
            return Line::from(vec![
                Span::styled("reason for the model: ", theme::hint()),
                Span::raw(reason.clone()),
                Span::styled("▍  Enter send · Esc back", theme::dim()),
            ]);
        }
        let mut keys = vec![("y", "approve"), ("n", "refuse"), ("r", "refuse with reason"), ("a", "always allow")];
        if self.is_edit() {
            keys.push(("e", "edit"));
            if self.hunks.len() > 1 {
                keys.push(("j/k", "hunk"));
                keys.push(("Space", "toggle hunk"));
            }
        }
        keys.push(("Esc", "stop turn"));
        super::keys::hint_line(&keys)
    }
}
