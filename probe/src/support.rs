//! What both probes (ACP and passthrough) share: the sentinel's plan entry,
//! the agent's explicit environment and private directories, progress steps,
//! and the bounded, scrubbed leftovers a terminal may show.

use std::path::{Path, PathBuf};

use tether_core::history::AttachmentAttempt;
use tether_core::sanitize;
use tether_core::spec::ServerSpec;
use tether_core::vocab::{ServerSource, Transport};

use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint};
use tether_process::OutputTail;

/// Which transport the sentinel is offered over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentinelTransport {
    /// The best one the agent advertises: http, then sse, then the stdio bridge.
    Auto,
    /// Streamable HTTP only.
    Http,
    /// Legacy SSE only.
    Sse,
    /// The stdio bridge only.
    Stdio,
}

/// A step of the probe, for a progress display.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeStep {
    /// The agent process is starting.
    Spawning,
    /// `initialize` was sent.
    Initializing,
    /// `session/new` was sent with the sentinel.
    SessionRequested,
    /// The agent accepted the session.
    SessionAccepted,
    /// Waiting for evidence; the row's current status.
    Waiting(String),
    /// The prompt was sent.
    Prompting,
    /// The verdict is decided and the outcome final: print it now. Cleanup
    /// (the agent's group, the sentinel) follows, and the probe returns the
    /// same outcome once every child is gone.
    Decided(std::sync::Arc<ProbeOutcome>),
    /// Cleaning up.
    Finishing,
    /// Handing the probe's telemetry to an exporter (the caller's step).
    Exporting,
}

/// The sentinel's plan entry for the requested transport, each endpoint
/// carrying the attempt's `credential`.
pub fn sentinel_spec(
    endpoint: &ObservedEndpoint,
    transport: SentinelTransport,
    bridge: &Path,
    credential: &AttemptCredential,
) -> ServerSpec {
    let http = endpoint.http_endpoint(credential);
    let sse = endpoint.sse_endpoint(credential);
    let stdio = endpoint.bridge_endpoint(bridge, credential);
    let name = endpoint.server_name();
    match transport {
        SentinelTransport::Auto => ServerSpec::new(name, ServerSource::Sentinel, http)
            .or(sse)
            .or(stdio),
        SentinelTransport::Http => ServerSpec::new(name, ServerSource::Sentinel, http),
        SentinelTransport::Sse => ServerSpec::new(name, ServerSource::Sentinel, sse),
        SentinelTransport::Stdio => ServerSpec::new(name, ServerSource::Sentinel, stdio),
    }
}

/// The transport a sentinel request asks for (`auto` tries HTTP first).
pub fn requested_transport(t: SentinelTransport) -> Transport {
    match t {
        SentinelTransport::Auto | SentinelTransport::Http => Transport::Http,
        SentinelTransport::Sse => Transport::Sse,
        SentinelTransport::Stdio => Transport::Stdio,
    }
}

/// The agent's environment: explicit, with a private HOME unless asked.
pub fn agent_env(
    extra: &[(String, String)],
    inherit_env: bool,
    home: Option<&Path>,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    if !inherit_env {
        for key in [
            "PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL",
        ] {
            if let Ok(value) = std::env::var(key) {
                env.push((key.to_owned(), value));
            }
        }
    }
    if let Some(home) = home {
        let home = home.display().to_string();
        env.push(("HOME".into(), home.clone()));
        env.push(("XDG_CONFIG_HOME".into(), format!("{home}/.config")));
        env.push(("XDG_DATA_HOME".into(), format!("{home}/.local/share")));
        env.push(("XDG_CACHE_HOME".into(), format!("{home}/.cache")));
    }
    env.extend(extra.iter().cloned());
    env
}

/// A relative path with a separator means "from here", not from the agent's
/// fresh working directory; a bare name is looked up on PATH.
pub fn resolve_program(program: &str) -> String {
    let path = Path::new(program);
    if path.is_relative()
        && program.contains(std::path::MAIN_SEPARATOR)
        && let Ok(here) = std::env::current_dir()
    {
        return here.join(path).display().to_string();
    }
    program.to_owned()
}

/// Appends the exit status to a summary when the agent failed.
pub fn with_exit(summary: String, exit: Option<std::process::ExitStatus>) -> String {
    match exit {
        Some(status) if !status.success() && status.code().is_some() => {
            format!("{summary} (the agent exited: {status})")
        }
        _ => summary,
    }
}

