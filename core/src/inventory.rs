//! The configuration inventory document (`tether inventory --json`): every
//! MCP server a user's harnesses know about, as the configuration files say
//! now, with how far the configuration alone takes it (configured, enabled)
//! and, when it stops, the precise reason; plus the changes between two
//! snapshots.
//!
//! Only the document lives here. Reading configuration (scanners, safe file
//! access, the dialect readers) is `tether-inventory`'s job.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`core/`), each
//! with the test that checks it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{EndpointTestResult, ProvenanceCode, StageObservation, Timestamp};
use crate::spec::Endpoint;
use crate::vocab::{
    CapabilityKind, ConfigScope, CwdClass, EnvClass, ReasonCode, ResolvesAgainst, StageState,
    Transport,
};

/// The version of the inventory document this build writes.
pub const INVENTORY_SCHEMA_VERSION: u32 = 1;

// ---------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------

/// The stages an inventory row can speak to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
/// Each stage is the same [`StageObservation`] attachment rows use: a state,
/// what showed it, and when.
pub struct InventoryStages {
    /// A configuration file names the server.
    pub configured: StageObservation,
    /// The thing is on disk where the harness loads it from (a plugin's
    /// install); `n/a` for what a configuration entry alone makes.
    #[serde(default)]
    pub installed: StageObservation,
    /// The configuration (approvals, policy, trust, toggles) lets it run.
    pub enabled: StageObservation,
    /// The server accepted the credentials it was given (endpoint test only).
    pub authenticated: StageObservation,
    /// `initialize` completed (endpoint test only).
    pub initialized: StageObservation,
    /// `tools/list` answered (endpoint test only).
    pub tools_listed: StageObservation,
    /// The harness keeps the tool after its own checks and conversions: `no`
    /// only where its documented rules drop it (provenance
    /// `documented_rule`, a prediction).
    #[serde(default, skip_serializing_if = "StageObservation::is_unknown")]
    pub schema_accepted: StageObservation,
    /// The harness offers the tool in a session's model requests: `no` only
    /// where its documented rules keep it out (a prediction).
    #[serde(default, skip_serializing_if = "StageObservation::is_unknown")]
    pub current_thread: StageObservation,
    /// The model could see its tools: only an agent session can show this,
    /// so the inventory always leaves it unknown.
    pub model_visible: StageObservation,
}

/// A stage the configuration read at `at` shows (`yes` or `no`, provenance
/// `current_config`).
pub fn from_config(yes: bool, at: Timestamp) -> StageObservation {
    let state = if yes { StageState::Yes } else { StageState::No };
    StageObservation::shown(state, ProvenanceCode::CurrentConfig, at)
}

impl InventoryStages {
    /// Makes the ladder monotone ([`close_ladder`](crate::model::close_ladder)):
    /// a tool the model saw was listed, so its server was connected,
    /// enabled and configured. `installed` is off the path (it is `n/a`
    /// for what a configuration entry alone makes).
    pub fn close(&mut self) -> bool {
        use crate::vocab::ImpliedBy;
        crate::model::close_ladder(&mut [
            (ImpliedBy::LaterStage, &mut self.configured),
            (ImpliedBy::Enabled, &mut self.enabled),
            (ImpliedBy::Authenticated, &mut self.authenticated),
            (ImpliedBy::Initialized, &mut self.initialized),
            (ImpliedBy::ToolsListed, &mut self.tools_listed),
            (ImpliedBy::ModelVisible, &mut self.model_visible),
        ])
    }

    /// Configured (by the configuration read at `at`), with `enabled` as the
    /// configuration showed it; every later stage unknown.
    pub fn configured(enabled: StageObservation, at: Timestamp) -> Self {
        InventoryStages {
            configured: from_config(true, at),
            installed: StageObservation::default(),
            enabled,
            authenticated: StageObservation::default(),
            initialized: StageObservation::default(),
            tools_listed: StageObservation::default(),
            schema_accepted: StageObservation::default(),
            current_thread: StageObservation::default(),
            model_visible: StageObservation::default(),
        }
    }
}

