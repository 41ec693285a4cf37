//! The real binary, headless, against the scripted provider.

mod support;

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::{Value, json};
use support::env::{Env, KEY};
use support::text;
use support::{Server, Step, Turn, Wire, reply, status};

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

/// All text the model received in a request, for checking what it was told.
fn seen(body: &Value) -> String {
    body.to_string()
}

fn write_then_answer(wire: Wire) {
    let env = Env::new();
    let server = Server::start(
        wire,
        vec![
            reply(
                Turn::call("c1", "write_file", json!({"path": "hello.txt", "content": "hi\n"}))
                    .with_text("Creating it."),
            ),
            reply(Turn::call("c2", "bash", json!({"command": "cat hello.txt"}))),
            reply(Turn::text("Created hello.txt; it says hi.")),
        ],
    );
    let out = run(env.cmd(Some(&server)).args([
        "exec",
        "--approval",
        "full-auto",
        "create hello.txt that says hi, then show it with cat",
    ]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(text(&out.stdout), "Created hello.txt; it says hi.\n");
    assert_eq!(std::fs::read_to_string(env.path("hello.txt")).unwrap(), "hi\n");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "one line per tool call: {stderr}");
    assert!(lines[0].starts_with("● write_file hello.txt → new, 1 line"), "{stderr}");
    assert!(lines[1].starts_with("● bash cat hello.txt → exit 0"), "{stderr}");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let last = &requests[2];
    match wire {
        Wire::OpenAi => {
            assert_eq!(last.path, "/v1/chat/completions");
            assert_eq!(last.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
            assert_eq!(last.body["stream"], json!(true));
            assert_eq!(last.body["stream_options"], json!({"include_usage": true}));
            let messages = last.body["messages"].as_array().unwrap();
            assert_eq!(messages[0]["role"], "system");
            let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
            assert_eq!(tool["tool_call_id"], "c2");
            assert_eq!(tool["content"], "hi\n");
        }
        Wire::Anthropic => {
            assert_eq!(last.path, "/v1/messages");
            assert_eq!(last.header("x-api-key"), Some(KEY));
            assert_eq!(last.header("anthropic-version"), Some("2023-06-01"));
            assert!(last.body["system"].as_str().unwrap().contains("You are hew"));
            let messages = last.body["messages"].as_array().unwrap();
            let results = &messages.last().unwrap()["content"];
            assert_eq!(results[0]["type"], "tool_result");
            assert_eq!(results[0]["tool_use_id"], "c2");
            assert_eq!(results[0]["content"], "hi\n");
            let calls = &messages[messages.len() - 2]["content"];
            assert_eq!(calls[0]["type"], "tool_use");
            assert_eq!(calls[0]["input"], json!({"command": "cat hello.txt"}));
        }
    }
    // Every request offers the same eight tools.
    let tools = last.body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 8);
}

#[test]
fn write_file_then_answer_over_openai() {
    write_then_answer(Wire::OpenAi);
}

#[test]
fn write_file_then_answer_over_anthropic() {
    write_then_answer(Wire::Anthropic);
}

#[test]
fn transient_errors_are_retried_and_succeed() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let env = Env::new();
        let server = Server::start(
            wire,
            vec![
                status(500, "{\"error\":{\"message\":\"boom\"}}"),
                Step::Status(
                    429,
                    "{\"error\":{\"message\":\"slow down\"}}".into(),
                    vec![("Retry-After".into(), "0".into())],
                ),
                Step::Cut(Turn::text("this reply is cut before its end"), 90),
                reply(Turn::text("fine now")),
            ],
        );
        let out = run(env.cmd(Some(&server)).args(["exec", "hello"]));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(text(&out.stdout), "fine now\n");
        assert_eq!(server.requests().len(), 4);
        assert!(stderr.contains("500: boom; retrying"), "{stderr}");
        assert!(stderr.contains("429: slow down; retrying in 0.0s"), "{stderr}");
        assert!(stderr.contains("broke off"), "{stderr}");
    }
}

