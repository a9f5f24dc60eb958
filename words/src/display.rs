//! The display projection every renderer shares: labels, color classes, the
//! per-server checklist, probe verdict hints, and copy-safe diagnostics.
//! [`vocabulary`] hands the words and colors to renderers that are not Rust
//! (the reference view gets it in its page), so none spells them itself.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`core/`), each
//! with the test that checks it.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Serialize;

use tether_core::history::{AttachmentAttempt, AttachmentHistory, ServerAttachment};
use tether_core::model::Timestamp;
use tether_core::probe::Verdict;
use tether_core::sanitize::{self, Scrubber};
use tether_core::vocab::{DisplayStatus, Stage, StageState};

/// A color class for a status; the renderer maps it to real colors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ColorClass {
    /// Active or connected.
    Green,
    /// Delivered, connection unverified.
    Amber,
    /// Failed.
    Red,
    /// Filtered, unavailable or unknown.
    Gray,
}

mod capabilities;
mod tools;
pub use capabilities::{
    NEVER_SEEN, capability_row, capability_stopped, configured_as, merge_configured,
};
pub use tools::{
    CallTally, UNKNOWN_OUTCOME, call_outcome_word, pin_words, reason_words, tool_path, tool_reason,
    tool_status, tool_stopped,
};

/// One line of a server's checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ChecklistItem {
    /// The stage's wire name.
    pub stage: &'static str,
    /// Its human label.
    pub label: &'static str,
    /// yes, no, unknown or n/a.
    pub state: StageState,
    /// What showed it.
    pub provenance: Option<String>,
    /// When it was first shown.
    pub at: Option<Timestamp>,
    /// The later stage whose `yes` implied this one, when no evidence
    /// showed it itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implied_by: Option<&'static str>,
    /// A one-character mark: ✓ ✗ ? –.
    pub mark: &'static str,
}

/// One server row, ready to render.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RowView {
    /// Server name.
    pub name: String,
    /// Status.
    pub status: DisplayStatus,
    /// Human label, for example "Delivered · connection unverified".
    pub label: String,
    /// Color class.
    pub color: ColorClass,
    /// Transport and sanitized target, for example "http http://127.0.0.1:4000".
    pub target: String,
    /// Detail lines: reason, connection, client, last tool call, endpoint
    /// test, what the listed tools cost.
    pub details: Vec<String>,
    /// What the tools this server listed cost the model (o200k_base), when
    /// its tools/list was observed (the host's endpoint, or the relay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_tokens: Option<u64>,
    /// The stage checklist, in ladder order.
    pub checklist: Vec<ChecklistItem>,
    /// Its tools, one level down: each tool's last mile and what it costs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolView>,
}

/// One tool of a server row, ready to render: how far it got on its way to
/// the model, and what its definition costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ToolView {
    /// The tool's name, as its server lists it.
    pub name: String,
    /// A tool's own status ([`tool_status`]).
    pub status: DisplayStatus,
    /// Color class.
    pub color: ColorClass,
    /// Where it stopped, in words ([`tool_stopped`]).
    pub stopped: String,
    /// Its last mile in one line ([`tool_path`]).
    pub path: String,
    /// Why it stopped short of the model ([`tool_reason`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<tether_core::vocab::ReasonCode>,
    /// Whether that reason is a documented rule's prediction, not an
    /// observation.
    pub predicted: bool,
    /// What its definition costs the model, in tokens (o200k_base), where
    /// its server's listing was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    /// Calls seen, and of those the ones that failed.
    pub calls: u32,
    /// Of the calls, the ones that failed.
    pub failed_calls: u32,
    /// Of the calls, the ones whose outcome no record gives.
    #[serde(default, skip_serializing_if = "tether_core::model::is_zero")]
    pub unknown_calls: u32,
    /// Calls the model made that the harness refused (never in `calls`).
    #[serde(default, skip_serializing_if = "tether_core::model::is_zero")]
    pub refused_calls: u32,
    /// Its stages (listed, accepted, in the thread, model-visible, deferred,
    /// called), each with what showed it.
    pub checklist: Vec<ChecklistItem>,
}

/// The human label for a row.
pub fn status_label(row: &ServerAttachment) -> String {
    let reason = || {
        row.reason_code
            .as_ref()
            .map(|r| r.as_str().replace('_', " "))
            .unwrap_or_else(|| "no reason given".to_owned())
    };
    match row.status {
        DisplayStatus::Active => match row.tool_count {
            Some(1) => "Active · 1 tool".to_owned(),
            Some(n) => format!("Active · {n} tools"),
            None => "Active · tools listed".to_owned(),
        },
        DisplayStatus::Connected => "Connected · tools not listed yet".to_owned(),
        DisplayStatus::Delivered => "Delivered · connection unverified".to_owned(),
        DisplayStatus::Failed => format!("Failed · {}", reason()),
        DisplayStatus::Filtered => format!("Filtered · {}", reason()),
        DisplayStatus::Unavailable => format!("Unavailable · {}", reason()),
        // Unknown, and any status a newer core adds.
        _ => "Unknown · no evidence yet".to_owned(),
    }
}

