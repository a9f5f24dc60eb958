//! The host's side: a loopback channel that hands each relay its server's
//! launch spec for a one-time ticket, and turns what the relay observed into
//! evidence for that server's row (and request metrics).
//!
//! Its invariants are written once, in ARCHITECTURE.md (`relay/`), each
//! with the test that checks it.
//!
//! [`RelayHost::offer`]`(&specs, choose)` relays the servers
//! a host opts in (`Offered`: specs, `bind`, `settled`). `relay(&spec)` swaps a
//! server's stdio endpoint for `tether-relay` with a one-time ticket
//! (`ServerSpec::relayed_through`, so the row keeps the real target).
//! `RelayTicket::bind(sink)` fixes whose row the relay's observations become
//! evidence for (provenance `relay`), and served requests go to the host's
//! `ServedObserver`. `report.rs`'s `Reporter` turns either relay's observations into
//! evidence (and an HTTP server's tool definitions into its catalog).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use tether_core::history::AttachmentAttempt;
use tether_core::sanitize;
use tether_core::served::ServedObserver;
use tether_core::spec::{Endpoint, KeyValue, ServerSpec};
use tether_core::vocab::{DisplayStatus, StageState, Transport};
use tether_guard::{Token, constant_time_eq, random_hex};
use tether_hub::EvidenceSink;

use crate::frames::Observation;
use crate::http::{HttpRelay, SinkSlot, Upstream};
use crate::protocol::{Hello, HostAnswer, MAX_CHANNEL_LINE, RELAY_ENV};
use crate::report::{Outlet, Reporter};

/// An offer not redeemed within this time is forgotten.
pub const TICKET_TTL: Duration = Duration::from_secs(30 * 60);

/// Why a server cannot be relayed (the host then delivers it directly and
/// says why in the row).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelayError {
    /// The server has no endpoint at all.
    #[error("the server has no endpoint to relay")]
    NoEndpoint,
    /// An HTTP or SSE endpoint whose URL does not parse.
    #[error("its URL does not parse, so it cannot be proxied")]
    BadUrl,
    /// The HTTP relay's listener could not start.
    #[error("the HTTP relay could not start: {0}")]
    Listen(String),
}

struct Offer {
    ticket: String,
    server: String,
    command: String,
    args: Vec<String>,
    env: Vec<KeyValue>,
    cwd: Option<String>,
    sink: Option<EvidenceSink>,
    at: Instant,
}

#[derive(Default)]
pub(crate) struct State {
    offers: Mutex<Vec<Offer>>,
    outlet: Arc<Outlet>,
    connections: AtomicU64,
}

impl State {
    fn offers(&self) -> std::sync::MutexGuard<'_, Vec<Offer>> {
        self.offers.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The host's relay channel: one per host.
pub struct RelayHost {
    addr: SocketAddr,
    program: PathBuf,
    state: Arc<State>,
    /// Where HTTP relays run, whoever asks for one (sync code included).
    runtime: tokio::runtime::Handle,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RelayHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayHost")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Drop for RelayHost {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One offered relay, bound to an attempt with [`bind`](Self::bind). For an
/// HTTP server it also owns the proxy: keep it as long as the attempt.
#[derive(Clone)]
pub struct RelayTicket {
    state: Arc<State>,
    ticket: String,
    http: Option<(SinkSlot, Arc<HttpRelay>)>,
}

impl std::fmt::Debug for RelayTicket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RelayTicket(…)")
    }
}

impl RelayTicket {
    /// Evidence from this relay goes to `sink` (the attempt the server was
    /// delivered in). Call it before the agent can start the relay.
    pub fn bind(&self, sink: EvidenceSink) {
        if let Some((slot, _)) = &self.http {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(sink);
            return;
        }
        if let Some(offer) = self
            .state
            .offers()
            .iter_mut()
            .find(|o| o.ticket == self.ticket)
        {
            offer.sink = Some(sink);
        }
    }
}

