//! The census: every kind of record, event, field and telemetry a harness
//! writes that bears on MCP servers, tools, skills, hooks, plugins, auth or
//! permissions, kept as data in its plugin (`HarnessReader::census`).
//!
//! - GIVEN every linked harness's census WHEN the book's table is written
//!   from it THEN it is the committed `book/src/reference/records.md`
//!   (`TETHER_UPDATE_BOOK=1` writes it anew).
//! - GIVEN each harness's installed packages, pinned and newest, and its
//!   scan (`tests/census/HARNESS.json`: the files to read and the patterns
//!   that find a kind's name in the harness's own code) WHEN they are
//!   scanned THEN every name of a tracked family (hook, mcp, tool, skill,
//!   plugin, permission, auth) is in the census, or named in the scan as
//!   no kind (with why). A new release then says in seconds what it added.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tether_core::records::CensusEntry;
use tether_core::registry::Registry;
// Links every first-party plugin, so the registry holds each harness.
use tether_tests as _;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// Every linked harness's census, by harness.
fn censuses() -> BTreeMap<String, Vec<CensusEntry>> {
    let registry = Registry::with_static().expect("registry");
    registry
        .harnesses()
        .into_iter()
        .map(|h| (h.id.as_str().to_owned(), h.reader.census()))
        .filter(|(_, c)| !c.is_empty())
        .collect()
}

/// A table cell: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The book's page, written from the censuses.
fn page(censuses: &BTreeMap<String, Vec<CensusEntry>>) -> String {
    let mut out = String::from(
        "# What each harness writes, and what Tether reads of it\n\n\
         <!-- Written by tests/tests/census.rs from each plugin's census (`HarnessReader::census`); \
         run `TETHER_UPDATE_BOOK=1 cargo test -p tether-tests --test census` after changing one. -->\n\n\
         Every kind of record, event, field and telemetry a harness's own shipped code writes that \
         bears on MCP servers, tools, skills, hooks, plugins, auth or permissions, per harness and \
         release. Each is **read** (with the evidence it gives) or **not read** (with why). Where a \
         harness writes a kind only sometimes, the last column says what a missing record can and \
         cannot mean: Tether says that, never \"never happened\".\n",
    );
    for (harness, entries) in censuses {
        let read = entries.iter().filter(|e| e.read).count();
        out.push_str(&format!(
            "\n## {harness}\n\n{read} of {} kinds read.\n\n\
             | where | kind | releases | read | what it gives, or why not | a missing record means |\n\
             |---|---|---|---|---|---|\n",
            entries.len()
        ));
        for e in entries {
            out.push_str(&format!(
                "| {} | `{}` | {} | {} | {} | {} |\n",
                cell(&e.source),
                cell(&e.kind),
                cell(&e.releases),
                if e.read { "read" } else { "not read" },
                cell(&e.says),
                e.silence.as_deref().map(cell).unwrap_or_default()
            ));
        }
    }
    out
}

/// GIVEN every linked harness's census WHEN the book's table is written
/// from it THEN it is the committed page, each harness's kinds are named
/// once per source, and every entry says what it gives or why not.
#[test]
fn the_book_s_table_of_records_is_written_from_every_census() {
    let censuses = censuses();
    for (harness, entries) in &censuses {
        let mut seen = BTreeSet::new();
        for e in entries {
            assert!(
                seen.insert((e.source.as_str(), e.kind.as_str())),
                "{harness}: {} / {} twice",
                e.source,
                e.kind
            );
            for (what, text) in [
                ("source", &e.source),
                ("kind", &e.kind),
                ("releases", &e.releases),
                ("says", &e.says),
            ] {
                assert!(
                    !text.trim().is_empty(),
                    "{harness}: {} has no {what}",
                    e.kind
                );
            }
        }
    }
    let want = page(&censuses);
    let path = root().join("book/src/reference/records.md");
    if std::env::var_os("TETHER_UPDATE_BOOK").is_some() {
        std::fs::write(&path, &want).expect("write the page");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "book/src/reference/records.md is not what the censuses say: run TETHER_UPDATE_BOOK=1 cargo test -p tether-tests --test census"
    );
}

