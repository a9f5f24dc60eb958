//! Tool definition pins: what Tether keeps of each tool's definition the
//! first time it sees a server list it (the hash of each part, never the
//! text), and what a later listing changed (`definition_changed`,
//! `tools_changed`). The "rug pull": a server that changes a tool's
//! description or schema under the user between two sessions.
//!
//! Pure: the hashing itself is the kit crate `tether-pins` (canonical JSON,
//! SHA-256); the store keeps [`ToolPin`] rows (`Store::tool_pins`,
//! `Store::replace_tool_pins`); this module says what is the same server,
//! what counts as a change ([`sight`]) and what accepting one does
//! ([`accept`]).
//!
//! **The server's identity** ([`server_key`]) is `NAME@TARGET`: the
//! server's own `serverInfo.name`, then its sanitized target (a network
//! server's `scheme://host[:port]`, a stdio server's command basename). It
//! names neither the harness nor the configuration's key, so one server
//! configured under different names in several harnesses is one server
//! across sessions; it holds no argument, path or header, so it holds no
//! secret. Two servers that claim the same name behind the same command
//! (`node`) or host are one to Tether: a change between them reads as a
//! change, never as nothing. A server that renames itself is a new server,
//! pinned anew on its first sighting. A host's own server, served by its
//! observed endpoint in the host's process, has the target `host`
//! (`NAME@host`): its loopback address changes with every start.
//!
//! **Where listings are compared.** `tether endpoint-test` and
//! `tether inventory --test` compare what they list; in a session, the
//! relay and a host's observed endpoint compare every full `tools/list`
//! they see ([`sight_through`], given the host's store) and publish the
//! changes onto the server's row ([`change_evidence`]), which the reducer
//! keeps on its tool rows.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::Timestamp;
use crate::vocab::{EvidenceKind, ReasonCode};

/// How every hash here is made: SHA-256, lower-case hex, over the part's
/// canonical JSON (RFC 8785-style: object keys sorted by their UTF-16 code
/// units, no insignificant whitespace, strings escaped as JSON's minimal
/// form, integral numbers without a fraction, `1.0` as `1`).
pub const PIN_METHOD: &str = "sha256:jcs-v1";

/// The longest server key or tool name kept (bytes, cut on a UTF-8 boundary).
pub const MAX_PIN_NAME: usize = 256;

/// One tool's definition, as hashes: each part's SHA-256 over its
/// canonical JSON (`sha256:jcs-v1`); absent where the definition has no such
/// part (or it is `null`). Never the text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DefinitionHashes {
    /// `title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `inputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<String>,
    /// `outputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<String>,
    /// `annotations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<String>,
}

impl DefinitionHashes {
    /// The parts that differ from `other`, as reason codes, in the order
    /// title, description, input schema, output schema, annotations.
    pub fn changed_parts(&self, other: &DefinitionHashes) -> Vec<ReasonCode> {
        let mut out = Vec::new();
        if self.title != other.title {
            out.push(ReasonCode::TitleChanged);
        }
        if self.description != other.description {
            out.push(ReasonCode::DescriptionChanged);
        }
        if self.input_schema != other.input_schema {
            out.push(ReasonCode::InputSchemaChanged);
        }
        if self.output_schema != other.output_schema {
            out.push(ReasonCode::OutputSchemaChanged);
        }
        if self.annotations != other.annotations {
            out.push(ReasonCode::AnnotationsChanged);
        }
        out
    }
}

/// One tool of one server, as the store keeps it: the definition pinned
/// (accepted) and the one seen last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolPin {
    /// The server's identity, `NAME@TARGET`.
    pub server: String,
    /// The tool's name, as the server lists it.
    pub tool: String,
    /// The pinned definition: set on the server's first sighting and by
    /// `tether pins accept`; absent for a tool that appeared later and was
    /// not accepted yet.
    pub pinned: Option<DefinitionHashes>,
    /// When it was pinned.
    pub pinned_at: Option<Timestamp>,
    /// The definition the newest listing gave; absent when the newest
    /// listing did not have the tool.
    pub seen: Option<DefinitionHashes>,
    /// When the server was last listed.
    pub seen_at: Timestamp,
}

