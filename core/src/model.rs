//! The evidence model: the pieces every public document is built from
//! (timestamps, evidence, stage observations, connections, tool catalogs and
//! endpoint test results).
//!
//! Field names here are a contract. Change them only on purpose, and bump the
//! schema version of the documents that hold them when you do. Every string stored here has already been
//! through [`crate::sanitize`]; nothing in this module holds a header value,
//! an env value, an argument, a prompt, a tool payload or a raw frame.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocab::{EvidenceKind, ImpliedBy, Provenance, ReasonCode, StageState, Transport};

/// Milliseconds since the Unix epoch, UTC.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Timestamp(pub u64);

impl JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "integer",
            "minimum": 0,
            "description": "Milliseconds since the Unix epoch, UTC."
        })
    }
}

impl Timestamp {
    /// The instant `at`, in milliseconds since the Unix epoch (0 before it).
    /// Core never reads the clock itself: the hub does (`tether_hub::now`),
    /// and so do hosts and plugins that stamp evidence.
    pub fn from_system(at: SystemTime) -> Self {
        let ms = at
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        Timestamp(u64::try_from(ms).unwrap_or(u64::MAX))
    }

    /// Reads an RFC 3339 time (`2026-12-01T20:53:19.575Z`, any number of
    /// fraction digits, `Z` or an offset): what harnesses write in their
    /// records. `None` for anything else, or a time before 1970.
    pub fn parse_rfc3339(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        // Digits only, read without a parse (no sign, no allocation).
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            s.get(r)?.bytes().try_fold(0i64, |n, c| {
                c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
            })
        };
        if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
            return None;
        }
        let mut i = 19;
        let mut ms = 0i64;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            let digits = s.get(start..i)?;
            if digits.is_empty() {
                return None;
            }
            // The first three digits, as milliseconds (`.5` is 500).
            ms = digits
                .bytes()
                .chain(*b"000")
                .take(3)
                .fold(0i64, |n, c| n * 10 + i64::from(c - b'0'));
        }
        let offset_min = match s.get(i..)? {
            "Z" | "z" => 0,
            tz if tz.len() == 6
                && matches!(tz.as_bytes()[0], b'+' | b'-')
                && tz.as_bytes()[3] == b':' =>
            {
                let sign = if tz.starts_with('-') { -1 } else { 1 };
                sign * (num(i + 1..i + 3)? * 60 + num(i + 4..i + 6)?)
            }
            _ => return None,
        };
        let days = days_from_civil(y, mo as u32, d as u32);
        let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
        let total = secs.checked_mul(1000)?.checked_add(ms)?;
        u64::try_from(total).ok().map(Timestamp)
    }

    /// Milliseconds from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Display for Timestamp {
    /// Formats as RFC 3339 UTC with milliseconds, computed without a clock.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0 / 1000;
        let ms = self.0 % 1000;
        let days = (secs / 86_400) as i64;
        let rem = secs % 86_400;
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            rem / 3600,
            (rem / 60) % 60,
            rem % 60
        )
    }
}

/// Howard Hinnant's days-to-civil algorithm.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The token-estimate method of [`ToolCatalog`]: o200k_base over the compact JSON of each tool.
pub const CATALOG_METHOD: &str = "o200k_base:mcp-tool-json-v1";
/// A catalog keeps at most this many tools, sorted by name.
pub const CATALOG_MAX_TOOLS: usize = 128;
/// Each description is cut to this many bytes.
pub const CATALOG_MAX_DESCRIPTION_BYTES: usize = 1024;
/// Each input schema larger than this is left out (marked).
pub const CATALOG_MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Input schemas beyond this many bytes in all are left out (marked).
pub const CATALOG_MAX_TOTAL_SCHEMA_BYTES: usize = 512 * 1024;

/// The tools a host's own server served, bounded, with token estimates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCatalog {
    /// How token estimates were computed ([`CATALOG_METHOD`]).
    pub method: String,
    /// When the tools/list was served.
    pub at: Timestamp,
    /// Tools served (may exceed `tools.len()`).
    pub tool_count: u32,
    /// At most 128 tools, sorted by name.
    pub tools: Vec<CatalogTool>,
    /// Whether tools were left out (beyond 128).
    pub truncated: bool,
    /// Sum of every tool's token estimate, left-out ones included.
    pub total_tokens: u64,
}

