//! The census of Copilot CLI: every kind of event, log line, telemetry and
//! configuration its shipped code writes or reads that bears on MCP servers,
//! tools, skills, hooks, plugins, auth or permissions, and whether
//! `records.rs`, `read_output` (lib.rs), `telemetry.rs` and `config_scan.rs`
//! read it. Found in the released packages themselves: 1.0.10 (`app.js`,
//! `schemas/`), 1.0.42 to 1.0.92, and 1.0.102 (pinned and newest), whose
//! single-executable binary was unpacked with `COPILOT_SEA_EXTRACT_ONLY=1`
//! into `cli-main.js`, `prebuilds/linux-x64/runtime.node` and `schemas/`.

use tether_core::records::CensusEntry;

/// Session events, `~/.copilot/session-state/<id>/events.jsonl`.
const EVENTS: &str = crate::records::EVENTS;
/// Process logs, `~/.copilot/logs/process-*.log`.
const PROCESS_LOG: &str = crate::records::PROCESS_LOG;
const STREAM: &str = "stream_json";
/// A `-p --output-format json` run's output, saved and named by path.
const OUTPUT: &str = crate::records::OUTPUT;
const TELEMETRY: &str = "telemetry";
const CONFIG: &str = "config";

/// Events the 1.0.102 schema marks `ephemeral: const true` (never written
/// to events.jsonl; `--output-format json` prints some), with what they
/// hold.
const EPHEMERAL: &[(&str, &str, &str)] = &[
    (
        "session.mcp_servers_loaded",
        "1.0.10–1.0.102",
        "{servers[{name, status, source, error, transport, pluginName}]}",
    ),
    (
        "session.mcp_server_status_changed",
        "1.0.10–1.0.102",
        "{serverName, status (connected|failed|needs-auth|pending|disabled|stopped|not_configured), error, errorClassification, configSource}",
    ),
    (
        "session.mcp_server_tools_loaded",
        "1.0.102",
        "{serverName, toolCount}",
    ),
    ("session.mcp_server_removed", "1.0.102", "{serverName}"),
    (
        "session.mcp_server_needs_reconnect",
        "1.0.102",
        "{serverName}",
    ),
    (
        "mcp.oauth_required",
        "1.0.10–1.0.102",
        "{serverName, serverUrl, reason (initial|refresh|reauth|upscope)}",
    ),
    (
        "mcp.oauth_completed",
        "1.0.10–1.0.102",
        "{requestId, outcome}",
    ),
    (
        "mcp.headers_refresh_required",
        "1.0.102",
        "{serverName, serverUrl, reason}",
    ),
    (
        "mcp.headers_refresh_completed",
        "1.0.102",
        "{requestId, outcome}",
    ),
    ("mcp.tools.list_changed", "1.0.102", "{serverName}"),
    ("mcp.resources.list_changed", "1.0.102", "{serverName}"),
    ("mcp.prompts.list_changed", "1.0.102", "{serverName}"),
    (
        "mcp_app.tool_call_complete",
        "1.0.102",
        "{serverName, toolName, success, durationMs, error}",
    ),
    (
        "session.skills_loaded",
        "1.0.10–1.0.102",
        "{skills[{name, source, enabled, userInvocable}]}",
    ),
    ("session.tools_updated", "1.0.10–1.0.102", "{model} only"),
    (
        "session.managed_plugin_progress",
        "1.0.102",
        "{phase, pluginSpecs}",
    ),
    ("hook.progress", "1.0.102", "{message, temporary}"),
    (
        "tool.execution_progress",
        "1.0.102",
        "{toolCallId, progressMessage}",
    ),
    (
        "tool.execution_partial_result",
        "1.0.102",
        "{toolCallId, partialOutput}: payload",
    ),
    (
        "tool.shell_output",
        "1.0.102",
        "a shell tool's output: payload",
    ),
    (
        "assistant.tool_call_delta",
        "1.0.102",
        "{toolCallId, toolName, inputDelta}: streamed arguments",
    ),
    (
        "assistant.server_tool_progress",
        "1.0.102",
        "a provider-side tool's progress",
    ),
    ("external_tool.completed", "1.0.102", "{requestId}"),
];

