//! What every status, probe verdict, reason code and stage means, and what
//! to check next: the one source `tether explain CODE` prints and the user
//! guide's "my MCP tools are missing" page is generated from.
//!
//! Each table is an exhaustive `match`: a new variant does not compile until
//! it is explained here, so neither the terminal nor the book can fall
//! behind the vocabulary.

use std::fmt::Write as _;

use tether_core::history::ServerAttachment;
use tether_core::probe::Verdict;
use tether_core::vocab::{DisplayStatus, ReasonCode, Stage};

/// Which vocabulary a code belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// A server row's status (`tether probe`, the view, `tether sessions`).
    Status,
    /// The verdict of `tether probe` on its sentinel.
    Verdict,
    /// Why a row was filtered, unavailable, failed or held back.
    Reason,
    /// One step of the ladder a server climbs.
    Stage,
    /// What showed a stage (a stage's provenance).
    Provenance,
    /// Stages a row shows or a requirement (`--require SERVER:STAGE`)
    /// asks beyond the ladder's.
    Requirement,
    /// What a later listing changed against a server's pins.
    Change,
    /// What started an attempt (`tether history`, a history's `trigger`).
    Trigger,
    /// What a harness's permission settings predict of a call to a
    /// server's tools (`tether inventory`'s call policy).
    CallPolicy,
}

impl Family {
    /// Its name, as the book's headings use it.
    pub fn title(self) -> &'static str {
        match self {
            Family::Status => "Statuses",
            Family::Verdict => "Probe verdicts",
            Family::Reason => "Reason codes",
            Family::Stage => "Stages",
            Family::Provenance => "What showed a stage",
            Family::Requirement => "Stages beyond the ladder",
            Family::Change => "What changed against the pins",
            Family::Trigger => "What started an attempt",
            Family::CallPolicy => "Calls, as the permission settings predict them",
        }
    }

    /// Its name, singular and lower case.
    pub fn noun(self) -> &'static str {
        match self {
            Family::Status => "status",
            Family::Verdict => "probe verdict",
            Family::Reason => "reason code",
            Family::Stage => "stage",
            Family::Provenance => "provenance",
            Family::Requirement => "stage",
            Family::Change => "pin change",
            Family::Trigger => "trigger",
            Family::CallPolicy => "call policy",
        }
    }
}

/// One explained code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The wire form (`delivered`, `session_refused`, `auth_required`).
    pub code: &'static str,
    /// Its vocabulary.
    pub family: Family,
    /// What happened, or what it means.
    pub meaning: &'static str,
    /// What to check, or do, next.
    pub check: &'static str,
    /// One example of how Tether shows it.
    pub example: String,
}

/// Where a reason code shows, for its example.
#[derive(Clone, Copy)]
enum Seen {
    /// On a session's server row with this status.
    Row(DisplayStatus),
    /// In `tether inventory`'s REASON column.
    Inventory,
    /// In `tether endpoint-test`'s result.
    EndpointTest,
    /// On a request to the host's observed endpoint.
    Endpoint,
    /// On a session's tool row (`tether sessions show`).
    Tool,
    /// On a session's skill, hook or plugin row: its kind, and a sample.
    Capability(&'static str, &'static str),
    /// In a tool's pin comparison (`tether endpoint-test`, `tether pins list`).
    Pin,
    /// On a session's tool row whose calls the harness refused, or whose
    /// calls failed for this reason.
    Call,
}

/// A tool row as `sessions show` prints it after the model called it
/// once and the call ended for `reason`: refused before it reached the
/// server, or failed there.
fn call_example(reason: &ReasonCode) -> String {
    let mut tool = tether_core::model::ToolRow::new("get_current_time");
    let yes = tether_core::model::StageObservation::shown(
        tether_core::vocab::StageState::Yes,
        tether_core::model::ProvenanceCode::HarnessRecord,
        tether_core::model::Timestamp(1),
    );
    tool.listed = yes;
    tool.model_visible = yes;
    if matches!(reason, ReasonCode::ToolError | ReasonCode::ProtocolError) {
        tool.called = yes;
        tool.calls = 1;
        tool.failed_calls = 1;
        tool.failures = vec![reason.clone()];
    } else {
        tool.refused_calls = 1;
        tool.refusals = vec![tether_core::model::ReasonCount {
            reason_code: reason.clone(),
            calls: 1,
        }];
    }
    format!(
        "tether sessions show: time/get_current_time  {}",
        crate::display::tool_stopped(&tool)
    )
}

