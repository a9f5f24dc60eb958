//! Qwen Code's census: every record, event and setting its shipped code
//! names that bears on MCP, read or not read, with why.

use super::*;

const Q: &str = "0.12.0–0.24.4";
const Q24: &str = "0.24.4";
/// MCP tools named bare (0.5.0–0.8.2 cli.js `DiscoveredMCPTool`).
const Q_BARE: &str = "0.5.0–0.8.2";
const Q15_ON: &str = "0.15.10–0.24.4";
const Q_DEBUG: &str =
    "0.12.0–0.15.10 always; 0.21.2–0.24.4 only with QWEN_DEBUG_LOG_FILE=1 or --debug";
const Q_DEBUG_SILENCE: &str = "The debug log is off by default from 0.21.2: without it no line shows anything, and a missing error line never means the server started.";

pub(super) fn qwen() -> Vec<CensusEntry> {
    let mut out = qwen_chat();
    out.extend(qwen_debug_log());
    out.extend(qwen_stream_json());
    out.extend(qwen_telemetry());
    out.extend(qwen_config_servers_and_tools());
    out.extend(qwen_config_hooks_and_more());
    // Tool error types: 0.15.10 cli.js 19905 (ToolErrorType); 0.24.4 has
    // them inlined. Each is a tool_call event's error_type.
    for (kind, says) in [
        (
            "execution_denied",
            "read: a permission rule, a hook or a missing approval refused the call (tool_call_refused, its reason from the words)",
        ),
        (
            "mcp_tool_error",
            "read: the server answered the call with isError (tool_error)",
        ),
        (
            "discovered_tool_execution_error",
            "a discovery-command tool failed (no MCP server)",
        ),
        (
            "tool_not_registered",
            "the model called a tool the registry does not hold",
        ),
        (
            "invalid_tool_params",
            "the arguments failed validation before the call ran",
        ),
        (
            "permission_denied",
            "a file system permission error of a built-in tool",
        ),
    ] {
        let kind = format!("qwen-code.tool_call.error_type:{kind}");
        out.push(match says.strip_prefix("read: ") {
            Some(says) => E::read(TELEMETRY, &kind, Q, says),
            None => E::not_read(TELEMETRY, &kind, Q, &format!("not yet read: {says}")),
        });
    }
    out
}

