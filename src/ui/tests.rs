//! The interface on a fixed-size test terminal: snapshots of each pane and
//! state, and behaviour through the channels (keys in, decisions and
//! `UserOp`s out).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::{mpsc, oneshot};

use super::app::{App, Control, Status};
use super::composer::Composer;
use super::view;
use crate::agent::{AgentEvent, ApprovalRequest, CallInfo, CallStatus, Decision, Outcome, UserOp};
use crate::config::{ApprovalMode, ModelInfo};
use crate::tools::{Effect, FileChange, Plan, ToolOutput, WorkPath};

fn app() -> (App, mpsc::UnboundedReceiver<UserOp>) {
    super::theme::set_no_color(true);
    let (tx, rx) = mpsc::unbounded_channel();
    let status = Status {
        provider: "openai".into(),
        model: "gpt-4.1".into(),
        approval: ApprovalMode::Ask,
        sandbox: true,
        usage: Default::default(),
        session_path: "/nonexistent/sessions/s.jsonl".into(),
        workspace: "/nonexistent".into(),
        last_input: 0,
        info: ModelInfo { context_window: 100_000, input_price: Some(2.0), output_price: Some(8.0) },
    };
    let mut app = App::new(tx, Composer::new(None), status);
    app.show_log = true;
    (app, rx)
}

fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let now = Instant::now();
    terminal.draw(|f| view::draw(f, app, now)).unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let line: String = (0..buffer.area.width).map(|x| buffer[(x, y)].symbol().to_owned()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.key(key(KeyCode::Char(c)));
    }
}

fn call(id: &str, name: &str, args: &str) -> CallInfo {
    CallInfo { id: id.into(), name: name.into(), arguments: args.into() }
}

fn change(old: &str, new: &str) -> FileChange {
    let path = WorkPath { abs: "/w/src/lib.rs".into(), shown: "src/lib.rs".into() };
    FileChange::new(&path, Some(old.into()), new.into())
}

fn two_hunk_change() -> FileChange {
    let old: String = (1..=30).map(|i| format!("fn f{i}() {{}}\n")).collect();
    let new =
        old.replace("fn f3() {}\n", "fn f3() { todo!() }\n").replace("fn f25() {}\n", "fn f25() {}\nfn f25b() {}\n");
    change(&old, &new)
}

fn request(app: &mut App, id: &str, effect: Effect, target: &str) -> oneshot::Receiver<Decision> {
    let (reply, answer) = oneshot::channel();
    let name = match &effect {
        Effect::Command { .. } => "bash",
        _ => "edit_file",
    };
    app.agent(AgentEvent::ToolCall { call: call(id, name, "{}") });
    let plan = Plan { effect, target: target.into() };
    app.agent(AgentEvent::ApprovalRequest(ApprovalRequest { call: call(id, name, "{}"), plan, reply }));
    answer
}

fn finished(id: &str, name: &str, status: CallStatus, output: ToolOutput, change: Option<FileChange>) -> AgentEvent {
    let target = match name {
        "bash" => "cargo test",
        _ => "src/lib.rs",
    };
    AgentEvent::ToolFinished {
        call: call(id, name, "{}"),
        target: Some(target.into()),
        status,
        output,
        duration: Duration::from_millis(1200),
        change,
    }
}

#[test]
fn empty_start() {
    let (mut app, _) = app();
    insta::assert_snapshot!(screen(&mut app, 100, 16));
}

#[test]
fn streaming_answer_and_markdown() {
    let (mut app, _) = app();
    app.key(key(KeyCode::Char('h')));
    app.composer.set_text("explain the parser");
    app.key(key(KeyCode::Enter));
    app.agent(AgentEvent::TurnStarted { prompt: "explain the parser".into() });
    app.agent(AgentEvent::TextDelta("## How it works\n\nThe parser reads **tokens** and `Spans`.\n\n".into()));
    app.agent(AgentEvent::TextDelta("- one\n- two\n\n```rust\nfn main() {}\n```\n".into()));
    insta::assert_snapshot!("streaming", screen(&mut app, 100, 20));
    app.agent(AgentEvent::AssistantText(
        "## How it works\n\nThe parser reads **tokens** and `Spans`.\n\n- one\n- two\n\n```rust\nfn main() {}\n```\n"
            .into(),
    ));
    app.agent(AgentEvent::TurnFinished(Outcome::Done { answer: String::new() }));
    insta::assert_snapshot!("answered", screen(&mut app, 100, 20));
}

