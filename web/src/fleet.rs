//! The fleet page's two questions, answered on the server so the page loads
//! only what it shows: which sessions match (filtered, newest first, one
//! page at a time, with counts over every match), and how each server name
//! fares across them (`is github broken everywhere, or only in Codex?`).
//!
//! Both read a [`FleetIndex`]: one small entry per session (its current
//! attempt's harness, project, times and each row's name, status and
//! reason), built once per change of the source and shared by every
//! request, so a page of 50 out of 10,000 sessions costs one pass over the
//! index and no history clone.
//!
//! The index is rebuilt only for sessions whose revision moved;
//! [`FleetQuery`] parses the filters strictly.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use tether_core::history::AttachmentHistory;
use tether_core::model::Timestamp;
use tether_core::vocab::{CapabilityKind, DisplayStatus, ReasonCode};

use crate::parts::{CapabilityView, STATUS_API_SCHEMA_VERSION};

/// The most sessions one page holds.
pub const MAX_LIMIT: usize = 200;
/// A page's size when the request names none.
pub const DEFAULT_LIMIT: usize = 50;

/// One row of a session's current attempt, as the index keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexRow {
    /// What it is: a server, or a skill, hook or plugin the session ran.
    pub kind: CapabilityKind,
    /// The server's name (sanitized, as stored); a capability's as its
    /// matrix row labels it (`Stop · check.sh`, `greet (goodplug)`).
    pub name: String,
    /// Its display status.
    pub status: DisplayStatus,
    /// Its reason, when it stopped.
    pub reason: Option<ReasonCode>,
}

impl IndexRow {
    /// Failed because the server wants credentials.
    pub fn needs_auth(&self) -> bool {
        self.status == DisplayStatus::Failed && self.reason == Some(ReasonCode::AuthRequired)
    }
}

/// One session, as the index keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The session id.
    pub session_id: String,
    /// The history's revision.
    pub revision: u64,
    /// The current attempt's agent kind (the harness).
    pub agent_kind: Option<String>,
    /// The current attempt's project, where known.
    pub project: Option<String>,
    /// When the current attempt started.
    pub started_at: Option<Timestamp>,
    /// When it last changed.
    pub updated_at: Option<Timestamp>,
    /// Its rows.
    pub rows: Vec<IndexRow>,
}

impl IndexEntry {
    /// The entry of one history.
    pub fn of(history: &AttachmentHistory) -> Self {
        let current = history.current();
        IndexEntry {
            session_id: history.session_id.clone(),
            revision: history.revision,
            agent_kind: current.map(|a| a.agent_kind.clone()),
            project: current.and_then(|a| a.project.clone()),
            started_at: current.map(|a| a.started_at),
            updated_at: current.map(|a| a.updated_at),
            rows: current
                .iter()
                .flat_map(|a| a.servers.iter())
                .map(|r| IndexRow {
                    kind: CapabilityKind::McpServer,
                    name: r.name.clone(),
                    status: r.status,
                    reason: r.reason_code.clone(),
                })
                .chain(current.iter().flat_map(|a| a.capabilities.iter()).map(|c| {
                    let view = CapabilityView::of(c);
                    IndexRow {
                        kind: view.kind,
                        name: view.label,
                        status: view.status,
                        reason: view.reason_code,
                    }
                }))
                .collect(),
        }
    }

    /// Its server rows (a session's counts and status are its servers').
    fn servers(&self) -> impl Iterator<Item = &IndexRow> {
        self.rows
            .iter()
            .filter(|r| r.kind == CapabilityKind::McpServer)
    }

    /// Server rows per status word.
    fn counts(&self) -> BTreeMap<String, u32> {
        let mut counts = BTreeMap::new();
        for row in self.servers() {
            *counts.entry(row.status.as_str().to_owned()).or_insert(0) += 1;
        }
        counts
    }

    /// The strongest status among its server rows (the attempt's status at
    /// a glance).
    fn status(&self) -> DisplayStatus {
        self.servers()
            .map(|r| r.status)
            .min_by_key(|s| s.rank())
            .unwrap_or(DisplayStatus::Unknown)
    }
}

/// Every session, newest first.
#[derive(Debug, Clone, Default)]
pub struct FleetIndex {
    entries: Vec<IndexEntry>,
}