/// Qwen Code: the chat recording.
fn qwen_chat() -> Vec<CensusEntry> {
    vec![
        // chat: 0.15.10 cli.js 176824 (createBaseRecord), 223115-223129
        // (recordToolResults), 222437-222547 (execution_denied),
        // 142514-142523 (ui_telemetry); 0.24.4 chunk-DPEB6S2R.js 30691,
        // 61610-61628 (executionStatus), chunk-2VS5EEXU.js 3971, 6768.
        E::read(
            QWEN_CHAT,
            "assistant.message.parts.functionCall",
            Q,
            "tool_call_observed per `mcp__SERVER__TOOL` call, with its id (0.10.1 cli.js 2895971 on; 0.5.0–0.8.2 name an MCP tool bare, read from its ui_telemetry record instead)",
        ),
        // Older releases: 0.5.2 cli.js 6102860-6106833 (the same chat
        // records), 5166418 (bare tool names), 3166517-3167502 and 6109010
        // (ui_telemetry tool_call with mcp_server_name); verified on a real
        // 0.5.2 run (tests/fixtures/records-releases/qwen-0.5.2-headless).
        E::read(
            QWEN_CHAT,
            "ui_telemetry qwen-code.tool_call (bare MCP name)",
            Q_BARE,
            "tool_call_observed for tool_type mcp whose function_name is not mcp__…: the server from mcp_server_name, the tool from function_name (SERVER__ stripped), the outcome from status and error_type as a tool_result's (execution_denied a refusal by the error's words, scanned and never kept; mcp_tool_error tool_error; cancelled unknown); function_args never read. The functionCall of the same call names no server and is not counted",
        ),
        E::read(
            QWEN_CHAT,
            "toolCallResult execution_denied (before 0.15)",
            "0.5.0–0.12.0",
            "\"Qwen Code requires permission to use \\\"TOOL\\\", but that permission was declined.\" is a -p run's automatic no (0.12.0 cli.js 7376308 shouldAutoDeny): approval_required; 0.15 on the same words are a deny rule's. The unquoted form (an excludeTools entry, 0.12.0 cli.js 7371566) is permission_denied in every release",
        ),
        E::not_read(
            "chat_json",
            "tmp/<project>/chats/session-*.json",
            "0.1.3–0.1.4",
            "Gemini CLI's one-document chat, but without tool calls: 0.1.4 cli.js 8643350 defines recordToolCalls and nothing calls it, so it names no MCP server or tool (its messages are payload)",
        ),
        E::read(
            QWEN_CHAT,
            "functionCall/skill",
            Q,
            "skill_invoked with the skill's name (args.skill only); its outcome is its call's",
        ),
        E::read(
            QWEN_CHAT,
            "tool_result.toolCallResult",
            Q,
            "the call's outcome by callId: success succeeded, error failed (errorType mcp_tool_error: tool_error); errorType execution_denied a refusal (tool_call_refused) whose reason resultDisplay's words give, scanned and never kept: a deny rule permission_denied, \"(non-interactive mode cannot prompt for confirmation)\" approval_required, a PermissionRequest or PreToolUse hook blocked_by_hook; a hook's own words are a refusal only where executionStatus says not_started (0.15 writes a PostToolUse hook's stop, after the call ran, the same way); cancelled left unknown",
        ),
        E::read(
            QWEN_CHAT,
            "toolCallResult.executionStatus",
            Q24,
            "not_started with errorType execution_denied: the call never ran, so a hook's own words are a refusal (blocked_by_hook)",
        ),
        E::not_read(
            QWEN_CHAT,
            "system/ui_telemetry",
            Q,
            "its qwen-code.tool_call event is the same call as its functionCall, not counted again (0.15 has no call_id to match it by; 0.24.4 has call_id); before 0.10 it is read, see its bare-name kind",
        ),
        E::not_read(
            QWEN_CHAT,
            "ui_telemetry.mcp_server_name",
            Q,
            "not yet read from 0.10.1 on (the functionCall's mcp__SERVER__TOOL gives the server): the call's server, beside tool_type mcp, decision, status and error_type; read 0.5.0–0.8.2, see the bare-name kind",
        ),
        E::not_read(
            QWEN_CHAT,
            "system/slash_command",
            Q,
            "/mcp only opens a dialog: its result record holds no MCP status (outputHistoryItems is empty)",
        ),
    ]
}

/// Qwen Code: the debug log.
fn qwen_debug_log() -> Vec<CensusEntry> {
    vec![
        // debug_log: 0.15.10 cli.js 19679 (on by default), 252651, 253513+
        // (manager), 253594, 253669, 253872, 252676, 307990 (ToolRegistry
        // created); 0.24.4 chunk-C2YAG4QV.js 185-190 (off by default),
        // chunk-DPEB6S2R.js 116595+, 118202+, 119495, 160984.
        E::read(
            QWEN_DEBUG,
            "[MCP] Error during discovery for server 'SERVER'",
            Q_DEBUG,
            "explicit_error for the named server (a missing command said as such); the reason read, never kept",
        )
        .silence(Q_DEBUG_SILENCE),
        E::read(
            QWEN_DEBUG,
            "[MCP] Error during incremental discovery for server 'SERVER'",
            Q_DEBUG,
            "explicit_error for the named server (0.24.4: a discovery timeout too)",
        )
        .silence(Q_DEBUG_SILENCE),
        E::read(
            QWEN_DEBUG,
            "[MCP] Error connecting to MCP server 'SERVER'",
            Q_DEBUG,
            "explicit_error for the named server",
        )
        .silence(Q_DEBUG_SILENCE),
        E::read(
            QWEN_DEBUG,
            "ToolRegistry created",
            Q_DEBUG,
            "tools_list_observed: each `mcp__SERVER__TOOL` in the list, with or without its \"(N tools)\" count",
        )
        .silence("From 0.21.2 MCP discovery runs after the registry is made (unless QWEN_CODE_LEGACY_MCP_BLOCKING=1), and subagent registries never hold MCP tools: a list without a server's tools does not mean it listed none."),
        E::not_read(
            QWEN_DEBUG,
            "[MCP] MCP ERROR (SERVER)",
            Q_DEBUG,
            "not yet read: the named server's client reported an error (spawn ENOENT, a closed connection)",
        ),
        E::not_read(
            QWEN_DEBUG,
            "[MCP] 'SERVER' requires OAuth authentication",
            Q_DEBUG,
            "not yet read: the named server wants a login (also \"MCP server 'S' requires OAuth authentication\", 0.24.4 \"The MCP server 'S' requires OAuth authentication\", \"401 error received for SSE server 'S'\")",
        ),
        E::not_read(
            QWEN_DEBUG,
            "[MCP] Skipping disabled MCP server: SERVER",
            Q_DEBUG,
            "not yet read: the named server is disabled in the settings",
        ),
        E::not_read(
            QWEN_DEBUG,
            "[MCP] Skipping MCP server pending approval: SERVER",
            Q24,
            "not yet read: the project's server waits for approval in mcpApprovals.json",
        ),
        E::not_read(
            QWEN_DEBUG,
            "[MCP] Skipping MCP server in untrusted folder: SERVER",
            Q24,
            "not yet read: the folder is untrusted",
        ),
        E::not_read(
            QWEN_DEBUG,
            "[MCP] Health check failed for server 'SERVER'",
            Q_DEBUG,
            "not yet read: a connected server stopped answering, with the reconnect lines after it",
        ),
        E::not_read(
            QWEN_DEBUG,
            "[MCP_TOOL] MCP server error 'SERVER'",
            Q_DEBUG,
            "not yet read: a call's server failed mid-call, and its reconnection attempts",
        ),
        E::not_read(
            QWEN_DEBUG,
            "Background MCP discovery failed",
            Q24,
            "names no server",
        ),
        E::not_read(
            QWEN_DEBUG,
            "[MCP] MCP STDERR (SERVER)",
            Q_DEBUG,
            "the server's own stderr: payload",
        ),
    ]
}

