//! The terminal's whole lifecycle: checks for a tty, enters raw mode, the
//! alternate screen and bracketed paste, and undoes all of it on every way
//! out — normal exit, error, panic (a hook that restores, then chains to
//! the previous one) and a guard dropped on any return path.

use std::io::{IsTerminal, Stdout, Write, stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static MOUSE: AtomicBool = AtomicBool::new(false);
/// The terminal reports modified keys (Shift-Enter) since we asked it to.
static ENHANCED: AtomicBool = AtomicBool::new(false);

/// Restores the terminal when dropped.
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

pub fn init() -> Result<(Tui, Guard), String> {
    if !stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err("the full-screen interface needs a terminal; use `hew exec` in scripts and pipes".into());
    }
    install_panic_hook();
    enable_raw_mode().map_err(|e| format!("cannot set up the terminal: {e}"))?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = Guard;
    execute!(stdout(), EnterAlternateScreen, EnableBracketedPaste, cursor::Hide)
        .map_err(|e| format!("cannot set up the terminal: {e}"))?;
    let terminal =
        Terminal::new(CrosstermBackend::new(stdout())).map_err(|e| format!("cannot set up the terminal: {e}"))?;
    Ok((terminal, guard))
}

pub fn set_mouse(on: bool) {
    let result = if on { execute!(stdout(), EnableMouseCapture) } else { execute!(stdout(), DisableMouseCapture) };
    if result.is_ok() {
        MOUSE.store(on, Ordering::SeqCst);
    }
}

/// Undoes everything `init` did; keeps going past any step that fails, and
/// does nothing when the terminal was not set up (or was restored already).
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    if MOUSE.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(out, DisableBracketedPaste);
    let _ = execute!(out, LeaveAlternateScreen);
    let _ = execute!(out, cursor::Show);
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Leaves the screen to another program (an editor) and comes back.
pub fn suspend() {
    let mouse = MOUSE.load(Ordering::SeqCst);
    restore();
    MOUSE.store(mouse, Ordering::SeqCst);
}

pub fn resume(terminal: &mut Tui) {
    if enable_raw_mode().is_ok() {
        ACTIVE.store(true, Ordering::SeqCst);
    }
    let _ = execute!(stdout(), EnterAlternateScreen, EnableBracketedPaste, cursor::Hide);
    enhance_keys();
    if MOUSE.load(Ordering::SeqCst) {
        let _ = execute!(stdout(), EnableMouseCapture);
    }
    let _ = terminal.clear();
}

/// Asks terminals that can (kitty's protocol) to tell Shift-Enter from Enter.
fn enhance_keys() {
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false)
        && execute!(stdout(), PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)).is_ok()
    {
        ENHANCED.store(true, Ordering::SeqCst);
    }
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
