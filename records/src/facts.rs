//! What the records of one harness session add up to, and the attachment
//! history built from it (or merged into the one a store already holds).
//!
//! Every fact merges idempotently: a record read twice (a file imported
//! again, or reread after it was cut short) changes nothing. Tool calls are
//! counted by their call id, per source, so a call written twice (started,
//! then completed) counts once, and two sources that each saw the same
//! calls (a transcript and a server log) give the larger count, not the sum.
//!
//! `SessionFacts`, what one session's records add up to (facts deduplicated;
//! tool calls keyed by source and call id, so a call written twice counts once
//! and two sources seeing the same calls give the larger count), and
//! `history_of`, which builds the session's history with the pure reducer, or
//! merges into the one a store holds (its current attempt begun again, which
//! changes nothing), through the sanitizer with the configured servers'
//! secrets.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use tether_core::history::AttachmentHistory;
use tether_core::model::{Evidence, ProvenanceCode, Timestamp};
use tether_core::observer::{TransportObserver, plan};
use tether_core::owner::Owner;
use tether_core::plan::{DriveMode, PlanContext};
use tether_core::records::{RecordReading, session_id};
use tether_core::reducer::{
    AttemptStart, HistoryEvent, RowNames, begin_attempt, reduce, sanitize_evidence,
};
use tether_core::spec::ServerSpec;
use tether_core::telemetry::NamedServer;
use tether_core::vocab::{EvidenceKind, Provenance, ReasonCode, Trigger};

mod wire;

/// Distinct facts kept per session, at most (the earliest of each).
pub const MAX_FACTS: usize = 512;
/// Calls remembered per session (by id), at most; past it calls are still
/// counted, without their ids.
pub const MAX_CALL_IDS: usize = 65_536;

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Call {
    server: Option<String>,
    tool: Option<String>,
    ok: Option<bool>,
    /// The harness refused it (`tool_call_refused`), and why.
    refused: Option<ReasonCode>,
    /// Why it failed, where a record says (`tool_error`, `protocol_error`).
    failure: Option<ReasonCode>,
    at: Timestamp,
}

impl Call {
    /// The call `evidence` (a `tool_call_observed` or `tool_call_refused`)
    /// tells of.
    fn of(evidence: Evidence) -> Self {
        let refused = evidence.kind == EvidenceKind::ToolCallRefused;
        Call {
            // A refusal whose reason no record gives is still a refusal.
            refused: refused.then(|| {
                evidence
                    .reason_code
                    .clone()
                    .unwrap_or(tether_core::vocab::UNSAID_REFUSAL)
            }),
            failure: evidence
                .reason_code
                .filter(|c| !refused && evidence.ok == Some(false) && is_failure_reason(c)),
            ok: evidence.ok.filter(|_| !refused),
            server: evidence.server,
            tool: evidence.tool,
            at: evidence.at,
        }
    }

    /// Adds what `evidence`, about the same call, says.
    fn merge(&mut self, evidence: Evidence) {
        self.absorb(Call::of(evidence));
    }

    /// Adds what `other`, the same call read elsewhere, says: a failure
    /// said once stays (completed-then-failed is failed), and of two
    /// reasons the smaller wins, so the order records are read in never
    /// matters.
    fn absorb(&mut self, other: Call) {
        if other.server.is_some() {
            self.server = other.server;
        }
        if other.tool.is_some() {
            self.tool = other.tool;
        }
        self.ok = match (self.ok, other.ok) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), _) | (_, Some(true)) => Some(true),
            _ => None,
        };
        for (mine, theirs) in [
            (&mut self.refused, other.refused),
            (&mut self.failure, other.failure),
        ] {
            if let Some(code) = theirs
                && mine.as_ref().is_none_or(|m| code < *m)
            {
                *mine = Some(code);
            }
        }
        self.at = self.at.max(other.at);
    }
}

/// Whether `code` says why a call that reached its server failed (the
/// server's tool error or JSON-RPC error, or the harness's own words: it
/// timed out awaiting the answer, the connection closed under it).
fn is_failure_reason(code: &ReasonCode) -> bool {
    matches!(
        code,
        ReasonCode::ToolError
            | ReasonCode::ProtocolError
            | ReasonCode::Timeout
            | ReasonCode::ConnectionClosed
    )
}

/// Calls of one tool counted per source: how they ended, and the newest.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Counted {
    /// Calls that reached (or may have reached) the server.
    calls: u32,
    /// Of those, failed.
    failed: u32,
    /// Of those, with no recorded outcome.
    unknown: u32,
    /// The smallest reason a failed call gave, where one did.
    failure: Option<ReasonCode>,
    /// Calls the harness refused, per reason: never in `calls`.
    refused: BTreeMap<ReasonCode, u32>,
    /// The newest.
    at: Timestamp,
}

