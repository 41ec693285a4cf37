//! The full-screen interface: one `tokio::select!` loop over terminal
//! events, agent events, signals and a frame deadline. It redraws only when
//! something changed, drains queued agent events before drawing (a burst of
//! tokens costs one frame), and ticks the spinner about ten times a second
//! only while the agent works.

pub mod app;
pub mod browser;
pub mod cells;
pub mod clipboard;
mod commands;
pub mod composer;
pub mod diff;
pub mod highlight;
pub mod keys;
pub mod markdown;
pub mod review;
pub mod terminal;
pub mod theme;
pub mod view;
pub mod wrap;

use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyEventKind, MouseEventKind};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::agent::Decision;
use crate::config::{Config, SandboxMode};
use crate::exec::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::tools::Effect;
use app::{App, Control, Status};
use composer::Composer;

const TICK: Duration = Duration::from_millis(100);

pub async fn run(config: Config, resume: Option<String>) -> i32 {
    theme::init_from_env();
    let started = match crate::setup::start(&config, resume.as_deref(), true, true) {
        Ok(started) => started,
        Err(message) => {
            eprintln!("hew: {message}");
            return EXIT_USAGE;
        }
    };
    let crate::setup::Started { agent, notices, session_id, session_path, records, sandboxed } = started;
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let agent_task = tokio::spawn(agent.run(ops_rx, events_tx));

    let (mut terminal, guard) = match terminal::init() {
        Ok(t) => t,
        Err(message) => {
            eprintln!("hew: {message}");
            return EXIT_USAGE;
        }
    };
    let (ready_tx, mut ready) = mpsc::unbounded_channel();
    highlight::preload(move || {
        let _ = ready_tx.send(());
    });
    let status = Status {
        provider: config.provider.name.clone(),
        model: config.provider.model.clone(),
        approval: config.approval,
        sandbox: sandboxed,
        usage: Default::default(),
        last_input: 0,
        info: config.model_info(),
        session_path: session_path.clone(),
        workspace: config.workspace.clone(),
    };
    let composer = Composer::new(Some(config.hew_home.join("history")));
    let mut app = App::new(ops_tx.clone(), composer, status);
    if !records.is_empty() {
        app.load_records(&records);
        app.notice(format!("resumed session {session_id}"), false);
    }
    for notice in notices {
        app.notice(notice, false);
    }
    if config.sandbox == SandboxMode::Off {
        app.notice("the OS sandbox is off ([sandbox] mode = \"off\")", false);
    }

    let mut input = EventStream::new();
    let mut signals = crate::setup::Signals::new(false);
    let mut dirty = true;
    let mut next_tick = tokio::time::Instant::now();
    let code = loop {
        if dirty {
            let now = Instant::now();
            if let Err(e) = terminal.draw(|frame| view::draw(frame, &mut app, now)) {
                tracing::error!("drawing failed: {e}");
                break EXIT_FAILED;
            }
            dirty = false;
        }
        let ticking = app.busy.is_some();
        let control = tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => {
                    dirty = true;
                    handle_terminal(&mut app, event)
                }
                Some(Err(e)) => {
                    tracing::error!("terminal input failed: {e}");
                    Control::Quit
                }
                None => Control::Quit,
            },
            event = events.recv() => match event {
                Some(event) => {
                    app.agent(event);
                    // Drain what is already queued: a burst costs one frame.
                    while let Ok(event) = events.try_recv() {
                        app.agent(event);
                    }
                    dirty = true;
                    Control::Continue
                }
                None => {
                    app.notice("the agent stopped unexpectedly", true);
                    dirty = true;
                    Control::Continue
                }
            },
            Some(()) = ready.recv() => {
                dirty = true;
                Control::Continue
            }
            _ = tokio::time::sleep_until(next_tick), if ticking => {
                next_tick = tokio::time::Instant::now() + TICK;
                dirty = true;
                Control::Continue
            }
            _ = signals.next() => Control::Quit,
        };
        if ticking && next_tick <= tokio::time::Instant::now() {
            next_tick = tokio::time::Instant::now() + TICK;
        }
        match control {
            Control::Continue => {}
            Control::Quit => break EXIT_OK,
            Control::Mouse(on) => terminal::set_mouse(on),
            Control::Copy(text) => {
                app.flash = Some(match clipboard::copy(&text) {
                    Ok(()) => format!("copied {} characters to the clipboard", text.chars().count()),
                    Err(e) => format!("cannot copy: {e}"),
                });
                dirty = true;
            }
            Control::EditPrompt => {
                let text = app.composer.text();
                if let Some(edited) = edit_externally(&mut terminal, &text, "md") {
                    app.composer.set_text(edited.trim_end_matches('\n'));
                }
                dirty = true;
            }
            Control::EditProposal => {
                let proposal = app.reviews.front().and_then(|r| match &r.request.plan.effect {
                    Effect::Write { change } => Some((change.new.clone(), change.path.clone())),
                    _ => None,
                });
                if let Some((content, path)) = proposal {
                    let extension = path.rsplit('.').next().unwrap_or("txt").to_owned();
                    match edit_externally(&mut terminal, &content, &extension) {
                        Some(edited) if edited != content => app.decide(Decision::ApproveEdited {
                            content: edited,
                            note: "the user edited the proposed content in their editor before saving; read the file to see what it holds now".into(),
                        }),
                        Some(_) => app.decide(Decision::Approve),
                        None => app.flash = Some("the editor failed; nothing was decided".into()),
                    }
                }
                dirty = true;
            }
        }
    };
    // Refuse whatever still waits, stop the agent and any command it runs.
    while let Some(review) = app.reviews.pop_front() {
        let _ = review.request.reply.send(Decision::Stop);
    }
    let _ = ops_tx.send(crate::agent::UserOp::Interrupt);
    let _ = ops_tx.send(crate::agent::UserOp::Shutdown);
    let _ = tokio::time::timeout(Duration::from_secs(1), agent_task).await;
    crate::tools::bash::kill_all();
    drop(terminal);
    drop(guard);
    if session_path.exists() {
        println!("session {session_id} saved; continue it with: hew --resume {session_id}");
    }
    code
}

fn handle_terminal(app: &mut App, event: Event) -> Control {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => app.key(key),
        Event::Paste(text) => {
            app.paste(&text);
            Control::Continue
        }
        Event::Mouse(mouse) => {
            match mouse.kind {
                MouseEventKind::ScrollUp => app.wheel(true),
                MouseEventKind::ScrollDown => app.wheel(false),
                MouseEventKind::Down(crossterm::event::MouseButton::Left) => app.click(mouse.column, mouse.row),
                _ => {}
            }
            Control::Continue
        }
        _ => Control::Continue,
    }
}

/// Runs $VISUAL / $EDITOR (default `vi`) on `text`; the saved text, or
/// `None` when the editor could not run or failed.
fn edit_externally(terminal: &mut terminal::Tui, text: &str, extension: &str) -> Option<String> {
    let file = tempfile::Builder::new().prefix("hew-edit-").suffix(&format!(".{extension}")).tempfile().ok()?;
    std::fs::write(file.path(), text).ok()?;
    let editor = std::env::var("VISUAL").or_else(|_| std::env::var("EDITOR")).unwrap_or_else(|_| "vi".into());
    terminal::suspend();
    // The editor command may carry arguments (`code --wait`).
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("hew-editor")
        .arg(file.path())
        .status();
    terminal::resume(terminal);
    match status {
        Ok(s) if s.success() => std::fs::read_to_string(file.path()).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