/// The last lines of a tail, scrubbed (with the attempt's known secrets as
/// well as the patterns, as recent output is) and capped: for a terminal and
/// the printed report only, never stored.
pub fn scrubbed_tail(tail: &OutputTail, scrubber: &sanitize::Scrubber) -> Vec<String> {
    tail.lines()
        .iter()
        .rev()
        .take(8)
        .rev()
        .map(|l| sanitize::cap_with_ellipsis(scrubber.scrub(&without_ansi(l)).trim(), 300))
        .collect()
}

/// A terminal line without its ANSI escape sequences (colors, cursor moves),
/// which would otherwise show as `[91m` once control characters are gone.
fn without_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            // CSI: parameters and intermediates, then one final byte.
            Some('[') => {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ST.
            Some(']') => {
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.peek() == Some(&'\\')) {
                        if c == '\u{1b}' {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            // A two-character escape.
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    out
}

/// Records the agent's own exit, seen while the probe waited: how, after how
/// long, whether before any contact with the sentinel (read off `attempt`),
/// and its last stderr lines; and publishes it to the attempt as
/// attempt-level `agent_exited` evidence, so its rows say they were
/// delivered to a process that exited.
pub fn record_agent_exit(
    sink: &tether_hub::EvidenceSink,
    status: std::process::ExitStatus,
    ran: std::time::Duration,
    attempt: Option<&AttachmentAttempt>,
    stderr_tail: Vec<String>,
) -> tether_core::probe::ProbeAgentExit {
    use std::os::unix::process::ExitStatusExt as _;
    let exit = tether_core::probe::ProbeAgentExit {
        code: status.code(),
        signal: status.signal(),
        ran_ms: u64::try_from(ran.as_millis()).unwrap_or(u64::MAX),
        before_contact: !attempt.is_some_and(|a| {
            tether_core::probe::had_contact(a, tether_kandev_endpoint::SENTINEL_SERVER)
        }),
        stderr_tail,
    };
    let mut evidence = tether_core::model::Evidence::new(
        tether_core::vocab::EvidenceKind::AgentExited,
        tether_hub::now(),
    );
    evidence.summary = Some(exit.describe());
    if let Err(err) = sink.publish(evidence) {
        tracing::debug!(%err, "the agent's exit was not queued");
    }
    exit
}

/// Sentinel lifecycle markers (opaque connection ids, no payloads) as JSONL.
pub fn write_sentinel_markers(dir: &Path, attempt: &AttachmentAttempt, name: &str) {
    let lines: Vec<String> = attempt
        .evidence
        .iter()
        .filter(|e| e.server.as_deref() == Some(name))
        .filter_map(|e| serde_json::to_string(e).ok())
        .collect();
    if let Err(err) = std::fs::write(dir.join("sentinel.jsonl"), lines.join("\n") + "\n") {
        tracing::warn!(%err, "writing sentinel markers");
    }
}

/// What both probes are given: the agent's command and environment, where it
/// runs, how the sentinel is offered, and the bounds of the wait.
#[derive(Debug, Clone)]
pub struct ProbeTarget {
    /// The agent's (or CLI's) program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment (`--env K=V`).
    pub env: Vec<(String, String)>,
    /// Inherit this process's environment.
    pub inherit_env: bool,
    /// Keep the real HOME instead of a private one.
    pub keep_home: bool,
    /// Working directory; a fresh temporary one when `None`.
    pub cwd: Option<PathBuf>,
    /// The sentinel's transport.
    pub transport: SentinelTransport,
    /// How long to wait for a connection once the agent has the sentinel.
    pub grace: std::time::Duration,
    /// Bound on the whole run.
    pub timeout: std::time::Duration,
    /// Where to write frames and sentinel markers.
    pub out_dir: Option<PathBuf>,
    /// The `tether-bridge` program for the stdio transport.
    pub bridge_program: Option<PathBuf>,
    /// More servers to offer beside the sentinel.
    pub extra_servers: Vec<ServerSpec>,
    /// Offer `extra_servers` through the observing relay (stdio through
    /// `tether-relay`, HTTP and SSE through its proxy), so their rows show
    /// what they really served.
    pub observe_servers: bool,
    /// Where the probe's requests and evidence are also told (an exporter).
    pub export: ProbeExport,
}

/// Observers a probe installs on its sentinel endpoint and its hub, for an
/// exporter such as tether-otel (`tether probe --otlp`). Empty by default.
#[derive(Clone, Default)]
pub struct ProbeExport {
    /// Told every request the sentinel answers.
    pub served: Option<tether_core::served::SharedServedObserver>,
    /// Told every attempt, evidence event and row status the probe's hub accepts.
    pub hub: Option<std::sync::Arc<dyn tether_hub::HubSubscriber>>,
}

impl std::fmt::Debug for ProbeExport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeExport")
            .field("served", &self.served.is_some())
            .field("hub", &self.hub.is_some())
            .finish()
    }
}

