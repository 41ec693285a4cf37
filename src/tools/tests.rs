//! Tool behaviour, including every kind of bad input the model can send.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;

struct Work {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
    registry: Registry,
}

fn work() -> Work {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ctx = ToolContext::new(root, vec![], vec!["HEW_TEST_SECRET".into()]);
    Work { _dir: dir, ctx, registry: Registry::standard() }
}

impl Work {
    fn root(&self) -> &Path {
        self.ctx.jail.root()
    }

    fn write(&self, rel: &str, content: &str) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    /// Runs a call through both gates and the tool, as the agent would
    /// (approval aside). Gate failures come back as error outputs.
    async fn call(&self, name: &str, args: Value) -> ToolOutput {
        self.call_raw(name, &args.to_string()).await
    }

    async fn call_raw(&self, name: &str, raw: &str) -> ToolOutput {
        let (tool, args) = match self.registry.prepare(name, raw) {
            Ok(ready) => ready,
            Err(e) => return ToolOutput::error(e),
        };
        let plan = match tool.plan(&args, &self.ctx) {
            Ok(plan) => plan,
            Err(e) => return ToolOutput::error(e),
        };
        tool.execute(&args, plan, &self.ctx, CancellationToken::new()).await
    }

    async fn ok(&self, name: &str, args: Value) -> String {
        let out = self.call(name, args).await;
        assert!(!out.is_error, "{name} failed: {}", out.content);
        out.content
    }

    async fn err(&self, name: &str, args: Value) -> String {
        let out = self.call(name, args).await;
        assert!(out.is_error, "{name} should fail, got: {}", out.content);
        out.content
    }
}

#[test]
fn registry_refuses_duplicates_and_lists_the_tools() {
    let mut registry = Registry::standard();
    assert_eq!(registry.names(), vec!["agent", "bash", "edit_file", "glob", "grep", "read_file", "todo", "write_file"]);
    assert_eq!(Registry::read_only().names(), vec!["bash", "glob", "grep", "read_file"]);
    assert_eq!(registry.register(Box::new(read_file::ReadFile)), Err(DuplicateTool("read_file".into())));
    for spec in registry.specs() {
        assert_eq!(spec.schema["type"], "object", "{}", spec.name);
        assert!(spec.description.len() > 100, "{} needs a real description", spec.name);
    }
}

#[tokio::test]
async fn shape_errors_name_the_field() {
    let w = work();
    assert!(w.call_raw("read_file", "{\"path\": ").await.content.contains("not valid JSON"));
    assert!(w.call("read_file", json!({"path": 3})).await.content.contains("field `path` must be a string"));
    assert!(w.call("read_file", json!({"path": "a", "colour": 1})).await.content.contains("unknown field `colour`"));
    assert!(
        w.call("edit_file", json!({"path": "a", "old_text": "x"}))
            .await
            .content
            .contains("missing required field `new_text`")
    );
    assert!(w.call("bash", json!({"command": "ls", "timeout_s": 9999})).await.content.contains("at most 600"));
    assert!(w.call("nope", json!({})).await.content.contains("there is no tool named `nope`"));
}

#[tokio::test]
async fn read_numbers_lines_and_pages_with_offset_and_limit() {
    let w = work();
    let text: String = (1..=5400).map(|i| format!("line {i}\n")).collect();
    w.write("big.txt", &text);
    let first = w.ok("read_file", json!({"path": "big.txt"})).await;
    assert!(first.starts_with("1\tline 1\n2\tline 2\n"));
    assert!(
        first.ends_with("2000\tline 2000\n[lines 2001-5400 not shown; pass offset=2001 to read on]\n"),
        "{}",
        &first[first.len() - 200..]
    );
    let window = w.ok("read_file", json!({"path": "big.txt", "offset": 5399, "limit": 10})).await;
    assert_eq!(window, "5399\tline 5399\n5400\tline 5400\n[lines 1-5398 not shown]\n");
    let err = w.err("read_file", json!({"path": "big.txt", "offset": 6000})).await;
    assert!(err.contains("offset 6000 is past the end of the file (5400 lines)"), "{err}");
}

