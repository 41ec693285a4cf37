//! The agent loop driven through its channels, against the scripted provider.

mod support;

use std::sync::Arc;
use std::time::Duration;

use hew::agent::{Agent, AgentEvent, AgentSettings, CallStatus, Decision, Outcome, UserOp, policy::Rules};
use hew::config::ApprovalMode;
use hew::provider::{self, ProviderSettings, WireKind};
use hew::tools::{Effect, Registry, ToolContext};
use serde_json::{Value, json};
use support::{Server, Step, Turn, Wire, reply};
use tokio::sync::mpsc;

struct Harness {
    work: tempfile::TempDir,
    ops: mpsc::UnboundedSender<UserOp>,
    events: mpsc::UnboundedReceiver<AgentEvent>,
}

fn start(server: &Server, mode: ApprovalMode) -> Harness {
    start_with(server, mode, 100_000)
}

fn start_with(server: &Server, mode: ApprovalMode, window: u64) -> Harness {
    let work = tempfile::tempdir().unwrap();
    let settings = ProviderSettings {
        name: "test".into(),
        kind: match server.wire {
            Wire::OpenAi => WireKind::Openai,
            Wire::Anthropic => WireKind::Anthropic,
        },
        base_url: server.base_url(),
        api_key: Some("k".into()),
        model: "test-model".into(),
        max_retries: 2,
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(30),
    };
    let provider = Arc::from(provider::build(settings).unwrap());
    let root = work.path().canonicalize().unwrap();
    let ctx = Arc::new(ToolContext::new(root, vec![], vec![]));
    let agent_settings = AgentSettings {
        approval: mode,
        max_turns: 10,
        interactive: true,
        max_output_tokens: 1000,
        rules: Rules::default(),
        model: hew::config::ModelInfo { context_window: window, input_price: Some(1.0), output_price: Some(1.0) },
        max_cost: None,
        instructions: hew::agent::instructions::Instructions { files: vec![], text: String::new() },
    };
    let agent = Agent::new(provider, Arc::new(Registry::standard()), ctx, agent_settings);
    let (ops, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, events) = mpsc::unbounded_channel();
    tokio::spawn(agent.run(ops_rx, events_tx));
    Harness { work, ops, events }
}

impl Harness {
    async fn next(&mut self) -> AgentEvent {
        tokio::time::timeout(Duration::from_secs(20), self.events.recv())
            .await
            .expect("an event in time")
            .expect("agent alive")
    }

    /// Waits for the next approval request and answers it; returns its plan.
    async fn approve(&mut self, decision: Decision) -> hew::tools::Plan {
        loop {
            if let AgentEvent::ApprovalRequest(req) = self.next().await {
                let plan = req.plan.clone();
                req.reply.send(decision).unwrap();
                return plan;
            }
        }
    }

    async fn outcome(&mut self) -> Outcome {
        loop {
            if let AgentEvent::TurnFinished(outcome) = self.next().await {
                return outcome;
            }
        }
    }

    /// Every finished call of the turn, up to its end.
    async fn finished_calls(&mut self) -> (Vec<(String, CallStatus)>, Outcome) {
        let mut calls = Vec::new();
        loop {
            match self.next().await {
                AgentEvent::ToolFinished { call, status, .. } => calls.push((call.id, status)),
                AgentEvent::ApprovalRequest(req) => {
                    req.reply.send(Decision::Approve).unwrap();
                }
                AgentEvent::TurnFinished(outcome) => return (calls, outcome),
                _ => {}
            }
        }
    }

    fn file(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.work.path().join(rel)).ok()
    }
}

fn tool_results(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        if m["role"] == "tool" {
            out.push((m["tool_call_id"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned()));
        }
        if let Some(blocks) = m["content"].as_array() {
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                out.push((b["tool_use_id"].as_str().unwrap().to_owned(), b["content"].as_str().unwrap().to_owned()));
            }
        }
    }
    out
}

