//! The stdio bridge: an agent spawns `tether-bridge` as an ordinary stdio MCP
//! server, and it relays bytes, unchanged, to the host's endpoint over a
//! loopback socket. The endpoint runs the same observed rmcp server on that
//! socket, so the agent's own `initialize` (and clientInfo) is what is seen.
//!
//! The bridge proves it was started by the host with a token it reads from
//! its environment ([`TOKEN_ENV`]): the current attempt's credential. The
//! token grants nothing but the right to connect, a superseded attempt's token
//! is refused, and ownership still comes from the endpoint's bound sink.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::report::Observation;
use crate::wire::{Io, Spawn};

/// The first line a bridge sends: `TETHER-BRIDGE/1 <token>`.
pub const HELLO: &str = "TETHER-BRIDGE/1";
/// The endpoint's answer to a good hello.
pub const ACCEPTED: &str = "TETHER-BRIDGE/1 OK";
/// The endpoint's answer to a bad hello.
pub const REFUSED: &str = "TETHER-BRIDGE/1 REFUSED";
/// The environment variable that carries the token to the bridge.
pub const TOKEN_ENV: &str = "TETHER_BRIDGE_TOKEN";
/// The bridge's flag naming the endpoint's bridge address.
pub const CONNECT_FLAG: &str = "--connect";

const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
const HELLO_MAX_BYTES: u64 = 256;

/// Accepts bridge connections until cancelled.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    observation: Arc<Observation>,
    spawn: Spawn,
    cancel: CancellationToken,
) {
    loop {
        // An accept error is waited out, never spun on (out of files).
        let (stream, _) = tokio::select! {
            _ = cancel.cancelled() => return,
            accepted = tether_guard::accept(&listener) => accepted,
        };
        let observation = Arc::clone(&observation);
        let spawn = Arc::clone(&spawn);
        tokio::spawn(async move {
            let _ = stream.set_nodelay(true);
            let (read, write) = stream.into_split();
            let mut reader = BufReader::new(read);
            let mut line = String::new();
            let hello = tokio::time::timeout(HELLO_TIMEOUT, async {
                (&mut reader)
                    .take(HELLO_MAX_BYTES)
                    .read_line(&mut line)
                    .await
            })
            .await;
            let mut write = write;
            let presented = match hello {
                Ok(Ok(_)) => line
                    .trim_end()
                    .strip_prefix(HELLO)
                    .and_then(|rest| rest.strip_prefix(' ')),
                _ => None,
            };
            let caller = match observation.gate().check(presented) {
                Ok(caller) => caller,
                Err(refusal) => {
                    tracing::debug!(?refusal, "bridge connection refused");
                    observation.refused("stdio", refusal);
                    let _ = write.write_all(format!("{REFUSED}\n").as_bytes()).await;
                    return;
                }
            };
            if write
                .write_all(format!("{ACCEPTED}\n").as_bytes())
                .await
                .is_err()
            {
                return;
            }
            let connection = observation.connection();
            connection.note_caller(caller);
            spawn(connection, Io::Tcp(reader, write));
        });
    }
}

use tokio::io::AsyncReadExt as _;

/// Why the bridge could not relay.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The endpoint did not accept the connection.
    #[error("cannot reach the Tether endpoint at {addr}: {source}")]
    Connect {
        /// Where it tried.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The endpoint refused the token (or answered nothing sensible).
    #[error("the Tether endpoint at {0} refused this bridge (wrong or stale {TOKEN_ENV})")]
    Refused(SocketAddr),
    /// Relaying failed mid-way.
    #[error("relay failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Relays this process's stdin/stdout to the endpoint until either side ends.
pub async fn relay(addr: SocketAddr, token: &str) -> Result<(), BridgeError> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|source| BridgeError::Connect { addr, source })?;
    stream.set_nodelay(true)?;
    let (from_endpoint, mut to_endpoint) = stream.into_split();
    to_endpoint
        .write_all(format!("{HELLO} {token}\n").as_bytes())
        .await?;
    // Wait for the verdict before relaying anything, so a refusal is explicit.
    let mut from_endpoint = BufReader::new(from_endpoint);
    let mut answer = String::new();
    let read = tokio::time::timeout(HELLO_TIMEOUT, async {
        (&mut from_endpoint)
            .take(HELLO_MAX_BYTES)
            .read_line(&mut answer)
            .await
    })
    .await;
    if !matches!(read, Ok(Ok(_))) || answer.trim_end() != ACCEPTED {
        return Err(BridgeError::Refused(addr));
    }
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    let upstream = async {
        tokio::io::copy(&mut stdin, &mut to_endpoint).await?;
        to_endpoint.shutdown().await
    };
    let downstream = async {
        tokio::io::copy(&mut from_endpoint, &mut stdout).await?;
        stdout.flush().await
    };
    tokio::pin!(upstream, downstream);
    tokio::select! {
        // The endpoint closed: nothing more can arrive; stop.
        done = &mut downstream => done?,
        // The agent closed stdin: let the last responses drain, briefly.
        done = &mut upstream => {
            done?;
            let _ = tokio::time::timeout(Duration::from_secs(2), downstream).await;
        }
    }
    Ok(())
}

/// The whole `tether-bridge` command: `--connect 127.0.0.1:PORT`, token from
/// [`TOKEN_ENV`]. Returns the process exit code: 0 when either side ended
/// normally, 1 when the endpoint could not be reached or relaying failed, 2 on
/// a usage error. Never returns while relaying.
pub fn command_main(args: &[String]) -> i32 {
    let usage = |msg: &str| {
        eprintln!(
            "tether-bridge: {msg}\nusage: {TOKEN_ENV}=<token> tether-bridge {CONNECT_FLAG} 127.0.0.1:PORT"
        );
        2
    };
    let addr = match args {
        [flag, addr] if flag == CONNECT_FLAG => addr,
        _ => return usage("expected exactly one --connect ADDR"),
    };
    let addr: SocketAddr = match addr.parse() {
        Ok(addr) => addr,
        Err(_) => return usage("--connect takes IP:PORT"),
    };
    if !addr.ip().is_loopback() {
        return usage("--connect must name a loopback address");
    }
    let Ok(token) = std::env::var(TOKEN_ENV) else {
        return usage(&format!("{TOKEN_ENV} is not set"));
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("tether-bridge: cannot start: {err}");
            return 1;
        }
    };
    match runtime.block_on(relay(addr, &token)) {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("tether-bridge: {err}");
            1
        }
    }
}