impl ToolPin {
    /// What the newest listing says against the pin: `None` when they
    /// agree; otherwise the evidence and its reasons.
    pub fn change(&self) -> Option<ToolChange> {
        let (evidence, reasons) = match (&self.pinned, &self.seen) {
            (Some(pinned), Some(seen)) if pinned == seen => return None,
            (Some(pinned), Some(seen)) => {
                (EvidenceKind::DefinitionChanged, pinned.changed_parts(seen))
            }
            (Some(_), None) => (EvidenceKind::ToolsChanged, vec![ReasonCode::ToolRemoved]),
            (None, _) => (EvidenceKind::ToolsChanged, vec![ReasonCode::ToolAdded]),
        };
        Some(ToolChange {
            tool: self.tool.clone(),
            evidence,
            reasons,
        })
    }
}

/// One tool whose listing differs from its pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolChange {
    /// The tool's name.
    pub tool: String,
    /// `definition_changed` (a pinned tool's definition differs) or
    /// `tools_changed` (a tool appeared or disappeared).
    pub evidence: EvidenceKind,
    /// The parts that changed (`title_changed`, `description_changed`,
    /// `input_schema_changed`, `output_schema_changed`,
    /// `annotations_changed`), or `tool_added` / `tool_removed`.
    pub reasons: Vec<ReasonCode>,
}

/// A listing compared with the server's pins: what `tether endpoint-test`
/// reports (`pins` in its document) and `tether inventory --test` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PinReport {
    /// The server's identity, `NAME@TARGET`: its serverInfo name, then its
    /// sanitized target.
    pub server: String,
    /// How the hashes were made: `sha256:jcs-v1`.
    pub method: String,
    /// Whether this listing was the server's first: every tool was pinned
    /// now, and nothing can have changed.
    pub first_sighting: bool,
    /// Tools in this listing.
    pub listed: u32,
    /// Tools listed as pinned.
    pub unchanged: u32,
    /// Every tool that differs from its pin, by name; empty when none does.
    /// A change stays reported until `tether pins accept` pins it anew.
    pub changes: Vec<ToolChange>,
}

impl PinReport {
    /// Whether anything differs from the pins.
    pub fn changed(&self) -> bool {
        !self.changes.is_empty()
    }
}

/// The identity of a server across sessions and harnesses: `NAME@TARGET`
/// (see the module's documentation), each cut to [`MAX_PIN_NAME`].
pub fn server_key(server_name: &str, target: &str) -> String {
    let key = format!("{}@{}", server_name.trim(), target.trim());
    crate::sanitize::truncate_utf8(&key, MAX_PIN_NAME).to_owned()
}

/// A tool's name as pins keep it (cut to [`MAX_PIN_NAME`]).
pub fn tool_name(name: &str) -> String {
    crate::sanitize::truncate_utf8(name, MAX_PIN_NAME).to_owned()
}

