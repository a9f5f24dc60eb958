//! The stable words of the contract: reason codes, evidence kinds, statuses,
//! stages, provenance, transports and triggers.
//!
//! Open vocabularies (reason codes, evidence kinds, provenance, transports,
//! sources, triggers) keep a value this version does not know as `Other`, so a
//! document written by a newer Tether round-trips unchanged. Closed
//! vocabularies (display status, stage state) fall back conservatively to
//! `unknown` when they meet a value they do not know.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest unknown vocabulary value kept verbatim; longer ones are cut.
pub const MAX_UNKNOWN_WORD_BYTES: usize = 64;

fn bounded_word(s: &str) -> String {
    crate::sanitize::truncate_utf8(s, MAX_UNKNOWN_WORD_BYTES).to_owned()
}

/// Declares a string-backed vocabulary that keeps unknown values as `Other`.
macro_rules! open_vocabulary {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version of Tether does not know, kept verbatim (bounded).
            Other(String),
        }

        impl $name {
            /// Every value this version knows, in declaration order.
            pub const KNOWN: &'static [&'static str] = &[$($text),+];

            /// The snake_case wire form.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $text, )+
                    Self::Other(s) => s,
                }
            }

            /// Parses the wire form; unknown values become `Other`.
            pub fn parse(s: &str) -> Self {
                match s {
                    $( $text => Self::$variant, )+
                    other => Self::Other(bounded_word(other)),
                }
            }

            /// Whether this version of Tether knows the value.
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Other(_))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = Cow::<'de, str>::deserialize(deserializer)?;
                Ok(Self::parse(&s))
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string",
                    "description": concat!(
                        "An open vocabulary: consumers must accept values they do not know. Known values: ",
                        $( $text, " " ),+
                    ),
                    "examples": [$($text),+]
                })
            }
        }
    };
}

/// Declares a closed vocabulary whose unknown values fall back to one variant.
macro_rules! closed_vocabulary {
    (
        $(#[$meta:meta])*
        pub enum $name:ident fallback $fallback:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$(Self::$variant),+];

            /// The snake_case wire form.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $text, )+
                }
            }

            /// Parses the wire form; unknown values fall back conservatively.
            pub fn parse(s: &str) -> Self {
                match s {
                    $( $text => Self::$variant, )+
                    _ => Self::$fallback,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = Cow::<'de, str>::deserialize(deserializer)?;
                Ok(Self::parse(&s))
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string",
                    "enum": [$($text),+]
                })
            }
        }
    };
}

/// The reason of a refused call no record gives a reason for: a refusal
/// is still a refusal, said as the harness's permission check, the gate
/// every harness has. (The facts, the reducer and the words all use it.)
pub const UNSAID_REFUSAL: ReasonCode = ReasonCode::PermissionDenied;

