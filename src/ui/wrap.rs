//! Wrapping styled lines to a width, by words where possible, so that every
//! cell knows its height before anything is drawn.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Wraps `line` to `width` columns. `indent` is repeated at the start of
/// continuation lines (for list items and quotes).
pub fn wrap(line: Line<'static>, width: usize, indent: &[Span<'static>]) -> Vec<Line<'static>> {
    let width = width.max(1);
    let indent_width: usize = indent.iter().map(|s| s.width()).sum();
    // Characters with their styles; splitting happens between them.
    let chars: Vec<(char, Style)> =
        line.spans.iter().flat_map(|s| s.content.chars().map(move |c| (c, s.style))).collect();
    let total: usize = chars.iter().map(|(c, _)| c.width().unwrap_or(0)).sum();
    if total <= width {
        return vec![line];
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut first = true;
    while start < chars.len() {
        let room = if first { width } else { width.saturating_sub(indent_width).max(1) };
        let mut used = 0;
        let mut end = start;
        let mut last_space = None;
        while end < chars.len() {
            let w = chars[end].0.width().unwrap_or(0);
            if used + w > room {
                break;
            }
            if chars[end].0 == ' ' {
                last_space = Some(end);
            }
            used += w;
            end += 1;
        }
        let mut next = end;
        if end == start {
            end = start + 1; // a character wider than the room: put it alone
            next = end;
        } else if end < chars.len() && chars[end].0 == ' ' {
            next = end + 1; // the space that did not fit becomes the break
        } else if end < chars.len()
            && let Some(space) = last_space.filter(|&s| s > start)
        {
            end = space + 1; // break after the last space that fits
            next = end;
        }
        let mut spans: Vec<Span<'static>> = if first { Vec::new() } else { indent.to_vec() };
        spans.extend(to_spans(&chars[start..end]));
        out.push(Line::from(spans).style(line.style));
        start = next;
        first = false;
    }
    out
}

fn to_spans(chars: &[(char, Style)]) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style = None;
    for &(c, s) in chars {
        if style.is_some_and(|st| st != s) {
            spans.push(Span::styled(std::mem::take(&mut text), style.unwrap_or_default()));
        }
        style = Some(s);
        text.push(c);
    }
    if !text.is_empty() {
        spans.push(Span::styled(text, style.unwrap_or_default()));
    }
    spans
}

/// Cuts a plain string to at most `width` columns, adding `…` when cut.
pub fn truncate(text: &str, width: usize) -> String {
    let total: usize = text.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= width {
        return text.to_owned();
    }
    let mut used = 0;
    let mut out = String::new();
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width.saturating_sub(1) {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn wraps_at_spaces_and_keeps_styles() {
        let line =
            Line::from(vec![Span::raw("hello "), Span::styled("brave new", Style::new().bold()), Span::raw(" world")]);
        let wrapped = wrap(line, 11, &[Span::raw("  ")]);
        assert_eq!(texts(&wrapped), vec!["hello brave", "  new world"]);
        assert_eq!(wrapped[1].spans[1].style, Style::new().bold());
    }

    #[test]
    fn long_words_and_wide_characters_break_anywhere() {
        assert_eq!(texts(&wrap(Line::raw("abcdefghij"), 4, &[])), vec!["abcd", "efgh", "ij"]);
        assert_eq!(texts(&wrap(Line::raw("你好世界"), 5, &[])), vec!["你好", "世界"]);
        assert_eq!(texts(&wrap(Line::raw("x"), 0, &[])), vec!["x"]);
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("hello world", 8), "hello w…");
        assert_eq!(truncate("short", 8), "short");
        assert_eq!(truncate("exactly8", 8), "exactly8");
    }
}
