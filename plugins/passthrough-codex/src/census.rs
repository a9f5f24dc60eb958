//! The census of Codex: every kind of rollout record, `exec --json` item,
//! telemetry name and configuration key its shipped code writes or reads
//! that bears on MCP servers, tools, skills, hooks, plugins, auth or
//! permissions, and whether `records.rs`, `telemetry.rs` and
//! `config_scan.rs` read it (this plugin has no `read_output`: `codex exec
//! --json` is read only from a saved file named by path, `records.rs`'s
//! `exec_json`).
//!
//! Found in the released binaries themselves (`strings` of
//! `@openai/codex-linux-x64` `vendor/x86_64-unknown-linux-musl/…/codex`:
//! 0.118.0, 0.142.5 and 0.171.0, the pin; no newer release exists), in the
//! TypeScript and JSON schemas `codex app-server generate-ts` printed, in
//! Codex's source at the tag `rust-v0.118.0` and at the commit 0.142.5 was
//! cut from, and in real runs of each binary against a fake Responses API
//! and a stdio MCP server (`exec`, `exec --json`, the app server with
//! `historyMode` legacy and paginated, tool search on and off). Older
//! shapes: six third-party Codex Desktop 0.104.0-alpha.1 rollouts
//! (neutralised under `tests/fixtures/records-real/codex-*`), and the
//! legacy rollout lines and MCP tool names of Codex's first Rust releases,
//! from Codex's code of that time (`rollout_legacy`).

use tether_core::records::CensusEntry;

/// Rollouts, `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.
const ROLLOUT: &str = crate::records::ROLLOUT;
/// `codex exec --json`, one event a line on stdout, saved to a file.
const STREAM: &str = crate::records::EXEC_JSON;
/// Codex's own OpenTelemetry (its `[otel]` exporters).
const TELEMETRY: &str = "telemetry";
/// `config.toml` (user, system, project), `hooks.json`, plugin manifests.
const CONFIG: &str = "config";

/// Every kind, in the order the book shows them.
pub fn census() -> Vec<CensusEntry> {
    let mut out = Vec::new();
    rollout(&mut out);
    stream_json(&mut out);
    telemetry(&mut out);
    config(&mut out);
    out
}

fn rollout(out: &mut Vec<CensusEntry>) {
    rollout_lines_and_response_items(out);
    rollout_legacy(out);
    rollout_world_state_and_turn_context(out);
    rollout_event_msg_calls(out);
    rollout_event_msg_others(out);
}