open_vocabulary! {
    /// A stable snake_case reason: why a server was filtered, unavailable or failed.
    pub enum ReasonCode {
        /// The agent does not advertise streamable HTTP MCP servers.
        HttpUnsupported => "http_unsupported",
        /// The agent does not support legacy SSE MCP servers.
        SseUnsupported => "sse_unsupported",
        /// The agent cannot take this transport at all.
        TransportUnsupported => "transport_unsupported",
        /// An earlier server with the same name won.
        DuplicateName => "duplicate_name",
        /// A host policy refused the server.
        PolicyDenied => "policy_denied",
        /// No plugin is registered for this agent kind.
        NoObserver => "no_observer",
        /// The plugin returned no decision for this server.
        ObserverOmitted => "observer_omitted",
        /// A passthrough agent kind has no materialization strategy.
        NoStrategy => "no_strategy",
        /// The server's command does not resolve on PATH.
        CommandNotFound => "command_not_found",
        /// The agent refused `session/new`.
        SessionNewFailed => "session_new_failed",
        /// The agent refused `session/load`.
        SessionLoadFailed => "session_load_failed",
        /// Another session request (reset, prompt) failed.
        SessionRequestFailed => "session_request_failed",
        /// The agent or server process could not start.
        ProcessStartFailed => "process_start_failed",
        /// Writing the agent's MCP configuration failed.
        MaterializationFailed => "materialization_failed",
        /// A bounded wait ran out.
        Timeout => "timeout",
        /// Nothing listened at the target.
        ConnectionRefused => "connection_refused",
        /// The server's connection closed before its start-up finished (a
        /// stdio server whose process exited, most often).
        ConnectionClosed => "connection_closed",
        /// The harness dropped a tool before the model saw it, for a reason
        /// its record gives in words Tether does not keep.
        DroppedByHarness => "dropped_by_harness",
        /// The server wants credentials.
        AuthRequired => "auth_required",
        /// The peer broke the protocol.
        ProtocolError => "protocol_error",
        /// The server returned an error response.
        ServerError => "server_error",
        /// A stdio server started, then exited before it answered (its
        /// exit status in the summary): it ran, so it is not a start failure.
        ServerExited => "server_exited",
        /// A stdio server's working directory (`cwd` in its entry) does not
        /// exist, so it cannot start there, whatever its command.
        CwdNotFound => "cwd_not_found",
        /// The server refused the credentials sent (HTTP 401 or 403 with a
        /// token, key or password in the request).
        AuthRejected => "auth_rejected",
        /// The server wants an OAuth login: HTTP 401 with a challenge that
        /// names its protected-resource metadata, and no credentials sent.
        OauthRequired => "oauth_required",
        /// The harness refuses to start on this configuration file (Gemini
        /// CLI on a `settings.json` with a trailing comma), so nothing it
        /// configures is used; the summary quotes the harness's words.
        FileRefused => "file_refused",
        /// A key sits in a file the harness does not read it from
        /// (`mcpServers` in Claude Code's `settings.json`): the harness
        /// ignores it silently; the summary says where it reads it.
        MisplacedKey => "misplaced_key",
        /// A list in the configuration names something nothing is called
        /// (`enabledMcpjsonServers: ["everythin"]`): a typo, most often;
        /// the summary gives the closest name.
        UnmatchedName => "unmatched_name",
        /// The agent itself reported the server as failed.
        AgentReportedFailed => "agent_reported_failed",
        /// The configuration disables the server.
        DisabledInConfig => "disabled_in_config",
        /// The server (or hook) waits for the user's approval or trust.
        NotApproved => "not_approved",
        /// An allow or deny list excludes the server.
        Excluded => "excluded",
        /// The folder is not trusted, so project servers are off.
        UntrustedFolder => "untrusted_folder",
        /// The configuration entry is malformed.
        InvalidConfig => "invalid_config",
        /// Something ended the work before it finished.
        Cancelled => "cancelled",
        /// An administrator's managed policy (not the host's) refuses the server.
        DeniedByPolicy => "denied_by_policy",
        /// A configuration file is larger than the 1 MiB Tether reads.
        FileTooLarge => "file_too_large",
        /// A configuration file exists but cannot be read.
        Unreadable => "unreadable",
        /// More entries than Tether keeps (rows of one harness, session
        /// files of one source): the rest were not read, and said so.
        TooManyEntries => "too_many_entries",
        /// A configuration scanner panicked: its harness's rows are missing
        /// (`tether inventory`'s errors).
        ScannerPanicked => "scanner_panicked",
        /// A symlink points outside the root being scanned; it is not followed.
        SymlinkOutsideRoot => "symlink_outside_root",
        /// Symlinks loop.
        SymlinkLoop => "symlink_loop",
        /// A request to the host's endpoint carried no valid credential.
        CredentialMissing => "credential_missing",
        /// A request to the host's endpoint carried a superseded attempt's credential.
        CredentialStale => "credential_stale",
        /// The agent cannot send the HTTP headers this server needs over this
        /// transport (the host's endpoint credential, for one).
        HeadersUnsupported => "headers_unsupported",
        /// The server's host name does not resolve.
        HostNotFound => "host_not_found",
        /// HTTP 404: nothing is at that path.
        EndpointNotFound => "endpoint_not_found",
        /// HTTP 405: something is at that path, but it does not take MCP requests.
        MethodNotAllowed => "method_not_allowed",
        /// The server redirects elsewhere (not followed: credentials stay put).
        Redirected => "redirected",
        /// The server refused both `server/discover` and `initialize`.
        NoCommonProtocol => "no_common_protocol",
        /// The TLS handshake failed (a bad certificate, or no TLS at that port).
        TlsFailed => "tls_failed",
        /// A plugin is enabled (or referenced) but not installed.
        NotInstalled => "not_installed",
        /// A command, or a server's url, headers, env or args, uses a
        /// variable that is unset here or that nothing expands where it runs
        /// (a plugin-root variable outside its plugin).
        UnresolvedVariable => "unresolved_variable",
        /// A command is a relative path: it resolves against the workspace's
        /// working directory, so it runs (or not) depending on where the
        /// harness starts.
        RelativeCommand => "relative_command",
        /// The harness does not read this configuration file, because
        /// another takes its place (a workspace's `.github/mcp.json`, read
        /// only when it has no `.mcp.json`).
        FileShadowed => "file_shadowed",
        /// An endpoint test was asked to call a tool the server did not
        /// list, so it did not call it.
        ToolNotListed => "tool_not_listed",
        /// The harness holds the tool behind its tool search: the model is
        /// not sent its definition until it searches for it, so it is
        /// discoverable, not visible.
        DeferredUntilSearched => "deferred_until_searched",
        /// Two tools got the same name on the way to the model (the
        /// harness's composition or truncation made them one), so the
        /// harness kept one of them, or the provider refused the request.
        NameCollision => "name_collision",
        /// The harness (or its provider) offers at most so many tools, and
        /// this one fell past the limit.
        ToolLimitExceeded => "tool_limit_exceeded",
        /// The tool's input schema uses a construct the harness or its
        /// provider does not accept, so the tool was dropped (or the
        /// request refused).
        SchemaUnsupported => "schema_unsupported",
        /// The tool's name as the model sees it is longer than the model
        /// provider takes, so a request that carries it is refused.
        NameTooLong => "name_too_long",
        /// A hook ran and exited with a non-zero status (not "command not
        /// found", which is `command_not_found`).
        HookFailed => "hook_failed",
        /// A hook ran past its time limit.
        HookTimedOut => "hook_timed_out",
        /// The model invoked a skill and the harness answered with an error.
        SkillFailed => "skill_failed",
        /// A plugin was found but failed to load (a corrupt manifest, an
        /// export that is not a plugin).
        PluginLoadFailed => "plugin_load_failed",
        /// A pinned tool's title differs from its pin (`tether pins`).
        TitleChanged => "title_changed",
        /// A pinned tool's description differs from its pin.
        DescriptionChanged => "description_changed",
        /// A pinned tool's input schema differs from its pin.
        InputSchemaChanged => "input_schema_changed",
        /// A pinned tool's output schema differs from its pin.
        OutputSchemaChanged => "output_schema_changed",
        /// A pinned tool's annotations differ from its pin.
        AnnotationsChanged => "annotations_changed",
        /// A server listed a tool its pins do not have.
        ToolAdded => "tool_added",
        /// A server no longer lists a tool its pins have.
        ToolRemoved => "tool_removed",
        /// The harness's permission rules or mode refused a call the model
        /// made: it never reached the server.
        PermissionDenied => "permission_denied",
        /// A call needed a person's approval and no one could give it (a
        /// headless run, most often): it never reached the server.
        ApprovalRequired => "approval_required",
        /// A hook that runs before tool calls (PreToolUse and the like)
        /// denied the call: it never reached the server.
        BlockedByHook => "blocked_by_hook",
        /// The server answered the call with a tool error (`isError`): the
        /// call reached it.
        ToolError => "tool_error",
        /// The harness answered the model's call with its own "no such
        /// tool": the call reached no server, and the tool was not
        /// available to the harness then (neither listed nor offered).
        ToolNotAvailable => "tool_not_available",
    }
}