/// [`status_label`], told within its attempt: a Delivered row whose agent
/// process exited on its own (`agent_exited` evidence) says it was delivered
/// to a process that exited, with how.
pub fn status_label_in(attempt: &AttachmentAttempt, row: &ServerAttachment) -> String {
    if row.status == DisplayStatus::Delivered
        && let Some(exit) = attempt
            .evidence
            .iter()
            .find(|e| e.kind == tether_core::vocab::EvidenceKind::AgentExited)
    {
        return match exit.summary.as_deref() {
            Some(how) => format!("Delivered · to a process that exited ({how})"),
            None => "Delivered · to a process that exited".to_owned(),
        };
    }
    status_label(row)
}

/// The color class for a status.
pub fn color_class(status: DisplayStatus) -> ColorClass {
    match status {
        DisplayStatus::Active | DisplayStatus::Connected => ColorClass::Green,
        DisplayStatus::Delivered => ColorClass::Amber,
        DisplayStatus::Failed => ColorClass::Red,
        // Filtered, unavailable, unknown, and any status a newer core adds.
        _ => ColorClass::Gray,
    }
}

/// What a tool held behind the harness's tool search, and never sent to
/// the model, is said to have done.
pub const DEFERRED_SENTENCE: &str =
    "deferred until searched: discoverable, its definition never sent to the model";

/// The color class for a stage state: yes green, no red, the rest gray.
pub fn state_color(state: StageState) -> ColorClass {
    match state {
        StageState::Yes => ColorClass::Green,
        StageState::No => ColorClass::Red,
        // Unknown, n/a, and any state a newer core adds.
        _ => ColorClass::Gray,
    }
}

/// The sentence under a row's status when it has no reason or summary of
/// its own: what the status means, in words ("" where the label says it).
pub fn status_sentence(status: DisplayStatus) -> &'static str {
    match status {
        DisplayStatus::Active => "The agent listed this server's tools: it has them.",
        DisplayStatus::Connected => "The agent connected; it has not listed the tools yet.",
        DisplayStatus::Delivered => {
            "Handed to the agent. Nothing has shown it connected: a third-party server talks to the agent directly."
        }
        // Failed, filtered, unavailable (the label says it), unknown, and
        // any status a newer core adds.
        _ => "",
    }
}

/// The five steps a person reads off the stage ladder and the last tool
/// call, in order: configured, delivered, connected (the MCP handshake:
/// the `initialized` stage), tools listed, used. `key` is the stage's wire
/// name, or `used`.
pub const STEPS: [(&str, &str); 5] = [
    ("configured", "Configured"),
    ("delivered", "Delivered"),
    ("initialized", "Connected"),
    ("tools_listed", "Tools listed"),
    ("used", "Used"),
];

/// The words and colors a renderer that is not Rust needs, from the one
/// place that defines them: each status's color and sentence, each stage
/// state's color and mark, and the five steps a person reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(title = "DisplayVocabulary")]
pub struct DisplayVocabulary {
    /// Every display status, in declaration order.
    pub statuses: Vec<StatusWords>,
    /// Every stage state.
    pub states: Vec<StateWords>,
    /// The five steps a person reads, in order.
    pub steps: Vec<StepWords>,
    /// The stage ladder's labels, in ladder order.
    pub stages: Vec<StepWords>,
}

/// One display status's color and sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StatusWords {
    /// The status.
    pub status: DisplayStatus,
    /// Its color class.
    pub color: ColorClass,
    /// [`status_sentence`].
    pub sentence: &'static str,
}

/// One stage state's color and mark.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StateWords {
    /// The state.
    pub state: StageState,
    /// Its color class.
    pub color: ColorClass,
    /// Its one-character mark: ✓ ✗ ? –.
    pub mark: &'static str,
}

/// One step or stage and its label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StepWords {
    /// The stage's wire name (or `used`).
    pub key: &'static str,
    /// Its human label.
    pub label: &'static str,
}

/// The display vocabulary ([`DisplayVocabulary`]).
pub fn vocabulary() -> DisplayVocabulary {
    DisplayVocabulary {
        statuses: DisplayStatus::ALL
            .iter()
            .map(|&status| StatusWords {
                status,
                color: color_class(status),
                sentence: status_sentence(status),
            })
            .collect(),
        states: StageState::ALL
            .iter()
            .map(|&state| StateWords {
                state,
                color: state_color(state),
                mark: mark(state),
            })
            .collect(),
        steps: STEPS
            .iter()
            .map(|&(key, label)| StepWords { key, label })
            .collect(),
        stages: Stage::ALL
            .iter()
            .map(|&stage| StepWords {
                key: stage.as_str(),
                label: stage_label(stage),
            })
            .collect(),
    }
}

fn stage_label(stage: Stage) -> &'static str {
    match stage {
        Stage::Configured => "Configured",
        Stage::Enabled => "Enabled",
        Stage::Delivered => "Delivered",
        Stage::Authenticated => "Authenticated",
        Stage::Initialized => "Initialized",
        Stage::ToolsListed => "Tools listed",
        Stage::SchemaAccepted => "Accepted by the harness",
        Stage::Callable => "Callable",
        Stage::CurrentThread => "In the thread",
        Stage::ModelVisible => "Model-visible",
    }
}