/// Rollout line types and `response_item` payloads.
fn rollout_lines_and_response_items(out: &mut Vec<CensusEntry>) {
    // `RolloutLine {timestamp, type, payload}`, `RolloutItem` tagged
    // snake_case (protocol.rs in 0.118/0.142); 0.171's binary lists the
    // line types `session_meta dynamic_tools_updated response_item
    // inter_agent_communication compacted turn_context token_usage_record
    // world_state event_msg` in one run of its string table, and its
    // rollouts (exec, app server) hold `history_mode`.
    out.extend([
        CensusEntry::not_read(
            ROLLOUT,
            "session_meta.history_mode",
            "0.171.0",
            "not needed: it says which of mcp_tool_call_end (legacy) and item_completed McpToolCall (paginated, the default) the thread writes, and both are read",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "session_meta.dynamic_tools",
            "0.171.0",
            "not yet read: the tools an app-server client gave the thread (a field of 0.171's SessionMeta); no real run wrote it (codex exec gives none), so its shape is unverified",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "dynamic_tools_updated",
            "0.171.0",
            "not yet read: a line type new in 0.171 (the thread's client-given tools changed); not MCP's, and no real run wrote one",
        ),
    ]);
    // `response_item` payloads (`ResponseItem`, models.rs; the persisted
    // kinds are labelled `response.KIND` in 0.171's binary, beside
    // `codex.rollout.persistence.item_bytes_v2`). Every release persists
    // every ResponseItem (policy.rs).
    out.extend([
        CensusEntry::read(
            ROLLOUT,
            "response_item/function_call",
            "0.104.0-alpha.1 (third-party Codex Desktop rollouts), 0.118.0–0.171.0",
            "tool_call_observed for an MCP tool: `namespace` mcp__SERVER (also mcp__SERVER__ with Codex's delimiter left on, never a server SERVER__; a namespace with no mcp__ only where it is a configured server) and `name` TOOL (0.142.5 on), or the one name mcp__SERVER__TOOL (0.104.0-alpha.1, 0.118.0), with its call_id; its outcome comes from the call's end record, and 0.104.0-alpha.1's rollouts hold none (outcome unknown)",
        ),
        CensusEntry::read(
            ROLLOUT,
            "response_item/function_call_output",
            "0.104.0-alpha.1, 0.118.0–0.171.0",
            "the call's output (payload, never kept), read by its call_id only where it is Codex's own words for the call's end (Codex Desktop 0.104.0-alpha.1 to 0.118.0-alpha writes no mcp_tool_call_* event: this is all there is): `tool call error: tool call failed for …` then `Caused by: …`: failed, with `timeout` (`timed out awaiting tools/call after Ns`, rmcp-client's ClientOperationError::Timeout), `connection_closed` (rmcp's `Transport closed`, `Transport send error`) or `protocol_error` (`Mcp error: -N`); `unsupported call: NAME` and `unknown MCP server 'S'` are Codex's \"no such tool\": tool_call_refused `tool_not_available` (no use, no server failure, no listing or offer); the never-ran words of mcp_tool_call_end are refusals; any other output says nothing (its outcome stays unknown, never failed)",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "response_item/reasoning",
            "0.104.0-alpha.1, 0.118.0–0.171.0",
            "the model's reasoning (payload): known, never read; its `content` is a list or null (`ResponseItem::Reasoning`'s `Option<Vec<ReasoningItemContent>>`; 0.104.0-alpha.1 writes null)",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "response_item/custom_tool_call",
            "0.118.0–0.171.0",
            "a freeform built-in tool's call; in every real run an MCP call was a function_call, never this",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "response_item/custom_tool_call_output",
            "0.118.0–0.171.0",
            "a freeform built-in tool's output (payload)",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "response_item/tool_search_call",
            "0.118.0–0.171.0",
            "holds the model's search query (payload); what the search gave is read from tool_search_output",
        ),
        CensusEntry::read(
            ROLLOUT,
            "response_item/tool_search_output",
            "0.118.0 (ChatGPT apps only), 0.142.5–0.171.0",
            "for each tool of an mcp__SERVER namespace it holds: deferred behind search, and its definition sent to the model (model_visible)",
        )
        .silence(
            "written only when the model searched: a deferred tool in no tool_search_output was not shown to the model by a search, which says nothing of whether its server listed it",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "response_item/additional_tools",
            "0.171.0",
            "not yet read: a ResponseItem kind new in 0.171 (ResponseItem::AdditionalTools, 3 fields: tools added to the model's list mid-thread); no real run wrote one, so its shape is unverified",
        ),
        CensusEntry::read(
            ROLLOUT,
            "response_item/message",
            "0.118.0–0.171.0",
            "skill_listed for each `- NAME: …` line under `### Available skills` in the developer message's `<skills_instructions>` text (names only; descriptions and paths never kept)",
        ),
    ]);
}

/// A legacy rollout's lines (Codex's first Rust releases, before the
/// `{timestamp, type, payload}` lines): from Codex's code of that time
/// (`codex-rs/core/src/rollout.rs` `rollout_writer`, `SessionMetaWithGit`;
/// `mcp_connection_manager.rs` `fully_qualified_tool_name`), found in the
/// find_string index (file ids 1302893685, 8844060819, 1347457349,
/// 2420867410); no release tag of those files was at hand, and no such
/// rollout was run here.
fn rollout_legacy(out: &mut Vec<CensusEntry>) {
    out.extend([
        CensusEntry::read(
            ROLLOUT,
            "legacy/session_meta",
            "Codex's first Rust releases (unversioned lines)",
            "the first line, `{id, timestamp, instructions, git}` (later also cwd, originator, cli_version) with no `type`: the session, its start, and its project and version where it names them",
        ),
        CensusEntry::read(
            ROLLOUT,
            "legacy/function_call",
            "Codex's first Rust releases (unversioned lines)",
            "a response item on its own line: tool_call_observed where its name is SERVER__OAI_CODEX_MCP__TOOL (Codex's first MCP_TOOL_NAME_DELIMITER, split as Codex split it), mcp__SERVER__TOOL, or SERVER__TOOL (the delimiter `__` with no mcp prefix) where exactly one configured server fits; no times and no end events: outcome unknown",
        )
        .silence(
            "a SERVER__TOOL name that no configured server fits (or two do) is not read: Tether does not guess which part is the server",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "legacy/function_call_output",
            "Codex's first Rust releases (unversioned lines)",
            "the call's output (payload), known and not read; its shape told no outcome that Codex's code of then makes certain",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "legacy/record_type",
            "Codex's first Rust releases (unversioned lines)",
            "`{\"record_type\":\"state\"}`, an empty state snapshot: known, nothing about servers",
        ),
    ]);
}

