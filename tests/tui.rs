//! The real binary in a real terminal (tmux), against the scripted
//! provider: ask, refuse, approve, interrupt a running command, open the
//! transcript browser, quit — and the terminal comes back clean.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::env::{Env, KEY};
use support::{Server, Turn, Wire, reply};

struct Tmux {
    session: String,
}

impl Tmux {
    fn available() -> bool {
        Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success())
    }

    fn start(command: &str) -> Tmux {
        let session = format!("hew-test-{}", std::process::id());
        let status = Command::new("tmux")
            .args(["new-session", "-d", "-x", "120", "-y", "40", "-s", &session, command])
            .status()
            .unwrap();
        assert!(status.success());
        Tmux { session }
    }

    fn keys(&self, keys: &[&str]) {
        for key in keys {
            Command::new("tmux").args(["send-keys", "-t", &self.session, key]).status().unwrap();
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    fn literal(&self, text: &str) {
        Command::new("tmux").args(["send-keys", "-t", &self.session, "-l", text]).status().unwrap();
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux").args(["capture-pane", "-p", "-t", &self.session]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn alternate_screen(&self) -> bool {
        let out =
            Command::new("tmux").args(["display", "-p", "-t", &self.session, "#{alternate_on}"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim() == "1"
    }

    fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(Instant::now() < deadline, "waited for {text:?}; the screen shows:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["kill-session", "-t", &self.session]).status();
    }
}

#[test]
fn ask_review_refuse_approve_interrupt_browse_quit() {
    if !Tmux::available() {
        eprintln!("tmux is not installed; .ci/run installs it");
        return;
    }
    let env = Env::new();
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(
                Turn::call("w1", "write_file", json!({"path": "notes.txt", "content": "first draft\n"}))
                    .with_text("Writing notes."),
            ),
            reply(Turn::call("w2", "write_file", json!({"path": "notes.txt", "content": "second draft\n"}))),
            reply(Turn::call("b1", "bash", json!({"command": "sleep 30; echo late > late.txt"}))),
            reply(Turn::text("All **done**.")),
        ],
    );
    let bin = assert_cmd::cargo::cargo_bin("hew");
    let command = format!(
        "cd {work} && env -i PATH=\"$PATH\" HOME={home} HEW_HOME={home}/hew OPENAI_API_KEY={KEY} TERM=xterm-256color {bin} --base-url {url}; echo HEW-EXITED $?; sleep 30",
        work = env.work.path().display(),
        home = env.home.path().display(),
        bin = bin.display(),
        url = server.base_url(),
    );
    let tmux = Tmux::start(&command);
    tmux.wait_for("Ask hew to change something");
    assert!(tmux.alternate_screen());

    tmux.literal("write some notes");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Approve write_file notes.txt");
    assert!(screen.contains("+ first draft"), "{screen}");
    tmux.keys(&["n"]);
    let screen = tmux.wait_for("Approve write_file notes.txt");
    assert!(screen.contains("+ second draft"), "{screen}");
    assert!(screen.contains("⊘ write_file notes.txt → refused"), "{screen}");
    tmux.keys(&["y"]);
    tmux.wait_for("Approve bash sleep 30");
    assert_eq!(std::fs::read_to_string(env.path("notes.txt")).unwrap(), "second draft\n");
    tmux.keys(&["y"]);
    tmux.wait_for("running bash sleep 30");
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("interrupted");
    assert!(screen.contains("◌ bash") || screen.contains("✗ bash"), "{screen}");

    tmux.literal("go on");
    tmux.keys(&["Enter"]);
    tmux.wait_for("All done.");

    tmux.keys(&["C-t"]);
    let screen = tmux.wait_for("Transcript  3 of 3 tool calls");
    assert!(screen.contains("refused") && screen.contains("interrupted"), "{screen}");
    tmux.keys(&["Escape", "C-c", "C-c"]);
    let screen = tmux.wait_for("HEW-EXITED 0");
    assert!(!tmux.alternate_screen(), "the alternate screen was left on:\n{screen}");
    assert!(!env.path("late.txt").exists(), "the interrupted command finished anyway");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let told = requests[1].body.to_string();
    assert!(told.contains("refused: the user declined this call"), "{told}");
}

#[test]
fn e_edits_the_proposal_in_the_editor_before_it_is_written() {
    if !Tmux::available() {
        return;
    }
    let env = Env::new();
    let server = Server::start(
        Wire::OpenAi,
        vec![
            reply(Turn::call("w1", "write_file", json!({"path": "notes.txt", "content": "a draft\n"}))),
            reply(Turn::text("ok")),
        ],
    );
    let bin = assert_cmd::cargo::cargo_bin("hew");
    // The "editor" edits in place, as a person would, and exits.
    let command = format!(
        "cd {work} && env -i PATH=\"$PATH\" HOME={home} HEW_HOME={home}/hew OPENAI_API_KEY={KEY} TERM=xterm-256color EDITOR='sed -i s/draft/final/' {bin} --base-url {url}; echo HEW-EXITED $?; sleep 30",
        work = env.work.path().display(),
        home = env.home.path().display(),
        bin = bin.display(),
        url = server.base_url(),
    );
    let tmux = Tmux { session: format!("hew-edit-{}", std::process::id()) };
    let status = Command::new("tmux")
        .args(["new-session", "-d", "-x", "120", "-y", "40", "-s", &tmux.session, &command])
        .status()
        .unwrap();
    assert!(status.success());
    tmux.wait_for("Ask hew to change something");
    tmux.literal("take notes");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Approve write_file notes.txt");
    tmux.keys(&["e"]);
    tmux.wait_for("● write_file notes.txt");
    assert_eq!(std::fs::read_to_string(env.path("notes.txt")).unwrap(), "a final\n");
    let told = server.requests()[1].body.to_string();
    assert!(told.contains("The user changed your proposal before applying it"), "{told}");
    tmux.keys(&["C-d"]);
    tmux.wait_for("HEW-EXITED 0");
}
