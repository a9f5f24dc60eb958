//! Claude Code's census: every kind of record, attachment, stream-json
//! message, telemetry and configuration key its shipped code writes or reads
//! that bears on MCP servers, tools, skills, hooks, plugins, auth or
//! permissions, and whether Tether reads it (see `tether_core::records::CensusEntry`).
//!
//! Found in the shipped binaries (Bun-compiled, the JavaScript in their
//! string table): `tests/peers/node_modules/@anthropic-ai/claude-code/bin/claude.exe`
//! (2.1.197) and `tests/peers/newest/…/bin/claude.exe` (2.1.332), scanned by
//! `tests/census/claude.json`.

use tether_core::records::CensusEntry;

/// Both releases (the pinned and the newest).
const BOTH: &str = "2.1.197–2.1.332";
/// Only the newest.
const NEW: &str = "2.1.332";
/// Progress records: written by the releases before 2.1.197 (real
/// transcripts), never by the installed ones.
const OLD_PROGRESS: &str =
    "2.1.14–2.1.39 written (real transcripts); 2.1.197–2.1.332 never written";

/// Transcripts (`records::TRANSCRIPT`).
const T: &str = "transcript";
/// Per-server logs (`records::MCP_LOG`).
const L: &str = "mcp_log";
/// `-p --output-format stream-json --verbose` (and its control protocol).
const S: &str = "stream_json";
/// OpenTelemetry.
const O: &str = "telemetry";
/// Configuration.
const C: &str = "config";

fn read(source: &str, kind: &str, releases: &str, gives: &str) -> CensusEntry {
    CensusEntry::read(source, kind, releases, gives)
}

fn not(source: &str, kind: &str, releases: &str, why: &str) -> CensusEntry {
    CensusEntry::not_read(source, kind, releases, why)
}

/// Why an SDK control request is not read.
const CONTROL: &str = "a control request of the SDK protocol (`--input-format stream-json`): a host driving the CLI sends or answers it; a passthrough run never sees it";

/// Why a plugin load error's or warning's `type` is not read.
const PLUGIN_ERROR: &str = "a plugin load error or warning type (`system/init` `plugin_errors`/`plugin_warnings[].type`): not read; an entry of `plugin_errors` is read as its plugin's failure, whatever its type";

/// Every kind (see the module docs).
pub fn census() -> Vec<CensusEntry> {
    let mut out = Vec::new();
    out.extend(transcript());
    out.extend(mcp_log());
    out.extend(stream_json());
    out.extend(telemetry());
    out.extend(config());
    out.extend(config_switches());
    out
}

