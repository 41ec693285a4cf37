//! Key hints come from one place, so the footer says what the keys do.

use ratatui::text::{Line, Span};

use super::theme;

/// `key action · key action` in the hint colors.
pub fn hint_line(keys: &[(&str, &str)]) -> Line<'static> {
    let mut spans = Vec::new();
    for (i, (key, action)) in keys.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme::dim()));
        }
        spans.push(Span::styled((*key).to_owned(), theme::hint()));
        spans.push(Span::styled(format!(" {action}"), theme::dim()));
    }
    Line::from(spans)
}

/// The hints while the composer has the keyboard.
pub const IDLE: &[(&str, &str)] = &[
    ("Enter", "send"),
    ("Alt-Enter", "newline"),
    ("Ctrl-T", "transcript"),
    ("Ctrl-L", "tool log"),
    ("Ctrl-O", "expand"),
    ("/help", "commands"),
];

/// The hints while the agent works.
pub const BUSY: &[(&str, &str)] =
    &[("Esc", "interrupt"), ("PgUp/PgDn", "scroll"), ("Ctrl-T", "transcript"), ("Ctrl-L", "tool log")];
