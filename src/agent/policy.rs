//! The approval policy: given the mode, the rules and what a call will do,
//! run it, ask the person, or refuse it.

use std::collections::HashSet;

use crate::config::ApprovalMode;
use crate::safety::Finding;
use crate::safety::shell::{self, Script};
use crate::tools::Effect;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Ask,
    Deny(String),
}

/// Allow and deny rules, from config and from "allow for this session".
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub allow_commands: Vec<String>,
    pub deny_commands: Vec<String>,
    pub allow_tools: HashSet<String>,
    /// Whole command lines allowed as written (lines that cannot be split).
    pub allow_lines: HashSet<String>,
}

impl Rules {
    pub fn new(allow: Vec<String>, deny: Vec<String>) -> Self {
        Rules { allow_commands: allow, deny_commands: deny, allow_tools: HashSet::new(), allow_lines: HashSet::new() }
    }

    /// "Allow for this session" on a command line: each of its simple
    /// commands becomes a rule; a line that cannot be split is allowed only
    /// exactly as written.
    pub fn allow_line(&mut self, line: &str) {
        let script = shell::parse(line);
        if script.incomplete || script.background {
            self.allow_lines.insert(line.to_owned());
            return;
        }
        for words in simple_commands(&script) {
            let rule = words.join(" ");
            if !self.allow_commands.contains(&rule) {
                self.allow_commands.push(rule);
            }
        }
    }

    /// A rule matches a simple command when its words are the command's
    /// first words: `cargo test` matches `cargo test --lib`, not `cargo testx`.
    fn matches(rule: &str, simple: &[String]) -> bool {
        let words: Vec<&str> = rule.split_whitespace().collect();
        !words.is_empty() && simple.len() >= words.len() && words.iter().zip(simple).all(|(a, b)| a == b)
    }

    fn denied(&self, commands: &[Vec<String>]) -> Option<&str> {
        self.deny_commands.iter().find(|rule| commands.iter().any(|c| Self::matches(rule, c))).map(String::as_str)
    }

    fn allowed(&self, commands: &[Vec<String>]) -> bool {
        !commands.is_empty() && commands.iter().all(|c| self.allow_commands.iter().any(|rule| Self::matches(rule, c)))
    }
}

pub fn judge(mode: ApprovalMode, tool: &str, effect: &Effect, rules: &Rules, finding: Option<&Finding>) -> Verdict {
    match effect {
        Effect::Read => Verdict::Allow,
        Effect::Write { .. } => match mode {
            ApprovalMode::ReadOnly => Verdict::Deny(
                "file changes are refused in read-only mode; the user can allow them with --approval auto-edit (or ask in the TUI)".into(),
            ),
            ApprovalMode::Ask if rules.allow_tools.contains(tool) => Verdict::Allow,
            ApprovalMode::Ask => Verdict::Ask,
            ApprovalMode::AutoEdit | ApprovalMode::FullAuto => Verdict::Allow,
        },
        Effect::Command { command } => {
            if let Some(block @ Finding::Block { .. }) = finding {
                return Verdict::Deny(format!("{}. This holds in every approval mode; do not try to work around it", block.message()));
            }
            let script = shell::parse(command);
            let commands = simple_commands(&script);
            // A line the parser could not follow is checked on its text, so
            // that odd quoting cannot slip past a deny rule.
            let denied = if script.incomplete {
                rules.deny_commands.iter().find(|rule| command.contains(rule.as_str())).map(String::as_str)
            } else {
                rules.denied(&commands)
            };
            if let Some(rule) = denied {
                return Verdict::Deny(format!("the user's configuration denies `{rule}`"));
            }
            if matches!(finding, Some(Finding::Ask { .. })) {
                return Verdict::Ask;
            }
            let plain = !script.incomplete && !script.background;
            let read_only = plain
                && script.commands().iter().all(|c| {
                    c.words.first().is_some_and(|w| !w.dynamic)
                        && c.redirects.iter().all(|r| !r.op.contains('>') || r.target.text == "/dev/null" || r.op.ends_with('&'))
                })
                && commands.iter().all(|c| is_read_only(c));
            let allowed = (plain && rules.allowed(&commands)) || rules.allow_lines.contains(command);
            match mode {
                ApprovalMode::FullAuto => Verdict::Allow,
                _ if read_only || allowed => Verdict::Allow,
                ApprovalMode::ReadOnly => Verdict::Deny(
                    "commands that may change things are refused in read-only mode (only read-only commands such as ls, cat, grep, git status run); the user can allow commands with --approval full-auto, or an [approval] allow rule".into(),
                ),
                ApprovalMode::Ask | ApprovalMode::AutoEdit => Verdict::Ask,
            }
        }
    }
}

/// The words of every simple command a line runs, nested ones included.
pub fn simple_commands(script: &Script) -> Vec<Vec<String>> {
    script.commands().iter().map(|c| c.words.iter().map(|w| w.text.clone()).collect()).collect()
}

