//! tether-otel: what Tether observes, exported over OTLP/HTTP (protobuf) in
//! the OpenTelemetry MCP semantic conventions, for hosts that run agents on
//! many machines and already run a Collector.
//!
//! - **Spans**: one SERVER span per request an observed MCP server answered
//!   ([`Served::Request`]), named `{mcp.method.name} {target}`, joined to the
//!   client's trace when `params._meta` carried `traceparent`.
//! - **Metrics**: `mcp.server.operation.duration` and
//!   `mcp.server.session.duration`, plus Tether's attachment counters
//!   (`tether.server.status`, `tether.attempts`, `tether.evidence.dropped`,
//!   `tether.evidence.unattributed`,
//!   `tether.probe.verdicts`) and a store-writing hub's
//!   (`tether.store.write.failures`, `tether.store.write.stale`,
//!   `tether.store.sessions.behind`), all with low-cardinality attributes.
//! - **Logs**: each evidence event the hub accepted, sanitized, as a
//!   `tether.evidence` event.
//!
//! Its modules: [`config`] (when export is on, and where it goes: the host's
//! settings and the standard `OTEL_*` environment) and [`semconv`] (every
//! attribute, metric and event name, defined once).
//!
//! Its invariants are written once, in ARCHITECTURE.md (`otel/`), each
//! with the test that checks it.

#![warn(missing_docs)]

pub mod config;
mod convert;
pub mod semconv;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{
    Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError, sync_channel,
};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _, ObservableCounter};
use opentelemetry::propagation::{TextMapCompositePropagator, TextMapPropagator as _};
use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::SdkLoggerProvider;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tether_core::model::Evidence;
use tether_core::served::{Served, ServedObserver, ServedRequest, ServedSession};
use tether_hub::{Counter as HubCounter, EventOwner, Hub, HubEvent, HubSubscriber};

pub use config::OtelConfig;
use semconv as sc;

/// Why export could not start.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The endpoint is not an http(s) URL. Only its scheme, host and port are shown.
    #[error("OTLP endpoint {shown} is not an http:// or https:// URL")]
    Endpoint {
        /// The sanitized endpoint.
        shown: String,
    },
    /// The OTLP exporter for one signal could not be built.
    #[error("the OTLP {signal} exporter could not be built: {detail}")]
    Build {
        /// traces, metrics or logs.
        signal: &'static str,
        /// What the SDK said, with the endpoint and header values removed.
        detail: String,
    },
    /// The worker thread could not be started.
    #[error("the export thread could not be started: {0}")]
    Thread(String),
}

// Served is the hot variant; boxing it would cost an allocation per request.
#[allow(clippy::large_enum_variant)]
enum Job {
    Served(Served),
    Hub(Arc<HubEvent>),
    Verdict {
        verdict: &'static str,
        agent_kind: String,
    },
    Flush(SyncSender<()>),
    Stop(SyncSender<Vec<String>>),
}

/// A running exporter. Cheap handles ([`served_observer`](Self::served_observer),
/// [`hub_subscriber`](Self::hub_subscriber)) feed it; [`shutdown`](Self::shutdown) exports
/// what is queued and stops.
pub struct TetherOtel {
    tx: SyncSender<Job>,
    dropped: Arc<AtomicU64>,
    hubs: Watched,
    worker: Option<JoinHandle<()>>,
    timeout: Duration,
}

impl std::fmt::Debug for TetherOtel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TetherOtel")
            .field("dropped", &self.dropped())
            .finish_non_exhaustive()
    }
}

/// The bounded, non-blocking entry shared by every observer handle.
#[derive(Clone)]
struct Queue {
    tx: SyncSender<Job>,
    dropped: Arc<AtomicU64>,
}

