//! Helper agents for the `agent` tool: a fresh history, the read-only
//! tools under the read-only approval mode, at most 20 model round-trips.
//! They share the parent's provider, usage count and cancellation; their
//! tool calls show in the parent's tool log as `agent › tool`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentEvent, AgentSettings, EventTx, Outcome, instructions::Instructions, policy::Rules};
use crate::config::ApprovalMode;
use crate::provider::{BoxFuture, Provider, Usage};
use crate::tools::agent_tool::Delegate;
use crate::tools::{Registry, ToolContext};

pub const MAX_TURNS: u32 = 20;

pub struct SubAgent {
    pub(super) provider: Arc<dyn Provider>,
    pub(super) ctx: Weak<ToolContext>,
    pub(super) settings: AgentSettings,
    pub(super) usage: Arc<Mutex<Usage>>,
    /// The parent's event channel, known once the parent runs.
    pub(super) events: OnceLock<EventTx>,
    runs: AtomicUsize,
}

impl std::fmt::Debug for SubAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubAgent").field("runs", &self.runs).finish_non_exhaustive()
    }
}

impl SubAgent {
    pub fn new(
        provider: Arc<dyn Provider>,
        ctx: &Arc<ToolContext>,
        parent: &AgentSettings,
        usage: Arc<Mutex<Usage>>,
    ) -> Self {
        let settings = AgentSettings {
            approval: ApprovalMode::ReadOnly,
            max_turns: MAX_TURNS,
            interactive: false,
            max_output_tokens: parent.max_output_tokens,
            rules: Rules::new(Vec::new(), parent.rules.deny_commands.clone()),
            model: parent.model,
            max_cost: parent.max_cost,
            instructions: Instructions { files: Vec::new(), text: String::new() },
        };
        SubAgent {
            provider,
            ctx: Arc::downgrade(ctx),
            settings,
            usage,
            events: OnceLock::new(),
            runs: AtomicUsize::new(0),
        }
    }

    async fn run(&self, task: &str, cancel: CancellationToken) -> Result<String, String> {
        let ctx = self.ctx.upgrade().ok_or("the session has ended")?;
        let parent = self.events.get().cloned();
        let run = self.runs.fetch_add(1, Ordering::Relaxed) + 1;
        let mut child = Agent::new(self.provider.clone(), Arc::new(Registry::read_only()), ctx, self.settings.clone());
        child.system.push_str(
            "\n# Your role\nYou are a helper agent. Another agent gave you the task below. You can only read: \
             investigate with the tools, then answer once, completely and concisely, with file paths and line \
             numbers where they help. Nobody will answer questions.\n",
        );
        // The helper's usage counts toward the session's.
        child.usage = self.usage.clone();
        child.is_helper = true;
        let (tx, mut rx) = mpsc::unbounded_channel();
        let child_events = EventTx { tx, session: None };
        let forward = async {
            while let Some(event) = rx.recv().await {
                if let Some(parent) = &parent
                    && let Some(event) = nested(event, run)
                {
                    let _ = parent.send(event);
                }
            }
        };
        let turn = async {
            let outcome = child.turn(task.to_owned(), &child_events, &cancel).await;
            drop(child_events);
            outcome
        };
        let (outcome, ()) = tokio::join!(turn, forward);
        match outcome {
            Outcome::Done { answer } if !answer.trim().is_empty() => Ok(answer),
            Outcome::Done { .. } => Err("it gave no answer".into()),
            Outcome::Failed { message } => Err(message),
            Outcome::MaxTurns { limit } => Err(format!("it did not finish within {limit} round-trips")),
            Outcome::BudgetReached { limit, .. } => Err(format!("the ${limit:.2} budget was reached")),
            Outcome::Interrupted => Err("interrupted by the user".into()),
        }
    }
}

/// The helper's events as the parent shows them: its tool calls, nested by
/// name and id; its usage. The rest (its text, its turn) stays inside.
fn nested(event: AgentEvent, run: usize) -> Option<AgentEvent> {
    let rename = |mut call: super::CallInfo| {
        call.id = format!("agent{run}/{}", call.id);
        call.name = format!("agent › {}", call.name);
        call
    };
    Some(match event {
        AgentEvent::ToolCall { call } => AgentEvent::ToolCall { call: rename(call) },
        AgentEvent::ToolStarted { id, target } => AgentEvent::ToolStarted { id: format!("agent{run}/{id}"), target },
        AgentEvent::ToolFinished { call, target, status, output, duration, change } => {
            AgentEvent::ToolFinished { call: rename(call), target, status, output, duration, change }
        }
        AgentEvent::Usage { request, total } => AgentEvent::Usage { request, total },
        _ => return None,
    })
}

impl Delegate for SubAgent {
    fn delegate<'a>(&'a self, task: &'a str, cancel: CancellationToken) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(self.run(task, cancel))
    }
}