/// Commands that only look: the built-in list read-only mode allows.
fn is_read_only(words: &[String]) -> bool {
    let Some(program) = words.first() else { return true };
    let args = &words[1..];
    let has = |flags: &[&str]| args.iter().any(|a| flags.iter().any(|f| a == f || a.starts_with(&format!("{f}="))));
    match program.as_str() {
        "ls" | "cat" | "head" | "tail" | "wc" | "pwd" | "echo" | "grep" | "rg" | "tree" | "stat" | "file" | "du"
        | "df" | "which" | "whoami" | "date" | "uname" | "diff" | "uniq" | "cut" | "basename" | "dirname"
        | "realpath" | "nl" | "true" | "false" | "test" | "printf" | "id" | "hostname" | "cmp" | "md5sum"
        | "sha256sum" => true,
        "sort" => !has(&["-o", "--output"]),
        "find" => !has(&["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"]),
        "git" => {
            let sub = args.iter().find(|a| !a.starts_with('-')).map(String::as_str);
            match sub {
                Some(
                    "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "blame" | "shortlog" | "describe",
                ) => !has(&["--output", "-o"]),
                Some("branch") => {
                    args.len() == 1
                        || has(&["--list", "-a", "-r", "-v", "-vv", "--show-current"])
                            && !has(&["-d", "-D", "-m", "-M", "-c", "-C"])
                }
                _ => false,
            }
        }
        "cargo" => matches!(args.first().map(String::as_str), Some("metadata" | "tree" | "--version" | "version")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Effect;

    fn cmd(c: &str) -> Effect {
        Effect::Command { command: c.into() }
    }

    fn judge(mode: ApprovalMode, tool: &str, effect: &Effect, rules: &Rules) -> Verdict {
        let finding = match effect {
            Effect::Command { command } => {
                let ctx = crate::safety::analyze::Context {
                    workspace: std::path::Path::new("/srv/w"),
                    cwd: std::path::Path::new("/srv/w"),
                    home: Some(std::path::Path::new("/home/u")),
                };
                crate::safety::analyze(command, &ctx)
            }
            _ => None,
        };
        super::judge(mode, tool, effect, rules, finding.as_ref())
    }

    #[test]
    fn modes_follow_the_design_table() {
        let rules = Rules::default();
        let write = Effect::Write {
            change: crate::tools::FileChange {
                abs: "/w/a".into(),
                path: "a".into(),
                old: None,
                new: String::new(),
                diff: String::new(),
                added: 0,
                removed: 0,
            },
        };
        use ApprovalMode::*;
        assert_eq!(judge(ReadOnly, "read_file", &Effect::Read, &rules), Verdict::Allow);
        assert!(
            matches!(judge(ReadOnly, "write_file", &write, &rules), Verdict::Deny(m) if m.contains("--approval auto-edit"))
        );
        assert_eq!(judge(Ask, "write_file", &write, &rules), Verdict::Ask);
        assert_eq!(judge(AutoEdit, "write_file", &write, &rules), Verdict::Allow);
        assert_eq!(judge(FullAuto, "write_file", &write, &rules), Verdict::Allow);
        assert_eq!(judge(ReadOnly, "bash", &cmd("ls -la && git status"), &rules), Verdict::Allow);
        assert_eq!(judge(ReadOnly, "bash", &cmd("cat a.txt 2>/dev/null | wc -l"), &rules), Verdict::Allow);
        for refused in [
            "touch x",
            "ls > x",
            "find . -delete",
            "sort -o f a",
            "git branch -D x",
            "$(echo ls)",
            "sleep 1 &",
            "cat 'x",
        ] {
            assert!(matches!(judge(ReadOnly, "bash", &cmd(refused), &rules), Verdict::Deny(_)), "{refused}");
        }
        assert_eq!(judge(Ask, "bash", &cmd("cargo test"), &rules), Verdict::Ask);
        assert_eq!(judge(AutoEdit, "bash", &cmd("cargo test"), &rules), Verdict::Ask);
        assert_eq!(judge(FullAuto, "bash", &cmd("cargo test"), &rules), Verdict::Allow);
    }

    #[test]
    fn dangerous_commands_are_refused_in_every_mode_and_force_push_asks() {
        let rules = Rules::new(vec!["rm".into(), "git push".into()], vec![]);
        for mode in [ApprovalMode::ReadOnly, ApprovalMode::Ask, ApprovalMode::AutoEdit, ApprovalMode::FullAuto] {
            let verdict = judge(mode, "bash", &cmd("rm -rf ~"), &rules);
            assert!(matches!(&verdict, Verdict::Deny(m) if m.contains("`rm-recursive`")), "{mode:?}: {verdict:?}");
            assert_eq!(judge(mode, "bash", &cmd("git push -f origin main"), &rules), Verdict::Ask, "{mode:?}");
        }
    }

    #[test]
    fn rules_match_every_simple_command_and_deny_wins() {
        let rules = Rules::new(vec!["cargo test".into(), "git push".into()], vec!["git push".into()]);
        use ApprovalMode::*;
        assert_eq!(judge(Ask, "bash", &cmd("cargo test --lib"), &rules), Verdict::Allow);
        assert_eq!(judge(Ask, "bash", &cmd("cargo test && rm -r x"), &rules), Verdict::Ask);
        assert_eq!(judge(Ask, "bash", &cmd("cargo testx"), &rules), Verdict::Ask);
        assert_eq!(
            judge(Ask, "bash", &cmd("cargo test $(curl x)"), &rules),
            Verdict::Ask,
            "the nested curl is not allowed"
        );
        assert!(
            matches!(judge(FullAuto, "bash", &cmd("ls; git push origin"), &rules), Verdict::Deny(m) if m.contains("git push"))
        );
        assert!(matches!(judge(FullAuto, "bash", &cmd("echo $(git push)"), &rules), Verdict::Deny(_)));
        assert!(matches!(judge(FullAuto, "bash", &cmd("git push 'unclosed"), &rules), Verdict::Deny(_)));
    }

    #[test]
    fn allow_for_session_takes_each_simple_command() {
        let mut rules = Rules::default();
        rules.allow_line("make build && ./run.sh --fast");
        assert_eq!(rules.allow_commands, vec!["make build".to_owned(), "./run.sh --fast".to_owned()]);
        assert_eq!(judge(ApprovalMode::Ask, "bash", &cmd("make build"), &rules), Verdict::Allow);
        rules.allow_line("sleep 5 &");
        assert!(rules.allow_lines.contains("sleep 5 &"));
    }
}
