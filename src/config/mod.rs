//! Configuration: compiled defaults < `$HEW_HOME/config.toml` <
//! `.hew/config.toml` (untrusted unless the user says so) < environment <
//! flags, resolved once into a [`Config`] the rest of hew reads.
//!
//! Every mistake is a [`ConfigError`] that names what to fix; `main` turns
//! it into one line and exit status 2.

mod file;
mod models;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

pub use file::{FileConfig, ModelEntry};
pub use models::ModelInfo;

use crate::provider::{ProviderSettings, WireKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    ReadOnly,
    Ask,
    AutoEdit,
    FullAuto,
}

impl ApprovalMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::ReadOnly => "read-only",
            ApprovalMode::Ask => "ask",
            ApprovalMode::AutoEdit => "auto-edit",
            ApprovalMode::FullAuto => "full-auto",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    On,
    Off,
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ConfigError {
    #[error("{}{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default(), key.as_ref().map(|k| format!(": {k}")).unwrap_or_default())]
    File { path: PathBuf, line: Option<usize>, key: Option<String>, message: String },
    #[error("no API key for provider `{provider}`: set {var}")]
    MissingKey { provider: String, var: String },
    #[error("unknown provider `{name}`: use one of {known}, or add [providers.{name}] to config.toml")]
    UnknownProvider { name: String, known: String },
    #[error("{0}")]
    Invalid(String),
}

/// What the command line says; `None` leaves the lower layers in charge.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub approval: Option<ApprovalMode>,
    pub cwd: Option<PathBuf>,
    pub max_turns: Option<u32>,
    pub max_cost: Option<f64>,
    pub trust_project: bool,
    /// The approval mode when nothing else sets one: `ask` for the TUI,
    /// `read-only` for `hew exec`.
    pub default_approval: Option<ApprovalMode>,
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub workspace: PathBuf,
    pub hew_home: PathBuf,
    /// Where session transcripts are kept.
    pub sessions_dir: PathBuf,
    pub provider: ProviderSettings,
    /// The variable the key came from, so tools can keep it from children.
    pub api_key_env: String,
    pub approval: ApprovalMode,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub sandbox: SandboxMode,
    /// Extra folders the sandbox lets commands write to.
    pub sandbox_writable: Vec<PathBuf>,
    pub max_turns: u32,
    pub max_cost: Option<f64>,
    pub models: BTreeMap<String, ModelInfo>,
    /// Things the user should hear about (skipped untrusted settings).
    pub notices: Vec<String>,
    /// Keys of the project's own config that were ignored because the
    /// folder is not trusted (the TUI offers to trust it).
    pub untrusted: Vec<String>,
}

impl Config {
    pub fn model_info(&self) -> ModelInfo {
        models::lookup(&self.models, &self.provider.model)
    }
}

/// The built-in facts about a model, without any configuration.
pub fn builtin_model(model: &str) -> ModelInfo {
    models::lookup(&BTreeMap::new(), model)
}

