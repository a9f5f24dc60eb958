//! The `TransportObserver` contract and the core's planning step around it.
//!
//! The core, not the plugin, walks the configured servers. Duplicate names are
//! settled before the plugin is asked, a missing plugin becomes
//! `unavailable/no_observer` (or `no_strategy` for passthrough kinds), a plugin
//! that skips a server becomes `unavailable/observer_omitted`, and a plugin
//! that panics becomes `unavailable/observer_omitted` for every server. There
//! is no way to answer "nothing".

use std::collections::HashSet;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::reducer::PlannedRow;
use crate::sanitize::{self, Scrubber};
use crate::vocab::{DecisionKind, ReasonCode, ServerSource, Transport};

/// A `name: value` pair whose value is secret (an env var or an HTTP header).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KeyValue {
    /// The key; stored only as a name.
    pub name: String,
    /// The value; never stored, printed or copied.
    pub value: String,
}

impl KeyValue {
    /// A pair.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        KeyValue {
            name: name.into(),
            value: value.into(),
        }
    }
}

impl fmt::Debug for KeyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=[redacted]", self.name)
    }
}

/// One way to reach an MCP server. Holds secrets: it is never stored.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum Endpoint {
    /// A child process speaking MCP on stdio.
    Stdio {
        /// The command.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Extra environment.
        #[serde(default)]
        env: Vec<KeyValue>,
        /// Working directory.
        #[serde(default)]
        cwd: Option<String>,
    },
    /// Streamable HTTP.
    Http {
        /// The URL.
        url: String,
        /// Headers to send.
        #[serde(default)]
        headers: Vec<KeyValue>,
    },
    /// Legacy HTTP+SSE.
    Sse {
        /// The SSE URL.
        url: String,
        /// Headers to send.
        #[serde(default)]
        headers: Vec<KeyValue>,
    },
}

impl Endpoint {
    /// Its transport.
    pub fn transport(&self) -> Transport {
        match self {
            Endpoint::Stdio { .. } => Transport::Stdio,
            Endpoint::Http { .. } => Transport::Http,
            Endpoint::Sse { .. } => Transport::Sse,
        }
    }

    /// Its sanitized target: `scheme://host[:port]` or the command's basename.
    pub fn target(&self) -> String {
        match self {
            Endpoint::Stdio { command, .. } => sanitize::command_target(command),
            Endpoint::Http { url, .. } | Endpoint::Sse { url, .. } => sanitize::network_target(url),
        }
    }

    /// Every value here that must never leave: args, env and header values, URL parts.
    pub fn secret_values(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            Endpoint::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                // Directories of the command and cwd can name users and projects.
                if let Some((dir, _)) = command.rsplit_once(['/', '\\']) {
                    out.push(dir.to_owned());
                }
                out.extend(args.iter().cloned());
                out.extend(env.iter().map(|kv| kv.value.clone()));
                out.extend(cwd.iter().cloned());
            }
            Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
                for kv in headers {
                    out.push(kv.value.clone());
                    // "Bearer <token>": the token alone may be echoed too.
                    out.extend(
                        kv.value
                            .split_whitespace()
                            .filter(|part| !is_auth_scheme(part))
                            .map(str::to_owned),
                    );
                }
                out.extend(url_secrets(url));
            }
        }
        out
    }
}

fn is_auth_scheme(word: &str) -> bool {
    ["bearer", "basic", "digest", "token"]
        .iter()
        .any(|scheme| word.eq_ignore_ascii_case(scheme))
}

fn url_secrets(raw: &str) -> Vec<String> {
    let Ok(url) = url::Url::parse(raw) else {
        // An unparseable URL is treated as secret whole.
        return vec![raw.to_owned()];
    };
    let mut out = Vec::new();
    if !url.username().is_empty() {
        out.push(url.username().to_owned());
    }
    out.extend(url.password().map(str::to_owned));
    if url.path() != "/" {
        out.push(url.path().to_owned());
    }
    out.extend(url.query().map(str::to_owned));
    out.extend(url.query_pairs().map(|(_, v)| v.into_owned()));
    out.extend(url.fragment().map(str::to_owned));
    out
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.transport(), self.target())
    }
}

