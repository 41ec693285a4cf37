//! Syntax highlighting with syntect, loaded lazily on a background thread
//! so the first frame never waits for it. Until it is ready, code renders
//! plain; [`generation`] changes when it becomes ready, and cells whose
//! cached lines were made without it render again.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use ratatui::style::{Color, Style};
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

use super::theme;

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

static ASSETS: OnceLock<Assets> = OnceLock::new();
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Starts loading in the background; `on_ready` runs once it is done.
pub fn preload(on_ready: impl FnOnce() + Send + 'static) {
    std::thread::spawn(move || {
        load();
        on_ready();
    });
}

/// Loads now (tests and benches want determinism).
pub fn load() {
    ASSETS.get_or_init(|| {
        let syntaxes = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults();
        let theme = themes.themes.remove("base16-ocean.dark").unwrap_or_default();
        GENERATION.fetch_add(1, Ordering::Relaxed);
        Assets { syntaxes, theme }
    });
}

/// Changes when highlighting becomes available.
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// Styled pieces of each line of `code` in `language` (a fence tag such as
/// `rust`, or a file name such as `src/main.rs`). `None` when highlighting
/// is not ready, colors are off, or the language is unknown.
pub fn highlight(code: &str, language: &str) -> Option<Vec<Vec<(Style, String)>>> {
    if !theme::colors() {
        return None;
    }
    let assets = ASSETS.get()?;
    let token = language.rsplit('.').next().unwrap_or(language);
    let syntax = assets
        .syntaxes
        .find_syntax_by_token(language)
        .or_else(|| assets.syntaxes.find_syntax_by_extension(token))
        .or_else(|| assets.syntaxes.find_syntax_by_token(token))?;
    let mut lines = HighlightLines::new(syntax, &assets.theme);
    let mut out = Vec::new();
    for line in syntect::util::LinesWithEndings::from(code) {
        let ranges = lines.highlight_line(line, &assets.syntaxes).ok()?;
        out.push(
            ranges
                .into_iter()
                .map(|(style, text)| {
                    let c = style.foreground;
                    (Style::new().fg(Color::Rgb(c.r, c.g, c.b)), text.trim_end_matches(['\n', '\r']).to_owned())
                })
                .filter(|(_, t)| !t.is_empty())
                .collect(),
        );
    }
    Some(out)
}
