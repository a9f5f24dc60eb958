//! The census of Gemini CLI and Qwen Code: every kind of record, event,
//! field and telemetry either writes that bears on MCP servers, tools,
//! skills, hooks, plugins (extensions), auth or permissions, read from their
//! shipped packages (Gemini CLI 0.61.0 with its core's unbundled `dist`,
//! and older releases where named; Qwen Code 0.15.10 and 0.24.4, with 0.12.0
//! and 0.15.6 where named), each read (with the evidence it gives) or not
//! (with why). `tests/census/gemini.json` and `qwen.json` scan the installed
//! packages for kinds this list does not account for.

use tether_core::records::CensusEntry;

use crate::records::{GEMINI_CHAT, GEMINI_LEGACY_CHAT, QWEN_CHAT, QWEN_DEBUG};
use crate::telemetry::Flavor;

type E = CensusEntry;

const STREAM: &str = "stream_json";
const TELEMETRY: &str = "telemetry";
const CONFIG: &str = "config";
/// Gemini CLI's debug log: written only to the file
/// `GEMINI_DEBUG_LOG_FILE` names (no record source reads it).
const GEMINI_DEBUG: &str = "debug_log";

/// The census of one flavor.
pub fn census(flavor: Flavor) -> Vec<CensusEntry> {
    match flavor {
        Flavor::Gemini => gemini(),
        Flavor::Qwen => qwen(),
    }
}

const G: &str = "0.61.0";
const G_JSONL: &str = "0.39.0–0.61.0";
const G_JSON: &str = "≤ 0.38.2";
const G_UI: &str = "≤ 0.31.0 always; 0.32.1–0.61.0 once the user used MCP";

/// What a missing UI record of Gemini CLI can mean.
const G_UI_SILENCE: &str = "Written only in an interactive session, and since 0.32.1 only once the user ran /mcp or an MCP tool (before that a failure goes to the debug log, with one \"MCP issues detected\" line): no record shows no failure, never that the server started.";

fn gemini() -> Vec<CensusEntry> {
    let mut out = gemini_chat();
    out.extend(gemini_chat_json_debug_log_and_stream_json());
    out.extend(gemini_telemetry_config_and_calls());
    out.extend(gemini_telemetry_queue_output_and_extensions());
    out.extend(gemini_config_servers_and_tools());
    out.extend(gemini_config_hooks_and_more());
    // Tool error types: core tools/tool-error.js (ToolErrorType); each is a
    // tool_call event's error_type and a stream-json tool_result's
    // error.type.
    for (kind, says) in [
        (
            "policy_violation",
            "read: a policy's deny rule (permission_denied) or a BeforeTool hook (blocked_by_hook), by the error's words; it never reached the server",
        ),
        (
            "stop_execution",
            "read: a hook stopped the agent, before the call or after it ran (AfterTool): left unknown, never a refusal",
        ),
        (
            "mcp_tool_error",
            "read: the server answered the call with isError (tool_error)",
        ),
        (
            "discovered_tool_execution_error",
            "a tools.discoveryCommand tool failed (no MCP server)",
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
            "mcp_resource_not_found",
            "a server's resource was not found",
        ),
        (
            "permission_denied",
            "a file system permission error of a built-in tool",
        ),
    ] {
        let kind = format!("gemini_cli.tool_call.error_type:{kind}");
        out.push(match says.strip_prefix("read: ") {
            Some(says) => E::read(TELEMETRY, &kind, G, says),
            None => E::not_read(TELEMETRY, &kind, G, &format!("not yet read: {says}")),
        });
    }
    out
}