#[test]
fn unauthorized_fails_once_with_one_line() {
    let env = Env::new();
    let server = Server::start(
        Wire::OpenAi,
        vec![status(401, "{\"error\":{\"message\":\"Incorrect API key provided: sk-test-secret-key-123\"}}")],
    );
    let out = run(env.cmd(Some(&server)).args(["exec", "hello"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr, "hew: the provider answered 401: Incorrect API key provided: [redacted]\n");
    assert_eq!(server.requests().len(), 1, "a 401 is never retried");
    assert!(!stderr.contains(KEY));
}

#[test]
fn a_refused_connection_fails_in_seconds() {
    let env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let started = std::time::Instant::now();
    let out = run(env.cmd(None).env("OPENAI_API_KEY", KEY).args([
        "--base-url",
        &format!("http://127.0.0.1:{port}/v1"),
        "exec",
        "hi",
    ]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    let last = stderr.lines().last().unwrap();
    assert!(last.starts_with(&format!("hew: cannot reach http://127.0.0.1:{port}/v1/chat/completions:")), "{stderr}");
    assert!(last.to_lowercase().contains("refused"), "{stderr}");
    // Bounded by the retry policy, far from minutes; not a timing assertion.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
fn malformed_arguments_and_unknown_tools_go_back_to_the_model() {
    let env = Env::new();
    std::fs::write(env.path("a.txt"), "alpha\n").unwrap();
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::raw_call("c1", "read_file", "{\"path\": \"a.txt\"")),
            reply(Turn::call("c2", "frobnicate", json!({})).and_call("c3", "read_file", json!({"path": 7}))),
            reply(Turn::call("c4", "read_file", json!({"path": "a.txt"}))),
            reply(Turn::text("alpha it is")),
        ],
    );
    let out = run(env.cmd(Some(&server)).args(["exec", "read a.txt"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "alpha it is\n");
    let requests = server.requests();
    assert!(seen(&requests[1].body).contains("read_file: the arguments are not valid JSON"));
    let second = seen(&requests[2].body);
    assert!(
        second.contains(
            "there is no tool named `frobnicate`; the tools are: agent, bash, edit_file, glob, grep, read_file, todo, write_file"
        ),
        "{second}"
    );
    assert!(second.contains("field `path` must be a string, not the number 7"), "{second}");
    assert!(seen(&requests[3].body).contains("1\\talpha"));
}

#[test]
fn read_only_is_the_exec_default_and_says_how_to_allow() {
    let env = Env::new();
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("c1", "write_file", json!({"path": "x.txt", "content": "x"})).and_call(
                "c2",
                "bash",
                json!({"command": "touch y.txt"}),
            )),
            reply(Turn::call("c3", "bash", json!({"command": "ls -a && pwd"}))),
            reply(Turn::text("I could not write.")),
        ],
    );
    let out = run(env.cmd(Some(&server)).args(["exec", "write x"]));
    assert_eq!(out.status.code(), Some(0));
    assert!(!env.path("x.txt").exists() && !env.path("y.txt").exists());
    let told = seen(&server.requests()[1].body);
    assert!(
        told.contains("file changes are refused in read-only mode; the user can allow them with --approval auto-edit"),
        "{told}"
    );
    assert!(told.contains("commands that may change things are refused in read-only mode"), "{told}");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("⊘ write_file x.txt → refused"), "{stderr}");
    assert!(stderr.contains("● bash ls -a && pwd → exit 0"), "read-only commands run: {stderr}");
}