impl Counted {
    /// Counts one call.
    fn add(&mut self, call: &Call) {
        match &call.refused {
            Some(code) => {
                let n = self.refused.entry(code.clone()).or_default();
                *n = n.saturating_add(1);
            }
            None => {
                self.calls = self.calls.saturating_add(1);
                self.failed = self
                    .failed
                    .saturating_add(u32::from(call.ok == Some(false)));
                self.unknown = self.unknown.saturating_add(u32::from(call.ok.is_none()));
            }
        }
        if let Some(code) = &call.failure
            && self.failure.as_ref().is_none_or(|f| code < f)
        {
            self.failure = Some(code.clone());
        }
        self.at = self.at.max(call.at);
    }

    /// Adds another count of the same tool.
    fn merge(&mut self, other: Counted) {
        self.calls = self.calls.saturating_add(other.calls);
        self.failed = self.failed.saturating_add(other.failed);
        self.unknown = self.unknown.saturating_add(other.unknown);
        if let Some(code) = other.failure
            && self.failure.as_ref().is_none_or(|f| code < *f)
        {
            self.failure = Some(code);
        }
        for (code, n) in other.refused {
            let mine = self.refused.entry(code).or_default();
            *mine = mine.saturating_add(n);
        }
        self.at = self.at.max(other.at);
    }
}

/// What makes two facts the same fact (their times aside), as one value
/// that orders them (the earliest of each is kept; facts of one time are
/// shown in this order).
type FactKey = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<u32>,
    Option<bool>,
    Option<String>,
);

fn fact_key(e: &Evidence) -> FactKey {
    (
        e.kind.as_str().to_owned(),
        e.server.clone(),
        e.tool.clone(),
        e.reported_status.clone(),
        e.reason_code.as_ref().map(|r| r.as_str().to_owned()),
        e.tool_count,
        e.ok,
        capability_key(e),
    )
}

/// One fact, hashed and compared by what [`fact_key`] holds, in place:
/// a record's fact is looked up without copying a string of it.
#[derive(Debug, Clone)]
struct Fact(Evidence);

impl PartialEq for Fact {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.0, &other.0);
        a.kind.as_str() == b.kind.as_str()
            && a.server == b.server
            && a.tool == b.tool
            && a.reported_status == b.reported_status
            && a.reason_code.as_ref().map(ReasonCode::as_str)
                == b.reason_code.as_ref().map(ReasonCode::as_str)
            && a.tool_count == b.tool_count
            && a.ok == b.ok
            && a.capability == b.capability
    }
}

impl Eq for Fact {}

impl std::hash::Hash for Fact {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let e = &self.0;
        e.kind.as_str().hash(state);
        e.server.hash(state);
        e.tool.hash(state);
        e.reported_status.hash(state);
        e.reason_code.as_ref().map(ReasonCode::as_str).hash(state);
        e.tool_count.hash(state);
        e.ok.hash(state);
        // Equal capabilities have equal names: enough to spread them.
        e.capability
            .as_ref()
            .map(|c| (&c.name, &c.event, &c.command))
            .hash(state);
    }
}

/// One kind of use of a skill or hook: a use's evidence, its time and id
/// aside. Each session keeps each kind once, and each use as its time and
/// its kind's index.
#[derive(Debug, Clone)]
struct UseKind(Evidence);

impl PartialEq for UseKind {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for UseKind {}

impl std::hash::Hash for UseKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let e = &self.0;
        e.kind.as_str().hash(state);
        e.server.hash(state);
        e.tool.hash(state);
        e.capability
            .as_ref()
            .map(|c| (&c.name, &c.event, &c.command))
            .hash(state);
    }
}

/// The use of kind `kind` (an index of `kinds`) at `at`, with its id.
fn use_at(
    kinds: &[Evidence],
    (at, kind): (Timestamp, u32),
    id: Option<String>,
) -> Option<Evidence> {
    let mut evidence = kinds.get(kind as usize)?.clone();
    evidence.at = at;
    evidence.connection_id = id;
    Some(evidence)
}

/// A capability event as one string (its outcome included): what makes
/// two uses of a skill or hook the same kind of use.
fn capability_key(e: &Evidence) -> Option<String> {
    e.capability
        .as_deref()
        .map(|c| serde_json::to_string(c).unwrap_or_default())
}

/// What a call's or a use's id is kept as: a hash of it (`#` and 16 hex
/// digits; one already so is kept as it is), so a record's id, which a
/// session's facts keep between runs (`crate::ledger`), is never stored.
pub(crate) fn id_key(id: &str) -> String {
    let hashed =
        id.len() == 17 && id.starts_with('#') && id[1..].bytes().all(|b| b.is_ascii_hexdigit());
    if hashed {
        return id.to_owned();
    }
    // FNV-1a, 64 bits, then one round of mixing (splitmix64's finish).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    format!("#{h:016x}")
}

/// Whether `e` is one use of a skill or hook (counted, like a call).
fn is_use(e: &Evidence) -> bool {
    e.capability.is_some() && matches!(e.kind, EvidenceKind::SkillInvoked | EvidenceKind::HookFired)
}