fn mark(state: StageState) -> &'static str {
    match state {
        StageState::Yes => "✓",
        StageState::No => "✗",
        StageState::NotApplicable => "–",
        // Unknown, and any state a newer core adds.
        _ => "?",
    }
}

/// One stage of a checklist, as `obs` shows it.
fn checklist_item(
    stage: &'static str,
    label: &'static str,
    obs: tether_core::model::StageObservation,
) -> ChecklistItem {
    ChecklistItem {
        stage,
        label,
        state: obs.state,
        provenance: obs.provenance.map(|p| p.word().to_string()),
        at: obs.at,
        implied_by: obs.implied_by.map(|i| i.as_str()),
        mark: mark(obs.state),
    }
}

/// The checklist for a row, in ladder order.
pub fn checklist(row: &ServerAttachment) -> Vec<ChecklistItem> {
    Stage::ALL
        .iter()
        .map(|&stage| checklist_item(stage.as_str(), stage_label(stage), *row.stages.get(stage)))
        .collect()
}

/// What a reason predicted by a documented rule, not observed, says after it.
const PREDICTED: &str = " (predicted by a documented rule)";

/// `pairs`, the stages something showed (not `unknown`), by wire name.
fn shown_stages(
    pairs: &[(&str, &tether_core::model::StageObservation)],
) -> std::collections::BTreeMap<String, tether_core::model::StageObservation> {
    pairs
        .iter()
        .filter(|(_, o)| o.state != StageState::Unknown)
        .map(|(k, o)| ((*k).to_owned(), **o))
        .collect()
}

/// Projects one row within its attempt: as [`project_row`], labelled by
/// [`status_label_in`] (a row delivered to a process that exited says so).
pub fn project_row_in(attempt: &AttachmentAttempt, row: &ServerAttachment) -> RowView {
    RowView {
        label: status_label_in(attempt, row),
        ..project_row(row)
    }
}

/// Projects one row.
pub fn project_row(row: &ServerAttachment) -> RowView {
    let mut details = Vec::new();
    if let Some(reason) = &row.reason_code {
        let mut line = format!("reason: {reason}");
        if let Some(summary) = &row.summary {
            let _ = write!(line, " — {summary}");
        }
        details.push(line);
    }
    if let Some(conn) = row.connections.last() {
        let state = match conn.closed_at {
            Some(at) => format!("closed at {at}"),
            None => "open".to_owned(),
        };
        details.push(format!(
            "connection {} ({state}); {} seen",
            conn.connection_id,
            row.connections.len()
        ));
    }
    if let Some(client) = &row.client {
        let version = client.version.as_deref().unwrap_or("?");
        details.push(format!("client: {} {version}", client.name));
    }
    if let Some(call) = &row.last_tool_call {
        let outcome = call_outcome_word(&call.outcome());
        details.push(format!(
            "last tool call: {} ({outcome}) at {}",
            call.tool, call.at
        ));
    }
    for tool in row.tools.iter().filter(|t| t.refused_calls > 0) {
        details.push(format!(
            "refused by the harness: {} {} of {} ({})",
            tool.refused_calls,
            if tool.refused_calls == 1 {
                "call"
            } else {
                "calls"
            },
            tool.name,
            CallTally::of_tool(tool).refusal_words()
        ));
    }
    for tool in &row.tools {
        if let Some(pin) = pin_words(tool) {
            details.push(format!("tool {}: {pin}", tool.name));
        }
    }
    if let Some(test) = &row.endpoint_test {
        details.push(endpoint_test_line(test));
    }
    if let Some(note) = &row.note {
        details.push(format!("note: {note}"));
    }
    let tool_tokens = row.tool_catalog.as_ref().map(|c| c.total_tokens);
    if let Some(catalog) = &row.tool_catalog {
        details.push(format!(
            "its {} tool{} cost the model ≈ {} tokens ({})",
            catalog.tool_count,
            if catalog.tool_count == 1 { "" } else { "s" },
            catalog.total_tokens,
            catalog.method
        ));
    }
    RowView {
        tool_tokens,
        name: row.name.clone(),
        status: row.status,
        label: status_label(row),
        color: color_class(row.status),
        target: format!("{} {}", row.transport, row.target),
        details,
        checklist: checklist(row),
        tools: tool_views(row),
    }
}

/// A tool's stages as the matrix and the view show them, by wire name:
/// only those something showed.
pub fn tool_stages(
    tool: &tether_core::model::ToolRow,
) -> std::collections::BTreeMap<String, tether_core::model::StageObservation> {
    shown_stages(&[
        ("tools_listed", &tool.listed),
        ("schema_accepted", &tool.schema_accepted),
        ("current_thread", &tool.current_thread),
        ("model_visible", &tool.model_visible),
        ("deferred", &tool.deferred),
        ("called", &tool.called),
        ("callable", &tool.callable),
    ])
}

