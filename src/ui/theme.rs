//! The palette: dim for secondary text, cyan for hints, green/red for
//! additions/deletions, one accent for the assistant. Colors are named
//! terminal colors (never hard-coded white or black), and `NO_COLOR`
//! turns them all off, leaving bold/italic/reverse to carry meaning.

use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::style::{Color, Modifier, Style};

static NO_COLOR: AtomicBool = AtomicBool::new(false);

/// Reads `NO_COLOR` once at startup.
pub fn init_from_env() {
    let off = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    NO_COLOR.store(off, Ordering::Relaxed);
}

pub fn set_no_color(off: bool) {
    NO_COLOR.store(off, Ordering::Relaxed);
}

pub fn colors() -> bool {
    !NO_COLOR.load(Ordering::Relaxed)
}

fn fg(color: Color) -> Style {
    if colors() { Style::new().fg(color) } else { Style::new() }
}

fn bg(color: Color) -> Style {
    if colors() { Style::new().bg(color) } else { Style::new() }
}

pub fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

pub fn hint() -> Style {
    fg(Color::Cyan)
}

pub fn accent() -> Style {
    fg(Color::Magenta)
}

pub fn user() -> Style {
    fg(Color::Blue).add_modifier(Modifier::BOLD)
}

pub fn ok() -> Style {
    fg(Color::Green)
}

pub fn error() -> Style {
    fg(Color::Red)
}

pub fn warn() -> Style {
    fg(Color::Yellow)
}

pub fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn code() -> Style {
    fg(Color::Yellow)
}

pub fn selected() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

/// Diff lines: a background tint, so syntax colors stay readable on top.
pub fn added() -> Style {
    if colors() { bg(Color::Rgb(0x1f, 0x3d, 0x2a)) } else { Style::new() }
}

pub fn removed() -> Style {
    if colors() { bg(Color::Rgb(0x4a, 0x22, 0x26)) } else { Style::new() }
}

/// The changed words within a changed line.
pub fn added_emphasis() -> Style {
    if colors() {
        bg(Color::Rgb(0x2e, 0x6b, 0x3f)).add_modifier(Modifier::BOLD)
    } else {
        Style::new().add_modifier(Modifier::UNDERLINED)
    }
}

pub fn removed_emphasis() -> Style {
    if colors() {
        bg(Color::Rgb(0x8a, 0x2e, 0x36)).add_modifier(Modifier::BOLD)
    } else {
        Style::new().add_modifier(Modifier::UNDERLINED)
    }
}

pub fn added_sign() -> Style {
    fg(Color::Green).add_modifier(Modifier::BOLD)
}

pub fn removed_sign() -> Style {
    fg(Color::Red).add_modifier(Modifier::BOLD)
}