impl Queue {
    fn offer(&self, job: Job) {
        if let Err(TrySendError::Full(_)) = self.tx.try_send(job) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl ServedObserver for Queue {
    fn served(&self, event: Served) {
        self.offer(Job::Served(event));
    }
}

impl HubSubscriber for Queue {
    fn observe(&self, event: &Arc<HubEvent>) {
        self.offer(Job::Hub(Arc::clone(event)));
    }
}

impl TetherOtel {
    /// Starts export when `config` says it is on (`Ok(None)` when it is off).
    pub fn start(config: OtelConfig) -> Result<Option<TetherOtel>, OtelError> {
        if !config.enabled() {
            return Ok(None);
        }
        if let Some(endpoint) = &config.endpoint {
            let scheme_ok = endpoint.starts_with("http://") || endpoint.starts_with("https://");
            if !scheme_ok || url::Url::parse(endpoint).is_err() {
                return Err(OtelError::Endpoint {
                    shown: tether_core::sanitize::network_target(endpoint),
                });
            }
        }
        let (tx, rx) = sync_channel(config.queue_capacity.max(1));
        let dropped = Arc::new(AtomicU64::new(0));
        let hubs: Watched = Arc::default();
        let (built_tx, built_rx) = sync_channel(1);
        let worker = {
            let dropped = Arc::clone(&dropped);
            let hubs = Arc::clone(&hubs);
            let config = config.clone();
            std::thread::Builder::new()
                .name("tether-otel".into())
                .spawn(move || {
                    // Export yields the CPU to everything else, the agent's MCP
                    // traffic first. The SDK's exporter threads are started
                    // below, from this thread, and inherit its scheduling class.
                    lower_this_threads_priority();
                    match Providers::build(&config) {
                        Ok(providers) => {
                            let _ = built_tx.send(Ok(()));
                            Worker::new(providers, dropped, hubs).run(rx);
                        }
                        Err(err) => {
                            let _ = built_tx.send(Err(err));
                        }
                    }
                })
                .map_err(|e| OtelError::Thread(e.to_string()))?
        };
        match built_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(err)) => {
                let _ = worker.join();
                return Err(err);
            }
            Err(_) => return Err(OtelError::Thread("the export thread ended early".into())),
        }
        Ok(Some(TetherOtel {
            tx,
            dropped,
            hubs,
            worker: Some(worker),
            timeout: config.export_timeout,
        }))
    }

    fn queue(&self) -> Queue {
        Queue {
            tx: self.tx.clone(),
            dropped: Arc::clone(&self.dropped),
        }
    }

    /// What an observed endpoint (or relay) tells about each request it
    /// answers: install with `ObservedEndpoint::on_served`.
    pub fn served_observer(&self) -> Arc<dyn ServedObserver> {
        Arc::new(self.queue())
    }

    /// What a hub tells about attempts, evidence and rows: install with
    /// [`Hub::add_subscriber`], or use [`watch_hub`](Self::watch_hub).
    pub fn hub_subscriber(&self) -> Arc<dyn HubSubscriber> {
        Arc::new(self.queue())
    }

    /// Subscribes to `hub` and counts its sinks' drops (`tether.evidence.dropped`,
    /// site `hub`), its unattributed evidence (`tether.evidence.unattributed`)
    /// and, when it writes through to a store, its store
    /// counters (`tether.store.write.failures`, `tether.store.write.stale`,
    /// `tether.store.sessions.behind`).
    pub fn watch_hub(&self, hub: &Hub) {
        hub.add_subscriber(self.hub_subscriber());
        self.hubs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(HubCounters {
                dropped: hub.evidence_dropped_counter(),
                unattributed: hub.evidence_unattributed_counter(),
                store: hub.store_counters(),
            });
    }

    /// Counts one probe verdict (`tether.probe.verdicts`).
    pub fn record_probe_verdict(&self, verdict: tether_core::probe::Verdict, agent_kind: &str) {
        self.queue().offer(Job::Verdict {
            verdict: verdict.as_str(),
            agent_kind: agent_kind.to_owned(),
        });
    }