open_vocabulary! {
    /// What a piece of evidence says happened.
    pub enum EvidenceKind {
        /// The host configured the server for this attempt.
        Configured => "configured",
        /// The plugin filtered the server, with a reason.
        Filtered => "filtered",
        /// The server could not be offered, with a reason.
        Unavailable => "unavailable",
        /// The server was handed to the agent (ACP entry or materialized files).
        Delivered => "delivered",
        /// The agent accepted the session (or the passthrough process started).
        SessionAccepted => "session_accepted",
        /// An MCP `initialize` (or `server/discover`) was served.
        InitializeObserved => "initialize_observed",
        /// An MCP `tools/list` was served.
        ToolsListObserved => "tools_list_observed",
        /// An MCP `tools/call` was served (name only).
        ToolCallObserved => "tool_call_observed",
        /// An explicit error; report-level unless it names a server.
        ExplicitError => "explicit_error",
        /// An observed MCP connection closed.
        ConnectionClosed => "connection_closed",
        /// A newer attempt superseded this one.
        AttemptSuperseded => "attempt_superseded",
        /// The agent's own status report about a server.
        AgentReported => "agent_reported",
        /// An endpoint test ran; kept apart from attachment evidence.
        EndpointTested => "endpoint_tested",
        /// A request to the host's endpoint without the attempt's credential
        /// was refused before any handler ran; it never counts as contact.
        UnauthenticatedContact => "unauthenticated_contact",
        /// The agent's process exited on its own (attempt-level; the summary
        /// says how and when). Servers delivered to it that saw no contact
        /// were delivered to a process that is gone.
        AgentExited => "agent_exited",
        /// The harness offered this server's tool (`tool`) to the model:
        /// it was in the tool list a model turn was sent (model-visible).
        ToolVisible => "tool_visible",
        /// The harness holds this server's tool (`tool`) only behind its
        /// tool search: discoverable, its definition not sent to the model
        /// until a search loads it (then `tool_visible`).
        ToolDeferred => "tool_deferred",
        /// The harness kept this server's tool (`tool`) from the model, for
        /// the reason given (`name_collision`, `tool_limit_exceeded`,
        /// `schema_unsupported`, `name_too_long`; a configuration's own filter is
        /// `excluded`): observed where the
        /// harness says so, predicted where a documented rule does
        /// (provenance `documented_rule`).
        ToolWithheld => "tool_withheld",
        /// The harness offered a skill (`capability`) to the model: it was
        /// in the skill listing a model turn was sent. Its name only, never
        /// its description.
        SkillListed => "skill_listed",
        /// The model invoked a skill (`capability`), with its outcome.
        SkillInvoked => "skill_invoked",
        /// A hook (`capability`) ran, with its outcome and exit status.
        HookFired => "hook_fired",
        /// A plugin (`capability`) loaded.
        PluginLoaded => "plugin_loaded",
        /// A plugin (`capability`) failed to load, with the reason.
        PluginFailed => "plugin_failed",
        /// A tool's definition differs from the one pinned for its server
        /// (`tether pins`): the reasons name the parts (hashes compared,
        /// never the text).
        DefinitionChanged => "definition_changed",
        /// A server's tools differ from the ones pinned for it: a tool
        /// appeared (`tool_added`) or disappeared (`tool_removed`).
        ToolsChanged => "tools_changed",
        /// The model called this server's tool (`tool`) and the harness
        /// refused the call before it reached the server, for the reason
        /// given (`permission_denied`, `approval_required`,
        /// `blocked_by_hook`, `denied_by_policy`). Never a use: the tool
        /// reached the model, and its call did not reach the server. `calls`
        /// counts the refusals a source saw, where it counts them.
        ToolCallRefused => "tool_call_refused",
    }
}

