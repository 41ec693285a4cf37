//! A throwaway workspace and home for running the real binary.

use assert_cmd::Command;

use super::{Server, Wire};

pub const KEY: &str = "sk-test-secret-key-123";

pub struct Env {
    pub work: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        Env { work: tempfile::tempdir().unwrap(), home: tempfile::tempdir().unwrap() }
    }

    pub fn cmd(&self, server: Option<&Server>) -> Command {
        let mut cmd = Command::cargo_bin("hew").unwrap();
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("HEW_HOME", self.home.path().join("hew"))
            .current_dir(self.work.path())
            .timeout(std::time::Duration::from_secs(60));
        if let Some(server) = server {
            let provider = match server.wire {
                Wire::OpenAi => "openai",
                Wire::Anthropic => "anthropic",
            };
            let var = match server.wire {
                Wire::OpenAi => "OPENAI_API_KEY",
                Wire::Anthropic => "ANTHROPIC_API_KEY",
            };
            cmd.env(var, KEY).args(["--provider", provider, "--base-url", &server.base_url()]);
        }
        cmd
    }

    pub fn path(&self, rel: &str) -> std::path::PathBuf {
        self.work.path().join(rel)
    }
}

impl Env {
    /// Starts the real binary in the background (for signals), with the
    /// key for `server`'s wire format.
    pub fn spawn(&self, server: &Server, args: &[&str]) -> std::process::Child {
        let (provider, var) = match server.wire {
            Wire::OpenAi => ("openai", "OPENAI_API_KEY"),
            Wire::Anthropic => ("anthropic", "ANTHROPIC_API_KEY"),
        };
        std::process::Command::new(assert_cmd::cargo::cargo_bin("hew"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("HEW_HOME", self.home.path().join("hew"))
            .env(var, KEY)
            .current_dir(self.work.path())
            .args(["--provider", provider, "--base-url", &server.base_url()])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Waits until a command wrote a process id into `rel`, and returns it.
    pub fn wait_for_pid(&self, rel: &str) -> i32 {
        let path = self.path(rel);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            if let Some(pid) = std::fs::read_to_string(&path).ok().and_then(|s| s.trim().parse().ok()) {
                return pid;
            }
            assert!(std::time::Instant::now() < deadline, "the command never wrote {rel}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