#[tokio::test]
async fn read_round_trips_unicode_and_cuts_long_lines() {
    let w = work();
    w.write("u.txt", &format!("héllo wörld — 你好 🎉\r\n{}\n", "x".repeat(5000)));
    let out = w.ok("read_file", json!({"path": "u.txt"})).await;
    assert!(out.starts_with("1\théllo wörld — 你好 🎉\n2\txxx"), "{out}");
    assert!(out.contains("… [line cut at 2000 of 5000 characters]"));
    assert!(out.contains("[1 long lines were cut]"));
}

#[tokio::test]
async fn read_refuses_what_is_not_a_text_file() {
    let w = work();
    std::fs::write(w.root().join("bin.dat"), [0u8, 159, 146, 150, 1, 2]).unwrap();
    assert!(w.err("read_file", json!({"path": "bin.dat"})).await.contains("binary file (6 bytes)"));
    std::fs::create_dir(w.root().join("folder")).unwrap();
    assert!(w.err("read_file", json!({"path": "folder"})).await.contains("this is a folder"));
    assert!(w.err("read_file", json!({"path": "nothing.txt"})).await.contains("no such file"));
    let fifo = w.root().join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    assert!(w.err("read_file", json!({"path": "pipe"})).await.contains("not a regular file"));
    if unsafe { libc::geteuid() } == 0 {
        // A character device inside the workspace (the same as /dev/null).
        let dev = std::ffi::CString::new(w.root().join("null").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mknod(dev.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) }, 0);
        assert!(w.err("read_file", json!({"path": "null"})).await.contains("not a regular file"));
        assert!(w.err("write_file", json!({"path": "null", "content": "x"})).await.contains("not a regular file"));
    }
    symlink("/dev/zero", w.root().join("zero")).unwrap();
    assert!(w.err("read_file", json!({"path": "zero"})).await.contains("outside the workspace"));
    assert!(w.err("read_file", json!({"path": "a\u{0}b"})).await.contains("NUL"));
    assert!(w.err("read_file", json!({"path": "../../etc/passwd"})).await.contains("outside the workspace"));
    w.write("empty.txt", "");
    assert_eq!(w.ok("read_file", json!({"path": "empty.txt"})).await, "empty.txt is empty (0 lines)");
}

#[tokio::test]
async fn read_of_a_huge_file_is_bounded() {
    let w = work();
    // 1 GB, sparse: instant to make, and the start holds NULs, so it is binary.
    let f = std::fs::File::create(w.root().join("huge.bin")).unwrap();
    f.set_len(1 << 30).unwrap();
    assert!(w.err("read_file", json!({"path": "huge.bin"})).await.contains("binary file (1073741824 bytes)"));
    // A large text file is streamed: only the window is read.
    let line = "0123456789".repeat(10);
    let text: String = (0..200_000).map(|i| format!("{i} {line}\n")).collect();
    w.write("large.txt", &text);
    let out = w.ok("read_file", json!({"path": "large.txt", "limit": 3})).await;
    assert!(out.starts_with("1\t0 0123"), "{out}");
    assert!(out.contains("lines after 3 were not read; pass offset=4"), "{out}");
    // The output cap holds even with long lines and a big limit.
    let out = w.ok("read_file", json!({"path": "large.txt", "limit": 100000})).await;
    assert!(out.len() < read_file::MAX_OUTPUT_BYTES + 500);
    // Too big to hash, it is judged by size and time: an unchanged file may be edited.
    let big: String = (0..180_000).map(|i| format!("{i} {line}\n")).collect();
    w.write("large.txt", &big);
    w.ok("read_file", json!({"path": "large.txt", "limit": 1})).await;
    w.ok("edit_file", json!({"path": "large.txt", "old_text": "\n179999 ", "new_text": "\nlast "})).await;
}

