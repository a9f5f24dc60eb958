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
//!   or is counted as unsessioned: never guessed onto another session.
//!
//! Records from Tether itself (`service.name` starting `tether`) are never
//! read, so an export pointed back here makes no loop.
//!
//! At most 1024 sessions stay live (the oldest is released from the hub with
//! `Hub::release`, which keeps what a store holds) and 4096 processes are
//! remembered (`a_flood_of_sessions_keeps_memory_bounded`).

use std::collections::HashMap;
use std::sync::Arc;

use tether_core::spec::ServerSpec;
use tether_core::telemetry::{
    TelemetryAnswer, TelemetryReader, TelemetryReading, TelemetryRecord, is_name_like,
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
    /// Records no plugin claimed (another service), and Tether's own.
    pub foreign: u64,
    /// Records read but with no session to join.
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
            hub,
            by_process: HashMap::new(),
            stats: CollectorStats::default(),
            ids: Default::default(),
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

    /// Reads every record of `batch`.
    pub fn take(&mut self, batch: &Batch) {
        for_each_record(batch, |record| self.take_record(&record));
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
            Some((kind, TelemetryAnswer::Unparsed { why, .. })) => {
                self.stats.unparsed += 1;
                // Metadata only: which harness and why, never the value.
                tracing::debug!(
                    harness = %kind,
                    why = why.words(),
                    "a telemetry attribute could not be parsed"
                );
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

    fn publish(&mut self, kind: &str, record: &TelemetryRecord, reading: TelemetryReading) {
        let process = process_of(record);
        // A session id is an id (a UUID, mostly): text in its place is no id.
        let harness_session = reading.session.as_deref().filter(|s| is_name_like(s));
        let session = match (harness_session, &process) {
            (Some(session), _) => session.to_owned(),
            (None, Some(process)) => {
                match self.by_process.get(&(kind.to_owned(), process.clone())) {
                    Some(session) => session.clone(),
                    None => {
                        self.stats.unsessioned += 1;
                        return;
                    }
                }
            }
            (None, None) => {
                self.stats.unsessioned += 1;
                return;
            }
        };
        if let Some(process) = &process {
            let key = (kind.to_owned(), process.clone());
            if !self.by_process.contains_key(&key)
                && self.by_process.len() >= MAX_PROCESSES
                && let Some(any) = self.by_process.keys().next().cloned()
            {
                self.by_process.remove(&any);
            }
            self.by_process.insert(key, session.clone());
        }
        let at = if record.at.0 > 0 {
            record.at
        } else {
            tether_hub::now()
        };
        let sink = self
            .live
            .sink(kind, &session, process, at, Provenance::HarnessTelemetry);
        for (_, gone) in self.live.take_evicted() {
            self.by_process.retain(|_, s| s != &gone);
        }
        let Some(sink) = sink else {
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