open_vocabulary! {
    /// How one run of a hook (or one invocation of a skill) ended.
    pub enum UseOutcome {
        /// It ran and succeeded (exit status 0).
        Succeeded => "succeeded",
        /// It ran and failed (a non-zero exit status, or an error).
        Failed => "failed",
        /// Its command does not exist (exit status 127, or "not found").
        CommandNotFound => "command_not_found",
        /// It ran and blocked what it guards (a hook's deliberate "no").
        Blocked => "blocked",
        /// It ran past its time limit and was stopped.
        TimedOut => "timed_out",
        /// It was cancelled before it finished.
        Cancelled => "cancelled",
        /// It ran, and how it ended is not recorded (several hooks ran and
        /// the harness recorded their errors without saying whose).
        Unknown => "unknown",
    }
}

open_vocabulary! {
    /// How one MCP tool call ended, as far as the evidence says: three
    /// values, never two, so a call whose outcome no record gives is never
    /// counted as a failure.
    pub enum CallOutcome {
        /// The call reached its server and succeeded.
        Succeeded => "succeeded",
        /// The call failed: the server answered with an error, or the
        /// harness said it failed.
        Failed => "failed",
        /// Nothing read says how it ended (the harness's release does not
        /// record outcomes, or its result record was never written).
        Unknown => "unknown",
        /// The harness refused it before it reached the server (permission,
        /// approval, a hook or policy): not a use, and not a failure of
        /// the server's.
        Refused => "refused",
    }
}