/// Permission records 1.0.102 writes to disk (no `ephemeral` const) that
/// name no MCP server or tool.
const PERMISSION_BOOKKEEPING: &[&str] = &[
    "permission.carriedForward",
    "permission.messageAuthorization",
    "permission.messageAuthorizationRead",
    "permission.messageAuthorizationDegraded",
    "permission.assentDetected",
    "permission.contextualAuthorization",
    "session.permission_recovery",
    "session.permissions_changed",
];

/// Telemetry attributes and span events 1.0.102's runtime.node names
/// (its string table, found by tests/census/copilot.json's
/// `github.copilot.` pattern over the unpacked
/// `prebuilds/linux-x64/runtime.node`) that `telemetry.rs` does not read,
/// with why.
const TELEMETRY_NOT_READ: &[(&str, &str)] = &[
    (
        "github.copilot.mcp.server.error",
        "a lifecycle event's error text (never kept); state error says failed",
    ),
    (
        "github.copilot.mcp.server.plugin_name",
        "not yet read: the plugin that bundles the server (with plugin_version), on the lifecycle event",
    ),
    (
        "github.copilot.mcp.server.plugin_version",
        "not yet read: the bundling plugin's version",
    ),
    (
        "github.copilot.tool.parameters.mcp_tool_name",
        "not yet read: the unhashed tool on execute_tool (the tool is read by gen_ai.tool.name's hash); unverified when Copilot fills it",
    ),
    (
        "github.copilot.tool.parameters.command",
        "a built-in shell tool's command: an argument (payload), never read",
    ),
    (
        "github.copilot.tool.parameters.file_path",
        "a built-in edit tool's path: an argument (payload), never read",
    ),
    (
        "github.copilot.tool.parameters.edit_type",
        "a built-in edit tool's kind of edit: no MCP server's",
    ),
    (
        "github.copilot.context.skills",
        "not yet read: the session's skills (beside context.mcp_server_names)",
    ),
    (
        "github.copilot.hook.start",
        "not yet read: span event as a hook run starts; its github.copilot.hook.end carries the outcome",
    ),
    (
        "github.copilot.hook.type",
        "not yet read: attribute of the hook span events, the event the hook ran for (events.jsonl's hook.end hookType is read)",
    ),
    (
        "github.copilot.hook.invocation_id",
        "not yet read: attribute joining a hook's start and end",
    ),
    (
        "github.copilot.hook.decision",
        "not yet read: what a hook decided (allow, deny…)",
    ),
    (
        "github.copilot.hook.duration",
        "not yet read: how long the hook ran",
    ),
    (
        "github.copilot.hook.error",
        "not yet read: whether the hook failed",
    ),
    (
        "github.copilot.hook.error_message",
        "the hook's error text: hook output, never kept",
    ),
    (
        "github.copilot.hook.tool_names",
        "not yet read: the tools a tool hook ran for",
    ),
    (
        "github.copilot.skill.source",
        "not yet read: attribute of github.copilot.skill.invoked, where the skill came from",
    ),
    (
        "github.copilot.skill.plugin_name",
        "not yet read: the plugin that bundles the skill (with plugin_version)",
    ),
    (
        "github.copilot.skill.plugin_version",
        "not yet read: the bundling plugin's version",
    ),
    (
        "github.copilot.skill.invocation_trigger",
        "not yet read: what invoked the skill (the model or the user)",
    ),
    (
        "github.copilot.skill.content",
        "the skill's text: payload, never read",
    ),
    (
        "github.copilot.permission.kind",
        "not yet read: attribute of github.copilot.permission.result, the kind of request (mcp, shell…)",
    ),
    (
        "github.copilot.permission.tool_name",
        "not yet read: the tool the request was for",
    ),
    (
        "github.copilot.external_tool.name",
        "a tool an SDK host serves (with external_tool.call_id), never an MCP server's",
    ),
    (
        "github.copilot.external_tool.call_id",
        "an SDK host's tool call's id, never an MCP server's",
    ),
];

