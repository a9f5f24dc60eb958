//! What each harness wrote to disk about a session, read as `tether
//! sessions` reads it: the recorded fixtures (`tests/fixtures/records/KIND`,
//! recorded from the pinned CLIs by `harness_sessions.rs` with
//! `TETHER_KEEP_HOMES` and trimmed to metadata by
//! `tests/scripts/trim_records.py`), hostile files, a file being written,
//! planted secrets, and the CLI.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use tether_core::history::{AttachmentAttempt, ServerAttachment};
use tether_core::records::{SessionDocument, SessionsDocument};
use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::store::Store as _;
use tether_core::vocab::{DisplayStatus, ReasonCode, ServerSource, StageState};
use tether_records::{Filter, Home, Records};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records")
}

/// The servers each recorded session was configured with.
fn configured() -> Vec<ServerSpec> {
    let stdio = |command: &str| Endpoint::Stdio {
        command: command.into(),
        args: vec![],
        env: vec![],
        cwd: None,
    };
    vec![
        ServerSpec::new("time", ServerSource::Profile, stdio("mcp-server-time")),
        ServerSpec::new("broken", ServerSource::Profile, stdio("/nonexistent/bin")),
        ServerSpec::new(
            "authy",
            ServerSource::Profile,
            Endpoint::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: vec![],
            },
        ),
    ]
}

/// The variables that place a harness's files under `home`.
fn vars(home: &Path) -> HashMap<String, String> {
    HashMap::from([
        (
            "CODEX_HOME".into(),
            home.join(".codex").display().to_string(),
        ),
        (
            "XDG_DATA_HOME".into(),
            home.join(".local/share").display().to_string(),
        ),
        (
            "XDG_CACHE_HOME".into(),
            home.join(".cache").display().to_string(),
        ),
    ])
}

fn read(kind: &str, home: &Path) -> Records {
    let registry = Registry::with_static().expect("registry");
    let mut records = Records::new(
        &registry,
        &Home::new(home, vars(home)),
        HashMap::from([(kind.to_owned(), configured())]),
        Filter {
            harnesses: vec![kind.to_owned()],
            ..Filter::default()
        },
    );
    records.read(true);
    records
}

fn only_session(kind: &str, records: &Records) -> AttachmentAttempt {
    assert_eq!(records.sessions().len(), 1, "{kind}: {:?}", records.files());
    let facts = records.sessions().values().next().expect("one");
    let history = records.history(facts, None).expect("history");
    history.current().expect("attempt").clone()
}

/// The newest top-level `timestamp` of any JSON line under `dir`.
fn newest_stamp(dir: &Path) -> Option<tether_core::model::Timestamp> {
    files_under(dir)
        .into_iter()
        .filter(|(name, _)| name.ends_with(".jsonl"))
        .flat_map(|(_, path)| {
            std::fs::read_to_string(path)
                .expect("fixture")
                .lines()
                .filter_map(|line| {
                    let v: serde_json::Value = serde_json::from_str(line).ok()?;
                    tether_core::model::Timestamp::parse_rfc3339(v["timestamp"].as_str()?)
                })
                .collect::<Vec<_>>()
        })
        .max()
}

fn row<'a>(attempt: &'a AttachmentAttempt, name: &str) -> &'a ServerAttachment {
    attempt
        .server(name)
        .unwrap_or_else(|| panic!("no row {name}: {attempt:?}"))
}

fn calls(attempt: &AttachmentAttempt, server: &str, tool: &str) -> (u32, u32) {
    row(attempt, server)
        .tools
        .iter()
        .find(|t| t.name == tool)
        .map(|t| (t.calls, t.failed_calls))
        .unwrap_or((0, 0))
}

fn digest(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let meta = std::fs::metadata(&path).expect("meta");
                out.push((
                    path.clone(),
                    std::fs::read(&path).expect("read"),
                    meta.modified().expect("mtime"),
                ));
            }
        }
    }
    out.sort();
    out
}