/// An environment variable the server gets, by name only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EnvKey {
    /// The variable's name (sanitized); never its value.
    pub name: String,
    /// secret_like or plain, from the name alone.
    pub class: EnvClass,
}

/// Safe diagnostics: names and classes, never values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RowDiagnostics {
    /// A stdio server's command, basename only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Whether that command resolves (on PATH, or as a path) here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_resolves: Option<bool>,
    /// Where a stdio server's working directory points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<CwdClass>,
    /// Environment variables it gets or forwards, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvKey>,
    /// HTTP header names it sends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// Tools an allow list keeps (names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_tools: Option<Vec<String>>,
    /// Tools a deny list hides (names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_tools: Vec<String>,
    /// Other settings worth knowing (`required`, timeouts, trust), as `key=value` of non-secret settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// What a command's relative parts resolve against (hooks, plugin
    /// servers and scripts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolves_against: Option<ResolvesAgainst>,
    /// Variables a command uses that are unset here, or that nothing
    /// expands where it runs (names only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<String>,
}

/// One server, in one harness, in one scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InventoryRow {
    /// What the row is about: an MCP server (the default), one of its tools,
    /// a plugin, a skill or a hook.
    #[serde(default = "mcp_server_kind")]
    pub kind: CapabilityKind,
    /// claude, codex, opencode, cursor, gemini (or a third party's harness).
    pub harness: String,
    /// user, project, local, plugin, managed or system.
    pub scope: ConfigScope,
    /// The server's name in that configuration (sanitized).
    pub name: String,
    /// stdio, http or sse.
    pub transport: Transport,
    /// Sanitized: `scheme://host[:port]` or the command's basename.
    pub target: String,
    /// How far the configuration (and, with `--test`, an endpoint test) got.
    pub stages: InventoryStages,
    /// Why it stops, when it does.
    pub reason_code: Option<ReasonCode>,
    /// One sanitized sentence about the reason (which list, which file).
    #[serde(default)]
    pub summary: Option<String>,
    /// The file, as `~/…`, `$PROJECT/…` or a system path.
    pub source: String,
    /// Names and classes only.
    #[serde(default)]
    pub diagnostics: RowDiagnostics,
    /// The endpoint test, with `--test`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_test: Option<EndpointTestResult>,
    /// What this server's tools cost the model as this harness configures
    /// it: the listed tools' token estimate (`endpoint_test.token_method`)
    /// with the entry's tool filter applied. Only after `--test` listed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_tokens: Option<u64>,
    /// A tool row's last mile as its harness's documented rules predict it
    /// (`tether inventory --test`): its name as the model sees it, and
    /// whether the harness would offer it. A prediction, never an
    /// observation.
    // Boxed: most rows have none, and rows are moved in bulk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Box<crate::last_mile::Prediction>>,
    /// What this row bundles or holds (a plugin's servers, skills and hooks;
    /// a server's tools), as the other rows' kind and name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<CapabilityLink>,
    /// Whether a call to this server's tools (or this tool) may run, as the
    /// harness's permission and approval settings predict it: allowed,
    /// needs approval (and whether a headless run refuses it), or denied,
    /// with the rule that decides. A prediction, never an observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_policy: Option<CallPolicy>,
    /// Notes about the row that are not its reason: a hook matcher that
    /// can never match, a harness's own listing that differs from what its
    /// sessions do. Each says what showed it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<RowNote>,
    /// The real endpoint, in memory only (for `--test`); never serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub endpoint: Option<Endpoint>,
}

/// What the configuration predicts for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallVerdict {
    /// Nothing stops the call: a rule, a mode or a trust setting allows it.
    Allowed,
    /// The harness asks before the call runs.
    NeedsApproval,
    /// A rule or policy refuses the call.
    Denied,
}

impl CallVerdict {
    /// `allowed`, `needs approval` or `denied`.
    pub fn word(self) -> &'static str {
        match self {
            CallVerdict::Allowed => "allowed",
            CallVerdict::NeedsApproval => "needs approval",
            CallVerdict::Denied => "denied",
        }
    }
}

