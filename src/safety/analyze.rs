//! The rules that block destructive commands before they run, in every
//! approval mode. They judge parsed words, so quoting, flag order, `--`,
//! `sudo`/`env`/`timeout` prefixes and `bash -c` strings do not hide a
//! command. What cannot be decided statically (`$(echo rm) -rf ~`) is left
//! to the sandbox; the rules never guess "safe" about a path they cannot
//! resolve, they only decline to block it.

use std::path::{Component, Path, PathBuf};

use super::shell::{Script, Simple, Word, parse};

/// Where a command runs, to resolve the paths it names.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub workspace: &'a Path,
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Never runs, in any mode. `rule` names the rule for the message.
    Block { rule: &'static str, reason: String },
    /// Needs the person's yes even in full-auto.
    Ask { rule: &'static str, reason: String },
}

impl Finding {
    pub fn message(&self) -> String {
        match self {
            Finding::Block { rule, reason } => format!("blocked by the `{rule}` rule: {reason}"),
            Finding::Ask { rule, reason } => format!("needs approval (rule `{rule}`): {reason}"),
        }
    }
}

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "fish", "ksh", "ash", "mksh", "csh", "tcsh"];
const INTERPRETERS: &[&str] =
    &["python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "deno", "bun"];
const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "aria2c", "http", "https", "lynx", "links"];
const SAFE_DEVICES: &[&str] =
    &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];
const PROTECTED_BRANCHES: &[&str] = &["main", "master", "trunk", "develop", "production", "release"];

/// The first blocking finding for `line`, else the first "ask" finding.
pub fn analyze(line: &str, ctx: &Context) -> Option<Finding> {
    let mut findings = Vec::new();
    check_line(line, ctx, 0, &mut findings);
    findings.iter().find(|f| matches!(f, Finding::Block { .. })).or(findings.first()).cloned()
}

fn check_line(line: &str, ctx: &Context, depth: usize, out: &mut Vec<Finding>) {
    if depth > 8 {
        return;
    }
    if let Some(name) = fork_bomb(line) {
        out.push(Finding::Block {
            rule: "fork-bomb",
            reason: format!("`{name}` calls itself twice in the background without end"),
        });
    }
    let script = parse(line);
    check_script(&script, ctx, depth, out);
}

fn check_script(script: &Script, ctx: &Context, depth: usize, out: &mut Vec<Finding>) {
    for pipeline in &script.pipelines {
        pipe_to_shell(&pipeline.commands, out);
        for command in &pipeline.commands {
            check_simple(command, script, ctx, depth, out);
        }
    }
    for nested in &script.nested {
        check_script(nested, ctx, depth + 1, out);
    }
}

fn check_simple(command: &Simple, script: &Script, ctx: &Context, depth: usize, out: &mut Vec<Finding>) {
    for redirect in &command.redirects {
        if redirect.op.contains('>') && !redirect.op.ends_with('&') && is_device(&redirect.target.text) {
            out.push(block("device-write", format!("writing to the device {}", redirect.target.text)));
        }
    }
    let words = unwrap_prefixes(&command.words);
    let Some(program) = words.first().map(|w| program_name(&w.text)) else { return };
    let args = &words[1..];
    match program.as_str() {
        "rm" => rm(args, ctx, out),
        "find" => find(args, ctx, out),
        "dd" => {
            for arg in args.iter().filter_map(|a| a.text.strip_prefix("of=")) {
                if is_device(arg) {
                    out.push(block("dd-device", format!("dd writing to the device {arg}")));
                }
            }
        }
        "chmod" | "chown" | "chgrp" => ownership(&program, args, ctx, out),
        "tee" | "cp" | "mv" | "shred" | "truncate" | "install" | "ln" => {
            for arg in args.iter().filter(|a| !a.text.starts_with('-')) {
                if is_device(&arg.text) {
                    out.push(block("device-write", format!("{program} writing to the device {}", arg.text)));
                }
            }
        }
        "git" => git_push(args, out),
        "eval" if args.iter().all(|a| !a.dynamic) => {
            let text: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
            check_line(&text.join(" "), ctx, depth + 1, out);
        }
        p if p.starts_with("mkfs") || matches!(p, "mke2fs" | "mkswap" | "wipefs") => {
            out.push(block("mkfs", format!("`{p}` formats a filesystem or device")));
        }
        p if SHELLS.contains(&p) || INTERPRETERS.iter().any(|i| p.starts_with(i)) || p == "source" || p == "." => {
            // bash -c 'string': the string is a command line of its own.
            if SHELLS.contains(&p)
                && let Some(pos) = args
                    .iter()
                    .position(|a| a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('c'))
                && let Some(inner) = args.get(pos + 1)
                && !inner.dynamic
            {
                check_line(&inner.text, ctx, depth + 1, out);
            }
            // bash <(curl ...), sh -c "$(wget ...)": a download run as code.
            if args.iter().any(|a| a.dynamic) && script.nested.iter().any(has_download) {
                out.push(block("pipe-to-shell", format!("running downloaded code with `{p}`")));
            }
        }
        _ => {}
    }
}