/// Adds `count` uses of one kind (`key`: its source and what the use
/// was) to `counted`, which keeps the newest reading of each kind, without
/// the id of any one use.
fn count_uses<K: Ord>(
    counted: &mut BTreeMap<K, (u32, Evidence)>,
    key: K,
    count: u32,
    mut evidence: Evidence,
) {
    evidence.connection_id = None;
    match counted.get_mut(&key) {
        Some((n, newest)) => {
            *n = n.saturating_add(count);
            if evidence.at > newest.at {
                *newest = evidence;
            }
        }
        None => {
            counted.insert(key, (count, evidence));
        }
    }
}

/// What one harness session's records say so far.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    /// The harness.
    pub agent_kind: String,
    /// Its own session id.
    pub harness_session: String,
    /// The project, where a record said.
    pub project: Option<String>,
    /// The harness's version, where a record said.
    pub version: Option<String>,
    /// The first record's time.
    pub first_at: Timestamp,
    /// The last record's time.
    pub last_at: Timestamp,
    /// The files its records came from (as shown, `~/…`).
    pub files: BTreeSet<String>,
    /// The roles of those files (`transcript`, `mcp_log`, …).
    roles: BTreeSet<String>,
    servers: Vec<NamedServer>,
    /// The earliest of each fact.
    facts: HashSet<Fact>,
    /// role → call id → the call, at most [`MAX_CALL_IDS`] in all.
    calls: BTreeMap<String, HashMap<String, Call>>,
    /// How many calls `calls` holds.
    call_ids: usize,
    /// Calls without an id (or past the bound), counted per (role, server, tool).
    counted: BTreeMap<(String, String, String), Counted>,
    /// role → use id → one use of a skill or hook (its earliest time and
    /// the index of its kind in `use_kinds`), at most [`MAX_CALL_IDS`] in all.
    uses: BTreeMap<String, HashMap<String, (Timestamp, u32)>>,
    /// How many uses `uses` holds.
    use_ids: usize,
    /// Each kind of use, once (time 0, no id), and its index.
    use_kinds: Vec<Evidence>,
    use_kind_index: HashMap<UseKind, u32>,
    /// Uses without an id (or past the bound), counted per (role, kind of
    /// use): the count and the newest of them.
    uses_counted: BTreeMap<(String, String), (u32, Evidence)>,
}

impl SessionFacts {
    /// Nothing yet for `harness_session` of `agent_kind`.
    pub fn new(agent_kind: &str, harness_session: &str) -> Self {
        SessionFacts {
            agent_kind: agent_kind.to_owned(),
            harness_session: harness_session.to_owned(),
            project: None,
            version: None,
            first_at: Timestamp(0),
            last_at: Timestamp(0),
            files: BTreeSet::new(),
            roles: BTreeSet::new(),
            servers: Vec::new(),
            facts: HashSet::new(),
            calls: BTreeMap::new(),
            call_ids: 0,
            counted: BTreeMap::new(),
            uses: BTreeMap::new(),
            use_ids: 0,
            use_kinds: Vec::new(),
            use_kind_index: HashMap::new(),
            uses_counted: BTreeMap::new(),
        }
    }

    /// The Tether session id.
    pub fn session_id(&self) -> String {
        session_id(&self.agent_kind, &self.harness_session)
    }

    /// A record of the session, in a file of `role`, that says only when
    /// it was written.
    pub fn dated(&mut self, role: &str, at: Timestamp) {
        self.read_role(role);
        self.saw(at);
    }

    fn read_role(&mut self, role: &str) {
        if !self.roles.contains(role) {
            self.roles.insert(role.to_owned());
        }
    }

    /// Whether only files of `server_logs` (a harness's own per-server MCP
    /// logs, [`RecordSource::server_log`]) show the session: a health
    /// check of the harness's (`claude mcp list`), no agent session.
    ///
    /// [`RecordSource::server_log`]: tether_core::records::RecordSource::server_log
    pub fn only_in(&self, server_logs: &[&str]) -> bool {
        !self.roles.is_empty() && self.roles.iter().all(|r| server_logs.contains(&r.as_str()))
    }

    fn saw(&mut self, at: Timestamp) {
        if at.0 > 0 {
            self.first_at = if self.first_at.0 == 0 {
                at
            } else {
                self.first_at.min(at)
            };
            self.last_at = self.last_at.max(at);
        }
    }

    fn describe(&mut self, project: Option<String>, version: Option<String>) {
        // The smallest value wins, so the order files are read in never matters.
        for (slot, value) in [(&mut self.project, project), (&mut self.version, version)] {
            if let Some(value) = value
                && slot.as_ref().is_none_or(|cur| &value < cur)
            {
                *slot = Some(value);
            }
        }
    }

    fn name(&mut self, server: NamedServer) {
        if !self.servers.iter().any(|s| s.name == server.name) {
            self.servers.push(server);
        }
    }

