//! bash: runs a command in the workspace, in its own process group, with
//! stdin closed and output captured as it interleaves. Timeouts and
//! interrupts kill the whole group, so nothing the command started
//! outlives the call. `cd` carries over to the next call, within the workspace.

use std::collections::VecDeque;
use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Effect, Plan, Tool, ToolContext, ToolOutput, arg_str, arg_u64, truncate_middle};
use crate::provider::BoxFuture;

pub struct Bash;

pub const DEFAULT_TIMEOUT_S: u64 = 120;
pub const MAX_TIMEOUT_S: u64 = 600;
/// Output the model sees; the transcript keeps more (see [`Capture`]).
pub const MAX_MODEL_CHARS: usize = 30_000;

impl Tool for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }

    fn description(&self) -> &'static str {
        "Run a shell command with `bash -c` in the workspace and return its combined stdout and \
         stderr (with the exit code when it is not 0). Use it to build, run tests, run git, and \
         inspect the system; prefer read_file, glob and grep for reading and searching files, and \
         edit_file / write_file for changing them. stdin is closed, so interactive programs fail: \
         pass flags such as --yes or --no-pager. `cd` persists to later calls but cannot leave the \
         workspace. Default timeout 120 s (max 600, via timeout_s); on timeout everything the \
         command started is killed. Output over 30000 characters keeps its start and end. \
         Commands may need the person's approval, and dangerous ones are refused."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line, run by bash -c"},
                "timeout_s": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_S, "description": "Seconds before the command is killed (default 120)"}
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn plan(&self, args: &Value, _ctx: &ToolContext) -> Result<Plan, String> {
        let command = arg_str(args, "command").unwrap_or_default();
        if command.trim().is_empty() {
            return Err("the command is empty".into());
        }
        if command.contains('\0') {
            return Err("the command contains a NUL byte".into());
        }
        let target = command.lines().next().unwrap_or_default().chars().take(120).collect();
        Ok(Plan { effect: Effect::Command { command: command.to_owned() }, target })
    }

    fn execute<'a>(
        &'a self,
        args: &'a Value,
        _plan: Plan,
        ctx: &'a ToolContext,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let command = arg_str(args, "command").unwrap_or_default();
            let timeout =
                Duration::from_secs(arg_u64(args, "timeout_s").unwrap_or(DEFAULT_TIMEOUT_S).clamp(1, MAX_TIMEOUT_S));
            match run(command, timeout, ctx, &cancel).await {
                Ok(out) => out,
                Err(e) => ToolOutput::error(format!("could not start bash: {e}")),
            }
        })
    }
}

/// How a run ended.
enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
}

