//! OpenCode's sessions by path (issue 56 §4): what `opencode run --format
//! json` printed, and any `opencode.db`, named by path to `tether sessions
//! show PATH` and `tether sessions import PATH`.
//!
//! - GIVEN real `opencode run --format json` runs of 1.18.33 (the pin)
//!   against the fake model and a counting server (a call that succeeds,
//!   one whose tool answers `isError`, one a JSON-RPC error, one an `ask`
//!   rule that run rejects) WHEN the printed lines and the run's database
//!   are each shown by path THEN both name the same session and the same
//!   tool row: a use, a failure, a `protocol_error`, a refusal
//!   `approval_required`. (`TETHER_UPDATE_FIXTURES=1` keeps the printed
//!   lines as `tests/fixtures/records-by-path/opencode-1.18.33-*.run.jsonl`.)
//! - GIVEN those kept lines WHEN shown and imported by path THEN each gives
//!   the row it gave live.
//! - GIVEN databases built from the real dumps
//!   (`tests/fixtures/refusals/opencode-1.18.33-*.sql`) WHEN each is shown
//!   by path THEN its tool row equals the one read from OpenCode's own
//!   folder under a home.
//! - GIVEN a database with its newest rows in its write-ahead log WHEN shown
//!   by path THEN the log's rows are read too.
//! - GIVEN a SQLite database that is not OpenCode's (another program's, an
//!   empty OpenCode schema, one past the bound, OpenCode's read as another
//!   harness's) WHEN shown by path THEN it exits 2 saying it is no session.
//! - GIVEN the lines and the databases with a secret planted in every input,
//!   output, text and error's words WHEN shown and imported THEN the rows
//!   read as before and the secret reaches no output and not the store.

use std::path::Path;

use serde_json::Value;
use tether_tests::Release;
use tether_tests::by_path::{
    assert_shown_and_imported_clean, assert_store_clean, fixtures, planted_lines, sessions,
    show_json,
};

/// The counting server's tools: `stamp` answers `ok`, `fail` `isError`,
/// `err` a JSON-RPC error.
const TOOLS: &str = r#"[{"name":"stamp","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"fail","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"err","description":"t","inputSchema":{"type":"object","properties":{}}}]"#;

/// A home whose OpenCode configuration names the server `count` (so a
/// tool `count_stamp` splits into server and tool).
fn configured_home(server: &Path, tools: &Path) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("home");
    let dir = home.path().join(".config/opencode");
    std::fs::create_dir_all(&dir).expect("dir");
    let config = serde_json::json!({"mcp": {"count": {
        "type": "local", "command": [server, "--tools", tools], "enabled": true}}});
    std::fs::write(dir.join("opencode.json"), config.to_string()).expect("config");
    home
}

