//! A scripted model provider on loopback for tests: speaks both wire
//! formats, streams SSE in small chunks, can answer errors, delays and cut
//! streams, and records every request it receives.
#![allow(dead_code)]

pub mod env;

/// A process's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

/// What the model "says" in one reply.
#[derive(Debug, Clone)]
pub struct Turn {
    pub text: String,
    pub calls: Vec<(String, String, String)>,
}

impl Turn {
    pub fn text(text: &str) -> Self {
        Turn { text: text.into(), calls: vec![] }
    }

    /// A reply with one tool call whose arguments are `args` (a JSON value).
    pub fn call(id: &str, name: &str, args: Value) -> Self {
        Turn { text: String::new(), calls: vec![(id.into(), name.into(), args.to_string())] }
    }

    /// A call with raw argument text, which need not be JSON.
    pub fn raw_call(id: &str, name: &str, raw: &str) -> Self {
        Turn { text: String::new(), calls: vec![(id.into(), name.into(), raw.into())] }
    }

    pub fn and_call(mut self, id: &str, name: &str, args: Value) -> Self {
        self.calls.push((id.into(), name.into(), args.to_string()));
        self
    }

    pub fn with_text(mut self, text: &str) -> Self {
        self.text = text.into();
        self
    }
}

#[derive(Debug, Clone)]
pub enum Step {
    Reply(Turn),
    /// An HTTP error status with a body and extra headers.
    Status(u16, String, Vec<(String, String)>),
    /// The reply's stream, cut off after `keep` bytes (no terminal event).
    Cut(Turn, usize),
    /// Waits before answering with the inner step.
    Delay(Duration, Box<Step>),
    /// Streams the reply's start, then stalls for the given time before the rest.
    Stall(Turn, Duration),
}

pub fn reply(turn: Turn) -> Step {
    Step::Reply(turn)
}

pub fn status(code: u16, body: &str) -> Step {
    Step::Status(code, body.into(), vec![])
}

/// One received request.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

pub struct Server {
    pub addr: SocketAddr,
    pub wire: Wire,
    script: Arc<Mutex<VecDeque<Step>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    _runtime: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Starts on its own thread and runtime, so blocking tests (assert_cmd)
    /// and async tests can both use it.
    pub fn start(wire: Wire, steps: Vec<Step>) -> Server {
        let script = Arc::new(Mutex::new(VecDeque::from(steps)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        std_listener.set_nonblocking(true).unwrap();
        let addr = std_listener.local_addr().unwrap();
        let (s, r) = (script.clone(), requests.clone());
        let handle = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = TcpListener::from_std(std_listener).unwrap();
                loop {
                    let Ok((socket, _)) = listener.accept().await else { break };
                    let (s, r) = (s.clone(), r.clone());
                    tokio::spawn(async move {
                        let _ = serve(socket, wire, s, r).await;
                    });
                }
            });
        });
        Server { addr, wire, script, requests, _runtime: Some(handle) }
    }

    pub fn base_url(&self) -> String {
        match self.wire {
            Wire::OpenAi => format!("http://{}/v1", self.addr),
            Wire::Anthropic => format!("http://{}", self.addr),
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn remaining(&self) -> usize {
        self.script.lock().unwrap().len()
    }
}

async fn serve(
    mut socket: TcpStream,
    wire: Wire,
    script: Arc<Mutex<VecDeque<Step>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_owned();
    let path = request_line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_owned()))).collect();
    let length: usize =
        headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    while buf.len() < header_end + length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body: Value = serde_json::from_slice(&buf[header_end..]).unwrap_or(Value::Null);
    // Usage as a real server would count it, roughly: four bytes a token.
    let input_tokens = (buf.len() - header_end) / 4;
    requests.lock().unwrap().push(Recorded { path, headers, body });
    let step = script.lock().unwrap().pop_front();
    let mut step = step.unwrap_or_else(|| {
        Step::Status(500, "{\"error\":{\"message\":\"the test script has no more replies\"}}".into(), vec![])
    });
    while let Step::Delay(delay, inner) = step {
        tokio::time::sleep(delay).await;
        step = *inner;
    }
    match step {
        Step::Reply(turn) => stream(&mut socket, &sse(wire, &turn, input_tokens), None).await,
        Step::Cut(turn, keep) => {
            let body = sse(wire, &turn, input_tokens);
            stream(&mut socket, &body[..keep.min(body.len())], None).await
        }
        Step::Stall(turn, pause) => stream(&mut socket, &sse(wire, &turn, input_tokens), Some(pause)).await,
        Step::Status(code, body, extra) => {
            let mut head = format!(
                "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in extra {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
            socket.shutdown().await
        }
        Step::Delay(..) => unreachable!(),
    }
}

