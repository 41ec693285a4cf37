//! Tools: values behind one [`Tool`] trait, kept in a [`Registry`] by name.
//!
//! A call passes two gates before it runs. The shape gate
//! ([`Registry::prepare`]) parses the arguments and checks them against the
//! tool's schema. The permission step ([`Tool::plan`]) resolves paths inside
//! the workspace and says what the call will touch, whether it changes
//! anything, and (for edits) the exact change, which is what a person
//! approves and what [`Tool::execute`] then writes. The agent loop never
//! names a concrete tool; adding one is a new file and a line in
//! [`Registry::standard`].

pub mod agent_tool;
pub mod bash;
pub mod checkpoint;
mod edit_file;
pub mod files;
mod glob;
mod grep;
pub mod path;
mod read_file;
pub mod schema;
pub mod todo;
mod write_file;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use files::{FileChange, ReadLedger};
pub use path::{Confinement, WorkPath};

use crate::provider::{BoxFuture, ToolSpec};

/// What a call will do, decided before it runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Effect {
    /// Looks at files only.
    Read,
    /// Changes one file, exactly as `change` shows.
    Write { change: FileChange },
    /// Runs a shell command.
    Command { command: String },
}

/// The outcome of the permission step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub effect: Effect,
    /// One line for logs and prompts: `src/main.rs`, `cargo test`.
    pub target: String,
}

/// A finished call. `content` goes to the model (bounded); `full` keeps
/// what was cut from it, for the transcript and the UI.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ToolOutput {
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full: Option<String>,
    pub is_error: bool,
    /// A few words for one-line displays: `exit 0`, `+3 −1`, `12 matches`.
    pub summary: String,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>, summary: impl Into<String>) -> Self {
        ToolOutput { content: content.into(), full: None, is_error: false, summary: summary.into() }
    }

    pub fn error(message: impl Into<String>) -> Self {
        let content = message.into();
        let summary = content.lines().next().unwrap_or_default().chars().take(80).collect();
        ToolOutput { content, full: None, is_error: true, summary }
    }
}

/// Shared state the tools work in, one per session.
#[derive(Debug)]
pub struct ToolContext {
    pub jail: Confinement,
    /// Where bash runs next: follows `cd`, never leaves the workspace.
    pub cwd: Mutex<PathBuf>,
    pub reads: ReadLedger,
    /// Environment variables children must not see (API keys).
    pub hidden_env: Vec<String>,
    /// The user's home folder, for the safety rules (`rm -rf ~`).
    pub home: Option<PathBuf>,
    /// The OS sandbox commands run in; `None` when off or unsupported.
    pub sandbox: Option<crate::sandbox::Sandbox>,
    /// Prior contents of every file hew changed, for undo.
    pub checkpoints: checkpoint::Checkpoints,
    /// The turn in progress (set by the agent), to group checkpoints.
    pub turn: std::sync::atomic::AtomicUsize,
    /// The model's task list, as its last `todo` call left it.
    pub todos: Mutex<Vec<todo::TodoItem>>,
    /// Runs helper agents for the `agent` tool; set by the agent that owns
    /// this context, never by a helper (so helpers cannot start helpers).
    pub delegate: std::sync::OnceLock<std::sync::Arc<dyn agent_tool::Delegate>>,
}

impl ToolContext {
    pub fn new(workspace: PathBuf, protected: Vec<PathBuf>, hidden_env: Vec<String>) -> Self {
        ToolContext {
            cwd: Mutex::new(workspace.clone()),
            jail: Confinement::new(workspace, protected),
            reads: ReadLedger::default(),
            hidden_env,
            home: std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from),
            sandbox: None,
            checkpoints: checkpoint::Checkpoints::default(),
            turn: std::sync::atomic::AtomicUsize::new(0),
            todos: Mutex::new(Vec::new()),
            delegate: std::sync::OnceLock::new(),
        }
    }

    /// Runs commands in `sandbox` from now on.
    pub fn with_sandbox(mut self, sandbox: Option<crate::sandbox::Sandbox>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// What the command-safety rules say about `command` run from the current folder.
    pub fn analyze(&self, command: &str) -> Option<crate::safety::Finding> {
        let cwd = self.cwd();
        let home = self.home.as_ref().map(|h| h.canonicalize().unwrap_or_else(|_| h.clone()));
        let ctx = crate::safety::analyze::Context { workspace: self.jail.root(), cwd: &cwd, home: home.as_deref() };
        crate::safety::analyze(command, &ctx)
    }

    pub fn cwd(&self) -> PathBuf {
        self.cwd.lock().map(|c| c.clone()).unwrap_or_else(|_| self.jail.root().to_path_buf())
    }

    /// Resolves a path argument relative to the workspace root.
    pub fn path(&self, arg: &str) -> Result<WorkPath, String> {
        self.jail.resolve(self.jail.root(), arg)
    }
}

pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    /// For the model: what it does, when to use it, its limits.
    fn description(&self) -> &'static str;
    fn schema(&self) -> Value;
    /// The permission step: validates the call against the workspace and
    /// says what it will do. An `Err` goes back to the model as the result.
    fn plan(&self, args: &Value, ctx: &ToolContext) -> Result<Plan, String>;
    /// Runs an approved plan. Must return promptly once `cancel` fires.
    fn execute<'a>(
        &'a self,
        args: &'a Value,
        plan: Plan,
        ctx: &'a ToolContext,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, ToolOutput>;
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("a tool named `{0}` is already registered")]
pub struct DuplicateTool(pub String);

#[derive(Default)]
pub struct Registry {
    tools: BTreeMap<&'static str, Box<dyn Tool>>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// The tools every session gets.
    pub fn standard() -> Self {
        let mut registry = Registry::new();
        let tools: Vec<Box<dyn Tool>> = vec![
            Box::new(read_file::ReadFile),
            Box::new(write_file::WriteFile),
            Box::new(edit_file::EditFile),
            Box::new(bash::Bash),
            Box::new(glob::Glob),
            Box::new(grep::Grep),
            Box::new(todo::Todo),
            Box::new(agent_tool::AgentTool),
        ];
        for tool in tools {
            // The names above are distinct; a clash is a programming error caught by tests.
            if let Err(e) = registry.register(tool) {
                tracing::error!("{e}");
            }
        }
        registry
    }

    /// The tools a helper agent gets: reading and searching, and bash
    /// (which the read-only approval mode limits to read-only commands).
    pub fn read_only() -> Self {
        let mut registry = Registry::new();
        let tools: Vec<Box<dyn Tool>> =
            vec![Box::new(read_file::ReadFile), Box::new(glob::Glob), Box::new(grep::Grep), Box::new(bash::Bash)];
        for tool in tools {
            if let Err(e) = registry.register(tool) {
                tracing::error!("{e}");
            }
        }
        registry
    }

    pub fn register(&mut self, tool: Box<dyn Tool>) -> Result<(), DuplicateTool> {
        let name = tool.name();
        if self.tools.contains_key(name) {
            return Err(DuplicateTool(name.to_owned()));
        }
        self.tools.insert(name, tool);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.get(name).map(|t| t.as_ref())
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.keys().copied().collect()
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .values()
            .map(|t| ToolSpec {
                name: t.name().to_owned(),
                description: t.description().to_owned(),
                schema: t.schema(),
            })
            .collect()
    }

    /// The shape gate: finds the tool and checks the raw arguments against
    /// its schema. Errors are sentences for the model.
    pub fn prepare(&self, name: &str, raw_args: &str) -> Result<(&dyn Tool, Value), String> {
        let tool = self
            .get(name)
            .ok_or_else(|| format!("there is no tool named `{name}`; the tools are: {}", self.names().join(", ")))?;
        let args = schema::parse_arguments(raw_args, &tool.schema()).map_err(|e| format!("{name}: {e}"))?;
        Ok((tool, args))
    }
}

/// Reads an optional argument; the schema has already checked its type.
pub(crate) fn arg_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

pub(crate) fn arg_u64(args: &Value, key: &str) -> Option<u64> {
    args.get(key).and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f as u64)))
}

pub(crate) fn arg_bool(args: &Value, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Keeps the head and tail of a long text, with a line saying what was cut.
pub fn truncate_middle(text: &str, max_chars: usize) -> Option<String> {
    if text.len() <= max_chars {
        return None;
    }
    let head_end = files::floor_char_boundary(text, max_chars * 2 / 3);
    let mut tail_start = text.len() - (max_chars - head_end);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let cut = &text[head_end..tail_start];
    Some(format!(
        "{}\n[... {} characters ({} lines) cut from the middle ...]\n{}",
        &text[..head_end],
        cut.chars().count(),
        cut.matches('\n').count(),
        &text[tail_start..]
    ))
}

#[cfg(test)]
mod tests;