impl RelayHost {
    /// Listens on 127.0.0.1 for relays started from `program` (the
    /// `tether-relay` binary; see [`relay_next_to_current_exe`]).
    pub async fn start(program: PathBuf) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State::default());
        let accept_state = Arc::clone(&state);
        let task = tokio::spawn(async move {
            // An accept error (out of files) is waited out: it used to
            // end this loop, and relays could never connect again.
            loop {
                let (stream, _) = tether_guard::accept(&listener).await;
                tokio::spawn(serve(stream, Arc::clone(&accept_state)));
            }
        });
        Ok(RelayHost {
            addr,
            program,
            state,
            runtime: tokio::runtime::Handle::current(),
            task,
        })
    }

    /// Where relays reach the host.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Request metrics for relayed servers go to `observer` too (the same
    /// [`ServedRequest`](tether_core::served::ServedRequest)s the host's own endpoint reports, so an exporter
    /// takes them unchanged).
    pub fn on_served(&self, observer: Arc<dyn ServedObserver>) {
        *self
            .state
            .outlet
            .served
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(observer);
    }

    /// Every full `tools/list` a relayed server answers is compared with
    /// its pins in `store` (`tether_core::pins`, server `NAME@TARGET` by
    /// its serverInfo and real target) and written back; what changed
    /// becomes `definition_changed` / `tools_changed` evidence on its row.
    /// Hashes only reach the store. Off the reading path.
    pub fn pin_with(&self, store: Arc<dyn tether_core::store::Store>) {
        *self
            .state
            .outlet
            .pins
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(store);
    }

    /// Observations that became no evidence so far (attempt superseded, sink full).
    pub fn not_published(&self) -> u64 {
        self.state.outlet.not_published.load(Ordering::Relaxed)
    }

    /// Relays that connected so far.
    pub fn connections(&self) -> u64 {
        self.state.connections.load(Ordering::Relaxed)
    }

    /// The server, observed through the relay. A stdio endpoint (preferred
    /// when there is one): the agent is given `tether-relay` with a one-time
    /// ticket in its environment. Else an HTTP or SSE endpoint: the agent is
    /// given a loopback proxy's URL and a relay token of its own, and the
    /// proxy adds the server's headers (see [`crate::http`]). Either way the
    /// row keeps the real server's target.
    pub fn relay(&self, spec: &ServerSpec) -> Result<(ServerSpec, RelayTicket), RelayError> {
        let stdio = spec
            .endpoints
            .iter()
            .find(|e| e.transport() == Transport::Stdio);
        let Some(real) = stdio.or(spec.endpoints.first()).cloned() else {
            return Err(RelayError::NoEndpoint);
        };
        let (command, args, env, cwd) = match &real {
            Endpoint::Stdio {
                command,
                args,
                env,
                cwd,
            } => (command, args, env, cwd),
            Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
                return self.relay_http(spec, &real, url, headers);
            }
        };
        let ticket = random_hex(32);
        {
            let mut offers = self.state.offers();
            offers.retain(|o| o.at.elapsed() < TICKET_TTL);
            offers.push(Offer {
                ticket: ticket.clone(),
                server: spec.name.clone(),
                command: command.clone(),
                args: args.clone(),
                env: env.clone(),
                cwd: cwd.clone(),
                sink: None,
                at: Instant::now(),
            });
        }
        let relay = Endpoint::Stdio {
            command: self.program.display().to_string(),
            args: Vec::new(),
            env: vec![KeyValue::new(RELAY_ENV, format!("{}/{ticket}", self.addr))],
            cwd: cwd.clone(),
        };
        Ok((
            spec.clone().relayed_through(real.clone(), relay),
            RelayTicket {
                state: Arc::clone(&self.state),
                ticket,
                http: None,
            },
        ))
    }

    fn relay_http(
        &self,
        spec: &ServerSpec,
        real: &Endpoint,
        url: &str,
        headers: &[KeyValue],
    ) -> Result<(ServerSpec, RelayTicket), RelayError> {
        let parsed = url::Url::parse(url).map_err(|_| RelayError::BadUrl)?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(RelayError::BadUrl);
        }
        let token = Token::generate();
        let slot: SinkSlot = Arc::new(Mutex::new(None));
        let reporter = Reporter::new(
            Arc::clone(&self.state.outlet),
            spec.name.clone(),
            real.target(),
            real.transport(),
            Arc::clone(&slot),
        );
        let proxy = crate::http::start(
            Upstream {
                url: parsed.clone(),
                headers: headers.to_vec(),
            },
            token.clone(),
            reporter,
            &self.runtime,
        )
        .map_err(|e| RelayError::Listen(e.to_string()))?;
        let agent_url = crate::http::agent_url(proxy.addr, &parsed);
        let agent_headers = vec![KeyValue::new("Authorization", token.bearer())];
        let relay = match real {
            Endpoint::Sse { .. } => Endpoint::Sse {
                url: agent_url,
                headers: agent_headers,
            },
            _ => Endpoint::Http {
                url: agent_url,
                headers: agent_headers,
            },
        };
        Ok((
            spec.clone().relayed_through(real.clone(), relay),
            RelayTicket {
                state: Arc::clone(&self.state),
                ticket: token.secret().to_owned(),
                http: Some((slot, Arc::new(proxy))),
            },
        ))
    }
}

/// A host's servers as offered to the agent: those it chose to observe go
/// through the relay, the rest (and those the relay cannot take) directly.
/// Keep it as long as the attempt: its tickets are what the relays redeem.
#[derive(Debug, Default)]
pub struct Offered {
    /// The specs to put in the plan, in the order given.
    pub specs: Vec<ServerSpec>,
    /// The rows (sanitized names) that go through the relay.
    pub relayed: Vec<String>,
    /// Why a server chosen for observation was delivered directly instead.
    pub notes: Vec<String>,
    tickets: Vec<RelayTicket>,
}

