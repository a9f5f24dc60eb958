//! Endpoint tests over an inventory (`tether inventory --test`): which rows
//! are tested, where a stdio server runs, and running the tests a few at a
//! time. The test itself is the caller's (a host passes the endpoint check of
//! `tether-diagnostics`), so this crate speaks no MCP.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`inventory/`), each
//! with the test that checks it.
//!
//! A row is tested when enabled and resolvable; a stdio server without `cwd`
//! runs in the project. `tool_row` (one server's tool as its entry's filter
//! leaves it) is shared with `session_tools.rs`.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use tether_core::inventory::{CapabilityLink, InventoryDocument, InventoryRow, from_config};
use tether_core::last_mile::{Listed, Rules};
use tether_core::model::{EndpointTestResult, ProvenanceCode, StageObservation, ToolCatalog};
use tether_core::sanitize;
use tether_core::spec::Endpoint;
use tether_core::vocab::{CapabilityKind, ReasonCode, StageState};

/// One row to test.
#[derive(Debug, Clone)]
pub struct RowTest {
    /// The row's index in the document.
    pub index: usize,
    /// The endpoint to test (holds secrets; in memory only).
    pub endpoint: Endpoint,
    /// `harness/scope name`, for progress lines.
    pub label: String,
}

/// Where a running set of tests stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestProgress {
    /// Tests finished.
    pub done: usize,
    /// Tests in all.
    pub total: usize,
    /// Labels of the tests running now, in row order.
    pub running: Vec<String>,
}

/// The rows worth testing: enabled by configuration, with a command that
/// resolves and an endpoint in memory. A stdio server with no `cwd` runs in
/// the project, as harnesses start it.
pub fn rows_to_test(document: &InventoryDocument, project: Option<&Path>) -> Vec<RowTest> {
    document
        .rows
        .iter()
        .enumerate()
        // A command that does not resolve, a cwd that does not exist, or
        // a variable that is not set, is the cause already: a test would only report what it leads to
        // (a spawn error, `host_not_found`, a 401).
        .filter(|(_, r)| {
            r.is_enabled()
                && !matches!(
                    r.reason_code,
                    Some(
                        ReasonCode::CommandNotFound
                            | ReasonCode::CwdNotFound
                            | ReasonCode::UnresolvedVariable
                    )
                )
        })
        .filter_map(|(index, row)| {
            let mut endpoint = row.endpoint.clone()?;
            if let (
                Endpoint::Stdio {
                    cwd: cwd @ None, ..
                },
                Some(project),
            ) = (&mut endpoint, project)
            {
                *cwd = Some(project.to_string_lossy().into_owned());
            }
            Some(RowTest {
                index,
                endpoint,
                label: label(row),
            })
        })
        .collect()
}