fn transcript() -> Vec<CensusEntry> {
    vec![
        // Message content blocks: `{type:"tool_use",id,name,input}`,
        // `{tool_use_id,type:"tool_result",content}`.
        read(T, "assistant/tool_use", BOTH, "tool_call_observed for each `mcp__SERVER__TOOL` call, with its id; a `Skill` call: skill_invoked (the skill's name only)"),
        // The words of a failed call: `Claude requested permissions to use ${name}, but you haven't granted it yet.`
        // (the `ask` decision's message, a headless run answering it), `${event} hook error: ${blockingError}`,
        // `Permission to use ${name} has been denied.`, the MCP SDK's `MCP error ${code}: ${message}`.
        read(T, "user/tool_result", BOTH, "the outcome of the call with its `tool_use_id` (`is_error`: failed); where `is_error` and Claude Code's own words say so, tool_call_refused instead: `approval_required` (\"…but you haven't granted it yet\": a headless run that could not ask; measured), `blocked_by_hook` (\"PreToolUse:TOOL hook error: …\": exit 2 in both, a JSON deny in 2.1.332; measured), `permission_denied` (\"Permission to use TOOL has been denied…\": a rule or the mode; \"The user doesn't want to proceed with this tool use.…\": a person rejected it, the words of 2.1.197's `ize` and 2.1.332's `tpa`, real 2.1.38/2.1.39 beside `toolUseResult: \"User rejected tool use\"`), `approval_required` also for \"Permission to use TOOL has been auto-denied (prompts unavailable).\" (a real 2.1.29 sub-agent's); `protocol_error` for \"MCP error -N: …\" (2.1.197; 2.1.332 passes the JSON-RPC error's message alone, a plain failure); `tool_not_available` for \"<tool_use_error>Error: No such tool available: NAME…\" (both releases' code; a real 2.1.71 session): the call reached no server and the tool was not available then, no use and no offer. The words are compared, never kept").silence("2.1.197 answers a PreToolUse hook's JSON `deny` with the hook's own words alone: that refusal reads as a failed call; a deny rule removes the tool before the model, so a refused call is never written for it"),
        // A tool search's result: `{type:"tool_result",tool_use_id,content:e.matches.map((n)=>({type:"tool_reference",tool_name:n}))}`.
        not(T, "user/tool_result.tool_reference", BOTH, "not yet read: each tool a tool search loaded for the model (`tool_name`)"),
        // Session metadata re-appended: `{type:"permission-mode",permissionMode,sessionId}`.
        not(T, "permission-mode", BOTH, "not yet read: the session's permission mode, as session metadata"),
        // `mcpMeta:void 0` beside `toolUseResult` on a tool-result message;
        // `e instanceof Ap?e.mcpMeta`.
        not(T, "user.mcpMeta", BOTH, "the MCP result's own metadata beside a tool result: what the server chose to send, payload; the call's outcome is read from `tool_result`"),
        // `{type:"tools-used",tools:g.names(),sessionId}`.
        read(T, "tools-used", NEW, "tool_visible for each `mcp__SERVER__TOOL` it names"),
        // `api-request-shape` (2.1.332 only).
        read(T, "api-request-shape.shape.tools", NEW, "tool_visible for each `mcp__SERVER__TOOL` one request to the model held (names only)"),
        // `{type:"tool_offer_record",offered,hidden,withheld}` (2.1.332).
        not(T, "tool_offer_record", NEW, "not yet read: `{offered, hidden, withheld}` tool names are in 2.1.332's code; where it is written was not verified in a real run"),
        // Attachments: `{type:"attachment",attachment:{type:…}}`; the
        // getters return `[{type:"deferred_tools_delta",…}]`.
        read(T, "attachment/deferred_tools_delta", BOTH, "tool_deferred for each `mcp__SERVER__TOOL` in `addedNames` (held behind the tool search)").silence("written only while the tool search holds tools back: no record shows nothing was deferred"),
        read(T, "deferred_tools_delta.needsAuthMcpServers", BOTH, "agent_reported needs-auth for each server named (a claude.ai connector by its display name, under the name its tools carry)"),
        read(T, "deferred_tools_delta.pendingMcpServers", BOTH, "the server's name only (pending: no stage)"),
        read(T, "deferred_tools_delta.failedMcpServers", NEW, "explicit_error for each `{name, errorCode, error}` (the reason from its words, never the words)"),
        not(T, "deferred_tools_delta.removedNames", BOTH, "not yet read: tools that left the pool behind the search (a server gone or its list changed)"),
        not(T, "deferred_tools_delta.readdedNames", BOTH, "not yet read: tools that came back into the pool behind the search"),
        read(T, "attachment/deferred_tools_record", NEW, "tool_visible for each `mcp__SERVER__TOOL` in `entries` (definitions a search loaded for the model)"),
        // `function ROi(e,n,o){…return[{type:"mcp_dropped_tools_delta",…g}]}`:
        // `{addedEntries}` built from each connected client's `droppedTools`
        // `{toolName, reason}` (one entry per tool, or one per server with a
        // count past a limit).
        read(T, "attachment/mcp_dropped_tools_delta", NEW, "tool_withheld for each entry `\"TOOL\" (MCP server \"SERVER\"): \"REASON\"` in `addedEntries` (`schema_unsupported` where the reason names the schema, else `dropped_by_harness`); a server's count entry gives nothing").silence("written only when a tool is dropped that no earlier record announced: no record in one file shows no tool was dropped only where the session's earlier records are read too"),
        // `return[{type:"mcp_instructions_delta",...ie}]` (addedNames: servers).
        not(T, "attachment/mcp_instructions_delta", BOTH, "not yet read: servers whose instructions were added for the model (`addedNames`); holds the instructions' text (payload)"),
        // `[{type:"repl_mcp_needs_auth",servers:[{name,authTool}]}]`.
        not(T, "attachment/repl_mcp_needs_auth", NEW, "not yet read: `{servers: [{name, authTool}]}`, servers that need a login and the tool that starts it (REPL tool mode)"),
        not(T, "attachment/repl_mcp_servers", NEW, "not yet read: the MCP servers described to the model in REPL tool mode (`content`: text)"),
        not(T, "attachment/linked_plugin_tools_note", NEW, "a note to the model that a linked computer runs its own copy of a plugin's server (text)"),
        not(T, "attachment/plugin_note", NEW, "a plugin's note to the model (`plugin`, `content`: text)"),
        not(T, "attachment/mcp_resource", BOTH, "an @-mentioned MCP resource's content (payload); `unread` when permissions refused it"),
        not(T, "attachment/tool_search_usage_reminder", BOTH, "a reminder to the model naming tools behind the search it has not found (`undiscoveredToolNames`); `deferred_tools_delta` already says they are deferred"),
        not(T, "attachment/tool_hosts_notice", NEW, "remote tool hosts described to the model (`lines`: text); no MCP server"),
        not(T, "attachment/tool_hosts_correction", NEW, "a correction of the remote tool hosts described (`lines`: text); no MCP server"),
        not(T, "attachment/tool_host_result_lines", NEW, "a remote tool host's output lines for one call (payload)"),
        not(T, "attachment/tool_results_cut", NEW, "tool results cut from the context (`callIds`, token count): no outcome"),
        not(T, "attachment/advisor_tool", NEW, "the built-in advisor tool offered or removed (`available`, `model`, `toolChange`); no MCP server"),
        not(T, "attachment/command_permissions", BOTH, "a slash command's `allowedTools` and model; no MCP server"),
        // Skills.
        read(T, "attachment/skill_listing", BOTH, "skill_listed for each skill in `names`; a `PLUGIN:SKILL` name: plugin_loaded for its plugin"),
        not(T, "attachment/invoked_skills", BOTH, "not yet read: skills invoked earlier, restored after a compaction (`skills`, `skillsToReload`); the invocation itself is read from its `Skill` call"),
        not(T, "attachment/dynamic_skill", BOTH, "not yet read: skills found in a nested `.claude/skills` directory (`skillDir`, `skillNames`)"),
        not(T, "attachment/skill_mention", NEW, "not yet read: a skill the user named (`skillName`); not an invocation"),
        // Hooks: `jt({type:"hook_…",hookName,toolUseID,hookEvent,…})`; the
        // writer drops `hook_success` without content, stdout or stderr
        // (`if(e.type==="attachment"&&e.attachment.type==="hook_success"&&!e.attachment.content&&!e.attachment.stdout?.trim()&&!e.attachment.stderr?.trim())return!1`).
        read(T, "attachment/hook_success", BOTH, "hook_fired: succeeded (its command's shape, exit code)").silence(crate::records::HOOK_SILENCE),
        read(T, "attachment/hook_non_blocking_error", BOTH, "hook_fired: failed (exit code)"),
        read(T, "attachment/hook_blocking_error", BOTH, "hook_fired: blocked (the call or turn it stopped never ran)"),
        read(T, "attachment/hook_error_during_execution", BOTH, "hook_fired: failed"),
        read(T, "attachment/hook_stopped_continuation", BOTH, "hook_fired: blocked (it stopped the turn)"),
        read(T, "attachment/hook_cancelled", BOTH, "hook_fired: cancelled, or timed out (`timedOut`)"),
        not(T, "attachment/hook_additional_context", BOTH, "context a hook added for the model (`content`: payload); its run is read from its `hook_*` result"),
        not(T, "attachment/hook_system_message", BOTH, "a hook's message to the user (text); its run is read from its `hook_*` result"),
        not(T, "attachment/hook_permission_decision", BOTH, "not yet read: a PermissionRequest hook's decision (`decision`, `toolUseID`): a call it denied never reached the server"),
        not(T, "attachment/hook_deferred_tool", BOTH, "not yet read: a PreToolUse hook deferred the call (`toolName`, `toolUseID`; `toolInput` is payload)"),
        not(T, "attachment/async_hook_response", BOTH, "not yet read: an async hook's late result (`hookName`, `hookEvent`, `toolName`; its output is payload)"),
        not(T, "attachment/async_hook_response_batch", NEW, "not yet read: several async hooks' late results (`hooks`)"),
        // `{type:"system",subtype:"stop_hook_summary",hookCount,hookInfos,hookErrors,…,preventedContinuation,stopReason}`.
        read(T, "system/stop_hook_summary", BOTH, "hook_fired for each Stop hook in `hookInfos` (its command's shape): succeeded where no error; failed where one hook ran and gave errors (blocked where it stopped the turn); unknown where several ran and errors name no one; a hook that also wrote its own attachment is that run, counted once (the same `toolUseID` and command)").silence("written only when a Stop hook ran: no record shows whether one ran only where none is configured"),
        // The message written in the model's place: `{content:[{type:"text",text:e}],isApiErrorMessage:!0,apiError:t,error:n,errorDetails:r,…}` (2.1.197's shipped code).
        read(T, "assistant.isApiErrorMessage", BOTH, "the run's end in an error of its model API: the session's error (report-level), its one text item compared with the words the stream-json `result` line repeats (real 2.1.197 and 2.1.332 runs on a closed port), never kept; the same reasons as that line"),
        // `function Llt(e,n,o,g,h){return{type:"system",subtype:"api_error",level:"error",error:e,retryInMs:n,retryAttempt:o,maxRetries:g,source:h,…}}`
        // (2.1.332; 2.1.197's `N8o` builds it too, and a real 2.1.197 run on a closed port wrote none).
        read(T, "system/api_error", NEW, "a request to the model API failed and is retried: the session's error (report-level), at its time: `error.connection.code` in the words the run's end uses (ECONNREFUSED `connection_refused`, ENOTFOUND `host_not_found`, …; real 2.1.332 runs), `isSSLError` `tls_failed`, `noResponse` `timeout`, `status` 401/403 `auth_rejected`, another status `server_error` with it, none \"its model API could not be reached\" (`session_request_failed`); `message` and `formatted` are never read").silence("written only while a run retries, and by 2.1.332 (2.1.197 wrote none in a real run): none says nothing of the model API"),
        not(T, "system/permission_retry", BOTH, "a notice to the user (`content`, `commands`, `level`); names no MCP server"),
        // Progress: `function Sie(e){if(e.type==="progress")return!1;…}` (2.1.197),
        // the same in 2.1.332: never written there. Written by earlier
        // releases: real transcripts of 2.1.14 to 2.1.39 hold them
        // (`{type:"progress",data:{type:"hook_progress",hookEvent,hookName,command},toolUseID,…}`,
        // 5,697 in 19 files of 2.1.38/2.1.39; `{type:"mcp_progress",status,serverName,toolName}` in 2.1.15).
        read(T, "progress/hook_progress", OLD_PROGRESS, "hook_fired for each (`hookName`, `hookEvent`, its command's shape: the program after a leading `cd … &&`); how it ended is not written: unknown, never success; a Stop hook's is its `stop_hook_summary`'s run, not read twice").silence("every hook run wrote one in the releases that wrote progress records: none means no hook ran there"),
        read(T, "progress/mcp_progress", OLD_PROGRESS, "tool_call_observed for the call with its `toolUseID`: `started` (no outcome yet), `completed` (succeeded), `failed` (failed); the server by the name its tools carry (`plugin:P:S` is `plugin_P_S`)"),
        not(T, "progress/bash_progress", OLD_PROGRESS, "a shell command's output so far (payload); real 2.1.38/2.1.39"),
        not(T, "progress/agent_progress", OLD_PROGRESS, "a sub-agent's messages so far (payload); its calls are read from its own transcript (`subagents/agent-*.jsonl`); real 2.1.38/2.1.39"),
        not(T, "progress/waiting_for_task", OLD_PROGRESS, "a wait for a background task; names no MCP server; real 2.1.38/2.1.39"),
        // 2.1.14: `{type:"user",isMeta:true,message:{content:"Stop hook feedback:\n[COMMAND]: OUTPUT"}}` (real transcripts).
        read(T, "user/isMeta:Stop hook feedback", "2.1.14 (real transcripts; later releases write `stop_hook_summary` and `hook_*` attachments)", "hook_fired: a Stop hook that blocked, its command's shape from the brackets; the output after them is never read"),
        // Sub-agents: 2.1.197 `function Tk(e){…join(t,n,"subagents",r)…`agent-${e}.jsonl`}`,
        // 2.1.332 `function Hg(t){…`agent-${t}.jsonl`}` (records/subagents.rs).
        read(T, "projects/*/SESSION/subagents/agent-*.jsonl", "2.1.38–2.1.332 (real 2.1.38, 2.1.39, 2.1.220; the path in both binaries)", "a sub-agent's transcript (Task, Explore, a compaction, a workflow's agent one or two directories down), read as a transcript: its records carry the parent's `sessionId` (`agentId`, `isSidechain`), so its calls count for the parent's session"),
        not(T, "progress/skill_progress", BOTH, "never written: a progress record is dropped before the transcript is written (releases before 2.1.197 wrote progress records: see `progress/hook_progress`)"),
        not(T, "progress/repl_tool_call", BOTH, "never written: a progress record is dropped before the transcript is written"),
        not(T, "progress/tool_heartbeat", NEW, "never written: a progress record is dropped before the transcript is written"),
    ]
}

