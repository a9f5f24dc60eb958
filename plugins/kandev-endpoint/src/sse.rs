//! Legacy HTTP+SSE server transport (MCP 2024-11-05): `GET /sse` opens an
//! event stream whose first event names the `POST /message?sessionId=…` URL;
//! responses come back as `message` events. rmcp 3.x dropped this transport,
//! so it lives here, on axum, feeding the same observed rmcp server.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::{self, Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use tokio::sync::mpsc;

use crate::report::{Connection, Observation};
use crate::wire::{Io, Spawn};

/// 128 bits from the OS's cryptographic random source, as hex: SSE session
/// ids, which authorize `POST /message` for a session opened with the credential.
fn random_hex() -> String {
    tether_guard::random_hex(16)
}

/// Messages buffered per direction per session.
const CHANNEL_DEPTH: usize = 64;

struct SseSession {
    inbound: mpsc::Sender<ClientJsonRpcMessage>,
    connection: Arc<Connection>,
}

/// Shared state of the SSE routes.
pub(crate) struct SseShared {
    sessions: Mutex<HashMap<String, SseSession>>,
    observation: Arc<Observation>,
    spawn: Spawn,
}

impl SseShared {
    pub(crate) fn new(observation: Arc<Observation>, spawn: Spawn) -> Arc<Self> {
        Arc::new(SseShared {
            sessions: Mutex::new(HashMap::new()),
            observation,
            spawn,
        })
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, SseSession>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes the session when the client's event stream goes away, which ends
/// the rmcp service and so reports the connection closed.
struct SessionGuard {
    id: String,
    shared: Arc<SseShared>,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.shared.sessions().remove(&self.id);
    }
}

/// `GET /sse`: a new session, announced by its `endpoint` event.
pub(crate) async fn open(
    State(shared): State<Arc<SseShared>>,
    extensions: axum::http::Extensions,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let id = random_hex();
    let (in_tx, in_rx) = mpsc::channel::<ClientJsonRpcMessage>(CHANNEL_DEPTH);
    let (out_tx, out_rx) = mpsc::channel::<ServerJsonRpcMessage>(CHANNEL_DEPTH);
    let peer = extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0);
    let connection = shared.observation.sse_connection(&id, peer);
    if let Some(caller) = extensions.get::<crate::credential::Caller>() {
        connection.note_caller(*caller);
    }
    shared.sessions().insert(
        id.clone(),
        SseSession {
            inbound: in_tx,
            connection: Arc::clone(&connection),
        },
    );
    (shared.spawn)(connection, Io::Channel(out_tx, in_rx));

    let endpoint = Event::default()
        .event("endpoint")
        .data(format!("/message?sessionId={id}"));
    let guard = SessionGuard {
        id,
        shared: Arc::clone(&shared),
    };
    let messages = stream::unfold((out_rx, guard), |(mut rx, guard)| async move {
        let message = rx.recv().await?;
        let event = match serde_json::to_string(&message) {
            Ok(json) => Event::default().event("message").data(json),
            Err(err) => Event::default().comment(format!("unserializable message: {err}")),
        };
        Some((Ok(event), (rx, guard)))
    });
    Sse::new(stream::once(async move { Ok(endpoint) }).chain(messages))
        .keep_alive(KeepAlive::default())
}

/// `POST /message?sessionId=…`: one JSON-RPC message from the client.
pub(crate) async fn post(
    State(shared): State<Arc<SseShared>>,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let Some(id) = query.get("sessionId") else {
        return (StatusCode::BAD_REQUEST, "missing sessionId").into_response();
    };
    let session = shared
        .sessions()
        .get(id)
        .map(|s| (s.inbound.clone(), Arc::clone(&s.connection)));
    let Some((inbound, connection)) = session else {
        return (StatusCode::NOT_FOUND, "unknown or closed session").into_response();
    };
    let message: ClientJsonRpcMessage = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(err) => {
            connection.exchange(tether_core::traffic::Exchange::Unreadable {
                summary: format!("unparseable JSON-RPC message over SSE: {err}"),
            });
            return (StatusCode::BAD_REQUEST, "invalid JSON-RPC message").into_response();
        }
    };
    match inbound.send(message).await {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(_) => (StatusCode::GONE, "session closed").into_response(),
    }
}