/// A call-policy prediction: what the harness's settings say of a call to a
/// server's tools, or to one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CallPolicy {
    /// allowed, needs_approval or denied.
    pub verdict: CallVerdict,
    /// Whether a headless run (`claude -p`, `gemini -p`, `codex exec`)
    /// refuses the call because nothing can answer the approval; absent
    /// when the harness's rules do not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headless_refuses: Option<bool>,
    /// `current_config` when a setting decides; `documented_rule` when the
    /// harness's default does (no setting names the call).
    pub provenance: ProvenanceCode,
    /// permission_denied, approval_required or denied_by_policy, when the
    /// call does not simply run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<ReasonCode>,
    /// The setting that decides, as written (`permissions.deny:
    /// mcp__github`), sanitized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The file it is in, as `~/…`, `$PROJECT/…` or a system path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// One sanitized sentence.
    pub summary: String,
    /// Rules that name single tools of this server, each with its own
    /// prediction (`tool` is a name, or a pattern with `*`), in the order
    /// the harness weighs them: the first that matches a tool decides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolCallPolicy>,
}

/// A prediction for the tools one rule names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallPolicy {
    /// The tool's name, or a pattern where `*` matches any run of characters.
    pub tool: String,
    /// What the rule predicts for it.
    pub policy: CallPolicy,
}

impl CallPolicy {
    /// The prediction for the tool `tool` of this server: the first tool
    /// rule that matches it, else the server's own (without tool rules).
    pub fn for_tool(&self, tool: &str) -> CallPolicy {
        let own = self
            .tools
            .iter()
            .find(|t| wildcard_match(&t.tool, tool))
            .map(|t| t.policy.clone());
        let mut policy = own.unwrap_or_else(|| self.clone());
        policy.tools.clear();
        policy
    }

    /// `needs approval (a headless run refuses it)`, `denied`, …
    pub fn verdict_words(&self) -> String {
        match (self.verdict, self.headless_refuses) {
            (CallVerdict::NeedsApproval, Some(true)) => {
                "needs approval; a headless run refuses it".to_owned()
            }
            (verdict, _) => verdict.word().to_owned(),
        }
    }
}

/// `*` matches any run of characters; everything else matches itself.
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let Some((first, rest)) = parts.split_first() else {
        return text.is_empty();
    };
    let Some(mut remaining) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for part in middle {
        match remaining.find(part) {
            Some(i) => remaining = &remaining[i + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

/// A note about a row, and what showed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RowNote {
    /// `current_config` or `documented_rule` (the harness's own code or
    /// documentation says so).
    pub provenance: ProvenanceCode,
    /// A reason code, when the note is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<ReasonCode>,
    /// One sanitized sentence.
    pub text: String,
}

fn mcp_server_kind() -> CapabilityKind {
    CapabilityKind::McpServer
}

/// An edge from one row to another (the ax `capability_edge`): by the
/// other row's kind and name, in the same harness.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityLink {
    /// The other row's kind.
    pub kind: CapabilityKind,
    /// The other row's name.
    pub name: String,
}

impl InventoryRow {
    /// Whether the configuration lets it run.
    pub fn is_enabled(&self) -> bool {
        self.stages.enabled.state == StageState::Yes
    }

    /// The identity used to compare snapshots.
    pub fn key(&self) -> (String, String, String, String) {
        // A server keeps its name as it always had; other kinds are prefixed,
        // so a hook and a server of one name stay apart.
        let name = match self.kind {
            CapabilityKind::McpServer => self.name.clone(),
            ref kind => format!("{kind}:{}", self.name),
        };
        (
            self.harness.clone(),
            self.scope.to_string(),
            name,
            self.source.clone(),
        )
    }

    /// Fills the endpoint-tested stages from a test result.
    /// Records what the listed tools cost the model, with this entry's tool
    /// filter applied.
    pub fn apply_catalog(&mut self, catalog: &crate::model::ToolCatalog) {
        self.tool_tokens = Some(catalog.kept_tokens(
            self.diagnostics.include_tools.as_deref(),
            &self.diagnostics.exclude_tools,
        ));
    }

    /// Folds in what a direct test of the endpoint (`tether mcp test`)
    /// found: authenticated, connected and tools listed as the test saw
    /// them, dated by the test, each with the test as its provenance.
    pub fn apply_test(&mut self, test: EndpointTestResult) {
        let tested = |state| StageObservation::shown(state, ProvenanceCode::EndpointTest, test.at);
        let stages = &mut self.stages;
        if test.succeeded {
            stages.authenticated = tested(StageState::Yes);
            stages.initialized = tested(StageState::Yes);
            stages.tools_listed = tested(StageState::Yes);
        } else {
            let reason = test.reason_code.clone();
            // A test that ran out of time or was stopped shows nothing either way.
            let inconclusive = matches!(
                reason,
                Some(ReasonCode::Timeout) | Some(ReasonCode::Cancelled) | None
            );
            let initialized = test.server_name.is_some() || test.protocol_version.is_some();
            stages.initialized = if initialized {
                tested(StageState::Yes)
            } else if inconclusive {
                StageObservation::default()
            } else {
                tested(StageState::No)
            };
            stages.tools_listed = if inconclusive {
                StageObservation::default()
            } else {
                tested(StageState::No)
            };
            stages.authenticated = match reason {
                Some(ReasonCode::AuthRequired) => tested(StageState::No),
                _ if initialized => tested(StageState::Yes),
                _ => StageObservation::default(),
            };
            if self.reason_code.is_none() {
                self.reason_code = test.reason_code.clone();
                self.summary = test.summary.clone();
            }
        }
        self.endpoint_test = Some(test);
    }
}

/// A configuration file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InventoryError {
    /// The harness whose file it is.
    pub harness: String,
    /// The file, as `~/…`, `$PROJECT/…` or a system path.
    pub source: String,
    /// invalid_config, file_too_large, unreadable, symlink_outside_root, symlink_loop, …
    pub reason_code: ReasonCode,
    /// Sanitized, at most 256 bytes; never file content.
    pub summary: String,
}

