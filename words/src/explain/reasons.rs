//! Every reason code's entry, as data: where a user meets it, what it
//! means, what to check.

use super::Seen;
use tether_core::vocab::DisplayStatus;

/// One reason code's entry, as data: where a user meets it, what it
/// means, what to check.
pub(super) struct Reason {
    pub(super) code: &'static str,
    pub(super) seen: Seen,
    pub(super) meaning: &'static str,
    pub(super) check: Check,
}

/// What to check about a reason.
#[derive(Clone, Copy)]
pub(super) enum Check {
    /// These words.
    Says(&'static str),
    /// The display's hint for the reason ([`crate::display::reason_hint`]).
    Hint,
    /// What to do about a pinned tool's changed part ([`super::PIN_CHECK`]).
    Pin,
}

/// Every reason code's entry: where a user meets it, what it means, what
/// to check. Data, looked up by code ([`super::reason`]); a test holds it to the
/// vocabulary, one entry per known code.
pub(super) const REASONS: &[Reason] = &[
    Reason {
        code: "http_unsupported",
        seen: Seen::Row(DisplayStatus::Filtered),
        meaning: "The agent does not advertise streamable HTTP MCP servers, so an HTTP server was not given to it.",
        check: Check::Says(
            "Use a stdio server, or let `tether relay` carry the HTTP server over stdio.",
        ),
    },
    Reason {
        code: "sse_unsupported",
        seen: Seen::Row(DisplayStatus::Filtered),
        meaning: "The agent does not take legacy SSE MCP servers.",
        check: Check::Says("Use the server's streamable HTTP endpoint, or `tether relay --sse`."),
    },
    Reason {
        code: "transport_unsupported",
        seen: Seen::Row(DisplayStatus::Filtered),
        meaning: "The agent cannot take this transport at all.",
        check: Check::Says(
            "Check which transports the agent advertises (`tether probe --transport auto`).",
        ),
    },
    Reason {
        code: "duplicate_name",
        seen: Seen::Row(DisplayStatus::Filtered),
        meaning: "An earlier server with the same name won; this one was left out.",
        check: Check::Says("Rename one of them."),
    },
    Reason {
        code: "policy_denied",
        seen: Seen::Row(DisplayStatus::Filtered),
        meaning: "A policy the host set refused the server.",
        check: Check::Says("Ask whoever runs the host; the policy is theirs, not the agent's."),
    },
    Reason {
        code: "no_observer",
        seen: Seen::Row(DisplayStatus::Unavailable),
        meaning: "No plugin is registered for this agent kind, so nothing could decide or observe.",
        check: Check::Says(
            "Install or register a plugin for the agent (`tether plugins` lists them).",
        ),
    },
    Reason {
        code: "observer_omitted",
        seen: Seen::Row(DisplayStatus::Unavailable),
        meaning: "The plugin returned no decision for this server: a plugin bug.",
        check: Check::Says(
            "Report it to the plugin's author; run the conformance kit on the plugin.",
        ),
    },
    Reason {
        code: "no_strategy",
        seen: Seen::Row(DisplayStatus::Unavailable),
        meaning: "A passthrough agent kind has no way to be given MCP servers (no materialization strategy), and says so honestly.",
        check: Check::Says(
            "Nothing Tether can do for this agent kind until its plugin learns a strategy.",
        ),
    },
    Reason {
        code: "command_not_found",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "The server's command does not resolve where the agent runs it: a bare name that is on no folder of PATH, or a path (absolute or relative) where no file is. The summary says which, and names the command by its basename only.",
        check: Check::Says(
            "Install the command, fix its path, or give the absolute path in the configuration.",
        ),
    },
    Reason {
        code: "cwd_not_found",
        seen: Seen::Inventory,
        meaning: "The server's working directory (`cwd` in its entry) does not exist here, so the server cannot start there, whatever its command. Without `--test` the row says so from the configuration; with it the test is not run, since its spawn error would only say what this causes.",
        check: Check::Says(
            "Create the folder, or fix or remove `cwd` in the server's entry (the JSON output's `diagnostics.cwd` is `missing`).",
        ),
    },
    Reason {
        code: "server_exited",
        seen: Seen::EndpointTest,
        meaning: "The server's command started and then exited before it answered: it ran (so it is not a start failure) and ended on its own. The summary gives its exit status and its last line of stderr (scrubbed). Status 0 most often means a program that is not an MCP server, or one that needs an argument; another status, a server that failed at start (a missing key, a bad flag, a port in use).",
        check: Check::Says(
            "Run the command by hand, in the same environment and folder, and read what it prints on stderr before it exits.",
        ),
    },
    Reason {
        code: "hook_failed",
        seen: Seen::Capability(
            "hook",
            "Stop (check.sh)  failed  fired once: 1 failed (exit 3)",
        ),
        meaning: "A hook ran and exited with a non-zero status: the harness went on (a non-blocking error) or stopped, as its event decides.",
        check: Check::Says(
            "Run the hook's command by hand with the event's input; read the harness's own hook log.",
        ),
    },
    Reason {
        code: "hook_timed_out",
        seen: Seen::Capability(
            "hook",
            "PreToolUse (check.sh)  failed  fired once: 1 timed out",
        ),
        meaning: "A hook ran past its time limit and the harness stopped it.",
        check: Check::Says("Make the hook faster, or raise its timeout in the harness's settings."),
    },
    Reason {
        code: "skill_failed",
        seen: Seen::Capability("skill", "release-notes  failed  invoked once: 1 failed"),
        meaning: "The model invoked a skill and the harness answered with an error (an unknown skill, or one that would not load).",
        check: Check::Says(
            "Check the skill's name and its SKILL.md front matter; list the harness's skills with its own command.",
        ),
    },
    Reason {
        code: "plugin_load_failed",
        seen: Seen::Capability(
            "plugin",
            "badplug  failed  failed to load: corrupt manifest",
        ),
        meaning: "The harness found a plugin but could not load it (a corrupt manifest, an export that is not a plugin).",
        check: Check::Says(
            "Read the plugin's manifest (or its entry point) and the harness's plugin list.",
        ),
    },
    Reason {
        code: "session_new_failed",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "The agent refused ACP `session/new`.",
        check: Check::Says("Read the session error: usually authentication or a missing key."),
    },
    Reason {
        code: "session_load_failed",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "The agent refused ACP `session/load`.",
        check: Check::Says("Read the session error; the session may be gone on the agent's side."),
    },
    Reason {
        code: "session_request_failed",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "Another session request (a reset, a prompt) failed.",
        check: Check::Says("Read the error in the report or the view's diagnostics."),
    },
    Reason {
        code: "process_start_failed",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "The agent's or the server's process could not start: its file is not executable, the interpreter its `#!` line names is missing, or the system refused it. A server that started and then exited is `server_exited`; one that kept running and never answered, `timeout`.",
        check: Check::Says("Run the command by hand, in the same environment."),
    },
    Reason {
        code: "materialization_failed",
        seen: Seen::Row(DisplayStatus::Unavailable),
        meaning: "Writing the agent's MCP configuration failed.",
        check: Check::Says("Check that the workspace is writable and that no file is in the way."),
    },
    Reason {
        code: "timeout",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "A bounded wait ran out on an explicit step (a request that was sent and never answered). Silence alone is never a timeout failure.",
        check: Check::Says("Raise `--timeout`, or check that the server answers at all."),
    },
    Reason {
        code: "connection_refused",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "Nothing listened at the server's address.",
        check: Check::Says("Is the server running, on that port?"),
    },
    Reason {
        code: "connection_closed",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "The server's connection closed before its start-up finished: the harness said so (\"Connection closed\"). A stdio server whose process exited at start, most often.",
        check: Check::Says(
            "Run the server's command by hand, in the same environment, and read what it prints.",
        ),
    },
    Reason {
        code: "auth_required",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "The server wants credentials and none were sent (HTTP 401 or 403 without an OAuth challenge, or the harness saying it needs a login). A token that was sent and refused is `auth_rejected`; a server that wants an OAuth login, `oauth_required`; a token variable that is unset, `unresolved_variable`.",
        check: Check::Says(
            "Log in through the harness, or configure the header or token the server wants.",
        ),
    },
    Reason {
        code: "auth_rejected",
        seen: Seen::EndpointTest,
        meaning: "The server refused the credentials that were sent (HTTP 401, or 403 for a token without the access it wants): an Authorization header, an API-key header, or a password in the URL went with the request, and the server said no. The token is wrong, expired, revoked, or of the wrong kind.",
        check: Check::Says(
            "Make a new token (or log in again) and put it where the configuration reads it; for a 403, give the token the scope or access the server names.",
        ),
    },
    Reason {
        code: "oauth_required",
        seen: Seen::EndpointTest,
        meaning: "The server wants an OAuth login: it answered HTTP 401 with a `WWW-Authenticate` challenge naming its protected-resource metadata, and no credentials were sent. The harness logs in through the browser; an endpoint test cannot.",
        check: Check::Says(
            "Log in through the harness (its `/mcp` screen or its `mcp login` command), then test with the token it got: `tether endpoint-test --url URL --header 'Authorization: Bearer …'`.",
        ),
    },
    Reason {
        code: "file_refused",
        seen: Seen::Inventory,
        meaning: "The harness refuses this configuration file: it stops with an error before it runs anything, or sets the file aside and starts without it (a `settings.json` with a trailing comma, for harnesses that strip comments and then `JSON.parse` it). Tether reads the file as unusable too: the summary quotes the harness's own words, and where the harness does not start at all, its other rows say so.",
        check: Check::Says(
            "Fix the file at the line and column the summary names (a trailing comma before `}` or `]`, most often), then run the harness again.",
        ),
    },
    Reason {
        code: "misplaced_key",
        seen: Seen::Inventory,
        meaning: "A key sits in a file the harness does not read it from, so the harness ignores it without a word (`mcpServers` in a settings file, where the harness reads servers only from its state file and the project's `.mcp.json`). The row's summary says where the harness reads it.",
        check: Check::Says(
            "Move the entry to the file the summary names (the harness's own `mcp add` command writes it there), and remove it from this one.",
        ),
    },
    Reason {
        code: "unmatched_name",
        seen: Seen::Inventory,
        meaning: "A list in the configuration names something no entry is called (`enabledMcpjsonServers: [\"everythin\"]`), so it changes nothing: a typo, most often. The summary gives the closest name, when one is close.",
        check: Check::Says(
            "Spell the name as its entry does (the summary's \"did you mean\"), or remove it from the list.",
        ),
    },
    Reason {
        code: "protocol_error",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "The peer broke the MCP or ACP protocol; on a tool call, the server answered with a JSON-RPC error rather than a result (the call reached it, unlike a refusal).",
        check: Check::Says("Run `tether endpoint-test` on the server; check its version."),
    },
    Reason {
        code: "server_error",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "The server answered with an error.",
        check: Check::Says("See the server's own logs."),
    },
    Reason {
        code: "agent_reported_failed",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "The agent itself reported the server as failed (its status report, telemetry or records).",
        check: Check::Says("Read the row's summary; the harness's own MCP log usually says more."),
    },
    Reason {
        code: "disabled_in_config",
        seen: Seen::Inventory,
        meaning: "The configuration turns it off (`enabled = false`, `disabled: true`, a disable list, a plugin disabled).",
        check: Check::Says("Turn it on where the summary says, if you want it."),
    },
    Reason {
        code: "not_approved",
        seen: Seen::Inventory,
        meaning: "It waits for your approval: a project server or a hook the harness has not been told to trust yet (the row's summary says where it asks).",
        check: Check::Says(
            "Approve it in the harness (its prompt, `/mcp`, `/hooks`), or in its settings.",
        ),
    },
    Reason {
        code: "excluded",
        seen: Seen::Inventory,
        meaning: "An allow or deny list leaves it out (`includeTools`/`excludeTools`, `enabled_tools`/`disabled_tools`, `tools`, `allowMCPServers`).",
        check: Check::Says("Edit the list the summary names."),
    },
    Reason {
        code: "untrusted_folder",
        seen: Seen::Inventory,
        meaning: "The project folder is not trusted, so the harness ignores the project's own servers and hooks.",
        check: Check::Says("Trust the folder in the harness, if you mean to."),
    },
    Reason {
        code: "invalid_config",
        seen: Seen::Inventory,
        meaning: "A configuration entry or file is malformed (it does not parse, or lacks what the harness needs).",
        check: Check::Says(
            "Fix the file at the line the error names; the rest of the file still counts.",
        ),
    },
    Reason {
        code: "cancelled",
        seen: Seen::Row(DisplayStatus::Failed),
        meaning: "Something ended the work before it finished (Ctrl-C, a superseded attempt).",
        check: Check::Says("Run it again."),
    },
    Reason {
        code: "denied_by_policy",
        seen: Seen::Inventory,
        meaning: "An administrator's managed, enterprise or organisation policy refuses the server, or a call of its tool (then the call never reached the server).",
        check: Check::Says(
            "Ask your administrator; the policy file is named in the summary. A policy that could not be fetched can block every server: check the harness's own warning.",
        ),
    },
    Reason {
        code: "file_too_large",
        seen: Seen::Inventory,
        meaning: "A configuration file is larger than the 1 MiB Tether reads.",
        check: Check::Says("Check that the file is what it should be."),
    },
    Reason {
        code: "too_many_entries",
        seen: Seen::Inventory,
        meaning: "More entries than Tether keeps: rows of one harness's configuration (4,096), or session files of one source (the newest 10,000). The rest were not read; the summary counts them. Other harnesses and sources are read in full.",
        check: Check::Says(
            "Check whether a generated configuration or a folder of old sessions is what it should be; narrow with --harness, or list older sessions with --since.",
        ),
    },
    Reason {
        code: "scanner_panicked",
        seen: Seen::Inventory,
        meaning: "The plugin that reads one harness's configuration files panicked: its rows are missing from the inventory (the other harnesses' are whole). Tether caught it; nothing was written.",
        check: Check::Says(
            "Run `tether inventory --harness KIND` again, and report it with the plugin's version (`tether plugins`); a malformed file is refused per file, never a panic, so this is a bug.",
        ),
    },
    Reason {
        code: "unreadable",
        seen: Seen::Inventory,
        meaning: "A configuration file exists but cannot be read (permissions, not a regular file).",
        check: Check::Says("Check its permissions."),
    },
    Reason {
        code: "symlink_outside_root",
        seen: Seen::Inventory,
        meaning: "A symlink points outside the folder being read; Tether does not follow it.",
        check: Check::Says("Point the link inside, or copy the file."),
    },
    Reason {
        code: "symlink_loop",
        seen: Seen::Inventory,
        meaning: "Symlinks loop.",
        check: Check::Says("Fix the links."),
    },
    Reason {
        code: "credential_missing",
        seen: Seen::Endpoint,
        meaning: "A request to the host's observed endpoint carried no valid credential. It never counts as contact.",
        check: Check::Says(
            "The agent dropped the header Tether gave it: see `headers_unsupported`, or use the relay.",
        ),
    },
    Reason {
        code: "credential_stale",
        seen: Seen::Endpoint,
        meaning: "A request to the host's endpoint carried a superseded attempt's credential.",
        check: Check::Says("An old agent process is still running: stop it."),
    },
    Reason {
        code: "headers_unsupported",
        seen: Seen::Row(DisplayStatus::Filtered),
        meaning: "The agent cannot send the HTTP headers this server needs over this transport (the host's endpoint credential, for one).",
        check: Check::Says("Use a transport the agent can authenticate over, or the relay."),
    },
    Reason {
        code: "host_not_found",
        seen: Seen::EndpointTest,
        meaning: "The server's host name does not resolve.",
        check: Check::Hint,
    },
    Reason {
        code: "endpoint_not_found",
        seen: Seen::EndpointTest,
        meaning: "HTTP 404: nothing is at that path.",
        check: Check::Hint,
    },
    Reason {
        code: "method_not_allowed",
        seen: Seen::EndpointTest,
        meaning: "HTTP 405: something is at that path, but it does not take MCP requests.",
        check: Check::Hint,
    },
    Reason {
        code: "redirected",
        seen: Seen::EndpointTest,
        meaning: "The server redirects elsewhere; Tether does not follow, so credentials stay put.",
        check: Check::Hint,
    },
    Reason {
        code: "no_common_protocol",
        seen: Seen::EndpointTest,
        meaning: "The server refused both `server/discover` (MCP 2026-07-28) and `initialize` (legacy).",
        check: Check::Hint,
    },
    Reason {
        code: "tls_failed",
        seen: Seen::EndpointTest,
        meaning: "The TLS handshake failed: a bad certificate, or no TLS at that port.",
        check: Check::Hint,
    },
    Reason {
        code: "not_installed",
        seen: Seen::Inventory,
        meaning: "A plugin is enabled or referenced but not installed (or its install failed).",
        check: Check::Hint,
    },
    Reason {
        code: "unresolved_variable",
        seen: Seen::Inventory,
        meaning: "A command, or an MCP server's url, headers, env, args or command, uses a variable that is unset here (`${GITHUB_TOKEN}`, `$VAR`, `{env:VAR}`, a `bearer_token_env_var`), or that nothing expands where it runs (a plugin-root variable in a hook outside its plugin). The harness passes the reference on unexpanded. The summary names the variables, never values; `--test` reports this cause instead of the network error it leads to.",
        check: Check::Hint,
    },
    Reason {
        code: "relative_command",
        seen: Seen::Inventory,
        meaning: "A command is a relative path: it resolves against the workspace's working directory, so it runs or not depending on where the harness starts.",
        check: Check::Hint,
    },
    Reason {
        code: "file_shadowed",
        seen: Seen::Inventory,
        meaning: "The harness does not read this configuration file at all, because another file takes its place (the row's summary names both: one harness reads a workspace's `.github/mcp.json` only when the workspace has no `.mcp.json`, even an empty or malformed one).",
        check: Check::Says(
            "Move the servers into the file the harness reads, or remove the other file.",
        ),
    },
    Reason {
        code: "tool_not_listed",
        seen: Seen::EndpointTest,
        meaning: "`tether endpoint-test --call TOOL` was asked to call a tool the server did not list, so it did not call it.",
        check: Check::Says(
            "Check the name against the tools the server lists (`tether endpoint-test --tools`): names are exact, and a harness's model-side name (`mcp__server__tool`) is not the server's.",
        ),
    },
    Reason {
        code: "deferred_until_searched",
        seen: Seen::Tool,
        meaning: "The harness held the tool behind its tool search: the model was told it can search for tools, but was not sent this one's definition, so it cannot call it until it searches and the search loads it (some harnesses do this by default).",
        check: Check::Says(
            "Ask the agent to look for the tool, or turn the harness's tool search off (its setting or variable for deferred tools) so every tool is sent with each request.",
        ),
    },
    Reason {
        code: "name_collision",
        seen: Seen::Tool,
        meaning: "Two tools got the same name on the way to the model: the harness composes each tool's model-side name from its server's name and its own, and cuts names longer than its provider takes, so two long names that start alike become one. The harness keeps one of them (or the provider refuses the whole request).",
        check: Check::Says(
            "Rename one of the tools, or give the server a shorter name: `tether inventory --test` prints every tool's model-side name.",
        ),
    },
    Reason {
        code: "tool_limit_exceeded",
        seen: Seen::Tool,
        meaning: "The harness (or its model provider) offers at most so many tools in one request, and this tool fell past the limit: it was not sent, or the request was refused.",
        check: Check::Says(
            "Split the server, turn off the servers this session does not need, or filter their tools in the harness's configuration.",
        ),
    },
    Reason {
        code: "dropped_by_harness",
        seen: Seen::Tool,
        meaning: "The harness dropped the tool before the model saw it, and its own record says so, for a reason it gives in words Tether does not keep.",
        check: Check::Says(
            "Run `tether endpoint-test` on the server and look at the tool's definition; the harness's own `/mcp` view names the reason.",
        ),
    },
    Reason {
        code: "schema_unsupported",
        seen: Seen::Tool,
        meaning: "The tool's input schema uses a JSON Schema construct the harness or its provider does not accept, so the harness dropped the tool (or the provider refused the request).",
        check: Check::Says(
            "Simplify the tool's input schema (the summary names the construct), or use a harness whose provider takes it.",
        ),
    },
    Reason {
        code: "name_too_long",
        seen: Seen::Tool,
        meaning: "The tool's name as the model sees it (the harness adds its server's name) is longer than the model provider takes, so the provider refuses every request that carries it: with this tool, the session's other tools fail too.",
        check: Check::Says(
            "Give the server a shorter name in the configuration, or rename the tool: `tether inventory --test` prints every tool's model-side name and its length limit.",
        ),
    },
    Reason {
        code: "title_changed",
        seen: Seen::Pin,
        meaning: "The tool's title is not the one pinned for this server: the first time Tether saw the server list its tools, it kept a hash of each tool's title, description, schemas and annotations, and this listing's title hashes differently.",
        check: Check::Pin,
    },
    Reason {
        code: "description_changed",
        seen: Seen::Pin,
        meaning: "The tool's description is not the one pinned for this server. The description is what the model reads to decide when and how to call the tool: a server that changes it after you approved it (a \"rug pull\") can steer the model.",
        check: Check::Pin,
    },
    Reason {
        code: "input_schema_changed",
        seen: Seen::Pin,
        meaning: "The tool's input schema is not the one pinned for this server: its parameters (names, types, descriptions, what is required) changed. Key order and whitespace never count; only content does.",
        check: Check::Pin,
    },
    Reason {
        code: "output_schema_changed",
        seen: Seen::Pin,
        meaning: "The tool's output schema is not the one pinned for this server (it gained, lost or changed one).",
        check: Check::Pin,
    },
    Reason {
        code: "annotations_changed",
        seen: Seen::Pin,
        meaning: "The tool's annotations (its read-only, destructive, idempotent and open-world hints, its annotation title) are not the ones pinned for this server.",
        check: Check::Pin,
    },
    Reason {
        code: "tool_added",
        seen: Seen::Pin,
        meaning: "The server lists a tool its pins do not have: it appeared after the server was first pinned. It stays reported until you accept it.",
        check: Check::Says(
            "Look at the new tool (`tether endpoint-test --tools`), then `tether pins accept SERVER/TOOL` to pin it.",
        ),
    },
    Reason {
        code: "tool_removed",
        seen: Seen::Pin,
        meaning: "The server no longer lists a tool its pins have.",
        check: Check::Says(
            "If the server dropped it on purpose, `tether pins accept SERVER/TOOL` forgets the pin; otherwise, check the server's version and configuration.",
        ),
    },
    Reason {
        code: "permission_denied",
        seen: Seen::Call,
        meaning: "The model called the tool and the harness's permission rules or mode refused the call: it never reached the server. Not a use, and not the server's failure.",
        check: Check::Says(
            "Allow the tool in the harness's permissions (an allow rule for `mcp__SERVER__TOOL`, or a mode that allows it), or run it where someone can answer the prompt. `tether inventory` shows the rules that apply.",
        ),
    },
    Reason {
        code: "approval_required",
        seen: Seen::Call,
        meaning: "The call needed a person's approval and no one could give it (a headless run, most often), so the harness refused it: it never reached the server.",
        check: Check::Says(
            "Approve the tool ahead of time in the harness's own settings (an allow rule, or the server's approval mode; `tether inventory` shows the rules that apply and what they predict), or run it where someone can answer.",
        ),
    },
    Reason {
        code: "blocked_by_hook",
        seen: Seen::Call,
        meaning: "A hook that runs before tool calls (PreToolUse and the like) denied the call: it never reached the server.",
        check: Check::Says(
            "Read what the hook said, in the harness (Tether keeps no hook output; `tether sessions show` names the hooks that ran); change its matcher or its rule if the call should run.",
        ),
    },
    Reason {
        code: "tool_not_available",
        seen: Seen::Call,
        meaning: "The model called a tool the harness did not hold at that moment, and the harness answered with its own \"no such tool\": the call reached no server, it is no use and no failure of the server, and it shows the tool was not available to the harness then (not that it was listed or offered).",
        check: Check::Says(
            "See whether the server was connected and listed the tool by then (`tether sessions show` says what showed it); a server still starting, one that failed, or a tool the server renamed or dropped gives this answer.",
        ),
    },
    Reason {
        code: "tool_error",
        seen: Seen::Call,
        meaning: "The call reached the server, and the server answered with a tool error (`isError`): the tool ran and said it failed.",
        check: Check::Says(
            "Read what the tool said in the harness; the server's own log has the rest. The connection is fine.",
        ),
    },
];