/// The tool level of a row: each tool Tether knows of it (its tool rows,
/// then the tools its observed listing names that no evidence singled
/// out), with its last mile and its cost.
pub fn tool_views(row: &ServerAttachment) -> Vec<ToolView> {
    let tokens = |name: &str| {
        row.tool_catalog
            .as_ref()
            .and_then(|c| c.tools.iter().find(|t| t.name == name))
            .map(|t| t.token_estimate)
    };
    let labels: [(&'static str, &'static str); 7] = [
        ("tools_listed", "Listed"),
        ("schema_accepted", stage_label(Stage::SchemaAccepted)),
        ("current_thread", stage_label(Stage::CurrentThread)),
        ("deferred", "Deferred behind a search"),
        ("model_visible", stage_label(Stage::ModelVisible)),
        ("called", "Called"),
        ("callable", "Reached its server"),
    ];
    let view = |tool: &tether_core::model::ToolRow| {
        let stages = tool_stages(tool);
        let status = tool_status(row.status, tool);
        let stopped = stopped_and_pinned(tool);
        ToolView {
            name: tool.name.clone(),
            status,
            color: color_class(status),
            stopped,
            path: tool_path(&stages),
            predicted: tool.is_predicted(),
            reason_code: tool_reason(tool),
            tokens: tokens(&tool.name),
            calls: tool.calls,
            failed_calls: tool.failed_calls,
            unknown_calls: tool.unknown_calls,
            refused_calls: tool.refused_calls,
            checklist: labels
                .iter()
                .map(|&(stage, label)| {
                    checklist_item(stage, label, stages.get(stage).copied().unwrap_or_default())
                })
                .collect(),
        }
    };
    let mut views: Vec<ToolView> = row.tools.iter().map(view).collect();
    if let Some(catalog) = &row.tool_catalog {
        for listed in catalog
            .tools
            .iter()
            .filter(|c| !row.tools.iter().any(|t| t.name == c.name))
        {
            let mut tool = tether_core::model::ToolRow::new(listed.name.clone());
            tool.listed = tether_core::model::StageObservation::shown(
                StageState::Yes,
                row.stages
                    .tools_listed
                    .provenance
                    .unwrap_or(tether_core::model::ProvenanceCode::SessionEvent),
                catalog.at,
            );
            views.push(view(&tool));
        }
    }
    views
}

fn endpoint_test_line(test: &tether_core::model::EndpointTestResult) -> String {
    if test.succeeded {
        let tools = test.tool_count.unwrap_or(0);
        format!(
            "endpoint test (reachability only): passed, {tools} tool{}, {} ms",
            if tools == 1 { "" } else { "s" },
            test.elapsed_ms
        )
    } else {
        format!(
            "endpoint test (reachability only): failed, {}{}",
            test.reason_code
                .as_ref()
                .map_or("no reason", |r| r.as_str()),
            test.summary
                .as_deref()
                .map(|s| format!(" — {s}"))
                .unwrap_or_default()
        )
    }
}

/// Who showed a row's furthest stage: the server side (the traffic was
/// seen), the agent's own report, or nobody beyond the plan.
pub fn vouched_by(row: &ServerAttachment) -> &'static str {
    use tether_core::model::ProvenanceCode;
    let stages = &row.stages;
    if row.status == DisplayStatus::Failed {
        // Who said it failed: the agent's own report, or an explicit error
        // that named this server.
        let said_by = |code| {
            [&stages.initialized, &stages.authenticated]
                .into_iter()
                .any(|s| s.state == StageState::No && s.provenance == Some(code))
        };
        return if said_by(ProvenanceCode::AgentReport) {
            "agent report"
        } else if said_by(ProvenanceCode::HarnessTelemetry) {
            "the harness's own telemetry"
        } else {
            "an explicit error naming it"
        };
    }
    let shown = [&stages.tools_listed, &stages.initialized, &stages.delivered]
        .into_iter()
        .find(|stage| stage.state == StageState::Yes)
        .and_then(|stage| stage.provenance);
    match shown {
        Some(ProvenanceCode::SessionEvent) if stages.initialized.state == StageState::Yes => {
            "server side"
        }
        Some(ProvenanceCode::AgentReport) => "agent report",
        Some(ProvenanceCode::HarnessTelemetry) => "the harness's own telemetry",
        Some(ProvenanceCode::Relay) if stages.initialized.state == StageState::Yes => {
            "relay (the server's own traffic)"
        }
        Some(_) | None => "no evidence beyond delivery",
    }
}

/// A session's server rows that did not start because their command was
/// not found, told why in today's configuration's own sentence (`tether
/// inventory`'s: on no folder of PATH, and the near name on PATH meant,
/// or a path where no file is), so `sessions show` and `run` say what
/// `inventory` says. Only where the configuration row of the same harness
/// and name says the same code; other rows are left as they are.
pub fn with_config_reasons(
    rows: &mut [tether_core::records::MatrixRow],
    config: &[tether_core::inventory::InventoryRow],
    harness: &str,
) {
    use tether_core::vocab::{CapabilityKind, ReasonCode};
    for row in rows.iter_mut().filter(|r| {
        r.kind == CapabilityKind::McpServer && r.reason_code == Some(ReasonCode::CommandNotFound)
    }) {
        let said = config
            .iter()
            .filter(|c| c.kind == CapabilityKind::McpServer && c.harness == harness)
            .filter(|c| c.name == row.name && c.reason_code == row.reason_code)
            .find_map(|c| c.summary.as_deref());
        if let Some(said) = said {
            row.stopped = format!("failed to start: {said}");
        }
    }
}

