//! What both front ends do before they start: build the provider, open
//! (or resume) the session, load project instructions, confine the tools,
//! choose the sandbox, and create the agent. Also the stop signals both
//! listen for.

use std::sync::Arc;

use crate::agent::{Agent, AgentSettings, policy::Rules};
use crate::config::{Config, SandboxMode};
use crate::provider::{self, Provider};
use crate::sandbox::{self, Sandbox};
use crate::session::Record;
use crate::tools::{Registry, ToolContext};

/// A ready agent and what the front end should know about it.
pub struct Started {
    pub agent: Agent,
    /// Things to tell the person before anything else.
    pub notices: Vec<String>,
    pub session_id: String,
    pub session_path: std::path::PathBuf,
    /// The resumed session's records (empty for a new one).
    pub records: Vec<Record>,
    pub sandboxed: bool,
}

/// Builds the agent for `config`; `Err` is one line for the person (exit 2).
pub fn start(config: &Config, resume: Option<&str>, interactive: bool, keep_records: bool) -> Result<Started, String> {
    let provider: Arc<dyn Provider> =
        provider::build(config.provider.clone()).map(Arc::from).map_err(|e| e.to_string())?;
    let opened = crate::session::open::open(config, resume).map_err(|e| e.to_string())?;
    let instructions = crate::agent::instructions::load(&config.workspace, &config.hew_home);
    let mut notices = config.notices.clone();
    notices.extend(opened.warnings.iter().map(|w| format!("session: {w}")));
    if !instructions.files.is_empty() {
        let files: Vec<String> = instructions.files.iter().map(|f| f.display().to_string()).collect();
        notices.push(format!("following instructions from {}", files.join(", ")));
    }
    let model = config.model_info();
    if config.max_cost.is_some() && (model.input_price.is_none() || model.output_price.is_none()) {
        notices.push(format!(
            "the price of {} is unknown, so --max-cost cannot be enforced; add input_price and output_price under [models.\"{}\"]",
            config.provider.model, config.provider.model
        ));
    }
    let ctx = tool_context(config, &mut notices);
    ctx.checkpoints.attach(crate::tools::checkpoint::store_path(&opened.writer.path));
    let sandboxed = ctx.sandbox.is_some();
    let settings = AgentSettings {
        approval: config.approval,
        max_turns: config.max_turns,
        interactive,
        max_output_tokens: 8192,
        rules: Rules::new(config.allow.clone(), config.deny.clone()),
        model,
        max_cost: config.max_cost,
        instructions,
    };
    let session_id = opened.writer.id.clone();
    let session_path = opened.writer.path.clone();
    // Without a browser to fill, drop the records: outputs stay in memory once.
    let records = if keep_records { opened.records } else { Vec::new() };
    let agent = Agent::new(provider, Arc::new(Registry::standard()), Arc::new(ctx), settings)
        .with_history(opened.history)
        .with_session(opened.writer);
    Ok(Started { agent, notices, session_id, session_path, records, sandboxed })
}

/// The session's tool context: confined to the workspace, hew's own
/// folders off limits, keys hidden from children, and the sandbox; says,
/// in `notices`, when the OS sandbox cannot be used.
pub fn tool_context(config: &Config, notices: &mut Vec<String>) -> ToolContext {
    let mut hidden = vec!["OPENAI_API_KEY".to_owned(), "ANTHROPIC_API_KEY".to_owned()];
    if !hidden.contains(&config.api_key_env) {
        hidden.push(config.api_key_env.clone());
    }
    let protected = vec![config.hew_home.clone(), config.sessions_dir.clone()];
    let ctx = ToolContext::new(config.workspace.clone(), protected, hidden);
    let sandbox = match config.sandbox {
        SandboxMode::Off => None,
        SandboxMode::On if sandbox::kernel_abi().is_none() => {
            notices.push(
                "this kernel has no Landlock, so commands run without the OS sandbox (approvals and command checks still apply)"
                    .into(),
            );
            None
        }
        SandboxMode::On => Some(Sandbox::new(&config.workspace, ctx.home.as_deref(), &config.sandbox_writable)),
    };
    ctx.with_sandbox(sandbox)
}

/// SIGINT, SIGTERM and SIGHUP, as one stream of signal numbers.
pub struct Signals {
    term: Option<tokio::signal::unix::Signal>,
    hup: Option<tokio::signal::unix::Signal>,
    /// The TUI reads Ctrl-C as a key; only exec treats SIGINT as a stop.
    int: bool,
}

impl Signals {
    pub fn new(with_sigint: bool) -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        Signals { term: signal(SignalKind::terminate()).ok(), hup: signal(SignalKind::hangup()).ok(), int: with_sigint }
    }

    /// Waits for the next stop signal and returns its number.
    pub async fn next(&mut self) -> i32 {
        let term = async {
            match &mut self.term {
                Some(s) => s.recv().await,
                None => std::future::pending().await,
            }
        };
        let hup = async {
            match &mut self.hup {
                Some(s) => s.recv().await,
                None => std::future::pending().await,
            }
        };
        let int = async {
            if self.int {
                let _ = tokio::signal::ctrl_c().await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            _ = int => libc::SIGINT,
            _ = term => libc::SIGTERM,
            _ = hup => libc::SIGHUP,
        }
    }
}
