//! The two channels between the agent task and a front end: [`UserOp`] in,
//! [`AgentEvent`] out. Approval requests carry a oneshot for the answer.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::config::ApprovalMode;
use crate::provider::Usage;
use crate::tools::{FileChange, Plan, ToolOutput};

#[derive(Debug)]
pub enum UserOp {
    /// A new request from the person.
    Submit(String),
    /// Stop the running turn: cancel the request or the running command.
    Interrupt,
    /// Change the approval mode from the next call on.
    SetApproval(ApprovalMode),
    /// Forget the conversation (the person's `/clear`).
    Clear,
    /// Put back the files the latest turn with file changes changed.
    Undo,
    /// Go back to just before the person's N-th message (1-based), files too.
    Rewind(usize),
    /// Shrink the conversation now (the person's `/compact`).
    Compact,
    /// End the agent task.
    Shutdown,
}

/// The person's answer to an approval request.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Approve,
    /// Approve, and allow the same again without asking for the rest of the
    /// session (for bash: this exact command; otherwise: this tool).
    AllowForSession,
    /// Approve a different version of a file change: some hunks only, or
    /// what the person saved in their editor. `note` tells the model what
    /// was applied.
    ApproveEdited {
        content: String,
        note: String,
    },
    /// Refuse, optionally saying why; the turn goes on.
    Refuse {
        reason: Option<String>,
    },
    /// Refuse and stop the turn.
    Stop,
}

/// A tool call as front ends see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallInfo {
    pub id: String,
    pub name: String,
    /// The raw argument text the model sent.
    pub arguments: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Ok,
    Error,
    Refused,
    Interrupted,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    Done {
        answer: String,
    },
    Failed {
        message: String,
    },
    MaxTurns {
        limit: u32,
    },
    /// The next request would have taken spending past `--max-cost`.
    BudgetReached {
        spent: f64,
        limit: f64,
    },
    Interrupted,
}

#[derive(Debug)]
pub struct ApprovalRequest {
    pub call: CallInfo,
    pub plan: Plan,
    pub reply: oneshot::Sender<Decision>,
}

#[derive(Debug)]
pub enum AgentEvent {
    TurnStarted {
        prompt: String,
    },
    /// A model request is being sent (round `n` of this turn).
    RequestStarted {
        round: u32,
    },
    TextDelta(String),
    /// The request failed and is retried; text streamed so far is void.
    Retrying {
        attempt: u32,
        delay: Duration,
        reason: String,
    },
    /// The model's complete text for this round (may be empty).
    AssistantText(String),
    /// The model asked for a call; it has not been judged yet.
    ToolCall {
        call: CallInfo,
    },
    ApprovalRequest(ApprovalRequest),
    ToolStarted {
        id: String,
        target: String,
    },
    ToolFinished {
        call: CallInfo,
        target: Option<String>,
        status: CallStatus,
        output: ToolOutput,
        duration: Duration,
        /// The file change as written, for calls that changed a file.
        change: Option<FileChange>,
    },
    Usage {
        request: Usage,
        total: Usage,
    },
    Notice(String),
    TurnFinished(Outcome),
}

impl AgentEvent {
    /// The event as one JSON object, for `hew exec --json`.
    pub fn to_json(&self) -> Value {
        match self {
            AgentEvent::TurnStarted { prompt } => json!({"type": "turn_started", "prompt": prompt}),
            AgentEvent::RequestStarted { round } => json!({"type": "request_started", "round": round}),
            AgentEvent::TextDelta(text) => json!({"type": "text_delta", "text": text}),
            AgentEvent::Retrying { attempt, delay, reason } => {
                json!({"type": "retrying", "attempt": attempt, "delay_ms": delay.as_millis() as u64, "reason": reason})
            }
            AgentEvent::AssistantText(text) => json!({"type": "assistant_text", "text": text}),
            AgentEvent::ToolCall { call } => json!({"type": "tool_call", "call": call}),
            AgentEvent::ApprovalRequest(req) => json!({"type": "approval_request", "call": req.call, "plan": req.plan}),
            AgentEvent::ToolStarted { id, target } => json!({"type": "tool_started", "id": id, "target": target}),
            AgentEvent::ToolFinished { call, target, status, output, duration, change } => json!({
                "type": "tool_finished",
                "call": call,
                "target": target,
                "status": status,
                "summary": output.summary,
                "output": output.content,
                "duration_ms": duration.as_millis() as u64,
                "diff": change.as_ref().map(|c| c.diff.as_str()),
            }),
            AgentEvent::Usage { request, total } => json!({"type": "usage", "request": request, "total": total}),
            AgentEvent::Notice(text) => json!({"type": "notice", "text": text}),
            AgentEvent::TurnFinished(outcome) => {
                let mut v = json!({"type": "turn_finished"});
                if let (Some(obj), Ok(Value::Object(extra))) = (v.as_object_mut(), serde_json::to_value(outcome)) {
                    obj.extend(extra);
                }
                v
            }
        }
    }
}
