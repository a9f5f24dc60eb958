//! Refused calls, run for real: OpenCode 1.18.33 (the pin, which is npm's
//! newest) in `opencode run` against the fake model and a server that
//! counts the `tools/call` requests it receives (`tether-pinned-mcp` with
//! `TETHER_CALL_LOG`). An `ask` rule in `opencode run`, which rejects every
//! ask itself, is refused: the server's log shows no call, the fake model's
//! log shows the model made it, and the session's database, read as `tether
//! sessions` reads it (its words matched inside the query), gives the tool
//! row a refusal, `approval_required`, no call and never a use. A `deny`
//! rule hides the tool: no call, nothing refused. A tool error and a
//! JSON-RPC error reached the server once each; an allowed call is a use.
//! Each skips loudly where OpenCode (tests/peers, `npm ci`) is not
//! installed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tether_core::model::ToolRow;
use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::{ReasonCode, ServerSource};
use tether_tests::Release;

/// The counting server's tools: `stamp` answers `ok`, `fail` `isError`.
const TOOLS: &str = r#"[{"name":"stamp","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"fail","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"err","description":"t","inputSchema":{"type":"object","properties":{}}}]"#;

/// A word planted in a refusal's message: it must reach nothing Tether
/// gives.
const PLANTED: &str = "planted-refusal-secret-5521";

/// One run's private home, its counting server and what it logged.
struct Run {
    home: tempfile::TempDir,
    server: PathBuf,
    tools: PathBuf,
    log: PathBuf,
}