/// Where hew keeps its own files: `$HEW_HOME`, else `~/.config/hew`.
pub fn hew_home(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, ConfigError> {
    if let Some(home) = env("HEW_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    directories::BaseDirs::new()
        .map(|dirs| dirs.config_dir().join("hew"))
        .ok_or_else(|| ConfigError::Invalid("cannot find a home folder: set HEW_HOME".into()))
}

/// Loads every layer and resolves it, reading the environment through `env`.
pub fn load(overrides: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
    let workspace = match &overrides.cwd {
        Some(dir) => dir.clone(),
        None => {
            std::env::current_dir().map_err(|e| ConfigError::Invalid(format!("cannot read the current folder: {e}")))?
        }
    };
    let workspace = workspace
        .canonicalize()
        .map_err(|e| ConfigError::Invalid(format!("workspace {}: {e}", workspace.display())))?;
    if !workspace.is_dir() {
        return Err(ConfigError::Invalid(format!("workspace {} is not a folder", workspace.display())));
    }
    let hew_home = hew_home(env)?;
    let user = file::read(&hew_home.join("config.toml"))?.unwrap_or_default();
    let project_path = workspace.join(".hew").join("config.toml");
    let mut notices = Vec::new();
    let mut untrusted_keys = Vec::new();
    let trusted = overrides.trust_project || is_trusted(&hew_home, &workspace);
    let project = match file::read(&project_path)? {
        Some(project) if trusted => project,
        Some(project) => {
            let (kept, skipped) = untrusted(project);
            if !skipped.is_empty() {
                notices.push(format!(
                    "ignored from the untrusted {}: {} (trust the folder when hew asks, or pass --trust-project to hew exec)",
                    project_path.display(),
                    skipped.join(", ")
                ));
            }
            untrusted_keys = skipped;
            kept
        }
        None => FileConfig::default(),
    };
    let mut config = resolve(&[user, project], overrides, env, workspace, hew_home)?;
    config.notices.extend(notices);
    config.untrusted = untrusted_keys;
    Ok(config)
}

/// Folders the person said to trust, one canonical path a line, kept in
/// `$HEW_HOME/trusted-folders`.
fn trusted_file(hew_home: &Path) -> PathBuf {
    hew_home.join("trusted-folders")
}

pub fn is_trusted(hew_home: &Path, workspace: &Path) -> bool {
    std::fs::read_to_string(trusted_file(hew_home))
        .map(|text| text.lines().any(|line| Path::new(line) == workspace))
        .unwrap_or(false)
}

/// Remembers that the person trusts `workspace`'s own configuration.
pub fn trust(hew_home: &Path, workspace: &Path) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(hew_home)?;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(trusted_file(hew_home))?;
    writeln!(file, "{}", workspace.display())
}

/// Strips what a repository must not decide for the person running hew:
/// where requests (and so keys) go, and anything that widens permissions.
fn untrusted(mut project: FileConfig) -> (FileConfig, Vec<String>) {
    let mut skipped = Vec::new();
    for (name, entry) in &mut project.providers {
        if entry.base_url.take().is_some() {
            skipped.push(format!("providers.{name}.base_url"));
        }
        if entry.api_key_env.take().is_some() {
            skipped.push(format!("providers.{name}.api_key_env"));
        }
    }
    if project.approval.mode.is_some_and(|m| m != ApprovalMode::ReadOnly && m != ApprovalMode::Ask) {
        project.approval.mode = None;
        skipped.push("approval.mode".into());
    }
    if project.approval.allow.take().is_some() {
        skipped.push("approval.allow".into());
    }
    if project.sandbox.mode == Some(SandboxMode::Off) {
        project.sandbox.mode = None;
        skipped.push("sandbox.mode".into());
    }
    if project.sandbox.writable.take().is_some() {
        skipped.push("sandbox.writable".into());
    }
    (project, skipped)
}

/// Merges file layers (later wins), then environment, then flags.
pub fn resolve(
    layers: &[FileConfig],
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    workspace: PathBuf,
    hew_home: PathBuf,
) -> Result<Config, ConfigError> {
    let env_var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let mut merged = FileConfig::default();
    for layer in layers {
        merge(&mut merged, layer.clone());
    }

    let provider_name = overrides
        .provider
        .clone()
        .or_else(|| env_var("HEW_PROVIDER"))
        .or(merged.provider.clone())
        .unwrap_or_else(|| "openai".into());
    let entry = merged.providers.get(&provider_name).cloned().unwrap_or_default();
    let builtin = builtin_kind(&provider_name);
    let kind = match (entry.kind, builtin) {
        (Some(kind), _) | (None, Some(kind)) => kind,
        (None, None) if merged.providers.contains_key(&provider_name) => {
            return Err(ConfigError::Invalid(format!(
                "[providers.{provider_name}] needs kind = \"openai\" or \"anthropic\""
            )));
        }
        (None, None) => {
            let mut known: Vec<String> = ["openai", "anthropic"].map(String::from).into();
            known.extend(merged.providers.keys().filter(|k| builtin_kind(k).is_none()).cloned());
            return Err(ConfigError::UnknownProvider { name: provider_name, known: known.join(", ") });
        }
    };
    let (default_url, default_key_env, default_model) = match kind {
        WireKind::Openai => ("https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4.1"),
        WireKind::Anthropic => ("https://api.anthropic.com", "ANTHROPIC_API_KEY", "claude-sonnet-4-5"),
    };
    // OPENAI_BASE_URL and ANTHROPIC_BASE_URL speak for the built-in entries only.
    let env_url = match builtin {
        Some(WireKind::Openai) => env_var("OPENAI_BASE_URL"),
        Some(WireKind::Anthropic) => env_var("ANTHROPIC_BASE_URL"),
        None => None,
    };
    let base_url = overrides
        .base_url
        .clone()
        .or(env_url)
        .or(entry.base_url.clone())
        .or_else(|| builtin.map(|_| default_url.to_owned()))
        .ok_or_else(|| ConfigError::Invalid(format!("[providers.{provider_name}] needs a base_url")))?;
    let base_url = check_url(&base_url)?;
    let api_key_env = entry.api_key_env.clone().unwrap_or_else(|| default_key_env.to_owned());
    let api_key = env_var(&api_key_env);
    if api_key.is_none() && !is_loopback(&base_url) {
        return Err(ConfigError::MissingKey { provider: provider_name, var: api_key_env });
    }
    let model = overrides
        .model
        .clone()
        .or_else(|| env_var("HEW_MODEL"))
        .or(merged.model.clone())
        .or(entry.model.clone())
        .unwrap_or_else(|| default_model.to_owned());
    if model.trim().is_empty() {
        return Err(ConfigError::Invalid("the model name is empty".into()));
    }

    let max_turns = overrides.max_turns.or(merged.max_turns).unwrap_or(50);
    if max_turns == 0 {
        return Err(ConfigError::Invalid("max_turns must be at least 1".into()));
    }
    let max_cost = overrides.max_cost.or(merged.max_cost);
    if let Some(cost) = max_cost
        && !(cost.is_finite() && cost > 0.0)
    {
        return Err(ConfigError::Invalid(format!("max_cost must be a positive number of dollars, not {cost}")));
    }
    let models = models::table(&merged.models)?;
    let network = &merged.network;
    let provider = ProviderSettings {
        name: provider_name,
        kind,
        base_url,
        api_key,
        model,
        max_retries: network.max_retries.unwrap_or(4).min(10),
        connect_timeout: Duration::from_secs(network.connect_timeout_s.unwrap_or(10).max(1)),
        idle_timeout: Duration::from_secs(network.idle_timeout_s.unwrap_or(300).max(1)),
    };
    let sessions_dir = crate::session::store::sessions_dir(env).unwrap_or_else(|| hew_home.join("sessions"));
    Ok(Config {
        workspace,
        sessions_dir,
        hew_home,
        provider,
        api_key_env,
        approval: overrides
            .approval
            .or(merged.approval.mode)
            .or(overrides.default_approval)
            .unwrap_or(ApprovalMode::Ask),
        allow: merged.approval.allow.unwrap_or_default(),
        deny: merged.approval.deny.unwrap_or_default(),
        sandbox: merged.sandbox.mode.unwrap_or(SandboxMode::On),
        sandbox_writable: merged
            .sandbox
            .writable
            .unwrap_or_default()
            .iter()
            .map(|p| match (p.strip_prefix("~/"), env_var("HOME")) {
                (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
                _ => PathBuf::from(p),
            })
            .collect(),
        max_turns,
        max_cost,
        models,
        notices: Vec::new(),
        untrusted: Vec::new(),
    })
}

fn builtin_kind(name: &str) -> Option<WireKind> {
    match name {
        "openai" => Some(WireKind::Openai),
        "anthropic" => Some(WireKind::Anthropic),
        _ => None,
    }
}

/// Later layers win field by field; lists replace rather than append, except
/// `deny`, which only ever grows (a project may forbid more, never less).
fn merge(into: &mut FileConfig, from: FileConfig) {
    macro_rules! take {
        ($($field:ident).+) => {
            if from.$($field).+.is_some() { into.$($field).+ = from.$($field).+; }
        };
    }
    take!(provider);
    take!(model);
    take!(max_turns);
    take!(max_cost);
    take!(approval.mode);
    take!(approval.allow);
    take!(sandbox.mode);
    take!(sandbox.writable);
    take!(network.max_retries);
    take!(network.connect_timeout_s);
    take!(network.idle_timeout_s);
    if let Some(deny) = from.approval.deny {
        into.approval.deny.get_or_insert_with(Vec::new).extend(deny);
    }
    for (name, entry) in from.providers {
        let slot = into.providers.entry(name).or_default();
        slot.kind = entry.kind.or(slot.kind);
        slot.base_url = entry.base_url.or(slot.base_url.take());
        slot.api_key_env = entry.api_key_env.or(slot.api_key_env.take());
        slot.model = entry.model.or(slot.model.take());
    }
    for (name, entry) in from.models {
        let slot = into.models.entry(name).or_default();
        slot.context_window = entry.context_window.or(slot.context_window);
        slot.input_price = entry.input_price.or(slot.input_price);
        slot.output_price = entry.output_price.or(slot.output_price);
    }
}

fn check_url(url: &str) -> Result<String, ConfigError> {
    let parsed = reqwest::Url::parse(url.trim())
        .map_err(|e| ConfigError::Invalid(format!("base_url `{url}` is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(ConfigError::Invalid(format!("base_url `{url}` must be an http:// or https:// address")));
    }
    Ok(url.trim().trim_end_matches('/').to_owned())
}

/// Local servers (Ollama, llama.cpp, LM Studio) need no key.
pub fn is_loopback(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else { return false };
    let Some(host) = parsed.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Reads a config file on its own, for checks such as the example file test.
pub fn parse_file(path: &Path, text: &str) -> Result<FileConfig, ConfigError> {
    file::parse(path, text)
}

#[cfg(test)]
mod tests;
