//! grep: regex search over file contents with ripgrep's own crates.

use std::sync::Mutex;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, Sink, SinkMatch};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::glob::{search_root, walker};
use super::{Effect, Plan, Tool, ToolContext, ToolOutput, arg_bool, arg_str};
use crate::provider::BoxFuture;

pub struct Grep;

pub const MAX_MATCHES: usize = 200;
const MAX_LINE_CHARS: usize = 300;

impl Tool for Grep {
    fn name(&self) -> &'static str {
        "grep"
    }

    fn description(&self) -> &'static str {
        "Search file contents with a regular expression (Rust regex syntax, like ripgrep: \
         `fn\\s+main`, `TODO|FIXME`; escape literal braces and dots). Searches the workspace or \
         the folder in `path`, optionally only files whose name matches `include` (a glob such \
         as `*.rs`); skips binary files, .git and what .gitignore / .ignore exclude. Returns \
         `path:line: text` lines sorted by path, at most 200 (with a count of the rest). Use it \
         to find definitions and uses; read_file the hits for context."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression"},
                "path": {"type": "string", "description": "Folder or file to search (default: the workspace root)"},
                "include": {"type": "string", "description": "Only search files whose name matches this glob, e.g. *.rs"},
                "ignore_case": {"type": "boolean", "description": "Match case-insensitively (default false)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn plan(&self, args: &Value, ctx: &ToolContext) -> Result<Plan, String> {
        let (_, target) = self.setup(args, ctx)?;
        Ok(Plan { effect: Effect::Read, target })
    }

    fn execute<'a>(
        &'a self,
        args: &'a Value,
        _plan: Plan,
        ctx: &'a ToolContext,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            match self.setup(args, ctx) {
                Ok((search, _)) => search.run(ctx, &cancel),
                Err(message) => ToolOutput::error(message),
            }
        })
    }
}

struct Search {
    matcher: grep_regex::RegexMatcher,
    include: Option<globset::GlobMatcher>,
    root: std::path::PathBuf,
    file: bool,
}

impl Grep {
    fn setup(&self, args: &Value, ctx: &ToolContext) -> Result<(Search, String), String> {
        let pattern = arg_str(args, "pattern").unwrap_or_default();
        if pattern.is_empty() {
            return Err("the pattern is empty".into());
        }
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(arg_bool(args, "ignore_case"))
            .build(pattern)
            .map_err(|e| format!("invalid regex: {}", e.to_string().replace('\n', " ")))?;
        let include = arg_str(args, "include")
            .map(|g| {
                globset::Glob::new(g).map(|g| g.compile_matcher()).map_err(|e| format!("invalid include glob: {e}"))
            })
            .transpose()?;
        // A single file may be searched too.
        let target = ctx.path(arg_str(args, "path").unwrap_or("."))?;
        let file = std::fs::metadata(&target.abs).map(|m| m.is_file()).unwrap_or(false);
        let root = if file { target.abs.clone() } else { search_root(args, ctx)?.abs };
        Ok((Search { matcher, include, root, file }, format!("/{pattern}/ in {}", target.shown)))
    }
}

impl Search {
    fn run(&self, ctx: &ToolContext, cancel: &CancellationToken) -> ToolOutput {
        let hits: Mutex<Vec<(String, u64, String)>> = Mutex::new(Vec::new());
        let workspace = ctx.jail.root().to_path_buf();
        let mut builder = walker(&self.root);
        builder.threads(std::thread::available_parallelism().map_or(2, |n| n.get()).min(8));
        let (hits_ref, workspace) = (&hits, &workspace);
        builder.build_parallel().run(|| {
            let mut searcher =
                SearcherBuilder::new().binary_detection(BinaryDetection::quit(0)).line_number(true).build();
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return ignore::WalkState::Quit;
                }
                let Ok(entry) = entry else { return ignore::WalkState::Continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return ignore::WalkState::Continue;
                }
                if let Some(include) = &self.include
                    && !(self.file || include.is_match(entry.file_name()))
                {
                    return ignore::WalkState::Continue;
                }
                let shown = entry.path().strip_prefix(workspace).unwrap_or(entry.path()).display().to_string();
                let mut sink = Collect { path: &shown, found: Vec::new() };
                let _ = searcher.search_path(&self.matcher, entry.path(), &mut sink);
                if !sink.found.is_empty()
                    && let Ok(mut hits) = hits_ref.lock()
                {
                    hits.extend(sink.found);
                }
                ignore::WalkState::Continue
            })
        });
        if cancel.is_cancelled() {
            return ToolOutput::error("interrupted by the user");
        }
        let mut hits = hits.into_inner().unwrap_or_default();
        if hits.is_empty() {
            return ToolOutput::ok("no matches", "0 matches");
        }
        hits.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let total = hits.len();
        let mut content: String =
            hits.iter().take(MAX_MATCHES).map(|(p, n, text)| format!("{p}:{n}: {text}\n")).collect();
        if total > MAX_MATCHES {
            content.push_str(&format!(
                "[{} more matches not shown; narrow the pattern, path or include]\n",
                total - MAX_MATCHES
            ));
        }
        ToolOutput::ok(content, format!("{total} matches"))
    }
}

struct Collect<'p> {
    path: &'p str,
    found: Vec<(String, u64, String)>,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &grep_searcher::Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let line = String::from_utf8_lossy(m.bytes());
        let line = line.trim_end_matches(['\n', '\r']);
        let text = match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line.to_owned(),
        };
        self.found.push((self.path.to_owned(), m.line_number().unwrap_or(0), text));
        Ok(true)
    }
}