impl ToolCatalog {
    /// The tokens of the tools a filter keeps: `include` (when given) names
    /// the tools kept, `exclude` the ones dropped. Without a filter this is
    /// `total_tokens`; with one, tools the catalog left out (past 128) are
    /// not counted, since their names are unknown.
    pub fn kept_tokens(&self, include: Option<&[String]>, exclude: &[String]) -> u64 {
        if include.is_none() && exclude.is_empty() {
            return self.total_tokens;
        }
        self.tools
            .iter()
            .filter(|t| include.is_none_or(|names| names.contains(&t.name)))
            .filter(|t| !exclude.contains(&t.name))
            .map(|t| u64::from(t.token_estimate))
            .sum()
    }
}

/// One tool of a catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CatalogTool {
    /// Tool name.
    pub name: String,
    /// Its place in the server's listing (0 first): the order a harness
    /// meets its tools in, which decides which of two that collide it keeps.
    #[serde(default)]
    pub listed_at: u32,
    /// Description, at most 1 KiB.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether the description was cut.
    #[serde(default)]
    pub description_truncated: bool,
    /// The input schema, unless it was over 64 KiB or past the 512 KiB total.
    #[serde(default)]
    pub input_schema: Option<serde_json::Value>,
    /// Whether the input schema was left out.
    #[serde(default)]
    pub input_schema_truncated: bool,
    /// Size of the compact input schema, in bytes.
    pub input_schema_bytes: u64,
    /// o200k_base tokens of the compact JSON of the whole tool definition.
    pub token_estimate: u32,
}

/// One observed MCP connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConnectionRecord {
    /// Opaque id given by the observer.
    pub connection_id: String,
    /// Earliest evidence seen on it.
    pub first_seen_at: Timestamp,
    /// When it closed, if it did.
    #[serde(default)]
    pub closed_at: Option<Timestamp>,
    /// The MCP client that spoke on it.
    #[serde(default)]
    pub client: Option<ClientInfo>,
}

/// The newest tool call seen: never its arguments or results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallRecord {
    /// Tool name.
    pub tool: String,
    /// Whether it is known to have succeeded: `false` for a failed call
    /// and for one whose outcome no record gives (`outcome` tells them
    /// apart).
    pub ok: bool,
    /// How it ended: `succeeded`, `failed` or `unknown`. Absent in
    /// documents written before it was added, where `ok` stands alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<crate::vocab::CallOutcome>,
    /// When.
    pub at: Timestamp,
}

impl ToolCallRecord {
    /// The call `tool` at `at`, ended as `outcome` says.
    pub fn new(tool: impl Into<String>, outcome: crate::vocab::CallOutcome, at: Timestamp) -> Self {
        ToolCallRecord {
            tool: tool.into(),
            ok: outcome == crate::vocab::CallOutcome::Succeeded,
            outcome: Some(outcome),
            at,
        }
    }

    /// How it ended: its `outcome`, or (in an older document) what `ok`
    /// said.
    pub fn outcome(&self) -> crate::vocab::CallOutcome {
        self.outcome.clone().unwrap_or(if self.ok {
            crate::vocab::CallOutcome::Succeeded
        } else {
            crate::vocab::CallOutcome::Failed
        })
    }
}

/// One tool of a server as a session saw it: listed, offered to the model,
/// called (how often, how many failed). Names and counts only, never an
/// argument or a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ToolRow {
    /// The tool's name, as its server lists it.
    pub name: String,
    /// The server listed it (tools/list, or the harness's own tool list).
    #[serde(default)]
    pub listed: StageObservation,
    /// The harness kept it after its own checks and conversions: it named
    /// it to the model, whole or behind its tool search. `no` where a rule
    /// dropped it (`reason_code` says which).
    #[serde(default, skip_serializing_if = "StageObservation::is_unknown")]
    pub schema_accepted: StageObservation,
    /// It was offered in this session's model requests: sent whole, or
    /// named behind the harness's tool search (then `deferred`).
    #[serde(default, skip_serializing_if = "StageObservation::is_unknown")]
    pub current_thread: StageObservation,
    /// The model was sent its definition (or the model called it).
    #[serde(default)]
    pub model_visible: StageObservation,
    /// The harness held it behind its tool search (discoverable; its
    /// definition not sent until a search loads it). Yes with
    /// `model_visible` not yes: deferred until searched.
    #[serde(default, skip_serializing_if = "StageObservation::is_unknown")]
    pub deferred: StageObservation,
    /// Why it stopped short of the model, where a rule of the harness or
    /// its provider says (`name_collision`, `tool_limit_exceeded`,
    /// `schema_unsupported`, `name_too_long`, `deferred_until_searched`; the
    /// configuration's own filter: `excluded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<ReasonCode>,
    /// It was called: yes once a call is seen.
    #[serde(default)]
    pub called: StageObservation,
    /// Calls seen.
    #[serde(default)]
    pub calls: u32,
    /// Of those, the ones that failed.
    #[serde(default)]
    pub failed_calls: u32,
    /// Of those, the ones whose outcome no record gives: neither
    /// succeeded nor failed, as far as Tether can tell.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unknown_calls: u32,
    /// The newest call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_call_at: Option<Timestamp>,
    /// A call of it reached its server and succeeded: `yes` then; `no`
    /// where the harness refused every call the model made of it
    /// (`refusals` say why) and none succeeded.
    #[serde(default, skip_serializing_if = "StageObservation::is_unknown")]
    pub callable: StageObservation,
    /// Calls the model made that the harness refused before they reached
    /// the server (permission, approval, a hook, policy): never counted in
    /// `calls`, never a use. The sum of `refusals`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refused_calls: u32,
    /// The refusals by reason (`permission_denied`, `approval_required`,
    /// `blocked_by_hook`, `denied_by_policy`), in reason order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<ReasonCount>,
    /// Why its failed calls failed, where a record says: `tool_error` (the
    /// server answered with `isError`) or `protocol_error` (a JSON-RPC
    /// error), in reason order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<ReasonCode>,
    /// How its definition differs from the server's pin, where a source
    /// compared this session's listing with it (`definition_changed`:
    /// `title_changed`, `description_changed`, `input_schema_changed`,
    /// `output_schema_changed`, `annotations_changed`; `tools_changed`:
    /// `tool_added`, `tool_removed`), in reason order. Hashes were
    /// compared, never the text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definition_changes: Vec<ReasonCode>,
}

