//! Anthropic Messages: top-level `system`, content blocks, `tool_use` /
//! `tool_result`, and arguments streamed as `input_json_delta`.

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};

use super::http::{Decoder, Wire};
use super::openai::clip;
use super::sse::SseEvent;
use super::{Block, ModelRequest, ProviderError, Role, StopReason, StreamEvent, Usage};

pub const API_VERSION: &str = "2023-06-01";

pub struct Anthropic;

impl Wire for Anthropic {
    fn url(&self, base_url: &str) -> String {
        format!("{}/v1/messages", base_url.trim_end_matches('/'))
    }

    fn headers(&self, api_key: Option<&str>) -> Result<HeaderMap, ProviderError> {
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        if let Some(key) = api_key {
            let mut value = HeaderValue::from_str(key)
                .map_err(|_| ProviderError::Setup("the API key contains characters a header cannot carry".into()))?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Ok(headers)
    }

    fn body(&self, model: &str, request: &ModelRequest, _compat: bool) -> Value {
        let mut body = json!({
            "model": model,
            "max_tokens": request.max_output_tokens,
            "stream": true,
            "system": request.system,
            "messages": encode_messages(request),
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}))
                .collect();
        }
        body
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(AnthropicDecoder::default())
    }
}

/// Encodes the history, dropping empty text (the API refuses it) and merging
/// neighbours of the same role (the API requires alternation).
fn encode_messages(request: &ModelRequest) -> Vec<Value> {
    let mut out: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let blocks: Vec<Value> = message
            .content
            .iter()
            .filter_map(|block| match block {
                Block::Text { text } if text.is_empty() => None,
                Block::Text { text } => Some(json!({"type": "text", "text": text})),
                Block::ToolCall(call) => {
                    // `input` must be an object; a model's malformed arguments
                    // were already answered with an error result.
                    let input = match serde_json::from_str::<Value>(&call.arguments) {
                        Ok(Value::Object(map)) => Value::Object(map),
                        _ => Value::Object(Map::new()),
                    };
                    Some(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}))
                }
                Block::ToolResult(result) => {
                    let mut b =
                        json!({"type": "tool_result", "tool_use_id": result.call_id, "content": result.content});
                    if result.is_error {
                        b["is_error"] = Value::Bool(true);
                    }
                    Some(b)
                }
            })
            .collect();
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((role, existing)) if *role == message.role => existing.extend(blocks),
            _ => out.push((message.role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": content})
        })
        .collect()
}

#[derive(Default)]
struct AnthropicDecoder {
    done: bool,
    stopped: bool,
}

impl Decoder for AnthropicDecoder {
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if event.data.trim().is_empty() {
            return Ok(());
        }
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| ProviderError::Decode(format!("{e} in event {}", clip(&event.data))))?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(&event.event);
        let index = || data.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    out.push(StreamEvent::Usage(read_usage(usage)));
                }
            }
            "content_block_start" => {
                let block = &data["content_block"];
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        let text = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
                        out.push(StreamEvent::ToolCallStart { index: index(), id: text("id"), name: text("name") });
                    }
                    Some("text") => {
                        if let Some(text) = block.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                            out.push(StreamEvent::TextDelta(text.to_owned()));
                        }
                    }
                    _ => {} // thinking and other block kinds are not shown
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(text) = delta.get("text").and_then(Value::as_str) {
                            out.push(StreamEvent::TextDelta(text.to_owned()));
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(json) = delta.get("partial_json").and_then(Value::as_str).filter(|j| !j.is_empty())
                        {
                            out.push(StreamEvent::ToolCallArgs { index: index(), delta: json.to_owned() });
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(usage) = data.get("usage") {
                    out.push(StreamEvent::Usage(read_usage(usage)));
                }
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stopped = true;
                    out.push(StreamEvent::Done(match reason {
                        "end_turn" | "stop_sequence" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" => StopReason::MaxTokens,
                        other => StopReason::Other(other.to_owned()),
                    }));
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let message = data.pointer("/error/message").and_then(Value::as_str).unwrap_or("unknown error");
                let kind = data.pointer("/error/type").and_then(Value::as_str).unwrap_or("error");
                return Err(ProviderError::Api(format!("{kind}: {message}")));
            }
            _ => {} // ping, content_block_stop and future event types
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

/// Anthropic counts cache reads and writes apart from `input_tokens`; hew's
/// `input_tokens` is the whole prompt, with the cached part also given alone.
fn read_usage(usage: &Value) -> Usage {
    let count = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    let cached = count("cache_read_input_tokens");
    Usage {
        input_tokens: count("input_tokens") + cached + count("cache_creation_input_tokens"),
        output_tokens: count("output_tokens"),
        cached_input_tokens: cached,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Message, ToolCall, ToolResult};
    use pretty_assertions::assert_eq;

    #[test]
    fn decodes_a_tool_use_stream() {
        let mut decoder = AnthropicDecoder::default();
        let mut out = Vec::new();
        for data in [
            r#"{"type":"message_start","message":{"usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Writing."}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"write_file","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a\"}"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_stop"}"#,
        ] {
            decoder.decode(&SseEvent { event: String::new(), data: data.into() }, &mut out).unwrap();
        }
        assert_eq!(
            out,
            vec![
                StreamEvent::Usage(Usage { input_tokens: 25, output_tokens: 1, cached_input_tokens: 5 }),
                StreamEvent::TextDelta("Writing.".into()),
                StreamEvent::ToolCallStart { index: 1, id: "toolu_1".into(), name: "write_file".into() },
                StreamEvent::ToolCallArgs { index: 1, delta: "{\"path\": \"a\"}".into() },
                StreamEvent::Usage(Usage { input_tokens: 0, output_tokens: 9, cached_input_tokens: 0 }),
                StreamEvent::Done(StopReason::ToolUse),
            ]
        );
        assert!(decoder.complete());
    }

    #[test]
    fn error_events_are_api_errors() {
        let mut decoder = AnthropicDecoder::default();
        let event = SseEvent {
            event: "error".into(),
            data: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
        };
        assert_eq!(
            decoder.decode(&event, &mut Vec::new()),
            Err(ProviderError::Api("overloaded_error: Overloaded".into()))
        );
    }

    #[test]
    fn encodes_blocks_merges_roles_and_repairs_bad_input() {
        let request = ModelRequest {
            system: "sys".into(),
            messages: vec![
                Message::user_text("go"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        Block::Text { text: String::new() },
                        Block::ToolCall(ToolCall { id: "t1".into(), name: "bash".into(), arguments: "{oops".into() }),
                    ],
                },
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult(ToolResult {
                        call_id: "t1".into(),
                        content: "bad".into(),
                        is_error: true,
                    })],
                },
                Message::user_text("more"),
            ],
            tools: vec![],
            max_output_tokens: 1000,
        };
        assert_eq!(
            Anthropic.body("claude-x", &request, false),
            json!({
                "model": "claude-x",
                "max_tokens": 1000,
                "stream": true,
                "system": "sys",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "go"}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "bad", "is_error": true},
                        {"type": "text", "text": "more"},
                    ]},
                ],
            })
        );
    }
}
