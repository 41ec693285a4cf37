//! The agent loop: a tokio task that knows nothing of terminals. It takes
//! [`UserOp`]s, sends the conversation to the model, runs the tool calls
//! that come back (through the registry's two gates and the approval
//! policy), and reports everything as [`AgentEvent`]s until the model
//! answers without tools or the turn limit is reached.

mod calls;
pub mod compact;
pub mod instructions;
pub mod policy;
pub mod prompt;
pub mod protocol;
pub mod subagent;
mod undo;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use protocol::{AgentEvent, ApprovalRequest, CallInfo, CallStatus, Decision, Outcome, UserOp};

use crate::config::{ApprovalMode, ModelInfo};
use crate::provider::{Assembler, Message, ModelRequest, Provider, ProviderError, Role, StreamEvent, Usage};
use crate::session::Writer;
use crate::session::record::{Record, now_ms};
use crate::tools::{Registry, ToolContext};

/// Where the agent's events go: to the front end, and (when the session is
/// saved) into the transcript, as they happen.
#[derive(Clone)]
pub struct EventTx {
    tx: mpsc::UnboundedSender<AgentEvent>,
    session: Option<Arc<Mutex<Writer>>>,
}

impl EventTx {
    /// Records and delivers `event`; false when the front end has gone.
    pub fn send(&self, event: AgentEvent) -> bool {
        if let Some(record) = transcript_record(&event) {
            self.record(record);
        }
        self.tx.send(event).is_ok()
    }

    /// Writes a record that has no event of its own. A failing disk must not
    /// stop the work: it is logged, once per failure.
    pub fn record(&self, record: Record) {
        if let Some(session) = &self.session
            && let Ok(mut writer) = session.lock()
            && let Err(e) = writer.append(&record)
        {
            tracing::warn!("cannot write the session transcript {}: {e}", writer.path.display());
        }
    }
}

fn transcript_record(event: &AgentEvent) -> Option<Record> {
    let ts = now_ms();
    Some(match event {
        AgentEvent::ToolFinished { call, target, status, output, duration, change } => Record::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            status: *status,
            content: output.content.clone(),
            full: output.full.clone(),
            is_error: output.is_error,
            summary: output.summary.clone(),
            target: target.clone(),
            diff: change.as_ref().map(|c| c.diff.clone()),
            duration_ms: duration.as_millis() as u64,
            ts,
        },
        AgentEvent::Usage { request, .. } => Record::Usage { usage: *request, ts },
        AgentEvent::TurnFinished(outcome) => {
            let word = match outcome {
                Outcome::Done { .. } => "done".to_owned(),
                Outcome::Failed { message } => format!("failed: {message}"),
                Outcome::MaxTurns { limit } => format!("stopped after {limit} round-trips"),
                Outcome::BudgetReached { limit, .. } => format!("stopped at the ${limit:.2} budget"),
                Outcome::Interrupted => "interrupted".to_owned(),
            };
            Record::Outcome { outcome: word, ts }
        }
        _ => return None,
    })
}

#[derive(Debug, Clone)]
pub struct AgentSettings {
    pub approval: ApprovalMode,
    pub max_turns: u32,
    /// False for `hew exec`: nobody can answer, so "ask" becomes "refuse".
    pub interactive: bool,
    pub max_output_tokens: u32,
    pub rules: policy::Rules,
    /// Prices and context window of the model in use.
    pub model: ModelInfo,
    /// Stop before the session's spending would pass this (USD).
    pub max_cost: Option<f64>,
    /// AGENTS.md and friends, for the system prompt.
    pub instructions: instructions::Instructions,
}

pub struct Agent {
    provider: Arc<dyn Provider>,
    registry: Arc<Registry>,
    ctx: Arc<ToolContext>,
    settings: AgentSettings,
    system: String,
    history: Vec<Message>,
    /// Shared with helper agents, whose requests count too.
    usage: Arc<Mutex<Usage>>,
    session: Option<Arc<Mutex<Writer>>>,
    /// Told to the model with the next message.
    note: Option<String>,
    estimator: compact::Estimator,
    /// The history's length right after the last compaction.
    compacted_at: Option<usize>,
    /// A helper agent: it shares its parent's tool context, and must not
    /// move the parent's turn count (which groups undo checkpoints).
    is_helper: bool,
}

impl Agent {
    pub fn new(
        provider: Arc<dyn Provider>,
        registry: Arc<Registry>,
        ctx: Arc<ToolContext>,
        settings: AgentSettings,
    ) -> Self {
        let mut system = prompt::system_prompt(ctx.jail.root(), &registry.names(), settings.approval.as_str());
        if !settings.instructions.text.is_empty() {
            system.push_str("\n# Project instructions\n\nThe user and the project ask you to follow these:\n\n");
            system.push_str(&settings.instructions.text);
        }
        Agent {
            provider,
            registry,
            ctx,
            settings,
            system,
            history: Vec::new(),
            usage: Arc::new(Mutex::new(Usage::default())),
            session: None,
            note: None,
            estimator: compact::Estimator::default(),
            compacted_at: None,
            is_helper: false,
        }
    }

