//! Undo without git: before hew changes a file, the file's prior content
//! (or its absence) is kept here, grouped by the turn that changed it, and
//! written beside the session transcript (`<id>.undo`, one JSON line per
//! change) so a resumed session can still undo. Undo restores a turn's
//! files, but only where nothing else touched them since: a person's later
//! edits are never clobbered.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::files::hash;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub turn: usize,
    pub abs: PathBuf,
    pub path: String,
    /// The content before hew's change; `None` when hew created the file.
    pub before: Option<String>,
    /// What hew wrote, by hash and length (the file itself holds it).
    pub after_hash: u64,
    pub after_len: usize,
}

impl Checkpoint {
    pub fn new(turn: usize, abs: PathBuf, path: String, before: Option<String>, after: &str) -> Self {
        Checkpoint { turn, abs, path, before, after_hash: hash(after.as_bytes()), after_len: after.len() }
    }
}

/// One line of the store: a change, or "turns from N on were undone".
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Line {
    Change(Checkpoint),
    Dropped { dropped_since: usize },
}

/// One file to put back.
#[derive(Debug, Clone, PartialEq)]
pub struct Restore {
    pub abs: PathBuf,
    pub path: String,
    /// What the file holds now (what hew last wrote).
    pub current: String,
    /// What it goes back to; `None` deletes the file.
    pub before: Option<String>,
}

#[derive(Debug, Default)]
pub struct Checkpoints {
    changes: Mutex<Vec<Checkpoint>>,
    file: Mutex<Option<PathBuf>>,
}

impl Checkpoints {
    /// Keeps checkpoints in `path` from now on, first loading what an
    /// earlier run of the same session kept there.
    pub fn attach(&self, path: PathBuf) {
        let mut loaded = Vec::new();
        if let Ok(file) = std::fs::File::open(&path) {
            for line in std::io::BufReader::new(file).lines().map_while(Result::ok) {
                match serde_json::from_str::<Line>(&line) {
                    Ok(Line::Change(c)) => loaded.push(c),
                    Ok(Line::Dropped { dropped_since }) => loaded.retain(|c: &Checkpoint| c.turn < dropped_since),
                    Err(_) => {} // a torn last line: that change was not made
                }
            }
        }
        if let Ok(mut changes) = self.changes.lock() {
            *changes = loaded;
        }
        if let Ok(mut file) = self.file.lock() {
            *file = Some(path);
        }
    }

    fn persist(&self, line: &Line) {
        let Some(path) = self.file.lock().ok().and_then(|f| f.clone()) else { return };
        let result = (|| -> std::io::Result<()> {
            use std::os::unix::fs::OpenOptionsExt;
            let mut file = std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(&path)?;
            let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
            text.push('\n');
            file.write_all(text.as_bytes())
        })();
        if let Err(e) = result {
            tracing::warn!("cannot keep the undo checkpoint in {}: {e}", path.display());
        }
    }

    pub fn keep(&self, checkpoint: Checkpoint) {
        self.persist(&Line::Change(checkpoint.clone()));
        if let Ok(mut changes) = self.changes.lock() {
            changes.push(checkpoint);
        }
    }

    /// The files the latest turn with changes touched, each back to its
    /// state before that turn. Refuses (naming the file) when one changed
    /// on disk after hew wrote it.
    pub fn plan_undo(&self) -> Result<Option<(usize, Vec<Restore>)>, String> {
        let turn = match self.changes.lock() {
            Ok(changes) => changes.last().map(|c| c.turn),
            Err(_) => return Err("the checkpoint store is unavailable".into()),
        };
        let Some(turn) = turn else { return Ok(None) };
        Ok(Some((turn, self.plan_since(turn)?)))
    }

