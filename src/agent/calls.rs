//! Running one reply's tool calls: each passes the shape gate, the
//! permission step and the approval policy; consecutive read-only calls run
//! together; results go back in the order the model made the calls, and
//! every call gets one, whatever happened to it.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::policy::{Verdict, judge};
use super::protocol::{AgentEvent, ApprovalRequest, CallInfo, CallStatus, Decision};
use super::{Agent, EventTx};
use crate::provider::{Block, ToolCall, ToolResult};
use crate::tools::{Effect, FileChange, Plan, Tool, ToolContext, ToolOutput};

struct Ready<'r> {
    index: usize,
    info: CallInfo,
    tool: &'r dyn Tool,
    args: Value,
    plan: Plan,
}

pub(super) async fn run_all(
    agent: &mut Agent,
    calls: &[ToolCall],
    events: &EventTx,
    cancel: &CancellationToken,
) -> Vec<Block> {
    let registry = agent.registry.clone();
    let ctx = agent.ctx.clone();
    let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
    let mut reads: Vec<Ready> = Vec::new();

    // Front ends learn of every call first, so they can show what waits.
    let infos: Vec<CallInfo> = calls
        .iter()
        .map(|call| CallInfo { id: call.id.clone(), name: call.name.clone(), arguments: call.arguments.clone() })
        .collect();
    for info in &infos {
        let _ = events.send(AgentEvent::ToolCall { call: info.clone() });
    }
    for (index, (call, info)) in calls.iter().zip(infos).enumerate() {
        if cancel.is_cancelled() {
            results[index] = Some(finish(events, info, None, CallStatus::Interrupted, not_run(), Duration::ZERO));
            continue;
        }
        // Gate 1: the tool exists and the arguments have the right shape.
        let (tool, args) = match registry.prepare(&call.name, &call.arguments) {
            Ok(ready) => ready,
            Err(message) => {
                results[index] =
                    Some(finish(events, info, None, CallStatus::Error, ToolOutput::error(message), Duration::ZERO));
                continue;
            }
        };
        // Gate 2: the call makes sense in this workspace; this also builds the preview.
        let plan = match tool.plan(&args, &ctx) {
            Ok(plan) => plan,
            Err(message) => {
                results[index] =
                    Some(finish(events, info, None, CallStatus::Error, ToolOutput::error(message), Duration::ZERO));
                continue;
            }
        };
        let ready = Ready { index, info, tool, args, plan };
        let finding = match &ready.plan.effect {
            Effect::Command { command } => ctx.analyze(command),
            _ => None,
        };
        let verdict =
            judge(agent.settings.approval, tool.name(), &ready.plan.effect, &agent.settings.rules, finding.as_ref());
        if verdict == Verdict::Allow && ready.plan.effect == Effect::Read {
            reads.push(ready);
            continue;
        }
        // Anything else runs alone, after the reads before it.
        run_reads(std::mem::take(&mut reads), &ctx, events, cancel, &mut results).await;
        let index = ready.index;
        let ask_finding = finding.filter(|f| matches!(f, crate::safety::Finding::Ask { .. }));
        results[index] = Some(decide_and_run(agent, ready, verdict, ask_finding, &ctx, events, cancel).await);
    }
    run_reads(reads, &ctx, events, cancel, &mut results).await;

    results
        .into_iter()
        .zip(calls)
        .map(|(result, call)| {
            // Every slot is filled above; this keeps the conversation valid if one is not.
            Block::ToolResult(result.unwrap_or_else(|| ToolResult {
                call_id: call.id.clone(),
                content: not_run().content,
                is_error: true,
            }))
        })
        .collect()
}

async fn run_reads(
    reads: Vec<Ready<'_>>,
    ctx: &ToolContext,
    events: &EventTx,
    cancel: &CancellationToken,
    results: &mut [Option<ToolResult>],
) {
    let runs = reads.into_iter().map(|ready| async move {
        let index = ready.index;
        let target = ready.plan.target.clone();
        let _ = events.send(AgentEvent::ToolStarted { id: ready.info.id.clone(), target: target.clone() });
        let started = Instant::now();
        let output = ready.tool.execute(&ready.args, ready.plan, ctx, cancel.clone()).await;
        (index, ready.info, target, output, started.elapsed())
    });
    for (index, info, target, output, elapsed) in join_all(runs).await {
        let status = status_of(&output, cancel);
        results[index] = Some(finish(events, info, Some(target), status, output, elapsed));
    }
}

