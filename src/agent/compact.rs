//! Keeping long sessions inside the context window. The prompt is
//! estimated before each request (characters per token, corrected by what
//! the provider reports); near the limit the conversation is compacted in
//! stages: old tool outputs are shortened, then older turns are summarised
//! by the model, recent turns kept verbatim. A tool call never loses its
//! result. When the summary cannot be made (the request fails or would not
//! fit), a deterministic extract stands in: compaction always makes
//! progress. The transcript keeps everything; only the model's view shrinks.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::provider::{Assembler, Block, Message, ModelRequest, Provider, Role, StreamEvent};

/// Start compacting when the estimate passes this share of the window.
pub const TRIGGER: f64 = 0.80;
/// Compaction aims below this share.
const TARGET: f64 = 0.50;
/// Turns (the person's messages and what followed) kept verbatim.
const KEEP_TURNS: usize = 2;

/// Tokens from characters: 3.5 characters a token until the provider's
/// reported usage says otherwise.
#[derive(Debug, Clone, Copy)]
pub struct Estimator {
    tokens_per_char: f64,
}

impl Default for Estimator {
    fn default() -> Self {
        Estimator { tokens_per_char: 1.0 / 3.5 }
    }
}

impl Estimator {
    pub fn tokens(&self, chars: usize) -> u64 {
        (chars as f64 * self.tokens_per_char).ceil() as u64
    }

    /// Learns from a request of `chars` characters that the provider
    /// counted as `reported` input tokens.
    pub fn correct(&mut self, chars: usize, reported: u64) {
        if chars > 1000 && reported > 0 {
            self.tokens_per_char = (reported as f64 / chars as f64).clamp(0.1, 1.0);
        }
    }
}

/// The part of every request that compaction cannot shrink.
pub fn fixed_chars(system: &str, tools: &[crate::provider::ToolSpec]) -> usize {
    system.len() + tools.iter().map(|t| t.name.len() + t.description.len() + t.schema.to_string().len()).sum::<usize>()
}

pub fn messages_chars(messages: &[Message]) -> usize {
    messages.iter().map(message_chars).sum()
}

fn message_chars(message: &Message) -> usize {
    message
        .content
        .iter()
        .map(|b| match b {
            Block::Text { text } => text.len(),
            Block::ToolCall(c) => c.name.len() + c.arguments.len() + 16,
            Block::ToolResult(r) => r.content.len() + 16,
        })
        .sum::<usize>()
        + 8
}

/// Stage 1: tool outputs before `before` keep their head and tail only.
/// Returns how many characters were saved.
pub fn shorten_outputs(history: &mut [Message], before: usize, keep: usize) -> usize {
    let mut saved = 0;
    for message in history.iter_mut().take(before) {
        for block in &mut message.content {
            if let Block::ToolResult(result) = block
                && result.content.len() > keep * 2 + 200
            {
                let head_end = crate::tools::files::floor_char_boundary(&result.content, keep);
                let mut tail_start = result.content.len() - keep;
                while !result.content.is_char_boundary(tail_start) {
                    tail_start += 1;
                }
                let cut = tail_start - head_end;
                let shortened = format!(
                    "{}\n[... {cut} characters removed when the conversation was compacted ...]\n{}",
                    &result.content[..head_end],
                    &result.content[tail_start..]
                );
                saved += result.content.len().saturating_sub(shortened.len());
                result.content = shortened;
            }
        }
    }
    saved
}

/// The conversation as plain text, for the summary request. Tool outputs
/// are cut to their first lines: the summary needs what happened, not bytes.
fn as_text(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        for block in &message.content {
            match (message.role, block) {
                (Role::User, Block::Text { text }) => out.push_str(&format!("USER: {text}\n\n")),
                (Role::Assistant, Block::Text { text }) => out.push_str(&format!("ASSISTANT: {text}\n\n")),
                (_, Block::ToolCall(call)) => {
                    out.push_str(&format!("TOOL CALL {}: {}\n", call.name, clip(&call.arguments, 400)))
                }
                (_, Block::ToolResult(result)) => {
                    let tag = if result.is_error { "TOOL ERROR" } else { "TOOL RESULT" };
                    out.push_str(&format!("{tag}: {}\n\n", clip(&result.content, 600)));
                }
            }
        }
    }
    out
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

