//! Tool rows from the sessions a harness ran itself: what its own records
//! (read by `tether-records`) showed of each configured server's tools.
//!
//! For each server row, the newest session of the same harness that names a
//! server of that name with tools gives one `mcp_tool` row per tool (or
//! fills in the row `--test` made): listed and model-visible as the session
//! showed them, with provenance `harness_record` and the time it showed
//! them, and its calls. The configuration's own filter still says whether
//! the tool is kept today. The server row is model-visible once one of its
//! tools was. Nothing here is inferred from configuration: a stage only the
//! session could show stays as the session left it.
//!
//! [`apply_session_tools`] (`tether inventory --sessions`) takes the sessions
//! the CLI read with `tether-records`; this crate never reads a session file.

use tether_core::history::ServerAttachment;
use tether_core::inventory::{CapabilityLink, InventoryDocument};
use tether_core::model::{StageObservation, Timestamp};
use tether_core::sanitize;
use tether_core::vocab::{CapabilityKind, StageState};

use crate::endpoint_test::tool_row;

/// One session's servers, as a harness's records showed them.
#[derive(Debug, Clone)]
pub struct SessionTools {
    /// The harness (`claude`, `codex`, …), as inventory rows name it.
    pub harness: String,
    /// The Tether session id (`KIND:ID`).
    pub session_id: String,
    /// Its newest record's time.
    pub updated_at: Timestamp,
    /// Its current attempt's server rows.
    pub servers: Vec<ServerAttachment>,
    /// Its current attempt's skills, hooks and plugins.
    pub capabilities: Vec<tether_core::capability::CapabilityRow>,
}

/// Adds (or fills in) the tool rows `sessions` show for the document's
/// server rows; `sessions` in any order. Returns how many tool rows the
/// sessions touched.
pub fn apply_session_tools(document: &mut InventoryDocument, sessions: &[SessionTools]) -> usize {
    let mut newest: Vec<&SessionTools> = sessions.iter().collect();
    newest.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
    let mut added = Vec::new();
    let mut touched = 0;
    for index in 0..document.rows.len() {
        let server = &document.rows[index];
        // A server today's configuration turns off keeps what that
        // configuration says: a session that used it ran before, and its
        // evidence would imply the server enabled (the ladder is monotone).
        if server.kind != CapabilityKind::McpServer || server.stages.enabled.state == StageState::No
        {
            continue;
        }
        let seen = newest.iter().find_map(|session| {
            (session.harness == server.harness)
                .then(|| {
                    session.servers.iter().find(|row| {
                        sanitize::name(&row.name) == server.name && !row.tools.is_empty()
                    })
                })
                .flatten()
                .map(|row| (*session, row))
        });
        let Some((session, attachment)) = seen else {
            continue;
        };
        let server = server.clone();
        let mut visible = StageObservation::default();
        for tool in &attachment.tools {
            let name = format!("{}/{}", server.name, sanitize::name(&tool.name));
            let existing = document.rows.iter().position(|r| {
                r.kind == CapabilityKind::McpTool
                    && r.harness == server.harness
                    && r.scope == server.scope
                    && r.name == name
            });
            let mut row = match existing {
                Some(i) => document.rows[i].clone(),
                None => tool_row(&server, &tool.name, session.updated_at),
            };
            // A tool the entry's own filter hides keeps that, as above.
            if row.stages.enabled.state != StageState::No {
                if tool.listed.state != StageState::Unknown {
                    row.stages.tools_listed.merge(tool.listed);
                }
                if tool.model_visible.state != StageState::Unknown {
                    row.stages.model_visible.merge(tool.model_visible);
                }
                if tool.model_visible.state == StageState::Yes {
                    visible.merge(tool.model_visible);
                }
                row.stages.close();
            }
            row.diagnostics.settings.retain(|s| {
                !s.starts_with("session=")
                    && !s.starts_with("calls=")
                    && !s.starts_with("failed_calls=")
            });
            row.diagnostics.settings.push(format!(
                "session={}",
                sanitize::identifier(&session.session_id)
            ));
            if tool.calls > 0 {
                row.diagnostics
                    .settings
                    .push(format!("calls={}", tool.calls));
                row.diagnostics
                    .settings
                    .push(format!("failed_calls={}", tool.failed_calls));
            }
            touched += 1;
            match existing {
                Some(i) => document.rows[i] = row,
                None => added.push((index, row)),
            }
        }
        if visible.state == StageState::Yes {
            let stages = &mut document.rows[index].stages;
            stages.model_visible.merge(visible);
            stages.close();
        }
    }
    touched += apply_session_capabilities(document, &newest);
    for (server, row) in added {
        let link = CapabilityLink {
            kind: CapabilityKind::McpTool,
            name: row.name.clone(),
        };
        let links = &mut document.rows[server].links;
        if !links.contains(&link) {
            links.push(link);
        }
        document.rows.push(row);
    }
    touched
}

