//! What file tools share: the record of what the model has read (so a
//! person's later edits are never overwritten), atomic writes that keep
//! permissions, and the unified diff shown to both the model and the person.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use super::path::WorkPath;

/// How a file looked when the model last read or wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub len: u64,
    pub mtime: Option<SystemTime>,
    /// `None` for files too big to hash on every read; size and time decide.
    pub hash: Option<u64>,
}

impl Stamp {
    pub fn of(bytes: &[u8], meta: &std::fs::Metadata) -> Self {
        Stamp { len: meta.len(), mtime: meta.modified().ok(), hash: Some(hash(bytes)) }
    }

    /// Whether `current` (with its metadata) is still what was seen.
    fn matches(&self, current: &[u8], meta: Option<&std::fs::Metadata>) -> bool {
        if self.len != current.len() as u64 {
            return false;
        }
        match self.hash {
            Some(h) => h == hash(current),
            None => meta.and_then(|m| m.modified().ok()) == self.mtime && self.mtime.is_some(),
        }
    }
}

pub fn hash(bytes: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Files the model has seen this session, by canonical path.
#[derive(Debug, Default)]
pub struct ReadLedger {
    seen: Mutex<HashMap<PathBuf, Stamp>>,
}

impl ReadLedger {
    pub fn record(&self, path: &Path, stamp: Stamp) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(path.to_path_buf(), stamp);
        }
    }

    pub fn get(&self, path: &Path) -> Option<Stamp> {
        self.seen.lock().ok()?.get(path).copied()
    }

    /// Refuses a change to an existing file the model has not read, or that
    /// changed on disk since it did. `current` is the file as it is now.
    pub fn check_fresh(&self, path: &WorkPath, current: &[u8]) -> Result<(), String> {
        match self.get(&path.abs) {
            None => Err(format!(
                "{} exists and has not been read in this session; read it with read_file first, then change it",
                path.shown
            )),
            Some(stamp) if !stamp.matches(current, std::fs::metadata(&path.abs).ok().as_ref()) => Err(format!(
                "{} changed on disk since you read it (someone else edited it); read it again and redo your change on the new content",
                path.shown
            )),
            Some(_) => Ok(()),
        }
    }
}

/// A proposed change to one file: the preview a person approves, and what
/// is written when they do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileChange {
    #[serde(skip)]
    pub abs: PathBuf,
    pub path: String,
    /// `None` when the file does not exist yet.
    #[serde(skip)]
    pub old: Option<String>,
    #[serde(skip)]
    pub new: String,
    pub diff: String,
    pub added: usize,
    pub removed: usize,
}

impl FileChange {
    pub fn new(path: &WorkPath, old: Option<String>, new: String) -> Self {
        let diff = unified_diff(&path.shown, old.as_deref().unwrap_or(""), &new);
        FileChange {
            abs: path.abs.clone(),
            path: path.shown.clone(),
            old,
            new,
            diff: diff.text,
            added: diff.added,
            removed: diff.removed,
        }
    }

    /// `+3 −1`, or `new, 12 lines`.
    pub fn summary(&self) -> String {
        match self.old {
            None => format!("new, {}", lines(line_count(&self.new))),
            Some(_) => format!("+{} −{}", self.added, self.removed),
        }
    }
}

pub fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// `1 line`, `3 lines`.
pub fn lines(n: usize) -> String {
    if n == 1 { "1 line".to_owned() } else { format!("{n} lines") }
}

pub struct Diff {
    pub text: String,
    pub added: usize,
    pub removed: usize,
}

/// How long a diff may search before settling for a coarser answer.
const DIFF_DEADLINE: Duration = Duration::from_millis(30);
/// The longest diff sent to the model; the transcript keeps the file itself.
pub const MAX_DIFF_CHARS: usize = 20_000;