/// `tether inventory --json`: exactly one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "Inventory")]
pub struct InventoryDocument {
    /// The document's schema version.
    pub schema_version: u32,
    /// When the configuration was read (ms since the epoch).
    #[serde(default)]
    pub taken_at: Option<Timestamp>,
    /// One row per server per harness and scope.
    pub rows: Vec<InventoryRow>,
    /// Files that could not be used.
    pub errors: Vec<InventoryError>,
    /// What each harness's configuration costs the model before the first
    /// prompt, per scope and in all (after `--test`; enabled servers only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_totals: Vec<TokenTotal>,
}

/// The tokens a harness's enabled servers' tools cost the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenTotal {
    /// The harness.
    pub harness: String,
    /// One scope, or absent for the harness as a whole (a name configured
    /// in several scopes counted once, at its largest figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ConfigScope>,
    /// Enabled servers whose tools were listed and counted.
    pub servers: u32,
    /// Enabled servers with no figure (not tested, or the test failed): the
    /// total leaves them out, so it is a lower bound while this is not 0.
    pub unmeasured: u32,
    /// The sum of the counted servers' `tool_tokens`.
    pub tokens: u64,
}

impl InventoryDocument {
    /// Recomputes [`token_totals`](Self::token_totals) from the rows: per
    /// harness and scope, then per harness, over enabled rows only.
    pub fn compute_token_totals(&mut self) {
        let mut totals: BTreeMap<(String, Option<String>), TokenTotal> = BTreeMap::new();
        let mut largest: BTreeMap<(String, String), Option<u64>> = BTreeMap::new();
        let mut add =
            |key: (String, Option<String>), scope: Option<ConfigScope>, tokens: Option<u64>| {
                let total = totals.entry(key.clone()).or_insert(TokenTotal {
                    harness: key.0,
                    scope,
                    servers: 0,
                    unmeasured: 0,
                    tokens: 0,
                });
                match tokens {
                    Some(t) => {
                        total.servers += 1;
                        total.tokens += t;
                    }
                    None => total.unmeasured += 1,
                }
            };
        // Servers only: a tool row's tokens are its server's, and plugins,
        // skills and hooks cost the model nothing here.
        for row in self
            .rows
            .iter()
            .filter(|r| r.is_enabled() && r.kind == CapabilityKind::McpServer)
        {
            add(
                (row.harness.clone(), Some(row.scope.to_string())),
                Some(row.scope.clone()),
                row.tool_tokens,
            );
            let slot = largest
                .entry((row.harness.clone(), row.name.clone()))
                .or_insert(None);
            if let Some(t) = row.tool_tokens {
                *slot = Some(slot.map_or(t, |s| s.max(t)));
            }
        }
        for ((harness, _), tokens) in largest {
            add((harness, None), None, tokens);
        }
        self.token_totals = totals.into_values().collect();
    }