/// GIVEN each harness's recorded session WHEN its records are read THEN
/// the session has the live session's id, project and version, and each
/// row says what that harness's records prove: time's tool used once,
/// broken and authy failed with their precise reasons where the harness
/// writes them down, never more. No file is changed by being read.
#[test]
fn each_harness_fixture_reads_into_its_matrix() {
    let before = digest(&fixtures());
    struct Want {
        kind: &'static str,
        session: &'static str,
        project: &'static str,
        version: Option<&'static str>,
        used: bool,
        broken: Option<ReasonCode>,
        authy: Option<ReasonCode>,
    }
    let wants = [
        Want {
            kind: "claude",
            session: "claude:2d8efbcf-e501-440d-89ec-66cb10f9d678",
            project: ".tmpf23dO3",
            version: Some("2.1.197"),
            used: true,
            broken: Some(ReasonCode::CommandNotFound),
            // Claude's MCP log: "Authentication required" (a login wanted).
            authy: Some(ReasonCode::OauthRequired),
        },
        Want {
            kind: "codex",
            session: "codex:01a23362-295f-7aa3-9d3e-760a6303e6f9",
            project: ".tmpByshZN",
            version: Some("0.171.0"),
            used: true,
            broken: None,
            authy: None,
        },
        Want {
            kind: "gemini",
            session: "gemini:eb274e49-51db-47dc-869c-14dfc1d0198a",
            project: "tmpghna9p",
            version: None,
            used: true,
            broken: None,
            authy: None,
        },
        Want {
            kind: "qwen",
            session: "qwen:74391d8c-0caf-49a2-8af0-7e2863992973",
            project: ".tmp7BE47Z",
            version: Some("0.15.10"),
            used: true,
            broken: Some(ReasonCode::CommandNotFound),
            authy: Some(ReasonCode::AuthRequired),
        },
        Want {
            kind: "copilot",
            session: "copilot:f5255165-4914-4249-b144-ce1f9103d34d",
            project: "work",
            version: Some("1.0.102"),
            used: true,
            broken: Some(ReasonCode::CommandNotFound),
            // Copilot's process log: "Browser-based OAuth required", and
            // the 401 challenge names its oauth-protected-resource (a login
            // wanted; e64aa16 reads the challenge).
            authy: Some(ReasonCode::OauthRequired),
        },
        Want {
            kind: "opencode",
            session: "opencode:ses_dcc9dba49ffe4Xua2LisksiYZu",
            project: "work",
            version: Some("1.18.33"),
            used: true,
            broken: Some(ReasonCode::AgentReportedFailed),
            authy: Some(ReasonCode::AuthRequired),
        },
    ];
    for want in wants {
        let kind = want.kind;
        let records = read(kind, &fixtures().join(kind));
        for file in records.files() {
            assert_eq!(file.error, None, "{kind}: {file:?}");
            assert_eq!((file.unknown, file.refused), (0, 0), "{kind}: {file:?}");
            assert!(
                file.path.starts_with("~/") || file.path.starts_with('$'),
                "{file:?}"
            );
        }
        let attempt = only_session(kind, &records);
        assert_eq!(attempt.session_id, want.session);
        // The last record time is the newest record's, whatever it says:
        // read off the fixture's JSON lines independently of any reader.
        let facts = records.sessions().values().next().expect("one");
        // (Copilot's and Qwen's plain-text logs can be newer still.)
        if let Some(newest) = newest_stamp(&fixtures().join(kind)) {
            assert!(facts.last_at >= newest, "{kind}: the last record's time");
            if kind == "codex" {
                assert_eq!(facts.last_at, newest, "{kind}: the last record's time");
            }
        }
        assert_eq!(attempt.project.as_deref(), Some(want.project), "{kind}");
        assert_eq!(attempt.agent_version.as_deref(), want.version, "{kind}");
        assert_eq!(
            calls(&attempt, "time", "get_current_time"),
            if want.used { (1, 0) } else { (0, 0) },
            "{kind}: {attempt:?}"
        );
        if kind == "qwen" {
            // Its debug log's `ToolRegistry created: [...] (15 tools)` lists
            // convert_time, which the session never called.
            let listed = row(&attempt, "time")
                .tools
                .iter()
                .find(|t| t.name == "convert_time")
                .unwrap_or_else(|| panic!("qwen: convert_time not listed: {attempt:?}"));
            assert!(listed.listed.is_yes() && listed.calls == 0, "{listed:?}");
        }
        if want.used {
            let time = row(&attempt, "time");
            assert_eq!(time.stages.model_visible.state, StageState::Yes, "{kind}");
            assert_eq!(time.stages.callable.state, StageState::Yes, "{kind}");
        }
        for (name, reason) in [("broken", &want.broken), ("authy", &want.authy)] {
            let r = row(&attempt, name);
            match reason {
                Some(reason) => {
                    assert_eq!(r.status, DisplayStatus::Failed, "{kind}/{name}");
                    assert_eq!(r.reason_code.as_ref(), Some(reason), "{kind}/{name}");
                }
                None => {
                    // Nothing on disk names it: configured today, nothing more.
                    assert_eq!(r.status, DisplayStatus::Unknown, "{kind}/{name}: {r:?}");
                    assert_ne!(r.stages.initialized.state, StageState::Yes);
                }
            }
        }
        // Every stage shown came from the records or today's configuration.
        for r in &attempt.servers {
            for stage in tether_core::vocab::Stage::ALL {
                let o = r.stages.get(stage);
                if o.state == StageState::Yes {
                    let p = o.provenance.expect("shown by something").word().to_string();
                    assert!(
                        p == "harness_record" || p == "current_config",
                        "{kind}/{}: {stage:?} by {p}",
                        r.name
                    );
                }
            }
        }
    }
    assert!(before == digest(&fixtures()), "reading changed a file");
}

/// GIVEN a home where, beside a real session, there are a 2 GiB transcript,
/// a 100 MiB line, lines that are not UTF-8, a link out of the root and a
/// directory where a file should be WHEN it is read THEN each bad file gets
/// a sentence of its own and the real session still imports.
#[test]
fn hostile_files_are_refused_per_file_and_the_rest_import() {
    let home = tempfile::tempdir().expect("home");
    copy_dir(&fixtures().join("claude"), home.path());
    let projects = home.path().join(".claude/projects/-tmp-hostile");
    std::fs::create_dir_all(&projects).expect("dir");
    // Sparse: 2 GiB that take no room.
    let huge = std::fs::File::create(projects.join("huge.jsonl")).expect("huge");
    huge.set_len(2 << 30).expect("sparse");
    let mut long = std::fs::File::create(projects.join("long-line.jsonl")).expect("long");
    let line = serde_json::json!({"type": "user", "sessionId": "long-1", "timestamp": "2026-12-01T20:00:00Z"});
    writeln!(long, "{line}").expect("w");
    long.write_all(&vec![b'x'; 100 << 20]).expect("w");
    writeln!(long).expect("w");
    writeln!(long, "{line}").expect("w");
    drop(long);
    std::fs::write(
        projects.join("not-utf8.jsonl"),
        b"{\"type\":\"user\",\"sessionId\":\"bad-1\"}\n\xff\xfe\xfd\n",
    )
    .expect("w");
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("secret.jsonl"), line.to_string()).expect("w");
    std::os::unix::fs::symlink(
        outside.path().join("secret.jsonl"),
        projects.join("link.jsonl"),
    )
    .expect("link");
    std::fs::create_dir_all(projects.join("dir.jsonl")).expect("a directory");

    let records = read("claude", home.path());
    let files: HashMap<String, _> = records
        .files()
        .into_iter()
        .map(|f| (f.path.rsplit('/').next().unwrap_or_default().to_owned(), f))
        .collect();
    let error = |name: &str| {
        files
            .get(name)
            .and_then(|f| f.error.clone())
            .unwrap_or_else(|| panic!("{name}: no error in {files:?}"))
    };
    assert!(
        error("huge.jsonl").contains("larger than 1024 MiB"),
        "{}",
        error("huge.jsonl")
    );
    assert!(error("long-line.jsonl").contains("longer than 16 MiB"));
    // Both lines around it are taken (each only names its session, which
    // is no evidence: counted ignored, not read).
    let around = &files["long-line.jsonl"];
    assert_eq!(
        (around.read, around.ignored, around.refused),
        (0, 2, 1),
        "the lines around it are read"
    );
    assert!(error("not-utf8.jsonl").contains("not UTF-8"));
    assert!(
        error("link.jsonl").contains("outside"),
        "{}",
        error("link.jsonl")
    );
    assert!(
        !files.contains_key("dir.jsonl"),
        "a directory is not a file"
    );
    // The real session, whole.
    let facts = records
        .sessions()
        .get("claude:2d8efbcf-e501-440d-89ec-66cb10f9d678")
        .expect("the real session");
    let history = records.history(facts, None).expect("history");
    let attempt = history.current().expect("attempt");
    assert_eq!(calls(attempt, "time", "get_current_time"), (1, 0));
    assert!(!records.sessions().keys().any(|k| k.contains("secret")));
    let dir = tempfile::tempdir().expect("db");
    let store = tether_store::SqliteStore::open(&dir.path().join("t.db")).expect("store");
    let done = records.import(&store, None).expect("import");
    assert_eq!(done.refused, 0);
    assert!(done.new >= 1);

    // A harness database that is no database, and one of another shape:
    // a sentence each, the log beside them still read.
    for (bytes, says) in [
        (
            b"not a database at all, just text".to_vec(),
            "cannot be read",
        ),
        (empty_database(), "not in the shape"),
    ] {
        let home = tempfile::tempdir().expect("home");
        copy_dir(&fixtures().join("opencode"), home.path());
        let db = home.path().join(".local/share/opencode/opencode.db");
        std::fs::write(&db, bytes).expect("w");
        let before = std::fs::read(&db).expect("r");
        let records = read("opencode", home.path());
        let reports: Vec<_> = records
            .files()
            .into_iter()
            .filter(|f| f.path.ends_with("opencode.db"))
            .collect();
        assert!(!reports.is_empty());
        for report in &reports {
            let error = report.error.clone().unwrap_or_default();
            assert!(error.contains(says), "{report:?}");
        }
        assert_eq!(
            std::fs::read(&db).expect("r"),
            before,
            "the database is never written"
        );
        assert_eq!(records.sessions().len(), 1, "the log still reads");
    }
}

