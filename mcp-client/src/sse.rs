//! A legacy HTTP+SSE MCP client transport (rmcp 3.x has none): `GET` the SSE
//! URL, wait for the `endpoint` event, then `POST` each message there while
//! `message` events carry the server's replies.
//!
//! Bounded: the endpoint event must come within the connect timeout, and any
//! single event larger than [`MAX_EVENT_BYTES`] ends the stream with an error.

use std::time::Duration;

use futures::StreamExt;
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use tokio::sync::mpsc;

use tokio_util::sync::{PollSendError, PollSender};

/// The largest single SSE event accepted.
pub const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// Why the SSE client could not connect.
#[derive(Debug, thiserror::Error)]
pub enum SseClientError {
    /// The URL is not http(s).
    #[error("not an http(s) URL")]
    BadUrl,
    /// The request failed.
    #[error("connecting failed: {0}")]
    Http(String),
    /// The server answered with a non-success status.
    #[error("the server answered HTTP {0}")]
    Status(u16),
    /// The stream ended or broke before the `endpoint` event.
    #[error("the SSE stream ended before the endpoint event")]
    NoEndpoint,
    /// The endpoint event did not arrive in time.
    #[error("no endpoint event within {0:?}")]
    Timeout(Duration),
    /// An event was larger than the bound.
    #[error("an SSE event exceeded {MAX_EVENT_BYTES} bytes")]
    TooLarge,
}

/// One parsed server-sent event.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field (empty means `message`).
    pub event: String,
    /// The joined `data:` lines.
    pub data: String,
}

/// Incremental, bounded SSE parser.
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    current: SseEvent,
    has_data: bool,
}

impl SseParser {
    /// Feeds bytes; returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseClientError> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(pos) = self.buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if self.has_data || !self.current.event.is_empty() {
                    events.push(std::mem::take(&mut self.current));
                }
                self.has_data = false;
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "event" => self.current.event = value.to_owned(),
                "data" => {
                    if self.has_data {
                        self.current.data.push('\n');
                    }
                    self.current.data.push_str(value);
                    self.has_data = true;
                }
                _ => {}
            }
            if self.current.data.len() > MAX_EVENT_BYTES {
                return Err(SseClientError::TooLarge);
            }
        }
        if self.buffer.len() > MAX_EVENT_BYTES {
            return Err(SseClientError::TooLarge);
        }
        Ok(events)
    }
}

/// A request error with its causes (a TLS failure, for one, is only in the
/// chain), without the URL (it may carry secrets).
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// Connects to a legacy SSE MCP server; returns an rmcp client transport.
pub async fn connect(
    sse_url: &str,
    headers: &[(String, String)],
    connect_timeout: Duration,
) -> Result<
    impl rmcp::transport::Transport<RoleClient, Error = PollSendError<ClientJsonRpcMessage>> + 'static,
    SseClientError,
> {
    connect_observing(sse_url, headers, connect_timeout, None).await
}

/// Reads each server message's text as it arrives, before it is parsed.
pub type MessageObserver = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// [`connect`], with `observe` shown every server message's JSON text as the
/// server sent it (the typed messages drop fields rmcp does not model).
pub async fn connect_observing(
    sse_url: &str,
    headers: &[(String, String)],
    connect_timeout: Duration,
    observe: Option<MessageObserver>,
) -> Result<
    impl rmcp::transport::Transport<RoleClient, Error = PollSendError<ClientJsonRpcMessage>> + 'static,
    SseClientError,
