//! The system prompt: who the model is working for, where, and the rules
//! that make it careful (read before editing, small edits, verify).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

pub fn system_prompt(workspace: &Path, tool_names: &[&str], mode: &str) -> String {
    let git = git_summary(workspace);
    format!(
        "You are hew, a coding assistant working in a terminal on the user's project. You act \
through tools ({tools}); the user watches every call and may review and refuse changes.\n\
\n\
# Environment\n\
- Workspace (all paths are relative to it; you cannot touch anything outside): {cwd}\n\
- OS: {os} ({arch})\n\
- Date: {date}\n\
- Approval mode: {mode}\n\
- Git: {git}\n\
\n\
# How to work\n\
- Read before you edit: read_file a file before changing it. Edits to files you have not read, \
or that changed since you read them, are refused.\n\
- Prefer edit_file for changes to existing files: quote the exact old text (enough lines to be \
unique). Use write_file for new files or complete rewrites.\n\
- Find things with glob and grep rather than guessing paths.\n\
- Verify your work: after changing code, run the project's build, tests or linter with bash and \
fix what fails. Say plainly if you could not verify.\n\
- Keep changes to what was asked. Do not reformat unrelated code or add files nobody asked for.\n\
- If a tool result says a call was refused, do not retry the same call; adapt or explain what \
the user can do.\n\
- When done, answer briefly: what you changed and how you checked it.\n",
        tools = tool_names.join(", "),
        cwd = workspace.display(),
        os = std::env::consts::OS,
        arch = std::env::consts::ARCH,
        date = today(),
    )
}

/// `2026-11-29`, from the system clock (UTC).
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    crate::session::store::timestamp(secs, false)[..10].to_owned()
}

/// Branch and a count of changed files, or why there is none. Bounded: a
/// huge or slow repository must not delay the first request much.
fn git_summary(workspace: &Path) -> String {
    let mut child = match Command::new("git")
        .args(["status", "--porcelain=v1", "--branch", "--untracked-files=normal"])
        .current_dir(workspace)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(_) => return "git is not available".into(),
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return "git status took too long".into();
            }
        }
    }
    let Ok(output) = child.wait_with_output() else { return "unknown".into() };
    if !output.status.success() {
        return "not a git repository".into();
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    let branch = lines.next().and_then(|l| l.strip_prefix("## ")).unwrap_or("unknown branch").to_owned();
    let changed: Vec<&str> = lines.collect();
    match changed.len() {
        0 => format!("branch {branch}, clean"),
        n => {
            let sample: Vec<&str> = changed.iter().take(10).map(|l| l.get(3..).unwrap_or(l)).collect();
            let more = if n > 10 { format!(" and {} more", n - 10) } else { String::new() };
            format!("branch {branch}, {n} changed files: {}{more}", sample.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn date_is_iso_shaped() {
        let d = super::today();
        assert_eq!(d.len(), 10);
        assert_eq!(&d[4..5], "-");
        assert!(d.starts_with("20"));
    }
}