    fn fact(&mut self, evidence: Evidence) {
        let fact = Fact(evidence);
        match self.facts.get(&fact) {
            Some(kept) if kept.0.at <= fact.0.at => {}
            Some(_) => {
                self.facts.replace(fact);
            }
            None if self.facts.len() < MAX_FACTS => {
                self.facts.insert(fact);
            }
            None => {}
        }
    }

    /// Adds one reading, from a file of `role` shown as `file`.
    pub fn add(&mut self, role: &str, file: &str, reading: RecordReading) {
        if !self.files.contains(file) {
            self.files.insert(file.to_owned());
        }
        self.read_role(role);
        self.saw(reading.at.unwrap_or(Timestamp(0)));
        self.saw(reading.until.unwrap_or(Timestamp(0)));
        self.describe(reading.project, reading.version);
        for server in reading.servers {
            self.name(server);
        }
        for evidence in reading.evidence {
            if matches!(
                evidence.kind,
                EvidenceKind::ToolCallObserved | EvidenceKind::ToolCallRefused
            ) {
                self.add_call(role, evidence);
            } else if is_use(&evidence) {
                self.add_use(role, evidence);
            } else {
                self.fact(evidence);
            }
        }
    }

    fn add_call(&mut self, role: &str, mut evidence: Evidence) {
        if let Some(id) = evidence.connection_id.take().map(|id| id_key(&id)) {
            if let Some(call) = self.calls.get_mut(role).and_then(|m| m.get_mut(&id)) {
                call.merge(evidence);
                return;
            }
            if self.call_ids < MAX_CALL_IDS {
                let mut call = Call::default();
                call.merge(evidence);
                self.keep_call(role, id, call);
                return;
            }
        }
        // No id (or past the bound): counted, where it names its tool.
        self.count_call(role, Call::of(evidence));
    }

    /// Keeps `call`, new, by its id.
    fn keep_call(&mut self, role: &str, id: String, call: Call) {
        match self.calls.get_mut(role) {
            Some(calls) => {
                calls.insert(id, call);
            }
            None => {
                self.calls
                    .insert(role.to_owned(), HashMap::from([(id, call)]));
            }
        }
        self.call_ids += 1;
    }

    /// Counts `call` without its id, where it names its tool.
    fn count_call(&mut self, role: &str, call: Call) {
        if let (Some(server), Some(tool)) = (&call.server, &call.tool) {
            self.counted
                .entry((role.to_owned(), server.clone(), tool.clone()))
                .or_default()
                .add(&call);
        }
    }

    fn add_use(&mut self, role: &str, evidence: Evidence) {
        if let Some(id) = evidence.connection_id.clone().map(|id| id_key(&id)) {
            let kept = self
                .uses
                .get(role)
                .and_then(|m| m.get(&id))
                .map(|(at, _)| *at);
            match kept {
                // The same use read again: its earliest reading stands.
                Some(kept) if evidence.at < kept => {
                    let use_ = self.intern_use(evidence);
                    if let Some(slot) = self.uses.get_mut(role).and_then(|m| m.get_mut(&id)) {
                        *slot = use_;
                    }
                    return;
                }
                Some(_) => return,
                None if self.use_ids < MAX_CALL_IDS => {
                    let use_ = self.intern_use(evidence);
                    match self.uses.get_mut(role) {
                        Some(uses) => {
                            uses.insert(id, use_);
                        }
                        None => {
                            self.uses
                                .insert(role.to_owned(), HashMap::from([(id, use_)]));
                        }
                    }
                    self.use_ids += 1;
                    return;
                }
                None => {}
            }
        }
        let kind = capability_key(&evidence).unwrap_or_default();
        count_uses(&mut self.uses_counted, (role.to_owned(), kind), 1, evidence);
    }

    /// A use's time and the index of its kind (added where new).
    fn intern_use(&mut self, mut evidence: Evidence) -> (Timestamp, u32) {
        let at = evidence.at;
        evidence.at = Timestamp(0);
        evidence.connection_id = None;
        let kind = UseKind(evidence);
        if let Some(index) = self.use_kind_index.get(&kind) {
            return (at, *index);
        }
        let index = u32::try_from(self.use_kinds.len()).unwrap_or(u32::MAX);
        self.use_kinds.push(kind.0.clone());
        self.use_kind_index.insert(kind, index);
        (at, index)
    }