fn sample_row(status: DisplayStatus, reason: Option<ReasonCode>) -> ServerAttachment {
    let mut row: ServerAttachment = serde_json::from_value(serde_json::json!({
        "name": "github",
        "source": "profile",
        "transport": "stdio",
        "target": "github-mcp",
        "decision": "deliver",
        "status": status.as_str(),
    }))
    .unwrap_or_else(|_| unreachable!("a literal server row parses"));
    row.reason_code = reason;
    if status == DisplayStatus::Active {
        row.tool_count = Some(26);
    }
    row
}

fn row_example(status: DisplayStatus, reason: Option<ReasonCode>) -> String {
    let row = sample_row(status, reason);
    format!(
        "github   {}   ({})",
        crate::display::status_label(&row),
        crate::display::stopped(&row)
    )
}

/// What a display status means.
pub fn status(status: DisplayStatus) -> Entry {
    use DisplayStatus as S;
    let (meaning, check) = match status {
        S::Active => (
            "The server answered `tools/list` for this agent: something real (the host's endpoint, the relay, the harness's own report or records) saw its tools listed. It does not prove the model saw them or called one.",
            "Nothing is wrong. If the model still does not use the tools, look at `model_visible` and at the tool filter of the entry (`tether inventory --sessions`).",
        ),
        S::Connected => (
            "An MCP `initialize` was seen for this server, but no `tools/list` yet. The session is open; its tools were not fetched (yet).",
            "Give the agent a prompt that needs a tool, or wait: many agents list tools lazily. If it stays here, the server may fail `tools/list`: run `tether endpoint-test` on it.",
        ),
        S::Delivered => (
            "Tether handed the server to the agent (in the ACP session, or in the files it wrote), and nothing has shown the agent connecting to it. This is not a failure: it is the absence of evidence.",
            "Was the server observable? Only a host's endpoint, the relay, the harness's telemetry or records can show a connection. Try `tether probe` with a prompt, or turn on the harness's telemetry (`tether collect`).",
        ),
        S::Failed => (
            "An explicit error named this server: it would not start, refused the connection, wanted credentials, or broke the protocol. The reason code says which.",
            "Read the reason code's own entry (`tether explain REASON`) and the row's summary.",
        ),
        S::Filtered => (
            "A plugin decided not to give the server to this agent, with a reason: the agent cannot take its transport, a policy refused it, or a name was taken.",
            "Read the reason code: often the transport (`http_unsupported`, `sse_unsupported`). A relay (`tether relay`) can carry a server the agent cannot reach itself.",
        ),
        S::Unavailable => (
            "The server could not be offered at all: no plugin for the agent kind, no way to write its configuration, or a command that does not resolve.",
            "Read the reason code. For `no_observer` or `no_strategy`, the agent kind needs a plugin (see the plugin authors' chapter).",
        ),
        // Unknown, and any status a newer core adds.
        _ => (
            "Nothing is known about the server yet: no decision, no delivery, no contact.",
            "Wait for the session to start, or check that the host reports evidence for it at all.",
        ),
    };
    Entry {
        code: status.as_str(),
        family: Family::Status,
        meaning,
        check,
        // A status that stops has a reason; the example gives one.
        example: row_example(
            status,
            match status {
                S::Failed => Some(ReasonCode::CommandNotFound),
                S::Filtered => Some(ReasonCode::HttpUnsupported),
                S::Unavailable => Some(ReasonCode::NoStrategy),
                _ => None,
            },
        ),
    }
}

/// Every probe verdict, in the order the report ranks them.
pub const VERDICTS: [Verdict; 9] = [
    Verdict::Active,
    Verdict::Connected,
    Verdict::DeliveredUnverified,
    Verdict::Filtered,
    Verdict::Unavailable,
    Verdict::Failed,
    Verdict::AgentFailed,
    Verdict::SessionRefused,
    Verdict::AgentExited,
];