/// Writes an SSE body in 7-byte chunks, so every boundary case gets hit.
async fn stream(socket: &mut TcpStream, body: &str, stall: Option<Duration>) -> std::io::Result<()> {
    socket
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n")
        .await?;
    let bytes = body.as_bytes();
    for (i, piece) in bytes.chunks(7).enumerate() {
        socket.write_all(piece).await?;
        socket.flush().await?;
        if i == 3
            && let Some(pause) = stall
        {
            tokio::time::sleep(pause).await;
        }
        if i % 16 == 0 {
            tokio::task::yield_now().await;
        }
    }
    socket.shutdown().await
}

/// Renders a turn in the wire format, split into many small deltas.
pub fn sse(wire: Wire, turn: &Turn, input_tokens: usize) -> String {
    let pieces = |s: &str| -> Vec<String> {
        let chars: Vec<char> = s.chars().collect();
        chars.chunks(5).map(|c| c.iter().collect()).collect()
    };
    let mut out = String::new();
    let mut data = |event: Option<&str>, v: Value| {
        if let Some(e) = event {
            out.push_str(&format!("event: {e}\n"));
        }
        out.push_str(&format!("data: {v}\n\n"));
    };
    match wire {
        Wire::OpenAi => {
            data(None, json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}));
            for p in pieces(&turn.text) {
                data(None, json!({"choices": [{"index": 0, "delta": {"content": p}}]}));
            }
            for (i, (id, name, args)) in turn.calls.iter().enumerate() {
                data(
                    None,
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}}]}),
                );
                for p in pieces(args) {
                    data(
                        None,
                        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": p}}]}}]}),
                    );
                }
            }
            let reason = if turn.calls.is_empty() { "stop" } else { "tool_calls" };
            data(None, json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}));
            data(
                None,
                json!({"choices": [], "usage": {"prompt_tokens": input_tokens, "completion_tokens": 20, "total_tokens": input_tokens + 20}}),
            );
            out.push_str(": keep-alive comment\n\ndata: [DONE]\n\n");
        }
        Wire::Anthropic => {
            data(
                Some("message_start"),
                json!({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": [], "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
            );
            let mut index = 0;
            if !turn.text.is_empty() {
                data(
                    Some("content_block_start"),
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                );
                for p in pieces(&turn.text) {
                    data(
                        Some("content_block_delta"),
                        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}),
                    );
                }
                data(Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0}));
                index = 1;
            }
            data(Some("ping"), json!({"type": "ping"}));
            for (i, (id, name, args)) in turn.calls.iter().enumerate() {
                let n = index + i;
                data(
                    Some("content_block_start"),
                    json!({"type": "content_block_start", "index": n, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                );
                for p in pieces(args) {
                    data(
                        Some("content_block_delta"),
                        json!({"type": "content_block_delta", "index": n, "delta": {"type": "input_json_delta", "partial_json": p}}),
                    );
                }
                data(Some("content_block_stop"), json!({"type": "content_block_stop", "index": n}));
            }
            let reason = if turn.calls.is_empty() { "end_turn" } else { "tool_use" };
            data(
                Some("message_delta"),
                json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 20}}),
            );
            data(Some("message_stop"), json!({"type": "message_stop"}));
        }
    }
    out
}

/// True once `pid` has ended (a zombie waiting for its reaper counts as ended).
pub fn gone_soon(pid: i32) -> bool {
    for _ in 0..100 {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        let running = state.is_some_and(|s| s.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')));
        if !running {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}