    /// Items dropped because the export queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Waits until everything queued so far has been handed to the SDK and
    /// exported (bounded by the export timeout per signal).
    pub fn flush(&self) {
        let (done_tx, done_rx) = sync_channel(1);
        if self.tx.send(Job::Flush(done_tx)).is_ok() {
            let _ = done_rx.recv_timeout(self.timeout * 4);
        }
    }

    /// Exports what is queued and stops. Returns what failed, if anything
    /// (export errors never carry header values). Safe from async code: the
    /// work happens on the export thread.
    pub fn shutdown(mut self) -> Vec<String> {
        self.stop()
    }

    fn stop(&mut self) -> Vec<String> {
        let Some(worker) = self.worker.take() else {
            return Vec::new();
        };
        let (done_tx, done_rx) = sync_channel(1);
        let mut problems = Vec::new();
        if self.tx.send(Job::Stop(done_tx)).is_ok() {
            match done_rx.recv_timeout(self.timeout * 4) {
                Ok(found) => problems = found,
                Err(_) => problems.push("export did not finish in time".to_owned()),
            }
        }
        // The worker ends after Stop; if it is stuck exporting, leave it.
        if worker.is_finished() {
            let _ = worker.join();
        }
        problems
    }
}

impl Drop for TetherOtel {
    fn drop(&mut self) {
        let problems = self.stop();
        for problem in problems {
            tracing::warn!(%problem, "OpenTelemetry export at shutdown");
        }
    }
}

// === The SDK side ===

struct Providers {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    logger: SdkLoggerProvider,
    timeout: Duration,
    /// Removes the endpoint and header values from whatever the SDK says.
    scrubber: tether_core::sanitize::Scrubber,
}

