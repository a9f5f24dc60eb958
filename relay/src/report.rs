//! What the relays observed, as evidence: [`Reporter`] turns one relayed
//! server's observations (from the stdio relay's channel or the HTTP
//! relay alike) into evidence for its row, its tool definitions into its
//! catalog, and served requests into the host's `ServedObserver` ([`Outlet`]).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tether_core::model::{ClientInfo, Evidence};
use tether_core::served::{
    RequestIdent, Served, ServedObserver, ServedOutcome, ServedRequest, ServedSession,
    TraceContext, bounded, protocol_word,
};
use tether_core::store::Store;
use tether_core::traffic::{self, Exchange};
use tether_core::vocab::{EvidenceKind, Provenance, ReasonCode, Transport};
use tether_guard::random_hex;
use tether_hub::EvidenceSink;

use crate::frames::Observation;

/// Where every relay's observations go, one per host: the host's served
/// observer, and the count of those that could not become evidence.
#[derive(Default)]
pub(crate) struct Outlet {
    pub(crate) served: Mutex<Option<Arc<dyn ServedObserver>>>,
    /// Observations that could not become evidence (the attempt was gone or the sink full).
    pub(crate) not_published: AtomicU64,
    /// The host's store, where listings are compared with their server's
    /// pins (`RelayHost::pin_with`); none: no comparison.
    pub(crate) pins: Mutex<Option<Arc<dyn Store>>>,
}

/// Turns one relayed server's observations into evidence for its row (and
/// request metrics), for the stdio relay's channel and the HTTP relay alike.
pub(crate) struct Reporter {
    outlet: Arc<Outlet>,
    sink: Arc<Mutex<Option<EvidenceSink>>>,
    server_name: String,
    server: Arc<str>,
    /// The real server's sanitized target (the relay's own never shows).
    target: String,
    /// The server's serverInfo.name, once initialize answered.
    server_info: Option<String>,
    connection: String,
    transport: Transport,
    protocol: Option<String>,
    /// tools/list pages so far (None once a page came without its tools).
    listed: Option<Vec<serde_json::Value>>,
    opened: Instant,
}

impl Reporter {
    pub(crate) fn new(
        outlet: Arc<Outlet>,
        server_name: String,
        target: String,
        transport: Transport,
        sink: Arc<Mutex<Option<EvidenceSink>>>,
    ) -> Self {
        Reporter {
            outlet,
            sink,
            target,
            server_info: None,
            server: Arc::from(server_name.as_str()),
            server_name,
            connection: format!("relay_{}", random_hex(8)),
            transport,
            protocol: None,
            listed: None,
            opened: Instant::now(),
        }
    }