impl FleetIndex {
    /// The index of `histories`.
    pub fn of(histories: &[Arc<AttachmentHistory>]) -> Self {
        Self::update(None, histories)
    }

    /// The index of `histories`, reusing `previous`'s entry for every
    /// session whose revision did not move.
    pub fn update(previous: Option<&FleetIndex>, histories: &[Arc<AttachmentHistory>]) -> Self {
        let known: std::collections::HashMap<(&str, u64), &IndexEntry> = previous
            .map(|p| {
                p.entries
                    .iter()
                    .map(|e| ((e.session_id.as_str(), e.revision), e))
                    .collect()
            })
            .unwrap_or_default();
        let mut entries: Vec<IndexEntry> = histories
            .iter()
            .map(|h| match known.get(&(h.session_id.as_str(), h.revision)) {
                Some(entry) => (*entry).clone(),
                None => IndexEntry::of(h),
            })
            .collect();
        entries.sort_by(|a, b| {
            b.started_at
                .cmp(&a.started_at)
                .then_with(|| a.session_id.cmp(&b.session_id))
        });
        FleetIndex { entries }
    }

    /// Its entries, newest first.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }
}

/// What the page asks for: the filters (all optional, all in the page's
/// URL, never the token) and the page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetQuery {
    /// Only sessions with a row of one of these statuses (`needs_auth` is a
    /// failed row whose reason is `auth_required`). With `server`, that
    /// server's row.
    pub statuses: Vec<String>,
    /// Only these harnesses.
    pub harnesses: Vec<String>,
    /// Which rows the other filters look at: servers when empty, else
    /// rows of these kinds (`skill`, `hook`, `plugin`, `mcp_server`):
    /// `kind=hook&status=failed` is the sessions with a failed hook.
    pub kinds: Vec<String>,
    /// Only sessions with a row of exactly this name.
    pub server: Option<String>,
    /// Only sessions with a row whose name contains this, any case.
    pub text: Option<String>,
    /// Only sessions started at or after this (ms since the epoch).
    pub since: Option<Timestamp>,
    /// Only sessions started before this.
    pub until: Option<Timestamp>,
    /// Sessions to skip.
    pub offset: usize,
    /// Sessions to return (at most [`MAX_LIMIT`]).
    pub limit: usize,
}

/// ` (did you mean "x"?)` where `given` is a slip of one of `words`.
fn meant<'a>(given: &str, words: impl Iterator<Item = &'a str>) -> String {
    let words: Vec<&str> = words.collect();
    tether_words::near::nearest(given, &words)
        .map(|n| format!(" (did you mean {n:?}?)"))
        .unwrap_or_default()
}