impl CallOutcome {
    /// The outcome a yes/no (or its absence) gives.
    pub fn of(ok: Option<bool>) -> Self {
        match ok {
            Some(true) => CallOutcome::Succeeded,
            Some(false) => CallOutcome::Failed,
            None => CallOutcome::Unknown,
        }
    }
}

open_vocabulary! {
    /// Where a stage's state came from.
    pub enum Provenance {
        /// Observed during this session (the host's endpoint, the plugin).
        SessionEvent => "session_event",
        /// The agent said so itself.
        AgentReport => "agent_report",
        /// Read from the configuration as it is now.
        CurrentConfig => "current_config",
        /// An explicit endpoint test.
        EndpointTest => "endpoint_test",
        /// Assumed, not observed.
        Assumed => "assumed",
        /// Observed by Tether's relay between the agent and a third-party
        /// server (the server's own traffic, seen on the way through).
        Relay => "relay",
        /// The harness's own telemetry (OTLP), received by `tether collect`:
        /// what the harness said about its servers in a session it ran itself.
        HarnessTelemetry => "harness_telemetry",
        /// What the harness wrote to disk about a session it ran (its
        /// transcript, its per-server logs, its own session files), read
        /// afterwards by `tether sessions`.
        HarnessRecord => "harness_record",
        /// Predicted from a documented rule of the harness or its model
        /// provider (a name limit, a tool limit, a schema subset), each rule
        /// verified against the real CLI: a prediction, never an
        /// observation. It only ever says `no`.
        DocumentedRule => "documented_rule",
        /// Read by `tether tap` off a model request the harness sent through
        /// it (the tools offered, the ones named behind a search) and the
        /// response (the tools the model called): what the model was really
        /// sent, seen on its way.
        ModelTap => "model_tap",
    }
}

open_vocabulary! {
    /// An MCP transport.
    pub enum Transport {
        /// A child process speaking JSON-RPC on stdin/stdout.
        Stdio => "stdio",
        /// Streamable HTTP.
        Http => "http",
        /// Legacy HTTP+SSE.
        Sse => "sse",
    }
}

open_vocabulary! {
    /// What an inventory row is about (the ax capability subjects).
    pub enum CapabilityKind {
        /// An MCP server.
        McpServer => "mcp_server",
        /// One tool of an MCP server.
        McpTool => "mcp_tool",
        /// A harness plugin or extension (which may bundle servers, skills and hooks).
        Plugin => "plugin",
        /// A skill (instructions the harness can load).
        Skill => "skill",
        /// A hook: a command the harness runs on an event.
        Hook => "hook",
        /// A tool the harness itself provides (not an MCP server's).
        NativeTool => "native_tool",
    }
}

open_vocabulary! {
    /// What a command's relative parts resolve against.
    pub enum ResolvesAgainst {
        /// An absolute path.
        Absolute => "absolute",
        /// A bare name, looked up on `PATH`.
        Path => "path",
        /// The workspace's working directory (where the harness starts).
        WorkspaceCwd => "workspace_cwd",
        /// The plugin's (or extension's) own directory.
        PluginRoot => "plugin_root",
    }
}

