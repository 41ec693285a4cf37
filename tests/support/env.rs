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
