//! Rebuilding the model's conversation from a transcript: every message and
//! tool result as the model saw it, with calls that never got a result
//! answered as interrupted, so the history is valid for both wire formats.

use std::collections::HashMap;

use super::record::Record;
use crate::provider::{Block, Message, Role, ToolResult};

pub fn conversation(records: &[Record]) -> Vec<Message> {
    let mut messages: Vec<Message> = Vec::new();
    let mut results: HashMap<String, ToolResult> = HashMap::new();
    // Calls of the latest assistant message, in order, awaiting results.
    let mut open: Vec<String> = Vec::new();
    for record in records {
        match record {
            Record::User { text, .. } => {
                close(&mut messages, &mut open, &mut results);
                messages.push(Message::user_text(text.clone()));
            }
            Record::Assistant { message, .. } => {
                close(&mut messages, &mut open, &mut results);
                open = message.tool_calls().map(|c| c.id.clone()).collect();
                messages.push(message.clone());
            }
            Record::Compaction { history, .. } => {
                close(&mut messages, &mut open, &mut results);
                messages = history.clone();
            }
            Record::Rewind { before_message, .. } => {
                close(&mut messages, &mut open, &mut results);
                let starts = crate::provider::prompt_starts(&messages);
                if let Some(&cut) = before_message.checked_sub(1).and_then(|i| starts.get(i)) {
                    messages.truncate(cut);
                }
            }
            Record::ToolResult { call_id, content, is_error, .. } if open.contains(call_id) => {
                results.insert(
                    call_id.clone(),
                    ToolResult { call_id: call_id.clone(), content: content.clone(), is_error: *is_error },
                );
            }
            _ => {}
        }
    }
    close(&mut messages, &mut open, &mut results);
    messages
}

/// Adds the results of the open calls, in call order, as one user message.
fn close(messages: &mut Vec<Message>, open: &mut Vec<String>, results: &mut HashMap<String, ToolResult>) {
    if open.is_empty() {
        return;
    }
    let content = open
        .drain(..)
        .map(|id| {
            let result = results.remove(&id).unwrap_or_else(|| ToolResult {
                call_id: id.clone(),
                content: "interrupted: hew stopped before this call finished; it may have run partly".into(),
                is_error: true,
            });
            Block::ToolResult(result)
        })
        .collect();
    messages.push(Message { role: Role::User, content });
    results.clear();
}