/// Copilot CLI's census (see the module docs).
pub fn census() -> Vec<CensusEntry> {
    let mut out = events_tool_calls();
    out.extend(events_hooks_skills_and_notices());
    out.extend(process_logs_and_output());
    out.extend(telemetry());
    out.extend(config());
    for (kind, releases, holds) in EPHEMERAL {
        out.push(CensusEntry::not_read(
            EVENTS,
            kind,
            releases,
            &format!("never written to disk (ephemeral): {holds}"),
        ));
    }
    for (kind, why) in TELEMETRY_NOT_READ {
        out.push(CensusEntry::not_read(TELEMETRY, kind, "1.0.102", why));
    }
    for kind in PERMISSION_BOOKKEEPING {
        out.push(CensusEntry::not_read(
            EVENTS,
            kind,
            "1.0.102",
            "approval bookkeeping that names no server or tool",
        ));
    }
    out
}

/// events.jsonl: a tool call's start, completion and requests.
fn events_tool_calls() -> Vec<CensusEntry> {
    vec![
        // events.jsonl. Persistence: 1.0.102 schemas/session-events.schema.json
        // (`ephemeral: const true` or not) and the writer's filter (1.0.10
        // app.js@11791390: ephemeral events are never written).
        CensusEntry::read(
            EVENTS,
            "tool.execution_start",
            "1.0.10–1.0.102",
            "tool_call_observed: the server (mcpConfigServerName, else mcpServerName) and mcpToolName, by toolCallId; a built-in tool (no MCP fields) gives nothing",
        ),
        CensusEntry::read(
            EVENTS,
            "tool.execution_start.mcpConfigServerName",
            "1.0.87–1.0.102",
            "the server's configuration key, preferred to mcpServerName (its display name)",
        ),
        CensusEntry::read(
            EVENTS,
            "tool.execution_start.mcpTransport",
            "1.0.87–1.0.102",
            "the called server's transport (stdio, http, sse; memory, an in-process server, gives none), its row's where no earlier record gave one; verified in the 1.0.102 schema and a real run",
        ),
        CensusEntry::not_read(
            EVENTS,
            "tool.execution_start.mcpConfigSource",
            "1.0.87–1.0.102",
            "not yet read: where the called server's configuration came from (user|workspace|plugin|builtin|managed|account), verified in the 1.0.102 schema and a real run",
        ),
        CensusEntry::read(
            EVENTS,
            "tool.execution_complete",
            "1.0.10–1.0.102",
            "the call's outcome (success), joined to its start by toolCallId; its result and error text are never kept",
        ),
        CensusEntry::read(
            EVENTS,
            "tool.execution_complete.error.code",
            "1.0.102",
            "denied: a refusal (tool_call_refused), with its reason from error.message's words (scanned, never kept): \"The user rejected this tool call\" and \"Permission to run this tool was denied due to the following rules\" (a --deny-tool rule) permission_denied; \"Permission denied because no interactive user response was available\" (a -p run with no --allow-tool) approval_required; \"Denied by preToolUse hook\" blocked_by_hook; \"Blocked by enterprise MCP policy\" denied_by_policy; other words of a denial permission_denied; \"The pending permission request was cancelled…\" left unknown. Before code was written, the same words alone",
        ),
        CensusEntry::read(
            EVENTS,
            "tool.execution_complete.toolTelemetry.properties.failure_category",
            "1.0.102",
            "a failed call's category: server_error (the server's isError) tool_error, protocol_* (a JSON-RPC error) protocol_error; failure_stage permission a refusal",
        ),
        CensusEntry::read(
            EVENTS,
            "tool.execution_complete.error.message:no such tool",
            "1.0.102",
            "Copilot's \"no such tool\" (runtime.node strings): \"Tool 'NAME' does not exist. Available tools that can be called are …\" (NAME the model-facing SERVER-TOOL, split only where one configured server fits) and \"MCP tool not found on SERVER: TOOL\": tool_call_refused tool_not_available, the call reached no server (no use, no server failure, no listing or offer); the tool was not available to Copilot then",
        ),
        CensusEntry::read(
            EVENTS,
            "tool.execution_complete.error.message:failure words",
            "1.0.102",
            "a failed call's cause in Copilot's words after \"MCP server 'S': \" (runtime.node strings): \"MCP transport closed before the tool responded\" connection_closed, \"Request timed out\" timeout; read before the failure category; a tool's own error text names nothing",
        ),
        CensusEntry::read(
            EVENTS,
            "tool.execution_complete.error.message:Skill not found",
            "1.0.10–1.0.102",
            "a failed skill invocation, named by Copilot's own \"Skill not found: NAME\"",
        ),
        CensusEntry::not_read(
            EVENTS,
            "tool.execution_complete.mcpMeta",
            "1.0.102",
            "not yet read: the MCP result's _meta, verified in the 1.0.102 schema",
        ),
        CensusEntry::not_read(
            EVENTS,
            "assistant.message.toolRequests",
            "1.0.10–1.0.102",
            "not yet read: the tools the model asked for ({toolCallId, name, mcpServerName, mcpToolName} from 1.0.102), proof a tool was model-visible; verified in the 1.0.102 fixture",
        ),
        CensusEntry::not_read(
            EVENTS,
            "tool.user_requested",
            "1.0.102",
            "not yet read: {toolCallId, toolName}, a tool the user ran by hand",
        ),
        CensusEntry::not_read(
            EVENTS,
            "external_tool.requested",
            "1.0.42–1.0.102 (ephemeral in 1.0.10)",
            "a tool an SDK host serves, never an MCP server's",
        ),
    ]
}