fn resource(config: &OtelConfig) -> Resource {
    // Resource::builder() reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES;
    // the host's name is the default service name, never an override.
    let mut builder = Resource::builder();
    if std::env::var(config::ENV_SERVICE_NAME).is_err() {
        builder = builder.with_service_name(config.service_name.clone());
    }
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        let host = host.trim();
        if !host.is_empty() {
            builder = builder.with_attribute(KeyValue::new("host.name", host.to_owned()));
        }
    }
    builder
        .with_attribute(KeyValue::new("telemetry.distro.name", "tether".to_owned()))
        .with_attribute(KeyValue::new(
            "telemetry.distro.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build()
}

/// A scrubber that knows the export's own secrets: header values and the endpoint.
fn export_scrubber(config: &OtelConfig) -> tether_core::sanitize::Scrubber {
    let mut secrets: Vec<String> = config.headers.iter().map(|(_, v)| v.clone()).collect();
    if let Some(endpoint) = &config.endpoint {
        secrets.push(endpoint.clone());
    }
    tether_core::sanitize::Scrubber::new().with_secrets(secrets)
}

/// What an SDK error may say, with everything secret removed.
fn scrubbed(config: &OtelConfig, error: impl std::fmt::Display) -> String {
    export_scrubber(config).summary(&error.to_string())
}

macro_rules! otlp_exporter {
    ($kind:ty, $config:expr, $signal:literal) => {{
        let config: &OtelConfig = $config;
        let mut builder = <$kind>::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(config.export_timeout);
        if let Some(url) = config.signal_url($signal) {
            builder = builder.with_endpoint(url);
        }
        if !config.headers.is_empty() {
            builder =
                builder.with_headers(config.headers.iter().cloned().collect::<HashMap<_, _>>());
        }
        builder.build().map_err(|e| OtelError::Build {
            signal: $signal,
            detail: scrubbed(config, e),
        })?
    }};
}

impl Providers {
    fn build(config: &OtelConfig) -> Result<Self, OtelError> {
        let resource = resource(config);
        let spans = otlp_exporter!(opentelemetry_otlp::SpanExporter, config, "traces");
        let metrics = otlp_exporter!(opentelemetry_otlp::MetricExporter, config, "metrics");
        let logs = otlp_exporter!(opentelemetry_otlp::LogExporter, config, "logs");
        let tracer = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();
        let reader = PeriodicReader::builder(metrics)
            .with_interval(config.metric_interval)
            .build();
        let meter = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource.clone())
            .build();
        let logger = SdkLoggerProvider::builder()
            .with_batch_exporter(logs)
            .with_resource(resource)
            .build();
        Ok(Providers {
            tracer,
            meter,
            logger,
            timeout: config.export_timeout,
            scrubber: export_scrubber(config),
        })
    }

    /// Flushes (and, with `stop`, shuts down) the three providers at once,
    /// each bounded by the export timeout, so a hanging collector costs one
    /// timeout, not six.
    fn finish(&self, stop: bool) -> Vec<String> {
        let timeout = self.timeout;
        let tracer = self.tracer.clone();
        let meter = self.meter.clone();
        let logger = self.logger.clone();
        let jobs: Vec<(&'static str, FinishJob)> = vec![
            (
                "traces",
                // Shutting down flushes first; one bounded wait, not two.
                Box::new(move || {
                    if stop {
                        tracer.shutdown_with_timeout(timeout)
                    } else {
                        tracer.force_flush()
                    }
                }),
            ),
            (
                "metrics",
                Box::new(move || {
                    if stop {
                        meter.shutdown_with_timeout(timeout)
                    } else {
                        meter.force_flush()
                    }
                }),
            ),
            (
                "logs",
                Box::new(move || {
                    if stop {
                        logger.shutdown_with_timeout(timeout)
                    } else {
                        logger.force_flush()
                    }
                }),
            ),
        ];
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|(signal, job)| (signal, std::thread::spawn(job)))
            .collect();
        let mut problems = Vec::new();
        for (signal, handle) in handles {
            match handle.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => problems.push(format!(
                    "{signal}: {}",
                    self.scrubber.summary(&e.to_string())
                )),
                Err(_) => problems.push(format!("{signal}: the exporter panicked")),
            }
        }
        problems.dedup();
        problems
    }

    fn flush(&self) -> Vec<String> {
        self.finish(false)
    }

    fn shutdown(&self) -> Vec<String> {
        self.finish(true)
    }
}

/// One provider's flush or shutdown, run on its own thread.
type FinishJob = Box<dyn FnOnce() -> opentelemetry_sdk::error::OTelSdkResult + Send>;

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("tether")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

/// Moves the calling thread to the idle scheduling class (Linux
/// `SCHED_IDLE`): it runs only when no normal thread wants the CPU, and a
/// waking normal thread (the agent's MCP traffic) preempts it at once.
/// Threads it starts inherit the class. On a machine saturated for long, the
/// export queue fills and drops (counted) instead of taking CPU from the
/// agent. Best effort: where the class is unavailable, the nice value is
/// raised instead.
fn lower_this_threads_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid takes no arguments and cannot fail; sched_setscheduler
        // and setpriority only read their arguments (`param` lives on this
        // stack for the call). None of them touches memory we own afterwards.
        let idle = unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::pid_t;
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(tid, libc::SCHED_IDLE, &param) == 0
                || libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19) == 0
        };
        if !idle {
            tracing::debug!("could not lower the export thread's priority");
        }
    }
}

/// While busy, the worker polls at this interval instead of blocking.
const BUSY_POLL: Duration = Duration::from_millis(2);
/// After this many empty polls it blocks again, so idle export costs nothing.
const IDLE_POLLS_BEFORE_BLOCKING: u32 = 25;