async fn run(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
    cancel: &CancellationToken,
) -> std::io::Result<ToolOutput> {
    let started = Instant::now();
    let cwd = ctx.cwd();
    let cwd_file = tempfile::Builder::new().prefix("hew-cwd-").tempfile()?.into_temp_path();
    let (reader, writer) = std::io::pipe()?;
    let mut cmd = tokio::process::Command::new("bash");
    // The trap reports where the command left off, so `cd` carries over.
    cmd.arg("-c")
        .arg(format!("trap 'pwd -P > \"$__HEW_CWD_FILE\" 2>/dev/null' EXIT\n{command}"))
        .current_dir(&cwd)
        .env("__HEW_CWD_FILE", &*cwd_file)
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .process_group(0)
        .kill_on_drop(true);
    for name in &ctx.hidden_env {
        cmd.env_remove(name);
    }
    if let Some(sandbox) = &ctx.sandbox {
        let mut ruleset = Some(sandbox.prepare().map_err(std::io::Error::other)?);
        // SAFETY: the closure runs in the forked child before exec; it only
        // calls prctl and landlock_restrict_self on a ruleset built above.
        unsafe {
            cmd.pre_exec(move || match ruleset.take() {
                Some(ruleset) => crate::sandbox::enter(ruleset),
                None => Ok(()),
            });
        }
    }
    let mut child = cmd.spawn()?;
    // The Command holds our copies of the pipe's write end; drop them so
    // the reader sees end-of-file when the command's side closes.
    drop(cmd);
    let pgid = child.id().map(|id| id as i32);
    let _group = pgid.map(LiveGroup::register);
    let capture = Arc::new(Mutex::new(Capture::default()));
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let sink = Arc::clone(&capture);
    std::thread::spawn(move || {
        let mut reader = reader;
        let mut buf = [0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Ok(mut c) = sink.lock() {
                        c.push(&buf[..n]);
                    }
                }
            }
        }
        let _ = done_tx.send(());
    });

    let ending = tokio::select! {
        status = child.wait() => Ending::Exited(status?),
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        _ = cancel.cancelled() => Ending::Cancelled,
    };
    // Whatever happened, nothing the command started may keep running.
    if let Some(pgid) = pgid {
        kill_group(pgid);
    }
    drop(_group);
    if !matches!(ending, Ending::Exited(_)) {
        let _ = child.wait().await;
    }
    // Output still in the pipe arrives quickly; a process that escaped the
    // group and holds the pipe open does not get to stall the call.
    let _ = tokio::time::timeout(Duration::from_millis(500), done_rx).await;
    let elapsed = started.elapsed();
    let note = follow_cd(ctx, &cwd_file);

    let text = capture.lock().map(|c| c.text()).unwrap_or_default();
    let mut content = text.clone();
    let full = truncate_middle(&text, MAX_MODEL_CHARS).map(|short| {
        content = short;
        text
    });
    if content.trim().is_empty() {
        content = "(no output)".into();
    }
    let (summary, is_error) = match &ending {
        Ending::Exited(status) => match (status.code(), std::os::unix::process::ExitStatusExt::signal(status)) {
            (Some(0), _) => (format!("exit 0, {:.1}s", elapsed.as_secs_f64()), false),
            (Some(code), _) => {
                content.push_str(&format!("\n[exit code {code}]"));
                (format!("exit {code}, {:.1}s", elapsed.as_secs_f64()), true)
            }
            (None, signal) => {
                let signal = signal.unwrap_or(0);
                content.push_str(&format!("\n[killed by signal {signal}]"));
                (format!("signal {signal}"), true)
            }
        },
        Ending::TimedOut => {
            content.push_str(&format!(
                "\n[timed out after {}s; the command and everything it started were killed. Pass a larger timeout_s (up to {MAX_TIMEOUT_S}) or run something shorter]",
                timeout.as_secs()
            ));
            (format!("timed out after {}s", timeout.as_secs()), true)
        }
        Ending::Cancelled => {
            content.push_str("\n[interrupted by the user; the command and everything it started were killed]");
            ("interrupted".into(), true)
        }
    };
    if let Some(note) = note {
        content.push_str(&format!("\n[{note}]"));
    }
    let denied = |t: &str| t.contains("Permission denied") || t.contains("Read-only file system");
    if ctx.sandbox.is_some() && (denied(&content) || full.as_deref().is_some_and(denied)) {
        content.push_str(
            "\n[note: commands run in a sandbox that can write only inside the workspace and the temp folder]",
        );
    }
    Ok(ToolOutput { content, full, is_error, summary })
}

/// Process groups of commands still running, so hew can end them all when
/// it exits, whatever path it exits by.
static LIVE: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

struct LiveGroup(i32);

impl LiveGroup {
    fn register(pgid: i32) -> Self {
        if let Ok(mut live) = LIVE.lock() {
            live.push(pgid);
        }
        LiveGroup(pgid)
    }
}

impl Drop for LiveGroup {
    fn drop(&mut self) {
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|&g| g != self.0);
        }
    }
}

/// Kills every command group still running. Called on hew's way out.
pub fn kill_all() {
    let groups = LIVE.lock().map(|live| live.clone()).unwrap_or_default();
    for pgid in groups {
        kill_group(pgid);
    }
}

/// Kills every process in the group. The group may already be gone.
fn kill_group(pgid: i32) {
    // SAFETY: killpg only sends a signal; a stale or empty group yields ESRCH.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

/// Moves the tracked folder to where the command ended, if that is inside
/// the workspace; says so when it is not.
fn follow_cd(ctx: &ToolContext, cwd_file: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(cwd_file).ok()?;
    let dir = PathBuf::from(text.trim_end_matches('\n'));
    if text.trim().is_empty() || !dir.is_absolute() {
        return None;
    }
    let dir = dir.canonicalize().unwrap_or(dir);
    let mut cwd = ctx.cwd.lock().ok()?;
    if *cwd == dir {
        return None;
    }
    if ctx.jail.contains(&dir) {
        *cwd = dir;
        None
    } else {
        Some(format!(
            "the command ended in {}, outside the workspace; the next command starts in {} again",
            dir.display(),
            cwd.display()
        ))
    }
}

/// Keeps the first and last few megabytes of a command's output; a command
/// that prints gigabytes must not take hew's memory with it.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: u64,
}

const CAPTURE_HEAD: usize = 4 * 1024 * 1024;
const CAPTURE_TAIL: usize = 4 * 1024 * 1024;

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < CAPTURE_HEAD {
            let n = bytes.len().min(CAPTURE_HEAD - self.head.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        self.tail.extend(bytes);
        if self.tail.len() > CAPTURE_TAIL {
            let excess = self.tail.len() - CAPTURE_TAIL;
            self.tail.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!("\n[... {} bytes of output not kept ...]\n", self.dropped));
        }
        let (a, b) = self.tail.as_slices();
        let mut tail = a.to_vec();
        tail.extend_from_slice(b);
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }
}
