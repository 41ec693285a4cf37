//! `hew export`: a session as readable Markdown, or its raw records.

use std::fmt::Write;

use serde_json::Value;

use super::record::Record;
use super::store::{Loaded, timestamp};

pub fn markdown(session: &Loaded) -> String {
    let meta = &session.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# hew session {}\n", meta.id);
    let _ = writeln!(
        out,
        "- started: {}\n- folder: `{}`\n- model: {} ({})\n- hew {}\n",
        meta.created, meta.cwd, meta.model, meta.provider, meta.hew_version
    );
    let mut calls: std::collections::HashMap<String, (String, String)> = Default::default();
    for record in &session.records {
        match record {
            Record::User { text, ts } => {
                let _ = writeln!(out, "## You{}\n\n{}\n", when(*ts), text.trim_end());
            }
            Record::Assistant { message, ts } => {
                let text = message.text();
                if !text.trim().is_empty() {
                    let _ = writeln!(out, "## hew{}\n\n{}\n", when(*ts), text.trim_end());
                }
                for call in message.tool_calls() {
                    calls.insert(call.id.clone(), (call.name.clone(), call.arguments.clone()));
                }
            }
            Record::Decision { call_id, decision, .. } => {
                let name = calls.get(call_id).map(|(n, _)| n.as_str()).unwrap_or("call");
                let _ = writeln!(out, "> {name}: {decision}\n");
            }
            Record::ToolResult { call_id, name, status, content, full, target, diff, duration_ms, summary, .. } => {
                let status =
                    serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
                let target = target.as_deref().map(|t| format!(" {t}")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "### `{name}`{target} — {status}, {summary} ({:.1}s)\n",
                    *duration_ms as f64 / 1000.0
                );
                if let Some((_, args)) = calls.get(call_id) {
                    let pretty = serde_json::from_str::<Value>(args)
                        .ok()
                        .and_then(|v| serde_json::to_string_pretty(&v).ok())
                        .unwrap_or_else(|| args.clone());
                    let _ = writeln!(out, "{}\n", fenced("json", &pretty));
                }
                match diff {
                    Some(diff) => {
                        let _ = writeln!(out, "{}\n", fenced("diff", diff));
                    }
                    None => {
                        let _ = writeln!(out, "{}\n", fenced("", full.as_deref().unwrap_or(content)));
                    }
                }
            }
            Record::Error { message, .. } => {
                let _ = writeln!(out, "**Error:** {message}\n");
            }
            Record::Compaction { how, .. } => {
                let _ = writeln!(
                    out,
                    "*the conversation was compacted ({how}); the model saw a shorter version from here*\n"
                );
            }
            Record::Rewind { before_message, .. } => {
                let _ = writeln!(out, "*the user rewound the conversation to before message {before_message}*\n");
            }
            Record::Outcome { outcome, .. } if outcome != "done" => {
                let _ = writeln!(out, "*turn ended: {outcome}*\n");
            }
            _ => {}
        }
    }
    out
}

fn when(ts: u64) -> String {
    if ts == 0 { String::new() } else { format!(" ({})", timestamp(ts / 1000, false)) }
}

/// A fenced block whose fence is longer than any backtick run inside.
fn fenced(lang: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}{lang}\n{}\n{fence}", text.trim_end_matches('\n'))
}