#[tokio::test]
async fn an_approved_edit_is_written_and_its_diff_shown() {
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("w", "write_file", json!({"path": "src/a.rs", "content": "fn a() {}\n"}))),
            reply(Turn::text("done")),
        ],
    );
    let mut h = start(&server, ApprovalMode::Ask);
    h.ops.send(UserOp::Submit("write a".into())).unwrap();
    let plan = h.approve(Decision::Approve).await;
    let Effect::Write { change } = plan.effect else { panic!("expected a file change") };
    assert_eq!(change.path, "src/a.rs");
    assert!(change.diff.contains("+fn a() {}"));
    assert_eq!(h.outcome().await, Outcome::Done { answer: "done".into() });
    assert_eq!(h.file("src/a.rs").as_deref(), Some("fn a() {}\n"));
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results, vec![("w".into(), "created src/a.rs (1 line)".into())]);
}

#[tokio::test]
async fn a_refusal_with_a_reason_reaches_the_model_and_nothing_is_written() {
    let server = Server::start(
        Wire::Anthropic,
        vec![reply(Turn::call("w", "write_file", json!({"path": "a.txt", "content": "x"}))), reply(Turn::text("ok"))],
    );
    let mut h = start(&server, ApprovalMode::Ask);
    h.ops.send(UserOp::Submit("write".into())).unwrap();
    h.approve(Decision::Refuse { reason: Some("use b.txt instead".into()) }).await;
    assert_eq!(h.outcome().await, Outcome::Done { answer: "ok".into() });
    assert_eq!(h.file("a.txt"), None);
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0].1, "refused: the user declined this call. Their reason: use b.txt instead");
}

#[tokio::test]
async fn allow_for_session_stops_asking_for_that_command() {
    let bash = |id: &str| Turn::call(id, "bash", json!({"command": "touch a && echo hi"}));
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(bash("b1")),
            reply(bash("b2")),
            reply(Turn::call("b3", "bash", json!({"command": "touch b && echo other"}))),
            reply(Turn::text("ok")),
        ],
    );
    let mut h = start(&server, ApprovalMode::Ask);
    h.ops.send(UserOp::Submit("echo".into())).unwrap();
    h.approve(Decision::AllowForSession).await;
    // b2 runs without a request; the next request is for the different command.
    let mut asked = Vec::new();
    loop {
        match h.next().await {
            AgentEvent::ApprovalRequest(req) => {
                asked.push(req.call.id.clone());
                req.reply.send(Decision::Approve).unwrap();
            }
            AgentEvent::TurnFinished(_) => break,
            _ => {}
        }
    }
    assert_eq!(asked, vec!["b3".to_owned()]);
    let results = tool_results(&server.requests()[3].body);
    assert_eq!(results.iter().map(|(_, c)| c.as_str()).collect::<Vec<_>>(), vec!["hi\n", "hi\n", "other\n"]);
}

#[tokio::test]
async fn an_edited_approval_writes_the_persons_version_and_says_so() {
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("w", "write_file", json!({"path": "a.txt", "content": "one\ntwo\n"}))),
            reply(Turn::text("ok")),
        ],
    );
    let mut h = start(&server, ApprovalMode::Ask);
    h.ops.send(UserOp::Submit("write".into())).unwrap();
    h.approve(Decision::ApproveEdited { content: "one\n".into(), note: "applied hunk 1 of 2; refused hunk 2".into() })
        .await;
    h.outcome().await;
    assert_eq!(h.file("a.txt").as_deref(), Some("one\n"));
    let results = tool_results(&server.requests()[1].body);
    assert!(
        results[0]
            .1
            .starts_with("The user changed your proposal before applying it: applied hunk 1 of 2; refused hunk 2")
    );
}

