//! A file change split into hunks, and the file as it would be with only
//! some of them applied. Pure text work, shared by the review panel (which
//! shows and selects hunks) and anything that needs to describe them.

use std::ops::Range;

use similar::{ChangeTag, DiffOp, TextDiff};

/// One hunk: the lines it replaces in the old text and what replaces them,
/// with up to three lines of context on each side.
#[derive(Debug, Clone, PartialEq)]
pub struct Hunk {
    /// Lines of the old text this hunk covers, context included (0-based).
    pub old: Range<usize>,
    /// The same for the new text.
    pub new: Range<usize>,
    pub lines: Vec<HunkLine>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HunkLine {
    pub tag: ChangeTag,
    /// 1-based line numbers on each side, where the line exists.
    pub old_no: Option<usize>,
    pub new_no: Option<usize>,
    /// The line's text without its line ending.
    pub text: String,
    /// Byte ranges of `text` that differ from the paired line (word level).
    pub emphasis: Vec<Range<usize>>,
}

impl Hunk {
    pub fn added(&self) -> usize {
        self.lines.iter().filter(|l| l.tag == ChangeTag::Insert).count()
    }

    pub fn removed(&self) -> usize {
        self.lines.iter().filter(|l| l.tag == ChangeTag::Delete).count()
    }

    /// `@@ -12,7 +12,9 @@` in unified-diff terms.
    pub fn header(&self) -> String {
        let side = |r: &Range<usize>| {
            let start = if r.is_empty() { r.start } else { r.start + 1 };
            format!("{},{}", start, r.len())
        };
        format!("@@ -{} +{} @@", side(&self.old), side(&self.new))
    }
}

const CONTEXT: usize = 3;

pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .deadline(std::time::Instant::now() + std::time::Duration::from_millis(50))
        .diff_lines(old, new);
    let mut out = Vec::new();
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_inline_changes(op) {
                let mut text = String::new();
                let mut emphasis = Vec::new();
                for (emphasized, part) in change.iter_strings_lossy() {
                    let start = text.len();
                    text.push_str(&part);
                    if emphasized {
                        emphasis.push(start..text.len());
                    }
                }
                let trimmed = text.trim_end_matches(['\n', '\r']).len();
                text.truncate(trimmed);
                let emphasis = emphasis
                    .into_iter()
                    .filter_map(|r| (r.start < trimmed).then(|| r.start..r.end.min(trimmed)))
                    .filter(|r| !r.is_empty())
                    .collect::<Vec<_>>();
                // Emphasis over the whole line says nothing: drop it.
                let whole = emphasis.iter().map(|r| r.len()).sum::<usize>() >= text.len();
                lines.push(HunkLine {
                    tag: change.tag(),
                    old_no: change.old_index().map(|i| i + 1),
                    new_no: change.new_index().map(|i| i + 1),
                    text,
                    emphasis: if whole || matches!(op, DiffOp::Equal { .. }) { Vec::new() } else { emphasis },
                });
            }
        }
        out.push(Hunk { old: old_range, new: new_range, lines });
    }
    out
}

/// The new file with only the `selected` hunks applied; the others keep
/// the old text.
pub fn apply_selected(old: &str, new: &str, hunks: &[Hunk], selected: &[bool]) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut out = String::with_capacity(old.len().max(new.len()));
    let mut at = 0;
    for (hunk, &take) in hunks.iter().zip(selected) {
        for line in &old_lines[at.min(old_lines.len())..hunk.old.start.min(old_lines.len())] {
            out.push_str(line);
        }
        let side = if take { &new_lines[hunk.new.clone()] } else { &old_lines[hunk.old.clone()] };
        for line in side {
            out.push_str(line);
        }
        at = hunk.old.end;
    }
    for line in old_lines.iter().skip(at) {
        out.push_str(line);
    }
    out
}

/// What to tell the model about a partial approval.
pub fn describe_selection(hunks: &[Hunk], selected: &[bool]) -> String {
    let describe = |want: bool| -> Vec<String> {
        hunks
            .iter()
            .zip(selected)
            .enumerate()
            .filter(|(_, (_, s))| **s == want)
            .map(|(i, (h, _))| format!("hunk {} ({})", i + 1, h.header()))
            .collect()
    };
    let (applied, refused) = (describe(true), describe(false));
    format!(
        "the user applied {} of {} hunks: applied {}; refused {}. The file on disk now has only the applied hunks; it counts as read",
        applied.len(),
        hunks.len(),
        if applied.is_empty() { "none".to_owned() } else { applied.join(", ") },
        if refused.is_empty() { "none".to_owned() } else { refused.join(", ") },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn numbered(range: std::ops::Range<usize>) -> String {
        range.map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn separate_changes_make_separate_hunks() {
        let old = numbered(0..30);
        let new = old.replace("line 2\n", "line two\n").replace("line 25\n", "line 25\nline 25b\n");
        let hunks = hunks(&old, &new);
        assert_eq!(hunks.len(), 2);
        assert_eq!(hunks[0].header(), "@@ -1,6 +1,6 @@");
        assert_eq!((hunks[0].added(), hunks[0].removed()), (1, 1));
        assert_eq!(hunks[1].header(), "@@ -24,6 +24,7 @@");
        let changed = hunks[0].lines.iter().find(|l| l.tag == ChangeTag::Insert).unwrap();
        assert_eq!(changed.text, "line two");
        assert_eq!(changed.new_no, Some(3));
        assert_eq!(changed.emphasis, vec![5..8]);
    }

    #[test]
    fn applying_some_hunks_keeps_the_rest_old() {
        let old = numbered(0..30);
        let new = old.replace("line 2\n", "line two\n").replace("line 25\n", "");
        let hunks = hunks(&old, &new);
        assert_eq!(apply_selected(&old, &new, &hunks, &[true, true]), new);
        assert_eq!(apply_selected(&old, &new, &hunks, &[false, false]), old);
        assert_eq!(apply_selected(&old, &new, &hunks, &[true, false]), old.replace("line 2\n", "line two\n"));
        assert_eq!(apply_selected(&old, &new, &hunks, &[false, true]), old.replace("line 25\n", ""));
        let note = describe_selection(&hunks, &[true, false]);
        assert!(
            note.starts_with("the user applied 1 of 2 hunks: applied hunk 1 (@@ -1,6 +1,6 @@); refused hunk 2"),
            "{note}"
        );
    }

    #[test]
    fn new_files_and_missing_final_newlines() {
        let hunks_new = hunks("", "a\nb\n");
        assert_eq!(hunks_new.len(), 1);
        assert_eq!(hunks_new[0].header(), "@@ -0,0 +1,2 @@");
        assert_eq!(apply_selected("", "a\nb\n", &hunks_new, &[true]), "a\nb\n");
        let old = "x\ny";
        let new = "x\nz";
        let h = hunks(old, new);
        assert_eq!(apply_selected(old, new, &h, &[true]), new);
        assert_eq!(apply_selected(old, new, &h, &[false]), old);
    }
}