    /// Only one harness's rows and errors (what a host attaches to that agent's attempt).
    pub fn for_harness(&self, harness: &str) -> InventoryDocument {
        InventoryDocument {
            schema_version: self.schema_version,
            taken_at: self.taken_at,
            rows: self
                .rows
                .iter()
                .filter(|r| r.harness == harness)
                .cloned()
                .collect(),
            token_totals: self
                .token_totals
                .iter()
                .filter(|t| t.harness == harness)
                .cloned()
                .collect(),
            errors: self
                .errors
                .iter()
                .filter(|e| e.harness == harness)
                .cloned()
                .collect(),
        }
    }
}

// ---------------------------------------------------------------------------
// Snapshots and their differences
// ---------------------------------------------------------------------------

/// One changed field of a row present in both snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldChange {
    /// transport, target, reason_code or a stage name.
    pub field: String,
    /// The value before (display form).
    pub before: String,
    /// The value after.
    pub after: String,
}

/// A row present in both snapshots whose state changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChangedRow {
    /// Harness.
    pub harness: String,
    /// Scope.
    pub scope: ConfigScope,
    /// Server name.
    pub name: String,
    /// Source file.
    pub source: String,
    /// What changed.
    pub changes: Vec<FieldChange>,
}

/// A recorded snapshot's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SnapshotRef {
    /// The store's id for it.
    pub id: i64,
    /// When it was taken.
    pub taken_at: Timestamp,
}

/// `tether inventory --changes --json`: what changed between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "InventoryChanges")]
#[non_exhaustive]
pub struct InventoryChanges {
    /// The document's schema version.
    pub schema_version: u32,
    /// The older snapshot (null when only one exists).
    pub from: Option<SnapshotRef>,
    /// The newer snapshot.
    pub to: Option<SnapshotRef>,
    /// Rows only in the newer snapshot.
    pub added: Vec<InventoryRow>,
    /// Rows only in the older snapshot.
    pub removed: Vec<InventoryRow>,
    /// Rows in both whose state changed.
    pub changed: Vec<ChangedRow>,
}

impl InventoryChanges {
    /// What changed from the snapshot `before` to the snapshot `after`. With
    /// no earlier snapshot, everything in `after` is added and `from` is null.
    pub fn between(
        before: Option<(SnapshotRef, &InventoryDocument)>,
        after: (SnapshotRef, &InventoryDocument),
    ) -> Self {
        let empty = InventoryDocument {
            schema_version: after.1.schema_version,
            taken_at: None,
            rows: vec![],
            errors: vec![],
            token_totals: vec![],
        };
        let (from, before) = match before {
            Some((r, d)) => (Some(r), d),
            None => (None, &empty),
        };
        let mut changes = diff(before, after.1);
        changes.from = from;
        changes.to = Some(after.0);
        changes
    }
}

fn stage_word(value: &StageObservation) -> String {
    match value.provenance {
        Some(p) => format!("{} ({})", value.state.as_str(), p.word()),
        None => value.state.as_str().to_owned(),
    }
}

