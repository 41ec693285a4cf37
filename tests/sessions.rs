//! Sessions through the real binary: saved as they happen, listed,
//! exported, resumed in both wire formats, and surviving SIGKILL.

mod support;

use serde_json::{Value, json};
use support::env::{Env, KEY};
use support::text;
use support::{Server, Turn, Wire, reply};

fn session_files(env: &Env) -> Vec<std::path::PathBuf> {
    let dir = env.home.path().join("hew/sessions");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn resume_in(wire: Wire) {
    let env = Env::new();
    let server = Server::start(
        wire,
        vec![
            reply(Turn::call("w1", "write_file", json!({"path": "plan.txt", "content": "step one\n"}))),
            reply(Turn::text("Wrote the plan.")),
            reply(Turn::text("It says step one.")),
        ],
    );
    let first = env.cmd(Some(&server)).args(["exec", "--approval", "auto-edit", "write a plan"]).output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let files = session_files(&env);
    assert_eq!(files.len(), 1);

    let second = env.cmd(Some(&server)).args(["exec", "--resume", "last", "what does the plan say?"]).output().unwrap();
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(text(&second.stdout), "It says step one.\n");
    assert_eq!(session_files(&env).len(), 1, "the resumed session appends to the same file");
    let undo = files[0].with_extension("undo");
    assert!(std::fs::read_to_string(&undo).unwrap().contains("plan.txt"), "the write left an undo checkpoint");

    let body = &server.requests()[2].body;
    let messages = body["messages"].as_array().unwrap();
    match wire {
        Wire::OpenAi => {
            let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
            assert_eq!(roles, vec!["system", "user", "assistant", "tool", "assistant", "user"]);
            assert_eq!(messages[2]["tool_calls"][0]["function"]["name"], "write_file");
            assert_eq!(messages[3]["tool_call_id"], "w1");
            assert_eq!(messages[3]["content"], "created plan.txt (1 line)");
            assert_eq!(messages[5]["content"], "what does the plan say?");
        }
        Wire::Anthropic => {
            let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
            assert_eq!(roles, vec!["user", "assistant", "user", "assistant", "user"]);
            assert_eq!(messages[1]["content"][0]["type"], "tool_use");
            assert_eq!(messages[2]["content"][0]["tool_use_id"], "w1");
            assert_eq!(messages[4]["content"][0]["text"], "what does the plan say?");
        }
    }
}

#[test]
fn resume_rebuilds_the_conversation_over_openai() {
    resume_in(Wire::OpenAi);
}

#[test]
fn resume_rebuilds_the_conversation_over_anthropic() {
    resume_in(Wire::Anthropic);
}

#[test]
fn sessions_are_listed_and_exported() {
    let env = Env::new();
    let server = Server::start(
        Wire::OpenAi,
        vec![reply(Turn::call("b1", "bash", json!({"command": "echo hello"}))), reply(Turn::text("It printed hello."))],
    );
    let out = env.cmd(Some(&server)).args(["exec", "--approval", "full-auto", "say hello"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));

    let listed = env.cmd(None).arg("sessions").output().unwrap();
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    let line = text(&listed.stdout);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.contains(&env.work.path().canonicalize().unwrap().display().to_string())
            && line.contains("1 turns")
            && line.ends_with("say hello\n"),
        "{line}"
    );

    let md = text(&env.cmd(None).args(["export", "last"]).output().unwrap().stdout);
    assert!(md.starts_with("# hew session "), "{md}");
    assert!(
        md.contains("## You")
            && md.contains("say hello")
            && md.contains("### `bash` echo hello — ok")
            && md.contains("```\nhello\n```"),
        "{md}"
    );
    assert!(md.contains("It printed hello."));

    let json = text(&env.cmd(None).args(["export", "last", "--format", "json"]).output().unwrap().stdout);
    let kinds: Vec<String> =
        json.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_owned()).collect();
    assert_eq!(kinds, vec!["meta", "user", "assistant", "usage", "tool_result", "assistant", "usage", "outcome"]);

    for (id, expected) in [("../../etc/passwd", "is not a session id"), ("zzz", "no session matches `zzz`")] {
        let out = env.cmd(None).args(["export", id]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains(expected), "{}", text(&out.stderr));
    }
    let out = env.cmd(Some(&server)).args(["exec", "--resume", "../x", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_killed_session_resumes_with_the_running_call_interrupted() {
    let env = Env::new();
    let server = Server::start(
        Wire::Anthropic,
        vec![
            reply(Turn::call("s1", "bash", json!({"command": "echo $$ > pid.txt; sleep 30"}))),
            reply(Turn::text("Picked up.")),
        ],
    );
    let child = env.spawn(&server, &["exec", "--approval", "full-auto", "wait"]);
    let pid = env.wait_for_pid("pid.txt");
    let mut child = child;
    child.kill().unwrap(); // SIGKILL: no cleanup runs
    child.wait().unwrap();
    // The orphaned command is ours to end here; hew had no chance to.
    unsafe { libc::killpg(pid, libc::SIGKILL) };

    let out = env.cmd(Some(&server)).args(["exec", "--resume", "last", "go on"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let messages = server.requests()[1].body["messages"].clone();
    let result = &messages[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "s1");
    assert!(result["content"].as_str().unwrap().starts_with("interrupted"), "{result}");
}

#[test]
fn no_key_in_any_file_hew_writes() {
    let env = Env::new();
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("b1", "bash", json!({"command": "env; echo $OPENAI_API_KEY"}))),
            reply(Turn::text("done")),
        ],
    );
    let out = env
        .cmd(Some(&server))
        .env("RUST_LOG", "trace")
        .args(["exec", "--approval", "full-auto", "show env"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let mut checked = 0;
    for entry in walk(&env.home.path().join("hew")) {
        let content = std::fs::read(&entry).unwrap();
        assert!(!String::from_utf8_lossy(&content).contains(KEY), "{} holds the key", entry.display());
        checked += 1;
    }
    assert!(checked >= 2, "the session and the log were checked");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