/// What a probe verdict means.
pub fn verdict(verdict: Verdict) -> Entry {
    use Verdict as V;
    let (code, meaning, check) = match verdict {
        V::Active => (
            "active",
            "The agent connected to the sentinel MCP server Tether injected, and listed its tools. Its MCP support works end to end for that transport.",
            "Nothing. Your own server's problem, if any, is with that server: `tether endpoint-test` it.",
        ),
        V::Connected => (
            "connected",
            "The agent opened an MCP session with the sentinel (`initialize`) but did not list its tools within the window.",
            "Some agents list tools only when a prompt needs them: run again with `--prompt`, or a longer `--grace`.",
        ),
        V::DeliveredUnverified => (
            "delivered_unverified",
            "The sentinel was delivered, and nothing connected within the grace window. Not a failure: some agents connect lazily, and silence proves nothing.",
            "Try a longer `--grace`, or `--prompt` so that the agent has a reason to connect.",
        ),
        V::Filtered => (
            "filtered",
            "The plugin deliberately did not deliver the sentinel: the agent does not advertise the transport.",
            "Try `--transport auto` or `--transport stdio`.",
        ),
        V::Unavailable => (
            "unavailable",
            "The sentinel could not be offered (no plugin for the agent, or nowhere to write its configuration).",
            "Check the agent kind (`tether plugins`) and the reason in the report.",
        ),
        V::Failed => (
            "failed",
            "An explicit error named the sentinel.",
            "Read the reason code and the agent's output in the report.",
        ),
        V::AgentFailed => (
            "agent_failed",
            "The agent could not start or finish ACP `initialize`.",
            "Check the command, its environment (`--env`, `--inherit-env`) and the agent's last output in the report.",
        ),
        V::SessionRefused => (
            "session_refused",
            "The agent started, then refused the session (`session/new` or `session/load`), so nothing received the sentinel.",
            "Read the session error: often the agent wants authentication (`--authenticate METHOD`) or a key in its environment (`--env`, `--inherit-env`).",
        ),
        V::AgentExited => (
            "agent_exited",
            "The agent's process exited on its own before it contacted the sentinel: it was delivered to a process that is gone.",
            "See how it exited and its last output: often a missing key, provider or login.",
        ),
        _ => (
            verdict.as_str(),
            "A verdict this version of Tether does not know.",
            "Read the report's evidence; a newer Tether explains it.",
        ),
    };
    Entry {
        code,
        family: Family::Verdict,
        meaning,
        check,
        example: format!("verdict: {code}\n{}", crate::display::verdict_hint(verdict)),
    }
}

/// Every reason code this version knows.
pub fn reason_codes() -> Vec<ReasonCode> {
    ReasonCode::KNOWN
        .iter()
        .map(|c| ReasonCode::parse(c))
        .collect()
}

mod reasons;
use reasons::{Check, REASONS};

/// What a reason code means (`None` for one this version does not know).
pub fn reason(reason: &ReasonCode) -> Option<Entry> {
    use Seen::*;
    let entry = REASONS.iter().find(|r| r.code == reason.as_str())?;
    let (code, seen, meaning) = (entry.code, entry.seen, entry.meaning);
    let check = match entry.check {
        Check::Says(words) => words,
        Check::Hint => crate_hint(reason.clone()),
        Check::Pin => PIN_CHECK,
    };
    let example = match seen {
        Row(status) => row_example(status, Some(reason.clone())),
        Inventory => format!(
            "tether inventory: the row's REASON column says {code}, and its sentence is printed under the table"
        ),
        EndpointTest => format!("tether endpoint-test: failed · {code}"),
        Endpoint => format!(
            "the attempt counts an unauthenticated request ({code}); the server stays as it was"
        ),
        Tool => format!(
            "tether sessions show: time/convert_time  unknown  {}",
            crate::display::DEFERRED_SENTENCE
        ),
        Capability(kind, sample) => format!("tether sessions show: {kind} {sample}"),
        Pin => format!("tether endpoint-test: pins   add: {code} (not yet accepted)"),
        Call => call_example(reason),
    };
    Some(Entry {
        code,
        family: Family::Reason,
        meaning,
        check,
        example,
    })
}