/// How many of something happened for one reason (a tool's refused calls).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReasonCount {
    /// The reason.
    pub reason_code: ReasonCode,
    /// How many.
    pub calls: u32,
}

/// Reasons a tool row keeps per list, at most.
pub const MAX_TOOL_REASONS: usize = 8;

impl ReasonCount {
    /// Counts `calls` for `reason` in `list` (kept in the order of the
    /// reasons' codes, at most [`MAX_TOOL_REASONS`] of them: a reason past
    /// that is dropped): a reason already there takes `combine(had, calls)`.
    /// One source's counts are running totals (`u32::max`, so order and
    /// repeats never matter); counts of different tools add up
    /// (`u32::saturating_add`).
    pub fn count_in(
        list: &mut Vec<ReasonCount>,
        reason: ReasonCode,
        calls: u32,
        combine: fn(u32, u32) -> u32,
    ) {
        match list.binary_search_by(|r| r.reason_code.as_str().cmp(reason.as_str())) {
            Ok(i) => list[i].calls = combine(list[i].calls, calls),
            Err(i) if list.len() < MAX_TOOL_REASONS => list.insert(
                i,
                ReasonCount {
                    reason_code: reason,
                    calls,
                },
            ),
            Err(_) => {}
        }
    }
}

impl ToolRow {
    /// A row for `name` with nothing shown yet.
    pub fn new(name: impl Into<String>) -> Self {
        ToolRow {
            name: name.into(),
            listed: StageObservation::default(),
            schema_accepted: StageObservation::default(),
            current_thread: StageObservation::default(),
            model_visible: StageObservation::default(),
            deferred: StageObservation::default(),
            reason_code: None,
            called: StageObservation::default(),
            calls: 0,
            failed_calls: 0,
            unknown_calls: 0,
            last_call_at: None,
            callable: StageObservation::default(),
            refused_calls: 0,
            refusals: Vec::new(),
            failures: Vec::new(),
            definition_changes: Vec::new(),
        }
    }

    /// The reason most of its refused calls give (ties: the first in reason
    /// order), where the harness refused any.
    pub fn refusal(&self) -> Option<&ReasonCode> {
        self.refusals
            .iter()
            .rev()
            .max_by_key(|r| r.calls)
            .map(|r| &r.reason_code)
    }

    /// Refused every time the model called it: refusals, and no call that
    /// reached the server.
    pub fn is_refused(&self) -> bool {
        self.refused_calls > 0 && self.calls == 0
    }

    /// Makes the tool's ladder monotone ([`close_ladder`]): a called tool
    /// reached the model, a tool the model saw was offered in the thread,
    /// which the harness kept, which was listed.
    pub fn close(&mut self) -> bool {
        close_ladder(&mut [
            (ImpliedBy::ToolsListed, &mut self.listed),
            (ImpliedBy::SchemaAccepted, &mut self.schema_accepted),
            (ImpliedBy::CurrentThread, &mut self.current_thread),
            (ImpliedBy::ModelVisible, &mut self.model_visible),
            (ImpliedBy::Called, &mut self.called),
            (ImpliedBy::Callable, &mut self.callable),
        ])
    }