/// events.jsonl: hooks, skills, warnings, notices, permissions and the session's start.
fn events_hooks_skills_and_notices() -> Vec<CensusEntry> {
    vec![
        CensusEntry::read(
            EVENTS,
            "hook.end",
            "1.0.10–1.0.102",
            "hook_fired: one run of an event's hooks (hookType), its outcome, and the exit status its error names (\"with code N\"); a timeout names no code",
        ),
        CensusEntry::not_read(
            EVENTS,
            "hook.start",
            "1.0.10–1.0.102",
            "its hook.end carries the outcome; it holds the hook's input (payload)",
        ),
        CensusEntry::read(
            EVENTS,
            "skill.invoked",
            "1.0.10–1.0.102",
            "skill_invoked: the skill's name and pluginName (its content, path and description never read)",
        ),
        CensusEntry::read(
            EVENTS,
            "skill.invoked_ref",
            "1.0.87–1.0.102",
            "skill_invoked, as skill.invoked: a repeated invocation whose content an earlier event holds",
        ),
        CensusEntry::not_read(
            EVENTS,
            "skill.context_delivered",
            "1.0.102",
            "a skill's text put into context (payload); no invocation",
        ),
        CensusEntry::not_read(
            EVENTS,
            "skill.context_delivered_ref",
            "1.0.102",
            "as skill.context_delivered, by content id",
        ),
        CensusEntry::read(
            EVENTS,
            "session.warning:mcp",
            "1.0.10–1.0.88 on disk (interactive only); 1.0.89–1.0.102 ephemeral",
            "a server that failed (reason from the words after its name, never kept), wanted a login, was blocked by policy, was slow, or was given up on; a warning naming no server is counted not read",
        )
        .silence("Copilot writes these only in an interactive session, and from 1.0.89 never to disk: a missing warning does not show that every server connected"),
        CensusEntry::not_read(
            EVENTS,
            "session.warning:policy",
            "1.0.10–1.0.102 (ephemeral)",
            "never written to disk (ephemeral): read in a saved -p --output-format json run (output_json)",
        ),
        CensusEntry::read(
            EVENTS,
            "session.error:query",
            "1.0.102",
            "\"Could not connect to local model provider at …\" (runtime.node; a real run on a closed port): the turn ended with its model provider not reached, report-level session_request_failed (the words name no cause; never kept)",
        )
        .silence("its other query errors are not yet told apart: left unsaid"),
        CensusEntry::not_read(
            EVENTS,
            "session.error:mcp",
            "1.0.10–1.0.102",
            "counted: \"Failed to start MCP Servers: …\", \"Failed to reload MCP config\", \"Failed to refresh MCP tools\" name no one server",
        ),
        CensusEntry::not_read(
            EVENTS,
            "session.info:mcp",
            "1.0.10–1.0.102",
            "counted: \"MCP Servers reloaded: N servers connected[, K failed (a, b)]\" (ephemeral from 1.0.102's TUI), \"MCP server 'x' connected.\" after a slow warning (ephemeral)",
        ),
        CensusEntry::read(
            EVENTS,
            "user.message.transformedContent:tools_changed_notice",
            "1.0.10–1.0.92 (1.0.102 says only a model switch there)",
            "tool_visible: each name after \"New tools available: \" that splits as SERVER-TOOL against exactly one configured server; no word of the prompt is kept",
        )
        .silence("never on a session's first message, and from 1.0.102 it names no tools: a missing notice does not show that no tool was added"),
        CensusEntry::read(
            EVENTS,
            "permission.requested",
            "1.0.42–1.0.102 (ephemeral in 1.0.10)",
            "recognised: the call asks (permissionRequest{kind:\"mcp\", serverName, toolName, toolCallId}); its answer is permission.completed's, so it gives nothing itself (its args are payload, never read)",
        ),
        CensusEntry::read(
            EVENTS,
            "permission.completed",
            "1.0.42–1.0.102 (ephemeral in 1.0.10)",
            "tool_call_refused for its toolCallId where result.kind refused it: denied-by-rules and denied-interactively-by-user permission_denied, denied-no-approval-rule-and-could-not-request-from-user approval_required, denied-by-permission-request-hook blocked_by_hook, denied-by-content-exclusion-policy denied_by_policy; approved-* and cancelled give nothing (the call's completion says how it went). A --deny-tool rule writes no permission event: its completion's words say it",
        ),
        CensusEntry::not_read(
            EVENTS,
            "tool_search.activated",
            "1.0.80–1.0.102",
            "counted, not yet read: {strategy, toolNames}, the tools tool search made callable",
        ),
        CensusEntry::not_read(
            EVENTS,
            "mcp.oauth_recovery_completed",
            "1.0.102",
            "not yet read: {requestId, serverName, outcome (succeeded|cancelled|failed)}, verified in the 1.0.102 schema",
        ),
        CensusEntry::not_read(
            EVENTS,
            "session.start.githubMcpToolConfig",
            "1.0.80–1.0.102",
            "not yet read: the built-in GitHub server's toolsets (enableAllTools, additionalToolsets, additionalTools)",
        ),
    ]
}