open_vocabulary! {
    /// Who put the server into the plan.
    pub enum ServerSource {
        /// The host's own server (the observed endpoint).
        Host => "host",
        /// The agent profile's configuration (third-party servers).
        Profile => "profile",
        /// The probe's sentinel.
        Sentinel => "sentinel",
        /// The harness's own configuration, named by the harness itself (its
        /// telemetry) in a session Tether did not start.
        Harness => "harness",
    }
}

open_vocabulary! {
    /// A server's state as an agent reported it, typed by the agent's
    /// plugin from the harness's own word (evidence `agent_reported`). A
    /// word its plugin could not type is kept as `Other` where it is a name
    /// ([`ReportedStatus::kept`]): the reducer shows it, and `unknown`, as a
    /// reported `unknown`, never as a quiet pending.
    pub enum ReportedStatus {
        /// Connected (ready, running).
        Connected => "connected",
        /// Failed to start or connect.
        Failed => "failed",
        /// Wants authentication (a login, a token, a client registration).
        NeedsAuth => "needs-auth",
        /// Turned off in the harness.
        Disabled => "disabled",
        /// Not settled yet: nothing shown.
        Pending => "pending",
        /// A state the harness gave that its plugin could not read, or a
        /// word that was no name (never kept): shown as a reported `unknown`.
        Unknown => "unknown",
    }
}

impl ReportedStatus {
    /// The longest word a plugin could not type that is kept.
    pub const MAX_WORD_BYTES: usize = 32;

    /// Whether the agent said the server will not be used.
    pub fn is_final_failure(&self) -> bool {
        matches!(
            self,
            ReportedStatus::Failed | ReportedStatus::NeedsAuth | ReportedStatus::Disabled
        )
    }

    /// This state as evidence keeps it: a word no plugin typed stays only
    /// where it is a name (letters, digits and `-_.:@+`, at most
    /// [`Self::MAX_WORD_BYTES`], matching no secret's pattern); any other
    /// word is [`ReportedStatus::Unknown`], so text or a secret written
    /// where a state belongs reaches no row, store or output.
    pub fn kept(self) -> Self {
        match self {
            ReportedStatus::Other(word) if is_state_word(&word) => ReportedStatus::Other(word),
            ReportedStatus::Other(_) => ReportedStatus::Unknown,
            typed => typed,
        }
    }
}

/// A word a plugin could not type that may be kept: a harness's name
/// ([`crate::sanitize::is_name_like`]), short, and unchanged by the
/// scrubber's patterns (no credential form, no long random run).
fn is_state_word(word: &str) -> bool {
    word.len() <= ReportedStatus::MAX_WORD_BYTES
        && crate::sanitize::is_name_like(word)
        && crate::sanitize::name(word) == word
}

impl From<&str> for ReportedStatus {
    /// A word a plugin passes untyped: its wire form
    /// ([`ReportedStatus::parse`], exact), else `Other` where
    /// [`ReportedStatus::kept`] keeps it, else `Unknown`.
    fn from(word: &str) -> Self {
        ReportedStatus::parse(word).kept()
    }
}

impl From<String> for ReportedStatus {
    /// As `From<&str>`.
    fn from(word: String) -> Self {
        ReportedStatus::from(word.as_str())
    }
}

open_vocabulary! {
    /// What started an attempt.
    pub enum Trigger {
        /// ACP `session/new`.
        SessionNew => "session_new",
        /// ACP `session/load`.
        SessionLoad => "session_load",
        /// A session reset.
        SessionReset => "session_reset",
        /// A passthrough process start.
        PassthroughStart => "passthrough_start",
        /// A developer probe.
        Probe => "probe",
        /// A session the harness ran on its own, seen through its telemetry
        /// (one attempt per process start).
        HarnessSession => "harness_session",
        /// A harness's own health check, not an agent session: it connected
        /// to its MCP servers to say whether each answers (`claude mcp
        /// list`), and no agent ran. Its rows are what it found; it is
        /// never counted as a session, nor "the newest session".
        HealthCheck => "health_check",
    }
}

