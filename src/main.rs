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
}

fn main() {
    // Reports for the unexpected (a bug): a readable panic message, not a raw dump.
    let _ = color_eyre::install();
    let cli = Cli::parse();
    std::process::exit(run(cli));
}

fn run(cli: Cli) -> i32 {
    let (exec, trust_project) = match &cli.command {
        Some(Command::Exec { trust_project, json, prompt }) => match read_prompt(prompt.clone()) {
            Ok(prompt) => (Some(ExecOptions { prompt, json: *json }), *trust_project),
            Err(message) => {
                eprintln!("hew: {message}");
                return EXIT_USAGE;
            }
        },
        None => (None, false),
    };
    let c = cli.common;
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
        default_approval: Some(if exec.is_some() { ApprovalMode::ReadOnly } else { ApprovalMode::Ask }),
    };
    let config = match config::load(&overrides, &|name| std::env::var(name).ok()) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("hew: {e}");
            return EXIT_USAGE;
        }
    };
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
        None => runtime.block_on(hew::ui::run(config)),
    };
    // Do not wait for blocked reader threads of killed commands.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
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