/// Qwen Code: `--output-format stream-json`.
fn qwen_stream_json() -> Vec<CensusEntry> {
    vec![
        // stream_json: 0.15.10 cli.js 502778-502806 (buildSystemMessage),
        // 503746 (permission_denials), 504134 (tool_progress), 505692-506090
        // (control requests), 503545-503640 (emitToolResult); 0.24.4
        // chunk-KYFJLESB.js 17559. Read from the probe's live output and, by
        // path, from a saved file (stream_json.rs; real runs in
        // tests/fixtures/records-by-path/qwen-*.stream.jsonl).
        E::read(
            STREAM,
            "system/init.mcp_servers",
            Q,
            "agent_reported per server with its status (connected, connecting, disconnected); by path, with the session, the project (cwd's last component) and the version (qwen_code_version, where Claude's init has claude_code_version)",
        ),
        E::read(
            STREAM,
            "system/init.tools",
            Q,
            "each server's `mcp__SERVER__…` tools, counted as model-visible: the list is the tool registry, tool_search included, while Qwen holds every MCP tool behind tool_search",
        ),
        E::not_read(
            STREAM,
            "system/init.permission_mode",
            Q,
            "not yet read: the approval mode the run has",
        ),
        E::read(
            STREAM,
            "assistant.content.tool_use",
            Q,
            "by path: tool_call_observed per `mcp__SERVER__TOOL` call with its id; `skill`: skill_invoked with the skill's name (input.skill only); input is otherwise payload, never read",
        ),
        E::read(
            STREAM,
            "user.content.tool_result",
            Q,
            "by path, by tool_use_id: is_error false a use; true a refusal with its reason by Qwen's words (approval_required, permission_denied, blocked_by_hook), a tool error (\"MCP tool 'X' reported tool error\": tool_error), or in any other words (a hook's own, or an error of no named kind) unknown; content is scanned where is_error, never kept",
        ),
        E::not_read(
            STREAM,
            "result.permission_denials",
            Q15_ON,
            "the calls of errorType execution_denied, already refused by their tool_result (whose words give the reason); their tool_input is payload",
        ),
        E::not_read(
            STREAM,
            "stream_event/tool_progress",
            Q15_ON,
            "an MCP tool's progress notifications (mcp_tool_progress), only with partial messages on",
        ),
        E::not_read(
            STREAM,
            "control_request/can_use_tool",
            Q15_ON,
            "a permission prompt sent to an SDK host over stream-json input",
        ),
        E::not_read(
            STREAM,
            "control_request/mcp_message",
            Q15_ON,
            "an SDK host's in-process MCP server traffic: payload",
        ),
        E::not_read(
            STREAM,
            "control_response/mcp_server_status",
            Q15_ON,
            "an SDK host's in-process servers, always \"connected\"",
        ),
    ]
}

