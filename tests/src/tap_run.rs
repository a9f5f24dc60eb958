//! The set-up `tests/tests/model_tap.rs` and `tests/tests/tap_sources.rs`
//! share: a tap told of no server (nothing configured), a real CLI run
//! through it against the fake model, bounded and killed by process group,
//! and what each checks of it: the MCP tools the fake model was sent are
//! the ones the tap recorded, by the harness's naming alone, and the one
//! session gets the server's row, model-visible by `model_tap`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tether_core::registry::Registry;
use tether_tap::{RunningTap, Tap, TapConfig, TapLimits, TapRecord, TapTool};

use crate::fake_model::{ModelLog, Turn};

/// How long one CLI run through the tap may take before the test fails
/// (a generous bound: a run asks the model a few times).
const RUN_BOUND_SECS: u64 = 180;

/// How long the tap may take to record what the fake model answered once
/// the run is over (a generous bound: its observer reads in memory).
const RECORDS_BOUND: Duration = Duration::from_secs(30);

/// A tap with no configured server in front of `upstream` (a base URL),
/// on `hub` where given.
pub async fn bare_tap(upstream: &str, hub: Option<&Arc<tether_hub::Hub>>) -> RunningTap {
    bare_tap_with(upstream, TapLimits::default(), hub).await
}

/// [`bare_tap`] with its bounds.
pub async fn bare_tap_with(
    upstream: &str,
    limits: TapLimits,
    hub: Option<&Arc<tether_hub::Hub>>,
) -> RunningTap {
    let config = TapConfig {
        upstream: Some(upstream.parse().expect("the upstream's URL")),
        limits,
        ..Default::default()
    };
    Tap::serve(
        config,
        "127.0.0.1:0".parse().expect("addr"),
        Registry::with_static().expect("registry"),
        hub.map(Arc::clone),
    )
    .await
    .expect("the tap")
}

/// One real CLI run through a bare tap, and what came of it.
pub struct TappedRun {
    /// What the fake model was sent and answered.
    pub log: ModelLog,
    /// The tap's records of model requests (those of an API it reads).
    pub records: Vec<TapRecord>,
    /// The hub the tap published to.
    pub hub: Arc<tether_hub::Hub>,
    /// The run's exit and output.
    pub out: std::process::Output,
}

/// Runs a real CLI through a bare tap to the fake model, which calls
/// `target` (`SERVER/TOOL`): `command` is given the tap's base URL and
/// builds the CLI's command (`None`: its CLI is not installed, a loud skip
/// of the caller's). It runs with only the environment `command` set, no
/// stdin, one real CLI at a time, bounded and killed by process group;
/// then the tap is given a bounded while to record every request the
/// model answered, settled, its hub flushed and the tap stopped.
pub async fn run_through_bare_tap(
    target: &str,
    command: impl FnOnce(&str) -> Option<std::process::Command>,
) -> Option<TappedRun> {
    let _one = crate::one_real_cli_at_a_time().await;
    crate::tether_first_party::link();
    let (model, log) = crate::fake_model::start_model(target).await;
    let hub = Arc::new(tether_hub::Hub::new(
        Registry::with_static().expect("registry"),
    ));
    let tap = bare_tap(&model.base(), Some(&hub)).await;
    let Some(mut cmd) = command(&tap.base_url()) else {
        tap.stop().await;
        return None;
    };
    cmd.stdin(std::process::Stdio::null());
    // Only what is set here (no user's configuration leaks in).
    let envs: Vec<(std::ffi::OsString, std::ffi::OsString)> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .collect();
    cmd.env_clear().envs(envs);
    let out = tokio::task::spawn_blocking(move || crate::output_within(cmd, RUN_BOUND_SECS))
        .await
        .expect("the run");
    let answered = log
        .turns()
        .into_iter()
        .filter(|t| tether_tap::api::Api::of(&t.path).is_some())
        .count();
    // Every request the model answered has its record once the observer
    // read it; bounded.
    let deadline = std::time::Instant::now() + RECORDS_BOUND;
    let records = loop {
        let records: Vec<_> = tap
            .tap()
            .recent()
            .into_iter()
            .filter(|r| r.api.is_some())
            .collect();
        if records.len() >= answered || std::time::Instant::now() > deadline {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tap.tap().settle().await;
    hub.flush().await;
    tap.stop().await;
    Some(TappedRun {
        log,
        records,
        hub,
        out,
    })
}

/// The MCP tools the fake model was sent over `turns`, as the tap shows
/// names (sanitized): offered (by their descriptions), named behind a tool
/// search where `named` keeps the name, and called (`mcp__…`).
pub fn sent_mcp_tools(turns: &[Turn], named: impl Fn(&str) -> bool) -> BTreeSet<String> {
    let shown = |n: &str| tether_core::sanitize::name(n);
    turns
        .iter()
        .flat_map(|t| {
            t.origins
                .iter()
                .map(|(n, _)| shown(n))
                .chain(t.named.iter().filter(|n| named(n)).map(|n| shown(n)))
                .chain(
                    t.called
                        .iter()
                        .filter(|c| c.starts_with("mcp__"))
                        .map(|c| shown(c)),
                )
        })
        .collect()
}

impl TappedRun {
    /// Every tool the tap recorded: offered, deferred and called.
    pub fn tools(&self) -> Vec<&TapTool> {
        self.records
            .iter()
            .flat_map(|r| r.offered.iter().chain(&r.deferred).chain(&r.called))
            .collect()
    }

    /// Asserts the MCP tools the tap recorded as a server's are `sent`,
    /// none unresolved, each `server`'s by the naming.
    pub fn assert_recorded_as_sent(&self, label: &str, sent: &BTreeSet<String>, server: &str) {
        let tools = self.tools();
        let recorded: BTreeSet<String> = tools
            .iter()
            .filter(|t| t.server.is_some())
            .map(|t| t.name.clone())
            .collect();
        assert_eq!(&recorded, sent, "{label}: the MCP tools, recorded and sent");
        for t in &tools {
            assert!(!t.unresolved, "{label}: {t:?}");
            if let Some(s) = &t.server {
                assert_eq!(s, server, "{label}: {t:?}");
                assert_eq!(t.by, Some("naming"), "{label}: {t:?}");
            }
        }
    }

    /// The one session the tap's records name, and its row of `server`,
    /// asserted model-visible by `model_tap`.
    pub fn model_visible_row(&self, label: &str, server: &str) -> tether_core::ServerAttachment {
        let sessions: BTreeSet<_> = self
            .records
            .iter()
            .filter_map(|r| r.session.clone())
            .collect();
        assert_eq!(sessions.len(), 1, "{label}: {sessions:?}");
        let session = sessions.into_iter().next().expect("one");
        model_visible_in(&self.hub, &session, label, server)
    }
}

/// `session`'s row of `server` in `hub` (its current attempt), asserted
/// model-visible by `model_tap`.
pub fn model_visible_in(
    hub: &tether_hub::Hub,
    session: &str,
    label: &str,
    server: &str,
) -> tether_core::ServerAttachment {
    let history = hub.snapshot(session).expect("the session");
    let row = history
        .current()
        .and_then(|a| a.server(server))
        .cloned()
        .unwrap_or_else(|| panic!("{label}: no {server} row: {history:?}"));
    assert_eq!(
        row.stages.model_visible.state,
        tether_core::vocab::StageState::Yes,
        "{label}: {row:?}"
    );
    assert_eq!(
        row.stages.model_visible.provenance,
        Some(tether_core::model::ProvenanceCode::ModelTap),
        "{label}"
    );
    row
}