const SUMMARY_SYSTEM: &str = "You write the working memory of a coding assistant whose conversation grew too long. \
Summarise the conversation below so the assistant can continue the work without it. Keep: the user's goals and \
requests (in their words where it matters), decisions made and why, every file read, created or changed (with what \
changed), commands run and their important results, errors still open, and what was about to happen next. Be \
concrete and brief; use short bullet lists. Do not invent anything.";

/// The deterministic stand-in when no summary can be had: the person's
/// messages, the files the tools touched, the errors, and the last answer.
pub fn extract(messages: &[Message]) -> String {
    let mut asks = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut errors = Vec::new();
    let mut last_answer = String::new();
    for message in messages {
        for block in &message.content {
            match (message.role, block) {
                (Role::User, Block::Text { text }) => asks.push(format!("- {}", clip(text.trim(), 300))),
                (Role::Assistant, Block::Text { text }) if !text.trim().is_empty() => {
                    last_answer = clip(text.trim(), 600)
                }
                (_, Block::ToolCall(call)) => {
                    if let Ok(args) = serde_json::from_str::<Value>(&call.arguments)
                        && let Some(path) = args.get("path").and_then(Value::as_str)
                    {
                        let entry = format!("{} ({})", path, call.name);
                        if !files.contains(&entry) {
                            files.push(entry);
                        }
                    }
                }
                (_, Block::ToolResult(result)) if result.is_error => {
                    errors.push(format!("- {}", clip(result.content.lines().next().unwrap_or(""), 200)))
                }
                _ => {}
            }
        }
    }
    let mut out = String::from("(An automatic extract; the summary could not be made.)\n\nThe user asked:\n");
    out.push_str(&asks.join("\n"));
    if !files.is_empty() {
        out.push_str("\n\nFiles the tools touched:\n");
        out.push_str(&files.iter().map(|f| format!("- {f}")).collect::<Vec<_>>().join("\n"));
    }
    if !errors.is_empty() {
        out.push_str("\n\nErrors seen:\n");
        out.push_str(&errors.iter().rev().take(10).rev().cloned().collect::<Vec<_>>().join("\n"));
    }
    if !last_answer.is_empty() {
        out.push_str(&format!("\n\nThe last answer was:\n{last_answer}"));
    }
    out
}

/// What compaction did.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    pub history: Vec<Message>,
    /// The summary message that replaced the older turns, if any.
    pub summary: Option<String>,
    /// How many messages at the end were kept verbatim after the summary.
    pub kept: usize,
    pub how: &'static str,
}

/// Compacts `history` so that a request of it fits well inside `window`
/// tokens. `fixed` is the part of each request that does not shrink
/// (system prompt and tools).
pub async fn compact(
    provider: &dyn Provider,
    history: &[Message],
    fixed: usize,
    window: u64,
    estimator: Estimator,
    cancel: &CancellationToken,
) -> Compacted {
    let fits = |h: &[Message]| estimator.tokens(fixed + messages_chars(h)) as f64 <= window as f64 * TARGET;
    let starts = crate::provider::prompt_starts(history);
    let keep_from = starts.len().checked_sub(KEEP_TURNS).and_then(|i| starts.get(i)).copied().unwrap_or(0);

    // Stage 1: shorten old tool outputs.
    let mut shortened = history.to_vec();
    shorten_outputs(&mut shortened, keep_from, 1000);
    if fits(&shortened) {
        return Compacted {
            kept: shortened.len(),
            history: shortened,
            summary: None,
            how: "shortened old tool outputs",
        };
    }

    // Stage 2: summarise everything before the kept turns. With fewer turns
    // than that, keep only the latest one; with one, its outputs shrink hard.
    let keep_from = if keep_from == 0 { starts.last().copied().unwrap_or(0) } else { keep_from };
    if keep_from == 0 {
        let mut all = history.to_vec();
        let len = all.len();
        shorten_outputs(&mut all, len, 300);
        return Compacted { kept: all.len(), history: all, summary: None, how: "shortened every tool output" };
    }
    let (old, recent) = history.split_at(keep_from);
    let text = as_text(old);
    let budget_chars = ((window as f64 * 0.4) / estimator.tokens(1).max(1) as f64) as usize;
    let (summary, how) = match summarise(provider, &text, budget_chars.max(4000), cancel).await {
        Some(summary) => (summary, "summarised older turns"),
        None => (extract(old), "replaced older turns with an extract"),
    };
    let summary =
        format!("[Summary of the earlier conversation, made by hew when the context window filled up]\n\n{summary}");
    let mut history = vec![Message::user_text(summary.clone())];
    history.extend_from_slice(recent);
    // If the kept turns alone are still too big, their outputs shrink too.
    if !fits(&history) {
        let len = history.len();
        shorten_outputs(&mut history, len, 500);
    }
    Compacted { kept: recent.len(), history, summary: Some(summary), how }
}