/// Process logs and `--output-format json` lines.
fn process_logs_and_output() -> Vec<CensusEntry> {
    vec![
        // Process logs: runtime.node@9683524 and @11450423 (1.0.102, Rust
        // tracing); app.js (1.0.10, JS logger).
        CensusEntry::read(
            PROCESS_LOG,
            "MCP server connection failed",
            "1.0.102",
            "failed, its reason from raw_error (never kept), server_name: \"MCP server process exited before completing the MCP initialize handshake (exit code N)\" server_exited with its code; \"failed to spawn MCP server process: No such file or directory\" command_not_found (Copilot says the same words for a missing cwd: its row says cwd_not_found where the configuration here shows the cwd missing); \"MCP lifecycle negotiation did not complete within N ms\" timeout (Copilot's wait, 60000 ms)",
        )
        .silence("written only for a server that failed to connect: a missing line does not show that a server connected"),
        CensusEntry::read(
            PROCESS_LOG,
            "reporting the server as needing auth",
            "1.0.102",
            "needs-auth, by its server field",
        ),
        CensusEntry::read(
            PROCESS_LOG,
            "challenge (WWW-Authenticate:",
            "1.0.102",
            "needs-auth with which: \"HTTP 401 challenge (WWW-Authenticate: …)\", beside the needing-auth line, its parameter names masked by Copilot; its values read, never kept: OAuth resource metadata named oauth_required, invalid_token or insufficient_scope auth_rejected, none auth_required (Copilot's words do not say whether it sent credentials)",
        ),
        CensusEntry::read(
            PROCESS_LOG,
            "No authentication information found.",
            "1.0.102",
            "the run's own error (report-level): [ERROR] \"No authentication information found.\" auth_required (not logged in), \"Classic PAT detected in environment.\" auth_rejected; \"Authentication token validation failed: …\" names no cause and is not read",
        )
        .silence("the run ends before its servers start: no server line follows"),
        CensusEntry::not_read(
            PROCESS_LOG,
            "Failed to start MCP client for",
            "1.0.10",
            "not yet read: 1.0.10's JS logger (\"Failed to start MCP client for NAME: ERR\")",
        ),
        CensusEntry::not_read(
            PROCESS_LOG,
            "MCP client for",
            "1.0.10",
            "not yet read: \"MCP client for NAME connected, took Nms\"",
        ),
        CensusEntry::not_read(
            PROCESS_LOG,
            "Found MCP tools from server",
            "1.0.10",
            "not yet read: \"Found N MCP tools from server 'NAME'\"",
        ),
        CensusEntry::not_read(
            PROCESS_LOG,
            "Blocking third-party MCP server",
            "1.0.10",
            "not yet read: \"Blocking third-party MCP server \\\"NAME\\\" because the MCP third-party policy is not enabled\"",
        ),
        // `--output-format json`: lib.rs read_output reads the
        // `"session.mcp_` lines; 1.0.102 cli-main.js@5072757 filters stdout
        // (drops hook.*, skill.*, permission.*).
        CensusEntry::read(
            STREAM,
            "session.mcp_server_status_changed",
            "1.0.10–1.0.102",
            "agent_reported: the server and its status (connected, failed, needs-auth, pending, …); error and errorClassification not read",
        ),
        CensusEntry::read(
            STREAM,
            "session.mcp_servers_loaded",
            "1.0.10–1.0.102",
            "agent_reported: each server's name and status",
        ),
        CensusEntry::read(
            STREAM,
            "session.mcp_server_tools_loaded",
            "1.0.102",
            "agent_reported: the server's toolCount",
        ),
        CensusEntry::not_read(
            STREAM,
            "tool.execution_start",
            "1.0.10–1.0.102",
            "read from events.jsonl instead (read_output reads only session.mcp_* lines)",
        ),
        CensusEntry::not_read(
            STREAM,
            "tool.execution_complete",
            "1.0.10–1.0.102",
            "read from events.jsonl instead",
        ),
        CensusEntry::not_read(
            STREAM,
            "session.warning:mcp",
            "1.0.10–1.0.102",
            "not read on stdout (the status events say the same); read from events.jsonl where written",
        ),
    ]
    .into_iter()
    .chain(saved_output())
    .collect()
}