/// What to do about a pinned tool's changed part.
const PIN_CHECK: &str = "Read the tool's definition as the server gives it now (`tether endpoint-test --tools --json`) and the server's release notes. If the change is expected, `tether pins accept SERVER/TOOL` pins it anew; if not, stop using the server until you know why it changed.";

fn crate_hint(reason: ReasonCode) -> &'static str {
    crate::display::reason_hint(&reason).unwrap_or("Read the row's summary.")
}

/// What a stage proves.
pub fn stage(stage: Stage) -> Entry {
    let (meaning, check) = match stage {
        Stage::Configured => (
            "Someone configured the server (a host, a harness's file). Proves nothing about the agent.",
            "`tether inventory` shows every configured server and where it came from.",
        ),
        Stage::Enabled => (
            "The configuration lets it run (not disabled, not excluded, the folder trusted).",
            "`tether inventory`: the ENABLED column and the reason.",
        ),
        Stage::Delivered => (
            "It was handed to the agent: an ACP `session/new` entry, or files Tether wrote. A successful `session/new` proves delivery, never connection.",
            "If it stops here, see the `delivered` status.",
        ),
        Stage::Authenticated => (
            "The server accepted the client's credentials, or needed none.",
            "An `auth_required` reason says it did not.",
        ),
        Stage::Initialized => (
            "An MCP `initialize` (or `server/discover`) completed: the agent really connected.",
            "Shown only by an observer: the host's endpoint, the relay, the harness's report, telemetry or records.",
        ),
        Stage::ToolsListed => (
            "`tools/list` was served: the agent fetched the server's tools.",
            "The TOOLS count says how many.",
        ),
        Stage::Callable => (
            "A tool call succeeded.",
            "`tether sessions show` counts calls and failed calls per tool.",
        ),
        Stage::SchemaAccepted => (
            "The harness kept the server's tool after its own checks and conversions: it named the tool to the model, whole or behind its tool search. `no` where a rule dropped it (a name collision, an unsupported schema).",
            "`tether sessions show` gives each tool's reason; `tether explain` the reason's fix.",
        ),
        Stage::CurrentThread => (
            "The server's tool was offered in this session's model requests: sent whole, or named behind the harness's tool search (deferred, not yet visible).",
            "A deferred tool reads `deferred_until_searched`; only the harness's records, or a model tap, show it.",
        ),
        Stage::ModelVisible => (
            "The model was sent the server's tool definition (a model turn carried it, or the model called the tool). A tool held behind the harness's tool search is not visible until a search loads it.",
            "Only a harness's telemetry or records show it; `tether inventory --sessions` adds it per tool.",
        ),
    };
    Entry {
        code: stage.as_str(),
        family: Family::Stage,
        meaning,
        check,
        example: format!("stage {}: yes (shown by harness_record)", stage.as_str()),
    }
}

/// Every provenance, in the order of its strength.
pub const PROVENANCES: [tether_core::model::ProvenanceCode; 10] = {
    use tether_core::model::ProvenanceCode as P;
    [
        P::SessionEvent,
        P::AgentReport,
        P::CurrentConfig,
        P::EndpointTest,
        P::Assumed,
        P::Relay,
        P::HarnessTelemetry,
        P::HarnessRecord,
        P::ModelTap,
        P::DocumentedRule,
    ]
};