impl Run {
    fn new() -> Option<Run> {
        let server = tether_tests::workspace_bin("tether-pinned-mcp");
        if !server.is_file() {
            eprintln!("SKIP: tether-pinned-mcp is not built (cargo build -p tether-tests)");
            return None;
        }
        let home = tempfile::tempdir().expect("home");
        let tools = home.path().join("tools.json");
        std::fs::write(&tools, TOOLS).expect("tools");
        let log = home.path().join("calls.log");
        Some(Run {
            home,
            server,
            tools,
            log,
        })
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    /// The server's entry in OpenCode's `mcp`.
    fn entry(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "local",
            "command": [self.server, "--tools", self.tools],
            "environment": {"TETHER_CALL_LOG": self.log},
            "enabled": true
        })
    }

    /// The `tools/call` requests the server received, by tool.
    fn received(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The tool row `tool` of the server `count` in the one session the
    /// records of `kind` under this home show.
    fn row(&self, kind: &str, vars: &[(&str, &str)], tool: &str) -> ToolRow {
        let registry = Registry::with_static().expect("registry");
        let configured = vec![ServerSpec::new(
            "count",
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
            &tether_records::Home::new(self.home(), vars),
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
        assert!(!shown.contains(PLANTED), "{kind}: a refusal's words leaked");
        attempt
            .server("count")
            .and_then(|s| s.tools.iter().find(|t| t.name == tool))
            .cloned()
            .unwrap_or_else(|| panic!("{kind}: no row count/{tool}: {attempt:?}"))
    }
}

/// What the fake model called, over every turn.
fn model_called(sent: &tether_tests::fake_model::ModelLog) -> Vec<String> {
    sent.turns().into_iter().filter_map(|t| t.called).collect()
}

/// A refusal for `reason`: the model called it, the server never got it,
/// and the row has the refusal, no call and no use.
fn assert_refused(label: &str, run: &Run, called: &[String], row: &ToolRow, reason: ReasonCode) {
    assert!(
        called.iter().any(|c| c.contains("stamp")),
        "{label}: the model never called stamp: {called:?}"
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
    assert_eq!(
        row.callable.state,
        tether_core::vocab::StageState::No,
        "{label}: {row:?}"
    );
}

/// An allowed call: one use, nothing refused.
fn assert_used(label: &str, run: &Run, row: &ToolRow) {
    assert_eq!(run.received(), ["stamp"], "{label}");
    assert_eq!(
        (row.calls, row.failed_calls, row.refused_calls),
        (1, 0, 0),
        "{label}: {row:?}"
    );
}

/// Runs `opencode run` with `extra` in its configuration (permissions), the
/// fake model calling `count/TOOL`.
async fn opencode(tool: &str, extra: serde_json::Value) -> Option<(Run, Vec<String>)> {
    let opencode = Release::Pinned
        .peer("node_modules/.bin/opencode")
        .or_else(|| {
            eprintln!("SKIP: OpenCode is not installed (run `npm ci` in tests/peers)");
            None
        })?;
    let run = Run::new()?;
    let (model, sent) = tether_tests::fake_model::start_model(&format!("count/{tool}")).await;
    let config_dir = run.home().join(".config/opencode");
    let work = run.home().join("work");
    std::fs::create_dir_all(&config_dir).expect("dir");
    std::fs::create_dir_all(&work).expect("work");
    let mut servers = serde_json::json!({"mcp": {"count": run.entry()}});
    if let (Some(s), serde_json::Value::Object(extra)) = (servers.as_object_mut(), extra) {
        s.extend(extra);
    }
    let config = tether_tests::opencode_config(&model.base(), servers);
    let file = config_dir.join("opencode.json");
    std::fs::write(&file, config.to_string()).expect("config");
    let mut cmd = std::process::Command::new(&opencode);
    cmd.args(["run", "what time is it"])
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", run.home())
        .env("OPENCODE_CONFIG", &file)
        .envs(tether_tests::opencode_env(run.home()));
    let out = tether_tests::output_within(cmd, 120);
    assert!(
        out.status.success(),
        "opencode: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let called = model_called(&sent);
    tether_tests::keep_home(&format!("refusals-opencode-{tool}"), run.home());
    Some((run, called))
}

fn data_home(run: &Run) -> String {
    run.home().join(".local/share").display().to_string()
}

/// GIVEN `opencode run` with an `ask` rule for the tool WHEN the model
/// calls it THEN run rejects the ask itself: `approval_required`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_run_rejects_an_ask_it_cannot_put() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let ask = serde_json::json!({"permission": {"count_stamp": "ask"}});
    let Some((run, called)) = opencode("stamp", ask).await else {
        return;
    };
    let data = data_home(&run);
    let row = run.row("opencode", &[("XDG_DATA_HOME", &data)], "stamp");
    assert_refused(
        "opencode ask",
        &run,
        &called,
        &row,
        ReasonCode::ApprovalRequired,
    );
}

/// GIVEN `opencode run` with a `deny` rule for the tool WHEN the session
/// runs THEN OpenCode never offers it: no call, nothing refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_a_deny_rule_hides_the_tool() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let deny = serde_json::json!({"permission": {"count_stamp": "deny"}});
    let Some((run, called)) = opencode("stamp", deny).await else {
        return;
    };
    assert!(called.iter().all(|c| !c.contains("stamp")), "{called:?}");
    assert_eq!(run.received(), Vec::<String>::new());
}

/// GIVEN `opencode run` WHEN the model calls a tool that answers `isError`,
/// one that answers a JSON-RPC error, and one that succeeds (three runs)
/// THEN each reached the server once: a failure (OpenCode keeps the tool's
/// own words, so no finer reason), `protocol_error`, and a use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_tool_and_protocol_errors_and_an_allowed_call() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let none = || serde_json::json!({});
    let Some((run, _)) = opencode("fail", none()).await else {
        return;
    };
    let data = data_home(&run);
    let row = run.row("opencode", &[("XDG_DATA_HOME", &data)], "fail");
    assert_eq!(run.received(), ["fail"]);
    assert_eq!(
        (row.calls, row.failed_calls, row.refused_calls),
        (1, 1, 0),
        "{row:?}"
    );
    let Some((run, _)) = opencode("err", none()).await else {
        return;
    };
    let data = data_home(&run);
    let row = run.row("opencode", &[("XDG_DATA_HOME", &data)], "err");
    assert_eq!(run.received(), ["err"]);
    assert_eq!(
        (row.calls, row.failed_calls, row.refused_calls),
        (1, 1, 0),
        "{row:?}"
    );
    assert_eq!(row.failures, [ReasonCode::ProtocolError], "{row:?}");
    let Some((run, _)) = opencode("stamp", none()).await else {
        return;
    };
    let data = data_home(&run);
    assert_used(
        "opencode allow",
        &run,
        &run.row("opencode", &[("XDG_DATA_HOME", &data)], "stamp"),
    );
}

/// GIVEN the database of a real `opencode run` whose ask was rejected,
/// copied, with the refusal's message rewritten to a person's rejection
/// with planted feedback, and a rule's denial with a planted rule WHEN it
/// is read THEN each is `permission_denied`, and no planted word leaves
/// the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_refusal_words_never_leave_the_database() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let ask = serde_json::json!({"permission": {"count_stamp": "ask"}});
    let Some((run, _)) = opencode("stamp", ask).await else {
        return;
    };
    let db = run.home().join(".local/share/opencode/opencode.db");
    let data = data_home(&run);
    for words in [
        format!(
            "The user rejected permission to use this specific tool call with the following feedback: {PLANTED}"
        ),
        format!(
            "The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules [\"{PLANTED}\"]"
        ),
    ] {
        let conn = rusqlite::Connection::open(&db).expect("open");
        conn.execute(
            "UPDATE part SET data = json_set(data, '$.state.error', ?1) WHERE json_extract(data, '$.type') = 'tool'",
            rusqlite::params![words],
        )
        .expect("rewrite");
        drop(conn);
        let row = run.row("opencode", &[("XDG_DATA_HOME", &data)], "stamp");
        assert_eq!(
            row.refusal(),
            Some(&ReasonCode::PermissionDenied),
            "{row:?}"
        );
        assert_eq!(row.calls, 0, "{row:?}");
    }
}