#[tokio::test]
async fn unreadable_files_get_a_clear_message() {
    if unsafe { libc::geteuid() } == 0 {
        return; // root reads everything; the message path is covered by non-root runs
    }
    let w = work();
    w.write("secret.txt", "s");
    std::fs::set_permissions(w.root().join("secret.txt"), std::fs::Permissions::from_mode(0o000)).unwrap();
    assert!(w.err("read_file", json!({"path": "secret.txt"})).await.contains("permission denied"));
}

#[tokio::test]
async fn write_creates_folders_and_reports_lines() {
    let w = work();
    let out = w.ok("write_file", json!({"path": "a/b/c.txt", "content": "one\ntwo\n"})).await;
    assert_eq!(out, "created a/b/c.txt (2 lines)");
    assert_eq!(w.read("a/b/c.txt"), "one\ntwo\n");
    // The model knows what it wrote: overwriting needs no read first.
    let out = w.ok("write_file", json!({"path": "a/b/c.txt", "content": "one\n2\n"})).await;
    assert!(out.contains("-two\n+2\n"), "{out}");
}

#[tokio::test]
async fn write_and_edit_refuse_unread_and_changed_files() {
    let w = work();
    w.write("mine.txt", "a person's text\n");
    let err = w.err("write_file", json!({"path": "mine.txt", "content": "x"})).await;
    assert!(err.contains("has not been read in this session"), "{err}");
    let err = w.err("edit_file", json!({"path": "mine.txt", "old_text": "person", "new_text": "model"})).await;
    assert!(err.contains("has not been read"), "{err}");
    w.ok("read_file", json!({"path": "mine.txt"})).await;
    w.write("mine.txt", "a person's newer text\n");
    let err = w.err("edit_file", json!({"path": "mine.txt", "old_text": "person", "new_text": "model"})).await;
    assert!(err.contains("changed on disk since you read it"), "{err}");
    assert_eq!(w.read("mine.txt"), "a person's newer text\n");
    w.ok("read_file", json!({"path": "mine.txt"})).await;
    w.ok("edit_file", json!({"path": "mine.txt", "old_text": "person", "new_text": "model"})).await;
    assert_eq!(w.read("mine.txt"), "a model's newer text\n");
}

#[tokio::test]
async fn write_refuses_bad_targets() {
    let w = work();
    std::fs::create_dir(w.root().join("dir")).unwrap();
    assert!(w.err("write_file", json!({"path": "dir", "content": "x"})).await.contains("is a folder"));
    w.write("f.txt", "x");
    w.ok("read_file", json!({"path": "f.txt"})).await;
    let err = w.err("write_file", json!({"path": "f.txt/inner.txt", "content": "x"})).await;
    assert!(err.contains("cannot write") || err.contains("Not a directory"), "{err}");
    let huge = "x".repeat(write_file::MAX_CONTENT_BYTES + 1);
    assert!(w.err("write_file", json!({"path": "huge.txt", "content": huge})).await.contains("at most"));
    assert!(!w.root().join("huge.txt").exists());
    assert!(
        w.err("write_file", json!({"path": "/tmp/outside.txt", "content": "x"}))
            .await
            .contains("outside the workspace")
    );
}

