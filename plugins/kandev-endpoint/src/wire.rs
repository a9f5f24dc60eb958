//! What the observed endpoint's listeners hand to its rmcp server: one
//! connection's bytes ([`Io`]) and the function that starts serving it
//! ([`Spawn`]). The endpoint builds the function; the bridge listener and
//! the SSE routes call it.

use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use tokio::io::BufReader;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;

use crate::report::Connection;

/// How a connection's bytes reach the rmcp server.
pub(crate) enum Io {
    /// Legacy SSE: messages out to the event stream, messages in from `POST /message`.
    Channel(
        mpsc::Sender<ServerJsonRpcMessage>,
        mpsc::Receiver<ClientJsonRpcMessage>,
    ),
    /// The stdio bridge: a loopback socket after the hello line.
    Tcp(BufReader<OwnedReadHalf>, OwnedWriteHalf),
}

/// Starts serving one connection.
pub(crate) type Spawn = Arc<dyn Fn(Arc<Connection>, Io) + Send + Sync>;
