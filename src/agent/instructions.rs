//! Project instructions: `AGENTS.md` (or `CLAUDE.md` where a folder has no
//! AGENTS.md) from the git root down to the workspace, after the user's own
//! `$HEW_HOME/AGENTS.md`. They go into the system prompt, capped in size;
//! the front ends list the files so the user knows what is active.

use std::path::{Path, PathBuf};

/// Most text taken from one file, and from all of them.
const FILE_CAP: usize = 16 * 1024;
const TOTAL_CAP: usize = 48 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct Instructions {
    /// The files used, in the order they appear in the prompt.
    pub files: Vec<PathBuf>,
    pub text: String,
}

pub fn load(workspace: &Path, hew_home: &Path) -> Instructions {
    let mut candidates = vec![hew_home.join("AGENTS.md")];
    for dir in folders_from_root(workspace) {
        let agents = dir.join("AGENTS.md");
        candidates.push(if agents.is_file() { agents } else { dir.join("CLAUDE.md") });
    }
    let mut files = Vec::new();
    let mut text = String::new();
    for path in candidates {
        let Ok(content) = std::fs::read_to_string(&path) else { continue };
        if content.trim().is_empty() {
            continue;
        }
        let room = TOTAL_CAP.saturating_sub(text.len());
        if room < 200 {
            break;
        }
        let cap = FILE_CAP.min(room);
        let mut body = content.trim().to_owned();
        if body.len() > cap {
            let cut = crate::tools::files::floor_char_boundary(&body, cap);
            body.truncate(cut);
            body.push_str("\n[... cut: the file is longer than hew takes into the prompt]");
        }
        text.push_str(&format!("## {}\n\n{body}\n\n", path.display()));
        files.push(path);
    }
    Instructions { files, text }
}

/// The git root (or the workspace when there is none) down to the workspace.
fn folders_from_root(workspace: &Path) -> Vec<PathBuf> {
    let root = workspace.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(workspace);
    let mut dirs: Vec<PathBuf> =
        workspace.ancestors().take_while(|dir| dir.starts_with(root)).map(Path::to_path_buf).collect();
    dirs.reverse();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_order_fallback_and_caps() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("crates/core")).unwrap();
        std::fs::write(home.path().join("AGENTS.md"), "global rule").unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rule").unwrap();
        std::fs::write(root.join("CLAUDE.md"), "ignored: AGENTS.md wins here").unwrap();
        std::fs::write(root.join("crates/CLAUDE.md"), "crates rule").unwrap();
        std::fs::write(root.join("crates/core/AGENTS.md"), "x".repeat(40_000)).unwrap();
        let found = load(&root.join("crates/core"), home.path());
        assert_eq!(
            found.files,
            vec![
                home.path().join("AGENTS.md"),
                root.join("AGENTS.md"),
                root.join("crates/CLAUDE.md"),
                root.join("crates/core/AGENTS.md")
            ]
        );
        let order: Vec<usize> =
            ["global rule", "root rule", "crates rule", "xxxx"].iter().map(|t| found.text.find(t).unwrap()).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        assert!(!found.text.contains("ignored"));
        assert!(found.text.contains("[... cut:"));
        assert!(found.text.len() < TOTAL_CAP + 500);
    }

    #[test]
    fn outside_a_repository_only_the_workspace_counts() {
        let home = tempfile::tempdir().unwrap();
        let outer = tempfile::tempdir().unwrap();
        let work = outer.path().join("w");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(outer.path().join("AGENTS.md"), "not ours").unwrap();
        std::fs::write(work.join("AGENTS.md"), "ours").unwrap();
        let found = load(&work, home.path());
        assert_eq!(found.files, vec![work.join("AGENTS.md")]);
    }
}
