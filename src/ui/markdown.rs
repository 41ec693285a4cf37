//! Assistant text as terminal lines: headings, lists, emphasis, inline
//! code, links, quotes, tables and highlighted code blocks, wrapped to the
//! width. A pure function of the text and width; cells cache its output.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::{highlight, theme, wrap::wrap};

pub fn render(text: &str, width: usize) -> Vec<Line<'static>> {
    // The terminal drops tabs (ratatui skips control characters); spaces keep words apart.
    let text = &text.replace('\t', "    ");
    let mut r = Renderer { width: width.max(8), ..Renderer::default() };
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    r.flush();
    while r.out.last().is_some_and(|l| l.width() == 0) {
        r.out.pop();
    }
    r.out
}

#[derive(Default)]
struct Renderer {
    width: usize,
    out: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Open lists: the next number, or `None` for bullets.
    lists: Vec<Option<u64>>,
    quote: usize,
    code: Option<(String, String)>,
    links: Vec<String>,
    table: Option<Table>,
    /// The prefix the first line of the current list item gets.
    item_marker: Option<String>,
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    cell: String,
    head_rows: usize,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles.iter().fold(Style::new(), |acc, s| acc.patch(*s))
    }

    fn push_text(&mut self, text: &str) {
        if let Some(table) = &mut self.table {
            table.cell.push_str(text);
            return;
        }
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        self.spans.push(Span::styled(text.to_owned(), self.style()));
    }

    /// The indent for lines inside the current quote and list nesting.
    fn indent(&self) -> Vec<Span<'static>> {
        let mut indent = Vec::new();
        for _ in 0..self.quote {
            indent.push(Span::styled("│ ", theme::dim()));
        }
        if !self.lists.is_empty() {
            indent.push(Span::raw("  ".repeat(self.lists.len())));
        }
        indent
    }

    fn flush(&mut self) {
        if self.spans.is_empty() && self.item_marker.is_none() {
            return;
        }
        let indent = self.indent();
        let mut first: Vec<Span<'static>> = indent.clone();
        if let Some(marker) = self.item_marker.take() {
            // The marker takes the place of the innermost level's indent.
            if let Some(last) = first.last_mut()
                && !self.lists.is_empty()
            {
                let base = "  ".repeat(self.lists.len() - 1);
                *last = Span::raw(base);
            }
            first.push(Span::styled(marker, theme::accent()));
        }
        first.extend(std::mem::take(&mut self.spans));
        self.out.extend(wrap(Line::from(first), self.width, &indent));
    }

    fn blank(&mut self) {
        if self.out.last().is_some_and(|l| l.width() > 0) {
            self.out.push(Line::default());
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.push_text(&text),
            Event::Code(code) => {
                if let Some(table) = &mut self.table {
                    table.cell.push_str(&code);
                } else {
                    self.spans.push(Span::styled(code.into_string(), self.style().patch(theme::code())));
                }
            }
            Event::SoftBreak => self.push_text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.out.push(Line::styled("─".repeat(self.width.min(40)), theme::dim()));
            }
            Event::TaskListMarker(done) => self.push_text(if done { "[x] " } else { "[ ] " }),
            Event::Html(html) | Event::InlineHtml(html) => self.push_text(&html),
            Event::InlineMath(m) | Event::DisplayMath(m) => self.push_text(&m),
            Event::FootnoteReference(f) => self.push_text(&format!("[{f}]")),
        }
    }

    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush();
                self.blank();
                let prefix = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                self.styles.push(theme::accent().add_modifier(Modifier::BOLD));
                self.spans.push(Span::styled(prefix, theme::dim()));
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote += 1;
                self.styles.push(Style::new().add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let language = match kind {
                    CodeBlockKind::Fenced(lang) => lang.split([' ', ',']).next().unwrap_or("").to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((language, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    _ => "• ".to_owned(),
                };
                self.item_marker = Some(marker);
            }
            Tag::Emphasis => self.styles.push(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.styles.push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.links.push(dest_url.into_string());
                self.styles.push(theme::hint().add_modifier(Modifier::UNDERLINED));
            }
            Tag::Image { dest_url, .. } => {
                self.links.push(dest_url.into_string());
                self.styles.push(theme::hint());
                self.push_text("[image: ");
            }
            Tag::Table(_) => {
                self.flush();
                self.table = Some(Table::default());
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(table) = &mut self.table {
                    table.cell.clear();
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.styles.pop();
                self.quote = self.quote.saturating_sub(1);
                self.blank();
            }
            TagEnd::CodeBlock => {
                if let Some((language, code)) = self.code.take() {
                    self.code_block(&language, &code);
                }
                self.blank();
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.links.pop() {
                    let shown: String = self.spans.iter().map(|s| s.content.as_ref()).collect();
                    if !shown.ends_with(&url) {
                        self.spans.push(Span::styled(format!(" ({url})"), theme::dim()));
                    }
                }
            }
            TagEnd::Image => {
                self.push_text("]");
                self.styles.pop();
                self.links.pop();
            }
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    let cell = std::mem::take(&mut table.cell);
                    if let Some(row) = table.rows.last_mut() {
                        row.push(cell.trim().to_owned());
                    }
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.head_rows = table.rows.len();
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_lines(table);
                }
                self.blank();
            }
            _ => {}
        }
    }

    fn code_block(&mut self, language: &str, code: &str) {
        let indent = self.indent();
        let gutter = Span::styled("▏ ", theme::dim());
        let highlighted = if language.is_empty() { None } else { highlight::highlight(code, language) };
        let lines: Vec<Vec<Span<'static>>> = match highlighted {
            Some(lines) => {
                lines.into_iter().map(|parts| parts.into_iter().map(|(s, t)| Span::styled(t, s)).collect()).collect()
            }
            None => code.lines().map(|l| vec![Span::styled(l.to_owned(), theme::code())]).collect(),
        };
        let mut cont = indent.clone();
        cont.push(gutter.clone());
        for parts in lines {
            let mut spans = indent.clone();
            spans.push(gutter.clone());
            spans.extend(parts.into_iter().map(|s| Span::styled(s.content.replace('\t', "    "), s.style)));
            self.out.extend(wrap(Line::from(spans), self.width, &cont));
        }
    }

    fn table_lines(&mut self, table: Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0; columns];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.width());
            }
        }
        // Shrink the widest columns until the table fits.
        let budget = self.width.saturating_sub(3 * columns.saturating_sub(1));
        while widths.iter().sum::<usize>() > budget && widths.iter().any(|w| *w > 4) {
            if let Some(w) = widths.iter_mut().max() {
                *w -= 1;
            }
        }
        for (r, row) in table.rows.iter().enumerate() {
            let mut spans = Vec::new();
            for (i, width) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", theme::dim()));
                }
                let cell = super::wrap::truncate(row.get(i).map(String::as_str).unwrap_or(""), *width);
                let pad = width.saturating_sub(cell.width());
                let style = if r < table.head_rows { theme::bold() } else { Style::new() };
                spans.push(Span::styled(format!("{cell}{}", " ".repeat(pad)), style));
            }
            self.out.push(Line::from(spans));
            if r + 1 == table.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.out.push(Line::styled(rule.join("─┼─"), theme::dim()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str, width: usize) -> Vec<String> {
        render(text, width).iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn headings_lists_quotes_and_rules() {
        let out =
            plain("# Title\n\nSome *text* and `code`.\n\n- one\n- two\n  1. nested\n\n> quoted words\n\n---\n", 40);
        assert_eq!(
            out,
            vec![
                "# Title",
                "Some text and code.",
                "",
                "• one",
                "• two",
                "  1. nested",
                "",
                "│ quoted words",
                "",
                "────────────────────────────────────────",
            ]
        );
    }

    #[test]
    fn links_show_their_address_and_code_blocks_keep_lines() {
        let out = plain("See [docs](https://x.example).\n\n```\nfn a() {}\n    b\n```\n", 40);
        assert_eq!(out, vec!["See docs (https://x.example).", "", "▏ fn a() {}", "▏     b"]);
    }

    #[test]
    fn tables_line_up() {
        let out = plain("| a | long header |\n|---|---|\n| 1 | x |\n", 40);
        assert_eq!(out, vec!["a │ long header", "──┼────────────", "1 │ x          "]);
    }

    #[test]
    fn long_paragraphs_wrap_with_list_indent() {
        let out = plain("- a list item that is long enough to wrap around", 20);
        assert_eq!(out, vec!["• a list item that ", "  is long enough to ", "  wrap around"]);
    }
}

#[cfg(test)]
mod fuzz {
    use proptest::prelude::*;
    use unicode_width::UnicodeWidthStr;

    proptest! {
        /// Whatever the model writes renders, at any width, within the width
        /// (a lone wide character may stand alone on a narrower line).
        #[test]
        fn any_text_renders_within_the_width(text in "[ -~\n\té你🎉|*`#>\\-]{0,300}", width in 1usize..60) {
            for line in super::render(&text, width) {
                let shown: String = line.spans.iter().flat_map(|s| s.content.chars()).filter(|c| !c.is_control()).collect();
                prop_assert!(shown.width() <= width.max(8) + 2, "{:?} at {}", shown, width);
            }
        }
    }
}
