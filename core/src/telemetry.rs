//! The telemetry role of a harness's plugin ([`TelemetryReader`]), pure
//! data. The setting half: what a harness needs to send its own
//! OpenTelemetry to a receiver (`TelemetryTarget`, `TelemetrySetup`:
//! variables, a config snippet, whether it was seen to send the header,
//! notes), made by `TelemetryReader::telemetry_setup` and shown by `tether
//! collect --print-env`; and `CollectDocument`, which `tether collect
//! --json` prints. The reading half: `TelemetryRecord` (one log record,
//! span, span event or metric point, flattened and bounded), read by
//! `TelemetryReader::read_telemetry(record, configured)` into a
//! `TelemetryAnswer` (`NotMine`, `Ignored`, `Read` with the harness's
//! session id, the servers it named and `harness_telemetry` evidence, or
//! `Unparsed` with why and the session its envelope names), and
//! `is_name_like`, the test every name from telemetry must pass.
//! `UnparsedTelemetry` is what a store counts per attempt of the answers
//! that could not be parsed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The telemetry role of a harness's plugin (`tether collect`): how the
/// harness's own OpenTelemetry reaches a receiver, and how one record of it
/// reads. Pure: no I/O (it crosses the dynamic plugin boundary as data).
pub trait TelemetryReader: Send + Sync {
    /// What the harness needs to send its own OpenTelemetry to `target`
    /// (`tether collect --print-env`): variables, a snippet and notes,
    /// never a write. `None`: it cannot be pointed there.
    fn telemetry_setup(&self, target: &TelemetryTarget) -> Option<TelemetrySetup>;

    /// Reads one record of the harness's own telemetry: which session it
    /// belongs to, which servers it names, and what it proves, as
    /// `harness_telemetry` evidence. `configured` holds the server names
    /// the harness's configuration gives it today (a harness that hashes
    /// names in its telemetry is matched against them).
    fn read_telemetry(&self, record: &TelemetryRecord, configured: &[String]) -> TelemetryAnswer;

    /// What the telemetry shows of skills, hooks and plugins at run time
    /// (see [`RecordReader::records_show`](crate::records::RecordReader::records_show)).
    /// The default: nothing.
    fn telemetry_shows(&self) -> crate::capability::RunTimeShown {
        crate::capability::RunTimeShown::none()
    }
}

/// Where the telemetry goes.
#[derive(Clone, PartialEq, Eq)]
pub struct TelemetryTarget {
    /// The OTLP/HTTP base URL (`http://127.0.0.1:PORT`); the signal paths
    /// (`/v1/logs`, …) follow it.
    pub endpoint: String,
    /// The `Authorization` header value the receiver admits (`Bearer …`): a
    /// secret, hidden from `Debug`.
    pub authorization: String,
}

impl std::fmt::Debug for TelemetryTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryTarget")
            .field("endpoint", &self.endpoint)
            .field("authorization", &"[redacted]")
            .finish()
    }
}

/// Whether a harness was seen to send the receiver's `Authorization` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HeadersSent {
    /// Seen on every request, with the pinned version.
    Verified,
    /// Not yet seen: the receiver refuses what comes without it.
    Unverified,
}

/// One variable to set in the harness's environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SetupVar {
    /// Its name.
    pub name: String,
    /// Its value (may hold the receiver's token).
    pub value: String,
}

/// A block to add to one of the harness's own configuration files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct SetupSnippet {
    /// Which file (`~/.codex/config.toml`, say), as the harness names it.
    pub file: String,
    /// The text to add (may hold the receiver's token).
    pub text: String,
}

impl SetupSnippet {
    /// `text` to add to `file`.
    pub fn new(file: impl Into<String>, text: impl Into<String>) -> Self {
        SetupSnippet {
            file: file.into(),
            text: text.into(),
        }
    }
}