    fn sink(&self) -> Option<EvidenceSink> {
        self.sink.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn publish(&self, evidence: Evidence) {
        let evidence = evidence
            .server(self.server_name.clone())
            .connection(self.connection.clone())
            .provenance(Provenance::Relay);
        let sent = self
            .sink()
            .is_some_and(|sink| sink.publish(evidence).is_ok());
        if !sent {
            self.outlet.not_published.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The store to compare listings in and the server's identity
    /// (`NAME@TARGET`), once both are known.
    fn pinning(&self) -> Option<(Arc<dyn Store>, String)> {
        let store = self
            .outlet
            .pins
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        let name = self.server_info.as_deref()?;
        Some((store, tether_core::pins::server_key(name, &self.target)))
    }

    fn served_observer(&self) -> Option<Arc<dyn ServedObserver>> {
        self.outlet
            .served
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// One observation, as evidence (never blocks: a full or gone sink drops
    /// it and counts).
    pub(crate) fn report(&mut self, observation: Observation) {
        let now = tether_hub::now();
        match observation {
            Observation::Initialized {
                client_name,
                client_version,
                protocol_version,
                server_name,
                ..
            } => {
                self.protocol.clone_from(&protocol_version);
                if server_name.is_some() {
                    self.server_info = server_name;
                }
                let client = client_name.map(|name| ClientInfo {
                    name,
                    version: client_version,
                    protocol_version,
                });
                self.publish(traffic::evidence(Exchange::Initialized { client }, now));
            }
            Observation::ToolsListed { count, more, tools } => {
                self.publish(traffic::evidence(
                    Exchange::ToolsListed {
                        count,
                        client: None,
                    },
                    now,
                ));
                // The catalog (what these tools cost the model) once the
                // last page is in; built off the reading path.
                let complete = tools.len() == count as usize;
                self.listed = match (self.listed.take(), complete) {
                    (Some(mut so_far), true) => {
                        so_far.extend(tools);
                        Some(so_far)
                    }
                    (None, true) => Some(tools),
                    (_, false) => None,
                };
                if !more
                    && let (Some(all), Some(sink)) = (self.listed.take(), self.sink())
                    && let Ok(runtime) = tokio::runtime::Handle::try_current()
                {
                    let server = self.server_name.clone();
                    let pinning = self.pinning();
                    let connection = self.connection.clone();
                    runtime.spawn_blocking(move || {
                        if let Some((store, key)) = pinning {
                            for evidence in pin_changes(&*store, &key, &all, now) {
                                let evidence = evidence
                                    .server(server.clone())
                                    .connection(connection.clone())
                                    .provenance(Provenance::Relay);
                                if let Err(err) = sink.publish(evidence) {
                                    tracing::debug!(%err, "relayed pin change not queued");
                                }
                            }
                        }
                        let catalog = tether_catalog::build_catalog(&all, now);
                        if let Err(err) = sink.publish_catalog(server, catalog) {
                            tracing::debug!(%err, "relayed catalog not queued");
                        }
                    });
                }
            }
            Observation::ToolCall { tool, ok } => {
                self.publish(traffic::evidence(Exchange::ToolCalled { tool, ok }, now));
            }
            Observation::ProtocolError {
                method,
                code,
                message,
            } => self.publish(traffic::evidence(
                Exchange::Refused {
                    method,
                    code,
                    message,
                },
                now,
            )),
            Observation::SpawnFailed {
                reason_code,
                summary,
            } => self.publish(
                Evidence::new(EvidenceKind::ExplicitError, now)
                    .reason(ReasonCode::parse(&reason_code), Some(summary)),
            ),
            Observation::Served {
                method,
                tool,
                request_id,
                duration_nanos,
                error_code,
                tool_error,
            } => {
                if let Some(observer) = self.served_observer() {
                    let outcome = ServedOutcome::of(error_code, tool_error);
                    let end = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
                    observer.served(Served::Request(ServedRequest {
                        server: Arc::clone(&self.server),
                        method: Cow::Owned(bounded(method).unwrap_or_else(|| "custom".into())),
                        tool: tool.and_then(bounded),
                        request_id: request_id.and_then(bounded).map(RequestIdent::Text),
                        protocol_version: self.protocol.as_deref().and_then(protocol_word),
                        session_id: None,
                        transport: self.transport.clone(),
                        client_address: None,
                        client_port: None,
                        start_unix_nanos: end.saturating_sub(duration_nanos),
                        duration_nanos,
                        outcome,
                        trace: TraceContext::default(),
                        owner: None,
                    }));
                }
            }
        }
    }

    /// The relayed connection ended (the stdio relay's channel closed).
    pub(crate) fn closed(self) {
        self.publish(traffic::evidence(Exchange::Closed, tether_hub::now()));
        if let Some(observer) = self.served_observer() {
            observer.served(Served::SessionClosed(ServedSession {
                server: Arc::clone(&self.server),
                transport: self.transport.clone(),
                protocol_version: self.protocol.as_deref().and_then(protocol_word),
                duration_nanos: u64::try_from(self.opened.elapsed().as_nanos()).unwrap_or(u64::MAX),
                owner: None,
            }));
        }
    }
}

/// A full listing of the server `key` compared with `store`'s pins (and
/// written back): its changes as evidence, none on its first sighting.
/// Hashes only reach the store; a store that cannot is said once in the
/// log, and the session goes on.
pub(crate) fn pin_changes(
    store: &dyn Store,
    key: &str,
    tools: &[serde_json::Value],
    at: tether_core::model::Timestamp,
) -> Vec<Evidence> {
    let listed = tether_pins::hash_listing(tools);
    let read = || store.tool_pins(Some(key));
    let write = |rows: &[tether_core::pins::ToolPin]| store.replace_tool_pins(key, rows);
    match tether_core::pins::sight_through(read, write, key, &listed, at) {
        Ok(report) => tether_core::pins::change_evidence(&report, at),
        Err(err) => {
            tracing::debug!(%err, "tool pins not compared");
            Vec::new()
        }
    }
}