/// Rollout `world_state`, `turn_context` and thread settings.
fn rollout_world_state_and_turn_context(out: &mut Vec<CensusEntry>) {
    // `world_state` (0.171; `payload {full, state{…}}`): observed keys
    // `host_skills{body}`, `skills{includeInstructions}`, `tools` (only with
    // tool search on: `{"mcp__echo": ""}`), `plugins_instructions`,
    // `apps_instructions`, `permissions{instructions, approved_command_prefixes}`.
    out.extend([
        CensusEntry::read(
            ROLLOUT,
            "world_state.host_skills",
            "0.171.0",
            "skill_listed for each `- NAME: …` line under `### Available skills` in its body (names only)",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "world_state.tools",
            "0.171.0",
            "not yet read: the tool namespaces offered behind search, namespace to description (`{\"mcp__echo\": \"\"}` in a real run with tool search on, absent with it off); it would say which servers' tools were deferred",
        )
        .silence(
            "absent when the model has no tool search: then MCP tools are sent directly, and its absence says nothing of them",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "world_state.skills",
            "0.171.0",
            "only `includeInstructions`, whether the skills listing was sent; the names are read from host_skills",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "world_state.plugins_instructions",
            "0.171.0",
            "a flag (false in every real run): whether plugin instructions went to the model, not which plugins",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "world_state.permissions",
            "0.171.0",
            "a hash of the permission instructions and the approved shell command prefixes: shell approvals, not MCP calls",
        ),
    ]);
    // `turn_context` (always persisted) and 0.171's
    // `event_msg/thread_settings_applied`, observed in every 0.171 run.
    out.extend([
        CensusEntry::not_read(
            ROLLOUT,
            "turn_context.approval_policy",
            "0.118.0–0.171.0",
            "the turn's approval policy (never, on-request, …): it decides whether an MCP call waits for a person, and says nothing of any call",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "turn_context.permission_profile",
            "0.142.5–0.171.0",
            "the sandbox's file and network permissions: shell commands', not MCP servers'",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "turn_context.disabled_plugin_ids",
            "0.171.0",
            "not yet read: the plugins turned off for the turn (empty in every real run; a plugin off here brings none of its servers or skills)",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "thread_settings_applied.disabled_plugin_ids",
            "0.171.0",
            "the same list as turn_context's, once per settings change",
        ),
    ]);
}