/// Everything one harness needs to send its telemetry to a receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetrySetup {
    /// The agent kind (`claude`, `codex`, …).
    pub agent_kind: String,
    /// Variables to set.
    pub env: Vec<SetupVar>,
    /// A configuration block, for a harness that reads its exporter there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<SetupSnippet>,
    /// All of the setup as a block for a file of the harness's own (Claude
    /// Code's settings `env`, Gemini's and Qwen's `.env`, Codex's
    /// `config.toml`), so that nothing depends on the shell that starts it
    /// (`tether collect --print-env HARNESS --format settings`); absent when
    /// the harness has no such file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<SetupSnippet>,
    /// Whether it was seen to send the receiver's header.
    pub headers_sent: HeadersSent,
    /// What the settings turn on besides metadata, what Tether drops of it,
    /// and anything else a user should know (plain sentences).
    pub notes: Vec<String>,
}

impl TelemetrySetup {
    /// A setup for `agent_kind` with no variables yet.
    pub fn new(agent_kind: impl Into<String>, headers_sent: HeadersSent) -> Self {
        TelemetrySetup {
            agent_kind: agent_kind.into(),
            env: Vec::new(),
            snippet: None,
            settings: None,
            headers_sent,
            notes: Vec::new(),
        }
    }

    /// [`settings`](Self::settings): the variables as the `env` object of a
    /// JSON settings file (`{"env": {"NAME": "value"}}`, Claude Code's).
    pub fn settings_env_json(mut self, file: impl Into<String>) -> Self {
        let env: serde_json::Map<String, serde_json::Value> = self
            .env
            .iter()
            .map(|v| (v.name.clone(), serde_json::Value::String(v.value.clone())))
            .collect();
        let text =
            serde_json::to_string_pretty(&serde_json::json!({ "env": env })).unwrap_or_default();
        self.settings = Some(SetupSnippet {
            file: file.into(),
            text: format!("{text}\n"),
        });
        self
    }

    /// [`settings`](Self::settings): the variables as a dotenv file
    /// (`NAME="value"`, each value JSON-quoted, which dotenv reads back).
    pub fn settings_dotenv(mut self, file: impl Into<String>) -> Self {
        let text: String = self
            .env
            .iter()
            .map(|v| {
                let quoted = serde_json::to_string(&v.value).unwrap_or_default();
                format!("{}={quoted}\n", v.name)
            })
            .collect();
        self.settings = Some(SetupSnippet {
            file: file.into(),
            text,
        });
        self
    }

    /// Adds a variable.
    pub fn var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push(SetupVar {
            name: name.into(),
            value: value.into(),
        });
        self
    }

    /// Adds a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The standard OTLP exporter headers variable
    /// (`OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer …`).
    pub fn otlp_headers(self, target: &TelemetryTarget) -> Self {
        self.var(
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("Authorization={}", target.authorization),
        )
    }
}

/// The version of [`CollectDocument`].
pub const COLLECT_SCHEMA_VERSION: u32 = 2;

/// The document `tether collect --json` prints when it starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollectDocument {
    /// [`COLLECT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The OTLP/HTTP base URL to send to.
    pub endpoint: String,
    /// The receiver's token (`Authorization: Bearer <token>`): only with
    /// `--print-env`, whose setup holds it anyway (version 2; version 1
    /// always printed it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Where the token is kept (mode 0600), the same at every start; absent
    /// when there is no state directory (a new token at every start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<String>,
    /// What the harness named by `--print-env` needs, if one was named.
    pub setup: Option<TelemetrySetup>,
}

// === Records: what a harness's telemetry said, for its plugin to read ===

/// Which kind of OTLP item a [`TelemetryRecord`] was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TelemetrySignal {
    /// A log record (an OTel event): `name` is its `event.name` (or its event
    /// name field, or a short string body).
    Log,
    /// A span: `name` is the span's name.
    Span,
    /// An event inside a span: `name` is the event's; `span_name` the span's.
    SpanEvent,
    /// One data point of a metric: `name` is the metric's; `value` the point's.
    Metric,
}

/// One attribute value, flattened: arrays become lists of their scalar
/// values (as text), maps and bytes are left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum TelemetryValue {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A string.
    Text(String),
    /// An array of scalars, each as text.
    List(Vec<String>),
}