fn mcp_log() -> Vec<CensusEntry> {
    // The messages, as `strings` finds them in both binaries.
    vec![
        read(
            L,
            "Successfully connected",
            BOTH,
            "agent_reported connected (the directory names the server)",
        ),
        read(
            L,
            "Connection established with capabilities",
            BOTH,
            "agent_reported connected",
        ),
        read(
            L,
            "Authentication required",
            BOTH,
            "agent_reported needs-auth, `oauth_required` (a login wanted; real runs of both)",
        ),
        read(
            L,
            "Server rejected the configured Authorization header (HTTP N)",
            BOTH,
            "agent_reported failed, `auth_rejected` (the token sent was refused; real runs of both; 2.1.332 also words a headersHelper's and the session credential's so)",
        ),
        read(
            L,
            "Connection failed",
            BOTH,
            "agent_reported failed, the reason from its words, never the words (real runs of both): `command_not_found` (ENOENT, \"Executable not found in $PATH\"), `connection_refused` (\"Unable to connect\", ECONNREFUSED), `timeout` (\"connection timed out after Nms\", CONNECT_TIMEOUT), `server_exited` (\"Connection closed\": the process ended before it answered); the summary says Claude Code's MCP log said it",
        ),
        not(
            L,
            "HTTP Connection failed after Nms: … (code: C, errno: E)",
            BOTH,
            "left to the line after it, which says in Claude Code's own terms whether a token was sent (the rejected header, `Authentication required`, or `Connection failed`)",
        ),
        read(
            L,
            "Tool 'X' completed successfully",
            BOTH,
            "tool_call_observed, succeeded",
        ),
        read(
            L,
            "Tool 'X' failed",
            BOTH,
            "tool_call_observed, failed (`protocol_error` where its words are the MCP SDK's `MCP error -N:`, 2.1.197)",
        ),
        read(
            L,
            "Calling MCP tool: X",
            BOTH,
            "tool_visible (the model picked it)",
        ),
        read(
            L,
            "Skipping tool \"X\"",
            BOTH,
            "tool_withheld `schema_unsupported` (its input schema)",
        ),
    ]
}