/// A saved `-p --output-format json` run, named by path (`output_json`):
/// the session events, one a line, by the events' own reader (1.0.102
/// `cli-main.js`@5073619 `zun` prints all but `Kro`'s list; 1.0.63
/// `app.js` `Adr`, the same; a real 1.0.102 run in
/// tests/fixtures/records-by-path/copilot-1.0.102-*.output.jsonl, a real
/// 1.0.63 capture's shapes in
/// tests/fixtures/records-real/copilot-1.0.63-policy.output.jsonl).
fn saved_output() -> Vec<CensusEntry> {
    vec![
        CensusEntry::read(
            OUTPUT,
            "result",
            "1.0.63–1.0.102",
            "the run's session (sessionId; 1.0.102 qun, 1.0.63 _dr); what the run printed before it joins that session. exitCode and usage not read",
        )
        .silence("the last line: output cut before it is read as output_json_cut, its session named after the file"),
        CensusEntry::read(
            crate::output::CUT,
            "the session events but result",
            "1.0.63–1.0.102",
            "a saved output cut before its result (a CI job killed, a timeout; told from its last records): each event read as in output_json, all of one session named file.NAME-ID8 after the file and its first event's id (two runs saved under one name are two sessions), said as such (no event before result carries the session's id)",
        ),
        CensusEntry::read(
            OUTPUT,
            "tool.execution_start",
            "1.0.63–1.0.102",
            "as in events.jsonl (same reader): call, its server's transport",
        ),
        CensusEntry::read(
            OUTPUT,
            "tool.execution_complete",
            "1.0.63–1.0.102",
            "as in events.jsonl (same reader): outcome, refusal and its reason, failure",
        ),
        CensusEntry::read(
            OUTPUT,
            "session.mcp_server_status_changed",
            "1.0.63–1.0.102",
            "agent_reported status, as a live run's output is read (lib.rs output_evidence); a failed one's error words (1.0.102: a string) scanned for why (command_not_found, …; never kept; errorClassification not read); session.mcp_servers_loaded and session.mcp_server_tools_loaded likewise",
        ),
        CensusEntry::read(
            OUTPUT,
            "session.warning:policy",
            "1.0.63–1.0.102 (ephemeral)",
            "\"Third-party MCP servers are disabled by your organization's Copilot policy\" (cli-main.js@5297692, @6218328): each configured server but the built-in github-mcp-server and githubiq failed, denied_by_policy (the warning names none; github/copilot-cli#4512: a policy that could not be fetched blocks local servers too); with none configured, counted not read",
        ),
        CensusEntry::read(
            OUTPUT,
            "session.info:configuration",
            "1.0.63–1.0.102 (ephemeral)",
            "\"Disabled tools: a, b, …\" (1.0.63 app.js@3477637 validateToolFilters; 1.0.102 runtime.node): tool_withheld, excluded, for each SERVER-TOOL name (Copilot's rule, 1.0.63 app.js@381157 jie) that fits exactly one configured or built-in server; built-in tools and names of 64 characters or more (maybe cut) give nothing. Other configuration notices (\"Available tools: …\", permission mode, provider) not read",
        ),
        CensusEntry::not_read(
            OUTPUT,
            "model.call_start",
            "1.0.102",
            "model.call_start, model.call_finished, model.call_final_result (ephemeral): the model calls' own bookkeeping, no server or tool",
        ),
        CensusEntry::not_read(
            OUTPUT,
            "assistant.tool_call_delta",
            "1.0.102",
            "streamed arguments (payload): the call is tool.execution_start's",
        ),
    ]
}