/// What a provenance says about a stage shown by it.
pub fn provenance(p: tether_core::model::ProvenanceCode) -> Entry {
    use tether_core::model::ProvenanceCode as P;
    let (meaning, check) = match p {
        P::SessionEvent => (
            "Observed during the session by the host that ran it: its plan, its own MCP endpoint.",
            "The strongest evidence: it happened, and the host saw it.",
        ),
        P::AgentReport => (
            "The agent said so itself (an ACP agent's or a CLI's own status report, such as a stream-json `system/init`).",
            "As good as the agent's word: a report of `connected` is the agent's claim.",
        ),
        P::CurrentConfig => (
            "Read from a configuration file as it is now, not as it was when a session ran.",
            "Configuration proves nothing about a session; `tether sessions` shows what a session did.",
        ),
        P::EndpointTest => (
            "An explicit endpoint test, from this machine, now: reachability, never attachment.",
            "A passing test says the server answers; only a session says the agent used it.",
        ),
        P::Assumed => (
            "Assumed, not observed (or a provenance this build does not know, read from newer data).",
            "Treat it as unknown.",
        ),
        P::Relay => (
            "Observed by Tether's relay between the agent and a third-party server: the server's own traffic, seen on its way through.",
            "Metadata only: names, counts and outcomes, never a payload.",
        ),
        P::HarnessTelemetry => (
            "The harness's own OpenTelemetry, received by `tether collect`.",
            "What the harness says about its servers, live.",
        ),
        P::HarnessRecord => (
            "What the harness wrote to disk about a session it ran (transcripts, per-server logs, session files), read by `tether sessions`.",
            "What the harness recorded, after the fact.",
        ),
        P::DocumentedRule => (
            "Predicted from a documented rule of the harness or its model provider (a name collision, a schema it drops, a name or tool count past a limit), each rule verified against the real CLI. A prediction, never an observation, and only ever a `no`.",
            "`tether inventory --test` shows each tool's model-side name and the rule; anything observed beats it.",
        ),
        P::ModelTap => (
            "Seen by `tether tap` on the way from the harness to its model API: a tool in a request's tool list (model-visible), a tool named behind the harness's tool search (in the thread), a tool the model called. Only where you pointed the harness at the tap.",
            "The strongest evidence of the last mile: what the model was really sent. Metadata only: names and hashes, never a prompt, a description, a schema or an argument.",
        ),
    };
    let code = match p {
        P::SessionEvent => "session_event",
        P::AgentReport => "agent_report",
        P::CurrentConfig => "current_config",
        P::EndpointTest => "endpoint_test",
        P::Assumed => "assumed",
        P::Relay => "relay",
        P::HarnessTelemetry => "harness_telemetry",
        P::HarnessRecord => "harness_record",
        P::DocumentedRule => "documented_rule",
        P::ModelTap => "model_tap",
    };
    Entry {
        code,
        family: Family::Provenance,
        meaning,
        check,
        example: format!("stage current_thread: no (shown by {code})"),
    }
}

/// The stages a row shows or a requirement asks (`tether check`,
/// `tether run`: `--require SERVER[:STAGE]`) that are not on the ladder.
pub fn requirement_stages() -> Vec<Entry> {
    let entry = |code, meaning, check, example: &str| Entry {
        code,
        family: Family::Requirement,
        meaning,
        check,
        example: example.to_owned(),
    };
    vec![
        entry(
            "reached",
            "The default a requirement asks: the server's tools reached the session (offered in the thread, or sent to the model) and the server did not fail. A harness's own list of the tools it holds shows it; nothing shown is never met.",
            "When it is not met, the sentence names the furthest stage shown and what is missing; `tether sessions show ID` gives the whole row.",
            "NOT MET time: not met (required: its tools reached the session and it did not fail); the furthest stage shown: initialized (connected); missing: its tools in the session …",
        ),
        entry(
            "used",
            "A call to the server (or the tool) was made, whatever its outcome (also written `called`). A call the harness refused never reached the server and is no use.",
            "Ask `callable` to require a call that succeeded.",
            "met     time/get_current_time:used: a call was made",
        ),
        entry(
            "called",
            "A row's stage: the model called the tool (or one of the server's tools) and the harness passed the call on, whatever its outcome. `--require SERVER:used` asks it.",
            "The row counts calls, failed calls and refused calls apart; `callable` needs one that succeeded.",
            "stage called: yes (shown by harness_record)",
        ),
        entry(
            "installed",
            "An inventory row's stage: what the server needs is installed where the harness runs it (a plugin's server, installed with its plugin). `not_applicable` for a server a configuration entry names, which has nothing to install.",
            "`tether inventory --json` gives it per row; a command that does not resolve reads `command_not_found`.",
            "stage installed: not_applicable (shown by current_config)",
        ),
        entry(
            "fired",
            "A hook's stage: the harness ran the hook's command on its event, with the outcome and exit status the row gives.",
            "A hook that failed names why (`command_not_found`, an exit status); run its command by hand to see its own words.",
            "stage fired: yes (shown by harness_record)",
        ),
    ]
}

