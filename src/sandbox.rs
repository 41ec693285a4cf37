//! The OS sandbox for commands (Linux Landlock): a command may read
//! anything but write only inside the workspace, the temp folders, a few
//! harmless devices and the build caches the user allows. The ruleset is
//! built in hew's process before the fork and applied in the child just
//! before `exec`, so hew itself is never restricted.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr,
    path_beneath_rules,
};

/// The newest Landlock ABI whose rights hew asks for; older kernels get
/// what they support (best effort), newer ones are fully used up to it.
const TARGET_ABI: ABI = ABI::V5;

/// Devices a command may write to.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"];

#[derive(Debug, Clone, PartialEq)]
pub struct Sandbox {
    /// Folders and files commands may change.
    pub writable: Vec<PathBuf>,
}

impl Sandbox {
    /// Write access for the workspace, temp folders, devices, the caches
    /// build tools fill in the user's home, and `extra` from the config.
    pub fn new(workspace: &Path, home: Option<&Path>, extra: &[PathBuf]) -> Self {
        let mut writable =
            vec![workspace.to_path_buf(), std::env::temp_dir(), PathBuf::from("/tmp"), PathBuf::from("/var/tmp")];
        writable.extend(DEVICES.iter().map(PathBuf::from));
        if let Some(home) = home {
            for cache in [
                ".cache",
                ".cargo/registry",
                ".cargo/git",
                ".cargo/.package-cache",
                ".npm",
                ".m2/repository",
                "go/pkg/mod",
            ] {
                writable.push(home.join(cache));
            }
        }
        writable.extend(extra.iter().cloned());
        writable.dedup();
        Sandbox { writable }
    }

    /// Builds the ruleset, in the parent. Paths that do not exist are skipped.
    pub fn prepare(&self) -> Result<RulesetCreated, String> {
        let ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(TARGET_ABI))
            .and_then(|r| r.create())
            .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(TARGET_ABI))))
            .and_then(|r| r.add_rules(path_beneath_rules(&self.writable, AccessFs::from_all(TARGET_ABI))));
        ruleset.map_err(|e| format!("cannot build the sandbox rules: {e}"))
    }
}

/// The kernel's Landlock ABI version, or `None` when it has no Landlock.
pub fn kernel_abi() -> Option<i64> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute and size 0, this flag only queries the
    // ABI version; no memory is read or written.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (version > 0).then_some(version)
}

/// Applies a prepared ruleset to the calling process. Meant for the child
/// side of a fork (`pre_exec`): no allocation on success.
pub fn enter(ruleset: RulesetCreated) -> std::io::Result<()> {
    ruleset.restrict_self().map(|_| ()).map_err(|e| std::io::Error::other(e.to_string()))
}