#[test]
fn max_turns_stops_with_exit_1() {
    let env = Env::new();
    let steps = (0..5).map(|i| reply(Turn::call(&format!("c{i}"), "glob", json!({"pattern": "*"})))).collect();
    let server = Server::start(Wire::Anthropic, steps);
    let out = run(env.cmd(Some(&server)).args(["exec", "--max-turns", "2", "loop"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("stopped after 2 model round-trips (--max-turns)"));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn json_mode_prints_one_event_per_line() {
    let env = Env::new();
    let server = Server::start(
        Wire::OpenAi,
        vec![reply(Turn::call("c1", "glob", json!({"pattern": "*"}))), reply(Turn::text("none"))],
    );
    let out = run(env.cmd(Some(&server)).args(["exec", "--json", "list"]));
    assert_eq!(out.status.code(), Some(0));
    let events: Vec<Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).filter(|k| *k != "text_delta").collect();
    assert_eq!(
        kinds,
        vec![
            "turn_started",
            "request_started",
            "usage",
            "assistant_text",
            "tool_call",
            "tool_started",
            "tool_finished",
            "request_started",
            "usage",
            "assistant_text",
            "turn_finished"
        ]
    );
    let last = events.last().unwrap();
    assert_eq!(last["outcome"], "done");
    assert_eq!(last["answer"], "none");
    assert!(events[2]["request"]["input_tokens"].as_u64().unwrap() > 1000, "the server counts the prompt");
}

#[test]
fn bad_configuration_and_flags_exit_2_with_one_line() {
    let env = Env::new();
    let missing = run(env.cmd(None).args(["exec", "hi"]));
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(text(&missing.stderr), "hew: no API key for provider `openai`: set OPENAI_API_KEY\n");

    let home = env.home.path().join("hew");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "provider = \"openai\"\n[approval]\nmode = \"yolo\"\n").unwrap();
    let bad = run(env.cmd(None).env("OPENAI_API_KEY", KEY).args(["exec", "hi"]));
    assert_eq!(bad.status.code(), Some(2));
    let line = text(&bad.stderr);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("config.toml:3: approval.mode: unknown variant `yolo`"), "{line}");
    std::fs::remove_file(home.join("config.toml")).unwrap();

    std::fs::create_dir_all(env.path(".hew")).unwrap();
    std::fs::write(env.path(".hew/config.toml"), "max_turns = \"ten\"\n").unwrap();
    let bad = run(env.cmd(None).env("OPENAI_API_KEY", KEY).args(["exec", "hi"]));
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains(".hew/config.toml:1: max_turns: invalid type"), "{}", text(&bad.stderr));
    std::fs::remove_file(env.path(".hew/config.toml")).unwrap();

    for args in [
        vec!["--approval", "yolo", "exec", "hi"],
        vec!["--max-turns", "-3", "exec", "hi"],
        vec!["exec", "--frobnicate", "hi"],
    ] {
        let out = run(env.cmd(None).env("OPENAI_API_KEY", KEY).args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with("error:"), "{stderr}");
        assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"));
    }
    for (args, expected) in [
        (vec!["--provider", "nope", "exec", "hi"], "hew: unknown provider `nope`"),
        (vec!["--max-turns", "0", "exec", "hi"], "hew: max_turns must be at least 1"),
        (vec!["--base-url", "ftp://x", "exec", "hi"], "hew: base_url `ftp://x` must be an http:// or https:// address"),
        (vec!["--cwd", "/no/such/dir", "exec", "hi"], "hew: workspace /no/such/dir:"),
    ] {
        let out = run(env.cmd(None).env("OPENAI_API_KEY", KEY).args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).starts_with(expected), "{}", text(&out.stderr));
    }
}