    /// Adds what `other` (the same session, read elsewhere: another file,
    /// another thread) says.
    pub fn merge(&mut self, other: SessionFacts) {
        self.files.extend(other.files);
        self.roles.extend(other.roles);
        self.saw(other.first_at);
        self.saw(other.last_at);
        self.describe(other.project, other.version);
        for server in other.servers {
            self.name(server);
        }
        for fact in other.facts {
            self.fact(fact.0);
        }
        for (role, calls) in other.calls {
            for (id, call) in calls {
                let room = self.call_ids < MAX_CALL_IDS;
                match self.calls.get_mut(&role).and_then(|m| m.get_mut(&id)) {
                    Some(mine) => mine.absorb(call),
                    None if room => self.keep_call(&role, id, call),
                    None => self.count_call(&role, call),
                }
            }
        }
        for (role, uses) in &other.uses {
            for (id, use_) in uses {
                if let Some(evidence) = use_at(&other.use_kinds, *use_, Some(id.clone())) {
                    self.add_use(role, evidence);
                }
            }
        }
        for (key, (count, evidence)) in other.uses_counted {
            count_uses(&mut self.uses_counted, key, count, evidence);
        }
        for (key, counted) in other.counted {
            self.counted.entry(key).or_default().merge(counted);
        }
    }

    /// Server rows by whether it is only named (the harness's own rows).
    pub fn servers(&self) -> &[NamedServer] {
        &self.servers
    }

    /// The evidence the session's history is built from: its facts (the
    /// earliest of each, oldest first), then one `tool_call_observed` per
    /// source and tool carrying that source's counts.
    pub fn evidence(&self) -> Vec<Evidence> {
        let mut per_tool: BTreeMap<(&str, &str, &str), Counted> = BTreeMap::new();
        for ((role, server, tool), counted) in &self.counted {
            per_tool.insert(
                (role.as_str(), server.as_str(), tool.as_str()),
                counted.clone(),
            );
        }
        for (role, call) in self
            .calls
            .iter()
            .flat_map(|(role, calls)| calls.values().map(move |c| (role, c)))
        {
            let (Some(server), Some(tool)) = (&call.server, &call.tool) else {
                // A result whose call was never seen names no tool.
                continue;
            };
            per_tool
                .entry((role.as_str(), server.as_str(), tool.as_str()))
                .or_default()
                .add(call);
        }
        let mut out: Vec<Evidence> = self.facts.iter().map(|f| f.0.clone()).collect();
        out.sort_by_cached_key(|e| (e.at, fact_key(e)));
        for ((_, server, tool), counted) in per_tool {
            let Counted {
                calls,
                failed,
                unknown,
                failure,
                refused,
                at,
            } = counted;
            if calls > 0 {
                let mut ev = Evidence::new(EvidenceKind::ToolCallObserved, at).server(server);
                ev.tool = Some(tool.to_owned());
                // Some call is known to have succeeded, or (none did) some
                // is known to have failed; where no outcome is known, none
                // is said.
                ev.ok = (unknown < calls).then_some(calls > failed.saturating_add(unknown));
                ev.calls = Some(calls);
                ev.failed_calls = Some(failed);
                ev.unknown_calls = Some(unknown);
                ev.reason_code = failure.filter(|_| failed > 0);
                out.push(ev);
            }
            // One per reason, each with its count: a refusal is never a call.
            for (code, n) in refused {
                let mut ev = Evidence::new(EvidenceKind::ToolCallRefused, at)
                    .server(server)
                    .tool(tool);
                ev.reason_code = Some(code);
                ev.calls = Some(n);
                out.push(ev);
            }
        }
        out.extend(self.use_evidence());
        for ev in &mut out {
            ev.provenance = Provenance::HarnessRecord;
        }
        out
    }

    /// One piece of evidence per source and kind of use (a skill or hook,
    /// and how it ended), carrying how many: a skill's outcome is its
    /// call's result, read by the call's id.
    fn use_evidence(&self) -> Vec<Evidence> {
        let mut per_kind: BTreeMap<(&str, String), (u32, Evidence)> = BTreeMap::new();
        // The uses of one role, kind and call outcome: how many, and the
        // newest time.
        let mut groups: BTreeMap<(&str, u32, Option<bool>), (u32, Timestamp)> = BTreeMap::new();
        for (role, uses) in &self.uses {
            let calls = self.calls.get(role);
            for (id, (at, kind)) in uses {
                let unended = self
                    .use_kinds
                    .get(*kind as usize)
                    .and_then(|e| e.capability.as_deref())
                    .is_some_and(|c| c.outcome.is_none());
                let ok = if unended {
                    calls.and_then(|c| c.get(id)).and_then(|c| c.ok)
                } else {
                    None
                };
                let group = groups.entry((role.as_str(), *kind, ok)).or_insert((0, *at));
                group.0 = group.0.saturating_add(1);
                group.1 = group.1.max(*at);
            }
        }
        for ((role, kind, ok), (count, at)) in groups {
            let Some(mut evidence) = use_at(&self.use_kinds, (at, kind), None) else {
                continue;
            };
            if let Some(ok) = ok
                && let Some(cap) = evidence.capability.as_deref_mut()
            {
                cap.outcome = Some(tether_core::capability::outcome_of_ok(ok));
            }
            let kind = capability_key(&evidence).unwrap_or_default();
            count_uses(&mut per_kind, (role, kind), count, evidence);
        }
        for ((role, kind), (count, evidence)) in &self.uses_counted {
            count_uses(
                &mut per_kind,
                (role.as_str(), kind.clone()),
                *count,
                evidence.clone(),
            );
        }
        per_kind
            .into_values()
            .map(|(count, mut evidence)| {
                evidence.calls = Some(count);
                evidence
            })
            .collect()
    }
}

