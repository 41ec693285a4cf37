//! Turns a stream of [`StreamEvent`]s into one assistant message.
//!
//! Tool calls arrive in pieces keyed by index (OpenAI sends the id and name
//! once, then argument fragments; Anthropic numbers content blocks). The
//! assembler keeps them in index order, so calls come back in the order the
//! model made them.

use std::collections::BTreeMap;

use super::types::{Block, Message, Role, StopReason, StreamEvent, ToolCall, Usage};

#[derive(Debug, Default)]
pub struct Assembler {
    text: String,
    calls: BTreeMap<usize, ToolCall>,
    usage: Usage,
    stop: Option<StopReason>,
}

/// What one model request produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub message: Message,
    pub usage: Usage,
    pub stop: StopReason,
}

impl Assembler {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta(delta) => self.text.push_str(delta),
            StreamEvent::ToolCallStart { index, id, name } => {
                let call = self.call(*index);
                if !id.is_empty() {
                    call.id = id.clone();
                }
                // Most servers send the name once; some repeat it whole in
                // every chunk, a few split it. Repeats must not double it.
                if !name.is_empty() && call.name != *name {
                    call.name.push_str(name);
                }
            }
            StreamEvent::ToolCallArgs { index, delta } => self.call(*index).arguments.push_str(delta),
            // Providers report usage cumulatively or in parts; keep the largest of each count.
            StreamEvent::Usage(usage) => {
                self.usage.input_tokens = self.usage.input_tokens.max(usage.input_tokens);
                self.usage.output_tokens = self.usage.output_tokens.max(usage.output_tokens);
                self.usage.cached_input_tokens = self.usage.cached_input_tokens.max(usage.cached_input_tokens);
            }
            StreamEvent::Done(reason) => self.stop = Some(reason.clone()),
            StreamEvent::Retry { .. } => *self = Self::default(),
        }
    }

    fn call(&mut self, index: usize) -> &mut ToolCall {
        self.calls.entry(index).or_insert_with(|| ToolCall {
            id: String::new(),
            name: String::new(),
            arguments: String::new(),
        })
    }

    pub fn finish(self) -> Completion {
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(Block::Text { text: self.text });
        }
        for (n, (_, mut call)) in self.calls.into_iter().enumerate() {
            // Some local servers omit ids; the conversation still needs one per call.
            if call.id.is_empty() {
                call.id = format!("call_{n}");
            }
            content.push(Block::ToolCall(call));
        }
        let has_calls = content.iter().any(|b| matches!(b, Block::ToolCall(_)));
        let stop = match self.stop {
            Some(stop) => stop,
            None if has_calls => StopReason::ToolUse,
            None => StopReason::EndTurn,
        };
        Completion { message: Message { role: Role::Assistant, content }, usage: self.usage, stop }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn start(index: usize, id: &str, name: &str) -> StreamEvent {
        StreamEvent::ToolCallStart { index, id: id.into(), name: name.into() }
    }

    fn args(index: usize, delta: &str) -> StreamEvent {
        StreamEvent::ToolCallArgs { index, delta: delta.into() }
    }

    #[test]
    fn interleaved_calls_assemble_by_index_in_order() {
        let mut asm = Assembler::new();
        for event in [
            StreamEvent::TextDelta("Let me ".into()),
            StreamEvent::TextDelta("look.".into()),
            start(1, "b", "grep"),
            start(0, "a", "read_file"),
            args(0, "{\"path\":"),
            args(1, "{\"pattern\":\"x\"}"),
            args(0, "\"a.rs\"}"),
            StreamEvent::Usage(Usage { input_tokens: 10, output_tokens: 0, cached_input_tokens: 0 }),
            StreamEvent::Usage(Usage { input_tokens: 0, output_tokens: 7, cached_input_tokens: 0 }),
        ] {
            asm.push(&event);
        }
        let done = asm.finish();
        assert_eq!(done.message.text(), "Let me look.");
        let calls: Vec<_> = done.message.tool_calls().cloned().collect();
        assert_eq!(
            calls,
            vec![
                ToolCall { id: "a".into(), name: "read_file".into(), arguments: "{\"path\":\"a.rs\"}".into() },
                ToolCall { id: "b".into(), name: "grep".into(), arguments: "{\"pattern\":\"x\"}".into() },
            ]
        );
        assert_eq!(done.usage, Usage { input_tokens: 10, output_tokens: 7, cached_input_tokens: 0 });
        assert_eq!(done.stop, StopReason::ToolUse);
    }

    #[test]
    fn arguments_before_start_and_missing_ids_still_make_a_call() {
        let mut asm = Assembler::new();
        asm.push(&args(0, "{}"));
        asm.push(&start(0, "", "glob"));
        let done = asm.finish();
        let call = done.message.tool_calls().next().cloned();
        assert_eq!(call, Some(ToolCall { id: "call_0".into(), name: "glob".into(), arguments: "{}".into() }));
    }

    #[test]
    fn reset_discards_a_broken_attempt() {
        let mut asm = Assembler::new();
        asm.push(&StreamEvent::TextDelta("partial".into()));
        asm.push(&start(0, "x", "bash"));
        asm.push(&StreamEvent::Retry { attempt: 1, delay: std::time::Duration::ZERO, reason: "cut".into() });
        asm.push(&StreamEvent::TextDelta("whole".into()));
        asm.push(&StreamEvent::Done(StopReason::EndTurn));
        let done = asm.finish();
        assert_eq!(done.message.content, vec![Block::Text { text: "whole".into() }]);
        assert_eq!(done.stop, StopReason::EndTurn);
    }

    #[test]
    fn a_stream_that_never_reports_usage_counts_zero() {
        let mut asm = Assembler::new();
        asm.push(&StreamEvent::TextDelta("hi".into()));
        asm.push(&StreamEvent::Done(StopReason::EndTurn));
        assert_eq!(asm.finish().usage, Usage::default());
    }
}