/// Where a row stopped, in words a user can act on: "needs auth",
/// "failed to start: command not found", "connected, but its tools never
/// reached the model", "used: 3 calls, 1 failed". Said only as far as the
/// evidence goes: where nothing shows whether the model saw its tools, it
/// says so.
pub fn stopped(row: &ServerAttachment) -> String {
    use tether_core::vocab::ReasonCode as R;
    let stages = &row.stages;
    let tally = CallTally::of_row(row);
    let reason = || {
        row.reason_code
            .as_ref()
            .map(|r| r.as_str().replace('_', " "))
            .unwrap_or_else(|| "no reason given".to_owned())
    };
    if tally.calls > 0 {
        return tally.used();
    }
    if tally.refused > 0 {
        return tally.refused_sentence();
    }
    // A variable the configuration needs is not set: said first, on every
    // row that nothing shows working.
    let unset = || {
        row.summary
            .clone()
            .unwrap_or_else(|| "a variable it needs is not set here".to_owned())
    };
    match row.status {
        DisplayStatus::Failed => match row.reason_code {
            Some(R::UnresolvedVariable) => format!("failed: {}", unset()),
            Some(R::AuthRequired) => "needs auth".to_owned(),
            Some(R::OauthRequired) => "needs an OAuth login".to_owned(),
            Some(R::CommandNotFound | R::ProcessStartFailed) => {
                format!("failed to start: {}", reason())
            }
            // The harness said only that it failed; its reader's sentence
            // says what to look at instead (OpenCode: `opencode mcp list`).
            Some(R::AgentReportedFailed) if row.summary.is_some() => format!(
                "failed to connect: {} ({})",
                reason(),
                row.summary.as_deref().unwrap_or_default()
            ),
            _ if stages.initialized.state != StageState::Yes => {
                format!("failed to connect: {}", reason())
            }
            _ => format!("failed: {}", reason()),
        },
        DisplayStatus::Filtered => format!("filtered: {}", reason()),
        DisplayStatus::Unavailable => format!("not given to the agent: {}", reason()),
        DisplayStatus::Active | DisplayStatus::Connected
            if !row.tools.is_empty() && row.tools.iter().all(|t| t.is_deferred()) =>
        {
            format!(
                "its {} tool{} held behind the tool search; none loaded",
                row.tools.len(),
                if row.tools.len() == 1 { "" } else { "s" }
            )
        }
        DisplayStatus::Active | DisplayStatus::Connected => {
            if stages.model_visible.state == StageState::Yes {
                "its tools reached the model; not called".to_owned()
            } else if stages.model_visible.state == StageState::No {
                "connected, but its tools never reached the model".to_owned()
            } else if row.status == DisplayStatus::Active {
                "tools listed; not called (nothing shows whether the model saw them)".to_owned()
            } else {
                "connected; not called (nothing shows whether the model saw its tools)".to_owned()
            }
        }
        DisplayStatus::Delivered | DisplayStatus::Unknown
            if row.reason_code == Some(R::UnresolvedVariable) =>
        {
            if stages.delivered.state == StageState::Yes {
                format!(
                    "given to the agent, but {}; nothing shows it connected",
                    unset()
                )
            } else {
                format!(
                    "configured, but {}; nothing shows the session used it",
                    unset()
                )
            }
        }
        DisplayStatus::Delivered => {
            with_note("given to the agent; nothing shows it connected", row)
        }
        // Unknown, and any status a newer core adds.
        _ => {
            if stages.delivered.state == StageState::Yes {
                with_note("given to the agent; nothing shows it connected", row)
            } else {
                with_note("configured; nothing shows the session used it", row)
            }
        }
    }
}

/// `sentence`, then the row's note where it has one (a harness's warning
/// that the server was slow to connect, say): said beside the silence,
/// never in its place.
fn with_note(sentence: &str, row: &ServerAttachment) -> String {
    match &row.note {
        Some(note) => format!("{sentence} ({note})"),
        None => sentence.to_owned(),
    }
}

/// Where a tool stopped ([`tool_stopped`]), and how its definition
/// differs from its server's pin where a source said so ([`pin_words`]).
fn stopped_and_pinned(tool: &tether_core::model::ToolRow) -> String {
    match pin_words(tool) {
        Some(pin) => format!("{}; {pin}", tool_stopped(tool)),
        None => tool_stopped(tool),
    }
}