/// Rollout `event_msg`s of an MCP call: its end, items, and begin.
fn rollout_event_msg_calls(out: &mut Vec<CensusEntry>) {
    // `event_msg` (`EventMsg`, tagged snake_case; persisted per
    // rollout/src/policy.rs: 0.118's Limited/Extended, 0.142's one list,
    // 0.171's history_mode; the 0.171 binary names every variant in one run
    // of its string table, `…mcp_startup_update… mcp_tool_call_end…
    // hook_started hook_completed…`).
    out.extend([
        CensusEntry::read(
            ROLLOUT,
            "event_msg/mcp_tool_call_end",
            "0.118.0 (TUI only), 0.142.5, 0.171.0 (legacy history mode only)",
            "tool_call_observed from its invocation's server and tool, with its outcome: failed where the result is isError (`tool_error`) or Err (`protocol_error` where the words are `tool call error: …` caused by `Mcp error: -N: …`); tool_call_refused where Codex's own words say it never reached the server: `approval_required` (\"user cancelled MCP tool call\", \"MCP tool call cancelled…\", \"MCP tool call requires approval, but approval policy is never\"), `permission_denied` (\"user rejected MCP tool call\"), `denied_by_policy` (\"MCP tool call blocked by app configuration\"); the words are compared, never kept",
        )
        .silence(
            "0.118's codex exec and 0.171's default (paginated) mode never write it: a call with no end record has an unknown outcome, never a failure",
        ),
        CensusEntry::read(
            ROLLOUT,
            "event_msg/mcp_tool_call_end/list_mcp_resources (and the other resource tools)",
            "0.117, 0.121 (third-party rollouts), 0.171.0 (the names in its binary)",
            "Codex's own resource tools (`list_mcp_resources`, `list_mcp_resource_templates`, `read_mcp_resource`; also as item_completed McpToolCall), filed under the server asked about or under `codex` when every server was: never a call of a server's tool, and `codex` is no server. An answer that succeeded shows the servers that answered as connected (agent_reported, with a note: which tool and how many of its resources), read from Codex's own JSON in the result's text (`resources[].server`, `resourceTemplates[].server`): names and counts only, never a URI, a resource's name or content",
        ),
        CensusEntry::read(
            ROLLOUT,
            "event_msg/item_completed/McpToolCall",
            "0.171.0 (paginated history mode, the default)",
            "tool_call_observed from the item's server and tool, with its outcome: a result isError is a failure (`tool_error`), an `error.message` in Codex's JSON-RPC words too (`protocol_error`); tool_call_refused, by the call's id, where `error.message` is Codex's words for a call that never reached the server (as for mcp_tool_call_end: `codex exec` 0.171.0 measured \"MCP tool call requires approval, but approval policy is never\", `approval_required`; with `default_tools_approval_mode = \"approve\"` the call runs); inProgress leaves it unknown",
        )
        .silence(
            "written only in paginated mode: a legacy-mode thread writes mcp_tool_call_end instead, and 0.142.5 writes neither as an item",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/item_completed/HookPrompt",
            "0.171.0",
            "not yet read: a hook's output injected as a prompt (fragments with a hookRunId); no real run wrote one, so whether it is persisted is unverified",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/item_started",
            "0.171.0",
            "never written in any real run (only item_completed was): a started item has no outcome",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/mcp_tool_call_begin",
            "0.118.0–0.171.0",
            "never written to a rollout (no release persists it)",
        ),
    ]);
}

/// Rollout `event_msg`s of startup, approvals, hooks, dynamic tools and auth.
fn rollout_event_msg_others(out: &mut Vec<CensusEntry>) {
    out.extend([
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/mcp_startup_update",
            "0.118.0–0.171.0",
            "never written to a rollout (no release persists it): `{server, status{state starting|ready|cancelled|failed, error}}` lives only in the running process",
        )
        .silence(
            "rollouts hold no start-up record: a server that failed to start, or wanted a login, is not in them at all",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/mcp_startup_complete",
            "0.118.0–0.171.0",
            "never written to a rollout: `{ready, failed[{server, error}], cancelled}` lives only in the running process",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/mcp_list_tools_response",
            "0.118.0",
            "never written to a rollout, and gone after 0.118",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/exec_approval_request",
            "0.118.0–0.171.0",
            "never written to a rollout by default (a shell command's approval, not MCP's); a rollout that holds one is counted as not read",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/apply_patch_approval_request",
            "0.118.0–0.171.0",
            "never written to a rollout (a file edit's approval)",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/request_permissions",
            "0.118.0–0.171.0",
            "never written to a rollout by default; a rollout that holds one is counted as not read. A refused MCP call shows as its end record's words instead",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/request_user_input",
            "0.118.0–0.171.0",
            "never written to a rollout (0.171 asks an MCP tool's approval through it)",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/elicitation_request",
            "0.118.0–0.171.0",
            "never written to a rollout by default: an MCP server's elicitation `{server_name, id, request{mode form|url, message, …}}`; a rollout that holds one is counted as not read",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/elicitation_abandoned",
            "0.171.0",
            "not yet read: new in 0.171 (an MCP elicitation no one answered); whether it is persisted is unverified",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/guardian_assessment",
            "0.118.0 (TUI only), 0.142.5–0.171.0 (never)",
            "the automatic reviewer's verdict on an action; written only by 0.118's TUI; a rollout that holds one is counted as not read",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/hook_started",
            "0.118.0–0.171.0",
            "never written to a rollout; a rollout that holds one is counted as not read",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/hook_completed",
            "0.118.0–0.171.0",
            "never written to a rollout (its run summary lives only in the running process); a rollout that holds one is counted as not read",
        )
        .silence(
            "no release records a hook's run in its rollout: no record shows whether a hook ran, blocked a call or failed",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/dynamic_tool_call_request",
            "0.118.0 (TUI only), 0.142.5–0.171.0 (never)",
            "a call of a client-given tool, not MCP's; a rollout that holds one is counted as not read",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/dynamic_tool_call_response",
            "0.118.0 (TUI only), 0.142.5–0.171.0 (never)",
            "a client-given tool's answer, not MCP's; a rollout that holds one is counted as not read",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/view_image_tool_call",
            "0.118.0–0.171.0",
            "a built-in tool (view_image), not MCP's",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/auth_recovery_started",
            "0.171.0",
            "Codex's own sign-in being refreshed, not an MCP server's auth",
        ),
        CensusEntry::not_read(
            ROLLOUT,
            "event_msg/auth_recovery_completed",
            "0.171.0",
            "Codex's own sign-in refreshed, not an MCP server's auth",
        ),
    ]);
}