#[tokio::test]
async fn edit_basic_not_found_duplicate_and_non_utf8() {
    let w = work();
    w.write("src/lib.rs", "fn one() {}\nfn two() {}\nfn two() {}\n");
    w.ok("read_file", json!({"path": "src/lib.rs"})).await;
    let out =
        w.ok("edit_file", json!({"path": "src/lib.rs", "old_text": "fn one() {}", "new_text": "fn uno() {}"})).await;
    assert!(out.contains("-fn one() {}\n+fn uno() {}"), "{out}");
    assert_eq!(w.read("src/lib.rs"), "fn uno() {}\nfn two() {}\nfn two() {}\n");
    let err = w.err("edit_file", json!({"path": "src/lib.rs", "old_text": "fn three", "new_text": "x"})).await;
    assert!(err.contains("not found"), "{err}");
    let err = w.err("edit_file", json!({"path": "src/lib.rs", "old_text": "fn two() {}", "new_text": "x"})).await;
    assert!(err.contains("occurs 2 times (at lines 2, 3)"), "{err}");
    w.ok(
        "edit_file",
        json!({"path": "src/lib.rs", "old_text": "fn two() {}", "new_text": "fn dos() {}", "replace_all": true}),
    )
    .await;
    assert_eq!(w.read("src/lib.rs"), "fn uno() {}\nfn dos() {}\nfn dos() {}\n");
    let err = w.err("edit_file", json!({"path": "src/lib.rs", "old_text": "", "new_text": "x"})).await;
    assert!(err.contains("old_text is empty"));
    assert!(
        w.err("edit_file", json!({"path": "nope.rs", "old_text": "a", "new_text": "b"}))
            .await
            .contains("does not exist")
    );

    let latin1 = [b'c', b'a', b'f', 0xE9, b'\n'];
    std::fs::write(w.root().join("latin1.txt"), latin1).unwrap();
    w.call("read_file", json!({"path": "latin1.txt"})).await;
    let err = w.err("edit_file", json!({"path": "latin1.txt", "old_text": "caf", "new_text": "bar"})).await;
    assert!(err.contains("not a UTF-8 text file"), "{err}");
    assert_eq!(std::fs::read(w.root().join("latin1.txt")).unwrap(), latin1, "left untouched");
}

#[tokio::test]
async fn edit_keeps_crlf_and_trailing_newline_state() {
    let w = work();
    w.write("win.txt", "a\r\nb\r\nc");
    w.ok("read_file", json!({"path": "win.txt"})).await;
    w.ok("edit_file", json!({"path": "win.txt", "old_text": "b\nc", "new_text": "B\nC"})).await;
    assert_eq!(w.read("win.txt"), "a\r\nB\r\nC");
}

#[tokio::test]
async fn bash_echo_exit_codes_and_stderr() {
    let w = work();
    assert_eq!(w.ok("bash", json!({"command": "echo hello"})).await, "hello\n");
    let out = w.call("bash", json!({"command": "echo out; echo err >&2; exit 3"})).await;
    assert!(out.is_error);
    assert_eq!(out.content, "out\nerr\n\n[exit code 3]");
    assert!(out.summary.starts_with("exit 3"));
    assert_eq!(w.ok("bash", json!({"command": "true"})).await, "(no output)");
    assert_eq!(w.ok("bash", json!({"command": "cat; echo stdin-closed"})).await, "stdin-closed\n");
    assert!(w.err("bash", json!({"command": "   "})).await.contains("empty"));
}

#[tokio::test]
async fn bash_hides_keys_from_children() {
    // SAFETY: tests in this binary do not read this variable concurrently.
    unsafe { std::env::set_var("HEW_TEST_SECRET", "leak") };
    let w = work();
    let out = w.ok("bash", json!({"command": "echo \"[${HEW_TEST_SECRET:-hidden}]\""})).await;
    assert_eq!(out, "[hidden]\n");
}

#[tokio::test]
async fn bash_timeout_kills_the_whole_group() {
    let w = work();
    let started = std::time::Instant::now();
    let out =
        w.call("bash", json!({"command": "(sleep 30; touch late) & echo started; sleep 30", "timeout_s": 1})).await;
    assert!(out.is_error);
    assert!(out.content.starts_with("started\n"));
    assert!(out.content.contains("[timed out after 1s; the command and everything it started were killed"));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!w.root().join("late").exists());
}