impl TelemetryValue {
    /// The value as text: a string as itself, a number or boolean written out.
    pub fn text(&self) -> Option<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow;
        match self {
            TelemetryValue::Text(s) => Some(Cow::Borrowed(s)),
            TelemetryValue::Int(n) => Some(Cow::Owned(n.to_string())),
            TelemetryValue::Float(n) => Some(Cow::Owned(n.to_string())),
            TelemetryValue::Bool(b) => Some(Cow::Owned(b.to_string())),
            TelemetryValue::List(_) => None,
        }
    }

    /// The value as a boolean: a boolean, or the text `true`/`false`.
    pub fn boolean(&self) -> Option<bool> {
        match self {
            TelemetryValue::Bool(b) => Some(*b),
            TelemetryValue::Text(s) => match s.as_str() {
                "true" | "True" | "TRUE" => Some(true),
                "false" | "False" | "FALSE" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value as a count: a non-negative integer (or integral float, or
    /// digits as text), capped at `u32::MAX`.
    pub fn count(&self) -> Option<u32> {
        let n = match self {
            TelemetryValue::Int(n) => *n,
            TelemetryValue::Float(f) if f.fract() == 0.0 && *f >= 0.0 => *f as i64,
            TelemetryValue::Text(s) => s.trim().parse().ok()?,
            _ => return None,
        };
        (n >= 0).then(|| u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// The value as a list of names: a list, or text holding a JSON array of
    /// strings, or comma-separated text.
    pub fn names(&self) -> Vec<String> {
        match self {
            TelemetryValue::List(items) => items.clone(),
            TelemetryValue::Text(s) => {
                let s = s.trim();
                if s.is_empty() {
                    Vec::new()
                } else if s.starts_with('[') {
                    serde_json::from_str::<Vec<String>>(s).unwrap_or_default()
                } else {
                    s.split(',')
                        .map(|n| n.trim().to_owned())
                        .filter(|n| !n.is_empty())
                        .collect()
                }
            }
            _ => Vec::new(),
        }
    }
}

/// A span's status, for a span record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetryStatus {
    /// The span ended in error.
    pub error: bool,
    /// The status message (the harness's own words; may name a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The most attributes a record carries; more are counted in
/// [`TelemetryRecord::dropped_attributes`].
pub const MAX_RECORD_ATTRIBUTES: usize = 128;
/// The longest attribute value (bytes) a record carries; a longer one is
/// left out and counted (values that long are payloads, never metadata).
pub const MAX_RECORD_VALUE_BYTES: usize = 16 * 1024;

/// One decoded OTLP item (a log record, span, span event or metric data
/// point), flattened so a plugin's mapping can read it without the
/// OpenTelemetry types: its name, its attributes, its resource's.
///
/// A record lives only while its plugin reads it: it may hold payloads a
/// harness put in its telemetry (prompts, tool input), and none of it is
/// stored. What the plugin makes of it ([`TelemetryReading`]) is evidence,
/// sanitized by the hub like any other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetryRecord {
    /// What kind of item it was.
    pub signal: TelemetrySignal,
    /// Its name (see [`TelemetrySignal`]).
    pub name: String,
    /// The enclosing span's name, for a span event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_name: Option<String>,
    /// When it happened (milliseconds since the epoch; 0 when not given).
    pub at: crate::model::Timestamp,
    /// The item's own attributes (for a span event, the span's attributes
    /// follow the event's, where the event has none of that key).
    #[serde(default)]
    pub attributes: std::collections::BTreeMap<String, TelemetryValue>,
    /// Its resource's attributes (`service.name`, `session.id`, …).
    #[serde(default)]
    pub resource: std::collections::BTreeMap<String, TelemetryValue>,
    /// A span's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TelemetryStatus>,
    /// A metric data point's value (a sum's or gauge's; a histogram's count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Attributes left out: over [`MAX_RECORD_ATTRIBUTES`], over
    /// [`MAX_RECORD_VALUE_BYTES`], or of a kind not flattened.
    #[serde(default)]
    pub dropped_attributes: u32,
}

impl TelemetryRecord {
    /// An empty record of `signal` named `name`, at `at`.
    pub fn new(
        signal: TelemetrySignal,
        name: impl Into<String>,
        at: crate::model::Timestamp,
    ) -> Self {
        TelemetryRecord {
            signal,
            name: name.into(),
            span_name: None,
            at,
            attributes: Default::default(),
            resource: Default::default(),
            status: None,
            value: None,
            dropped_attributes: 0,
        }
    }

    /// The resource's `service.name`, or "".
    pub fn service(&self) -> &str {
        match self.resource.get("service.name") {
            Some(TelemetryValue::Text(s)) => s,
            _ => "",
        }
    }

    /// An attribute of the item (then of its resource) as text.
    pub fn text(&self, key: &str) -> Option<std::borrow::Cow<'_, str>> {
        self.attr(key).and_then(TelemetryValue::text)
    }

    /// An attribute of the item, else of its resource.
    pub fn attr(&self, key: &str) -> Option<&TelemetryValue> {
        self.attributes.get(key).or_else(|| self.resource.get(key))
    }

    /// Adds an item attribute, within the record's bounds (over them it is
    /// counted in `dropped_attributes`).
    pub fn with_attr(mut self, key: impl Into<String>, value: TelemetryValue) -> Self {
        let key = key.into();
        if fits(&self.attributes, &key, &value) {
            self.attributes.insert(key, value);
        } else {
            self.dropped_attributes = self.dropped_attributes.saturating_add(1);
        }
        self
    }

    /// Adds a resource attribute, within the record's bounds.
    pub fn with_resource(mut self, key: impl Into<String>, value: TelemetryValue) -> Self {
        let key = key.into();
        if fits(&self.resource, &key, &value) {
            self.resource.insert(key, value);
        } else {
            self.dropped_attributes = self.dropped_attributes.saturating_add(1);
        }
        self
    }
}

/// Whether one more attribute stays within a record's bounds.
pub fn fits(
    map: &std::collections::BTreeMap<String, TelemetryValue>,
    key: &str,
    value: &TelemetryValue,
) -> bool {
    let size = match value {
        TelemetryValue::Text(s) => s.len(),
        TelemetryValue::List(items) => items.iter().map(String::len).sum(),
        _ => 0,
    };
    size <= MAX_RECORD_VALUE_BYTES
        && key.len() <= 256
        && (map.len() < MAX_RECORD_ATTRIBUTES || map.contains_key(key))
}

/// What a plugin made of one record of its harness.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct TelemetryReading {
    /// The harness's own session (or conversation) id, where the record
    /// carries one: the Tether session it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Servers the harness named (each gets a row), with the transport
    /// where it said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<NamedServer>,
    /// What it proves, as evidence with provenance `harness_telemetry`:
    /// names, codes, counts and outcomes only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<crate::model::Evidence>,
}

/// A server a harness's telemetry named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct NamedServer {
    /// Its name, as the harness's configuration spells it.
    pub name: String,
    /// Its transport, where the harness said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<crate::vocab::Transport>,
}

impl NamedServer {
    /// A server named `name`, over `transport` where the harness said.
    pub fn new(name: impl Into<String>, transport: Option<crate::vocab::Transport>) -> Self {
        NamedServer {
            name: name.into(),
            transport,
        }
    }
}

/// How a plugin answered one record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "read", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TelemetryAnswer {
    /// Not this plugin's harness (its service name is another's).
    NotMine,
    /// This plugin's harness, but a kind of record (or a version) it does
    /// not read: counted and ignored.
    Ignored,
    /// Read.
    Read(TelemetryReading),
    /// A kind of record this plugin reads, whose attribute it reads could
    /// not be parsed (cut short by an attribute length limit, not JSON, a
    /// field of the wrong type): counted apart from a kind it does not read,
    /// by why, never the attribute's content (issue 68).
    Unparsed {
        /// The record's kind (a constant of the reader's, never the
        /// record's own text).
        kind: String,
        /// The attribute that could not be parsed (a constant of the
        /// reader's).
        attribute: String,
        /// Why.
        why: crate::model::Unparsed,
        /// The harness's own session id, where the record's envelope (its
        /// resource or its own attributes) names one though the attribute
        /// could not be parsed: the session the answer is counted on.
        /// Absent, the collector counts it on the session last seen from
        /// the same process, or as unsessioned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
}

impl TelemetryAnswer {
    /// `attribute` of a record of `kind` could not be parsed, for `why`.
    pub fn unparsed(
        kind: impl Into<String>,
        attribute: impl Into<String>,
        why: crate::model::Unparsed,
    ) -> Self {
        TelemetryAnswer::Unparsed {
            kind: kind.into(),
            attribute: attribute.into(),
            why,
            session: None,
        }
    }

    /// An [`Unparsed`](TelemetryAnswer::Unparsed) answer naming the
    /// harness's `session` (what the record's envelope says); any other
    /// answer unchanged.
    pub fn in_session(mut self, session: Option<String>) -> Self {
        if let TelemetryAnswer::Unparsed { session: s, .. } = &mut self {
            *s = session;
        }
        self
    }
}

/// Telemetry answers of one attempt that could not be parsed
/// ([`TelemetryAnswer::Unparsed`]), of one record kind, attribute and why:
/// counted where the attempt's history is stored (`tether sessions show`
/// says them beside the records' accounting), never their content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct UnparsedTelemetry {
    /// The Tether session (`KIND:ID`).
    pub session_id: String,
    /// The attempt they were counted on.
    pub attempt_id: String,
    /// The records' kind (a constant of the harness's reader).
    pub kind: String,
    /// The attribute that could not be parsed (a constant of the reader's).
    pub attribute: String,
    /// Why.
    pub why: crate::model::Unparsed,
    /// How many.
    pub count: u64,
    /// When the last of them was made.
    pub last_at: crate::model::Timestamp,
}