fn stream_json() -> Vec<CensusEntry> {
    let mut out = vec![
        read(S, "system/init", BOTH, "agent_reported per server in `mcp_servers`; its tools in `tools` are the harness's list, listed (counted and by name), never model_visible: a run whose model API never answered prints the same line (tool_deferred each with `ToolSearch` listed), each server named as its tools are (Claude Code's own rule: `claude.ai Gmail` is `claude_ai_Gmail`, `plugin:P:S` is `plugin_P_S`; the name shown kept as a note; real 2.1.276); `plugins`: plugin_loaded; `plugin_errors`: plugin_failed"),
        // The client state `{name,type:"needs-auth",config}`, reported as a status.
        read(S, "system/init.mcp_servers.status:needs-auth", BOTH, "agent_reported needs-auth"),
        // `source:r().optional().describe("Where the server definition came from …")`.
        not(S, "system/init.mcp_servers.source", "2.1.276 (a real run)–2.1.332", "not yet read: where the server's definition came from (`sdk`, `plugin`, `claudeai`, a config scope); a claude.ai connector is told by its name (`claude.ai …`)"),
        // `tool_result_meta:O(u({id:r(),non_execution_kind:U(cTn).optional(),call_ended:…}))`,
        // `cTn=["user-rejected","permission-rule","automode-blocked","automode-unavailable","automode-parsing-error","interrupted","cancelled"]` (2.1.332).
        read(S, "user.tool_result_meta.non_execution_kind", NEW, "tool_call_refused for the call with its `id`: `permission_denied` for user-rejected, permission-rule, automode-blocked; `approval_required` for automode-unavailable, automode-parsing-error; interrupted and cancelled say nothing here (the result's own words decide)"),
        not(S, "user.tool_result_meta.call_ended", NEW, "not yet read: `not_started` for a call a replaced process closed without running it; absent or unknown is not known"),
        // `mcp_server_errors:O(u({name,type,message}))`: "--mcp-config entries
        // that failed validation and were skipped … absent from mcp_servers[]".
        not(S, "system/init.mcp_server_errors", NEW, "not yet read: `[{name, type, message}]`, `--mcp-config` entries that failed validation and were skipped (absent from `mcp_servers`); `type` is unknown_type, url_missing_type, invalid_config, reserved_name, …").silence("present only when an entry was skipped"),
        not(S, "system/init.skills", BOTH, "not yet read: the skills offered, by name"),
        not(S, "system/init.plugin_warnings", BOTH, "not yet read: `[{plugin, type, message}]` advice to a plugin's author; the plugin still loaded"),
        not(S, "system/init.permissionMode", BOTH, "not yet read: the session's permission mode"),
        // `Js({type:"system",subtype:"hook_started",hook_id,hook_name,hook_event})`,
        // gated by `jwn(o)` (`Rut(e)||…UserPromptSubmit…`).
        not(S, "system/hook_started", BOTH, "not yet read: a hook started (`hook_id`, `hook_name`, `hook_event`)").silence("printed only for the hook events stream-json is set to report: no line shows whether a hook ran"),
        not(S, "system/hook_progress", BOTH, "a running hook's output so far (payload)"),
        read(S, "system/hook_response", BOTH, "hook_fired (its `hook_name`, `hook_event`, exit code, and `outcome` success, error or cancelled; stdout and stderr are payload, never read), where a saved stream-json is read by path: the only trace of a hook that succeeded in silence").silence("printed only for the hook events stream-json is set to report: no line shows whether a hook ran"),
        // `yield{type:"notification",notification:{key:"stop-hook-error",text:`Stop hook error occurred …`}}`
        // (2.1.197 bin/claude.exe byte 236470958, after a Stop hook's
        // non-blocking error or error during execution, and 236477850
        // after a blocking one; 2.1.332 `stop hook problem`, 351390212).
        read(S, "system/notification:stop-hook-error", BOTH, "hook_fired for a `Stop` hook, its outcome unknown (a failure or a block: the line names neither the hook nor how it ended; its `text` is not kept); other notifications are not read").silence("a Stop hook that succeeded prints nothing in stream-json (its transcript's `stop_hook_summary` or attachment says it ran)"),
        // `{type:"system",subtype:"permission_denied",tool_name,tool_use_id,agent_id,decision_reason_type,decision_reason_code,decision_reason,message}`.
        read(S, "system/permission_denied", BOTH, "tool_call_refused for a `mcp__SERVER__TOOL` `tool_name`, with its `tool_use_id`: `blocked_by_hook` (`decision_reason_type` hook), `approval_required` (asyncAgent: no one could be asked; or no type and the `ask` decision's words: a headless run that could not ask, measured on 2.1.332), else `permission_denied`; `message` is compared with Claude Code's words, never kept").silence("printed only for a denial decided before asking (2.1.197 printed none in a headless run that could not ask, nor either release for a PreToolUse hook: their `user` line's `tool_result` says it)"),
        // `OOm=ve(()=>H.object({type:H.literal("system"),subtype:H.literal("api_retry"),attempt,max_retries,retry_delay_ms,error_status:H.number().nullable(),error:LQo(),…}))`
        // (2.1.197; 2.1.332's `dW` adds `no_response:{waited_ms,retry_wait_ms}`).
        read(S, "system/api_retry", BOTH, "a request to the model API failed and is retried: the session's error (report-level, no server's), in the words the run's end uses: no `error_status` (no HTTP answer; real runs on a closed port) \"its model API could not be reached\" (`session_request_failed`, no cause claimed), `no_response` `timeout`, 401/403 or `authentication_failed` `auth_rejected`, another status `server_error` with its status and its `error` class (from the shipped closed list; anything else unshown); read after the run's `result` line, whose words are kept where both are there").silence("printed only while a run retries: a run that never retried prints none"),
        not(S, "result.permission_denials", BOTH, "each call it lists (`tool_name`, `tool_use_id`; `tool_input` is payload) is read as refused from its own `tool_result` and `permission_denied` lines, which say why; this list says no reason (a hook's block and a headless run's unanswered ask alike), so a refusal read from it could only guess"),
        not(S, "system/permission_check_status", NEW, "a permission check still waiting (`tool_use_id`, `status`)"),
        not(S, "system/tool_host_result", NEW, "a remote tool host's result for one call (`tool_use_id`, `host`); no MCP server"),
        not(S, "system/plugin_install", BOTH, "a plugin install's progress (`status`, `name`, `error`) in a session that installs one"),
        not(S, "tool_progress", BOTH, "a running tool's or hook's heartbeat (`tool_use_id`, `tool_name`, elapsed time)"),
        not(S, "tool_use_summary", BOTH, "a summary of earlier tool calls for the user (`summary`: text)"),
        not(S, "auth_status", BOTH, "the CLI's own login to Anthropic (with `enableAuthStatus`), not an MCP server's"),
    ];
    // The SDK control protocol: `this.request({subtype:"mcp_status"})`,
    // `sendControlRequest({subtype:"can_use_tool",…})`.
    for (kind, releases) in [
        ("can_use_tool", BOTH),
        ("hook_callback", BOTH),
        ("mcp_message", BOTH),
        ("mcp_status", BOTH),
        ("mcp_toggle", BOTH),
        ("mcp_reconnect", BOTH),
        ("mcp_set_servers", BOTH),
        ("mcp_authenticate", BOTH),
        ("mcp_clear_auth", BOTH),
        ("mcp_oauth_callback_url", BOTH),
        ("mcp_read_resource", NEW),
        ("set_mcp_permission_mode_override", BOTH),
        ("set_permission_mode", BOTH),
        ("list_permission_rules", NEW),
        ("claude_authenticate", BOTH),
        ("claude_oauth_callback", BOTH),
        ("claude_oauth_wait_for_completion", BOTH),
        ("oauth_token_refresh", BOTH),
        ("host_auth_token_refresh", BOTH),
        ("reload_plugins", BOTH),
        ("reload_skills", BOTH),
        ("get_hooks_listing", NEW),
        ("get_skills_dialog", NEW),
        ("register_device_hooks", NEW),
        ("upload_device_hook_template", NEW),
        ("remote_tool_call", NEW),
        ("remote_tools_announce", NEW),
        ("remote_tools_probe", NEW),
        ("remote_tools_reannounce", NEW),
    ] {
        out.push(not(
            S,
            &format!("control_request/{kind}"),
            releases,
            CONTROL,
        ));
    }
    // Plugin load errors and warnings: `o.push({type:"mcp-config-invalid",source,plugin,serverName,validationError})`, …
    out.push(not(S, "system/init.plugin_errors.type:mcp-server-suppressed-duplicate", BOTH, "not yet read as such: a plugin's MCP server dropped for another of the same command or URL (`serverName`, `duplicateOf`); read as its plugin's failure, which it is not"));
    out.push(not(S, "system/init.plugin_errors.type:mcp-server-connector-blocked", NEW, "not yet read as such: a plugin's MCP server blocked (`serverName`, `checkFailed`); read as its plugin's failure"));
    out.push(not(S, "system/init.plugin_errors.type:mcp-config-invalid", BOTH, "not yet read as such: a plugin's MCP server entry invalid and dropped (`serverName`, `validationError`); read as its plugin's failure"));
    out.push(not(S, "system/init.plugin_errors.type:mcpb-needs-config", NEW, "not yet read as such: a plugin's `.mcpb` server waiting for user configuration (`serverName`)"));
    for (kind, releases) in [
        ("mcpb-download-failed", BOTH),
        ("mcpb-extract-failed", BOTH),
        ("mcpb-invalid-manifest", BOTH),
        ("hook-load-failed", BOTH),
        ("plugin-cache-miss", BOTH),
        ("plugin-not-found", BOTH),
        ("plugin-not-installed", BOTH),
        ("plugin-renamed", BOTH),
        ("plugin-repository-refused", NEW),
        ("plugin-agent-setting-deprecated", NEW),
        ("plugin-subagent-status-line-deprecated", NEW),
        ("hooks-left-out-by-name", NEW),
        ("hooks-module-left-out-by-name", NEW),
        ("hooks-module-not-running", NEW),
        ("hooks-passed-over", NEW),
        ("managed-hooks-restricted", NEW),
        ("managed-plugin-disabled-by-settings", NEW),
        ("synced-plugin-shadowed", NEW),
    ] {
        out.push(not(
            S,
            &format!("system/init.plugin_errors.type:{kind}"),
            releases,
            PLUGIN_ERROR,
        ));
    }
    out
}

