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

mod qwen;

/// The census of one flavor.
pub fn census(flavor: Flavor) -> Vec<CensusEntry> {
    match flavor {
        Flavor::Gemini => gemini(),
        Flavor::Qwen => qwen::qwen(),
    }
}

const G: &str = "0.61.0";
const G_JSONL: &str = "0.39.0–0.61.0";
/// First written by 0.4.0 (core 0.4.0 core/geminiChat.js 138): 0.2.1 and
/// 0.3.4 ship the ChatRecordingService but never start it; verified on a
/// real 0.10.0 run (tests/fixtures/records-releases/gemini-0.10.0-headless).
const G_JSON: &str = "0.4.0–0.38.2";
/// `-p --output-format stream-json` with MCP tools named bare (core 0.11.3
/// output/stream-json-formatter.js; `mcp_` from core 0.33.0
/// tools/mcp-tool.js 18).
const G_STREAM_BARE: &str = "0.11.3–0.32.1";
/// Every release: core 0.1.22 core/logger.js 9 (logs.json), 221 and 252
/// (checkpoint-TAG.json); 0.61.0 bundle chunk-5FZXKDXH.js 16187585,
/// 16194004.
const G_ALL: &str = "0.1.1–0.61.0";
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
            "read: the server answered the call with isError (tool_error), or (0.30.0 on) the MCP SDK's error was handed back as one, read from its words: MCP error -32001 a timeout, -32000 the connection closed, any other code a JSON-RPC error (protocol_error)",
        ),
        (
            "discovered_tool_execution_error",
            "a tools.discoveryCommand tool failed (no MCP server)",
        ),
        (
            "tool_not_registered",
            "read: the model called a tool the registry does not hold (its words: Tool \"NAME\" not found.): it reached no server, a refusal tool_not_available, never a use",
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
            "tool_call_observed per MCP call, server and tool split from displayName `TOOL (SERVER MCP Server)`, with its call id; its outcome from status: success succeeded; error a refusal or a failure by resultDisplay's words (no errorType is kept), a tool Gemini did not hold (\"Tool \"NAME\" not found\", its displayName the called name) a refusal tool_not_available split from its name, and an MCP SDK error in the result's words (timeout, connection_closed, protocol_error) the failure it names; cancelled the user's no (tool_call_refused, permission_denied) where its result says \"User denied execution.\", otherwise left unknown (an abort says nothing of whether it ran).",
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
            "a subagent's chat, at `chats/<parent session>/<session>.jsonl`, is outside the glob `tmp/*/chats/session-*.jsonl`: its MCP calls are not read",
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
        E::not_read(
            "logs_json",
            "tmp/<project>/logs.json",
            G_ALL,
            "the user's prompts (sessionId, messageId, type user, message): payload, never read, and nothing of MCP; before 0.4.0 it and checkpoints are all a session leaves",
        ),
        E::not_read(
            "checkpoint",
            "tmp/<project>/checkpoint-TAG.json",
            G_ALL,
            "a conversation the user saved with /chat save: its history's functionCall parts name tools (bare or SERVER__TOOL before 0.33, so no server) beside their arguments and results, which are payload: not read",
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
        // tool_result), 11906-11975 (error); read by path only
        // (stream_json.rs), verified on real runs
        // (tests/fixtures/records-by-path/gemini-0.61.0-*.stream.jsonl).
        E::read(
            STREAM,
            "init",
            G,
            "the session (session_id), the file's every later line its; names no MCP server and no version (the model is not kept)",
        ),
        E::read(
            STREAM,
            "tool_use",
            G,
            "tool_call_observed per `mcp_SERVER_TOOL` call with its tool_id, split at a configured server's name, else where only one split is possible; `activate_skill`: skill_invoked with the skill's name (parameters.name only); parameters are otherwise payload, never read",
        ),
        E::read(
            STREAM,
            "tool_use:SERVER__TOOL",
            G_STREAM_BARE,
            "tool_call_observed where a configured server's name fits before `__` (the name two servers sharing a tool get, core 0.31.0 tools/mcp-tool.js 175); its result by tool_id as tool_result",
        ),
        E::not_read(
            STREAM,
            "tool_use:bare MCP tool name",
            G_STREAM_BARE,
            "an MCP tool named as the server names it, which no line tells from a built-in's and no line says the version of: its calls are not read (the chat file of the same run, displayName `TOOL (SERVER MCP Server)`, gives them)",
        ),
        E::not_read(
            STREAM,
            "tool_use:mcp_name_unsplit",
            G,
            "an `mcp_SERVER_TOOL` name that splits more than one way with no configured server to decide, or that Gemini shortened past 63 characters (`...`): the call is said not read, never guessed",
        ),
        E::read(
            STREAM,
            "tool_result",
            G,
            "by tool_id: success a use; error a refusal with its reason by the words the UI showed (output, as the chat's resultDisplay: permission_denied, approval_required, blocked_by_hook), error.type tool_not_registered a refusal (tool_not_available: no such tool), error.type mcp_tool_error a failure (tool_error, or the MCP SDK's error its message names: timeout, connection_closed, protocol_error), a hook's stop unknown, a cancelled call (`[Operation Cancelled] …`) the user's no (permission_denied) or unknown; output and error.message are scanned, never kept",
        ),
        E::not_read(
            STREAM,
            "error",
            G,
            "warnings and errors as words (severity, message), among them \"Agent execution blocked: …\" from a hook",
        ),
        E::read(
            STREAM,
            "result",
            G,
            "the run's end: status error with Gemini's `[API Error: …]` words (error.message, scanned, never kept; bundle chunk-5FZXKDXH.js 394906 parseAndFormatApiError) read as why its model API failed, report-level (no server's): \"fetch failed sending request\" no HTTP answer, session_request_failed (no cause claimed: a closed port and an unknown host read the same), an HTTP 401 or 403 auth_rejected; any other error left unsaid",
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