/// One session attempt's capability matrix: a row per server, then a row
/// per tool of each server (`SERVER/TOOL`), with the stages that were shown
/// and what showed each.
pub fn matrix(attempt: &AttachmentAttempt) -> Vec<tether_core::records::MatrixRow> {
    use tether_core::vocab::CapabilityKind;
    let mut rows = Vec::new();
    for server in &attempt.servers {
        let s = &server.stages;
        let tally = CallTally::of_row(server);
        rows.push(tether_core::records::MatrixRow {
            kind: CapabilityKind::McpServer,
            name: server.name.clone(),
            status: server.status,
            reason_code: server.reason_code.clone(),
            stopped: stopped(server),
            stages: shown_stages(&[
                ("configured", &s.configured),
                ("enabled", &s.enabled),
                ("delivered", &s.delivered),
                ("authenticated", &s.authenticated),
                ("initialized", &s.initialized),
                ("tools_listed", &s.tools_listed),
                ("schema_accepted", &s.schema_accepted),
                ("current_thread", &s.current_thread),
                ("model_visible", &s.model_visible),
                ("callable", &s.callable),
            ]),
            calls: tally.calls,
            failed_calls: tally.failed,
            unknown_calls: tally.unknown,
            refused_calls: tally.refused,
            plugin: None,
            event: None,
            command: None,
            outcomes: Vec::new(),
            in_config: None,
            built_in: false,
        });
        for tool in &server.tools {
            rows.push(tether_core::records::MatrixRow {
                kind: CapabilityKind::McpTool,
                name: format!("{}/{}", server.name, tool.name),
                status: tool_status(server.status, tool),
                reason_code: tool_reason(tool),
                stopped: stopped_and_pinned(tool),
                stages: tool_stages(tool),
                calls: tool.calls,
                failed_calls: tool.failed_calls,
                unknown_calls: tool.unknown_calls,
                refused_calls: tool.refused_calls,
                plugin: None,
                event: None,
                command: None,
                outcomes: Vec::new(),
                in_config: None,
                built_in: false,
            });
        }
    }
    rows.extend(attempt.capabilities.iter().map(capability_row));
    rows
}

/// What to check, in one sentence, for a reason a user can act on (an
/// endpoint check's failures, mostly); `None` for reasons whose summary says
/// it all.
pub fn reason_hint(reason: &tether_core::vocab::ReasonCode) -> Option<&'static str> {
    use tether_core::vocab::ReasonCode as R;
    Some(match reason {
        R::HostNotFound => "check the host name's spelling and this machine's DNS",
        R::EndpointNotFound => {
            "nothing is at that path: MCP servers usually answer at /mcp, legacy SSE ones at /sse"
        }
        R::MethodNotAllowed => {
            "something is at that path but does not take MCP requests: check the path, or --sse for a legacy SSE server"
        }
        R::Redirected => {
            "point the URL at where it redirects: redirects are not followed, so credentials stay put"
        }
        R::ServerError => "the server failed on its side: see its logs",
        R::AuthRequired => "it wants credentials: check the headers or token configured for it",
        R::NoCommonProtocol => {
            "it refused both server/discover (MCP 2026-07-28) and initialize (legacy): it speaks neither era, or is not an MCP server"
        }
        R::ConnectionRefused => "nothing listens there: is the server running, on that port?",
        R::TlsFailed => {
            "check that the server speaks https at that port, and that its certificate is valid for the host name and not self-signed or expired"
        }
        R::NotInstalled => {
            "the configuration enables it but it is not installed: install it (or remove it from the enabled list)"
        }
        R::UnresolvedVariable => {
            "a variable its configuration uses is unset here, or nothing expands it where it runs: set it where the harness starts, or use the harness's own variable only where the harness expands it"
        }
        R::RelativeCommand => {
            "its command is a relative path, so it resolves against wherever the harness starts: make it absolute, or relative to the plugin root"
        }
        _ => return None,
    })
}

/// Why a session's records say its run failed (a report-level error: its
/// model API unreachable, not logged in): `": " + the reason in Tether's
/// words + " [code]"`, or `" [code]"` where the reader had no words for it.
/// `tether run` puts it after "claude exited 1"; [`records_report_error`]
/// after "its records report an error", so every command says it alike.
pub fn report_error_why(err: &tether_core::history::ReportError) -> String {
    match &err.summary {
        Some(words) => format!(": {words} [{}]", err.reason_code),
        None => format!(" [{}]", err.reason_code),
    }
}

/// `its records report an error: <why> [code]`, as `sessions show`,
/// `check`, and `run` after an exit of 0 say it.
pub fn records_report_error(err: &tether_core::history::ReportError) -> String {
    format!("its records report an error{}", report_error_why(err))
}

/// The report-level error of a session's current attempt, if its records
/// carry one.
pub fn current_report_error(
    history: &AttachmentHistory,
) -> Option<&tether_core::history::ReportError> {
    history.current()?.report_error.as_ref()
}