/// A SQLite database with no tables.
fn empty_database() -> Vec<u8> {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("e.db");
    let db = rusqlite::Connection::open(&path).expect("db");
    db.execute_batch("CREATE TABLE other (x TEXT);")
        .expect("table");
    drop(db);
    std::fs::read(&path).expect("read")
}

/// GIVEN a transcript being written (its last line without its newline)
/// WHEN it is followed THEN the partial record waits, the session appears
/// once and grows as calls are written, and an import after each pass
/// keeps one session in the store.
#[test]
fn a_session_written_while_followed_appears_once_and_grows() {
    let home = tempfile::tempdir().expect("home");
    let dir = home.path().join(".claude/projects/-work-app");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("s1.jsonl");
    let at = |s: u32| format!("2026-12-01T20:00:{s:02}.000Z");
    let call = |i: u32, ok: bool| {
        let use_ = serde_json::json!({"type": "assistant", "sessionId": "s1", "cwd": "/work/app",
            "timestamp": at(i), "message": {"content": [{"type": "tool_use", "id": format!("toolu_{i}"),
            "name": "mcp__time__get_current_time", "input": {}}]}});
        let result = serde_json::json!({"type": "user", "sessionId": "s1", "timestamp": at(i),
            "message": {"content": [{"type": "tool_result", "tool_use_id": format!("toolu_{i}"),
            "is_error": !ok, "content": "x"}]}});
        format!("{use_}\n{result}\n")
    };
    let registry = Registry::with_static().expect("registry");
    let mut records = Records::new(
        &registry,
        &Home::new(home.path(), HashMap::new()),
        HashMap::from([("claude".to_owned(), configured())]),
        Filter::default(),
    );
    let db = tempfile::tempdir().expect("db");
    let store = tether_store::SqliteStore::open(&db.path().join("t.db")).expect("store");
    let mut file = std::fs::File::create(&path).expect("create");
    let first = call(1, true);
    // All but the last byte: its newline is still to come.
    file.write_all(&first.as_bytes()[..first.len() - 1])
        .expect("w");
    file.flush().expect("flush");
    let pass = records.read(false);
    assert_eq!(pass.changed.len(), 1);
    records.import(&store, None).expect("import");
    let stored = |store: &tether_store::SqliteStore| {
        let all = store.load_all().expect("load").histories;
        assert_eq!(all.len(), 1, "one session");
        let attempt = all[0].current().expect("attempt").clone();
        calls(&attempt, "time", "get_current_time")
    };
    // The call is seen; its result (the partial line) is not yet.
    assert_eq!(stored(&store), (1, 0));
    file.write_all(b"\n").expect("w");
    file.write_all(call(2, false).as_bytes()).expect("w");
    file.flush().expect("flush");
    // A later modification time, so the change is seen whatever the clock's grain.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    file.set_modified(later).expect("mtime");
    let pass = records.read(false);
    assert_eq!(pass.changed, ["claude:s1"]);
    let done = records.import(&store, Some(&pass.changed)).expect("import");
    assert_eq!(done.updated, 1);
    assert_eq!(stored(&store), (2, 1));
    // Nothing new: nothing read, nothing written.
    assert!(records.read(false).changed.is_empty());
    let again = records.import(&store, None).expect("import");
    assert_eq!(again.unchanged, 1);
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

const PLANTS: [&str; 3] = [
    "sk-PLANTEDSECRET0123456789abcdef",
    "PROMPT: tell me the launch codes",
    "/home/victim/.ssh/id_ed25519",
];

/// Keys that say what a record is and whose: always real.
const STRUCTURAL: &[&str] = &["type", "sessionId", "session_id", "timestamp", "startTime"];
/// Keys the readers take names, ids and outcomes from: real in pass 1 (so
/// the readers still read, which is checked), planted in pass 0.
const NAMES: &[&str] = &[
    "name",
    "namespace",
    "server",
    "tool",
    "status",
    "id",
    "call_id",
    "tool_use_id",
    "callId",
    "toolCallId",
    "displayName",
    "mcpServerName",
    "mcpToolName",
    "cwd",
    "version",
    "cli_version",
    "copilotVersion",
    "addedNames",
    "needsAuthMcpServers",
    "pendingMcpServers",
    "callID",
];

fn plant_json(value: &mut serde_json::Value, key: Option<&str>, plant: &str, pass: u8) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                plant_json(v, Some(k), plant, pass);
            }
        }
        Value::Array(items) => {
            for v in items {
                plant_json(v, key, plant, pass);
            }
        }
        Value::String(s) => {
            let key = key.unwrap_or_default();
            if STRUCTURAL.contains(&key) {
                return;
            }
            if pass == 1 && NAMES.contains(&key) {
                return;
            }
            if key == "cwd" && plant.starts_with('/') {
                // A working directory's last component is the session's
                // project, by design: a path planted there shows its last
                // component (never the path). Secret- and prompt-shaped
                // text there is checked.
                return;
            }
            if pass == 1 && matches!(key, "debug" | "error" | "message" | "content" | "command") {
                // Claude's server logs, a harness's warnings and errors, a
                // hook's command line: the words kept (a reader reads a
                // server's name or a basename in them), a secret beside
                // them.
                s.push_str(&format!(" {plant}"));
                return;
            }
            *s = plant.to_owned();
        }
        _ => {}
    }
}