    /// Whether anything showed the tool: listed, shown to the model or called.
    pub fn is_shown(&self) -> bool {
        self.listed.is_yes() || self.model_visible.is_yes() || self.called.is_yes()
    }

    /// Held behind the harness's tool search and never sent to the model.
    pub fn is_deferred(&self) -> bool {
        self.deferred.is_yes() && !self.model_visible.is_yes()
    }

    /// Withheld, and only by a documented rule's prediction: nothing the
    /// harness said shows it.
    pub fn is_predicted(&self) -> bool {
        self.is_withheld() && self.current_thread.provenance == Some(ProvenanceCode::DocumentedRule)
    }

    /// Kept from the model by a rule (`reason_code` says which), and
    /// nothing observed shows it reached the thread, the model or a call:
    /// an observation beats a prediction.
    pub fn is_withheld(&self) -> bool {
        self.reason_code.is_some()
            && !self.current_thread.is_yes()
            && !self.model_visible.is_yes()
            && !self.called.is_yes()
    }
}

/// An MCP client's self-description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClientInfo {
    /// clientInfo.name.
    pub name: String,
    /// clientInfo.version.
    #[serde(default)]
    pub version: Option<String>,
    /// The protocol version it asked for.
    #[serde(default)]
    pub protocol_version: Option<String>,
}

/// One stage's state, where it came from, and when it was first shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StageObservation {
    /// yes, no, unknown or n/a.
    pub state: StageState,
    /// What showed it; null while unknown.
    #[serde(default)]
    pub provenance: Option<ProvenanceCode>,
    /// When it was first shown.
    #[serde(default)]
    pub at: Option<Timestamp>,
    /// Set when no evidence showed this stage itself but a later stage on
    /// its path was shown `yes` (which one; its provenance and time are
    /// that stage's): a tool call proves the server's tools were listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implied_by: Option<ImpliedBy>,
}

/// A `Copy` provenance: known values only; unknown ones read back as `assumed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProvenanceCode {
    /// See [`Provenance::SessionEvent`].
    SessionEvent,
    /// See [`Provenance::AgentReport`].
    AgentReport,
    /// See [`Provenance::CurrentConfig`].
    CurrentConfig,
    /// See [`Provenance::EndpointTest`].
    EndpointTest,
    /// See [`Provenance::Assumed`].
    Assumed,
    /// See [`Provenance::Relay`].
    Relay,
    /// See [`Provenance::HarnessTelemetry`].
    HarnessTelemetry,
    /// See [`Provenance::HarnessRecord`].
    HarnessRecord,
    /// See [`Provenance::DocumentedRule`].
    DocumentedRule,
    /// See [`Provenance::ModelTap`].
    ModelTap,
}

impl ProvenanceCode {
    /// The open-vocabulary form.
    pub fn word(self) -> Provenance {
        match self {
            Self::SessionEvent => Provenance::SessionEvent,
            Self::AgentReport => Provenance::AgentReport,
            Self::CurrentConfig => Provenance::CurrentConfig,
            Self::EndpointTest => Provenance::EndpointTest,
            Self::Assumed => Provenance::Assumed,
            Self::Relay => Provenance::Relay,
            Self::HarnessTelemetry => Provenance::HarnessTelemetry,
            Self::HarnessRecord => Provenance::HarnessRecord,
            Self::DocumentedRule => Provenance::DocumentedRule,
            Self::ModelTap => Provenance::ModelTap,
        }
    }

    /// From the open vocabulary; unknown values are treated as assumptions.
    pub fn from_word(word: &Provenance) -> Self {
        match word {
            Provenance::SessionEvent => Self::SessionEvent,
            Provenance::AgentReport => Self::AgentReport,
            Provenance::CurrentConfig => Self::CurrentConfig,
            Provenance::EndpointTest => Self::EndpointTest,
            Provenance::Relay => Self::Relay,
            Provenance::HarnessTelemetry => Self::HarnessTelemetry,
            Provenance::HarnessRecord => Self::HarnessRecord,
            Provenance::DocumentedRule => Self::DocumentedRule,
            Provenance::ModelTap => Self::ModelTap,
            Provenance::Assumed | Provenance::Other(_) => Self::Assumed,
        }
    }
}

impl Serialize for ProvenanceCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.word().serialize(s)
    }
}

impl<'de> Deserialize<'de> for ProvenanceCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::from_word(&Provenance::deserialize(d)?))
    }
}