fn stream_json(out: &mut Vec<CensusEntry>) {
    // `ThreadEvent` (tagged `type`): the 0.171.0 binary names its types in
    // one run of its string table at offset 4155176 (`thread.started
    // turn.started turn.completed turn.failed item.started item.updated
    // item.completed`, then `todo_list error`); the shapes are
    // openai/codex `codex-rs/exec/src/exec_events.rs`. Real runs of
    // 0.171.0 against the fake model (tests/fixtures/refusals
    // `codex-0.171.0-*.exec.jsonl`, tests/fixtures/records-by-path
    // `codex-0.171.0-broken.exec.jsonl`: one working tool, an approval no
    // one could give, an isError, a JSON-RPC error, and a server whose
    // command does not exist). Read from a saved file named by path
    // (`exec_json`, records/exec_json.rs); lines carry no time.
    out.extend([
        CensusEntry::read(
            STREAM,
            "thread.started",
            "0.118.0–0.171.0 (run on 0.171.0)",
            "the session: `thread_id`, the id the run's rollout names in its session_meta (no version, project or time: exec prints none)",
        ),
        CensusEntry::read(
            STREAM,
            "item.started/mcp_tool_call",
            "0.118.0–0.171.0 (run on 0.171.0)",
            "tool_call_observed from the item's server and tool, by exec's item id, its outcome unknown: `{id, type, server, tool, arguments, result: null, error: null, status: \"in_progress\"}` (arguments never read)",
        ),
        CensusEntry::read(
            STREAM,
            "item.completed/mcp_tool_call",
            "0.118.0–0.171.0 (run on 0.171.0)",
            "the same call's end, read as a rollout's item_completed McpToolCall (one function, item_end): status completed = used; failed with a result = the server's isError (`tool_error`; exec prints no isError field); failed with `error.message` in Codex's JSON-RPC words = `protocol_error`; tool_call_refused where the words say it never reached the server (measured: \"MCP tool call requires approval, but approval policy is never\", `approval_required`); the result and the words are never kept",
        )
        .silence(
            "exec --json prints calls only: a server that failed to start (a missing command, in a real run) or was never called prints nothing; a required server that fails ends the run before thread.started, with nothing on stdout (measured)",
        ),
        CensusEntry::read(
            STREAM,
            "item.updated/mcp_tool_call",
            "0.171.0 (not seen in a real run)",
            "tool_call_observed as item.started's (the same ThreadItem, exec_events.rs), its outcome where its status says; exec sends item.updated for file changes and to-do lists only",
        ),
        CensusEntry::not_read(
            STREAM,
            "item.completed/error",
            "0.171.0 (run on 0.171.0)",
            "known, says nothing of MCP: Codex's warnings as free words (measured: the model's metadata not found); neither a server that failed to start nor one named `bad name!` printed one (measured)",
        ),
        CensusEntry::not_read(
            STREAM,
            "error",
            "0.171.0 (run on 0.171.0)",
            "known, says nothing of MCP: Codex's own failure, `{message}` (measured: the model's stream, \"Reconnecting... waiting for network\", repeated while offline; a model's 400 body), never a server's",
        ),
        CensusEntry::not_read(
            STREAM,
            "turn.failed",
            "0.171.0 (run on 0.171.0)",
            "known, says nothing of MCP: `{error: {message}}`, the turn's failure (measured: the model answered 400, its body the message, after an `error` with the same; records-by-path/codex-0.171.0-turnfailed.exec.jsonl); a call still in progress is ended by its own item.completed first (exec's event processor)",
        ),
    ]);
}

