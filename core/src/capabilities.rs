//! The capability inventory (`tether inventory`): every MCP server a user's
//! harnesses know about, read from the configuration files as they are now,
//! with how far the configuration alone can take it (configured, enabled) and,
//! when it stops, the precise reason.
//!
//! Plugins contribute one [`ConfigScanner`] per harness (registered with
//! [`register_scanner!`](crate::register_scanner)); this module holds the
//! document, the safe file access every scanner uses, and the row builder that
//! turns a parsed entry into a sanitized row.
//!
//! Architecture invariants:
//! - a row never holds a value from the configuration: targets are origins or
//!   command basenames, env and header entries are *names* only, sources are
//!   `~/…`, `$PROJECT/…` or a system path;
//! - files are read only inside the root being scanned (symlinks that leave it
//!   are reported, not followed), at most 1 MiB, never blocking on special files;
//! - bad input becomes an [`InventoryError`], never a panic and never a lost row
//!   from another file;
//! - configuration proves `configured` and `enabled` only (provenance
//!   `current_config`); an endpoint test may fill `authenticated`,
//!   `initialized` and `tools_listed` (provenance `endpoint_test`), and nothing
//!   here ever claims `model_visible`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::ops::Not;
use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{EndpointTestResult, ProvenanceCode, StageObservation, Timestamp};
use crate::observer::{Endpoint, KeyValue};
use crate::sanitize;
use crate::vocab::{ConfigScope, CwdClass, EnvClass, ReasonCode, StageState, Transport};

/// The version of the inventory document this build writes.
pub const INVENTORY_SCHEMA_VERSION: u32 = 1;
/// Configuration files larger than this are refused.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// Rows kept from one scan (a bound against generated configurations).
pub const MAX_ROWS: usize = 4096;
/// Error entries kept from one scan.
pub const MAX_ERRORS: usize = 256;

// ---------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------

/// The stages an inventory row can speak to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
/// Each stage is the same [`StageObservation`] attachment rows use: a state,
/// what showed it, and when.
pub struct InventoryStages {
    /// A configuration file names the server.
    pub configured: StageObservation,
    /// The configuration (approvals, policy, trust, toggles) lets it run.
    pub enabled: StageObservation,
    /// The server accepted the credentials it was given (endpoint test only).
    pub authenticated: StageObservation,
    /// `initialize` completed (endpoint test only).
    pub initialized: StageObservation,
    /// `tools/list` answered (endpoint test only).
    pub tools_listed: StageObservation,
    /// The model could see its tools: only an agent session can show this,
    /// so the inventory always leaves it unknown.
    pub model_visible: StageObservation,
}

/// A stage the configuration read at `at` shows.
fn from_config(yes: bool, at: Timestamp) -> StageObservation {
    let state = if yes { StageState::Yes } else { StageState::No };
    StageObservation::shown(state, ProvenanceCode::CurrentConfig, at)
}

impl InventoryStages {
    fn configured(enabled: StageObservation, at: Timestamp) -> Self {
        InventoryStages {
            configured: from_config(true, at),
            enabled,
            authenticated: StageObservation::default(),
            initialized: StageObservation::default(),
            tools_listed: StageObservation::default(),
            model_visible: StageObservation::default(),
        }
    }
}

/// An environment variable the server gets, by name only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EnvKey {
    /// The variable's name (sanitized); never its value.
    pub name: String,
    /// secret_like or plain, from the name alone.
    pub class: EnvClass,
}

/// Safe diagnostics: names and classes, never values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RowDiagnostics {
    /// A stdio server's command, basename only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Whether that command resolves (on PATH, or as a path) here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_resolves: Option<bool>,
    /// Where a stdio server's working directory points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<CwdClass>,
    /// Environment variables it gets or forwards, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvKey>,
    /// HTTP header names it sends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// Tools an allow list keeps (names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_tools: Option<Vec<String>>,
    /// Tools a deny list hides (names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_tools: Vec<String>,
    /// Other settings worth knowing (`required`, timeouts, trust), as `key=value` of non-secret settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
}

/// One server, in one harness, in one scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InventoryRow {
    /// claude, codex, opencode, cursor, gemini (or a third party's harness).
    pub harness: String,
    /// user, project, local, plugin, managed or system.
    pub scope: ConfigScope,
    /// The server's name in that configuration (sanitized).
    pub name: String,
    /// stdio, http or sse.
    pub transport: Transport,
    /// Sanitized: `scheme://host[:port]` or the command's basename.
    pub target: String,
    /// How far the configuration (and, with `--test`, an endpoint test) got.
    pub stages: InventoryStages,
    /// Why it stops, when it does.
    pub reason_code: Option<ReasonCode>,
    /// One sanitized sentence about the reason (which list, which file).
    #[serde(default)]
    pub summary: Option<String>,
    /// The file, as `~/…`, `$PROJECT/…` or a system path.
    pub source: String,
    /// Names and classes only.
    #[serde(default)]
    pub diagnostics: RowDiagnostics,
    /// The endpoint test, with `--test`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_test: Option<EndpointTestResult>,
    /// The real endpoint, in memory only (for `--test`); never serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub endpoint: Option<Endpoint>,
}

impl InventoryRow {
    /// Whether the configuration lets it run.
    pub fn is_enabled(&self) -> bool {
        self.stages.enabled.state == StageState::Yes
    }

    /// The identity used to compare snapshots.
    pub fn key(&self) -> (String, String, String, String) {
        (
            self.harness.clone(),
            self.scope.to_string(),
            self.name.clone(),
            self.source.clone(),
        )
    }

    /// Fills the endpoint-tested stages from a test result.
    pub fn apply_test(&mut self, test: EndpointTestResult) {
        let tested = |state| StageObservation::shown(state, ProvenanceCode::EndpointTest, test.at);
        let stages = &mut self.stages;
        if test.succeeded {
            stages.authenticated = tested(StageState::Yes);
            stages.initialized = tested(StageState::Yes);
            stages.tools_listed = tested(StageState::Yes);
        } else {
            let reason = test.reason_code.clone();
            // A test that ran out of time or was stopped shows nothing either way.
            let inconclusive = matches!(
                reason,
                Some(ReasonCode::Timeout) | Some(ReasonCode::Cancelled) | None
            );
            let initialized = test.server_name.is_some() || test.protocol_version.is_some();
            stages.initialized = if initialized {
                tested(StageState::Yes)
            } else if inconclusive {
                StageObservation::default()
            } else {
                tested(StageState::No)
            };
            stages.tools_listed = if inconclusive {
                StageObservation::default()
            } else {
                tested(StageState::No)
            };
            stages.authenticated = match reason {
                Some(ReasonCode::AuthRequired) => tested(StageState::No),
                _ if initialized => tested(StageState::Yes),
                _ => StageObservation::default(),
            };
            if self.reason_code.is_none() {
                self.reason_code = test.reason_code.clone();
                self.summary = test.summary.clone();
            }
        }
        self.endpoint_test = Some(test);
    }
}

