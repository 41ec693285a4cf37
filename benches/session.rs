//! Loading a 10,000-event transcript for resume or the browser.

use criterion::{Criterion, criterion_group, criterion_main};
use hew::agent::CallStatus;
use hew::provider::{Block, Message, Role, ToolCall, Usage};
use hew::session::record::{Meta, Record, VERSION};
use hew::session::{Writer, resume, store};

fn transcript(dir: &std::path::Path) -> std::path::PathBuf {
    let meta = Meta {
        v: VERSION,
        id: "20261129T000000-bench0".into(),
        created: "2026-11-29T00:00:00Z".into(),
        cwd: "/w".into(),
        provider: "openai".into(),
        model: "gpt-4.1".into(),
        hew_version: "0.1.0".into(),
    };
    let mut writer = Writer::new(dir, meta);
    let output: String = (0..40).map(|i| format!("line {i} of a command's output, long enough to matter\n")).collect();
    for i in 0..2500 {
        writer.append(&Record::User { text: format!("request {i}"), ts: 1 }).unwrap();
        let call =
            ToolCall { id: format!("c{i}"), name: "bash".into(), arguments: "{\"command\":\"cargo test\"}".into() };
        let message = Message {
            role: Role::Assistant,
            content: vec![Block::Text { text: "Running the tests.".into() }, Block::ToolCall(call)],
        };
        writer.append(&Record::Assistant { message, ts: 2 }).unwrap();
        writer
            .append(&Record::ToolResult {
                call_id: format!("c{i}"),
                name: "bash".into(),
                status: CallStatus::Ok,
                content: output.clone(),
                full: None,
                is_error: false,
                summary: "exit 0".into(),
                target: Some("cargo test".into()),
                diff: None,
                duration_ms: 2000,
                ts: 3,
            })
            .unwrap();
        writer
            .append(&Record::Usage {
                usage: Usage { input_tokens: 1000, output_tokens: 50, cached_input_tokens: 0 },
                ts: 4,
            })
            .unwrap();
    }
    writer.path.clone()
}

fn bench_load(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = transcript(dir.path());
    let size = std::fs::metadata(&path).unwrap().len();
    println!("transcript: 10,000 events, {:.1} MB", size as f64 / 1e6);
    c.bench_function("load 10k-event transcript", |b| b.iter(|| store::load(&path).unwrap().records.len()));
    c.bench_function("load + rebuild conversation, 10k events", |b| {
        b.iter(|| {
            let loaded = store::load(&path).unwrap();
            resume::conversation(&loaded.records).len()
        })
    });
    c.bench_function("list sessions (one 10k-event file)", |b| b.iter(|| store::list(dir.path()).len()));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench_load
}
criterion_main!(benches);
