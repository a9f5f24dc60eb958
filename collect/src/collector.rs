//! From harness telemetry to Tether sessions in a hub.
//!
//! Each record goes to the passthrough plugins in turn until one says it is
//! its harness's ([`TelemetryReader::read_telemetry`]). What the plugin
//! read lands in the hub as evidence of a session keyed by the harness's own
//! session (or conversation) id, one attempt per process start:
//! - the attempt's rows are the servers today's configuration gives that
//!   harness (provenance `current_config`) plus every server the telemetry
//!   names (a row the harness configured, [`EvidenceSink::add_row`]);
//! - the evidence is stamped `harness_telemetry`, whatever the plugin said,
//!   and only the kinds a harness's word can prove pass (a report, a tool
//!   listing, a tool call, a server taken into the session);
//! - a record without a session id joins the session last seen from the
//!   same process (the resource's `service.instance.id` or `process.pid`),
//!   or is counted as unsessioned: never guessed onto another session;
//! - a record whose attribute could not be parsed
//!   ([`TelemetryAnswer::Unparsed`]) is counted on its session's attempt,
//!   found the same way (the session its envelope names, else its
//!   process's), in the hub's store
//!   ([`Store::add_unparsed_telemetry`](tether_core::store::Store::add_unparsed_telemetry)):
//!   its kind, attribute and why, never its content; written once per
//!   batch.
//!
//! Records from Tether itself (`service.name` starting `tether`) are never
//! read, so an export pointed back here makes no loop.
//!
//! At most 1024 sessions stay live (the oldest is released from the hub with
//! `Hub::release`, which keeps what a store holds) and 4096 processes are
//! remembered (`a_flood_of_sessions_keeps_memory_bounded`).

use std::collections::HashMap;
use std::sync::Arc;

use tether_core::model::{Timestamp, Unparsed};
use tether_core::spec::ServerSpec;
use tether_core::store::Store;
use tether_core::telemetry::{
    TelemetryAnswer, TelemetryReader, TelemetryReading, TelemetryRecord, UnparsedTelemetry,
    is_name_like,
};
use tether_core::vocab::Provenance;
use tether_hub::Hub;

use crate::decode::Batch;
use crate::live::LiveSessions;
use crate::telemetry_records::for_each_record;

pub use crate::live::MAX_LIVE_SESSIONS;
/// The most processes remembered (to join their session-less records to a
/// session); past it an arbitrary one is forgotten.
pub const MAX_PROCESSES: usize = 4096;
/// The most distinct counts of unparsed answers (per session, attempt,
/// kind, attribute and why) held between two writes to the store; past it
/// an answer is counted in [`CollectorStats::unparsed_unstored`].
pub const MAX_PENDING_UNPARSED: usize = 4096;

/// What the collector has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CollectorStats {
    /// Records seen.
    pub records: u64,
    /// Records a plugin read.
    pub read: u64,
    /// Records of a known harness that no mapping reads (a kind, or a
    /// version, the plugin does not know): counted and ignored.
    pub ignored: u64,
    /// Records of a kind a mapping reads whose attribute could not be
    /// parsed (cut short, not JSON, the wrong type): counted apart from
    /// `ignored`, never read as "nothing there".
    pub unparsed: u64,
    /// Of `unparsed`, those counted on a session's attempt (the rest have
    /// no session to join, and are counted in `unsessioned` too).
    pub unparsed_sessioned: u64,
    /// Of `unparsed_sessioned`, those that did not reach a store: the hub
    /// has none, the store refused the write (logged), or too many
    /// distinct counts waited for it.
    pub unparsed_unstored: u64,
    /// Records no plugin claimed (another service), and Tether's own.
    pub foreign: u64,
    /// Records read, or unparsed, with no session to join.
    pub unsessioned: u64,
    /// Evidence published.
    pub evidence: u64,
    /// Evidence of a kind a harness's word cannot prove: dropped.
    pub refused: u64,
    /// Sessions begun (one per harness session, plus one per new process).
    pub attempts: u64,
    /// Sessions let go past [`MAX_LIVE_SESSIONS`] (oldest first).
    pub evicted: u64,
}

/// Reads records into hub sessions. Not shared: one consumer drains the
/// receiver's queue into it.
pub struct Collector {
    hub: Arc<Hub>,
    live: LiveSessions,
    by_process: HashMap<(String, String), String>,
    stats: CollectorStats,
    /// The session id last found to be an id (checked once per run).
    ids: tether_core::telemetry::SessionIdCheck,
    /// Unparsed answers counted since the last write to the store.
    pending: HashMap<UnparsedKey, (u64, Timestamp)>,
    /// Where they are written (the hub's store).
    store: Option<Arc<dyn Store>>,
}