/// Gemini CLI: the chat recording.
fn gemini_chat() -> Vec<CensusEntry> {
    vec![
        // chat: core services/chatRecordingService.js (415-423 first line,
        // 528-567 pushMessage/$set lastUpdated, 622-634 recordToolCalls,
        // 772 $rewindTo, 828 $set messages), chatRecordingTypes.d.ts,
        // core/geminiChat.js 1241-1262 (the ToolCallRecord), tools/mcp-tool.js
        // 264 (displayName), scheduler/scheduler.js 415-435 and
        // scheduler/hook-utils.js 20-35 (a refusal is status "error").
        E::read(
            GEMINI_CHAT,
            "gemini.toolCalls",
            G_JSONL,
            "tool_call_observed per MCP call, server and tool split from displayName `TOOL (SERVER MCP Server)`, with its call id; its outcome from status: success succeeded; error a refusal or a failure by resultDisplay's words (no errorType is kept); cancelled the user's no (tool_call_refused, permission_denied) where its result says \"User denied execution.\", otherwise left unknown (an abort says nothing of whether it ran).",
        )
        .silence("Written as calls complete: a call cut off mid-run (the process killed) leaves none, and a subagent's calls are in its own chat."),
        E::read(
            GEMINI_CHAT,
            "toolCalls.displayName",
            G_JSONL,
            "the server and tool of an MCP call (`TOOL (SERVER MCP Server)`); the name alone (`mcp_SERVER_TOOL`) cannot be split",
        ),
        E::read(
            GEMINI_CHAT,
            "toolCalls.resultDisplay",
            G_JSONL,
            "scanned for Gemini CLI's own words, never kept (it holds the tool's output too): \"Tool execution denied by policy.\" a deny rule of the policy engine (tool_call_refused, permission_denied: the record does not say whether the rule was the user's, the workspace's or the admin tier's, so it is never claimed as managed policy); \"Tool execution blocked: …\" a BeforeTool hook (blocked_by_hook); \"Tool execution for \\\"…\\\" requires user confirmation, which is not supported in non-interactive mode.\" an ask rule in a -p run (approval_required); \"Error: MCP tool '…' reported an error.\" the server's isError (failed, tool_error); \"Agent execution stopped by hook: …\" a stop before or after the call ran (left unknown)",
        ),
        E::read(
            GEMINI_CHAT,
            "toolCalls.result",
            G_JSONL,
            "a cancelled call's functionResponse.response.error only, matched whole: \"[Operation Cancelled] Reason: User denied execution.\" is the user's no (permission_denied); the rest of the result is payload, never read",
        )
        .silence("A -p run never asks: there a call that needed approval is not offered to the model at all (core policy: non-interactive mode excludes ask tools), unless a rule narrowed by argsPattern asks, which reads approval_required."),
        E::read(
            GEMINI_CHAT,
            "toolCalls/activate_skill",
            G_JSONL,
            "skill_invoked with the skill's name (args.name only) and its outcome from status",
        ),
        E::read(
            GEMINI_CHAT,
            "error",
            G_UI,
            "explicit_error for the named server when the words are \"Error during discovery for MCP server '…'\", \"Error initializing MCP server '…'\", \"Fatal error ensuring MCP server '…'\" or \"Error connecting to MCP server '…'\" (the reason read, never kept); \"Could not configure OAuth for '…' - please authenticate\" reads needs-auth; any other words with MCP are the kind error:mcp, not read",
        )
        .silence(G_UI_SILENCE),
        E::read(
            GEMINI_CHAT,
            "info",
            G_UI,
            "needs-auth for the server named by \"MCP server '…' requires authentication…\" or \"… rejected stored OAuth token\"; other words with MCP are info:mcp, not read",
        )
        .silence("A 401 server's message is a diagnostic at info: before the user used MCP it reaches no chat at all, not even the \"MCP issues detected\" line. No record shows no login was wanted."),
        E::read(
            GEMINI_CHAT,
            "warning",
            G_UI,
            "the same scan as error and info records; a warning about MCP that names no failure is warning:mcp, not read",
        )
        .silence(G_UI_SILENCE),
        E::not_read(
            GEMINI_CHAT,
            "info:MCP issues detected. Run /mcp list for status.",
            "0.32.1–0.61.0",
            "names no server: some server failed or warned at start-up (given as its kind info:mcp, not read)",
        ),
        E::not_read(
            GEMINI_CHAT,
            "error:MCP ERROR (SERVER)",
            G,
            "not yet read: names the server whose client reported an error (the error itself is not in the words); given as error:mcp",
        ),
        E::not_read(
            GEMINI_CHAT,
            "info:Tools updated for server: SERVER",
            G,
            "not yet read: a server's tool list changed (a diagnostic, so written only once the user used MCP)",
        ),
        E::not_read(
            GEMINI_CHAT,
            "warning:Unrecognized MCP tool \"TOOL\" for server \"SERVER\"",
            G,
            "not yet read: a policy rule names a tool the server does not list",
        ),
        E::not_read(
            GEMINI_CHAT,
            "error:Server 'SERVER' is not in mcp.allowed list / is blocked by mcp.excluded / is disabled",
            G,
            "not yet read: the result of /mcp enable for a held-back server (why it is filtered); a blocked server otherwise leaves no record (maybeDiscoverMcpServer returns quietly)",
        )
        .silence("Written only when the user runs /mcp enable: a filtered server leaves no other trace in the chat."),
        E::not_read(
            GEMINI_CHAT,
            "info:This folder is untrusted, project settings, hooks, MCPs, and GEMINI.md files will not be applied",
            G,
            "not yet read: the folder is untrusted (names no server)",
        ),
        E::not_read(
            GEMINI_CHAT,
            "warning:Hook(s) [NAMES] failed for event EVENT",
            G,
            "not yet read: the named hooks failed (core hooks/hookEventHandler.js 269)",
        )
        .silence("Only failures are written, and only interactively: no record shows whether a hook ran."),
        E::not_read(
            GEMINI_CHAT,
            "info:hook system message",
            G,
            "a hook's own systemMessage, as words; no hook name is kept",
        ),
        E::read(
            GEMINI_CHAT,
            "$set",
            G_JSONL,
            "lastUpdated dates the session's last record; anything else it sets (messages since 0.44, summary, directories, sessionId) is ignored: a messages rewrite repeats calls already read",
        ),
        E::not_read(
            GEMINI_CHAT,
            "$set.memoryScratchpad.toolSequence",
            G_JSONL,
            "tool names of a finished session, written later by a summary pass: no server, no outcome",
        ),
        E::read(
            GEMINI_CHAT,
            "$rewindTo",
            G_JSONL,
            "recognised and ignored: the calls before a rewind still happened",
        ),
        E::not_read(
            GEMINI_CHAT,
            "kind:subagent",
            G_JSONL,
            "a subagent's chat, at chats/<parent session>/<session>.jsonl, is outside the glob tmp/*/chats/session-*.jsonl: its MCP calls are not read",
        ),
    ]
}