#[tokio::test]
async fn bash_cancellation_is_prompt() {
    let w = work();
    let (tool, args) = w.registry.prepare("bash", &json!({"command": "sleep 30"}).to_string()).unwrap();
    let plan = tool.plan(&args, &w.ctx).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let out = tool.execute(&args, plan, &w.ctx, cancel).await;
    assert!(out.content.contains("interrupted by the user"));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[tokio::test]
async fn bash_truncates_the_middle_and_keeps_the_whole() {
    let w = work();
    let out = w.call("bash", json!({"command": "seq 1 20000"})).await;
    assert!(out.content.starts_with("1\n2\n3\n"));
    assert!(out.content.contains("characters (") && out.content.contains("lines) cut from the middle"));
    assert!(out.content.trim_end().ends_with("19999\n20000"));
    assert!(out.content.len() < bash::MAX_MODEL_CHARS + 200);
    let full = out.full.expect("the full output is kept");
    assert_eq!(full.lines().count(), 20000);
}

#[tokio::test]
async fn bash_cd_persists_resolves_chains_and_stays_inside() {
    let w = work();
    std::fs::create_dir_all(w.root().join("a/b")).unwrap();
    w.ok("bash", json!({"command": "cd a && cd b"})).await;
    assert_eq!(w.ok("bash", json!({"command": "pwd"})).await, format!("{}\n", w.root().join("a/b").display()));
    let out = w.ok("bash", json!({"command": "cd /"})).await;
    assert!(out.contains("outside the workspace; the next command starts in"), "{out}");
    assert_eq!(w.ok("bash", json!({"command": "pwd"})).await, format!("{}\n", w.root().join("a/b").display()));
    w.ok("bash", json!({"command": "cd .."})).await;
    assert_eq!(w.ok("bash", json!({"command": "pwd"})).await, format!("{}\n", w.root().join("a").display()));
}

#[tokio::test]
async fn glob_finds_newest_first_and_honours_ignores() {
    let w = work();
    w.write("src/old.rs", "");
    w.write("src/deep/new.rs", "");
    w.write("target/gen.rs", "");
    w.write(".gitignore", "target/\n");
    w.write(".git/HEAD.rs", "");
    w.write("README.md", "");
    let old = std::fs::File::options().write(true).open(w.root().join("src/old.rs")).unwrap();
    old.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000)).unwrap();
    assert_eq!(w.ok("glob", json!({"pattern": "**/*.rs"})).await, "src/deep/new.rs\nsrc/old.rs\n");
    assert_eq!(w.ok("glob", json!({"pattern": "*.md"})).await, "README.md\n");
    assert_eq!(w.ok("glob", json!({"pattern": "*.rs", "path": "src"})).await, "src/old.rs\n");
    assert_eq!(w.ok("glob", json!({"pattern": "*.zig"})).await, "no files match in .");
    assert!(w.err("glob", json!({"pattern": "a[", "path": "."})).await.contains("invalid glob pattern"));
    assert!(w.err("glob", json!({"pattern": "*", "path": "README.md"})).await.contains("is a file, not a folder"));
    assert!(w.err("glob", json!({"pattern": "*", "path": "/"})).await.contains("outside the workspace"));
}

