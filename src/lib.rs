//! hew: a terminal coding assistant. The library holds the core (config,
//! providers, the agent loop, tools); `main.rs` and the front ends drive it.

pub mod provider;
pub mod config;
pub mod tools;
pub mod agent;
pub mod exec;
pub mod logging;
