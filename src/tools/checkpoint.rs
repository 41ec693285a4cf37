//! Undo without git: before hew changes a file, the file's prior content
//! (or its absence) is kept here, grouped by the turn that changed it.
//! Undo restores a turn's files, but only where nothing else touched them
//! since: a person's later edits are never clobbered.

use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    pub turn: usize,
    pub abs: PathBuf,
    pub path: String,
    /// The content before hew's change; `None` when hew created the file.
    pub before: Option<String>,
    /// What hew wrote.
    pub after: String,
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
}

impl Checkpoints {
    pub fn keep(&self, checkpoint: Checkpoint) {
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
        let mut restores: Vec<Restore> = Vec::new();
        for change in changes.iter().filter(|c| c.turn >= first) {
            match restores.iter_mut().find(|r| r.abs == change.abs) {
                // A later change in the same turn: the file now holds its `after`.
                Some(existing) => existing.current = change.after.clone(),
                None => restores.push(Restore {
                    abs: change.abs.clone(),
                    path: change.path.clone(),
                    current: change.after.clone(),
                    before: change.before.clone(),
                }),
            }
        }
        for restore in &restores {
            let now = std::fs::read(&restore.abs).ok();
            if now.as_deref() != Some(restore.current.as_bytes()) {
                return Err(format!(
                    "{} changed outside hew after the turn that edited it, so nothing was undone (your edits are kept)",
                    restore.path
                ));
            }
        }
        Ok(restores)
    }

    /// Forgets the changes of `turn` and later ones once they are undone.
    pub fn drop_since(&self, turn: usize) {
        if let Ok(mut changes) = self.changes.lock() {
            changes.retain(|c| c.turn < turn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep(store: &Checkpoints, turn: usize, abs: &std::path::Path, before: Option<&str>, after: &str) {
        std::fs::write(abs, after).unwrap();
        store.keep(Checkpoint {
            turn,
            abs: abs.to_path_buf(),
            path: abs.file_name().unwrap().to_string_lossy().into_owned(),
            before: before.map(str::to_owned),
            after: after.into(),
        });
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
}
