//! Each session's summary kept beside its files' ledger rows
//! (`Store::record_sessions`), so a listing of files that did not change
//! builds no history: what `tether sessions list` shows of a session (its
//! summary, and what its reader notes need) is read back, when every row it
//! was built from is as it was ([`session_stamp`]) and this build wrote it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tether_core::records::SessionSummary;
use tether_core::store::RecordSessionRow;

use crate::stamp::{file_stamp, fnv1a, generation};
use crate::{Records, SessionFacts};

/// What a listing shows of one session, kept between runs.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct KeptSession {
    /// Its summary, as `list` prints it.
    pub summary: SessionSummary,
    /// The project its records said (the `--project` filter's).
    pub project: Option<String>,
    /// The harness version its records said (its reader notes').
    pub version: Option<String>,
    /// Its files, as shown.
    pub files: Vec<String>,
}

/// A session's stamp: today's configuration of its harness (what its
/// history's rows start from) and its files' rows as read, in path order.
fn session_stamp(config: u64, files: &[u64]) -> u64 {
    let mut bytes = Vec::with_capacity(8 + files.len() * 8);
    bytes.extend_from_slice(&config.to_le_bytes());
    for f in files {
        bytes.extend_from_slice(&f.to_le_bytes());
    }
    fnv1a(&bytes)
}

impl Records {
    /// A listing: only the sessions whose files changed (or whose kept
    /// summary is missing, stale or another build's) are built; the others
    /// are listed from their kept summaries. Needs a ledger
    /// ([`keep_in`](Records::keep_in)); without one every session is built.
    pub fn listing_only(&mut self) {
        self.kept.lazy = true;
    }

    /// The stamp of today's configuration of `kind`.
    fn config_stamp(&self, kind: &str, cache: &mut HashMap<String, u64>) -> u64 {
        if let Some(stamp) = cache.get(kind) {
            return *stamp;
        }
        let observer = self
            .sources
            .iter()
            .find(|s| s.kind == kind)
            .map(|s| s.observer.as_ref());
        let configured = self.configured.get(kind).map(Vec::as_slice).unwrap_or(&[]);
        let stamp = crate::facts::configured_stamp(kind, observer, configured);
        cache.insert(kind.to_owned(), stamp);
        stamp
    }

    /// In a listing, after a pass: each session of the files left unread is
    /// listed from its kept summary where it can be, or added to `build`
    /// (with every session a file it must read feeds, so what is built is
    /// built whole).
    pub(crate) fn list_kept(&mut self, build: &mut BTreeSet<String>) {
        self.kept.listed.clear();
        // Sessions a row not left unread this pass feeds (a file not found,
        // of another harness, gone) are built from what is found, as a
        // whole read builds them.
        for (_, head) in self.kept.known.values() {
            build.extend(head.sessions.iter().cloned());
        }
        let mut feeds: BTreeMap<&str, (Vec<u64>, &str)> = BTreeMap::new();
        for (row, head) in self.kept.parked.values() {
            for id in &head.sessions {
                let entry = feeds
                    .entry(id)
                    .or_insert_with(|| (Vec::new(), &row.agent_kind));
                entry.0.push(file_stamp(row));
            }
        }
        let mut cache = HashMap::new();
        let mut listed = BTreeMap::new();
        for (id, (files, kind)) in &feeds {
            if build.contains(*id) {
                continue;
            }
            let kept = self.kept.summaries.get(*id).filter(|row| {
                row.generation == generation()
                    && row.stamp == session_stamp(self.config_stamp(kind, &mut cache), files)
            });
            match kept.and_then(|row| serde_json::from_slice::<KeptSession>(&row.summary).ok()) {
                Some(session) => {
                    listed.insert((*id).to_owned(), session);
                }
                None => {
                    build.insert((*id).to_owned());
                }
            }
        }
        // Built whole: a file read for one session feeds its others too.
        loop {
            let mut more = Vec::new();
            for (_, head) in self.kept.parked.values() {
                if head.sessions.iter().any(|s| build.contains(s)) {
                    more.extend(
                        head.sessions
                            .iter()
                            .filter(|s| !build.contains(*s))
                            .cloned(),
                    );
                }
            }
            if more.is_empty() {
                break;
            }
            build.extend(more);
        }
        listed.retain(|id, _| !build.contains(id));
        self.kept.listed = listed;
    }

    /// Builds the sessions listed from kept summaries whose Tether id and
    /// harness session `wanted` says (reading their files' kept state),
    /// so [`sessions`](Records::sessions) holds them.
    pub fn build_where(&mut self, wanted: impl Fn(&str, &str) -> bool) {
        let mut ids: BTreeSet<String> = self
            .kept
            .listed
            .iter()
            .filter(|(id, k)| wanted(id, &k.summary.harness_session))
            .map(|(id, _)| id.clone())
            .collect();
        if ids.is_empty() {
            return;
        }
        loop {
            let mut more = Vec::new();
            for (_, head) in self.kept.parked.values() {
                if head.sessions.iter().any(|s| ids.contains(s)) {
                    more.extend(head.sessions.iter().filter(|s| !ids.contains(*s)).cloned());
                }
            }
            if more.is_empty() {
                break;
            }
            ids.extend(more);
        }
        self.rebuild(&ids);
        let built = &self.sessions;
        self.kept.listed.retain(|id, _| !built.contains_key(id));
    }