/// A configuration file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InventoryError {
    /// The harness whose file it is.
    pub harness: String,
    /// The file, as `~/…`, `$PROJECT/…` or a system path.
    pub source: String,
    /// invalid_config, file_too_large, unreadable, symlink_outside_root, symlink_loop, …
    pub reason_code: ReasonCode,
    /// Sanitized, at most 256 bytes; never file content.
    pub summary: String,
}

/// `tether inventory --json`: exactly one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "Inventory")]
pub struct InventoryDocument {
    /// The document's schema version.
    pub schema_version: u32,
    /// When the configuration was read (ms since the epoch).
    #[serde(default)]
    pub taken_at: Option<Timestamp>,
    /// One row per server per harness and scope.
    pub rows: Vec<InventoryRow>,
    /// Files that could not be used.
    pub errors: Vec<InventoryError>,
}

impl InventoryDocument {
    /// Only one harness's rows and errors (what a host attaches to that agent's attempt).
    pub fn for_harness(&self, harness: &str) -> InventoryDocument {
        InventoryDocument {
            schema_version: self.schema_version,
            taken_at: self.taken_at,
            rows: self
                .rows
                .iter()
                .filter(|r| r.harness == harness)
                .cloned()
                .collect(),
            errors: self
                .errors
                .iter()
                .filter(|e| e.harness == harness)
                .cloned()
                .collect(),
        }
    }
}

// ---------------------------------------------------------------------------
// Snapshots and their differences
// ---------------------------------------------------------------------------

/// One changed field of a row present in both snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldChange {
    /// transport, target, reason_code or a stage name.
    pub field: String,
    /// The value before (display form).
    pub before: String,
    /// The value after.
    pub after: String,
}

/// A row present in both snapshots whose state changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChangedRow {
    /// Harness.
    pub harness: String,
    /// Scope.
    pub scope: ConfigScope,
    /// Server name.
    pub name: String,
    /// Source file.
    pub source: String,
    /// What changed.
    pub changes: Vec<FieldChange>,
}

/// A recorded snapshot's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SnapshotRef {
    /// The store's id for it.
    pub id: i64,
    /// When it was taken.
    pub taken_at: Timestamp,
}

/// `tether inventory --changes --json`: what changed between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "InventoryChanges")]
pub struct InventoryChanges {
    /// The document's schema version.
    pub schema_version: u32,
    /// The older snapshot (null when only one exists).
    pub from: Option<SnapshotRef>,
    /// The newer snapshot.
    pub to: Option<SnapshotRef>,
    /// Rows only in the newer snapshot.
    pub added: Vec<InventoryRow>,
    /// Rows only in the older snapshot.
    pub removed: Vec<InventoryRow>,
    /// Rows in both whose state changed.
    pub changed: Vec<ChangedRow>,
}

fn stage_word(value: &StageObservation) -> String {
    match value.provenance {
        Some(p) => format!("{} ({})", value.state.as_str(), p.word()),
        None => value.state.as_str().to_owned(),
    }
}

/// The diagnostics that differ, field by field, in a compact display form.
fn diagnostics_fields(
    a: &RowDiagnostics,
    b: &RowDiagnostics,
) -> Vec<(&'static str, String, String)> {
    fn opt<T: ToString>(v: &Option<T>) -> String {
        v.as_ref()
            .map_or_else(|| "-".to_owned(), ToString::to_string)
    }
    fn list(v: &[String]) -> String {
        if v.is_empty() {
            "-".to_owned()
        } else {
            v.join(",")
        }
    }
    let env = |d: &RowDiagnostics| {
        list(
            &d.env
                .iter()
                .map(|e| format!("{}({})", e.name, e.class.as_str()))
                .collect::<Vec<_>>(),
        )
    };
    let include = |d: &RowDiagnostics| {
        d.include_tools
            .as_deref()
            .map_or_else(|| "all".to_owned(), list)
    };
    [
        ("diagnostics.command", opt(&a.command), opt(&b.command)),
        (
            "diagnostics.command_resolves",
            opt(&a.command_resolves),
            opt(&b.command_resolves),
        ),
        (
            "diagnostics.cwd",
            opt(&a.cwd.map(|c| c.as_str())),
            opt(&b.cwd.map(|c| c.as_str())),
        ),
        ("diagnostics.env", env(a), env(b)),
        ("diagnostics.headers", list(&a.headers), list(&b.headers)),
        ("diagnostics.include_tools", include(a), include(b)),
        (
            "diagnostics.exclude_tools",
            list(&a.exclude_tools),
            list(&b.exclude_tools),
        ),
        ("diagnostics.settings", list(&a.settings), list(&b.settings)),
    ]
    .into_iter()
    .filter(|(_, x, y)| x != y)
    .collect()
}

/// The differences between two inventories, rows matched by harness, scope, name and source.
pub fn diff(before: &InventoryDocument, after: &InventoryDocument) -> InventoryChanges {
    let old: BTreeMap<_, _> = before.rows.iter().map(|r| (r.key(), r)).collect();
    let new: BTreeMap<_, _> = after.rows.iter().map(|r| (r.key(), r)).collect();
    let added = new
        .iter()
        .filter(|(k, _)| !old.contains_key(*k))
        .map(|(_, r)| (*r).clone())
        .collect();
    let removed = old
        .iter()
        .filter(|(k, _)| !new.contains_key(*k))
        .map(|(_, r)| (*r).clone())
        .collect();
    let mut changed = Vec::new();
    for (key, a) in &old {
        let Some(b) = new.get(key) else { continue };
        let mut changes = Vec::new();
        let mut field = |name: &str, x: String, y: String| {
            if x != y {
                changes.push(FieldChange {
                    field: name.to_owned(),
                    before: x,
                    after: y,
                });
            }
        };
        field(
            "transport",
            a.transport.to_string(),
            b.transport.to_string(),
        );
        field("target", a.target.clone(), b.target.clone());
        let reason = |r: &InventoryRow| {
            r.reason_code
                .as_ref()
                .map_or_else(|| "none".to_owned(), ToString::to_string)
        };
        field("reason_code", reason(a), reason(b));
        for (name, x, y) in [
            ("configured", &a.stages.configured, &b.stages.configured),
            ("enabled", &a.stages.enabled, &b.stages.enabled),
            (
                "authenticated",
                &a.stages.authenticated,
                &b.stages.authenticated,
            ),
            ("initialized", &a.stages.initialized, &b.stages.initialized),
            (
                "tools_listed",
                &a.stages.tools_listed,
                &b.stages.tools_listed,
            ),
        ] {
            field(name, stage_word(x), stage_word(y));
        }
        for (name, x, y) in diagnostics_fields(&a.diagnostics, &b.diagnostics) {
            field(name, x, y);
        }
        if !changes.is_empty() {
            changed.push(ChangedRow {
                harness: b.harness.clone(),
                scope: b.scope.clone(),
                name: b.name.clone(),
                source: b.source.clone(),
                changes,
            });
        }
    }
    InventoryChanges {
        schema_version: INVENTORY_SCHEMA_VERSION,
        from: None,
        to: None,
        added,
        removed,
        changed,
    }
}

// ---------------------------------------------------------------------------
// Scanners
// ---------------------------------------------------------------------------