    /// Every file changed in turn `first` or later, back to its state
    /// before `first`.
    pub fn plan_since(&self, first: usize) -> Result<Vec<Restore>, String> {
        let changes = self.changes.lock().map_err(|_| "the checkpoint store is unavailable".to_owned())?;
        // Per file: the earliest `before`, and the latest write to check against.
        let mut files: Vec<(Checkpoint, (u64, usize))> = Vec::new();
        for change in changes.iter().filter(|c| c.turn >= first) {
            match files.iter_mut().find(|(c, _)| c.abs == change.abs) {
                Some((_, last)) => *last = (change.after_hash, change.after_len),
                None => files.push((change.clone(), (change.after_hash, change.after_len))),
            }
        }
        let mut restores = Vec::new();
        for (first_change, (after_hash, after_len)) in files {
            let now = std::fs::read(&first_change.abs).ok();
            let unchanged = now.as_ref().is_some_and(|bytes| bytes.len() == after_len && hash(bytes) == after_hash);
            let current = now.and_then(|bytes| String::from_utf8(bytes).ok());
            match current {
                Some(current) if unchanged => restores.push(Restore {
                    abs: first_change.abs,
                    path: first_change.path,
                    current,
                    before: first_change.before,
                }),
                _ => {
                    return Err(format!(
                        "{} changed outside hew after the turn that edited it, so nothing was undone (your edits are kept)",
                        first_change.path
                    ));
                }
            }
        }
        Ok(restores)
    }

    /// Forgets the changes of `turn` and later ones once they are undone.
    pub fn drop_since(&self, turn: usize) {
        self.persist(&Line::Dropped { dropped_since: turn });
        if let Ok(mut changes) = self.changes.lock() {
            changes.retain(|c| c.turn < turn);
        }
    }
}

/// Where a session keeps its undo checkpoints: beside its transcript.
pub fn store_path(transcript: &Path) -> PathBuf {
    transcript.with_extension("undo")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep(store: &Checkpoints, turn: usize, abs: &std::path::Path, before: Option<&str>, after: &str) {
        std::fs::write(abs, after).unwrap();
        let path = abs.file_name().unwrap().to_string_lossy().into_owned();
        store.keep(Checkpoint::new(turn, abs.to_path_buf(), path, before.map(str::to_owned), after));
    }

    #[test]
    fn undo_plans_the_latest_turn_back_to_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        let store = Checkpoints::default();
        keep(&store, 1, &a, None, "one\n");
        keep(&store, 2, &a, Some("one\n"), "two\n");
        keep(&store, 2, &a, Some("two\n"), "three\n");
        keep(&store, 2, &b, None, "new\n");
        let (turn, restores) = store.plan_undo().unwrap().unwrap();
        assert_eq!(turn, 2);
        assert_eq!(restores.len(), 2);
        assert_eq!((restores[0].current.as_str(), restores[0].before.as_deref()), ("three\n", Some("one\n")));
        assert_eq!(restores[1].before, None);
        // Carry the undo out, as the agent does, and the turn before comes next.
        std::fs::write(&a, "one\n").unwrap();
        std::fs::remove_file(&b).unwrap();
        store.drop_since(2);
        assert_eq!(store.plan_undo().unwrap().unwrap().0, 1);
    }

    #[test]
    fn outside_changes_refuse_the_undo() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let store = Checkpoints::default();
        keep(&store, 1, &a, Some("orig\n"), "hew's\n");
        std::fs::write(&a, "a person's edit\n").unwrap();
        let err = store.plan_undo().unwrap_err();
        assert!(err.contains("a.txt changed outside hew"), "{err}");
        assert_eq!(Checkpoints::default().plan_undo(), Ok(None));
    }

    #[test]
    fn checkpoints_survive_into_a_resumed_run() {
        let dir = tempfile::tempdir().unwrap();
        let store_file = store_path(&dir.path().join("s1.jsonl"));
        let a = dir.path().join("a.txt");
        let first = Checkpoints::default();
        first.attach(store_file.clone());
        keep(&first, 1, &a, Some("orig\n"), "v1\n");
        keep(&first, 2, &a, Some("v1\n"), "v2\n");
        std::fs::write(&a, "v1\n").unwrap();
        first.drop_since(2);
        // A later process of the same session.
        let second = Checkpoints::default();
        second.attach(store_file);
        let (turn, restores) = second.plan_undo().unwrap().unwrap();
        assert_eq!(turn, 1);
        assert_eq!(restores[0].before.as_deref(), Some("orig\n"));
    }
}