/// Gemini CLI: the chat document, the debug log and `--output-format stream-json`.
fn gemini_chat_json_debug_log_and_stream_json() -> Vec<CensusEntry> {
    vec![
        // chat_json: bundle 0.38.2 chunk-EA775AOR.js 253488 (file name),
        // 253712-253726 (writeConversation): one document, rewritten whole.
        E::read(
            GEMINI_LEGACY_CHAT,
            "messages[].toolCalls",
            G_JSON,
            "as a later chat's toolCalls: tool_call_observed per MCP call with its outcome, a refusal tool_call_refused with its reason, and skills activated",
        ),
        E::read(
            GEMINI_LEGACY_CHAT,
            "messages[] error/info/warning",
            G_JSON,
            "as a later chat's UI records: explicit_error or needs-auth for a named server",
        )
        .silence(G_UI_SILENCE),
        E::read(
            GEMINI_LEGACY_CHAT,
            "lastUpdated",
            G_JSON,
            "the session's last record time",
        ),
        // debug_log: core utils/debugLogger.js (GEMINI_DEBUG_LOG_FILE),
        // tools/mcp-client-manager.js 70-104 (emitDiagnostic).
        E::not_read(
            GEMINI_DEBUG,
            "[MCP error] Error during discovery for MCP server 'SERVER'",
            "0.32.1–0.61.0",
            "written only to the file GEMINI_DEBUG_LOG_FILE names, which no record source reads; the one place 0.32.1 on writes every discovery failure",
        ),
        // stream_json: core output/types.d.ts (JsonStreamEventType), bundle
        // gemini-3HFX2LNT.js 11630 (init), 11830-11860 (tool_use,
        // tool_result), 11906-11975 (error).
        E::not_read(
            STREAM,
            "init",
            G,
            "names no MCP server (session_id and model only): nothing to read",
        ),
        E::not_read(
            STREAM,
            "tool_use",
            G,
            "not yet read: tool_name (`mcp_SERVER_TOOL`) and tool_id of each call; parameters are payload",
        ),
        E::not_read(
            STREAM,
            "tool_result",
            G,
            "not yet read: status (success, error) by tool_id; error.type tells a refusal (policy_violation, stop_execution) from a failure (mcp_tool_error)",
        ),
        E::not_read(
            STREAM,
            "error",
            G,
            "warnings and errors as words (severity, message), among them \"Agent execution blocked: …\" from a hook",
        ),
        E::not_read(
            STREAM,
            "result.stats.tool_calls",
            G,
            "a count of calls, no server",
        ),
        E::not_read(
            STREAM,
            "stats.tools.byName",
            G,
            "`--output-format json` only: per tool name (`mcp_SERVER_TOOL`) its count, successes, failures and decisions",
        ),
    ]
}