/// Reads one harness's configuration. Implementations only read through
/// [`ScanContext`] roots and report through [`ScanOutput`].
pub trait ConfigScanner: Send + Sync {
    /// The harness's name: claude, codex, opencode, cursor, gemini, …
    fn harness(&self) -> &'static str;
    /// Adds this harness's rows and errors.
    fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput);
}

/// A compiled-in scanner (see [`register_scanner!`](crate::register_scanner)).
pub struct ScannerRegistration {
    /// The scanner.
    pub scanner: &'static dyn ConfigScanner,
}

inventory::collect!(ScannerRegistration);

/// Registers a `static` [`ConfigScanner`] so `tether inventory` finds it.
#[macro_export]
macro_rules! register_scanner {
    ($scanner:expr) => {
        $crate::inventory::submit! {
            $crate::capabilities::ScannerRegistration { scanner: &$scanner }
        }
    };
}

/// Every compiled-in scanner, sorted by harness name.
pub fn scanners() -> Vec<&'static dyn ConfigScanner> {
    let mut all: Vec<&'static dyn ConfigScanner> = inventory::iter::<ScannerRegistration>
        .into_iter()
        .map(|r| r.scanner)
        .collect();
    all.sort_by_key(|s| s.harness());
    all.dedup_by_key(|s| s.harness());
    all
}

/// Runs `scanners` (all, or those whose harness is in `only`) and returns one document.
pub fn scan_all(
    ctx: &ScanContext,
    scanners: &[&dyn ConfigScanner],
    only: &[String],
) -> InventoryDocument {
    let mut out = ScanOutput::default();
    let at = out.at;
    for scanner in scanners {
        if !only.is_empty() && !only.iter().any(|h| h == scanner.harness()) {
            continue;
        }
        let harness = scanner.harness();
        // A scanner bug must not lose the other harnesses' rows.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut own = ScanOutput::at(at);
            scanner.scan(ctx, &mut own);
            own
        }));
        match result {
            Ok(own) => {
                out.rows.extend(own.rows);
                out.errors.extend(own.errors);
            }
            Err(_) => out.errors.push(InventoryError {
                harness: harness.to_owned(),
                source: "(scanner)".to_owned(),
                reason_code: ReasonCode::Other("scanner_panicked".into()),
                summary: format!("the {harness} scanner panicked; its rows are missing"),
            }),
        }
    }
    out.rows.truncate(MAX_ROWS);
    out.errors.truncate(MAX_ERRORS);
    InventoryDocument {
        schema_version: INVENTORY_SCHEMA_VERSION,
        taken_at: Some(at),
        rows: out.rows,
        errors: out.errors,
    }
}

/// What a scan is run against.
#[derive(Debug, Clone)]
pub struct ScanContext {
    /// The user's home directory.
    pub home: PathBuf,
    /// The project, absolute (canonical when it exists).
    pub project: Option<PathBuf>,
    /// Where system paths (`/etc/…`) are looked up; `/` normally.
    pub system_root: PathBuf,
    /// The environment variables scanners may consult (PATH, XDG_CONFIG_HOME, CODEX_HOME, …).
    pub vars: BTreeMap<String, OsString>,
}

impl ScanContext {
    /// From this process: `$HOME`, the current environment, system root `/`.
    pub fn from_env(project: Option<PathBuf>) -> Self {
        let vars: BTreeMap<String, OsString> = std::env::vars_os()
            .filter_map(|(k, v)| k.into_string().ok().map(|k| (k, v)))
            .collect();
        let home = vars
            .get("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"));
        Self::new(home, project, PathBuf::from("/"), vars)
    }

    /// An explicit context (tests, hosts scanning for another user).
    pub fn new(
        home: PathBuf,
        project: Option<PathBuf>,
        system_root: PathBuf,
        vars: BTreeMap<String, OsString>,
    ) -> Self {
        let project = project.map(|p| std::fs::canonicalize(&p).unwrap_or(p));
        ScanContext {
            home,
            project,
            system_root,
            vars,
        }
    }

    /// A path as a harness wrote it (a key in `~/.claude.json` `projects`, a
    /// Codex trust entry), canonicalized when it exists, so that a project
    /// reached through a symlink still matches.
    pub fn resolve_written_path(&self, written: &str) -> PathBuf {
        let path = Path::new(written);
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }

    /// Whether a path a harness wrote names the project.
    pub fn is_project(&self, written: &str) -> bool {
        self.project
            .as_ref()
            .is_some_and(|p| self.resolve_written_path(written) == *p)
    }

    /// An environment variable, when set and not empty.
    pub fn var(&self, name: &str) -> Option<&OsString> {
        self.vars.get(name).filter(|v| !v.is_empty())
    }

    /// An environment variable as UTF-8.
    pub fn var_str(&self, name: &str) -> Option<String> {
        self.var(name).and_then(|v| v.to_str()).map(str::to_owned)
    }

    /// The home directory, shown as `~`.
    pub fn home_root(&self) -> ConfigRoot {
        ConfigRoot::new(self.home.clone(), "~")
    }

    /// The project, shown as `$PROJECT`.
    pub fn project_root(&self) -> Option<ConfigRoot> {
        self.project
            .as_ref()
            .map(|p| ConfigRoot::new(p.clone(), "$PROJECT"))
    }

    /// A system directory such as `/etc/codex`, under the system root.
    pub fn system_dir(&self, absolute: &str) -> ConfigRoot {
        let rel = absolute.trim_start_matches('/');
        ConfigRoot::new(self.system_root.join(rel), absolute.trim_end_matches('/'))
    }

    /// A directory named by an environment variable (shown as `$NAME`), or
    /// `fallback` under home (shown as `~/fallback`).
    pub fn env_dir(&self, var: &str, home_fallback: &str) -> ConfigRoot {
        match self.var(var) {
            Some(dir) => ConfigRoot::new(PathBuf::from(dir), format!("${var}")),
            None => self.home_root().join(home_fallback),
        }
    }

    /// Whether a stdio command resolves: a path must be an executable file; a
    /// bare name must be one on PATH.
    pub fn command_resolves(&self, command: &str, cwd: Option<&Path>) -> bool {
        let command = command.trim();
        if command.is_empty() {
            return false;
        }
        if command.contains('/') {
            let path = Path::new(command);
            let path = if path.is_absolute() {
                path.to_path_buf()
            } else {
                cwd.or(self.project.as_deref())
                    .map(|c| c.join(path))
                    .unwrap_or_else(|| path.to_path_buf())
            };
            return is_executable(&path);
        }
        let Some(path) = self.var("PATH") else {
            return false;
        };
        std::env::split_paths(path).any(|dir| is_executable(&dir.join(command)))
    }

    /// The class of a stdio server's cwd.
    pub fn cwd_class(&self, cwd: Option<&str>) -> CwdClass {
        let Some(cwd) = cwd.map(str::trim).filter(|c| !c.is_empty()) else {
            return CwdClass::Unset;
        };
        let path = Path::new(cwd);
        if !path.is_absolute() {
            return CwdClass::Relative;
        }
        if !path.exists() {
            return CwdClass::Missing;
        }
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self
            .project
            .as_ref()
            .is_some_and(|p| canonical.starts_with(p))
        {
            CwdClass::Project
        } else if canonical.starts_with(std::fs::canonicalize(&self.home).unwrap_or_default()) {
            CwdClass::Home
        } else {
            CwdClass::Other
        }
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A directory configuration is read from, and how it is shown.
#[derive(Debug, Clone)]
pub struct ConfigRoot {
    dir: PathBuf,
    /// What reads must stay inside: the top root this one was joined from.
    bound: PathBuf,
    shown: String,
    /// For a root made from one file a variable names: that file's name.
    single_file: Option<String>,
}

/// Why a file could not be used: a reason and a safe summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFailure {
    /// The reason.
    pub reason: ReasonCode,
    /// A safe sentence (no content, no absolute path).
    pub summary: String,
}

