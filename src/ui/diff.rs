//! Diff rendering: one pure function from hunks and a width to lines, used
//! by the review panel, the chat's edit cells and the transcript browser.
//! Line numbers on both sides, red/green tints, syntax colors of the
//! file's language, and emphasis on the words that changed.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use similar::ChangeTag;

use super::{highlight, theme, wrap::wrap};
use crate::hunks::Hunk;

/// How hunks are being selected in the review panel, if they are.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    pub selected: &'a [bool],
    pub focus: usize,
}

/// The lines, and the index of each hunk's first line among them.
pub fn render(
    path: &str,
    hunks: &[Hunk],
    width: usize,
    selection: Option<Selection>,
) -> (Vec<Line<'static>>, Vec<usize>) {
    let mut out = Vec::new();
    let mut starts = Vec::new();
    let digits = hunks
        .iter()
        .flat_map(|h| h.lines.iter())
        .flat_map(|l| [l.old_no, l.new_no])
        .flatten()
        .max()
        .unwrap_or(1)
        .to_string()
        .len();
    for (i, hunk) in hunks.iter().enumerate() {
        let mut header = Vec::new();
        if let Some(sel) = selection {
            let mark = if sel.selected.get(i).copied().unwrap_or(false) { "[x] " } else { "[ ] " };
            let style = if sel.focus == i { theme::selected() } else { theme::hint() };
            header.push(Span::styled(format!("{mark}hunk {} of {} ", i + 1, hunks.len()), style));
        }
        starts.push(out.len());
        header.push(Span::styled(hunk.header(), theme::hint()));
        header.push(Span::styled(format!("  +{} −{}", hunk.added(), hunk.removed()), theme::dim()));
        out.push(Line::from(header));
        let code: String = hunk.lines.iter().map(|l| format!("{}\n", l.text)).collect();
        let colored = highlight::highlight(&code, path);
        for (n, line) in hunk.lines.iter().enumerate() {
            let (sign, base, emph, sign_style) = match line.tag {
                ChangeTag::Insert => ("+", theme::added(), theme::added_emphasis(), theme::added_sign()),
                ChangeTag::Delete => ("-", theme::removed(), theme::removed_emphasis(), theme::removed_sign()),
                ChangeTag::Equal => (" ", Style::new(), Style::new(), theme::dim()),
            };
            let number = |n: Option<usize>| n.map(|n| format!("{n:>digits$}")).unwrap_or_else(|| " ".repeat(digits));
            let gutter = format!("{} {} ", number(line.old_no), number(line.new_no));
            let mut spans =
                vec![Span::styled(gutter.clone(), theme::dim()), Span::styled(format!("{sign} "), sign_style)];
            let parts = colored.as_ref().and_then(|c| c.get(n)).cloned();
            spans.extend(styled_text(&line.text, parts, base, &line.emphasis, emph));
            let indent = vec![Span::styled(" ".repeat(gutter.len() + 2), theme::dim())];
            out.extend(wrap(Line::from(spans), width, &indent));
        }
    }
    if hunks.is_empty() {
        out.push(Line::styled("(no changes)", theme::dim()));
    }
    (out, starts)
}

/// Merges syntax colors (foreground), the line's tint (background) and the
/// changed-word emphasis into spans.
fn styled_text(
    text: &str,
    parts: Option<Vec<(Style, String)>>,
    base: Style,
    emphasis: &[Range<usize>],
    emph: Style,
) -> Vec<Span<'static>> {
    let text = text.replace('\t', "    ");
    let parts = match parts {
        Some(parts) if parts.iter().map(|(_, t)| t.len()).sum::<usize>() == text.len() => parts,
        _ => vec![(Style::new(), text.clone())],
    };
    let mut spans = Vec::new();
    let mut at = 0;
    for (style, piece) in parts {
        let mut start = 0;
        // Split the piece where emphasis starts or ends.
        let mut cuts: Vec<usize> = emphasis
            .iter()
            .flat_map(|r| [r.start, r.end])
            .filter(|&c| c > at && c < at + piece.len())
            .map(|c| c - at)
            .filter(|&c| piece.is_char_boundary(c))
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        cuts.push(piece.len());
        for cut in cuts {
            let segment = &piece[start..cut];
            if !segment.is_empty() {
                let absolute = at + start;
                let emphasized = emphasis.iter().any(|r| r.start <= absolute && absolute < r.end);
                let look = if emphasized { base.patch(style).patch(emph) } else { base.patch(style) };
                spans.push(Span::styled(segment.to_owned(), look));
            }
            start = cut;
        }
        at += piece.len();
    }
    if spans.is_empty() {
        spans.push(Span::styled(String::new(), base));
    }
    spans
}
