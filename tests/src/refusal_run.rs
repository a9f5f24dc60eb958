//! The set-up every real-CLI refusal test shares (`tests/tests/refusals_*.rs`,
//! issue 57): a private home, a counting server (`tether-counting-mcp` or
//! `tether-pinned-mcp`, counting as [`crate::counting`] says), the bounded
//! run of the CLI, the server's log of the calls it received, the fake
//! model's log of the calls it made, and Tether's reading of the session:
//! `tether sessions show PATH --json` (a document, its tool's row found by
//! [`tool_in`]) or the records library (a [`ToolRow`]). A planted secret
//! is checked to reach none of it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tether_core::model::ToolRow;
use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::{ReasonCode, ServerSource, StageState};

use crate::fake_model::ModelLog;

/// The tools `tether-pinned-mcp` serves in the refusal tests: `stamp`
/// answers `ok`, `fail` `isError`, `err` a JSON-RPC error (as
/// [`crate::counting::answer`] says).
pub const STAMP_FAIL_ERR: &str = r#"[{"name":"stamp","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"fail","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"err","description":"t","inputSchema":{"type":"object","properties":{}}}]"#;

/// A word planted in what a refusal says (a hook's reason, a refusal's
/// message): it must reach nothing Tether gives.
pub const PLANTED: &str = "planted-refusal-secret-5521";

/// How long one `tether sessions show` may take before the test fails
/// (a generous bound: it reads one file).
const SHOW_BOUND_SECS: u64 = 120;

/// One refusal run's private home (removed when dropped) and the counting
/// server its harness is given, under the name `server_name`.
pub struct RefusalHome {
    home: PathBuf,
    server: PathBuf,
    tools: Option<PathBuf>,
    log: PathBuf,
    server_name: &'static str,
    secret: &'static str,
}

impl RefusalHome {
    /// A home whose server is `tether-counting-mcp` (its three fixed tools),
    /// named `time`; `secret` must reach nothing Tether shows.
    pub fn counting(secret: &'static str) -> RefusalHome {
        let server = crate::workspace_bin("tether-counting-mcp");
        RefusalHome::with(server, None, "time", secret)
    }

    /// A home whose server is `tether-pinned-mcp --tools FILE`, FILE holding
    /// `tools` (a JSON array of tool definitions), named `count`; `None`
    /// with a loud SKIP where the server is not built.
    pub fn pinned(tools: &str, secret: &'static str) -> Option<RefusalHome> {
        let server = crate::workspace_bin("tether-pinned-mcp");
        if !server.is_file() {
            eprintln!("SKIP: tether-pinned-mcp is not built (cargo build -p tether-tests)");
            return None;
        }
        let mut run = RefusalHome::with(server, None, "count", secret);
        let file = run.home.join("tools.json");
        std::fs::write(&file, tools).expect("tools");
        run.tools = Some(file);
        Some(run)
    }

    fn with(
        server: PathBuf,
        tools: Option<PathBuf>,
        server_name: &'static str,
        secret: &'static str,
    ) -> RefusalHome {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let home = std::env::temp_dir().join(format!(
            "tether-refusal-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).expect("a private home");
        let log = home.join("calls.log");
        RefusalHome {
            home,
            server,
            tools,
            log,
            server_name,
            secret,
        }
    }

    /// The private home (`HOME` of the run).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The counting server's program.
    pub fn server(&self) -> &Path {
        &self.server
    }

    /// The server's name in the harness's configuration.
    pub fn server_name(&self) -> &'static str {
        self.server_name
    }

    /// The server's arguments (`--tools FILE` for `tether-pinned-mcp`).
    pub fn server_args(&self) -> Vec<String> {
        self.tools
            .iter()
            .flat_map(|t| ["--tools".to_owned(), t.display().to_string()])
            .collect()
    }

    /// The variable and file the server counts its calls in, for the
    /// server's environment.
    pub fn log_env(&self) -> (&'static str, String) {
        (crate::counting::CALLS_LOG, self.log.display().to_string())
    }

    /// The `tools/call` requests the server received, by tool, in order.
    pub fn received(&self) -> Vec<String> {
        crate::counting::received(&self.log)
    }

    /// An executable shell script `name` in the home running `body`.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.home.join(name);
        write_script(&path, body);
        path
    }

