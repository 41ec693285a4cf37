//! The approval policy: given the mode, the rules and what a call will do,
//! run it, ask the person, or refuse it.

use std::collections::HashSet;

use crate::config::ApprovalMode;
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
        match split_commands(line) {
            Some(commands) => {
                for words in commands {
                    let rule = words.join(" ");
                    if !self.allow_commands.contains(&rule) {
                        self.allow_commands.push(rule);
                    }
                }
            }
            None => {
                self.allow_lines.insert(line.to_owned());
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

pub fn judge(mode: ApprovalMode, tool: &str, effect: &Effect, rules: &Rules) -> Verdict {
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
            let parsed = split_commands(command);
            // A line that cannot be split is checked on its text, so that
            // quoting or substitutions cannot slip past a deny rule.
            let denied = match &parsed {
                Some(commands) => rules.denied(commands),
                None => rules.deny_commands.iter().find(|rule| command.contains(rule.as_str())).map(String::as_str),
            };
            if let Some(rule) = denied {
                return Verdict::Deny(format!("the user's configuration denies `{rule}`"));
            }
            let read_only = parsed.as_deref().is_some_and(|c| c.iter().all(|simple| is_read_only(simple)));
            let allowed = parsed.as_deref().is_some_and(|c| rules.allowed(c)) || rules.allow_lines.contains(command);
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

/// Splits a command line into simple commands (words), or `None` when it
/// uses shell features whose effect cannot be judged from the words alone
/// (redirections, substitutions, subshells, variables, globs).
pub fn split_commands(line: &str) -> Option<Vec<Vec<String>>> {
    let mut commands = Vec::new();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        ch => word.push(ch),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' => return None,
                        '\\' => word.push(chars.next()?),
                        ch => word.push(ch),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            ' ' | '\t' => end_word(&mut word, &mut in_word, &mut words),
            ';' | '\n' | '&' | '|' => {
                end_word(&mut word, &mut in_word, &mut words);
                if c == '&' && chars.peek() != Some(&'&') {
                    return None; // background jobs outlive the check
                }
                if matches!(c, '&' | '|') && chars.peek() == Some(&c) {
                    chars.next();
                }
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            '>' | '<' | '$' | '`' | '(' | ')' | '{' | '}' | '*' | '?' | '[' | '~' | '!' | '#' => return None,
            ch => {
                in_word = true;
                word.push(ch);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        commands.push(words);
    }
    Some(commands)
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

    #[test]
    fn splits_compound_lines_into_simple_commands() {
        let words =
            |v: &[&[&str]]| v.iter().map(|c| c.iter().map(|w| w.to_string()).collect()).collect::<Vec<Vec<String>>>();
        assert_eq!(
            split_commands("ls -la && git status; cat 'a b' | wc -l"),
            Some(words(&[&["ls", "-la"], &["git", "status"], &["cat", "a b"], &["wc", "-l"]]))
        );
        assert_eq!(split_commands("echo \"x\\\"y\""), Some(words(&[&["echo", "x\"y"]])));
        for opaque in
            ["echo hi > f", "cat $(ls)", "ls `x`", "(cd a)", "sleep 1 &", "echo ~", "ls *.rs", "echo 'unterminated"]
        {
            assert_eq!(split_commands(opaque), None, "{opaque}");
        }
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
        assert_eq!(judge(ReadOnly, "bash", &cmd("ls -la && git status"), &rules), Verdict::Allow);
        assert!(matches!(judge(ReadOnly, "bash", &cmd("touch x"), &rules), Verdict::Deny(_)));
        assert!(matches!(judge(ReadOnly, "bash", &cmd("ls > x"), &rules), Verdict::Deny(_)));
        assert!(matches!(judge(ReadOnly, "bash", &cmd("find . -delete"), &rules), Verdict::Deny(_)));
        assert_eq!(judge(Ask, "bash", &cmd("cargo test"), &rules), Verdict::Ask);
        assert_eq!(judge(AutoEdit, "bash", &cmd("cargo test"), &rules), Verdict::Ask);
        assert_eq!(judge(FullAuto, "bash", &cmd("cargo test"), &rules), Verdict::Allow);
    }

    #[test]
    fn rules_match_every_simple_command_and_deny_wins() {
        let rules = Rules::new(vec!["cargo test".into(), "git push".into()], vec!["git push".into()]);
        use ApprovalMode::*;
        assert_eq!(judge(Ask, "bash", &cmd("cargo test --lib"), &rules), Verdict::Allow);
        assert_eq!(judge(Ask, "bash", &cmd("cargo test && rm -r x"), &rules), Verdict::Ask);
        assert_eq!(judge(Ask, "bash", &cmd("cargo testx"), &rules), Verdict::Ask);
        assert!(
            matches!(judge(FullAuto, "bash", &cmd("ls; git push origin"), &rules), Verdict::Deny(m) if m.contains("git push"))
        );
    }
}