fn telemetry() -> Vec<CensusEntry> {
    // Logs: `Jc("mcp_server_connection",{…})` (2.1.197), `hd(…)` (2.1.332),
    // exported as `claude_code.NAME`; spans: `startSpan("claude_code.tool",…)`;
    // metrics: `t("claude_code.code_edit_tool.decision",…)`.
    vec![
        read(O, "claude_code.mcp_server_connection", BOTH, "agent_reported connected, or explicit_error with `error_code` (the server named only with `OTEL_LOG_TOOL_DETAILS=1`)").silence("no event says a server needs a login"),
        read(O, "claude_code.tool_result", BOTH, "tool_call_observed with its outcome (`success`), the server and tool from `tool_parameters` (only with `OTEL_LOG_TOOL_DETAILS=1`)"),
        read(O, "claude_code.tool", BOTH, "the span (beta tracing): tool_call_observed for a `mcp__SERVER__TOOL` `tool_name`, its outcome from `success` or the span's status; a log event of the same name is not read"),
        // `…"gen_ai.tool.name":g?.mcpToolName??l,...g&&{"anthropic.mcp.server.name":g.serverName}` (2.1.332 only).
        not(O, "claude_code.tool:anthropic.mcp.server.name", NEW, "not yet read: the span's server (and `gen_ai.tool.name`, the tool) by their own names; the reader splits `tool_name`, which 2.1.332 replaces by `tool_name_safe` in some modes"),
        // `"claude_code.mcp.rpc",{spanType:"mcp.rpc",attrs:{"rpc.system":"mcp","rpc.service":e.name,"rpc.method":"tools/call",mcp_tool:n,attempt}}`.
        not(O, "claude_code.mcp.rpc", BOTH, "not yet read: one `tools/call` to a server (`rpc.service`: the server, `mcp_tool`, `attempt`), its error in the span's status"),
        not(O, "claude_code.tool.execution", BOTH, "not yet read: the execution part of a `claude_code.tool` span (its child)"),
        not(O, "claude_code.tool.blocked_on_user", BOTH, "not yet read: the time a call waited for the user's permission"),
        not(O, "claude_code.tool_decision", BOTH, "not yet read: a permission decision (`decision`, `source`, `tool_name`, `tool_use_id`): a rejected call never reached the server"),
        not(O, "claude_code.code_edit_tool.decision", BOTH, "a metric of edit-tool permission decisions; no MCP server"),
        not(O, "claude_code.permission_mode_changed", BOTH, "the session's permission mode changed"),
        not(O, "claude_code.hook", BOTH, "not yet read: a hook's span (beta tracing)"),
        not(O, "claude_code.hook_execution_start", BOTH, "not yet read: a hook started"),
        not(O, "claude_code.hook_execution_complete", BOTH, "not yet read: a hook ended"),
        not(O, "claude_code.hook_registered", BOTH, "not yet read: a hook registered at start"),
        not(O, "claude_code.hook_plugin_metrics", BOTH, "counts of plugin hooks"),
        not(O, "claude_code.plugin_loaded", BOTH, "not yet read: a plugin loaded"),
        not(O, "claude_code.plugin_installed", BOTH, "a plugin installed"),
        not(O, "claude_code.skill_activated", BOTH, "not yet read: a skill invoked"),
        not(O, "claude_code.auth", BOTH, "the CLI's own login to Anthropic, not an MCP server's"),
    ]
}