/// Asks the model for a summary, in chunks when the text is too big for
/// one request. `None` when any request fails.
async fn summarise(
    provider: &dyn Provider,
    text: &str,
    chunk_chars: usize,
    cancel: &CancellationToken,
) -> Option<String> {
    let mut parts = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = crate::tools::files::floor_char_boundary(rest, chunk_chars.min(rest.len()));
        let cut = if cut == 0 { rest.len() } else { cut };
        let (chunk, tail) = rest.split_at(cut);
        parts.push(ask(provider, chunk, cancel).await?);
        rest = tail;
        if parts.len() > 20 {
            return None; // a conversation this large is better served by the extract
        }
    }
    Some(parts.join("\n\n"))
}

async fn ask(provider: &dyn Provider, text: &str, cancel: &CancellationToken) -> Option<String> {
    let request = ModelRequest {
        system: SUMMARY_SYSTEM.to_owned(),
        messages: vec![Message::user_text(format!("The conversation so far:\n\n{text}\n\nWrite the summary now."))],
        tools: Vec::new(),
        max_output_tokens: 4096,
    };
    let mut assembler = Assembler::new();
    let mut sink = |event: StreamEvent| assembler.push(&event);
    provider.stream(&request, &mut sink, cancel).await.ok()?;
    let text = assembler.finish().message.text();
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ToolCall, ToolResult};

    fn turn(n: usize, output: &str) -> Vec<Message> {
        vec![
            Message::user_text(format!("request {n}")),
            Message {
                role: Role::Assistant,
                content: vec![Block::ToolCall(ToolCall {
                    id: format!("c{n}"),
                    name: "read_file".into(),
                    arguments: format!("{{\"path\":\"src/f{n}.rs\"}}"),
                })],
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult(ToolResult {
                    call_id: format!("c{n}"),
                    content: output.into(),
                    is_error: n == 1,
                })],
            },
            Message { role: Role::Assistant, content: vec![Block::Text { text: format!("answer {n}") }] },
        ]
    }

    #[test]
    fn shortening_keeps_head_and_tail_and_never_drops_results() {
        let big = format!("{}{}", "a".repeat(5000), "z".repeat(5000));
        let mut history: Vec<Message> = (0..3).flat_map(|n| turn(n, &big)).collect();
        let before = history.clone();
        let saved = shorten_outputs(&mut history, 8, 1000);
        assert!(saved > 14_000, "{saved}");
        assert_eq!(history.len(), before.len());
        let Block::ToolResult(r) = &history[2].content[0] else { panic!() };
        assert!(
            r.content.starts_with("aaa")
                && r.content.ends_with("zzz")
                && r.content.contains("removed when the conversation was compacted")
        );
        assert_eq!(history[10], before[10], "the kept turn is untouched");
    }

    #[test]
    fn the_extract_names_asks_files_errors_and_the_last_answer() {
        let history: Vec<Message> = (0..3).flat_map(|n| turn(n, "boom: it failed\nmore")).collect();
        let text = extract(&history);
        assert!(text.contains("- request 0") && text.contains("- request 2"));
        assert!(text.contains("- src/f1.rs (read_file)"));
        assert!(text.contains("Errors seen:\n- boom: it failed"));
        assert!(text.ends_with("The last answer was:\nanswer 2"));
    }

    #[test]
    fn the_estimate_learns_from_reported_usage() {
        let mut e = Estimator::default();
        assert_eq!(e.tokens(3500), 1000);
        e.correct(10_000, 5_000);
        assert_eq!(e.tokens(3500), 1750);
        e.correct(10, 5_000); // too small a sample to learn from
        assert_eq!(e.tokens(3500), 1750);
    }
}