/// What a later listing changed against a server's pins (`tether
/// endpoint-test`, `tether pins`, a session's history).
pub fn pin_changes() -> Vec<Entry> {
    let entry = |code, meaning, example: &str| Entry {
        code,
        family: Family::Change,
        meaning,
        check: PIN_CHECK,
        example: example.to_owned(),
    };
    vec![
        entry(
            "definition_changed",
            "A pinned tool's definition differs from its pin: its reasons name the parts (description, input schema, …), compared by hash, never by text.",
            "tether endpoint-test: pins   time/get_current_time: definition_changed (description_changed)",
        ),
        entry(
            "tools_changed",
            "A server's tools differ from the ones pinned for it: a tool appeared (`tool_added`) or disappeared (`tool_removed`).",
            "tether endpoint-test: pins   time: tools_changed (tool_added)",
        ),
    ]
}

/// What a trigger says started an attempt (`tether history` prints it on
/// each attempt's line).
pub fn trigger(trigger: &tether_core::vocab::Trigger) -> Entry {
    use tether_core::vocab::Trigger as T;
    let (code, meaning, check) = match trigger {
        T::SessionNew => (
            "session_new",
            "An ACP host began a session (`session/new`) and gave the agent its servers.",
            "The attempt's rows say how far each server got in that session.",
        ),
        T::SessionLoad => (
            "session_load",
            "An ACP host resumed a session (`session/load`) and gave the agent its servers again.",
            "A loaded session is a new attempt: the one before it is superseded, its rows kept.",
        ),
        T::SessionReset => (
            "session_reset",
            "The host reset the session: a new attempt with the servers given again.",
            "Compare the attempt with the one it superseded (`tether history`).",
        ),
        T::PassthroughStart => (
            "passthrough_start",
            "A harness's CLI was started with its servers in its own configuration (`tether run`, `tether probe --passthrough`).",
            "The rows come from what the harness's telemetry, records and output showed.",
        ),
        T::Probe => (
            "probe",
            "`tether probe` started the agent to check its MCP support with the sentinel.",
            "Read the probe's verdict (`tether explain VERDICT`).",
        ),
        T::HarnessSession => (
            "harness_session",
            "A session the harness ran on its own, seen through its telemetry (`tether collect`) or read from its records (`tether sessions`).",
            "`tether sessions show ID` gives its rows and what showed each stage.",
        ),
        T::HealthCheck => (
            "health_check",
            "Not an agent session: the harness's own health check (its `mcp list` command) connected to its servers to say whether each answers, and no agent ran. Its rows are what it found; lists of sessions leave it out, and it is never the newest session.",
            "Its rows still show whether each server starts and answers here. For what an agent got, look at a session (`tether sessions list`).",
        ),
        _ => (
            "other",
            "A trigger this version of Tether does not know, from a newer host.",
            "Read the attempt's rows; a newer Tether explains it.",
        ),
    };
    Entry {
        code,
        family: Family::Trigger,
        meaning,
        check,
        example: format!("tether history:   attempt records · {code} · HARNESS · started …"),
    }
}

/// What a call policy's verdict predicts (`tether inventory`: "Calls, as
/// the permission settings predict them"; `call_policy.verdict` in JSON).
pub fn call_verdict(verdict: tether_core::inventory::CallVerdict) -> Entry {
    use tether_core::inventory::CallVerdict as V;
    let (code, meaning, check) = match verdict {
        V::Allowed => (
            "allowed",
            "Nothing in the harness's settings stops a call to the tool: a rule, a mode or a trust setting allows it. A prediction from the settings (`current_config`, or the harness's documented default), never an observation.",
            "A session shows what really happened: `tether sessions show ID` counts calls, and refused calls apart.",
        ),
        V::NeedsApproval => (
            "needs_approval",
            "The harness asks before each call to the tool: no rule allows it. A headless run cannot ask, so it refuses the call (`approval_required` on the session's tool row).",
            "Allow the tool in the harness's permission settings (the inventory names the file and rule), or run with the harness's own flag that allows it.",
        ),
        V::Denied => (
            "denied",
            "A rule or policy in the harness's settings refuses every call to the tool.",
            "The inventory names the rule and its file; remove or narrow it if the call should run.",
        ),
    };
    Entry {
        code,
        family: Family::CallPolicy,
        meaning,
        check,
        example: format!(
            "tether inventory: HARNESS/user time: {} (…)",
            verdict.word()
        ),
    }
}

