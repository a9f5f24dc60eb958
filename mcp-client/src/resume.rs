//! Streamable HTTP streams that resume the way the transport says
//! (SEP-1699), around any rmcp [`StreamableHttpClient`]: wrap the client in
//! [`Resuming`] and hand it to rmcp's `StreamableHttpClientTransport`.
//!
//! rmcp 3.11 resumes a response stream that ends before its response with a
//! `GET` carrying `Last-Event-ID`, but it waits the server's `retry` only
//! after a graceful close, reconnects at once after a broken one, and forgets
//! the `retry` after one use. [`Resuming`] keeps the MUST whatever the
//! timing: every resumption waits the `retry` its stream last carried (or
//! inherited), counted from when that stream ended, however it ended.
//!
//! It also opens no standalone `GET` stream: that stream is for server
//! messages outside any request, which a bounded check never waits for, and
//! a server cannot tell it from a resumption that came early (the MCP
//! conformance suite's `sse-retry` counts it as one when it lands after the
//! tool call). Every `GET` it sends is a resumption, with `Last-Event-ID`.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::time::Instant;

/// A stream of server-sent events, as rmcp's clients return them.
type Events = BoxStream<'static, Result<Sse, SseError>>;

/// What a caller reads of each event's data on its way to rmcp (a copy of
/// nothing: it borrows the data), on every stream, resumed ones included.
type DataObserver = Arc<dyn Fn(&str) + Send + Sync>;

/// How a stream that can be resumed ended: when, and the `retry` it carried.
#[derive(Debug, Clone, Copy)]
struct Ended {
    at: Instant,
    retry: Option<Duration>,
}

/// Ended streams by the last event id each carried (what a resumption
/// sends as `Last-Event-ID`). An entry lives from its stream's end to its
/// resumption's answer.
#[derive(Debug, Clone, Default)]
struct Ledger(Arc<Mutex<HashMap<String, Ended>>>);

impl Ledger {
    fn record(&self, id: String, ended: Ended) {
        self.lock().insert(id, ended);
    }

    fn get(&self, id: &str) -> Option<Ended> {
        self.lock().get(id).copied()
    }