impl UnparsedTelemetry {
    /// `count` answers of `attempt_id` of session `session_id`: `attribute`
    /// of records of `kind` could not be parsed, for `why`, the last at
    /// `last_at`.
    pub fn new(
        session_id: impl Into<String>,
        attempt_id: impl Into<String>,
        kind: impl Into<String>,
        attribute: impl Into<String>,
        why: crate::model::Unparsed,
        count: u64,
        last_at: crate::model::Timestamp,
    ) -> Self {
        UnparsedTelemetry {
            session_id: session_id.into(),
            attempt_id: attempt_id.into(),
            kind: kind.into(),
            attribute: attribute.into(),
            why,
            count,
            last_at,
        }
    }
}

// The name rule lives in the sanitizer (a leaf module), so the capability
// events it checks need not import telemetry back; its public path stays here.
pub use crate::sanitize::{MAX_TELEMETRY_NAME, is_name_like};

/// Whether evidence of `kind` is something a harness's own telemetry can
/// prove: a report on a server, a tool listing, a tool call (or its
/// refusal), a server taken
/// into the session, an explicit error, or a skill, hook or plugin at run
/// time. Anything else from a mapping is
/// refused.
pub fn provable(kind: &crate::vocab::EvidenceKind) -> bool {
    use crate::vocab::EvidenceKind as K;
    matches!(
        kind,
        K::AgentReported
            | K::ToolsListObserved
            | K::ToolCallObserved
            | K::ToolCallRefused
            | K::Delivered
            | K::ExplicitError
            | K::SkillListed
            | K::SkillInvoked
            | K::HookFired
            | K::PluginLoaded
            | K::PluginFailed
    )
}

