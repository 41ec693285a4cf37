//! A shell-command parser for safety analysis: enough of bash's grammar to
//! find every simple command a line will run — through `;`, `&&`, `||`,
//! pipes, subshells, groups, `$( )`, backticks, process substitution and
//! control keywords — with quotes removed and expansions marked, so the
//! rules judge the words bash will see rather than the text.

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Contains an expansion whose value is unknown here (`$X`, `$(..)`,
    /// backticks). `$HOME`, `${HOME}` and a leading `~` are kept in `text`
    /// and resolved by the analyser.
    pub dynamic: bool,
    /// Contains an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
}

impl Word {
    fn literal(text: &str) -> Self {
        Word { text: text.to_owned(), dynamic: false, glob: false }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `>`, `>>`, `<`, `>&`, `&>`, `<<<`, ...
    pub op: String,
    pub target: Word,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    /// Leading `NAME=value` assignments are dropped; keywords such as `do`
    /// or `then` are too.
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// Commands joined by pipes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pipeline {
    pub commands: Vec<Simple>,
}

/// Everything a command line runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    pub pipelines: Vec<Pipeline>,
    /// Scripts inside `$( )`, backticks, `<( )` and `>( )`: they run too.
    pub nested: Vec<Script>,
    /// Runs in the background (`&`) somewhere.
    pub background: bool,
    /// The parser met something it does not understand (unbalanced quotes
    /// or brackets); analysis must then be conservative.
    pub incomplete: bool,
}

impl Script {
    /// Every simple command, nested ones included, in order of appearance.
    pub fn commands(&self) -> Vec<&Simple> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a Simple>) {
        for pipeline in &self.pipelines {
            out.extend(pipeline.commands.iter());
        }
        for nested in &self.nested {
            nested.collect(out);
        }
    }
}

const KEYWORDS: &[&str] = &["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time"];

pub fn parse(line: &str) -> Script {
    let chars: Vec<char> = line.chars().collect();
    let mut parser = Parser { chars: &chars, pos: 0, script: Script::default(), heredocs: Vec::new() };
    parser.script_until(None);
    parser.script
}

