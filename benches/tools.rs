//! Hot paths of the tools: grep over a 10,000-file tree, and edit_file on a
//! 5 MB file (read, replace, diff, atomic write).

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use hew::tools::{Registry, ToolContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A deterministic tree of 10,000 source-like files, made once and reused.
fn tree() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tree10k");
    let done = root.join(".complete");
    if done.exists() {
        return root;
    }
    for d in 0..100 {
        let dir = root.join(format!("module_{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let mut text = String::new();
            for l in 0..60 {
                let n = d * 10_000 + f * 100 + l;
                if n % 997 == 0 {
                    text.push_str(&format!(
                        "pub fn parse_header_{n}(input: &str) -> Option<u32> {{ input.parse().ok() }}\n"
                    ));
                } else {
                    text.push_str(&format!(
                        "    let value_{l} = compute({n}, \"text that does not match\"); // line {l}\n"
                    ));
                }
            }
            std::fs::write(dir.join(format!("file_{f:03}.rs")), text).unwrap();
        }
    }
    std::fs::write(&done, "").unwrap();
    root
}

fn bench_grep(c: &mut Criterion) {
    let root = tree();
    let ctx = ToolContext::new(root.canonicalize().unwrap(), vec![], vec![]);
    let registry = Registry::standard();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let args = json!({"pattern": "fn\\s+parse_header_\\d+"});
    let (tool, args) = registry.prepare("grep", &args.to_string()).unwrap();
    c.bench_function("grep 10k files", |b| {
        b.iter(|| {
            let plan = tool.plan(&args, &ctx).unwrap();
            let out = rt.block_on(tool.execute(&args, plan, &ctx, CancellationToken::new()));
            assert!(!out.is_error && out.summary.ends_with("matches"));
        })
    });
}

fn bench_edit(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let text: String =
        (0..100_000).map(|i| format!("line {i:06} of a five megabyte file, padded out a bit\n")).collect();
    assert!(text.len() >= 5_000_000);
    std::fs::write(root.join("big.txt"), &text).unwrap();
    let ctx = ToolContext::new(root, vec![], vec![]);
    let registry = Registry::standard();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let run = |name: &str, args: serde_json::Value| {
        let (tool, args) = registry.prepare(name, &args.to_string()).unwrap();
        let plan = tool.plan(&args, &ctx).unwrap();
        rt.block_on(tool.execute(&args, plan, &ctx, CancellationToken::new()))
    };
    assert!(!run("read_file", json!({"path": "big.txt", "limit": 1})).is_error);
    let mut flip = false;
    c.bench_function("edit_file 5 MB", |b| {
        b.iter(|| {
            let (old, new) = if flip { ("LINE 050000", "line 050000") } else { ("line 050000", "LINE 050000") };
            flip = !flip;
            let out = run("edit_file", json!({"path": "big.txt", "old_text": old, "new_text": new}));
            assert!(!out.is_error, "{}", out.content);
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_grep, bench_edit
}
criterion_main!(benches);