/// Every string of every record of every fixture (and every text log
/// line), replaced with (pass 0) or added to (pass 1) planted secret and
/// prompt text: none of it reaches the store (its file and its WAL), the
/// documents `tether sessions` prints, or the file reports.
#[test]
fn planted_secrets_and_prompts_never_reach_the_store_or_the_output() {
    let releases = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records-releases");
    let mut homes: Vec<(&str, PathBuf)> =
        ["claude", "codex", "gemini", "qwen", "copilot", "opencode"]
            .into_iter()
            .map(|kind| (kind, fixtures().join(kind)))
            .collect();
    // Older releases' and other setups' shapes: warnings, errors, display
    // names and hook summaries whose words hold the plants.
    for (kind, dir) in [
        ("codex", "codex-0.118.0-tui"),
        ("copilot", "copilot-1.0.10-interactive"),
        ("gemini", "gemini-0.31-interactive"),
        ("claude", "claude-2.1.259-connectors"),
        ("qwen", "qwen-0.5.2-headless"),
    ] {
        homes.push((kind, releases.join(dir)));
    }
    for pass in 0..2u8 {
        for (kind, fixture) in &homes {
            let kind = *kind;
            let home = tempfile::tempdir().expect("home");
            copy_dir(fixture, home.path());
            let mut n = 0usize;
            plant_files(home.path(), &mut |line: &str, json: bool| {
                n += 1;
                let plant = PLANTS[n % PLANTS.len()];
                if json {
                    let mut value: serde_json::Value =
                        serde_json::from_str(line).expect("fixture lines are JSON");
                    plant_json(&mut value, None, plant, pass);
                    value.to_string()
                } else if pass == 0 {
                    // Keep the time (a record), plant the rest.
                    let stamp = line.split(' ').next().unwrap_or_default();
                    format!("{stamp} {plant} message=\"{plant}\" key={plant}")
                } else {
                    format!("{line} extra=\"{plant}\" {plant}")
                }
            });
            let records = read(kind, home.path());
            if pass == 1 {
                assert!(
                    records.files().iter().any(|f| f.read > 0),
                    "{kind}: with names real, the records still read"
                );
            }
            let dir = tempfile::tempdir().expect("db");
            let db = dir.path().join("t.db");
            let store = std::sync::Arc::new(tether_store::SqliteStore::open(&db).expect("store"));
            records.import(store.as_ref(), None).expect("import");
            // The ledger of how far each file was read keeps each file's
            // facts in the same store: read again keeping it.
            let mut kept = Records::new(
                &Registry::with_static().expect("registry"),
                &Home::new(home.path(), vars(home.path())),
                HashMap::from([(kind.to_owned(), configured())]),
                Filter {
                    harnesses: vec![kind.to_owned()],
                    ..Filter::default()
                },
            );
            kept.keep_in(store.clone());
            kept.read(true);
            assert!(!store.record_files().expect("ledger").is_empty(), "{kind}");
            let mut texts = vec![serde_json::to_string(&records.files()).expect("json")];
            for facts in records.sessions().values() {
                let history = records.history(facts, None).expect("history");
                let document = SessionDocument {
                    schema_version: 1,
                    session: records.summary(facts, &history),
                    rows: history
                        .current()
                        .map(tether_words::display::matrix)
                        .unwrap_or_default(),
                    files: records.files(),
                    telemetry_unparsed: Vec::new(),
                    history,
                };
                texts.push(serde_json::to_string(&document).expect("json"));
            }
            for file in std::fs::read_dir(dir.path()).expect("dir").flatten() {
                texts.push(
                    String::from_utf8_lossy(&std::fs::read(file.path()).expect("read"))
                        .into_owned(),
                );
            }
            for text in &texts {
                for piece in ["PLANTEDSECRET", "launch codes", "id_ed25519"] {
                    assert!(
                        !text.contains(piece),
                        "{kind} pass {pass}: {piece:?} reached {}",
                        &text[..text.len().min(2000)]
                    );
                }
            }
        }
    }
}

/// Plants in a database's rows: each session's directory and version, and
/// each part's data (as JSON, like a line), through `f`.
fn plant_database(path: &Path, f: &mut dyn FnMut(&str, bool) -> String) {
    let db = rusqlite::Connection::open(path).expect("fixture database");
    let sessions: Vec<(String, String, String)> = db
        .prepare("SELECT id, directory, version FROM session")
        .expect("sessions")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    for (id, directory, version) in sessions {
        let planted: serde_json::Value = serde_json::from_str(&f(
            &serde_json::json!({"cwd": directory, "version": version}).to_string(),
            true,
        ))
        .expect("json");
        db.execute(
            "UPDATE session SET directory = ?1, version = ?2 WHERE id = ?3",
            (
                planted["cwd"].as_str().unwrap_or_default(),
                planted["version"].as_str().unwrap_or_default(),
                &id,
            ),
        )
        .expect("update");
    }
    let parts: Vec<(i64, String)> = db
        .prepare("SELECT id, data FROM part")
        .expect("parts")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    for (id, data) in parts {
        let mut value: serde_json::Value = serde_json::from_str(&data).expect("json");
        // A payload beside the names, as OpenCode keeps them.
        value["state"]["input"] = serde_json::json!({"command": "x"});
        value["state"]["output"] = serde_json::json!("x");
        let planted = f(&value.to_string(), true);
        db.execute("UPDATE part SET data = ?1 WHERE id = ?2", (planted, id))
            .expect("update");
    }
}