    /// The sessions listed from kept summaries, by Tether session id: their
    /// summaries, with their project, version and files as their facts said.
    pub(crate) fn listed(&self) -> &BTreeMap<String, KeptSession> {
        &self.kept.listed
    }

    /// Keeps the summaries of sessions just built beside the ledger, each
    /// stamped with its files' rows as read, where a ledger is kept.
    /// Returns the rows kept.
    pub(crate) fn keep_summaries(
        &self,
        built: &[(&SessionFacts, &SessionSummary)],
    ) -> Vec<RecordSessionRow> {
        let Some(store) = &self.kept.store else {
            return Vec::new();
        };
        if built.is_empty() {
            return Vec::new();
        }
        let mut feeds: HashMap<&str, Vec<u64>> = HashMap::new();
        for state in self.files.values() {
            for id in state.facts.keys() {
                feeds.entry(id).or_default().push(state.stamp);
            }
        }
        let mut cache = HashMap::new();
        let rows: Vec<RecordSessionRow> = built
            .iter()
            .filter_map(|(facts, summary)| {
                let id = summary.session_id.as_str();
                let files = feeds.get(id)?;
                let kept = KeptSession {
                    summary: (*summary).clone(),
                    project: facts.project.clone(),
                    version: facts.version.clone(),
                    files: facts.files.iter().cloned().collect(),
                };
                Some(RecordSessionRow {
                    session_id: id.to_owned(),
                    generation: generation().to_owned(),
                    stamp: session_stamp(self.config_stamp(&facts.agent_kind, &mut cache), files),
                    summary: serde_json::to_vec(&kept).ok()?,
                })
            })
            .collect();
        if let Err(error) = store.save_record_sessions(&rows) {
            tracing::debug!(%error, "the ledger could not keep the sessions' summaries");
        }
        rows
    }

    /// Every session's summary, newest first: those built (their histories
    /// built from their records) and, in a listing, those listed from kept
    /// summaries; the summaries built are kept beside the ledger.
    pub fn listing(&self) -> Vec<SessionSummary> {
        // Summaries alone: each history is dropped once summed up.
        let built = self.each_built(|facts, history| self.summary(facts, &history));
        let pairs: Vec<(&SessionFacts, &SessionSummary)> = built
            .iter()
            .filter_map(|s| Some((&**self.sessions.get(&s.session_id)?, s)))
            .collect();
        self.keep_summaries(&pairs);
        let mut all: BTreeMap<&str, &SessionSummary> =
            built.iter().map(|s| (s.session_id.as_str(), s)).collect();
        let project = self.filter.project.as_ref();
        for (id, kept) in &self.kept.listed {
            if project.is_none_or(|p| kept.project.as_ref() == Some(p)) {
                all.entry(id).or_insert(&kept.summary);
            }
        }
        let mut out: Vec<SessionSummary> = all.into_values().cloned().collect();
        out.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        out
    }
}

/// A session read or listed, known without building its history: enough
/// to choose which to build (the newest of a harness, one an id names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    /// The Tether session id (`KIND:ID`).
    pub session_id: String,
    /// The harness.
    pub agent_kind: String,
    /// The harness's own session id.
    pub harness_session: String,
    /// Its last record's time.
    pub updated_at: tether_core::model::Timestamp,
}

impl Records {
    /// Every selected session, newest first, without building one history:
    /// those whose facts are held ([`sessions`](Records::sessions)) and, in a
    /// listing, those listed from kept summaries. Build the few an answer
    /// needs with [`build_where`](Records::build_where) and
    /// [`history`](Records::history).
    pub fn known(&self) -> Vec<Known> {
        let project = self.filter.project.as_ref();
        let mut all: BTreeMap<&str, Known> = self
            .sessions
            .iter()
            .filter(|(_, f)| project.is_none_or(|p| f.project.as_ref() == Some(p)))
            .map(|(id, f)| {
                let known = Known {
                    session_id: id.clone(),
                    agent_kind: f.agent_kind.clone(),
                    harness_session: f.harness_session.clone(),
                    updated_at: f.last_at,
                };
                (id.as_str(), known)
            })
            .collect();
        for (id, kept) in &self.kept.listed {
            if project.is_none_or(|p| kept.project.as_ref() == Some(p)) {
                all.entry(id).or_insert_with(|| Known {
                    session_id: kept.summary.session_id.clone(),
                    agent_kind: kept.summary.agent_kind.clone(),
                    harness_session: kept.summary.harness_session.clone(),
                    updated_at: kept.summary.updated_at,
                });
            }
        }
        let mut out: Vec<Known> = all.into_values().collect();
        out.sort_by_key(|k| std::cmp::Reverse(k.updated_at));
        out
    }
}