/// The diagnostics that differ, field by field, in a compact display form.
fn diagnostics_fields(
    a: &RowDiagnostics,
    b: &RowDiagnostics,
) -> Vec<(&'static str, String, String)> {
    fn opt<T: ToString>(v: &Option<T>) -> String {
        v.as_ref()
            .map_or_else(|| "-".to_owned(), ToString::to_string)
    }
    fn list(v: &[String]) -> String {
        if v.is_empty() {
            "-".to_owned()
        } else {
            v.join(",")
        }
    }
    let env = |d: &RowDiagnostics| {
        list(
            &d.env
                .iter()
                .map(|e| format!("{}({})", e.name, e.class.as_str()))
                .collect::<Vec<_>>(),
        )
    };
    let include = |d: &RowDiagnostics| {
        d.include_tools
            .as_deref()
            .map_or_else(|| "all".to_owned(), list)
    };
    [
        ("diagnostics.command", opt(&a.command), opt(&b.command)),
        (
            "diagnostics.command_resolves",
            opt(&a.command_resolves),
            opt(&b.command_resolves),
        ),
        (
            "diagnostics.cwd",
            opt(&a.cwd.map(|c| c.as_str())),
            opt(&b.cwd.map(|c| c.as_str())),
        ),
        ("diagnostics.env", env(a), env(b)),
        ("diagnostics.headers", list(&a.headers), list(&b.headers)),
        ("diagnostics.include_tools", include(a), include(b)),
        (
            "diagnostics.exclude_tools",
            list(&a.exclude_tools),
            list(&b.exclude_tools),
        ),
        ("diagnostics.settings", list(&a.settings), list(&b.settings)),
    ]
    .into_iter()
    .filter(|(_, x, y)| x != y)
    .collect()
}

/// The differences between two inventories, rows matched by harness, scope, name and source.
pub fn diff(before: &InventoryDocument, after: &InventoryDocument) -> InventoryChanges {
    let old: BTreeMap<_, _> = before.rows.iter().map(|r| (r.key(), r)).collect();
    let new: BTreeMap<_, _> = after.rows.iter().map(|r| (r.key(), r)).collect();
    let added = new
        .iter()
        .filter(|(k, _)| !old.contains_key(*k))
        .map(|(_, r)| (*r).clone())
        .collect();
    let removed = old
        .iter()
        .filter(|(k, _)| !new.contains_key(*k))
        .map(|(_, r)| (*r).clone())
        .collect();
    let mut changed = Vec::new();
    for (key, a) in &old {
        let Some(b) = new.get(key) else { continue };
        let mut changes = Vec::new();
        let mut field = |name: &str, x: String, y: String| {
            if x != y {
                changes.push(FieldChange {
                    field: name.to_owned(),
                    before: x,
                    after: y,
                });
            }
        };
        field(
            "transport",
            a.transport.to_string(),
            b.transport.to_string(),
        );
        field("target", a.target.clone(), b.target.clone());
        let reason = |r: &InventoryRow| {
            r.reason_code
                .as_ref()
                .map_or_else(|| "none".to_owned(), ToString::to_string)
        };
        field("reason_code", reason(a), reason(b));
        let calls = |r: &InventoryRow| {
            r.call_policy
                .as_ref()
                .map_or_else(|| "-".to_owned(), CallPolicy::verdict_words)
        };
        field("call_policy", calls(a), calls(b));
        for (name, x, y) in [
            ("configured", &a.stages.configured, &b.stages.configured),
            ("enabled", &a.stages.enabled, &b.stages.enabled),
            (
                "authenticated",
                &a.stages.authenticated,
                &b.stages.authenticated,
            ),
            ("initialized", &a.stages.initialized, &b.stages.initialized),
            (
                "tools_listed",
                &a.stages.tools_listed,
                &b.stages.tools_listed,
            ),
        ] {
            field(name, stage_word(x), stage_word(y));
        }
        for (name, x, y) in diagnostics_fields(&a.diagnostics, &b.diagnostics) {
            field(name, x, y);
        }
        if !changes.is_empty() {
            changed.push(ChangedRow {
                harness: b.harness.clone(),
                scope: b.scope.clone(),
                name: b.name.clone(),
                source: b.source.clone(),
                changes,
            });
        }
    }
    InventoryChanges {
        schema_version: INVENTORY_SCHEMA_VERSION,
        from: None,
        to: None,
        added,
        removed,
        changed,
    }
}