impl ProbeExport {
    /// Installs the observers on the probe's sentinel and hub.
    pub fn install(&self, endpoint: &ObservedEndpoint, hub: &tether_hub::Hub) {
        if let Some(served) = &self.served {
            endpoint.on_served(std::sync::Arc::clone(served));
        }
        if let Some(subscriber) = &self.hub {
            hub.add_subscriber(std::sync::Arc::clone(subscriber));
        }
    }
}

/// The extra servers as offered: relayed where the target asks and the
/// transport allows (see [`tether_relay::Offered`]). Keep it for the whole
/// probe: the relay channel lives with it.
pub struct OfferedServers {
    /// What was offered.
    pub offered: tether_relay::Offered,
    _relay: Option<tether_relay::RelayHost>,
}

impl std::ops::Deref for OfferedServers {
    type Target = tether_relay::Offered;

    fn deref(&self) -> &Self::Target {
        &self.offered
    }
}

impl ProbeTarget {
    /// `program` with `args` and the `tether probe` defaults: a private HOME
    /// and working directory, only the basic environment, the sentinel's
    /// transport chosen automatically, 3 s of grace, 60 s in all, nothing
    /// else offered, nothing exported.
    pub fn new(program: impl Into<String>, args: &[&str]) -> Self {
        ProbeTarget {
            program: program.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: vec![],
            inherit_env: false,
            keep_home: false,
            cwd: None,
            transport: SentinelTransport::Auto,
            grace: std::time::Duration::from_secs(3),
            timeout: std::time::Duration::from_secs(60),
            out_dir: None,
            bridge_program: None,
            extra_servers: vec![],
            observe_servers: false,
            export: ProbeExport::default(),
        }
    }

    /// The `tether-relay` to offer: the one next to this executable, else
    /// whatever `tether-relay` the agent finds on its PATH.
    pub fn relay(&self) -> PathBuf {
        tether_relay::relay_next_to_current_exe().unwrap_or_else(|| PathBuf::from("tether-relay"))
    }

    /// The extra servers to offer, relayed when `observe_servers` is set.
    pub async fn offer_servers(&self) -> Result<OfferedServers, String> {
        if !self.observe_servers || self.extra_servers.is_empty() {
            return Ok(OfferedServers {
                offered: tether_relay::Offered::direct(&self.extra_servers),
                _relay: None,
            });
        }
        let relay = tether_relay::RelayHost::start(self.relay())
            .await
            .map_err(|e| format!("cannot open the relay channel: {e}"))?;
        // Relayed servers' requests go to the same exporter as the sentinel's.
        if let Some(served) = &self.export.served {
            relay.on_served(std::sync::Arc::clone(served));
        }
        Ok(OfferedServers {
            offered: relay.offer(&self.extra_servers, |_| true),
            _relay: Some(relay),
        })
    }

    /// The `tether-bridge` to offer: the one given, else the one next to this
    /// executable, else whatever `tether-bridge` the agent finds on its PATH.
    pub fn bridge(&self) -> PathBuf {
        self.bridge_program
            .clone()
            .or_else(tether_kandev_endpoint::bridge_next_to_current_exe)
            .unwrap_or_else(|| PathBuf::from("tether-bridge"))
    }
}

/// A probe's result: the report plus what only a terminal should see.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOutcome {
    /// The public report.
    pub report: tether_core::probe::ProbeReport,
    /// The agent's last stderr lines, scrubbed (never put into the report).
    pub stderr_tail: Vec<String>,
    /// The working directory the agent ran in (and, over ACP, the `cwd` sent).
    pub cwd_sent: Option<PathBuf>,
}