fn label(row: &InventoryRow) -> String {
    format!("{}/{} {}", row.harness, row.scope, row.name)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where a run stands, told to `progress` on every start and finish.
struct Tracker {
    progress: Option<tokio::sync::watch::Sender<TestProgress>>,
    total: usize,
    /// Tests finished, and the labels of those running by row index.
    state: Mutex<(usize, BTreeMap<usize, String>)>,
}

impl Tracker {
    fn update(&self, change: impl FnOnce(&mut usize, &mut BTreeMap<usize, String>)) {
        let mut state = lock(&self.state);
        let (done, running) = &mut *state;
        change(done, running);
        if let Some(tx) = &self.progress {
            tx.send_replace(TestProgress {
                done: *done,
                total: self.total,
                running: running.values().cloned().collect(),
            });
        }
    }
}

/// The last-mile rules of a harness, by its name (from the plugin
/// registry), for [`test_rows`] to predict what each listed tool becomes.
pub type RulesOf<'a> = &'a (dyn Fn(&str) -> Option<Rules> + Sync);

/// Tests [`rows_to_test`] with `test`, at most `concurrency` at once, and
/// applies each result to its row: the test, what the listed tools cost
/// (the catalog, with the row's tool filter applied), and a row per tool
/// with its last mile as `rules_of` its harness predicts it; then
/// recomputes the document's token totals. `progress` is told of every
/// start and finish. Returns whether any test failed. Call inside a Tokio
/// runtime.
pub async fn test_rows<F, Fut>(
    document: &mut InventoryDocument,
    project: Option<&Path>,
    concurrency: usize,
    progress: Option<tokio::sync::watch::Sender<TestProgress>>,
    rules_of: RulesOf<'_>,
    test: F,
) -> bool
where
    F: Fn(Endpoint) -> Fut,
    Fut: Future<Output = (EndpointTestResult, Option<ToolCatalog>)> + Send + 'static,
{
    let jobs = rows_to_test(document, project);
    let gate = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let tracker = Arc::new(Tracker {
        progress,
        total: jobs.len(),
        state: Mutex::new((0, BTreeMap::new())),
    });
    tracker.update(|_, _| {});
    let mut set = tokio::task::JoinSet::new();
    for job in jobs {
        let gate = gate.clone();
        let tracker = tracker.clone();
        let run = test(job.endpoint);
        set.spawn(async move {
            let _permit = gate.acquire_owned().await;
            tracker.update(|_, running| {
                running.insert(job.index, job.label);
            });
            let result = run.await;
            tracker.update(|_, running| {
                running.remove(&job.index);
            });
            (job.index, result)
        });
    }
    let mut failed = false;
    let mut tools = Vec::new();
    while let Some(next) = set.join_next().await {
        // A test task that panicked shows nothing either way: the row keeps its stages.
        let Ok((index, (result, catalog))) = next else {
            continue;
        };
        tracker.update(|done, _| *done += 1);
        failed |= !result.succeeded;
        if let Some(row) = document.rows.get_mut(index) {
            if let (true, Some(catalog)) = (result.succeeded, &catalog) {
                row.apply_catalog(catalog);
                let rules = rules_of(&row.harness);
                let rows = tool_rows(row, catalog, rules.as_ref());
                row.links.extend(rows.iter().map(|t| CapabilityLink {
                    kind: CapabilityKind::McpTool,
                    name: t.name.clone(),
                }));
                tools.extend(rows);
            }
            row.apply_test(result);
        }
    }
    document.rows.extend(tools);
    apply_tool_limits(document, rules_of);
    document.compute_token_totals();
    failed
}

/// The tool-count rule of each harness over all its servers: when the tools
/// it would offer pass its provider's limit, each of them says so
/// (`tool_limit_exceeded`, stage `no` by `documented_rule`). Each tested
/// server counts the tools it listed (a catalog keeps rows for 128 of them)
/// less those the rules keep out; a server named in two scopes is one
/// server to the harness, so its tools count once.
fn apply_tool_limits(document: &mut InventoryDocument, rules_of: RulesOf<'_>) {
    let offered = |r: &InventoryRow| {
        r.kind == CapabilityKind::McpTool && r.model.as_ref().is_some_and(|m| m.offered)
    };
    let mut withheld: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for r in document
        .rows
        .iter()
        .filter(|r| r.kind == CapabilityKind::McpTool && !offered(r))
    {
        let server = r.name.split('/').next().unwrap_or_default();
        *withheld.entry((&r.harness, server)).or_default() += 1;
    }
    let mut by_harness: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for r in document
        .rows
        .iter()
        .filter(|r| r.kind == CapabilityKind::McpServer)
    {
        let Some(listed) = r
            .endpoint_test
            .as_ref()
            .filter(|t| t.succeeded)
            .and_then(|t| t.tool_count)
        else {
            continue;
        };
        let kept = (listed as usize)
            .saturating_sub(withheld.get(&(&r.harness, &r.name)).copied().unwrap_or(0));
        by_harness
            .entry(&r.harness)
            .or_default()
            .insert(&r.name, kept);
    }
    let over: BTreeMap<String, String> = by_harness
        .into_iter()
        .filter_map(|(harness, servers)| {
            let rules = rules_of(harness)?;
            let why = tether_core::last_mile::over_tool_limit(&rules, servers.values().sum())?;
            Some((harness.to_owned(), why))
        })
        .collect();
    for r in document.rows.iter_mut().filter(|r| offered(r)) {
        let Some(why) = over.get(&r.harness) else {
            continue;
        };
        let at = r.stages.tools_listed.at.unwrap_or_default();
        r.stages.current_thread =
            StageObservation::shown(StageState::No, ProvenanceCode::DocumentedRule, at);
        r.reason_code = Some(ReasonCode::ToolLimitExceeded);
        r.summary = Some(sanitize::summary(why));
        if let Some(m) = &mut r.model {
            m.offered = false;
            m.reason_code = Some(ReasonCode::ToolLimitExceeded);
            m.rule = Some(why.clone());
        }
    }
}

/// One row per tool a tested server listed (`SERVER/TOOL`): listed (by the
/// endpoint test), kept or hidden by the entry's own filter (`excluded`,
/// naming the filter), with its token estimate, and its last mile as the
/// harness's `rules` predict it (its name as the model sees it; a tool the
/// rules keep from the model says why, its stage `no` by
/// `documented_rule`). Whether the model saw it is left unknown: only a
/// session shows that.
pub fn tool_rows(
    server: &InventoryRow,
    catalog: &ToolCatalog,
    rules: Option<&Rules>,
) -> Vec<InventoryRow> {
    let at = catalog.at;
    let tested = |state| StageObservation::shown(state, ProvenanceCode::EndpointTest, at);
    let mut rows: Vec<InventoryRow> = catalog
        .tools
        .iter()
        .map(|tool| {
            let mut row = tool_row(server, &tool.name, at);
            row.stages.initialized = tested(StageState::Yes);
            row.stages.authenticated = tested(StageState::Yes);
            row.stages.tools_listed = tested(StageState::Yes);
            row.tool_tokens = Some(u64::from(tool.token_estimate));
            row
        })
        .collect();
    let Some(rules) = rules else {
        return rows;
    };
    // Only the tools the entry's filter keeps reach the harness's rules, in
    // the order the server listed them.
    let mut kept: Vec<(usize, &tether_core::model::CatalogTool)> = catalog
        .tools
        .iter()
        .enumerate()
        .filter(|(i, _)| rows[*i].is_enabled())
        .collect();
    kept.sort_by_key(|(_, t)| t.listed_at);
    let kept: Vec<(usize, Listed)> = kept
        .into_iter()
        .map(|(i, t)| {
            (
                i,
                Listed::new(sanitize::name(&t.name), t.input_schema.as_ref()),
            )
        })
        .collect();
    let listed: Vec<Listed> = kept.iter().map(|(_, l)| l.clone()).collect();
    // The entry's own settings can change the rules (Claude Code's `alwaysLoad`).
    let rules = rules.for_entry(&server.diagnostics.settings);
    let predicted = tether_core::last_mile::predict(&rules, &server.name, &listed);
    let rule = |state| StageObservation::shown(state, ProvenanceCode::DocumentedRule, at);
    for ((i, _), p) in kept.into_iter().zip(predicted) {
        let row = &mut rows[i];
        if !p.offered {
            row.stages.current_thread = rule(StageState::No);
            if tether_core::last_mile::unaccepted(p.reason_code.as_ref()) {
                row.stages.schema_accepted = rule(StageState::No);
            }
            row.reason_code = p.reason_code.clone();
            row.summary = p.rule.as_deref().map(sanitize::summary);
        }
        row.model = Some(Box::new(p));
    }
    rows
}

/// The row of `server`'s tool `tool` (`SERVER/TOOL`), linked to it, with the
/// server's stages and enabled as the entry's own filter leaves it
/// (`excluded`, naming the filter, when it hides the tool). What showed the
/// tool fills in the rest.
pub fn tool_row(
    server: &InventoryRow,
    tool: &str,
    at: tether_core::model::Timestamp,
) -> InventoryRow {
    let include = server.diagnostics.include_tools.as_deref();
    let exclude = &server.diagnostics.exclude_tools;
    let name = sanitize::name(tool);
    let (kept, reason, summary) = if exclude.contains(&name) {
        (
            false,
            Some(ReasonCode::Excluded),
            Some(format!("{name} is in the entry's exclude list")),
        )
    } else if include.is_some_and(|names| !names.contains(&name)) {
        (
            false,
            Some(ReasonCode::Excluded),
            Some(format!("{name} is not in the entry's include list")),
        )
    } else {
        (true, None, None)
    };
    let mut stages = server.stages.clone();
    stages.enabled = if server.is_enabled() {
        from_config(kept, server.stages.enabled.at.unwrap_or(at))
    } else {
        server.stages.enabled
    };
    InventoryRow {
        kind: CapabilityKind::McpTool,
        harness: server.harness.clone(),
        scope: server.scope.clone(),
        name: format!("{}/{name}", server.name),
        transport: server.transport.clone(),
        target: server.target.clone(),
        stages,
        reason_code: if server.is_enabled() {
            reason
        } else {
            server.reason_code.clone()
        },
        summary: if server.is_enabled() {
            summary
        } else {
            server.summary.clone()
        },
        source: server.source.clone(),
        diagnostics: Default::default(),
        endpoint_test: None,
        tool_tokens: None,
        model: None,
        call_policy: server.call_policy.as_ref().map(|p| p.for_tool(&name)),
        notes: Vec::new(),
        links: vec![CapabilityLink {
            kind: CapabilityKind::McpServer,
            name: server.name.clone(),
        }],
        endpoint: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listed tool with no description or schema, costing `tokens`.
    fn catalog_tool(name: &str, tokens: u32) -> tether_core::model::CatalogTool {
        tether_core::model::CatalogTool {
            name: name.into(),
            listed_at: 0,
            description: None,
            description_truncated: false,
            input_schema: None,
            input_schema_truncated: false,
            input_schema_bytes: 0,
            token_estimate: tokens,
        }
    }
    use std::collections::BTreeMap;
    use tether_core::model::Timestamp;
    use tether_core::vocab::{ConfigScope, Transport};

    use crate::context::ScanContext;
    use crate::rows::{Enablement, FoundServer, ScanOutput};

    #[test]
    fn tool_rows_say_which_tools_the_entry_keeps_and_why_one_is_hidden() {
        let mut doc = document();
        let server = doc
            .rows
            .iter_mut()
            .find(|r| r.is_enabled())
            .expect("an enabled row");
        server.diagnostics.exclude_tools = vec!["drop".into()];
        let tool = |name: &str| catalog_tool(name, 7);
        let catalog = ToolCatalog {
            method: "test".into(),
            at: Timestamp(5),
            tool_count: 2,
            tools: vec![tool("drop"), tool("keep")],
            truncated: false,
            total_tokens: 14,
        };
        let rows = tool_rows(server, &catalog, None);
        let by = |n: &str| {
            rows.iter()
                .find(|r| r.name.ends_with(&format!("/{n}")))
                .expect("a tool row")
        };
        assert_eq!(by("keep").stages.enabled.state, StageState::Yes);
        assert_eq!(by("keep").reason_code, None);
        assert_eq!(by("drop").stages.enabled.state, StageState::No);
        assert_eq!(by("drop").reason_code, Some(ReasonCode::Excluded));
        assert!(rows.iter().all(|r| r.kind == CapabilityKind::McpTool
            && r.tool_tokens == Some(7)
            && r.stages.tools_listed.state == StageState::Yes
            && r.stages.model_visible.state == StageState::Unknown));
    }

    fn document() -> InventoryDocument {
        let path = BTreeMap::from([("PATH".to_owned(), "/usr/bin:/bin".into())]);
        let ctx = ScanContext::new("/nonexistent".into(), None, "/".into(), path);
        let mut out = ScanOutput::default();
        let http = |url: &str| Endpoint::Http {
            url: url.into(),
            headers: vec![],
        };
        out.push(
            &ctx,
            FoundServer::new("x", ConfigScope::User, "a", "~/f".into(), http("http://a")),
        );
        let mut off = FoundServer::new(
            "x",
            ConfigScope::User,
            "off",
            "~/f".into(),
            http("http://b"),
        );
        off.enablement = Enablement::Off(ReasonCode::DisabledInConfig, "disabled".into());
        out.push(&ctx, off);
        out.push(
            &ctx,
            FoundServer::new(
                "x",
                ConfigScope::Project,
                "local",
                "~/f".into(),
                Endpoint::Stdio {
                    command: "sh".into(),
                    args: vec![],
                    env: vec![],
                    cwd: None,
                },
            ),
        );
        out.into_document(None)
    }

    #[test]
    fn given_a_disabled_row_and_a_stdio_row_without_cwd_when_picking_then_the_disabled_row_is_skipped_and_stdio_runs_in_the_project()
     {
        let doc = document();
        let picked = rows_to_test(&doc, Some(Path::new("/work/project")));
        let names: Vec<&str> = picked.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(names, ["x/user a", "x/project local"]);
        assert!(matches!(
            &picked[1].endpoint,
            Endpoint::Stdio { cwd: Some(cwd), .. } if cwd == "/work/project"
        ));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn given_two_testable_rows_when_one_test_fails_then_both_rows_carry_their_result_and_the_run_reports_a_failure()
     {
        let mut doc = document();
        // The user row keeps only t1 of the server's two tools.
        doc.rows[0].diagnostics.include_tools = Some(vec!["t1".into()]);
        let (tx, rx) = tokio::sync::watch::channel(TestProgress::default());
        let failed = test_rows(
            &mut doc,
            None,
            1,
            Some(tx),
            &|_| None,
            |endpoint| async move {
                let ok = endpoint.transport() == Transport::Http;
                let tool = catalog_tool;
                let catalog = ok.then(|| ToolCatalog {
                    method: tether_core::model::CATALOG_METHOD.into(),
                    at: Timestamp(1),
                    tool_count: 2,
                    tools: vec![tool("t1", 100), tool("t2", 250)],
                    truncated: false,
                    total_tokens: 350,
                });
                let result = EndpointTestResult {
                    at: Timestamp(1),
                    succeeded: ok,
                    reason_code: (!ok).then_some(ReasonCode::ProtocolError),
                    summary: None,
                    transport: endpoint.transport(),
                    target: endpoint.target(),
                    server_name: ok.then(|| "srv".to_owned()),
                    server_version: None,
                    protocol_version: None,
                    era: None,
                    tool_count: ok.then_some(2),
                    tool_tokens: None,
                    token_method: None,
                    call: None,
                    elapsed_ms: 1,
                };
                (result, catalog)
            },
        )
        .await;
        assert!(failed);
        assert_eq!(
            doc.rows[0].tool_tokens,
            Some(100),
            "the filter subtracts t2"
        );
        assert_eq!(doc.rows[2].tool_tokens, None, "failed: no figure");
        let totals: Vec<_> = doc
            .token_totals
            .iter()
            .map(|t| (t.scope.clone(), t.servers, t.unmeasured, t.tokens))
            .collect();
        assert_eq!(
            totals,
            [
                (None, 1, 1, 100),
                (Some(ConfigScope::Project), 0, 1, 0),
                (Some(ConfigScope::User), 1, 0, 100),
            ],
            "disabled rows are not counted; unmeasured ones are named"
        );
        assert_eq!(
            *rx.borrow(),
            TestProgress {
                done: 2,
                total: 2,
                running: vec![]
            }
        );
        assert_eq!(
            doc.rows[0].endpoint_test.as_ref().map(|t| t.succeeded),
            Some(true)
        );
        assert!(doc.rows[1].endpoint_test.is_none(), "disabled: not tested");
        assert_eq!(
            doc.rows[2].endpoint_test.as_ref().map(|t| t.succeeded),
            Some(false)
        );
        assert_eq!(doc.rows[2].reason_code, Some(ReasonCode::ProtocolError));
    }
}
