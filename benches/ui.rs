//! Rendering costs: a frame and a keystroke with a 2,000-message
//! transcript, the diff renderer and the markdown renderer.

use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hew::agent::{AgentEvent, CallInfo, CallStatus, Outcome};
use hew::config::{ApprovalMode, ModelInfo};
use hew::tools::{FileChange, ToolOutput, WorkPath};
use hew::ui::app::{App, Status};
use hew::ui::composer::Composer;
use hew::ui::{diff, highlight, markdown, view};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const ANSWER: &str = "## Plan\n\nI will change **three** things in `src/main.rs`:\n\n1. parse the flag\n2. thread it through\n3. test it\n\n```rust\nfn main() {\n    let verbose = std::env::args().any(|a| a == \"--verbose\");\n    println!(\"{verbose}\");\n}\n```\n\nThat keeps the change small and the tests honest; see [the docs](https://example.com/docs) for more.\n";

fn big_app() -> App {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    std::mem::forget(_rx);
    let status = Status {
        provider: "openai".into(),
        model: "gpt-4.1".into(),
        approval: ApprovalMode::Ask,
        sandbox: true,
        usage: Default::default(),
        session_path: "/nonexistent/sessions/s.jsonl".into(),
        workspace: "/nonexistent".into(),
        last_input: 0,
        info: ModelInfo { context_window: 1_000_000, input_price: Some(2.0), output_price: Some(8.0) },
    };
    let mut app = App::new(tx, Composer::new(None), status);
    let path = WorkPath { abs: "/w/src/main.rs".into(), shown: "src/main.rs".into() };
    for i in 0..500 {
        app.composer.set_text(&format!("request number {i}: please make the change"));
        app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        app.agent(AgentEvent::TextDelta(ANSWER.into()));
        app.agent(AgentEvent::AssistantText(ANSWER.into()));
        let id = format!("c{i}");
        let call = CallInfo { id: id.clone(), name: "edit_file".into(), arguments: "{}".into() };
        app.agent(AgentEvent::ToolCall { call: call.clone() });
        let change = FileChange::new(&path, Some("a\nb\nc\n".into()), "a\nB\nc\n".into());
        app.agent(AgentEvent::ToolFinished {
            call,
            target: Some("src/main.rs".into()),
            status: CallStatus::Ok,
            output: ToolOutput::ok("wrote", "+1 −1"),
            duration: std::time::Duration::from_millis(3),
            change: Some(change),
        });
        app.agent(AgentEvent::AssistantText("Done: the flag is parsed and tested.".into()));
        app.agent(AgentEvent::TurnFinished(Outcome::Done { answer: String::new() }));
    }
    app
}

fn bench_chat(c: &mut Criterion) {
    highlight::load();
    let mut app = big_app();
    assert!(app.transcript.cells.len() >= 2000, "{} cells", app.transcript.cells.len());
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| view::draw(f, &mut app, Instant::now())).unwrap();
    c.bench_function("frame, 2000-message transcript", |b| {
        b.iter(|| {
            terminal.draw(|f| view::draw(f, &mut app, Instant::now())).unwrap();
        })
    });
    c.bench_function("keystroke + frame, 2000-message transcript", |b| {
        b.iter(|| {
            app.key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE));
            terminal.draw(|f| view::draw(f, &mut app, Instant::now())).unwrap();
        })
    });
}

fn bench_diff(c: &mut Criterion) {
    highlight::load();
    let old: String = (0..2000).map(|i| format!("    let value_{i} = compute({i}, \"text\");\n")).collect();
    let new = old.replace("compute(100,", "compute_fast(100,").replace("compute(1500,", "compute_fast(1500,");
    let hunks = hew::hunks::hunks(&old, &new);
    c.bench_function("diff hunks, 2000-line file", |b| b.iter(|| hew::hunks::hunks(&old, &new)));
    c.bench_function("diff render, 2 hunks", |b| b.iter(|| diff::render("src/lib.rs", &hunks, 100, None).0.len()));
}

fn bench_markdown(c: &mut Criterion) {
    highlight::load();
    let long = ANSWER.repeat(10);
    c.bench_function("markdown render, 200-line answer", |b| b.iter(|| markdown::render(&long, 100).len()));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_chat, bench_diff, bench_markdown
}
criterion_main!(benches);