/// Every trigger this version knows.
pub fn triggers() -> Vec<Entry> {
    tether_core::vocab::Trigger::KNOWN
        .iter()
        .map(|t| trigger(&tether_core::vocab::Trigger::parse(t)))
        .collect()
}

/// Every entry: statuses, verdicts, reason codes, stages, provenances,
/// requirement stages, pin changes and triggers.
pub fn all() -> Vec<Entry> {
    let mut entries: Vec<Entry> = DisplayStatus::ALL.iter().map(|s| status(*s)).collect();
    entries.extend(VERDICTS.iter().map(|v| verdict(*v)));
    entries.extend(reason_codes().iter().filter_map(reason));
    entries.extend(Stage::ALL.iter().map(|s| stage(*s)));
    entries.extend(PROVENANCES.iter().map(|p| provenance(*p)));
    entries.extend(requirement_stages());
    entries.extend(pin_changes());
    entries.extend(triggers());
    entries.extend(
        [
            tether_core::inventory::CallVerdict::Allowed,
            tether_core::inventory::CallVerdict::NeedsApproval,
            tether_core::inventory::CallVerdict::Denied,
        ]
        .map(call_verdict),
    );
    entries
}

/// The entries whose code is `code` (a code can be both a status and a
/// verdict: `active`, `failed`); case and `-`/`_` do not matter.
pub fn lookup(code: &str) -> Vec<Entry> {
    let wanted = code.trim().to_ascii_lowercase().replace('-', "_");
    all().into_iter().filter(|e| e.code == wanted).collect()
}