#[tokio::test]
async fn stop_ends_the_turn_and_every_call_still_gets_a_result() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let server = Server::start(
            wire,
            vec![
                reply(Turn::call("w1", "write_file", json!({"path": "a", "content": "a"})).and_call(
                    "w2",
                    "write_file",
                    json!({"path": "b", "content": "b"}),
                )),
                reply(Turn::text("fresh start")),
            ],
        );
        let mut h = start(&server, ApprovalMode::Ask);
        h.ops.send(UserOp::Submit("two files".into())).unwrap();
        h.approve(Decision::Stop).await;
        let (calls, outcome) = h.finished_calls().await;
        assert_eq!(outcome, Outcome::Interrupted);
        assert_eq!(calls, vec![("w1".into(), CallStatus::Refused), ("w2".into(), CallStatus::Interrupted)]);
        // The conversation stays valid: the next request carries both results.
        h.ops.send(UserOp::Submit("again".into())).unwrap();
        assert_eq!(h.outcome().await, Outcome::Done { answer: "fresh start".into() });
        let results = tool_results(&server.requests()[1].body);
        assert_eq!(results.len(), 2);
        assert!(results[1].1.starts_with("interrupted"));
    }
}

#[tokio::test]
async fn interrupt_kills_a_running_command_promptly() {
    let server = Server::start(
        Wire::OpenAi,
        vec![reply(Turn::call("b", "bash", json!({"command": "sleep 30"}))), reply(Turn::text("next"))],
    );
    let mut h = start(&server, ApprovalMode::FullAuto);
    h.ops.send(UserOp::Submit("sleep".into())).unwrap();
    loop {
        if let AgentEvent::ToolStarted { .. } = h.next().await {
            break;
        }
    }
    let asked = std::time::Instant::now();
    h.ops.send(UserOp::Interrupt).unwrap();
    let (calls, outcome) = h.finished_calls().await;
    assert_eq!(outcome, Outcome::Interrupted);
    assert_eq!(calls, vec![("b".into(), CallStatus::Interrupted)]);
    assert!(asked.elapsed() < Duration::from_secs(10), "far below the command's 30 s");
    h.ops.send(UserOp::Submit("go on".into())).unwrap();
    assert_eq!(h.outcome().await, Outcome::Done { answer: "next".into() });
    let results = tool_results(&server.requests()[1].body);
    assert!(results[0].1.contains("interrupted by the user"), "{results:?}");
}

#[tokio::test]
async fn interrupt_cancels_a_stalled_stream() {
    let server = Server::start(Wire::Anthropic, vec![Step::Stall(Turn::text("slow answer"), Duration::from_secs(30))]);
    let mut h = start(&server, ApprovalMode::Ask);
    h.ops.send(UserOp::Submit("hi".into())).unwrap();
    loop {
        if let AgentEvent::RequestStarted { .. } = h.next().await {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    h.ops.send(UserOp::Interrupt).unwrap();
    assert_eq!(h.outcome().await, Outcome::Interrupted);
}

#[tokio::test]
async fn reads_in_one_reply_return_in_call_order() {
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(
                Turn::call("r1", "read_file", json!({"path": "a.txt"}))
                    .and_call("r2", "grep", json!({"pattern": "beta"}))
                    .and_call("r3", "read_file", json!({"path": "missing.txt"}))
                    .and_call("r4", "glob", json!({"pattern": "*.txt"})),
            ),
            reply(Turn::text("read")),
        ],
    );
    let mut h = start(&server, ApprovalMode::ReadOnly);
    std::fs::write(h.work.path().join("a.txt"), "alpha\nbeta\n").unwrap();
    h.ops.send(UserOp::Submit("read".into())).unwrap();
    let (calls, _) = h.finished_calls().await;
    assert_eq!(calls.len(), 4);
    let results = tool_results(&server.requests()[1].body);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, vec!["r1", "r2", "r3", "r4"]);
    assert_eq!(results[0].1, "1\talpha\n2\tbeta\n");
    assert_eq!(results[1].1, "a.txt:2: beta\n");
    assert!(results[2].1.starts_with("missing.txt: no such file"));
    assert_eq!(results[3].1, "a.txt\n");
}

