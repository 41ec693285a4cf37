//! Slash commands: handled by the interface itself, never sent to the model.

use super::app::{App, Control};
use super::cells::Cell;
use super::composer;
use crate::agent::UserOp;
use crate::config::ApprovalMode;

impl App {
    pub(super) fn command(&mut self, command: &str) -> Control {
        let (name, arg) = command.split_once(' ').map(|(n, a)| (n, a.trim())).unwrap_or((command, ""));
        match name {
            "quit" | "exit" => return Control::Quit,
            "copy" => {
                let last = self.transcript.cells.iter().rev().find_map(|slot| match &slot.cell {
                    Cell::Assistant { text, .. } if !text.trim().is_empty() => Some(text.clone()),
                    _ => None,
                });
                let text = match (last, arg) {
                    (Some(text), "code") => super::clipboard::last_code_block(&text),
                    (text, _) => text,
                };
                match text {
                    Some(text) => return Control::Copy(text),
                    None => self.notice("nothing to copy yet", true),
                }
            }
            "help" => {
                let mut text = String::from(
                    "Keys: Enter send · Alt-Enter or Ctrl-J newline · Esc interrupt · Ctrl-C interrupt / quit · Ctrl-D quit\n",
                );
                text.push_str("PgUp/PgDn scroll · Alt-↑/↓ select a tool call · Ctrl-O expand it · Ctrl-L tool log · Ctrl-T transcript · Ctrl-G edit in $EDITOR · F2 mouse (wheel scrolls, a click expands a tool call)\n");
                text.push_str("Review: y approve · n refuse · r refuse with reason · a always allow · e edit · j/k hunk · Space toggle hunk · Esc stop\n");
                for (c, what) in composer::COMMANDS {
                    text.push_str(&format!("{c}  {what}\n"));
                }
                self.notice(text.trim_end(), false);
            }
            "model" => {
                let info = &self.status.info;
                self.notice(
                    format!(
                        "model {} on {} · context window {} tokens · price {}",
                        self.status.model,
                        self.status.provider,
                        info.context_window,
                        match (info.input_price, info.output_price) {
                            (Some(i), Some(o)) => format!("${i}/${o} per million tokens in/out"),
                            _ => "unknown".into(),
                        }
                    ),
                    false,
                );
            }
            "approval" if arg.is_empty() => self.notice(
                format!(
                    "approval mode: {} (set with /approval read-only|ask|auto-edit|full-auto)",
                    self.status.approval.as_str()
                ),
                false,
            ),
            "approval" => match <ApprovalMode as clap::ValueEnum>::from_str(arg, true) {
                Ok(mode) => {
                    self.status.approval = mode;
                    self.send(UserOp::SetApproval(mode));
                    self.notice(format!("approval mode is now {}", mode.as_str()), false);
                }
                Err(_) => self
                    .notice(format!("unknown approval mode `{arg}`: use read-only, ask, auto-edit or full-auto"), true),
            },
            "rewind" if arg.is_empty() => {
                let prompts: Vec<String> = self
                    .transcript
                    .cells
                    .iter()
                    .filter_map(|slot| match &slot.cell {
                        Cell::User(text) => Some(text.lines().next().unwrap_or_default().chars().take(70).collect()),
                        _ => None,
                    })
                    .enumerate()
                    .map(|(i, t): (usize, String)| format!("{}. {t}", i + 1))
                    .collect();
                if prompts.is_empty() {
                    self.notice("nothing to rewind to yet", true);
                } else {
                    self.notice(
                        format!("/rewind N goes back to just before message N (files too):\n{}", prompts.join("\n")),
                        false,
                    );
                }
            }
            "rewind" => match arg.parse::<usize>() {
                Ok(n) if n >= 1 => {
                    self.send(UserOp::Rewind(n));
                    self.notice(format!("rewinding to before message {n}; review each file below"), false);
                }
                _ => self.notice(format!("/rewind takes a message number, not `{arg}`"), true),
            },
            "sessions" => {
                let here = self.status.workspace.display().to_string();
                let dir = self.status.session_path.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
                let lines: Vec<String> = crate::session::store::list(&dir)
                    .into_iter()
                    .filter(|s| s.meta.cwd == here)
                    .take(20)
                    .map(|s| {
                        format!(
                            "{}  {}  {} turns  {}",
                            s.meta.id,
                            s.meta.created,
                            s.turns,
                            s.first_prompt.lines().next().unwrap_or_default()
                        )
                    })
                    .collect();
                if lines.is_empty() {
                    self.notice("no saved sessions for this folder yet", false);
                } else {
                    self.notice(
                        format!("sessions of this folder (resume one with hew --resume ID):\n{}", lines.join("\n")),
                        false,
                    );
                }
            }
            "export" => {
                let result = crate::session::store::load(&self.status.session_path)
                    .map_err(|e| e.to_string())
                    .and_then(|loaded| {
                        let name =
                            if arg.is_empty() { format!("hew-session-{}.md", loaded.meta.id) } else { arg.to_owned() };
                        let target = self.status.workspace.join(&name);
                        std::fs::write(&target, crate::session::export::markdown(&loaded))
                            .map(|_| name)
                            .map_err(|e| e.to_string())
                    });
                match result {
                    Ok(name) => self.notice(format!("wrote the transcript to {name}"), false),
                    Err(e) => {
                        self.notice(format!("cannot export: {e} (a session is saved once you send a message)"), true)
                    }
                }
            }
            "compact" => {
                self.send(UserOp::Compact);
                self.notice("compacting the conversation…", false);
            }
            "undo" => {
                self.send(UserOp::Undo);
                self.notice("undoing the file changes of the latest turn that made any; review each file below", false);
            }
            "clear" => {
                self.transcript.cells.clear();
                self.scroll = 0;
                self.send(UserOp::Clear);
                self.notice("started a fresh conversation (the tool log and transcript keep earlier calls)", false);
            }
            "cost" => {
                let u = self.status.usage;
                let cost = crate::agent::cost(u, &self.status.info)
                    .map(|c| format!("${c:.4}"))
                    .unwrap_or_else(|| "price unknown".into());
                self.notice(
                    format!(
                        "{} input tokens ({} cached), {} output tokens · {cost}",
                        u.input_tokens, u.cached_input_tokens, u.output_tokens
                    ),
                    false,
                );
            }
            _ => self.notice(format!("unknown command /{name}; /help lists the commands"), true),
        }
        Control::Continue
    }
}