/// One listing of `server` at `at` against its stored pins (`stored`, the
/// server's rows): the rows to store in their place, and the report.
///
/// - No row yet: the first sighting pins every listed tool.
/// - A pinned tool listed with other hashes: `definition_changed`, naming
///   the parts; listed again as pinned: unchanged.
/// - A tool listed that has no pin: `tools_changed` / `tool_added` (kept
///   as seen, pinned only when accepted).
/// - A pinned tool not listed: `tools_changed` / `tool_removed`.
///
/// The pins themselves never move here: only [`accept`] (or forgetting the
/// server) changes what is pinned. A tool listed twice counts once, as
/// first listed.
pub fn sight(
    stored: &[ToolPin],
    server: &str,
    listed: &[(String, DefinitionHashes)],
    at: Timestamp,
) -> (Vec<ToolPin>, PinReport) {
    let first_sighting = stored.is_empty();
    let mut seen_names = std::collections::BTreeSet::new();
    let mut rows: Vec<ToolPin> = Vec::new();
    for (name, hashes) in listed {
        let name = tool_name(name);
        if !seen_names.insert(name.clone()) {
            continue;
        }
        let before = stored.iter().find(|p| p.tool == name);
        let pinned = if first_sighting {
            Some(hashes.clone())
        } else {
            before.and_then(|p| p.pinned.clone())
        };
        let pinned_at = if first_sighting {
            Some(at)
        } else {
            before.and_then(|p| p.pinned_at)
        };
        rows.push(ToolPin {
            server: server.to_owned(),
            tool: name,
            pinned,
            pinned_at,
            seen: Some(hashes.clone()),
            seen_at: at,
        });
    }
    // Pinned tools this listing lacks stay, seen as gone; a tool never
    // pinned that is gone again leaves nothing to keep.
    for gone in stored
        .iter()
        .filter(|p| !seen_names.contains(&p.tool) && p.pinned.is_some())
    {
        rows.push(ToolPin {
            seen: None,
            seen_at: at,
            ..gone.clone()
        });
    }
    rows.sort_by(|a, b| a.tool.cmp(&b.tool));
    let changes: Vec<ToolChange> = rows.iter().filter_map(ToolPin::change).collect();
    let listed_count = seen_names.len();
    let unchanged = rows
        .iter()
        .filter(|r| r.seen.is_some() && r.change().is_none())
        .count();
    let report = PinReport {
        server: server.to_owned(),
        method: PIN_METHOD.to_owned(),
        first_sighting,
        listed: u32::try_from(listed_count).unwrap_or(u32::MAX),
        unchanged: u32::try_from(unchanged).unwrap_or(u32::MAX),
        changes,
    };
    (rows, report)
}

/// One listing a session source saw (the relay, a host's observed
/// endpoint), compared with the server's stored pins and written back:
/// [`sight`] between `read` (the server's rows, `Store::tool_pins`) and
/// `write` (`Store::replace_tool_pins`). Sightings in one process take
/// turns, so two connections to one server never lose each other's rows.
/// The definitions' text never reaches here: hashes only.
pub fn sight_through<E>(
    read: impl FnOnce() -> Result<Vec<ToolPin>, E>,
    write: impl FnOnce(&[ToolPin]) -> Result<(), E>,
    server: &str,
    listed: &[(String, DefinitionHashes)],
    at: Timestamp,
) -> Result<PinReport, E> {
    static TURNS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = TURNS.lock().unwrap_or_else(|p| p.into_inner());
    let stored = read()?;
    let (rows, report) = sight(&stored, server, listed, at);
    write(&rows)?;
    Ok(report)
}

/// A report's changes as evidence for the server's row in a session: one
/// `definition_changed` per changed part, one `tools_changed` per tool
/// added or removed, each naming the tool and its reason code, never a
/// definition's text. The publisher names the server, the connection and
/// the provenance.
pub fn change_evidence(report: &PinReport, at: Timestamp) -> Vec<crate::model::Evidence> {
    report
        .changes
        .iter()
        .flat_map(|change| {
            change.reasons.iter().map(move |reason| {
                crate::model::Evidence::new(change.evidence.clone(), at)
                    .tool(change.tool.clone())
                    .reason(reason.clone(), None)
            })
        })
        .collect()
}

/// Why [`accept`] could not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcceptError {
    /// The server has no such tool among its pins.
    #[error("{server} has no tool {tool:?} among its pins")]
    NoSuchTool {
        /// The server.
        server: String,
        /// The tool asked for.
        tool: String,
    },
}