/// Each skill, hook and plugin row gets what the newest session of its
/// harness showed of it (`session=`, `uses=`, `failed_uses=`, `status=` in
/// its settings: the same matching `tether sessions show` uses). A row no
/// session showed is left as the configuration says. Returns how many rows
/// it touched.
fn apply_session_capabilities(document: &mut InventoryDocument, newest: &[&SessionTools]) -> usize {
    // Each session's rows as `sessions show` words them, made once.
    let shown: Vec<(&SessionTools, Vec<tether_core::records::MatrixRow>)> = newest
        .iter()
        .filter(|s| !s.capabilities.is_empty())
        .map(|s| {
            let rows = s
                .capabilities
                .iter()
                .map(tether_words::display::capability_row)
                .collect();
            (*s, rows)
        })
        .collect();
    let mut touched = 0;
    for row in document.rows.iter_mut().filter(|r| {
        matches!(
            r.kind,
            CapabilityKind::Skill | CapabilityKind::Hook | CapabilityKind::Plugin
        )
    }) {
        let seen = shown.iter().find_map(|(session, rows)| {
            (session.harness == row.harness)
                .then(|| {
                    rows.iter()
                        .find(|m| tether_words::display::configured_as(row, m))
                })
                .flatten()
                .map(|m| (*session, m))
        });
        let Some((session, shown)) = seen else {
            continue;
        };
        row.diagnostics.settings.retain(|s| {
            !["session=", "uses=", "failed_uses=", "status="]
                .iter()
                .any(|p| s.starts_with(p))
        });
        row.diagnostics.settings.extend([
            format!("session={}", sanitize::identifier(&session.session_id)),
            format!("uses={}", shown.calls),
            format!("failed_uses={}", shown.failed_calls),
            format!("status={}", shown.status),
        ]);
        touched += 1;
    }
    touched
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;
    use tether_core::model::ProvenanceCode;
    use tether_core::spec::Endpoint;
    use tether_core::vocab::{ConfigScope, ReasonCode};

    use super::*;
    use crate::context::ScanContext;
    use crate::rows::{FoundServer, ScanOutput};

    fn document(exclude: &[&str]) -> InventoryDocument {
        let ctx = ScanContext::new("/nonexistent".into(), None, "/".into(), BTreeMap::new());
        let mut out = ScanOutput::default();
        for harness in ["claude", "codex"] {
            let mut found = FoundServer::new(
                harness,
                ConfigScope::User,
                "time",
                "~/f".into(),
                Endpoint::Http {
                    url: "http://127.0.0.1:1/mcp".into(),
                    headers: vec![],
                },
            );
            found.exclude_tools = exclude.iter().map(|s| s.to_string()).collect();
            out.push(&ctx, found);
        }
        out.into_document(None)
    }

    fn seen(at: u64, state: &str) -> serde_json::Value {
        json!({"state": state, "provenance": "harness_record", "at": at})
    }

    fn session(harness: &str, id: &str, at: u64, tools: serde_json::Value) -> SessionTools {
        let server = json!({"name": "time", "source": "profile", "transport": "stdio",
            "target": "x", "decision": "deliver", "status": "active", "tools": tools});
        SessionTools {
            capabilities: Vec::new(),
            harness: harness.into(),
            session_id: format!("{harness}:{id}"),
            updated_at: Timestamp(at),
            servers: vec![serde_json::from_value(server).expect("a server row")],
        }
    }

    fn tool<'a>(
        doc: &'a InventoryDocument,
        harness: &str,
        name: &str,
    ) -> Option<&'a tether_core::inventory::InventoryRow> {
        doc.rows
            .iter()
            .find(|r| r.kind == CapabilityKind::McpTool && r.harness == harness && r.name == name)
    }

    #[test]
    fn the_newest_session_of_the_same_harness_gives_the_tool_rows() {
        let mut doc = document(&[]);
        let sessions = [
            session(
                "claude",
                "old",
                100,
                json!([{"name": "old_tool", "model_visible": seen(100, "yes")}]),
            ),
            session(
                "claude",
                "new",
                200,
                json!([{"name": "get_current_time", "listed": seen(190, "yes"),
                "model_visible": seen(195, "yes"), "calls": 3, "failed_calls": 1}]),
            ),
            session(
                "codex",
                "other",
                300,
                json!([{"name": "listed_only", "listed": seen(300, "yes")}]),
            ),
        ];
        assert_eq!(apply_session_tools(&mut doc, &sessions), 2);
        assert!(
            tool(&doc, "claude", "time/old_tool").is_none(),
            "an older session does not count"
        );
        let row = tool(&doc, "claude", "time/get_current_time").expect("the newest session's tool");
        assert_eq!(row.stages.model_visible.state, StageState::Yes);
        assert_eq!(
            row.stages.model_visible.provenance,
            Some(ProvenanceCode::HarnessRecord)
        );
        assert_eq!(row.stages.model_visible.at, Some(Timestamp(195)));
        assert_eq!(row.stages.tools_listed.at, Some(Timestamp(190)));
        assert_eq!(
            row.diagnostics.settings,
            ["session=claude:new", "calls=3", "failed_calls=1"]
        );
        let codex = tool(&doc, "codex", "time/listed_only").expect("codex's own session");
        assert_eq!(
            codex.stages.model_visible.state,
            StageState::Unknown,
            "listed is not visible"
        );
        let server = |h: &str| {
            doc.rows
                .iter()
                .find(|r| r.kind == CapabilityKind::McpServer && r.harness == h)
                .expect("server")
        };
        assert_eq!(server("claude").stages.model_visible.state, StageState::Yes);
        assert!(
            server("claude")
                .links
                .iter()
                .any(|l| l.name == "time/get_current_time")
        );
        assert_eq!(
            server("codex").stages.model_visible.state,
            StageState::Unknown
        );
    }

    #[test]
    fn a_filter_still_hides_a_tool_a_session_showed_and_a_tested_row_is_filled_in() {
        let mut doc = document(&["get_current_time"]);
        let server = doc.rows[0].clone();
        let mut tested = crate::endpoint_test::tool_row(&server, "get_current_time", Timestamp(50));
        tested.tool_tokens = Some(120);
        doc.rows.push(tested);
        let sessions = [session(
            "claude",
            "s",
            200,
            json!([{"name": "get_current_time",
            "model_visible": seen(200, "yes")}]),
        )];
        apply_session_tools(&mut doc, &sessions);
        let rows: Vec<_> = doc
            .rows
            .iter()
            .filter(|r| r.kind == CapabilityKind::McpTool && r.harness == "claude")
            .collect();
        assert_eq!(rows.len(), 1, "filled in, not doubled");
        assert_eq!(rows[0].tool_tokens, Some(120));
        // Today's filter hides it: the older session's sight of it is not
        // carried into a row that would then read enabled "no" below a "yes".
        assert_eq!(rows[0].stages.model_visible.state, StageState::Unknown);
        assert_eq!(rows[0].stages.enabled.state, StageState::No);
        assert_eq!(rows[0].reason_code, Some(ReasonCode::Excluded));
    }

    #[test]
    fn no_session_leaves_the_document_as_it_was() {
        let mut doc = document(&[]);
        let before = doc.clone();
        let sessions = [session("claude", "s", 1, json!([]))];
        assert_eq!(apply_session_tools(&mut doc, &sessions), 0);
        assert_eq!(doc, before);
    }
}
