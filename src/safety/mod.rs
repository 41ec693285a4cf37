//! Command safety: a shell parser ([`shell`]) and the rules that block
//! destructive commands in every approval mode ([`analyze`]). This is the
//! layer that stops slips before anything runs; the OS sandbox
//! ([`crate::sandbox`]) is the one that holds when analysis cannot decide.

pub mod analyze;
pub mod shell;

pub use analyze::{Finding, analyze};