/// Telemetry: runtime.node's string table (1.0.102).
fn telemetry() -> Vec<CensusEntry> {
    vec![
        // Telemetry: runtime.node's string table (1.0.102).
        CensusEntry::read(
            TELEMETRY,
            "github.copilot.mcp.server.lifecycle",
            "1.0.102",
            "span event: name_hash matched against the configured names; state discovered (taken), initialized (connected), error (failed, no finer reason)",
        ),
        CensusEntry::read(
            TELEMETRY,
            "execute_tool",
            "1.0.102",
            "span: a call of the server whose hash github.copilot.tool.parameters.mcp_server_name_hash matches, its tool by hash prefix, its status the outcome; error.type denied (measured on a --deny-tool run) a refusal, tool_call_refused permission_denied (the span gives no finer reason: the session's events do)",
        ),
        CensusEntry::read(
            TELEMETRY,
            "github.copilot.mcp.server.name_hash",
            "1.0.102",
            "on the lifecycle event: the server, as the SHA-256 of its name, matched against the configured names",
        ),
        CensusEntry::read(
            TELEMETRY,
            "github.copilot.mcp.server.state",
            "1.0.102",
            "on the lifecycle event: discovered, initialized or error",
        ),
        CensusEntry::read(
            TELEMETRY,
            "github.copilot.tool.parameters.mcp_server_name_hash",
            "1.0.102",
            "on execute_tool: the called server, as the SHA-256 of its name",
        ),
        CensusEntry::read(
            TELEMETRY,
            "github.copilot.mcp.server.transport",
            "1.0.102",
            "on execute_tool: the server's transport",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.mcp.server.name",
            "1.0.102",
            "not yet read: a lifecycle attribute beside name_hash (plugin_name, plugin_version, error too); unverified when Copilot fills it",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.mcp.server.source",
            "1.0.102",
            "not yet read: where the server's configuration came from",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.mcp.server.connection.count",
            "1.0.102",
            "not yet read: metric of completed connection attempts by transport and outcome (no server)",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.tool.parameters.mcp_server_name",
            "1.0.102",
            "not yet read: the unhashed server (and mcp_tool_name) on execute_tool; unverified when Copilot fills it",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.tool.call.count",
            "1.0.102",
            "not yet read: metric of tool calls by tool name and outcome",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.tool.call.duration",
            "1.0.102",
            "not yet read: metric of tool latency",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "gen_ai.tool.definitions",
            "1.0.102",
            "not yet read: the tools sent to the model (only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.context.mcp_server_names",
            "1.0.102",
            "not yet read: the session's MCP server names",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.hook.end",
            "1.0.102",
            "not yet read: span event with hook.type, invocation_id, decision, error, duration (and github.copilot.hook.start)",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.skill.invoked",
            "1.0.102",
            "not yet read: span event with skill.source, plugin_name, invocation_trigger (skill.content is payload)",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "github.copilot.permission.result",
            "1.0.102",
            "not yet read: with permission.kind and permission.tool_name",
        ),
    ]
}