fn telemetry(out: &mut Vec<CensusEntry>) {
    telemetry_logs_and_spans(out);
    telemetry_mcp_metrics(out);
    telemetry_hook_tool_and_skill_metrics(out);
}

/// Telemetry's logs and spans, with `codex.tool_decision`.
fn telemetry_logs_and_spans(out: &mut Vec<CensusEntry>) {
    // Logs, metrics and spans: names from each binary's string table
    // (`codex.tool_result`, `codex.mcp.call`, … in all three;
    // `list_tools_for_client_uncached`, `start_server_task`,
    // `codex.mcp.protocol_discovery`, `codex.hooks.mcp_tool`,
    // `codex.skill_invocation` in 0.171.0 only); attributes where a real
    // 0.171.0 run exported them (tests/tests and the peers' harness runs).
    out.extend([
        CensusEntry::read(
            TELEMETRY,
            "codex.conversation_starts",
            "0.118.0–0.171.0",
            "its `mcp_servers`: each server the session took from the configuration (configured, taken)",
        ),
        CensusEntry::read(
            TELEMETRY,
            "codex.tool_result",
            "0.118.0–0.171.0",
            "tool_call_observed from `mcp_server` and `tool_name`, its outcome from `success` (a built-in tool, with no mcp_server, is ignored; its arguments and output are never read)",
        ),
        CensusEntry::read(
            TELEMETRY,
            "codex.tool_result.mcp_server",
            "0.118.0–0.171.0",
            "the called tool's server (the field that makes a tool_result an MCP call)",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool_result.mcp_server_origin",
            "0.118.0–0.171.0",
            "not yet read: where the server came from (configuration, plugin, …)",
        ),
        CensusEntry::read(
            TELEMETRY,
            "list_tools_for_client_uncached",
            "0.171.0",
            "a span per server (`server_name`): tools_list_observed where it ended without error; it names no conversation, so it reaches a session only through its resource",
        )
        .silence(
            "only uncached listings make this span: a server whose tools came from Codex's cache has none, which does not mean it listed nothing",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "start_server_task",
            "0.171.0",
            "not yet read: a span per server start (`server_name`); its error status would say a server failed to start, which no rollout records",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "mcp.tools.call",
            "0.118.0–0.171.0",
            "not yet read: a span per MCP call (`mcp.server.name`, `mcp.transport`, `tool.name`, `rpc.method`); codex.tool_result gives the same call with its session",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool_decision",
            "0.118.0–0.171.0",
            "not yet read: a tool call's approval decision; its attributes are not verified in a run",
        ),
    ]);
}

/// Telemetry's `codex.mcp.*` metrics.
fn telemetry_mcp_metrics(out: &mut Vec<CensusEntry>) {
    out.extend([
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.call",
            "0.118.0–0.171.0",
            "not yet read: a counter per MCP call (`server`, `tool`, `status`) with no session; codex.tool_result gives the same call with its session",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.call.duration_ms",
            "0.118.0–0.171.0",
            "not yet read: the same calls' durations (a histogram)",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.call.error",
            "0.171.0",
            "not yet read: failed MCP calls (a counter); its attributes are not verified in a run",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.tools.list.duration_ms",
            "0.118.0–0.171.0",
            "not yet read: tool listings' durations (`cache`), with no server named",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.tools.fetch_uncached.duration_ms",
            "0.118.0–0.171.0",
            "not yet read: uncached tool listings' durations; the span list_tools_for_client_uncached names the server",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.tools.cache_write.duration_ms",
            "0.118.0–0.171.0",
            "Codex's tool cache timing, no server state",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.tools.cache_publish.duration_ms",
            "0.171.0",
            "Codex's tool cache timing, no server state",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.protocol_discovery",
            "0.171.0",
            "not yet read: how a server's protocol was found (`mode`, `outcome`), with no server named in a real run",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.protocol_discovery.duration_ms",
            "0.171.0",
            "the same, timed",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.executor_discovery",
            "0.171.0",
            "not yet read: discovery of MCP servers on a remote executor (not a local session's); attributes not verified",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.error.code",
            "0.171.0",
            "not yet read: an MCP error's code, as an attribute name; where it is set is not verified",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.binding_catalog.raw_definition_json_bytes",
            "0.171.0",
            "the size of tool definitions, no server state",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.mcp.server_user_flow.triggered",
            "0.142.5–0.171.0",
            "not yet read: an app tool call that asked the user to approve (beside `codex.mcp.target.id`); attributes not verified",
        ),
    ]);
}