struct Parser<'a> {
    chars: &'a [char],
    pos: usize,
    script: Script,
    /// Here-document delimiters whose bodies start after the current line.
    heredocs: Vec<String>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    /// Parses commands until `close` (for subshells) or the end; true if
    /// `close` was found.
    fn script_until(&mut self, close: Option<char>) -> bool {
        let mut pipeline = Pipeline::default();
        let mut command = Simple::default();
        let mut at_start = true;
        let mut closed = false;
        loop {
            // Skip blanks.
            while matches!(self.peek(), Some(' ' | '\t')) {
                self.pos += 1;
            }
            let Some(c) = self.peek() else { break };
            if Some(c) == close {
                self.pos += 1;
                closed = true;
                break;
            }
            match c {
                '#' if at_start || command.words.is_empty() || self.prev_is_blank() => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' | ';' => {
                    self.pos += 1;
                    if c == '\n' {
                        self.skip_heredoc_bodies();
                    }
                    if c == ';' && self.peek() == Some(';') {
                        self.pos += 1; // `;;` in case arms
                    }
                    finish_command(&mut pipeline, &mut command);
                    finish_pipeline(&mut self.script, &mut pipeline);
                    at_start = true;
                }
                '&' if self.peek_at(1) == Some('&') => {
                    self.pos += 2;
                    finish_command(&mut pipeline, &mut command);
                    finish_pipeline(&mut self.script, &mut pipeline);
                    at_start = true;
                }
                '&' if self.peek_at(1) == Some('>') => self.redirect(&mut command),
                '&' => {
                    self.pos += 1;
                    self.script.background = true;
                    finish_command(&mut pipeline, &mut command);
                    finish_pipeline(&mut self.script, &mut pipeline);
                    at_start = true;
                }
                '|' if self.peek_at(1) == Some('|') => {
                    self.pos += 2;
                    finish_command(&mut pipeline, &mut command);
                    finish_pipeline(&mut self.script, &mut pipeline);
                    at_start = true;
                }
                '|' => {
                    self.pos += 1;
                    if self.peek() == Some('&') {
                        self.pos += 1;
                    }
                    finish_command(&mut pipeline, &mut command);
                    at_start = true;
                }
                '(' => {
                    // A subshell (or `((` arithmetic): its commands run too.
                    // Mid-command it is a syntax error for bash; its text
                    // still gets looked at.
                    self.pos += 1;
                    let inner = self.sub_script(Some(')'));
                    self.script.nested.push(inner);
                }
                ')' => {
                    // Unbalanced: keep going, but say so.
                    self.pos += 1;
                    self.script.incomplete = true;
                }
                '<' | '>' => self.redirect(&mut command),
                '0'..='9' if self.is_fd_redirect() => self.redirect(&mut command),
                _ => {
                    let before = self.pos;
                    let mut word = self.word();
                    if self.pos == before {
                        // Every step must consume input; take the character as text.
                        word.text.push(c);
                        self.pos += 1;
                    }
                    if at_start && word.text.contains('=') && !word.text.starts_with('=') && is_assignment(&word.text) {
                        continue; // FOO=bar cmd: the assignment is not the command
                    }
                    if at_start && !word.dynamic && KEYWORDS.contains(&word.text.as_str()) {
                        continue;
                    }
                    if at_start && word.text.ends_with("()") {
                        continue; // a function definition's name
                    }
                    at_start = false;
                    command.words.push(word);
                }
            }
        }
        finish_command(&mut pipeline, &mut command);
        finish_pipeline(&mut self.script, &mut pipeline);
        if close.is_none() && !self.heredocs.is_empty() {
            self.skip_heredoc_bodies();
        }
        closed
    }

    fn prev_is_blank(&self) -> bool {
        self.pos == 0 || matches!(self.chars.get(self.pos - 1), Some(' ' | '\t' | '\n' | ';'))
    }

    fn is_fd_redirect(&self) -> bool {
        let mut n = 0;
        while self.peek_at(n).is_some_and(|c| c.is_ascii_digit()) {
            n += 1;
        }
        matches!(self.peek_at(n), Some('<' | '>')) && self.prev_is_blank()
    }

    /// Parses a nested script up to `close`, as its own [`Script`].
    fn sub_script(&mut self, close: Option<char>) -> Script {
        let mut inner = Parser { chars: self.chars, pos: self.pos, script: Script::default(), heredocs: Vec::new() };
        let closed = inner.script_until(close);
        self.pos = inner.pos;
        let mut script = inner.script;
        if !inner.heredocs.is_empty() {
            self.heredocs.extend(inner.heredocs);
        }
        if close.is_some() && !closed {
            script.incomplete = true;
            self.script.incomplete = true;
        }
        script
    }

    fn redirect(&mut self, command: &mut Simple) {
        let mut op = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_ascii_digit()) {
            op.push(c);
            self.pos += 1;
        }
        while let Some(c) = self.peek().filter(|c| matches!(c, '<' | '>' | '&' | '|')) {
            // `<(` and `>(` are process substitutions, not redirections.
            if matches!(c, '<' | '>') && self.peek_at(1) == Some('(') && !op.ends_with(['<', '>']) {
                self.pos += 2;
                let inner = self.sub_script(Some(')'));
                self.script.nested.push(inner);
                command.words.push(Word { text: "/dev/fd/63".into(), dynamic: true, glob: false });
                return;
            }
            op.push(c);
            self.pos += 1;
        }
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
        if op.ends_with("<<") {
            if self.peek() == Some('-') {
                self.pos += 1;
            }
            let delimiter = self.word().text;
            self.heredocs.push(delimiter);
            return;
        }
        if self.peek().is_none() {
            self.script.incomplete = true;
            return;
        }
        let target = self.word();
        command.redirects.push(Redirect { op, target });
    }

    /// Here-document bodies are text, not commands: skip each up to its
    /// delimiter line.
    fn skip_heredoc_bodies(&mut self) {
        for delimiter in std::mem::take(&mut self.heredocs) {
            loop {
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                let at_end = self.peek().is_none();
                self.pos += 1;
                if line.trim_start_matches('\t') == delimiter {
                    break;
                }
                if at_end {
                    self.script.incomplete = true;
                    self.pos = self.chars.len();
                    return;
                }
            }
        }
    }

    /// One word: quotes removed, expansions marked, nested scripts recorded.
    fn word(&mut self) -> Word {
        let mut word = Word::literal("");
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' => break,
                ')' => break,
                '(' if word.text.is_empty() => break,
                '(' => {
                    // `name()` of a function definition, or `=(`: keep as text.
                    word.text.push(c);
                    self.pos += 1;
                }
                '\'' => {
                    self.pos += 1;
                    loop {
                        match self.peek() {
                            None => {
                                self.script.incomplete = true;
                                break;
                            }
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(ch) => {
                                word.text.push(ch);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    loop {
                        match self.peek() {
                            None => {
                                self.script.incomplete = true;
                                break;
                            }
                            Some('"') => {
                                self.pos += 1;
                                break;
                            }
                            Some('\\') => {
                                self.pos += 1;
                                if let Some(next) = self.peek() {
                                    if !matches!(next, '"' | '\\' | '$' | '`' | '\n') {
                                        word.text.push('\\');
                                    }
                                    word.text.push(next);
                                    self.pos += 1;
                                }
                            }
                            Some('$') => self.dollar(&mut word),
                            Some('`') => self.backtick(&mut word),
                            Some(ch) => {
                                word.text.push(ch);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            word.text.push(next);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '$' => self.dollar(&mut word),
                '`' => self.backtick(&mut word),
                '*' | '?' | '[' => {
                    word.glob = true;
                    word.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
        word
    }

    fn dollar(&mut self, word: &mut Word) {
        self.pos += 1; // the `$`
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let arithmetic = self.peek() == Some('(');
                let inner = self.sub_script(Some(')'));
                if arithmetic {
                    // $(( )) is arithmetic; skip its second parenthesis.
                    if self.peek() == Some(')') {
                        self.pos += 1;
                    }
                } else {
                    self.script.nested.push(inner);
                }
                word.dynamic = true;
                word.text.push_str("$(…)");
            }
            Some('{') => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '}') {
                    self.pos += 1;
                }
                let name: String = self.chars[start + 1..self.pos.min(self.chars.len())].iter().collect();
                if self.peek() == Some('}') {
                    self.pos += 1;
                } else {
                    self.script.incomplete = true;
                }
                if name == "HOME" {
                    word.text.push_str("$HOME");
                } else {
                    word.dynamic = true;
                    word.text.push_str(&format!("${{{name}}}"));
                }
            }
            Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    name.push(c);
                    self.pos += 1;
                }
                if name != "HOME" {
                    word.dynamic = true;
                }
                word.text.push('$');
                word.text.push_str(&name);
            }
            Some(c) if "@*#?$!-".contains(c) => {
                self.pos += 1;
                word.dynamic = true;
                word.text.push('$');
                word.text.push(c);
            }
            _ => word.text.push('$'),
        }
    }

    fn backtick(&mut self, word: &mut Word) {
        self.pos += 1;
        let start = self.pos;
        while self.peek().is_some_and(|c| c != '`') {
            if self.peek() == Some('\\') {
                self.pos += 1;
            }
            self.pos += 1;
        }
        let end = self.pos.min(self.chars.len());
        let body: String = self.chars[start..end].iter().collect();
        if self.peek() == Some('`') {
            self.pos += 1;
        } else {
            self.script.incomplete = true;
        }
        self.script.nested.push(parse(&body));
        word.dynamic = true;
        word.text.push_str("`…`");
    }
}

fn is_assignment(text: &str) -> bool {
    let name = text.split('=').next().unwrap_or("");
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

fn finish_command(pipeline: &mut Pipeline, command: &mut Simple) {
    if !command.words.is_empty() || !command.redirects.is_empty() {
        pipeline.commands.push(std::mem::take(command));
    }
}

fn finish_pipeline(script: &mut Script, pipeline: &mut Pipeline) {
    if !pipeline.commands.is_empty() {
        script.pipelines.push(std::mem::take(pipeline));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        parse(line).commands().iter().map(|c| c.words.iter().map(|w| w.text.clone()).collect()).collect()
    }

    fn w(v: &[&[&str]]) -> Vec<Vec<String>> {
        v.iter().map(|c| c.iter().map(|s| s.to_string()).collect()).collect()
    }

    #[test]
    fn separators_pipes_and_quotes() {
        assert_eq!(
            words("ls -la && git status; cat 'a b' | wc -l || echo \"x\\\"y\""),
            w(&[&["ls", "-la"], &["git", "status"], &["cat", "a b"], &["wc", "-l"], &["echo", "x\"y"]])
        );
        assert_eq!(words("a\nb & c"), w(&[&["a"], &["b"], &["c"]]));
        assert!(parse("sleep 1 &").background);
    }

    #[test]
    fn nested_scripts_are_found() {
        assert_eq!(
            words("echo $(rm -rf /tmp/x) `id`"),
            w(&[&["echo", "$(…)", "`…`"], &["rm", "-rf", "/tmp/x"], &["id"]])
        );
        assert_eq!(words("(cd sub && make) ; { ls; }"), w(&[&["ls"], &["cd", "sub"], &["make"]]));
        assert_eq!(
            words("diff <(ls a) <(ls b)"),
            w(&[&["diff", "/dev/fd/63", "/dev/fd/63"], &["ls", "a"], &["ls", "b"]])
        );
        assert_eq!(words("echo \"$(whoami)\""), w(&[&["echo", "$(…)"], &["whoami"]]));
    }

    #[test]
    fn keywords_assignments_and_comments_are_not_commands() {
        assert_eq!(words("for f in a b; do rm $f; done"), w(&[&["for", "f", "in", "a", "b"], &["rm", "$f"]]));
        assert_eq!(words("if true; then FOO=1 BAR=2 make; fi"), w(&[&["true"], &["make"]]));
        assert_eq!(words("ls # rm -rf /"), w(&[&["ls"]]));
        assert_eq!(words("echo a#b"), w(&[&["echo", "a#b"]]));
    }

    #[test]
    fn redirections_are_recorded() {
        let script = parse("echo hi > out.txt 2>&1 && cat < in.txt >> log");
        let cmds = script.commands();
        assert_eq!(
            cmds[0].redirects.iter().map(|r| (r.op.as_str(), r.target.text.as_str())).collect::<Vec<_>>(),
            vec![(">", "out.txt"), ("2>&", "1")]
        );
        assert_eq!(cmds[1].redirects.len(), 2);
        let here = parse("cat <<EOF > f.txt\nrm -rf /\nEOF\nls");
        assert_eq!(here.commands().iter().map(|c| c.words[0].text.as_str()).collect::<Vec<_>>(), vec!["cat", "ls"]);
        assert_eq!(here.commands()[0].redirects[0].target.text, "f.txt");
        let dashed = parse("cat <<-'END'\n\tbody\n\tEND\necho after");
        assert_eq!(dashed.commands().len(), 2);
        assert!(!dashed.incomplete);
    }

    #[test]
    fn expansions_are_marked() {
        let script = parse("rm -rf $TARGET ~/x \"$HOME\" *.o");
        let words = &script.commands()[0].words;
        assert!(words[2].dynamic);
        assert!(!words[3].dynamic && words[3].text == "~/x");
        assert!(!words[4].dynamic && words[4].text == "$HOME");
        assert!(words[5].glob && !words[5].dynamic);
    }

    #[test]
    fn a_parenthesis_mid_command_cannot_stall_the_parser() {
        // Found by the fuzz test below: this once looped forever.
        assert_eq!(words("echo (rm -rf /)"), w(&[&["echo"], &["rm", "-rf", "/"]]));
        assert_eq!(words("a(b"), w(&[&["a(b"]]));
    }

    #[test]
    fn broken_input_is_flagged_not_fatal() {
        for line in ["echo 'open", "echo \"open", "(ls", "echo $(ls", "cat <<EOF\nno end", "ls )", "`unclosed"] {
            assert!(parse(line).incomplete, "{line}");
        }
        assert!(!parse("echo ok").incomplete);
    }
}

#[cfg(test)]
mod fuzz {
    use proptest::prelude::*;

    proptest! {
        /// Whatever a model writes, parsing ends and never panics.
        #[test]
        fn any_text_parses_without_panicking(line in "[ -~\n\t]{0,120}") {
            let script = super::parse(&line);
            let _ = script.commands().len();
        }

        #[test]
        fn shell_looking_noise_parses_without_panicking(parts in proptest::collection::vec(
            prop_oneof![
                Just("rm"), Just("-rf"), Just("'"), Just("\""), Just("$("), Just(")"), Just("`"), Just("<<EOF\n"),
                Just("EOF\n"), Just("|"), Just("&&"), Just(";"), Just("\\"), Just("${"), Just("}"), Just("<("), Just("~"),
                Just("*"), Just("bash -c "), Just("eval "), Just(" "), Just("\n"), Just("#"), Just("2>&1"),
            ],
            0..40,
        )) {
            let line: String = parts.concat();
            let _ = super::parse(&line);
            let ctx = crate::safety::analyze::Context {
                workspace: std::path::Path::new("/srv/w"),
                cwd: std::path::Path::new("/srv/w"),
                home: Some(std::path::Path::new("/home/u")),
            };
            let _ = crate::safety::analyze(&line, &ctx);
        }
    }
}