open_vocabulary! {
    /// Where a harness's configuration put a server (`tether inventory`).
    pub enum ConfigScope {
        /// The user's own configuration, for every project.
        User => "user",
        /// A project's shared configuration (checked in).
        Project => "project",
        /// The user's private configuration for one project.
        Local => "local",
        /// Bundled with an installed plugin or extension.
        Plugin => "plugin",
        /// Deployed by an administrator (managed policy files).
        Managed => "managed",
        /// A machine-wide settings file.
        System => "system",
    }
}

closed_vocabulary! {
    /// Where a stdio server's working directory points, as a class (never the path).
    pub enum CwdClass fallback Other {
        /// Not set: the harness decides (usually the project).
        Unset => "unset",
        /// Inside the project.
        Project => "project",
        /// Inside the home directory, outside the project.
        Home => "home",
        /// A relative path.
        Relative => "relative",
        /// An absolute path elsewhere.
        Other => "other",
        /// A path that does not exist.
        Missing => "missing",
    }
}

closed_vocabulary! {
    /// How an environment variable's *name* reads; values are never kept.
    pub enum EnvClass fallback SecretLike {
        /// Looks like a credential (TOKEN, KEY, SECRET, PASSWORD, AUTH, …).
        SecretLike => "secret_like",
        /// Anything else.
        Plain => "plain",
    }
}

closed_vocabulary! {
    /// A server row's display status, strongest first.
    pub enum DisplayStatus fallback Unknown {
        /// tools/list was served.
        Active => "active",
        /// initialize was observed.
        Connected => "connected",
        /// Delivered; connection unverified.
        Delivered => "delivered",
        /// An explicit error specific to this server.
        Failed => "failed",
        /// The plugin filtered it, with a reason.
        Filtered => "filtered",
        /// It could not be offered, with a reason.
        Unavailable => "unavailable",
        /// Nothing is known.
        Unknown => "unknown",
    }
}

impl DisplayStatus {
    /// Precedence: a smaller number is stronger.
    pub fn rank(self) -> u8 {
        self as u8
    }
}

closed_vocabulary! {
    /// Whether a stage was reached.
    pub enum StageState fallback Unknown {
        /// Something real showed it.
        Yes => "yes",
        /// Something real showed it was not reached.
        No => "no",
        /// Nothing has shown either way.
        Unknown => "unknown",
        /// The stage does not apply (the server was never offered).
        NotApplicable => "n/a",
    }
}

impl StageState {
    /// Merge strength: `yes` beats `no` beats `n/a` beats `unknown`.
    pub fn strength(self) -> u8 {
        match self {
            Self::Yes => 3,
            Self::No => 2,
            Self::NotApplicable => 1,
            Self::Unknown => 0,
        }
    }
}

closed_vocabulary! {
    /// The later stage whose `yes` implied a stage below it on the ladder
    /// (a tool call proves the harness had the server's tool list, so the
    /// server was listed, connected and delivered). A stage that was shown
    /// directly has none.
    pub enum ImpliedBy fallback LaterStage {
        /// The configuration enables it.
        Enabled => "enabled",
        /// It was handed to the agent.
        Delivered => "delivered",
        /// The server accepted the client.
        Authenticated => "authenticated",
        /// initialize completed.
        Initialized => "initialized",
        /// Its tools were listed.
        ToolsListed => "tools_listed",
        /// The harness kept its tool after its own checks and conversions.
        SchemaAccepted => "schema_accepted",
        /// Its tool was offered in this session's model requests.
        CurrentThread => "current_thread",
        /// The model was shown its tools.
        ModelVisible => "model_visible",
        /// A call of it succeeded.
        Callable => "callable",
        /// It was called (a tool row's own stage).
        Called => "called",
        /// A stage this build does not know.
        LaterStage => "later_stage",
    }
}

closed_vocabulary! {
    /// The decision a plugin made for one configured server.
    pub enum DecisionKind fallback Unavailable {
        /// Offered to the agent.
        Deliver => "deliver",
        /// Deliberately left out, with a reason.
        Filter => "filter",
        /// Could not be offered, with a reason.
        Unavailable => "unavailable",
    }
}

