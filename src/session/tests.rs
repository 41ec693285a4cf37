use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;

use super::record::*;
use super::store::*;
use crate::agent::CallStatus;
use crate::provider::{Block, Message, Role, ToolCall, ToolResult, Usage};

fn meta(id: &str) -> Meta {
    Meta {
        v: VERSION,
        id: id.into(),
        created: "2026-11-29T19:00:00Z".into(),
        cwd: "/w/proj".into(),
        provider: "openai".into(),
        model: "gpt-4.1".into(),
        hew_version: "0.1.0".into(),
    }
}

fn assistant_calling(ids: &[&str]) -> Message {
    Message {
        role: Role::Assistant,
        content: std::iter::once(Block::Text { text: "Looking.".into() })
            .chain(ids.iter().map(|id| {
                Block::ToolCall(ToolCall {
                    id: (*id).into(),
                    name: "bash".into(),
                    arguments: "{\"command\":\"ls\"}".into(),
                })
            }))
            .collect(),
    }
}

fn result(id: &str, content: &str) -> Record {
    Record::ToolResult {
        call_id: id.into(),
        name: "bash".into(),
        status: CallStatus::Ok,
        content: content.into(),
        full: None,
        is_error: false,
        summary: "exit 0".into(),
        target: Some("ls".into()),
        diff: None,
        duration_ms: 12,
        ts: 5,
    }
}

fn every_kind() -> Vec<Record> {
    vec![
        Record::User { text: "list files".into(), ts: 1 },
        Record::Assistant { message: assistant_calling(&["c1"]), ts: 2 },
        Record::Decision { call_id: "c1".into(), decision: "approved".into(), ts: 3 },
        result("c1", "a.txt\n"),
        Record::Usage { usage: Usage { input_tokens: 10, output_tokens: 2, cached_input_tokens: 1 }, ts: 6 },
        Record::Error { message: "the provider answered 500".into(), ts: 7 },
        Record::Outcome { outcome: "done".into(), ts: 8 },
    ]
}

#[test]
fn every_record_kind_round_trips_and_files_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let mut writer = Writer::new(&sessions, meta("20261129T190000-abc123"));
    assert!(!writer.path.exists(), "nothing is written before the first record");
    for record in every_kind() {
        writer.append(&record).unwrap();
    }
    let loaded = load(&writer.path).unwrap();
    assert_eq!(loaded.meta, meta("20261129T190000-abc123"));
    assert_eq!(loaded.records, every_kind());
    assert!(loaded.warnings.is_empty());
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&writer.path), 0o600);
    assert_eq!(mode(&sessions), 0o700);
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = Writer::new(dir.path(), meta("s1"));
    writer.append(&Record::User { text: "hi".into(), ts: 1 }).unwrap();
    let mut bytes = std::fs::read(&writer.path).unwrap();
    bytes.extend_from_slice(b"{\"type\":\"assistant\",\"message\":{\"role\":\"assis");
    std::fs::write(&writer.path, bytes).unwrap();
    let loaded = load(&writer.path).unwrap();
    assert_eq!(loaded.records, vec![Record::User { text: "hi".into(), ts: 1 }]);
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].contains("cut off"), "{:?}", loaded.warnings);
}

#[test]
fn damaged_and_unknown_lines_do_not_stop_loading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let meta_line = serde_json::to_string(&Record::Meta(meta("s"))).unwrap();
    std::fs::write(&path, format!("{meta_line}\nnot json at all\n{{\"type\":\"from_the_future\",\"x\":1}}\n{{\"type\":\"user\",\"text\":\"ok\"}}\n")).unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.records, vec![Record::User { text: "ok".into(), ts: 0 }]);
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    std::fs::write(&path, "{\"type\":\"user\",\"text\":\"no meta\"}\n").unwrap();
    assert!(matches!(load(&path), Err(SessionError::Corrupt { .. })));
}