/// Configuration: config files and the CLI's own options.
fn config() -> Vec<CensusEntry> {
    vec![
        // Configuration: config_scan.rs; the CLI's own options, in 1.0.10's
        // app.js and 1.0.102's cli-main.js.
        CensusEntry::read(
            CONFIG,
            "mcp-config.json:mcpServers",
            "1.0.10–1.0.102",
            "configured servers (user), with .mcp.json and .github/mcp.json (project, trusted folders only)",
        ),
        CensusEntry::read(
            CONFIG,
            "mcpServers.*.tools",
            "1.0.10–1.0.102",
            "the tools kept ([\"*\"] every one)",
        ),
        CensusEntry::read(
            CONFIG,
            "settings.json:disabledMcpServers",
            "1.0.102",
            "a server disabled_in_config",
        ),
        CensusEntry::read(
            CONFIG,
            "config.json:trusted_folders",
            "1.0.102 (also trustedFolders)",
            "workspace servers and hooks untrusted_folder outside them",
        ),
        CensusEntry::read(
            CONFIG,
            "config.json:installedPlugins",
            "1.0.102",
            "plugins, enabled or not, with the servers and skills their plugin.json bundles",
        ),
        CensusEntry::read(
            CONFIG,
            "settings.json:hooks",
            "1.0.102 (and .github/hooks/*.json)",
            "hooks per event, with their commands",
        ),
        CensusEntry::read(
            CONFIG,
            "settings.json:disabledSkills",
            "1.0.102",
            "a skill disabled_in_config (skillDirectories read too)",
        ),
        CensusEntry::not_read(
            CONFIG,
            "--allow-tool",
            "1.0.10–1.0.102",
            "a command-line flag of the run (with --deny-tool, --allow-all-tools): not in a file the scanner reads",
        ),
        CensusEntry::not_read(
            CONFIG,
            "--disable-mcp-server",
            "1.0.10 (1.0.102: its disableMcpServer option)",
            "a command-line flag of the run (with --disable-builtin-mcps, --additional-mcp-config)",
        ),
        CensusEntry::not_read(
            CONFIG,
            "third-party MCP policy",
            "1.0.10–1.0.102",
            "an organization's policy, fetched from GitHub: not on disk",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GIVEN the census WHEN its read kinds are looked for in the reader's
    /// own code THEN each is there: the census claims no more than the
    /// reader reads.
    #[test]
    fn every_read_kind_is_in_the_reader_s_code() {
        let code = [
            include_str!("records.rs"),
            include_str!("lib.rs"),
            include_str!("telemetry.rs"),
            include_str!("config_scan.rs"),
            include_str!("output.rs"),
            include_str!("records/words.rs"),
        ]
        .concat();
        let missing = tether_sdk::census::read_but_not_in(&census(), &code);
        assert!(
            missing.is_empty(),
            "read, but no reader names them: {missing:?}"
        );
    }
}