fn block(rule: &'static str, reason: String) -> Finding {
    Finding::Block { rule, reason }
}

/// Drops `sudo`, `env`, `nice`, `timeout`, ... and their options, so the
/// command they run is what gets judged. `xargs` leaves operands unknown.
fn unwrap_prefixes(words: &[Word]) -> Vec<Word> {
    let mut words = words.to_vec();
    loop {
        let Some(first) = words.first() else { return words };
        let name = program_name(&first.text);
        // Options of each wrapper that take a separate value.
        let valued: &[&str] = match name.as_str() {
            "sudo" | "doas" => &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"],
            "env" => &["-u", "-C", "-S"],
            "nice" => &["-n"],
            "timeout" => &["-s", "-k", "--signal", "--kill-after"],
            "ionice" => &["-c", "-n", "-p"],
            "stdbuf" => &["-i", "-o", "-e"],
            "xargs" => &["-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a"],
            "nohup" | "command" | "exec" | "builtin" | "time" | "chronic" | "unbuffer" | "catchsegv" => &[],
            _ => return words,
        };
        let mut i = 1;
        while let Some(word) = words.get(i) {
            let text = word.text.as_str();
            if name == "env" && !text.starts_with('-') && text.contains('=') {
                i += 1;
            } else if text == "--" {
                i += 1;
                break;
            } else if text.starts_with('-') && text.len() > 1 {
                i += if valued.contains(&text) { 2 } else { 1 };
            } else {
                break;
            }
        }
        // timeout's first operand is the duration.
        if name == "timeout" && i < words.len() {
            i += 1;
        }
        let xargs = name == "xargs";
        words.drain(..i.min(words.len()));
        if xargs && !words.is_empty() {
            words.push(Word { text: "<stdin>".into(), dynamic: true, glob: false });
        }
    }
}

fn program_name(text: &str) -> String {
    text.rsplit('/').next().unwrap_or(text).to_owned()
}

fn is_device(path: &str) -> bool {
    path.starts_with("/dev/")
        && !SAFE_DEVICES.contains(&path)
        && !path.starts_with("/dev/fd/")
        && !path.starts_with("/dev/pts/")
}

/// Where a path argument points, if that can be known without running anything.
#[derive(Debug, PartialEq)]
enum Target {
    Known(PathBuf),
    Unknown,
}

fn resolve(word: &Word, ctx: &Context) -> Target {
    if word.dynamic {
        return Target::Unknown;
    }
    let mut text = word.text.clone();
    if word.glob {
        // A glob stands for things inside the folder before its first wildcard.
        let first = text.find(['*', '?', '[']).unwrap_or(text.len());
        text = match text[..first].rfind('/') {
            Some(0) => "/".into(),
            Some(slash) => text[..slash].into(),
            None => ".".into(),
        };
    }
    let path = if text == "~" || text.starts_with("~/") || text == "$HOME" || text.starts_with("$HOME/") {
        let Some(home) = ctx.home else { return Target::Unknown };
        let rest = text.trim_start_matches('~').trim_start_matches("$HOME").trim_start_matches('/');
        home.join(rest)
    } else if let Some(user) = text.strip_prefix('~') {
        // Another user's home: certainly not this workspace.
        PathBuf::from("/home").join(user)
    } else {
        ctx.cwd.join(&text)
    };
    Target::Known(real(&normalize(&path)))
}

/// Resolves symlinks in the parent (the operand itself is what the command
/// acts on), so a link into another tree is judged by where it leads.
fn real(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => {
            parent.canonicalize().map(|p| p.join(name)).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            Component::Normal(part) => out.push(part),
        }
    }
    out
}

/// Why deleting or changing `path` recursively is off limits, if it is.
fn off_limits(path: &Path, ctx: &Context) -> Option<String> {
    if path == Path::new("/") {
        return Some("the root folder /".into());
    }
    if ctx.home.is_some_and(|h| path == h) {
        return Some(format!("the home folder {}", path.display()));
    }
    if path == ctx.workspace {
        return Some("the whole workspace".into());
    }
    if !path.starts_with(ctx.workspace) {
        return Some(format!("{}, outside the workspace", path.display()));
    }
    None
}

fn rm(args: &[Word], ctx: &Context, out: &mut Vec<Finding>) {
    let mut recursive = false;
    let mut operands = Vec::new();
    let mut options_done = false;
    for arg in args {
        let text = arg.text.as_str();
        if options_done || !text.starts_with('-') || text == "-" {
            operands.push(arg);
        } else if text == "--" {
            options_done = true;
        } else if text.starts_with("--") {
            recursive |= text == "--recursive";
        } else {
            recursive |= text.contains(['r', 'R']);
        }
    }
    if !recursive {
        return;
    }
    for operand in operands {
        let Target::Known(path) = resolve(operand, ctx) else { continue };
        // A glob deletes what is inside its folder, so the workspace
        // itself may be that folder; a plain operand deletes the path.
        let what = if operand.glob && path == ctx.workspace { None } else { off_limits(&path, ctx) };
        if let Some(what) = what {
            out.push(block("rm-recursive", format!("recursive delete of {what} (`{}`)", operand.text)));
        }
    }
}

