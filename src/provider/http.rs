//! The HTTP side of every provider: send, stream, retry, cancel.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::retry::{RetryPolicy, is_retryable_status};
use super::sse::{SseEvent, SseParser};
use super::{BoxFuture, EventSink, ModelRequest, Provider, ProviderError, ProviderSettings, StreamEvent};

/// A wire format: how to phrase a request and read the events that come back.
pub trait Wire: Send + Sync {
    fn url(&self, base_url: &str) -> String;
    fn headers(&self, api_key: Option<&str>) -> Result<HeaderMap, ProviderError>;
    /// `compat` asks for the most widely accepted form of the body, after
    /// the server refused an optional extension (see [`Wire::refuses_extension`]).
    fn body(&self, model: &str, request: &ModelRequest, compat: bool) -> Value;
    /// True when a 400 response says the server does not understand an
    /// optional part of the request, so one retry in compat form may work.
    fn refuses_extension(&self, _message: &str) -> bool {
        false
    }
    fn decoder(&self) -> Box<dyn Decoder>;
}

/// Turns SSE events of one response into stream events.
pub trait Decoder: Send {
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;
    /// True once the terminal event arrived: nothing more will be read.
    fn complete(&self) -> bool;
    /// True when the stream may end here without being called cut: the
    /// terminal event, or (for lenient servers) the model's stop reason.
    fn may_end(&self) -> bool {
        self.complete()
    }
}

pub struct HttpProvider {
    client: reqwest::Client,
    wire: Box<dyn Wire>,
    settings: ProviderSettings,
    retry: RetryPolicy,
}

/// One failed attempt, and whether another may succeed.
struct Failure {
    error: ProviderError,
    retryable: bool,
    server_delay: Option<Duration>,
}

impl Failure {
    fn fatal(error: ProviderError) -> Self {
        Failure { error, retryable: false, server_delay: None }
    }
    fn transient(error: ProviderError) -> Self {
        Failure { error, retryable: true, server_delay: None }
    }
}