    /// Saves the session through `writer` from now on.
    pub fn with_session(mut self, writer: Writer) -> Self {
        self.session = Some(Arc::new(Mutex::new(writer)));
        self
    }

    /// Starts from an earlier conversation (a resumed session).
    pub fn with_history(mut self, history: Vec<Message>) -> Self {
        self.history = history;
        self
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Serves requests until `Shutdown` or the op channel closes.
    pub async fn run(mut self, mut ops: mpsc::UnboundedReceiver<UserOp>, events: mpsc::UnboundedSender<AgentEvent>) {
        let events = EventTx { tx: events, session: self.session.clone() };
        // This agent's helpers report through its channel. A helper never
        // reaches here (it runs a turn directly), so helpers cannot nest.
        if self.registry.get("agent").is_some() {
            let helper = subagent::SubAgent::new(self.provider.clone(), &self.ctx, &self.settings, self.usage.clone());
            let _ = helper.events.set(events.clone());
            let _ = self.ctx.delegate.set(Arc::new(helper));
        }
        let mut queued: VecDeque<String> = VecDeque::new();
        let mut deferred: Vec<UserOp> = Vec::new();
        let mut closing = false;
        while !closing {
            let prompt = match queued.pop_front() {
                Some(prompt) => prompt,
                None => match ops.recv().await {
                    Some(UserOp::Submit(prompt)) => prompt,
                    Some(UserOp::Interrupt) => continue,
                    Some(
                        op @ (UserOp::SetApproval(_)
                        | UserOp::Clear
                        | UserOp::Undo
                        | UserOp::Rewind(_)
                        | UserOp::Compact),
                    ) => {
                        self.between_turns(op, &events).await;
                        continue;
                    }
                    Some(UserOp::Shutdown) | None => break,
                },
            };
            let cancel = CancellationToken::new();
            let mut turn = Box::pin(self.turn(prompt, &events, &cancel));
            let outcome = loop {
                tokio::select! {
                    outcome = &mut turn => break outcome,
                    op = ops.recv(), if !closing => match op {
                        Some(UserOp::Submit(next)) => queued.push_back(next),
                        Some(UserOp::Interrupt) => cancel.cancel(),
                        Some(
                            op @ (UserOp::SetApproval(_) | UserOp::Clear | UserOp::Undo | UserOp::Rewind(_) | UserOp::Compact),
                        ) => deferred.push(op),
                        Some(UserOp::Shutdown) | None => {
                            closing = true;
                            cancel.cancel();
                        }
                    },
                }
            };
            drop(turn);
            let _ = events.send(AgentEvent::TurnFinished(outcome));
            for op in std::mem::take(&mut deferred) {
                self.between_turns(op, &events).await;
            }
        }
    }

    /// Requests from the person that wait for the current turn to end.
    async fn between_turns(&mut self, op: UserOp, events: &EventTx) {
        match op {
            UserOp::SetApproval(mode) => self.settings.approval = mode,
            UserOp::Clear => {
                self.history.clear();
            }
            UserOp::Undo => undo::undo(self, events).await,
            UserOp::Rewind(message) => undo::rewind(self, events, message).await,
            UserOp::Compact => self.compact(events, &CancellationToken::new()).await,
            _ => {}
        }
    }

    /// One request from the person, through as many model rounds as it takes.
    async fn turn(&mut self, prompt: String, events: &EventTx, cancel: &CancellationToken) -> Outcome {
        let _ = events.send(AgentEvent::TurnStarted { prompt: prompt.clone() });
        // What happened between turns (an undo) is news to the model.
        let prompt = match self.note.take() {
            Some(note) => format!("{note}\n\n{prompt}"),
            None => prompt,
        };
        events.record(Record::User { text: prompt.clone(), ts: now_ms() });
        self.history.push(Message::user_text(prompt));
        // Turns are numbered by the person's messages, as /rewind counts them.
        let number = self.history.iter().filter(|m| m.is_prompt()).count();
        if !self.is_helper {
            self.ctx.turn.store(number, std::sync::atomic::Ordering::Relaxed);
        }
        let specs = self.registry.specs();
        // The system prompt and tool schemas: the same size every round.
        let fixed = compact::fixed_chars(&self.system, &specs);
        let mut overflowed = false;
        for round in 1..=self.settings.max_turns {
            if cancel.is_cancelled() {
                return Outcome::Interrupted;
            }
            let mut request = ModelRequest {
                system: self.system.clone(),
                messages: self.history.clone(),
                tools: specs.clone(),
                max_output_tokens: self.settings.max_output_tokens,
            };
            let window = self.settings.model.context_window;
            // Compact when near the limit, but not again before the
            // conversation has grown: a window too small for even the
            // system prompt must not cost a summary request every round.
            let grown = self.compacted_at.is_none_or(|len| self.history.len() > len);
            let mut chars = fixed + compact::messages_chars(&request.messages);
            if grown && self.estimator.tokens(chars) as f64 > window as f64 * compact::TRIGGER {
                self.compact(events, cancel).await;
                request.messages = self.history.clone();
                chars = fixed + compact::messages_chars(&request.messages);
            }
            if let Some(outcome) = self.over_budget(chars) {
                return outcome;
            }
            let _ = events.send(AgentEvent::RequestStarted { round });
            let mut assembler = Assembler::new();
            let mut sink = |event: StreamEvent| {
                match &event {
                    StreamEvent::TextDelta(text) => {
                        let _ = events.send(AgentEvent::TextDelta(text.clone()));
                    }
                    StreamEvent::Retry { attempt, delay, reason } => {
                        let _ = events.send(AgentEvent::Retrying {
                            attempt: *attempt,
                            delay: *delay,
                            reason: reason.clone(),
                        });
                    }
                    _ => {}
                }
                assembler.push(&event);
            };
            match self.provider.stream(&request, &mut sink, cancel).await {
                Ok(()) => {}
                Err(ProviderError::Cancelled) => return Outcome::Interrupted,
                // Too long after all: compact and try once more.
                Err(error) if error.is_context_exceeded() && !overflowed => {
                    overflowed = true;
                    tracing::warn!(%error, "context exceeded; compacting");
                    self.compact(events, cancel).await;
                    continue;
                }
                Err(error) => {
                    tracing::error!(%error, "model request failed");
                    events.record(Record::Error { message: error.to_string(), ts: now_ms() });
                    return Outcome::Failed { message: error.to_string() };
                }
            }
            let completion = assembler.finish();
            self.estimator.correct(chars, completion.usage.input_tokens);
            events.record(Record::Assistant { message: completion.message.clone(), ts: now_ms() });
            let total = match self.usage.lock() {
                Ok(mut usage) => {
                    usage.add(completion.usage);
                    *usage
                }
                Err(_) => completion.usage,
            };
            let _ = events.send(AgentEvent::Usage { request: completion.usage, total });
            let text = completion.message.text();
            let _ = events.send(AgentEvent::AssistantText(text.clone()));
            let calls: Vec<_> = completion.message.tool_calls().cloned().collect();
            self.history.push(completion.message);
            if calls.is_empty() {
                return Outcome::Done { answer: text };
            }
            let results = calls::run_all(self, &calls, events, cancel).await;
            self.history.push(Message { role: Role::User, content: results });
            if cancel.is_cancelled() {
                return Outcome::Interrupted;
            }
        }
        Outcome::MaxTurns { limit: self.settings.max_turns }
    }

    /// Shrinks the conversation (see [`compact`]) and says how much.
    async fn compact(&mut self, events: &EventTx, cancel: &CancellationToken) {
        let fixed = compact::fixed_chars(&self.system, &self.registry.specs());
        let size = |h: &[Message]| self.estimator.tokens(fixed + compact::messages_chars(h));
        let before = size(&self.history);
        let window = self.settings.model.context_window;
        let result =
            compact::compact(self.provider.as_ref(), &self.history, fixed, window, self.estimator, cancel).await;
        let after = size(&result.history);
        events.record(Record::Compaction { how: result.how.to_owned(), history: result.history.clone(), ts: now_ms() });
        self.history = result.history;
        self.compacted_at = Some(self.history.len());
        let _ = events.send(AgentEvent::Notice(format!(
            "compacted the conversation ({}): about {before} → {after} tokens",
            result.how
        )));
    }

    /// What the session has cost so far, if the model's prices are known.
    pub fn spent(&self) -> Option<f64> {
        cost(self.usage.lock().map(|u| *u).unwrap_or_default(), &self.settings.model)
    }

    /// Stops before a request whose prompt alone would take the session past
    /// `max_cost`, with the same prompt estimate compaction uses.
    fn over_budget(&self, chars: usize) -> Option<Outcome> {
        let limit = self.settings.max_cost?;
        let spent = self.spent()?;
        let next = self.estimator.tokens(chars) as f64 * self.settings.model.input_price.unwrap_or(0.0) / 1e6;
        (spent + next > limit).then_some(Outcome::BudgetReached { spent, limit })
    }
}

/// USD for `usage` at the model's prices; `None` when a price is unknown.
pub fn cost(usage: Usage, model: &ModelInfo) -> Option<f64> {
    let input = model.input_price?;
    let output = model.output_price?;
    Some((usage.input_tokens as f64 * input + usage.output_tokens as f64 * output) / 1e6)
}

#[cfg(test)]
mod tests;
