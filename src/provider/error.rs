use thiserror::Error;

/// Why a model request failed, phrased for a person reading one line.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ProviderError {
    /// The server answered with an error status; `message` is its own words.
    #[error("the provider answered {status}: {message}")]
    Status { status: u16, message: String },
    #[error("cannot reach {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("the response broke off: {0}")]
    Stream(String),
    /// An error the provider reported inside an otherwise good stream.
    #[error("the provider reported an error: {0}")]
    Api(String),
    #[error("the provider sent something hew cannot read: {0}")]
    Decode(String),
    #[error("cannot set up the HTTP client: {0}")]
    Setup(String),
    #[error("the request was cancelled")]
    Cancelled,
}

impl ProviderError {
    /// True when the model's context window is too small for the request;
    /// the fix is to shrink the conversation, not to retry it as is.
    pub fn is_context_exceeded(&self) -> bool {
        let text = match self {
            ProviderError::Status { status: 400 | 413, message } | ProviderError::Api(message) => message,
            _ => return false,
        };
        let text = text.to_ascii_lowercase();
        [
            "context length",
            "context_length",
            "context window",
            "prompt is too long",
            "too many tokens",
            "maximum context",
        ]
        .iter()
        .any(|needle| text.contains(needle))
    }
}