/// One entry as the terminal shows it.
pub fn text(entry: &Entry) -> String {
    format!(
        "{} ({})\n\n  What it means: {}\n\n  What to check: {}\n\n  Example:\n{}\n",
        entry.code,
        entry.family.noun(),
        entry.meaning,
        entry.check,
        entry
            .example
            .lines()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// The user guide's reference page: every entry, grouped by family, each
/// under a heading of its own code (so `codes.md#auth_required` links to it).
pub fn markdown() -> String {
    let mut out = String::from(
        "# Every status, verdict, reason code and stage\n\n\
         <!-- Generated by `tether explain --markdown` from words/src/explain.rs. Do not edit: \
         `TETHER_UPDATE_BOOK=1 cargo test -p tether-tests --test book` rewrites it. -->\n\n\
         This is the \"my MCP tools are missing\" page. Find the word Tether showed you, \
         read what it means and what to check. `tether explain CODE` prints the same \
         entry in a terminal, offline.\n\n\
         Where did it stop? Each step, in the order a tool travels:\n\n\
         1. **Configured and enabled**: `tether inventory` (`filtered`, `disabled_in_config`, `excluded`, `denied_by_policy`).\n\
         2. **Given to the agent**: `delivered`, or `unavailable` with a reason.\n\
         3. **Connected, and its tools listed**: `connected`, `active`; `failed` with `command_not_found`, `auth_required`, `connection_closed`….\n\
         4. **Sent to the model**: `model_visible`, or kept back (`deferred_until_searched`, `name_collision`, `schema_unsupported`…).\n\
         5. **The model tried, and the harness said no**: a refused call never reached the server and is no use \
         (`permission_denied`, `approval_required`, `blocked_by_hook`, `denied_by_policy`).\n\
         6. **It ran**: the server answered; a failure is the server's (`tool_error`, `protocol_error`).\n",
    );
    let mut family = None;
    for entry in all() {
        if family != Some(entry.family) {
            family = Some(entry.family);
            let _ = write!(out, "\n## {}\n", entry.family.title());
        }
        let _ = write!(
            out,
            "\n### {}\n\n**What it means.** {}\n\n**What to check.** {}\n\n```text\n{}\n```\n",
            heading_code(&entry),
            entry.meaning,
            entry.check,
            entry.example
        );
    }
    out
}

/// A heading unique across families: a status and a verdict can share a code.
fn heading_code(entry: &Entry) -> String {
    let is_status = DisplayStatus::ALL.iter().any(|s| s.as_str() == entry.code);
    match entry.family {
        Family::Verdict if is_status => format!("{} (verdict)", entry.code),
        Family::Stage if is_status => format!("{} (stage)", entry.code),
        _ => entry.code.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provenance_has_an_entry_under_its_own_word() {
        for word in tether_core::vocab::Provenance::KNOWN {
            let known = PROVENANCES
                .iter()
                .any(|p| provenance(*p).code == *word && p.word().as_str() == *word);
            assert!(known, "{word}");
        }
        assert_eq!(
            PROVENANCES.len(),
            tether_core::vocab::Provenance::KNOWN.len()
        );
    }

    #[test]
    fn the_pin_changes_a_history_prints_are_explained() {
        use tether_core::vocab::EvidenceKind;
        for kind in [EvidenceKind::DefinitionChanged, EvidenceKind::ToolsChanged] {
            let entries = lookup(kind.as_str());
            assert_eq!(entries.len(), 1, "{kind}");
            assert_eq!(entries[0].family, Family::Change);
        }
        assert!(!lookup("reached").is_empty());
        assert!(!lookup("fired").is_empty());
    }

    #[test]
    fn every_known_code_has_an_entry_and_unknown_ones_none() {
        let all = all();
        for code in ReasonCode::KNOWN {
            assert!(
                all.iter()
                    .any(|e| e.family == Family::Reason && e.code == *code),
                "{code}"
            );
        }
        assert_eq!(
            all.iter().filter(|e| e.family == Family::Status).count(),
            DisplayStatus::ALL.len()
        );
        assert!(reason(&ReasonCode::Other("made_up".into())).is_none());
        assert!(lookup("made_up").is_empty());
    }

    #[test]
    fn the_reason_table_holds_each_known_code_once_and_nothing_else() {
        let mut codes: Vec<&str> = REASONS.iter().map(|r| r.code).collect();
        codes.sort_unstable();
        let before = codes.len();
        codes.dedup();
        assert_eq!(codes.len(), before, "a code has two entries");
        let mut known: Vec<&str> = ReasonCode::KNOWN.to_vec();
        known.sort_unstable();
        assert_eq!(codes, known);
    }

    #[test]
    fn lookup_finds_a_code_in_every_family_it_belongs_to() {
        let families: Vec<Family> = lookup("Failed").iter().map(|e| e.family).collect();
        assert_eq!(families, [Family::Status, Family::Verdict]);
        assert_eq!(lookup("session-refused")[0].code, "session_refused");
        assert_eq!(lookup("auth_required")[0].family, Family::Reason);
    }

    #[test]
    fn examples_come_from_the_display() {
        let delivered = status(DisplayStatus::Delivered);
        assert!(
            delivered
                .example
                .contains("Delivered · connection unverified"),
            "{}",
            delivered.example
        );
        let auth = reason(&ReasonCode::AuthRequired).expect("known");
        assert!(auth.example.contains("needs auth"), "{}", auth.example);
    }

    #[test]
    fn every_known_trigger_has_an_entry_under_its_own_word() {
        for word in tether_core::vocab::Trigger::KNOWN {
            let entries = lookup(word);
            assert!(
                entries
                    .iter()
                    .any(|e| e.family == Family::Trigger && e.code == *word),
                "{word}"
            );
        }
        assert_eq!(lookup("health_check")[0].family, Family::Trigger);
    }

    #[test]
    fn headings_are_unique() {
        let md = markdown();
        let mut headings: Vec<&str> = md.lines().filter(|l| l.starts_with("### ")).collect();
        let n = headings.len();
        headings.sort();
        headings.dedup();
        assert_eq!(headings.len(), n);
    }
}