/// How to scan one harness's installed packages (`tests/census/HARNESS.json`).
#[derive(Deserialize)]
struct Scan {
    /// The harness (its census's).
    harness: String,
    /// The files to read, relative to the workspace, per release
    /// (`tests/peers/node_modules/...` pinned, `tests/peers/newest/...`
    /// newest); a `*` in the last segment matches any run of characters.
    files: Vec<ScanFile>,
    /// Regular expressions (over bytes) whose first group is a kind's name
    /// as the harness's code spells it.
    patterns: Vec<String>,
    /// Names a pattern finds that are no kind (a variable, a message), each
    /// with why.
    #[serde(default)]
    not_kinds: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct ScanFile {
    /// `pinned` or `newest`.
    release: String,
    path: String,
}

/// The families the census must account for.
const TRACKED: [&str; 7] = [
    "hook",
    "mcp",
    "tool",
    "skill",
    "plugin",
    "permission",
    "auth",
];

fn tracked(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    TRACKED.iter().any(|w| lower.contains(w))
}

/// The files `pattern` names (the last segment may hold one `*`).
fn expand(pattern: &str) -> Vec<PathBuf> {
    let path = root().join(pattern);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    if !name.contains('*') {
        return if path.is_file() {
            vec![path]
        } else {
            Vec::new()
        };
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| tether_core::records::segment_matches(name, n))
        })
        .collect();
    out.sort();
    out
}

/// GIVEN each harness's installed packages, pinned and newest WHEN they are
/// scanned with its patterns THEN every kind name of a tracked family is
/// in its census, or named as no kind. Packages that are not installed skip
/// loudly (and fail where `TETHER_REQUIRE_PEERS` is set).
#[test]
fn every_installed_release_s_kinds_are_in_its_census() {
    let censuses = censuses();
    let dir = root().join("tests/census");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        panic!("tests/census holds each harness's scan");
    };
    let mut scans: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    scans.sort();
    for path in scans {
        let scan: Scan = serde_json::from_slice(&std::fs::read(&path).expect("read the scan"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let census = censuses
            .get(&scan.harness)
            .unwrap_or_else(|| panic!("{}: {} has no census", path.display(), scan.harness));
        // A census kind counts by its full name and by its last segment
        // (`attachment/deferred_tools_delta` accounts for
        // `deferred_tools_delta`).
        let known: BTreeSet<&str> = census
            .iter()
            .flat_map(|e| {
                let last = e.kind.rsplit(['/', '.', ':']).next().unwrap_or(&e.kind);
                [e.kind.as_str(), last]
            })
            .collect();
        let patterns: Vec<regex::bytes::Regex> = scan
            .patterns
            .iter()
            .map(|p| regex::bytes::Regex::new(p).unwrap_or_else(|e| panic!("{p}: {e}")))
            .collect();
        for file in &scan.files {
            let found = expand(&file.path);
            if found.is_empty() {
                let message = format!(
                    "SKIP: {} ({}) is not installed (see tests/peers)",
                    file.path, file.release
                );
                assert!(
                    std::env::var_os("TETHER_REQUIRE_PEERS").is_none(),
                    "{message} and TETHER_REQUIRE_PEERS is set"
                );
                eprintln!("{message}");
                continue;
            }
            let mut missing = BTreeSet::new();
            for f in found {
                let bytes = std::fs::read(&f).expect("read the package file");
                for re in &patterns {
                    for caps in re.captures_iter(&bytes) {
                        let Some(name) = caps
                            .get(1)
                            .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
                        else {
                            continue;
                        };
                        if tracked(name)
                            && !known.contains(name)
                            && !scan.not_kinds.contains_key(name)
                        {
                            missing.insert(name.to_owned());
                        }
                    }
                }
            }
            assert!(
                missing.is_empty(),
                "{} ({}, {}): kinds its census does not account for: {missing:?}",
                scan.harness,
                file.release,
                file.path
            );
        }
    }
}