/// One sentence that explains a probe verdict and what to try next, for
/// every renderer of a probe report.
pub fn verdict_hint(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Active => "The agent connected to the sentinel and listed its tools.",
        Verdict::Connected => {
            "The agent initialized an MCP session with the sentinel but did not list tools within the window."
        }
        Verdict::DeliveredUnverified => {
            "The sentinel was delivered but no connection was seen within the grace window. This is not a failure: some agents connect lazily. Try a longer --grace or a --prompt."
        }
        Verdict::Filtered => {
            "The agent does not advertise this transport; try --transport auto or stdio."
        }
        Verdict::Unavailable => "The sentinel could not be offered.",
        Verdict::Failed => "An explicit error named the sentinel.",
        Verdict::AgentFailed => {
            "The agent could not start or initialize. Check the command, its environment (--env, --inherit-env) and its output below."
        }
        Verdict::SessionRefused => {
            "The agent refused the session and never connected, so nothing received the sentinel. See the session error: often the agent needs authentication (--authenticate METHOD) or a key in its environment (--env, --inherit-env)."
        }
        Verdict::AgentExited => {
            "The agent's process exited before it contacted the sentinel, so nothing it was given was used. See its exit and its last output below: often a missing key, provider or login (--env, --inherit-env)."
        }
        _ => "A verdict this version of Tether does not know: read the report's evidence.",
    }
}

/// Copy-safe plain-text diagnostics, built from the sanitized history alone.
///
/// Every line goes through the scrubber once more, so even a history written
/// by a buggy producer cannot leak a recognizable secret through a copy.
pub fn copy_diagnostics(history: &AttachmentHistory) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Tether MCP attachment diagnostics (schema {})",
        history.schema_version
    );
    let _ = writeln!(
        out,
        "session {} · task {}",
        history.session_id, history.task_id
    );
    for attempt in history.attempts.iter().rev() {
        let current = history.current_attempt_id.as_deref() == Some(&attempt.attempt_id);
        write_attempt(&mut out, attempt, current);
    }
    let scrubber = Scrubber::new();
    out.lines()
        .map(|line| sanitize::cap_with_ellipsis(&scrubber.scrub(line), 512))
        .collect::<Vec<_>>()
        .join("\n")
}

fn write_attempt(out: &mut String, attempt: &AttachmentAttempt, current: bool) {
    let _ = writeln!(
        out,
        "\nattempt {} ({}) · trigger {} · agent {} · execution {}",
        attempt.attempt_id,
        if current { "current" } else { "history only" },
        attempt.trigger,
        attempt.agent_kind,
        attempt.execution_id
    );
    let _ = writeln!(
        out,
        "  started {} · accepted {} · evidence {} kept, {} dropped{}",
        attempt.started_at,
        attempt
            .accepted_at
            .map_or("not yet".to_owned(), |t| t.to_string()),
        attempt.evidence.len(),
        attempt.dropped_evidence,
        match attempt.unattributed_evidence {
            0 => String::new(),
            n => format!(", {n} naming no row (counted, not applied)"),
        }
    );
    if let Some(err) = &attempt.report_error {
        let _ = writeln!(
            out,
            "  report-level error: {}{}",
            err.reason_code,
            err.summary
                .as_deref()
                .map(|s| format!(" — {s}"))
                .unwrap_or_default()
        );
    }
    for row in &attempt.servers {
        let view = project_row_in(attempt, row);
        let _ = writeln!(out, "  - {} [{}]: {}", view.name, view.target, view.label);
        for detail in &view.details {
            let _ = writeln!(out, "      {detail}");
        }
        let marks: Vec<String> = view
            .checklist
            .iter()
            .map(|c| format!("{} {}", c.label, c.mark))
            .collect();
        let _ = writeln!(out, "      {}", marks.join(" · "));
        write_last_mile(out, row);
    }
}