impl JsonSchema for ProvenanceCode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Provenance::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Provenance::json_schema(generator)
    }
}

impl Default for StageObservation {
    fn default() -> Self {
        StageObservation {
            state: StageState::Unknown,
            provenance: None,
            at: None,
            implied_by: None,
        }
    }
}

impl StageObservation {
    /// A stage shown by something real, at `at`; a time of 0 (a record
    /// that says none) is no time: absent, never shown as the epoch, and
    /// never taken for the earliest.
    pub fn shown(state: StageState, provenance: ProvenanceCode, at: Timestamp) -> Self {
        StageObservation {
            state,
            provenance: Some(provenance),
            at: (at.0 > 0).then_some(at),
            implied_by: None,
        }
    }

    /// Whether nothing showed the stage (`unknown`, no provenance).
    pub fn is_unknown(&self) -> bool {
        self.state == StageState::Unknown && self.provenance.is_none()
    }

    /// Whether the stage was reached (`yes`, shown or implied).
    pub fn is_yes(&self) -> bool {
        self.state == StageState::Yes
    }

    /// Merges another observation in; commutative, associative and idempotent.
    ///
    /// The stronger state wins (`yes` > `no` > `n/a` > `unknown`); between equal
    /// states one shown directly beats one implied, then the earlier time
    /// wins, then the stronger provenance.
    pub fn merge(&mut self, other: StageObservation) {
        let key = |o: &StageObservation| {
            (
                o.state.strength(),
                o.implied_by.is_none(),
                std::cmp::Reverse(o.at.unwrap_or(Timestamp(u64::MAX))),
                std::cmp::Reverse(o.provenance),
                std::cmp::Reverse(o.implied_by.map(|i| i as u8)),
            )
        };
        if key(&other) > key(self) {
            *self = other;
        }
    }
}

/// Makes one ladder monotone: every stage below a `yes` becomes `yes` too,
/// implied by the stage that showed it (carried from the stage that was
/// shown directly), with that stage's provenance and time. `path` lists the
/// stages lowest first, each with its own name as an implier. True when a
/// stage changed.
///
/// Each stage's result is the merge of its own evidence with what every
/// stage above it was shown directly, so the closure is idempotent and,
/// applied after each event, independent of the events' order (held by
/// `tether-core`'s reducer property tests).
pub fn close_ladder(path: &mut [(ImpliedBy, &mut StageObservation)]) -> bool {
    let mut changed = false;
    let mut from_above: Option<StageObservation> = None;
    for (name, stage) in path.iter_mut().rev() {
        if let Some(implied) = from_above {
            let before = **stage;
            stage.merge(implied);
            changed |= **stage != before;
        }
        if stage.is_yes() {
            let implied = StageObservation {
                implied_by: Some(stage.implied_by.unwrap_or(*name)),
                ..**stage
            };
            match &mut from_above {
                Some(best) => best.merge(implied),
                None => from_above = Some(implied),
            }
        }
    }
    changed
}

/// The ax capability ladder for one server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Stages {
    /// The host configured it.
    #[serde(default)]
    pub configured: StageObservation,
    /// The configuration enables it.
    #[serde(default)]
    pub enabled: StageObservation,
    /// It was handed to the agent.
    #[serde(default)]
    pub delivered: StageObservation,
    /// The server accepted the client (or needed no credentials).
    #[serde(default)]
    pub authenticated: StageObservation,
    /// initialize completed.
    #[serde(default)]
    pub initialized: StageObservation,
    /// tools/list was served.
    #[serde(default)]
    pub tools_listed: StageObservation,
    /// The harness kept a tool of it after its own checks and conversions.
    #[serde(default)]
    pub schema_accepted: StageObservation,
    /// A tool call succeeded.
    #[serde(default)]
    pub callable: StageObservation,
    /// A tool of it was offered in this session's model requests (sent
    /// whole, or named behind the harness's tool search).
    #[serde(default)]
    pub current_thread: StageObservation,
    /// The model was sent a tool's definition.
    #[serde(default)]
    pub model_visible: StageObservation,
}

impl Stages {
    /// The observation for one stage.
    pub fn get(&self, stage: crate::vocab::Stage) -> &StageObservation {
        use crate::vocab::Stage::*;
        match stage {
            Configured => &self.configured,
            Enabled => &self.enabled,
            Delivered => &self.delivered,
            Authenticated => &self.authenticated,
            Initialized => &self.initialized,
            ToolsListed => &self.tools_listed,
            SchemaAccepted => &self.schema_accepted,
            Callable => &self.callable,
            CurrentThread => &self.current_thread,
            ModelVisible => &self.model_visible,
        }
    }