#[tokio::test]
async fn a_retried_stream_does_not_duplicate_text() {
    let server = Server::start(
        Wire::OpenAi,
        vec![Step::Cut(Turn::text("partial answer text"), 150), reply(Turn::text("whole answer"))],
    );
    let mut h = start(&server, ApprovalMode::Ask);
    h.ops.send(UserOp::Submit("hi".into())).unwrap();
    let mut retried = false;
    loop {
        match h.next().await {
            AgentEvent::Retrying { .. } => retried = true,
            AgentEvent::TurnFinished(outcome) => {
                assert_eq!(outcome, Outcome::Done { answer: "whole answer".into() });
                break;
            }
            _ => {}
        }
    }
    assert!(retried);
}

#[tokio::test]
async fn undo_puts_files_back_after_approval_and_tells_the_model() {
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("w", "write_file", json!({"path": "a.txt", "content": "new\n"}))),
            reply(Turn::text("written")),
            reply(Turn::text("noted")),
        ],
    );
    let mut h = start(&server, ApprovalMode::AutoEdit);
    std::fs::write(h.work.path().join("a.txt"), "old\n").unwrap();
    // The model must read before it overwrites; here the file is new to it,
    // so it creates a second file instead.
    h.ops.send(UserOp::Submit("write".into())).unwrap();
    h.outcome().await;
    assert_eq!(h.file("a.txt").as_deref(), Some("old\n"), "an unread file is not overwritten");

    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("w", "write_file", json!({"path": "b.txt", "content": "made by hew\n"}))),
            reply(Turn::text("written")),
            reply(Turn::text("noted")),
        ],
    );
    let mut h = start(&server, ApprovalMode::AutoEdit);
    h.ops.send(UserOp::Submit("write".into())).unwrap();
    h.outcome().await;
    assert_eq!(h.file("b.txt").as_deref(), Some("made by hew\n"));
    h.ops.send(UserOp::Undo).unwrap();
    let plan = h.approve(Decision::Approve).await;
    assert!(plan.target.starts_with("b.txt — delete"), "{}", plan.target);
    loop {
        if let AgentEvent::Notice(text) = h.next().await {
            assert_eq!(text, "undone: b.txt");
            break;
        }
    }
    assert_eq!(h.file("b.txt"), None);
    h.ops.send(UserOp::Submit("what now?".into())).unwrap();
    h.outcome().await;
    let last = server.requests()[2].body["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["content"].as_str().unwrap().starts_with("[Note from hew: the user undid your file changes"),
        "{last}"
    );
}

#[tokio::test]
async fn undo_refuses_over_a_persons_later_edit() {
    let server = Server::start(
        Wire::Anthropic,
        vec![
            reply(Turn::call("w", "write_file", json!({"path": "c.txt", "content": "hew\n"}))),
            reply(Turn::text("ok")),
        ],
    );
    let mut h = start(&server, ApprovalMode::AutoEdit);
    h.ops.send(UserOp::Submit("write".into())).unwrap();
    h.outcome().await;
    std::fs::write(h.work.path().join("c.txt"), "a person's edit\n").unwrap();
    h.ops.send(UserOp::Undo).unwrap();
    loop {
        if let AgentEvent::Notice(text) = h.next().await {
            assert!(text.starts_with("undo refused: c.txt changed outside hew"), "{text}");
            break;
        }
    }
    assert_eq!(h.file("c.txt").as_deref(), Some("a person's edit\n"));
}

