//! Where sessions live and how they are written and read: one file per
//! session, `<id>.jsonl`, mode 0600 in a 0700 folder; appended and flushed
//! record by record, so a crash loses at most the line being written.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::record::{Meta, Record};

#[derive(Debug, Error, PartialEq)]
pub enum SessionError {
    #[error("`{0}` is not a session id (ids are letters, digits and dashes, such as 20261129T190354-4f2a)")]
    BadId(String),
    #[error("no session matches `{0}`; `hew sessions --all` lists them")]
    Unknown(String),
    #[error("`{prefix}` matches {count} sessions; give more of the id")]
    Ambiguous { prefix: String, count: usize },
    #[error("there is no saved session for {0} yet")]
    NoneYet(String),
    #[error("cannot read the session {path}: {message}")]
    Io { path: String, message: String },
    #[error("{path} is not a hew session: {message}")]
    Corrupt { path: String, message: String },
}

/// The sessions folder: `$HEW_HOME/sessions`, else `~/.local/share/hew/sessions`.
pub fn sessions_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(home) = env("HEW_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(home).join("sessions"));
    }
    directories::BaseDirs::new().map(|d| d.data_dir().join("hew").join("sessions"))
}

/// A new id: UTC time (sortable) and a random suffix.
pub fn new_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(now.as_nanos());
    hasher.write_u32(std::process::id());
    format!("{}-{:06x}", timestamp(now.as_secs(), true), hasher.finish() & 0xff_ffff)
}

/// `20261129T190354` (compact) or `2026-11-29T19:03:54Z`.
pub fn timestamp(secs: u64, compact: bool) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    if compact {
        format!("{year:04}{month:02}{day:02}T{h:02}{m:02}{s:02}")
    } else {
        format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
    }
}

pub fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Appends records to one session file, creating it (and writing the meta
/// line) with the first record, so a session without a message leaves nothing.
#[derive(Debug)]
pub struct Writer {
    pub id: String,
    pub path: PathBuf,
    meta: Option<Meta>,
    file: Option<File>,
}

impl Writer {
    pub fn new(dir: &Path, meta: Meta) -> Self {
        Writer { id: meta.id.clone(), path: dir.join(format!("{}.jsonl", meta.id)), meta: Some(meta), file: None }
    }

    /// Continues an existing session file.
    pub fn resume(path: PathBuf, id: String) -> Self {
        Writer { id, path, meta: None, file: None }
    }

    pub fn started(&self) -> bool {
        self.file.is_some() || self.meta.is_none()
    }

    pub fn append(&mut self, record: &Record) -> std::io::Result<()> {
        if self.file.is_none() {
            let dir = self.path.parent().unwrap_or(Path::new("."));
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            let mut file = OpenOptions::new().create(true).append(true).mode(0o600).open(&self.path)?;
            if let Some(meta) = self.meta.take() {
                write_line(&mut file, &Record::Meta(meta))?;
            }
            self.file = Some(file);
        }
        match &mut self.file {
            Some(file) => write_line(file, record),
            None => Ok(()),
        }
    }
}

fn write_line(file: &mut File, record: &Record) -> std::io::Result<()> {
    let mut line = serde_json::to_string(record).map_err(std::io::Error::other)?;
    line.push('\n');
    // One write per line: a kill between records leaves whole lines only.
    file.write_all(line.as_bytes())?;
    file.flush()
}

/// A loaded session: its records, and what had to be skipped.
#[derive(Debug)]
pub struct Loaded {
    pub meta: Meta,
    pub records: Vec<Record>,
    pub warnings: Vec<String>,
}

pub fn load(path: &Path) -> Result<Loaded, SessionError> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|e| SessionError::Io { path: shown.clone(), message: e.to_string() })?;
    let mut reader = BufReader::new(file);
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    let mut meta = None;
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .map_err(|e| SessionError::Io { path: shown.clone(), message: e.to_string() })?;
        if n == 0 {
            break;
        }
        number += 1;
        let complete = line.ends_with('\n');
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(&line) {
            Ok(Record::Meta(m)) if meta.is_none() => meta = Some(m),
            Ok(Record::Meta(_)) => warnings.push(format!("line {number}: a second meta record was ignored")),
            Ok(record) => records.push(record),
            Err(_) if !complete => warnings
                .push(format!("line {number}: the last line was cut off (hew stopped while writing it); skipped")),
            Err(e) => {
                // A type this version does not know is a later addition, not damage.
                let known = serde_json::from_str::<serde_json::Value>(&line).is_ok();
                if !known {
                    warnings.push(format!("line {number}: not valid JSON ({e}); skipped"));
                }
            }
        }
    }
    let meta = meta.ok_or_else(|| SessionError::Corrupt { path: shown, message: "it has no meta line".into() })?;
    Ok(Loaded { meta, records, warnings })
}

/// Finds a session by id, unique id prefix, or `last` (the newest for
/// `workspace`, else the newest of all).
pub fn resolve(dir: &Path, wanted: &str, workspace: &Path) -> Result<PathBuf, SessionError> {
    if wanted == "last" {
        let all = list(dir);
        let here = workspace.display().to_string();
        return all
            .iter()
            .find(|s| s.meta.cwd == here)
            .or(all.first())
            .map(|s| s.path.clone())
            .ok_or(SessionError::NoneYet(here));
    }
    if !valid_id(wanted) {
        return Err(SessionError::BadId(wanted.to_owned()));
    }
    let exact = dir.join(format!("{wanted}.jsonl"));
    if exact.is_file() {
        return Ok(exact);
    }
    let matches: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| p.file_stem().and_then(|s| s.to_str()).is_some_and(|s| s.starts_with(wanted)))
        .collect();
    match matches.len() {
        0 => Err(SessionError::Unknown(wanted.to_owned())),
        1 => Ok(matches.into_iter().next().unwrap_or_default()),
        count => Err(SessionError::Ambiguous { prefix: wanted.to_owned(), count }),
    }
}

/// One line of `hew sessions`.
#[derive(Debug, Clone)]
pub struct Summary {
    pub path: PathBuf,
    pub meta: Meta,
    pub turns: usize,
    pub first_prompt: String,
    pub usage: crate::provider::Usage,
}

/// Every session in `dir`, newest first. Reads each file once, parsing only
/// the records a summary needs.
pub fn list(dir: &Path) -> Vec<Summary> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let Ok(file) = File::open(&path) else { continue };
        let mut meta = None;
        let mut turns = 0;
        let mut first_prompt = String::new();
        let mut usage = crate::provider::Usage::default();
        for line in BufReader::new(file).lines().map_while(Result::ok) {
            let wanted =
                ["{\"type\":\"meta\"", "{\"type\":\"user\"", "{\"type\":\"usage\""].iter().any(|p| line.starts_with(p));
            if !wanted {
                continue;
            }
            match serde_json::from_str::<Record>(&line) {
                Ok(Record::Meta(m)) => meta = Some(m),
                Ok(Record::User { text, .. }) => {
                    turns += 1;
                    if first_prompt.is_empty() {
                        first_prompt = text;
                    }
                }
                Ok(Record::Usage { usage: u, .. }) => usage.add(u),
                _ => {}
            }
        }
        if let Some(meta) = meta {
            out.push(Summary { path, meta, turns, first_prompt, usage });
        }
    }
    out.sort_by(|a, b| b.meta.id.cmp(&a.meta.id));
    out
}
