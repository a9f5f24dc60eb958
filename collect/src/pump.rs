//! A receiver's batches fed to a [`Collector`] on a thread of its own: what
//! `tether collect` runs, for any host that receives harness telemetry.
//! Items are tallied per sending service (its sanitized `service.name`) and
//! signal as they pass; the collector's stats are readable at any time.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::Batches;
use crate::collector::{Collector, CollectorStats};
use crate::decode::Batch;

/// Items per (sending service, signal).
pub type ServiceTally = BTreeMap<(String, &'static str), u64>;

/// The thread feeding a [`Collector`]; [`stop`](Self::stop) ends it.
#[derive(Debug)]
pub struct CollectorThread {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    stats: Arc<Mutex<CollectorStats>>,
    tally: Arc<Mutex<ServiceTally>>,
}

impl CollectorThread {
    /// Starts feeding `batches` to `collector`.
    pub fn spawn(mut collector: Collector, batches: Batches) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stats: Arc<Mutex<CollectorStats>> = Arc::default();
        let tally: Arc<Mutex<ServiceTally>> = Arc::default();
        let (stopping, stats_in, tally_in) =
            (Arc::clone(&stop), Arc::clone(&stats), Arc::clone(&tally));
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::Acquire) {
                // Woken at least this often to see a stop.
                if let Some(batch) = batches.next(Duration::from_millis(200)) {
                    let mut tally = tally_in.lock().unwrap_or_else(|p| p.into_inner());
                    for (service, items) in per_service(&batch) {
                        *tally.entry((service, batch.signal().as_str())).or_default() += items;
                    }
                    drop(tally);
                    collector.take(&batch);
                    *stats_in.lock().unwrap_or_else(|p| p.into_inner()) = collector.stats();
                }
            }
        });
        CollectorThread {
            stop,
            thread: Some(thread),
            stats,
            tally,
        }
    }

    /// What the collector has done so far.
    pub fn stats(&self) -> CollectorStats {
        *self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the thread (after the batch in hand) and returns what it did.
    pub fn stop(mut self) -> (CollectorStats, ServiceTally) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let tally = std::mem::take(&mut *self.tally.lock().unwrap_or_else(|p| p.into_inner()));
        (self.stats(), tally)
    }
}

impl Drop for CollectorThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// Items per sending service (`service.name`, sanitized) in one batch.
pub fn per_service(batch: &Batch) -> Vec<(String, u64)> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    batch
        .per_resource()
        .into_iter()
        .map(|(resource, items)| {
            let name = resource
                .and_then(|r| r.attributes.iter().find(|a| a.key == "service.name"))
                .and_then(|a| a.value.as_ref())
                .and_then(|v| match &v.value {
                    Some(Value::StringValue(s)) => Some(tether_core::sanitize::name(s)),
                    _ => None,
                })
                .unwrap_or_else(|| "unnamed".into());
            (name, items)
        })
        .collect()
}