/// What one count of unparsed answers is kept by: session, attempt, kind,
/// attribute, why.
type UnparsedKey = (String, String, String, String, Unparsed);

impl Drop for Collector {
    fn drop(&mut self) {
        self.flush_unparsed();
    }
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector")
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

pub use tether_core::records::session_id;

/// A record's process: its resource's `service.instance.id`, else
/// `process.pid`, where it looks like an id (it becomes the attempt's
/// execution id).
fn process_of(record: &TelemetryRecord) -> Option<String> {
    ["service.instance.id", "process.pid"]
        .iter()
        .find_map(|k| record.resource.get(*k).and_then(|v| v.text()))
        .filter(|v| is_name_like(v))
        .map(|v| v.into_owned())
}

impl Collector {
    /// A collector publishing into `hub` (whose registry holds the
    /// harnesses' plugins), with the servers today's configuration gives
    /// each harness (`configured[kind]`).
    pub fn new(hub: Arc<Hub>, configured: HashMap<String, Vec<ServerSpec>>) -> Self {
        Collector {
            live: LiveSessions::new(Arc::clone(&hub), configured),
            store: hub.store(),
            hub,
            by_process: HashMap::new(),
            stats: CollectorStats::default(),
            ids: Default::default(),
            pending: HashMap::new(),
        }
    }

    /// What it has done so far.
    pub fn stats(&self) -> CollectorStats {
        CollectorStats {
            attempts: self.live.attempts(),
            evicted: self.live.evicted(),
            ..self.stats
        }
    }

    /// The Tether session ids it has begun, oldest first.
    pub fn sessions(&self) -> Vec<String> {
        self.live.sessions()
    }

    /// Reads every record of `batch`, then writes what it counted of
    /// unparsed answers to the store.
    pub fn take(&mut self, batch: &Batch) {
        for_each_record(batch, |record| self.take_record(&record));
        self.flush_unparsed();
    }

    /// Writes the unparsed answers counted since the last write to the
    /// hub's store, in one call ([`take`](Self::take) does after each
    /// batch, and dropping the collector does).
    pub fn flush_unparsed(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let Some(store) = &self.store else {
            self.stats.unparsed_unstored += pending.values().map(|(n, _)| n).sum::<u64>();
            return;
        };
        let rows: Vec<UnparsedTelemetry> = pending
            .iter()
            .map(|((session, attempt, kind, attribute, why), (count, at))| {
                UnparsedTelemetry::new(session, attempt, kind, attribute, *why, *count, *at)
            })
            .collect();
        if let Err(err) = store.add_unparsed_telemetry(&rows) {
            tracing::warn!(%err, "could not count unparsed telemetry in the store");
            self.stats.unparsed_unstored += rows.iter().map(|r| r.count).sum::<u64>();
        }
    }

    /// Reads one record.
    pub fn take_record(&mut self, record: &TelemetryRecord) {
        self.stats.records += 1;
        if record.service().starts_with("tether") {
            self.stats.foreign += 1;
            return;
        }
        let hub = Arc::clone(&self.hub);
        let mut answer = None;
        for harness in hub.registry().harnesses() {
            let kind = harness.id.as_str();
            let configured = self.live.names(kind);
            let Some(reader) = harness.roles.telemetry else {
                continue;
            };
            match read_contained(reader, record, configured) {
                TelemetryAnswer::NotMine => continue,
                other => {
                    answer = Some((kind.to_owned(), other));
                    break;
                }
            }
        }
        match answer {
            None => self.stats.foreign += 1,
            Some((_, TelemetryAnswer::Ignored | TelemetryAnswer::NotMine)) => {
                self.stats.ignored += 1;
            }
            Some((
                kind,
                TelemetryAnswer::Unparsed {
                    kind: what,
                    attribute,
                    why,
                    session,
                },
            )) => {
                self.stats.unparsed += 1;
                // Metadata only: which harness and why, never the value.
                tracing::debug!(
                    harness = %kind,
                    why = why.words(),
                    "a telemetry attribute could not be parsed"
                );
                self.count_unparsed(&kind, record, session, [what, attribute], why);
            }
            Some((kind, TelemetryAnswer::Read(reading))) => {
                if reading.names_are_names_once(self.live.names(&kind), &mut self.ids) {
                    self.stats.read += 1;
                    self.publish(&kind, record, reading);
                } else {
                    // Text where a name belongs: none of it goes anywhere.
                    self.stats.refused += 1;
                }
            }
            // An answer a later SDK adds: nothing this collector reads.
            Some(_) => self.stats.ignored += 1,
        }
    }

