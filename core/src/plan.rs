//! A plugin's decisions and the plan they make: one decision per configured
//! server (deliver, filter or unavailable), what the agent advertised, and the
//! sanitized rows the history stores.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::reducer::PlannedRow;
pub use crate::reducer::RowNames;
use crate::sanitize::{self, Scrubber};
use crate::spec::{Endpoint, ServerSpec};
use crate::vocab::{DecisionKind, ReasonCode, Transport};

/// How a delivered server reaches the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
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
#[non_exhaustive]
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

/// How Tether drives an agent kind: over ACP, or as a plain process it
/// hands files, arguments and environment (passthrough). Not to be confused
/// with a *harness* in the inventory (claude, codex, …), which names a product.
///
/// Serialized as `"acp"`/`"passthrough"` under the key `harness`, as the
/// plugin listing and the dynamic plugin boundary have always spelled it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DriveMode {
    /// Spoken to over ACP.
    Acp,
    /// Run as a plain process; MCP servers go through files, args or env.
    Passthrough,
}

impl DriveMode {
    /// `acp` or `passthrough`, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            DriveMode::Acp => "acp",
            DriveMode::Passthrough => "passthrough",
        }
    }
}

/// What the agent says it can take. `None` means it did not say. Built
/// with [`AgentCapabilities::new`] (or `default()`, which says nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
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

impl AgentCapabilities {
    /// What an agent said of streamable HTTP, legacy SSE and `session/load`.
    pub const fn new(http: Option<bool>, sse: Option<bool>, load_session: Option<bool>) -> Self {
        AgentCapabilities {
            http,
            sse,
            load_session,
        }
    }
}

/// Everything a plugin may consider when deciding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlanContext {
    /// The agent kind being planned for.
    pub agent_kind: String,
    /// How it is driven.
    #[serde(rename = "harness")]
    pub drive_mode: DriveMode,
    /// What it advertised.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Ask the agent to use only the delivered servers (for example `--strict-mcp-config`).
    #[serde(default)]
    pub strict: bool,
}

/// A plugin's identity. Built with [`PluginDescriptor::new`]: a later
/// Tether may add a field without breaking a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct PluginDescriptor {
    /// Unique plugin name, for example `acp-structured`.
    pub name: String,
    /// The agent kinds it handles.
    pub agent_kinds: Vec<String>,
    /// How those agents are driven.
    #[serde(rename = "harness")]
    pub drive_mode: DriveMode,
    /// The plugin's own version.
    pub version: String,
}

impl PluginDescriptor {
    /// A plugin named `name`, handling `agent_kinds` (a harness's name
    /// first, then its aliases) driven by `drive_mode`, at `version`.
    pub fn new(
        name: impl Into<String>,
        agent_kinds: impl IntoIterator<Item = impl Into<String>>,
        drive_mode: DriveMode,
        version: impl Into<String>,
    ) -> Self {
        PluginDescriptor {
            name: name.into(),
            agent_kinds: agent_kinds.into_iter().map(Into::into).collect(),
            drive_mode,
            version: version.into(),
        }
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
            // A variable its configuration needs is not set: the cause to
            // show until something shows the server working anyway.
            Decision::Deliver { .. } if !self.spec.unset_vars.is_empty() => (
                Some(ReasonCode::UnresolvedVariable),
                Some(unset_summary(&unset_names(
                    &scrubber,
                    &self.spec.unset_vars,
                ))),
            ),
            // Its working directory does not exist here: no start there
            // can work, whatever its command.
            Decision::Deliver { .. } if self.spec.cwd_missing => {
                (Some(ReasonCode::CwdNotFound), Some(CWD_MISSING.to_owned()))
            }
            // Its command does not resolve here: the likely cause of a
            // failure the harness does not word (see `record_failure`).
            Decision::Deliver { .. } if self.spec.command_missing.is_some() => (
                Some(ReasonCode::CommandNotFound),
                self.spec
                    .command_missing
                    .as_deref()
                    .map(|s| scrubber.summary(s)),
            ),
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
            // A relayed server shows the server the relay reaches.
            target: self
                .spec
                .relayed
                .as_ref()
                .or(endpoint)
                .map_or_else(|| "none".to_owned(), Endpoint::target),
            decision: self.decision.kind(),
            reason_code,
            summary,
            note: self.spec.note.as_deref().map(|s| scrubber.summary(s)),
        }
    }
}

/// A row's sentence for a server whose entry's working directory does not
/// exist here.
pub const CWD_MISSING: &str = "its working directory (cwd in its entry) does not exist here, so it cannot start there: create the directory or fix the entry's cwd";

/// The unset variables' names as rows show them: sanitized, sorted and
/// unique.
pub fn unset_names(scrubber: &sanitize::Scrubber, names: &[String]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|n| scrubber.name(n)).collect();
    names.sort();
    names.dedup();
    names
}

/// `not set here: A, B`, of names [`unset_names`] made.
pub fn unset_summary(shown: &[String]) -> String {
    format!("not set here: {}", shown.join(", "))
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

    /// The sanitized rows, in plan order, each under its name from
    /// [`row_names`](Self::row_names).
    pub fn rows(&self) -> Vec<PlannedRow> {
        self.rows_named(&self.row_names())
    }

    /// [`rows`](Self::rows) under names already made by
    /// [`row_names`](Self::row_names) for this plan.
    pub fn rows_named(&self, names: &RowNames) -> Vec<PlannedRow> {
        self.servers
            .iter()
            .zip(names.shown().iter().cloned())
            .map(|(server, name)| PlannedRow {
                name,
                ..server.row()
            })
            .collect()
    }

    /// How evidence finds its row: each configured name with the name its row
    /// shows. Shown names are sanitized (patterns only) and unique per
    /// attempt: two different configured names that sanitize alike get a
    /// `~2`, `~3` suffix, while a configured name repeated (a
    /// `duplicate_name` row) keeps its first row's name.
    pub fn row_names(&self) -> RowNames {
        let mut names = RowNames::default();
        for (i, server) in self.servers.iter().enumerate() {
            let configured = &server.spec.name;
            if let Some(first) = self.servers[..i]
                .iter()
                .position(|p| &p.spec.name == configured)
            {
                let shown = names.shown()[first].clone();
                names.repeat(shown);
                continue;
            }
            names.add_unique(configured);
        }
        names
    }

    /// A scrubber that knows every secret in this plan.
    pub fn scrubber(&self) -> Scrubber {
        self.servers
            .iter()
            .fold(Scrubber::new(), |acc, p| acc.merge(&p.spec.scrubber()))
    }
}