/// Gemini CLI telemetry: the config event, tool calls and hook calls.
fn gemini_telemetry_config_and_calls() -> Vec<CensusEntry> {
    vec![
        // telemetry: core telemetry/types.js (20-112 StartSessionEvent,
        // 175-311 ToolCallEvent, 1645 hook_call, 1180-1432 extensions),
        // metrics.js, tool-call-decision.js.
        E::read(
            TELEMETRY,
            "gemini_cli.config",
            G,
            "mcp_servers: each server read as taken into the session, though it names every configured server, those held back by mcp.allowed or mcp.excluded, disabled or in an untrusted folder too (tools/mcp-client-manager.js 308 keeps each \"for UI display\" before those checks); mcp_tools: tools listed per server, counted; extensions: each extension loaded",
        )
        .silence("Logged at start-up before discovery ends in an interactive session: an empty mcp_tools does not mean no tools were listed."),
        E::not_read(
            TELEMETRY,
            "gemini_cli.config.mcp_servers_count",
            G,
            "a count; mcp_servers names them",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.config.extension_ids",
            G,
            "ids beside the extensions' names, which are read",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.config.core_tools_enabled",
            G,
            "not yet read: the tools.core allow list, joined",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.config.approval_mode",
            G,
            "not yet read: default, auto_edit, yolo or plan",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.config.auth_type",
            G,
            "the model provider's sign-in, not a server's",
        ),
        E::read(
            TELEMETRY,
            "gemini_cli.tool_call",
            G,
            "tool_call_observed for tool_type mcp: mcp_server_name, function_name and success (function_args never read); error_type, decision and the error's words (scanned, never kept) make a refusal tool_call_refused with its reason, and mcp_tool_error a failure with tool_error",
        ),
        E::read(
            TELEMETRY,
            "gemini_cli.tool_call.decision",
            G,
            "reject: the user said no at the prompt (tool_call_refused, permission_denied); accept, auto_accept and modify say nothing of the outcome",
        ),
        E::read(
            TELEMETRY,
            "gemini_cli.tool_call.error_type",
            G,
            "policy_violation a refusal, told apart by the error's words (a deny rule permission_denied, a BeforeTool hook blocked_by_hook); unhandled_exception with \"requires user confirmation\" approval_required; mcp_tool_error a failure with tool_error; stop_execution (a hook's stop, before or after the call ran) left unknown; also error.type",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.tool_call.extension_name",
            G,
            "not yet read: the extension that brought the MCP tool's server",
        ),
        E::read(
            TELEMETRY,
            "gemini_cli.hook_call",
            G,
            "hook_fired: hook_name, hook_event_name, exit_code and success (hook_input and hook_output never read)",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.hook_call.count",
            G,
            "a metric: counts what hook_call events give one by one",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.hook_call.latency",
            G,
            "a metric: durations only",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.tool.call.count",
            G,
            "a metric (function_name, success, decision, tool_type): counts what tool_call events give one by one",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.tool.call.latency",
            G,
            "a metric: durations only",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.tool.execution.breakdown",
            G,
            "a metric of phases (validation, preparation, execution, result_processing): no server",
        ),
    ]
}

/// Gemini CLI telemetry: the tool queue, output, browser agent and extensions.
fn gemini_telemetry_queue_output_and_extensions() -> Vec<CensusEntry> {
    vec![
        E::not_read(
            TELEMETRY,
            "gemini_cli.tool.queue.depth",
            G,
            "a metric: queue length only",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.tool_output_truncated",
            G,
            "an output's size and truncation, by tool name: no outcome",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.tool_output_masking",
            G,
            "output masking counts: no server",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.browser_agent.tools.discovered",
            G,
            "the built-in browser agent's own tool count",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.browser_agent.tools.missing_semantic",
            G,
            "the built-in browser agent's missing tools",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.extension_install",
            G,
            "not yet read: extension_name, status, setting_scope (a lifecycle change, not a session's use)",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.extension_uninstall",
            G,
            "not yet read: extension_name, status",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.extension_update",
            G,
            "not yet read: extension_name, versions, status",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.extension_enable",
            G,
            "not yet read: extension_name, setting_scope",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.extension_disable",
            G,
            "not yet read: extension_name, setting_scope",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.slash_command",
            G,
            "command and subcommand (/mcp list, /mcp auth …) and status: no server named",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.plan.approval_mode_switch",
            G,
            "not yet read: from_mode, to_mode",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.conseca.verdict",
            G,
            "the safety checker's verdict on a call: no server",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.api_key_updated",
            G,
            "the model provider's key, not a server's",
        ),
        E::not_read(
            TELEMETRY,
            "gemini_cli.token_storage.initialization",
            G,
            "where OAuth tokens are kept (keychain or file): no server",
        ),
        E::read(
            TELEMETRY,
            "llm_call.gen_ai.tool.definitions",
            G,
            "tools_visible: the tools sent to the model, counted per configured server whose prefix fits uniquely",
        ),
        E::not_read(
            TELEMETRY,
            "tool_call.gen_ai.tool.name",
            G,
            "not yet read: the tool_call span names each call's tool; the tool_call log event gives the same with its server",
        ),
    ]
}