impl FleetQuery {
    /// Parses a query string (`status=failed&harness=codex&server=github&q=git&since=…&until=…&offset=50&limit=50`).
    /// Repeated keys, or commas, give several values. A value that does not
    /// parse is an error that names it.
    pub fn parse(query: &str) -> Result<Self, String> {
        let mut q = FleetQuery {
            limit: DEFAULT_LIMIT,
            ..FleetQuery::default()
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value =
                decode(value).ok_or_else(|| format!("{key}: not valid percent-encoding"))?;
            let number = |what: &str| -> Result<u64, String> {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("{what}: {value:?} is not a whole number"))
            };
            let list = || {
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            };
            match key {
                "status" => {
                    for status in list() {
                        let known = status == "needs_auth"
                            || DisplayStatus::ALL.iter().any(|s| s.as_str() == status);
                        if !known {
                            let words = DisplayStatus::ALL
                                .iter()
                                .map(|s| s.as_str())
                                .chain(["needs_auth"]);
                            return Err(format!(
                                "status: {status:?} is not a status{}",
                                meant(&status, words)
                            ));
                        }
                        q.statuses.push(status);
                    }
                }
                "harness" => q.harnesses.extend(list()),
                "kind" => {
                    for kind in list() {
                        if !CapabilityKind::KNOWN.contains(&kind.as_str()) {
                            return Err(format!(
                                "kind: {kind:?} is not a kind of row{}",
                                meant(&kind, CapabilityKind::KNOWN.iter().copied())
                            ));
                        }
                        q.kinds.push(kind);
                    }
                }
                "server" => q.server = Some(value).filter(|v| !v.is_empty()),
                "q" => q.text = Some(value.to_lowercase()).filter(|v| !v.is_empty()),
                "since" => q.since = Some(Timestamp(number("since")?)),
                "until" => q.until = Some(Timestamp(number("until")?)),
                "offset" => q.offset = number("offset")? as usize,
                "limit" => q.limit = (number("limit")? as usize).clamp(1, MAX_LIMIT),
                other => return Err(format!("{other}: not a filter here")),
            }
        }
        Ok(q)
    }

    /// Whether the filters look at `row` at all (its kind).
    fn looks_at(&self, row: &IndexRow) -> bool {
        if self.kinds.is_empty() {
            row.kind == CapabilityKind::McpServer
        } else {
            self.kinds.iter().any(|k| k == row.kind.as_str())
        }
    }

    fn row_matches_status(&self, row: &IndexRow) -> bool {
        self.looks_at(row)
            && (self.statuses.is_empty()
                || self.statuses.iter().any(|s| {
                    if s == "needs_auth" {
                        row.needs_auth()
                    } else {
                        row.status.as_str() == s
                    }
                }))
    }

    /// Whether a session matches every filter but the status one.
    fn matches_but_status(&self, entry: &IndexEntry) -> bool {
        let harness = self.harnesses.is_empty()
            || entry
                .agent_kind
                .as_ref()
                .is_some_and(|k| self.harnesses.contains(k));
        let since = self
            .since
            .is_none_or(|t| entry.started_at.is_some_and(|s| s >= t));
        let until = self
            .until
            .is_none_or(|t| entry.started_at.is_some_and(|s| s < t));
        let text = self.text.as_ref().is_none_or(|t| {
            entry
                .rows
                .iter()
                .any(|r| self.looks_at(r) && r.name.to_lowercase().contains(t))
        });
        let kind = self.kinds.is_empty() || entry.rows.iter().any(|r| self.looks_at(r));
        harness && since && until && text && kind
    }

    /// Whether a session matches every filter.
    pub fn matches(&self, entry: &IndexEntry) -> bool {
        if !self.matches_but_status(entry) {
            return false;
        }
        match &self.server {
            Some(name) => entry
                .rows
                .iter()
                .any(|r| &r.name == name && self.row_matches_status(r)),
            None => {
                self.statuses.is_empty() || entry.rows.iter().any(|r| self.row_matches_status(r))
            }
        }
    }
}

/// Decodes `%XX` and `+` (a query string's encoding).
fn decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// `GET /api/v1/fleet/sessions`: one page of the matching sessions, newest
/// first, with counts over every match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetSessions {
    /// [`STATUS_API_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Whether the diagnostic actions can run here (see the session list's).
    pub actions: bool,
    /// Sessions that match the filters (all pages).
    pub total: u32,
    /// Sessions skipped before this page.
    pub offset: u32,
    /// The page's size asked for.
    pub limit: u32,
    /// Rows per status word over every matching session (the current
    /// attempts'), plus `needs_auth`.
    pub counts: BTreeMap<String, u32>,
    /// Matching sessions per harness.
    pub harnesses: BTreeMap<String, u32>,
    /// This page's sessions.
    pub sessions: Vec<FleetSession>,
}

/// One session on the fleet page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetSession {
    /// The session id.
    pub session_id: String,
    /// The history's revision.
    pub revision: u64,
    /// The harness or agent (the current attempt's agent kind).
    #[serde(default)]
    pub agent_kind: Option<String>,
    /// The project, where known.
    #[serde(default)]
    pub project: Option<String>,
    /// When the current attempt started.
    #[serde(default)]
    pub started_at: Option<Timestamp>,
    /// When it last changed.
    #[serde(default)]
    pub updated_at: Option<Timestamp>,
    /// The strongest status among the current attempt's rows.
    pub status: DisplayStatus,
    /// Rows per status word (a status with no rows is absent).
    pub counts: BTreeMap<String, u32>,
}