#[allow(clippy::too_many_arguments)]
async fn decide_and_run(
    agent: &mut Agent,
    ready: Ready<'_>,
    verdict: Verdict,
    finding: Option<crate::safety::Finding>,
    ctx: &ToolContext,
    events: &EventTx,
    cancel: &CancellationToken,
) -> ToolResult {
    let Ready { info, tool, args, mut plan, .. } = ready;
    let target = Some(plan.target.clone());
    let mut note = None;
    match verdict {
        Verdict::Allow => {}
        Verdict::Deny(reason) => {
            let output = ToolOutput::error(format!("refused: {reason}"));
            return finish(events, info, target, CallStatus::Refused, output, Duration::ZERO);
        }
        Verdict::Ask if !agent.settings.interactive && finding.is_some() => {
            let message = finding.map(|f| f.message()).unwrap_or_default();
            let output = ToolOutput::error(format!(
                "refused: this command {message}; it needs a person's yes in every mode, and nobody can give it in hew exec"
            ));
            return finish(events, info, target, CallStatus::Refused, output, Duration::ZERO);
        }
        Verdict::Ask if !agent.settings.interactive => {
            let output = ToolOutput::error(format!(
                "refused: this {} needs the user's approval, and nobody can give it here (hew exec, approval mode {}). The user can allow it by running hew exec with --approval {}.",
                if matches!(plan.effect, Effect::Command { .. }) { "command" } else { "change" },
                agent.settings.approval.as_str(),
                if matches!(plan.effect, Effect::Command { .. }) { "full-auto" } else { "auto-edit" },
            ));
            return finish(events, info, target, CallStatus::Refused, output, Duration::ZERO);
        }
        Verdict::Ask => {
            let (reply, answer) = oneshot::channel();
            let _ = events.send(AgentEvent::ApprovalRequest(ApprovalRequest {
                call: info.clone(),
                plan: plan.clone(),
                reply,
            }));
            let decision = tokio::select! {
                decision = answer => decision.unwrap_or(Decision::Stop),
                _ = cancel.cancelled() => {
                    return finish(events, info, target, CallStatus::Interrupted, not_run(), Duration::ZERO);
                }
            };
            events.record(crate::session::Record::Decision {
                call_id: info.id.clone(),
                decision: describe(&decision),
                ts: crate::session::record::now_ms(),
            });
            match decision {
                Decision::Approve => {}
                Decision::AllowForSession => match &plan.effect {
                    Effect::Command { command } => agent.settings.rules.allow_line(command),
                    _ => {
                        agent.settings.rules.allow_tools.insert(info.name.clone());
                    }
                },
                Decision::ApproveEdited { content, note: what } => match &mut plan.effect {
                    Effect::Write { change } => {
                        let shown = crate::tools::WorkPath { abs: change.abs.clone(), shown: change.path.clone() };
                        *change = FileChange::new(&shown, change.old.clone(), content);
                        note = Some(what);
                    }
                    _ => note = Some(what),
                },
                Decision::Refuse { reason } => {
                    let mut message = "refused: the user declined this call".to_owned();
                    if let Some(reason) = reason.filter(|r| !r.trim().is_empty()) {
                        message.push_str(&format!(". Their reason: {reason}"));
                    }
                    return finish(
                        events,
                        info,
                        target,
                        CallStatus::Refused,
                        ToolOutput::error(message),
                        Duration::ZERO,
                    );
                }
                Decision::Stop => {
                    cancel.cancel();
                    let output = ToolOutput::error("refused: the user declined this call and stopped the turn");
                    return finish(events, info, target, CallStatus::Refused, output, Duration::ZERO);
                }
            }
        }
    }
    let _ = events.send(AgentEvent::ToolStarted { id: info.id.clone(), target: plan.target.clone() });
    let change = match &plan.effect {
        Effect::Write { change } => Some(change.clone()),
        _ => None,
    };
    let started = Instant::now();
    let mut output = tool.execute(&args, plan, ctx, cancel.clone()).await;
    if let Some(note) = note {
        output.content = format!("The user changed your proposal before applying it: {note}\n{}", output.content);
    }
    let status = status_of(&output, cancel);
    finish_change(events, info, target, status, output, started.elapsed(), change)
}

fn status_of(output: &ToolOutput, cancel: &CancellationToken) -> CallStatus {
    match (output.is_error, cancel.is_cancelled()) {
        (false, _) => CallStatus::Ok,
        (true, true) => CallStatus::Interrupted,
        (true, false) => CallStatus::Error,
    }
}

fn not_run() -> ToolOutput {
    ToolOutput::error("interrupted: the user stopped the turn before this call ran")
}

/// Reports a finished call and turns it into the result the model reads.
fn finish(
    events: &EventTx,
    call: CallInfo,
    target: Option<String>,
    status: CallStatus,
    output: ToolOutput,
    duration: Duration,
) -> ToolResult {
    finish_change(events, call, target, status, output, duration, None)
}

/// [`finish`] for a call that changed a file: the change goes to the front
/// ends, which show it as a diff.
fn finish_change(
    events: &EventTx,
    call: CallInfo,
    target: Option<String>,
    status: CallStatus,
    output: ToolOutput,
    duration: Duration,
    change: Option<FileChange>,
) -> ToolResult {
    let result = ToolResult { call_id: call.id.clone(), content: output.content.clone(), is_error: output.is_error };
    let change = change.filter(|_| status == CallStatus::Ok);
    let _ = events.send(AgentEvent::ToolFinished { call, target, status, output, duration, change });
    result
}

/// A decision in words, for the transcript.
fn describe(decision: &Decision) -> String {
    match decision {
        Decision::Approve => "approved".into(),
        Decision::AllowForSession => "approved and allowed for the session".into(),
        Decision::ApproveEdited { note, .. } => format!("approved with changes: {note}"),
        Decision::Refuse { reason: Some(reason) } => format!("refused: {reason}"),
        Decision::Refuse { reason: None } => "refused".into(),
        Decision::Stop => "refused and stopped the turn".into(),
    }
}