#[test]
fn a_loopback_server_needs_no_key() {
    let env = Env::new();
    let server = Server::start(Wire::OpenAi, vec![reply(Turn::text("local answer"))]);
    let out = run(env.cmd(None).args(["--base-url", &server.base_url(), "exec", "hi"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[test]
fn the_task_can_come_from_stdin() {
    let env = Env::new();
    let server = Server::start(Wire::OpenAi, vec![reply(Turn::text("ok"))]);
    let out = run(env.cmd(Some(&server)).arg("exec").write_stdin("task from a pipe\n"));
    assert_eq!(out.status.code(), Some(0));
    assert!(seen(&server.requests()[0].body).contains("task from a pipe"));
}

#[test]
fn keys_never_reach_output_logs_or_children() {
    let env = Env::new();
    let server = Server::start(
        Wire::OpenAi,
        vec![reply(Turn::call("c1", "bash", json!({"command": "env"}))), reply(Turn::text("done"))],
    );
    let out =
        run(env.cmd(Some(&server)).env("RUST_LOG", "trace").args(["exec", "--approval", "full-auto", "--json", "env"]));
    assert_eq!(out.status.code(), Some(0));
    assert!(!text(&out.stdout).contains(KEY) && !text(&out.stderr).contains(KEY));
    let told = seen(&server.requests()[1].body);
    assert!(told.contains("PATH="), "the command ran: {told}");
    assert!(!told.contains("OPENAI_API_KEY"), "the child saw the key");
    let log = std::fs::read_to_string(env.home.path().join("hew/logs/hew.log")).unwrap();
    assert!(!log.contains(KEY));
    assert!(log_private(&env.home.path().join("hew/logs/hew.log")));
}

fn log_private(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o077 == 0
}

#[test]
fn sigint_cancels_kills_children_and_exits_130() {
    let env = Env::new();
    let server = Server::start(
        Wire::OpenAi,
        vec![reply(Turn::call(
            "c1",
            "bash",
            json!({"command": "(sleep 60; echo late > late.txt) & echo $! > pid.txt; sleep 60"}),
        ))],
    );
    let child = env.spawn(&server, &["exec", "--approval", "full-auto", "wait"]);
    let grandchild = env.wait_for_pid("pid.txt");
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(support::gone_soon(grandchild), "the backgrounded grandchild outlived the interrupt");
    assert!(!env.path("late.txt").exists());
}

#[test]
fn max_cost_stops_before_a_request_that_would_cross_it() {
    let env = Env::new();
    let server = Server::start(Wire::OpenAi, vec![reply(Turn::text("cheap enough"))]);
    // At $1000 per million input tokens the first prompt (system prompt and
    // tool schemas, some thousands of tokens) alone costs dollars.
    let home = env.home.path().join("hew");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "[models.\"pricey\"]\ninput_price = 1000.0\noutput_price = 1000.0\n")
        .unwrap();
    let out = run(env.cmd(Some(&server)).args(["exec", "--model", "pricey", "--max-cost", "0.5", "hi"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("it would take spending past --max-cost $0.50 (spent $0.0000 so far)"), "{stderr}");
    assert_eq!(server.requests().len(), 0, "nothing was sent");

    let out = run(env.cmd(Some(&server)).args(["exec", "--model", "pricey", "--max-cost", "50", "hi"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let out = run(env.cmd(Some(&server)).args(["exec", "--model", "mystery-model", "--max-cost", "1", "hi"]));
    assert!(text(&out.stderr).contains("the price of mystery-model is unknown, so --max-cost cannot be enforced"));
}

#[test]
fn agents_md_reaches_the_system_prompt() {
    let env = Env::new();
    std::fs::write(env.path("AGENTS.md"), "Always run `make check` before answering.").unwrap();
    let server = Server::start(Wire::Anthropic, vec![reply(Turn::text("ok"))]);
    let out = run(env.cmd(Some(&server)).args(["exec", "hi"]));
    assert_eq!(out.status.code(), Some(0));
    let system = server.requests()[0].body["system"].as_str().unwrap().to_owned();
    assert!(
        system.contains("# Project instructions") && system.contains("Always run `make check` before answering."),
        "{system}"
    );
    assert!(text(&out.stderr).contains("following instructions from") && text(&out.stderr).contains("AGENTS.md"));
}