impl HttpProvider {
    pub fn new(settings: ProviderSettings, wire: Box<dyn Wire>) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .read_timeout(settings.idle_timeout)
            .user_agent(concat!("hew/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ProviderError::Setup(describe(&e)))?;
        let retry = RetryPolicy { max_retries: settings.max_retries, ..RetryPolicy::default() };
        Ok(HttpProvider { client, wire, settings, retry })
    }

    /// Sets how retries wait; tests use short delays.
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    async fn run(
        &self,
        request: &ModelRequest,
        sink: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<(), ProviderError> {
        let mut compat = false;
        let mut attempt = 0;
        loop {
            let failure = match self.attempt(request, compat, sink, cancel).await {
                Ok(()) => return Ok(()),
                Err(failure) => failure,
            };
            let error = self.redact(failure.error);
            if let ProviderError::Status { status: 400, message } = &error
                && !compat
                && self.wire.refuses_extension(message)
            {
                tracing::info!("server refused an optional request field; retrying in compatible form");
                compat = true;
                continue;
            }
            if !failure.retryable || attempt >= self.retry.max_retries {
                return Err(error);
            }
            attempt += 1;
            let delay = failure
                .server_delay
                .map(|d| d.min(self.retry.max_delay))
                .unwrap_or_else(|| self.retry.backoff(attempt));
            tracing::warn!(attempt, ?delay, %error, "model request failed; retrying");
            sink(StreamEvent::Retry { attempt, delay, reason: error.to_string() });
            tokio::select! {
                _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }

    async fn attempt(
        &self,
        request: &ModelRequest,
        compat: bool,
        sink: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<(), Failure> {
        let url = self.wire.url(&self.settings.base_url);
        let mut headers = self.wire.headers(self.settings.api_key.as_deref()).map_err(Failure::fatal)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let body = self.wire.body(&self.settings.model, request, compat);
        let send = self.client.post(&url).headers(headers).body(body.to_string()).send();
        let response = tokio::select! {
            _ = cancel.cancelled() => return Err(Failure::fatal(ProviderError::Cancelled)),
            response = send => response,
        };
        let response = response.map_err(|e| {
            let reason = describe(&e);
            let error = ProviderError::Connect { url: url.clone(), reason };
            // Connection and timeout failures may pass; a malformed URL will not.
            if e.is_builder() { Failure::fatal(error) } else { Failure::transient(error) }
        })?;

        let status = response.status().as_u16();
        if !response.status().is_success() {
            let server_delay = self.retry.server_delay(response.headers());
            let text = tokio::select! {
                _ = cancel.cancelled() => return Err(Failure::fatal(ProviderError::Cancelled)),
                text = response.text() => text.unwrap_or_default(),
            };
            let message = error_message(&text, response_reason(status));
            return Err(Failure {
                error: ProviderError::Status { status, message },
                retryable: is_retryable_status(status),
                server_delay,
            });
        }

        let mut decoder = self.wire.decoder();
        let mut parser = SseParser::new();
        let mut stream = response.bytes_stream();
        let mut sse = Vec::new();
        let mut events = Vec::new();
        loop {
            let chunk = tokio::select! {
                _ = cancel.cancelled() => return Err(Failure::fatal(ProviderError::Cancelled)),
                chunk = stream.next() => chunk,
            };
            let ended = chunk.is_none();
            match chunk {
                Some(Ok(bytes)) => parser.feed(&bytes, &mut sse),
                Some(Err(e)) => return Err(Failure::transient(ProviderError::Stream(describe(&e)))),
                None => parser.finish(&mut sse),
            }
            for event in sse.drain(..) {
                decoder.decode(&event, &mut events).map_err(|error| match error {
                    ProviderError::Api(_) => Failure::transient(error),
                    // What the end of a cut stream leaves is half an event, not bad data.
                    ProviderError::Decode(_) if ended => {
                        Failure::transient(ProviderError::Stream("the stream ended in the middle of an event".into()))
                    }
                    other => Failure::fatal(other),
                })?;
                for event in events.drain(..) {
                    sink(event);
                }
            }
            if decoder.complete() {
                return Ok(());
            }
            if ended && decoder.may_end() {
                return Ok(());
            }
            if ended {
                return Err(Failure::transient(ProviderError::Stream(
                    "the stream ended before the model finished".into(),
                )));
            }
        }
    }

    /// Keys must never reach a log, an error line or a transcript, even if a
    /// server echoes them back.
    fn redact(&self, error: ProviderError) -> ProviderError {
        let Some(key) = self.settings.api_key.as_deref().filter(|k| k.len() >= 4) else { return error };
        let scrub = |s: String| s.replace(key, "[redacted]");
        match error {
            ProviderError::Status { status, message } => ProviderError::Status { status, message: scrub(message) },
            ProviderError::Connect { url, reason } => ProviderError::Connect { url: scrub(url), reason: scrub(reason) },
            ProviderError::Stream(m) => ProviderError::Stream(scrub(m)),
            ProviderError::Api(m) => ProviderError::Api(scrub(m)),
            ProviderError::Decode(m) => ProviderError::Decode(scrub(m)),
            ProviderError::Setup(m) => ProviderError::Setup(scrub(m)),
            ProviderError::Cancelled => ProviderError::Cancelled,
        }
    }
}

impl Provider for HttpProvider {
    fn model(&self) -> &str {
        &self.settings.model
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        sink: EventSink<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(self.run(request, sink, cancel))
    }
}

/// The provider's own words from an error body: OpenAI's and Anthropic's
/// `{"error": {"message": ...}}`, a bare `{"message": ...}`, or the text itself.
pub fn error_message(body: &str, fallback: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let message = v.pointer("/error/message").or_else(|| v.get("message")).or_else(|| v.get("error"));
        message.and_then(Value::as_str).map(str::to_owned)
    });
    let text = from_json.unwrap_or_else(|| body.trim().to_owned());
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(300) {
        _ if one_line.is_empty() => fallback.to_owned(),
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

fn response_reason(status: u16) -> &'static str {
    reqwest::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("no message")
}

/// A reqwest error as one line: its own text and the innermost cause
/// ("connection refused"), without the Debug noise.
fn describe(error: &reqwest::Error) -> String {
    let mut reason = if error.is_timeout() { "timed out".to_owned() } else { String::new() };
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    let mut innermost = None;
    while let Some(err) = source {
        innermost = Some(err.to_string());
        source = err.source();
    }
    match innermost {
        Some(cause) if reason.is_empty() => reason = cause,
        Some(cause) => reason = format!("{reason} ({cause})"),
        None if reason.is_empty() => reason = error.to_string(),
        None => {}
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_either_format_or_plain_text() {
        let openai = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
        assert_eq!(error_message(openai, "x"), "Incorrect API key provided");
        let anthropic = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        assert_eq!(error_message(anthropic, "x"), "invalid x-api-key");
        assert_eq!(error_message("  bad\n gateway  ", "x"), "bad gateway");
        assert_eq!(error_message("", "Unauthorized"), "Unauthorized");
        assert_eq!(error_message(&"é".repeat(400), "x").chars().count(), 301);
    }

    #[test]
    fn context_exceeded_is_recognised() {
        let e = ProviderError::Status {
            status: 400,
            message: "This model's maximum context length is 128000 tokens".into(),
        };
        assert!(e.is_context_exceeded());
        let e =
            ProviderError::Status { status: 400, message: "prompt is too long: 210000 tokens > 200000 maximum".into() };
        assert!(e.is_context_exceeded());
        let e = ProviderError::Status { status: 401, message: "context length".into() };
        assert!(!e.is_context_exceeded());
    }
}
