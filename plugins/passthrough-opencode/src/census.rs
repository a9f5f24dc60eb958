//! The census of OpenCode: every kind of log line, database row, printed
//! event, telemetry and configuration key its shipped code writes or reads
//! that bears on MCP servers, tools, skills, hooks, plugins, auth or
//! permissions, and whether `records.rs`, `telemetry.rs` and
//! `config_scan.rs` read it (lib.rs reads no output: OpenCode reports no
//! server status in `run`). Found in the pinned (and newest) 1.18.33's
//! Bun-compiled binary, `opencode-linux-x64/bin/opencode`, whose JavaScript
//! is in its bytes.

use tether_core::records::CensusEntry;

const LOG: &str = crate::records::LOG;
const DB_TOOLS: &str = crate::records::DB_TOOLS;
const DB_ERRORS: &str = crate::records::DB_ERRORS;
/// The database's other tables (not read).
const DB: &str = "db";
const STREAM: &str = "stream_json";
/// OpenCode's event bus (its server's `/event` stream, and plugins): in
/// memory, in no file Tether reads.
const BUS: &str = "event_bus";
const TELEMETRY: &str = "telemetry";
const CONFIG: &str = "config";
const RELEASES: &str = "1.18.33";

/// Log messages (`Effect.logWarning/Info/Error/Debug("…")`) that bear on
/// the families and that Tether does not read, with what they hold.
const LOG_NOT_READ: &[(&str, &str)] = &[
    (
        "stream error",
        "ERROR for each model request that failed, retried or not: the turn's end is the ERROR \"process\" line's",
    ),
    (
        "MCP connection closed",
        "not yet read: WARN {server} when a connected server's transport closes (its status becomes failed, \"Connection closed\")",
    ),
    (
        "MCP server log",
        "a server's own logging notifications, at their level: payload",
    ),
    (
        "missing cached tools for connected server",
        "not yet read: WARN {clientName}, a connected server whose tools were not listed",
    ),
    (
        "Ignoring MCP config entry without type",
        "not yet read: ERROR, an mcp entry OpenCode skips",
    ),
    (
        "failed to read MCP resource",
        "a resource read's failure, not the server's attachment",
    ),
    ("mcp resource", "a resource read: payload"),
    (
        "failed to load internal plugin",
        "one of OpenCode's own plugins: not the user's",
    ),
    (
        "plugin config hook failed",
        "not yet read: names no plugin ({error} only)",
    ),
    (
        "plugin dispose hook failed",
        "not yet read: names no plugin ({error} only)",
    ),
    ("duplicate skill name", "not yet read: skill discovery"),
    ("failed to load skill", "not yet read: skill discovery"),
    (
        "skill entry missing SKILL.md",
        "not yet read: skill discovery",
    ),
    ("skill path not found", "not yet read: skill discovery"),
    (
        "failed to fetch skill index",
        "not yet read: a remote skill index (skill discovery)",
    ),
    (
        "failed to download skill file",
        "not yet read: a remote skill (skill discovery)",
    ),
    (
        "failed to refresh skill",
        "not yet read: a remote skill (skill discovery)",
    ),
    (
        "OPENCODE_PERMISSION contains invalid JSON, skipping",
        "the permission override from the environment was ignored",
    ),
    (
        "loop exit with orphaned interrupted tool",
        "an interrupted call's bookkeeping; its part says error",
    ),
    (
        "shell tool using shell",
        "which shell the built-in tool uses",
    ),
];

/// OpenCode's spans (`Effect.fn("MCP.…")`), exported with
/// `experimental.openTelemetry`: none carries the server's name.
const MCP_SPANS: &[&str] = &[
    "MCP.add",
    "MCP.authenticate",
    "MCP.clients",
    "MCP.connect",
    "MCP.connectLocal",
    "MCP.connectRemote",
    "MCP.connectTransport",
    "MCP.create",
    "MCP.createAndStore",
    "MCP.disconnect",
    "MCP.finishAuth",
    "MCP.getAuthStatus",
    "MCP.getPrompt",
    "MCP.hasStoredTokens",
    "MCP.instructions",
    "MCP.prompts",
    "MCP.readResource",
    "MCP.removeAuth",
    "MCP.resourceTemplates",
    "MCP.resources",
    "MCP.startAuth",
    "MCP.state",
    "MCP.status",
    "MCP.supportsOAuth",
    "MCP.tools",
];