struct Worker {
    providers: Providers,
    tracer: opentelemetry_sdk::trace::SdkTracer,
    logger: opentelemetry_sdk::logs::SdkLogger,
    propagator: TextMapCompositePropagator,
    operation_duration: Histogram<f64>,
    session_duration: Histogram<f64>,
    server_status: Counter<u64>,
    attempts: Counter<u64>,
    verdicts: Counter<u64>,
    _dropped: ObservableCounter<u64>,
    _unattributed: ObservableCounter<u64>,
    _store_failures: ObservableCounter<u64>,
    _store_stale: ObservableCounter<u64>,
    _store_behind: opentelemetry::metrics::ObservableGauge<u64>,
}

/// The counters of one watched hub.
struct HubCounters {
    dropped: HubCounter,
    unattributed: HubCounter,
    store: Option<tether_hub::StoreCounters>,
}

type Watched = Arc<Mutex<Vec<HubCounters>>>;

/// Sums one hub counter over the watched hubs.
fn hub_sum(hubs: &Watched, pick: fn(&HubCounters) -> &HubCounter) -> u64 {
    hubs.lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(|c| pick(c).get())
        .sum()
}

/// Sums one store counter over the watched hubs that have a store (`None`: none has).
fn store_sum(hubs: &Watched, pick: fn(&tether_hub::StoreCounters) -> &HubCounter) -> Option<u64> {
    let hubs = hubs.lock().unwrap_or_else(|p| p.into_inner());
    let mut stores = hubs.iter().filter_map(|h| h.store.as_ref()).peekable();
    stores.peek()?;
    Some(stores.map(|c| pick(c).get()).sum())
}

fn nanos_to_time(nanos: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(nanos)
}

impl Worker {
    fn new(providers: Providers, dropped: Arc<AtomicU64>, hubs: Watched) -> Self {
        let tracer = providers.tracer.tracer_with_scope(scope());
        let logger = providers.logger.logger_with_scope(scope());
        let meter = providers.meter.meter_with_scope(scope());
        let operation_duration = meter
            .f64_histogram(sc::MCP_SERVER_OPERATION_DURATION)
            .with_unit("s")
            .with_description("Duration of an MCP request as observed by the server.")
            .with_boundaries(sc::DURATION_BUCKETS.to_vec())
            .build();
        let session_duration = meter
            .f64_histogram(sc::MCP_SERVER_SESSION_DURATION)
            .with_unit("s")
            .with_description("Duration of an MCP session as observed by the server.")
            .with_boundaries(sc::DURATION_BUCKETS.to_vec())
            .build();
        let server_status = meter
            .u64_counter(sc::TETHER_SERVER_STATUS)
            .with_unit("{server}")
            .with_description("Server rows entering a display status, by status and reason.")
            .build();
        let attempts = meter
            .u64_counter(sc::TETHER_ATTEMPTS)
            .with_unit("{attempt}")
            .with_description("Attachment attempts started, by trigger.")
            .build();
        let verdicts = meter
            .u64_counter(sc::TETHER_PROBE_VERDICTS)
            .with_unit("{probe}")
            .with_description("Probe verdicts.")
            .build();
        let hubs_for_drops = Arc::clone(&hubs);
        let dropped_counter = meter
            .u64_observable_counter(sc::TETHER_EVIDENCE_DROPPED)
            .with_unit("{event}")
            .with_description(
                "Evidence dropped: by a full sink queue (hub) or a full export queue (export).",
            )
            .with_callback(move |observer| {
                observer.observe(
                    dropped.load(Ordering::Relaxed),
                    &[KeyValue::new(sc::TETHER_DROP_SITE, "export")],
                );
                observer.observe(
                    hub_sum(&hubs_for_drops, |c| &c.dropped),
                    &[KeyValue::new(sc::TETHER_DROP_SITE, "hub")],
                );
            })
            .build();
        let watched = Arc::clone(&hubs);
        let unattributed = meter
            .u64_observable_counter(sc::TETHER_EVIDENCE_UNATTRIBUTED)
            .with_unit("{event}")
            .with_description(
                "Evidence that named a server which is no row of its attempt (counted, not applied).",
            )
            .with_callback(move |observer| {
                observer.observe(hub_sum(&watched, |c| &c.unattributed), &[]);
            })
            .build();
        let watched = Arc::clone(&hubs);
        let store_failures = meter
            .u64_observable_counter(sc::TETHER_STORE_WRITE_FAILURES)
            .with_unit("{write}")
            .with_description("Store writes that failed (each is retried until it lands).")
            .with_callback(move |observer| {
                if let Some(n) = store_sum(&watched, |c| &c.failures) {
                    observer.observe(n, &[]);
                }
            })
            .build();
        let watched = Arc::clone(&hubs);
        let store_stale = meter
            .u64_observable_counter(sc::TETHER_STORE_WRITE_STALE)
            .with_unit("{write}")
            .with_description("Store writes refused because another writer held a newer revision.")
            .with_callback(move |observer| {
                if let Some(n) = store_sum(&watched, |c| &c.stale) {
                    observer.observe(n, &[]);
                }
            })
            .build();
        let watched = Arc::clone(&hubs);
        let store_behind = meter
            .u64_observable_gauge(sc::TETHER_STORE_SESSIONS_BEHIND)
            .with_unit("{session}")
            .with_description(
                "Sessions whose stored row is behind because their latest write failed.",
            )
            .with_callback(move |observer| {
                if let Some(n) = store_sum(&watched, |c| &c.behind) {
                    observer.observe(n, &[]);
                }
            })
            .build();
        Worker {
            providers,
            tracer,
            logger,
            propagator: TextMapCompositePropagator::new(vec![
                Box::new(TraceContextPropagator::new()),
                Box::new(BaggagePropagator::new()),
            ]),
            operation_duration,
            session_duration,
            server_status,
            attempts,
            verdicts,
            _dropped: dropped_counter,
            _unattributed: unattributed,
            _store_failures: store_failures,
            _store_stale: store_stale,
            _store_behind: store_behind,
        }
    }

