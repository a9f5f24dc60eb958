//! The census: every kind of record, event, field and telemetry a harness
//! writes that bears on MCP servers, tools, skills, hooks, plugins, auth or
//! permissions, kept as data in its plugin (`HarnessCensus::census`).
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
        .map(|h| {
            let census = h.roles.census.map(|c| c.census()).unwrap_or_default();
            (h.id.as_str().to_owned(), census)
        })
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
         <!-- Written by tests/tests/census.rs from each plugin's census (`HarnessCensus::census`); \
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
    /// The file, or with `unpack` the executable that unpacks its code.
    path: String,
    /// How to unpack a package whose code is packed inside a binary.
    #[serde(default)]
    unpack: Option<Unpack>,
}

/// A package whose code its binary holds packed: run the binary so that it
/// unpacks itself into a directory Tether makes (never into the package),
/// then read what it wrote there.
#[derive(Deserialize)]
struct Unpack {
    /// The binary's arguments.
    args: Vec<String>,
    /// Its environment (cleared but for these, `PATH` and a private `HOME`).
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// The variable that names the directory it unpacks into.
    dir_env: String,
    /// The files to read, relative to that directory; a `*` in any
    /// segment matches any run of characters.
    files: Vec<String>,
}

/// How long an unpacking may run: a generous bound, never a measured time.
const UNPACK_BOUND_SECS: u64 = 300;

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

/// The files `pattern` names, relative to the workspace (a segment may
/// hold `*`).
fn expand(pattern: &str) -> Vec<PathBuf> {
    expand_in(&root(), pattern)
}

/// The files `pattern` names under `base`, sorted; a `*` in any segment
/// matches any run of characters.
fn expand_in(base: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut found = vec![base.to_path_buf()];
    for segment in pattern.split('/').filter(|s| !s.is_empty()) {
        let mut next = Vec::new();
        for dir in &found {
            if !segment.contains('*') {
                next.push(dir.join(segment));
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            next.extend(entries.flatten().map(|e| e.path()).filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| tether_core::records::segment_matches(segment, n))
            }));
        }
        found = next;
    }
    let mut out: Vec<PathBuf> = found.into_iter().filter(|p| p.is_file()).collect();
    out.sort();
    out
}

/// Runs `binary` as `unpack` says, into a fresh directory under the
/// target's scratch space (removed when the returned guard drops), bounded
/// in time, in its own process group; returns the files it wrote that
/// `unpack.files` names. A binary that fails to unpack fails the test: its
/// code would otherwise go unread.
fn unpacked(binary: &Path, unpack: &Unpack) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::Builder::new()
        .prefix("census-unpack-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a scratch directory");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("a private HOME");
    let mut cmd = std::process::Command::new(binary);
    cmd.args(&unpack.args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .envs(&unpack.env)
        .env(&unpack.dir_env, dir.path())
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null());
    let out = tether_tests::output_within(cmd, UNPACK_BOUND_SECS);
    assert!(
        out.status.success(),
        "{} did not unpack itself ({}): {}",
        binary.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files = Vec::new();
    for pattern in &unpack.files {
        let found = expand_in(dir.path(), pattern);
        assert!(
            !found.is_empty(),
            "{} unpacked no {pattern}: the scan would read nothing",
            binary.display()
        );
        files.extend(found);
    }
    (dir, files)
}

/// The names `patterns` find in `bytes` that are of a tracked family and
/// neither `known` nor a `not_kinds` entry. What follows a pattern's first
/// group is context only (never consumed): the next search starts where
/// the group ends, so names a string table runs together are each found.
fn unaccounted(
    bytes: &[u8],
    patterns: &[regex::bytes::Regex],
    known: &BTreeSet<&str>,
    not_kinds: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut missing = BTreeSet::new();
    for re in patterns {
        let mut at = 0;
        while let Some(caps) = re.captures_at(bytes, at) {
            let whole = caps.get(0).expect("a match");
            let group = caps.get(1);
            at = group
                .map_or(whole.end(), |g| g.end())
                .max(whole.start() + 1);
            let Some(name) = group.and_then(|m| std::str::from_utf8(m.as_bytes()).ok()) else {
                continue;
            };
            if tracked(name) && !known.contains(name) && !not_kinds.contains_key(name) {
                missing.insert(name.to_owned());
            }
            if at > bytes.len() {
                break;
            }
        }
    }
    missing
}

/// A census's kinds, each by its full name and by its last segment
/// (`attachment/deferred_tools_delta` accounts for `deferred_tools_delta`).
fn known_names(census: &[CensusEntry]) -> BTreeSet<&str> {
    census
        .iter()
        .flat_map(|e| {
            let last = e.kind.rsplit(['/', '.', ':']).next().unwrap_or(&e.kind);
            [e.kind.as_str(), last]
        })
        .collect()
}

/// A scan, its census's names and its compiled patterns.
type Prepared<'a> = (Scan, BTreeSet<&'a str>, Vec<regex::bytes::Regex>);

/// How many installed files are scanned at once.
const SCANS_AT_ONCE: usize = 2;