#[test]
fn ids_prefixes_last_and_traversal() {
    let dir = tempfile::tempdir().unwrap();
    for (id, cwd) in [
        ("20261129T100000-aaaaaa", "/w/one"),
        ("20261129T110000-bbbbbb", "/w/two"),
        ("20261129T120000-cccccc", "/w/one"),
    ] {
        let mut m = meta(id);
        m.cwd = cwd.into();
        Writer::new(dir.path(), m).append(&Record::User { text: format!("prompt of {id}"), ts: 1 }).unwrap();
    }
    let stem = |p: std::path::PathBuf| p.file_stem().unwrap().to_string_lossy().into_owned();
    let one = std::path::Path::new("/w/one");
    assert_eq!(stem(resolve(dir.path(), "20261129T110000-bbbbbb", one).unwrap()), "20261129T110000-bbbbbb");
    assert_eq!(stem(resolve(dir.path(), "20261129T11", one).unwrap()), "20261129T110000-bbbbbb");
    assert_eq!(stem(resolve(dir.path(), "last", one).unwrap()), "20261129T120000-cccccc");
    assert_eq!(stem(resolve(dir.path(), "last", std::path::Path::new("/w/two")).unwrap()), "20261129T110000-bbbbbb");
    assert_eq!(
        resolve(dir.path(), "20261129", one),
        Err(SessionError::Ambiguous { prefix: "20261129".into(), count: 3 })
    );
    assert_eq!(resolve(dir.path(), "nope", one), Err(SessionError::Unknown("nope".into())));
    for bad in ["../../etc/passwd", "..", "a/b", "", "x.jsonl", "id with space", "\u{0}"] {
        assert_eq!(resolve(dir.path(), bad, one), Err(SessionError::BadId(bad.into())), "{bad:?}");
    }
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(resolve(empty.path(), "last", one), Err(SessionError::NoneYet(_))));
    let listed = list(dir.path());
    assert_eq!(
        listed.iter().map(|s| s.meta.id.as_str()).collect::<Vec<_>>(),
        vec!["20261129T120000-cccccc", "20261129T110000-bbbbbb", "20261129T100000-aaaaaa"]
    );
    assert_eq!(listed[0].turns, 1);
    assert_eq!(listed[0].first_prompt, "prompt of 20261129T120000-cccccc");
}

#[test]
fn resume_answers_calls_that_never_finished() {
    let records = vec![
        Record::User { text: "go".into(), ts: 0 },
        Record::Assistant { message: assistant_calling(&["a", "b"]), ts: 0 },
        result("b", "second"),
        Record::User { text: "again".into(), ts: 0 },
    ];
    let messages = super::resume::conversation(&records);
    assert_eq!(messages.len(), 4);
    assert_eq!(
        messages[2].content,
        vec![
            Block::ToolResult(ToolResult {
                call_id: "a".into(),
                content: "interrupted: hew stopped before this call finished; it may have run partly".into(),
                is_error: true
            }),
            Block::ToolResult(ToolResult { call_id: "b".into(), content: "second".into(), is_error: false }),
        ]
    );
    assert_eq!(messages[3], Message::user_text("again"));
    // A session that ends mid-call gets its results too.
    let cut = super::resume::conversation(&records[..2]);
    assert_eq!(cut.len(), 3);
    assert_eq!(cut[2].role, Role::User);
}

#[test]
fn ids_sort_by_time_and_timestamps_are_utc() {
    assert_eq!(timestamp(1_767_225_610, false), "2026-01-01T00:00:10Z");
    assert_eq!(timestamp(1_767_225_610, true), "20260101T000010");
    let a = new_id();
    assert!(valid_id(&a) && a.len() == 22, "{a}");
}

#[test]
fn export_reads_like_a_transcript() {
    let loaded = Loaded { meta: meta("20261129T190000-abc123"), records: every_kind(), warnings: vec![] };
    insta::assert_snapshot!(super::export::markdown(&loaded));
}

#[test]
fn resume_applies_rewinds() {
    let records = vec![
        Record::User { text: "one".into(), ts: 0 },
        Record::Assistant {
            message: Message { role: Role::Assistant, content: vec![Block::Text { text: "a".into() }] },
            ts: 0,
        },
        Record::User { text: "two".into(), ts: 0 },
        Record::Assistant { message: assistant_calling(&["x"]), ts: 0 },
        Record::Rewind { before_message: 2, ts: 0 },
        Record::User { text: "two, again".into(), ts: 0 },
    ];
    let messages = super::resume::conversation(&records);
    let texts: Vec<String> = messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts, vec!["one", "a", "two, again"]);
}