    fn run(self, rx: Receiver<Job>) {
        // Like the hub's drain: while busy, poll instead of blocking, so an
        // MCP request that queues an item never pays for waking this thread.
        let mut idle_polls = IDLE_POLLS_BEFORE_BLOCKING;
        loop {
            let job = if idle_polls >= IDLE_POLLS_BEFORE_BLOCKING {
                match rx.recv_timeout(Duration::from_millis(500)) {
                    Ok(job) => job,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            } else {
                match rx.try_recv() {
                    Ok(job) => job,
                    Err(TryRecvError::Empty) => {
                        idle_polls += 1;
                        std::thread::sleep(BUSY_POLL);
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => break,
                }
            };
            idle_polls = 0;
            if !self.handle(job) {
                return;
            }
        }
        let _ = self.providers.shutdown();
    }

    /// One queued item; false after a stop.
    fn handle(&self, job: Job) -> bool {
        match job {
            Job::Served(Served::Request(request)) => self.request(&request),
            Job::Served(Served::SessionClosed(session)) => self.session(&session),
            // Something served that this exporter does not know yet.
            Job::Served(_) => {}
            Job::Hub(event) => self.hub_event(&event),
            Job::Verdict {
                verdict,
                agent_kind,
            } => self.verdicts.add(
                1,
                &[
                    KeyValue::new(sc::TETHER_PROBE_VERDICT, verdict),
                    KeyValue::new(sc::TETHER_AGENT_KIND, agent_kind),
                ],
            ),
            Job::Flush(done) => {
                for problem in self.providers.flush() {
                    tracing::debug!(%problem, "OpenTelemetry flush");
                }
                let _ = done.try_send(());
            }
            Job::Stop(done) => {
                let _ = done.try_send(self.providers.shutdown());
                return false;
            }
        }
        true
    }

    /// The client's context from `params._meta`, when it sent a valid one.
    fn parent(&self, request: &ServedRequest) -> Context {
        if request.trace.is_empty() {
            return Context::new();
        }
        let mut carrier = HashMap::new();
        let trace = &request.trace;
        for (key, value) in [
            ("traceparent", &trace.traceparent),
            ("tracestate", &trace.tracestate),
            ("baggage", &trace.baggage),
        ] {
            if let Some(value) = value {
                carrier.insert(key.to_owned(), value.clone());
            }
        }
        self.propagator.extract(&carrier)
    }

    fn request(&self, request: &ServedRequest) {
        let (metric_attrs, span_only) = convert::request_attributes(request);
        self.operation_duration
            .record(request.duration_nanos as f64 / 1e9, &metric_attrs);
        let mut attrs = metric_attrs;
        attrs.extend(span_only);
        let name: std::borrow::Cow<'static, str> = match &request.tool {
            Some(tool) => format!("{} {tool}", request.method).into(),
            None => request.method.clone(),
        };
        let start = nanos_to_time(request.start_unix_nanos);
        let end = nanos_to_time(
            request
                .start_unix_nanos
                .saturating_add(request.duration_nanos),
        );
        let parent = self.parent(request);
        let mut span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_start_time(start)
            .with_attributes(attrs)
            .start_with_context(&self.tracer, &parent);
        if request.outcome.is_server_error() {
            span.set_status(Status::error(
                request.outcome.error_type().unwrap_or_default(),
            ));
        }
        span.end_with_timestamp(end);
    }

    fn session(&self, session: &ServedSession) {
        let mut attrs = Vec::with_capacity(3);
        if let Some(version) = &session.protocol_version {
            attrs.push(KeyValue::new(sc::MCP_PROTOCOL_VERSION, version.clone()));
        }
        convert::transport_attributes(&session.transport, &mut attrs);
        self.session_duration
            .record(session.duration_nanos as f64 / 1e9, &attrs);
    }

    fn hub_event(&self, event: &HubEvent) {
        match event {
            HubEvent::AttemptBegun { owner, trigger } => self.attempts.add(
                1,
                &[
                    KeyValue::new(sc::TETHER_TRIGGER, trigger.as_str().to_owned()),
                    KeyValue::new(sc::TETHER_AGENT_KIND, owner.agent_kind().to_owned()),
                ],
            ),
            HubEvent::RowStatus {
                owner,
                status,
                reason_code,
                ..
            } => self.server_status.add(
                1,
                &[
                    KeyValue::new(sc::TETHER_DISPLAY_STATUS, status.as_str()),
                    KeyValue::new(
                        sc::TETHER_REASON_CODE,
                        reason_code
                            .as_ref()
                            .map_or("none".to_owned(), |r| r.as_str().to_owned()),
                    ),
                    KeyValue::new(sc::TETHER_AGENT_KIND, owner.agent_kind().to_owned()),
                ],
            ),
            HubEvent::Evidence { owner, evidence } => self.evidence_log(owner, evidence),
        }
    }

    fn evidence_log(&self, owner: &EventOwner, evidence: &Evidence) {
        let mut record = self.logger.create_log_record();
        record.set_event_name(sc::TETHER_EVIDENCE_EVENT);
        record.set_timestamp(UNIX_EPOCH + Duration::from_millis(evidence.at.0));
        record.set_observed_timestamp(SystemTime::now());
        let failure = evidence.reason_code.is_some()
            && matches!(
                evidence.kind,
                tether_core::vocab::EvidenceKind::ExplicitError
                    | tether_core::vocab::EvidenceKind::UnauthenticatedContact
            );
        record.set_severity_number(if failure {
            Severity::Warn
        } else {
            Severity::Info
        });
        record.set_severity_text(if failure { "WARN" } else { "INFO" });
        record.set_body(AnyValue::from(evidence.kind.as_str().to_owned()));
        let attrs = convert::evidence_attributes(owner, evidence);
        record.add_attributes(attrs);
        self.logger.emit(record);
    }
}
