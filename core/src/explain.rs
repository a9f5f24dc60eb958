//! What every status, probe verdict, reason code and stage means, and what
//! to check next: the one source `tether explain CODE` prints and the user
//! guide's "my MCP tools are missing" page is generated from.
//!
//! Each table is an exhaustive `match`: a new variant does not compile until
//! it is explained here, so neither the terminal nor the book can fall
//! behind the vocabulary.
//!
//! what every status, probe verdict, reason code and stage means and what to
//! check, each an exhaustive `match` (a new variant does not compile without
//! its entry), with examples drawn from `display.rs`: the one source of `tether
//! explain` and the book's reference page.

use std::fmt::Write as _;

use crate::history::ServerAttachment;
use crate::probe::Verdict;
use crate::vocab::{DisplayStatus, ReasonCode, Stage};

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
    let mut tool = crate::model::ToolRow::new("get_current_time");
    let yes = crate::model::StageObservation::shown(
        crate::vocab::StageState::Yes,
        crate::model::ProvenanceCode::HarnessRecord,
        crate::model::Timestamp(1),
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
        tool.refusals = vec![crate::model::ReasonCount {
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
        S::Unknown => (
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

/// What a reason code means (`None` for one this version does not know).
pub fn reason(reason: &ReasonCode) -> Option<Entry> {
    use DisplayStatus as S;
    use ReasonCode as R;
    use Seen::*;
    let (seen, meaning, check): (Seen, &'static str, &'static str) = match reason {
        R::HttpUnsupported => (
            Row(S::Filtered),
            "The agent does not advertise streamable HTTP MCP servers, so an HTTP server was not given to it.",
            "Use a stdio server, or let `tether relay` carry the HTTP server over stdio.",
        ),
        R::SseUnsupported => (
            Row(S::Filtered),
            "The agent does not take legacy SSE MCP servers.",
            "Use the server's streamable HTTP endpoint, or `tether relay --sse`.",
        ),
        R::TransportUnsupported => (
            Row(S::Filtered),
            "The agent cannot take this transport at all.",
            "Check which transports the agent advertises (`tether probe --transport auto`).",
        ),
        R::DuplicateName => (
            Row(S::Filtered),
            "An earlier server with the same name won; this one was left out.",
            "Rename one of them.",
        ),
        R::PolicyDenied => (
            Row(S::Filtered),
            "A policy the host set refused the server.",
            "Ask whoever runs the host; the policy is theirs, not the agent's.",
        ),
        R::NoObserver => (
            Row(S::Unavailable),
            "No plugin is registered for this agent kind, so nothing could decide or observe.",
            "Install or register a plugin for the agent (`tether plugins` lists them).",
        ),
        R::ObserverOmitted => (
            Row(S::Unavailable),
            "The plugin returned no decision for this server: a plugin bug.",
            "Report it to the plugin's author; run the conformance kit on the plugin.",
        ),
        R::NoStrategy => (
            Row(S::Unavailable),
            "A passthrough agent kind has no way to be given MCP servers (no materialization strategy), and says so honestly.",
            "Nothing Tether can do for this agent kind until its plugin learns a strategy.",
        ),
        R::CommandNotFound => (
            Row(S::Failed),
            "The server's command does not resolve on PATH (or as a path) where the agent runs it.",
            "Install the command, fix its path, or give the absolute path in the configuration.",
        ),
        R::HookFailed => (
            Capability(
                "hook",
                "Stop (check.sh)  failed  fired once: 1 failed (exit 3)",
            ),
            "A hook ran and exited with a non-zero status: the harness went on (a non-blocking error) or stopped, as its event decides.",
            "Run the hook's command by hand with the event's input; read the harness's own hook log.",
        ),
        R::HookTimedOut => (
            Capability(
                "hook",
                "PreToolUse (check.sh)  failed  fired once: 1 timed out",
            ),
            "A hook ran past its time limit and the harness stopped it.",
            "Make the hook faster, or raise its timeout in the harness's settings.",
        ),
        R::SkillFailed => (
            Capability("skill", "release-notes  failed  invoked once: 1 failed"),
            "The model invoked a skill and the harness answered with an error (an unknown skill, or one that would not load).",
            "Check the skill's name and its SKILL.md front matter; list the harness's skills with its own command.",
        ),
        R::PluginLoadFailed => (
            Capability(
                "plugin",
                "badplug  failed  failed to load: corrupt manifest",
            ),
            "The harness found a plugin but could not load it (a corrupt manifest, an export that is not a plugin).",
            "Read the plugin's manifest (or its entry point) and the harness's plugin list.",
        ),
        R::SessionNewFailed => (
            Row(S::Failed),
            "The agent refused ACP `session/new`.",
            "Read the session error: usually authentication or a missing key.",
        ),
        R::SessionLoadFailed => (
            Row(S::Failed),
            "The agent refused ACP `session/load`.",
            "Read the session error; the session may be gone on the agent's side.",
        ),
        R::SessionRequestFailed => (
            Row(S::Failed),
            "Another session request (a reset, a prompt) failed.",
            "Read the error in the report or the view's diagnostics.",
        ),
        R::ProcessStartFailed => (
            Row(S::Failed),
            "The agent's or the server's process could not start (permissions, a missing interpreter).",
            "Run the command by hand, in the same environment.",
        ),
        R::MaterializationFailed => (
            Row(S::Unavailable),
            "Writing the agent's MCP configuration failed.",
            "Check that the workspace is writable and that no file is in the way.",
        ),
        R::Timeout => (
            Row(S::Failed),
            "A bounded wait ran out on an explicit step (a request that was sent and never answered). Silence alone is never a timeout failure.",
            "Raise `--timeout`, or check that the server answers at all.",
        ),
        R::ConnectionRefused => (
            Row(S::Failed),
            "Nothing listened at the server's address.",
            "Is the server running, on that port?",
        ),
        R::ConnectionClosed => (
            Row(S::Failed),
            "The server's connection closed before its start-up finished: the harness said so (\"Connection closed\"). A stdio server whose process exited at start, most often.",
            "Run the server's command by hand, in the same environment, and read what it prints.",
        ),
        R::AuthRequired => (
            Row(S::Failed),
            "The server wants credentials (HTTP 401, an OAuth challenge, or the harness saying it needs a login).",
            "Log in through the harness, or configure the header or token the server wants.",
        ),
        R::ProtocolError => (
            Row(S::Failed),
            "The peer broke the MCP or ACP protocol; on a tool call, the server answered with a JSON-RPC error rather than a result (the call reached it, unlike a refusal).",
            "Run `tether endpoint-test` on the server; check its version.",
        ),
        R::ServerError => (
            Row(S::Failed),
            "The server answered with an error.",
            "See the server's own logs.",
        ),
        R::AgentReportedFailed => (
            Row(S::Failed),
            "The agent itself reported the server as failed (its status report, telemetry or records).",
            "Read the row's summary; the harness's own MCP log usually says more.",
        ),
        R::DisabledInConfig => (
            Inventory,
            "The configuration turns it off (`enabled = false`, `disabled: true`, a disable list, a plugin disabled).",
            "Turn it on where the summary says, if you want it.",
        ),
        R::NotApproved => (
            Inventory,
            "It waits for your approval: a project server or a hook the harness has not been told to trust yet (the row's summary says where it asks).",
            "Approve it in the harness (its prompt, `/mcp`, `/hooks`), or in its settings.",
        ),
        R::Excluded => (
            Inventory,
            "An allow or deny list leaves it out (`includeTools`/`excludeTools`, `enabled_tools`/`disabled_tools`, `tools`, `allowMCPServers`).",
            "Edit the list the summary names.",
        ),
        R::UntrustedFolder => (
            Inventory,
            "The project folder is not trusted, so the harness ignores the project's own servers and hooks.",
            "Trust the folder in the harness, if you mean to.",
        ),
        R::InvalidConfig => (
            Inventory,
            "A configuration entry or file is malformed (it does not parse, or lacks what the harness needs).",
            "Fix the file at the line the error names; the rest of the file still counts.",
        ),
        R::Cancelled => (
            Row(S::Failed),
            "Something ended the work before it finished (Ctrl-C, a superseded attempt).",
            "Run it again.",
        ),
        R::DeniedByPolicy => (
            Inventory,
            "An administrator's managed, enterprise or organisation policy refuses the server, or a call of its tool (then the call never reached the server).",
            "Ask your administrator; the policy file is named in the summary. A policy that could not be fetched can block every server: check the harness's own warning.",
        ),
        R::FileTooLarge => (
            Inventory,
            "A configuration file is larger than the 1 MiB Tether reads.",
            "Check that the file is what it should be.",
        ),
        R::TooManyEntries => (
            Inventory,
            "More entries than Tether keeps: rows of one harness's configuration (4,096), or session files of one source (the newest 10,000). The rest were not read; the summary counts them. Other harnesses and sources are read in full.",
            "Check whether a generated configuration or a folder of old sessions is what it should be; narrow with --harness, or list older sessions with --since.",
        ),
        R::Unreadable => (
            Inventory,
            "A configuration file exists but cannot be read (permissions, not a regular file).",
            "Check its permissions.",
        ),
        R::SymlinkOutsideRoot => (
            Inventory,
            "A symlink points outside the folder being read; Tether does not follow it.",
            "Point the link inside, or copy the file.",
        ),
        R::SymlinkLoop => (Inventory, "Symlinks loop.", "Fix the links."),
        R::CredentialMissing => (
            Endpoint,
            "A request to the host's observed endpoint carried no valid credential. It never counts as contact.",
            "The agent dropped the header Tether gave it: see `headers_unsupported`, or use the relay.",
        ),
        R::CredentialStale => (
            Endpoint,
            "A request to the host's endpoint carried a superseded attempt's credential.",
            "An old agent process is still running: stop it.",
        ),
        R::HeadersUnsupported => (
            Row(S::Filtered),
            "The agent cannot send the HTTP headers this server needs over this transport (the host's endpoint credential, for one).",
            "Use a transport the agent can authenticate over, or the relay.",
        ),
        R::HostNotFound => (
            EndpointTest,
            "The server's host name does not resolve.",
            crate_hint(R::HostNotFound),
        ),
        R::EndpointNotFound => (
            EndpointTest,
            "HTTP 404: nothing is at that path.",
            crate_hint(R::EndpointNotFound),
        ),
        R::MethodNotAllowed => (
            EndpointTest,
            "HTTP 405: something is at that path, but it does not take MCP requests.",
            crate_hint(R::MethodNotAllowed),
        ),
        R::Redirected => (
            EndpointTest,
            "The server redirects elsewhere; Tether does not follow, so credentials stay put.",
            crate_hint(R::Redirected),
        ),
        R::NoCommonProtocol => (
            EndpointTest,
            "The server refused both `server/discover` (MCP 2026-07-28) and `initialize` (legacy).",
            crate_hint(R::NoCommonProtocol),
        ),
        R::TlsFailed => (
            EndpointTest,
            "The TLS handshake failed: a bad certificate, or no TLS at that port.",
            crate_hint(R::TlsFailed),
        ),
        R::NotInstalled => (
            Inventory,
            "A plugin is enabled or referenced but not installed (or its install failed).",
            crate_hint(R::NotInstalled),
        ),
        R::UnresolvedVariable => (
            Inventory,
            "A command, or an MCP server's url, headers, env, args or command, uses a variable that is unset here (`${GITHUB_TOKEN}`, `$VAR`, `{env:VAR}`, a `bearer_token_env_var`), or that nothing expands where it runs (a plugin-root variable in a hook outside its plugin). The harness passes the reference on unexpanded. The summary names the variables, never values; `--test` reports this cause instead of the network error it leads to.",
            crate_hint(R::UnresolvedVariable),
        ),
        R::RelativeCommand => (
            Inventory,
            "A command is a relative path: it resolves against the workspace's working directory, so it runs or not depending on where the harness starts.",
            crate_hint(R::RelativeCommand),
        ),
        R::FileShadowed => (
            Inventory,
            "The harness does not read this configuration file at all, because another file takes its place (the row's summary names both: one harness reads a workspace's `.github/mcp.json` only when the workspace has no `.mcp.json`, even an empty or malformed one).",
            "Move the servers into the file the harness reads, or remove the other file.",
        ),
        R::ToolNotListed => (
            EndpointTest,
            "`tether endpoint-test --call TOOL` was asked to call a tool the server did not list, so it did not call it.",
            "Check the name against the tools the server lists (`tether endpoint-test --tools`): names are exact, and a harness's model-side name (`mcp__server__tool`) is not the server's.",
        ),
        R::DeferredUntilSearched => (
            Tool,
            "The harness held the tool behind its tool search: the model was told it can search for tools, but was not sent this one's definition, so it cannot call it until it searches and the search loads it (some harnesses do this by default).",
            "Ask the agent to look for the tool, or turn the harness's tool search off (its setting or variable for deferred tools) so every tool is sent with each request.",
        ),
        R::NameCollision => (
            Tool,
            "Two tools got the same name on the way to the model: the harness composes each tool's model-side name from its server's name and its own, and cuts names longer than its provider takes, so two long names that start alike become one. The harness keeps one of them (or the provider refuses the whole request).",
            "Rename one of the tools, or give the server a shorter name: `tether inventory --test` prints every tool's model-side name.",
        ),
        R::ToolLimitExceeded => (
            Tool,
            "The harness (or its model provider) offers at most so many tools in one request, and this tool fell past the limit: it was not sent, or the request was refused.",
            "Split the server, turn off the servers this session does not need, or filter their tools in the harness's configuration.",
        ),
        R::DroppedByHarness => (
            Tool,
            "The harness dropped the tool before the model saw it, and its own record says so, for a reason it gives in words Tether does not keep.",
            "Run `tether endpoint-test` on the server and look at the tool's definition; the harness's own `/mcp` view names the reason.",
        ),
        R::SchemaUnsupported => (
            Tool,
            "The tool's input schema uses a JSON Schema construct the harness or its provider does not accept, so the harness dropped the tool (or the provider refused the request).",
            "Simplify the tool's input schema (the summary names the construct), or use a harness whose provider takes it.",
        ),
        R::NameTooLong => (
            Tool,
            "The tool's name as the model sees it (the harness adds its server's name) is longer than the model provider takes, so the provider refuses every request that carries it: with this tool, the session's other tools fail too.",
            "Give the server a shorter name in the configuration, or rename the tool: `tether inventory --test` prints every tool's model-side name and its length limit.",
        ),
        R::TitleChanged => (
            Pin,
            "The tool's title is not the one pinned for this server: the first time Tether saw the server list its tools, it kept a hash of each tool's title, description, schemas and annotations, and this listing's title hashes differently.",
            PIN_CHECK,
        ),
        R::DescriptionChanged => (
            Pin,
            "The tool's description is not the one pinned for this server. The description is what the model reads to decide when and how to call the tool: a server that changes it after you approved it (a \"rug pull\") can steer the model.",
            PIN_CHECK,
        ),
        R::InputSchemaChanged => (
            Pin,
            "The tool's input schema is not the one pinned for this server: its parameters (names, types, descriptions, what is required) changed. Key order and whitespace never count; only content does.",
            PIN_CHECK,
        ),
        R::OutputSchemaChanged => (
            Pin,
            "The tool's output schema is not the one pinned for this server (it gained, lost or changed one).",
            PIN_CHECK,
        ),
        R::AnnotationsChanged => (
            Pin,
            "The tool's annotations (its read-only, destructive, idempotent and open-world hints, its annotation title) are not the ones pinned for this server.",
            PIN_CHECK,
        ),
        R::ToolAdded => (
            Pin,
            "The server lists a tool its pins do not have: it appeared after the server was first pinned. It stays reported until you accept it.",
            "Look at the new tool (`tether endpoint-test --tools`), then `tether pins accept SERVER/TOOL` to pin it.",
        ),
        R::ToolRemoved => (
            Pin,
            "The server no longer lists a tool its pins have.",
            "If the server dropped it on purpose, `tether pins accept SERVER/TOOL` forgets the pin; otherwise, check the server's version and configuration.",
        ),
        R::PermissionDenied => (
            Call,
            "The model called the tool and the harness's permission rules or mode refused the call: it never reached the server. Not a use, and not the server's failure.",
            "Allow the tool in the harness's permissions (an allow rule for `mcp__SERVER__TOOL`, or a mode that allows it), or run it where someone can answer the prompt. `tether inventory` shows the rules that apply.",
        ),
        R::ApprovalRequired => (
            Call,
            "The call needed a person's approval and no one could give it (a headless run: `claude -p`, `codex exec`), so the harness refused it: it never reached the server.",
            "Approve the tool ahead of time: Codex `mcp_servers.NAME.default_tools_approval_mode = \"approve\"`, Claude Code an allow rule or `--allowedTools`, Copilot CLI `--allow-tool`; or run it interactively.",
        ),
        R::BlockedByHook => (
            Call,
            "A hook that runs before tool calls (PreToolUse and the like) denied the call: it never reached the server.",
            "Read the hook's own output (`tether sessions show` names the hook); change its matcher or its rule if the call should run.",
        ),
        R::ToolError => (
            Call,
            "The call reached the server, and the server answered with a tool error (`isError`): the tool ran and said it failed.",
            "Read what the tool said in the harness; the server's own log has the rest. The connection is fine.",
        ),
        R::Other(_) => return None,
    };
    let code = ReasonCode::KNOWN
        .iter()
        .copied()
        .find(|c| *c == reason.as_str())?;
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
pub const PROVENANCES: [crate::model::ProvenanceCode; 10] = {
    use crate::model::ProvenanceCode as P;
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
pub fn provenance(p: crate::model::ProvenanceCode) -> Entry {
    use crate::model::ProvenanceCode as P;
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

/// Every entry: statuses, verdicts, reason codes, stages, provenances.
pub fn all() -> Vec<Entry> {
    let mut entries: Vec<Entry> = DisplayStatus::ALL.iter().map(|s| status(*s)).collect();
    entries.extend(VERDICTS.iter().map(|v| verdict(*v)));
    entries.extend(reason_codes().iter().filter_map(reason));
    entries.extend(Stage::ALL.iter().map(|s| stage(*s)));
    entries.extend(PROVENANCES.iter().map(|p| provenance(*p)));
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
         <!-- Generated by `tether explain --markdown` from core/src/explain.rs. Do not edit: \
         `TETHER_UPDATE_BOOK=1 cargo test -p tether-tests --test book` rewrites it. -->\n\n\
         This is the \"my MCP tools are missing\" page. Find the word Tether showed you, \
         read what it means and what to check. `tether explain CODE` prints the same \
         entry in a terminal, offline.\n",
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
        for word in crate::vocab::Provenance::KNOWN {
            let known = PROVENANCES
                .iter()
                .any(|p| provenance(*p).code == *word && p.word().as_str() == *word);
            assert!(known, "{word}");
        }
        assert_eq!(PROVENANCES.len(), crate::vocab::Provenance::KNOWN.len());
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
    fn headings_are_unique() {
        let md = markdown();
        let mut headings: Vec<&str> = md.lines().filter(|l| l.starts_with("### ")).collect();
        let n = headings.len();
        headings.sort();
        headings.dedup();
        assert_eq!(headings.len(), n);
    }
}
