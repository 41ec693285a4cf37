//! `hew exec`: the agent with nobody at the keyboard. The final answer goes
//! to stdout, one line per tool call to stderr (or, with `--json`, one JSON
//! event per line to stdout). Approval requests cannot be answered here, so
//! the agent runs non-interactive and refuses what would need a person.

use std::io::Write;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::agent::{AgentEvent, CallStatus, Decision, Outcome, UserOp};
use crate::config::Config;

/// Exit statuses, as DESIGN.md fixes them.
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_INTERRUPTED: i32 = 130;

pub struct ExecOptions {
    pub prompt: String,
    pub json: bool,
    /// A session to continue: an id, a unique prefix, or `last`.
    pub resume: Option<String>,
}

pub async fn run(config: Config, options: ExecOptions) -> i32 {
    let started = match crate::setup::start(&config, options.resume.as_deref(), false, false) {
        Ok(started) => started,
        Err(message) => {
            eprintln!("hew: {message}");
            return EXIT_USAGE;
        }
    };
    let agent = started.agent;
    let notices = started.notices;
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let task = tokio::spawn(agent.run(ops_rx, events_tx));
    let mut out = Output { json: options.json };
    for notice in &notices {
        out.notice(notice);
    }
    let _ = ops_tx.send(UserOp::Submit(options.prompt));

    // SIGINT, SIGTERM and SIGHUP all stop the task the same way; the exit
    // status says which (128 + signal number).
    let mut stop = crate::setup::Signals::new(true);
    let mut interrupted: Option<i32> = None;
    let code = loop {
        let event = tokio::select! {
            event = events.recv() => event,
            signal = stop.next(), if interrupted.is_none() => {
                interrupted = Some(signal);
                let _ = ops_tx.send(UserOp::Interrupt);
                out.notice("interrupted; stopping");
                continue;
            }
        };
        let Some(event) = event else { break EXIT_FAILED };
        if let Some(code) = out.event(event) {
            break interrupted.map_or(code, |signal| 128 + signal);
        }
    };
    let _ = ops_tx.send(UserOp::Shutdown);
    // The agent has finished its turn; give it a moment to wind down.
    let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
    crate::tools::bash::kill_all();
    code
}

struct Output {
    json: bool,
}

impl Output {
    fn notice(&mut self, text: &str) {
        if self.json {
            self.line(&AgentEvent::Notice(text.to_owned()).to_json().to_string());
        } else {
            eprintln!("hew: {text}");
        }
    }

    fn line(&mut self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{text}");
        let _ = stdout.flush();
    }

    /// Shows one event; returns the exit status once the turn is over.
    fn event(&mut self, event: AgentEvent) -> Option<i32> {
        if let AgentEvent::ApprovalRequest(request) = event {
            // Not reached in practice: the agent is non-interactive.
            let _ =
                request.reply.send(Decision::Refuse { reason: Some("nobody can approve calls in hew exec".into()) });
            return None;
        }
        if self.json {
            self.line(&event.to_json().to_string());
        }
        match event {
            AgentEvent::ToolFinished { call, target, status, output, duration, .. } if !self.json => {
                let mark = match status {
                    CallStatus::Ok => "●",
                    CallStatus::Error => "✗",
                    CallStatus::Refused => "⊘",
                    CallStatus::Interrupted => "◌",
                };
                let target = target.map(|t| format!(" {t}")).unwrap_or_default();
                let took = if duration >= Duration::from_millis(100) && !output.summary.contains('s') {
                    format!(", {:.1}s", duration.as_secs_f64())
                } else {
                    String::new()
                };
                eprintln!("{mark} {}{target} → {}{took}", call.name, one_line(&output.summary));
            }
            AgentEvent::Retrying { attempt, delay, reason } if !self.json => {
                eprintln!("hew: {reason}; retrying in {:.1}s (attempt {})", delay.as_secs_f64(), attempt + 1);
            }
            AgentEvent::Notice(text) if !self.json => eprintln!("hew: {text}"),
            AgentEvent::TurnFinished(outcome) => {
                return Some(match outcome {
                    Outcome::Done { answer } => {
                        if !self.json {
                            self.line(answer.trim_end());
                        }
                        EXIT_OK
                    }
                    Outcome::Failed { message } => {
                        if !self.json {
                            eprintln!("hew: {message}");
                        }
                        EXIT_FAILED
                    }
                    Outcome::MaxTurns { limit } => {
                        if !self.json {
                            eprintln!(
                                "hew: stopped after {limit} model round-trips (--max-turns) before the task was finished"
                            );
                        }
                        EXIT_FAILED
                    }
                    Outcome::BudgetReached { spent, limit } => {
                        if !self.json {
                            eprintln!(
                                "hew: stopped before the next request: it would take spending past --max-cost ${limit:.2} (spent ${spent:.4} so far)"
                            );
                        }
                        EXIT_FAILED
                    }
                    Outcome::Interrupted => EXIT_INTERRUPTED,
                });
            }
            _ => {}
        }
        None
    }
}

fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}