fn config() -> Vec<CensusEntry> {
    // Settings schema (`allowManagedMcpServersOnly:()=>M().optional().describe(…)`),
    // a server entry's `"alwaysLoad"in e`, `"toolPermissions"in e`.
    vec![
        read(
            C,
            "mcpServers",
            BOTH,
            "configured servers: `~/.claude.json` (user, and local per project), `.mcp.json` (project), `managed-mcp.json` (managed, exclusive), plugins",
        ),
        read(
            C,
            "enableAllProjectMcpServers",
            BOTH,
            "a `.mcp.json` server approved, or waiting (`not_approved`)",
        ),
        read(
            C,
            "enabledMcpjsonServers",
            BOTH,
            "a `.mcp.json` server approved",
        ),
        read(
            C,
            "disabledMcpjsonServers",
            BOTH,
            "a `.mcp.json` server rejected (`disabled_in_config`)",
        ),
        read(
            C,
            "disabledMcpServers",
            BOTH,
            "a server turned off for the project with /mcp (`disabled_in_config`)",
        ),
        read(
            C,
            "hasTrustDialogAccepted",
            BOTH,
            "an untrusted folder's `.mcp.json` servers wait (`untrusted_folder`)",
        ),
        read(
            C,
            "allowedMcpServers",
            BOTH,
            "managed policy: a server not matched is `denied_by_policy`",
        ),
        read(
            C,
            "deniedMcpServers",
            BOTH,
            "managed policy: a server matched is `denied_by_policy`",
        ),
        not(
            C,
            "allowManagedMcpServersOnly",
            BOTH,
            "not yet read: with it, `allowedMcpServers` counts only from managed settings (the reader reads it from `managed-settings.json` only, which agrees where no other file sets it)",
        ),
        // `alwaysLoad:H.boolean().optional()` on every server type (2.1.197
        // bin/claude.exe byte 226632445; 2.1.332 329488125); a tool is
        // never deferred when `alwaysLoad:e.config.alwaysLoad===!0||…`
        // (2.1.197 232496360; 2.1.332 385064776, `isDeferredTool` 338735613).
        read(
            C,
            "mcpServers.alwaysLoad",
            BOTH,
            "the setting `alwaysLoad=true|false`; with `true` the last mile predicts the server's tools sent up front, never deferred (`false`, or none, leaves the release's default)",
        ),
    ]
}