impl ReadFailure {
    fn new(reason: ReasonCode, summary: impl Into<String>) -> Self {
        ReadFailure {
            reason,
            summary: summary.into(),
        }
    }
}

const ELOOP: i32 = 40;

impl ConfigRoot {
    /// A root at `dir`, shown as `shown`.
    pub fn new(dir: PathBuf, shown: impl Into<String>) -> Self {
        ConfigRoot {
            bound: dir.clone(),
            dir,
            shown: shown.into(),
            single_file: None,
        }
    }

    /// A root for the one file an environment variable names (for example
    /// `OPENCODE_CONFIG`), shown as `$NAME`; returns it with the relative name
    /// to read. The file's directory is the root, so a symlink out of it is
    /// refused like any other.
    pub fn named_file(path: &Path, var: &str) -> Option<(ConfigRoot, String)> {
        let name = path.file_name()?.to_str()?.to_owned();
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
        Some((
            ConfigRoot {
                dir: dir.to_path_buf(),
                bound: dir.to_path_buf(),
                shown: format!("${var}"),
                single_file: Some(name.clone()),
            },
            name,
        ))
    }

    /// The directory (for the scanner's own lookups, never for display).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A sub-root (shown with the relative path appended). Reads through it
    /// still stay inside this root: a symlinked `~/.claude` that points out
    /// of the home is not followed.
    pub fn join(&self, rel: &str) -> ConfigRoot {
        ConfigRoot {
            dir: self.dir.join(rel),
            bound: self.bound.clone(),
            shown: self.source(rel),
            single_file: None,
        }
    }

    /// How `rel` under this root is shown: `~/.claude.json`, `$PROJECT/.mcp.json`, …
    pub fn source(&self, rel: &str) -> String {
        let rel = rel.trim_start_matches('/');
        let shown = if rel.is_empty() || self.single_file.as_deref() == Some(rel) {
            self.shown.clone()
        } else {
            format!("{}/{rel}", self.shown.trim_end_matches('/'))
        };
        // Relative names come from the scanner or a directory walk; keep them bounded and scrubbed.
        sanitize::cap_with_ellipsis(&shown, 300)
    }