/// Qwen Code: telemetry events, metrics and spans.
fn qwen_telemetry() -> Vec<CensusEntry> {
    vec![
        // telemetry: 0.15.10 cli.js 19854-19889 (EVENT_*), 144495-144560
        // (StartSessionEvent), 87356 (metrics); 0.24.4 chunk-4MFQLG5I.js
        // 48-103 (events and spans), chunk-2VS5EEXU.js 6663, 6768.
        E::read(
            TELEMETRY,
            "qwen-code.config",
            Q,
            "mcp_servers: each configured server taken into the session; mcp_tools: tools listed per server, counted",
        )
        .silence("0.24.4 logs it as MCP discovery starts in the background: an empty mcp_tools does not mean no tools were listed."),
        E::not_read(
            TELEMETRY,
            "qwen-code.config.hooks",
            Q15_ON,
            "not yet read: the hook events configured",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.config.skills",
            Q15_ON,
            "not yet read: the skills loaded",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.config.core_tools_enabled",
            Q,
            "not yet read: the permission allow rules (0.24.4) or tools.core",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.config.approval_mode",
            Q,
            "not yet read",
        ),
        E::read(
            TELEMETRY,
            "qwen-code.tool_call",
            Q,
            "tool_call_observed for tool_type mcp: mcp_server_name, function_name and success (function_args never read); a refusal (error_type execution_denied, its reason from the error's words and execution_status, as in the chat) tool_call_refused; mcp_tool_error tool_error. 0.15 logs a denied call as tool_type native with no server: its mcp__SERVER__TOOL name gives both",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.tool_call.decision",
            Q,
            "accept, auto_accept, modify or reject: a user's no is execution_denied's words too, read there",
        ),
        E::read(
            TELEMETRY,
            "qwen-code.tool_call.error_type",
            Q,
            "execution_denied a refusal, its reason from the error's words (never kept) and execution_status; mcp_tool_error tool_error",
        ),
        E::read(
            TELEMETRY,
            "qwen-code.skill_launch",
            Q,
            "skill_invoked: skill_name and success",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.auth",
            Q,
            "the model provider's sign-in (auth_type, action_type, status), not a server's",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.extension_install",
            Q,
            "not yet read: extension_name, status, setting_scope (also _uninstall, _update, _enable, _disable)",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.tool.call.count",
            Q,
            "a metric: counts what tool_call events give one by one (also tool.call.latency, tool.execution.breakdown, tool.queue.depth)",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.tool",
            Q24,
            "not yet read: a span per call (gen_ai.tool.name, success)",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.tool.execution",
            Q24,
            "a span of the call's execution phase",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.tool.blocked_on_user",
            Q24,
            "not yet read: a span while a call waits for approval (tool.name, tool.call_id, decision, source)",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.tool.modify_with_editor_unavailable",
            Q24,
            "a span attribute: no server",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.hook",
            Q24,
            "not yet read: a span per hook run (hook_event, tool.name, success, should_proceed, block_type): Qwen's only telemetry of hooks",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.repeated_tool_failure_guard",
            Q24,
            "the loop guard stopped repeated failing calls: no server",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.tool_output_truncated",
            Q24,
            "an output's size: no outcome",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.tool_result.boundary",
            Q24,
            "a result's size at the model boundary: no server",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.daemon.auth.auth_type",
            Q24,
            "qwen serve's provider sign-in (also daemon.auth.provider_id), not a server's",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.daemon.auth.provider_id",
            Q24,
            "qwen serve's provider, not a server",
        ),
        E::not_read(
            TELEMETRY,
            "qwen-code.daemon.permission.request_id",
            Q24,
            "qwen serve's permission request id: no tool or server",
        ),
    ]
}