/// Configuration the last mile and the scan read beside the servers.
fn config_switches() -> Vec<CensusEntry> {
    vec![
        // The tool search's switches (`tool_search.rs`: 2.1.197 `m4t` at
        // byte 230545654 and `I$` at 230546719; 2.1.332 `Vie` at 334276888),
        // from the process and each settings file's `env` block (2.1.197
        // `Object.assign(process.env,…)` at 234661584).
        read(
            C,
            "env.ENABLE_TOOL_SEARCH",
            BOTH,
            "with `ANTHROPIC_BASE_URL`, `CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS` and the provider switches, as meanings only (`env:NAME=MEANING` in each server's settings; a URL is Anthropic's or `other`): whether the last mile predicts MCP tools deferred, sent whole, or unknown (`auto`, or 2.1.197's model URL not known)",
        ),
        not(
            C,
            "mcpServers.toolPermissions",
            NEW,
            "not yet read: per-tool permissions on a server entry",
        ),
        read(
            C,
            "enabledPlugins",
            BOTH,
            "a plugin (and its servers, skills and hooks) on or off",
        ),
        read(C, "hooks", BOTH, "configured hooks, with their commands"),
        // `else if(n.type==="mcp_tool")return{type:"mcp_tool",command:`${n.server}/${n.tool}`}`.
        not(
            C,
            "hooks.type:mcp_tool",
            BOTH,
            "not yet read: a hook that calls an MCP server's tool (`server`, `tool`); the scanner lists only `command` hooks",
        ),
        read(
            C,
            "disableAllHooks",
            BOTH,
            "every hook of that file off (`disabled_in_config`)",
        ),
        not(
            C,
            "allowManagedHooksOnly",
            BOTH,
            "not yet read: only managed hooks run",
        ),
        not(
            C,
            "allowManagedPermissionRulesOnly",
            BOTH,
            "not yet read: only managed permission rules count",
        ),
        not(
            C,
            "permissions.allow",
            BOTH,
            "not yet read: tools allowed without asking (`mcp__SERVER`, `mcp__SERVER__TOOL`)",
        ),
        not(
            C,
            "permissions.deny",
            BOTH,
            "not yet read: tools refused (a denied MCP tool is removed before the model)",
        ),
        not(
            C,
            "permissions.ask",
            BOTH,
            "not yet read: tools that always ask",
        ),
        not(
            C,
            "strictPluginOnlyCustomization",
            BOTH,
            "not yet read: managed setting restricting customization to plugins",
        ),
        not(
            C,
            "CLAUDE_CODE_MANAGED_SETTINGS_PATH",
            BOTH,
            "not yet read: moves the managed settings file the reader looks for in /etc/claude-code",
        ),
        read(
            C,
            "ENABLE_TOOL_SEARCH",
            BOTH,
            "turns the tool search on or off: read from the process environment as from a settings file's `env` block (`env.ENABLE_TOOL_SEARCH`)",
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
            include_str!("records/names.rs"),
            include_str!("records/progress.rs"),
            include_str!("records/stream_json.rs"),
            include_str!("records/mcp_log.rs"),
            include_str!("records/model_api.rs"),
            include_str!("records/subagents.rs"),
            include_str!("records/words.rs"),
            include_str!("telemetry.rs"),
            include_str!("config_scan.rs"),
            include_str!("lib.rs"),
            include_str!("../../../sdk/src/materialize.rs"),
        ]
        .concat();
        let missing = tether_sdk::census::read_but_not_in(&census(), &code);
        assert!(
            missing.is_empty(),
            "read, but no reader names them: {missing:?}"
        );
    }

    /// GIVEN the census's transcript records of a kind not read WHEN
    /// compared with what the reader counts as not read THEN they are
    /// the same: each such record is counted by its name, none read as
    /// nothing, none claimed beyond the census.
    #[test]
    fn every_record_kind_not_read_is_counted_by_its_name() {
        let whole = |k: &str| {
            k.split_once('/').is_some_and(|(kind, sub)| {
                matches!(kind, "attachment" | "system" | "progress")
                    && !sub.is_empty()
                    && sub.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
        };
        let mut census: Vec<String> = census()
            .into_iter()
            .filter(|e| e.source == "transcript" && !e.read && whole(&e.kind))
            .map(|e| e.kind)
            .collect();
        census.sort();
        let mut counted: Vec<String> = crate::records::NOT_READ
            .iter()
            .map(|k| (*k).to_owned())
            .collect();
        counted.sort();
        assert_eq!(census, counted);
    }
}