/// The stages of the ax capability ladder, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// The host configured it.
    Configured,
    /// The configuration enables it.
    Enabled,
    /// It was handed to the agent.
    Delivered,
    /// The server accepted the client's credentials (or needed none).
    Authenticated,
    /// initialize completed.
    Initialized,
    /// tools/list was served.
    ToolsListed,
    /// The harness kept its tools after its own checks and conversions
    /// (named them to the model, listed or deferred).
    SchemaAccepted,
    /// A tool call succeeded.
    Callable,
    /// Its tools were offered in this session's model requests: sent whole,
    /// or named behind the harness's tool search.
    CurrentThread,
    /// The model was sent a tool's definition.
    ModelVisible,
}

impl Stage {
    /// Every stage, in ladder order.
    pub const ALL: [Stage; 10] = [
        Stage::Configured,
        Stage::Enabled,
        Stage::Delivered,
        Stage::Authenticated,
        Stage::Initialized,
        Stage::ToolsListed,
        Stage::SchemaAccepted,
        Stage::Callable,
        Stage::CurrentThread,
        Stage::ModelVisible,
    ];

    /// The ladder as evidence climbs it, lowest first: each stage's `yes`
    /// implies every stage before it ([`Stages::close`](crate::model::Stages::close)).
    /// A successful call sits above the model seeing the tool, which sits
    /// above its being offered in the thread, above the harness keeping it,
    /// above the tool list.
    pub const PATH: [Stage; 10] = [
        Stage::Configured,
        Stage::Enabled,
        Stage::Delivered,
        Stage::Authenticated,
        Stage::Initialized,
        Stage::ToolsListed,
        Stage::SchemaAccepted,
        Stage::CurrentThread,
        Stage::ModelVisible,
        Stage::Callable,
    ];

    /// The snake_case wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Configured => "configured",
            Stage::Enabled => "enabled",
            Stage::Delivered => "delivered",
            Stage::Authenticated => "authenticated",
            Stage::Initialized => "initialized",
            Stage::ToolsListed => "tools_listed",
            Stage::SchemaAccepted => "schema_accepted",
            Stage::Callable => "callable",
            Stage::CurrentThread => "current_thread",
            Stage::ModelVisible => "model_visible",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_reason_code_round_trips_verbatim() {
        let code: ReasonCode = serde_json::from_str("\"quantum_flux\"").unwrap();
        assert_eq!(code, ReasonCode::Other("quantum_flux".into()));
        assert!(!code.is_known());
        assert_eq!(serde_json::to_string(&code).unwrap(), "\"quantum_flux\"");
    }

    #[test]
    fn unknown_status_falls_back_to_unknown() {
        let status: DisplayStatus = serde_json::from_str("\"blazing\"").unwrap();
        assert_eq!(status, DisplayStatus::Unknown);
        let state: StageState = serde_json::from_str("\"maybe\"").unwrap();
        assert_eq!(state, StageState::Unknown);
    }

    #[test]
    fn every_known_word_parses_back_to_itself() {
        for word in ReasonCode::KNOWN {
            let code = ReasonCode::parse(word);
            assert!(code.is_known(), "{word}");
            assert_eq!(code.as_str(), *word);
        }
        for word in EvidenceKind::KNOWN {
            assert!(EvidenceKind::parse(word).is_known(), "{word}");
        }
        for status in DisplayStatus::ALL {
            assert_eq!(DisplayStatus::parse(status.as_str()), *status);
        }
    }

    #[test]
    fn huge_unknown_word_is_bounded() {
        let long = "x".repeat(10_000);
        assert_eq!(
            ReasonCode::parse(&long).as_str().len(),
            MAX_UNKNOWN_WORD_BYTES
        );
    }

    #[test]
    fn status_ranks_follow_the_brief() {
        let order: Vec<_> = DisplayStatus::ALL.iter().map(|s| s.rank()).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        assert!(DisplayStatus::Active.rank() < DisplayStatus::Unknown.rank());
    }
}