/// The last mile of a row's tools, for the copied diagnostics: how many
/// reached the model, and each tool that stopped short with its reason
/// (saying which reasons are a documented rule's prediction).
fn write_last_mile(out: &mut String, row: &ServerAttachment) {
    let visible = row
        .tools
        .iter()
        .filter(|t| t.model_visible.is_yes())
        .count();
    if visible > 0 {
        let _ = writeln!(out, "      {visible} of its tools reached the model");
    }
    for tool in &row.tools {
        let Some(reason) = tool_reason(tool) else {
            continue;
        };
        let _ = writeln!(
            out,
            "      tool {}: {reason}{}",
            tool.name,
            if tool.is_predicted() { PREDICTED } else { "" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::model::{ProvenanceCode, StageObservation};
    use tether_core::vocab::ReasonCode;

    fn row(status: DisplayStatus) -> ServerAttachment {
        // Built from its JSON, as a host outside core would.
        serde_json::from_value(serde_json::json!({
            "name": "github",
            "source": "profile",
            "transport": "http",
            "target": "https://api.example.com",
            "decision": "deliver",
            "status": status.as_str(),
        }))
        .expect("a literal row parses")
    }

    #[test]
    fn labels_and_colors_follow_the_status() {
        let mut r = row(DisplayStatus::Delivered);
        assert_eq!(status_label(&r), "Delivered · connection unverified");
        assert_eq!(color_class(r.status), ColorClass::Amber);
        r.status = DisplayStatus::Active;
        r.tool_count = Some(13);
        assert_eq!(status_label(&r), "Active · 13 tools");
        assert_eq!(color_class(r.status), ColorClass::Green);
        r.status = DisplayStatus::Filtered;
        r.reason_code = Some(ReasonCode::SseUnsupported);
        assert_eq!(status_label(&r), "Filtered · sse unsupported");
        assert_eq!(color_class(DisplayStatus::Failed), ColorClass::Red);
        assert_eq!(color_class(DisplayStatus::Unknown), ColorClass::Gray);
    }

    /// A harness that said only "failed" (OpenCode's `status=failed`):
    /// the row keeps its reader's sentence of where to look, in the text
    /// table as in JSON; without one, the bare words.
    #[test]
    fn a_bare_failure_says_its_reader_s_sentence_where_it_has_one() {
        let mut r = row(DisplayStatus::Failed);
        r.reason_code = Some(ReasonCode::AgentReportedFailed);
        assert_eq!(stopped(&r), "failed to connect: agent reported failed");
        r.summary = Some("its log says only that; `opencode mcp list` prints why".to_owned());
        assert_eq!(
            stopped(&r),
            "failed to connect: agent reported failed (its log says only that; `opencode mcp list` prints why)"
        );
    }

    #[test]
    fn checklist_lists_every_stage_in_order_with_time_and_provenance() {
        let mut r = row(DisplayStatus::Delivered);
        r.stages.delivered =
            StageObservation::shown(StageState::Yes, ProvenanceCode::SessionEvent, Timestamp(42));
        let list = checklist(&r);
        let stages: Vec<_> = list.iter().map(|c| c.stage).collect();
        assert_eq!(
            stages,
            [
                "configured",
                "enabled",
                "delivered",
                "authenticated",
                "initialized",
                "tools_listed",
                "schema_accepted",
                "callable",
                "current_thread",
                "model_visible"
            ]
        );
        assert_eq!(list[2].mark, "✓");
        assert_eq!(list[2].at, Some(Timestamp(42)));
        assert_eq!(list[2].provenance.as_deref(), Some("session_event"));
        assert_eq!(list[4].mark, "?");
    }

    #[test]
    fn the_vocabulary_covers_every_status_and_state_and_its_steps_are_stages() {
        let v = vocabulary();
        assert_eq!(v.statuses.len(), DisplayStatus::ALL.len());
        assert_eq!(v.states.len(), StageState::ALL.len());
        for words in &v.statuses {
            assert_eq!(words.color, color_class(words.status));
        }
        let stages: Vec<&str> = Stage::ALL.iter().map(|s| s.as_str()).collect();
        let keys: Vec<&str> = v.steps.iter().map(|s| s.key).collect();
        assert_eq!(
            keys,
            [
                "configured",
                "delivered",
                "initialized",
                "tools_listed",
                "used"
            ]
        );
        for key in &keys[..4] {
            assert!(stages.contains(key), "{key} is a stage");
        }
        // The same label for a stage wherever a renderer shows it.
        for step in &v.steps[..4] {
            let stage = v.stages.iter().find(|s| s.key == step.key).expect("stage");
            if step.key != "initialized" {
                assert_eq!(stage.label, step.label);
            }
        }
    }

    #[test]
    fn a_changed_definition_is_said_on_the_row_the_tool_and_the_copied_diagnostics() {
        let mut r = row(DisplayStatus::Active);
        let mut add = tether_core::model::ToolRow::new("add");
        add.definition_changes = vec![
            ReasonCode::DescriptionChanged,
            ReasonCode::InputSchemaChanged,
        ];
        let mut mul = tether_core::model::ToolRow::new("mul");
        mul.definition_changes = vec![ReasonCode::ToolAdded];
        r.tools = vec![add, mul, tether_core::model::ToolRow::new("echo")];
        let changed = "its definition changed since it was pinned: description, input schema";
        let view = project_row(&r);
        assert!(
            view.details
                .iter()
                .any(|d| d.starts_with("tool add: ") && d.contains(changed)),
            "{:?}",
            view.details
        );
        assert!(
            view.details
                .iter()
                .any(|d| d.starts_with("tool mul: new since"))
        );
        assert!(!view.details.iter().any(|d| d.starts_with("tool echo")));
        let tools = tool_views(&r);
        assert!(tools[0].stopped.contains(changed), "{}", tools[0].stopped);
        assert!(!tools[2].stopped.contains("pinned"), "echo is unchanged");
        assert_eq!(pin_words(&r.tools[2]), None);
        let mut attempt: AttachmentAttempt = serde_json::from_value(serde_json::json!({
            "attempt_id": "a1", "task_id": "t", "session_id": "s",
            "trigger": "session_new", "agent_kind": "x",
            "execution_id": "e", "started_at": 1, "updated_at": 1
        }))
        .expect("a literal attempt parses");
        attempt.servers = vec![r];
        let mut out = String::new();
        write_attempt(&mut out, &attempt, true);
        assert!(out.contains(changed), "{out}");
        // `tether sessions show`'s matrix: on the tool's own row.
        let rows = matrix(&attempt);
        let add = rows.iter().find(|m| m.name == "github/add").expect("add");
        assert!(add.stopped.contains(changed), "{}", add.stopped);
        let echo = rows.iter().find(|m| m.name == "github/echo").expect("echo");
        assert!(!echo.stopped.contains("pinned"), "{}", echo.stopped);
    }
}