    /// Reads `rel`: `Ok(None)` when it does not exist; an error when it exists
    /// but cannot be used (too large, unreadable, a special file, a symlink
    /// loop or a symlink out of this root).
    pub fn read(&self, rel: &str) -> Result<Option<String>, ReadFailure> {
        let rel_path = Path::new(rel);
        if rel_path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::RootDir))
        {
            return Err(ReadFailure::new(
                ReasonCode::InvalidConfig,
                "a path that leaves its root",
            ));
        }
        let path = self.dir.join(rel_path);
        match std::fs::symlink_metadata(&path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(ELOOP) => {
                return Err(ReadFailure::new(ReasonCode::SymlinkLoop, "symlinks loop"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(None),
            Err(e) => {
                return Err(ReadFailure::new(
                    ReasonCode::Unreadable,
                    format!("cannot inspect it: {}", e.kind()),
                ));
            }
        }
        let Ok(root) = std::fs::canonicalize(&self.bound) else {
            return Ok(None);
        };
        let real = match std::fs::canonicalize(&path) {
            Ok(real) => real,
            Err(e) if e.raw_os_error() == Some(ELOOP) => {
                return Err(ReadFailure::new(ReasonCode::SymlinkLoop, "symlinks loop"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReadFailure::new(
                    ReasonCode::Unreadable,
                    "a symlink that points nowhere",
                ));
            }
            Err(e) => {
                return Err(ReadFailure::new(
                    ReasonCode::Unreadable,
                    format!("cannot resolve it: {}", e.kind()),
                ));
            }
        };
        if !real.starts_with(&root) {
            return Err(ReadFailure::new(
                ReasonCode::SymlinkOutsideRoot,
                format!(
                    "a symlink to somewhere outside {}; not followed",
                    self.shown
                ),
            ));
        }
        read_capped(&real).map(Some)
    }

    /// Files named one of `names` under `rel`, at most `max_depth` directories
    /// deep, as paths relative to this root, sorted. Symlinked directories are
    /// not entered; at most 10 000 entries are looked at.
    pub fn find_files(&self, rel: &str, names: &[&str], max_depth: usize) -> Vec<String> {
        let mut found = Vec::new();
        let mut budget = 10_000usize;
        let mut stack = vec![(rel.trim_end_matches('/').to_owned(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(self.dir.join(&dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                if budget == 0 {
                    return found;
                }
                budget -= 1;
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                let child = if dir.is_empty() {
                    name.clone()
                } else {
                    format!("{dir}/{name}")
                };
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    if depth < max_depth {
                        stack.push((child, depth + 1));
                    }
                } else if names.contains(&name.as_str()) {
                    found.push(child);
                }
            }
        }
        found.sort();
        found
    }
}

/// Reads a regular file of at most [`MAX_CONFIG_BYTES`] as UTF-8 text: the
/// size is checked before and while reading, and special files (a FIFO would
/// block) are refused. Used by [`ConfigRoot::read`] after its containment
/// checks, and by `tether endpoint-test --config` for the file a user names.
pub fn read_capped(path: &Path) -> Result<String, ReadFailure> {
    let meta = std::fs::metadata(path).map_err(|e| {
        ReadFailure::new(
            ReasonCode::Unreadable,
            format!("cannot inspect it: {}", e.kind()),
        )
    })?;
    if !meta.is_file() {
        return Err(ReadFailure::new(
            ReasonCode::InvalidConfig,
            "not a regular file",
        ));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).map_err(|e| {
        ReadFailure::new(
            ReasonCode::Unreadable,
            format!("cannot open it: {}", e.kind()),
        )
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            ReadFailure::new(
                ReasonCode::Unreadable,
                format!("cannot read it: {}", e.kind()),
            )
        })?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map_err(|_| ReadFailure::new(ReasonCode::InvalidConfig, "not UTF-8 text"))
}

fn too_large() -> ReadFailure {
    ReadFailure::new(
        ReasonCode::FileTooLarge,
        format!("larger than {} KiB; not read", MAX_CONFIG_BYTES / 1024),
    )
}

/// Whether the configuration lets a server run, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enablement {
    /// Nothing in the configuration holds it back.
    Enabled,
    /// Held back: a precise reason and a sentence naming the list or file.
    Off(ReasonCode, String),
    /// The configuration cannot tell (for example, a toggle kept elsewhere).
    Unknown(String),
}

/// One server as a scanner found it; [`ScanOutput::push`] turns it into a row.
#[derive(Debug, Clone)]
pub struct FoundServer {
    /// Harness name.
    pub harness: &'static str,
    /// Scope.
    pub scope: ConfigScope,
    /// The server's name.
    pub name: String,
    /// The file it came from (already shown safely).
    pub source: String,
    /// The real endpoint (in memory only).
    pub endpoint: Endpoint,
    /// Whether the configuration lets it run.
    pub enablement: Enablement,
    /// Environment variables forwarded by name (Codex `env_vars`, `bearer_token_env_var`, …).
    pub forwarded_env: Vec<String>,
    /// Header names whose values come from the environment.
    pub env_headers: Vec<String>,
    /// An allow list of tools.
    pub include_tools: Option<Vec<String>>,
    /// A deny list of tools.
    pub exclude_tools: Vec<String>,
    /// Other non-secret settings, `key=value`.
    pub settings: Vec<String>,
}

impl FoundServer {
    /// A server with nothing but its identity and endpoint; enabled.
    pub fn new(
        harness: &'static str,
        scope: ConfigScope,
        name: &str,
        source: String,
        endpoint: Endpoint,
    ) -> Self {
        FoundServer {
            harness,
            scope,
            name: name.to_owned(),
            source,
            endpoint,
            enablement: Enablement::Enabled,
            forwarded_env: Vec::new(),
            env_headers: Vec::new(),
            include_tools: None,
            exclude_tools: Vec::new(),
            settings: Vec::new(),
        }
    }
}

/// What scanners add to.
#[derive(Debug)]
pub struct ScanOutput {
    /// When the configuration is read: the time the rows' stages carry.
    pub at: Timestamp,
    /// Rows found so far.
    pub rows: Vec<InventoryRow>,
    /// Errors found so far.
    pub errors: Vec<InventoryError>,
}

impl Default for ScanOutput {
    /// An empty output stamped now.
    fn default() -> Self {
        ScanOutput::at(Timestamp::now())
    }
}

impl ScanOutput {
    /// An empty output whose rows are stamped `at`.
    pub fn at(at: Timestamp) -> Self {
        ScanOutput {
            at,
            rows: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Reads `rel` under `root`; a failure becomes an error entry and `None`.
    pub fn read(&mut self, harness: &str, root: &ConfigRoot, rel: &str) -> Option<String> {
        match root.read(rel) {
            Ok(text) => text,
            Err(failure) => {
                self.error(harness, root.source(rel), failure.reason, &failure.summary);
                None
            }
        }
    }

    /// Reads and parses a JSON (or, with `jsonc`, JSON with comments and
    /// trailing commas) object; failures become error entries.
    pub fn read_json(
        &mut self,
        harness: &str,
        root: &ConfigRoot,
        rel: &str,
        jsonc: bool,
    ) -> Option<serde_json::Map<String, Value>> {
        let text = self.read(harness, root, rel)?;
        match parse_json_object(&text, jsonc) {
            Ok(map) => Some(map),
            Err(summary) => {
                self.error(
                    harness,
                    root.source(rel),
                    ReasonCode::InvalidConfig,
                    &summary,
                );
                None
            }
        }
    }

    /// Adds an error entry (the summary is scrubbed and capped).
    pub fn error(&mut self, harness: &str, source: String, reason: ReasonCode, summary: &str) {
        self.errors.push(InventoryError {
            harness: harness.to_owned(),
            source,
            reason_code: reason,
            summary: sanitize::summary(summary),
        });
    }

    /// Adds a malformed server entry as an error naming it.
    pub fn invalid_entry(&mut self, harness: &str, source: String, name: &str, problem: &str) {
        self.error(
            harness,
            source,
            ReasonCode::InvalidConfig,
            &format!("server {:?}: {problem}", sanitize::name(name)),
        );
    }

    /// Adds every entry of a `{name: entry}` object (`mcpServers`,
    /// `mcp_servers`, OpenCode's `mcp`): each entry becomes a row, after
    /// `finish` sets its enablement and extras; a malformed entry becomes an
    /// error naming it, and the others still count. `servers` that is not an
    /// object is one error. Variables a dialect forwards by name are resolved
    /// from the context, in memory only.
    #[allow(clippy::too_many_arguments)]
    pub fn add_servers(
        &mut self,
        ctx: &ScanContext,
        harness: &'static str,
        scope: ConfigScope,
        source: &str,
        key: &str,
        servers: Option<&Value>,
        dialect: EntryDialect,
        mut finish: impl FnMut(&mut FoundServer, &serde_json::Map<String, Value>),
    ) {
        let Some(servers) = servers.filter(|v| !v.is_null()) else {
            return;
        };
        let Some(servers) = servers.as_object() else {
            self.error(
                harness,
                source.to_owned(),
                ReasonCode::InvalidConfig,
                &format!("\"{key}\" should be an object, not {}", json_kind(servers)),
            );
            return;
        };
        let lookup = |var: &str| ctx.var_str(var);
        for (name, entry) in servers {
            match entry_endpoint(entry, dialect, &lookup) {
                Ok(mut endpoint) => {
                    let referenced = expand_references(&mut endpoint, dialect, &lookup);
                    let mut found =
                        FoundServer::new(harness, scope.clone(), name, source.to_owned(), endpoint);
                    found.forwarded_env = referenced;
                    if let Some(obj) = entry.as_object() {
                        finish(&mut found, obj);
                    }
                    self.push(ctx, found);
                }
                Err(problem) => self.invalid_entry(harness, source.to_owned(), name, &problem),
            }
        }
    }

    /// Turns a found server into a sanitized row.
    pub fn push(&mut self, ctx: &ScanContext, found: FoundServer) {
        let endpoint = &found.endpoint;
        let scrubber = sanitize::Scrubber::new().with_secrets(endpoint.secret_values());
        let mut diagnostics = RowDiagnostics {
            include_tools: found
                .include_tools
                .as_ref()
                .map(|tools| tools.iter().map(|t| scrubber.name(t)).collect()),
            exclude_tools: found
                .exclude_tools
                .iter()
                .map(|t| scrubber.name(t))
                .collect(),
            settings: found.settings.iter().map(|s| scrubber.summary(s)).collect(),
            ..RowDiagnostics::default()
        };
        let mut env_names: Vec<&str> = found.forwarded_env.iter().map(String::as_str).collect();
        let mut header_names: Vec<&str> = found.env_headers.iter().map(String::as_str).collect();
        match endpoint {
            Endpoint::Stdio {
                command, env, cwd, ..
            } => {
                diagnostics.command = Some(endpoint.target());
                diagnostics.command_resolves =
                    Some(ctx.command_resolves(command, cwd.as_deref().map(Path::new)));
                diagnostics.cwd = Some(ctx.cwd_class(cwd.as_deref()));
                env_names.extend(env.iter().map(|kv| kv.name.as_str()));
            }
            Endpoint::Http { headers, .. } | Endpoint::Sse { headers, .. } => {
                header_names.extend(headers.iter().map(|kv| kv.name.as_str()));
            }
        }
        env_names.sort_unstable();
        env_names.dedup();
        diagnostics.env = env_names
            .into_iter()
            .map(|name| EnvKey {
                name: scrubber.name(name),
                class: env_class(name),
            })
            .collect();
        header_names.sort_unstable_by_key(|h| h.to_ascii_lowercase());
        header_names.dedup_by_key(|h| h.to_ascii_lowercase());
        diagnostics.headers = header_names.into_iter().map(|h| scrubber.name(h)).collect();

        let (enabled, mut reason, mut summary) = match &found.enablement {
            Enablement::Enabled => (from_config(true, self.at), None, None),
            Enablement::Off(reason, why) => (
                from_config(false, self.at),
                Some(reason.clone()),
                Some(summary_keeping_sources(&scrubber, why)),
            ),
            Enablement::Unknown(why) => (
                StageObservation::default(),
                None,
                Some(summary_keeping_sources(&scrubber, why)),
            ),
        };
        if reason.is_none() && diagnostics.command_resolves == Some(false) {
            reason = Some(ReasonCode::CommandNotFound);
            summary = Some(format!(
                "`{}` does not resolve on PATH here",
                diagnostics.command.as_deref().unwrap_or("?")
            ));
        }
        self.rows.push(InventoryRow {
            harness: found.harness.to_owned(),
            scope: found.scope,
            name: scrubber.name(&found.name),
            transport: endpoint.transport(),
            target: endpoint.target(),
            stages: InventoryStages::configured(enabled, self.at),
            reason_code: reason,
            summary,
            source: found.source,
            diagnostics,
            endpoint_test: None,
            endpoint: Some(found.endpoint),
        });
    }
}

/// Scrubs a scanner's sentence, but keeps the file names it cites whole:
/// words that start like a shown source (`~/`, `$PROJECT/`, `$CODEX_HOME/`,
/// `/etc/`) were built by [`ConfigRoot::source`] and are safe, while the
/// pattern scrubber would shorten them to `~/…/name`.
fn summary_keeping_sources(scrubber: &sanitize::Scrubber, text: &str) -> String {
    let is_source = |word: &str| {
        (word.starts_with("~/") || word.starts_with("/etc/") || word.starts_with('$'))
            && scrubber.scrub(word).contains(sanitize::REDACTED).not()
    };
    let words: Vec<String> = text
        .split(' ')
        .map(|w| {
            if is_source(w) {
                w.to_owned()
            } else {
                scrubber.scrub(w)
            }
        })
        .collect();
    sanitize::cap_with_ellipsis(words.join(" ").trim(), sanitize::SUMMARY_MAX_BYTES)
}

/// Classes an environment variable's name.
pub fn env_class(name: &str) -> EnvClass {
    const MARKERS: [&str; 13] = [
        "TOKEN",
        "SECRET",
        "KEY",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "AUTH",
        "CREDENTIAL",
        "COOKIE",
        "SESSION",
        "PRIVATE",
        "BEARER",
        "PAT",
    ];
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper.split(|c: char| !c.is_ascii_alphanumeric()).collect();
    let secret = MARKERS.iter().any(|m| {
        if m.len() <= 4 {
            // Short markers must be whole words (KEY, PASS, PAT, AUTH) to avoid PATH, KEYBOARD…
            words
                .iter()
                .any(|w| w == m || (*m == "KEY" && w.ends_with("KEY")))
        } else {
            upper.contains(m)
        }
    });
    if secret {
        EnvClass::SecretLike
    } else {
        EnvClass::Plain
    }
}

// ---------------------------------------------------------------------------
// Parsing helpers shared by the scanners (and `tether endpoint-test --config`)
// ---------------------------------------------------------------------------

/// Parses a JSON object; with `jsonc`, comments and trailing commas are allowed.
/// The error names the line and column only.
pub fn parse_json_object(
    text: &str,
    jsonc: bool,
) -> Result<serde_json::Map<String, Value>, String> {
    let owned;
    let text = if jsonc {
        owned = strip_jsonc(text);
        owned.as_str()
    } else {
        text
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "the top level is {}, not an object",
            json_kind(&other)
        )),
        Err(e) => Err(format!(
            "not valid JSON{}: line {}, column {}",
            if jsonc { "C" } else { "" },
            e.line(),
            e.column()
        )),
    }
}

/// The JSON type's name, for error messages.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Removes `//` and `/* */` comments and trailing commas outside strings,
/// keeping line structure so error positions stay right.
pub fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = '\0';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            _ => out.push(c),
        }
    }
    remove_trailing_commas(&out)
}

