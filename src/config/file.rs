//! The shape of one config file, and reading it with errors that name the
//! file, line and key. Every field is optional: a file only says what it
//! changes, and layers merge field by field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{ApprovalMode, ConfigError, SandboxMode};
use crate::provider::WireKind;

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub max_turns: Option<u32>,
    pub max_cost: Option<f64>,
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderEntry>,
    #[serde(default)]
    pub models: BTreeMap<String, ModelEntry>,
    #[serde(default)]
    pub approval: ApprovalSection,
    #[serde(default)]
    pub sandbox: SandboxSection,
    #[serde(default)]
    pub network: NetworkSection,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderEntry {
    pub kind: Option<WireKind>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub model: Option<String>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    pub context_window: Option<u64>,
    pub input_price: Option<f64>,
    pub output_price: Option<f64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalSection {
    pub mode: Option<ApprovalMode>,
    pub allow: Option<Vec<String>>,
    pub deny: Option<Vec<String>>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSection {
    pub mode: Option<SandboxMode>,
    /// More folders commands may write to (`~/` is the home folder).
    pub writable: Option<Vec<String>>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    pub max_retries: Option<u32>,
    pub connect_timeout_s: Option<u64>,
    pub idle_timeout_s: Option<u64>,
}

/// Reads `path` if it exists. A missing file is no error; anything else
/// wrong with it is, naming the file, line and key.
pub fn read(path: &Path) -> Result<Option<FileConfig>, ConfigError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(file_error(path, None, None, format!("cannot read it: {e}"))),
    };
    let text = String::from_utf8(text).map_err(|_| file_error(path, None, None, "it is not UTF-8 text".into()))?;
    parse(path, &text).map(Some)
}

pub fn parse(path: &Path, text: &str) -> Result<FileConfig, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let (line, key) = match e.span() {
            Some(span) => locate(text, span.start),
            None => (None, None),
        };
        file_error(path, line, key, e.message().trim().to_owned())
    })
}

fn file_error(path: &Path, line: Option<usize>, key: Option<String>, message: String) -> ConfigError {
    ConfigError::File { path: PathBuf::from(path), line, key, message }
}

/// The 1-based line of byte `offset` and the dotted key written there
/// (`approval.mode`), found from the line's `key =` and the table header above it.
fn locate(text: &str, offset: usize) -> (Option<usize>, Option<String>) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line_no = before.matches('\n').count() + 1;
    let lines: Vec<&str> = text.lines().collect();
    let Some(line) = lines.get(line_no - 1) else { return (Some(line_no), None) };
    let line = line.trim();
    let bare = |s: &str| s.trim().trim_matches('"').trim_matches('\'').to_owned();
    if line.starts_with('[') {
        let header = line.trim_start_matches('[').split(']').next().unwrap_or("");
        return (Some(line_no), Some(header.trim().to_owned()));
    }
    let Some((key, _)) = line.split_once('=') else { return (Some(line_no), None) };
    let table = lines[..line_no - 1]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_start_matches('[').split(']').next().unwrap_or("").trim().to_owned());
    let key = bare(key);
    let key = match table {
        Some(table) if !table.is_empty() => format!("{table}.{key}"),
        _ => key,
    };
    (Some(line_no), Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_line(text: &str) -> String {
        parse(Path::new("/h/config.toml"), text).unwrap_err().to_string()
    }

    #[test]
    fn unknown_keys_name_file_line_and_key() {
        let msg = error_line("provider = \"openai\"\n\n[approval]\nmod = \"ask\"\n");
        assert!(msg.starts_with("/h/config.toml:4: approval.mod: unknown field `mod`"), "{msg}");
    }

    #[test]
    fn wrong_types_name_the_key() {
        let msg = error_line("max_turns = \"many\"\n");
        assert!(msg.starts_with("/h/config.toml:1: max_turns: invalid type: string \"many\""), "{msg}");
        let msg = error_line("[models.\"gpt-x\"]\ncontext_window = -5\n");
        assert!(msg.starts_with("/h/config.toml:2: models.\"gpt-x\".context_window:"), "{msg}");
    }

    #[test]
    fn unknown_approval_mode_lists_the_valid_ones() {
        let msg = error_line("[approval]\nmode = \"yolo\"\n");
        assert!(msg.contains("approval.mode") && msg.contains("yolo") && msg.contains("full-auto"), "{msg}");
    }

    #[test]
    fn malformed_toml_is_one_line_with_position() {
        let msg = error_line("provider = \n");
        assert!(msg.starts_with("/h/config.toml:1"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
}