    /// Makes the ladder monotone ([`close_ladder`]): a server whose tool
    /// was called, or shown to the model, had its tools listed, was
    /// connected, delivered, enabled and configured. A successful call
    /// sits above the model seeing the tool, which sits above the list.
    pub fn close(&mut self) -> bool {
        close_ladder(&mut [
            (ImpliedBy::LaterStage, &mut self.configured),
            (ImpliedBy::Enabled, &mut self.enabled),
            (ImpliedBy::Delivered, &mut self.delivered),
            (ImpliedBy::Authenticated, &mut self.authenticated),
            (ImpliedBy::Initialized, &mut self.initialized),
            (ImpliedBy::ToolsListed, &mut self.tools_listed),
            (ImpliedBy::SchemaAccepted, &mut self.schema_accepted),
            (ImpliedBy::CurrentThread, &mut self.current_thread),
            (ImpliedBy::ModelVisible, &mut self.model_visible),
            (ImpliedBy::Callable, &mut self.callable),
        ])
    }

    /// The observation for one stage, mutably.
    pub fn get_mut(&mut self, stage: crate::vocab::Stage) -> &mut StageObservation {
        use crate::vocab::Stage::*;
        match stage {
            Configured => &mut self.configured,
            Enabled => &mut self.enabled,
            Delivered => &mut self.delivered,
            Authenticated => &mut self.authenticated,
            Initialized => &mut self.initialized,
            ToolsListed => &mut self.tools_listed,
            SchemaAccepted => &mut self.schema_accepted,
            Callable => &mut self.callable,
            CurrentThread => &mut self.current_thread,
            ModelVisible => &mut self.model_visible,
        }
    }
}

/// The result of one bounded initialize + tools/list against a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EndpointTestResult {
    /// When the test finished.
    pub at: Timestamp,
    /// Whether initialize and tools/list both succeeded.
    pub succeeded: bool,
    /// Why it failed.
    #[serde(default)]
    pub reason_code: Option<ReasonCode>,
    /// Sanitized, at most 256 bytes.
    #[serde(default)]
    pub summary: Option<String>,
    /// The transport tested.
    pub transport: Transport,
    /// Sanitized target.
    pub target: String,
    /// serverInfo.name.
    #[serde(default)]
    pub server_name: Option<String>,
    /// serverInfo.version.
    #[serde(default)]
    pub server_version: Option<String>,
    /// The negotiated protocol version.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// The era it belongs to: `2026-07-28` (`server/discover`, no handshake)
    /// or `legacy` (the `initialize` handshake).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<String>,
    /// Tools listed.
    #[serde(default)]
    pub tool_count: Option<u32>,
    /// What the listed tools cost the model: the sum of every tool's token
    /// estimate by `token_method`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_tokens: Option<u64>,
    /// How `tool_tokens` was computed ([`CATALOG_METHOD`], or `unavailable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_method: Option<String>,
    /// The one tool call the test was asked to make (`--call`), after the
    /// listing: absent when none was asked for, or the listing failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<ToolCallCheck>,
    /// How long it took.
    pub elapsed_ms: u64,
}

/// The outcome of one `tools/call` an endpoint test was asked to make:
/// metadata only. The arguments it sent and the content it got back are
/// never kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallCheck {
    /// The tool, by the name the server listed (sanitized).
    pub tool: String,
    /// A result came back, and it did not say `isError`.
    pub succeeded: bool,
    /// Why no result came back (`tool_not_listed`: the server did not list
    /// it, so it was not called; `timeout`, `protocol_error`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<ReasonCode>,
    /// Sanitized, at most 256 bytes; never the result's content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The result's `isError`, when a result came back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// How many content blocks the result held (not what they said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_items: Option<u32>,
    /// Whether the result carried `structuredContent` (not what it held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<bool>,
    /// From sending the call to its result.
    pub elapsed_ms: u64,
}

impl EndpointTestResult {
    /// A test of `endpoint` that did not succeed, with nothing learned from
    /// the server: why (when known) and how long it took.
    pub fn failed(
        endpoint: &crate::spec::Endpoint,
        at: Timestamp,
        reason_code: Option<ReasonCode>,
        summary: Option<String>,
        elapsed_ms: u64,
    ) -> Self {
        EndpointTestResult {
            at,
            succeeded: false,
            reason_code,
            summary,
            transport: endpoint.transport(),
            target: endpoint.target(),
            server_name: None,
            server_version: None,
            protocol_version: None,
            era: None,
            tool_count: None,
            tool_tokens: None,
            token_method: None,
            call: None,
            elapsed_ms,
        }
    }
}