#[tokio::test]
async fn glob_over_many_files_is_capped_with_a_count() {
    let w = work();
    for d in 0..5 {
        let dir = w.root().join(format!("d{d}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..400 {
            std::fs::File::create(dir.join(format!("f{f}.txt"))).unwrap();
        }
    }
    let out = w.call("glob", json!({"pattern": "**/*.txt"})).await;
    assert_eq!(out.summary, "2000 files");
    assert_eq!(out.content.lines().count(), glob::MAX_RESULTS + 1);
    assert!(out.content.ends_with("[1800 more files not shown; narrow the pattern or the path]\n"));
}

#[tokio::test]
async fn grep_hits_misses_include_case_and_bad_regex() {
    let w = work();
    w.write("src/a.rs", "fn main() {\n    let Total = 1;\n}\n");
    w.write("src/b.py", "total = 2\n");
    w.write("notes.txt", "nothing here\n");
    std::fs::write(w.root().join("blob.bin"), b"total\0binary").unwrap();
    assert_eq!(w.ok("grep", json!({"pattern": "total"})).await, "src/b.py:1: total = 2\n");
    assert_eq!(
        w.ok("grep", json!({"pattern": "total", "ignore_case": true})).await,
        "src/a.rs:2:     let Total = 1;\nsrc/b.py:1: total = 2\n"
    );
    assert_eq!(
        w.ok("grep", json!({"pattern": "(?i)total", "include": "*.rs"})).await,
        "src/a.rs:2:     let Total = 1;\n"
    );
    assert_eq!(w.ok("grep", json!({"pattern": "fn\\s+main", "path": "src/a.rs"})).await, "src/a.rs:1: fn main() {\n");
    assert_eq!(w.ok("grep", json!({"pattern": "zebra"})).await, "no matches");
    let err = w.err("grep", json!({"pattern": "fn ("})).await;
    assert!(err.starts_with("invalid regex:") && !err.contains('\n'), "{err}");
    assert!(w.err("grep", json!({"pattern": "x", "include": "a["})).await.contains("invalid include glob"));
}

#[tokio::test]
async fn grep_skips_ignored_folders_but_not_an_ignored_looking_root() {
    // The workspace sits inside a folder named like an ignored one, under a
    // .gitignore that ignores it: the search must still see the workspace.
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join(".gitignore"), "build/\n").unwrap();
    let root = outer.path().join("build/proj");
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    std::fs::write(root.join("src/x.rs"), "needle\n").unwrap();
    std::fs::write(root.join("build/out.rs"), "needle\n").unwrap();
    let ctx = ToolContext::new(root.canonicalize().unwrap(), vec![], vec![]);
    let registry = Registry::standard();
    let (tool, args) = registry.prepare("grep", &json!({"pattern": "needle"}).to_string()).unwrap();
    let plan = tool.plan(&args, &ctx).unwrap();
    let out = tool.execute(&args, plan, &ctx, CancellationToken::new()).await;
    assert_eq!(out.content, "src/x.rs:1: needle\n");
}

#[tokio::test]
async fn grep_caps_matches_with_a_count() {
    let w = work();
    let text: String = (0..500).map(|i| format!("hit {i}\n")).collect();
    w.write("many.txt", &text);
    let out = w.call("grep", json!({"pattern": "hit"})).await;
    assert_eq!(out.summary, "500 matches");
    assert!(out.content.ends_with("[300 more matches not shown; narrow the pattern, path or include]\n"));
    assert!(out.content.starts_with("many.txt:1: hit 0\nmany.txt:2: hit 1\n"));
}

#[test]
fn truncate_middle_keeps_both_ends_on_char_boundaries() {
    let text = "é".repeat(100);
    let out = truncate_middle(&text, 50).unwrap();
    assert!(out.starts_with("éé") && out.ends_with("éé"));
    assert!(out.contains("characters (0 lines) cut from the middle"));
    assert_eq!(truncate_middle("short", 50), None);
}

#[tokio::test]
async fn todo_keeps_the_whole_list_and_refuses_bad_items() {
    let w = work();
    let items = json!({"items": [
        {"content": "read the parser", "status": "done"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "run the tests", "status": "pending"}
    ]});
    let out = w.call("todo", items).await;
    assert_eq!(
        out.content,
        "The task list is now (1/3 done):\n[x] read the parser\n[>] fix the bug\n[ ] run the tests\n"
    );
    assert_eq!(out.summary, "updated");
    assert_eq!(w.ctx.todos.lock().unwrap().len(), 3);
    let err = w.err("todo", json!({"items": [{"content": "x", "status": "maybe"}]})).await;
    assert!(err.contains("must be one of"), "{err}");
    assert!(w.err("todo", json!({"items": [{"content": " ", "status": "done"}]})).await.contains("empty content"));
}