#[tokio::test]
async fn rewind_restores_files_and_the_conversation() {
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("w1", "write_file", json!({"path": "one.txt", "content": "1\n"}))),
            reply(Turn::text("first done")),
            reply(Turn::call("w2", "write_file", json!({"path": "two.txt", "content": "2\n"}))),
            reply(Turn::text("second done")),
            reply(Turn::text("after the rewind")),
        ],
    );
    let mut h = start(&server, ApprovalMode::AutoEdit);
    h.ops.send(UserOp::Submit("first".into())).unwrap();
    h.outcome().await;
    h.ops.send(UserOp::Submit("second".into())).unwrap();
    h.outcome().await;
    assert!(h.file("two.txt").is_some());
    h.ops.send(UserOp::Rewind(2)).unwrap();
    h.approve(Decision::Approve).await;
    loop {
        if let AgentEvent::Notice(text) = h.next().await {
            assert_eq!(text, "rewound to before message 2; restored two.txt");
            break;
        }
    }
    assert_eq!(h.file("two.txt"), None);
    assert_eq!(h.file("one.txt").as_deref(), Some("1\n"), "earlier turns keep their files");
    h.ops.send(UserOp::Submit("instead".into())).unwrap();
    assert_eq!(h.outcome().await, Outcome::Done { answer: "after the rewind".into() });
    let body = server.requests()[4].body.clone();
    let users: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, vec!["first", "instead"]);
}

/// Every tool result must follow the call it answers (OpenAI format).
fn pairs_intact(body: &Value) -> bool {
    let mut open: Vec<String> = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        if m["role"] == "assistant" {
            open = m["tool_calls"]
                .as_array()
                .map(|c| c.iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect())
                .unwrap_or_default();
        } else if m["role"] == "tool" {
            let id = m["tool_call_id"].as_str().unwrap();
            if !open.iter().any(|o| o == id) {
                return false;
            }
        }
    }
    true
}

/// Two turns, each reading a big file: the second one's follow-up request
/// passes the trigger, so the first turn is summarised (request 4).
async fn compaction_run(summary_step: support::Step) -> (Vec<support::Recorded>, Vec<String>) {
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("r1", "read_file", json!({"path": "big.txt"}))),
            reply(Turn::text("I read it.")),
            reply(Turn::call("r2", "read_file", json!({"path": "big2.txt"}))),
            summary_step,
            reply(Turn::text("final answer")),
        ],
    );
    let mut h = start_with(&server, ApprovalMode::Ask, 20_000);
    let big: String = (0..600).map(|i| format!("line {i} of a file that fills the context window\n")).collect();
    std::fs::write(h.work.path().join("big.txt"), &big).unwrap();
    std::fs::write(h.work.path().join("big2.txt"), big.replace("line", "row")).unwrap();
    h.ops.send(UserOp::Submit("read big.txt".into())).unwrap();
    h.outcome().await;
    h.ops.send(UserOp::Submit("now read big2.txt".into())).unwrap();
    let mut notices = Vec::new();
    loop {
        match h.next().await {
            AgentEvent::Notice(text) => notices.push(text),
            AgentEvent::TurnFinished(outcome) => {
                assert_eq!(outcome, Outcome::Done { answer: "final answer".into() }, "{notices:?}");
                break;
            }
            _ => {}
        }
    }
    (server.requests(), notices)
}

#[tokio::test]
async fn a_full_context_is_summarised_keeping_pairs_intact() {
    let (requests, notices) = compaction_run(reply(Turn::text("SUMMARY: the user had big.txt read."))).await;
    assert_eq!(requests.len(), 5);
    assert!(requests[3].body["messages"][0]["content"].as_str().unwrap().starts_with("You write the working memory"));
    let last = &requests[4].body;
    let text = last.to_string();
    assert!(text.contains("SUMMARY: the user had big.txt read.") && text.contains("now read big2.txt"), "{text}");
    assert!(!text.contains("line 300 of a file"), "the old output is gone from the model's view");
    assert!(text.contains("row 0 of a file"), "the kept turn's output is still there");
    assert!(pairs_intact(last));
    assert!(text.len() < requests[2].body.to_string().len() + 30_000, "the request shrank");
    assert!(
        notices.iter().any(|n| n.starts_with("compacted the conversation (summarised older turns)")),
        "{notices:?}"
    );
}

#[tokio::test]
async fn a_failed_summary_falls_back_to_an_extract() {
    let (requests, notices) = compaction_run(support::status(400, "{\"error\":{\"message\":\"nope\"}}")).await;
    let text = requests[4].body.to_string();
    assert!(
        text.contains("(An automatic extract; the summary could not be made.)") && text.contains("- read big.txt"),
        "{text}"
    );
    assert!(text.contains("big.txt (read_file)"));
    assert!(notices.iter().any(|n| n.contains("replaced older turns with an extract")), "{notices:?}");
}

