//! The `hew` command: parses the command line, loads configuration and
//! hands over to a front end. Every failure is one line and an exit status.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use hew::config::{self, ApprovalMode, Overrides};
use hew::exec::{self, EXIT_USAGE, ExecOptions};

#[derive(Parser)]
#[command(name = "hew", version, about = "A terminal coding assistant that shows every edit as a diff before it lands")]
struct Cli {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Args, Clone)]
struct Common {
    /// A [providers.NAME] entry, or the built-ins `openai` / `anthropic`
    #[arg(long, global = true, value_name = "NAME")]
    provider: Option<String>,
    /// The model to use
    #[arg(long, global = true, value_name = "NAME")]
    model: Option<String>,
    /// Override the provider's base URL
    #[arg(long, global = true, value_name = "URL")]
    base_url: Option<String>,
    /// read-only | ask | auto-edit | full-auto
    #[arg(long, global = true, value_name = "MODE")]
    approval: Option<ApprovalMode>,
    /// Workspace root (default: the current folder)
    #[arg(long, global = true, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Model round-trips per task before stopping (default 50)
    #[arg(long, global = true, value_name = "N")]
    max_turns: Option<u32>,
    /// Stop before the session's spending would pass this many US dollars
    #[arg(long, global = true, value_name = "USD")]
    max_cost: Option<f64>,
    /// Continue a saved session: its id, a unique prefix of it, or `last`
    #[arg(long, global = true, value_name = "ID")]
    resume: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Run one task to completion without the full-screen interface and print the answer
    Exec {
        /// Honour the workspace's .hew/config.toml in full (provider URL, allow rules, modes)
        #[arg(long)]
        trust_project: bool,
        /// Print one JSON event per line on stdout
        #[arg(long)]
        json: bool,
        /// The task; `-` or nothing reads it from standard input
        prompt: Vec<String>,
    },
    /// List saved sessions, newest first (those of this folder; --all for every folder)
    Sessions {
        #[arg(long)]
        all: bool,
    },
    /// Print a session's transcript
    Export {
        /// A session id, a unique prefix of one, or `last`
        id: String,
        #[arg(long, value_enum, default_value = "md")]
        format: ExportFormat,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ExportFormat {
    Md,
    Json,
}

fn main() {
    // Reports for the unexpected (a bug): a readable panic message, not a raw dump.
    let _ = color_eyre::install();
    let cli = Cli::parse();
    std::process::exit(run(cli));
}

fn run(cli: Cli) -> i32 {
    match &cli.command {
        Some(Command::Sessions { all }) => return sessions(&cli.common, *all),
        Some(Command::Export { id, format }) => return export(&cli.common, id, *format),
        _ => {}
    }
    let resume = cli.common.resume.clone();
    let (exec, trust_project) = match &cli.command {
        Some(Command::Exec { trust_project, json, prompt }) => match read_prompt(prompt.clone()) {
            Ok(prompt) => (Some(ExecOptions { prompt, json: *json, resume: resume.clone() }), *trust_project),
            Err(message) => {
                eprintln!("hew: {message}");
                return EXIT_USAGE;
            }
        },
        _ => (None, false),
    };
    let common = cli.common.clone();
    let mut config = match load_config(cli.common, trust_project, exec.is_some()) {
        Ok(config) => config,
        Err(code) => return code,
    };
    // The TUI asks, once per folder, before a repository's own settings may
    // redirect requests or widen permissions. Nothing from it has run yet.
    if exec.is_none() && !config.untrusted.is_empty() && ask_trust(&config) {
        if let Err(e) = config::trust(&config.hew_home, &config.workspace) {
            eprintln!("hew: cannot remember the trusted folder: {e}");
        }
        config = match load_config(common, true, false) {
            Ok(config) => config,
            Err(code) => return code,
        };
    }
    let _log = hew::logging::init(&config.hew_home);
    tracing::info!(provider = %config.provider.name, model = %config.provider.model, tui = exec.is_none(), "hew starting");
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("hew: cannot start the async runtime: {e}");
            return exec::EXIT_FAILED;
        }
    };
    let code = match exec {
        Some(options) => runtime.block_on(exec::run(config, options)),
        None => runtime.block_on(hew::ui::run(config, resume)),
    };
    // Do not wait for blocked reader threads of killed commands.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}

/// Asks on the plain terminal, before the interface starts.
fn ask_trust(config: &config::Config) -> bool {
    if !std::io::stdin().is_terminal() {
        return false;
    }
    eprintln!(
        "{}/.hew/config.toml sets {}, which a repository should not decide on its own\n(where requests and your key go, or what runs without asking).",
        config.workspace.display(),
        config.untrusted.join(", ")
    );
    eprint!("Trust this folder's settings from now on? [y/N] ");
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    matches!(answer.trim(), "y" | "Y" | "yes")
}

fn load_config(c: Common, trust_project: bool, exec: bool) -> Result<config::Config, i32> {
    let overrides = Overrides {
        provider: c.provider,
        model: c.model,
        base_url: c.base_url,
        approval: c.approval,
        cwd: c.cwd,
        max_turns: c.max_turns,
        max_cost: c.max_cost,
        trust_project,
        // Nobody can answer questions in exec; the TUI asks.
        default_approval: Some(if exec { ApprovalMode::ReadOnly } else { ApprovalMode::Ask }),
    };
    config::load(&overrides, &|name| std::env::var(name).ok()).map_err(|e| {
        eprintln!("hew: {e}");
        EXIT_USAGE
    })
}

/// Where sessions are and which folder is "this" one, without needing a
/// provider key (listing and exporting send nothing).
fn session_place(c: &Common) -> Result<(std::path::PathBuf, std::path::PathBuf), i32> {
    let env = |name: &str| std::env::var(name).ok();
    let dir = hew::session::store::sessions_dir(&env).ok_or_else(|| {
        eprintln!("hew: cannot find a home folder for sessions: set HEW_HOME");
        EXIT_USAGE
    })?;
    let cwd = match &c.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().unwrap_or_default(),
    };
    Ok((dir, cwd.canonicalize().unwrap_or(cwd)))
}

