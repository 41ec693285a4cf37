//! Logs go to `$HEW_HOME/logs/hew.log` (private to the user), never to the
//! terminal: the TUI owns the screen and `hew exec` owns stdout and stderr.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Starts logging; the guard flushes on drop. `None` if the log file
/// cannot be made: hew runs on without logs rather than failing.
pub fn init(hew_home: &Path) -> Option<WorkerGuard> {
    let dir = hew_home.join("logs");
    let file = open_private(&dir).ok()?;
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter = EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| EnvFilter::new("hew=info,warn"));
    tracing_subscriber::fmt().with_writer(writer).with_ansi(false).with_env_filter(filter).try_init().ok()?;
    Some(guard)
}

fn open_private(dir: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let path = dir.join("hew.log");
    let file = std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}
