//! Sessions: the transcript store (one JSONL file per session, written as
//! things happen), loading and resuming, listing, and export.

pub mod export;
pub mod open;
pub mod record;
pub mod resume;
pub mod store;

pub use record::{Meta, Record};
pub use store::{SessionError, Writer};

#[cfg(test)]
mod tests;
