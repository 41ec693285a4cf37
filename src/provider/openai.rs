//! OpenAI Chat Completions, the format nearly every server speaks
//! (OpenAI, OpenRouter, DeepSeek, Groq, vLLM, llama.cpp, LM Studio, Ollama).

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::http::{Decoder, Wire};
use super::sse::SseEvent;
use super::{Block, ModelRequest, ProviderError, Role, StopReason, StreamEvent, Usage};

pub struct OpenAi;

impl Wire for OpenAi {
    fn url(&self, base_url: &str) -> String {
        format!("{}/chat/completions", base_url.trim_end_matches('/'))
    }

    fn headers(&self, api_key: Option<&str>) -> Result<HeaderMap, ProviderError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
                .map_err(|_| ProviderError::Setup("the API key contains characters a header cannot carry".into()))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(headers)
    }

    fn body(&self, model: &str, request: &ModelRequest, compat: bool) -> Value {
        let mut body = json!({
            "model": model,
            "stream": true,
            "messages": encode_messages(request),
        });
        if !compat {
            body["stream_options"] = json!({ "include_usage": true });
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}}))
                .collect();
        }
        body
    }

    fn refuses_extension(&self, message: &str) -> bool {
        let message = message.to_ascii_lowercase();
        message.contains("stream_options") || message.contains("include_usage")
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(OpenAiDecoder::default())
    }
}

fn encode_messages(request: &ModelRequest) -> Vec<Value> {
    let mut out = vec![json!({"role": "system", "content": request.system})];
    for message in &request.messages {
        match message.role {
            Role::User => {
                // Tool results must directly follow the assistant's calls.
                let mut text = String::new();
                for block in &message.content {
                    match block {
                        Block::ToolResult(result) => out.push(json!({
                            "role": "tool",
                            "tool_call_id": result.call_id,
                            "content": result.content,
                        })),
                        Block::Text { text: t } => text.push_str(t),
                        Block::ToolCall(_) => {}
                    }
                }
                if !text.is_empty() {
                    out.push(json!({"role": "user", "content": text}));
                }
            }
            Role::Assistant => {
                let text = message.text();
                let calls: Vec<Value> = message
                    .tool_calls()
                    .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                    .collect();
                if text.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut m = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { Value::String(text) }});
                if !calls.is_empty() {
                    m["tool_calls"] = Value::Array(calls);
                }
                out.push(m);
            }
        }
    }
    out
}

#[derive(Default)]
struct OpenAiDecoder {
    done: bool,
    stopped: bool,
}

impl Decoder for OpenAiDecoder {
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|e| ProviderError::Decode(format!("{e} in chunk {}", clip(data))))?;
        if let Some(error) = chunk.get("error") {
            let message =
                error.get("message").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| error.to_string());
            return Err(ProviderError::Api(message));
        }
        if let Some(choice) = chunk.pointer("/choices/0") {
            let delta = &choice["delta"];
            if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                out.push(StreamEvent::TextDelta(text.to_owned()));
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    let index = call.get("index").and_then(Value::as_u64).map_or(position, |i| i as usize);
                    let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
                    let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or_default();
                    if !id.is_empty() || !name.is_empty() {
                        out.push(StreamEvent::ToolCallStart { index, id: id.to_owned(), name: name.to_owned() });
                    }
                    let arguments = call.pointer("/function/arguments");
                    // A few servers send the arguments as an object rather than a string.
                    let arguments = match arguments {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Null) | None => String::new(),
                        Some(other) => other.to_string(),
                    };
                    if !arguments.is_empty() {
                        out.push(StreamEvent::ToolCallArgs { index, delta: arguments });
                    }
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.stopped = true;
                out.push(StreamEvent::Done(match reason {
                    "stop" => StopReason::EndTurn,
                    "tool_calls" | "function_call" => StopReason::ToolUse,
                    "length" => StopReason::MaxTokens,
                    other => StopReason::Other(other.to_owned()),
                }));
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |p: &str| usage.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            out.push(StreamEvent::Usage(Usage {
                input_tokens: count("/prompt_tokens"),
                output_tokens: count("/completion_tokens"),
                cached_input_tokens: count("/prompt_tokens_details/cached_tokens"),
            }));
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.done
    }

    fn may_end(&self) -> bool {
        self.done || self.stopped
    }
}

pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Message, ToolCall, ToolResult, ToolSpec};
    use pretty_assertions::assert_eq;

    fn decode_all(lines: &[&str]) -> (Vec<StreamEvent>, OpenAiDecoder) {
        let mut decoder = OpenAiDecoder::default();
        let mut out = Vec::new();
        for data in lines {
            decoder.decode(&SseEvent { event: String::new(), data: (*data).into() }, &mut out).unwrap();
        }
        (out, decoder)
    }

    #[test]
    fn decodes_text_tool_calls_finish_and_usage() {
        let (events, decoder) = decode_all(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":4}}}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::TextDelta("Hi".into()),
                StreamEvent::ToolCallStart { index: 0, id: "call_1".into(), name: "bash".into() },
                StreamEvent::ToolCallArgs { index: 0, delta: "{\"command\":".into() },
                StreamEvent::Done(StopReason::ToolUse),
                StreamEvent::Usage(Usage { input_tokens: 12, output_tokens: 5, cached_input_tokens: 4 }),
            ]
        );
        assert!(decoder.complete());
    }

    #[test]
    fn an_error_chunk_becomes_an_api_error() {
        let mut decoder = OpenAiDecoder::default();
        let event = SseEvent { event: String::new(), data: r#"{"error":{"message":"overloaded"}}"#.into() };
        assert_eq!(decoder.decode(&event, &mut Vec::new()), Err(ProviderError::Api("overloaded".into())));
    }

    #[test]
    fn garbage_is_a_decode_error_not_a_panic() {
        let mut decoder = OpenAiDecoder::default();
        let event = SseEvent { event: String::new(), data: "{not json".into() };
        assert!(matches!(decoder.decode(&event, &mut Vec::new()), Err(ProviderError::Decode(_))));
    }

    #[test]
    fn encodes_history_with_tool_results_after_calls() {
        let request = ModelRequest {
            system: "sys".into(),
            messages: vec![
                Message::user_text("do it"),
                Message {
                    role: Role::Assistant,
                    content: vec![Block::ToolCall(ToolCall {
                        id: "c1".into(),
                        name: "bash".into(),
                        arguments: "{\"command\":\"ls\"}".into(),
                    })],
                },
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult(ToolResult {
                        call_id: "c1".into(),
                        content: "a.txt".into(),
                        is_error: false,
                    })],
                },
            ],
            tools: vec![ToolSpec { name: "bash".into(), description: "run".into(), schema: json!({"type": "object"}) }],
            max_output_tokens: 100,
        };
        let body = OpenAi.body("gpt-x", &request, false);
        assert_eq!(
            body,
            json!({
                "model": "gpt-x",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "do it"},
                    {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
                ],
                "tools": [{"type": "function", "function": {"name": "bash", "description": "run", "parameters": {"type": "object"}}}],
            })
        );
        assert!(OpenAi.body("gpt-x", &request, true).get("stream_options").is_none());
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use crate::provider::sse::SseParser;
    use proptest::prelude::*;

    proptest! {
        /// Arbitrary bytes from a server never panic the parser or either decoder.
        #[test]
        fn garbage_streams_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), json_ish in "[{}\\[\\]\":,a-z0-9 ]{0,200}") {
            let mut parser = SseParser::new();
            let mut events = Vec::new();
            parser.feed(&bytes, &mut events);
            parser.feed(format!("data: {json_ish}\n\n").as_bytes(), &mut events);
            parser.finish(&mut events);
            let mut out = Vec::new();
            let mut openai = OpenAi.decoder();
            let mut anthropic = crate::provider::anthropic::Anthropic.decoder();
            for event in &events {
                let _ = openai.decode(event, &mut out);
                let _ = anthropic.decode(event, &mut out);
            }
            let mut asm = crate::provider::Assembler::new();
            for event in &out {
                asm.push(event);
            }
            let _ = asm.finish();
        }
    }
}
