//! A fixture machine for testing a [`ConfigScanner`]: a private home, project,
//! system root and `PATH` in a temporary directory, helpers to write the files
//! a harness reads, and an in-process scan.
//!
//! ```
//! use tether_sdk::scan_fixture::ScanFixture;
//! # use tether_sdk::*;
//! # struct Mine;
//! # impl ConfigScanner for Mine {
//! #     fn harness(&self) -> &'static str { "mine" }
//! #     fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput) {
//! #         let root = ctx.home_root();
//! #         if let Some(doc) = out.read_json("mine", &root, ".mine.json", false) {
//! #             out.add_servers(ctx, "mine", tether_sdk::ConfigScope::User, &root.source(".mine.json"),
//! #                 "mcpServers", doc.get("mcpServers"), EntryDialect::McpJson, |_, _| {});
//! #         }
//! #     }
//! # }
//! let f = ScanFixture::new();
//! f.home(".mine.json", r#"{"mcpServers": {"a": {"command": "fake-mcp", "env": {"K": "sekret-1"}}}}"#);
//! let doc = f.scan(&Mine);
//! assert_eq!(doc.rows[0].diagnostics.command_resolves, Some(true));
//! ScanFixture::assert_no_secret("document", &serde_json::to_string(&doc).unwrap(), &["sekret-1"]);
//! ```

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tether_core::inventory::{InventoryDocument, InventoryRow};
use tether_inventory::{ConfigScanner, ScanContext, scan_all};

/// A temporary machine: `home`, `project`, `system` (the root `/etc/…` is
/// read under) and `bin` (on `PATH`, holding an executable `fake-mcp`).
/// Everything is removed on drop.
#[derive(Debug)]
pub struct ScanFixture {
    /// The user's home directory.
    pub home: PathBuf,
    /// The project being scanned.
    pub project: PathBuf,
    /// The system root.
    pub system: PathBuf,
    /// A directory on `PATH`.
    pub bin: PathBuf,
    vars: BTreeMap<String, OsString>,
    _dir: tempfile::TempDir,
}

impl Default for ScanFixture {
    fn default() -> Self {
        Self::new()
    }
}

impl ScanFixture {
    /// A fresh machine. Panics if the temporary directory cannot be made
    /// (this is test support).
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = std::fs::canonicalize(dir.path()).expect("its canonical path");
        let fixture = ScanFixture {
            home: root.join("home"),
            project: root.join("work/proj"),
            system: root.join("sysroot"),
            bin: root.join("bin"),
            vars: BTreeMap::new(),
            _dir: dir,
        };
        for d in [
            &fixture.home,
            &fixture.project,
            &fixture.system,
            &fixture.bin,
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        Self::executable(&fixture.bin.join("fake-mcp"));
        fixture
    }

    /// The directory that holds home, project, system and bin.
    pub fn root(&self) -> &Path {
        self.home.parent().expect("the fixture root")
    }

    /// Writes a file, creating its directories.
    pub fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    /// Writes an executable shell script that exits 0.
    pub fn executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        Self::write(path, "#!/bin/sh\nexit 0\n");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// Writes `rel` under the home.
    pub fn home(&self, rel: &str, text: &str) {
        Self::write(&self.home.join(rel), text);
    }

    /// Writes `rel` under the project.
    pub fn project(&self, rel: &str, text: &str) {
        Self::write(&self.project.join(rel), text);
    }

    /// Writes an absolute system path (`/etc/…`) under the system root.
    pub fn system(&self, absolute: &str, text: &str) {
        Self::write(&self.system.join(absolute.trim_start_matches('/')), text);
    }

    /// Sets an environment variable the scan sees (beside `HOME` and `PATH`).
    pub fn var(&mut self, name: &str, value: impl Into<OsString>) {
        self.vars.insert(name.to_owned(), value.into());
    }