impl TelemetryReading {
    /// Whether every server and tool name it gives is a configured name or
    /// looks like a name ([`is_name_like`]), and its session id (if any)
    /// looks like an id: text where a name belongs makes a reading refused.
    pub fn names_are_names(&self, configured: &[String]) -> bool {
        names_are_names(
            self.session.as_deref(),
            &self.servers,
            &self.evidence,
            configured,
        )
    }
}

/// The session id last found to be an id ([`is_session_id_like`]), so a
/// run of readings that name the same session checks it once: a harness's
/// telemetry names one session record after record, and the credential
/// patterns cost more than the rest of a reading's checks.
#[derive(Debug, Clone, Default)]
pub struct SessionIdCheck {
    last: String,
}

impl SessionIdCheck {
    /// [`is_session_id_like`], remembered for the last id that passed.
    pub fn is_id_like(&mut self, session: &str) -> bool {
        if !self.last.is_empty() && session == self.last {
            return true;
        }
        if !is_session_id_like(session) {
            return false;
        }
        session.clone_into(&mut self.last);
        true
    }
}

impl TelemetryReading {
    /// [`names_are_names`](TelemetryReading::names_are_names), its session
    /// id checked once per run of readings that name it (`ids`).
    pub fn names_are_names_once(&self, configured: &[String], ids: &mut SessionIdCheck) -> bool {
        self.session.as_deref().is_none_or(|s| ids.is_id_like(s))
            && names_are_names(None, &self.servers, &self.evidence, configured)
    }
}

