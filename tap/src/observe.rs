//! The observer: one thread that reads the copies the proxy hands over
//! (never on the traffic's path), turns each finished request into a
//! metadata-only [`TapRecord`], and lands what it proves in the hub.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use serde::Serialize;
use tether_collect::live::LiveSessions;
use tether_core::last_mile::{Attribution, Known, Listed, Rules, attribute};
use tether_core::model::{Evidence, ProvenanceCode, Timestamp};
use tether_core::model_tap::ModelCaller;
use tether_core::vocab::{EvidenceKind, Provenance};
use tether_hub::{EvidenceSink, Hub};

use crate::api::Api;
use crate::read::{CallReader, RequestFacts, Unread, read_request};
use crate::{Harnesses, Stats};

/// The most requests the observer follows at once; past it the oldest is
/// given up (recorded as dropped).
pub const MAX_OPEN: usize = 4096;
/// The most recent records kept for [`Tap::recent`](crate::Tap::recent).
pub const MAX_RECENT: usize = 256;
/// The most (session, tool) definition hashes remembered, to say when a
/// definition changed between requests; past it they are forgotten.
pub const MAX_HASHES: usize = 65_536;
/// The most sessions whose known servers and listings are kept at once;
/// past it they are read again from the hub.
pub const MAX_KNOWN: usize = 1024;

/// What the proxy hands the observer, by request.
pub(crate) enum Seen {
    Begin {
        id: u64,
        at: Timestamp,
        api: Option<Api>,
        caller: Option<(String, ModelCaller)>,
    },
    /// The request's body, whole (its chunks, shared, not copied), or why
    /// it is not there. `path` has no query (a key can ride there).
    Request {
        id: u64,
        path: String,
        body: Result<Vec<Bytes>, Unread>,
    },
    Response {
        id: u64,
        status: u16,
        content_type: Option<String>,
        encoding: Option<String>,
    },
    Chunk {
        id: u64,
        bytes: Bytes,
    },
    /// Everything sent before it is read: answer on the channel.
    Settle(tokio::sync::oneshot::Sender<()>),
    End {
        id: u64,
        outcome: &'static str,
        request_bytes: u64,
        response_bytes: u64,
        lost: bool,
        elapsed_ms: u64,
    },
}

/// One tool in a record: its model-side name, and the server and tool it
/// stands for where the session's listing, the servers known to the
/// session or today's configuration, or the harness's naming alone say
/// ([`tether_core::last_mile::attribute`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TapTool {
    /// As the model got it.
    pub name: String,
    /// The MCP server it came from, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The server's tool, where known: as the server lists it where the
    /// session's listing was seen (`by: listing`), else as the model got it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// How the server was read (`listing`, `known_server`, `naming`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<&'static str>,
    /// Shaped like an MCP tool's name by the harness's naming, its server
    /// not resolved (no known server fits, and the name alone does not say
    /// which): never guessed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unresolved: bool,
    /// The first 16 hex digits of the SHA-256 of its definition as sent
    /// (offered tools only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// What the tap keeps of one request: names, hashes, counts and times.
/// No message, prompt, description, schema, argument, result or header
/// value has a field here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TapRecord {
    /// When the request arrived.
    pub at: Timestamp,
    /// The API it spoke (`anthropic_messages`, …); absent for a path the
    /// tap passes unread (a token count, a model list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<&'static str>,
    /// The harness that sent it, where its plugin recognised it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_kind: Option<String>,
    /// The harness's version, from its user agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harness_version: Option<String>,
    /// The Tether session it was recorded on (`KIND:ID`; `KIND:tap-…` for a
    /// harness that sends no session id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The model it asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The upstream's status, or the tap's own (`502`, `504`, `413`).
    pub status: u16,
    /// `completed`, or how the exchange ended otherwise (`upstream_error`,
    /// `idle_timeout`, `max_duration`, `client_gone`, `too_large`, …).
    pub outcome: &'static str,
    /// The tools the request offered the model, in order.
    pub offered: Vec<TapTool>,
    /// Tools it named behind the harness's tool search, or sent with
    /// `defer_loading`: in the thread, not yet model-visible.
    pub deferred: Vec<TapTool>,
    /// The tools the model's answer called, in order.
    pub called: Vec<TapTool>,
    /// Offered tools whose definition differs from the session's previous
    /// request.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// What was not read, and why (`request: too_large`, `response: encoding`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<String>,
    /// Bytes of the request body and the response body, as passed.
    pub request_bytes: u64,
    /// See `request_bytes`.
    pub response_bytes: u64,
    /// From arrival to the response's last byte (or the end), in ms.
    pub elapsed_ms: u64,
}

