//! todo: the model's visible task list. Each call sends the whole list;
//! the interface shows it as a panel, and it lives in the transcript (the
//! call's arguments), so a resumed session has it back.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Effect, Plan, Tool, ToolContext, ToolOutput};
use crate::provider::BoxFuture;

pub struct Todo;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TodoItem {
    pub content: String,
    pub status: TodoStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Done,
}

/// The items of a todo call's arguments, if they are a valid list.
pub fn parse(args: &Value) -> Option<Vec<TodoItem>> {
    serde_json::from_value(args.get("items")?.clone()).ok()
}

pub fn render(items: &[TodoItem]) -> String {
    items
        .iter()
        .map(|item| {
            let mark = match item.status {
                TodoStatus::Done => "[x]",
                TodoStatus::InProgress => "[>]",
                TodoStatus::Pending => "[ ]",
            };
            format!("{mark} {}\n", item.content)
        })
        .collect()
}

impl Tool for Todo {
    fn name(&self) -> &'static str {
        "todo"
    }

    fn description(&self) -> &'static str {
        "Keep a task list for work with several steps, visible to the user. Send the whole list \
         each time (it replaces the previous one), each item with a status: pending, in_progress \
         or done. Mark an item in_progress when you start it and done as soon as it is finished; \
         keep one item in progress at a time. Skip it for small one-step requests."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "The task, in a few words"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
                        },
                        "required": ["content", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["items"],
            "additionalProperties": false
        })
    }

    fn plan(&self, args: &Value, _ctx: &ToolContext) -> Result<Plan, String> {
        let items = parse(args).ok_or("items must be a list of {content, status}")?;
        if items.len() > 50 {
            return Err(format!("{} items is too many; keep the list under 50", items.len()));
        }
        if items.iter().any(|i| i.content.trim().is_empty()) {
            return Err("an item has empty content".into());
        }
        let done = items.iter().filter(|i| i.status == TodoStatus::Done).count();
        Ok(Plan { effect: Effect::Read, target: format!("{done}/{} done", items.len()) })
    }

    fn execute<'a>(
        &'a self,
        args: &'a Value,
        plan: Plan,
        ctx: &'a ToolContext,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let items = parse(args).unwrap_or_default();
            let text = render(&items);
            if let Ok(mut todos) = ctx.todos.lock() {
                *todos = items;
            }
            ToolOutput::ok(format!("The task list is now ({}):\n{text}", plan.target), "updated")
        })
    }
}
