//! Refused calls, run for real: OpenCode 1.18.33 (the pin, which is npm's
//! newest) in `opencode run` against the fake model and a server that
//! counts the `tools/call` requests it receives (`tether-pinned-mcp` with
//! `TETHER_CALLS_LOG`). An `ask` rule in `opencode run`, which rejects every
//! ask itself, is refused: the server's log shows no call, the fake model's
//! log shows the model made it, and the session's database, read as `tether
//! sessions` reads it (its words matched inside the query), gives the tool
//! row a refusal, `approval_required`, no call and never a use. A `deny`
//! rule hides the tool: no call, nothing refused. A tool error and a
//! JSON-RPC error reached the server once each; an allowed call is a use.
//! Each skips loudly where OpenCode (tests/peers, `npm ci`) is not
//! installed.

use std::path::Path;

use tether_core::model::ToolRow;
use tether_core::vocab::ReasonCode;
use tether_tests::Release;
use tether_tests::refusal_run::{
    PLANTED, RefusalHome as Run, STAMP_FAIL_ERR as TOOLS, assert_reached_once, assert_refused,
    model_called,
};

/// The server's entry in OpenCode's `mcp`.
fn entry(run: &Run) -> serde_json::Value {
    let (var, log) = run.log_env();
    let mut command = vec![run.server().display().to_string()];
    command.extend(run.server_args());
    serde_json::json!({
        "type": "local",
        "command": command,
        "environment": {var: log},
        "enabled": true
    })
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
    let run = Run::pinned(TOOLS, PLANTED)?;
    let (model, sent) = tether_tests::fake_model::start_model(&format!("count/{tool}")).await;
    let config_dir = run.home().join(".config/opencode");
    let work = run.home().join("work");
    std::fs::create_dir_all(&config_dir).expect("dir");
    std::fs::create_dir_all(&work).expect("work");
    let mut servers = serde_json::json!({"mcp": {"count": entry(&run)}});
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
    run.run_cli(&format!("opencode-{tool}"), cmd, 120);
    Some((run, model_called(&sent)))
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
    assert_reached_once("opencode fail", &run, &row, true);
    let Some((run, _)) = opencode("err", none()).await else {
        return;
    };
    let data = data_home(&run);
    let row = run.row("opencode", &[("XDG_DATA_HOME", &data)], "err");
    assert_reached_once("opencode err", &run, &row, true);
    assert_eq!(row.failures, [ReasonCode::ProtocolError], "{row:?}");
    let Some((run, _)) = opencode("stamp", none()).await else {
        return;
    };
    let data = data_home(&run);
    let row = run.row("opencode", &[("XDG_DATA_HOME", &data)], "stamp");
    assert_reached_once("opencode allow", &run, &row, false);
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
        let run = Run::pinned(TOOLS, PLANTED).expect("tether-pinned-mcp");
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