/// Bus events (`….define({type:"…"})`, and the permission service's).
const BUS_EVENTS: &[(&str, &str)] = &[
    (
        "mcp.tools.changed",
        "{server}: a server's tool list changed",
    ),
    (
        "mcp.browser.open.failed",
        "{mcpName, url}: an OAuth browser could not open",
    ),
    (
        "permission.asked",
        "{id, sessionID, permission, patterns}: `opencode run` rejects it unless --dangerously-skip-permissions (printing \"permission requested: …; auto-rejecting\")",
    ),
    ("permission.replied", "{sessionID, requestID, reply}"),
    (
        "session.next.tool.input.started",
        "a tool call of the newer session model; its part is in the database",
    ),
    (
        "session.next.tool.input.delta",
        "streamed arguments: payload",
    ),
    (
        "session.next.tool.input.ended",
        "a tool call's arguments: payload",
    ),
    (
        "session.next.tool.called",
        "a call started; its part is in the database",
    ),
    ("session.next.tool.progress", "a call's progress"),
    (
        "session.next.tool.success",
        "a call ended; its part is in the database",
    ),
    (
        "session.next.tool.failed",
        "a call failed; its part is in the database",
    ),
];

/// OpenCode's census (see the module docs).
pub fn census() -> Vec<CensusEntry> {
    let mut out = logs_db_stream_and_telemetry();
    out.extend(config());
    for (kind, why) in LOG_NOT_READ {
        out.push(CensusEntry::not_read(LOG, kind, RELEASES, why));
    }
    for span in MCP_SPANS {
        out.push(CensusEntry::not_read(
            TELEMETRY,
            span,
            RELEASES,
            "a span with no server attribute (its error status carries the message): proves nothing of any one server",
        ));
    }
    for (kind, holds) in BUS_EVENTS {
        out.push(CensusEntry::not_read(
            BUS,
            kind,
            RELEASES,
            &format!("in memory only (no file Tether reads): {holds}"),
        ));
    }
    out
}

