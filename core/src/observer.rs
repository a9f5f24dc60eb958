//! The `TransportObserver` contract and the core's planning step around it.
//!
//! A plugin *decides*: for each configured server, deliver (over which
//! transport, by which means), filter or unavailable. It does not watch
//! traffic; what an agent then does with a delivered server is *observed*
//! elsewhere (the host's observed endpoint, the agent's own reports) and
//! published through the attempt's `EvidenceSink` (`tether_hub`).
//!
//! The core, not the plugin, walks the configured servers. Duplicate names are
//! settled before the plugin is asked, a missing plugin becomes
//! `unavailable/no_observer` (or `no_strategy` for passthrough kinds), a plugin
//! that skips a server becomes `unavailable/observer_omitted`, and a plugin
//! that panics becomes `unavailable/observer_omitted` for every server. There
//! is no way to answer "nothing" ([`plan`]).

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::passthrough::PassthroughStrategy;
use crate::plan::{Decision, DriveMode, Plan, PlanContext, PlannedServer, PluginDescriptor};
use crate::spec::ServerSpec;
use crate::vocab::ReasonCode;

/// The contract every agent-kind plugin implements.
///
/// Despite the name (kept from the design card), a `TransportObserver`
/// *decides* delivery; it watches no traffic. For each configured server it
/// says whether and how the agent gets it. What the agent then does is
/// observed by others: the host's observed endpoint (`tether-kandev-endpoint`)
/// sees initialize, tools/list and tool calls from the server side, and a
/// passthrough plugin's [`PassthroughStrategy::read_output`] reads the
/// agent's own status reports. All of it reaches the history as evidence
/// through the attempt's `EvidenceSink` (`tether_hub`).
///
/// An implementor is responsible for:
/// - returning a [`Decision`] for every server it is given: deliver (with the
///   transport and how), filter or unavailable, each with a stable reason code;
/// - delivering only over a transport the server actually offers;
/// - deciding deterministically: the same servers and context give the same decisions;
/// - never storing, logging or echoing secrets (env values, header values,
///   arguments, URL userinfo, paths and queries);
/// - after delivery, publishing what it observes only through the
///   `EvidenceSink` (`tether_hub`) the host hands it, never with
///   ownership ids of its own.
///
/// The core guarantees the rest: duplicate names are settled before
/// [`decide`](Self::decide) is called, skipped servers become
/// `unavailable/observer_omitted`, and a panic is contained.
pub trait TransportObserver: Send + Sync {
    /// Who this plugin is and which agent kinds it handles.
    fn descriptor(&self) -> PluginDescriptor;

    /// Decides one server.
    fn decide(&self, server: &ServerSpec, ctx: &PlanContext) -> Decision;

    /// The passthrough strategy, for plugins of CLIs run as plain processes.
    fn passthrough(&self) -> Option<&dyn PassthroughStrategy> {
        None
    }

    /// The roles its harness's plugin has (records, telemetry, census, last
    /// mile, set-up, model tap), each its own trait; the default: none.
    fn roles(&self) -> crate::harness::Roles<'_> {
        crate::harness::Roles::none()
    }

    /// Decides all servers at once; override when decisions depend on each other.
    ///
    /// Returns `(server name, decision)` pairs; the core matches them by name.
    fn decide_all(&self, servers: &[ServerSpec], ctx: &PlanContext) -> Vec<(String, Decision)> {
        servers
            .iter()
            .map(|s| (s.name.clone(), self.decide(s, ctx)))
            .collect()
    }
}

/// Plans one attempt: exactly one decision per configured server.
pub fn plan(
    observer: Option<&dyn TransportObserver>,
    servers: &[ServerSpec],
    ctx: &PlanContext,
) -> Plan {
    let mut seen = HashSet::new();
    let mut unique = Vec::new();
    let mut decided: Vec<Option<Decision>> = Vec::with_capacity(servers.len());
    for server in servers {
        if server.endpoints.is_empty() {
            decided.push(Some(Decision::unavailable(
                ReasonCode::InvalidConfig,
                "the server has no endpoint",
            )));
        } else if seen.insert(server.name.as_str()) {
            unique.push(server.clone());
            decided.push(None);
        } else {
            decided.push(Some(Decision::filter(ReasonCode::DuplicateName)));
        }
    }

    let answers = match observer {
        None => Err(missing_observer(ctx)),
        Some(obs) => {
            catch_unwind(AssertUnwindSafe(|| obs.decide_all(&unique, ctx))).map_err(|_| {
                tracing::error!(agent_kind = %ctx.agent_kind, "plugin panicked while deciding");
                Decision::unavailable(
                    ReasonCode::ObserverOmitted,
                    "the plugin panicked while deciding",
                )
            })
        }
    };

    let mut planned = Vec::with_capacity(servers.len());
    for (server, early) in servers.iter().zip(decided) {
        let decision = match early {
            Some(d) => d,
            None => match &answers {
                Err(blanket) => blanket.clone(),
                Ok(list) => list
                    .iter()
                    .find(|(name, _)| name == &server.name)
                    .map(|(_, d)| d.clone())
                    .unwrap_or_else(|| {
                        Decision::unavailable(
                            ReasonCode::ObserverOmitted,
                            "the plugin returned no decision for this server",
                        )
                    }),
            },
        };
        planned.push(settle(server, decision));
    }
    Plan { servers: planned }
}

fn missing_observer(ctx: &PlanContext) -> Decision {
    match ctx.drive_mode {
        DriveMode::Passthrough => Decision::unavailable(
            ReasonCode::NoStrategy,
            format!(
                "no passthrough strategy is registered for agent kind {}",
                ctx.agent_kind
            ),
        ),
        DriveMode::Acp => Decision::unavailable(
            ReasonCode::NoObserver,
            format!("no plugin is registered for agent kind {}", ctx.agent_kind),
        ),
    }
}

/// Binds a deliver decision to a real endpoint, or turns it into `observer_omitted`.
fn settle(server: &ServerSpec, decision: Decision) -> PlannedServer {
    let chosen = match &decision {
        Decision::Deliver { transport, .. } => match server.endpoint_for(transport) {
            Some((index, _)) => Some(index),
            None => {
                return PlannedServer {
                    spec: server.clone(),
                    decision: Decision::unavailable(
                        ReasonCode::ObserverOmitted,
                        format!("the plugin chose {transport}, which this server does not offer"),
                    ),
                    chosen: None,
                };
            }
        },
        _ => None,
    };
    PlannedServer {
        spec: server.clone(),
        decision,
        chosen,
    }
}
