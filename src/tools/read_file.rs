//! read_file: numbered lines, a window into big files, never raw bytes.

use std::io::{BufRead, BufReader, Read};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::files::Stamp;
use super::{Effect, Plan, Tool, ToolContext, ToolOutput, arg_str, arg_u64};
use crate::provider::BoxFuture;

pub struct ReadFile;

pub const DEFAULT_LIMIT: u64 = 2000;
pub const MAX_LINE_CHARS: usize = 2000;
/// The most text one read returns; the rest is a later read with `offset`.
pub const MAX_OUTPUT_BYTES: usize = 100_000;
/// Files up to this size are read whole (and hashed for stale-file checks);
/// bigger ones are streamed and judged by size and modification time.
const WHOLE_FILE_LIMIT: u64 = 16 * 1024 * 1024;

impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }

    fn description(&self) -> &'static str {
        "Read a text file in the workspace. Returns numbered lines as `N<TAB>text`, 1-based. \
         Reads up to 2000 lines from `offset` (default 1); pass `offset` and `limit` to page \
         through longer files; the result says which lines were left out. Lines longer than \
         2000 characters are cut. Read a file before editing it: edit_file and write_file \
         refuse to change a file you have not read, or one that changed since you read it. \
         Binary files and folders are refused (use glob to list a folder)."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root or absolute inside it"},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to show, 1-based (default 1)"},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show (default 2000)"}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn plan(&self, args: &Value, ctx: &ToolContext) -> Result<Plan, String> {
        let path = ctx.path(arg_str(args, "path").unwrap_or_default())?;
        Ok(Plan { effect: Effect::Read, target: path.shown })
    }

    fn execute<'a>(
        &'a self,
        args: &'a Value,
        plan: Plan,
        ctx: &'a ToolContext,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let offset = arg_u64(args, "offset").unwrap_or(1).max(1);
            let limit = arg_u64(args, "limit").unwrap_or(DEFAULT_LIMIT).max(1);
            match ctx.path(arg_str(args, "path").unwrap_or_default()).and_then(|path| read(ctx, &path, offset, limit)) {
                Ok(out) => out,
                Err(message) => ToolOutput::error(format!("{}: {message}", plan.target)),
            }
        })
    }
}

fn read(ctx: &ToolContext, path: &super::WorkPath, offset: u64, limit: u64) -> Result<ToolOutput, String> {
    let meta = std::fs::metadata(&path.abs).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no such file; use glob to find the right path".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    })?;
    if meta.is_dir() {
        return Err("this is a folder, not a file; use glob to list what is in it".into());
    }
    if !meta.is_file() {
        return Err("not a regular file (a device, FIFO or socket); read_file reads only files".into());
    }
    let file = std::fs::File::open(&path.abs).map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    })?;
    let whole = meta.len() <= WHOLE_FILE_LIMIT;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|e| e.to_string())?;
    if head[..head.len().min(8192)].contains(&0) {
        return Err(format!("binary file ({} bytes); read_file shows text only", meta.len()));
    }
    let mut bytes = Vec::new();
    if whole {
        reader.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        if bytes.contains(&0) {
            return Err(format!("binary file ({} bytes); read_file shows text only", meta.len()));
        }
        ctx.reads.record(&path.abs, Stamp::of(&bytes, &meta));
    } else {
        // Too big to hash cheaply: size and time stand in for content.
        ctx.reads.record(&path.abs, Stamp { len: meta.len(), mtime: meta.modified().ok(), hash: None });
    }
    if meta.len() == 0 {
        return Ok(ToolOutput::ok(format!("{} is empty (0 lines)", path.shown), "empty"));
    }

    let mut out = String::new();
    let mut shown = 0u64;
    let mut last = offset.saturating_sub(1);
    let mut total = 0u64;
    let mut capped = false;
    let mut cut_lines = 0;
    let mut take = |number: u64, line: &[u8], out: &mut String| -> bool {
        if number < offset {
            return true;
        }
        if shown >= limit || capped {
            return false;
        }
        let text = String::from_utf8_lossy(line);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        let entry = match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => {
                cut_lines += 1;
                format!(
                    "{number}\t{}… [line cut at {MAX_LINE_CHARS} of {} characters]\n",
                    &text[..cut],
                    text.chars().count()
                )
            }
            None => format!("{number}\t{text}\n"),
        };
        if out.len() + entry.len() > MAX_OUTPUT_BYTES && shown > 0 {
            capped = true;
            return false;
        }
        out.push_str(&entry);
        shown += 1;
        last = number;
        shown < limit
    };
    if whole {
        for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
            total = i as u64 + 1;
            take(total, line.strip_suffix(b"\n").unwrap_or(line), &mut out);
        }
    } else {
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            total += 1;
            if !take(total, line.strip_suffix(b"\n").unwrap_or(&line), &mut out) {
                break; // the rest of a huge file is not counted
            }
        }
    }
    if offset > total {
        return Err(format!("offset {offset} is past the end of the file ({})", super::files::lines(total as usize)));
    }
    let mut notes = Vec::new();
    if offset > 1 {
        notes.push(format!("lines 1-{} not shown", offset - 1));
    }
    if whole && last < total {
        let why = if capped { " (output size cap)" } else { "" };
        notes.push(format!("lines {}-{total} not shown{why}; pass offset={} to read on", last + 1, last + 1));
    } else if !whole {
        notes.push(format!(
            "the file is {:.1} MB; lines after {last} were not read; pass offset={} to read on",
            meta.len() as f64 / 1e6,
            last + 1
        ));
    }
    if cut_lines > 0 {
        notes.push(format!("{cut_lines} long lines were cut"));
    }
    if !notes.is_empty() {
        out.push_str(&format!("[{}]\n", notes.join("; ")));
    }
    let summary = if whole { format!("{shown} of {total} lines") } else { format!("{shown} lines") };
    Ok(ToolOutput::ok(out, summary))
}