    fn forget(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Ended>> {
        // A panic elsewhere cannot leave the map half-written: each use is one call.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// An event stream that notes its last `id` and `retry`, and records in the
/// ledger when it ends (closed or broken) so its resumption can wait.
struct Tracked {
    inner: Events,
    id: Option<String>,
    retry: Option<Duration>,
    ledger: Ledger,
    ended: bool,
    observe: Option<DataObserver>,
}

impl Stream for Tracked {
    type Item = Result<Sse, SseError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let item = ready!(self.inner.poll_next_unpin(cx));
        match &item {
            Some(Ok(event)) => {
                if let (Some(observe), Some(data)) = (&self.observe, &event.data) {
                    observe(data);
                }
                if let Some(ms) = event.retry {
                    self.retry = Some(Duration::from_millis(ms));
                }
                if let Some(id) = &event.id {
                    self.id = Some(id.clone());
                }
            }
            Some(Err(_)) | None if !self.ended => {
                self.ended = true;
                if let Some(id) = self.id.clone() {
                    let ended = Ended {
                        at: Instant::now(),
                        retry: self.retry,
                    };
                    self.ledger.record(id, ended);
                }
            }
            _ => {}
        }
        Poll::Ready(item)
    }
}

/// An rmcp streamable HTTP client whose resumptions wait the server's
/// `retry` and which opens no standalone `GET` stream (see the module docs).
/// Everything else goes to the wrapped client unchanged, limits included.
#[derive(Clone)]
pub struct Resuming<C> {
    inner: C,
    ledger: Ledger,
    observe: Option<DataObserver>,
}

impl<C: StreamableHttpClient> Resuming<C> {
    /// Wraps `inner`.
    pub fn new(inner: C) -> Self {
        Self {
            inner,
            ledger: Ledger::default(),
            observe: None,
        }
    }

    /// Hands each server-sent event's data, on every stream (responses and
    /// their resumptions), to `observe` before rmcp reads it: how a caller
    /// reads the server's own bytes. `observe` must return at once.
    pub fn observing(mut self, observe: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.observe = Some(Arc::new(observe));
        self
    }

    fn track(&self, inner: Events, id: Option<String>, retry: Option<Duration>) -> Events {
        Tracked {
            inner,
            id,
            retry,
            ledger: self.ledger.clone(),
            ended: false,
            observe: self.observe.clone(),
        }
        .boxed()
    }

    fn tracked(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        match response {
            StreamableHttpPostResponse::Sse(events, session) => {
                StreamableHttpPostResponse::Sse(self.track(events, None, None), session)
            }
            other => other,
        }
    }

    /// Resumes the stream that ended at `id`: waits its `retry` from its
    /// end, then opens it with `open`; the new stream inherits that `retry`
    /// until the server sends another.
    async fn resume<F>(&self, id: String, open: F) -> Result<Events, StreamableHttpError<C::Error>>
    where
        F: Future<Output = Result<Events, StreamableHttpError<C::Error>>>,
    {
        let ended = self.ledger.get(&id);
        let retry = ended.and_then(|e| e.retry);
        if let (Some(ended), Some(retry)) = (ended, retry) {
            tokio::time::sleep_until(ended.at + retry).await;
        }
        match open.await {
            Ok(events) => {
                self.ledger.forget(&id);
                Ok(self.track(events, Some(id), retry))
            }
            Err(error) => {
                // A failed attempt is a lost connection too: the next one
                // waits the `retry` again, from now.
                let at = Instant::now();
                self.ledger.record(id, Ended { at, retry });
                Err(error)
            }
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Resuming<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await?;
        Ok(self.tracked(response))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.tracked(response))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await?;
        Ok(self.tracked(response))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        // rmcp reads this as "no standalone stream here" and goes on without one.
        let id = last_event_id.ok_or(StreamableHttpError::ServerDoesNotSupportSse)?;
        let open = self.inner.get_stream(
            uri,
            session_id,
            Some(id.clone()),
            auth_header,
            custom_headers,
        );
        self.resume(id, open).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let id = last_event_id.ok_or(StreamableHttpError::ServerDoesNotSupportSse)?;
        let open = self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            Some(id.clone()),
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        self.resume(id, open).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    type Script = Vec<Result<Sse, SseError>>;
    /// Each `GET` sent: its `Last-Event-ID`, and when.
    type Sent = Arc<Mutex<Vec<(Option<String>, Instant)>>>;

    /// A client whose responses are scripted and whose `GET`s are written
    /// down (with `Last-Event-ID` and when, in the test's paused time).
    #[derive(Clone, Default)]
    struct Scripted {
        post: Arc<Mutex<Option<Script>>>,
        gets: Arc<Mutex<VecDeque<Result<Script, ()>>>>,
        sent: Sent,
    }

    fn stream(script: Script) -> Events {
        futures::stream::iter(script).boxed()
    }

    fn event(id: &str, retry: Option<u64>) -> Result<Sse, SseError> {
        Ok(Sse {
            event: None,
            data: Some(String::new()),
            id: Some(id.into()),
            retry,
        })
    }

    fn broken() -> Result<Sse, SseError> {
        Err(SseError::InvalidLine)
    }

    impl StreamableHttpClient for Scripted {
        type Error = std::io::Error;

        async fn post_message(
            &self,
            _: Arc<str>,
            _: ClientJsonRpcMessage,
            _: Option<Arc<str>>,
            _: Option<String>,
            _: HashMap<HeaderName, HeaderValue>,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            let script = self.post.lock().unwrap().take().unwrap_or_default();
            Ok(StreamableHttpPostResponse::Sse(stream(script), None))
        }

        async fn delete_session(
            &self,
            _: Arc<str>,
            _: Arc<str>,
            _: Option<String>,
            _: HashMap<HeaderName, HeaderValue>,
        ) -> Result<(), StreamableHttpError<Self::Error>> {
            Ok(())
        }

        async fn get_stream(
            &self,
            _: Arc<str>,
            _: Option<Arc<str>>,
            last_event_id: Option<String>,
            _: Option<String>,
            _: HashMap<HeaderName, HeaderValue>,
        ) -> Result<Events, StreamableHttpError<Self::Error>> {
            self.sent
                .lock()
                .unwrap()
                .push((last_event_id, Instant::now()));
            match self.gets.lock().unwrap().pop_front() {
                Some(Ok(script)) => Ok(stream(script)),
                _ => Err(StreamableHttpError::TransportChannelClosed),
            }
        }
    }

    fn call() -> ClientJsonRpcMessage {
        serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "test_reconnection", "arguments": {}}
        }))
        .expect("a tools/call")
    }

    /// POSTs the call and reads its response stream to its end: when it ended.
    async fn post_and_drain(client: &Resuming<Scripted>) -> Instant {
        let response = client
            .post_message_with_response_limits(
                "http://127.0.0.1:9/mcp".into(),
                call(),
                None,
                None,
                HashMap::new(),
                StreamableHttpResponseLimits::default(),
            )
            .await
            .expect("posted");
        let StreamableHttpPostResponse::Sse(mut events, _) = response else {
            panic!("an event stream");
        };
        while events.next().await.is_some() {}
        Instant::now()
    }

    async fn resume(client: &Resuming<Scripted>, id: &str) -> Result<Events, ()> {
        client
            .get_stream_with_max_sse_event_size(
                "http://127.0.0.1:9/mcp".into(),
                Some("session".into()),
                Some(id.into()),
                None,
                HashMap::new(),
                1 << 20,
            )
            .await
            .map_err(|_| ())
    }

    fn sent(client: &Resuming<Scripted>) -> Vec<(Option<String>, Instant)> {
        client.inner.sent.lock().unwrap().clone()
    }

    /// GIVEN a response stream whose priming event carries `retry: 500` and
    /// which then breaks (rmcp reconnects at once after a break) WHEN it is
    /// resumed straight away THEN the GET goes out 500 ms after the break,
    /// with `Last-Event-ID`.
    #[tokio::test(start_paused = true)]
    async fn a_resumption_after_a_broken_stream_waits_the_retry() {
        let scripted = Scripted::default();
        *scripted.post.lock().unwrap() = Some(vec![event("e1", Some(500)), broken()]);
        scripted.gets.lock().unwrap().push_back(Ok(vec![]));
        let client = Resuming::new(scripted);
        let ended = post_and_drain(&client).await;
        let _events = resume(&client, "e1").await.expect("resumed");
        let sent = sent(&client);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0.as_deref(), Some("e1"));
        assert_eq!(sent[0].1 - ended, Duration::from_millis(500));
    }

    /// GIVEN a resumed stream that ends without a `retry` of its own WHEN it
    /// is resumed again THEN it waits the `retry` it inherited, from its end,
    /// with its own last event id; and a later `retry` replaces it.
    #[tokio::test(start_paused = true)]
    async fn the_retry_holds_for_the_streams_that_resume_it() {
        let scripted = Scripted::default();
        *scripted.post.lock().unwrap() = Some(vec![event("e1", Some(500))]);
        {
            let mut gets = scripted.gets.lock().unwrap();
            gets.push_back(Ok(vec![event("e2", None)]));
            gets.push_back(Ok(vec![event("e3", Some(2000))]));
            gets.push_back(Ok(vec![]));
        }
        let client = Resuming::new(scripted);
        post_and_drain(&client).await;
        let mut ends = Vec::new();
        for id in ["e1", "e2", "e3"] {
            let mut events = resume(&client, id).await.expect("resumed");
            while events.next().await.is_some() {}
            ends.push(Instant::now());
        }
        let sent = sent(&client);
        let ids: Vec<_> = sent.iter().map(|(id, _)| id.clone().unwrap()).collect();
        assert_eq!(ids, ["e1", "e2", "e3"]);
        assert_eq!(sent[1].1 - ends[0], Duration::from_millis(500));
        assert_eq!(sent[2].1 - ends[1], Duration::from_millis(2000));
    }

    /// GIVEN a resumption the server refuses WHEN the next attempt comes at
    /// once THEN it too waits the `retry`, counted from the refusal.
    #[tokio::test(start_paused = true)]
    async fn a_failed_resumption_waits_again() {
        let scripted = Scripted::default();
        *scripted.post.lock().unwrap() = Some(vec![event("e1", Some(300))]);
        {
            let mut gets = scripted.gets.lock().unwrap();
            gets.push_back(Err(()));
            gets.push_back(Ok(vec![]));
        }
        let client = Resuming::new(scripted);
        post_and_drain(&client).await;
        assert!(resume(&client, "e1").await.is_err());
        let refused = Instant::now();
        let _events = resume(&client, "e1").await.expect("resumed");
        let sent = sent(&client);
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[1].1 - refused, Duration::from_millis(300));
    }

    /// GIVEN rmcp asking for the standalone stream (no `Last-Event-ID`) WHEN
    /// it is asked THEN no GET goes out and rmcp hears "no SSE here" (which
    /// it takes as: go on without one).
    #[tokio::test(start_paused = true)]
    async fn no_standalone_stream_is_opened() {
        let client = Resuming::new(Scripted::default());
        let asked = client
            .get_stream_with_max_sse_event_size(
                "http://127.0.0.1:9/mcp".into(),
                Some("session".into()),
                None,
                None,
                HashMap::new(),
                1 << 20,
            )
            .await;
        assert!(matches!(
            asked,
            Err(StreamableHttpError::ServerDoesNotSupportSse)
        ));
        assert!(sent(&client).is_empty());
    }
}