/// Telemetry's hook, tool, approval and skill metrics.
fn telemetry_hook_tool_and_skill_metrics(out: &mut Vec<CensusEntry>) {
    out.extend([
        CensusEntry::not_read(
            TELEMETRY,
            "codex.hooks.run",
            "0.142.5–0.171.0",
            "not yet read: a counter of hook runs; attributes not verified in a run",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.hooks.run.duration_ms",
            "0.142.5–0.171.0",
            "not yet read: hook runs' durations",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.hooks.command",
            "0.171.0",
            "not yet read: a span per command hook (`hook.event_name`, `hook.handler_type`, `hook.scope`, `hook.source`, …); not verified in a run",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.hooks.mcp_tool",
            "0.171.0",
            "not yet read: a span per hook whose handler is an MCP tool (`hook.server`, `hook.tool`), new in 0.171; not verified in a run",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool.call",
            "0.118.0–0.171.0",
            "not yet read: a counter of every tool call, built-in or MCP; codex.tool_result names the server",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool.call.duration_ms",
            "0.118.0–0.171.0",
            "not yet read: the same calls' durations",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool_call",
            "0.171.0",
            "a code-mode host's tool call span; not verified in a run",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool_call_received",
            "0.171.0",
            "a tool call's arrival timing; no server or outcome",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool_result_ready",
            "0.171.0",
            "a tool result's timing; no server or outcome",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool.phase",
            "0.171.0",
            "a tool call's phase timing; no server or outcome",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool.unified_exec",
            "0.171.0",
            "the built-in shell tool's, not MCP's",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool_blocking",
            "0.171.0",
            "time a turn waited on tools; no server or outcome",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.tool_metadata.shed_bytes",
            "0.171.0",
            "bytes of tool descriptions dropped to fit; names no tool",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.approval.requested",
            "0.118.0–0.171.0",
            "not yet read: an approval asked of the user; attributes not verified in a run",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.skill_invocation",
            "0.171.0",
            "not yet read: a skill used (`skill.name`, `skill.scope`, `skill.plugin_id`, `skill.invocation_type`), new in 0.171; not verified in a run, and it carries `user.id`",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "codex.skill.injected",
            "0.118.0–0.171.0",
            "not yet read: a skill's instructions put in the context; attributes not verified in a run",
        ),
    ]);
}