/// One observation. Ownership is not here: the sink stamps it on the envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Evidence {
    /// What happened.
    pub kind: EvidenceKind,
    /// When it happened.
    pub at: Timestamp,
    /// The server it is about; null for attempt-level evidence.
    #[serde(default)]
    pub server: Option<String>,
    /// The observer's opaque connection id.
    #[serde(default)]
    pub connection_id: Option<String>,
    /// Stable reason, for filtered, unavailable and errors.
    #[serde(default)]
    pub reason_code: Option<ReasonCode>,
    /// Sanitized, at most 256 bytes.
    #[serde(default)]
    pub summary: Option<String>,
    /// Tools listed (tools_list_observed) or reported visible (agent_reported).
    #[serde(default)]
    pub tool_count: Option<u32>,
    /// The MCP client, for initialize.
    #[serde(default)]
    pub client: Option<ClientInfo>,
    /// What showed it.
    pub provenance: Provenance,
    /// Tool name, for tool_call_observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Outcome, for tool_call_observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// The agent's session id, for session_accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acp_session_id: Option<String>,
    /// The agent's own word for the server's state, for agent_reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_status: Option<String>,
    /// The test result, for endpoint_tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_test: Option<Box<EndpointTestResult>>,
    /// For tool_call_observed: how many calls of `tool` the source has seen
    /// so far in this session (a harness's records count them; absent: this
    /// one call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u32>,
    /// For tool_call_observed: how many of those `calls` failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_calls: Option<u32>,
    /// For tool_call_observed: how many of those `calls` ended in a way no
    /// record gives (absent: this one call's `ok` says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_calls: Option<u32>,
    /// For skill, hook and plugin evidence (`skill_listed`,
    /// `skill_invoked`, `hook_fired`, `plugin_loaded`, `plugin_failed`):
    /// which one, and how its use ended. Names only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<Box<crate::capability_event::CapabilityEvent>>,
}

impl Evidence {
    /// Evidence of `kind` at `at`, observed in the session; fill the rest with the builders.
    pub fn new(kind: EvidenceKind, at: Timestamp) -> Self {
        Evidence {
            kind,
            at,
            server: None,
            connection_id: None,
            reason_code: None,
            summary: None,
            tool_count: None,
            client: None,
            provenance: Provenance::SessionEvent,
            tool: None,
            ok: None,
            acp_session_id: None,
            reported_status: None,
            endpoint_test: None,
            calls: None,
            failed_calls: None,
            unknown_calls: None,
            capability: None,
        }
    }

    /// About one server.
    pub fn server(mut self, name: impl Into<String>) -> Self {
        self.server = Some(name.into());
        self
    }

    /// On one connection.
    pub fn connection(mut self, id: impl Into<String>) -> Self {
        self.connection_id = Some(id.into());
        self
    }

    /// With a reason and an (unsanitized) summary; the reducer sanitizes it.
    pub fn reason(mut self, code: ReasonCode, summary: Option<String>) -> Self {
        self.reason_code = Some(code);
        self.summary = summary;
        self
    }

    /// With a tool count.
    pub fn tools(mut self, count: u32) -> Self {
        self.tool_count = Some(count);
        self
    }

    /// With the MCP client's self-description.
    pub fn client(mut self, client: ClientInfo) -> Self {
        self.client = Some(client);
        self
    }

    /// With a provenance other than `session_event`.
    pub fn provenance(mut self, provenance: Provenance) -> Self {
        self.provenance = provenance;
        self
    }

    /// About one tool of its server, by name.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// A tool call by name and outcome.
    pub fn tool_call(self, tool: impl Into<String>, ok: bool) -> Self {
        let mut ev = self.tool(tool);
        ev.ok = Some(ok);
        ev
    }

    /// The agent's own session id.
    pub fn acp_session(mut self, id: impl Into<String>) -> Self {
        self.acp_session_id = Some(id.into());
        self
    }

    /// The server's state as the agent reported it, typed by its plugin
    /// (a word it could not type: [`ReportedStatus::Other`](crate::vocab::ReportedStatus::Other),
    /// kept only where it is a name: [`ReportedStatus::kept`](crate::vocab::ReportedStatus::kept)).
    pub fn reported(mut self, status: impl Into<crate::vocab::ReportedStatus>) -> Self {
        self.reported_status = Some(status.into().kept().as_str().to_owned());
        self.provenance = Provenance::AgentReport;
        self
    }