/// One configured MCP server, as the host knows it. Holds secrets: never stored.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerSpec {
    /// The server's name.
    pub name: String,
    /// Who configured it.
    pub source: ServerSource,
    /// Ways to reach it, most preferred first; a plugin delivers at most one.
    pub endpoints: Vec<Endpoint>,
}

impl fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerSpec")
            .field("name", &self.name)
            .field("source", &self.source)
            .field("endpoints", &self.endpoints)
            .finish()
    }
}

impl ServerSpec {
    /// A server reachable one way.
    pub fn new(name: impl Into<String>, source: ServerSource, endpoint: Endpoint) -> Self {
        ServerSpec {
            name: name.into(),
            source,
            endpoints: vec![endpoint],
        }
    }

    /// Adds a less preferred way to reach the same server.
    pub fn or(mut self, endpoint: Endpoint) -> Self {
        self.endpoints.push(endpoint);
        self
    }

    /// The first endpoint of a transport, with its index.
    pub fn endpoint_for(&self, transport: &Transport) -> Option<(usize, &Endpoint)> {
        self.endpoints
            .iter()
            .enumerate()
            .find(|(_, e)| &e.transport() == transport)
    }

    /// A scrubber that knows this server's secret values.
    pub fn scrubber(&self) -> Scrubber {
        Scrubber::new().with_secrets(self.endpoints.iter().flat_map(Endpoint::secret_values))
    }
}

/// How a delivered server reaches the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// An entry in ACP `session/new`/`load` `mcpServers`.
    AcpMcpServers,
    /// A configuration file the host writes for the agent.
    ConfigFile,
    /// Command-line arguments.
    Arguments,
    /// Environment variables.
    Environment,
}

/// A plugin's answer for one server. There is no "nothing".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Offer it over `transport` (one of the server's endpoints), by `via`.
    Deliver {
        /// The transport chosen.
        transport: Transport,
        /// How it reaches the agent.
        via: Delivery,
    },
    /// Leave it out on purpose.
    Filter {
        /// Stable reason.
        reason_code: ReasonCode,
        /// Optional detail (sanitized before storage).
        #[serde(default)]
        summary: Option<String>,
    },
    /// It cannot be offered.
    Unavailable {
        /// Stable reason.
        reason_code: ReasonCode,
        /// Optional detail (sanitized before storage).
        #[serde(default)]
        summary: Option<String>,
    },
}

impl Decision {
    /// A filter decision without detail.
    pub fn filter(reason_code: ReasonCode) -> Self {
        Decision::Filter {
            reason_code,
            summary: None,
        }
    }

    /// An unavailable decision with detail.
    pub fn unavailable(reason_code: ReasonCode, summary: impl Into<String>) -> Self {
        Decision::Unavailable {
            reason_code,
            summary: Some(summary.into()),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> DecisionKind {
        match self {
            Decision::Deliver { .. } => DecisionKind::Deliver,
            Decision::Filter { .. } => DecisionKind::Filter,
            Decision::Unavailable { .. } => DecisionKind::Unavailable,
        }
    }
}

/// How an agent kind is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Harness {
    /// Spoken to over ACP.
    Acp,
    /// Run as a plain process; MCP servers go through files, args or env.
    Passthrough,
}

/// What the agent says it can take. `None` means it did not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentCapabilities {
    /// Streamable HTTP MCP servers.
    #[serde(default)]
    pub http: Option<bool>,
    /// Legacy SSE MCP servers.
    #[serde(default)]
    pub sse: Option<bool>,
    /// `session/load`.
    #[serde(default)]
    pub load_session: Option<bool>,
}

/// Everything a plugin may consider when deciding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlanContext {
    /// The agent kind being planned for.
    pub agent_kind: String,
    /// How it is driven.
    pub harness: Harness,
    /// What it advertised.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Ask the agent to use only the delivered servers (for example `--strict-mcp-config`).
    #[serde(default)]
    pub strict: bool,
}