/// Answers one fleet-sessions request over `index`, keeping only sessions
/// `visible` says the caller may see.
pub fn sessions(
    index: &FleetIndex,
    query: &FleetQuery,
    actions: bool,
    visible: impl Fn(&str) -> bool,
) -> FleetSessions {
    let mut total = 0u32;
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    let mut harnesses: BTreeMap<String, u32> = BTreeMap::new();
    let mut page = Vec::new();
    for entry in index.entries() {
        if !query.matches(entry) || !visible(&entry.session_id) {
            continue;
        }
        if (total as usize) >= query.offset && page.len() < query.limit {
            page.push(FleetSession {
                session_id: entry.session_id.clone(),
                revision: entry.revision,
                agent_kind: entry.agent_kind.clone(),
                project: entry.project.clone(),
                started_at: entry.started_at,
                updated_at: entry.updated_at,
                status: entry.status(),
                counts: entry.counts(),
            });
        }
        total += 1;
        for row in entry.rows.iter().filter(|r| query.looks_at(r)) {
            *counts.entry(row.status.as_str().to_owned()).or_insert(0) += 1;
            if row.needs_auth() {
                *counts.entry("needs_auth".to_owned()).or_insert(0) += 1;
            }
        }
        let harness = entry.agent_kind.clone().unwrap_or_else(|| "unknown".into());
        *harnesses.entry(harness).or_insert(0) += 1;
    }
    FleetSessions {
        schema_version: STATUS_API_SCHEMA_VERSION,
        actions,
        total,
        offset: query.offset as u32,
        limit: query.limit as u32,
        counts,
        harnesses,
        sessions: page,
    }
}

/// `GET /api/v1/fleet/servers`: one row per server name across the
/// matching sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetServers {
    /// [`STATUS_API_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Sessions the counts are over.
    pub sessions: u32,
    /// One row per server name, most failures first.
    pub servers: Vec<FleetServer>,
}

/// How one server name fares across sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetServer {
    /// The server's name.
    pub name: String,
    /// Over every harness.
    pub all: ServerCounts,
    /// Per harness.
    pub by_harness: BTreeMap<String, ServerCounts>,
    /// The reason its rows stopped with most often, where any did.
    #[serde(default)]
    pub top_reason: Option<ReasonCount>,
}

/// Sessions in which one server had a row, and how that row ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerCounts {
    /// Sessions with a row of that name.
    pub sessions: u32,
    /// Of those, rows active or connected.
    pub active: u32,
    /// Rows failed (needs-auth included).
    pub failed: u32,
    /// Rows failed because the server wants credentials.
    pub needs_auth: u32,
    /// Rows delivered with nothing showing a connection.
    pub delivered: u32,
    /// Rows filtered or unavailable.
    pub held_back: u32,
    /// Rows with nothing known.
    pub unknown: u32,
}

impl ServerCounts {
    fn add(&mut self, row: &IndexRow) {
        self.sessions += 1;
        match row.status {
            DisplayStatus::Active | DisplayStatus::Connected => self.active += 1,
            DisplayStatus::Failed => self.failed += 1,
            DisplayStatus::Delivered => self.delivered += 1,
            DisplayStatus::Filtered | DisplayStatus::Unavailable => self.held_back += 1,
            // Unknown, and any status a later Tether adds.
            _ => self.unknown += 1,
        }
        if row.needs_auth() {
            self.needs_auth += 1;
        }
    }
}

/// A reason code and how many rows stopped with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReasonCount {
    /// The reason code.
    pub code: ReasonCode,
    /// Rows that stopped with it.
    pub count: u32,
}