/// The log file, database, run output and telemetry entries.
fn logs_db_stream_and_telemetry() -> Vec<CensusEntry> {
    vec![
        // opencode.log: MCP.create logs "server unavailable" {key, type,
        // status} when a server did not connect (status failed, needs_auth
        // or needs_client_registration; disabled is not logged).
        CensusEntry::read(
            LOG,
            "server unavailable",
            RELEASES,
            "status=failed: failed (no reason given); status=needs_auth: needs-auth; by key=SERVER, in the session of the line's run",
        )
        .silence("written only for a server that did not connect: a missing line does not show that a server connected")
        .silence("the line never carries the failure's words (a missing command, a missing cwd, an exit, a timeout, a 401 all read status=failed; real runs): OpenCode says them only in `opencode mcp list`, which writes no record"),
        CensusEntry::read(
            LOG,
            "server unavailable.status=needs_client_registration",
            RELEASES,
            "needs-auth, oauth_required: a remote server that wants OAuth but offers no dynamic client registration, so it needs a configured clientId (OpenCode's words: \"Server does not support dynamic client registration. Please provide clientId in config.\")",
        ),
        CensusEntry::read(
            LOG,
            "process",
            RELEASES,
            "ERROR with error=\"Cannot connect to API: …\" (the bundled AI SDK's words, Bun's cause): the turn ended with its model API not reached, report-level: connection_refused, host_not_found or connection_closed by Bun's words (never kept)",
        )
        .silence("its other errors (a model's refusal, a bad key's HTTP status) are not yet told apart: left unsaid")
        .silence("the log is written behind the run: a run that ends in an error often exits before this line reaches the file (measured on 1.18.33); the database's message says the same end"),
        CensusEntry::not_read(
            LOG,
            "failed",
            RELEASES,
            "not yet read: ERROR {ref, error, cause} for a request the server failed, e.g. \"ProviderModelNotFoundError: Model not found: P/M\" for a model whose provider has no credentials (`opencode run` prints only \"UnknownError … Unexpected server error\"); often lost at exit, and the database then holds no assistant message",
        ),
        CensusEntry::read(
            LOG,
            "failed to load plugin",
            RELEASES,
            "plugin_failed: the plugin named by its path (a file's stem or an npm name), its reason from error (never kept)",
        )
        .silence("a plugin that loads leaves no line: a missing line does not show that a plugin loaded"),
        // opencode.db `part` rows: the processor writes
        // state{status: pending|running|completed|error}
        // (SessionProcessor.failToolCall writes error for a rejected
        // permission too).
        CensusEntry::read(
            DB_TOOLS,
            "part/tool",
            RELEASES,
            "tool_call_observed: tool (SERVER_TOOL, split only where exactly one configured server fits), callID, and the outcome from state.status (completed: succeeded; error: failed, or refused by its words; pending or running: none); input and output never selected",
        ),
        CensusEntry::read(
            DB_TOOLS,
            "part/tool:skill",
            RELEASES,
            "skill_invoked: state.input.name of the `skill` tool, its outcome from state.status",
        ),
        CensusEntry::read(
            DB_TOOLS,
            "part/tool:invalid",
            RELEASES,
            "tool_call_refused tool_not_available: the `invalid` tool whose state.input.error is the AI SDK's \"Model tried to call unavailable tool '…'\" (OpenCode's experimental_repairToolCall renames a call of a tool it does not have), the tool asked for (state.input.tool) split against the configured servers; no use, no failure, no offer. Its other use (input that failed a tool's schema) is not read",
        ),
        CensusEntry::read(
            DB_TOOLS,
            "part/tool.state.error",
            RELEASES,
            "matched inside the query, so no word leaves the database: \"The user has specified a rule which prevents you from using this specific tool call…\" (PermissionDeniedError, a rule's deny) and \"The user rejected permission to use this specific tool call\" with a person's feedback, or in a session that is not run's, are tool_call_refused permission_denied; the same words without feedback in a session `opencode run` made are approval_required (run rejects every ask itself); the MCP SDK's \"MCP error -32001: Request timed out\" and \"…: Maximum total timeout exceeded\" a failure with timeout, \"MCP error -32000: Connection closed\" with connection_closed; any other \"MCP error -N: …\" (a JSON-RPC error) a failure with protocol_error; any other error a failure (the server's isError gives its own words, which cannot be told from another failure)",
        )
        .silence("A rule that denies an MCP tool outright hides it from the model: no call is made, so no part is written."),
        CensusEntry::read(
            DB_ERRORS,
            "message/assistant.error:APIError",
            RELEASES,
            "report-level: the turn ended in this error. Where data.message begins \"Cannot connect to API: \" with Bun's words (matched inside the query; no word leaves the database): connection_refused, host_not_found or connection_closed; where data.statusCode is 401 or 403, auth_rejected; with providerID opencode (OpenCode's own provider, the only one with no login) said so. Other APIErrors are left unsaid",
        ),
        CensusEntry::not_read(
            DB_ERRORS,
            "message/assistant.error",
            RELEASES,
            "not yet read: ProviderAuthError, UnknownError, MessageOutputLengthError, MessageAbortedError, ContextOverflowError, StructuredOutputError (their words are not kept)",
        ),
        CensusEntry::read(
            DB_TOOLS,
            "session.permission",
            RELEASES,
            "whether `opencode run` made the session: its rules deny question (set by run, never by an interactive session); read inside the tools' query only, NULL where an older database has no such column",
        ),
        CensusEntry::not_read(
            DB,
            "permission",
            RELEASES,
            "a project's saved approvals ({project_id, data}); no session's",
        ),
        // `opencode run --format json` (Cli.run, the binary's bundled
        // JavaScript at byte 96194330): one JSON line per part, {type,
        // timestamp, sessionID, part}; read by path only (stream_json.rs).
        CensusEntry::read(
            STREAM,
            "tool_use",
            RELEASES,
            "the session (sessionID); part{type:\"tool\", tool, callID, state.status completed|error}: tool_call_observed of the configured server's tool (exactly one must fit), an error's words told apart as the database's query tells them (the same words, shared): tool_call_refused approval_required (run rejected an ask), permission_denied (a rule, or a person with feedback), timeout, connection_closed and protocol_error (the MCP SDK's words), otherwise a failure; the `invalid` tool tool_call_refused tool_not_available as in the database; the skill tool's state.input.name skill_invoked; input, output and the error's words never kept",
        )
        .silence("printed only once a call completed or errored: a call still running when the run ended prints nothing; OpenCode's version is printed nowhere"),
        CensusEntry::read(
            STREAM,
            "error",
            RELEASES,
            "the session (sessionID) and its time only: a session error {error{name, data.message}} is tied to no server, and its words are not kept",
        ),
        // OpenTelemetry (experimental.openTelemetry): Tool.execute spans
        // (telemetry.rs), the Effect spans below, and Effect logs.
        CensusEntry::read(
            TELEMETRY,
            "Tool.execute",
            RELEASES,
            "tool_call_observed: tool.name split against the configured servers (exactly one must fit), the span's status the outcome",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "log:server unavailable",
            RELEASES,
            "not yet read: the same {key, type, status} as the log file, as an OTel log record",
        ),
        CensusEntry::not_read(
            TELEMETRY,
            "Permission.ask",
            RELEASES,
            "a span with no server or tool attribute",
        ),
    ]
}