    /// Runs the CLI `cmd` to its end, bounded by `secs` and killed by
    /// process group past it; it must succeed (`label` and its stderr say
    /// why not). The home is kept under `$TETHER_KEEP_HOMES/refusals-LABEL`.
    pub fn run_cli(
        &self,
        label: &str,
        cmd: std::process::Command,
        secs: u64,
    ) -> std::process::Output {
        let out = crate::output_within(cmd, secs);
        assert!(
            out.status.success(),
            "{label}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        crate::keep_home(&format!("refusals-{label}"), &self.home);
        out
    }

    /// `tether sessions show PATH --json` in this home (and its text, both
    /// bounded), the planted secret in neither: the one document.
    pub fn show(&self, path: &Path) -> Value {
        let text = |json: bool| {
            let mut cmd = crate::tether_at_home(&self.home);
            cmd.args(["sessions", "show", &path.display().to_string()]);
            if json {
                cmd.arg("--json");
            }
            let out = crate::output_within(cmd, SHOW_BOUND_SECS);
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(out.status.success(), "{}: {stderr}", path.display());
            assert!(
                !stdout.contains(self.secret) && !stderr.contains(self.secret),
                "the planted secret leaked: {stdout}{stderr}"
            );
            stdout
        };
        text(false);
        serde_json::from_str(&text(true)).expect("one document")
    }

    /// The tool row `tool` of the server in the one session the records of
    /// `kind` under this home show (read as `tether sessions` reads them,
    /// with `vars` as the harness's environment); the planted secret is in
    /// no part of the attempt.
    pub fn row(&self, kind: &str, vars: &[(&str, &str)], tool: &str) -> ToolRow {
        let registry = Registry::with_static().expect("registry");
        let configured = vec![ServerSpec::new(
            self.server_name,
            ServerSource::Profile,
            Endpoint::Stdio {
                command: self.server.display().to_string(),
                args: vec![],
                env: vec![],
                cwd: None,
            },
        )];
        let vars = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let mut records = tether_records::Records::new(
            &registry,
            &tether_records::Home::new(&self.home, vars),
            HashMap::from([(kind.to_owned(), configured)]),
            tether_records::Filter {
                harnesses: vec![kind.to_owned()],
                ..Default::default()
            },
        );
        records.read(true);
        assert_eq!(records.sessions().len(), 1, "{kind}: {:?}", records.files());
        let facts = records.sessions().values().next().expect("one");
        let history = records.history(facts, None).expect("history");
        let attempt = history.current().expect("attempt").clone();
        let shown = format!("{attempt:?}");
        assert!(
            !shown.contains(self.secret),
            "{kind}: the planted words leaked"
        );
        let server = self.server_name;
        attempt
            .server(server)
            .and_then(|s| s.tools.iter().find(|t| t.name == tool))
            .cloned()
            .unwrap_or_else(|| panic!("{kind}: no row {server}/{tool}: {attempt:?}"))
    }
}

impl Drop for RefusalHome {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

/// Writes an executable shell script at `path` running `body`.
pub fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("mode");
}

/// What the fake model called, over every turn.
pub fn model_called(sent: &ModelLog) -> Vec<String> {
    sent.turns().into_iter().filter_map(|t| t.called).collect()
}

/// The tools the fake model was offered, over every turn.
pub fn model_offered(sent: &ModelLog) -> Vec<String> {
    sent.turns().into_iter().flat_map(|t| t.tools).collect()
}

/// In a `tether sessions show --json` document: the row `SERVER/TOOL` and
/// the tool's entry in the history (with its `refusals`); `null` for
/// either that is not there.
pub fn tool_in(doc: &Value, server: &str, tool: &str) -> (Value, Value) {
    let row = doc["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == format!("{server}/{tool}"))
        .cloned()
        .unwrap_or(Value::Null);
    let history = doc["history"]["attempts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["servers"].as_array().into_iter().flatten())
        .filter(|s| s["name"] == server)
        .flat_map(|s| s["tools"].as_array().into_iter().flatten())
        .find(|t| t["name"] == tool)
        .cloned()
        .unwrap_or(Value::Null);
    (row, history)
}

/// A count in a document's row (`calls`, `refused_calls`, …); 0 where
/// absent.
pub fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or(0)
}

/// A refusal for `reason` of the row's tool: the model called it, the
/// server never got it, and the row has the refusal, no call and no use.
pub fn assert_refused(
    label: &str,
    run: &RefusalHome,
    called: &[String],
    row: &ToolRow,
    reason: ReasonCode,
) {
    assert!(
        called.iter().any(|c| c.contains(row.name.as_str())),
        "{label}: the model never called {}: {called:?}",
        row.name
    );
    assert_eq!(
        run.received(),
        Vec::<String>::new(),
        "{label}: reached the server"
    );
    assert_eq!(row.calls, 0, "{label}: {row:?}");
    assert!(row.refused_calls >= 1, "{label}: {row:?}");
    assert_eq!(row.refusal(), Some(&reason), "{label}: {row:?}");
    assert!(row.is_refused(), "{label}: {row:?}");
    assert_eq!(row.callable.state, StageState::No, "{label}: {row:?}");
}

/// A call that reached the server once, as the row's tool: one call,
/// failed where `failed`, nothing refused.
pub fn assert_reached_once(label: &str, run: &RefusalHome, row: &ToolRow, failed: bool) {
    assert_eq!(run.received(), [row.name.as_str()], "{label}");
    assert_eq!(
        (row.calls, row.failed_calls, row.refused_calls),
        (1, u32::from(failed), 0),
        "{label}: {row:?}"
    );
}