fn remove_trailing_commas(text: &str) -> String {
    let bytes: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == ',' {
            let next = bytes[i + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(next, Some('}') | Some(']')) {
                out.push(c);
            } else {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// How a dialect spells a server entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryDialect {
    /// `{"command","args","env","cwd"}` or `{"type","url","headers"}` (Claude, Cursor).
    McpJson,
    /// Like [`McpJson`](Self::McpJson), but a bare `url` is legacy SSE and `httpUrl` is streamable HTTP.
    Gemini,
    /// Codex `[mcp_servers.NAME]` as JSON: `command`/`args`/`env`/`env_vars`/`cwd`,
    /// or `url` with `http_headers`, `env_http_headers`, `bearer_token_env_var`.
    Codex,
    /// OpenCode: `{"type":"local","command":[…],"environment"}` or `{"type":"remote","url","headers"}`.
    OpenCode,
}

/// A string-to-string map; non-string values are skipped.
pub fn string_map(value: Option<&Value>) -> Vec<KeyValue> {
    value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| KeyValue::new(k.clone(), v)))
                .collect()
        })
        .unwrap_or_default()
}

/// A list of strings; non-string items are skipped.
pub fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn expect_type(
    entry: &serde_json::Map<String, Value>,
    key: &str,
    want: &str,
) -> Result<(), String> {
    let ok = match (entry.get(key), want) {
        (None, _) | (Some(Value::Null), _) => true,
        (Some(v), "string") => v.is_string(),
        (Some(v), "array") => v.is_array(),
        (Some(v), "object") => v.is_object(),
        (Some(v), "string or array") => v.is_string() || v.is_array(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "\"{key}\" should be {want}, not {}",
            json_kind(entry.get(key).unwrap_or(&Value::Null))
        ))
    }
}

/// Expands the environment references a harness expands itself, so a
/// `--test` uses what the harness would: `${VAR}` and `${VAR:-default}`
/// (Claude, Cursor, also `${env:VAR}`), `$VAR` and `${VAR}` (Gemini),
/// `{env:VAR}` (OpenCode). An unset variable stays as written. Returns the
/// names referenced (names are shown; values never are).
pub fn expand_references(
    endpoint: &mut Endpoint,
    dialect: EntryDialect,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    if dialect == EntryDialect::Codex {
        return Vec::new();
    }
    let mut names = Vec::new();
    let mut expand = |text: &mut String| {
        if text.contains('$') || text.contains("{env:") {
            *text = expand_text(text, dialect, lookup, &mut names);
        }
    };
    match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            expand(command);
            args.iter_mut().for_each(&mut expand);
            env.iter_mut().for_each(|kv| expand(&mut kv.value));
            if let Some(cwd) = cwd {
                expand(cwd);
            }
        }
        Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
            expand(url);
            headers.iter_mut().for_each(|kv| expand(&mut kv.value));
        }
    }
    names.sort();
    names.dedup();
    names
}