/// The configuration entries.
fn config() -> Vec<CensusEntry> {
    vec![
        // Configuration: config_scan.rs; the Config schema in the binary.
        CensusEntry::read(
            CONFIG,
            "mcp",
            RELEASES,
            "configured servers (type local|remote, command, environment, url, headers) per file, in OpenCode's merge order",
        ),
        CensusEntry::read(
            CONFIG,
            "mcp.*.enabled",
            RELEASES,
            "a server disabled_in_config; an entry holding only enabled switches a server another file defines",
        ),
        CensusEntry::not_read(
            CONFIG,
            "mcp.*.oauth",
            RELEASES,
            "not yet read: clientId, scope, callbackPort, redirectUri, or false (no OAuth detection)",
        ),
        CensusEntry::not_read(
            CONFIG,
            "mcp.*.timeout",
            RELEASES,
            "not yet read: the server's request timeout (default 5000 ms; experimental.mcp_timeout for all)",
        ),
        CensusEntry::read(
            CONFIG,
            "plugin",
            RELEASES,
            "npm plugins, with plugin/ and plugins/ folders' files",
        ),
        CensusEntry::not_read(
            CONFIG,
            "permission",
            RELEASES,
            "not yet read: allow|ask|deny per tool (and per agent: agent.*.permission); `opencode run` rejects every ask",
        ),
        CensusEntry::not_read(
            CONFIG,
            "tools",
            RELEASES,
            "not yet read: tool name (globs) to false hides it from the model (and per agent: agent.*.tools)",
        ),
        CensusEntry::not_read(
            CONFIG,
            "experimental.primary_tools",
            RELEASES,
            "not yet read: tools only primary agents get",
        ),
        CensusEntry::not_read(
            CONFIG,
            "experimental.continue_loop_on_deny",
            RELEASES,
            "not yet read: whether a denied call ends the turn",
        ),
        CensusEntry::not_read(
            CONFIG,
            "skills",
            RELEASES,
            "not yet read: more skill folders",
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
            include_str!("stream_json.rs"),
            include_str!("telemetry.rs"),
            include_str!("config_scan.rs"),
            include_str!("lib.rs"),
        ]
        .concat();
        let missing = tether_sdk::census::read_but_not_in(&census(), &code);
        assert!(
            missing.is_empty(),
            "read, but no reader names them: {missing:?}"
        );
    }
}