/// Gemini CLI: configured servers, trust, tools and policies.
fn gemini_config_servers_and_tools() -> Vec<CensusEntry> {
    vec![
        // config: bundle chunk-2YTYPKEZ.js 12396-15100 (settings schema),
        // core config/config.js 103-147 (MCPServerConfig),
        // policy/toml-loader.js 29 (mcpName).
        E::read(
            CONFIG,
            "mcpServers",
            G,
            "configured servers (command, url, httpUrl) in system, user and project settings and extensions' gemini-extension.json",
        ),
        E::read(
            CONFIG,
            "mcpServers.includeTools",
            G,
            "the server's tool allow list",
        ),
        E::read(
            CONFIG,
            "mcpServers.excludeTools",
            G,
            "the server's tool deny list",
        ),
        E::read(
            CONFIG,
            "mcpServers.trust",
            G,
            "shown as a setting (trust=true skips every confirmation of its tools)",
        ),
        E::not_read(
            CONFIG,
            "mcpServers.oauth",
            G,
            "not yet read: the server signs in (with authProviderType: dynamic_discovery, google_credentials, service_account_impersonation)",
        ),
        E::read(
            CONFIG,
            "mcp",
            G,
            "mcp.allowed and mcp.excluded (older allowMCPServers, excludeMCPServers): a server held back is excluded",
        ),
        E::not_read(
            CONFIG,
            "mcp.serverCommand",
            G,
            "a command that starts one more server, by no name",
        ),
        E::not_read(
            CONFIG,
            "admin.mcp",
            G,
            "remote admin settings (admin.mcp.enabled, config, requiredConfig): not on disk",
        ),
        E::not_read(
            CONFIG,
            "--allowed-mcp-server-names",
            G,
            "a flag, not a file: the host passes it itself in strict mode",
        ),
        E::read(
            CONFIG,
            "security.folderTrust.enabled",
            G,
            "with trustedFolders.json, GEMINI_CLI_TRUST_WORKSPACE and GEMINI_RESTRICTED_MODE: an untrusted folder disables every server (untrusted_folder)",
        ),
        E::not_read(
            CONFIG,
            "tools",
            G,
            "not yet read: tools.core, tools.allowed, tools.exclude and tools.confirmationRequired, which allow, exclude or confirm tools by name, MCP tools too",
        ),
        E::not_read(
            CONFIG,
            "policies/*.toml [[rule]] mcpName",
            G,
            "not yet read: a policy rule allows, asks or denies a server's tools (decision = \"deny\" refuses its calls)",
        ),
        E::not_read(
            CONFIG,
            "general.defaultApprovalMode",
            G,
            "not yet read: default, auto_edit, plan",
        ),
        E::not_read(
            CONFIG,
            "security.enablePermanentToolApproval",
            G,
            "not yet read: lets \"always allow\" be saved",
        ),
        E::not_read(
            CONFIG,
            "security.toolSandboxing",
            G,
            "not yet read: runs tools in a sandbox",
        ),
        E::not_read(
            CONFIG,
            "security.auth",
            G,
            "the model provider's sign-in (selectedType, enforcedType), not a server's",
        ),
    ]
}