fn is_var_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn expand_text(
    text: &str,
    dialect: EntryDialect,
    lookup: &dyn Fn(&str) -> Option<String>,
    names: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let (start, open) = match dialect {
            EntryDialect::OpenCode => match rest.find("{env:") {
                Some(i) => (i, "{env:"),
                None => break,
            },
            _ => match rest.find('$') {
                Some(i) if rest[i..].starts_with("${") => (i, "${"),
                Some(i) if dialect == EntryDialect::Gemini => (i, "$"),
                Some(i) => {
                    out.push_str(&rest[..=i]);
                    rest = &rest[i + 1..];
                    continue;
                }
                None => break,
            },
        };
        out.push_str(&rest[..start]);
        let after = &rest[start + open.len()..];
        let (body, consumed) = if open == "$" {
            let len = after.find(|c: char| !is_var_char(c)).unwrap_or(after.len());
            (&after[..len], len)
        } else {
            match after.find('}') {
                Some(end) => (&after[..end], end + 1),
                None => ("", 0),
            }
        };
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        if name.is_empty() || !name.chars().all(is_var_char) || consumed == 0 {
            out.push_str(open);
            rest = after;
            continue;
        }
        names.push(name.to_owned());
        match lookup(name).or_else(|| default.map(str::to_owned)) {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[start..start + open.len() + consumed]),
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

/// Replaces `placeholder` (for example `${CLAUDE_PLUGIN_ROOT}` or
/// `${extensionPath}`) in every string of a JSON value, before the entry is
/// read, so a harness's own placeholders are not taken for environment
/// references.
pub fn substitute(value: &Value, placeholder: &str, with: &str) -> Value {
    match value {
        Value::String(s) if s.contains(placeholder) => Value::String(s.replace(placeholder, with)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute(v, placeholder, with))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, placeholder, with)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Reads one server entry into an [`Endpoint`]. `lookup` resolves environment
/// variables a dialect forwards by name (Codex), so the in-memory endpoint can
/// be tested; nothing from it is ever shown. The error says what is wrong, never
/// a value.
pub fn entry_endpoint(
    entry: &Value,
    dialect: EntryDialect,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Endpoint, String> {
    let Some(obj) = entry.as_object() else {
        return Err(format!("the entry is {}, not an object", json_kind(entry)));
    };
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
    if dialect == EntryDialect::OpenCode {
        return opencode_endpoint(obj, kind);
    }
    expect_type(obj, "command", "string")?;
    expect_type(obj, "args", "array")?;
    expect_type(obj, "env", "object")?;
    expect_type(obj, "url", "string")?;
    expect_type(obj, "headers", "object")?;
    if let Some(command) = obj.get("command").and_then(Value::as_str) {
        let mut env = string_map(obj.get("env"));
        if dialect == EntryDialect::Codex {
            for name in string_list(obj.get("env_vars")) {
                if let Some(value) = lookup(&name) {
                    env.push(KeyValue::new(name, value));
                }
            }
        }
        return Ok(Endpoint::Stdio {
            command: command.to_owned(),
            args: string_list(obj.get("args")),
            env,
            cwd: obj.get("cwd").and_then(Value::as_str).map(str::to_owned),
        });
    }
    let mut headers = string_map(obj.get(if dialect == EntryDialect::Codex {
        "http_headers"
    } else {
        "headers"
    }));
    if dialect == EntryDialect::Codex {
        for kv in string_map(obj.get("env_http_headers")) {
            if let Some(value) = lookup(&kv.value) {
                headers.push(KeyValue::new(kv.name, value));
            }
        }
        if let Some(var) = obj.get("bearer_token_env_var").and_then(Value::as_str)
            && let Some(token) = lookup(var)
        {
            headers.push(KeyValue::new("Authorization", format!("Bearer {token}")));
        }
    }
    if let Some(url) = obj.get("httpUrl").and_then(Value::as_str) {
        return Ok(Endpoint::Http {
            url: url.to_owned(),
            headers,
        });
    }
    let url = obj
        .get("url")
        .or_else(|| obj.get("serverUrl"))
        .and_then(Value::as_str);
    if let Some(url) = url {
        let sse = match kind {
            "sse" => true,
            "http" | "streamable-http" | "streamableHttp" => false,
            _ => dialect == EntryDialect::Gemini,
        };
        let url = url.to_owned();
        return Ok(if sse {
            Endpoint::Sse { url, headers }
        } else {
            Endpoint::Http { url, headers }
        });
    }
    Err("neither \"command\" nor \"url\" is set".into())
}

fn opencode_endpoint(obj: &serde_json::Map<String, Value>, kind: &str) -> Result<Endpoint, String> {
    match kind {
        "local" => {
            expect_type(obj, "command", "string or array")?;
            let mut parts = match obj.get("command") {
                Some(Value::String(s)) => vec![s.clone()],
                other => string_list(other),
            }
            .into_iter();
            let command = parts
                .next()
                .ok_or("a local server needs a non-empty \"command\"")?;
            Ok(Endpoint::Stdio {
                command,
                args: parts.collect(),
                env: string_map(obj.get("environment")),
                cwd: None,
            })
        }
        "remote" => {
            expect_type(obj, "url", "string")?;
            let url = obj
                .get("url")
                .and_then(Value::as_str)
                .ok_or("a remote server needs a \"url\"")?;
            Ok(Endpoint::Http {
                url: url.to_owned(),
                headers: string_map(obj.get("headers")),
            })
        }
        "" => Err("\"type\" is missing (local or remote)".into()),
        _ => Err("\"type\" is neither local nor remote".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_are_classed_by_name() {
        for secret in [
            "API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "AUTH",
            "OPENAI_APIKEY",
            "MY_SECRET_X",
        ] {
            assert_eq!(env_class(secret), EnvClass::SecretLike, "{secret}");
        }
        for plain in [
            "PATH",
            "TZ",
            "NODE_ENV",
            "KEYBOARD_LAYOUT",
            "HOME",
            "PATTERN",
        ] {
            assert_eq!(env_class(plain), EnvClass::Plain, "{plain}");
        }
    }

    #[test]
    fn jsonc_comments_and_trailing_commas() {
        let text = "{\n // c\n \"a\": \"x // not a comment\", /* b */\n \"b\": [1,2,],\n}\n";
        let map = parse_json_object(text, true).expect("jsonc");
        assert_eq!(map["a"], "x // not a comment");
        assert_eq!(map["b"].as_array().map(Vec::len), Some(2));
        let err = parse_json_object("{\n\"a\": }", false).expect_err("bad");
        assert!(err.contains("line 2"), "{err}");
        assert!(
            parse_json_object("[1]", false)
                .expect_err("array")
                .contains("array")
        );
    }

    #[test]
    fn entries_of_every_dialect() {
        let none = |_: &str| None;
        let e = |v: Value, d| entry_endpoint(&v, d, &none);
        let sse = e(
            serde_json::json!({"url": "http://h/sse"}),
            EntryDialect::Gemini,
        )
        .expect("g");
        assert_eq!(sse.transport(), Transport::Sse);
        let http = e(
            serde_json::json!({"url": "http://h/mcp"}),
            EntryDialect::McpJson,
        )
        .expect("c");
        assert_eq!(http.transport(), Transport::Http);
        let oc = e(
            serde_json::json!({"type": "local", "command": ["npx", "-y", "x"]}),
            EntryDialect::OpenCode,
        )
        .expect("oc");
        assert!(
            matches!(oc, Endpoint::Stdio { ref command, ref args, .. } if command == "npx" && args.len() == 2)
        );
        let err = e(serde_json::json!({"command": 5}), EntryDialect::McpJson).expect_err("type");
        assert!(err.contains("\"command\" should be string"), "{err}");
        let err = e(serde_json::json!([1]), EntryDialect::McpJson).expect_err("shape");
        assert!(err.contains("array"), "{err}");
        let lookup = |name: &str| (name == "TOK").then(|| "s3cr3t".to_owned());
        let codex = entry_endpoint(
            &serde_json::json!({"url": "http://h/mcp", "bearer_token_env_var": "TOK"}),
            EntryDialect::Codex,
            &lookup,
        )
        .expect("codex");
        assert!(
            matches!(codex, Endpoint::Http { ref headers, .. } if headers[0].value == "Bearer s3cr3t")
        );
    }

    #[test]
    fn environment_references_expand_as_each_harness_does() {
        let lookup = |name: &str| (name == "TOK").then(|| "v4lue".to_owned());
        let run = |text: &str, dialect| {
            let mut names = Vec::new();
            (expand_text(text, dialect, &lookup, &mut names), names)
        };
        assert_eq!(
            run("Bearer ${TOK}", EntryDialect::McpJson).0,
            "Bearer v4lue"
        );
        assert_eq!(run("${MISSING:-dflt}/x", EntryDialect::McpJson).0, "dflt/x");
        assert_eq!(run("${env:TOK}", EntryDialect::McpJson).0, "v4lue");
        assert_eq!(
            run("$TOK and ${UNSET}", EntryDialect::Gemini),
            (
                "v4lue and ${UNSET}".into(),
                vec!["TOK".into(), "UNSET".into()]
            )
        );
        assert_eq!(run("$TOK stays", EntryDialect::McpJson).0, "$TOK stays");
        assert_eq!(run("{env:TOK}!", EntryDialect::OpenCode).0, "v4lue!");
        assert_eq!(
            run("${ unterminated", EntryDialect::McpJson).0,
            "${ unterminated"
        );
        assert_eq!(run("$", EntryDialect::Gemini).0, "$");
        let mut endpoint = Endpoint::Http {
            url: "https://h/mcp".into(),
            headers: vec![KeyValue::new("Authorization", "Bearer ${TOK}")],
        };
        let names = expand_references(&mut endpoint, EntryDialect::McpJson, &lookup);
        assert_eq!(names, ["TOK"]);
        assert!(
            matches!(endpoint, Endpoint::Http { ref headers, .. } if headers[0].value == "Bearer v4lue")
        );
    }

    #[test]
    fn reads_stay_inside_their_root() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root_dir = tmp.path().join("home");
        std::fs::create_dir_all(&root_dir).expect("mkdir");
        std::fs::write(tmp.path().join("outside.json"), "{}").expect("write");
        std::fs::write(root_dir.join("ok.json"), "{}").expect("write");
        std::os::unix::fs::symlink(
            tmp.path().join("outside.json"),
            root_dir.join("escape.json"),
        )
        .expect("symlink");
        std::os::unix::fs::symlink(root_dir.join("ok.json"), root_dir.join("inside.json"))
            .expect("symlink");
        std::os::unix::fs::symlink(root_dir.join("loop-b"), root_dir.join("loop-a")).expect("l");
        std::os::unix::fs::symlink(root_dir.join("loop-a"), root_dir.join("loop-b")).expect("l");
        std::fs::write(root_dir.join("big.json"), vec![b' '; 2 * 1024 * 1024]).expect("big");
        let root = ConfigRoot::new(root_dir, "~");
        assert_eq!(root.read("ok.json"), Ok(Some("{}".into())));
        assert_eq!(root.read("inside.json"), Ok(Some("{}".into())));
        assert_eq!(root.read("absent.json"), Ok(None));
        assert_eq!(root.read("no/such/dir.json"), Ok(None));
        let reason = |rel| root.read(rel).expect_err(rel).reason;
        assert_eq!(reason("escape.json"), ReasonCode::SymlinkOutsideRoot);
        assert_eq!(reason("loop-a"), ReasonCode::SymlinkLoop);
        assert_eq!(reason("big.json"), ReasonCode::FileTooLarge);
        assert_eq!(reason("../outside.json"), ReasonCode::InvalidConfig);
        assert_eq!(root.source(".claude.json"), "~/.claude.json");
        // A joined root is bound by its parent: a symlinked directory out of it is refused.
        std::os::unix::fs::symlink(tmp.path(), root.dir().join("linked-dir")).expect("ln");
        let joined = root.join("linked-dir");
        assert_eq!(
            joined.read("outside.json").expect_err("escape").reason,
            ReasonCode::SymlinkOutsideRoot
        );
    }

    #[test]
    fn diff_finds_added_removed_and_changed() {
        let ctx = ScanContext::new("/nonexistent".into(), None, "/".into(), BTreeMap::new());
        let mut a = ScanOutput::default();
        let endpoint = |url: &str| Endpoint::Http {
            url: url.into(),
            headers: vec![],
        };
        a.push(
            &ctx,
            FoundServer::new(
                "x",
                ConfigScope::User,
                "keep",
                "~/f".into(),
                endpoint("http://a"),
            ),
        );
        a.push(
            &ctx,
            FoundServer::new(
                "x",
                ConfigScope::User,
                "gone",
                "~/f".into(),
                endpoint("http://a"),
            ),
        );
        let mut b = ScanOutput::default();
        let mut off = FoundServer::new(
            "x",
            ConfigScope::User,
            "keep",
            "~/f".into(),
            endpoint("http://a"),
        );
        off.enablement = Enablement::Off(ReasonCode::DisabledInConfig, "enabled = false".into());
        b.push(&ctx, off);
        b.push(
            &ctx,
            FoundServer::new(
                "x",
                ConfigScope::User,
                "new",
                "~/f".into(),
                endpoint("http://a"),
            ),
        );
        let doc = |o: ScanOutput| InventoryDocument {
            schema_version: 1,
            taken_at: None,
            rows: o.rows,
            errors: o.errors,
        };
        let changes = diff(&doc(a), &doc(b));
        assert_eq!(changes.added.len(), 1);
        assert_eq!(changes.added[0].name, "new");
        assert_eq!(changes.removed[0].name, "gone");
        let fields: Vec<_> = changes.changed[0]
            .changes
            .iter()
            .map(|c| c.field.as_str())
            .collect();
        assert_eq!(fields, ["reason_code", "enabled"]);
    }
}