/// The attempt id a session built from records alone gets.
pub const RECORDS_ATTEMPT: &str = "records";

/// The session's history: `existing` (what a store holds for it, from
/// `tether collect` or an earlier import) with the records merged into its
/// current attempt, or a new history whose one attempt has a row for each
/// server today's configuration gives the harness (`configured`,
/// provenance `current_config`: best effort) and each server the records
/// name. Every string passes the sanitizer, with `configured`'s secrets.
pub fn history_of(
    facts: &SessionFacts,
    observer: Option<&dyn TransportObserver>,
    configured: &[ServerSpec],
    existing: Option<AttachmentHistory>,
) -> Result<AttachmentHistory, tether_core::reducer::Rejection> {
    let id = facts.session_id();
    let kind = facts.agent_kind.as_str();
    let ctx = PlanContext {
        agent_kind: kind.to_owned(),
        drive_mode: DriveMode::Passthrough,
        capabilities: Default::default(),
        strict: false,
    };
    let plan = plan(observer, configured, &ctx);
    let scrubber = plan.scrubber();
    let at = if facts.first_at.0 > 0 {
        facts.first_at
    } else {
        Timestamp(1)
    };
    let fresh = existing.as_ref().is_none_or(|h| h.current().is_none());
    let mut history = existing.unwrap_or_else(|| AttachmentHistory::new(kind, id.as_str()));
    let attempt_id = history
        .current_attempt_id
        .clone()
        .unwrap_or_else(|| RECORDS_ATTEMPT.to_owned());
    let execution = history
        .current()
        .map(|a| a.execution_id.clone())
        .unwrap_or_else(|| RECORDS_ATTEMPT.to_owned());
    let start = AttemptStart {
        attempt_id: attempt_id.as_str().into(),
        owner: Owner {
            task: history.task_id.as_str().into(),
            session: id.as_str().into(),
            execution: execution.as_str().into(),
        },
        agent_kind: kind.to_owned(),
        agent_id: None,
        agent_profile_id: None,
        trigger: Trigger::HarnessSession,
        at,
        servers: plan.rows_named(&plan.row_names()),
    };
    // The current attempt's key, or a new attempt (a history's current
    // attempt begun again changes nothing).
    let key = begin_attempt(&mut history, &start)?;
    let _ = reduce(
        &mut history,
        &HistoryEvent::Describe {
            key: key.clone(),
            project: facts.project.clone(),
            agent_version: facts.version.clone(),
        },
    );
    let accepted =
        Evidence::new(EvidenceKind::SessionAccepted, at).provenance(Provenance::HarnessRecord);
    let mut events = vec![accepted];
    // How a name in a record finds its row: the plan's names for a new
    // history, a stored history's rows as they are shown.
    let mut rows = if fresh {
        plan.row_names()
    } else {
        RowNames::shown_as_is(
            history
                .current()
                .map(|a| {
                    a.servers
                        .iter()
                        .map(|r| r.name.as_str())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default(),
        )
    };
    for server in &facts.servers {
        if rows.resolve(&server.name).is_none() {
            // A new row, its name sanitized and made unique.
            let shown = rows.add_unique(&server.name);
            let _ = reduce(
                &mut history,
                &HistoryEvent::AddRow {
                    key: key.clone(),
                    name: shown,
                    transport: server.transport.clone(),
                    at,
                    provenance: ProvenanceCode::HarnessRecord,
                },
            );
        }
    }
    events.extend(facts.evidence());
    for evidence in events {
        let evidence = sanitize_evidence(&evidence, &scrubber, &rows);
        let _ = reduce(
            &mut history,
            &HistoryEvent::ObserveSanitized {
                key: key.clone(),
                evidence,
            },
        );
    }
    Ok(history)
}

/// A hash of the rows today's configuration gives `kind`'s sessions (as
/// [`history_of`] starts a new history from them: sanitized, no secrets),
/// so a summary kept with another configuration is not used.
pub fn configured_stamp(
    kind: &str,
    observer: Option<&dyn TransportObserver>,
    configured: &[ServerSpec],
) -> u64 {
    let ctx = PlanContext {
        agent_kind: kind.to_owned(),
        drive_mode: DriveMode::Passthrough,
        capabilities: Default::default(),
        strict: false,
    };
    let rows = plan(observer, configured, &ctx).rows();
    crate::stamp::fnv1a(format!("{rows:?}").as_bytes())
}

/// Whether two histories say the same (their revisions aside).
pub fn same(a: &AttachmentHistory, b: &AttachmentHistory) -> bool {
    let mut b = b.clone();
    b.revision = a.revision;
    *a == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::capability::CapabilityEvent;
    use tether_core::vocab::UseOutcome;

    fn call(id: Option<&str>, tool: Option<&str>, ok: Option<bool>, at: u64) -> Evidence {
        let mut e = Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(at));
        e.server = tool.map(|_| "time".to_owned());
        e.tool = tool.map(str::to_owned);
        e.connection_id = id.map(str::to_owned);
        e.ok = ok;
        e
    }

    fn reading(evidence: Vec<Evidence>) -> RecordReading {
        let mut reading = RecordReading::default();
        reading.at = Some(Timestamp(5));
        reading.evidence = evidence;
        reading
    }

    fn counts(facts: &SessionFacts) -> Vec<(Option<u32>, Option<u32>)> {
        facts
            .evidence()
            .iter()
            .filter(|e| e.kind == EvidenceKind::ToolCallObserved)
            .map(|e| (e.calls, e.failed_calls))
            .collect()
    }

    #[test]
    fn a_call_written_twice_counts_once_and_a_failure_stays() {
        let mut f = SessionFacts::new("claude", "s");
        f.add(
            "t",
            "a",
            reading(vec![call(Some("1"), Some("get"), None, 1)]),
        );
        f.add(
            "t",
            "a",
            reading(vec![call(Some("1"), None, Some(false), 2)]),
        );
        f.add(
            "t",
            "a",
            reading(vec![call(Some("1"), Some("get"), None, 1)]),
        );
        f.add(
            "t",
            "a",
            reading(vec![call(Some("2"), Some("get"), Some(true), 3)]),
        );
        assert_eq!(counts(&f), [(Some(2), Some(1))]);
    }

    #[test]
    fn two_sources_seeing_the_same_calls_give_the_larger_count() {
        let mut f = SessionFacts::new("claude", "s");
        f.add(
            "transcript",
            "a",
            reading(vec![call(Some("1"), Some("get"), Some(true), 1)]),
        );
        f.add(
            "log",
            "b",
            reading(vec![call(None, Some("get"), Some(true), 1)]),
        );
        // One evidence per source; the reducer keeps the larger.
        assert_eq!(counts(&f), [(Some(1), Some(0)), (Some(1), Some(0))]);
    }

    fn refused(id: Option<&str>, code: ReasonCode, at: u64) -> Evidence {
        let mut e = Evidence::new(EvidenceKind::ToolCallRefused, Timestamp(at));
        e.connection_id = id.map(str::to_owned);
        e.reason_code = Some(code);
        e
    }

    fn refusals(facts: &SessionFacts) -> Vec<(String, Option<u32>)> {
        facts
            .evidence()
            .iter()
            .filter(|e| e.kind == EvidenceKind::ToolCallRefused)
            .map(|e| {
                (
                    e.reason_code
                        .as_ref()
                        .map(|r| r.as_str().to_owned())
                        .unwrap_or_default(),
                    e.calls,
                )
            })
            .collect()
    }

    #[test]
    fn a_call_and_its_refusal_by_id_are_one_refusal_and_no_call() {
        // Claude writes the call (tool_use), then a failed result, then the
        // refusal; any order, any file: one refused call, never a call.
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            let records = [
                call(Some("1"), Some("get"), None, 1),
                call(Some("1"), None, Some(false), 2),
                refused(Some("1"), ReasonCode::PermissionDenied, 2),
            ];
            let mut f = SessionFacts::new("claude", "s");
            for i in order {
                f.add("t", "a", reading(vec![records[i].clone()]));
            }
            assert_eq!(counts(&f), [], "{order:?}");
            assert_eq!(refusals(&f), [("permission_denied".to_owned(), Some(1))]);
        }
    }

    #[test]
    fn refusals_count_per_reason_beside_the_calls_that_ran() {
        let mut f = SessionFacts::new("codex", "s");
        let mut failed = call(Some("3"), Some("get"), Some(false), 3);
        failed.reason_code = Some(ReasonCode::ToolError);
        f.add(
            "t",
            "a",
            reading(vec![
                call(Some("1"), Some("get"), None, 1),
                refused(Some("1"), ReasonCode::ApprovalRequired, 1),
                call(Some("2"), Some("get"), Some(true), 2),
                failed,
                {
                    let mut e = refused(None, ReasonCode::ApprovalRequired, 4);
                    e.server = Some("time".to_owned());
                    e.tool = Some("get".to_owned());
                    e
                },
            ]),
        );
        assert_eq!(counts(&f), [(Some(2), Some(1))]);
        assert_eq!(refusals(&f), [("approval_required".to_owned(), Some(2))]);
        let observed = f
            .evidence()
            .into_iter()
            .find(|e| e.kind == EvidenceKind::ToolCallObserved)
            .expect("the calls that ran");
        assert_eq!(observed.reason_code, Some(ReasonCode::ToolError));
    }

    #[test]
    fn merging_what_two_threads_read_is_reading_it_all() {
        let a = vec![
            call(Some("1"), Some("get"), None, 1),
            call(None, Some("get"), Some(false), 2),
        ];
        let b = vec![
            call(Some("1"), None, Some(true), 3),
            call(Some("2"), Some("get"), None, 4),
        ];
        let mut one = SessionFacts::new("claude", "s");
        one.add("t", "f1", reading(a.clone()));
        one.add("t", "f2", reading(b.clone()));
        let mut left = SessionFacts::new("claude", "s");
        left.add("t", "f1", reading(a));
        let mut right = SessionFacts::new("claude", "s");
        right.add("t", "f2", reading(b));
        left.merge(right);
        assert_eq!(counts(&one), counts(&left));
        assert_eq!(one.files, left.files);
        assert_eq!(one.evidence(), left.evidence());
    }

    fn hook_run(id: Option<&str>, event: &str, ended: Option<UseOutcome>, at: u64) -> Evidence {
        let mut hook = CapabilityEvent::hook("PreToolUse:Read", Some(event));
        if let Some(outcome) = ended {
            hook = hook.ended(outcome, None);
        }
        let mut e = Evidence::new(EvidenceKind::HookFired, Timestamp(at));
        e.capability = Some(Box::new(hook));
        e.connection_id = id.map(str::to_owned);
        e
    }

    /// (count, time, outcome) of each kind of use.
    fn uses(facts: &SessionFacts) -> Vec<(Option<u32>, u64, Option<UseOutcome>)> {
        facts
            .evidence()
            .iter()
            .filter(|e| e.kind == EvidenceKind::HookFired)
            .map(|e| {
                let outcome = e.capability.as_ref().and_then(|c| c.outcome.clone());
                (e.calls, e.at.0, outcome)
            })
            .collect()
    }

    #[test]
    fn a_use_read_twice_counts_once_and_uses_of_one_kind_count_together() {
        let records = [
            hook_run(Some("h1"), "PreToolUse", Some(UseOutcome::Succeeded), 5),
            // The same run again, read earlier elsewhere: once.
            hook_run(Some("h1"), "PreToolUse", Some(UseOutcome::Succeeded), 2),
            hook_run(Some("h2"), "PreToolUse", Some(UseOutcome::Succeeded), 9),
            hook_run(Some("h3"), "PreToolUse", Some(UseOutcome::Failed), 4),
            hook_run(None, "PreToolUse", Some(UseOutcome::Failed), 7),
        ];
        let mut one = SessionFacts::new("claude", "s");
        for record in records.clone() {
            one.add("t", "a", reading(vec![record]));
        }
        // Two kinds (how each ended); of each, how many and the newest.
        let mut want = vec![
            (Some(2), 9, Some(UseOutcome::Succeeded)),
            (Some(2), 7, Some(UseOutcome::Failed)),
        ];
        let mut got = uses(&one);
        got.sort_by_key(|u| u.1);
        want.sort_by_key(|u| u.1);
        assert_eq!(got, want);
        // Read on two threads and merged, in either order: the same.
        for split in [1, 2, 4] {
            let (left_records, right_records) = records.split_at(split);
            let mut left = SessionFacts::new("claude", "s");
            for record in left_records {
                left.add("t", "a", reading(vec![record.clone()]));
            }
            let mut right = SessionFacts::new("claude", "s");
            for record in right_records {
                right.add("t", "b", reading(vec![record.clone()]));
            }
            let mut a = left.clone();
            a.merge(right.clone());
            right.merge(left);
            assert_eq!(a.evidence(), one.evidence(), "split at {split}");
            assert_eq!(
                right.evidence(),
                one.evidence(),
                "split at {split}, reversed"
            );
        }
    }

    #[test]
    fn a_use_without_an_outcome_takes_its_calls() {
        // A skill's use says no outcome; its call's result (by the same id) does.
        let mut f = SessionFacts::new("claude", "s");
        f.add(
            "t",
            "a",
            reading(vec![
                hook_run(Some("c1"), "PreToolUse", None, 1),
                call(Some("c1"), Some("get"), Some(false), 2),
                hook_run(Some("c2"), "PreToolUse", None, 3),
                hook_run(Some("c3"), "PreToolUse", None, 4),
            ]),
        );
        let mut got = uses(&f);
        got.sort_by_key(|u| u.1);
        assert_eq!(
            got,
            [(Some(1), 1, Some(UseOutcome::Failed)), (Some(2), 4, None)]
        );
    }

    #[test]
    fn the_same_fact_later_is_kept_once_at_its_first_time() {
        let mut f = SessionFacts::new("claude", "s");
        for at in [9, 3, 7] {
            let e = Evidence::new(EvidenceKind::AgentReported, Timestamp(at)).server("time");
            f.add("t", "a", reading(vec![e]));
        }
        let facts = f.evidence();
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].at, Timestamp(3));
    }
}
