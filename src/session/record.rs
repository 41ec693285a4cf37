//! The transcript format, version 1: one JSON object per line, each with a
//! `type`. The first line is `meta`; then, in the order they happen:
//!
//! - `user`: a message from the person (`text`).
//! - `assistant`: a model reply (`message`: text and tool calls with their
//!   raw argument text).
//! - `decision`: what the person decided about a call (`call_id`, `decision`).
//! - `tool_result`: a finished call (`call_id`, `name`, `status`, `content`
//!   as the model saw it, `full` output when that was cut, `diff` for edits,
//!   `duration_ms`).
//! - `usage`: tokens of one model request.
//! - `error`: a failed turn (`message`).
//! - `outcome`: how a turn ended.
//! - `compaction`: the conversation was compacted; `history` is the
//!   model's view from then on.
//! - `rewind`: the conversation went back to before the person's N-th message.
//!
//! Every record carries `ts` (Unix milliseconds). Unknown types are skipped
//! on load, so later versions can add records. Keys never appear: nothing
//! here holds headers or configuration values.

use serde::{Deserialize, Serialize};

use crate::agent::CallStatus;
use crate::provider::{Message, Usage};

pub const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub v: u32,
    pub id: String,
    pub created: String,
    pub cwd: String,
    pub provider: String,
    pub model: String,
    pub hew_version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Meta(Meta),
    User {
        text: String,
        #[serde(default)]
        ts: u64,
    },
    Assistant {
        message: Message,
        #[serde(default)]
        ts: u64,
    },
    Decision {
        call_id: String,
        decision: String,
        #[serde(default)]
        ts: u64,
    },
    ToolResult {
        call_id: String,
        name: String,
        status: CallStatus,
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        full: Option<String>,
        #[serde(default)]
        is_error: bool,
        #[serde(default)]
        summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
        #[serde(default)]
        duration_ms: u64,
        #[serde(default)]
        ts: u64,
    },
    Usage {
        usage: Usage,
        #[serde(default)]
        ts: u64,
    },
    Error {
        message: String,
        #[serde(default)]
        ts: u64,
    },
    Outcome {
        outcome: String,
        #[serde(default)]
        ts: u64,
    },
    /// The conversation was compacted; `history` is what the model sees
    /// from here on (the records before it stay for the browser).
    Compaction {
        how: String,
        history: Vec<Message>,
        #[serde(default)]
        ts: u64,
    },
    /// The person rewound the conversation to just before their
    /// `before_message`-th message (1-based); what follows replaces it.
    Rewind {
        before_message: usize,
        #[serde(default)]
        ts: u64,
    },
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