/// One installed file of `scan` (unpacked first where it says), scanned
/// with its patterns: what of a tracked family its census does not account
/// for, if anything. Not installed skips loudly (and fails where
/// `TETHER_REQUIRE_PEERS` is set).
fn scan_one(
    scan: &Scan,
    known: &BTreeSet<&str>,
    patterns: &[regex::bytes::Regex],
    file: &ScanFile,
) -> Option<String> {
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
        return None;
    }
    // The unpacked directory is kept until this file is scanned.
    let (_scratch, found) = match &file.unpack {
        Some(unpack) => {
            let (dir, files) = unpacked(&found[0], unpack);
            (Some(dir), files)
        }
        None => (None, found),
    };
    let mut missing = BTreeSet::new();
    for f in found {
        let bytes = std::fs::read(&f).expect("read the package file");
        missing.extend(unaccounted(&bytes, patterns, known, &scan.not_kinds));
    }
    (!missing.is_empty()).then(|| {
        format!(
            "{} ({}, {}): kinds its census does not account for: {missing:?}",
            scan.harness, file.release, file.path
        )
    })
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
    // Every harness's, so one's failure hides no other's.
    let scans: Vec<Prepared> = scans
        .iter()
        .map(|path| {
            let scan: Scan = serde_json::from_slice(&std::fs::read(path).expect("read the scan"))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let census = censuses
                .get(&scan.harness)
                .unwrap_or_else(|| panic!("{}: {} has no census", path.display(), scan.harness));
            let known = known_names(census);
            let patterns: Vec<regex::bytes::Regex> = scan
                .patterns
                .iter()
                .map(|p| regex::bytes::Regex::new(p).unwrap_or_else(|e| panic!("{p}: {e}")))
                .collect();
            (scan, known, patterns)
        })
        .collect();
    // Each installed file is read (or unpacked and read) on its own, so
    // SCANS_AT_ONCE of them are scanned at a time; failures are kept in
    // the scans' order.
    let jobs: Vec<(&Prepared, &ScanFile)> = scans
        .iter()
        .flat_map(|s| s.0.files.iter().map(move |f| (s, f)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Vec<std::sync::Mutex<Option<String>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..SCANS_AT_ONCE {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(((scan, known, patterns), file)) = jobs.get(n) else {
                        break;
                    };
                    let failure = scan_one(scan, known, patterns, file);
                    *done[n].lock().unwrap_or_else(|p| p.into_inner()) = failure;
                }
            });
        }
    });
    let failures: Vec<String> = done
        .into_iter()
        .filter_map(|slot| slot.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// GIVEN Copilot's census and its scan's patterns WHEN a synthetic package
/// holds an event and a telemetry name no census entry accounts for (the
/// telemetry name run into its neighbours as runtime.node's string table
/// runs them) THEN the scan names exactly those, and a `not_kinds` entry
/// accounts for one: the check can fail, and a new release's kind fails it.
#[test]
fn a_kind_the_census_does_not_account_for_is_found() {
    let censuses = censuses();
    let census = censuses.get("copilot").expect("Copilot's census");
    let path = root().join("tests/census/copilot.json");
    let scan: Scan =
        serde_json::from_slice(&std::fs::read(&path).expect("read the scan")).expect("the scan");
    let patterns: Vec<regex::bytes::Regex> = scan
        .patterns
        .iter()
        .map(|p| regex::bytes::Regex::new(p).expect("a pattern"))
        .collect();
    let known = known_names(census);
    let package = br#"{"type":{"const": "session.mcp_server_status_changed"}}
        {"type":{"const": "session.mcp_server_evicted"}}
        case"tool.execution_start":if(e.type==="hook.vanished")
        github.copilot.mcp.server.lifecyclegithub.copilot.mcp.server.evictedgithub.copilot.mcp.server.stateNumber
        github.copilot.branchgithub.copilot.tool.call.countTool"#;
    let found = unaccounted(package, &patterns, &known, &BTreeMap::new());
    assert_eq!(
        found,
        BTreeSet::from([
            "github.copilot.mcp.server.evicted".to_owned(),
            "hook.vanished".to_owned(),
            "session.mcp_server_evicted".to_owned(),
        ])
    );
    let not_kinds = BTreeMap::from([("hook.vanished".to_owned(), "why".to_owned())]);
    assert_eq!(
        unaccounted(package, &patterns, &known, &not_kinds).len(),
        2,
        "a not_kinds entry accounts for its name"
    );
}

/// GIVEN a directory tree WHEN a pattern with `*` in several segments is
/// expanded THEN it names exactly the files that match, sorted.
#[test]
fn a_star_matches_in_any_segment() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    for f in [
        "pkg/linux-x64/1.0.1/cli-main.js",
        "pkg/linux-x64/1.0.2/cli-main.js",
        "pkg/linux-x64/1.0.2/app.js",
        "other/x/1/cli-main.js",
    ] {
        let p = dir.path().join(f);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&p, b"").expect("write");
    }
    let found = expand_in(dir.path(), "pkg/*/*/cli-main.js");
    assert_eq!(
        found,
        vec![
            dir.path().join("pkg/linux-x64/1.0.1/cli-main.js"),
            dir.path().join("pkg/linux-x64/1.0.2/cli-main.js"),
        ]
    );
    assert!(expand_in(dir.path(), "pkg/*/*/none.js").is_empty());
}