    /// The scan context for `project` (the fixture's own unless given).
    pub fn context_for(&self, project: &Path) -> ScanContext {
        let mut vars = self.vars.clone();
        vars.insert("HOME".into(), self.home.clone().into());
        vars.insert(
            "PATH".into(),
            format!("{}:/usr/bin:/bin", self.bin.display()).into(),
        );
        ScanContext::new(
            self.home.clone(),
            Some(project.to_path_buf()),
            self.system.clone(),
            vars,
        )
    }

    /// Scans with one scanner, in process.
    pub fn scan(&self, scanner: &dyn ConfigScanner) -> InventoryDocument {
        scan_all(&self.context_for(&self.project), &[scanner], &[])
    }

    /// Fails, naming the secret, if any of `secrets` is in `text`.
    pub fn assert_no_secret(what: &str, text: &str, secrets: &[&str]) {
        for secret in secrets {
            assert!(!text.contains(secret), "{what} leaked {secret}: {text}");
        }
    }
}

/// A row's enabled state and reason: `("yes", None)`, `("no", Some(reason))`, …
pub type RowState = (&'static str, Option<String>);

/// Enabled by configuration, with no reason.
pub const ON: RowState = ("yes", None);

/// Held back by configuration, for `reason`.
pub fn off(reason: &str) -> RowState {
    ("no", Some(reason.to_owned()))
}

/// The row's enabled state and reason.
pub fn state(row: &InventoryRow) -> RowState {
    (
        row.stages.enabled.state.as_str(),
        row.reason_code.as_ref().map(ToString::to_string),
    )
}

/// The one row of `harness` in `scope` named `name`; fails, listing the rows,
/// unless there is exactly one.
pub fn row<'a>(
    doc: &'a InventoryDocument,
    harness: &str,
    scope: &str,
    name: &str,
) -> &'a InventoryRow {
    let found: Vec<_> = doc
        .rows
        .iter()
        .filter(|r| r.harness == harness && r.scope.as_str() == scope && r.name == name)
        .filter(|r| r.kind == tether_core::vocab::CapabilityKind::McpServer)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{harness}/{scope} {name} once in {:#?}",
        doc.rows
    );
    found[0]
}

/// What a scanner's fixture test checks of a whole scan: no file it could
/// not use, none of `secrets` anywhere in the document, and exactly the
/// server rows `expect` lists for `harness` (scope, name, state), each
/// configured, none claimed model-visible, and every reason explained by a
/// sentence. Rows of other kinds (plugins, skills, hooks) are checked by
/// their own tests.
pub fn assert_scan(
    doc: &InventoryDocument,
    harness: &str,
    secrets: &[&str],
    expect: &[(&str, &str, RowState)],
) {
    assert!(doc.errors.is_empty(), "{:#?}", doc.errors);
    ScanFixture::assert_no_secret(
        "the inventory",
        &serde_json::to_string(doc).expect("json"),
        secrets,
    );
    assert_states(doc, harness, expect);
}

/// That `doc` holds exactly the server rows `expect` lists for `harness`
/// (scope, name, state): [`assert_scan`] without its other checks.
pub fn assert_states(doc: &InventoryDocument, harness: &str, expect: &[(&str, &str, RowState)]) {
    for (scope, name, want) in expect {
        let r = row(doc, harness, scope, name);
        assert_eq!(&state(r), want, "{harness}/{scope} {name}: {r:#?}");
        assert_eq!(r.stages.configured.state.as_str(), "yes");
        assert_eq!(r.stages.model_visible.state.as_str(), "unknown");
        if want.1.is_some() {
            assert!(
                r.summary.is_some(),
                "a reason comes with a sentence: {r:#?}"
            );
        }
    }
    let servers = doc
        .rows
        .iter()
        .filter(|r| r.kind == tether_core::vocab::CapabilityKind::McpServer)
        .count();
    assert_eq!(servers, expect.len(), "{:#?}", doc.rows);
}