/// Whether every name a capability event carries looks like a name (its
/// variables like variables).
fn capability_names_are_names(c: &crate::capability_event::CapabilityEvent) -> bool {
    is_name_like(&c.name)
        && [&c.plugin, &c.event, &c.command]
            .into_iter()
            .flatten()
            .all(|n| is_name_like(n))
        && c.variables
            .iter()
            .all(|v| crate::capability_event::is_variable(v))
}

/// Whether `s` can be a harness's own session id: a name
/// ([`is_name_like`]) without a known credential's form
/// ([`crate::sanitize::has_credential_form`]: `sk-…`, `ghp_…`, a JWT,
/// `token:…`). The harnesses mint UUIDs (Claude Code, Codex, Gemini, Qwen,
/// Copilot: each one's shipped code and real sessions here) or `ses_…`
/// (OpenCode), none of which has such a form: an id that has one is a
/// secret written where an id belongs. A session id is kept and shown
/// (`KIND:ID`), never scrubbed, so it needs this rule of its own (issue 68).
pub fn is_session_id_like(s: &str) -> bool {
    is_name_like(s) && !crate::sanitize::has_credential_form(s)
}

/// The rule every harness reading (telemetry or records) passes: each
/// server and tool name is a configured name or looks like a name
/// ([`is_name_like`]), and the session id (if any) looks like an id
/// ([`is_session_id_like`]).
pub fn names_are_names(
    session: Option<&str>,
    servers: &[NamedServer],
    evidence: &[crate::model::Evidence],
    configured: &[String],
) -> bool {
    let ok = |name: &str| is_name_like(name) || configured.iter().any(|c| c == name);
    session.is_none_or(is_session_id_like)
        && servers.iter().all(|s| ok(&s.name))
        && evidence.iter().all(|e| {
            e.server.as_deref().is_none_or(ok)
                && e.tool.as_deref().is_none_or(is_name_like)
                && e.capability
                    .as_deref()
                    .is_none_or(capability_names_are_names)
        })
}

#[cfg(test)]
mod session_id_tests {
    use super::*;

    /// GIVEN the ids the harnesses mint (each seen in a real session here)
    /// and secrets planted where an id belongs WHEN checked THEN the ids
    /// pass and the secrets do not, so a reading that carries one is
    /// refused and the secret reaches no row, store or output.
    #[test]
    fn a_session_id_is_an_id_never_a_secret() {
        for id in [
            "88b3e12c-a78e-4cfc-a6bf-0a90e7116bb5",
            "019c8a4c-ed82-7b43-a1c4-5d1e2f3a4b5c",
            "ses_4f2a9c1e7ffeT7q2Vb9XkLmNpQ",
        ] {
            assert!(is_session_id_like(id), "{id}");
        }
        for secret in [
            "sk-live-PLANTED0123456789abcdefABCDEF",
            "ghp_PLANTED0123456789abcdef",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJQTEFOVEVEIn0.c2lnbmF0dXJl",
            "token:PLANTED",
            "api_key=PLANTED",
        ] {
            assert!(!is_session_id_like(secret), "{secret}");
            assert!(!names_are_names(Some(secret), &[], &[], &[]), "{secret}");
        }
    }
}