impl ProbeOutcome {
    /// The agent could not be started or initialized: verdict `agent_failed`,
    /// and nothing was offered.
    pub fn agent_failed(
        agent: tether_core::probe::ProbeAgent,
        reason: tether_core::vocab::ReasonCode,
        summary: &str,
        elapsed_ms: u64,
        stderr_tail: Vec<String>,
        cwd_sent: Option<PathBuf>,
    ) -> Self {
        ProbeOutcome {
            report: tether_core::probe::ProbeReport::agent_failed(
                agent,
                tether_kandev_endpoint::SENTINEL_SERVER,
                reason,
                summary,
                elapsed_ms,
            ),
            stderr_tail,
            cwd_sent,
        }
    }
}

/// A fresh working directory (resolved; the path agents run in and are told)
/// and, unless the real HOME is kept, a private HOME. Both vanish on drop.
#[derive(Debug)]
pub struct ProbeDirs {
    /// The resolved working directory.
    pub cwd: PathBuf,
    /// The private HOME, when one was made.
    pub home: Option<PathBuf>,
    _temp_cwd: Option<tempfile::TempDir>,
    _temp_home: Option<tempfile::TempDir>,
}

impl ProbeDirs {
    /// Prepares the directories; `cwd` overrides the temporary one.
    pub fn prepare(cwd: Option<&Path>, keep_home: bool) -> Result<Self, String> {
        let temp_cwd = match cwd {
            Some(_) => None,
            None => Some(
                tempfile::Builder::new()
                    .prefix("tether-probe-cwd-")
                    .tempdir()
                    .map_err(|e| format!("cannot create a temporary working directory: {e}"))?,
            ),
        };
        let raw = cwd
            .map(Path::to_path_buf)
            .or_else(|| temp_cwd.as_ref().map(|d| d.path().to_path_buf()))
            .unwrap_or_else(std::env::temp_dir);
        let cwd = std::fs::canonicalize(&raw)
            .map_err(|e| format!("working directory {}: {e}", raw.display()))?;
        let temp_home = if keep_home {
            None
        } else {
            Some(
                tempfile::Builder::new()
                    .prefix("tether-probe-home-")
                    .tempdir()
                    .map_err(|e| format!("cannot create a private HOME: {e}"))?,
            )
        };
        let home = temp_home
            .as_ref()
            .and_then(|d| std::fs::canonicalize(d.path()).ok());
        Ok(ProbeDirs {
            cwd,
            home,
            _temp_cwd: temp_cwd,
            _temp_home: temp_home,
        })
    }
}

/// Starts loading the token encoder (o200k_base) on a blocking thread, so the
/// catalogs built when servers list their tools do not wait for it.
pub fn warm_token_encoder() {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn_blocking(tether_catalog::method);
    }
}

/// How long the end of a probe waits for catalogs still being built.
pub const CATALOG_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// Waits (at most `limit`) until every row whose tools/list was seen from the
/// server side (the host's endpoint, or the relay) carries its catalog, which
/// is built off the traffic's path after the listing; so the report can say
/// what the tools cost the model. It only waits: nothing here changes a
/// row's status or the verdict.
pub async fn await_catalogs(hub: &tether_hub::Hub, session: &str, limit: std::time::Duration) {
    use tether_core::model::ProvenanceCode;
    let until = tokio::time::Instant::now() + limit;
    loop {
        hub.flush().await;
        let pending = hub
            .snapshot(session)
            .and_then(|h| h.current().cloned())
            .is_some_and(|attempt| {
                attempt.servers.iter().any(|row| {
                    let listed = &row.stages.tools_listed;
                    listed.state == tether_core::vocab::StageState::Yes
                        && matches!(
                            listed.provenance,
                            Some(ProvenanceCode::SessionEvent | ProvenanceCode::Relay)
                        )
                        && row.tool_catalog.is_none()
                })
            });
        if !pending || tokio::time::Instant::now() >= until {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::without_ansi;

    #[test]
    fn ansi_escapes_are_removed_and_text_kept() {
        assert_eq!(
            without_ansi("\u{1b}[91m\u{1b}[1mError: \u{1b}[0m{"),
            "Error: {"
        );
        assert_eq!(without_ansi("\u{1b}]0;title\u{7}plain"), "plain");
        assert_eq!(without_ansi("no escapes"), "no escapes");
        assert_eq!(without_ansi("cut \u{1b}["), "cut ");
    }
}