struct Open {
    at: Timestamp,
    api: Option<Api>,
    caller: Option<(String, ModelCaller)>,
    facts: Option<Result<RequestFacts, Unread>>,
    reader: Option<CallReader>,
    status: u16,
}

/// What one session is known to have: its servers and listings, read from
/// its history at `revision`, and the rows the tap added to its attempt.
struct SessionKnown {
    revision: u64,
    attempt: Option<String>,
    known: Known,
    rows: HashSet<String>,
}

pub(crate) struct Observer {
    pub harnesses: Arc<Harnesses>,
    pub live: Option<LiveSessions>,
    hub: Option<Arc<Hub>>,
    configured: HashMap<String, Vec<String>>,
    known: HashMap<String, SessionKnown>,
    pub run: String,
    pub stats: Arc<Stats>,
    pub records: tokio::sync::broadcast::Sender<TapRecord>,
    pub recent: Arc<Mutex<VecDeque<TapRecord>>>,
    open: HashMap<u64, Open>,
    order: VecDeque<u64>,
    hashes: HashMap<(String, String), String>,
}

impl Observer {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        harnesses: Arc<Harnesses>,
        live: Option<LiveSessions>,
        hub: Option<Arc<Hub>>,
        configured: HashMap<String, Vec<String>>,
        run: String,
        stats: Arc<Stats>,
        records: tokio::sync::broadcast::Sender<TapRecord>,
        recent: Arc<Mutex<VecDeque<TapRecord>>>,
    ) -> Self {
        Observer {
            harnesses,
            live,
            hub,
            configured,
            known: HashMap::new(),
            run,
            stats,
            records,
            recent,
            open: HashMap::new(),
            order: VecDeque::new(),
            hashes: HashMap::new(),
        }
    }

    /// Reads until every sender is gone.
    pub fn run(mut self, seen: Receiver<Seen>) {
        while let Ok(s) = seen.recv() {
            self.take(s);
        }
    }

    fn take(&mut self, seen: Seen) {
        match seen {
            Seen::Begin {
                id,
                at,
                api,
                caller,
            } => {
                self.open.insert(
                    id,
                    Open {
                        at,
                        api,
                        caller,
                        facts: None,
                        reader: None,
                        status: 0,
                    },
                );
                self.order.push_back(id);
                while self.order.len() > MAX_OPEN {
                    if let Some(old) = self.order.pop_front()
                        && self.open.remove(&old).is_some()
                    {
                        self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Seen::Request { id, path, body } => {
                if let Some(open) = self.open.get_mut(&id)
                    && let Some(api) = open.api
                {
                    open.facts = Some(body.and_then(|chunks| {
                        let whole: Vec<u8> = chunks.concat();
                        read_request(api, &path, &whole).ok_or(Unread::NotJson)
                    }));
                }
            }
            Seen::Response {
                id,
                status,
                content_type,
                encoding,
            } => {
                if let Some(open) = self.open.get_mut(&id) {
                    open.status = status;
                    if let Some(api) = open.api {
                        open.reader = Some(CallReader::new(
                            api,
                            content_type.as_deref(),
                            encoding.as_deref(),
                        ));
                    }
                }
            }
            Seen::Settle(done) => {
                let _ = done.send(());
            }
            Seen::Chunk { id, bytes } => {
                if let Some(reader) = self.open.get_mut(&id).and_then(|o| o.reader.as_mut()) {
                    reader.feed(&bytes);
                }
            }
            Seen::End {
                id,
                outcome,
                request_bytes,
                response_bytes,
                lost,
                elapsed_ms,
            } => {
                if let Some(open) = self.open.remove(&id) {
                    self.order.retain(|o| *o != id);
                    let record = self.record(
                        open,
                        outcome,
                        lost,
                        (request_bytes, response_bytes),
                        elapsed_ms,
                    );
                    self.keep(record);
                }
            }
        }
    }

    fn record(
        &mut self,
        open: Open,
        outcome: &'static str,
        lost: bool,
        (request_bytes, response_bytes): (u64, u64),
        elapsed_ms: u64,
    ) -> TapRecord {
        let (facts, called, unread) = read_of(open.facts, open.reader, open.api, lost);
        if !unread.is_empty() {
            self.stats.unread.fetch_add(1, Ordering::Relaxed);
        }
        let (kind, caller) = match open.caller {
            Some((kind, caller)) => (Some(kind), caller),
            None => (None, ModelCaller::default()),
        };
        let harness_session = caller
            .session
            .clone()
            .unwrap_or_else(|| format!("tap-{}", self.run));
        let rules = kind
            .as_deref()
            .and_then(|k| self.harnesses.rules(k, caller.version.as_deref()));
        let session = kind
            .as_deref()
            .map(|k| tether_core::records::session_id(k, &harness_session));
        // The session's attempt is begun (or gone on with) before its
        // names are read: what the store holds of it is known then.
        let sink = match (&kind, open.api) {
            (Some(kind), Some(_)) => self.sink(kind, &harness_session, open.at),
            _ => None,
        };
        let empty = SessionKnown {
            revision: 0,
            attempt: None,
            known: Known::default(),
            rows: HashSet::new(),
        };
        let known = match (&kind, &session, &rules) {
            (Some(kind), Some(session), Some(rules)) => {
                self.session_known(kind, session, rules, sink.as_ref())
            }
            _ => &empty,
        };
        let tool =
            |name: &str, hash: Option<String>| tap_tool(rules.as_ref(), &known.known, name, hash);
        let facts = facts.unwrap_or_default();
        let offered: Vec<TapTool> = facts
            .offered
            .iter()
            .filter(|o| !o.deferred)
            .map(|o| tool(&o.name, Some(o.hash.clone())))
            .collect();
        let deferred: Vec<TapTool> = facts
            .offered
            .iter()
            .filter(|o| o.deferred)
            .map(|o| tool(&o.name, Some(o.hash.clone())))
            .chain(facts.named.iter().map(|n| tool(n, None)))
            .collect();
        let called: Vec<TapTool> = called.iter().map(|n| tool(n, None)).collect();
        let changed = match &session {
            Some(session) => self.changed_since(session, &facts),
            None => Vec::new(),
        };
        let record = TapRecord {
            at: open.at,
            api: open.api.map(Api::word),
            agent_kind: kind.clone(),
            harness_version: caller.version.clone(),
            session: session.clone(),
            model: facts.model.as_deref().map(tether_core::sanitize::name),
            status: open.status,
            outcome,
            offered,
            deferred,
            called,
            changed,
            unread,
            request_bytes,
            response_bytes,
            elapsed_ms,
        };
        if let (Some(sink), Some(session)) = (sink, &session) {
            self.publish(&sink, session, &record);
        }
        record
    }

    /// The tools offered in `session` whose definitions changed since it
    /// last offered them (their hashes kept, up to [`MAX_HASHES`]).
    fn changed_since(&mut self, session: &str, facts: &RequestFacts) -> Vec<String> {
        if self.hashes.len() > MAX_HASHES {
            self.hashes.clear();
        }
        let mut changed = Vec::new();
        for o in &facts.offered {
            let key = (session.to_owned(), o.name.clone());
            if let Some(old) = self.hashes.insert(key, o.hash.clone())
                && old != o.hash
            {
                changed.push(tether_core::sanitize::name(&o.name));
            }
        }
        changed
    }

    /// The live attempt of `kind`'s `harness_session`, begun where needed.
    fn sink(&mut self, kind: &str, harness_session: &str, at: Timestamp) -> Option<EvidenceSink> {
        let live = self.live.as_mut()?;
        let sink = live.sink(kind, harness_session, None, at, Provenance::ModelTap);
        let _ = live.take_evicted();
        sink
    }

    /// What `session` is known to have: the servers of every attempt its
    /// history holds (its records', its telemetry's, today's configuration's)
    /// and the tools their listings gave (seen listed, not implied), read
    /// again only when the history changed or a new attempt began.
    fn session_known(
        &mut self,
        kind: &str,
        session: &str,
        rules: &Rules,
        sink: Option<&EvidenceSink>,
    ) -> &SessionKnown {
        let history = self.hub.as_ref().and_then(|hub| hub.latest(session));
        let revision = history.as_ref().map_or(0, |h| h.revision);
        let attempt = sink.map(|s| s.attempt_id().to_owned());
        let fresh = self
            .known
            .get(session)
            .is_some_and(|k| k.revision == revision && k.attempt == attempt);
        if !fresh {
            if self.known.len() >= MAX_KNOWN && !self.known.contains_key(session) {
                self.known.clear();
            }
            let mut servers: Vec<String> = self.configured.get(kind).cloned().unwrap_or_default();
            let mut listings: Vec<(String, Vec<Listed>)> = Vec::new();
            let mut rows = HashSet::new();
            for a in history.iter().flat_map(|h| h.attempts.iter()) {
                let current = attempt.as_deref() == Some(a.attempt_id.as_str());
                for row in &a.servers {
                    if current {
                        rows.insert(row.name.clone());
                    }
                    // A row the tap itself added knows no more than the
                    // name it was read from.
                    let by_tap = row.stages.configured.provenance == Some(ProvenanceCode::ModelTap);
                    if !by_tap && !servers.contains(&row.name) {
                        servers.push(row.name.clone());
                    }
                    let tools: Vec<Listed> = row
                        .tools
                        .iter()
                        .filter(|t| t.listed.is_yes() && t.listed.implied_by.is_none())
                        .map(|t| Listed::new(t.name.clone(), None))
                        .collect();
                    if !tools.is_empty() && !listings.iter().any(|(s, _)| s == &row.name) {
                        listings.push((row.name.clone(), tools));
                    }
                }
            }
            let listings: Vec<(&str, &[Listed])> = listings
                .iter()
                .map(|(s, t)| (s.as_str(), t.as_slice()))
                .collect();
            let mut known = SessionKnown {
                revision,
                attempt: attempt.clone(),
                known: Known::new(rules, servers, &listings),
                rows,
            };
            // Rows the tap added to this attempt and the drain has not
            // folded in yet stay known as added.
            if let Some(old) = self.known.remove(session)
                && old.attempt == attempt
            {
                known.rows.extend(old.rows);
            }
            self.known.insert(session.to_owned(), known);
        }
        &self.known[session]
    }

    /// What the record proves, on its session: each offered or called
    /// tool model-visible, each deferred one in the thread; a server the
    /// model was sent the tools of that the attempt has no row for gets one
    /// (configured by the harness, shown by `model_tap`).
    fn publish(&mut self, sink: &EvidenceSink, session: &str, record: &TapRecord) {
        let at = record.at;
        if let Some(known) = self.known.get_mut(session) {
            let named = record
                .offered
                .iter()
                .chain(&record.called)
                .chain(&record.deferred)
                .filter_map(|t| t.server.as_ref());
            for server in named {
                if !known.rows.contains(server)
                    && sink
                        .add_row_by(server.clone(), None, at, ProvenanceCode::ModelTap)
                        .is_ok()
                {
                    known.rows.insert(server.clone());
                }
            }
        }
        let evidence = |kind: EvidenceKind, t: &TapTool| {
            let server = t.server.as_ref()?;
            let mut e = Evidence::new(kind, at)
                .server(server.clone())
                .provenance(Provenance::ModelTap);
            if let Some(tool) = &t.tool {
                e = e.tool(tool.clone());
            }
            Some(e)
        };
        let all = record
            .offered
            .iter()
            .chain(&record.called)
            .filter_map(|t| evidence(EvidenceKind::ToolVisible, t))
            .chain(
                record
                    .deferred
                    .iter()
                    .filter_map(|t| evidence(EvidenceKind::ToolDeferred, t)),
            );
        for e in all {
            if sink.publish(e).is_ok() {
                self.stats.evidence.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn keep(&mut self, record: TapRecord) {
        self.stats.observed.fetch_add(1, Ordering::Relaxed);
        let _ = self.records.send(record.clone());
        if let Ok(mut recent) = self.recent.lock() {
            recent.push_back(record);
            while recent.len() > MAX_RECENT {
                recent.pop_front();
            }
        }
    }
}

/// What one request's record could read: the request's facts, the tools
/// the answer called, and what was not read and why (`request: …`,
/// `response: …`; a copy the observer dropped reads `dropped`).
fn read_of(
    facts: Option<Result<RequestFacts, Unread>>,
    reader: Option<CallReader>,
    api: Option<Api>,
    lost: bool,
) -> (Option<RequestFacts>, Vec<String>, Vec<String>) {
    let mut unread = Vec::new();
    let facts = match facts {
        Some(Ok(facts)) => Some(facts),
        Some(Err(why)) => {
            unread.push(format!("request: {}", why.word()));
            None
        }
        None if api.is_some() && lost => {
            unread.push("request: dropped".to_owned());
            None
        }
        None => None,
    };
    let called = match reader.map(CallReader::finish) {
        _ if lost => {
            unread.push("response: dropped".to_owned());
            Vec::new()
        }
        Some(Ok(called)) => called,
        Some(Err(why)) => {
            unread.push(format!("response: {}", why.word()));
            Vec::new()
        }
        None => Vec::new(),
    };
    (facts, called, unread)
}

/// One tool name as the record shows it: whose it is by the harness's
/// `rules` and what the session is known to have. A name with a
/// credential's form is shown redacted, like every name Tether keeps.
fn tap_tool(rules: Option<&Rules>, known: &Known, name: &str, hash: Option<String>) -> TapTool {
    let read = rules.map_or(Attribution::NotMcp, |r| attribute(r, name, known));
    let (server, tool, by, unresolved) = match read {
        Attribution::Mcp { server, tool, by } => (
            Some(tether_core::sanitize::name(&server)),
            Some(tether_core::sanitize::name(&tool)),
            Some(by.word()),
            false,
        ),
        Attribution::ServerOnly { server, by } => (
            Some(tether_core::sanitize::name(&server)),
            None,
            Some(by.word()),
            false,
        ),
        Attribution::Unresolved => (None, None, None, true),
        _ => (None, None, None, false),
    };
    TapTool {
        name: tether_core::sanitize::name(name),
        server,
        tool,
        by,
        unresolved,
        hash,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::last_mile::OnCollision;
    use tether_sdk::names::{replace_outside, word_or_dash};

    /// Copilot CLI's composition (`SERVER-TOOL`), as its plugin declares it.
    fn copilot(server: &str, tool: &str) -> String {
        format!(
            "{}-{}",
            replace_outside(server, word_or_dash, '-'),
            replace_outside(tool, word_or_dash, '-')
        )
    }

    /// OpenCode's (`SERVER_TOOL`), as its shipped code composes it.
    fn opencode(server: &str, tool: &str) -> String {
        format!(
            "{}_{}",
            replace_outside(server, word_or_dash, '_'),
            replace_outside(tool, word_or_dash, '_')
        )
    }

    /// GIVEN Copilot's and OpenCode's unmarked names THEN the tap's record
    /// names the server where the session or today's configuration names
    /// exactly one that fits, keeps a name two servers fit as MCP-shaped
    /// and unresolved, and a name nothing fits as no MCP tool's.
    #[test]
    fn unmarked_names_are_resolved_only_where_one_known_server_fits() {
        for (rules, sep) in [
            (
                Rules::new(copilot, OnCollision::Numbered, "test").with_cut(64),
                '-',
            ),
            (Rules::new(opencode, OnCollision::LastWins, "test"), '_'),
        ] {
            let name = format!("time{sep}get_current_time");
            let known = Known::new(&rules, vec!["time".into()], &[]);
            let t = tap_tool(Some(&rules), &known, &name, None);
            assert_eq!(
                (t.server.as_deref(), t.tool.as_deref(), t.by, t.unresolved),
                (
                    Some("time"),
                    Some("get_current_time"),
                    Some("known_server"),
                    false
                )
            );
            let t = tap_tool(Some(&rules), &Known::default(), &name, None);
            assert_eq!((t.server, t.unresolved), (None, false));
            let both = Known::new(&rules, vec!["a".into(), format!("a{sep}b")], &[]);
            let t = tap_tool(Some(&rules), &both, &format!("a{sep}b{sep}t"), None);
            assert_eq!((t.server, t.tool, t.unresolved), (None, None, true));
        }
    }
}