fn find(args: &[Word], ctx: &Context, out: &mut Vec<Finding>) {
    let mut roots = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.text.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    while let Some(arg) = args.get(i) {
        if arg.text.starts_with('-') || arg.text == "(" || arg.text == "!" {
            break;
        }
        roots.push(arg);
        i += 1;
    }
    let expression = &args[i..];
    let deletes = expression.iter().enumerate().any(|(n, a)| {
        a.text == "-delete"
            || (matches!(a.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                && expression
                    .get(n + 1)
                    .is_some_and(|p| matches!(program_name(&p.text).as_str(), "rm" | "shred" | "unlink" | "rmdir")))
    });
    if !deletes {
        return;
    }
    let dot = Word { text: ".".into(), dynamic: false, glob: false };
    let roots = if roots.is_empty() { vec![&dot] } else { roots };
    for root in roots {
        if let Target::Known(path) = resolve(root, ctx)
            && !path.starts_with(ctx.workspace)
        {
            out.push(block("find-delete", format!("find deleting under {}, outside the workspace", path.display())));
        }
    }
}

fn ownership(program: &str, args: &[Word], ctx: &Context, out: &mut Vec<Finding>) {
    let recursive = args.iter().any(|a| {
        a.text == "--recursive" || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('R'))
    });
    let reference = args.iter().any(|a| a.text.starts_with("--reference"));
    // The first operand is the mode or owner, unless --reference gives it.
    let operands = args.iter().filter(|a| !a.text.starts_with('-')).skip(usize::from(!reference));
    for operand in operands {
        let Target::Known(path) = resolve(operand, ctx) else { continue };
        let what = off_limits(&path, ctx);
        let root = path == Path::new("/");
        if root || (recursive && what.is_some() && path != ctx.workspace) {
            let what = what.unwrap_or_default();
            let how = if recursive { " recursively" } else { "" };
            out.push(block("chmod-recursive", format!("{program}{how} on {what}")));
        }
    }
}

fn git_push(args: &[Word], out: &mut Vec<Finding>) {
    let Some(sub) = args.iter().position(|a| !a.text.starts_with('-')) else { return };
    if args[sub].text != "push" {
        return;
    }
    let rest = &args[sub + 1..];
    let forced_flag = rest.iter().any(|a| {
        matches!(a.text.as_str(), "--force" | "-f" | "--force-with-lease" | "--mirror")
            || a.text.starts_with("--force-with-lease=")
            || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('f'))
    });
    let refs: Vec<&str> = rest.iter().filter(|a| !a.text.starts_with('-')).skip(1).map(|a| a.text.as_str()).collect();
    let plus_refspec = refs.iter().any(|r| r.starts_with('+'));
    if !(forced_flag || plus_refspec) {
        return;
    }
    let protected = |r: &&str| {
        let dest = r.trim_start_matches('+').rsplit(':').next().unwrap_or("");
        let dest = dest.trim_start_matches("refs/heads/");
        PROTECTED_BRANCHES.iter().any(|b| dest == *b || dest.starts_with(&format!("{b}/")))
    };
    if refs.is_empty() || refs.iter().any(protected) {
        let target =
            if refs.is_empty() { "the current branch (which may be protected)".to_owned() } else { refs.join(" ") };
        out.push(Finding::Ask {
            rule: "force-push",
            reason: format!("force-push to {target} rewrites shared history"),
        });
    }
}

fn pipe_to_shell(commands: &[Simple], out: &mut Vec<Finding>) {
    let programs: Vec<String> = commands
        .iter()
        .map(|c| unwrap_prefixes(&c.words).first().map(|w| program_name(&w.text)).unwrap_or_default())
        .collect();
    let Some(download) = programs.iter().position(|p| DOWNLOADERS.contains(&p.as_str())) else { return };
    if let Some(runner) = programs[download + 1..]
        .iter()
        .find(|p| SHELLS.contains(&p.as_str()) || INTERPRETERS.iter().any(|i| p.starts_with(i)) || *p == "source")
    {
        out.push(block("pipe-to-shell", format!("a download from `{}` piped into `{runner}`", programs[download])));
    }
}

fn has_download(script: &Script) -> bool {
    script.commands().iter().any(|c| {
        unwrap_prefixes(&c.words).first().is_some_and(|w| DOWNLOADERS.contains(&program_name(&w.text).as_str()))
    })
}

/// `:(){ :|:& };:` and its renamed forms: a function whose body pipes
/// itself into itself in the background.
fn fork_bomb(line: &str) -> Option<String> {
    let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let mut from = 0;
    while let Some(at) = squeezed[from..].find("(){") {
        let def = from + at;
        let name: String = squeezed[..def]
            .chars()
            .rev()
            .take_while(|c| !matches!(c, ';' | '&' | '|' | '{' | '}' | '(' | ')'))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let name = name.trim_start_matches("function").to_owned();
        let body = &squeezed[def + 3..];
        if !name.is_empty() && (body.contains(&format!("{name}|{name}&")) || body.contains(&format!("{name}&{name}&")))
        {
            return Some(name);
        }
        from = def + 3;
    }
    None
}

#[cfg(test)]
mod tests;