/// Pins anew what the newest listing showed, for one tool of the server's
/// rows (`tool`) or all of them: a changed or added tool is pinned as it
/// was seen, a removed one is forgotten. Returns the rows to store and how
/// many tools changed their pin.
pub fn accept(
    rows: &[ToolPin],
    tool: Option<&str>,
    at: Timestamp,
) -> Result<(Vec<ToolPin>, usize), AcceptError> {
    if let Some(tool) = tool
        && !rows.iter().any(|r| r.tool == tool)
    {
        return Err(AcceptError::NoSuchTool {
            server: rows.first().map(|r| r.server.clone()).unwrap_or_default(),
            tool: tool.to_owned(),
        });
    }
    let mut accepted = 0;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let wanted = tool.is_none_or(|t| t == row.tool);
        if !wanted || row.change().is_none() {
            out.push(row.clone());
            continue;
        }
        accepted += 1;
        if let Some(seen) = &row.seen {
            out.push(ToolPin {
                pinned: Some(seen.clone()),
                pinned_at: Some(at),
                ..row.clone()
            });
        }
    }
    Ok((out, accepted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(d: &str) -> DefinitionHashes {
        DefinitionHashes {
            description: Some(d.into()),
            input_schema: Some("s".into()),
            ..DefinitionHashes::default()
        }
    }

    #[test]
    fn the_first_sighting_pins_and_reports_nothing() {
        let (rows, report) = sight(&[], "s@x", &[("a".into(), h("1"))], Timestamp(1));
        assert!(report.first_sighting);
        assert!(report.changes.is_empty());
        assert_eq!((report.listed, report.unchanged), (1, 1));
        assert_eq!(rows[0].pinned, Some(h("1")));
    }

    #[test]
    fn a_change_an_addition_and_a_removal_are_reported_until_accepted() {
        let (rows, _) = sight(
            &[],
            "s@x",
            &[("a".into(), h("1")), ("b".into(), h("2"))],
            Timestamp(1),
        );
        let listed = [("a".into(), h("9")), ("c".into(), h("3"))];
        let (rows, report) = sight(&rows, "s@x", &listed, Timestamp(2));
        assert!(!report.first_sighting);
        let got: Vec<(&str, &str, Vec<&str>)> = report
            .changes
            .iter()
            .map(|c| {
                (
                    c.tool.as_str(),
                    c.evidence.as_str(),
                    c.reasons.iter().map(|r| r.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", "definition_changed", vec!["description_changed"]),
                ("b", "tools_changed", vec!["tool_removed"]),
                ("c", "tools_changed", vec!["tool_added"]),
            ]
        );
        // Seen again, still reported: the pin did not move.
        let (rows, again) = sight(&rows, "s@x", &listed, Timestamp(3));
        assert_eq!(again.changes, report.changes);
        // One accepted, then all.
        let (rows, n) = accept(&rows, Some("a"), Timestamp(4)).unwrap();
        assert_eq!(n, 1);
        assert_eq!(rows.iter().filter_map(ToolPin::change).count(), 2);
        let (rows, n) = accept(&rows, None, Timestamp(5)).unwrap();
        assert_eq!(n, 2);
        assert!(rows.iter().all(|r| r.change().is_none()));
        assert_eq!(
            rows.iter().map(|r| r.tool.as_str()).collect::<Vec<_>>(),
            ["a", "c"]
        );
        assert!(accept(&rows, Some("zz"), Timestamp(6)).is_err());
    }

    #[test]
    fn changes_become_one_evidence_per_reason_naming_the_tool() {
        let (rows, _) = sight(&[], "s@x", &[("a".into(), h("1"))], Timestamp(1));
        let mut changed = h("2");
        changed.input_schema = Some("t".into());
        let listed = [("a".into(), changed), ("b".into(), h("3"))];
        let (_, report) = sight(&rows, "s@x", &listed, Timestamp(2));
        let got: Vec<(String, Option<String>, Option<String>)> =
            change_evidence(&report, Timestamp(2))
                .iter()
                .map(|e| {
                    (
                        e.kind.as_str().to_owned(),
                        e.tool.clone(),
                        e.reason_code.as_ref().map(|r| r.as_str().to_owned()),
                    )
                })
                .collect();
        let want =
            |k: &str, t: &str, r: &str| (k.to_owned(), Some(t.to_owned()), Some(r.to_owned()));
        assert_eq!(
            got,
            vec![
                want("definition_changed", "a", "description_changed"),
                want("definition_changed", "a", "input_schema_changed"),
                want("tools_changed", "b", "tool_added"),
            ]
        );
    }

    #[test]
    fn the_server_key_is_name_at_target_and_bounded() {
        assert_eq!(server_key("everything", "npx"), "everything@npx");
        assert!(server_key(&"x".repeat(1000), "npx").len() <= MAX_PIN_NAME);
    }
}
