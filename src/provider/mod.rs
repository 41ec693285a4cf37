//! Model providers: one [`Provider`] trait that streams [`StreamEvent`]s,
//! and one HTTP client ([`http::HttpProvider`]) shared by both wire formats.
//!
//! A wire format ([`openai`], [`anthropic`]) only knows how to encode a
//! request and decode SSE events; connection handling, retries, cancellation
//! and error reporting live once, in [`http`].

pub mod anthropic;
pub mod assemble;
mod error;
pub mod http;
pub mod openai;
pub mod retry;
pub mod sse;
mod types;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use assemble::{Assembler, Completion};
pub use error::ProviderError;
pub use types::*;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Receives stream events as they arrive.
pub type EventSink<'a> = &'a mut (dyn FnMut(StreamEvent) + Send);

pub trait Provider: Send + Sync {
    /// The model requests go to, for display and pricing.
    fn model(&self) -> &str;

    /// Sends `request` and streams its events into `sink` until the model's
    /// reply is complete. Retries transient failures itself, emitting
    /// [`StreamEvent::Retry`] before each new attempt.
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        sink: EventSink<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<(), ProviderError>>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WireKind {
    Openai,
    Anthropic,
}

/// Everything needed to talk to one endpoint, already resolved from config.
#[derive(Clone)]
pub struct ProviderSettings {
    pub name: String,
    pub kind: WireKind,
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub max_retries: u32,
    pub connect_timeout: Duration,
    /// Longest silence tolerated inside a streaming response.
    pub idle_timeout: Duration,
}

impl std::fmt::Debug for ProviderSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSettings")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

pub fn build(settings: ProviderSettings) -> Result<Box<dyn Provider>, ProviderError> {
    let wire: Box<dyn http::Wire> = match settings.kind {
        WireKind::Openai => Box::new(openai::OpenAi),
        WireKind::Anthropic => Box::new(anthropic::Anthropic),
    };
    Ok(Box::new(http::HttpProvider::new(settings, wire)?))
}