/// Rewrites each record of each file under `dir` with `f(line, is_json)`.
fn plant_files(dir: &Path, f: &mut dyn FnMut(&str, bool) -> String) {
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            plant_files(&path, f);
            continue;
        }
        if path.extension().is_some_and(|e| e == "db") {
            plant_database(&path, f);
            continue;
        }
        let json = path
            .extension()
            .is_some_and(|e| e == "jsonl" || e == "json");
        let text = std::fs::read_to_string(&path).expect("read");
        let out: String = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| f(l, json) + "\n")
            .collect();
        std::fs::write(&path, out).expect("write");
    }
}

fn tether() -> std::process::Command {
    let mut cmd = std::process::Command::new(tether_tests::workspace_bin("tether"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd
}

/// GIVEN Claude's recorded session as a home WHEN `tether sessions` lists,
/// shows and imports it THEN each prints its document, an import twice
/// changes nothing, `tether history` reads the imported session, and a
/// bad filter is a usage error (exit 2).
#[test]
fn tether_sessions_lists_shows_and_imports() {
    let home = fixtures().join("claude");
    let run = |args: &[&str]| {
        let out = tether()
            .env("HOME", &home)
            .args(args)
            .output()
            .expect("tether runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["sessions", "list", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let list: SessionsDocument = serde_json::from_str(&out).expect("a SessionsDocument");
    std::fs::write(tether_tests::samples_dir().join("sessions.json"), &out).expect("sample");
    assert_eq!(list.sessions.len(), 1);
    let session = &list.sessions[0];
    assert_eq!(
        session.session_id,
        "claude:2d8efbcf-e501-440d-89ec-66cb10f9d678"
    );
    assert_eq!(session.counts.get("failed"), Some(&2));

    let (code, out, err) = run(&["sessions", "show", "2d8e", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let show: SessionDocument = serde_json::from_str(&out).expect("a SessionDocument");
    std::fs::write(tether_tests::samples_dir().join("session.json"), &out).expect("sample");
    let stopped: HashMap<&str, &str> = show
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.stopped.as_str()))
        .collect();
    assert_eq!(stopped["time"], "used: 1 call");
    assert_eq!(stopped["time/get_current_time"], "used: 1 call");
    // authy wants an OAuth login (its 401 names resource metadata).
    assert_eq!(stopped["authy"], "needs an OAuth login");
    assert_eq!(stopped["broken"], "failed to start: command not found");
    let (code, table, _) = run(&["sessions", "show", "claude:2d8efbcf"]);
    assert_eq!(code, Some(0));
    assert!(
        table.contains("needs an OAuth login") && table.contains("WHERE IT STOPPED"),
        "{table}"
    );

    let db = tempfile::tempdir().expect("db");
    let path = db.path().join("t.db").display().to_string();
    let (code, _, err) = run(&["sessions", "import", "--db", &path]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("1 new"), "{err}");
    let (code, _, err) = run(&["sessions", "import", "--db", &path]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("0 new, 0 updated, 1 unchanged"), "{err}");
    let (code, out, err) = run(&["history", "--db", &path, "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("claude:2d8efbcf-e501-440d-89ec-66cb10f9d678"),
        "{out}"
    );

    let (code, _, err) = run(&["sessions", "list", "--since", "yesterday"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, _) = run(&["sessions", "list", "--harness", "vim"]);
    assert_eq!(code, Some(2));
    let (code, _, _) = run(&["sessions", "show", "nope"]);
    assert_eq!(code, Some(1));
    // --since filters on the records' times.
    let (code, out, _) = run(&[
        "sessions",
        "list",
        "--json",
        "--since",
        "2026-12-01T21:00:00Z",
    ]);
    assert_eq!(code, Some(0));
    let none: SessionsDocument = serde_json::from_str(&out).expect("doc");
    assert!(none.sessions.is_empty(), "{none:?}");
}

/// Every first-party reader passes the conformance kit's record check on
/// every file of its harness's recorded session, and reads something there.
#[test]
fn every_reader_conforms_on_its_recorded_session() {
    use tether_core::plan::DriveMode;
    let registry = Registry::with_static().expect("registry");
    let configured = vec!["time".to_owned(), "broken".to_owned(), "authy".to_owned()];
    for kind in ["claude", "codex", "gemini", "qwen", "copilot", "opencode"] {
        let observer = registry
            .observer_for(kind, DriveMode::Passthrough)
            .expect("plugin");
        let reader = observer.roles().records.expect("a record reader");
        let mut read = 0;
        for source in reader.record_sources() {
            if source.format == tether_core::records::RecordFormat::Sqlite {
                // Rows, not lines: read through the host (the fixture test).
                continue;
            }
            let root = fixtures().join(kind).join(&source.root_default);
            for (rel, path) in files_under(&root) {
                let segments: Vec<String> = rel.split('/').map(str::to_owned).collect();
                let refs: Vec<&str> = segments.iter().map(String::as_str).collect();
                if !source.matches(&refs) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("fixture");
                let records: Vec<String> = text.lines().map(str::to_owned).collect();
                let seen = tether_sdk::conformance::assert_reads_records(
                    reader,
                    &source.role,
                    &segments,
                    &records,
                    &configured,
                );
                read += seen.read;
            }
        }
        assert!(read > 0, "{kind}: its reader read nothing of its session");
    }
}

fn files_under(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), root.to_path_buf())];
    while let Some((rel, dir)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if entry.path().is_dir() {
                stack.push((child, entry.path()));
            } else {
                out.push((child, entry.path()));
            }
        }
    }
    out
}

/// A reader that copies a record's text into its reading.
struct Leaky;

impl tether_core::records::RecordReader for Leaky {
    fn record_sources(&self) -> Vec<tether_core::records::RecordSource> {
        Vec::new()
    }

    fn read_record(
        &self,
        _: &tether_core::records::RecordFile<'_>,
        record: &str,
    ) -> tether_core::records::RecordAnswer {
        let value: serde_json::Value = serde_json::from_str(record).unwrap_or_default();
        let mut reading = tether_core::records::RecordReading::default();
        if let Some(text) = value.get("message").and_then(|m| m.as_str()) {
            let mut evidence = tether_core::model::Evidence::new(
                tether_core::vocab::EvidenceKind::AgentReported,
                tether_core::model::Timestamp(1),
            );
            evidence.summary = Some(text.to_owned());
            reading.evidence.push(evidence);
        }
        if value.get("panic").is_some() {
            panic!("on purpose");
        }
        tether_core::records::RecordAnswer::Read(reading)
    }
}

/// The kit fails a reader that copies text, or panics.
#[test]
fn the_record_kit_catches_a_leaky_or_panicking_reader() {
    let records = vec![r#"{"type":"x","message":"hello"}"#.to_owned()];
    let (problems, _) =
        tether_sdk::conformance::check_records(&Leaky, "log", &["a.jsonl".into()], &records, &[]);
    assert!(
        problems.iter().any(|p| p.contains("planted text")),
        "{problems:?}"
    );
    let records = vec![r#"{"panic":true}"#.to_owned()];
    let (problems, _) =
        tether_sdk::conformance::check_records(&Leaky, "log", &["a.jsonl".into()], &records, &[]);
    assert!(
        problems.iter().any(|p| p.contains("panicked")),
        "{problems:?}"
    );
}

/// GIVEN `tether sessions import --follow` running WHEN a harness writes a
/// session, then more of it THEN the store holds that one session, and it
/// grows; Ctrl-C ends the follow with exit 0.
#[test]
fn import_follow_keeps_one_session_growing_until_ctrl_c() {
    use std::os::unix::process::CommandExt as _;
    let home = tempfile::tempdir().expect("home");
    let dir = home.path().join(".claude/projects/-work-app");
    std::fs::create_dir_all(&dir).expect("dir");
    let db = tempfile::tempdir().expect("db");
    let path = db.path().join("t.db");
    let mut child = tether()
        .env("HOME", home.path())
        .args(["sessions", "import", "--follow", "--db"])
        .arg(&path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("tether starts");
    let call = |i: u32| {
        serde_json::json!({"type": "assistant", "sessionId": "f1", "cwd": "/work/app",
            "timestamp": format!("2026-12-01T20:00:{i:02}.000Z"), "message": {"content": [
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": "mcp__time__get_current_time", "input": {}}]}})
        .to_string()
            + "\n"
    };
    let mut file = std::fs::File::create(dir.join("f1.jsonl")).expect("file");
    file.write_all(call(1).as_bytes()).expect("w");
    file.flush().expect("flush");
    let calls_stored = || -> Option<u32> {
        let store = tether_store::SqliteStore::open(&path).ok()?;
        let all = store.load_all().ok()?.histories;
        assert!(all.len() <= 1, "one session, never two: {all:?}");
        let attempt = all.first()?.current()?.clone();
        Some(calls(&attempt, "time", "get_current_time").0)
    };
    let wait_for = |want: u32| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if calls_stored() == Some(want) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        false
    };
    assert!(wait_for(1), "the session was imported");
    file.write_all(call(2).as_bytes()).expect("w");
    file.flush().expect("flush");
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .expect("mtime");
    assert!(wait_for(2), "the session grew");
    // Ctrl-C, to the child's own process group.
    std::process::Command::new("kill")
        .args(["-INT", "--", &format!("-{}", child.id())])
        .status()
        .expect("kill");
    let status = child.wait().expect("exits");
    assert_eq!(status.code(), Some(0));
}

/// GIVEN Claude's recorded session (where the model called time's
/// `get_current_time` once) as a home whose configuration has `time` and
/// `broken` WHEN `tether inventory --sessions` runs THEN time's tool is an
/// `mcp_tool` row, model-visible as the session's record showed it
/// (provenance `harness_record`, with the session and its calls), time is
/// model-visible too, broken (no tools in the session) has no tool row;
/// with `--since` after the session, no tool row at all; and once the
/// session is imported into a store and gone from disk, `--db` still gives
/// its tools.
#[test]
fn tether_inventory_sessions_adds_the_tools_a_recorded_session_showed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    let copy = std::process::Command::new("cp")
        .arg("-r")
        .arg(fixtures().join("claude/."))
        .arg(home)
        .status()
        .expect("cp");
    assert!(copy.success());
    std::fs::write(
        home.join(".claude.json"),
        serde_json::json!({"mcpServers": {
            "time": {"command": "sh"},
            "broken": {"command": "/nonexistent/bin"}
        }})
        .to_string(),
    )
    .expect("config");
    let inventory = |extra: &[&str]| -> serde_json::Value {
        let out = tether()
            .env("HOME", home)
            .args([
                "inventory",
                "--harness",
                "claude",
                "--sessions",
                "--json",
                "--project",
            ])
            .arg(home)
            .args(extra)
            .output()
            .expect("tether runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("one document")
    };
    let doc = inventory(&[]);
    let rows = doc["rows"].as_array().expect("rows");
    let tools: Vec<&serde_json::Value> = rows.iter().filter(|r| r["kind"] == "mcp_tool").collect();
    assert_eq!(tools.len(), 1, "{tools:#?}");
    let tool = tools[0];
    assert_eq!(tool["name"], "time/get_current_time");
    assert_eq!(tool["stages"]["model_visible"]["state"], "yes");
    assert_eq!(
        tool["stages"]["model_visible"]["provenance"],
        "harness_record"
    );
    assert_eq!(
        tool["diagnostics"]["settings"],
        serde_json::json!([
            "session=claude:2d8efbcf-e501-440d-89ec-66cb10f9d678",
            "calls=1",
            "failed_calls=0"
        ])
    );
    let server = rows
        .iter()
        .find(|r| r["kind"] == "mcp_server" && r["name"] == "time")
        .expect("time");
    assert_eq!(server["stages"]["model_visible"]["state"], "yes");
    let broken = rows
        .iter()
        .find(|r| r["kind"] == "mcp_server" && r["name"] == "broken")
        .expect("broken");
    assert_eq!(broken["stages"]["model_visible"]["state"], "unknown");

    let later = inventory(&["--since", "2026-12-01T21:00:00Z"]);
    assert!(
        !later["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .any(|r| r["kind"] == "mcp_tool"),
        "the only session is older than --since"
    );
    // Stored sessions count too: imported into a store, then gone from disk.
    let db = home.join("t.db");
    let imported = tether()
        .env("HOME", home)
        .args(["sessions", "import", "--db"])
        .arg(&db)
        .output()
        .expect("tether runs");
    assert_eq!(imported.status.code(), Some(0));
    std::fs::remove_dir_all(home.join(".claude/projects")).expect("rm");
    std::fs::remove_dir_all(home.join(".cache")).expect("rm");
    assert!(
        !inventory(&[])["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .any(|r| r["kind"] == "mcp_tool"),
        "no record left on disk"
    );
    let stored = inventory(&["--db", db.to_str().expect("utf-8")]);
    let tool = stored["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["kind"] == "mcp_tool")
        .expect("the stored session's tool");
    assert_eq!(tool["name"], "time/get_current_time");
    assert_eq!(tool["stages"]["model_visible"]["state"], "yes");

    let out = tether()
        .env("HOME", home)
        .args(["inventory", "--sessions", "--since", "yesterday-ish"])
        .output()
        .expect("tether runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unreadable --since is a usage error"
    );
}

/// GIVEN three sessions of a Claude Code newer than its reader was
/// verified on, each transcript holding records of a kind the reader does
/// not know WHEN `tether sessions list` reads them THEN each session is
/// still read, and the output says so once for that harness and version,
/// with the range verified and the count, not once per file.
#[test]
fn a_newer_version_is_read_and_said_once_per_harness_and_version() {
    let home = tempfile::tempdir().expect("home");
    let from = fixtures()
        .join("claude/.claude/projects/-tmp--tmpf23dO3/2d8efbcf-e501-440d-89ec-66cb10f9d678.jsonl");
    let text = std::fs::read_to_string(&from).expect("fixture");
    let dir = home.path().join(".claude/projects/-tmp-work");
    std::fs::create_dir_all(&dir).expect("dir");
    let ids = [
        "11111111-1111-4111-8111-111111111111",
        "22222222-2222-4222-8222-222222222222",
        "33333333-3333-4333-8333-333333333333",
    ];
    for id in ids {
        let mut body = text
            .replace("2d8efbcf-e501-440d-89ec-66cb10f9d678", id)
            .replace("\"version\":\"2.1.197\"", "\"version\":\"2.1.400\"");
        for n in 0..5 {
            body.push_str(&format!(
                "{{\"type\":\"holo-frame-{n}\",\"sessionId\":\"{id}\",\"timestamp\":\"2026-12-01T20:53:21.000Z\"}}\n"
            ));
        }
        std::fs::write(dir.join(format!("{id}.jsonl")), body).expect("write");
    }
    let out = tether()
        .env("HOME", home.path())
        .args(["sessions", "list"])
        .output()
        .expect("tether sessions list");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for id in ids {
        assert!(stdout.contains(&format!("claude:{id}")), "{stdout}");
    }
    let notes: Vec<&str> = stdout.lines().filter(|l| l.starts_with("? ")).collect();
    assert_eq!(
        notes,
        [
            "? claude 2.1.400: read with a reader verified on 2.1.197–2.1.332; 15 record(s) in 3 file(s) of a kind this Tether does not read"
        ],
        "{stdout}"
    );
    let json = tether()
        .env("HOME", home.path())
        .args(["sessions", "list", "--json"])
        .output()
        .expect("tether sessions list --json");
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(doc["readers"][0]["newer"], true, "{doc:#}");
    assert_eq!(doc["readers"][0]["verified_on"]["newest"], "2.1.332");
}

/// One tool's (calls, failed, unknown) in an attempt.
fn outcomes(attempt: &AttachmentAttempt, server: &str, tool: &str) -> (u32, u32, u32) {
    row(attempt, server)
        .tools
        .iter()
        .find(|t| t.name == tool)
        .map(|t| (t.calls, t.failed_calls, t.unknown_calls))
        .unwrap_or((0, 0, 0))
}

/// GIVEN rollouts the released Codex 0.118.0 and 0.142.5 binaries wrote
/// (trimmed of prose), each against a server whose `echo` succeeds, whose
/// `fail` answers `isError` and whose `err` answers a JSON-RPC error (the
/// `exec` run called echo and fail only) WHEN
/// they are read THEN every record is of a kind the reader knows, each
/// call's outcome is the one the rollout gives (0.118's `mcp_tool_call_end`
/// in its TUI's history, 0.142's always), `codex exec` 0.118 (which writes
/// no outcome) shows its calls used with their outcome not recorded and
/// never failed, the skills listed in the developer message are read, and
/// 0.142's tool search shows the tools it loaded as deferred and sent.
#[test]
fn older_codex_rollouts_read_their_outcomes_never_a_silence_as_failure() {
    let releases = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records-releases");
    for (dir, version, want) in [
        (
            "codex-0.118.0-tui",
            "0.118.0",
            [(1, 0, 0), (1, 1, 0), (1, 1, 0)],
        ),
        (
            "codex-0.118.0-exec",
            "0.118.0",
            [(1, 0, 1), (1, 0, 1), (0, 0, 0)],
        ),
        (
            "codex-0.142.5",
            "0.142.5",
            [(1, 0, 0), (1, 1, 0), (1, 1, 0)],
        ),
        (
            "codex-0.142.5-search",
            "0.142.5",
            [(1, 0, 0), (1, 1, 0), (0, 0, 0)],
        ),
    ] {
        let records = read("codex", &releases.join(dir));
        for file in records.files() {
            assert_eq!(
                (file.unknown, file.refused, file.not_read),
                (0, 0, 0),
                "{dir}: {file:?}"
            );
        }
        let attempt = only_session("codex", &records);
        assert_eq!(attempt.agent_version.as_deref(), Some(version), "{dir}");
        let got = ["echo", "fail", "err"].map(|t| outcomes(&attempt, "echo", t));
        assert_eq!(
            got, want,
            "{dir}: (calls, failed, unknown) of echo, fail, err"
        );
        let matrix = tether_words::display::matrix(&attempt);
        let echo = matrix
            .iter()
            .find(|r| r.name == "echo")
            .expect("echo's row");
        if dir.ends_with("exec") {
            assert_eq!(echo.failed_calls, 0, "{dir}: {echo:?}");
            assert!(
                echo.stopped.contains("outcome not recorded") && !echo.stopped.contains("failed"),
                "{dir}: {}",
                echo.stopped
            );
            let last = row(&attempt, "echo")
                .last_tool_call
                .as_ref()
                .expect("a call");
            assert_eq!(last.outcome(), tether_core::vocab::CallOutcome::Unknown);
        }
        if dir.ends_with("search") {
            for tool in ["echo", "fail"] {
                let t = row(&attempt, "echo")
                    .tools
                    .iter()
                    .find(|t| t.name == tool)
                    .expect("a tool the search loaded");
                assert!(t.deferred.is_yes() && t.model_visible.is_yes(), "{t:?}");
            }
        } else {
            let skills: Vec<&str> = attempt
                .capabilities
                .iter()
                .filter(|c| c.kind == tether_core::vocab::CapabilityKind::Skill)
                .map(|c| c.name.as_str())
                .collect();
            for skill in ["demo-skill", "imagegen"] {
                assert!(skills.contains(&skill), "{dir}: {skills:?}");
            }
        }
        // Codex's own error words ("server exploded") never reach a row.
        assert!(!format!("{attempt:?}").contains("exploded"), "{dir}");
    }
}

/// GIVEN OpenCode's database with a call that succeeded, one that failed,
/// and two its permissions refused (stored as errors, in OpenCode 1.18.33's
/// own words: a person's rejection, a rule's denial) WHEN it is read THEN
/// the refused calls are refusals (`permission_denied`: this session's row
/// says nothing of `opencode run`), never calls or failures, and none of
/// their words reaches the session.
#[test]
fn opencode_calls_its_permissions_refused_are_never_failures() {
    let home = tempfile::tempdir().expect("home");
    copy_dir(&fixtures().join("opencode"), home.path());
    let db = home.path().join(".local/share/opencode/opencode.db");
    let conn = rusqlite::Connection::open(&db).expect("open the copy");
    let session = "ses_dcc9dba49ffe4Xua2LisksiYZu";
    for (id, status, error) in [
        ("call_fail", "error", "planted server words"),
        (
            "call_no",
            "error",
            "The user rejected permission to use this specific tool call.",
        ),
        (
            "call_rule",
            "error",
            "The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules [\"planted rule\"]",
        ),
    ] {
        let data = serde_json::json!({
            "type": "tool", "tool": "time_convert_time", "callID": id,
            "state": {"status": status, "error": error}
        });
        conn.execute(
            "INSERT INTO part (session_id, time_created, data) VALUES (?1, 1796158410500, ?2)",
            rusqlite::params![session, data.to_string()],
        )
        .expect("insert");
    }
    drop(conn);
    let records = read("opencode", home.path());
    let attempt = only_session("opencode", &records);
    assert_eq!(
        outcomes(&attempt, "time", "convert_time"),
        (1, 1, 0),
        "(calls, failed, unknown): {attempt:?}"
    );
    let refused = row(&attempt, "time")
        .tools
        .iter()
        .find(|t| t.name == "convert_time")
        .expect("convert_time");
    assert_eq!(refused.refused_calls, 2, "{refused:?}");
    assert_eq!(refused.refusal(), Some(&ReasonCode::PermissionDenied));
    assert!(!format!("{attempt:?}").contains("planted"));
}

/// GIVEN sessions in shapes older releases and other people's setups
/// write, each taken from the harness's own code (Copilot 1.0.10's MCP
/// warnings in an interactive session and its `<tools_changed_notice>`;
/// Gemini CLI 0.31's one-document chat with its UI's discovery error;
/// Claude Code 2.1.259's connectors named by display name and its Stop
/// hooks' summary) WHEN they are read THEN a server named only in a
/// warning or an error is a row (failed with its reason, or slow, as a
/// note), a refused or cancelled call is no failure, the tools a notice
/// names reached the model, connectors need a login under the names their
/// tools carry, and each Stop hook ran.
#[test]
fn other_setups_sessions_show_every_server_they_name() {
    let releases = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records-releases");

    let records = read("copilot", &releases.join("copilot-1.0.10-interactive"));
    let attempt = only_session("copilot", &records);
    assert_eq!(attempt.agent_version.as_deref(), Some("1.0.10"));
    let github = row(&attempt, "github");
    assert_eq!(github.status, DisplayStatus::Failed, "{github:?}");
    let slow = row(&attempt, "agent-intercom");
    assert_ne!(slow.status, DisplayStatus::Failed);
    assert_eq!(
        slow.note.as_deref(),
        Some(tether_sdk::records::SLOW_TO_CONNECT)
    );
    assert_eq!(outcomes(&attempt, "engram", "set_workspace"), (1, 0, 0));
    assert_eq!(
        outcomes(&attempt, "engram", "get_memory"),
        (0, 0, 0),
        "refused: no call, no failure"
    );
    let refused = row(&attempt, "engram")
        .tools
        .iter()
        .find(|t| t.name == "get_memory")
        .expect("get_memory");
    assert_eq!(refused.refusal(), Some(&ReasonCode::PermissionDenied));
    for file in records.files() {
        assert_eq!((file.unknown, file.refused), (0, 0), "{file:?}");
    }

    let records = read("gemini", &releases.join("gemini-0.31-interactive"));
    let attempt = only_session("gemini", &records);
    let postgres = row(&attempt, "postgres");
    assert_eq!(postgres.status, DisplayStatus::Failed);
    assert_eq!(postgres.reason_code, Some(ReasonCode::ConnectionClosed));
    assert_eq!(outcomes(&attempt, "time", "get_current_time"), (1, 0, 0));
    assert_eq!(
        outcomes(&attempt, "time", "convert_time"),
        (1, 0, 1),
        "cancelled: no failure"
    );
    let facts = records.sessions().values().next().expect("one");
    assert_eq!(
        facts.last_at,
        tether_core::model::Timestamp::parse_rfc3339("2026-01-05T09:05:00.000Z").expect("time"),
        "the chat's lastUpdated"
    );

    let records = read("claude", &releases.join("claude-2.1.259-connectors"));
    let attempt = only_session("claude", &records);
    for connector in ["claude_ai_Slack", "claude_ai_Notion"] {
        let r = row(&attempt, connector);
        assert_eq!(r.reason_code, Some(ReasonCode::AuthRequired), "{r:?}");
        assert!(
            r.note.as_deref().is_some_and(|n| n.contains("claude.ai")),
            "{r:?}"
        );
    }
    let hooks: Vec<(String, Option<String>, u32)> = attempt
        .capabilities
        .iter()
        .filter(|c| c.kind == tether_core::vocab::CapabilityKind::Hook)
        .map(|c| (c.name.clone(), c.command.clone(), c.uses()))
        .collect();
    assert_eq!(
        hooks,
        [
            ("Stop".to_owned(), Some("lint.sh".to_owned()), 1),
            ("Stop".to_owned(), Some("notify-send".to_owned()), 1)
        ],
        "{:#?}",
        attempt.capabilities
    );
}
