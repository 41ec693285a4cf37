//! edit_file: exact, unique search and replace. The model quotes the text it
//! wants changed; the tool refuses to guess when the quote is missing or
//! ambiguous, and says how to fix the call.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::files::FileChange;
use super::write_file::{existing_text, write};
use super::{Effect, Plan, Tool, ToolContext, ToolOutput, arg_bool, arg_str};
use crate::provider::BoxFuture;

pub struct EditFile;

impl Tool for EditFile {
    fn name(&self) -> &'static str {
        "edit_file"
    }

    fn description(&self) -> &'static str {
        "Replace `old_text` with `new_text` in a file you have read. `old_text` must match the \
         file exactly (whitespace and indentation included) and occur exactly once; include a \
         few surrounding lines to make it unique, or set `replace_all` to change every \
         occurrence. Line endings are kept as the file has them. Use this for most changes to \
         existing files; use write_file for new files. Returns the unified diff of the change. \
         The person may review and refuse it."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root or absolute inside it"},
                "old_text": {"type": "string", "description": "The exact text to replace"},
                "new_text": {"type": "string", "description": "The text to put in its place"},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one (default false)"}
            },
            "required": ["path", "old_text", "new_text"],
            "additionalProperties": false
        })
    }

    fn plan(&self, args: &Value, ctx: &ToolContext) -> Result<Plan, String> {
        let path = ctx.path(arg_str(args, "path").unwrap_or_default())?;
        let old_text = arg_str(args, "old_text").unwrap_or_default();
        let new_text = arg_str(args, "new_text").unwrap_or_default();
        if old_text.is_empty() {
            return Err("old_text is empty; quote the text to replace (to create a file, use write_file)".into());
        }
        if old_text == new_text {
            return Err("old_text and new_text are the same; there is nothing to change".into());
        }
        let content = existing_text(&path, ctx)?
            .ok_or_else(|| format!("{} does not exist; create it with write_file", path.shown))?;
        let new = replace(&content, old_text, new_text, arg_bool(args, "replace_all"))
            .map_err(|e| format!("{}: {e}", path.shown))?;
        let change = FileChange::new(&path, Some(content), new);
        Ok(Plan { effect: Effect::Write { change }, target: path.shown })
    }

    fn execute<'a>(
        &'a self,
        _args: &'a Value,
        plan: Plan,
        ctx: &'a ToolContext,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { write(plan, ctx) })
    }
}

/// The replacement itself, in the file's own line endings.
pub fn replace(content: &str, old_text: &str, new_text: &str, replace_all: bool) -> Result<String, String> {
    let crlf = uses_crlf(content);
    let (old_text, new_text) = if crlf {
        (to_crlf(old_text), to_crlf(new_text))
    } else {
        (old_text.replace("\r\n", "\n"), new_text.replace("\r\n", "\n"))
    };
    let count = content.matches(old_text.as_str()).count();
    match count {
        0 => Err(not_found(content, &old_text)),
        1 => Ok(content.replacen(old_text.as_str(), &new_text, 1)),
        _ if replace_all => Ok(content.replace(old_text.as_str(), &new_text)),
        n => {
            let lines: Vec<String> = content
                .match_indices(old_text.as_str())
                .take(10)
                .map(|(at, _)| (content[..at].matches('\n').count() + 1).to_string())
                .collect();
            Err(format!(
                "old_text occurs {n} times (at lines {}); include more surrounding lines so it matches exactly once, or set replace_all to change all {n}",
                lines.join(", ")
            ))
        }
    }
}

fn uses_crlf(content: &str) -> bool {
    let crlf = content.matches("\r\n").count();
    crlf > 0 && crlf >= content.matches('\n').count() - crlf
}

fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Explains a miss so the next try can succeed: a whitespace-only
/// difference, the closest lines, or the start of the file.
fn not_found(content: &str, old_text: &str) -> String {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let wanted = squash(old_text);
    let lines: Vec<&str> = content.lines().collect();
    let first = old_text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let first_len = old_text.lines().count().max(1);
    // Candidate windows start at lines resembling the quote's first line.
    let mut best: Option<(f32, usize)> = None;
    for (i, line) in lines.iter().enumerate().take(20_000) {
        let line = line.trim();
        if line.is_empty() || first.is_empty() {
            continue;
        }
        let window = lines[i..(i + first_len).min(lines.len())].join("\n");
        if squash(&window) == wanted {
            return format!(
                "old_text was not found exactly; it matches lines {}-{} only if whitespace is ignored. The exact text there is:\n{}",
                i + 1,
                i + first_len,
                numbered(&lines, i, first_len)
            );
        }
        let score = similarity(first, line);
        if score > best.map_or(0.5, |(s, _)| s) {
            best = Some((score, i));
        }
    }
    match best {
        Some((_, i)) => {
            let start = i.saturating_sub(2);
            format!(
                "old_text was not found. The closest match is near line {}:\n{}\nCopy the text exactly as the file has it (read_file shows it), then try again",
                i + 1,
                numbered(&lines, start, first_len + 4)
            )
        }
        None => format!(
            "old_text was not found, nor anything like it. The file starts with:\n{}\nRead the file and quote the text exactly",
            numbered(&lines, 0, 20)
        ),
    }
}

fn numbered(lines: &[&str], start: usize, count: usize) -> String {
    lines.iter().enumerate().skip(start).take(count).map(|(i, l)| format!("{}\t{l}\n", i + 1)).collect()
}

/// Shared-character ratio of two short strings, cheap enough to run on
/// every line of a big file: compares character bigram sets.
fn similarity(a: &str, b: &str) -> f32 {
    if a == b {
        return 1.0;
    }
    let grams = |s: &str| {
        let chars: Vec<char> = s.chars().take(200).collect();
        let mut set: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
        set.sort_unstable();
        set.dedup();
        set
    };
    let (x, y) = (grams(a), grams(b));
    if x.is_empty() || y.is_empty() {
        return 0.0;
    }
    let common = x.iter().filter(|g| y.binary_search(g).is_ok()).count();
    2.0 * common as f32 / (x.len() + y.len()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_a_unique_match_keeping_the_rest() {
        assert_eq!(replace("a\nb\nc\n", "b\n", "B\nB2\n", false).unwrap(), "a\nB\nB2\nc\n");
        assert_eq!(replace("no newline at end", "end", "END", false).unwrap(), "no newline at END");
    }

    #[test]
    fn duplicates_need_context_or_replace_all() {
        let err = replace("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 3", false).unwrap_err();
        assert!(err.contains("occurs 2 times (at lines 1, 3)"), "{err}");
        assert_eq!(replace("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 3", true).unwrap(), "x = 3\ny = 2\nx = 3\n");
    }

    #[test]
    fn crlf_files_stay_crlf() {
        let out = replace("one\r\ntwo\r\nthree\r\n", "two\nthree", "2\n3\n4", false).unwrap();
        assert_eq!(out, "one\r\n2\r\n3\r\n4\r\n");
    }

    #[test]
    fn misses_explain_themselves() {
        let content = "fn main() {\n    let total = 1;\n    println!(\"{total}\");\n}\n";
        let err = replace(content, "let  total = 1;\nprintln!(\"{total}\");", "x", false).unwrap_err();
        assert!(err.contains("only if whitespace is ignored") && err.contains("2\t    let total = 1;"), "{err}");
        let err = replace(content, "let totl = 2;", "x", false).unwrap_err();
        assert!(err.contains("closest match is near line 2"), "{err}");
        let err = replace(content, "zzzzqqq", "x", false).unwrap_err();
        assert!(err.contains("The file starts with:\n1\tfn main() {"), "{err}");
    }
}
