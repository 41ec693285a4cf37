//! hew: a terminal coding assistant. The library holds the core (config,
//! providers, the agent loop, tools); `main.rs` and the front ends drive it.

pub mod agent;
pub mod config;
pub mod exec;
pub mod hunks;
pub mod logging;
pub mod provider;
pub mod safety;
pub mod sandbox;
pub mod session;
pub mod setup;
pub mod tools;
pub mod ui;