#[tokio::test]
async fn context_exceeded_compacts_and_retries_once() {
    let server = Server::start(
        Wire::Anthropic,
        vec![
            support::status(
                400,
                "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}}",
            ),
            reply(Turn::text("fits now")),
        ],
    );
    let mut h = start(&server, ApprovalMode::Ask);
    h.ops.send(UserOp::Submit("hello".into())).unwrap();
    let mut compacted = false;
    loop {
        match h.next().await {
            AgentEvent::Notice(text) if text.starts_with("compacted the conversation") => compacted = true,
            AgentEvent::TurnFinished(outcome) => {
                assert_eq!(outcome, Outcome::Done { answer: "fits now".into() });
                break;
            }
            _ => {}
        }
    }
    assert!(compacted);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_helper_agent_researches_read_only_and_its_usage_counts_once() {
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("p1", "agent", json!({"task": "find where greet is defined"}))),
            reply(Turn::call("h1", "grep", json!({"pattern": "fn greet"}))),
            reply(Turn::call("h2", "write_file", json!({"path": "x.txt", "content": "no"}))),
            reply(Turn::text("greet is in lib.rs line 1")),
            reply(Turn::text("It is in lib.rs.")),
        ],
    );
    let mut h = start(&server, ApprovalMode::FullAuto);
    std::fs::write(h.work.path().join("lib.rs"), "fn greet() {}\n").unwrap();
    h.ops.send(UserOp::Submit("where is greet?".into())).unwrap();
    let mut names = Vec::new();
    let mut last_total = None;
    loop {
        match h.next().await {
            AgentEvent::ToolFinished { call, status, .. } => names.push((call.name, status)),
            AgentEvent::Usage { total, .. } => last_total = Some(total),
            AgentEvent::TurnFinished(outcome) => {
                assert_eq!(outcome, Outcome::Done { answer: "It is in lib.rs.".into() });
                break;
            }
            _ => {}
        }
    }
    assert_eq!(
        names,
        vec![
            ("agent › grep".to_owned(), CallStatus::Ok),
            ("agent › write_file".to_owned(), CallStatus::Error),
            ("agent".to_owned(), CallStatus::Ok),
        ]
    );
    assert_eq!(h.file("x.txt"), None, "the helper cannot write");
    let requests = server.requests();
    let helper_tools: Vec<&str> =
        requests[1].body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(helper_tools, vec!["bash", "glob", "grep", "read_file"]);
    assert_eq!(tool_results(&requests[4].body).last().unwrap().1, "greet is in lib.rs line 1");
    // Each request's usage is counted once in the session total.
    let expected: u64 = requests.iter().map(|r| (r.body.to_string().len() / 4) as u64).sum();
    let total = last_total.unwrap();
    let diff = (total.input_tokens as i64 - expected as i64).abs();
    assert!(diff < 50, "total {} vs the sum of requests {expected}", total.input_tokens);
}

#[tokio::test]
async fn interrupting_stops_a_helper_too() {
    let server = Server::start(
        Wire::Anthropic,
        vec![
            reply(Turn::call("p1", "agent", json!({"task": "look around"}))),
            Step::Stall(Turn::text("slow helper"), Duration::from_secs(30)),
        ],
    );
    let mut h = start(&server, ApprovalMode::Ask);
    h.ops.send(UserOp::Submit("research".into())).unwrap();
    loop {
        if let AgentEvent::ToolStarted { .. } = h.next().await {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    h.ops.send(UserOp::Interrupt).unwrap();
    let (calls, outcome) = h.finished_calls().await;
    assert_eq!(outcome, Outcome::Interrupted);
    assert_eq!(calls, vec![("p1".into(), CallStatus::Interrupted)]);
}