/// A unified diff with 3 lines of context, bounded in time and size.
pub fn unified_diff(name: &str, old: &str, new: &str) -> Diff {
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .deadline(Instant::now() + DIFF_DEADLINE)
        .diff_lines(old, new);
    let (mut added, mut removed) = (0, 0);
    for op in diff.ops() {
        for change in diff.iter_changes(op) {
            match change.tag() {
                similar::ChangeTag::Insert => added += 1,
                similar::ChangeTag::Delete => removed += 1,
                similar::ChangeTag::Equal => {}
            }
        }
    }
    let mut text = diff.unified_diff().context_radius(3).header(&format!("a/{name}"), &format!("b/{name}")).to_string();
    if text.len() > MAX_DIFF_CHARS {
        let cut = floor_char_boundary(&text, MAX_DIFF_CHARS);
        let rest = text[cut..].lines().count();
        text.truncate(cut);
        text.push_str(&format!("\n[diff cut: {rest} more lines]\n"));
    }
    Diff { text, added, removed }
}

pub fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Writes `content` to `path` through a temporary file and a rename, so a
/// crash leaves the old file or the new one, never half of either. Creates
/// missing parent folders and keeps an existing file's permissions.
pub fn atomic_write(path: &Path, content: &[u8]) -> std::io::Result<std::fs::Metadata> {
    let parent = path.parent().ok_or_else(|| std::io::Error::other("the path has no parent folder"))?;
    std::fs::create_dir_all(parent)?;
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = parent.join(format!(".{name}.hew-{}-{}", std::process::id(), unique()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(content)?;
        file.sync_all()?;
        if let Some(permissions) = permissions {
            std::fs::set_permissions(&tmp, permissions)?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result?;
    std::fs::metadata(path)
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Writes an approved change, unless the file moved under us since the
/// preview was made; then records the result as read, since the model knows it.
pub fn apply(change: &FileChange, ledger: &ReadLedger) -> Result<(), String> {
    let current = match std::fs::read(&change.abs) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", change.path)),
    };
    if current.as_deref() != change.old.as_deref().map(str::as_bytes) {
        return Err(format!(
            "{} changed on disk while the change waited for approval; nothing was written. Read it again and redo the change",
            change.path
        ));
    }
    let meta =
        atomic_write(&change.abs, change.new.as_bytes()).map_err(|e| format!("cannot write {}: {e}", change.path))?;
    ledger.record(&change.abs, Stamp::of(change.new.as_bytes(), &meta));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn diff_counts_and_formats() {
        let d = unified_diff("a.txt", "one\ntwo\nthree\n", "one\n2\nthree\nfour\n");
        assert_eq!((d.added, d.removed), (2, 1));
        assert!(
            d.text.starts_with("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four\n"),
            "{}",
            d.text
        );
    }

    #[test]
    fn huge_diffs_are_cut_on_a_char_boundary() {
        let new: String = (0..5000).map(|i| format!("é line {i}\n")).collect();
        let d = unified_diff("x", "", &new);
        assert!(d.text.len() < MAX_DIFF_CHARS + 100);
        assert!(d.text.ends_with("more lines]\n"));
        assert_eq!(d.added, 5000);
    }

    #[test]
    fn atomic_write_keeps_permissions_and_creates_folders() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/run.sh");
        atomic_write(&path, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        atomic_write(&path, b"#!/bin/sh\necho hi\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "#!/bin/sh\necho hi\n");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o751);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("a/b")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp files are left behind");
    }

    #[test]
    fn apply_refuses_when_the_file_moved_since_the_preview() {
        let dir = tempfile::tempdir().unwrap();
        let abs = dir.path().join("f.txt");
        std::fs::write(&abs, "old\n").unwrap();
        let wp = WorkPath { abs: abs.clone(), shown: "f.txt".into() };
        let change = FileChange::new(&wp, Some("old\n".into()), "new\n".into());
        std::fs::write(&abs, "a person's edit\n").unwrap();
        let ledger = ReadLedger::default();
        assert!(apply(&change, &ledger).unwrap_err().contains("changed on disk"));
        assert_eq!(std::fs::read_to_string(&abs).unwrap(), "a person's edit\n");
        std::fs::write(&abs, "old\n").unwrap();
        apply(&change, &ledger).unwrap();
        assert_eq!(std::fs::read_to_string(&abs).unwrap(), "new\n");
        assert!(ledger.check_fresh(&wp, b"new\n").is_ok());
    }
}
