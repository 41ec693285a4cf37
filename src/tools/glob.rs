//! glob: find files by pattern, newest first, honouring ignore files.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Mutex;
use std::time::SystemTime;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Effect, Plan, Tool, ToolContext, ToolOutput, WorkPath, arg_str};
use crate::provider::BoxFuture;

pub struct Glob;

pub const MAX_RESULTS: usize = 200;

impl Tool for Glob {
    fn name(&self) -> &'static str {
        "glob"
    }

    fn description(&self) -> &'static str {
        "Find files whose path matches a glob pattern, such as `**/*.rs`, `src/**/test_*.py` or \
         `*.toml` (`*` does not cross folders; `**` does). Searches the workspace, or the folder \
         in `path`; skips .git and whatever .gitignore / .ignore exclude. Returns paths relative \
         to the workspace, most recently modified first, at most 200 (with a count of the rest). \
         Use it to locate files by name; use grep to search their contents."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, relative to the search folder"},
                "path": {"type": "string", "description": "Folder to search (default: the workspace root)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn plan(&self, args: &Value, ctx: &ToolContext) -> Result<Plan, String> {
        let dir = search_root(args, ctx)?;
        let pattern = arg_str(args, "pattern").unwrap_or_default();
        compile(pattern)?;
        Ok(Plan { effect: Effect::Read, target: format!("{pattern} in {}", dir.shown) })
    }

    fn execute<'a>(
        &'a self,
        args: &'a Value,
        _plan: Plan,
        ctx: &'a ToolContext,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let run = || -> Result<ToolOutput, String> {
                let dir = search_root(args, ctx)?;
                let matcher = compile(arg_str(args, "pattern").unwrap_or_default())?;
                Ok(glob(&dir, &matcher, ctx, &cancel))
            };
            run().unwrap_or_else(ToolOutput::error)
        })
    }
}

/// The folder a search starts from: `path`, or the workspace root.
pub(super) fn search_root(args: &Value, ctx: &ToolContext) -> Result<WorkPath, String> {
    let dir = ctx.path(arg_str(args, "path").unwrap_or("."))?;
    let meta = std::fs::metadata(&dir.abs).map_err(|e| format!("{}: {e}", dir.shown))?;
    if !meta.is_dir() {
        return Err(format!("{} is a file, not a folder; give a folder as `path`", dir.shown));
    }
    Ok(dir)
}

fn compile(pattern: &str) -> Result<globset::GlobMatcher, String> {
    if pattern.trim().is_empty() {
        return Err("the pattern is empty; try `**/*` for every file".into());
    }
    let pattern = pattern.trim_start_matches("./");
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("invalid glob pattern: {e}"))
}

/// A walker over `dir` with the same rules for glob and grep: ignore files
/// apply (even outside a git repository), hidden files are searched, .git is not.
pub(super) fn walker(dir: &std::path::Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(dir);
    builder.hidden(false).require_git(false).follow_links(false).filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// A min-heap on modification time: its top is the oldest kept path.
type Newest = BinaryHeap<Reverse<(SystemTime, String)>>;

fn glob(dir: &WorkPath, matcher: &globset::GlobMatcher, ctx: &ToolContext, cancel: &CancellationToken) -> ToolOutput {
    // The newest MAX_RESULTS, kept in a bounded heap: half a million
    // matches cost a count, not half a million sorted paths.
    let newest: Mutex<(Newest, usize)> = Mutex::new((BinaryHeap::new(), 0));
    let root = ctx.jail.root().to_path_buf();
    walker(&dir.abs).build_parallel().run(|| {
        Box::new(|entry| {
            if cancel.is_cancelled() {
                return ignore::WalkState::Quit;
            }
            let Ok(entry) = entry else { return ignore::WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file() || t.is_symlink()) {
                return ignore::WalkState::Continue;
            }
            let Ok(relative) = entry.path().strip_prefix(&dir.abs) else { return ignore::WalkState::Continue };
            if !matcher.is_match(relative) {
                return ignore::WalkState::Continue;
            }
            let mtime = entry.metadata().ok().and_then(|m| m.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH);
            let shown = entry.path().strip_prefix(&root).unwrap_or(entry.path()).display().to_string();
            if let Ok(mut guard) = newest.lock() {
                let (heap, total) = &mut *guard;
                *total += 1;
                heap.push(Reverse((mtime, shown)));
                if heap.len() > MAX_RESULTS {
                    heap.pop();
                }
            }
            ignore::WalkState::Continue
        })
    });
    let (heap, total) = newest.into_inner().unwrap_or_default();
    if cancel.is_cancelled() {
        return ToolOutput::error("interrupted by the user");
    }
    let mut found: Vec<(SystemTime, String)> = heap.into_iter().map(|Reverse(x)| x).collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    if found.is_empty() {
        return ToolOutput::ok(format!("no files match in {}", dir.shown), "0 files");
    }
    let mut content: String = found.iter().map(|(_, p)| format!("{p}\n")).collect();
    if total > found.len() {
        content.push_str(&format!("[{} more files not shown; narrow the pattern or the path]\n", total - found.len()));
    }
    ToolOutput::ok(content, format!("{total} files"))
}