    /// Counts an unparsed answer on its session's attempt (begun if none
    /// is live: the harness's telemetry names the session, so it ran), to
    /// be written at the next [`flush_unparsed`](Self::flush_unparsed).
    fn count_unparsed(
        &mut self,
        kind: &str,
        record: &TelemetryRecord,
        session: Option<String>,
        [what, attribute]: [String; 2],
        why: Unparsed,
    ) {
        // A session id is an id: text in its place (a secret) is no id.
        let named = session.filter(|s| self.ids.is_id_like(s));
        let Some((sink, at)) = self.placed(kind, record, named.as_deref()) else {
            return;
        };
        self.stats.unparsed_sessioned += 1;
        // The kind and attribute are the reader's constants; from a plugin
        // that put text there, nothing of it is kept.
        let name = |n: String| {
            if is_name_like(&n) {
                n
            } else {
                "unnamed".to_owned()
            }
        };
        let key = (
            sink.session_id().to_owned(),
            sink.attempt_id().to_owned(),
            name(what),
            name(attribute),
            why,
        );
        if self.pending.len() >= MAX_PENDING_UNPARSED && !self.pending.contains_key(&key) {
            self.stats.unparsed_unstored += 1;
            return;
        }
        let (count, last) = self.pending.entry(key).or_insert((0, at));
        *count += 1;
        *last = (*last).max(at);
    }

    /// The harness session a record of `kind` belongs to: the one it
    /// names, else the one last seen from its process; remembered for its
    /// process. `None`: no session to join.
    fn session_for(
        &mut self,
        kind: &str,
        named: Option<&str>,
        process: &Option<String>,
    ) -> Option<String> {
        let session = match (named, process) {
            (Some(session), _) => session.to_owned(),
            (None, Some(process)) => self
                .by_process
                .get(&(kind.to_owned(), process.clone()))?
                .clone(),
            (None, None) => return None,
        };
        if let Some(process) = process {
            let key = (kind.to_owned(), process.clone());
            if !self.by_process.contains_key(&key)
                && self.by_process.len() >= MAX_PROCESSES
                && let Some(any) = self.by_process.keys().next().cloned()
            {
                self.by_process.remove(&any);
            }
            self.by_process.insert(key, session.clone());
        }
        Some(session)
    }

    /// The live attempt `record` belongs to: its session's (`named`, else
    /// its process's last), begun when needed, at the record's time (now
    /// when it has none), with that time. `None` when no session is known
    /// (counted unsessioned) or the attempt cannot be had.
    fn placed(
        &mut self,
        kind: &str,
        record: &TelemetryRecord,
        named: Option<&str>,
    ) -> Option<(tether_hub::EvidenceSink, Timestamp)> {
        let process = process_of(record);
        let Some(session) = self.session_for(kind, named, &process) else {
            self.stats.unsessioned += 1;
            return None;
        };
        let at = if record.at.0 > 0 {
            record.at
        } else {
            tether_hub::now()
        };
        Some((self.sink(kind, &session, process, at)?, at))
    }

    /// The live attempt of `kind`'s `session` (begun when needed), with the
    /// sessions let go meanwhile forgotten.
    fn sink(
        &mut self,
        kind: &str,
        session: &str,
        process: Option<String>,
        at: Timestamp,
    ) -> Option<tether_hub::EvidenceSink> {
        let sink = self
            .live
            .sink(kind, session, process, at, Provenance::HarnessTelemetry);
        for (_, gone) in self.live.take_evicted() {
            self.by_process.retain(|_, s| s != &gone);
        }
        sink
    }

    fn publish(&mut self, kind: &str, record: &TelemetryRecord, reading: TelemetryReading) {
        // A session id is an id (a UUID, mostly): text in its place is no id.
        let harness_session = reading.session.as_deref().filter(|s| is_name_like(s));
        let Some((sink, _)) = self.placed(kind, record, harness_session) else {
            return;
        };
        for server in &reading.servers {
            let _ = sink.add_row(server.name.clone(), server.transport.clone(), record.at);
        }
        for evidence in reading.evidence {
            if !tether_core::telemetry::provable(&evidence.kind) {
                self.stats.refused += 1;
                continue;
            }
            let evidence = evidence.provenance(Provenance::HarnessTelemetry);
            if sink.publish(evidence).is_ok() {
                self.stats.evidence += 1;
            }
        }
    }
}

/// A plugin's reading, with a panic contained (counted as not read).
fn read_contained(
    reader: &dyn TelemetryReader,
    record: &TelemetryRecord,
    configured: &[String],
) -> TelemetryAnswer {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        reader.read_telemetry(record, configured)
    }))
    .unwrap_or(TelemetryAnswer::Ignored)
}