fn config(out: &mut Vec<CensusEntry>) {
    // config.toml as `config_scan.rs` reads it; keys from 0.171's
    // `RawMcpServerConfig` (30 fields), `[apps]` (AppsConfig.ts), hooks
    // (`HookHandlerConfig::Command` and `::McpTool`; hooks.json), verified
    // by running the pinned CLI where config_scan.rs says so.
    let read =
        |kind: &str, releases: &str, gives: &str| CensusEntry::read(CONFIG, kind, releases, gives);
    let not =
        |kind: &str, releases: &str, why: &str| CensusEntry::not_read(CONFIG, kind, releases, why);
    out.extend([
        read(
            "mcp_servers",
            "0.118.0–0.171.0",
            "a configured server per table (command/args, or url), in config.toml for the user, /etc/codex for the system, and .codex/config.toml for a project (off unless the project is trusted)",
        ),
        read("mcp_servers.*.enabled", "0.118.0–0.171.0", "false: filtered, disabled_in_config"),
        read("mcp_servers.*.required", "0.118.0–0.171.0", "kept as a setting"),
        read("mcp_servers.*.enabled_tools", "0.118.0–0.171.0", "the tools Codex keeps (an allow list)"),
        read("mcp_servers.*.disabled_tools", "0.118.0–0.171.0", "the tools Codex drops"),
        read("mcp_servers.*.startup_timeout_sec", "0.118.0–0.171.0", "kept as a setting"),
        read("mcp_servers.*.startup_timeout_ms", "0.118.0–0.171.0", "kept as a setting"),
        read("mcp_servers.*.tool_timeout_sec", "0.118.0–0.171.0", "kept as a setting"),
        read(
            "mcp_servers.*.bearer_token_env_var",
            "0.118.0–0.171.0",
            "the variable its Authorization header comes from; unset, Codex refuses the server",
        ),
        read("mcp_servers.*.env_vars", "0.118.0–0.171.0", "the variables forwarded by name (values never read)"),
        read("mcp_servers.*.http_headers", "0.118.0–0.171.0", "header names (values never read)"),
        read("mcp_servers.*.env_http_headers", "0.118.0–0.171.0", "header names and the variables they come from"),
        not(
            "mcp_servers.*.scopes",
            "0.171.0",
            "not yet read: the OAuth scopes asked for (beside `oauth`, `oauth_resource`); whether a login exists is in Codex's credential store, which is not read",
        ),
        not(
            "mcp_servers.*.startup_readiness",
            "0.171.0",
            "not yet read: new in 0.171's server table; its meaning is not verified",
        ),
        not(
            "mcp_servers.*.http_headers_helper",
            "0.171.0",
            "not yet read: a command that prints headers, new in 0.171; not verified",
        ),
        not(
            "mcp_oauth_credentials_store",
            "0.118.0–0.171.0",
            "where MCP OAuth tokens are kept (file or keyring); the tokens are never read",
        ),
        not(
            "approval_policy",
            "0.118.0–0.171.0",
            "not yet read: whether calls wait for a person (never, on-request, …); the rollout's turn_context says the value used",
        ),
        not(
            "apps.*.default_tools_approval_mode",
            "0.118.0–0.171.0",
            "not yet read: the approval mode of a ChatGPT app's tools (apps._default too); not a configured MCP server's",
        ),
        not(
            "apps.*.tools.*.approval_mode",
            "0.171.0",
            "not yet read: one app tool's approval mode",
        ),
        not(
            "apps.*.enabled",
            "0.118.0–0.171.0",
            "not yet read: a ChatGPT app (served through the codex_apps server) turned off",
        ),
        read(
            "projects.*.trust_level",
            "0.118.0–0.171.0",
            "trusted or not: an untrusted project's .codex/config.toml servers and hooks are off (untrusted_folder)",
        ),
        read(
            "plugins.*.enabled",
            "0.171.0",
            "an installed plugin, on or off, linked to the servers, skills and hooks its manifest names",
        ),
        read(
            "hooks",
            "0.118.0–0.171.0",
            "command hooks from hooks.json, config.toml's [hooks], a trusted project's .codex/hooks.json and each plugin's hooks file",
        ),
        read(
            "hooks.state.*.trusted_hash",
            "0.171.0",
            "a hook trusted once (it runs only while unchanged since, which Codex alone can tell); no entry: not_approved",
        ),
        read("hooks.state.*.enabled", "0.171.0", "false: the hook is off"),
        read("features.hooks", "0.171.0", "false: every hook is off"),
        not(
            "hooks.*.mcp_tool",
            "0.171.0",
            "not yet read: a hook whose handler calls an MCP tool (`HookHandlerConfig::McpTool`, 5 fields), new in 0.171; only command hooks are read",
        ),
        read(
            "hooks.PreToolUse",
            "0.118.0–0.171.0",
            "a hook run before a tool call (MCP tools match as mcp__SERVER__TOOL)",
        ),
        read("hooks.PostToolUse", "0.118.0–0.171.0", "a hook run after a tool call"),
        read(
            "hooks.PermissionRequest",
            "0.142.5–0.171.0",
            "a hook run when a call asks for approval",
        ),
        read(
            "skills.config.*.enabled",
            "0.171.0",
            "false for a SKILL.md path: the skill is off",
        ),
    ]);
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
            include_str!("records/exec_json.rs"),
            include_str!("records/resources.rs"),
            include_str!("records/words.rs"),
            include_str!("telemetry.rs"),
            include_str!("config_scan.rs"),
            include_str!("lib.rs"),
        ]
        .concat();
        // Configuration keys are read by the scanner's generic walk (every
        // hook event, say), not each by name.
        let checked: Vec<_> = census()
            .into_iter()
            .filter(|e| e.source != CONFIG)
            .collect();
        let missing = tether_sdk::census::read_but_not_in(&checked, &code);
        assert!(
            missing.is_empty(),
            "read, but no reader names them: {missing:?}"
        );
    }
}