/// The session's tool row `count/TOOL` in a shown document: (calls,
/// failed calls, refused calls, its reason, where it stopped in words).
fn count_row(doc: &Value, tool: &str) -> (u64, u64, u64, Value, String) {
    let name = format!("count/{tool}");
    let row = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == name.as_str())
        .unwrap_or_else(|| panic!("no row {name} in {doc:#}"));
    (
        row["calls"].as_u64().unwrap_or(0),
        row["failed_calls"].as_u64().unwrap_or(0),
        row["refused_calls"].as_u64().unwrap_or(0),
        row["reason_code"].clone(),
        row["stopped"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Runs `opencode run --format json` in a private home, the fake model
/// calling `count/TOOL`: (the home, what it printed).
async fn opencode_json(tool: &str, extra: Value) -> Option<(tempfile::TempDir, String)> {
    let opencode = Release::Pinned
        .peer("node_modules/.bin/opencode")
        .or_else(|| {
            eprintln!("SKIP: OpenCode is not installed (run `npm ci` in tests/peers)");
            None
        })?;
    let server = tether_tests::workspace_bin("tether-pinned-mcp");
    let home = tempfile::tempdir().expect("home");
    let tools = home.path().join("tools.json");
    std::fs::write(&tools, TOOLS).expect("tools");
    let (model, _sent) = tether_tests::fake_model::start_model(&format!("count/{tool}")).await;
    let config_dir = home.path().join(".config/opencode");
    let work = home.path().join("work");
    std::fs::create_dir_all(&config_dir).expect("dir");
    std::fs::create_dir_all(&work).expect("work");
    let entry = serde_json::json!({"type": "local", "command": [server, "--tools", tools],
        "environment": {"TETHER_CALL_LOG": home.path().join("calls.log")}, "enabled": true});
    let mut servers = serde_json::json!({"mcp": {"count": entry}});
    if let (Some(s), Value::Object(extra)) = (servers.as_object_mut(), extra) {
        s.extend(extra);
    }
    let config = tether_tests::opencode_config(&model.base(), servers);
    let file = config_dir.join("opencode.json");
    std::fs::write(&file, config.to_string()).expect("config");
    let mut cmd = std::process::Command::new(&opencode);
    cmd.args(["run", "--format", "json", "what time is it"])
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("OPENCODE_CONFIG", &file)
        .envs(tether_tests::opencode_env(home.path()));
    let out = tether_tests::output_within(cmd, 120);
    assert!(
        out.status.success(),
        "opencode: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((home, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// GIVEN real `opencode run --format json` runs WHEN what each printed and
/// its database are shown by path THEN both name the same session and give
/// the same tool row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_run_s_json_agrees_with_its_database() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    for want in expected() {
        let (case, tool) = (want.0, want.1);
        // An `ask` rule, which `opencode run` rejects itself.
        let extra = match case {
            "run-ask" => serde_json::json!({"permission": {"count_stamp": "ask"}}),
            _ => serde_json::json!({}),
        };
        let Some((home, printed)) = opencode_json(tool, extra).await else {
            return;
        };
        let run = home.path().join("run.jsonl");
        std::fs::write(&run, &printed).expect("printed");
        if std::env::var_os("TETHER_UPDATE_FIXTURES").is_some() {
            std::fs::write(
                fixtures().join(format!("records-by-path/opencode-1.18.33-{case}.run.jsonl")),
                &printed,
            )
            .expect("fixture");
        }
        tether_tests::keep_home(&format!("by-path-opencode-{case}"), home.path());
        let from_run = show_json(home.path(), &run);
        let db = home.path().join(".local/share/opencode/opencode.db");
        let from_db = show_json(home.path(), &db);
        assert_eq!(
            from_run["session"]["session_id"], from_db["session"]["session_id"],
            "{case}"
        );
        assert_eq!(
            count_row(&from_run, tool),
            count_row(&from_db, tool),
            "{case}"
        );
    }
}

/// What each case gives: (case, tool, (calls, failed, refused, reason),
/// words its row's `stopped` holds).
type Expected = (
    &'static str,
    &'static str,
    (u64, u64, u64, Value),
    &'static str,
);

fn expected() -> Vec<Expected> {
    let reason = |r: &str| Value::from(r);
    vec![
        ("allowed", "stamp", (1, 0, 0, Value::Null), "used: 1 call"),
        ("tool-error", "fail", (1, 1, 0, Value::Null), "1 failed"),
        (
            "protocol-error",
            "err",
            (1, 1, 0, Value::Null),
            "1 failed (protocol error)",
        ),
        (
            "run-ask",
            "stamp",
            (0, 0, 1, reason("approval_required")),
            "refused the call",
        ),
    ]
}

/// `row` is what `want` says.
fn assert_row(label: &str, row: (u64, u64, u64, Value, String), want: &Expected) {
    let (_, _, numbers, words) = want;
    assert_eq!(
        (row.0, row.1, row.2, row.3.clone()),
        *numbers,
        "{label}: {row:?}"
    );
    assert!(row.4.contains(words), "{label}: {row:?}");
}

/// A home whose OpenCode configuration names `count`, with stand-in paths.
fn count_home() -> tempfile::TempDir {
    configured_home(Path::new("/nonexistent/count"), Path::new("tools.json"))
}

/// GIVEN the lines real runs printed WHEN each is shown by path THEN it is
/// OpenCode's, its session the run's, its `count` row the call's end; and
/// it imports into a store, once new and then unchanged.
#[test]
fn kept_run_lines_show_and_import_by_path() {
    let home = count_home();
    for want in expected() {
        let (case, tool) = (want.0, want.1);
        let file = fixtures().join(format!("records-by-path/opencode-1.18.33-{case}.run.jsonl"));
        let doc = show_json(home.path(), &file);
        assert_eq!(doc["session"]["agent_kind"], "opencode", "{case}");
        let first: Value = serde_json::from_str(
            std::fs::read_to_string(&file)
                .expect("fixture")
                .lines()
                .next()
                .expect("a line"),
        )
        .expect("json");
        let session = format!("opencode:{}", first["sessionID"].as_str().expect("id"));
        assert_eq!(doc["session"]["session_id"], session.as_str(), "{case}");
        assert_row(case, count_row(&doc, tool), &want);
        assert_eq!(doc["files"][0]["role"], "stream_json", "{case}");
        let store = home.path().join(format!("{case}.db"));
        let (file_arg, store_arg) = (file.display().to_string(), store.display().to_string());
        for said in ["1 new", "1 unchanged"] {
            let (code, _, stderr) =
                sessions(home.path(), &["import", &file_arg, "--db", &store_arg]);
            assert_eq!(code, 0, "{case}: {stderr}");
            assert!(stderr.contains(said), "{case}: {stderr}");
        }
    }
}

/// A database built from a real dump, at `path`.
fn database_from_dump(case: &str, path: &Path) {
    let sql =
        std::fs::read_to_string(fixtures().join(format!("refusals/opencode-1.18.33-{case}.sql")))
            .expect("dump");
    std::fs::create_dir_all(path.parent().expect("folder")).expect("dir");
    let conn = rusqlite::Connection::open(path).expect("db");
    conn.execute_batch(&sql).expect("dump loads");
}

/// GIVEN databases built from the real dumps WHEN each is shown by path,
/// from anywhere THEN its tool row is the one `tether sessions show ID`
/// reads from OpenCode's own folder under the home, and the file is left
/// as it was.
#[test]
fn a_database_by_path_reads_as_opencode_s_own() {
    for want in expected() {
        let (case, tool) = (want.0, want.1);
        let home = count_home();
        let own = home.path().join(".local/share/opencode/opencode.db");
        database_from_dump(case, &own);
        let elsewhere = home.path().join(format!("saved/{case}.db"));
        database_from_dump(case, &elsewhere);
        let before = std::fs::read(&elsewhere).expect("db");
        let by_path = show_json(home.path(), &elsewhere);
        assert_eq!(by_path["session"]["agent_kind"], "opencode", "{case}");
        assert_eq!(by_path["session"]["agent_version"], "1.18.33", "{case}");
        let id = by_path["session"]["session_id"]
            .as_str()
            .expect("id")
            .to_owned();
        let (code, stdout, stderr) = sessions(home.path(), &["show", &id, "--json"]);
        assert_eq!(code, 0, "{case}: {stderr}");
        let at_home: Value = serde_json::from_str(&stdout).expect("document");
        assert_eq!(
            count_row(&by_path, tool),
            count_row(&at_home, tool),
            "{case}"
        );
        assert_row(case, count_row(&by_path, tool), &want);
        // Named by its folder and name, never its whole path.
        assert_eq!(
            by_path["files"][0]["path"],
            format!("./saved/{case}.db").as_str(),
            "{case}"
        );
        assert_eq!(
            std::fs::read(&elsewhere).expect("db"),
            before,
            "{case}: written to"
        );
        let mut shm = elsewhere.as_os_str().to_owned();
        shm.push("-shm");
        assert!(
            !Path::new(&shm).exists(),
            "{case}: SQLite opened it in place"
        );
        let store = home.path().join("store.db");
        let (code, _, stderr) = sessions(
            home.path(),
            &[
                "import",
                &elsewhere.display().to_string(),
                "--db",
                &store.display().to_string(),
            ],
        );
        assert_eq!(code, 0, "{case}: {stderr}");
        assert!(stderr.contains("1 new"), "{case}: {stderr}");
    }
}

/// GIVEN a database OpenCode wrote more after a checkpoint (its newest rows
/// in its write-ahead log beside it) WHEN shown by path THEN the log's rows
/// are read too.
#[test]
fn a_database_s_write_ahead_log_is_read_with_it() {
    let home = count_home();
    let db = home.path().join("saved/opencode.db");
    let sql = std::fs::read_to_string(fixtures().join("refusals/opencode-1.18.33-allowed.sql"))
        .expect("dump");
    std::fs::create_dir_all(db.parent().expect("folder")).expect("dir");
    let conn = rusqlite::Connection::open(&db).expect("db");
    conn.pragma_update(None, "journal_mode", "WAL")
        .expect("wal");
    conn.pragma_update(None, "wal_autocheckpoint", 0)
        .expect("no checkpoint");
    conn.execute_batch(&sql).expect("dump loads");
    // Kept open: its rows stay in the log, as while OpenCode runs.
    let doc = show_json(home.path(), &db);
    assert_eq!(count_row(&doc, "stamp").0, 1, "{doc:#}");
    drop(conn);
}

/// GIVEN SQLite databases that are no harness's (another program's, an
/// OpenCode-shaped one with no rows) and a database past the bound WHEN
/// shown by path THEN each exits 2 saying it is not a session; `--harness
/// opencode` says the same.
#[test]
fn a_database_that_is_no_session_exits_2() {
    let home = tempfile::tempdir().expect("home");
    let other = home.path().join("other.db");
    let conn = rusqlite::Connection::open(&other).expect("db");
    conn.execute_batch(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); \
         INSERT INTO notes (body) VALUES ('planted-note-secret-881');",
    )
    .expect("other");
    drop(conn);
    let empty = home.path().join("empty.db");
    let conn = rusqlite::Connection::open(&empty).expect("db");
    conn.execute_batch(
        "CREATE TABLE session (id TEXT PRIMARY KEY, time_created INTEGER, directory TEXT, version TEXT, permission TEXT); \
         CREATE TABLE part (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);",
    )
    .expect("empty");
    drop(conn);
    for path in [&other, &empty] {
        let arg = path.display().to_string();
        for args in [
            vec!["show", &arg],
            vec!["show", &arg, "--harness", "opencode"],
        ] {
            let (code, stdout, stderr) = sessions(home.path(), &args);
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert!(stderr.contains("not a session"), "{args:?}: {stderr}");
            assert!(!(stdout + &stderr).contains("planted"), "{args:?}");
        }
    }
    // Past the bound: a SQLite header, then a sparse tail.
    let huge = home.path().join("huge.db");
    std::fs::copy(&other, &huge).expect("copy");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&huge)
        .expect("huge")
        .set_len(300 << 20)
        .expect("sparse");
    let (code, _, stderr) = sessions(home.path(), &["show", &huge.display().to_string()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("larger than"), "{stderr}");
    // A small database whose log beside it is past the bound.
    let logged = home.path().join("logged.db");
    std::fs::copy(&other, &logged).expect("copy");
    std::fs::File::create(home.path().join("logged.db-wal"))
        .expect("wal")
        .set_len(300 << 20)
        .expect("sparse");
    let (code, _, stderr) = sessions(home.path(), &["show", &logged.display().to_string()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("larger than"), "{stderr}");
}

/// A secret planted in the files' payloads and words.
const SECRET: &str = "planted-opencode-secret-6621";

/// The words `opencode run` stores for an `ask` it rejected itself.
const RUN_REJECTED: &str = "The user rejected permission to use this specific tool call.";

/// Keys whose values are names, ids and states, the reader's to read.
const KEPT: &[&str] = &[
    "type",
    "sessionID",
    "tool",
    "callID",
    "status",
    "id",
    "messageID",
];

/// Plants [`SECRET`] in every other string: in place of it, or after an
/// error's words (which are matched by their start).
fn plant(value: &mut Value, key: Option<&str>) {
    match value {
        Value::Object(map) => map.iter_mut().for_each(|(k, v)| plant(v, Some(k.as_str()))),
        Value::Array(items) => items.iter_mut().for_each(|v| plant(v, key)),
        Value::String(s) => match key.unwrap_or_default() {
            k if KEPT.contains(&k) => {}
            // OpenCode's own words for `run`'s rejection, whole: with more
            // words they are a person's feedback (`permission_denied`).
            "error" if s.as_str() == RUN_REJECTED => {}
            "error" => s.push_str(&format!(" {SECRET}")),
            _ => *s = SECRET.to_owned(),
        },
        Value::Number(_) if key == Some("input") => *value = Value::from(SECRET),
        _ => {}
    }
}

/// Every output `tether sessions show` gives of `path`, and an import's
/// store: none holds [`SECRET`]; the row is `want`'s.
fn assert_nothing_leaks(home: &Path, path: &Path, want: &Expected) {
    let (case, tool) = (want.0, want.1);
    let store = home.join(format!("{case}-store.db"));
    assert_shown_and_imported_clean(case, home, path, &store, SECRET);
    assert_row(case, count_row(&show_json(home, path), tool), want);
    assert_store_clean(case, &store, SECRET);
}

/// GIVEN every kept run's lines, and every dump's database, with a secret
/// planted in every input, output, text, error's words and other value but
/// the names and states WHEN shown (text, JSON, tools) and imported by path
/// THEN the row reads as the real file's, and the secret reaches no output
/// and not the store.
#[test]
fn no_input_output_text_or_words_reach_any_output() {
    for want in expected() {
        let case = want.0;
        let home = count_home();
        let real = fixtures().join(format!("records-by-path/opencode-1.18.33-{case}.run.jsonl"));
        let planted = planted_lines(&real, |value| plant(value, None));
        assert!(planted.iter().any(|l| l.contains(SECRET)), "{case}");
        let file = home.path().join(format!("{case}.run.jsonl"));
        std::fs::write(&file, planted.join("\n") + "\n").expect("w");
        assert_nothing_leaks(home.path(), &file, &want);

        let db = home.path().join(format!("saved/{case}.db"));
        database_from_dump(case, &db);
        let conn = rusqlite::Connection::open(&db).expect("db");
        conn.execute_batch(&format!(
            "UPDATE part SET data = json_set(data, '$.state.input', json_object('q', '{SECRET}'), \
               '$.state.output', '{SECRET}', '$.state.error', json_extract(data, '$.state.error') || ' {SECRET}') \
               WHERE json_extract(data, '$.state.status') = 'error' AND json_extract(data, '$.state.error') != '{RUN_REJECTED}'; \
             UPDATE part SET data = json_set(data, '$.state.input', json_object('q', '{SECRET}'), \
               '$.state.output', '{SECRET}') WHERE json_extract(data, '$.state.error') IS NULL \
               OR json_extract(data, '$.state.error') = '{RUN_REJECTED}'; \
             UPDATE session SET directory = '/home/{SECRET}/work';"
        ))
        .expect("plant");
        drop(conn);
        assert!(
            String::from_utf8_lossy(&std::fs::read(&db).expect("db")).contains(SECRET),
            "{case}: planted"
        );
        assert_nothing_leaks(home.path(), &db, &want);
    }
}

/// GIVEN OpenCode's database WHEN shown by path as another harness's THEN
/// it is no session of that harness's: exit 2.
#[test]
fn a_database_read_as_another_harness_s_exits_2() {
    let home = count_home();
    let db = home.path().join("saved/opencode.db");
    database_from_dump("allowed", &db);
    let arg = db.display().to_string();
    let (code, _, stderr) = sessions(home.path(), &["show", &arg, "--harness", "claude"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a session"), "{stderr}");
    let (code, _, stderr) = sessions(home.path(), &["show", &arg, "--harness", "opencode"]);
    assert_eq!(code, 0, "{stderr}");
}