/// Answers one fleet-servers request: every filter but the page applies
/// (with `status`, only rows of that status count).
pub fn servers(
    index: &FleetIndex,
    query: &FleetQuery,
    visible: impl Fn(&str) -> bool,
) -> FleetServers {
    struct Acc {
        all: ServerCounts,
        by_harness: BTreeMap<String, ServerCounts>,
        reasons: BTreeMap<String, (ReasonCode, u32)>,
    }
    let mut by_name: BTreeMap<String, Acc> = BTreeMap::new();
    let mut sessions = 0u32;
    for entry in index.entries() {
        if !query.matches(entry) || !visible(&entry.session_id) {
            continue;
        }
        sessions += 1;
        let harness = entry.agent_kind.clone().unwrap_or_else(|| "unknown".into());
        for row in entry.rows.iter().filter(|r| query.looks_at(r)) {
            if query.server.as_ref().is_some_and(|s| s != &row.name)
                || query
                    .text
                    .as_ref()
                    .is_some_and(|t| !row.name.to_lowercase().contains(t))
                || !query.row_matches_status(row)
            {
                continue;
            }
            let acc = by_name.entry(row.name.clone()).or_insert_with(|| Acc {
                all: ServerCounts::default(),
                by_harness: BTreeMap::new(),
                reasons: BTreeMap::new(),
            });
            acc.all.add(row);
            acc.by_harness.entry(harness.clone()).or_default().add(row);
            if let Some(reason) = &row.reason {
                acc.reasons
                    .entry(reason.as_str().to_owned())
                    .or_insert((reason.clone(), 0))
                    .1 += 1;
            }
        }
    }
    let mut servers: Vec<FleetServer> = by_name
        .into_iter()
        .map(|(name, acc)| FleetServer {
            name,
            all: acc.all,
            by_harness: acc.by_harness,
            top_reason: acc
                .reasons
                .into_values()
                .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.as_str().cmp(a.0.as_str())))
                .map(|(code, count)| ReasonCount { code, count }),
        })
        .collect();
    servers.sort_by(|a, b| {
        b.all
            .failed
            .cmp(&a.all.failed)
            .then_with(|| b.all.sessions.cmp(&a.all.sessions))
            .then_with(|| a.name.cmp(&b.name))
    });
    FleetServers {
        schema_version: STATUS_API_SCHEMA_VERSION,
        sessions,
        servers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(
        id: &str,
        kind: &str,
        started: u64,
        rows: &[(&str, DisplayStatus, Option<ReasonCode>)],
    ) -> IndexEntry {
        IndexEntry {
            session_id: id.into(),
            revision: 1,
            agent_kind: Some(kind.into()),
            project: Some("app".into()),
            started_at: Some(Timestamp(started)),
            updated_at: Some(Timestamp(started + 5)),
            rows: rows
                .iter()
                .map(|(n, s, r)| IndexRow {
                    // `hook:NAME` is a hook row; anything else a server.
                    kind: match n.strip_prefix("hook:") {
                        Some(_) => CapabilityKind::Hook,
                        None => CapabilityKind::McpServer,
                    },
                    name: n.strip_prefix("hook:").unwrap_or(n).into(),
                    status: *s,
                    reason: r.clone(),
                })
                .collect(),
        }
    }

    fn index() -> FleetIndex {
        use DisplayStatus::*;
        let auth = Some(ReasonCode::AuthRequired);
        let mut entries = vec![
            entry(
                "a",
                "codex",
                100,
                &[("github", Failed, auth.clone()), ("time", Active, None)],
            ),
            entry("b", "claude", 200, &[("github", Active, None)]),
            entry(
                "c",
                "codex",
                300,
                &[
                    ("github", Failed, Some(ReasonCode::CommandNotFound)),
                    ("docs", Delivered, None),
                ],
            ),
            entry("d", "gemini", 400, &[("time", Failed, auth)]),
        ];
        entries.sort_by_key(|e| std::cmp::Reverse(e.started_at));
        FleetIndex { entries }
    }

    fn ids(doc: &FleetSessions) -> Vec<&str> {
        doc.sessions.iter().map(|s| s.session_id.as_str()).collect()
    }

    #[test]
    fn filters_narrow_the_list_and_counts_cover_every_match() {
        let all = |_: &str| true;
        let q = |s: &str| FleetQuery::parse(s).expect("parses");
        assert_eq!(
            ids(&sessions(&index(), &q(""), false, all)),
            ["d", "c", "b", "a"]
        );
        assert_eq!(
            ids(&sessions(&index(), &q("harness=codex"), false, all)),
            ["c", "a"]
        );
        assert_eq!(
            ids(&sessions(&index(), &q("status=failed"), false, all)),
            ["d", "c", "a"]
        );
        assert_eq!(
            ids(&sessions(&index(), &q("status=needs_auth"), false, all)),
            ["d", "a"]
        );
        assert_eq!(
            ids(&sessions(
                &index(),
                &q("server=github&status=failed"),
                false,
                all
            )),
            ["c", "a"]
        );
        assert_eq!(
            ids(&sessions(&index(), &q("q=GIT"), false, all)),
            ["c", "b", "a"]
        );
        assert_eq!(
            ids(&sessions(&index(), &q("since=200&until=400"), false, all)),
            ["c", "b"]
        );
        assert_eq!(
            ids(&sessions(
                &index(),
                &q("status=active,delivered"),
                false,
                all
            )),
            ["c", "b", "a"]
        );
        let page = sessions(&index(), &q("offset=1&limit=2"), false, all);
        assert_eq!((ids(&page), page.total), (vec!["c", "b"], 4));
        assert_eq!(page.counts.get("failed"), Some(&3));
        assert_eq!(page.counts.get("needs_auth"), Some(&2));
        assert_eq!(page.harnesses.get("codex"), Some(&2));
        let hidden = sessions(&index(), &q(""), false, |id| id != "b");
        assert_eq!((ids(&hidden), hidden.total), (vec!["d", "c", "a"], 3));
    }

    #[test]
    fn the_server_view_counts_equal_the_sum_over_sessions() {
        let doc = servers(&index(), &FleetQuery::default(), |_| true);
        let github = doc
            .servers
            .iter()
            .find(|s| s.name == "github")
            .expect("github");
        assert_eq!(github.all.sessions, 3);
        assert_eq!(
            (github.all.failed, github.all.needs_auth, github.all.active),
            (2, 1, 1)
        );
        assert_eq!(github.by_harness["codex"].failed, 2);
        assert_eq!(github.by_harness["claude"].active, 1);
        let summed: u32 = github.by_harness.values().map(|c| c.sessions).sum();
        assert_eq!(summed, github.all.sessions);
        assert_eq!(doc.servers[0].name, "github", "most failures first");
        let codex = servers(
            &index(),
            &FleetQuery::parse("harness=codex").expect("q"),
            |_| true,
        );
        assert_eq!(codex.sessions, 2);
        assert!(
            codex
                .servers
                .iter()
                .all(|s| s.by_harness.keys().all(|h| h == "codex"))
        );
    }

    #[test]
    fn a_kind_filter_looks_at_rows_of_that_kind_and_counts_stay_servers() {
        use DisplayStatus::*;
        let entries = vec![
            entry(
                "h",
                "claude",
                500,
                &[
                    ("time", Active, None),
                    (
                        "hook:Stop · check.sh",
                        Failed,
                        Some(ReasonCode::CommandNotFound),
                    ),
                ],
            ),
            entry(
                "i",
                "claude",
                600,
                &[("time", Failed, None), ("hook:Stop · ok.sh", Active, None)],
            ),
        ];
        let index = FleetIndex { entries };
        let failed_hooks = FleetQuery::parse("kind=hook&status=failed").expect("parses");
        let matched: Vec<&str> = index
            .entries()
            .iter()
            .filter(|e| failed_hooks.matches(e))
            .map(|e| e.session_id.as_str())
            .collect();
        assert_eq!(matched, vec!["h"]);
        // Without a kind, the same status looks at servers only.
        let failed = FleetQuery::parse("status=failed").expect("parses");
        let matched: Vec<&str> = index
            .entries()
            .iter()
            .filter(|e| failed.matches(e))
            .map(|e| e.session_id.as_str())
            .collect();
        assert_eq!(matched, vec!["i"]);
        // A session's own counts and status are its servers'.
        let h = &index.entries()[0];
        assert_eq!(h.status(), Active);
        assert_eq!(h.counts().get("failed"), None);
        assert!(FleetQuery::parse("kind=nonsense").is_err());
    }

    #[test]
    fn a_bad_filter_is_an_error_that_names_it() {
        for (query, names) in [
            ("status=broken", "status"),
            ("limit=many", "limit"),
            ("token=x", "token"),
            ("q=%zz", "q"),
        ] {
            let err = FleetQuery::parse(query).expect_err(query);
            assert!(err.starts_with(names), "{err}");
        }
        // A slip of a status or a kind names the one meant.
        for (query, meant) in [("status=faild", "failed"), ("kind=mcp_servr", "mcp_server")] {
            let err = FleetQuery::parse(query).expect_err(query);
            assert!(
                err.ends_with(&format!("(did you mean {meant:?}?)")),
                "{err}"
            );
        }
        assert_eq!(
            FleetQuery::parse("limit=100000").expect("q").limit,
            MAX_LIMIT
        );
        assert_eq!(
            FleetQuery::parse("server=my+server%2Fx")
                .expect("q")
                .server
                .as_deref(),
            Some("my server/x")
        );
    }
}
