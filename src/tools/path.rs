//! Workspace confinement: every path a tool touches is resolved against the
//! workspace and checked on its canonical form, so `..`, absolute paths,
//! symlinks pointing out and look-alike siblings all fail the same check.

use std::path::{Component, Path, PathBuf};

/// A path inside the workspace: `abs` to touch, `shown` to talk about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkPath {
    pub abs: PathBuf,
    pub shown: String,
}

/// Confines paths to `root` (itself canonical), refusing `protected` folders
/// inside it as well (hew's own files).
#[derive(Debug, Clone)]
pub struct Confinement {
    root: PathBuf,
    protected: Vec<PathBuf>,
}

impl Confinement {
    pub fn new(root: PathBuf, protected: Vec<PathBuf>) -> Self {
        // Protected folders may not exist yet; compare on their canonical form when they do.
        let protected = protected.into_iter().map(|p| canonical_prefix(&p).unwrap_or(p)).collect();
        Confinement { root, protected }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `arg` (relative to `base`, or absolute) and checks it.
    pub fn resolve(&self, base: &Path, arg: &str) -> Result<WorkPath, String> {
        if arg.is_empty() {
            return Err("the path is empty".into());
        }
        if arg.contains('\0') {
            return Err("the path contains a NUL byte".into());
        }
        let joined = base.join(arg);
        let lexical =
            normalize(&joined).ok_or_else(|| format!("{arg} is outside the workspace ({})", self.root.display()))?;
        let real = canonical_prefix(&lexical).map_err(|e| format!("cannot resolve {arg}: {e}"))?;
        if !real.starts_with(&self.root) {
            let via_link = real != lexical && lexical.starts_with(&self.root);
            return Err(if via_link {
                format!(
                    "{arg} leads outside the workspace through a symbolic link (to {}); only files under {} can be used",
                    real.display(),
                    self.root.display()
                )
            } else {
                format!("{arg} is outside the workspace; only files under {} can be used", self.root.display())
            });
        }
        if let Some(p) = self.protected.iter().find(|p| real.starts_with(p)) {
            return Err(format!("{arg} is inside hew's own folder ({}), which tools may not touch", p.display()));
        }
        let shown = match real.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => real.display().to_string(),
        };
        Ok(WorkPath { abs: real, shown })
    }

    /// True if `dir` (canonical) is inside the workspace.
    pub fn contains(&self, dir: &Path) -> bool {
        dir.starts_with(&self.root)
    }
}

/// Removes `.` and resolves `..` without touching the disk. `None` if `..`
/// climbs above the filesystem root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// Canonicalises the deepest existing ancestor of `path` and appends the
/// rest, so a file that does not exist yet is judged by where it would land.
fn canonical_prefix(path: &Path) -> std::io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(real) => {
                let mut out = real;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling symlink exists as a link: follow where it points.
                if let Ok(target) = std::fs::read_link(&existing) {
                    let parent = existing.parent().unwrap_or(Path::new("/"));
                    let resolved = normalize(&parent.join(target)).ok_or(e)?;
                    let mut out = canonical_prefix(&resolved)?;
                    for part in rest.iter().rev() {
                        out.push(part);
                    }
                    return Ok(out);
                }
                match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        rest.push(name.to_owned());
                        existing = parent.to_path_buf();
                    }
                    _ => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Fixture {
        _dir: tempfile::TempDir,
        outside: PathBuf,
        root: PathBuf,
        jail: Confinement,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("proj");
        let outside = base.join("proj-evil");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "s").unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        symlink(&outside, root.join("out-dir")).unwrap();
        symlink(outside.join("secret.txt"), root.join("out-file")).unwrap();
        symlink(root.join("src/main.rs"), root.join("in-link")).unwrap();
        symlink(outside.join("nothing-yet"), root.join("dangling")).unwrap();
        std::fs::create_dir_all(root.join(".hew-home")).unwrap();
        let jail = Confinement::new(root.clone(), vec![root.join(".hew-home")]);
        Fixture { _dir: dir, outside, root, jail }
    }

    #[test]
    fn relative_absolute_new_and_linked_inside_paths_resolve() {
        let f = fixture();
        let ok = |arg: &str| f.jail.resolve(&f.root, arg).unwrap();
        assert_eq!(ok("src/main.rs").shown, "src/main.rs");
        assert_eq!(ok("./src/../src/main.rs").abs, f.root.join("src/main.rs"));
        assert_eq!(ok(&f.root.join("src/main.rs").to_string_lossy()).shown, "src/main.rs");
        assert_eq!(ok("new/deeper/file.txt").abs, f.root.join("new/deeper/file.txt"));
        assert_eq!(ok("in-link").abs, f.root.join("src/main.rs"));
        assert_eq!(ok(".").shown, ".");
        assert_eq!(f.jail.resolve(&f.root.join("src"), "main.rs").unwrap().shown, "src/main.rs");
    }

    #[test]
    fn every_escape_is_refused() {
        let f = fixture();
        let err = |arg: &str| f.jail.resolve(&f.root, arg).unwrap_err();
        assert!(err("../proj-evil/secret.txt").contains("outside the workspace"));
        assert!(err("src/../../proj-evil").contains("outside the workspace"));
        assert!(err("/etc/passwd").contains("outside the workspace"));
        assert!(err(&f.outside.join("secret.txt").to_string_lossy()).contains("outside the workspace"));
        assert!(err("../../../../../../../../..").contains("outside the workspace"));
        assert!(err("out-dir/secret.txt").contains("symbolic link"));
        assert!(err("out-dir/new.txt").contains("symbolic link"));
        assert!(err("out-file").contains("symbolic link"));
        assert!(err("dangling").contains("symbolic link"));
        assert!(err("bad\0name").contains("NUL"));
        assert!(err("").contains("empty"));
        assert!(err(".hew-home/config.toml").contains("hew's own folder"));
    }

    #[test]
    fn look_alike_sibling_is_not_inside() {
        let f = fixture();
        let sibling = f.root.parent().unwrap().join("proj-evil/x");
        assert!(!f.jail.contains(&sibling));
        assert!(f.jail.contains(&f.root.join("x")));
    }
}