/// GIVEN the rows real `opencode run` sessions of 1.18.33 wrote
/// (`tests/fixtures/refusals/opencode-1.18.33-CASE.sql`, trimmed to the
/// columns the reader selects, the tool's and the server's words replaced
/// by `planted`) loaded into a database WHEN it is read THEN an ask run
/// rejected is `approval_required`, a JSON-RPC error `protocol_error`, a
/// tool error a failure, an allowed call a use; and, the same ask in a
/// session no `run` made, `permission_denied`.
#[test]
fn opencode_fixtures_read_their_refusals() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/refusals");
    let read = |sql: &str, tool: &str| -> ToolRow {
        let run = Run::new().expect("tether-pinned-mcp");
        let dir = run.home().join(".local/share/opencode");
        std::fs::create_dir_all(&dir).expect("dir");
        let conn = rusqlite::Connection::open(dir.join("opencode.db")).expect("db");
        conn.execute_batch(sql).expect("fixture");
        drop(conn);
        let data = data_home(&run);
        run.row("opencode", &[("XDG_DATA_HOME", &data)], tool)
    };
    let sql = |case: &str| {
        std::fs::read_to_string(fixtures.join(format!("opencode-1.18.33-{case}.sql")))
            .expect("fixture")
    };
    let ask = read(&sql("run-ask"), "stamp");
    assert_eq!(
        ask.refusal(),
        Some(&ReasonCode::ApprovalRequired),
        "{ask:?}"
    );
    assert_eq!(ask.calls, 0);
    let not_run = sql("run-ask").replace("\"question\"", "\"other\"");
    let asked = read(&not_run, "stamp");
    assert_eq!(
        asked.refusal(),
        Some(&ReasonCode::PermissionDenied),
        "{asked:?}"
    );
    let err = read(&sql("protocol-error"), "err");
    assert_eq!((err.calls, err.failed_calls), (1, 1));
    assert_eq!(err.failures, [ReasonCode::ProtocolError]);
    let fail = read(&sql("tool-error"), "fail");
    assert_eq!(
        (fail.calls, fail.failed_calls, fail.refused_calls),
        (1, 1, 0)
    );
    let ok = read(&sql("allowed"), "stamp");
    assert_eq!((ok.calls, ok.failed_calls, ok.refused_calls), (1, 0, 0));
}
