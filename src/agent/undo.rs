//! `/undo`: puts back the files of the latest turn that changed files,
//! each shown as a diff for approval, and tells the model in the next
//! message. Refuses when a file changed outside hew since.

use serde_json::json;
use tokio::sync::oneshot;

use super::protocol::{AgentEvent, ApprovalRequest, CallInfo, Decision};
use super::{Agent, EventTx};
use crate::tools::checkpoint::Restore;
use crate::tools::{Effect, FileChange, Plan, WorkPath};

/// `/rewind N`: the conversation goes back to just before the person's
/// N-th message, and the files changed since go back with it.
pub(super) async fn rewind(agent: &mut Agent, events: &EventTx, message: usize) {
    let starts = crate::provider::prompt_starts(&agent.history);
    let Some(&cut) = message.checked_sub(1).and_then(|i| starts.get(i)) else {
        let _ = events.send(AgentEvent::Notice(format!(
            "there is no message {message} to rewind to (this conversation has {})",
            starts.len()
        )));
        return;
    };
    let restores = match agent.ctx.checkpoints.plan_since(message) {
        Ok(restores) => restores,
        Err(message) => {
            let _ = events.send(AgentEvent::Notice(format!("rewind refused: {message}")));
            return;
        }
    };
    let restored = put_back_all(agent, events, &restores, &format!("rewind-{message}")).await;
    if restored.len() < restores.len() {
        let _ = events.send(AgentEvent::Notice(
            "rewind stopped: not every file was restored, so the conversation is unchanged".into(),
        ));
        return;
    }
    agent.ctx.checkpoints.drop_since(message);
    agent.history.truncate(cut);
    events.record(crate::session::Record::Rewind { before_message: message, ts: crate::session::record::now_ms() });
    let files = if restored.is_empty() {
        "no files needed restoring".to_owned()
    } else {
        format!("restored {}", restored.join(", "))
    };
    let _ = events.send(AgentEvent::Notice(format!("rewound to before message {message}; {files}")));
}

/// Shows each restore for approval (when someone can approve) and carries
/// out the approved ones; returns the files put back.
async fn put_back_all(agent: &Agent, events: &EventTx, restores: &[Restore], tag: &str) -> Vec<String> {
    let mut done = Vec::new();
    for (i, restore) in restores.iter().enumerate() {
        let path = WorkPath { abs: restore.abs.clone(), shown: restore.path.clone() };
        let change = FileChange::new(&path, Some(restore.current.clone()), restore.before.clone().unwrap_or_default());
        let approved = if agent.settings.interactive {
            let call = CallInfo {
                id: format!("{tag}-{i}"),
                name: "undo".into(),
                arguments: json!({"path": restore.path}).to_string(),
            };
            let what = if restore.before.is_none() { "delete (hew created it)" } else { "restore" };
            let plan = Plan { effect: Effect::Write { change }, target: format!("{} — {what}", restore.path) };
            let (reply, answer) = oneshot::channel();
            let _ = events.send(AgentEvent::ApprovalRequest(ApprovalRequest { call, plan, reply }));
            matches!(answer.await, Ok(Decision::Approve | Decision::AllowForSession | Decision::ApproveEdited { .. }))
        } else {
            true
        };
        if !approved {
            continue;
        }
        match put_back(restore) {
            Ok(()) => done.push(restore.path.clone()),
            Err(message) => {
                let _ = events.send(AgentEvent::Notice(format!("undo of {} failed: {message}", restore.path)));
            }
        }
    }
    done
}

pub(super) async fn undo(agent: &mut Agent, events: &EventTx) {
    let (turn, restores) = match agent.ctx.checkpoints.plan_undo() {
        Ok(Some(plan)) => plan,
        Ok(None) => {
            let _ =
                events.send(AgentEvent::Notice("nothing to undo: hew has not changed any file in this session".into()));
            return;
        }
        Err(message) => {
            let _ = events.send(AgentEvent::Notice(format!("undo refused: {message}")));
            return;
        }
    };
    let undone = put_back_all(agent, events, &restores, &format!("undo-{turn}")).await;
    if undone.is_empty() {
        let _ = events.send(AgentEvent::Notice("nothing was undone".into()));
        return;
    }
    agent.ctx.checkpoints.drop_since(turn);
    let list = undone.join(", ");
    let _ = events.send(AgentEvent::Notice(format!("undone: {list}")));
    agent.note = Some(format!(
        "[Note from hew: the user undid your file changes of an earlier turn; these files are back as they were before it: {list}. Read them again before editing them.]"
    ));
}

fn put_back(restore: &Restore) -> Result<(), String> {
    let now = std::fs::read(&restore.abs).ok();
    if now.as_deref() != Some(restore.current.as_bytes()) {
        return Err(format!("{} changed while the undo waited for approval; left as it is", restore.path));
    }
    match &restore.before {
        Some(before) => {
            crate::tools::files::atomic_write(&restore.abs, before.as_bytes()).map(|_| ()).map_err(|e| e.to_string())
        }
        None => std::fs::remove_file(&restore.abs).map_err(|e| e.to_string()),
    }
}