> {
    let base = url::Url::parse(sse_url).map_err(|_| SseClientError::BadUrl)?;
    if !matches!(base.scheme(), "http" | "https") {
        return Err(SseClientError::BadUrl);
    }
    // Redirects are not followed: the headers (credentials) would go along.
    let client = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| SseClientError::Http(e.to_string()))?;
    let mut request = client
        .get(base.clone())
        .header("accept", "text/event-stream");
    for (k, v) in headers {
        request = request.header(k.as_str(), v.as_str());
    }
    let response = tokio::time::timeout(connect_timeout, request.send())
        .await
        .map_err(|_| SseClientError::Timeout(connect_timeout))?
        .map_err(|e| SseClientError::Http(describe(e)))?;
    if !response.status().is_success() {
        return Err(SseClientError::Status(response.status().as_u16()));
    }
    let mut body = response.bytes_stream();
    let mut parser = SseParser::default();
    let mut early: Vec<SseEvent> = Vec::new();

    let post_url = tokio::time::timeout(connect_timeout, async {
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| SseClientError::Http(describe(e)))?;
            for event in parser.feed(&chunk)? {
                if event.event == "endpoint" {
                    return base
                        .join(event.data.trim())
                        .map_err(|_| SseClientError::BadUrl);
                }
                early.push(event);
            }
        }
        Err(SseClientError::NoEndpoint)
    })
    .await
    .map_err(|_| SseClientError::Timeout(connect_timeout))??;

    let (to_client_tx, mut to_client_rx) = mpsc::channel::<ServerJsonRpcMessage>(64);
    let (from_client_tx, mut from_client_rx) = mpsc::channel::<ClientJsonRpcMessage>(64);

    // Server → client: `message` events.
    tokio::spawn(async move {
        let deliver = |event: SseEvent| {
            let tx = to_client_tx.clone();
            let observe = observe.clone();
            async move {
                if event.event.is_empty() || event.event == "message" {
                    if let Some(observe) = &observe {
                        observe(&event.data);
                    }
                    match serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
                        Ok(message) => tx.send(message).await.is_ok(),
                        Err(err) => {
                            tracing::debug!(%err, "ignoring unparseable SSE message");
                            true
                        }
                    }
                } else {
                    true
                }
            }
        };
        for event in early {
            if !deliver(event).await {
                return;
            }
        }
        loop {
            // Stop reading (and so close the GET) as soon as the client transport is gone.
            let chunk = tokio::select! {
                _ = to_client_tx.closed() => return,
                chunk = body.next() => chunk,
            };
            let Some(Ok(chunk)) = chunk else {
                return;
            };
            let Ok(events) = parser.feed(&chunk) else {
                return;
            };
            for event in events {
                if !deliver(event).await {
                    return;
                }
            }
        }
    });

    // Client → server: POST each message.
    let headers = headers.to_vec();
    tokio::spawn(async move {
        while let Some(message) = from_client_rx.recv().await {
            let Ok(body) = serde_json::to_vec(&message) else {
                continue;
            };
            let mut request = client
                .post(post_url.clone())
                .header("content-type", "application/json")
                .body(body);
            for (k, v) in &headers {
                request = request.header(k.as_str(), v.as_str());
            }
            match request.send().await {
                Ok(r) if r.status().is_success() => {}
                Ok(r) => {
                    tracing::debug!(status = r.status().as_u16(), "SSE POST refused");
                    return;
                }
                Err(err) => {
                    tracing::debug!(err = %err.without_url(), "SSE POST failed");
                    return;
                }
            }
        }
    });

    Ok(rmcp::transport::sink_stream::SinkStreamTransport::new(
        PollSender::new(from_client_tx),
        futures::stream::poll_fn(move |cx| to_client_rx.poll_recv(cx)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_handles_split_chunks_multiline_data_and_comments() {
        let mut p = SseParser::default();
        assert!(
            p.feed(b": keep-alive\n\nevent: endp")
                .expect("ok")
                .is_empty()
        );
        let events = p
            .feed(b"oint\ndata: /message?sessionId=1\n\ndata: a\ndata: b\r\n\r\n")
            .expect("ok");
        assert_eq!(
            events,
            [
                SseEvent {
                    event: "endpoint".into(),
                    data: "/message?sessionId=1".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "a\nb".into()
                }
            ]
        );
    }

    #[test]
    fn parser_refuses_an_unbounded_event() {
        let mut p = SseParser::default();
        let chunk = vec![b'x'; MAX_EVENT_BYTES + 1];
        assert!(matches!(p.feed(&chunk), Err(SseClientError::TooLarge)));
    }
}