fn sessions(c: &Common, all: bool) -> i32 {
    let (dir, cwd) = match session_place(c) {
        Ok(place) => place,
        Err(code) => return code,
    };
    let here = cwd.display().to_string();
    let list: Vec<_> = hew::session::store::list(&dir).into_iter().filter(|s| all || s.meta.cwd == here).collect();
    if list.is_empty() {
        let scope = if all { String::new() } else { format!(" for {here} (--all shows every folder)") };
        eprintln!("hew: no saved sessions{scope}");
        return exec::EXIT_OK;
    }
    for s in list {
        let cost = hew::agent::cost(s.usage, &hew::config::builtin_model(&s.meta.model))
            .map(|c| format!("${c:.2}"))
            .unwrap_or_else(|| "-".into());
        let prompt: String = s.first_prompt.split_whitespace().collect::<Vec<_>>().join(" ");
        let prompt: String = prompt.chars().take(60).collect();
        println!("{}  {}  {}  {} turns  {}  {}", s.meta.id, s.meta.created, s.meta.cwd, s.turns, cost, prompt);
    }
    exec::EXIT_OK
}

fn export(c: &Common, id: &str, format: ExportFormat) -> i32 {
    let (dir, cwd) = match session_place(c) {
        Ok(place) => place,
        Err(code) => return code,
    };
    let loaded = match hew::session::store::resolve(&dir, id, &cwd).and_then(|path| hew::session::store::load(&path)) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("hew: {e}");
            return EXIT_USAGE;
        }
    };
    for warning in &loaded.warnings {
        eprintln!("hew: {warning}");
    }
    match format {
        ExportFormat::Md => print!("{}", hew::session::export::markdown(&loaded)),
        ExportFormat::Json => {
            let meta = hew::session::Record::Meta(loaded.meta.clone());
            for record in std::iter::once(&meta).chain(loaded.records.iter()) {
                if let Ok(line) = serde_json::to_string(record) {
                    println!("{line}");
                }
            }
        }
    }
    exec::EXIT_OK
}

fn read_prompt(words: Vec<String>) -> Result<String, String> {
    let prompt = words.join(" ");
    if !prompt.trim().is_empty() && prompt != "-" {
        return Ok(prompt);
    }
    if std::io::stdin().is_terminal() {
        return Err("no task given: run `hew exec \"what to do\"`, or pipe the task on standard input".into());
    }
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| format!("cannot read the task from standard input: {e}"))?;
    if text.trim().is_empty() {
        return Err("the task on standard input is empty".into());
    }
    Ok(text)
}
