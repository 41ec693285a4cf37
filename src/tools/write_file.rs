//! write_file: create a file or replace one the model has read.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::files::{self, FileChange};
use super::{Effect, Plan, Tool, ToolContext, ToolOutput, WorkPath, arg_str};
use crate::provider::BoxFuture;

pub struct WriteFile;

/// Bigger content is almost certainly a mistake, and would flood the context.
pub const MAX_CONTENT_BYTES: usize = 10 * 1024 * 1024;

impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        "write_file"
    }

    fn description(&self) -> &'static str {
        "Create a new file, or replace a whole file, with `content`. Missing parent folders \
         are created. Prefer edit_file for changing part of an existing file: it is smaller \
         and safer. Replacing an existing file requires that you read it first in this \
         session and that it has not changed since. Returns a diff against the old content, \
         or the number of lines created. The person may review and refuse the change."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root or absolute inside it"},
                "content": {"type": "string", "description": "The complete new content of the file"}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    fn plan(&self, args: &Value, ctx: &ToolContext) -> Result<Plan, String> {
        let path = ctx.path(arg_str(args, "path").unwrap_or_default())?;
        let content = arg_str(args, "content").unwrap_or_default();
        if content.len() > MAX_CONTENT_BYTES {
            return Err(format!(
                "content is {} bytes; write_file takes at most {MAX_CONTENT_BYTES} bytes. Write smaller files",
                content.len()
            ));
        }
        let old = existing_text(&path, ctx)?;
        let change = FileChange::new(&path, old, content.to_owned());
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

/// The current text of a file about to be replaced, after checking it may
/// be: it is a file, text, and the model has seen its current content.
pub(super) fn existing_text(path: &WorkPath, ctx: &ToolContext) -> Result<Option<String>, String> {
    let meta = match std::fs::metadata(&path.abs) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.shown)),
    };
    if meta.is_dir() {
        return Err(format!("{} is a folder; give a file path", path.shown));
    }
    if !meta.is_file() {
        return Err(format!("{} is not a regular file (a device, FIFO or socket)", path.shown));
    }
    let bytes = std::fs::read(&path.abs).map_err(|e| format!("cannot read {}: {e}", path.shown))?;
    ctx.reads.check_fresh(path, &bytes)?;
    String::from_utf8(bytes).map(Some).map_err(|_| {
        format!("{} is not a UTF-8 text file; hew only edits text files, and left it untouched", path.shown)
    })
}

/// Writes an approved change and reports it the same way for every file tool.
pub(super) fn write(plan: Plan, ctx: &ToolContext) -> ToolOutput {
    let Effect::Write { change } = plan.effect else {
        return ToolOutput::error("internal: a file tool was given a plan that is not a file change");
    };
    if let Err(message) = files::apply(&change, &ctx.reads) {
        return ToolOutput::error(message);
    }
    ctx.checkpoints.keep(super::checkpoint::Checkpoint::new(
        ctx.turn.load(std::sync::atomic::Ordering::Relaxed),
        change.abs.clone(),
        change.path.clone(),
        change.old.clone(),
        &change.new,
    ));
    let summary = change.summary();
    let content = match &change.old {
        None => format!("created {} ({})", change.path, files::lines(files::line_count(&change.new))),
        Some(old) if *old == change.new => format!("{} unchanged (the new content is the same)", change.path),
        Some(_) => format!("wrote {}\n{}", change.path, change.diff),
    };
    ToolOutput::ok(content, summary)
}