/// Gemini CLI: configured hooks and the settings after them.
fn gemini_config_hooks_and_more() -> Vec<CensusEntry> {
    vec![
        E::read(
            CONFIG,
            "hooks",
            G,
            "a hook row per command of every event, in settings and in extensions' hooks/hooks.json",
        ),
        E::read(
            CONFIG,
            "hooks.BeforeTool",
            G,
            "a hook row per command (it can block a tool call)",
        ),
        E::read(CONFIG, "hooks.AfterTool", G, "a hook row per command"),
        E::read(
            CONFIG,
            "hooks.BeforeToolSelection",
            G,
            "a hook row per command (it can narrow the tools offered)",
        ),
        E::read(
            CONFIG,
            "hooksConfig",
            G,
            "hooksConfig.enabled false turns every hook off (disabled_in_config)",
        ),
        E::not_read(
            CONFIG,
            "hooksConfig.disabled",
            G,
            "not yet read: hooks named here never run, yet show enabled",
        ),
        E::not_read(
            CONFIG,
            "skills",
            G,
            "not yet read: skills.enabled and skills.disabled",
        ),
        E::read(
            CONFIG,
            "extensions/extension-enablement.json",
            G,
            "an extension off for this folder, with its servers and hooks",
        ),
        E::not_read(
            CONFIG,
            "extensions.disabled",
            G,
            "not yet read: extensions the settings list as disabled",
        ),
    ]
}

const Q: &str = "0.12.0–0.24.4";
const Q24: &str = "0.24.4";
const Q15_ON: &str = "0.15.10–0.24.4";
const Q_DEBUG: &str =
    "0.12.0–0.15.10 always; 0.21.2–0.24.4 only with QWEN_DEBUG_LOG_FILE=1 or --debug";
const Q_DEBUG_SILENCE: &str = "The debug log is off by default from 0.21.2: without it no line shows anything, and a missing error line never means the server started.";

fn qwen() -> Vec<CensusEntry> {
    let mut out = qwen_chat_and_debug_log();
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

/// Qwen Code: the chat recording and the debug log.
fn qwen_chat_and_debug_log() -> Vec<CensusEntry> {
    vec![
        // chat: 0.15.10 cli.js 176824 (createBaseRecord), 223115-223129
        // (recordToolResults), 222437-222547 (execution_denied),
        // 142514-142523 (ui_telemetry); 0.24.4 chunk-DPEB6S2R.js 30691,
        // 61610-61628 (executionStatus), chunk-2VS5EEXU.js 3971, 6768.
        E::read(
            QWEN_CHAT,
            "assistant.message.parts.functionCall",
            Q,
            "tool_call_observed per `mcp__SERVER__TOOL` call, with its id",
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
            "its qwen-code.tool_call event is the same call as its functionCall, not counted again (0.15 has no call_id to match it by; 0.24.4 has call_id)",
        ),
        E::not_read(
            QWEN_CHAT,
            "ui_telemetry.mcp_server_name",
            Q,
            "not yet read: the call's server, beside tool_type mcp, decision, status and error_type (which tell a refusal from a failure)",
        ),
        E::not_read(
            QWEN_CHAT,
            "system/slash_command",
            Q,
            "/mcp only opens a dialog: its result record holds no MCP status (outputHistoryItems is empty)",
        ),
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
        // (control requests); 0.24.4 chunk-KYFJLESB.js 17559.
        E::read(
            STREAM,
            "system/init.mcp_servers",
            Q,
            "agent_reported per server with its status (connected, connecting, disconnected)",
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
        E::not_read(
            STREAM,
            "assistant.content.tool_use",
            Q,
            "not yet read: each call's name (`mcp__SERVER__TOOL`) and id; input is payload",
        ),
        E::not_read(
            STREAM,
            "user.content.tool_result",
            Q,
            "not yet read: is_error by tool_use_id; content is payload",
        ),
        E::not_read(
            STREAM,
            "result.permission_denials",
            Q15_ON,
            "not yet read: the calls refused a permission in the run",
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// GIVEN each flavor's census WHEN its entries are listed THEN each
    /// (source, kind) is there once, and a kind said read comes from a
    /// source the reader really reads: a record source it declares, its
    /// stream-json output, telemetry or configuration.
    #[test]
    fn each_kind_is_named_once_and_read_only_where_the_reader_reads() {
        for flavor in [Flavor::Gemini, Flavor::Qwen] {
            let roles: Vec<String> = crate::records::sources(flavor)
                .iter()
                .map(|s| s.role.to_string())
                .collect();
            let mut seen = BTreeSet::new();
            for e in census(flavor) {
                assert!(
                    seen.insert((e.source.clone(), e.kind.clone())),
                    "{flavor:?}: {} / {} twice",
                    e.source,
                    e.kind
                );
                assert!(!e.says.trim().is_empty(), "{}", e.kind);
                if e.read {
                    let readable = roles.contains(&e.source)
                        || [TELEMETRY, CONFIG].contains(&e.source.as_str())
                        || (e.source == STREAM && flavor == Flavor::Qwen);
                    assert!(readable, "{flavor:?}: {} read from {}", e.kind, e.source);
                }
            }
        }
    }
}