impl Offered {
    /// `specs` offered as they are, none relayed.
    pub fn direct(specs: &[ServerSpec]) -> Self {
        Offered {
            specs: specs.to_vec(),
            ..Offered::default()
        }
    }

    /// Sends every relay's evidence to `sink`: call it with the attempt's
    /// sink before the agent gets its servers.
    pub fn bind(&self, sink: &EvidenceSink) {
        for ticket in &self.tickets {
            ticket.bind(sink.clone());
        }
    }

    /// Whether every relayed row has settled in `attempt`: tools listed,
    /// failed, or its relay connection closed. Agents connect to servers in
    /// the background, so a host (or a probe) that wants the answer waits
    /// for this, within its own bound.
    pub fn settled(&self, attempt: Option<&AttachmentAttempt>) -> bool {
        self.relayed.iter().all(|name| {
            attempt.and_then(|a| a.server(name)).is_some_and(|row| {
                row.stages.tools_listed.state == StageState::Yes
                    || row.status == DisplayStatus::Failed
                    || row.connections.iter().any(|c| c.closed_at.is_some())
            })
        })
    }
}

impl RelayHost {
    /// Offers `specs`, relaying those `observe` picks (a host opts in per
    /// server, or for all with `|_| true`).
    pub fn offer(&self, specs: &[ServerSpec], observe: impl Fn(&ServerSpec) -> bool) -> Offered {
        let mut offered = Offered::default();
        for spec in specs {
            if !observe(spec) {
                offered.specs.push(spec.clone());
                continue;
            }
            match self.relay(spec) {
                Ok((relayed, ticket)) => {
                    offered.relayed.push(sanitize::name(&spec.name));
                    offered.specs.push(relayed);
                    offered.tickets.push(ticket);
                }
                Err(err) => {
                    offered.notes.push(format!(
                        "{}: delivered directly, not observed: {err}",
                        sanitize::name(&spec.name)
                    ));
                    // The row says so too.
                    offered.specs.push(
                        spec.clone()
                            .with_note(format!("delivered directly, not observed: {err}")),
                    );
                }
            }
        }
        offered
    }
}

/// `tether-relay` next to the running executable (or one directory up, as
/// for test binaries), like the bridge.
pub fn relay_next_to_current_exe() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let name = format!("tether-relay{}", std::env::consts::EXE_SUFFIX);
    [dir.join(&name), dir.parent()?.join(&name)]
        .into_iter()
        .find(|p| p.is_file())
}

async fn read_line(
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    cap: usize,
) -> Option<Vec<u8>> {
    let mut line = Vec::new();
    let n = (&mut *reader)
        .take(cap as u64)
        .read_until(b'\n', &mut line)
        .await
        .ok()?;
    (n > 0).then_some(line)
}

async fn serve(stream: TcpStream, state: Arc<State>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let hello = tokio::time::timeout(Duration::from_secs(5), read_line(&mut reader, 4096)).await;
    let Some(hello) = hello
        .ok()
        .flatten()
        .and_then(|l| serde_json::from_slice::<Hello>(&l).ok())
    else {
        return;
    };
    // One time: the offer leaves the table as it is redeemed.
    let offer = {
        let mut offers = state.offers();
        offers
            .iter()
            .position(|o| {
                o.sink.is_some() && constant_time_eq(o.ticket.as_bytes(), hello.ticket.as_bytes())
            })
            .map(|i| offers.remove(i))
    };
    let Some(offer) = offer else {
        let answer = HostAnswer::Refused {
            reason: "unknown ticket: used already, expired, or never issued".into(),
        };
        if let Ok(mut line) = serde_json::to_vec(&answer) {
            line.push(b'\n');
            let _ = write.write_all(&line).await;
        }
        return;
    };
    let answer = HostAnswer::Launch {
        server: offer.server.clone(),
        command: offer.command.clone(),
        args: offer.args.clone(),
        env: offer
            .env
            .iter()
            .map(|kv| (kv.name.clone(), kv.value.clone()))
            .collect(),
        cwd: offer.cwd.clone(),
    };
    let Ok(mut line) = serde_json::to_vec(&answer) else {
        return;
    };
    line.push(b'\n');
    if write.write_all(&line).await.is_err() {
        return;
    }
    state.connections.fetch_add(1, Ordering::Relaxed);
    let Some(sink) = offer.sink else {
        return;
    };
    let mut reporter = Reporter::new(
        Arc::clone(&state.outlet),
        offer.server.clone(),
        sanitize::command_target(&offer.command),
        Transport::Stdio,
        Arc::new(Mutex::new(Some(sink))),
    );
    while let Some(line) = read_line(&mut reader, MAX_CHANNEL_LINE).await {
        let Ok(observation) = serde_json::from_slice::<Observation>(&line) else {
            continue;
        };
        reporter.report(observation);
    }
    reporter.closed();
}