#[test]
fn tool_log_and_inline_results() {
    let (mut app, _) = app();
    app.agent(AgentEvent::TurnStarted { prompt: "x".into() });
    app.agent(AgentEvent::ToolCall { call: call("a", "read_file", r#"{"path":"src/lib.rs"}"#) });
    app.agent(finished("a", "read_file", CallStatus::Ok, ToolOutput::ok("1\tx", "30 of 30 lines"), None));
    app.agent(AgentEvent::ToolCall { call: call("b", "edit_file", "{}") });
    let c = change("a\nb\nc\n", "a\nB\nc\n");
    app.agent(finished("b", "edit_file", CallStatus::Ok, ToolOutput::ok("wrote", "+1 −1"), Some(c)));
    app.agent(AgentEvent::ToolCall { call: call("c", "bash", r#"{"command":"cargo test"}"#) });
    app.agent(AgentEvent::ToolStarted { id: "c".into(), target: "cargo test".into() });
    let mut out = ToolOutput::ok("running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... ok\n", "exit 0, 2.1s");
    out.full = None;
    app.agent(finished("c", "bash", CallStatus::Ok, out, None));
    app.agent(AgentEvent::ToolCall { call: call("d", "bash", r#"{"command":"rm -rf ~"}"#) });
    app.agent(finished(
        "d",
        "bash",
        CallStatus::Refused,
        ToolOutput::error("refused: blocked by the `rm-recursive` rule"),
        None,
    ));
    insta::assert_snapshot!(screen(&mut app, 120, 30));
}

#[test]
fn review_panel_with_hunk_selection_and_queue() {
    let (mut app, _) = app();
    app.agent(AgentEvent::TurnStarted { prompt: "x".into() });
    let c = two_hunk_change();
    let _answer = request(&mut app, "e1", Effect::Write { change: c }, "src/lib.rs");
    app.agent(AgentEvent::ToolCall { call: call("e2", "bash", r#"{"command":"cargo test"}"#) });
    insta::assert_snapshot!("review_all_selected", screen(&mut app, 100, 30));
    app.key(key(KeyCode::Char('j')));
    app.key(key(KeyCode::Char(' ')));
    insta::assert_snapshot!("review_second_hunk_off", screen(&mut app, 100, 30));
}

#[test]
fn per_hunk_approval_sends_only_the_selected_hunks() {
    let (mut app, _) = app();
    let c = two_hunk_change();
    let old = c.old.clone().unwrap();
    let mut answer = request(&mut app, "e1", Effect::Write { change: c }, "src/lib.rs");
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Char(' ')));
    app.key(key(KeyCode::Char('y')));
    match answer.try_recv().unwrap() {
        Decision::ApproveEdited { content, note } => {
            assert_eq!(content, old.replace("fn f3() {}\n", "fn f3() { todo!() }\n"));
            assert!(note.starts_with("the user applied 1 of 2 hunks: applied hunk 1"), "{note}");
        }
        other => panic!("expected a partial approval, got {other:?}"),
    }
    assert!(app.reviews.is_empty());
    assert_eq!(app.transcript.tools[0].decision.as_deref().map(|d| d.starts_with("approved with changes")), Some(true));
}

#[test]
fn approve_refuse_reason_allow_and_stop() {
    let (mut app, _) = app();
    let cmd = || Effect::Command { command: "make".into() };
    let mut a = request(&mut app, "1", cmd(), "make");
    app.key(key(KeyCode::Char('y')));
    assert_eq!(a.try_recv().unwrap(), Decision::Approve);

    let mut b = request(&mut app, "2", cmd(), "make");
    app.key(key(KeyCode::Char('n')));
    assert_eq!(b.try_recv().unwrap(), Decision::Refuse { reason: None });

    let mut c = request(&mut app, "3", cmd(), "make");
    app.key(key(KeyCode::Char('r')));
    type_text(&mut app, "use just");
    app.paste(" instead");
    assert!(c.try_recv().is_err(), "nothing is sent while typing");
    app.key(key(KeyCode::Enter));
    assert_eq!(c.try_recv().unwrap(), Decision::Refuse { reason: Some("use just instead".into()) });

    let mut d = request(&mut app, "4", cmd(), "make");
    app.key(key(KeyCode::Char('a')));
    assert_eq!(d.try_recv().unwrap(), Decision::AllowForSession);

    let mut e = request(&mut app, "5", cmd(), "make");
    app.key(key(KeyCode::Esc));
    assert_eq!(e.try_recv().unwrap(), Decision::Stop);
}

#[test]
fn ctrl_c_refuses_everything_queued() {
    let (mut app, _) = app();
    let cmd = || Effect::Command { command: "make".into() };
    let mut a = request(&mut app, "1", cmd(), "make");
    let mut b = request(&mut app, "2", cmd(), "make");
    assert_eq!(app.key(ctrl('c')), Control::Continue);
    assert_eq!(a.try_recv().unwrap(), Decision::Stop);
    assert_eq!(b.try_recv().unwrap(), Decision::Stop);
}

#[test]
fn interrupt_submit_slash_commands_and_quitting() {
    let (mut app, mut ops) = app();
    type_text(&mut app, "fix the bug");
    app.key(key(KeyCode::Enter));
    assert!(matches!(ops.try_recv(), Ok(UserOp::Submit(t)) if t == "fix the bug"));
    app.key(key(KeyCode::Esc));
    assert!(matches!(ops.try_recv(), Ok(UserOp::Interrupt)));
    app.agent(AgentEvent::TurnFinished(Outcome::Interrupted));

    type_text(&mut app, "/approval auto-edit");
    app.key(key(KeyCode::Enter));
    assert!(matches!(ops.try_recv(), Ok(UserOp::SetApproval(ApprovalMode::AutoEdit))));
    assert_eq!(app.status.approval, ApprovalMode::AutoEdit);
    type_text(&mut app, "/frobnicate");
    app.key(key(KeyCode::Enter));
    assert!(ops.try_recv().is_err(), "unknown commands are not sent to the model");
    assert!(screen(&mut app, 100, 20).contains("unknown command /frobnicate"));

    // Ctrl-C twice on an idle app quits; once only warns.
    assert_eq!(app.key(ctrl('c')), Control::Continue);
    assert_eq!(app.key(ctrl('c')), Control::Quit);
    let (mut idle, _) = super::tests::app();
    assert_eq!(idle.key(ctrl('d')), Control::Quit);
}

#[test]
fn history_walks_with_up_and_down_on_an_empty_box() {
    let (mut app, _) = app();
    for prompt in ["first", "second"] {
        type_text(&mut app, prompt);
        app.key(key(KeyCode::Enter));
        app.agent(AgentEvent::TurnFinished(Outcome::Done { answer: String::new() }));
    }
    app.key(key(KeyCode::Up));
    assert_eq!(app.composer.text(), "second");
    app.key(key(KeyCode::Up));
    assert_eq!(app.composer.text(), "first");
    app.key(key(KeyCode::Down));
    assert_eq!(app.composer.text(), "second");
    let newline = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
    app.key(newline);
    type_text(&mut app, "more");
    assert_eq!(app.composer.text(), "second\nmore");
}

#[test]
fn transcript_browser_lists_filters_and_opens() {
    let (mut app, _) = app();
    app.agent(AgentEvent::ToolCall { call: call("a", "read_file", r#"{"path":"src/lib.rs"}"#) });
    app.agent(finished("a", "read_file", CallStatus::Ok, ToolOutput::ok("1\tx", "1 of 1 lines"), None));
    app.agent(AgentEvent::ToolCall { call: call("b", "bash", r#"{"command":"false"}"#) });
    app.agent(finished(
        "b",
        "bash",
        CallStatus::Error,
        ToolOutput { content: "\n[exit code 1]".into(), full: None, is_error: true, summary: "exit 1, 0.0s".into() },
        None,
    ));
    app.key(ctrl('t'));
    insta::assert_snapshot!("browser_list", screen(&mut app, 100, 12));
    app.key(key(KeyCode::Char('t'))); // filter: bash
    app.key(key(KeyCode::Enter));
    insta::assert_snapshot!("browser_detail", screen(&mut app, 100, 14));
    app.key(key(KeyCode::Esc));
    app.key(key(KeyCode::Esc));
    assert!(app.browser.is_none());
}

#[test]
fn narrow_and_tiny_terminals() {
    let (mut app, _) = app();
    app.agent(AgentEvent::TextDelta("A long answer that has to wrap several times on a narrow screen.".into()));
    insta::assert_snapshot!("narrow", screen(&mut app, 40, 12));
    insta::assert_snapshot!("tiny", screen(&mut app, 39, 11));
    for (w, h) in [(1, 1), (40, 12), (200, 3), (3, 200)] {
        screen(&mut app, w, h);
    }
}

#[test]
fn copy_takes_the_last_answer_or_its_code() {
    let (mut app, _) = app();
    app.agent(AgentEvent::AssistantText("Run this:\n\n```sh\ncargo test\n```\n".into()));
    type_text(&mut app, "/copy code");
    assert_eq!(app.key(key(KeyCode::Enter)), Control::Copy("cargo test\n".into()));
    type_text(&mut app, "/copy");
    assert_eq!(app.key(key(KeyCode::Enter)), Control::Copy("Run this:\n\n```sh\ncargo test\n```\n".into()));
}

#[test]
fn todo_panel_and_its_return_on_resume() {
    let (mut app, _) = app();
    let args = r#"{"items":[{"content":"read the code","status":"done"},{"content":"fix the parser","status":"in_progress"},{"content":"run tests","status":"pending"}]}"#;
    app.agent(AgentEvent::ToolCall { call: call("t1", "todo", args) });
    app.agent(AgentEvent::ToolFinished {
        call: call("t1", "todo", args),
        target: Some("1/3 done".into()),
        status: CallStatus::Ok,
        output: ToolOutput::ok("The task list is now", "updated"),
        duration: Duration::from_millis(1),
        change: None,
    });
    insta::assert_snapshot!("todo_panel", screen(&mut app, 110, 14));
    assert!(
        screen(&mut app, 80, 14).contains("tasks 1/3 · ▶ fix the parser"),
        "narrow screens show it above the input"
    );

    use crate::provider::{Block, Message, Role, ToolCall};
    use crate::session::Record;
    let records = vec![
        Record::User { text: "plan it".into(), ts: 0 },
        Record::Assistant {
            message: Message {
                role: Role::Assistant,
                content: vec![Block::ToolCall(ToolCall {
                    id: "t1".into(),
                    name: "todo".into(),
                    arguments: args.into(),
                })],
            },
            ts: 0,
        },
        Record::ToolResult {
            call_id: "t1".into(),
            name: "todo".into(),
            status: CallStatus::Ok,
            content: "ok".into(),
            full: None,
            is_error: false,
            summary: "1/3 done".into(),
            target: None,
            diff: None,
            duration_ms: 1,
            ts: 0,
        },
    ];
    let (mut resumed, _) = super::tests::app();
    resumed.load_records(&records);
    assert_eq!(resumed.todos.len(), 3);
    assert_eq!(resumed.transcript.tools[0].state, super::cells::ToolState::Done(CallStatus::Ok));
}

#[test]
fn clicking_a_tool_call_expands_it() {
    let (mut app, _) = app();
    app.agent(AgentEvent::ToolCall { call: call("a", "bash", r#"{"command":"ls"}"#) });
    app.agent(finished("a", "bash", CallStatus::Ok, ToolOutput::ok("one\ntwo\n", "exit 0, 0.0s"), None));
    screen(&mut app, 100, 20);
    app.click(3, 0);
    assert!(app.transcript.tools[0].expanded);
    assert!(screen(&mut app, 100, 20).contains("\"command\": \"ls\""), "the arguments show");
    app.click(3, 0);
    assert!(!app.transcript.tools[0].expanded);
    app.click(3, 15); // below the transcript: nothing
    assert!(!app.transcript.tools[0].expanded);
}