/// Qwen Code: configured servers, permissions and tools.
fn qwen_config_servers_and_tools() -> Vec<CensusEntry> {
    vec![
        // config: 0.15.10 cli.js and 0.24.4 chunk-D2H63VR2.js (settings
        // schema: mcpServers, mcp, permissions, tools, hooks, skills).
        E::read(
            CONFIG,
            "mcpServers",
            Q,
            "configured servers in system, user and project settings and extensions' qwen-extension.json; 0.24.4 the project's .mcp.json too",
        ),
        E::read(
            CONFIG,
            "mcpServers.includeTools",
            Q,
            "the server's tool allow list",
        ),
        E::read(
            CONFIG,
            "mcpServers.excludeTools",
            Q,
            "the server's tool deny list",
        ),
        E::read(
            CONFIG,
            "mcp",
            Q,
            "mcp.allowed and mcp.excluded: a server held back is excluded (0.24.4 takes glob patterns, read as plain names)",
        ),
        E::read(
            CONFIG,
            "mcpApprovals.json",
            Q24,
            "a project's server waits until approved for this folder, for the entry as approved (its hash)",
        ),
        E::read(
            CONFIG,
            "security.folderTrust.enabled",
            Q,
            "with trustedFolders.json: an untrusted project's settings are ignored (untrusted_folder)",
        ),
        E::not_read(
            CONFIG,
            "permissions",
            Q15_ON,
            "not yet read: permissions.allow, ask and deny rules (a deny on `mcp__SERVER__*` refuses its calls)",
        ),
        E::not_read(
            CONFIG,
            "tools",
            Q,
            "not yet read: tools.core, tools.exclude and tools.approvalMode",
        ),
        E::not_read(
            CONFIG,
            "tools.toolSearch",
            Q24,
            "not yet read: tools.toolSearch.enabled false declares deferred MCP tools to the model directly",
        ),
        E::not_read(
            CONFIG,
            "security.auth",
            Q,
            "the model provider's sign-in, not a server's",
        ),
    ]
}

/// Qwen Code: configured hooks and the settings after them.
fn qwen_config_hooks_and_more() -> Vec<CensusEntry> {
    vec![
        E::read(CONFIG, "hooks", Q, "a hook row per command of every event"),
        E::read(
            CONFIG,
            "hooks.PreToolUse",
            Q15_ON,
            "a hook row per command (it can refuse a call)",
        ),
        E::read(
            CONFIG,
            "hooks.PostToolUse",
            Q15_ON,
            "a hook row per command",
        ),
        E::read(
            CONFIG,
            "hooks.PostToolUseFailure",
            Q15_ON,
            "a hook row per command",
        ),
        E::read(
            CONFIG,
            "hooks.PermissionRequest",
            Q15_ON,
            "a hook row per command",
        ),
        E::read(
            CONFIG,
            "hooks.PermissionDenied",
            Q24,
            "a hook row per command",
        ),
        E::read(CONFIG, "hooks.PostToolBatch", Q24, "a hook row per command"),
        E::not_read(
            CONFIG,
            "disableAllHooks",
            Q15_ON,
            "not yet read: true turns every hook off, yet they show enabled (the scanner reads Gemini's hooksConfig.enabled instead)",
        ),
        E::not_read(
            CONFIG,
            "allowedHttpHookUrls",
            Q15_ON,
            "not yet read: where HTTP hooks may post",
        ),
        E::not_read(
            CONFIG,
            "allowPrivateNetworkHooks",
            Q24,
            "not yet read: HTTP hooks to private addresses",
        ),
        E::not_read(
            CONFIG,
            "stopHookBlockingCap",
            Q24,
            "a cap on blocking Stop hooks: no tool",
        ),
        E::not_read(
            CONFIG,
            "skills",
            Q24,
            "not yet read: skills.disabled, disabledLevels, defaultDisabled, enabled",
        ),
        E::not_read(
            CONFIG,
            "enableAutoSkill",
            Q15_ON,
            "background review that writes skills; no skill enabled or disabled",
        ),
        E::not_read(
            CONFIG,
            "autoSkillConfirm",
            Q24,
            "asks before an auto-written skill is saved",
        ),
        E::not_read(
            CONFIG,
            "emitToolUseSummaries",
            Q15_ON,
            "model-written summaries of calls: no server or outcome",
        ),
        E::not_read(
            CONFIG,
            "permissionStrategy",
            Q24,
            "qwen serve: who answers a permission request among attached clients",
        ),
        E::not_read(
            CONFIG,
            "policyTools",
            Q24,
            "per-tool overrides of built-in policy tools",
        ),
    ]
}