/// A plugin's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PluginDescriptor {
    /// Unique plugin name, for example `acp-structured`.
    pub name: String,
    /// The agent kinds it handles.
    pub agent_kinds: Vec<String>,
    /// How those agents are driven.
    pub harness: Harness,
    /// The plugin's own version.
    pub version: String,
}

/// The contract every agent-kind plugin implements.
///
/// An implementor is responsible for:
/// - returning a [`Decision`] for every server it is given: deliver (with the
///   transport and how), filter or unavailable, each with a stable reason code;
/// - delivering only over a transport the server actually offers;
/// - deciding deterministically: the same servers and context give the same decisions;
/// - never storing, logging or echoing secrets (env values, header values,
///   arguments, URL userinfo, paths and queries);
/// - after delivery, publishing what it observes only through the
///   [`EvidenceSink`](crate::hub::EvidenceSink) the host hands it, never with
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
    fn passthrough(&self) -> Option<&dyn crate::passthrough::PassthroughStrategy> {
        None
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

/// One server of a plan: its configuration, the decision, and the chosen endpoint.
///
/// Serializable only to cross a plugin boundary (it holds secrets).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlannedServer {
    /// The configuration (holds secrets; never stored).
    pub spec: ServerSpec,
    /// The decision.
    pub decision: Decision,
    /// Index into `spec.endpoints` when delivered.
    pub chosen: Option<usize>,
}

impl PlannedServer {
    /// The endpoint to deliver, when the decision is deliver.
    pub fn chosen_endpoint(&self) -> Option<&Endpoint> {
        self.chosen.and_then(|i| self.spec.endpoints.get(i))
    }

    /// The sanitized row the history stores.
    pub fn row(&self) -> PlannedRow {
        let scrubber = self.spec.scrubber();
        let endpoint = self
            .chosen_endpoint()
            .or_else(|| self.spec.endpoints.first());
        let (reason_code, summary) = match &self.decision {
            Decision::Deliver { .. } => (None, None),
            Decision::Filter {
                reason_code,
                summary,
            }
            | Decision::Unavailable {
                reason_code,
                summary,
            } => (
                Some(reason_code.clone()),
                summary.as_deref().map(|s| scrubber.summary(s)),
            ),
        };
        PlannedRow {
            name: sanitize::name(&self.spec.name),
            source: self.spec.source.clone(),
            transport: endpoint.map_or(Transport::Other("none".into()), Endpoint::transport),
            target: endpoint.map_or_else(|| "none".to_owned(), Endpoint::target),
            decision: self.decision.kind(),
            reason_code,
            summary,
        }
    }
}

/// The decisions for one attempt, in configuration order, one per server.
///
/// Serializable only to cross a plugin boundary (it holds secrets).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Plan {
    /// Every configured server, each with a decision.
    pub servers: Vec<PlannedServer>,
}

impl Plan {
    /// The servers to deliver, with the endpoint chosen for each.
    pub fn delivered(&self) -> impl Iterator<Item = (&PlannedServer, &Endpoint)> {
        self.servers
            .iter()
            .filter_map(|p| p.chosen_endpoint().map(|e| (p, e)))
    }

    /// The sanitized rows.
    pub fn rows(&self) -> Vec<PlannedRow> {
        self.servers.iter().map(PlannedServer::row).collect()
    }

    /// A scrubber that knows every secret in this plan.
    pub fn scrubber(&self) -> Scrubber {
        self.servers
            .iter()
            .fold(Scrubber::new(), |acc, p| acc.merge(&p.spec.scrubber()))
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
    match ctx.harness {
        Harness::Passthrough => Decision::unavailable(
            ReasonCode::NoStrategy,
            format!(
                "no passthrough strategy is registered for agent kind {}",
                ctx.agent_kind
            ),
        ),
        Harness::Acp => Decision::unavailable(
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
