//! agent: hands a research question to a helper agent with a fresh
//! history and read-only tools, and returns its answer. The helper itself
//! lives in the agent layer (it needs the model); this tool reaches it
//! through [`ToolContext::delegate`], so the registry stays the only place
//! tools are named.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Effect, Plan, Tool, ToolContext, ToolOutput, arg_str};
use crate::provider::BoxFuture;

/// Runs a task in a helper agent; implemented by the agent layer.
pub trait Delegate: Send + Sync + std::fmt::Debug {
    fn delegate<'a>(&'a self, task: &'a str, cancel: CancellationToken) -> BoxFuture<'a, Result<String, String>>;
}

pub struct AgentTool;

/// The longest answer handed back to the parent.
pub const MAX_ANSWER_CHARS: usize = 10_000;

impl Tool for AgentTool {
    fn name(&self) -> &'static str {
        "agent"
    }

    fn description(&self) -> &'static str {
        "Delegate a self-contained research task to a helper agent that starts with an empty \
         history and can only read: read_file, glob, grep, and read-only bash commands. Use it \
         for searches that would take many steps (\"find every place the config is parsed and \
         explain how they differ\"), to keep your own context small. Give it everything it needs \
         in `task`; it answers once, in at most 10000 characters. It cannot change files."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "The question or task, with all the context the helper needs"}
            },
            "required": ["task"],
            "additionalProperties": false
        })
    }

    fn plan(&self, args: &Value, ctx: &ToolContext) -> Result<Plan, String> {
        let task = arg_str(args, "task").unwrap_or_default();
        if task.trim().is_empty() {
            return Err("the task is empty".into());
        }
        if ctx.delegate.get().is_none() {
            return Err("helper agents are not available here (a helper cannot start another)".into());
        }
        let target = task.lines().next().unwrap_or_default().chars().take(80).collect();
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
            let task = arg_str(args, "task").unwrap_or_default();
            let Some(delegate) = ctx.delegate.get() else {
                return ToolOutput::error("helper agents are not available here");
            };
            match delegate.delegate(task, cancel).await {
                Ok(answer) => {
                    let full = answer.len() > MAX_ANSWER_CHARS;
                    let content = match super::truncate_middle(&answer, MAX_ANSWER_CHARS) {
                        Some(short) => short,
                        None => answer.clone(),
                    };
                    ToolOutput { content, full: full.then_some(answer), is_error: false, summary: "answered".into() }
                }
                Err(message) => ToolOutput::error(format!("the helper agent failed: {message}")),
            }
        })
    }
}