    /// The reported state, typed (`reported_status` holds a
    /// [`ReportedStatus`](crate::vocab::ReportedStatus)'s wire form, or a
    /// word its plugin could not type: `Other`, read by the reducer as a
    /// reported `unknown`).
    pub fn reported_state(&self) -> Option<crate::vocab::ReportedStatus> {
        self.reported_status
            .as_deref()
            .map(crate::vocab::ReportedStatus::parse)
    }

    /// About one skill, hook or plugin.
    pub fn capability(mut self, event: crate::capability_event::CapabilityEvent) -> Self {
        self.capability = Some(Box::new(event));
        self
    }

    /// An endpoint test's result.
    pub fn endpoint_test(mut self, result: EndpointTestResult) -> Self {
        self.endpoint_test = Some(Box::new(result));
        self.provenance = Provenance::EndpointTest;
        self
    }
}

/// Why a record could not be parsed: the shape of the failure, never the
/// record's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Unparsed {
    /// It ends before its JSON does (a file still being written, a crash,
    /// a copy cut short).
    CutShort,
    /// It is not JSON (or not the JSON its file holds).
    NotJson,
    /// JSON, of a kind the reader knows, but a field it reads has the
    /// wrong type (a `null`, a number for a string).
    WrongType,
}

impl Unparsed {
    /// Why `error`, from parsing a record, says it failed.
    pub fn of(error: &serde_json::Error) -> Self {
        use serde_json::error::Category;
        match error.classify() {
            Category::Eof => Unparsed::CutShort,
            Category::Data => Unparsed::WrongType,
            Category::Syntax | Category::Io => Unparsed::NotJson,
        }
    }

    /// In words: `cut short`, `not JSON`, `a field of the wrong type`.
    pub fn words(self) -> &'static str {
        match self {
            Unparsed::CutShort => "cut short",
            Unparsed::NotJson => "not JSON",
            Unparsed::WrongType => "a field of the wrong type",
        }
    }

    /// Why `record` does not parse as JSON, or `None` where it does.
    pub fn json(record: &str) -> Option<Self> {
        serde_json::from_str::<serde::de::IgnoredAny>(record)
            .err()
            .map(|e| Unparsed::of(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_formats_as_rfc3339() {
        assert_eq!(Timestamp(0).to_string(), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            Timestamp(1_795_993_527_123).to_string(),
            "2026-11-29T23:05:27.123Z"
        );
        assert_eq!(
            Timestamp(951_782_400_000).to_string(),
            "2000-02-29T00:00:00.000Z"
        );
    }

    #[test]
    fn stage_merge_is_order_independent() {
        let a = StageObservation::shown(StageState::No, ProvenanceCode::AgentReport, Timestamp(5));
        let b =
            StageObservation::shown(StageState::Yes, ProvenanceCode::SessionEvent, Timestamp(9));
        let c = StageObservation::shown(StageState::Yes, ProvenanceCode::AgentReport, Timestamp(7));
        let mut x = StageObservation::default();
        for o in [a, b, c] {
            x.merge(o);
        }
        let mut y = StageObservation::default();
        for o in [c, a, b, c] {
            y.merge(o);
        }
        assert_eq!(x, y);
        assert_eq!(x.state, StageState::Yes);
        assert_eq!(x.at, Some(Timestamp(7)));
    }
}

#[cfg(test)]
mod time_tests {
    use super::Timestamp;

    #[test]
    fn rfc3339_reads_back_what_display_writes() {
        for ms in [0u64, 1, 999, 1_796_158_399_840, 4_102_444_800_000] {
            let t = Timestamp(ms);
            assert_eq!(Timestamp::parse_rfc3339(&t.to_string()), Some(t), "{t}");
        }
        assert_eq!(
            Timestamp::parse_rfc3339("2026-12-01T20:53:19.5Z"),
            Timestamp::parse_rfc3339("2026-12-01T20:53:19.500Z")
        );
        assert_eq!(
            Timestamp::parse_rfc3339("2026-12-01T21:53:19+01:00"),
            Timestamp::parse_rfc3339("2026-12-01T20:53:19Z")
        );
        for bad in [
            "",
            "2026-12-01",
            "2026-13-01T00:00:00Z",
            "2026-12-01T20:53:19",
            "x026-12-01T20:53:19Z",
            "+026-12-01T20:53:19Z",
            "2026-12-01T20:5a:19Z",
            "2026-12-01T20:53:19.Z",
            "2026-12-01T20:53:19.5x",
            "1969-12-31T23:59:59Z",
        ] {
            assert_eq!(Timestamp::parse_rfc3339(bad), None, "{bad}");
        }
    }
}

/// Whether a count is zero: what a field left out of a document when it is
/// (`skip_serializing_if`), for every count of the contract.
pub fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}
